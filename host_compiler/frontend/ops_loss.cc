// ops_loss.cc — NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: plain tensor math
// (a one-hot selection of the target class, weights, a reduction).
#include "frontend/lowering.h"

namespace edgec::onnx_frontend {
namespace {

using Outs = std::vector<Node*>;

// input (N, C, d...) of log-probabilities, target (N, d...) class indices. Returns the loss
// after `reduction` (none: (N, d...); sum / mean: a scalar).
Node* nll_loss(OpContext& ctx, Node* input, Node* target, Node* weight) {
  Graph& g = ctx.g;
  if (input->shape.size() < 2) ctx.fail("input must be (N, C, ...)");
  if (is_float(target->dtype) || target->dtype == DType::Bool) ctx.fail("target must hold integer class indices");
  Shape ts = input->shape;
  ts.erase(ts.begin() + 1);
  if (target->shape != ts) ctx.fail("target " + shape_str(target->shape) + " should be " + shape_str(ts));
  int64_t c = input->shape[1];
  size_t rank = input->shape.size();
  std::string reduction = ctx.attr_string("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean") ctx.fail("unsupported reduction '" + reduction + "'");
  Shape t1 = ts;
  t1.insert(t1.begin() + 1, 1);
  Node* tgt = g.reshape(target, t1);  // (N, 1, d...)
  Node* mask = g.binary(Op::CmpEq, tgt, iota(g, c, target->dtype, rank, 1));  // (N, C, d...)
  if (ctx.has_attr("ignore_index")) {
    Node* keep = g.unary(Op::Not, g.binary(Op::CmpEq, tgt, scalar(g, double(ctx.attr_int("ignore_index", 0)), tgt)));
    mask = g.binary(Op::And, mask, keep);
  }
  Node* zero = scalar(g, 0, input);
  Node* picked = g.reduce(Op::ReduceSum, g.where(mask, input, zero), {1});  // (N, 1, d...)
  Node* w;  // the weight of each element's target class (0 where ignored)
  if (weight) {
    if (weight->shape != Shape{c} || weight->dtype != input->dtype) ctx.fail("weight must be (C) of the input's dtype");
    Shape ws(rank, 1);
    ws[1] = c;
    w = g.reduce(Op::ReduceSum, g.where(mask, g.reshape(weight, ws), zero), {1});
  } else {
    w = g.cast(g.reduce(Op::ReduceMax, mask, {1}), input->dtype);
  }
  Node* loss = g.reshape(g.unary(Op::Neg, g.binary(Op::Mul, picked, w)), ts);
  if (reduction == "none") return loss;
  std::vector<int64_t> all = iota_ints(0, int64_t(ts.size()));
  Node* total = g.reshape(g.reduce(Op::ReduceSum, loss, all), {});
  if (reduction == "sum") return total;
  Node* wsum = g.reshape(g.reduce(Op::ReduceSum, g.reshape(w, ts), all), {});
  return g.binary(Op::Div, total, wsum);
}

Outs lower_nll_loss(OpContext& ctx) { return {nll_loss(ctx, ctx.input(0), ctx.input(1), ctx.optional_input(2))}; }

Outs lower_softmax_cross_entropy(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* scores = ctx.input(0);
  if (scores->shape.size() < 2) ctx.fail("scores must be (N, C, ...)");
  // log_softmax over the class axis.
  Node* shifted = g.binary(Op::Sub, scores, g.reduce(Op::ReduceMax, scores, {1}));
  Node* e = g.unary(Op::Exp, shifted);
  e->exp_arg_nonpositive = true;
  Node* log_prob = g.binary(Op::Sub, shifted, g.unary(Op::Log, g.reduce(Op::ReduceSum, e, {1})));
  return {nll_loss(ctx, log_prob, ctx.input(1), ctx.optional_input(2)), log_prob};
}

}  // namespace

void add_loss_ops(OpTable& t) {
  t["NegativeLogLikelihoodLoss"] = lower_nll_loss;
  t["SoftmaxCrossEntropyLoss"] = lower_softmax_cross_entropy;
}

}  // namespace edgec::onnx_frontend
