// ops_quant.cc — integer quantization: QuantizeLinear, DequantizeLinear,
// DynamicQuantizeLinear, MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv
// (int8 / uint8 / int16 / uint16; per-tensor, per-axis and blocked scales).
//
// Float math runs in float32; rounding is half to even (Round) and results saturate to the
// target type with an explicit clamp before the Cast. Integer products accumulate in int32.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "frontend/lowering.h"

namespace edgec::onnx_frontend {
namespace {

using Outs = std::vector<Node*>;

bool is_quant_int(DType t) { return t == DType::U8 || t == DType::I8 || t == DType::U16 || t == DType::I16; }

// A scale / zero point shaped to broadcast against x: a scalar (or one element), a 1-D
// per-axis vector, or (block_size > 0) a tensor blocked along axis.
Node* quant_param(OpContext& ctx, Node* p, const Shape& x_shape, int64_t axis, int64_t block_size) {
  Graph& g = ctx.g;
  size_t r = x_shape.size();
  if (numel(p->shape) == 1 && (p->shape.size() <= 1 || block_size == 0)) return g.reshape(p, {});
  if (block_size <= 0) {
    if (p->shape.size() != 1) ctx.fail("a per-axis scale / zero point must be 1-D");
    axis = ctx.axis(axis, int64_t(r));
    if (p->shape[0] != x_shape[size_t(axis)])
      ctx.fail("per-axis scale / zero point " + shape_str(p->shape) + " does not match dim " + std::to_string(axis) +
               " of " + shape_str(x_shape));
    Shape s(r, 1);
    s[size_t(axis)] = p->shape[0];
    return g.reshape(p, s);
  }
  axis = ctx.axis(axis, int64_t(r));
  if (p->shape.size() != r) ctx.fail("a blocked scale / zero point must have the input's rank");
  int64_t blocks = p->shape[size_t(axis)], dim = x_shape[size_t(axis)];
  if (blocks != (dim + block_size - 1) / block_size) ctx.fail("block_size does not match the scale's shape");
  Shape split = p->shape;
  split.insert(split.begin() + axis + 1, 1);
  Shape grown = split;
  grown[size_t(axis) + 1] = block_size;
  Shape merged = p->shape;
  merged[size_t(axis)] = blocks * block_size;
  Node* y = g.reshape(g.expand(g.reshape(p, split), grown), merged);
  return strided_slice(g, y, axis, 0, dim, 1);
}

Node* to_f32(Graph& g, Node* x) { return g.cast(x, DType::F32); }

// saturate(round(v) + zp) as dtype t, v and zp float32.
Node* round_saturate(Graph& g, Node* v, Node* zp_f32, DType t) {
  Node* q = g.unary(Op::Round, v);
  if (zp_f32) q = g.binary(Op::Add, q, zp_f32);
  q = g.binary(Op::Max, q, g.constant(lowest_value(t), DType::F32));
  q = g.binary(Op::Min, q, g.constant(highest_value(t), DType::F32));
  return g.cast(q, t);
}

Outs lower_quantize_linear(OpContext& ctx) {
  Graph& g = ctx.g;
  Node *x = ctx.input(0), *scale = ctx.input(1), *zp = ctx.optional_input(2);
  int64_t axis = ctx.attr_int("axis", 1), block = ctx.attr_int("block_size", 0);
  DType t = DType::U8;
  if (zp) t = zp->dtype;
  else if (ctx.attr_int("output_dtype", 0)) t = dtype_from_onnx(int32_t(ctx.attr_int("output_dtype", 0)));
  if (zp && ctx.attr_int("output_dtype", 0) && dtype_from_onnx(int32_t(ctx.attr_int("output_dtype", 0))) != t)
    ctx.fail("output_dtype differs from the zero point's type");
  if (!is_quant_int(t)) ctx.fail(std::string("output type ") + dtype_name(t) + " is not supported (int8/uint8/int16/uint16)");
  Node* s = quant_param(ctx, to_f32(g, scale), x->shape, axis, block);
  Node* z = zp ? quant_param(ctx, to_f32(g, zp), x->shape, axis, block) : nullptr;
  // A constant scalar zero point as a constant: the code generator sees an integer (on
  // Hexagon the saturation then clamps before the rounding, llvm_emit.cc clamped_round).
  if (zp && numel(zp->shape) == 1 && (zp->shape.size() <= 1 || block == 0) && g.is_constant(zp))
    z = g.constant(double(g.evaluate(zp).get_int(0)), DType::F32);
  // Likewise a constant scalar scale (its float32 value, exact in the double): Hexagon then
  // replaces the division by a table of thresholds (llvm_emit.cc threshold_quantize).
  if (numel(scale->shape) == 1 && (scale->shape.size() <= 1 || block == 0) && g.is_constant(scale))
    s = g.constant(g.evaluate(to_f32(g, scale)).get(0), DType::F32);
  return {round_saturate(g, g.binary(Op::Div, to_f32(g, x), s), z, t)};
}

Outs lower_dequantize_linear(OpContext& ctx) {
  Graph& g = ctx.g;
  Node *x = ctx.input(0), *scale = ctx.input(1), *zp = ctx.optional_input(2);
  if (is_float(x->dtype) || x->dtype == DType::Bool) ctx.fail(std::string("input type ") + dtype_name(x->dtype) + " is not supported");
  if (!is_float(scale->dtype)) ctx.fail("scale must be a float tensor");
  if (zp && zp->dtype != x->dtype) ctx.fail("zero point and input differ in type");
  int64_t axis = ctx.attr_int("axis", 1), block = ctx.attr_int("block_size", 0);
  Node* v = to_f32(g, x);
  if (zp) v = g.binary(Op::Sub, v, quant_param(ctx, to_f32(g, zp), x->shape, axis, block));
  v = g.binary(Op::Mul, v, quant_param(ctx, to_f32(g, scale), x->shape, axis, block));
  return {g.cast(v, scale->dtype)};
}

Outs lower_dynamic_quantize_linear(OpContext& ctx) {
  Node* x = ctx.input(0);
  if (x->dtype != DType::F32) ctx.fail("input must be float32");
  DynamicQuantized q = dynamic_quantize_u8(ctx.g, x);
  return {q.y, q.scale, q.zero_point};
}

// x - zero point as int32; a 1-D zero point applies along `axis` of x (per row / channel).
Node* shifted_i32(OpContext& ctx, Node* x, Node* zp, int64_t axis) {
  Graph& g = ctx.g;
  if (is_float(x->dtype) || x->dtype == DType::Bool) ctx.fail(std::string("integer input expected, got ") + dtype_name(x->dtype));
  Node* v = g.cast(x, DType::I32);
  if (!zp) return v;
  if (zp->dtype != x->dtype) ctx.fail("zero point and input differ in type");
  Node* z = g.cast(zp, DType::I32);
  if (numel(zp->shape) == 1) {
    z = g.reshape(z, {});
  } else {
    if (zp->shape.size() != 1) ctx.fail("zero point must be a scalar or 1-D");
    size_t r = x->shape.size();
    axis = normalize_axis(axis, int64_t(r));
    if (zp->shape[0] != x->shape[size_t(axis)]) ctx.fail("zero point " + shape_str(zp->shape) + " does not fit input " + shape_str(x->shape));
    Shape s(r, 1);
    s[size_t(axis)] = zp->shape[0];
    z = g.reshape(z, s);
  }
  return g.binary(Op::Sub, v, z);
}

// Through integer_matmul: after DynamicQuantizeLinear (onnxruntime's quantize_dynamic) the
// int8 weights with a zero zero point stay 8-bit, with the target's dot layout.
Outs lower_matmul_integer(OpContext& ctx) {
  return {integer_matmul(ctx, ctx.input(0), ctx.optional_input(2), ctx.input(1), ctx.optional_input(3))};
}

Outs lower_conv_integer(OpContext& ctx) {
  Node *x = ctx.input(0), *w = ctx.input(1);
  Node* xs = shifted_i32(ctx, x, ctx.optional_input(2), 1);
  Node* ws = shifted_i32(ctx, w, ctx.optional_input(3), 0);  // per output channel
  return {conv_node(ctx, xs, ws, nullptr)};
}

// ---- QLinearConv, QLinearMatMul, QGemm (and the QDQ groups the importer fuses into them) ----
//
// onnxruntime computes these (MLAS) as acc = sum_k (x - x_zp) * (w - w_zp) in int32, plus the
// int32 bias, then requantizes (MlasRequantizeOutput): float32(acc) * scale, where scale is
// x_scale * w_scale[c] / y_scale rounded to float32 in that order (QLinearConv's
// ComputeOutputScale, QLinearMatMul::Compute, QGemm's ComputeOutputScale: alpha * a_scale *
// b_scale / y_scale), clamped to the output range less y_zp, rounded half to even (cvtps2dq)
// and shifted by y_zp. The same float32 operations in the same order give the same bits:
// Round and the clamp commute here because the bounds are integers.
//
// The reduction runs over the raw operands widened to int32 (x * w) and the zero-point terms
// stay outside it: sum_k((x - zx) * w) = sum_k(x * w) - zx * sum_k(w). With constant weights
// and a zero weight zero point (symmetric int8 weights, what quantizers emit), sum_k(w) is a
// constant per output channel that folds into the bias, so a u8 x s8 -> s32 dot-product
// instruction can compute the reduction as it stands. Padding reads x_zp (the quantized 0).
// Other cases (a non-zero or non-constant weight zero point, a zero point only known at run
// time) subtract the zero points before the products: exact, not dot-product shaped.

bool g_is_const_scalar(Graph& g, Node* v) { return numel(v->shape) == 1 && g.is_constant(v); }

// An integer zero point known at compile time: its single value, or nullopt.
std::optional<int64_t> const_scalar_zp(Graph& g, Node* zp) {
  if (!zp) return int64_t{0};
  if (numel(zp->shape) != 1 || !g.is_constant(zp)) return std::nullopt;
  return g.evaluate(zp).get_int(0);
}

bool all_zero_const(Graph& g, Node* zp) {
  if (!zp) return true;
  if (!g.is_constant(zp)) return false;
  HostTensor t = g.evaluate(zp);
  for (int64_t i = 0; i < t.numel(); ++i)
    if (t.get_int(i) != 0) return false;
  return true;
}

// A float32 scale as a scalar, or (1-D, `size` entries) shaped to broadcast along `axis` of a
// rank-`rank` result.
Node* scale_param(OpContext& ctx, Node* p, const char* what, size_t rank, int64_t axis, int64_t size) {
  Graph& g = ctx.g;
  if (!is_float(p->dtype)) ctx.fail(std::string(what) + " must be a float tensor");
  Node* f = to_f32(g, p);
  if (numel(p->shape) == 1 && p->shape.size() <= 1) return g.reshape(f, {});
  if (size < 0 || p->shape.size() != 1 || p->shape[0] != size)
    ctx.fail(std::string(what) + " " + shape_str(p->shape) + " must be a scalar" +
             (size >= 0 ? " or hold " + std::to_string(size) + " values" : std::string()));
  Shape s(rank, 1);
  s[size_t(normalize_axis(axis, int64_t(rank)))] = size;
  return g.reshape(f, s);
}

Node* scalar_scale(OpContext& ctx, Node* p, const char* what) { return scale_param(ctx, p, what, 0, 0, -1); }

// float32(acc) * factor, rounded half to even, + y_zp, saturated to t (MlasRequantizeOutput).
Node* requantize(OpContext& ctx, Node* acc, Node* factor, Node* y_zp, DType t) {
  Graph& g = ctx.g;
  if (!is_quant_int(t)) ctx.fail(std::string("output type ") + dtype_name(t) + " is not supported");
  Node* z = nullptr;
  if (y_zp) {
    if (numel(y_zp->shape) != 1) ctx.fail("y_zero_point must be a scalar");
    z = g.reshape(to_f32(g, y_zp), {});
  }
  return round_saturate(g, g.binary(Op::Mul, to_f32(g, acc), factor), z, t);
}

void check_int8(OpContext& ctx, Node* v, const char* what) {
  if (v->dtype != DType::U8 && v->dtype != DType::I8)
    ctx.fail(std::string(what) + " must be uint8 or int8, not " + dtype_name(v->dtype));
}

// sum_k(x - x_zp) * (w - w_zp) + bias over a conv window, int32 (N, M, O...).
Node* integer_conv(OpContext& ctx, Node* x, Node* x_zp, Node* w, Node* w_zp, Node* bias) {
  Graph& g = ctx.g;
  check_int8(ctx, x, "x");
  check_int8(ctx, w, "w");
  if (w->shape.size() < 3) ctx.fail("weight " + shape_str(w->shape) + " must have a kernel dim");
  if (bias && bias->dtype != DType::I32) ctx.fail("bias must be int32");
  const int64_t m = w->shape[0];
  std::optional<int64_t> zx = const_scalar_zp(g, x_zp);
  if (!zx || !g.is_constant(w) || !all_zero_const(g, w_zp)) {
    Node* xs = shifted_i32(ctx, x, x_zp, 1);
    Node* ws = shifted_i32(ctx, w, w_zp, 0);  // per output channel
    return conv_node(ctx, xs, ws, bias);
  }
  // A signed dot reads x as x - 128 (DotLayout::int8_signed; the padding zx as zx - 128):
  // sum_k((x - zx) * w) = sum_k((x - 128) * w) - (zx - 128) * sum_k(w). sum_k runs over the
  // ONNX weights; the zero weights the frontend pads a group with add nothing. sum_k runs
  // over the taps the conv computes (a tap reading only padding is left out: kept_weight).
  int64_t shift = 0;
  Node* kept = w;
  Node* acc = conv_node(ctx, x, w, nullptr, double(*zx), &shift, &kept);
  *zx -= shift;
  // bias - zx * sum_k(w) per output channel, one int32 constant.
  HostTensor wt = g.evaluate(kept);
  const int64_t per = m ? wt.numel() / m : 0;
  std::vector<int64_t> fix(size_t(m), 0);
  bool const_bias = !bias || g.is_constant(bias);
  HostTensor bt;
  if (bias && const_bias) {
    if (bias->shape != Shape{m}) ctx.fail("bias " + shape_str(bias->shape) + " should be [" + std::to_string(m) + "]");
    bt = g.evaluate(bias);
  }
  bool any = false;
  for (int64_t c = 0; c < m; ++c) {
    int64_t sum = 0;
    for (int64_t k = 0; k < per; ++k) sum += wt.get_int(c * per + k);
    fix[size_t(c)] = (bias && const_bias ? bt.get_int(c) : 0) - *zx * sum;
    any = any || fix[size_t(c)] != 0;
  }
  Shape bs(acc->shape.size(), 1);
  bs[1] = m;
  if (any) acc = g.binary(Op::Add, acc, g.weight(HostTensor::from_ints(DType::I32, bs, fix)));
  if (bias && !const_bias) {
    if (bias->shape != Shape{m}) ctx.fail("bias " + shape_str(bias->shape) + " should be [" + std::to_string(m) + "]");
    acc = g.binary(Op::Add, acc, g.reshape(bias, bs));
  }
  return acc;
}

// A zero point as a scalar int32 node (0 where there is none); null unless it is one element.
Node* scalar_zp_i32(Graph& g, Node* zp) {
  if (!zp) return g.constant(0.0, DType::I32);
  return numel(zp->shape) == 1 ? g.reshape(g.cast(zp, DType::I32), {}) : nullptr;
}

// sum_k (a - za)(b - zb) for two computed 8-bit operands with scalar zero points, on a target
// whose dot takes any bytes (DotLayout::int8_any_bytes): sum_k a b in the dot layout (matmul
// copies b into its panels) and the zero points' terms beside it,
//   - zb * sum_k a (per row) - za * sum_k b (per column) + K * za * zb.
// Subtracting the zero points first made both operands int32 tensors and the products int32
// multiplies (vpmulld): smart_turn's attention Q K^T (6 x 400 x 400 x 64) took 2.7 ms against
// its 384 -> 384 projections' 1.4 ms of as many multiply-adds. Null where that does not
// apply: the caller subtracts first.
Node* computed_8bit_matmul(OpContext& ctx, Node* a, Node* a_zp, Node* b, Node* b_zp) {
  Graph& g = ctx.g;
  if (a->shape.size() < 2 || b->shape.size() < 2) return nullptr;
  if ((a_zp && a_zp->dtype != a->dtype) || (b_zp && b_zp->dtype != b->dtype)) return nullptr;
  Node *za = scalar_zp_i32(g, a_zp), *zb = scalar_zp_i32(g, b_zp);
  const int64_t k = a->shape.back();
  // The raw sums reach K * 255^2 (int32 up to K = 33025); the terms' sum is the exact result.
  if (!za || !zb || k > (int64_t{1} << 15)) return nullptr;
  Node* acc = matmul(g, a, b, ctx.dots);
  if (acc->dtype != DType::I32 || acc->shape.size() < 2) return nullptr;
  // a's row sums from the int16 copy that matmul reads (the one reader of a: a's producer
  // then stores int16 alone, not bytes and a copy of them).
  Node* a_wide = stored_int16_copy(g, a);
  if (!a_wide) a_wide = a;
  if (!all_zero_const(g, b_zp)) acc = g.binary(Op::Sub, acc, g.binary(Op::Mul, g.reduce(Op::ReduceSum, g.cast(a_wide, DType::I32), {-1}), zb));
  if (!all_zero_const(g, a_zp)) acc = g.binary(Op::Sub, acc, g.binary(Op::Mul, g.reduce(Op::ReduceSum, g.cast(b, DType::I32), {-2}), za));
  if (!all_zero_const(g, a_zp) && !all_zero_const(g, b_zp))
    acc = g.binary(Op::Add, acc, g.binary(Op::Mul, g.binary(Op::Mul, za, zb), g.constant(double(k), DType::I32)));
  return acc;
}

}  // namespace

// sum_k (a - a_zp) * (b - b_zp), int32 (..., M, N): a_zp a scalar or per row of a, b_zp a
// scalar or per column of b.
Node* integer_matmul(OpContext& ctx, Node* a, Node* a_zp, Node* b, Node* b_zp) {
  Graph& g = ctx.g;
  check_int8(ctx, a, "A");
  check_int8(ctx, b, "B");
  std::optional<int64_t> za = const_scalar_zp(g, a_zp);
  // A zero point of a known at run time only (DynamicQuantizeLinear's) takes the same path
  // when it is a scalar: its term is computed at run time.
  const bool scalar_za = za || numel(a_zp->shape) == 1;
  if (!g.is_constant(b) && ctx.dots.int8_any_bytes)
    if (Node* acc = computed_8bit_matmul(ctx, a, a_zp, b, b_zp)) return acc;
  if (!scalar_za || b->shape.size() < 2 || a->shape.size() < 2 || !g.is_constant(b) || !all_zero_const(g, b_zp))
    return matmul(g, shifted_i32(ctx, a, a_zp, -2), shifted_i32(ctx, b, b_zp, -1));
  if (a_zp && a_zp->dtype != a->dtype) ctx.fail("zero point and input differ in type");
  int64_t shift = 0;  // a read as a - shift (a signed dot, as in integer_conv)
  Node* acc = matmul(g, a, b, ctx.dots, &shift);
  Node* colsum = nullptr;  // sum_k(b) per column: a constant (..., 1, N)
  auto column_sums = [&] { return colsum ? colsum : colsum = g.reduce(Op::ReduceSum, g.cast(b, DType::I32), {-2}); };
  if (!za) {  // - (a_zp - shift) * sum_k(b)
    Node* z = g.binary(Op::Sub, g.reshape(g.cast(a_zp, DType::I32), {}), g.constant(double(shift), DType::I32));
    return g.binary(Op::Sub, acc, g.binary(Op::Mul, column_sums(), z));
  }
  *za -= shift;
  if (*za != 0)  // - za * sum_k(b)
    acc = g.binary(Op::Add, acc, g.binary(Op::Mul, column_sums(), g.constant(double(-*za), DType::I32)));
  return acc;
}

namespace {

Outs lower_qlinear_conv(OpContext& ctx) {
  Graph& g = ctx.g;
  Node *x = ctx.input(0), *w = ctx.input(3), *y_zp = ctx.optional_input(7);
  Node* acc = integer_conv(ctx, x, ctx.optional_input(2), w, ctx.optional_input(5), ctx.optional_input(8));
  const size_t r = acc->shape.size();
  Node* factor = g.binary(Op::Div,
                          g.binary(Op::Mul, scalar_scale(ctx, ctx.input(1), "x_scale"),
                                   scale_param(ctx, ctx.input(4), "w_scale", r, 1, w->shape[0])),
                          scalar_scale(ctx, ctx.input(6), "y_scale"));
  return {requantize(ctx, acc, factor, y_zp, y_zp ? y_zp->dtype : x->dtype)};
}

Outs lower_qlinear_matmul(OpContext& ctx) {
  Graph& g = ctx.g;
  Node *a = ctx.input(0), *b = ctx.input(3), *y_zp = ctx.optional_input(7);
  Node* acc = integer_matmul(ctx, a, ctx.optional_input(2), b, ctx.optional_input(5));
  const size_t r = acc->shape.size();
  const int64_t rows = a->shape.size() >= 2 ? a->shape[a->shape.size() - 2] : -1;
  const int64_t cols = b->shape.size() >= 2 ? b->shape.back() : -1;
  Node* factor = g.binary(Op::Div,
                          g.binary(Op::Mul, scale_param(ctx, ctx.input(1), "a_scale", r, -2, rows),
                                   scale_param(ctx, ctx.input(4), "b_scale", r, -1, cols)),
                          scalar_scale(ctx, ctx.input(6), "y_scale"));
  return {requantize(ctx, acc, factor, y_zp, y_zp ? y_zp->dtype : a->dtype)};
}

// com.microsoft QGemm: alpha * (A' - a_zp)(B' - b_zp) + C (int32), requantized when y_scale
// is given, float otherwise (A' / B' transposed per transA / transB).
Outs lower_qgemm(OpContext& ctx) {
  Graph& g = ctx.g;
  Node *a = ctx.input(0), *b = ctx.input(3), *c = ctx.optional_input(6);
  Node *y_scale = ctx.optional_input(7), *y_zp = ctx.optional_input(8);
  if (a->shape.size() != 2 || b->shape.size() != 2) ctx.fail("A and B must be matrices");
  if (ctx.attr_int("transA", 0)) a = g.permute(a, {1, 0});
  if (ctx.attr_int("transB", 0)) b = g.permute(b, {1, 0});
  if (c && c->dtype != DType::I32) ctx.fail("C must be int32");
  Node* b_zp = ctx.optional_input(5);
  if (b_zp && numel(b_zp->shape) != 1 && !all_zero_const(g, b_zp))
    ctx.fail("a per-column b_zero_point that is not zero is not supported");
  if (b_zp && numel(b_zp->shape) != 1) b_zp = nullptr;  // all zero
  Node* acc = integer_matmul(ctx, a, ctx.optional_input(2), b, b_zp);
  if (c) acc = g.binary(Op::Add, acc, c);
  const float alpha = ctx.attr_float("alpha", 1.0f);
  Node* factor = g.binary(Op::Mul, g.constant(alpha, DType::F32), scalar_scale(ctx, ctx.input(1), "a_scale"));
  factor = g.binary(Op::Mul, factor, scale_param(ctx, ctx.input(4), "b_scale", 2, 1, b->shape[1]));
  if (!y_scale) {
    if (y_zp) ctx.fail("y_zero_point without y_scale");
    return {g.binary(Op::Mul, to_f32(g, acc), factor)};
  }
  factor = g.binary(Op::Div, factor, scalar_scale(ctx, y_scale, "y_scale"));
  return {requantize(ctx, acc, factor, y_zp, y_zp ? y_zp->dtype : DType::U8)};
}

// ---- com.microsoft QLinear ops (onnxruntime's quantizer writes them; the QDQ fusion makes
// them from DQ -> Add / Mul / Sigmoid / LeakyRelu / GlobalAveragePool / Concat -> Q) ----
//
// Each mirrors the float32 arithmetic of onnxruntime's CPU kernel for it (MLAS on x86-64), so
// that results match bit for bit; where a kernel uses a fused multiply-add the product and
// sum are formed in float64 (exact for 8-bit operands times a float32 ratio plus a float32
// term of the magnitudes that occur) and rounded once to float32, as the FMA does.

struct QuantParam {
  float scale;
  int64_t zp;
};

// Scale input i and zero point input i + 1 (optional: 0), constant scalars.
QuantParam const_qparam(OpContext& ctx, size_t i, const char* what) {
  Node *s = ctx.input(i), *z = ctx.optional_input(i + 1);
  if (!g_is_const_scalar(ctx.g, s) || (z && !g_is_const_scalar(ctx.g, z)))
    ctx.fail(std::string(what) + " scale and zero point must be constant scalars");
  if (s->dtype != DType::F32) ctx.fail(std::string(what) + " scale must be float32");
  return {float(ctx.g.evaluate(s).get(0)), z ? ctx.g.evaluate(z).get_int(0) : 0};
}

// table[idx] for an int32 index of x's shape. A 4-D index (NCHW) is flattened in NHWC
// order: the 8-bit operand's producer (a conv) then stores it channels-last in its own shape
// (through a merging reshape it would be stored flat, in NCHW order: EfficientNet-B0's
// depthwise convs before their SiLU), as QLinearAdd's operand table is.
Node* gather_in_nhwc_order(Graph& g, Node* table, Node* idx) {
  const bool nchw = idx->shape.size() == 4;
  if (nchw) idx = g.permute(idx, {0, 2, 3, 1});
  const Shape ishape = idx->shape;
  Node* y = g.reshape(g.gather(table, g.reshape(idx, {numel(ishape)}), 0), ishape);
  return nchw ? g.permute(y, {0, 3, 1, 2}) : y;
}

// y = table[x - lowest(x)] for an 8-bit x and a 256-entry table of type t.
Node* gather_table(Graph& g, Node* x, std::vector<int64_t> table, DType t) {
  const int64_t lo = int64_t(lowest_value(x->dtype));
  Node* idx = g.cast(x, DType::I32);
  if (lo != 0) idx = g.binary(Op::Sub, idx, g.constant(double(lo), DType::I32));
  // 3 spare entries: a vector gather may read each lane's byte as 4 (llvm_emit.cc); the index,
  // an 8-bit value, never reaches them.
  table.resize(259, table[255]);
  return gather_in_nhwc_order(g, g.weight(HostTensor::from_ints(t, {259}, table)), idx);
}

// onnxruntime's lookup table for an elementwise op on 8-bit values (QlinearBuildLookupTable):
// each of the 256 values dequantized in float32 (x_scale * (x - x_zp)), mapped by f, and
// quantized as MlasQuantizeLinear does (divide, clamp to the range less y_zp, round half to
// even, add y_zp). Returns y = table[x], a gather of a 256-entry constant (and 3 spare ones).
template <typename F>
Node* lookup_table(Graph& g, Node* x, QuantParam in, QuantParam out, DType t, F f) {
  const int64_t lo = int64_t(lowest_value(x->dtype));
  const float qlo = float(lowest_value(t) - double(out.zp)), qhi = float(highest_value(t) - double(out.zp));
  std::vector<int64_t> table(256);
  for (int64_t i = 0; i < 256; ++i) {
    float xf = in.scale * float(int32_t(lo + i) - int32_t(in.zp));
    float q = f(xf) / out.scale;
    q = std::min(std::max(q, qlo), qhi);
    table[size_t(i)] = int64_t(std::nearbyint(q)) + out.zp;
  }
  return gather_table(g, x, std::move(table), t);
}

// The 8-bit value v is a table of (gather_table's pattern): the byte x it looks up and the
// 256 entries, in x's order from its lowest value; nullopt for anything else.
struct ByteTable {
  Node* x;
  std::vector<int64_t> table;
};
std::optional<ByteTable> as_byte_table(Graph& g, Node* v) {
  auto unviewed = [](Node* n) {
    while (n->op == Op::Reshape || n->op == Op::Permute) n = n->srcs[0];
    return n;
  };
  Node* gather = unviewed(v);
  if (gather->op != Op::Gather || gather->srcs[0]->op != Op::Weight || gather->srcs[0]->shape != Shape{259}) return std::nullopt;
  // gather_table's views around the gather: none, or (4-D) to and from NHWC.
  const bool nhwc = v->op == Op::Permute;
  if (nhwc && (v->axes != std::vector<int64_t>{0, 3, 1, 2} || v->srcs[0]->op != Op::Reshape)) return std::nullopt;
  Node* idx = unviewed(gather->srcs[1]);
  if (nhwc != (gather->srcs[1]->op == Op::Reshape && gather->srcs[1]->srcs[0]->op == Op::Permute &&
               gather->srcs[1]->srcs[0]->axes == std::vector<int64_t>{0, 2, 3, 1}))
    return std::nullopt;
  int64_t offset = 0;
  if (idx->op == Op::Sub) {
    Node* c = idx->srcs[1];
    while (c->op == Op::Reshape || c->op == Op::Expand) c = c->srcs[0];
    if (c->op != Op::Const) return std::nullopt;
    offset = int64_t(c->value);
    idx = idx->srcs[0];
  }
  if (idx->op != Op::Cast || idx->dtype != DType::I32) return std::nullopt;
  Node* x = idx->srcs[0];
  while (x->op == Op::Reshape) x = x->srcs[0];
  if ((x->dtype != DType::U8 && x->dtype != DType::I8) || offset != int64_t(lowest_value(x->dtype))) return std::nullopt;
  HostTensor t = g.evaluate(gather->srcs[0]);
  ByteTable bt{x, std::vector<int64_t>(256)};
  for (int64_t i = 0; i < 256; ++i) bt.table[size_t(i)] = t.get_int(i);
  return bt;
}

DType check_8bit_same(OpContext& ctx, std::initializer_list<Node*> xs) {
  DType t = (*xs.begin())->dtype;
  for (Node* x : xs) {
    check_int8(ctx, x, "input");
    if (x->dtype != t) ctx.fail("inputs differ in type (uint8 / int8)");
  }
  return t;
}

// MlasQLinearAdd, AVX2 kernel (what onnxruntime runs on x86-64 with AVX2): with
// ra = sa / sc, rb = sb / sc and k = zc - (ra * za + rb * zb) in float32 (see below),
// c = round(fma(a, ra, fma(b, rb, k))). A broadcast b (the kernel's scalar-b form, which
// adds b * rb to k once) is the same expression: onnxruntime's build fuses that multiply-add
// too (a constant scalar b, as in a QDQ GELU's Add of 1, flips outputs otherwise).
Outs lower_qlinear_add(OpContext& ctx) {
  Graph& g = ctx.g;
  Node *a = ctx.input(0), *b = ctx.input(3);
  DType t = check_8bit_same(ctx, {a, b});
  QuantParam pa = const_qparam(ctx, 1, "A"), pb = const_qparam(ctx, 4, "B"), pc = const_qparam(ctx, 6, "C");
  const float ra = pa.scale / pc.scale, rb = pb.scale / pc.scale;
  // The compiler contracts ra * za + rb * zb into fma(ra, za, rb * zb) in onnxruntime's
  // build (measured: the unfused sum flips 3 of 50176 residual-add outputs of a QDQ
  // ResNet-18); float64 forms that FMA exactly (8-bit za).
  const float k = float(pc.zp) - float(double(ra) * double(pa.zp) + double(rb * float(pb.zp)));
  Shape out = broadcast_shapes(a->shape, b->shape);
  // a is the operand that covers the output; b the broadcast one, if any.
  if (a->shape != out && b->shape == out) std::swap(a, b);
  const float ra2 = a == ctx.input(0) ? ra : rb, rb2 = a == ctx.input(0) ? rb : ra;
  const int64_t lo = int64_t(lowest_value(t));
  // The byte-pair table (ImportOptions::byte_pair_tables): entry 256 * (a - lo) + (b - lo)
  // holds the output for that pair, computed as below (fma(a, ra2, fma(b, rb2, k)) in
  // float32, rounded half to even, saturated). Each operand's flattening follows its
  // NHWC order (that of its producer's stores), as the one-operand table's gather does.
  if (ctx.byte_pair_tables && a->shape == out && b->shape == out) {
    std::vector<double> pair_table(65536);
    for (int64_t i = 0; i < 256; ++i)
      for (int64_t j = 0; j < 256; ++j) {
        const float v = std::fma(float(lo + i), ra2, std::fma(float(lo + j), rb2, k));
        const double r = std::nearbyint(double(v));  // half to even (the default rounding)
        pair_table[size_t(i * 256 + j)] = std::min(std::max(r, lowest_value(t)), highest_value(t));
      }
    const bool nchw = out.size() == 4;
    auto index_of = [&](Node* v) {
      Node* i = g.cast(v, DType::I32);
      if (lo != 0) i = g.binary(Op::Sub, i, g.constant(double(lo), DType::I32));
      return nchw ? g.permute(i, {0, 2, 3, 1}) : i;
    };
    Node* idx = g.binary(Op::Add, g.binary(Op::Mul, index_of(a), g.constant(256, DType::I32)), index_of(b));
    const Shape ishape = idx->shape;
    Node* y = g.reshape(g.gather(g.weight(HostTensor::from_doubles(t, {65536}, pair_table)), g.reshape(idx, {numel(ishape)}), 0),
                        ishape);
    return {nchw ? g.permute(y, {0, 3, 1, 2}) : y};
  }
  auto f64 = [&](Node* v) { return g.cast(v, DType::F64); };
  auto c64 = [&](double v) { return g.constant(v, DType::F64); };
  // inner = fma(b, rb, k) is a function of one byte: a 256-entry float32 table (gathered
  // where b is read), so the producer of b stays an 8-bit requantizing kernel instead of
  // storing float32 (on Hexagon its epilogue would be scalar float, 3x the whole conv).
  std::vector<double> table(256);
  for (int64_t i = 0; i < 256; ++i) table[size_t(i)] = double(std::fma(float(lo + i), rb2, k));
  // Gathered at b flattened; a 4-D b (NCHW) flattened in NHWC order, the order its producer
  // (a conv) stores it in. Widened before the flattening: the scheduler stores b's producer
  // at a widening cast, in its own shape (through a merging reshape it would be stored flat).
  const bool nchw = b->shape.size() == 4;
  Node* idx = g.cast(b, DType::I32);
  if (lo != 0) idx = g.binary(Op::Sub, idx, g.constant(double(lo), DType::I32));
  if (nchw) idx = g.permute(idx, {0, 2, 3, 1});
  const Shape ishape = idx->shape;
  idx = g.reshape(idx, {numel(ishape)});
  Node* inner = g.reshape(g.gather(g.weight(HostTensor::from_doubles(DType::F32, {256}, table)), idx, 0), ishape);
  if (nchw) inner = g.permute(inner, {0, 3, 1, 2});
  Node* v = g.cast(g.binary(Op::Add, g.binary(Op::Mul, f64(a), c64(ra2)), g.cast(inner, DType::F64)), DType::F32);
  return {round_saturate(g, g.broadcast_to(v, out), nullptr, t)};
}

// MlasQLinearMul (SSE2 kernel): c = round(float32((a - za) * (b - zb)) * (sa * sb / sc) + zc),
// the product exact in int32, the multiply and add separate float32 operations.
Outs lower_qlinear_mul(OpContext& ctx) {
  Graph& g = ctx.g;
  Node *a = ctx.input(0), *b = ctx.input(3);
  DType t = check_8bit_same(ctx, {a, b});
  QuantParam pa = const_qparam(ctx, 1, "A"), pb = const_qparam(ctx, 4, "B"), pc = const_qparam(ctx, 6, "C");
  const float ratio = pa.scale * pb.scale / pc.scale;
  // x * table[x] (SiLU: x * Sigmoid(x), the sigmoid a QLinearSigmoid table): the product is
  // a function of the byte x alone, so one table of the kernel's arithmetic below. Formed in
  // float64 and rounded to float32 after each step: the product of two float32 values and
  // the sum of two are exact in float64, so each rounding gives the float32 operation's bits
  // (and no compiler contraction into an FMA can change them).
  if (a->shape == b->shape && a->dtype == b->dtype) {
    std::optional<ByteTable> ta = as_byte_table(g, a), tb = as_byte_table(g, b);
    Node *xa = ta ? ta->x : a, *xb = tb ? tb->x : b;
    while (xa->op == Op::Reshape) xa = xa->srcs[0];
    while (xb->op == Op::Reshape) xb = xb->srcs[0];
    if ((ta || tb) && xa == xb) {
      const int64_t lo = int64_t(lowest_value(t));
      std::vector<int64_t> table(256);
      for (int64_t i = 0; i < 256; ++i) {
        const int64_t va = ta ? ta->table[size_t(i)] : lo + i, vb = tb ? tb->table[size_t(i)] : lo + i;
        const float p = float((va - pa.zp) * (vb - pb.zp));  // exact: |p| < 2^24
        const float scaled = float(double(p) * double(ratio));
        const double v = std::nearbyint(double(float(double(scaled) + double(float(pc.zp)))));  // half to even
        table[size_t(i)] = int64_t(std::min(std::max(v, lowest_value(t)), highest_value(t)));
      }
      return {gather_table(g, g.reshape(xa, a->shape), std::move(table), t)};
    }
  }
  auto shifted = [&](Node* v, int64_t zp) {
    return g.binary(Op::Sub, g.cast(v, DType::I32), g.constant(double(zp), DType::I32));
  };
  // Where the target's 8-bit elementwise code is scalar (ImportOptions::byte_pair_tables:
  // Hexagon), a product with a small broadcast operand (a squeeze-excite scale, one byte per
  // channel) is, per element of that operand, a function of the other's byte: 256 entries
  // per small element, computed at run time by the arithmetic below (the same operations),
  // and each output a gather at 256 * (its small element) + byte. Where each entry serves 3
  // or more outputs (768 or more per small element: EfficientNet-B0's squeeze-excite Muls at
  // 112 x 112 to 28 x 28): under qemu-hexagon an entry takes about as many packets as an
  // output's float arithmetic (7.3) and a gathered output 4.0 (its 240-channel Mul at
  // 28 x 28: 1.20 M packets with the tables, 1.37 M without).
  const Shape out = broadcast_shapes(a->shape, b->shape);
  Node* full = a->shape == out ? a : b;
  Node* small = full == a ? b : a;
  const int64_t k = numel(small->shape);
  if (ctx.byte_pair_tables && full->shape == out && small->shape != out && k > 0 && numel(out) >= 768 * k) {
    const int64_t z_full = full == a ? pa.zp : pb.zp, z_small = full == a ? pb.zp : pa.zp;
    // A full operand that is itself a byte table of some x (a squeeze-excite Mul of a SiLU):
    // the tables of the composition, indexed by x's byte (one gather per output, not two).
    std::optional<ByteTable> inner = as_byte_table(g, full);
    if (inner) full = g.reshape(inner->x, full->shape);
    const int64_t lo = int64_t(lowest_value(full->dtype)), lo_t = int64_t(lowest_value(t));
    std::vector<int64_t> code_values(256);
    for (int64_t i = 0; i < 256; ++i) code_values[size_t(i)] = (inner ? inner->table[size_t(i)] : lo_t + i) - z_full;
    Node* codes = g.weight(HostTensor::from_ints(DType::I32, {1, 256}, code_values));  // full's value - its zero point
    Node* rows = g.reshape(shifted(small, z_small), {k, 1});
    Node* tp = g.binary(Op::Mul, rows, codes);  // [k, 256]
    Node* tv = g.binary(Op::Add, g.binary(Op::Mul, g.cast(tp, DType::F32), g.constant(ratio, DType::F32)),
                        g.constant(float(pc.zp), DType::F32));
    Node* table = g.reshape(round_saturate(g, tv, nullptr, t), {k * 256});
    Node* row_of = g.broadcast_to(g.reshape(iota(g, k, DType::I32), small->shape), out);
    Node* idx = g.binary(Op::Add, g.binary(Op::Mul, row_of, g.constant(256, DType::I32)), g.cast(full, DType::I32));
    if (lo != 0) idx = g.binary(Op::Sub, idx, g.constant(double(lo), DType::I32));
    return {gather_in_nhwc_order(g, table, idx)};
  }
  Node* p = g.binary(Op::Mul, shifted(a, pa.zp), shifted(b, pb.zp));
  Node* v = g.binary(Op::Add, g.binary(Op::Mul, g.cast(p, DType::F32), g.constant(ratio, DType::F32)),
                     g.constant(float(pc.zp), DType::F32));
  return {round_saturate(g, v, nullptr, t)};
}

// QLinearSigmoid: onnxruntime's table of MlasComputeLogistic (a rational approximation
// accurate to about an ulp); the table here uses the float64 logistic rounded to float32, so
// an entry can differ by one step where the quantized value is within an ulp of a tie.
Outs lower_qlinear_sigmoid(OpContext& ctx) {
  Node* x = ctx.input(0);
  check_int8(ctx, x, "X");
  QuantParam px = const_qparam(ctx, 1, "X"), py = const_qparam(ctx, 3, "Y");
  DType t = ctx.optional_input(4) ? ctx.input(4)->dtype : x->dtype;
  return {lookup_table(ctx.g, x, px, py, t, [](float v) { return float(1.0 / (1.0 + std::exp(-double(v)))); })};
}

Outs lower_qlinear_leaky_relu(OpContext& ctx) {
  Node* x = ctx.input(0);
  check_int8(ctx, x, "X");
  QuantParam px = const_qparam(ctx, 1, "X"), py = const_qparam(ctx, 3, "Y");
  const float alpha = ctx.attr_float("alpha", 0.01f);
  DType t = ctx.optional_input(4) ? ctx.input(4)->dtype : x->dtype;
  return {lookup_table(ctx.g, x, px, py, t, [alpha](float v) { return v >= 0 ? v : alpha * v; })};
}

// MlasQLinearGlobalAveragePool: acc = sum(x) - x_zp * n in int32, requantized with the
// float32 scale x_scale / (y_scale * n).
Outs lower_qlinear_global_average_pool(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  check_int8(ctx, x, "X");
  if (x->shape.size() < 3) ctx.fail("X must have spatial dims");
  const bool last = ctx.attr_int("channels_last", 0) != 0;
  QuantParam px = const_qparam(ctx, 1, "x"), py = const_qparam(ctx, 3, "y");
  std::vector<int64_t> axes;
  int64_t n = 1;
  const int64_t r = int64_t(x->shape.size());
  for (int64_t d = last ? 1 : 2; d < (last ? r - 1 : r); ++d) axes.push_back(d), n *= x->shape[size_t(d)];
  Node* acc = g.reduce(Op::ReduceSum, g.cast(x, DType::I32), axes);
  if (px.zp) acc = g.binary(Op::Add, acc, g.constant(double(-px.zp * n), DType::I32));
  const float scale = px.scale / (py.scale * float(n));
  Node* y_zp = ctx.optional_input(4);
  return {requantize(ctx, acc, g.constant(scale, DType::F32), y_zp, y_zp ? y_zp->dtype : x->dtype)};
}

// QLinearAveragePool (onnxruntime's qlinear_pool.cc): the input dequantized in float32
// (x_scale * (x - x_zp)), the window summed and divided by its tap count in float32 as
// AveragePool does, then quantized as round(y / y_scale + y_zp) (the zero point added
// before rounding), saturated.
Outs lower_qlinear_average_pool(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  check_int8(ctx, x, "X");
  if (ctx.attr_int("channels_last", 0)) ctx.fail("channels_last is not supported");
  QuantParam px = const_qparam(ctx, 1, "x"), py = const_qparam(ctx, 3, "y");
  Node* xd = g.binary(Op::Mul, g.constant(px.scale, DType::F32),
                      g.cast(g.binary(Op::Sub, g.cast(x, DType::I32), g.constant(double(px.zp), DType::I32)), DType::F32));
  OpContext pool(g, ctx.node, ctx.opset, {xd});
  Node* y = op_table().at("AveragePool")(pool)[0];
  Node* v = g.binary(Op::Add, g.binary(Op::Div, y, g.constant(py.scale, DType::F32)), g.constant(float(py.zp), DType::F32));
  Node* y_zp = ctx.optional_input(4);
  return {round_saturate(g, v, nullptr, y_zp ? y_zp->dtype : x->dtype)};
}

// QLinearSoftmax (onnxruntime's qlinear_softmax.cc, uint8, opset >= 13 semantics): a
// 256-entry float32 table of exp((i - 255 + shift) * x_scale) (shift keeps the sums finite),
// indexed by x + 255 - max(x) along the axis, summed in float32, and
// y = round(t * floor(1 / y_scale) / sum) + y_zp, at most 255.
Outs lower_qlinear_softmax(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  if (x->dtype != DType::U8) ctx.fail("only uint8 X is supported");
  if (ctx.attr_int("opset", 13) < 13) ctx.fail("opset < 13 (softmax over flattened dims) is not supported");
  if (x->shape.empty()) ctx.fail("X must have an axis");
  QuantParam px = const_qparam(ctx, 1, "X"), py = const_qparam(ctx, 3, "Y");
  const int64_t r = int64_t(x->shape.size()), axis = ctx.axis(ctx.attr_int("axis", -1), r);
  const int64_t d = x->shape[size_t(axis)];
  if (d < 1) ctx.fail("empty softmax axis");
  double shift = std::log(double(std::numeric_limits<float>::max() / float(d)));
  shift = std::max(0.0, shift - 5.0) / double(px.scale);
  std::vector<double> table(256);
  for (int i = 0; i < 256; ++i) table[size_t(i)] = double(float(std::exp((double(i) - 255 + shift) * double(px.scale))));
  Node* xi = g.cast(x, DType::I32);
  Node* xmax = g.reduce(Op::ReduceMax, xi, {axis});
  Node* idx = g.binary(Op::Add, g.binary(Op::Sub, xi, xmax), g.constant(255, DType::I32));
  Node* flat = g.reshape(idx, {numel(x->shape)});
  Node* t = g.reshape(g.gather(g.weight(HostTensor::from_doubles(DType::F32, {256}, table)), flat, 0), x->shape);
  Node* sum = g.reduce(Op::ReduceSum, t, {axis});
  const float y_scale = std::floor(1.0f / py.scale);
  Node* q = g.unary(Op::Round, g.binary(Op::Div, g.binary(Op::Mul, t, g.constant(y_scale, DType::F32)), sum));
  q = g.binary(Op::Min, g.binary(Op::Add, q, g.constant(double(py.zp), DType::F32)), g.constant(255, DType::F32));
  return {g.cast(q, DType::U8)};
}

// QLinearConcat: an input quantized as the output is copied; another is mapped through
// onnxruntime's dequantize -> quantize table.
Outs lower_qlinear_concat(OpContext& ctx) {
  Graph& g = ctx.g;
  QuantParam py = const_qparam(ctx, 0, "Y");
  if (ctx.num_inputs() < 5 || (ctx.num_inputs() - 2) % 3) ctx.fail("expects Y_scale, Y_zero_point, then (X, scale, zero point) triples");
  std::vector<Node*> parts;
  DType t = ctx.input(1)->dtype;
  for (size_t i = 2; i < ctx.num_inputs(); i += 3) {
    Node* x = ctx.input(i);
    check_int8(ctx, x, "X");
    if (x->dtype != t) ctx.fail("inputs differ in type (uint8 / int8)");
    QuantParam px = const_qparam(ctx, i + 1, "X");
    if (px.scale == py.scale && px.zp == py.zp) parts.push_back(x);
    else parts.push_back(lookup_table(g, x, px, py, t, [](float v) { return v; }));
  }
  int64_t axis = ctx.axis(ctx.attr_int("axis", 0), int64_t(parts[0]->shape.size()));
  return {parts.size() == 1 ? parts[0] : concat(g, parts, axis)};
}

}  // namespace

// uint8, the range always containing 0: scale = (max - min) / 255, zp = round(-min / scale).
DynamicQuantized dynamic_quantize_u8(Graph& g, Node* x) {
  std::vector<int64_t> all = iota_ints(0, int64_t(x->shape.size()));
  Node* zero = g.constant(0, DType::F32);
  Node* hi = g.binary(Op::Max, g.reshape(g.reduce(Op::ReduceMax, x, all), {}), zero);
  Node* lo = g.binary(Op::Min, g.reshape(reduce_min(g, x, all), {}), zero);
  Node* range = g.binary(Op::Sub, hi, lo);
  Node* same = g.binary(Op::CmpEq, hi, lo);
  Node* scale = g.binary(Op::Div, g.where(same, g.constant(1, DType::F32), range), g.constant(255, DType::F32));
  Node* zp = g.binary(Op::Sub, zero, g.binary(Op::Div, lo, scale));
  zp = g.unary(Op::Round, g.binary(Op::Min, g.binary(Op::Max, zp, zero), g.constant(255, DType::F32)));
  Node* y = round_saturate(g, g.binary(Op::Div, x, scale), zp, DType::U8);
  return {y, scale, g.cast(zp, DType::U8)};
}

void add_quant_ops(OpTable& t) {
  t["QuantizeLinear"] = lower_quantize_linear;
  t["DequantizeLinear"] = lower_dequantize_linear;
  t["DynamicQuantizeLinear"] = lower_dynamic_quantize_linear;
  t["MatMulInteger"] = lower_matmul_integer;
  t["ConvInteger"] = lower_conv_integer;
  t["QLinearMatMul"] = lower_qlinear_matmul;
  t["QLinearConv"] = lower_qlinear_conv;
  t["com.microsoft.QGemm"] = lower_qgemm;
  t["com.microsoft.QLinearAdd"] = lower_qlinear_add;
  t["com.microsoft.QLinearMul"] = lower_qlinear_mul;
  t["com.microsoft.QLinearSigmoid"] = lower_qlinear_sigmoid;
  t["com.microsoft.QLinearLeakyRelu"] = lower_qlinear_leaky_relu;
  t["com.microsoft.QLinearGlobalAveragePool"] = lower_qlinear_global_average_pool;
  t["com.microsoft.QLinearConcat"] = lower_qlinear_concat;
  t["com.microsoft.QLinearAveragePool"] = lower_qlinear_average_pool;
  t["com.microsoft.QLinearSoftmax"] = lower_qlinear_softmax;
}

}  // namespace edgec::onnx_frontend
