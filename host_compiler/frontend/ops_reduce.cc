// ops_reduce.cc — ONNX reductions (on ReduceSum / ReduceMax) and ArgMax / ArgMin.

#include "frontend/lowering.h"

namespace edgec::onnx_frontend {
namespace {

using Outs = std::vector<Node*>;

// The reduction body over normalized axes, reduced dims kept as 1.
using ReduceBody = Node* (*)(Graph&, Node*, const std::vector<int64_t>&);

Node* sum(Graph& g, Node* x, const std::vector<int64_t>& axes) { return g.reduce(Op::ReduceSum, x, axes); }
Node* max(Graph& g, Node* x, const std::vector<int64_t>& axes) { return g.reduce(Op::ReduceMax, x, axes); }
Node* sum_square(Graph& g, Node* x, const std::vector<int64_t>& axes) { return sum(g, g.binary(Op::Mul, x, x), axes); }
Node* l1(Graph& g, Node* x, const std::vector<int64_t>& axes) { return sum(g, g.unary(Op::Abs, x), axes); }
Node* l2(Graph& g, Node* x, const std::vector<int64_t>& axes) { return g.unary(Op::Sqrt, sum_square(g, x, axes)); }
Node* log_sum(Graph& g, Node* x, const std::vector<int64_t>& axes) { return g.unary(Op::Log, sum(g, x, axes)); }
Node* log_sum_exp(Graph& g, Node* x, const std::vector<int64_t>& axes) {
  return g.unary(Op::Log, sum(g, g.unary(Op::Exp, x), axes));
}

// Common ONNX reduce semantics: axes from the attribute (before `axes_input_since`) or
// input 1; empty axes reduce everything unless noop_with_empty_axes; keepdims.
template <ReduceBody body, int64_t axes_input_since>
Outs lower_reduce(OpContext& ctx) {
  Node* x = ctx.input(0);
  int64_t rank = int64_t(x->shape.size());
  std::vector<int64_t> axes = ctx.ints_from_input_or_attr(1, "axes", axes_input_since).value_or(std::vector<int64_t>{});
  if (axes.empty()) {
    if (ctx.attr_int("noop_with_empty_axes", 0)) return {x};
    axes = iota_ints(0, rank);
  }
  for (int64_t& a : axes) a = ctx.axis(a, rank);
  Node* y = body(ctx.g, x, axes);
  if (ctx.attr_int("keepdims", 1)) return {y};
  return {squeeze_axes(ctx.g, y, axes)};
}

// Index of the first (or last) extreme element along one axis, as int64.
template <bool is_max>
Outs lower_arg(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  int64_t rank = int64_t(x->shape.size());
  int64_t axis = ctx.axis(ctx.attr_int("axis", 0), rank), dim = x->shape[axis];
  Node* extreme = is_max ? g.reduce(Op::ReduceMax, x, {axis}) : reduce_min(g, x, {axis});
  Node* hit = g.binary(Op::CmpEq, x, extreme);
  std::vector<int64_t> positions = iota_ints(0, dim);
  Shape iota_shape(size_t(rank), 1);
  iota_shape[axis] = dim;
  Node* iota = g.weight(HostTensor::from_ints(DType::I64, iota_shape, positions));
  Node* index;
  if (ctx.attr_int("select_last_index", 0))
    index = g.reduce(Op::ReduceMax, g.where(hit, iota, g.constant(-1, DType::I64)), {axis});
  else
    index = reduce_min(g, g.where(hit, iota, g.constant(double(dim), DType::I64)), {axis});
  if (ctx.attr_int("keepdims", 1)) return {index};
  return {squeeze_axes(g, index, {axis})};
}

}  // namespace

void add_reduce_ops(OpTable& t) {
  t["ReduceSum"] = lower_reduce<sum, 13>;
  t["ReduceMean"] = lower_reduce<reduce_mean, 18>;
  t["ReduceMax"] = lower_reduce<max, 18>;
  t["ReduceMin"] = lower_reduce<reduce_min, 18>;
  t["ReduceSumSquare"] = lower_reduce<sum_square, 18>;
  t["ReduceL1"] = lower_reduce<l1, 18>;
  t["ReduceL2"] = lower_reduce<l2, 18>;
  t["ReduceLogSum"] = lower_reduce<log_sum, 18>;
  t["ReduceLogSumExp"] = lower_reduce<log_sum_exp, 18>;
  t["ReduceProd"] = lower_reduce<reduce_prod, 18>;
  t["ArgMax"] = lower_arg<true>;
  t["ArgMin"] = lower_arg<false>;
}

}  // namespace edgec::onnx_frontend
