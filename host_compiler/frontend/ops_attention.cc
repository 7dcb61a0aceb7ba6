// ops_attention.cc — the opset-23 attention building blocks: Attention (MHA / GQA / MQA,
// 3-D or 4-D inputs, boolean or additive masks, is_causal, past key / value, softcap, the
// qk_matmul_output modes), RMSNormalization and RotaryEmbedding. All plain matmuls,
// reductions and elementwise math.
#include <cmath>

#include "frontend/lowering.h"

namespace edgec::onnx_frontend {
namespace {

using Outs = std::vector<Node*>;

// (B, S, H*D) -> (B, H, S, D); a 4-D input is returned as is.
Node* to_heads(OpContext& ctx, Node* x, int64_t heads, const char* what) {
  if (x->shape.size() == 4) return x;
  if (x->shape.size() != 3) ctx.fail(std::string(what) + " must be 3-D or 4-D");
  if (heads < 1 || x->shape[2] % heads)
    ctx.fail(std::string(what) + " " + shape_str(x->shape) + ": the number of heads (attribute) must divide the hidden size");
  Node* y = ctx.g.reshape(x, {x->shape[0], x->shape[1], heads, x->shape[2] / heads});
  return ctx.g.permute(y, {0, 2, 1, 3});
}

Outs lower_attention(OpContext& ctx) {
  Graph& g = ctx.g;
  Node *q = ctx.input(0), *k = ctx.input(1), *v = ctx.input(2);
  Node *mask = ctx.optional_input(3), *past_k = ctx.optional_input(4), *past_v = ctx.optional_input(5);
  if (ctx.optional_input(6)) ctx.fail("the nonpad_kv_seqlen input is not supported");
  if (!is_float(q->dtype) || k->dtype != q->dtype || v->dtype != q->dtype) ctx.fail("Q, K and V must be float tensors of one type");
  bool three_d = q->shape.size() == 3;
  Node* qh = to_heads(ctx, q, ctx.attr_int("q_num_heads", 0), "Q");
  Node* kh = to_heads(ctx, k, ctx.attr_int("kv_num_heads", 0), "K");
  Node* vh = to_heads(ctx, v, ctx.attr_int("kv_num_heads", 0), "V");
  if ((past_k == nullptr) != (past_v == nullptr)) ctx.fail("past_key and past_value come together");
  if (past_k) {
    kh = concat(g, {past_k, kh}, 2);
    vh = concat(g, {past_v, vh}, 2);
  }
  int64_t b = qh->shape[0], heads = qh->shape[1], sq = qh->shape[2], d = qh->shape[3];
  int64_t kv_heads = kh->shape[1], total = kh->shape[2];
  if (kh->shape[0] != b || kh->shape[3] != d || vh->shape[0] != b || vh->shape[1] != kv_heads || vh->shape[2] != total)
    ctx.fail("Q " + shape_str(qh->shape) + ", K " + shape_str(kh->shape) + " and V " + shape_str(vh->shape) + " do not fit");
  if (kv_heads < 1 || heads % kv_heads) ctx.fail("q_num_heads must be a multiple of kv_num_heads");
  Node *present_k = kh, *present_v = vh;
  if (heads != kv_heads) {  // each K / V head serves heads / kv_heads consecutive query heads
    int64_t group = heads / kv_heads;
    auto repeat = [&](Node* x) {
      Shape s = x->shape;
      Node* y = g.reshape(x, {s[0], s[1], 1, s[2], s[3]});
      y = g.expand(y, {s[0], s[1], group, s[2], s[3]});
      return g.reshape(y, {s[0], s[1] * group, s[2], s[3]});
    };
    kh = repeat(kh);
    vh = repeat(vh);
  }
  double scale = ctx.has_attr("scale") ? ctx.attr_float("scale", 1.0f) : 1.0 / std::sqrt(double(d));
  double softcap = ctx.attr_float("softcap", 0.0f);
  int64_t qk_mode = ctx.attr_int("qk_matmul_output_mode", 0);
  if (qk_mode < 0 || qk_mode > 3) ctx.fail("qk_matmul_output_mode must be 0..3, got " + std::to_string(qk_mode));
  DType t = q->dtype;
  DType sm = t;
  if (ctx.attr_int("softmax_precision", 0)) sm = dtype_from_onnx(int32_t(ctx.attr_int("softmax_precision", 0)));
  if (!is_float(sm)) ctx.fail("softmax_precision must be a float type");
  // As the ONNX function: Q and K each scaled by sqrt(scale); softcap; then the bias (mask,
  // causal) is added; softmax. qk_matmul_output: 0 raw, 1 after softcap, 2 after the bias,
  // 3 after softmax.
  Node* root = scalar(g, std::sqrt(scale), qh);
  Node* scores = matmul(g, g.binary(Op::Mul, qh, root), g.binary(Op::Mul, g.permute(kh, {0, 1, 3, 2}), root));  // (B, H, Sq, T)
  Node* qk[4] = {scores, nullptr, nullptr, nullptr};
  if (softcap > 0) {
    scores = g.binary(Op::Mul, g.unary(Op::Tanh, g.binary(Op::Div, scores, scalar(g, softcap, scores))), scalar(g, softcap, scores));
  }
  qk[1] = scores;
  if (mask) {
    if (mask->dtype == DType::Bool) {
      scores = g.where(mask, scores, scalar(g, -INFINITY, scores));
    } else {
      if (mask->dtype != t) ctx.fail("a float attn_mask must have the type of Q");
      scores = g.binary(Op::Add, scores, mask);
    }
    if (scores->shape != Shape{b, heads, sq, total}) ctx.fail("attn_mask " + shape_str(mask->shape) + " does not broadcast to the scores");
  }
  if (ctx.attr_int("is_causal", 0)) {  // query i attends to keys j <= i + the past's length
    int64_t past = total - sq;
    std::vector<int64_t> keep;
    for (int64_t i = 0; i < sq; ++i)
      for (int64_t j = 0; j < total; ++j) keep.push_back(j <= i + past);
    scores = g.where(g.weight(HostTensor::from_ints(DType::Bool, {sq, total}, keep)), scores, scalar(g, -INFINITY, scores));
  }
  qk[2] = scores;
  Node* s = g.cast(scores, sm);
  Node* e = g.unary(Op::Exp, g.binary(Op::Sub, s, g.reduce(Op::ReduceMax, s, {3})));
  e->exp_arg_nonpositive = true;
  Node* probs = g.cast(g.binary(Op::Div, e, g.reduce(Op::ReduceSum, e, {3})), t);
  qk[3] = probs;
  Node* y = matmul(g, probs, vh);  // (B, H, Sq, Dv)
  if (three_d) y = g.reshape(g.permute(y, {0, 2, 1, 3}), {b, sq, heads * y->shape[3]});
  return {y, present_k, present_v, qk[qk_mode]};
}

Outs lower_rms_norm(OpContext& ctx) {
  Graph& g = ctx.g;
  Node *x = ctx.input(0), *scale = ctx.input(1);
  if (!is_float(x->dtype)) ctx.fail("X must be a float tensor");
  int64_t rank = int64_t(x->shape.size()), axis = ctx.axis(ctx.attr_int("axis", -1), rank);
  DType compute = ctx.attr_int("stash_type", 1) == 1 && x->dtype == DType::F16 ? DType::F32 : x->dtype;
  Node* xc = g.cast(x, compute);
  Node* ms = reduce_mean(g, g.binary(Op::Mul, xc, xc), iota_ints(axis, rank));
  Node* inv = g.unary(Op::Recip, g.unary(Op::Sqrt, g.binary(Op::Add, ms, scalar(g, ctx.attr_float("epsilon", 1e-5f), ms))));
  return {g.binary(Op::Mul, g.cast(g.binary(Op::Mul, xc, inv), x->dtype), scale)};
}

Outs lower_rotary_embedding(OpContext& ctx) {
  Graph& g = ctx.g;
  Node *x = ctx.input(0), *cos = ctx.input(1), *sin = ctx.input(2), *pos = ctx.optional_input(3);
  if (!is_float(x->dtype)) ctx.fail("X must be a float tensor");
  bool four_d = x->shape.size() == 4;
  Node* xs;  // (B, S, H, D)
  if (four_d) {
    xs = g.permute(x, {0, 2, 1, 3});
  } else {
    if (x->shape.size() != 3) ctx.fail("X must be 3-D or 4-D");
    int64_t heads = ctx.attr_int("num_heads", 0);
    if (heads < 1 || x->shape[2] % heads) ctx.fail("num_heads is required for a 3-D input and must divide its hidden size");
    xs = g.reshape(x, {x->shape[0], x->shape[1], heads, x->shape[2] / heads});
  }
  int64_t b = xs->shape[0], s = xs->shape[1], h = xs->shape[2], d = xs->shape[3];
  int64_t rot = ctx.attr_int("rotary_embedding_dim", 0);
  if (rot == 0) rot = d;
  if (rot < 2 || rot > d || rot % 2) ctx.fail("rotary_embedding_dim must be even and at most the head size");
  int64_t half = rot / 2;
  bool interleaved = ctx.attr_int("interleaved", 0) != 0;
  // cos / sin (B, S, half), gathered by position_ids when given.
  auto table = [&](Node* c) {
    if (pos) {
      if (c->shape.size() != 2 || c->shape[1] != half) ctx.fail("with position_ids the caches must be (max_position, rotary_dim / 2)");
      if (pos->shape != Shape{b, s}) ctx.fail("position_ids must be (batch, sequence)");
      Node* t = g.expand(g.reshape(c, {1, 1, c->shape[0], half}), {b, s, c->shape[0], half});
      return g.reshape(select_along(g, t, 2, g.reshape(pos, {b, s, 1, 1})), {b, s, 1, half});
    }
    if (c->shape != Shape{b, s, half}) ctx.fail("without position_ids the caches must be (batch, sequence, rotary_dim / 2)");
    return g.reshape(c, {b, s, 1, half});
  };
  Node *cs = g.cast(table(cos), x->dtype), *sn = g.cast(table(sin), x->dtype);
  Node* xr = strided_slice(g, xs, 3, 0, rot, 1);
  Node *x1, *x2;
  if (interleaved) {
    x1 = strided_slice(g, xr, 3, 0, half, 2);
    x2 = strided_slice(g, xr, 3, 1, half, 2);
  } else {
    x1 = strided_slice(g, xr, 3, 0, half, 1);
    x2 = strided_slice(g, xr, 3, half, half, 1);
  }
  Node* re = g.binary(Op::Sub, g.binary(Op::Mul, cs, x1), g.binary(Op::Mul, sn, x2));
  Node* im = g.binary(Op::Add, g.binary(Op::Mul, sn, x1), g.binary(Op::Mul, cs, x2));
  Node* rotated;
  if (interleaved) {  // (.., half, 2) -> (.., rot)
    rotated = g.reshape(concat(g, {g.reshape(re, {b, s, h, half, 1}), g.reshape(im, {b, s, h, half, 1})}, 4), {b, s, h, rot});
  } else {
    rotated = concat(g, {re, im}, 3);
  }
  Node* y = rot == d ? rotated : concat(g, {rotated, strided_slice(g, xs, 3, rot, d - rot, 1)}, 3);
  return {four_d ? g.permute(y, {0, 2, 1, 3}) : g.reshape(y, x->shape)};
}

}  // namespace

void add_attention_ops(OpTable& t) {
  t["Attention"] = lower_attention;
  t["RMSNormalization"] = lower_rms_norm;
  t["RotaryEmbedding"] = lower_rotary_embedding;
}

}  // namespace edgec::onnx_frontend
