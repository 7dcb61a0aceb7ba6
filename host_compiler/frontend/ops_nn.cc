// ops_nn.cc — convolution, pooling, normalization, matrix products, softmax, dropout.
//
// Conv and pooling are a padded, strided, dilated Window over the spatial dims followed by
// elementwise math and a reduction over the window taps.
#include <algorithm>
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

Outs lower_conv(OpContext& ctx) {
  Graph& g = ctx.g;
  Node *x = ctx.input(0), *w = ctx.input(1), *bias = ctx.optional_input(2);
  const Shape& ws = w->shape;
  if (ws.size() < 3 || x->shape.size() != ws.size()) ctx.fail("weight " + shape_str(ws) + " does not fit input " + shape_str(x->shape));
  size_t k = ws.size() - 2;
  int64_t n = x->shape[0], c = x->shape[1], m = ws[0], groups = ctx.attr_int("group", 1);
  if (groups < 1 || c % groups || m % groups || ws[1] != c / groups)
    ctx.fail("input channels " + std::to_string(c) + ", weight " + shape_str(ws) + " and group " +
             std::to_string(groups) + " do not fit");
  std::vector<int64_t> kernel(ws.begin() + 2, ws.end());
  if (ctx.has_attr("kernel_shape") && ctx.attr_ints("kernel_shape") != kernel)
    ctx.fail("kernel_shape does not match the weight " + shape_str(ws));
  WindowSpec spec = window_spec(ctx, x->shape, kernel, false);
  Node* win = windows(g, x, spec, 0.0);  // (N, C, O..., K...)
  Shape out_spatial(win->shape.begin() + 2, win->shape.begin() + 2 + k);
  int64_t cg = c / groups, mg = m / groups;

  // Product laid out as (N, G, M/G, O..., C/G, K...) so the reduction is over the trailing,
  // contiguous dims of each output element.
  Shape xs{n, groups, cg};
  xs.insert(xs.end(), win->shape.begin() + 2, win->shape.end());
  std::vector<int64_t> perm{0, 1};
  for (size_t i = 0; i < k; ++i) perm.push_back(3 + int64_t(i));  // O...
  perm.push_back(2);                                               // C/G
  for (size_t i = 0; i < k; ++i) perm.push_back(3 + int64_t(k + i));  // K...
  Node* xv = g.permute(g.reshape(win, xs), perm);
  Shape xv_shape = xv->shape;
  xv_shape.insert(xv_shape.begin() + 2, 1);
  xv = g.reshape(xv, xv_shape);

  Shape wv_shape{1, groups, mg};
  wv_shape.insert(wv_shape.end(), k, 1);
  wv_shape.push_back(cg);
  wv_shape.insert(wv_shape.end(), kernel.begin(), kernel.end());
  Node* wv = g.reshape(w, wv_shape);

  Node* prod = g.binary(Op::Mul, xv, wv);
  int64_t rank = int64_t(prod->shape.size());
  Node* sum = g.reduce(Op::ReduceSum, prod, iota_ints(rank - int64_t(k) - 1, rank));
  Shape out{n, m};
  out.insert(out.end(), out_spatial.begin(), out_spatial.end());
  Node* y = g.reshape(sum, out);
  if (bias) {
    Shape bs{m};
    bs.insert(bs.end(), k, 1);
    y = g.binary(Op::Add, y, g.reshape(bias, bs));
  }
  return {y};
}

std::vector<int64_t> pool_kernel(const OpContext& ctx) {
  std::vector<int64_t> kernel = ctx.attr_ints("kernel_shape");
  if (kernel.empty()) ctx.fail("kernel_shape is required");
  return kernel;
}

Outs lower_max_pool(OpContext& ctx) {
  Graph& g = ctx.g;
  if (ctx.output_used(1)) ctx.fail("the Indices output is not supported");
  Node* x = ctx.input(0);
  WindowSpec spec = window_spec(ctx, x->shape, pool_kernel(ctx), ctx.attr_int("ceil_mode", 0));
  // Padding never wins the max.
  double lowest = is_float(x->dtype) ? -INFINITY : is_signed_int(x->dtype) ? -std::ldexp(1.0, 8 * int(dtype_size(x->dtype)) - 1) : 0.0;
  return {reduce_taps(g, Op::ReduceMax, windows(g, x, spec, lowest), spec.kernel.size())};
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
  Node* sum = reduce_taps(g, Op::ReduceSum, windows(g, x, spec, 0.0), k);
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

// Per-channel parameters (C) or (C, spatial...) shaped to broadcast against (N, C, ...).
Node* channel_param(Graph& g, Node* p, size_t x_rank) {
  Shape s = p->shape;
  if (s.size() == 1) s.insert(s.end(), x_rank - 2, 1);
  return g.reshape(p, s);
}

Outs lower_batch_norm(OpContext& ctx) {
  Graph& g = ctx.g;
  if (ctx.attr_int("training_mode", 0)) ctx.fail("training_mode is not supported (inference only)");
  for (size_t i = 1; i < ctx.num_outputs(); ++i)
    if (ctx.output_used(i)) ctx.fail("only the Y output is supported (inference only)");
  Node* x = ctx.input(0);
  if (x->shape.size() < 2) ctx.fail("input " + shape_str(x->shape) + " has no channel dim");
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

Outs lower_matmul(OpContext& ctx) { return {matmul(ctx.g, ctx.input(0), ctx.input(1))}; }

Outs lower_gemm(OpContext& ctx) {
  Graph& g = ctx.g;
  Node *a = ctx.input(0), *b = ctx.input(1), *c = ctx.optional_input(2);
  if (a->shape.size() != 2 || b->shape.size() != 2) ctx.fail("A and B must be 2-D");
  if (ctx.attr_int("transA", 0)) a = g.permute(a, {1, 0});
  if (ctx.attr_int("transB", 0)) b = g.permute(b, {1, 0});
  Node* y = matmul(g, a, b);
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
  Node* sum = g.reduce(Op::ReduceSum, e, axes);
  if (log) return {g.binary(Op::Sub, shifted, g.unary(Op::Log, sum))};
  return {g.binary(Op::Div, e, sum)};
}

Outs lower_dropout(OpContext& ctx) {
  Node* x = ctx.input(0);
  if (ctx.opset >= 12 && ctx.optional_input(2)) {
    if (!ctx.g.is_constant(ctx.input(2)) || ctx.const_input(2).get(0) != 0.0)
      ctx.fail("training_mode is not supported (inference only)");
  }
  Node* mask = nullptr;
  if (ctx.output_used(1))  // nothing is dropped in inference
    mask = ctx.g.constant(1, ctx.opset >= 10 ? DType::Bool : x->dtype, x->shape);
  return {x, mask};
}

}  // namespace

void add_nn_ops(OpTable& t) {
  t["Conv"] = lower_conv;
  t["MaxPool"] = lower_max_pool;
  t["AveragePool"] = lower_average_pool;
  t["GlobalAveragePool"] = lower_global_average_pool;
  t["GlobalMaxPool"] = lower_global_max_pool;
  t["BatchNormalization"] = lower_batch_norm;
  t["InstanceNormalization"] = lower_instance_norm;
  t["LayerNormalization"] = lower_layer_norm;
  t["MatMul"] = lower_matmul;
  t["Gemm"] = lower_gemm;
  t["Softmax"] = lower_softmax<false>;
  t["LogSoftmax"] = lower_softmax<true>;
  t["Dropout"] = lower_dropout;
}

}  // namespace edgec::onnx_frontend
