// ops_elementwise.cc — ONNX elementwise ops: arithmetic, activations, comparisons, logic, Cast.
#include <cmath>
#include <limits>

#include "frontend/lowering.h"

namespace edgec::onnx_frontend {
namespace {

using Outs = std::vector<Node*>;

template <Op op>
Outs lower_unary(OpContext& ctx) { return {ctx.g.unary(op, ctx.input(0))}; }

template <Op op>
Outs lower_binary(OpContext& ctx) { return {ctx.g.binary(op, ctx.input(0), ctx.input(1))}; }

Outs lower_identity(OpContext& ctx) { return {ctx.input(0)}; }

// Sum / Max / Min / Mean of any number of broadcast inputs.
Node* fold_variadic(OpContext& ctx, Op op) {
  Node* acc = ctx.input(0);
  for (size_t i = 1; i < ctx.num_inputs(); ++i) acc = ctx.g.binary(op, acc, ctx.input(i));
  return acc;
}
template <Op op>
Outs lower_variadic(OpContext& ctx) { return {fold_variadic(ctx, op)}; }
Outs lower_mean(OpContext& ctx) {
  Node* sum = fold_variadic(ctx, Op::Add);
  return {ctx.g.binary(Op::Div, sum, scalar(ctx.g, double(ctx.num_inputs()), sum))};
}

Outs lower_mod(OpContext& ctx) {
  Graph& g = ctx.g;
  Node *a = ctx.input(0), *b = ctx.input(1);
  Node* r = g.binary(Op::Mod, a, b);  // C semantics: sign of the dividend
  if (ctx.attr_int("fmod", 0)) return {r};
  // Python semantics (sign of the divisor): add b where r != 0 and r, b differ in sign.
  Node* zero = scalar(g, 0, r);
  Node* differ = g.binary(Op::Xor, g.binary(Op::CmpLt, r, zero), g.binary(Op::CmpLt, b, zero));
  Node* fix = g.binary(Op::And, g.unary(Op::Not, g.binary(Op::CmpEq, r, zero)), differ);
  return {g.where(fix, g.binary(Op::Add, r, b), r)};
}

Outs lower_pow(OpContext& ctx) {
  Graph& g = ctx.g;
  Node *x = ctx.input(0), *y = ctx.input(1);
  // x^2 with a constant 2 is x * x (the same correctly rounded square): LayerNorm's variance
  // as torch exports it, Pow(x - mean, 2). The general Pow is an exp and a log per element:
  // ConvNeXt's variance kernels ran at 1 GFLOP/s, 4% of the model.
  if (is_float(x->dtype) && g.is_constant(y)) {
    HostTensor e = ctx.const_input(1);
    if (e.numel() == 1 && e.get(0) == 2.0 && broadcast_shapes(x->shape, y->shape) == x->shape)
      return {g.binary(Op::Mul, x, x)};
  }
  // Pow is a float primitive: integer bases go through f64 (exact for results below 2^53).
  DType t = is_float(x->dtype) ? x->dtype : DType::F64;
  Node* r = g.binary(Op::Pow, g.cast(x, t), g.cast(y, t));
  return {g.cast(r, x->dtype)};
}

// Compare ops: a < b, a > b = b < a, <= / >= also true on equality.
template <bool swap, bool or_equal>
Outs lower_compare(OpContext& ctx) {
  Graph& g = ctx.g;
  Node *a = ctx.input(swap ? 1 : 0), *b = ctx.input(swap ? 0 : 1);
  Node* lt = g.binary(Op::CmpLt, a, b);
  return {or_equal ? g.binary(Op::Or, lt, g.binary(Op::CmpEq, a, b)) : lt};
}

Outs lower_where(OpContext& ctx) { return {ctx.g.where(ctx.input(0), ctx.input(1), ctx.input(2))}; }

Outs lower_cast(OpContext& ctx) {
  return {ctx.g.cast(ctx.input(0), dtype_from_onnx(int32_t(ctx.attr_int("to", 0))))};
}
Outs lower_cast_like(OpContext& ctx) { return {ctx.g.cast(ctx.input(0), ctx.input(1)->dtype)}; }

// ---- activations ----

Node* sigmoid(Graph& g, Node* x) {
  return g.unary(Op::Recip, g.binary(Op::Add, scalar(g, 1, x), g.unary(Op::Exp, g.unary(Op::Neg, x))));
}
Outs lower_sigmoid(OpContext& ctx) { return {sigmoid(ctx.g, ctx.input(0))}; }

Outs lower_relu(OpContext& ctx) {
  Node* x = ctx.input(0);
  return {ctx.g.binary(Op::Max, x, scalar(ctx.g, 0, x))};
}

// x where x >= 0 (or the condition), else negative_part.
Node* where_negative(Graph& g, Node* x, Node* negative_part) {
  return g.where(g.binary(Op::CmpLt, x, scalar(g, 0, x)), negative_part, x);
}

Outs lower_leaky_relu(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  return {where_negative(g, x, g.binary(Op::Mul, x, scalar(g, ctx.attr_float("alpha", 0.01f), x)))};
}

Outs lower_prelu(OpContext& ctx) {
  Node* x = ctx.input(0);
  return {where_negative(ctx.g, x, ctx.g.binary(Op::Mul, x, ctx.input(1)))};
}

Outs lower_elu(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  Node* em1 = g.binary(Op::Sub, g.unary(Op::Exp, x), scalar(g, 1, x));
  return {where_negative(g, x, g.binary(Op::Mul, em1, scalar(g, ctx.attr_float("alpha", 1.0f), x)))};
}

Outs lower_selu(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  float alpha = ctx.attr_float("alpha", 1.67326319217681884765625f);
  float gamma = ctx.attr_float("gamma", 1.05070102214813232421875f);
  Node* neg = g.binary(Op::Sub, g.binary(Op::Mul, scalar(g, alpha, x), g.unary(Op::Exp, x)), scalar(g, alpha, x));
  Node* pos_cond = g.binary(Op::CmpLt, scalar(g, 0, x), x);
  return {g.binary(Op::Mul, scalar(g, gamma, x), g.where(pos_cond, x, neg))};
}

Outs lower_thresholded_relu(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  Node* above = g.binary(Op::CmpLt, scalar(g, ctx.attr_float("alpha", 1.0f), x), x);
  return {g.where(above, x, scalar(g, 0, x))};
}

Node* clip(Graph& g, Node* x, Node* lo, Node* hi) {
  if (lo) x = g.binary(Op::Max, x, lo);
  if (hi) x = g.binary(Op::Min, x, hi);
  return x;
}

Node* hard_sigmoid(Graph& g, Node* x, double alpha, double beta) {
  Node* lin = g.binary(Op::Add, g.binary(Op::Mul, x, scalar(g, alpha, x)), scalar(g, beta, x));
  return clip(g, lin, scalar(g, 0, x), scalar(g, 1, x));
}
Outs lower_hard_sigmoid(OpContext& ctx) {
  return {hard_sigmoid(ctx.g, ctx.input(0), ctx.attr_float("alpha", 0.2f), ctx.attr_float("beta", 0.5f))};
}
Outs lower_hard_swish(OpContext& ctx) {
  Node* x = ctx.input(0);
  return {ctx.g.binary(Op::Mul, x, hard_sigmoid(ctx.g, x, 1.0 / 6.0, 0.5))};
}

Outs lower_softplus(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  return {g.unary(Op::Log, g.binary(Op::Add, g.unary(Op::Exp, x), scalar(g, 1, x)))};
}

Outs lower_softsign(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  return {g.binary(Op::Div, x, g.binary(Op::Add, scalar(g, 1, x), g.unary(Op::Abs, x)))};
}

Outs lower_sign(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  Node* zero = scalar(g, 0, x);
  Node* neg_or_zero = g.where(g.binary(Op::CmpLt, x, zero), scalar(g, -1, x), zero);
  return {g.where(g.binary(Op::CmpLt, zero, x), scalar(g, 1, x), neg_or_zero)};
}

Outs lower_tan(OpContext& ctx) {
  Node* x = ctx.input(0);
  return {ctx.g.binary(Op::Div, ctx.g.unary(Op::Sin, x), ctx.g.unary(Op::Cos, x))};
}

Outs lower_isnan(OpContext& ctx) {
  Node* x = ctx.input(0);
  return {ctx.g.unary(Op::Not, ctx.g.binary(Op::CmpEq, x, x))};
}

Outs lower_isinf(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  Node* pos = g.binary(Op::CmpEq, x, scalar(g, INFINITY, x));
  Node* neg = g.binary(Op::CmpEq, x, scalar(g, -INFINITY, x));
  bool want_pos = ctx.attr_int("detect_positive", 1), want_neg = ctx.attr_int("detect_negative", 1);
  if (want_pos && want_neg) return {g.binary(Op::Or, pos, neg)};
  if (want_pos) return {pos};
  if (want_neg) return {neg};
  return {g.constant(0, DType::Bool, x->shape)};
}

Outs lower_clip(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  if (ctx.opset < 11) {  // bounds are float attributes
    float lo = ctx.attr_float("min", -std::numeric_limits<float>::max());
    float hi = ctx.attr_float("max", std::numeric_limits<float>::max());
    return {clip(g, x, scalar(g, lo, x), scalar(g, hi, x))};
  }
  return {clip(g, x, ctx.optional_input(1), ctx.optional_input(2))};
}

Outs lower_gelu(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  auto c = [&](double v) { return scalar(g, v, x); };
  Node* inner;
  std::string approximate = ctx.attr_string("approximate", "none");
  if (approximate != "none" && approximate != "tanh") ctx.fail("unknown approximate '" + approximate + "'");
  if (approximate == "tanh") {
    // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    Node* x3 = g.binary(Op::Mul, g.binary(Op::Mul, x, x), x);
    Node* arg = g.binary(Op::Mul, c(std::sqrt(2.0 / M_PI)), g.binary(Op::Add, x, g.binary(Op::Mul, c(0.044715), x3)));
    inner = g.unary(Op::Tanh, arg);
  } else {  // 0.5 x (1 + erf(x / sqrt 2))
    inner = g.unary(Op::Erf, g.binary(Op::Mul, x, c(M_SQRT1_2)));
  }
  return {g.binary(Op::Mul, g.binary(Op::Mul, c(0.5), x), g.binary(Op::Add, c(1), inner))};
}

// ---- inverse trigonometric and hyperbolic functions, from Exp / Log / Sqrt / Div ----

Node* float_input(OpContext& ctx) {
  Node* x = ctx.input(0);
  if (!is_float(x->dtype)) ctx.fail(std::string("input must be a float tensor, got ") + dtype_name(x->dtype));
  return x;
}

// atan by Cephes' atanf: range reduction to |x| <= tan(pi/8), then an odd polynomial
// (relative error ~1e-7). Handles +-inf (-> +-pi/2) and NaN.
Node* atan(Graph& g, Node* x) {
  auto c = [&](double v) { return scalar(g, v, x); };
  Node* neg = g.binary(Op::CmpLt, x, c(0));
  Node* a = g.unary(Op::Abs, x);
  Node* big = g.binary(Op::CmpLt, c(2.414213562373095), a);      // |x| > tan(3pi/8)
  Node* mid = g.binary(Op::CmpLt, c(0.4142135623730950), a);     // |x| > tan(pi/8)
  Node* r_big = g.unary(Op::Neg, g.unary(Op::Recip, a));
  Node* r_mid = g.binary(Op::Div, g.binary(Op::Sub, a, c(1)), g.binary(Op::Add, a, c(1)));
  Node* r = g.where(big, r_big, g.where(mid, r_mid, a));
  Node* y0 = g.where(big, c(M_PI_2), g.where(mid, c(M_PI_4), c(0)));
  Node* z = g.binary(Op::Mul, r, r);
  Node* poly = c(8.05374449538e-2);
  poly = g.binary(Op::Sub, g.binary(Op::Mul, poly, z), c(1.38776856032e-1));
  poly = g.binary(Op::Add, g.binary(Op::Mul, poly, z), c(1.99777106478e-1));
  poly = g.binary(Op::Sub, g.binary(Op::Mul, poly, z), c(3.33329491539e-1));
  Node* y = g.binary(Op::Add, g.binary(Op::Mul, g.binary(Op::Mul, poly, z), r), r);
  y = g.binary(Op::Add, y, y0);
  return g.where(neg, g.unary(Op::Neg, y), y);
}
Outs lower_atan(OpContext& ctx) { return {atan(ctx.g, float_input(ctx))}; }

// asin x = atan(x / sqrt((1 - x)(1 + x))): +-1 gives +-pi/2, |x| > 1 NaN.
Outs lower_asin(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = float_input(ctx);
  Node* one = scalar(g, 1, x);
  Node* root = g.unary(Op::Sqrt, g.binary(Op::Mul, g.binary(Op::Sub, one, x), g.binary(Op::Add, one, x)));
  return {atan(g, g.binary(Op::Div, x, root))};
}

// acos x = 2 atan(sqrt((1 - x) / (1 + x))), accurate near both ends.
Outs lower_acos(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = float_input(ctx);
  Node* one = scalar(g, 1, x);
  Node* t = g.unary(Op::Sqrt, g.binary(Op::Div, g.binary(Op::Sub, one, x), g.binary(Op::Add, one, x)));
  return {g.binary(Op::Mul, scalar(g, 2, x), atan(g, t))};
}

Outs lower_sinh(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = float_input(ctx);
  Node* d = g.binary(Op::Sub, g.unary(Op::Exp, x), g.unary(Op::Exp, g.unary(Op::Neg, x)));
  return {g.binary(Op::Mul, d, scalar(g, 0.5, x))};
}

Outs lower_cosh(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = float_input(ctx);
  Node* s = g.binary(Op::Add, g.unary(Op::Exp, x), g.unary(Op::Exp, g.unary(Op::Neg, x)));
  return {g.binary(Op::Mul, s, scalar(g, 0.5, x))};
}

// asinh x = sign(x) log(|x| + sqrt(x^2 + 1)).
Outs lower_asinh(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = float_input(ctx);
  Node* a = g.unary(Op::Abs, x);
  Node* y = g.unary(Op::Log, g.binary(Op::Add, a, g.unary(Op::Sqrt, g.binary(Op::Add, g.binary(Op::Mul, x, x), scalar(g, 1, x)))));
  return {g.where(g.binary(Op::CmpLt, x, scalar(g, 0, x)), g.unary(Op::Neg, y), y)};
}

// acosh x = log(x + sqrt((x - 1)(x + 1))).
Outs lower_acosh(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = float_input(ctx);
  Node* one = scalar(g, 1, x);
  Node* root = g.unary(Op::Sqrt, g.binary(Op::Mul, g.binary(Op::Sub, x, one), g.binary(Op::Add, x, one)));
  return {g.unary(Op::Log, g.binary(Op::Add, x, root))};
}

// atanh x = log((1 + x) / (1 - x)) / 2.
Outs lower_atanh(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = float_input(ctx);
  Node* one = scalar(g, 1, x);
  Node* q = g.binary(Op::Div, g.binary(Op::Add, one, x), g.binary(Op::Sub, one, x));
  return {g.binary(Op::Mul, g.unary(Op::Log, q), scalar(g, 0.5, x))};
}

// ---- more activations ----

Outs lower_celu(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = float_input(ctx);
  double alpha = ctx.attr_float("alpha", 1.0f);
  if (alpha == 0) ctx.fail("alpha must not be 0");
  Node* em1 = g.binary(Op::Sub, g.unary(Op::Exp, g.binary(Op::Div, x, scalar(g, alpha, x))), scalar(g, 1, x));
  Node* neg = g.binary(Op::Min, scalar(g, 0, x), g.binary(Op::Mul, scalar(g, alpha, x), em1));
  return {g.binary(Op::Add, g.binary(Op::Max, scalar(g, 0, x), x), neg)};
}

// x * tanh(softplus(x)).
Outs lower_mish(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = float_input(ctx);
  Node* softplus = g.unary(Op::Log, g.binary(Op::Add, g.unary(Op::Exp, x), scalar(g, 1, x)));
  return {g.binary(Op::Mul, x, g.unary(Op::Tanh, softplus))};
}

// x < -lambd: x + bias; x > lambd: x - bias; else 0.
Outs lower_shrink(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  if (x->dtype == DType::Bool) ctx.fail("input must be numeric");
  double lambd = ctx.attr_float("lambd", 0.5f), bias = ctx.attr_float("bias", 0.0f);
  Node* below = g.binary(Op::CmpLt, x, scalar(g, -lambd, x));
  Node* above = g.binary(Op::CmpLt, scalar(g, lambd, x), x);
  Node* up = g.binary(Op::Add, x, scalar(g, bias, x));
  Node* down = g.binary(Op::Sub, x, scalar(g, bias, x));
  return {g.where(below, up, g.where(above, down, scalar(g, 0, x)))};
}

// ---- bitwise ----

// ~x = -x - 1 in two's complement (also for unsigned types, modulo 2^bits).
Outs lower_bitwise_not(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  if (x->dtype == DType::Bool) return {g.unary(Op::Not, x)};
  if (is_float(x->dtype)) ctx.fail("input must be an integer tensor");
  return {g.binary(Op::Sub, g.unary(Op::Neg, x), scalar(g, 1, x))};
}

// x << y = x * 2^y and x >> y = x / 2^y (unsigned, 0 once y >= bits); 2^y is built from
// the bits of y so that it is exact.
Outs lower_bit_shift(OpContext& ctx) {
  Graph& g = ctx.g;
  Node *x = ctx.input(0), *y = ctx.input(1);
  if (is_float(x->dtype) || is_signed_int(x->dtype) || x->dtype == DType::Bool || y->dtype != x->dtype)
    ctx.fail("inputs must be unsigned integers of one type");
  std::string direction = ctx.attr_string("direction", "");
  if (direction != "LEFT" && direction != "RIGHT") ctx.fail("direction must be LEFT or RIGHT, got '" + direction + "'");
  int bits = 8 * int(dtype_size(x->dtype));
  Node* power = nullptr;
  for (int b = 0; (1 << b) < bits; ++b) {
    Node* set = g.unary(Op::Not, g.binary(Op::CmpEq, g.binary(Op::And, y, scalar(g, double(1 << b), y)), scalar(g, 0, y)));
    Node* factor = g.where(set, scalar(g, std::ldexp(1.0, 1 << b), y), scalar(g, 1, y));
    power = power ? g.binary(Op::Mul, power, factor) : factor;
  }
  Node* in_range = g.binary(Op::CmpLt, y, scalar(g, double(bits), y));
  Node* shifted = g.binary(direction == "LEFT" ? Op::Mul : Op::Div, x, power);
  return {g.where(in_range, shifted, scalar(g, 0, x))};
}

}  // namespace

void add_elementwise_ops(OpTable& t) {
  t["Atan"] = lower_atan;
  t["Asin"] = lower_asin;
  t["Acos"] = lower_acos;
  t["Sinh"] = lower_sinh;
  t["Cosh"] = lower_cosh;
  t["Asinh"] = lower_asinh;
  t["Acosh"] = lower_acosh;
  t["Atanh"] = lower_atanh;
  t["Celu"] = lower_celu;
  t["Mish"] = lower_mish;
  t["Shrink"] = lower_shrink;
  t["BitwiseNot"] = lower_bitwise_not;
  t["BitShift"] = lower_bit_shift;
  t["Identity"] = lower_identity;
  t["Neg"] = lower_unary<Op::Neg>;
  t["Abs"] = lower_unary<Op::Abs>;
  t["Exp"] = lower_unary<Op::Exp>;
  t["Log"] = lower_unary<Op::Log>;
  t["Sqrt"] = lower_unary<Op::Sqrt>;
  t["Reciprocal"] = lower_unary<Op::Recip>;
  t["Tanh"] = lower_unary<Op::Tanh>;
  t["Sin"] = lower_unary<Op::Sin>;
  t["Cos"] = lower_unary<Op::Cos>;
  t["Tan"] = lower_tan;
  t["Floor"] = lower_unary<Op::Floor>;
  t["Ceil"] = lower_unary<Op::Ceil>;
  t["Round"] = lower_unary<Op::Round>;
  t["Erf"] = lower_unary<Op::Erf>;
  t["Not"] = lower_unary<Op::Not>;
  t["Add"] = lower_binary<Op::Add>;
  t["Sub"] = lower_binary<Op::Sub>;
  t["Mul"] = lower_binary<Op::Mul>;
  t["Div"] = lower_binary<Op::Div>;  // a true division for floats, truncating for integers
  t["Mod"] = lower_mod;
  t["Pow"] = lower_pow;
  t["And"] = lower_binary<Op::And>;
  t["Or"] = lower_binary<Op::Or>;
  t["Xor"] = lower_binary<Op::Xor>;
  t["BitwiseAnd"] = lower_binary<Op::And>;
  t["BitwiseOr"] = lower_binary<Op::Or>;
  t["BitwiseXor"] = lower_binary<Op::Xor>;
  t["Equal"] = lower_binary<Op::CmpEq>;
  t["Less"] = lower_compare<false, false>;
  t["Greater"] = lower_compare<true, false>;
  t["LessOrEqual"] = lower_compare<false, true>;
  t["GreaterOrEqual"] = lower_compare<true, true>;
  t["Where"] = lower_where;
  t["Max"] = lower_variadic<Op::Max>;
  t["Min"] = lower_variadic<Op::Min>;
  t["Sum"] = lower_variadic<Op::Add>;
  t["Mean"] = lower_mean;
  t["Cast"] = lower_cast;
  t["CastLike"] = lower_cast_like;
  t["Sigmoid"] = lower_sigmoid;
  t["Relu"] = lower_relu;
  t["LeakyRelu"] = lower_leaky_relu;
  t["PRelu"] = lower_prelu;
  t["Elu"] = lower_elu;
  t["Selu"] = lower_selu;
  t["ThresholdedRelu"] = lower_thresholded_relu;
  t["HardSigmoid"] = lower_hard_sigmoid;
  t["HardSwish"] = lower_hard_swish;
  t["Softplus"] = lower_softplus;
  t["Softsign"] = lower_softsign;
  t["Sign"] = lower_sign;
  t["IsNaN"] = lower_isnan;
  t["IsInf"] = lower_isinf;
  t["Clip"] = lower_clip;
  t["Gelu"] = lower_gelu;
}

}  // namespace edgec::onnx_frontend
