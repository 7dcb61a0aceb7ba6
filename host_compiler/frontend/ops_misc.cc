// ops_misc.cc — CenterCropPad, ReverseSequence, MaxUnpool, Col2Im, AffineGrid, Det and the
// constant generators HannWindow / HammingWindow / BlackmanWindow / MelWeightMatrix.
#include <algorithm>
#include <cmath>

#include "frontend/lowering.h"

namespace edgec::onnx_frontend {
namespace {

using Outs = std::vector<Node*>;

Outs lower_center_crop_pad(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  std::vector<int64_t> shape = ctx.const_ints(1);
  size_t r = x->shape.size();
  std::vector<int64_t> axes = ctx.attr_ints("axes");
  if (axes.empty()) axes = iota_ints(0, int64_t(r));
  if (axes.size() != shape.size()) ctx.fail("shape must have one entry per axis");
  std::vector<int64_t> begin(r, 0), end = x->shape, lo(r, 0), hi(r, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    size_t a = size_t(ctx.axis(axes[i], int64_t(r)));
    int64_t dim = x->shape[a], want = shape[i];
    if (want < 0) ctx.fail("negative target size");
    if (want < dim) {  // crop, the odd element from the end
      begin[a] = (dim - want) / 2;
      end[a] = begin[a] + want;
    } else if (want > dim) {  // pad, the odd element at the end
      lo[a] = (want - dim) / 2;
      hi[a] = want - dim - lo[a];
    }
  }
  return {g.pad(g.shrink(x, begin, end), lo, hi, 0.0)};
}

// out[b, t] = t < len[b] ? x[b, len[b] - 1 - t] : x[b, t], a one-hot selection along time.
Outs lower_reverse_sequence(OpContext& ctx) {
  Graph& g = ctx.g;
  Node *x = ctx.input(0), *lens = ctx.input(1);
  size_t r = x->shape.size();
  if (r < 2) ctx.fail("input must have rank >= 2");
  int64_t bax = ctx.axis(ctx.attr_int("batch_axis", 1), int64_t(r)), tax = ctx.axis(ctx.attr_int("time_axis", 0), int64_t(r));
  if (bax == tax || bax > 1 || tax > 1) ctx.fail("batch_axis and time_axis must be 0 and 1");
  int64_t batch = x->shape[size_t(bax)], steps = x->shape[size_t(tax)];
  if (lens->shape != Shape{batch} || is_float(lens->dtype)) ctx.fail("sequence_lens must be (batch) integers");
  Shape ls(r, 1), ts(r, 1);
  ls[size_t(bax)] = batch;
  ts[size_t(tax)] = steps;
  Node* len = g.reshape(g.cast(lens, DType::I64), ls);
  Node* t = iota(g, steps, DType::I64, r, size_t(tax));
  Node* src = g.where(g.binary(Op::CmpLt, t, len), g.binary(Op::Sub, g.binary(Op::Sub, len, t), g.constant(1, DType::I64)), t);
  // Candidates along a new last dim: table (x with time moved last, 1 at time), idx (.., 1).
  Node* table = move_axis_last(g, x, tax);
  Shape tshape = x->shape;
  tshape[size_t(tax)] = 1;
  tshape.push_back(steps);
  table = g.expand(g.reshape(table, tshape), [&] {
    Shape full = x->shape;
    full.push_back(steps);
    return full;
  }());
  Shape is = src->shape;
  is.push_back(1);
  Node* y = select_along(g, table, int64_t(r), g.reshape(src, is));
  return {g.reshape(y, x->shape)};
}

// MaxUnpool: out[n, c, j] = x[n, c, i] where indices[n, c, i] == (n*C + c)*plane + j — the
// indices MaxPool produces, which stay within their (n, c) plane.
Outs lower_max_unpool(OpContext& ctx) {
  Graph& g = ctx.g;
  Node *x = ctx.input(0), *idx = ctx.input(1);
  if (x->shape.size() < 3 || idx->shape != x->shape) ctx.fail("X and I must be (N, C, D...) of one shape");
  size_t k = x->shape.size() - 2;
  std::vector<int64_t> kernel = ctx.attr_ints("kernel_shape");
  if (kernel.size() != k) ctx.fail("kernel_shape must have one entry per spatial dim");
  std::vector<int64_t> stride = ctx.attr_ints("strides", std::vector<int64_t>(k, 1));
  std::vector<int64_t> pads = ctx.attr_ints("pads", std::vector<int64_t>(2 * k, 0));
  if (stride.size() != k || pads.size() != 2 * k) ctx.fail("strides / pads do not match the kernel");
  int64_t n = x->shape[0], c = x->shape[1];
  Shape inferred{n, c};
  for (size_t i = 0; i < k; ++i) inferred.push_back((x->shape[2 + i] - 1) * stride[i] - pads[i] - pads[k + i] + kernel[i]);
  Shape out = inferred;
  if (ctx.optional_input(2)) {
    out = ctx.const_ints(2);
    if (out.size() != inferred.size()) ctx.fail("output_shape must have the input's rank");
    for (size_t d = 0; d < out.size(); ++d)
      if (out[d] < inferred[d]) ctx.fail("output_shape " + shape_str(out) + " is smaller than " + shape_str(inferred));
  }
  int64_t plane_in = numel(Shape(x->shape.begin() + 2, x->shape.end()));
  int64_t plane_out = numel(Shape(inferred.begin() + 2, inferred.end()));
  // Local index in the plane: idx - (n*C + c) * plane_out; mask (N, C, plane_out, plane_in).
  std::vector<int64_t> base;
  for (int64_t i = 0; i < n * c; ++i) base.push_back(i * plane_out);
  Node* local = g.binary(Op::Sub, g.reshape(g.cast(idx, DType::I64), {n, c, 1, plane_in}),
                         g.reshape(g.weight(HostTensor::from_ints(DType::I64, {n, c}, base)), {n, c, 1, 1}));
  Node* mask = g.binary(Op::CmpEq, local, iota(g, plane_out, DType::I64, 4, 2));
  Node* src = g.reshape(x, {n, c, 1, plane_in});
  Node* y = g.reduce(Op::ReduceSum, g.where(mask, src, scalar(g, 0, src)), {3});
  y = g.reshape(y, inferred);
  std::vector<int64_t> lo(out.size(), 0), hi(out.size(), 0);
  for (size_t d = 0; d < out.size(); ++d) hi[d] = out[d] - inferred[d];
  return {g.pad(y, lo, hi, 0.0)};
}

// Col2Im: each kernel tap's column block (N, C, L) is a strided placement into the image;
// the taps are summed.
Outs lower_col2im(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  std::vector<int64_t> image = ctx.const_ints(1), block = ctx.const_ints(2);
  size_t k = image.size();
  if (block.size() != k || k == 0) ctx.fail("image_shape and block_shape must have one entry per spatial dim");
  std::vector<int64_t> dil = ctx.attr_ints("dilations", std::vector<int64_t>(k, 1));
  std::vector<int64_t> stride = ctx.attr_ints("strides", std::vector<int64_t>(k, 1));
  std::vector<int64_t> pads = ctx.attr_ints("pads", std::vector<int64_t>(2 * k, 0));
  if (dil.size() != k || stride.size() != k || pads.size() != 2 * k) ctx.fail("dilations / strides / pads do not match");
  if (x->shape.size() != 3) ctx.fail("input must be (N, C*prod(block_shape), L)");
  // Bounded as Conv's windows are (a stride of 0 divided by zero: SIGFPE), and the taps, one
  // placement each, as a tensor's elements are not when it has none (C = 0).
  constexpr int64_t kMaxWindowValue = int64_t{1} << 31, kMaxTaps = 4096;
  for (size_t i = 0; i < k; ++i)
    if (image[i] < 1 || block[i] < 1 || dil[i] < 1 || stride[i] < 1 || image[i] >= kMaxWindowValue ||
        block[i] >= kMaxWindowValue || dil[i] >= kMaxWindowValue || stride[i] >= kMaxWindowValue ||
        pads[i] < 0 || pads[k + i] < 0 || pads[i] >= kMaxWindowValue || pads[k + i] >= kMaxWindowValue)
      ctx.fail("image_shape, block_shape, dilations and strides must be in [1, 2^31), pads in [0, 2^31)");
  int64_t n = x->shape[0], kprod = 1;
  for (int64_t b : block)
    if ((kprod *= b) > kMaxTaps) ctx.fail("block_shape " + shape_str(block) + " has more than 4096 taps");
  if (x->shape[1] % kprod) ctx.fail("input channels are not a multiple of the block size");
  int64_t c = x->shape[1] / kprod;
  std::vector<int64_t> blocks(k);
  for (size_t i = 0; i < k; ++i) {
    blocks[i] = (image[i] + pads[i] + pads[k + i] - (dil[i] * (block[i] - 1) + 1)) / stride[i] + 1;
    if (blocks[i] < 1) ctx.fail("no sliding blocks fit");
  }
  if (numel(blocks) != x->shape[2]) ctx.fail("input length " + std::to_string(x->shape[2]) + " does not match the sliding blocks");
  Shape xs{n, c, kprod};
  xs.insert(xs.end(), blocks.begin(), blocks.end());
  Node* cols = g.reshape(x, xs);  // (N, C, K, blocks...)
  Node* sum = nullptr;
  std::vector<int64_t> tap(k, 0);
  for (int64_t t = 0; t < kprod; ++t) {
    Shape ps{n, c};
    ps.insert(ps.end(), blocks.begin(), blocks.end());
    Node* part = g.reshape(strided_slice(g, cols, 2, t, 1, 1), ps);
    for (size_t i = 0; i < k; ++i) {
      size_t d = 2 + i;
      part = dilate_axis(g, part, int64_t(d), stride[i]);  // zeros between the blocks
      // Block b lands at b*stride + tap*dilation - pad_begin.
      int64_t offset = tap[i] * dil[i] - pads[i], len = part->shape[d];
      int64_t crop_lo = std::max<int64_t>(0, -offset), crop_hi = std::max<int64_t>(0, offset + len - image[i]);
      if (crop_lo + crop_hi >= len) {
        part = nullptr;
        break;
      }
      part = strided_slice(g, part, int64_t(d), crop_lo, len - crop_lo - crop_hi, 1);
      std::vector<int64_t> lo(part->shape.size(), 0), hi(part->shape.size(), 0);
      lo[d] = std::max<int64_t>(0, offset);
      hi[d] = image[i] - lo[d] - part->shape[d];
      part = g.pad(part, lo, hi, 0.0);
    }
    if (part) sum = sum ? g.binary(Op::Add, sum, part) : part;
    for (size_t i = k; i-- > 0;)
      if (++tap[i] < block[i]) break;
      else tap[i] = 0;
  }
  Shape out{n, c};
  out.insert(out.end(), image.begin(), image.end());
  return {sum ? sum : g.constant(0, x->dtype, out)};
}

// AffineGrid: theta (N, 2, 3) / (N, 3, 4) times the homogeneous base grid (x, y[, z], 1).
Outs lower_affine_grid(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* theta = ctx.input(0);
  std::vector<int64_t> size = ctx.const_ints(1);
  bool align = ctx.attr_int("align_corners", 0) != 0;
  if (size.size() != 4 && size.size() != 5) ctx.fail("size must be (N, C, H, W) or (N, C, D, H, W)");
  size_t k = size.size() - 2;
  int64_t n = size[0];
  if (theta->shape != Shape{n, int64_t(k), int64_t(k + 1)}) ctx.fail("theta " + shape_str(theta->shape) + " does not fit size");
  Shape spatial(size.begin() + 2, size.end());
  int64_t points = numel(spatial);
  auto coord = [&](int64_t i, int64_t dim) {
    if (align) return dim == 1 ? -1.0 : -1.0 + 2.0 * double(i) / double(dim - 1);
    return -1.0 + (2.0 * double(i) + 1.0) / double(dim);
  };
  std::vector<double> base;  // (points, k+1): x (last spatial dim) first
  std::vector<int64_t> idx(k, 0);
  for (int64_t p = 0; p < points; ++p) {
    for (size_t j = 0; j < k; ++j) base.push_back(coord(idx[k - 1 - j], spatial[k - 1 - j]));
    base.push_back(1.0);
    for (size_t d = k; d-- > 0;)
      if (++idx[d] < spatial[d]) break;
      else idx[d] = 0;
  }
  Node* b = g.weight(HostTensor::from_doubles(theta->dtype, {points, int64_t(k + 1)}, base));
  Node* grid = matmul(g, b, g.permute(theta, {0, 2, 1}));  // (N, points, k)
  Shape out{n};
  out.insert(out.end(), spatial.begin(), spatial.end());
  out.push_back(int64_t(k));
  return {g.reshape(grid, out)};
}

// Det by Laplace expansion over column subsets (n <= 6).
Outs lower_det(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  size_t r = x->shape.size();
  if (r < 2 || x->shape[r - 1] != x->shape[r - 2]) ctx.fail("input must be (..., n, n)");
  if (!is_float(x->dtype)) ctx.fail("input must be a float tensor");
  int64_t n = x->shape[r - 1];
  if (n > 6) ctx.fail("matrices larger than 6x6 are not supported (n = " + std::to_string(n) + ")");
  Shape batch(x->shape.begin(), x->shape.end() - 2);
  auto elem = [&](int64_t i, int64_t j) {
    Node* row = strided_slice(g, x, int64_t(r - 2), i, 1, 1);
    return g.reshape(strided_slice(g, row, int64_t(r - 1), j, 1, 1), batch);
  };
  if (n == 0) return {g.constant(1, x->dtype, batch)};
  // minor[mask]: determinant of rows (n - popcount(mask))..n-1 restricted to the columns in mask.
  std::vector<Node*> minor(size_t(1) << n, nullptr);
  for (uint32_t mask = 1; mask < (1u << n); ++mask) {
    int cols = __builtin_popcount(mask);
    int64_t row = n - cols;
    Node* acc = nullptr;
    int sign_pos = 0;
    for (int64_t j = 0; j < n; ++j) {
      if (!(mask & (1u << j))) continue;
      uint32_t rest = mask & ~(1u << j);
      Node* term = elem(row, j);
      if (rest) term = g.binary(Op::Mul, term, minor[rest]);
      if (sign_pos % 2) term = g.unary(Op::Neg, term);
      acc = acc ? g.binary(Op::Add, acc, term) : term;
      ++sign_pos;
    }
    minor[mask] = acc;
  }
  return {minor[(1u << n) - 1]};
}

DType output_type(OpContext& ctx) { return dtype_from_onnx(int32_t(ctx.attr_int("output_datatype", 1))); }

int64_t const_scalar_int(OpContext& ctx, size_t i) {
  HostTensor t = ctx.const_input(i);
  if (t.numel() != 1) ctx.fail("input " + std::to_string(i) + " must hold one value");
  return t.get_int(0);
}

enum class WindowKind { Hann, Hamming, Blackman };

template <WindowKind kind>
Outs lower_window_fn(OpContext& ctx) {
  int64_t size = const_scalar_int(ctx, 0);
  if (size < 0) ctx.fail("negative size");
  double n1 = double(ctx.attr_int("periodic", 1) ? size : size - 1);
  std::vector<double> v;
  for (int64_t i = 0; i < size; ++i) {
    double a = 2 * M_PI * double(i) / n1;
    if (kind == WindowKind::Hann) v.push_back(std::pow(std::sin(M_PI * double(i) / n1), 2));
    if (kind == WindowKind::Hamming) v.push_back(25.0 / 46.0 - std::cos(a) * (1 - 25.0 / 46.0));
    if (kind == WindowKind::Blackman) v.push_back(0.42 - 0.5 * std::cos(a) + 0.08 * std::cos(2 * a));
  }
  return {ctx.g.weight(HostTensor::from_doubles(output_type(ctx), {size}, v))};
}

Outs lower_mel_weight_matrix(OpContext& ctx) {
  int64_t bins = const_scalar_int(ctx, 0), dft = const_scalar_int(ctx, 1), rate = const_scalar_int(ctx, 2);
  double lo_hz = ctx.const_input(3).get(0), hi_hz = ctx.const_input(4).get(0);
  if (bins < 1 || dft < 1 || rate < 1) ctx.fail("num_mel_bins, dft_length and sample_rate must be positive");
  int64_t spec_bins = dft / 2 + 1;
  double lo_mel = 2595 * std::log10(1 + lo_hz / 700), hi_mel = 2595 * std::log10(1 + hi_hz / 700);
  double step = (hi_mel - lo_mel) / double(bins + 2);
  std::vector<int64_t> f;
  for (int64_t i = 0; i < bins + 2; ++i) {
    double hz = 700 * (std::pow(10.0, (double(i) * step + lo_mel) / 2595) - 1);
    f.push_back(int64_t(std::floor(double(dft + 1) * hz / double(rate))));
  }
  std::vector<double> w(size_t(spec_bins * bins), 0.0);
  auto at = [&](int64_t j, int64_t i) -> double& {
    if (j < 0 || j >= spec_bins) ctx.fail("mel bin edge outside the spectrogram");
    return w[size_t(j * bins + i)];
  };
  for (int64_t i = 0; i < bins; ++i) {
    int64_t lo = f[size_t(i)], center = f[size_t(i + 1)], hi = f[size_t(i + 2)];
    if (center == lo) at(center, i) = 1;
    else for (int64_t j = lo; j <= center; ++j) at(j, i) = double(j - lo) / double(center - lo);
    if (hi > center)
      for (int64_t j = center; j < hi; ++j) at(j, i) = double(hi - j) / double(hi - center);
  }
  return {ctx.g.weight(HostTensor::from_doubles(output_type(ctx), {spec_bins, bins}, w))};
}

// TfIdfVectorizer (integer pool): for every pool n-gram of a counted length and every skip
// distance, the matches at each start position are an AND of shifted-slice comparisons;
// their sums give the n-gram counts (unigrams once, not per skip), mapped to the output
// columns by ngram_indexes and weighted per mode.
// The (B, out_size) columns of TfIdfVectorizer from the counts (B, G) of G n-grams, gram k
// adding to column indexes[ordinal of k]. Each column is a gather of its gram's count (a
// zero column where it has none), so the work and the constants grow with B x out_size,
// not G x out_size (a one-hot matrix of 2^32 entries for a hostile model's indexes);
// columns shared by several grams add them up, one gather per share.
Node* gram_counts_to_columns(Graph& g, Node* cnt, const std::vector<std::pair<int64_t, std::vector<int64_t>>>& grams,
                             const std::vector<int64_t>& indexes, int64_t out_size) {
  const int64_t b = cnt->shape[0], gn = cnt->shape[1];
  // Counts with a zero column appended: index gn reads 0.
  Node* padded = g.pad(cnt, {0, 0}, {0, 1});
  std::vector<std::vector<int64_t>> sources;  // sources[r][col]: the r-th gram of col, or gn
  for (int64_t k = 0; k < gn; ++k) {
    const int64_t col = indexes[size_t(grams[size_t(k)].first)];
    size_t r = 0;
    while (r < sources.size() && sources[r][size_t(col)] != gn) ++r;
    if (r == sources.size()) sources.emplace_back(size_t(out_size), gn);
    sources[r][size_t(col)] = k;
  }
  Node* y = nullptr;
  for (const std::vector<int64_t>& src : sources) {
    Node* index = g.expand(g.weight(HostTensor::from_ints(DType::I32, {1, out_size}, src)), {b, out_size});
    Node* cols = g.gather(padded, index, 1);
    y = y ? g.binary(Op::Add, y, cols) : cols;
  }
  return y;
}

Outs lower_tfidf_vectorizer(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  if (is_float(x->dtype) || x->dtype == DType::Bool) ctx.fail("only integer inputs are supported (int32 / int64)");
  if (ctx.has_attr("pool_strings")) ctx.fail("pool_strings is not supported (no string tensors)");
  bool one_row = x->shape.size() == 1;
  if (x->shape.size() != 1 && x->shape.size() != 2) ctx.fail("input must be [C] or [B, C]");
  Node* rows = one_row ? g.reshape(x, {1, x->shape[0]}) : x;
  int64_t b = rows->shape[0], c = rows->shape[1];
  std::string mode = ctx.attr_string("mode", "TF");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF") ctx.fail("unknown mode '" + mode + "'");
  int64_t min_n = ctx.attr_int("min_gram_length", 1), max_n = ctx.attr_int("max_gram_length", 1);
  int64_t max_skip = ctx.attr_int("max_skip_count", 0);
  std::vector<int64_t> counts = ctx.attr_ints("ngram_counts"), indexes = ctx.attr_ints("ngram_indexes"),
                       pool = ctx.attr_ints("pool_int64s");
  std::vector<float> weights = ctx.attr_floats("weights");
  if (indexes.empty()) ctx.fail("ngram_indexes is required");
  // Output columns. The compiler builds constants of the output's width: bounded far above
  // a real vocabulary (a hostile 1.4e9 made 11 GB of them, found by fuzz_onnx).
  constexpr int64_t kMaxColumns = int64_t{1} << 24;
  for (int64_t i : indexes)
    if (i < 0 || i >= kMaxColumns) ctx.fail("ngram_indexes must be in [0, 2^24)");
  int64_t out_size = *std::max_element(indexes.begin(), indexes.end()) + 1;
  // As onnxruntime: no n-gram longer than ngram_counts lists (max_gram_length 2^62 sized a
  // table, found by fuzz_onnx); a skip longer than a row skips past it (bounded before use).
  if (max_n > int64_t(counts.size())) ctx.fail("max_gram_length must be at most the number of ngram_counts");
  max_skip = std::clamp<int64_t>(max_skip, 0, c);
  if (!weights.empty() && int64_t(weights.size()) < out_size) ctx.fail("weights must have one entry per output");
  // Pool n-grams by length: (global ordinal, values).
  std::vector<std::vector<std::pair<int64_t, std::vector<int64_t>>>> by_len(size_t(std::max<int64_t>(max_n, 0) + 1));
  int64_t ordinal = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    int64_t n = int64_t(i) + 1, start = counts[i], end = i + 1 < counts.size() ? counts[i + 1] : int64_t(pool.size());
    if (start < 0 || end > int64_t(pool.size()) || end < start) ctx.fail("ngram_counts do not fit the pool");
    for (int64_t k = start; k + n <= end; k += n, ++ordinal) {
      if (n < min_n || n > max_n) continue;
      by_len[size_t(n)].push_back({ordinal, std::vector<int64_t>(pool.begin() + k, pool.begin() + k + n)});
    }
  }
  if (ordinal > int64_t(indexes.size())) ctx.fail("ngram_indexes has fewer entries than the pool has n-grams");
  Node* y = nullptr;  // (B, out_size) float counts
  for (int64_t n = std::max<int64_t>(min_n, 1); n <= max_n; ++n) {
    const auto& grams = by_len[size_t(n)];
    if (grams.empty()) continue;
    int64_t gn = int64_t(grams.size());
    Node* cnt = nullptr;  // (B, G)
    for (int64_t d = 1; d <= (n == 1 ? 1 : max_skip + 1); ++d) {
      int64_t len = c - (n - 1) * d;
      if (len <= 0) break;
      Node* match = nullptr;  // (B, G, len)
      for (int64_t j = 0; j < n; ++j) {
        std::vector<int64_t> col;
        for (const auto& gram : grams) col.push_back(gram.second[size_t(j)]);
        Node* want = g.weight(HostTensor::from_ints(x->dtype, {1, gn, 1}, col));
        Node* part = g.reshape(strided_slice(g, rows, 1, j * d, len, 1), {b, 1, len});
        Node* eq = g.binary(Op::CmpEq, part, want);
        match = match ? g.binary(Op::And, match, eq) : eq;
      }
      Node* sum = g.reshape(g.reduce(Op::ReduceSum, g.cast(match, DType::F32), {2}), {b, gn});
      cnt = cnt ? g.binary(Op::Add, cnt, sum) : sum;
    }
    if (!cnt) continue;
    y = y ? g.binary(Op::Add, y, gram_counts_to_columns(g, cnt, grams, indexes, out_size))
          : gram_counts_to_columns(g, cnt, grams, indexes, out_size);
  }
  if (!y) y = g.constant(0, DType::F32, {b, out_size});
  if (mode != "TF") {
    Node* w = weights.empty() ? g.constant(1, DType::F32) : g.weight(HostTensor::from_doubles(DType::F32, {1, out_size}, std::vector<double>(weights.begin(), weights.begin() + out_size)));
    if (mode == "IDF") y = g.where(g.binary(Op::CmpLt, g.constant(0, DType::F32), y), g.binary(Op::Mul, g.constant(1, DType::F32, y->shape), w), g.constant(0, DType::F32));
    else y = g.binary(Op::Mul, y, w);
  }
  return {one_row ? g.reshape(y, {out_size}) : y};
}

}  // namespace

void add_misc_ops(OpTable& t) {
  t["TfIdfVectorizer"] = lower_tfidf_vectorizer;
  t["CenterCropPad"] = lower_center_crop_pad;
  t["ReverseSequence"] = lower_reverse_sequence;
  t["MaxUnpool"] = lower_max_unpool;
  t["Col2Im"] = lower_col2im;
  t["AffineGrid"] = lower_affine_grid;
  t["Det"] = lower_det;
  t["HannWindow"] = lower_window_fn<WindowKind::Hann>;
  t["HammingWindow"] = lower_window_fn<WindowKind::Hamming>;
  t["BlackmanWindow"] = lower_window_fn<WindowKind::Blackman>;
  t["MelWeightMatrix"] = lower_mel_weight_matrix;
}

}  // namespace edgec::onnx_frontend
