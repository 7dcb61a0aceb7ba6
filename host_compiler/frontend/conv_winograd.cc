// conv_winograd.cc — stride-1 3x3 convolutions as Winograd F(m x m, 3 x 3) (Lavin & Gray).
//
// A tile of m x m outputs is computed from an (m+2) x (m+2) input tile with P = (m+2)^2
// multiplications per input/output channel pair instead of 9 m^2: for F(2x2, 3x3) 16 instead
// of 36, for F(4x4, 3x3) 36 instead of 144. In primitive ops, three reduce kernels:
//
//   V[p, t, c]  = (B^T d B)[p] of input tile d of t, channel c    input transform
//   Mp[p, t, k] = sum_c V[p, t, c] * U[p, c, k]                     P matrix products: the bulk
//   y[t, k]     = A^T Mp[., t, k] A (an m x m tile)                 output transform
//
// t runs over the N x TH x TW tiles; each transform is two short reductions over a small
// constant table (rows, then columns; the intermediate in its own buffer), and U = G w G^T
// is computed here, at compile time. The products are the kind of kernel the code generator
// tiles best (a matrix product with packed constant columns). The half-transformed tiles and
// the products are marked Node::realize (row-major buffers of their own: fused into the next
// kernel through its permute, they were read by gathers), the output transform's result
// Node::conv_result (stored channels-last like a conv's).
#include <array>

#include "frontend/lowering.h"

namespace edgec::onnx_frontend {
namespace {

struct WinogradMatrices {
  int m;                              // output tile m x m
  std::vector<std::vector<double>> bt;  // (m+2) x (m+2): input transform B^T
  std::vector<std::vector<double>> g;   // (m+2) x 3: weight transform G
  std::vector<std::vector<double>> at;  // m x (m+2): output transform A^T
};

// Interpolation points 0, 1, -1 (and 2, -2 for m = 4) and infinity.
WinogradMatrices matrices(int m) {
  if (m == 2)
    return {2,
            {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}},
            {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}},
            {{1, 1, 1, 0}, {0, 1, -1, -1}}};
  return {4,
          {{4, 0, -5, 0, 1, 0},
           {0, -4, -4, 1, 1, 0},
           {0, 4, -4, -1, 1, 0},
           {0, -2, -1, 2, 1, 0},
           {0, 2, -1, -2, 1, 0},
           {0, 4, 0, -5, 0, 1}},
          {{1.0 / 4, 0, 0},
           {-1.0 / 6, -1.0 / 6, -1.0 / 6},
           {-1.0 / 6, 1.0 / 6, -1.0 / 6},
           {1.0 / 24, 1.0 / 12, 1.0 / 6},
           {1.0 / 24, -1.0 / 12, 1.0 / 6},
           {0, 0, 1}},
          {{1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}}};
}

// Kronecker product of the rows of a (r x c) with themselves: out[(i, j), (k, l)] = a[i][k] a[j][l].
std::vector<double> kron_self(const std::vector<std::vector<double>>& a) {
  size_t r = a.size(), c = a[0].size();
  std::vector<double> out;
  out.reserve(r * r * c * c);
  for (size_t i = 0; i < r; ++i)
    for (size_t j = 0; j < r; ++j)
      for (size_t k = 0; k < c; ++k)
        for (size_t l = 0; l < c; ++l) out.push_back(a[i][k] * a[j][l]);
  return out;
}

// The matrix a (r x c) as a constant of `shape` (r and c, in that order, are its only dims
// larger than 1), to broadcast against a tensor of transform inputs.
Node* table(Graph& g, DType dtype, const std::vector<std::vector<double>>& a, const Shape& shape, const std::string& name) {
  std::vector<double> values;
  for (const std::vector<double>& row : a) values.insert(values.end(), row.begin(), row.end());
  return g.weight(HostTensor::from_doubles(dtype, shape, values), name);
}

}  // namespace

int winograd_tile_for(Winograd mode, int64_t c, int64_t k, int64_t oh, int64_t ow, DType operands, int64_t groups,
                      int64_t batch) {
  const int64_t cg = c / std::max<int64_t>(groups, 1);  // input channels per output channel
  switch (mode) {
    case Winograd::Off: return 0;
    case Winograd::Tile2: return 2;
    case Winograd::Tile4: return 4;
    case Winograd::Auto: break;
  }
  // Grouped convs stay direct unless a tile is forced: their products are C/G times smaller
  // while the transforms still pass over all C channels, and with the transform kernels as
  // they are the direct form won (benchmark.py --baseline-args "--winograd 0", x86_64-avx512,
  // 1 thread: 512 -> 1024 ch in 8 groups at 14x14 even, 256 ch in 8 and 16 groups at 28x28
  // Winograd 1.9x and 2.1x slower).
  if (groups > 1) return 0;
  // Estimated work for the whole output, in multiply-adds: the direct sums 9 C K per pixel;
  // F(m x m) per tile (partial tiles at the edges count in full) P C K in the products and
  // the transforms' passes (2 (m+2)^3 per input channel, m (m+2)^2 + m^2 (m+2) per output
  // channel), which count twice: they stream memory where the products reuse registers. A
  // grouped conv's sums run over its C/G channels per output channel, its transforms over all
  // C: with few channels per group the transforms outweigh what the products save.
  // Winograd must win by a margin, for its extra passes over memory.
  auto cost = [&](int64_t m) -> double {
    if (m == 0) return 9.0 * double(cg) * double(k) * double(oh) * double(ow);
    const double a = double(m + 2), p = a * a, tiles = double((oh + m - 1) / m) * double((ow + m - 1) / m);
    const double input = 2 * a * a * a, output = double(m) * a * a + double(m * m) * a;
    return tiles * (p * double(cg) * double(k) + 2.0 * (input * double(c) + output * double(k)));
  };
  // F(4x4) stores 36 / 9 = 4x the weights (F(2x2): 16 / 9): only where they stay small
  // (ResNet's 64-channel stage), so that a model's bundle grows by well under 2x.
  constexpr int64_t kMaxTile4WeightBytes = 1 << 20;
  // The transforms are kernels of their own, each a pass over (m+2)^2 / m^2 times the input
  // (output) in memory: past the caches they stream at memory speed. DNSMOS's 3x3 convs over
  // a 900 x 161 spectrogram (32-128 channels: 42-170 MB of transformed tiles) ran 1.55x slower
  // as Winograd than direct (830 against 535 ms CPU time, AVX2, 1 thread); the zoo's largest
  // (FCN-ResNet50's 2048 -> 512 at 28 x 28, 25 MB) stay under the limit.
  constexpr double kMaxWinogradTransformedBytes = 64.0 * (1 << 20);
  auto transformed_bytes = [&](int64_t m) {
    const double tiles = double(batch) * double((oh + m - 1) / m) * double((ow + m - 1) / m);
    return tiles * double((m + 2) * (m + 2)) * double(std::max(c, k)) * double(sizeof(float));
  };
  constexpr double kMinGain = 0.8;
  int best = 0;
  double best_cost = kMinGain * cost(0);
  for (int m : {2, 4}) {
    if (m == 4 && 36 * cg * k * int64_t(sizeof(float)) > kMaxTile4WeightBytes) continue;
    if (transformed_bytes(m) > kMaxWinogradTransformedBytes) continue;
    // bf16 operands: F(4x4)'s transforms (entries up to 8) amplify the rounding of the tiles
    // to 8 bits; ResNet-18's output error grew 3.5x over F(2x2)'s (BENCHMARKS.md).
    if (m == 4 && operands == DType::BF16) continue;
    if (double w = cost(m); w < best_cost) best = m, best_cost = w;
  }
  return best;
}

Node* winograd_conv(Graph& g, Node* x, const HostTensor& w, int tile, const std::array<int64_t, 2>& pad_lo,
                    const std::array<int64_t, 2>& pad_hi, DType operands, int64_t groups) {
  const WinogradMatrices wm = matrices(tile);
  const int64_t m = wm.m, alpha = m + 2, P = alpha * alpha;
  const int64_t n = x->shape[0], c = x->shape[1], h = x->shape[2], wd = x->shape[3], k = w.shape[0];
  const int64_t oh = h + pad_lo[0] + pad_hi[0] - 2, ow = wd + pad_lo[1] + pad_hi[1] - 2;
  const int64_t th = (oh + m - 1) / m, tw = (ow + m - 1) / m, tiles = n * th * tw;

  // Input tiles: x padded so that every tile's (m+2)^2 window exists (zeros past the image).
  Node* xp = g.pad(x, {0, 0, pad_lo[0], pad_lo[1]}, {0, 0, th * m + 2 - h - pad_lo[0], tw * m + 2 - wd - pad_lo[1]});
  Node* win = g.window(xp, {alpha, alpha}, {m, m}, {1, 1});                      // (N, C, TH, TW, a, a)
  // V = B^T d B in two passes, over the tile's rows then its columns (2 (m+2) multiply-adds per
  // value instead of (m+2)^2): rows[j, a, t, c] = sum_i BT[a, i] d[i, j], V[a, b] = sum_j BT[b, j] rows[j, a].
  // Each pass's outermost dim is one its input depends on (rows: the tile column j; V: a), the
  // table's rows second: the CPU code splits the outermost dim across cores and takes the
  // table's rows as one register tile (each input vector loaded once for all of them), so
  // a core's tile covers only its own outputs and reads only its own share of the input.
  Node* bt_rows = table(g, x->dtype, wm.bt, {1, alpha, 1, 1, alpha}, "winograd_input_transform");
  Node* bt_cols = table(g, x->dtype, wm.bt, {1, alpha, 1, 1, alpha}, "winograd_input_transform");
  Node* taps = g.reshape(g.permute(win, {5, 0, 2, 3, 1, 4}), {alpha, 1, tiles, c, alpha});  // (j, 1, T, C, i)
  Node* rows = g.reduce(Op::ReduceSum, g.binary(Op::Mul, taps, bt_rows), {-1});              // (j, a, T, C, 1)
  rows->realize = true;
  Node* rows_v = g.reshape(g.permute(g.reshape(rows, {alpha, alpha, tiles, c}), {1, 2, 3, 0}), {alpha, 1, tiles, c, alpha});
  Node* v = g.reduce(Op::ReduceSum, g.binary(Op::Mul, rows_v, bt_cols), {-1});  // (a, b, T, C, 1): (P, T, C)
  // bf16 products (lowering.h bf16_operand): the transform stores its tiles as bf16, the
  // products read them in pairs of channels.
  const bool bf16 = operands == DType::BF16 && c % kBf16Pair == 0 && groups == 1;
  if (bf16) v = g.cast(v, DType::BF16);
  v->realize = true;

  // U[p, c, k] = (G w[k, c] G^T)[p], computed in double; c runs over the cg = C/groups
  // channels of k's group.
  const int64_t cg = c / groups, kg = k / groups;
  const std::vector<double> gg = kron_self(wm.g);  // (P, 9)
  std::vector<double> u(size_t(P * cg * k));
  for (int64_t oc = 0; oc < k; ++oc)
    for (int64_t ic = 0; ic < cg; ++ic) {
      double taps9[9];
      for (int q = 0; q < 9; ++q) taps9[q] = w.get((oc * cg + ic) * 9 + q);
      for (int64_t p = 0; p < P; ++p) {
        double s = 0;
        for (int q = 0; q < 9; ++q) s += gg[size_t(p * 9 + q)] * taps9[q];
        u[size_t((p * cg + ic) * k + oc)] = s;
      }
    }
  Node* mp;
  if (bf16) {  // (P, T, 1, C/2, 2) * (P, 1, K, C/2, 2) summed over the pairs
    Node* u_node = packed_in_column_groups(g, g.weight(HostTensor::from_doubles(DType::BF16, {P, c, k}, u), "winograd_weight"), kBf16Pair);
    Node* u_view = g.reshape(g.cast(g.permute(u_node, {0, 3, 1, 2}), x->dtype), {P, 1, k, c / kBf16Pair, kBf16Pair});
    Node* v_pairs = g.reshape(g.cast(v, x->dtype), {P, tiles, 1, c / kBf16Pair, kBf16Pair});
    mp = g.reduce(Op::ReduceSum, g.binary(Op::Mul, v_pairs, u_view), {-2, -1});  // (P, T, K, 1, 1)
  } else if (groups == 1) {
    Node* u_node = packed_in_column_blocks(g, g.weight(HostTensor::from_doubles(x->dtype, {P, c, k}, u), "winograd_weight"));
    Node* u_view = g.reshape(g.permute(u_node, {0, 2, 1}), {P, 1, k, c});
    mp = g.reduce(Op::ReduceSum, g.binary(Op::Mul, g.reshape(v, {P, tiles, 1, c}), u_view), {-1});  // (P, T, K, 1)
  } else {
    // (P, T, G, 1, C/G) * (P, 1, G, K/G, C/G) summed over C/G: output channel k reads the
    // tiles' channels of its group (an input load the same for a vector of output channels
    // within one group: a broadcast, as in the ungrouped product).
    Node* u_node = packed_in_column_blocks(g, g.weight(HostTensor::from_doubles(x->dtype, {P, cg, k}, u), "winograd_weight"));
    Node* u_view = g.reshape(g.permute(u_node, {0, 2, 1}), {P, 1, groups, kg, cg});
    Node* v_view = g.reshape(v, {P, tiles, groups, 1, cg});
    // Realized as the reduce's own (P, T, G, K/G, 1), the memory of (P, T, K): a realized
    // reshape of it became a kernel over a permuted view, vectorized along 4 taps.
    mp = g.reduce(Op::ReduceSum, g.binary(Op::Mul, v_view, u_view), {-1});
  }
  mp->realize = true;

  // Output tiles Y = A^T M A, again rows then columns: half[j, a, t, k] = sum_i AT[a, i] M[i, j],
  // y[n, th, a, tw, b, k] = sum_j AT[b, j] half[j, a] for tile t = (n, th, tw) (j outermost, as
  // the input transform's rows).
  Node* at_rows = table(g, x->dtype, wm.at, {1, m, 1, 1, alpha}, "winograd_output_transform");
  Node* at_cols = table(g, x->dtype, wm.at, {1, 1, 1, 1, m, 1, alpha}, "winograd_output_transform");
  Node* mv = g.reshape(g.permute(g.reshape(mp, {alpha, alpha, tiles, k}), {1, 2, 3, 0}), {alpha, 1, tiles, k, alpha});
  Node* half = g.reduce(Op::ReduceSum, g.binary(Op::Mul, mv, at_rows), {-1});  // (j, a, T, K, 1)
  half->realize = true;
  Node* half_v = g.reshape(g.permute(g.reshape(half, {alpha, m, n, th, tw, k}), {2, 3, 1, 4, 5, 0}), {n, th, m, tw, 1, k, alpha});
  Node* y = g.reduce(Op::ReduceSum, g.binary(Op::Mul, half_v, at_cols), {-1});  // (N, TH, m, TW, m, K, 1)
  y->conv_result = true;
  y = g.permute(g.reshape(y, {n, th * m, tw * m, k}), {0, 3, 1, 2});
  if (th * m != oh || tw * m != ow) y = g.shrink(y, {0, 0, 0, 0}, {n, k, oh, ow});
  return y;
}

}  // namespace edgec::onnx_frontend
