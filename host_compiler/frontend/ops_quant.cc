// ops_quant.cc — integer quantization: QuantizeLinear, DequantizeLinear,
// DynamicQuantizeLinear, MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv
// (int8 / uint8 / int16 / uint16; per-tensor, per-axis and blocked scales).
//
// Float math runs in float32; rounding is half to even (Round) and results saturate to the
// target type with an explicit clamp before the Cast. Integer products accumulate in int32.
#include <cmath>

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

// uint8, the range always containing 0: scale = (max - min) / 255, zp = round(-min / scale).
Outs lower_dynamic_quantize_linear(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  if (x->dtype != DType::F32) ctx.fail("input must be float32");
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

Outs lower_matmul_integer(OpContext& ctx) {
  Node *a = ctx.input(0), *b = ctx.input(1);
  Node* as = shifted_i32(ctx, a, ctx.optional_input(2), -2);  // per row of A
  Node* bs = shifted_i32(ctx, b, ctx.optional_input(3), -1);  // per column of B
  return {matmul(ctx.g, as, bs)};
}

Outs lower_conv_integer(OpContext& ctx) {
  Node *x = ctx.input(0), *w = ctx.input(1);
  Node* xs = shifted_i32(ctx, x, ctx.optional_input(2), 1);
  Node* ws = shifted_i32(ctx, w, ctx.optional_input(3), 0);  // per output channel
  return {conv_node(ctx, xs, ws, nullptr)};
}

Outs lower_qlinear_matmul(OpContext& ctx) {
  Graph& g = ctx.g;
  Node *a = ctx.input(0), *b = ctx.input(3), *y_zp = ctx.optional_input(7);
  Node* as = shifted_i32(ctx, a, ctx.optional_input(2), -2);
  Node* bs = shifted_i32(ctx, b, ctx.optional_input(5), -1);
  Node* c = to_f32(g, matmul(g, as, bs));
  auto param = [&](size_t i, int64_t axis, Node* like) {
    Node* p = to_f32(g, ctx.input(i));
    if (numel(p->shape) == 1) return g.reshape(p, {});
    if (p->shape.size() != 1) ctx.fail("scales must be scalars or 1-D");
    size_t r = like->shape.size();
    Shape s(r, 1);
    s[size_t(normalize_axis(axis, int64_t(r)))] = p->shape[0];
    return g.reshape(p, s);
  };
  Node* factor = g.binary(Op::Div, g.binary(Op::Mul, param(1, -2, c), param(4, -1, c)), param(6, -1, c));
  DType t = y_zp ? y_zp->dtype : a->dtype;
  Node* z = y_zp ? g.reshape(to_f32(g, y_zp), {}) : nullptr;
  if (y_zp && numel(y_zp->shape) != 1) ctx.fail("y_zero_point must be a scalar");
  return {round_saturate(g, g.binary(Op::Mul, c, factor), z, t)};
}

Outs lower_qlinear_conv(OpContext& ctx) {
  Graph& g = ctx.g;
  Node *x = ctx.input(0), *w = ctx.input(3), *y_zp = ctx.optional_input(7), *bias = ctx.optional_input(8);
  Node* xs = shifted_i32(ctx, x, ctx.optional_input(2), 1);
  Node* ws = shifted_i32(ctx, w, ctx.optional_input(5), 0);
  if (bias && bias->dtype != DType::I32) ctx.fail("bias must be int32");
  Node* c = to_f32(g, conv_node(ctx, xs, ws, bias));  // (N, M, ...)
  size_t r = c->shape.size();
  auto scalar_param = [&](size_t i) {
    Node* p = ctx.input(i);
    if (numel(p->shape) != 1) ctx.fail("input " + std::to_string(i) + " must be a scalar");
    return g.reshape(to_f32(g, p), {});
  };
  Node* w_scale = to_f32(g, ctx.input(4));
  if (numel(w_scale->shape) == 1) {
    w_scale = g.reshape(w_scale, {});
  } else {
    Shape s(r, 1);
    s[1] = numel(w_scale->shape);
    w_scale = g.reshape(w_scale, s);
  }
  Node* factor = g.binary(Op::Div, g.binary(Op::Mul, scalar_param(1), w_scale), scalar_param(6));
  DType t = y_zp ? y_zp->dtype : x->dtype;
  Node* z = y_zp ? scalar_param(7) : nullptr;
  return {round_saturate(g, g.binary(Op::Mul, c, factor), z, t)};
}

}  // namespace

void add_quant_ops(OpTable& t) {
  t["QuantizeLinear"] = lower_quantize_linear;
  t["DequantizeLinear"] = lower_dequantize_linear;
  t["DynamicQuantizeLinear"] = lower_dynamic_quantize_linear;
  t["MatMulInteger"] = lower_matmul_integer;
  t["ConvInteger"] = lower_conv_integer;
  t["QLinearMatMul"] = lower_qlinear_matmul;
  t["QLinearConv"] = lower_qlinear_conv;
}

}  // namespace edgec::onnx_frontend
