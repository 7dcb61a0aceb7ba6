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
  if (ctx.attr_string("approximate", "none") == "tanh") {
    // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    Node* x3 = g.binary(Op::Mul, g.binary(Op::Mul, x, x), x);
    Node* arg = g.binary(Op::Mul, c(std::sqrt(2.0 / M_PI)), g.binary(Op::Add, x, g.binary(Op::Mul, c(0.044715), x3)));
    inner = g.unary(Op::Tanh, arg);
  } else {  // 0.5 x (1 + erf(x / sqrt 2))
    inner = g.unary(Op::Erf, g.binary(Op::Mul, x, c(M_SQRT1_2)));
  }
  return {g.binary(Op::Mul, g.binary(Op::Mul, c(0.5), x), g.binary(Op::Add, c(1), inner))};
}

}  // namespace

void add_elementwise_ops(OpTable& t) {
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
