// ops_nn.cc — convolution, pooling, normalization, matrix products, softmax, dropout.
//
// Conv and pooling are a padded, strided, dilated Window over the spatial dims followed by
// elementwise math and a reduction over the window taps.
#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>
#include <set>
#include <cmath>
#include <limits>

#include "frontend/lowering.h"

namespace edgec::onnx_frontend {
namespace {

using Outs = std::vector<Node*>;

// Where a sliding window over the spatial dims (all dims after N, C) reads.
struct WindowSpec {
  std::vector<int64_t> kernel, stride, dilation;
  std::vector<int64_t> pad_lo, pad_hi;  // the node's padding (explicit or auto_pad)
  std::vector<int64_t> extra_hi;        // more padding so ceil_mode's last window exists

  int64_t span(size_t i) const { return dilation[i] * (kernel[i] - 1) + 1; }  // input elements a window covers
  // The windows along spatial dim i of an input `size` long.
  int64_t outputs(size_t i, int64_t size) const { return (size + pad_lo[i] + pad_hi[i] + extra_hi[i] - span(i)) / stride[i] + 1; }
  bool padded() const {
    for (size_t i = 0; i < kernel.size(); ++i)
      if (pad_lo[i] + pad_hi[i] + extra_hi[i] > 0) return true;
    return false;
  }
  // For a window over a copy that holds the border.
  void clear_padding() {
    std::fill(pad_lo.begin(), pad_lo.end(), 0);
    std::fill(pad_hi.begin(), pad_hi.end(), 0);
    std::fill(extra_hi.begin(), extra_hi.end(), 0);
  }
};

WindowSpec window_spec(const OpContext& ctx, const Shape& x_shape, std::vector<int64_t> kernel, bool ceil_mode) {
  size_t k = kernel.size();
  if (x_shape.size() != k + 2)
    ctx.fail("input " + shape_str(x_shape) + " does not match a " + std::to_string(k) + "-D kernel");
  WindowSpec w;
  w.kernel = std::move(kernel);
  w.stride = ctx.attr_ints("strides", std::vector<int64_t>(k, 1));
  w.dilation = ctx.attr_ints("dilations", std::vector<int64_t>(k, 1));
  std::vector<int64_t> pads = ctx.attr_ints("pads", std::vector<int64_t>(2 * k, 0));
  if (w.stride.size() != k || w.dilation.size() != k || pads.size() != 2 * k)
    ctx.fail("strides / dilations / pads do not match the " + std::to_string(k) + "-D kernel");
  // Bounded so that the window arithmetic below neither divides by zero nor overflows.
  constexpr int64_t kMaxWindowValue = int64_t{1} << 31;
  for (size_t i = 0; i < k; ++i)
    if (w.kernel[i] < 1 || w.stride[i] < 1 || w.dilation[i] < 1 || w.kernel[i] >= kMaxWindowValue ||
        w.stride[i] >= kMaxWindowValue || w.dilation[i] >= kMaxWindowValue)
      ctx.fail("kernel_shape, strides and dilations must be in [1, 2^31)");
  for (int64_t p : pads)
    if (p < 0 || p >= kMaxWindowValue) ctx.fail("pads must be in [0, 2^31)");
  w.pad_lo.assign(pads.begin(), pads.begin() + k);
  w.pad_hi.assign(pads.begin() + k, pads.end());
  std::string auto_pad = ctx.attr_string("auto_pad", "NOTSET");
  for (size_t i = 0; i < k; ++i) {
    int64_t size = x_shape[2 + i], span = w.dilation[i] * (w.kernel[i] - 1) + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      int64_t out = (size + w.stride[i] - 1) / w.stride[i];
      int64_t total = std::max<int64_t>(0, (out - 1) * w.stride[i] + span - size);
      int64_t small = total / 2;  // SAME_UPPER puts the odd element at the end
      w.pad_lo[i] = auto_pad == "SAME_UPPER" ? small : total - small;
      w.pad_hi[i] = total - w.pad_lo[i];
    } else if (auto_pad == "VALID") {
      w.pad_lo[i] = w.pad_hi[i] = 0;
    } else if (auto_pad != "NOTSET") {
      ctx.fail("unknown auto_pad '" + auto_pad + "'");
    }
    int64_t padded = size + w.pad_lo[i] + w.pad_hi[i], extra = 0;
    if (padded < span) ctx.fail("kernel does not fit the padded input " + shape_str(x_shape));
    if (ceil_mode) {
      int64_t out = (padded - span + w.stride[i] - 1) / w.stride[i] + 1;
      if ((out - 1) * w.stride[i] >= size + w.pad_lo[i]) --out;  // the last window must start inside
      extra = std::max<int64_t>(0, (out - 1) * w.stride[i] + span - padded);
    }
    w.extra_hi.push_back(extra);
  }
  return w;
}

// x padded (with fill) and windowed: (N, C, S...) -> (N, C, O..., K...).
Node* windows(Graph& g, Node* x, const WindowSpec& w, double fill) {
  std::vector<int64_t> lo{0, 0}, hi{0, 0};
  for (size_t i = 0; i < w.kernel.size(); ++i) {
    lo.push_back(w.pad_lo[i]);
    hi.push_back(w.pad_hi[i] + w.extra_hi[i]);
  }
  return g.window(g.pad(x, lo, hi, fill), w.kernel, w.stride, w.dilation);
}

// Reduces the k trailing tap dims of a window and drops them.
Node* reduce_taps(Graph& g, Op op, Node* win, size_t k) {
  int64_t rank = int64_t(win->shape.size());
  Node* r = g.reduce(op, win, iota_ints(rank - int64_t(k), rank));
  return g.reshape(r, Shape(win->shape.begin(), win->shape.end() - k));
}

// A conv weight (M, C/groups, K...) stored as (M/16, K..., C/groups, 16) and read through
// a view in its ONNX order: the output channels of one tap are consecutive, so a kernel
// that computes a vector of output channels (channels-last) loads it in one piece, the
// taps follow each other in the order the reduction reads them, and a tile of 16 output
// channels reads one contiguous panel (packed_in_column_blocks).
// columns: panels of that many output channels (DotLayout::int8_depthwise_columns).
Node* packed_conv_weight(Graph& g, Node* w, int64_t columns = kColumnBlock) {
  size_t k = w->shape.size() - 2;
  std::vector<int64_t> pack, unpack{int64_t(k) + 1, int64_t(k)};
  for (size_t i = 0; i < k; ++i) pack.push_back(2 + int64_t(i)), unpack.push_back(int64_t(i));
  pack.push_back(1);
  pack.push_back(0);
  return g.permute(packed_in_column_blocks(g, g.permute(w, pack), columns), unpack);
}

// The same for a dot-product instruction reducing `group` channels per lane (DotLayout):
// stored as (M/16, K..., C/groups/group, 16, group) (16: `columns`) and read in the order
// (M, C/groups/group, group, K...).
Node* packed_conv_weight_groups(Graph& g, Node* w, int64_t group, int64_t columns) {
  const int64_t k = int64_t(w->shape.size()) - 2;
  std::vector<int64_t> pack, unpack{k + 2, k, k + 1};  // (K..., C, M) <-> (M, C/g, g, K...)
  for (int64_t i = 0; i < k; ++i) pack.push_back(2 + i), unpack.push_back(i);
  pack.push_back(1);
  pack.push_back(0);
  return g.permute(packed_in_column_groups(g, g.permute(w, pack), group, columns), unpack);
}

// x (N, C, H, W) with channels C..to-1 reading `fill`, realized as (N, H, W, to): each
// pixel's channels together.
Node* channels_last_padded(Graph& g, Node* x, int64_t to, double fill) {
  Node* nhwc = g.pad(g.permute(x, {0, 2, 3, 1}), {0, 0, 0, 0}, {0, 0, 0, to - x->shape[1]}, fill);
  nhwc->realize = true;
  return g.permute(nhwc, {0, 3, 1, 2});
}

// A depthwise conv (one group per input channel) with some dilation above 1.
bool depthwise_dilated(const Node* x, int64_t groups, const WindowSpec& spec) {
  return groups > 1 && groups == x->shape[1] &&
         std::any_of(spec.dilation.begin(), spec.dilation.end(), [](int64_t d) { return d > 1; });
}

// Whether x is read in the channels-first order it has in memory: a 1-D conv's input (no
// (N, C, L) value is stored channels-last: schedule.cc's choose_channels_last takes 4-D
// and 5-D ones only) or the model's own (N, C, H, W) or (N, C, D, H, W) input, also
// through the pads and crops of ConvTranspose's phase windows.
bool reads_channels_first(const Node* x) {
  if (x->shape.size() == 3) return true;
  if (x->shape.size() != 4 && x->shape.size() != 5) return false;
  while ((x->op == Op::Pad || x->op == Op::Shrink) && !x->realize) x = x->srcs[0];
  return x->op == Op::Input;
}

// Whether conv_core gives a grouped conv (1 < groups < channels), a dense 1 x k / k x 1
// one (k >= 3: Inception's 1x7 and 7x1 convs), or a dense strided one, an explicitly
// padded input (ImportOptions::padded_grouped_convs): float 2-D, some padding, stride 1
// but for the dense strided ones. A 1 x 7 conv pads 3 pixels on each side of a 17-pixel row: the bounds-tested border tiles were most of
// its tiles (Inception-v3's 7x1 / 1x7 convs ran at 8-12 GFLOP/s beside 40-70 for its
// others). Strided grouped and depthwise convs keep the border tiles (their inside tiles
// dominate less or the border runs already pay off: llvm_emit.cc).
// A dense, 2-D depthwise (5x5 and larger) or strided grouped conv of channels-first data
// (reads_channels_first) reads a channels-last copy too, padded or not: over the
// channels-first data its kernel took vectors along the rows (masked at the borders and the
// row ends) times broadcast weights, over the copy it takes vectors of output channels (or
// channels) times broadcast inputs (tests/bench/op_cliffs.py --cpu-time, 1 thread, AVX2, against
// onnxruntime: Conv1d 1.0-2.0x -> 0.8-1.1x, ConvTranspose 1.3-3.4x -> 1.0-1.3x, depthwise 7x7
// 1.45x -> 0.8x, 4 groups of 64 channels at stride 2 8.8x -> 1.8x; BENCHMARKS.md). So do stride-1
// grouped ones of more than one tap, padded or not, as a grouped ConvTranspose's phases are
// (4x4 stride 2 in 2 groups of 64, 40x40: 3.8 -> 2.4 ms; an unpadded 3x3 conv in 4 groups of
// 16 over 56x56: 2.3 -> 1.1 ms, CPU time); an unpadded 1x1 one ran 1.4x slower over it, and
// depthwise ones under 5x5 (a depthwise ConvTranspose's 1x1 and 2x2 phases) 1.5-5x slower:
// the copy then costs more than the taps. A 5x5 stride-2 depthwise one (72 channels, 112x112)
// took 0.40x the time over the copy, its padded copy's rows loaded masked and transposed in
// registers (llvm_emit.cc choose_transposed_blocks; gathered element by element, 0.68x).
bool copies_input_channels_last(const Node* x, int64_t groups, bool dot_operands, const WindowSpec& spec) {
  // An 8-bit dense conv of channels-first data (a quantized Conv1d: Whisper's stem) reads one
  // dot group of adjacent channels per broadcast; over the channels-first data the group's
  // bytes lay L apart, gathered one by one (Smart Turn's 384 -> 384 stride-2 stem: 12.3 ms ->
  // 4.1 ms CPU time, AVX2, 1 thread; the 80 -> 384 one 3.9 -> 2.2 ms).
  const bool int8 = x->dtype == DType::U8 || x->dtype == DType::I8;
  if (int8 && groups == 1 && reads_channels_first(x)) return true;
  if (x->dtype != DType::F32 || dot_operands) return false;
  const bool stride_1 = std::all_of(spec.stride.begin(), spec.stride.end(), [](int64_t s) { return s == 1; });
  const bool depthwise_2d = x->shape.size() == 4 && groups > 1 && groups == x->shape[1];
  const bool large_depthwise = depthwise_2d && spec.kernel[0] * spec.kernel[1] >= 25;
  const bool one_tap = std::all_of(spec.kernel.begin(), spec.kernel.end(), [](int64_t k) { return k == 1; });
  if (reads_channels_first(x) && (groups == 1 || large_depthwise || (!depthwise_2d && (!stride_1 || !one_tap)))) return true;
  if (x->shape.size() != 4 && x->shape.size() != 5) return false;
  const bool strip = groups == 1 && spec.kernel.size() == 2 && std::min(spec.kernel[0], spec.kernel[1]) == 1 &&
                     std::max(spec.kernel[0], spec.kernel[1]) >= 3;
  // A dense strided conv: its bounds-tested border tiles ran at 1/3 - 1/6 of the speed of
  // the unpadded conv (tests/bench/op_cliffs.py: 3x3 stride 2, 64 -> 128 channels on 56x56
  // at 19 GFLOP/s against 47 unpadded). (Dilated ones mostly go by conv_by_regions.)
  const bool dense_strided = groups == 1 && !stride_1;
  // A dilated depthwise conv (op_cliffs.py: a rate 4 one ran at 6.9 GFLOP/s over
  // conv_by_regions' 18 kernels, 1.5-3.3x slower than over the copy). Dense and grouped
  // dilated ones stay with conv_by_regions: over the copy they took 0.6-2.1x its time,
  // slower on the AVX2 target.
  const bool dilated_depthwise = depthwise_dilated(x, groups, spec);
  // A padded conv over one computed channel (DNSMOS's 1 -> 128 3x3 conv of a 900 x 161
  // spectrogram, read through a transposing view): its copy is one plane, its bounds tests and
  // the view's index arithmetic were most of the conv's time.
  const bool one_channel = groups == 1 && x->shape[1] == 1;
  // A stride-1 depthwise conv most of whose outputs read padding (a 5x5 one over 3 rows, as
  // in PP-OCR's text-direction classifier: every output): its tiles test their bounds at
  // every tap (6-10 GFLOP/s, a third of that model's time). Measured gains at 0 and 18%
  // inside (5x5 on 7x7: MobileNetV3-Small 2.85 -> 2.33 ms); none at 41% (PicoDet's 5x5 convs
  // on 13x10, 128 channels: the copy cost what the taps saved), so below a quarter.
  double inside = 1;
  for (size_t i = 0; i < spec.kernel.size() && i + 2 < x->shape.size(); ++i) {
    const int64_t outputs = spec.outputs(i, x->shape[2 + i]);
    inside *= outputs > 0 ? double(std::clamp<int64_t>(x->shape[2 + i] - spec.span(i) + 1, 0, outputs)) / double(outputs) : 1.0;
  }
  const bool mostly_border_depthwise = depthwise_2d && stride_1 && inside < 0.25;
  // A dense 3-D conv: with a padded depth of 8 frames (r3d_18) a quarter of its output
  // planes are border planes, their tiles all bounds-tested.
  const bool dense_3d = groups == 1 && x->shape.size() == 5;
  if (!strip && !dense_strided && !dilated_depthwise && !one_channel && !mostly_border_depthwise && !dense_3d &&
      (groups <= 1 || groups >= x->shape[1]))
    return false;
  if (!dense_strided && !dense_3d && !stride_1) return false;
  return spec.padded();
}

// Whether conv_core reads a float conv's operands as bf16 pairs (the target's dot form).
bool takes_bf16_operands(OpContext& ctx, const Node* x, const Node* w, int64_t groups) {
  return ctx.dots.float_operands == DType::BF16 && x->dtype == DType::F32 && (x->shape[1] / groups) % kBf16Pair == 0 &&
         ctx.g.is_constant(w);
}

// x (N, C, S...) padded over S as `spec` says (with fill), realized as (N, S'..., C): a
// buffer of its own that the consumer's window reads unpadded, each pixel's channels
// together as in the other channels-last intermediates.
Node* channels_last_padded_spatial(Graph& g, Node* x, const WindowSpec& spec, double fill) {
  const int64_t r = int64_t(x->shape.size());
  std::vector<int64_t> to_last{0}, to_first{0, r - 1}, lo(size_t(r), 0), hi(size_t(r), 0);
  for (int64_t i = 2; i < r; ++i) {
    to_last.push_back(i);
    to_first.push_back(i - 1);
    lo[size_t(i - 1)] = spec.pad_lo[size_t(i - 2)];
    hi[size_t(i - 1)] = spec.pad_hi[size_t(i - 2)] + spec.extra_hi[size_t(i - 2)];
  }
  to_last.push_back(1);
  Node* nhwc = g.pad(g.permute(x, to_last), lo, hi, fill);
  nhwc->realize = true;
  return g.permute(nhwc, to_first);
}

// x read as `window` says through channels_last_padded_spatial's copy: `window` loses its
// padding (the copy holds the border), so the conv's tiles run without bounds tests.
Node* read_through_padded_copy(Graph& g, Node* x, WindowSpec& window, double fill) {
  x = channels_last_padded_spatial(g, x, window, fill);
  window.clear_padding();
  return x;
}

// y (N, M, O...) + bias (M) where there is one.
Node* add_conv_bias(OpContext& ctx, Node* y, Node* bias) {
  if (!bias) return y;
  const int64_t m = y->shape[1];
  if (bias->shape != Shape{m}) ctx.fail("bias " + shape_str(bias->shape) + " should be [" + std::to_string(m) + "]");
  Shape bs{m};
  bs.insert(bs.end(), y->shape.size() - 2, 1);
  return ctx.g.binary(Op::Add, y, ctx.g.reshape(bias, bs));
}

// The Winograd form of a conv where the import options ask for it and it pays: float, 2-D,
// 3x3, stride 1, undilated, constant weights, at least 16 channels in and out (grouped too:
// winograd_tile_for weighs the transforms against the products of C/G channels; bf16
// operands ungrouped only)
// (fewer leave the transforms as much work as the products) and an output of at least one
// tile. Null where the direct convolution is used.
Node* winograd_if_it_pays(OpContext& ctx, Node* x, Node* w, int64_t groups, const WindowSpec& spec) {
  constexpr int64_t kMinChannels = 16;
  if (ctx.winograd == Winograd::Off || x->dtype != DType::F32 || x->shape.size() != 4) return nullptr;
  if (groups != 1 && ctx.dots.float_operands != DType::F32) return nullptr;
  if (spec.kernel != std::vector<int64_t>{3, 3} || spec.stride != std::vector<int64_t>{1, 1} ||
      spec.dilation != std::vector<int64_t>{1, 1} || spec.extra_hi != std::vector<int64_t>{0, 0})
    return nullptr;
  const int64_t c = x->shape[1], k = w->shape[0];
  if (c < kMinChannels || k < kMinChannels || !ctx.g.is_constant(w)) return nullptr;
  const std::array<int64_t, 2> lo{spec.pad_lo[0], spec.pad_lo[1]}, hi{spec.pad_hi[0], spec.pad_hi[1]};
  const int64_t oh = x->shape[2] + lo[0] + hi[0] - 2, ow = x->shape[3] + lo[1] + hi[1] - 2;
  const int tile = winograd_tile_for(ctx.winograd, c, k, oh, ow, ctx.dots.float_operands, groups, x->shape[0]);
  if (tile == 0 || oh < tile || ow < tile) return nullptr;
  if (reads_channels_first(x)) {
    // Over the model's NCHW input the input transform gathered each tile's rows plane by
    // plane with bounds tests (6.6 GFLOP/s, the other transform passes 34-58): it reads a
    // zero-bordered channels-last copy, as the direct conv does (64 -> 64 channels at 56x56:
    // 1.90 -> 1.41 ms, x86_64 AVX2, edgert-bench --profile; BENCHMARKS.md).
    WindowSpec window = spec;
    x = read_through_padded_copy(ctx.g, x, window, 0.0);
    return winograd_conv(ctx.g, x, ctx.g.evaluate(w), tile, {0, 0}, {0, 0}, ctx.dots.float_operands, groups);
  }
  return winograd_conv(ctx.g, x, ctx.g.evaluate(w), tile, lo, hi, ctx.dots.float_operands, groups);
}

Node* conv_core(OpContext& ctx, Node* x, Node* w, Node* bias, int64_t groups, const WindowSpec& spec,
                double fill = 0.0, int64_t* x_shift = nullptr);
Node* conv_by_regions(OpContext& ctx, Node* x, Node* w, int64_t groups, const WindowSpec& spec);

// x, or the padded channels-last copy a 2-D float conv of x would read (window then
// unpadded): made once for the convs a conv is split into, where each chunk's conv_core
// made its own copy of the same input (chunks exist for inputs of tens of MB). (A 1-D
// one's chunks keep theirs: reads_channels_first takes any 3-D input as NCW.)
Node* padded_copy_for_chunks(OpContext& ctx, Node* x, Node* w, int64_t groups, WindowSpec& window, double fill) {
  const bool int8 = x->dtype == DType::U8 || x->dtype == DType::I8;
  if (ctx.padded_grouped_convs && x->shape.size() == 4 && !int8 && !takes_bf16_operands(ctx, x, w, groups) &&
      copies_input_channels_last(x, groups, false, window))
    return read_through_padded_copy(ctx.g, x, window, fill);
  return x;
}

// A conv whose products (N, M, O..., C/G, K...: each output times its taps, a graph node
// before the reduction sums them) are more than a node may hold (kMaxTensorElements;
// DNSMOS's 128 -> 64 channel 3x3 conv over a 900 x 161 spectrogram has 1.1e10) as convs of
// fewer output channels, whole groups each, concatenated along the channels. Null where
// the products fit, or where one group's alone do not (the node's error then says so).
// A chunk is whole vectors of output channels (the target's float lanes) where that takes
// no more chunks: the register tile vectorizes the output channels, and DNSMOS's 64 balanced
// as 22 / 22 / 20 left 2-4 lanes of every chunk's last vector idle on AVX2 (24 / 24 / 16:
// 0.87 of the time, BENCHMARKS.md). (AVX-512's 16 lanes would need 4 chunks: not measured.)
Node* conv_in_channel_chunks(OpContext& ctx, Node* x, Node* w, Node* bias, int64_t groups, const WindowSpec& spec,
                             double fill, int64_t* x_shift) {
  const int64_t c = x->shape[1], m = w->shape[0], cg = c / groups, mg = m / groups;
  // C/G as the 8-bit forms may pad it: up to their dot-product group.
  const int64_t dot = std::max<int64_t>(1, ctx.dots.int8_group);
  double per_channel = double(x->shape[0]) * double((cg + dot - 1) / dot * dot);
  for (size_t i = 0; i < spec.kernel.size(); ++i)
    per_channel *= double(spec.outputs(i, x->shape[2 + i])) * double(spec.kernel[i]);
  const double limit = double(kMaxTensorElements);
  const int64_t unit = groups > 1 ? mg : 1;  // output channels that go together
  // (Tested before the division, and as "not above": a hostile model's zero-sized output dim
  // times a huge kernel makes per_channel 0 or NaN, and limit / 0 is no int64_t; fuzz_onnx.)
  if (!(per_channel * double(m) > limit)) return nullptr;
  const double fits = limit / (per_channel * double(unit));
  if (!(fits >= 1)) return nullptr;
  const int64_t units = m / unit, fit = int64_t(std::min(fits, double(units)));
  const int64_t chunks = (units + fit - 1) / fit;
  int64_t step_units = (units + chunks - 1) / chunks;  // balanced
  // Rounded up to units of a whole number of vectors where the chunk still fits.
  const int64_t vector_units = std::lcm(unit, std::max<int64_t>(1, ctx.dots.float_lanes)) / unit;
  const int64_t whole_vectors = (step_units + vector_units - 1) / vector_units * vector_units;
  if (whole_vectors <= fit) step_units = whole_vectors;
  const int64_t step = step_units * unit;
  Graph& g = ctx.g;
  WindowSpec window = spec;
  x = padded_copy_for_chunks(ctx, x, w, groups, window, fill);
  std::vector<Node*> parts;
  for (int64_t m0 = 0; m0 < m; m0 += step) {
    const int64_t m1 = std::min(m, m0 + step);
    std::vector<int64_t> w_begin(w->shape.size(), 0), w_end = w->shape;
    w_begin[0] = m0, w_end[0] = m1;
    Node* xc = x;
    if (groups > 1) {  // the input channels of the chunk's groups
      std::vector<int64_t> x_begin(x->shape.size(), 0), x_end = x->shape;
      x_begin[1] = m0 / mg * cg, x_end[1] = m1 / mg * cg;
      xc = g.shrink(x, x_begin, x_end);
    }
    parts.push_back(conv_core(ctx, xc, g.shrink(w, w_begin, w_end), nullptr, groups > 1 ? (m1 - m0) / mg : 1, window,
                              fill, x_shift));
  }
  return add_conv_bias(ctx, concat(g, parts, 1), bias);
}

// A dense float conv whose reduction per output (C x taps) is so long that the weights of a
// register tile's two vectors of output channels (2 x lanes x C x taps floats) outgrow the
// core's cache share (DotLayout::weight_slice_bytes), as a sum of convs over chunks of the
// input channels, each chunk's slice within it. Whole, the tile choice fell back to one
// vector of channels and up to 12 pixels, 13 loads per 12 multiply-adds: DeepLabV3's ASPP
// (2048 channels, rate-12 taps summed over regions, 8192 products per output) ran at 30
// GFLOP/s beside the backbone's 80-95. Null where the slice fits, or with fewer than two
// vectors of output channels.
Node* conv_in_reduction_chunks(OpContext& ctx, Node* x, Node* w, Node* bias, int64_t groups, const WindowSpec& spec,
                               double fill) {
  constexpr int64_t kTileVectors = 2;
  const int64_t budget = ctx.dots.weight_slice_bytes, lanes = ctx.dots.float_lanes;
  if (budget <= 0 || groups != 1 || x->dtype != DType::F32 || w->dtype != DType::F32 || !ctx.g.is_constant(w) ||
      takes_bf16_operands(ctx, x, w, groups) || w->shape[0] < kTileVectors * lanes)
    return nullptr;
  const int64_t c = x->shape[1];
  int64_t per_channel = kTileVectors * lanes * int64_t{sizeof(float)};  // slice bytes per input channel
  for (int64_t k : spec.kernel) per_channel *= k;
  const int64_t fit = budget / per_channel;  // input channels per chunk
  if (c <= fit || fit < 1) return nullptr;
  const int64_t chunks = (c + fit - 1) / fit, step = (c + chunks - 1) / chunks;  // balanced
  Graph& g = ctx.g;
  WindowSpec window = spec;
  x = padded_copy_for_chunks(ctx, x, w, groups, window, fill);
  Node* sum = nullptr;
  for (int64_t c0 = 0; c0 < c; c0 += step) {
    const int64_t c1 = std::min(c, c0 + step);
    std::vector<int64_t> x_begin(x->shape.size(), 0), x_end = x->shape, w_begin(w->shape.size(), 0), w_end = w->shape;
    x_begin[1] = w_begin[1] = c0;
    x_end[1] = w_end[1] = c1;
    Node* part = conv_core(ctx, g.shrink(x, x_begin, x_end), g.shrink(w, w_begin, w_end), nullptr, 1, window, fill);
    sum = sum ? g.binary(Op::Add, sum, part) : part;
  }
  return add_conv_bias(ctx, sum, bias);
}

// A float grouped conv whose output channels per group (M/G) are neither a multiple nor a
// divisor of the target's float lanes, computed with each group's output channels filled up
// with zero-weight channels to the next width that is (6 -> 8, 20 -> 24, 3 -> 4 on AVX2)
// and the real channels picked out after. A vector of output channels then covers one group
// or the same pattern of whole groups, and its input loads are broadcasts or one shuffled
// span (llvm_emit.cc); with 6 per group, which groups a vector covered moved from vector to
// vector and every input load was a gather: 0.5-1.4 GFLOP/s, 6-16x onnxruntime's time
// (tests/bench/op_cliffs.py --random). Null where the widths already fit, or not float.
// by_regions: the filled-up conv as conv_by_regions' sum (null where that does not apply),
// so that the regions add up whole groups and the next kernel reads one pick, not one per
// region through its zero padding (32 groups of 10 outputs, 3x1 dilated, pooled: 0.61 of the
// time; a 1x3 one of 3 per group had been left unfilled for that pick, its every load a
// gather: 1.9x onnxruntime, filled 1.4x; BENCHMARKS.md).
Node* conv_with_lane_padded_groups(OpContext& ctx, Node* x, Node* w, Node* bias, int64_t groups,
                                   const WindowSpec& spec, double fill, bool by_regions = false) {
  const int64_t lanes = std::min<int64_t>(ctx.dots.float_lanes, 8);  // AVX-512's 16: as AVX2 (measured there)
  if (lanes <= 1 || groups <= 1 || x->dtype != DType::F32 || w->dtype != DType::F32 || !ctx.g.is_constant(w))
    return nullptr;
  const int64_t m = w->shape[0], mg = m / groups;
  int64_t padded = mg;
  while (padded % lanes != 0 && lanes % padded != 0) ++padded;
  if (padded == mg) return nullptr;
  Graph& g = ctx.g;
  Shape by_group{groups, mg};  // w as (G, M/G, C/G, K...), filled up along M/G
  by_group.insert(by_group.end(), w->shape.begin() + 1, w->shape.end());
  std::vector<int64_t> lo(by_group.size(), 0), hi(by_group.size(), 0);
  hi[1] = padded - mg;
  Shape wide = w->shape;
  wide[0] = groups * padded;
  Node* wp = g.reshape(g.pad(g.reshape(w, by_group), lo, hi, 0.0), wide);
  Node* yp = by_regions ? conv_by_regions(ctx, x, wp, groups, spec)  // (N, G * padded, O...)
                        : conv_core(ctx, x, wp, nullptr, groups, spec, fill);
  if (!yp) return nullptr;
  // Stored whole: computed through the pick, its lanes would straddle groups again. A conv
  // kernel stores its tiles into (N, G * padded, H, W) transposed (llvm_emit.cc), as fast as
  // channels-last or faster (1.2-1.3x the time channels-last); the sum of the regions is
  // elementwise over their channels-last results, and into that order each of its vectors
  // was a scatter: it stores (N, H, W, G * padded).
  const bool channels_last = by_regions && yp->shape.size() == 4;
  Node* stored = channels_last ? g.permute(yp, {0, 2, 3, 1}) : yp;
  stored->realize = true;
  const Shape& s = stored->shape;
  const size_t channel_dim = channels_last ? 3 : 1;
  Shape y_groups(s.begin(), s.begin() + channel_dim);  // the channels as (G, padded)
  y_groups.insert(y_groups.end(), {groups, padded});
  y_groups.insert(y_groups.end(), s.begin() + channel_dim + 1, s.end());
  std::vector<int64_t> begin(y_groups.size(), 0), end = y_groups;
  end[channel_dim + 1] = mg;
  Shape picked = s;
  picked[channel_dim] = m;
  Node* y = g.reshape(g.shrink(g.reshape(stored, y_groups), begin, end), picked);
  return add_conv_bias(ctx, channels_last ? g.permute(y, {0, 3, 1, 2}) : y, bias);
}

// Convolution of x (N, C, S...) with w (M, C/groups, K...) over the window `spec`; the
// padding reads `fill`. With 8-bit integer x and w the products and sums are int32: both
// are widened at the multiply, so the reduction reads the raw 8-bit operands (what a
// dot-product instruction takes) and the packed weight stays 8-bit in the bundle.
Node* conv_core(OpContext& ctx, Node* x, Node* w, Node* bias, int64_t groups, const WindowSpec& spec,
                double fill, int64_t* x_shift) {
  if (x_shift) *x_shift = 0;
  Graph& g = ctx.g;
  const Shape& ws = w->shape;
  size_t k = ws.size() - 2;
  int64_t n = x->shape[0], c = x->shape[1], m = ws[0];
  if (groups < 1 || c % groups || m % groups || ws[1] != c / groups)
    ctx.fail("input channels " + std::to_string(c) + ", weight " + shape_str(ws) + " and group " +
             std::to_string(groups) + " do not fit");
  auto is_8bit = [](const Node* v) { return v->dtype == DType::I8 || v->dtype == DType::U8; };
  const bool int8 = is_8bit(x) && is_8bit(w);
  if (w->dtype != x->dtype && !int8) ctx.fail("input and weight dtypes differ");
  if (Node* y = conv_in_channel_chunks(ctx, x, w, bias, groups, spec, fill, x_shift))
    return y;
  if (Node* y = conv_with_lane_padded_groups(ctx, x, w, bias, groups, spec, fill)) return y;
  std::vector<int64_t> kernel(ws.begin() + 2, ws.end());
  if (Node* y = winograd_if_it_pays(ctx, x, w, groups, spec)) return add_conv_bias(ctx, y, bias);
  if (Node* y = conv_in_reduction_chunks(ctx, x, w, bias, groups, spec, fill)) return y;
  // The channel reduction in the groups of the target's dot-product instruction (DotLayout):
  // bf16 pairs (lowering.h bf16_operand) or 8-bit groups, where the channels split evenly.
  if (int8 && groups == 1 && x->shape.size() == 4 && g.is_constant(w) && ctx.dots.int8_group > 1 &&
      c % ctx.dots.int8_group != 0) {
    // An image's 3 channels: padded to the dot group (zero weights) and stored channels-last,
    // so each dot instruction reads one group of channels with one load.
    const int64_t padded = (c + ctx.dots.int8_group - 1) / ctx.dots.int8_group * ctx.dots.int8_group;
    x = channels_last_padded(g, x, padded, fill);
    w = g.pad(w, {0, 0, 0, 0}, {0, padded - c, 0, 0}, 0.0);
    c = padded;
  }
  const int64_t cg = c / groups, mg = m / groups;
  const bool bf16 = takes_bf16_operands(ctx, x, w, groups);
  const int64_t group = bf16                                                                         ? kBf16Pair
                        : int8 && g.is_constant(w) && ctx.dots.int8_group > 1 && cg % ctx.dots.int8_group == 0 ? ctx.dots.int8_group
                                                                                                     : 1;
  if (bf16) x = bf16_operand(g, x);
  WindowSpec window = spec;
  if (ctx.padded_grouped_convs && copies_input_channels_last(x, groups, int8 || bf16, spec)) {
    // The zero border written once into a channels-last copy of x: the conv then runs
    // unpadded, every tile without bounds tests (the border tiles of a grouped conv's
    // small per-group reductions otherwise cost as much as the inside).
    // vpmaddwd's pairs (DotLayout::int8_any_bytes): the copy stores the bytes widened to
    // int16, each pair then a 32-bit broadcast (lowering.cc stored_as_int16's reason;
    // Smart Turn's 384 -> 384 stride-2 stem: 2.74 -> 2.63 ms, medians of 7 profiles).
    if (int8 && group > 1 && ctx.dots.int8_any_bytes) x = g.cast(x, DType::I16);
    x = read_through_padded_copy(g, x, window, fill);
  } else if (int8 && group > 1 && ctx.dots.int8_any_bytes) {
    // Likewise a channels-last int16 copy of the input the conv reads in place (its
    // producer's channels-last bytes; NCHW-ordered int16 would split the channel pairs):
    // QDQ ResNet-18 31.9 -> 30.0 ms (edgert-bench medians, 1 thread), its copies 0.25 ms.
    WindowSpec unpadded = window;
    unpadded.clear_padding();
    x = channels_last_padded_spatial(g, g.cast(x, DType::I16), unpadded, 0.0);
  }
  Node* win = windows(g, x, window, fill);  // (N, C, O..., K...)
  Shape out_spatial(win->shape.begin() + 2, win->shape.begin() + 2 + k);
  // The channels of a group as (C/G/group, group): one dim (group 1) or two.
  Shape channel_dims{cg / group};
  if (group > 1) channel_dims.push_back(group);
  const int64_t cd = int64_t(channel_dims.size());

  // Product laid out as (N, G, M/G, O..., C/G, K...) so the reduction is over the trailing,
  // contiguous dims of each output element.
  Shape xs{n, groups};
  xs.insert(xs.end(), channel_dims.begin(), channel_dims.end());
  xs.insert(xs.end(), win->shape.begin() + 2, win->shape.end());
  std::vector<int64_t> perm{0, 1};
  for (size_t i = 0; i < k; ++i) perm.push_back(2 + cd + int64_t(i));      // O...
  for (int64_t i = 0; i < cd; ++i) perm.push_back(2 + i);                    // C/G
  for (size_t i = 0; i < k; ++i) perm.push_back(2 + cd + int64_t(k + i));  // K...
  Node* xv = g.permute(g.reshape(win, xs), perm);
  Shape xv_shape = xv->shape;
  xv_shape.insert(xv_shape.begin() + 2, 1);
  xv = g.reshape(xv, xv_shape);

  Shape wv_shape{1, groups, mg};
  wv_shape.insert(wv_shape.end(), k, 1);
  wv_shape.insert(wv_shape.end(), channel_dims.begin(), channel_dims.end());
  wv_shape.insert(wv_shape.end(), kernel.begin(), kernel.end());
  // An 8-bit depthwise conv (one input channel per output channel): panels of the target's
  // depthwise width (HVX: 128 channels, one vector of bytes per tap).
  const bool depthwise = int8 && groups > 1 && cg == 1 && mg == 1 && g.is_constant(w);
  Node* wv = bf16        ? packed_conv_weight_groups(g, g.cast(w, DType::BF16), group, 16)
             : group > 1 ? packed_conv_weight_groups(g, w, group, ctx.dots.int8_columns)
             : depthwise ? packed_conv_weight(g, w, ctx.dots.int8_depthwise_columns)
                         : packed_conv_weight(g, w);
  wv = g.reshape(bf16 ? g.cast(wv, DType::F32) : wv, wv_shape);
  if (int8) {
    // Broadcast first, widen after: a repeating view of a cast would make the scheduler
    // store the widened copy (Expand of a computed value); of the 8-bit buffers it does not.
    Shape both = broadcast_shapes(xv->shape, wv->shape);
    // A signed dot (DotLayout::int8_signed) reads uint8 x as x - 128, the padding's fill too
    // (it is read through the same window): the caller adds 128 * sum(w) back.
    const bool shift = x_shift && group > 1 && ctx.dots.int8_signed && x->dtype == DType::U8 && w->dtype == DType::I8;
    if (shift) *x_shift = 128;
    xv = int8_operand_i32(g, g.broadcast_to(xv, both), shift);
    wv = g.cast(g.broadcast_to(wv, both), DType::I32);
  }

  Node* prod = g.binary(Op::Mul, xv, wv);
  int64_t rank = int64_t(prod->shape.size());
  Node* sum = g.reduce(Op::ReduceSum, prod, iota_ints(rank - int64_t(k) - cd, rank));
  Shape out{n, m};
  out.insert(out.end(), out_spatial.begin(), out_spatial.end());
  return add_conv_bias(ctx, g.reshape(sum, out), bias);
}

}  // namespace

namespace {

// The outputs [begin, end) of one spatial dim whose window reads tap j inside the input
// (0 <= o * stride + j * dilation - pad_lo < size): an interval, empty where the tap only
// ever reads padding.
struct TapOutputs {
  int64_t begin, end;
  bool empty() const { return begin >= end; }
};

std::vector<TapOutputs> tap_outputs(const WindowSpec& spec, size_t i, int64_t size, int64_t outputs) {
  auto floor_div = [](int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); };
  std::vector<TapOutputs> taps;
  for (int64_t j = 0; j < spec.kernel[i]; ++j) {
    const int64_t offset = j * spec.dilation[i] - spec.pad_lo[i], s = spec.stride[i];
    taps.push_back({std::max<int64_t>(0, -floor_div(offset, s)),  // ceil(-offset / s)
                    std::min(outputs, floor_div(size - 1 - offset, s) + 1)});
  }
  return taps;
}

// Drops the kernel taps that read only padding (a dilated conv on a map smaller than its
// dilation: DeepLabV3's ASPP at rate 36 on a 16x16 map computes 9 taps per output of which 8
// read zeros): per spatial dim the taps kept are the first to the last that reads inside for
// some output; w loses the others, and the padding (or a crop of x, where the first kept tap
// starts inside the input) is what keeps every output where it was. A conv left with one
// tap per dim is a 1x1 conv and takes that path. Exact for any fill: a dropped tap only
// ever multiplied the fill (integer_conv subtracts fill * sum(w) over the weights kept).
// False (nothing changed) where no tap is dropped or a dim has no tap reading inside.
bool drop_padding_taps(Graph& g, Node*& x, Node*& w, WindowSpec& spec) {
  const size_t k = spec.kernel.size();
  const Shape& xs = x->shape;
  std::vector<int64_t> w_begin(w->shape.size(), 0), w_end = w->shape;
  std::vector<int64_t> crop_begin(xs.size(), 0), crop_end = xs;
  WindowSpec kept = spec;
  bool any = false;
  for (size_t i = 0; i < k; ++i) {
    const int64_t size = xs[2 + i], d = spec.dilation[i], s = spec.stride[i];
    const int64_t outputs = spec.outputs(i, size);
    std::vector<TapOutputs> taps = tap_outputs(spec, i, size, outputs);
    int64_t first = 0, last = spec.kernel[i] - 1;
    while (first <= last && taps[size_t(first)].empty()) ++first;
    while (last >= first && taps[size_t(last)].empty()) --last;
    if (first > last) return false;  // every output of this dim reads only padding
    if (first == 0 && last == spec.kernel[i] - 1) continue;
    any = true;
    w_begin[2 + i] = first;
    w_end[2 + i] = last + 1;
    kept.kernel[i] = last - first + 1;
    if (kept.kernel[i] == 1) kept.dilation[i] = 1;
    // The kept window starts first * d later: the padding before it shrinks by that much,
    // and where it goes negative the input loses that many leading elements (never read).
    int64_t lo = spec.pad_lo[i] - first * d;
    int64_t hi = (outputs - 1) * s + kept.span(i) - size - lo;  // exactly `outputs` windows
    crop_begin[2 + i] = std::max<int64_t>(0, -lo);
    crop_end[2 + i] = size - std::max<int64_t>(0, -hi);
    kept.pad_lo[i] = std::max<int64_t>(0, lo);
    kept.pad_hi[i] = std::max<int64_t>(0, hi);
    kept.extra_hi[i] = 0;
  }
  if (!any) return false;
  x = g.shrink(x, crop_begin, crop_end);
  w = g.shrink(w, w_begin, w_end);
  spec = kept;
  return true;
}

// A padded conv most of whose products read padding even with the all-padding taps gone
// (DeepLabV3's ASPP at rate 12 on a 16x16 map: a quarter of its 9 taps x 256 outputs read
// the input) as a sum of unpadded convs, one per region of the output where the set of taps
// that read inside is the same (per dim, the outputs between the ends of the taps'
// intervals; the set is a run of taps there). Each region's conv reads only those taps, from
// a crop of x, with no bounds tests; its result is padded with zeros to the output's shape
// (how Concat is built too). A dilated conv takes it too wherever some product reads
// padding: its border outputs are a wide band (dilation 4 on FCN-ResNet50's 28x28 maps: half
// the outputs), each a bounds-tested tile (FCN-ResNet50 took ~1.09x the CPU time without
// it). Null where it does not pay: an undilated conv with more than half of its products
// reading the input (the border tiles of llvm_emit.cc serve it), or more regions than
// kMaxRegions.
//
// A 3-D conv splits only its dims whose taps read padding in a third or more of their
// products (r3d_18's layer3: 2 frames, 3 depth taps, 2 of 6 (output, tap) pairs per depth
// read the zero planes), as the depth-only split; the others keep their padding (its
// regions' convs then run over padded copies). 2-D convs split all dims or none.
Node* conv_by_regions(OpContext& ctx, Node* x, Node* w, int64_t groups, const WindowSpec& spec) {
  constexpr double kMaxInsideShare = 0.5;
  constexpr double kMaxInsideShareOfSplitDim = 2.0 / 3.0;  // a 3-D conv's dims split alone
  constexpr size_t kMaxRegions = 9;  // 3 per dim of a 3x3 conv: the taps' interval ends
                                      // where the map is about the dilation's size
  const size_t k = spec.kernel.size();
  std::vector<std::vector<std::pair<int64_t, int64_t>>> intervals(k);  // per dim: [begin, end)
  std::vector<std::vector<TapOutputs>> taps(k);
  std::vector<int64_t> outputs(k);
  std::vector<double> dim_inside_share(k);
  double inside_share = 1.0;
  size_t regions = 1;
  for (size_t i = 0; i < k; ++i) {
    const int64_t size = x->shape[2 + i];
    outputs[i] = spec.outputs(i, size);
    taps[i] = tap_outputs(spec, i, size, outputs[i]);
    std::set<int64_t> cuts{0, outputs[i]};
    int64_t inside = 0;
    for (const TapOutputs& t : taps[i])
      if (!t.empty()) cuts.insert(t.begin), cuts.insert(t.end), inside += t.end - t.begin;
    dim_inside_share[i] = double(inside) / double(outputs[i] * spec.kernel[i]);
    inside_share *= dim_inside_share[i];
    for (auto it = cuts.begin(); std::next(it) != cuts.end(); ++it) intervals[i].push_back({*it, *std::next(it)});
    regions *= intervals[i].size();
  }
  const bool dilated = std::any_of(spec.dilation.begin(), spec.dilation.end(), [](int64_t d) { return d > 1; });
  // The 3-D split of the dims that read padding most: the others one interval, padding kept.
  std::vector<bool> split(k, true);
  bool some_dims_split = false;
  if (k == 3 && !dilated && regions > kMaxRegions) {
    size_t split_regions = 1;
    for (size_t i = 0; i < k; ++i) {
      split[i] = dim_inside_share[i] <= kMaxInsideShareOfSplitDim;
      if (split[i]) split_regions *= intervals[i].size();
    }
    some_dims_split = split_regions > 1 && split_regions <= kMaxRegions;
    if (!some_dims_split) return nullptr;
    for (size_t i = 0; i < k; ++i)
      if (!split[i]) intervals[i] = {{0, outputs[i]}};
    regions = split_regions;
  }
  // A dilated depthwise conv reading the input in most of its products runs over the padded
  // copy instead, where conv_core makes one: one kernel, no bounds tests, one pass to copy x.
  // So does a dilated conv of channels-first data (a dilated Conv1d): each region would
  // make a copy of its own.
  const bool padded_copy = (depthwise_dilated(x, groups, spec) || reads_channels_first(x)) &&
                           ctx.padded_grouped_convs &&
                           copies_input_channels_last(x, groups, takes_bf16_operands(ctx, x, w, groups), spec);
  if (!some_dims_split &&
      (inside_share >= 1.0 || (inside_share > kMaxInsideShare && (!dilated || padded_copy)) || regions > kMaxRegions))
    return nullptr;
  Graph& g = ctx.g;
  Shape out{x->shape[0], w->shape[0]};
  out.insert(out.end(), outputs.begin(), outputs.end());
  Node* sum = nullptr;
  std::vector<size_t> at(k, 0);  // the region: one interval per dim
  for (size_t r = 0; r < regions; ++r) {
    std::vector<int64_t> x_begin(x->shape.size(), 0), x_end = x->shape, w_begin(w->shape.size(), 0), w_end = w->shape;
    std::vector<int64_t> lo(out.size(), 0), hi(out.size(), 0);
    WindowSpec region = spec;
    bool reads_input = true;
    for (size_t i = 0; i < k; ++i) {
      if (!split[i]) continue;  // all taps, the node's padding
      const auto [begin, end] = intervals[i][at[i]];
      int64_t first = -1, last = -1;  // the taps reading inside over the whole interval
      for (int64_t j = 0; j < spec.kernel[i]; ++j)
        if (taps[i][size_t(j)].begin <= begin && end <= taps[i][size_t(j)].end) {
          if (first < 0) first = j;
          last = j;
        }
      if (first < 0) {
        reads_input = false;  // only padding here: the outputs stay zero
        break;
      }
      const int64_t s = spec.stride[i], d = spec.dilation[i];
      x_begin[2 + i] = begin * s + first * d - spec.pad_lo[i];
      x_end[2 + i] = (end - 1) * s + last * d - spec.pad_lo[i] + 1;
      w_begin[2 + i] = first;
      w_end[2 + i] = last + 1;
      region.kernel[i] = last - first + 1;
      if (region.kernel[i] == 1) region.dilation[i] = 1;
      region.pad_lo[i] = region.pad_hi[i] = region.extra_hi[i] = 0;
      lo[2 + i] = begin;
      hi[2 + i] = outputs[i] - end;
    }
    if (reads_input) {
      Node* y = conv_core(ctx, g.shrink(x, x_begin, x_end), g.shrink(w, w_begin, w_end), nullptr, groups, region);
      Node* part = g.pad(y, lo, hi, 0.0);
      sum = sum ? g.binary(Op::Add, sum, part) : part;
    }
    for (size_t i = k; i-- > 0;)
      if (++at[i] < intervals[i].size()) break;
      else at[i] = 0;
  }
  return sum ? sum : g.constant(0.0, x->dtype, out);
}

}  // namespace

Node* conv_node(OpContext& ctx, Node* x, Node* w, Node* bias, double pad_value, int64_t* x_shift, Node** kept_weight) {
  const Shape& ws = w->shape;
  if (ws.size() < 3 || x->shape.size() != ws.size()) ctx.fail("weight " + shape_str(ws) + " does not fit input " + shape_str(x->shape));
  std::vector<int64_t> kernel(ws.begin() + 2, ws.end());
  if (ctx.has_attr("kernel_shape") && ctx.attr_ints("kernel_shape") != kernel)
    ctx.fail("kernel_shape does not match the weight " + shape_str(ws));
  WindowSpec spec = window_spec(ctx, x->shape, kernel, false);
  const int64_t groups = ctx.attr_int("group", 1);
  if (groups >= 1 && x->shape[1] % groups == 0 && ws[0] % groups == 0 && ws[1] == x->shape[1] / groups) {
    drop_padding_taps(ctx.g, x, w, spec);
    // The regions read no padding at all, so only where the padding reads zero (a float
    // conv; integer_conv's fill is its zero point).
    if (pad_value == 0.0 && !x_shift && is_float(x->dtype) && x->dtype == w->dtype) {
      if (Node* y = conv_with_lane_padded_groups(ctx, x, w, bias, groups, spec, 0.0, true)) {
        if (kept_weight) *kept_weight = w;
        return y;
      }
      if (Node* y = conv_by_regions(ctx, x, w, groups, spec)) {
        if (kept_weight) *kept_weight = w;
        return add_conv_bias(ctx, y, bias);
      }
    }
  }
  if (kept_weight) *kept_weight = w;
  return conv_core(ctx, x, w, bias, groups, spec, pad_value, x_shift);
}

namespace {

Outs lower_conv(OpContext& ctx) { return {conv_node(ctx, ctx.input(0), ctx.input(1), ctx.optional_input(2))}; }

// Pads (lo/hi >= 0) or crops (< 0) the spatial dims (2...) of x.
Node* pad_or_crop(Graph& g, Node* x, const std::vector<int64_t>& lo, const std::vector<int64_t>& hi) {
  size_t r = x->shape.size();
  std::vector<int64_t> begin(r, 0), end = x->shape, plo(r, 0), phi(r, 0);
  for (size_t i = 0; i < lo.size(); ++i) {
    begin[2 + i] = std::max<int64_t>(0, -lo[i]);
    end[2 + i] -= std::max<int64_t>(0, -hi[i]);
    plo[2 + i] = std::max<int64_t>(0, lo[i]);
    phi[2 + i] = std::max<int64_t>(0, hi[i]);
  }
  return g.pad(g.shrink(x, begin, end), plo, phi, 0.0);
}

// ConvTranspose as convolutions of x (one per output phase of the stride) with sub-kernels
// of the weight whose in/out channel dims are swapped per group; no multiply by an
// inserted zero.
Outs lower_conv_transpose(OpContext& ctx) {
  Graph& g = ctx.g;
  Node *x = ctx.input(0), *w = ctx.input(1), *bias = ctx.optional_input(2);
  const Shape& ws = w->shape;
  if (ws.size() < 3 || x->shape.size() != ws.size()) ctx.fail("weight " + shape_str(ws) + " does not fit input " + shape_str(x->shape));
  size_t k = ws.size() - 2;
  int64_t c = x->shape[1], groups = ctx.attr_int("group", 1);
  if (groups < 1 || c % groups || ws[0] != c) ctx.fail("input channels " + std::to_string(c) + ", weight " + shape_str(ws) + " and group " + std::to_string(groups) + " do not fit");
  std::vector<int64_t> kernel(ws.begin() + 2, ws.end());
  if (ctx.has_attr("kernel_shape") && ctx.attr_ints("kernel_shape") != kernel)
    ctx.fail("kernel_shape does not match the weight " + shape_str(ws));
  auto per_dim = [&](const char* name, int64_t def) {
    std::vector<int64_t> v = ctx.attr_ints(name, std::vector<int64_t>(k, def));
    if (v.size() != k) ctx.fail(std::string(name) + " must have one entry per spatial dim");
    return v;
  };
  std::vector<int64_t> stride = per_dim("strides", 1), dilation = per_dim("dilations", 1);
  std::vector<int64_t> out_pad = per_dim("output_padding", 0);
  std::vector<int64_t> pads = ctx.attr_ints("pads", std::vector<int64_t>(2 * k, 0));
  if (pads.size() != 2 * k) ctx.fail("pads must have two entries per spatial dim");
  std::string auto_pad = ctx.attr_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER" && auto_pad != "VALID")
    ctx.fail("unknown auto_pad '" + auto_pad + "'");
  std::vector<int64_t> output_shape = ctx.attr_ints("output_shape");
  if (!output_shape.empty() && output_shape.size() != k) {
    if (output_shape.size() == k + 2) output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
    else ctx.fail("output_shape must have one entry per spatial dim");
  }
  bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  std::vector<int64_t> lo(k), hi(k), out(k);
  for (size_t i = 0; i < k; ++i) {
    int64_t in = x->shape[2 + i], span = dilation[i] * (kernel[i] - 1) + 1;
    if (stride[i] < 1 || dilation[i] < 1) ctx.fail("strides and dilations must be positive");
    int64_t full = stride[i] * (in - 1) + out_pad[i] + span;
    if (!output_shape.empty() || same) {  // padding derived from the output size
      int64_t target = output_shape.empty() ? in * stride[i] : output_shape[i];
      int64_t total = full - target;
      int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);  // floor division
      if (auto_pad == "SAME_UPPER") lo[i] = half, hi[i] = total - half;
      else lo[i] = total - half, hi[i] = half;
    } else if (auto_pad == "VALID") {
      lo[i] = hi[i] = 0;
    } else {
      lo[i] = pads[i], hi[i] = pads[k + i];
    }
    out[i] = full - lo[i] - hi[i];
    if (out[i] < 1) ctx.fail("output size " + std::to_string(out[i]) + " in spatial dim " + std::to_string(i));
  }
  // Weight (C, M/G, K...) -> (G, C/G, M/G, K...) -> (G, M/G, C/G, K...) -> (M, C/G, K...).
  int64_t cg = c / groups, mg = ws[1], m = groups * mg;
  Shape wg{groups, cg, mg};
  wg.insert(wg.end(), kernel.begin(), kernel.end());
  std::vector<int64_t> perm{0, 2, 1};
  for (size_t i = 0; i < k; ++i) perm.push_back(3 + int64_t(i));
  Shape wm{m, cg};
  wm.insert(wm.end(), kernel.begin(), kernel.end());
  Node* wt = g.reshape(g.permute(g.reshape(w, wg), perm), wm);

  // Phase decomposition: output o = stride*q + r reads x[q + e] for the taps j with
  // (r + pad_begin - j*dilation) divisible by the stride, e = that quotient. Per phase that
  // is a stride-1 convolution with a sub-kernel (the taps in order of e, an arithmetic
  // progression); the phases are interleaved afterwards. Only useful products are computed.
  struct Phase {
    std::vector<int64_t> taps;  // kernel positions, in increasing e
    int64_t e_min = 0, step = 1, count = 0;  // count: outputs of this phase
  };
  std::vector<std::vector<Phase>> phases(k);
  std::vector<int64_t> qmax(k);
  for (size_t i = 0; i < k; ++i) {
    int64_t s = stride[i], d = dilation[i];
    qmax[i] = (out[i] + s - 1) / s;
    for (int64_t r = 0; r < s; ++r) {
      Phase ph;
      ph.count = r < out[i] ? (out[i] - r + s - 1) / s : 0;
      std::vector<int64_t> es;
      for (int64_t j = kernel[i] - 1; j >= 0; --j) {  // decreasing j = increasing e
        int64_t t = r + lo[i] - j * d, rem = ((t % s) + s) % s;
        if (rem) continue;
        ph.taps.push_back(j);
        es.push_back((t - rem) / s);
      }
      if (!es.empty()) ph.e_min = es[0];
      if (es.size() > 1) ph.step = es[1] - es[0];
      for (size_t t = 1; t < es.size(); ++t)
        if (es[t] - es[t - 1] != ph.step) ctx.fail("internal: ConvTranspose phase taps are not evenly spaced");
      phases[i].push_back(ph);
    }
  }
  // The interleaved outputs (N, M, Qmax_i * s_i...) cropped to the output size, plus the bias.
  auto crop_and_bias = [&](Node* y) {
    Shape want{x->shape[0], m};
    want.insert(want.end(), out.begin(), out.end());
    y = g.shrink(y, std::vector<int64_t>(want.size(), 0), want);
    if (bias) {
      if (bias->shape != Shape{m}) ctx.fail("bias " + shape_str(bias->shape) + " should be [" + std::to_string(m) + "]");
      Shape bs{m};
      bs.insert(bs.end(), k, 1);
      y = g.binary(Op::Add, y, g.reshape(bias, bs));
    }
    return y;
  };
  // The conv of x with sub-weights w of phase rs[i] along each dim (unit stride, the phase's tap
  // spacing as dilation, x padded or cropped to the phase's window): (N, M, count_i...).
  auto phase_conv = [&](Node* w, const std::vector<int64_t>& rs) {
    WindowSpec spec;
    std::vector<int64_t> plo(k), phi(k);
    for (size_t i = 0; i < k; ++i) {
      const Phase& ph = phases[i][size_t(rs[i])];
      int64_t taps = int64_t(ph.taps.size());
      spec.kernel.push_back(taps);
      spec.stride.push_back(1);
      spec.dilation.push_back(ph.step);
      plo[i] = -ph.e_min;
      phi[i] = ph.count + (taps - 1) * ph.step - x->shape[2 + i] - plo[i];
    }
    spec.pad_lo.assign(k, 0);
    spec.pad_hi.assign(k, 0);
    spec.extra_hi.assign(k, 0);
    return conv_core(ctx, pad_or_crop(g, x, plo, phi), w, nullptr, groups, spec);
  };
  // Uniform phases (every phase of a dim has the same taps count, offset and spacing, and as
  // many outputs: e.g. kernel == stride, the 2x2 stride-2 upsampling of detector heads): one
  // conv computes all phases as extra output channels, and a permute interleaves them. The
  // per-phase convs below would leave the interleave to a kernel that reads every phase's
  // buffer through masked div/mod loads (1 GB/s, most of such a head's time).
  bool uniform = true;
  for (size_t i = 0; i < k && uniform; ++i)
    for (const Phase& ph : phases[i])
      uniform = uniform && !ph.taps.empty() && ph.taps.size() == phases[i][0].taps.size() && ph.e_min == phases[i][0].e_min &&
                ph.step == phases[i][0].step && ph.count == phases[i][0].count;
  // The phases' outputs as (N, G, s_0..s_k-1, M/G, Q_0..Q_k-1) (phases_outside_groups: (N,
  // s_0..s_k-1, G, M/G, Q...)) -> (N, G, M/G, Q_0, s_0, Q_1, s_1, ...) -> (N, M, Q_i*s_i...),
  // cropped, plus the bias: one permute.
  auto interleave = [&](Node* y, bool phases_outside_groups) {
    Shape split{x->shape[0]};
    if (!phases_outside_groups) split.push_back(groups);
    split.insert(split.end(), stride.begin(), stride.end());
    if (phases_outside_groups) split.push_back(groups);
    split.push_back(mg);
    for (size_t i = 0; i < k; ++i) split.push_back(phases[i][0].count);
    const int64_t group_dim = phases_outside_groups ? int64_t(1 + k) : 1, phase_dim = phases_outside_groups ? 1 : 2;
    std::vector<int64_t> perm{0, group_dim, int64_t(2 + k)};
    for (size_t i = 0; i < k; ++i) perm.insert(perm.end(), {int64_t(3 + k + i), phase_dim + int64_t(i)});
    Shape full{x->shape[0], m};
    for (size_t i = 0; i < k; ++i) full.push_back(phases[i][0].count * stride[i]);
    return crop_and_bias(g.reshape(g.permute(g.reshape(y, split), perm), full));
  };
  // The same from the phases' outputs stored channels-last, (N, Q..., G*P*M/G) realized:
  // (N, Q..., G, s..., M/G) -> (N, G, M/G, Q_0, s_0, Q_1, s_1, ...).
  auto interleave_channels_last = [&](Node* y) {
    std::vector<int64_t> to_last{0};
    for (size_t i = 0; i < k; ++i) to_last.push_back(int64_t(2 + i));
    to_last.push_back(1);
    Node* nhwc = g.permute(y, to_last);
    nhwc->realize = true;
    Shape split{x->shape[0]};
    for (size_t i = 0; i < k; ++i) split.push_back(phases[i][0].count);
    split.push_back(groups);
    split.insert(split.end(), stride.begin(), stride.end());
    split.push_back(mg);
    std::vector<int64_t> perm{0, int64_t(1 + k), int64_t(2 + 2 * k)};
    for (size_t i = 0; i < k; ++i) perm.insert(perm.end(), {int64_t(1 + i), int64_t(2 + k + i)});
    Shape full{x->shape[0], m};
    for (size_t i = 0; i < k; ++i) full.push_back(phases[i][0].count * stride[i]);
    return crop_and_bias(g.reshape(g.permute(g.reshape(nhwc, split), perm), full));
  };
  if (uniform) {
    // Sub-weights (M, C/G, taps...) of every phase (dim 0's phase slowest), stacked per group:
    // (G, P, M/G, C/G, taps...) -> (G*P*M/G, C/G, taps...), the output channels group-major.
    int64_t nphase = 1;
    for (size_t i = 0; i < k; ++i) nphase *= stride[i];
    std::vector<Node*> subs;
    std::vector<int64_t> rs(k, 0);
    for (int64_t p = 0; p < nphase; ++p) {
      Node* sub = wt;
      for (size_t i = 0; i < k; ++i) sub = gather_positions(g, sub, int64_t(2 + i), phases[i][size_t(rs[i])].taps);
      Shape one{groups, 1, mg, cg};
      one.insert(one.end(), sub->shape.begin() + 2, sub->shape.end());
      subs.push_back(g.reshape(sub, one));
      for (size_t i = k; i-- > 0;)
        if (++rs[i] < stride[i]) break;
        else rs[i] = 0;
    }
    Node* stacked = concat(g, subs, 1);
    Shape ws2{groups * nphase * mg, cg};
    ws2.insert(ws2.end(), stacked->shape.begin() + 4, stacked->shape.end());
    // Phase 0's window: all alike. Phases of one tap each (kernel == stride) read the
    // channels-last copy too now that their result is stored channels-last (0.91-0.97x the
    // time reading the NCHW input, 256 -> 128 channels on 32x32 and 64 -> 64 on 80x80).
    Node* y = phase_conv(g.reshape(stacked, ws2), std::vector<int64_t>(k, 0));
    // The conv's result is stored channels-last, (N, Q..., G*P*M/G), as its kernel computes
    // it (vectors of output channels); the interleave then transposes once. Stored
    // channels-first (the scheduler realizes the conv's reduce in its own shape, which no
    // channels-last layout takes), every vector of output channels was scattered to stores
    // Q_0*Q_1*4 bytes apart: 4 KB on 32x32, aliasing each other in the L1 cache, 16-28
    // GFLOP/s depending on where the buffers lay (256 -> 128 channels, 2x2 stride 2,
    // tests/bench/op_cliffs.py). Dense ones only: a depthwise one's kernel runs along the
    // pixels, and stored channels-last it took 15x the time (64 channels on 80x80).
    if (y->dtype == DType::F32 && groups == 1) return {interleave_channels_last(y)};
    return {interleave(y, false)};
  }
  // Other phases (a 4x4 or 3x3 kernel at stride 2): one conv per phase, each result padded
  // with zeros to Qmax outputs per dim (phases that read no tap are all zeros), stacked in a
  // buffer of their own (N, P, M, Qmax...) and interleaved by one permute. Summed as
  // zero-padded interleaved views instead, one kernel read every phase's buffer through
  // masked div/mod loads per output (tests/bench/op_cliffs.py: 3x3 stride 2, 64 -> 32
  // channels on 80x80: that kernel took about half the time; 3x3 stride 2 without padding,
  // whose phases differ in output count, 2x onnxruntime: issue 22).
  std::vector<Node*> ys;
  std::vector<int64_t> rs(k, 0);
  Shape one{x->shape[0], 1, m};
  one.insert(one.end(), qmax.begin(), qmax.end());
  for (bool more = true; more;) {
    bool empty = false;
    for (size_t i = 0; i < k; ++i) empty = empty || phases[i][size_t(rs[i])].taps.empty() || phases[i][size_t(rs[i])].count == 0;
    if (empty) {
      ys.push_back(g.constant(0, x->dtype, one));
    } else {
      Node* sub = wt;
      for (size_t i = 0; i < k; ++i) sub = gather_positions(g, sub, int64_t(2 + i), phases[i][size_t(rs[i])].taps);
      Node* y = phase_conv(sub, rs);  // (N, M, count_i...)
      std::vector<int64_t> plo(2 + k, 0), phi(2 + k, 0);
      for (size_t i = 0; i < k; ++i) phi[2 + i] = qmax[i] - y->shape[2 + i];
      ys.push_back(g.reshape(g.pad(y, plo, phi, 0.0), one));
    }
    more = false;
    for (size_t i = k; i-- > 0 && !more;)
      if (++rs[i] < stride[i]) more = true;
      else rs[i] = 0;
  }
  Node* stacked = concat(g, ys, 1);
  stacked->realize = true;
  return {interleave(stacked, true)};
}

std::vector<int64_t> pool_kernel(const OpContext& ctx) {
  std::vector<int64_t> kernel = ctx.attr_ints("kernel_shape");
  if (kernel.empty()) ctx.fail("kernel_shape is required");
  return kernel;
}

// The flat input index (over the spatial dims, row-major) each window tap reads, or -1 in
// the padding: (O..., K...).
std::vector<int64_t> tap_positions(const WindowSpec& w, const Shape& in, const Shape& out) {
  size_t k = w.kernel.size();
  Shape taps = out;
  taps.insert(taps.end(), w.kernel.begin(), w.kernel.end());
  std::vector<int64_t> pos, idx(2 * k, 0);
  for (int64_t e = 0; e < numel(taps); ++e) {
    int64_t flat = 0;
    bool inside = true;
    for (size_t i = 0; i < k; ++i) {
      int64_t p = idx[i] * w.stride[i] + idx[k + i] * w.dilation[i] - w.pad_lo[i];
      inside = inside && p >= 0 && p < in[i];
      flat = flat * in[i] + p;
    }
    pos.push_back(inside ? flat : -1);
    for (size_t d = 2 * k; d-- > 0;)
      if (++idx[d] < taps[d]) break;
      else idx[d] = 0;
  }
  return pos;
}

// The windows of a padded pooling over channels-first data (the model's NCHW input) on the
// CPU targets: over a padded copy (a kernel of its own, rows loaded whole), so the pooling
// kernel runs without bounds tests. Its vectors run along the rows, where each tap's load
// was bounds-tested and masked wherever a row's padding sat (AveragePool 3x3 stride 1 pad 1
// over 96 x 112 x 112: 4 GFLOP/s, 2.4x onnxruntime; op_cliffs.py --random-ops). Intermediates
// are channels-last, their vectors along the channels: the border tests are per pixel there.
// The padded copy itself: x and spec replaced by the copy and a spec without padding.
void pad_pool_input(OpContext& ctx, Node*& x, WindowSpec& spec, double fill) {
  if (ctx.padded_grouped_convs && spec.padded() && x->shape.size() == 4 && reads_channels_first(x)) {
    std::vector<int64_t> lo(4, 0), hi(4, 0);
    for (size_t i = 0; i < 2; ++i) lo[2 + i] = spec.pad_lo[i], hi[2 + i] = spec.pad_hi[i] + spec.extra_hi[i];
    x = ctx.g.pad(x, lo, hi, fill);
    x->realize = true;
    spec.clear_padding();
  }
}
Node* pool_windows(OpContext& ctx, Node* x, WindowSpec spec, double fill) {
  pad_pool_input(ctx, x, spec, fill);
  return windows(ctx.g, x, spec, fill);
}

// A 2-D pooling's max or sum as that along the columns' windows (a buffer of its own: (N, C,
// H_out, W)) then along the rows': kh + kw loads per output instead of kh * kw. 5x5 stride 2
// over 256 x 80 x 80 took 1.86x onnxruntime's time as one 25-tap max (op_cliffs.py
// --random-ops 40 --seed 31), a 5x5 stride 2 average over 256 x 40 x 40 1.9x (seed 35).
// The columns first: over the model's NCHW input they are the pass whose vectors (along the
// rows) load contiguously at any stride; the rows' stride-2 loads then read a buffer
// stride_0 times smaller (rows first: 1.55 ms of 1.8, columns first 0.33 of 0.63).
// Over an intermediate on the CPU targets (stored channels-last: schedule.cc
// choose_channels_last) the buffer is channels-last too, (N, H_out, W, C). Stored (N, C,
// H_out, W), both passes transposed, every load or store gathered C floats apart: ResNet's
// 3x3 stride-2 MaxPool after its stem (64 x 112 x 112) took 1.8 ms of ResNet-18's 28.
bool separable_pool(const WindowSpec& spec) { return spec.kernel.size() == 2 && spec.kernel[0] >= 3 && spec.kernel[1] >= 3; }
Node* separable_pool_2d(OpContext& ctx, Op op, Node* x, WindowSpec spec, double fill) {
  const bool channels_last_buffer = ctx.padded_grouped_convs && !reads_channels_first(x);
  pad_pool_input(ctx, x, spec, fill);  // once, for both passes
  auto along = [&](size_t d) {
    WindowSpec one = spec;
    size_t other = 1 - d;
    one.kernel[other] = one.stride[other] = one.dilation[other] = 1;
    one.pad_lo[other] = one.pad_hi[other] = one.extra_hi[other] = 0;
    return one;
  };
  Node* cols = reduce_taps(ctx.g, op, windows(ctx.g, x, along(0), fill), 2);
  if (channels_last_buffer) {
    WindowSpec unpadded = spec;
    unpadded.clear_padding();
    cols = channels_last_padded_spatial(ctx.g, cols, unpadded, fill);
  } else {
    cols->realize = true;
  }
  return reduce_taps(ctx.g, op, windows(ctx.g, cols, along(1), fill), 2);
}

Outs lower_max_pool(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  if (x->shape.size() < 3) ctx.fail("input " + shape_str(x->shape) + " has no spatial dims");
  WindowSpec spec = window_spec(ctx, x->shape, pool_kernel(ctx), ctx.attr_int("ceil_mode", 0));
  size_t k = spec.kernel.size();
  // Padding never wins the max.
  if (!ctx.output_used(1) && separable_pool(spec))  // the indices output needs every tap
    return {separable_pool_2d(ctx, Op::ReduceMax, x, spec, lowest_value(x->dtype))};
  Node* win = ctx.output_used(1) ? windows(g, x, spec, lowest_value(x->dtype))
                                 : pool_windows(ctx, x, spec, lowest_value(x->dtype));
  Node* y = reduce_taps(g, Op::ReduceMax, win, k);
  if (!ctx.output_used(1)) return {y};
  // Indices: the first tap (in row-major order) holding the maximum, as a flat index into
  // x (N, C, spatial...) — column-major over the spatial dims with storage_order 1.
  int64_t order = ctx.attr_int("storage_order", 0);
  if (order != 0 && order != 1) ctx.fail("storage_order must be 0 or 1");
  Shape in_spatial(x->shape.begin() + 2, x->shape.end()), out_spatial(y->shape.begin() + 2, y->shape.end());
  std::vector<int64_t> pos = tap_positions(spec, in_spatial, out_spatial);
  int64_t plane = numel(in_spatial);
  for (int64_t& p : pos)
    if (p < 0) p = plane;  // never the minimum of a window with an inside tap
  Shape taps = out_spatial;
  taps.insert(taps.end(), spec.kernel.begin(), spec.kernel.end());
  Node* positions = g.weight(HostTensor::from_ints(DType::I64, taps, pos));
  Shape ys = y->shape;
  ys.insert(ys.end(), k, 1);
  Node* hit = g.binary(Op::CmpEq, win, g.reshape(y, ys));
  int64_t rank = int64_t(win->shape.size());
  Node* first = reduce_min(g, g.where(hit, positions, g.constant(double(plane), DType::I64)), iota_ints(rank - int64_t(k), rank));
  first = g.reshape(first, y->shape);  // row-major spatial index
  if (order == 1 && k > 1) {  // re-linearize column-major
    Node* rest = first;
    Node* col = nullptr;
    int64_t col_stride = 1;
    std::vector<Node*> coords(k);
    for (size_t i = k; i-- > 0;) {
      Node* dim = g.constant(double(in_spatial[i]), DType::I64);
      coords[i] = g.binary(Op::Mod, rest, dim);
      rest = g.binary(Op::Div, rest, dim);
    }
    for (size_t i = 0; i < k; ++i) {
      Node* term = g.binary(Op::Mul, coords[i], g.constant(double(col_stride), DType::I64));
      col = col ? g.binary(Op::Add, col, term) : term;
      col_stride *= in_spatial[i];
    }
    first = col;
  }
  // + (n * C + c) * plane
  int64_t n = x->shape[0], c = x->shape[1];
  Node* base = g.weight(HostTensor::from_ints(DType::I64, Shape{n, c}, [&] {
    std::vector<int64_t> v;
    for (int64_t i = 0; i < n * c; ++i) v.push_back(i * plane);
    return v;
  }()));
  Shape bs{n, c};
  bs.insert(bs.end(), k, 1);
  return {y, g.binary(Op::Add, first, g.reshape(base, bs))};
}

Outs lower_lp_pool(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  if (!is_float(x->dtype)) ctx.fail("input must be a float tensor");
  WindowSpec spec = window_spec(ctx, x->shape, pool_kernel(ctx), ctx.attr_int("ceil_mode", 0));
  double p = double(ctx.attr_int("p", 2));
  if (p <= 0) ctx.fail("p must be positive");
  Node* a = g.unary(Op::Abs, x);
  Node* powered = p == 1 ? a : p == 2 ? g.binary(Op::Mul, x, x) : g.binary(Op::Pow, a, scalar(g, p, x));
  Node* sum = reduce_taps(g, Op::ReduceSum, windows(g, powered, spec, 0.0), spec.kernel.size());
  if (p == 1) return {sum};
  if (p == 2) return {g.unary(Op::Sqrt, sum)};
  return {g.binary(Op::Pow, sum, scalar(g, 1.0 / p, sum))};
}


// How many taps of each window fall inside [lo_bound, hi_bound) of one spatial dim.
std::vector<int64_t> taps_inside(int64_t outputs, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_lo,
                                 int64_t lo_bound, int64_t hi_bound) {
  std::vector<int64_t> counts;
  for (int64_t o = 0; o < outputs; ++o) {
    int64_t c = 0;
    for (int64_t j = 0; j < kernel; ++j) {
      int64_t p = o * stride + j * dilation - pad_lo;
      c += p >= lo_bound && p < hi_bound;
    }
    counts.push_back(c);
  }
  return counts;
}

Outs lower_average_pool(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  WindowSpec spec = window_spec(ctx, x->shape, pool_kernel(ctx), ctx.attr_int("ceil_mode", 0));
  size_t k = spec.kernel.size();
  // QLinearAveragePool (lowered through here) requantizes the float sum: summed in
  // onnxruntime's tap order, so that its results are bit-exact (the separable sums' order
  // moved 1.2% of test_int8.py depthwise_clip_avgpool's outputs by one step).
  const bool requantized = ctx.node.op_type() == "QLinearAveragePool";
  Node* sum = separable_pool(spec) && !requantized ? separable_pool_2d(ctx, Op::ReduceSum, x, spec, 0.0)
                                                  : reduce_taps(g, Op::ReduceSum, pool_windows(ctx, x, spec, 0.0), k);
  // The divisor per output position: taps inside the input, or inside input + explicit
  // padding with count_include_pad (never the ceil_mode overhang). It is separable, so it
  // is the product of per-dim counts.
  bool include_pad = ctx.attr_int("count_include_pad", 0);
  Shape out_spatial(sum->shape.begin() + 2, sum->shape.end());
  std::vector<double> divisor{1.0};
  for (size_t i = 0; i < k; ++i) {
    int64_t size = x->shape[2 + i];
    auto counts = taps_inside(out_spatial[i], spec.kernel[i], spec.stride[i], spec.dilation[i], spec.pad_lo[i],
                              include_pad ? -spec.pad_lo[i] : 0, include_pad ? size + spec.pad_hi[i] : size);
    std::vector<double> next;
    for (double d : divisor)
      for (int64_t c : counts) next.push_back(d * double(c));
    divisor = std::move(next);
  }
  bool uniform = std::all_of(divisor.begin(), divisor.end(), [&](double d) { return d == divisor[0]; });
  Node* div = uniform ? scalar(g, divisor[0], x) : g.weight(HostTensor::from_doubles(x->dtype, out_spatial, divisor));
  return {g.binary(Op::Div, sum, div)};
}

std::vector<int64_t> spatial_axes(const OpContext& ctx, const Node* x) {
  if (x->shape.size() < 3) ctx.fail("input " + shape_str(x->shape) + " has no spatial dims");
  return iota_ints(2, int64_t(x->shape.size()));
}
Outs lower_global_average_pool(OpContext& ctx) {
  Node* x = ctx.input(0);
  return {reduce_mean(ctx.g, x, spatial_axes(ctx, x))};
}
Outs lower_global_max_pool(OpContext& ctx) {
  Node* x = ctx.input(0);
  return {ctx.g.reduce(Op::ReduceMax, x, spatial_axes(ctx, x))};
}

// Per-channel parameters (C) shaped to broadcast against (N, C, ...).
Node* channel_param(Graph& g, Node* p, size_t x_rank) {
  Shape s = p->shape;
  if (s.size() == 1) s.insert(s.end(), x_rank - 2, 1);
  return g.reshape(p, s);
}

// Inputs `params` of the node are one value per channel of x (N, C, ...): a [3] scale for
// one channel would broadcast x to three (onnxruntime refuses such a model).
void check_channel_params(const OpContext& ctx, const Node* x, std::initializer_list<size_t> params) {
  for (size_t i : params)
    if (ctx.input(i)->shape != Shape{x->shape[1]})
      ctx.fail("input " + std::to_string(i) + " ('" + ctx.node.input(int(i)) + "') is " +
               shape_str(ctx.input(i)->shape) + ", not one value per channel of " + shape_str(x->shape));
}

// Training mode: normalizes with the batch statistics (over all dims but the channel) and
// returns the updated running mean / variance (momentum-weighted, population variance); before
// opset 14 also the batch's own mean and variance (outputs 3 and 4, "saved_mean" / "saved_var":
// the spec's and the ONNX reference evaluator's variance; onnxruntime returns 1 / sqrt(var + eps)
// as output 4).
Outs batch_norm_training(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  size_t rank = x->shape.size();
  int64_t c = x->shape[1];
  std::vector<int64_t> axes{0};
  for (int64_t d = 2; d < int64_t(rank); ++d) axes.push_back(d);
  Node* mean = reduce_mean(g, x, axes);
  Node* centered = g.binary(Op::Sub, x, mean);
  Node* var = reduce_mean(g, g.binary(Op::Mul, centered, centered), axes);
  Node* eps = scalar(g, ctx.attr_float("epsilon", 1e-5f), x);
  Node* y = g.binary(Op::Div, centered, g.unary(Op::Sqrt, g.binary(Op::Add, var, eps)));
  y = g.binary(Op::Add, g.binary(Op::Mul, y, channel_param(g, ctx.input(1), rank)), channel_param(g, ctx.input(2), rank));
  Node* momentum = scalar(g, ctx.attr_float("momentum", 0.9f), x);
  Node* rest = scalar(g, 1.0 - double(ctx.attr_float("momentum", 0.9f)), x);
  auto running = [&](Node* old, Node* batch) {
    return g.binary(Op::Add, g.binary(Op::Mul, old, momentum), g.binary(Op::Mul, g.reshape(batch, {c}), rest));
  };
  Node* running_mean = ctx.output_used(1) ? running(ctx.input(3), mean) : nullptr;
  Node* running_var = ctx.output_used(2) ? running(ctx.input(4), var) : nullptr;
  if (ctx.num_outputs() <= 3) return {y, running_mean, running_var};
  return {y, running_mean, running_var, g.reshape(mean, {c}), g.reshape(var, {c})};
}

Outs lower_batch_norm(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  if (x->shape.size() < 2) ctx.fail("input " + shape_str(x->shape) + " has no channel dim");
  if (ctx.opset < 9 && ctx.attr_int("spatial", 1) == 0) ctx.fail("spatial = 0 (per-element statistics) is not supported");
  check_channel_params(ctx, x, {1, 2, 3, 4});
  if (ctx.attr_int("training_mode", 0)) {
    if (ctx.opset < 14) ctx.fail("training_mode before opset 14 is not supported");
    return batch_norm_training(ctx);
  }
  // Opsets 9-13 have no training_mode: a node that names any output after Y is in training
  // mode (Y normalized with the batch's statistics, as onnxruntime does). torch exports
  // F.batch_norm(training=True) so at opset 13, e.g. timm's weight-standardized convs
  // (ScaledStdConv2d: nf_regnet, nfnet), whose extra outputs nothing reads.
  bool named_training_outputs = false;
  for (size_t i = 1; i < ctx.num_outputs(); ++i) named_training_outputs |= ctx.output_used(i);
  if (ctx.opset >= 9 && ctx.opset < 14 && named_training_outputs) return batch_norm_training(ctx);
  for (size_t i = 1; i < ctx.num_outputs(); ++i)
    if (ctx.output_used(i))
      ctx.fail("output " + std::to_string(i) + " exists only in training mode (opset >= 14, training_mode = 1)");
  size_t rank = x->shape.size();
  Node *scale = channel_param(g, ctx.input(1), rank), *bias = channel_param(g, ctx.input(2), rank);
  Node *mean = channel_param(g, ctx.input(3), rank), *var = channel_param(g, ctx.input(4), rank);
  // y = x * a + b with a = scale / sqrt(var + eps), b = bias - mean * a: a and b fold into
  // per-channel weights when the statistics are constant.
  Node* eps = scalar(g, ctx.attr_float("epsilon", 1e-5f), x);
  Node* a = g.binary(Op::Div, scale, g.unary(Op::Sqrt, g.binary(Op::Add, var, eps)));
  Node* b = g.binary(Op::Sub, bias, g.binary(Op::Mul, mean, a));
  return {g.binary(Op::Add, g.binary(Op::Mul, x, a), b)};
}

// (x - mean) / sqrt(var + eps) over axes; returns {normalized, mean, 1/sqrt(var + eps)}.
std::vector<Node*> normalize(Graph& g, Node* x, const std::vector<int64_t>& axes, double epsilon) {
  Node* mean = reduce_mean(g, x, axes);
  Node* centered = g.binary(Op::Sub, x, mean);
  Node* var = reduce_mean(g, g.binary(Op::Mul, centered, centered), axes);
  Node* inv_std = g.unary(Op::Recip, g.unary(Op::Sqrt, g.binary(Op::Add, var, scalar(g, epsilon, x))));
  return {g.binary(Op::Mul, centered, inv_std), mean, inv_std};
}

Outs lower_instance_norm(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  Node* y = normalize(g, x, spatial_axes(ctx, x), ctx.attr_float("epsilon", 1e-5f))[0];
  check_channel_params(ctx, x, {1, 2});
  size_t rank = x->shape.size();
  y = g.binary(Op::Mul, y, channel_param(g, ctx.input(1), rank));
  return {g.binary(Op::Add, y, channel_param(g, ctx.input(2), rank))};
}

Outs lower_layer_norm(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  int64_t rank = int64_t(x->shape.size());
  int64_t axis = ctx.axis(ctx.attr_int("axis", -1), rank);
  // stash_type 1: statistics in float32 (what a float16 model asks for).
  DType compute = ctx.attr_int("stash_type", 1) == 1 && x->dtype == DType::F16 ? DType::F32 : x->dtype;
  auto parts = normalize(g, g.cast(x, compute), iota_ints(axis, rank), ctx.attr_float("epsilon", 1e-5f));
  Node* y = g.cast(parts[0], x->dtype);
  y = g.binary(Op::Mul, y, ctx.input(1));
  if (Node* bias = ctx.optional_input(2)) y = g.binary(Op::Add, y, bias);
  return {y, parts[1], parts[2]};
}

Outs lower_matmul(OpContext& ctx) { return {matmul(ctx.g, ctx.input(0), ctx.input(1), ctx.dots)}; }

// A two-operand Einsum that is a batched matrix product (each label once per operand: in
// both operands and the output a batch label, in one operand and the output a row / column
// label, in both but not the output a summed one; rows, columns and sums all present, the
// batch dims of equal sizes) as MatMul over (B, M, K) x (B, K, N): the product's own
// layouts, e.g. attention's K of "bhqd,bhkd->bhqk" copied into (K, N) order. As a broadcast
// multiply and sum, that one ran its dot products along d at 42 GFLOP/s against MatMul's 77
// (2 x 400 x 400 x 192, 1.9x onnxruntime's time, op_cliffs.py --random-ops 40 --seed 32).
// nullptr where the equation is no such product.
Node* einsum_as_matmul(OpContext& ctx, const std::vector<std::vector<int>>& labels, const std::vector<int>& out) {
  if (labels.size() != 2) return nullptr;
  Graph& g = ctx.g;
  Node *a = ctx.input(0), *b = ctx.input(1);
  const std::vector<int>&la = labels[0], &lb = labels[1];
  auto has = [](const std::vector<int>& ls, int l) { return std::count(ls.begin(), ls.end(), l); };
  for (const auto* ls : {&la, &lb, &out})
    for (int l : *ls)
      if (has(*ls, l) != 1) return nullptr;  // a diagonal or a repeated output label
  std::vector<int> batch, rows, cols, sums;
  for (int l : out) {
    const bool in_a = has(la, l), in_b = has(lb, l);
    (in_a && in_b ? batch : in_a ? rows : cols).push_back(l);
  }
  for (int l : la) {
    if (has(out, l)) continue;
    if (!has(lb, l)) return nullptr;  // summed within one operand
    sums.push_back(l);
  }
  for (int l : lb)
    if (!has(out, l) && !has(la, l)) return nullptr;
  if (rows.empty() || cols.empty() || sums.empty()) return nullptr;
  auto size_in = [&](Node* x, const std::vector<int>& ls, int l) {
    return x->shape[size_t(std::find(ls.begin(), ls.end(), l) - ls.begin())];
  };
  for (int l : batch)
    if (size_in(a, la, l) != size_in(b, lb, l)) return nullptr;  // broadcast batch dims
  for (int l : sums)
    if (size_in(a, la, l) != size_in(b, lb, l)) return nullptr;
  // Each operand permuted to (batch, outer, inner) and merged into (B, outer, inner) dims.
  auto as_3d = [&](Node* x, const std::vector<int>& ls, const std::vector<int>& outer, const std::vector<int>& inner) {
    std::vector<int64_t> perm;
    int64_t nb = 1, no = 1, ni = 1;
    for (int l : batch) perm.push_back(std::find(ls.begin(), ls.end(), l) - ls.begin()), nb *= size_in(x, ls, l);
    for (int l : outer) perm.push_back(std::find(ls.begin(), ls.end(), l) - ls.begin()), no *= size_in(x, ls, l);
    for (int l : inner) perm.push_back(std::find(ls.begin(), ls.end(), l) - ls.begin()), ni *= size_in(x, ls, l);
    return g.reshape(g.permute(x, perm), {nb, no, ni});
  };
  Node* prod = matmul(g, as_3d(a, la, rows, sums), as_3d(b, lb, sums, cols), ctx.dots);  // (B, M, N)
  // Unmerged as (batch..., rows..., cols...), then permuted into the output's order.
  Shape split;
  std::vector<int> split_labels;
  for (const auto* group : {&batch, &rows, &cols})
    for (int l : *group) split.push_back(has(la, l) ? size_in(a, la, l) : size_in(b, lb, l)), split_labels.push_back(l);
  std::vector<int64_t> to_out;
  for (int l : out) to_out.push_back(std::find(split_labels.begin(), split_labels.end(), l) - split_labels.begin());
  return g.permute(g.reshape(prod, split), to_out);
}

// Einsum: every operand's dims are labelled (a repeated label in one operand takes the
// diagonal), permuted into one common order (output labels, then summed labels), multiplied
// with broadcasting and reduced over the summed labels.
Outs lower_einsum(OpContext& ctx) {
  Graph& g = ctx.g;
  std::string eq;
  for (char ch : ctx.attr_string("equation", "")) if (ch != ' ') eq += ch;
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != ctx.num_inputs()) ctx.fail("equation '" + eq + "' has " + std::to_string(terms.size()) + " operands");
  // Labels: letters are their char code, ellipsis dims 256 + k (k counted from the left of
  // the widest ellipsis, right-aligned across operands).
  std::vector<std::vector<int>> labels(terms.size());
  std::vector<int64_t> ell(terms.size(), 0);
  int64_t max_ell = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    const std::string& t = terms[i];
    size_t dots = t.find("...");
    int64_t letters = int64_t(t.size()) - (dots == std::string::npos ? 0 : 3);
    int64_t rank = int64_t(ctx.input(i)->shape.size());
    ell[i] = dots == std::string::npos ? 0 : rank - letters;
    if (ell[i] < 0 || (dots == std::string::npos && letters != rank)) ctx.fail("term '" + t + "' does not match input " + std::to_string(i) + " of rank " + std::to_string(rank));
    max_ell = std::max(max_ell, ell[i]);
  }
  std::map<int, int64_t> count;
  for (size_t i = 0; i < terms.size(); ++i) {
    const std::string& t = terms[i];
    for (size_t c = 0; c < t.size();) {
      if (t.compare(c, 3, "...") == 0) {
        for (int64_t k = 0; k < ell[i]; ++k) labels[i].push_back(256 + int(max_ell - ell[i] + k));
        c += 3;
        continue;
      }
      if (!std::isalpha(static_cast<unsigned char>(t[c]))) ctx.fail("bad character in equation '" + eq + "'");
      labels[i].push_back(t[c]);
      ++c;
    }
    for (int l : std::set<int>(labels[i].begin(), labels[i].end())) ++count[l];
  }
  std::vector<int> out_labels;
  if (arrow != std::string::npos) {
    std::string rhs = eq.substr(arrow + 2);
    for (size_t c = 0; c < rhs.size();) {
      if (rhs.compare(c, 3, "...") == 0) {
        for (int64_t k = 0; k < max_ell; ++k) out_labels.push_back(256 + int(k));
        c += 3;
        continue;
      }
      if (!count.count(rhs[c])) ctx.fail("output label '" + std::string(1, rhs[c]) + "' is not in any input");
      out_labels.push_back(rhs[c++]);
    }
  } else {  // implicit: ellipsis dims, then the letters seen once, alphabetically
    for (int64_t k = 0; k < max_ell; ++k) out_labels.push_back(256 + int(k));
    for (auto [l, n] : count)
      if (l < 256 && n == 1) {
        int occurrences = 0;
        for (const auto& ls : labels) occurrences += int(std::count(ls.begin(), ls.end(), l));
        if (occurrences == 1) out_labels.push_back(l);
      }
  }
  if (Node* y = einsum_as_matmul(ctx, labels, out_labels)) return {y};
  std::vector<int> order = out_labels;
  for (const auto& ls : labels)
    for (int l : ls)
      if (std::find(order.begin(), order.end(), l) == order.end()) order.push_back(l);
  Node* prod = nullptr;
  for (size_t i = 0; i < terms.size(); ++i) {
    Node* x = ctx.input(i);
    std::vector<int> ls = labels[i];
    // Diagonals of repeated labels.
    for (bool again = true; again;) {
      again = false;
      for (size_t p = 0; p < ls.size() && !again; ++p)
        for (size_t q = p + 1; q < ls.size() && !again; ++q) {
          if (ls[p] != ls[q]) continue;
          int64_t n = x->shape[p];
          if (x->shape[q] != n) ctx.fail("label '" + std::string(1, char(ls[p])) + "' has two sizes in one operand");
          std::vector<int64_t> perm;
          std::vector<int> rest;
          for (size_t d = 0; d < ls.size(); ++d)
            if (d != p && d != q) perm.push_back(int64_t(d)), rest.push_back(ls[d]);
          perm.push_back(int64_t(p));
          perm.push_back(int64_t(q));
          Node* y = g.permute(x, perm);
          Shape s(y->shape.begin(), y->shape.end() - 2);
          s.push_back(n * n);
          y = strided_slice(g, g.reshape(y, s), int64_t(s.size() - 1), 0, n, n + 1);
          x = y;
          rest.push_back(ls[p]);
          ls = rest;
          again = true;
        }
    }
    // Permute into `order`, size-1 dims for the labels this operand lacks.
    std::vector<int64_t> perm;
    Shape full;
    for (int l : order) {
      auto it = std::find(ls.begin(), ls.end(), l);
      if (it == ls.end()) {
        full.push_back(1);
      } else {
        perm.push_back(int64_t(it - ls.begin()));
        full.push_back(x->shape[size_t(it - ls.begin())]);
      }
    }
    Node* y = g.reshape(g.permute(x, perm), full);
    prod = prod ? g.binary(Op::Mul, prod, y) : y;
  }
  int64_t n_out = int64_t(out_labels.size()), n_all = int64_t(order.size());
  Node* y = prod;
  if (n_all > n_out) y = g.reduce(Op::ReduceSum, y, iota_ints(n_out, n_all));
  Shape out(y->shape.begin(), y->shape.begin() + n_out);
  return {g.reshape(y, out)};
}

Outs lower_gemm(OpContext& ctx) {
  Graph& g = ctx.g;
  Node *a = ctx.input(0), *b = ctx.input(1), *c = ctx.optional_input(2);
  if (a->shape.size() != 2 || b->shape.size() != 2) ctx.fail("A and B must be 2-D");
  if (ctx.attr_int("transA", 0)) a = g.permute(a, {1, 0});
  if (ctx.attr_int("transB", 0)) b = g.permute(b, {1, 0});
  Node* y = matmul(g, a, b, ctx.dots);
  float alpha = ctx.attr_float("alpha", 1.0f), beta = ctx.attr_float("beta", 1.0f);
  if (alpha != 1.0f) y = g.binary(Op::Mul, y, scalar(g, alpha, y));
  if (c && beta != 0.0f) {
    if (beta != 1.0f) c = g.binary(Op::Mul, c, scalar(g, beta, c));
    y = g.binary(Op::Add, y, c);
  }
  return {y};
}

// Softmax family: along `axis` from opset 13; before, over all dims from axis on, as if
// the input were flattened to 2-D there.
template <bool log>
Outs lower_softmax(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  int64_t rank = int64_t(x->shape.size());
  bool flatten = ctx.opset < 13;
  int64_t axis = ctx.axis(ctx.attr_int("axis", flatten ? 1 : -1), rank);
  std::vector<int64_t> axes = flatten ? iota_ints(axis, rank) : std::vector<int64_t>{axis};
  Node* shifted = g.binary(Op::Sub, x, g.reduce(Op::ReduceMax, x, axes));
  Node* e = g.unary(Op::Exp, shifted);
  e->exp_arg_nonpositive = true;
  Node* sum = g.reduce(Op::ReduceSum, e, axes);
  if (log) return {g.binary(Op::Sub, shifted, g.unary(Op::Log, sum))};
  // One reciprocal per row and a multiply per element (as onnxruntime scales): a divide per
  // element cost as much as the exp on AVX2.
  return {g.binary(Op::Mul, e, g.unary(Op::Recip, sum))};
}

Outs lower_dropout(OpContext& ctx) {
  Node* x = ctx.input(0);
  bool training = false;
  if (ctx.opset >= 12 && ctx.optional_input(2)) {
    HostTensor t = ctx.const_input(2);
    training = t.numel() == 1 && t.get(0) != 0.0;
  } else if (ctx.opset < 7) {
    training = ctx.attr_int("is_test", 0) == 0;
  }
  if (training) {
    // Dropping draws random numbers; with ratio 0 nothing is dropped and nothing is scaled.
    double ratio = ctx.opset >= 12 ? (ctx.optional_input(1) ? ctx.const_input(1).get(0) : 0.5) : ctx.attr_float("ratio", 0.5f);
    if (ratio != 0.0)
      ctx.fail("training_mode with ratio " + std::to_string(ratio) + " draws random numbers (not supported; inference only)");
  }
  Node* mask = nullptr;
  if (ctx.output_used(1))  // nothing is dropped
    mask = ctx.g.constant(1, ctx.opset >= 10 ? DType::Bool : x->dtype, x->shape);
  return {x, mask};
}

// LRN: x / (bias + alpha / size * (sum of x^2 over `size` neighbouring channels))^beta.
Outs lower_lrn(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  if (x->shape.size() < 3) ctx.fail("input must be (N, C, D1, ...)");
  int64_t size = ctx.attr_int("size", 0);
  if (size < 1) ctx.fail("size must be positive");
  double alpha = ctx.attr_float("alpha", 1e-4f), beta = ctx.attr_float("beta", 0.75f), bias = ctx.attr_float("bias", 1.0f);
  Node* sq = move_axis_last(g, g.binary(Op::Mul, x, x), 1);
  size_t r = sq->shape.size();
  std::vector<int64_t> lo(r, 0), hi(r, 0);
  lo[r - 1] = (size - 1) / 2;
  hi[r - 1] = size - 1 - lo[r - 1];
  Node* win = g.window(g.pad(sq, lo, hi, 0.0), {size}, {1}, {1});
  Node* sum = move_last_to(g, g.reshape(g.reduce(Op::ReduceSum, win, {-1}), sq->shape), 1);
  Node* base = g.binary(Op::Add, scalar(g, bias, x), g.binary(Op::Mul, scalar(g, alpha / double(size), x), sum));
  return {g.binary(Op::Div, x, g.binary(Op::Pow, base, scalar(g, beta, x)))};
}

// MeanVarianceNormalization as its ONNX function: (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9).
Outs lower_mvn(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  int64_t rank = int64_t(x->shape.size());
  std::vector<int64_t> axes = ctx.attr_ints("axes", {0, 2, 3});
  for (int64_t& a : axes) a = ctx.axis(a, rank);
  Node* mean = reduce_mean(g, x, axes);
  Node* var = g.binary(Op::Sub, reduce_mean(g, g.binary(Op::Mul, x, x), axes), g.binary(Op::Mul, mean, mean));
  Node* std_eps = g.binary(Op::Add, g.unary(Op::Sqrt, var), scalar(g, 1e-9, x));
  return {g.binary(Op::Div, g.binary(Op::Sub, x, mean), std_eps)};
}

Outs lower_group_norm(OpContext& ctx) {
  Graph& g = ctx.g;
  Node *x = ctx.input(0), *scale = ctx.input(1), *bias = ctx.input(2);
  if (x->shape.size() < 2) ctx.fail("input must be (N, C, ...)");
  int64_t groups = ctx.attr_int("num_groups", 0), n = x->shape[0], c = x->shape[1];
  if (groups < 1 || c % groups) ctx.fail("num_groups " + std::to_string(groups) + " does not divide the channels");
  // Opset 18 has one scale / bias per group, opset 21 one per channel.
  int64_t params = ctx.opset >= 21 ? c : groups;
  if (scale->shape != Shape{params} || bias->shape != Shape{params})
    ctx.fail("scale and bias must be [" + std::to_string(params) + "]");
  DType compute = ctx.attr_int("stash_type", 1) == 1 && x->dtype == DType::F16 ? DType::F32 : x->dtype;
  Node* grouped = g.reshape(g.cast(x, compute), {n, groups, numel(x->shape) / std::max<int64_t>(n * groups, 1)});
  Node* y = normalize(g, grouped, {2}, ctx.attr_float("epsilon", 1e-5f))[0];
  y = g.cast(g.reshape(y, x->shape), x->dtype);
  if (params == groups && groups != c) {  // per group -> per channel
    scale = g.reshape(g.expand(g.reshape(scale, {groups, 1}), {groups, c / groups}), {c});
    bias = g.reshape(g.expand(g.reshape(bias, {groups, 1}), {groups, c / groups}), {c});
  }
  size_t rank = x->shape.size();
  return {g.binary(Op::Add, g.binary(Op::Mul, y, channel_param(g, scale, rank)), channel_param(g, bias, rank))};
}

Outs lower_lp_normalization(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  int64_t axis = ctx.axis(ctx.attr_int("axis", -1), int64_t(x->shape.size()));
  int64_t p = ctx.attr_int("p", 2);
  Node* norm;
  if (p == 1) norm = g.reduce(Op::ReduceSum, g.unary(Op::Abs, x), {axis});
  else if (p == 2) norm = g.unary(Op::Sqrt, g.reduce(Op::ReduceSum, g.binary(Op::Mul, x, x), {axis}));
  else ctx.fail("p must be 1 or 2, got " + std::to_string(p));
  return {g.binary(Op::Div, x, norm)};
}

}  // namespace

void add_nn_ops(OpTable& t) {
  t["Conv"] = lower_conv;
  t["ConvTranspose"] = lower_conv_transpose;
  t["MaxPool"] = lower_max_pool;
  t["LpPool"] = lower_lp_pool;
  t["AveragePool"] = lower_average_pool;
  t["GlobalAveragePool"] = lower_global_average_pool;
  t["GlobalMaxPool"] = lower_global_max_pool;
  t["BatchNormalization"] = lower_batch_norm;
  t["InstanceNormalization"] = lower_instance_norm;
  t["LayerNormalization"] = lower_layer_norm;
  t["MatMul"] = lower_matmul;
  t["Gemm"] = lower_gemm;
  t["Einsum"] = lower_einsum;
  t["Softmax"] = lower_softmax<false>;
  t["LogSoftmax"] = lower_softmax<true>;
  t["Dropout"] = lower_dropout;
  t["LRN"] = lower_lrn;
  t["MeanVarianceNormalization"] = lower_mvn;
  t["GroupNormalization"] = lower_group_norm;
  t["LpNormalization"] = lower_lp_normalization;
}

}  // namespace edgec::onnx_frontend
