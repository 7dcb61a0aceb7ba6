// ops_ml.cc — operators of the ai.onnx.ml domain that are plain tensor math:
// ArrayFeatureExtractor, Binarizer and TreeEnsemble (opset 5).
//
// A TreeEnsemble's trees are constant: every interior node becomes one comparison of its
// feature column, every leaf the AND of the comparisons on its path, and each target the
// aggregate of the reached leaves' weights (one leaf per tree is reached).
#include <cmath>
#include <functional>
#include <set>

#include "frontend/lowering.h"

namespace edgec::onnx_frontend {
namespace {

using Outs = std::vector<Node*>;

// data (..., F), indices (n) -> (..., n); a 1-D input gives (1, n), as onnxruntime does.
Outs lower_array_feature_extractor(OpContext& ctx) {
  Graph& g = ctx.g;
  Node *x = ctx.input(0), *idx = ctx.input(1);
  if (is_float(idx->dtype) || idx->dtype == DType::Bool) ctx.fail("indices must be integers");
  if (x->shape.empty()) ctx.fail("input must have rank >= 1");
  if (x->shape.size() == 1) x = g.reshape(x, {1, x->shape[0]});
  int64_t n = numel(idx->shape), f = x->shape.back();
  size_t r = x->shape.size();
  Shape ts = x->shape;
  ts.insert(ts.end() - 1, 1);
  Shape full = x->shape;
  full.back() = n;
  full.push_back(f);
  Node* table = g.expand(g.reshape(x, ts), full);  // (..., n, F)
  Shape is(r - 1, 1);
  is.push_back(n);
  is.push_back(1);
  Node* y = select_along(g, table, int64_t(r), g.reshape(wrap_negative(g, idx, f), is));
  full.pop_back();
  return {g.reshape(y, full)};
}

Outs lower_binarizer(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  if (x->dtype == DType::Bool) ctx.fail("input must be numeric");
  Node* above = g.binary(Op::CmpLt, scalar(g, ctx.attr_float("threshold", 0.0f), x), x);
  return {g.cast(above, x->dtype)};
}

std::vector<double> tensor_attr_doubles(OpContext& ctx, const char* name) {
  const auto* a = ctx.attr(name);
  if (!a) return {};
  if (a->has_t()) return tensor_from_proto(a->t()).to_doubles();
  std::vector<double> v(a->floats().begin(), a->floats().end());
  return v;
}

Outs lower_tree_ensemble(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  if (!is_float(x->dtype) || x->shape.size() != 2) ctx.fail("X must be a 2-D float tensor");
  int64_t n = x->shape[0], features = x->shape[1];
  std::vector<double> splits = tensor_attr_doubles(ctx, "nodes_splits");
  std::vector<int64_t> feat = ctx.attr_ints("nodes_featureids"), true_ids = ctx.attr_ints("nodes_truenodeids"),
                       false_ids = ctx.attr_ints("nodes_falsenodeids"), true_leaf = ctx.attr_ints("nodes_trueleafs"),
                       false_leaf = ctx.attr_ints("nodes_falseleafs"), leaf_target = ctx.attr_ints("leaf_targetids"),
                       roots = ctx.attr_ints("tree_roots"), missing_true = ctx.attr_ints("nodes_missing_value_tracks_true");
  std::vector<int64_t> modes;
  if (const auto* a = ctx.attr("nodes_modes")) modes = tensor_from_proto(a->t()).to_ints();
  std::vector<double> leaf_w = tensor_attr_doubles(ctx, "leaf_weights"), members = tensor_attr_doubles(ctx, "membership_values");
  int64_t targets = ctx.attr_int("n_targets", 0), aggregate = ctx.attr_int("aggregate_function", 1);
  if (ctx.attr_int("post_transform", 0) != 0) ctx.fail("post_transform other than NONE is not supported");
  if (aggregate < 0 || aggregate > 3) ctx.fail("unknown aggregate_function " + std::to_string(aggregate));
  size_t nodes = splits.size();
  if (feat.size() != nodes || modes.size() != nodes || true_ids.size() != nodes || false_ids.size() != nodes ||
      true_leaf.size() != nodes || false_leaf.size() != nodes || (!missing_true.empty() && missing_true.size() != nodes))
    ctx.fail("the nodes_* attributes differ in length");
  if (leaf_target.size() != leaf_w.size()) ctx.fail("leaf_targetids and leaf_weights differ in length");
  if (targets < 1) ctx.fail("n_targets must be positive");
  // Set members of each MEMBER node, in node order, NaN-separated.
  std::vector<std::vector<double>> sets(nodes);
  size_t next = 0;
  for (size_t i = 0; i < nodes; ++i) {
    if (modes[i] != 6) continue;
    while (next < members.size() && !std::isnan(members[next])) sets[i].push_back(members[next++]);
    if (next >= members.size()) ctx.fail("membership_values has fewer sets than MEMBER nodes");
    ++next;
  }
  std::vector<Node*> cond(nodes, nullptr);
  auto condition = [&](size_t i) {
    if (cond[i]) return cond[i];
    if (feat[i] < 0 || feat[i] >= features) ctx.fail("feature id out of range");
    Node* v = g.reshape(strided_slice(g, x, 1, feat[i], 1, 1), {n});
    Node* s = scalar(g, splits[i], v);
    Node* c = nullptr;
    switch (modes[i]) {
      case 0: c = g.binary(Op::Or, g.binary(Op::CmpLt, v, s), g.binary(Op::CmpEq, v, s)); break;  // <=
      case 1: c = g.binary(Op::CmpLt, v, s); break;
      case 2: c = g.binary(Op::Or, g.binary(Op::CmpLt, s, v), g.binary(Op::CmpEq, v, s)); break;  // >=
      case 3: c = g.binary(Op::CmpLt, s, v); break;
      case 4: c = g.binary(Op::CmpEq, v, s); break;
      case 5: c = g.unary(Op::Not, g.binary(Op::CmpEq, v, s)); break;
      case 6:
        c = g.constant(0, DType::Bool, {n});
        for (double m : sets[i]) c = g.binary(Op::Or, c, g.binary(Op::CmpEq, v, scalar(g, m, v)));
        break;
      default: ctx.fail("unknown node mode " + std::to_string(modes[i]));
    }
    if (!missing_true.empty() && missing_true[i]) c = g.binary(Op::Or, c, g.unary(Op::Not, g.binary(Op::CmpEq, v, v)));
    return cond[i] = c;
  };
  // Per target: the reached leaves' weights.
  std::vector<Node*> acc(size_t(targets), nullptr);
  // MIN / MAX start from the largest / lowest finite value of the dtype (as the reference).
  double max_finite = x->dtype == DType::F64 ? 1.7976931348623157e308 : x->dtype == DType::F16 ? 65504.0 : 3.4028234663852886e38;
  double init = aggregate == 2 ? max_finite : aggregate == 3 ? -max_finite : 0.0;
  std::function<void(int64_t, bool, Node*, int)> walk = [&](int64_t id, bool is_leaf, Node* reach, int depth) {
    if (depth > 64) ctx.fail("tree deeper than 64 levels (or cyclic)");
    if (is_leaf) {
      if (id < 0 || size_t(id) >= leaf_w.size()) ctx.fail("leaf id out of range");
      int64_t t = leaf_target[size_t(id)];
      if (t < 0 || t >= targets) ctx.fail("leaf target out of range");
      Node* w = scalar(g, leaf_w[size_t(id)], x);
      Node*& a = acc[size_t(t)];
      if (aggregate <= 1) {
        Node* term = reach ? g.where(reach, w, scalar(g, 0, x)) : g.expand(g.reshape(w, {1}), {n});
        a = a ? g.binary(Op::Add, a, term) : term;
      } else {
        Node* term = reach ? g.where(reach, w, scalar(g, init, x)) : g.expand(g.reshape(w, {1}), {n});
        Op op = aggregate == 2 ? Op::Min : Op::Max;
        a = a ? g.binary(op, a, term) : g.binary(op, term, scalar(g, init, x));
      }
      return;
    }
    if (id < 0 || size_t(id) >= nodes) ctx.fail("node id out of range");
    Node* c = condition(size_t(id));
    Node* t_reach = reach ? g.binary(Op::And, reach, c) : c;
    Node* f_reach = reach ? g.binary(Op::And, reach, g.unary(Op::Not, c)) : g.unary(Op::Not, c);
    walk(true_ids[size_t(id)], true_leaf[size_t(id)] != 0, t_reach, depth + 1);
    walk(false_ids[size_t(id)], false_leaf[size_t(id)] != 0, f_reach, depth + 1);
  };
  for (int64_t root : roots) {
    if (root < 0 || size_t(root) >= nodes) ctx.fail("tree root out of range");
    bool leaf = true_leaf[size_t(root)] && false_leaf[size_t(root)] && true_ids[size_t(root)] == false_ids[size_t(root)];
    if (leaf) walk(true_ids[size_t(root)], true, nullptr, 0);
    else walk(root, false, nullptr, 0);
  }
  std::vector<Node*> cols;
  for (int64_t t = 0; t < targets; ++t) {
    Node* a = acc[size_t(t)];
    if (!a) a = g.constant(aggregate >= 2 ? init : 0.0, x->dtype, {n});
    if (aggregate == 0) a = g.binary(Op::Div, a, scalar(g, double(roots.size()), x));
    cols.push_back(g.reshape(a, {n, 1}));
  }
  return {concat(g, cols, 1)};
}

}  // namespace

void add_ml_ops(OpTable& t) {
  t["ai.onnx.ml.ArrayFeatureExtractor"] = lower_array_feature_extractor;
  t["ai.onnx.ml.Binarizer"] = lower_binarizer;
  t["ai.onnx.ml.TreeEnsemble"] = lower_tree_ensemble;
}

}  // namespace edgec::onnx_frontend
