// qdq_fusion.cc — QDQ models (DequantizeLinear -> op -> QuantizeLinear, as onnxruntime's
// quantize_static writes them) rewritten into the integer operator forms that onnxruntime
// itself runs them as, before lowering:
//
//   DQ(x), DQ(w const)[, DQ(bias int32 const)] -> Conv   -> Q   =>  QLinearConv
//   DQ(a), DQ(b)                                -> MatMul -> Q   =>  QLinearMatMul
//   DQ(a), DQ(b const)[, DQ(c int32 const)]     -> Gemm   -> Q   =>  com.microsoft QGemm
//   DQ(x) -> MaxPool / Reshape / Flatten / Transpose / Squeeze / Unsqueeze -> Q, with the same
//   scale and zero point on both sides                           =>  the op on the quantized values
//   DQ(...) -> Add / Mul / Sigmoid / LeakyRelu / (Global)AveragePool / Concat / Softmax -> Q
//                                                    =>  com.microsoft QLinearAdd, QLinearMul, ...
//
// Why: imported node by node, a QDQ model runs in float32 (the weights stored dequantized)
// and rounds differently from onnxruntime, whose QDQ transformers make the same groups
// (onnxruntime/core/optimizer/qdq_transformer: QDQSelectorActionTransformer, with the
// DropQDQ rules for the data-movement ops and MaxPool). The int32 bias of a fused group is
// used as stored, as onnxruntime does (its dequantize scale, x_scale * w_scale by
// construction, is not read). Groups that do not match exactly are left alone and lower
// node by node.
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "frontend/lowering.h"

namespace edgec::onnx_frontend {
namespace {

constexpr const char* kMsDomain = "com.microsoft";

bool default_domain(const onnx::NodeProto& n) { return n.domain().empty() || n.domain() == "ai.onnx"; }
bool is_op(const onnx::NodeProto& n, const char* op) { return default_domain(n) && n.op_type() == op; }

int64_t proto_numel(const onnx::TensorProto& t) {
  int64_t n = 1;
  for (int64_t d : t.dims()) n *= d;
  return n;
}

const onnx::AttributeProto* find_attr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}
int64_t attr_i(const onnx::NodeProto& n, const std::string& name, int64_t def) {
  const auto* a = find_attr(n, name);
  return a ? a->i() : def;
}
float attr_f(const onnx::NodeProto& n, const std::string& name, float def) {
  const auto* a = find_attr(n, name);
  return a ? a->f() : def;
}

struct GraphIndex {
  const onnx::GraphProto& g;
  std::unordered_map<std::string, int> producer;
  std::unordered_map<std::string, std::vector<int>> consumers;
  std::unordered_map<std::string, const onnx::TensorProto*> inits;
  std::unordered_set<std::string> outputs, inputs;

  explicit GraphIndex(const onnx::GraphProto& graph) : g(graph) {
    for (const auto& t : g.initializer()) inits[t.name()] = &t;
    for (const auto& vi : g.input()) inputs.insert(vi.name());
    for (const auto& vi : g.output()) outputs.insert(vi.name());
    for (int k = 0; k < g.node_size(); ++k) {
      for (const auto& o : g.node(k).output()) producer[o] = k;
      for (const auto& i : g.node(k).input())
        if (!i.empty()) consumers[i].push_back(k);
    }
  }
  // An initializer that a graph input of the same name does not override.
  const onnx::TensorProto* init(const std::string& name) const {
    auto it = inits.find(name);
    return it == inits.end() || inputs.count(name) ? nullptr : it->second;
  }
  // The `op` node that produces `name`, through Identity nodes (exporters share equal
  // tensors, a bias, through Identity; onnxruntime removes them before its QDQ fusion).
  const onnx::NodeProto* produced_by(const std::string& name, const char* op) const {
    auto it = producer.find(name);
    for (int hops = 0; it != producer.end() && is_op(g.node(it->second), "Identity") && hops < 64; ++hops) {
      if (g.node(it->second).input_size() < 1) return nullptr;  // malformed; the lowering says so
      it = producer.find(g.node(it->second).input(0));
    }
    if (it == producer.end() || !is_op(g.node(it->second), op)) return nullptr;
    return &g.node(it->second);
  }
  // The QuantizeLinear that is the only consumer of `value`, which is no graph output.
  std::optional<int> only_q_consumer(const std::string& value) const {
    auto it = consumers.find(value);
    if (outputs.count(value) || it == consumers.end() || it->second.size() != 1) return std::nullopt;
    if (!is_op(g.node(it->second[0]), "QuantizeLinear")) return std::nullopt;
    return it->second[0];
  }
};

// The inputs of a (De)QuantizeLinear: value, scale, zero point; scale and zero point stored
// initializers (the zero point present: its type is the quantized type), per-tensor unless
// `channel_axis` >= 0 allows one scale per entry of that axis of a `rank`-D tensor.
struct QParams {
  std::string value, scale, zp;
};
std::optional<QParams> qparams(const GraphIndex& ix, const onnx::NodeProto& n, int64_t channel_axis = -1, int64_t rank = 0) {
  if (n.input_size() < 3 || n.input(2).empty() || attr_i(n, "block_size", 0) != 0) return std::nullopt;
  const onnx::TensorProto *s = ix.init(n.input(1)), *z = ix.init(n.input(2));
  if (!s || !z || s->data_type() != onnx::TensorProto::FLOAT) return std::nullopt;
  if (z->data_type() != onnx::TensorProto::UINT8 && z->data_type() != onnx::TensorProto::INT8 &&
      z->data_type() != onnx::TensorProto::INT32)
    return std::nullopt;
  if (proto_numel(*s) != proto_numel(*z)) return std::nullopt;
  if (proto_numel(*s) != 1) {
    if (channel_axis < 0 || s->dims_size() != 1) return std::nullopt;
    int64_t axis = attr_i(n, "axis", 1);
    if (axis < 0) axis += rank;
    if (axis != channel_axis) return std::nullopt;
  } else if (s->dims_size() > 1) {
    return std::nullopt;
  }
  return QParams{n.input(0), n.input(1), n.input(2)};
}

// Two constant quantization parameters with the same bytes and type.
bool same_const(const GraphIndex& ix, const std::string& a, const std::string& b) {
  if (a == b) return true;
  const onnx::TensorProto *ta = ix.init(a), *tb = ix.init(b);
  if (!ta || !tb || ta->data_type() != tb->data_type() || proto_numel(*ta) != 1 || proto_numel(*tb) != 1) return false;
  HostTensor ha = tensor_from_proto(*ta), hb = tensor_from_proto(*tb);
  return ha.bytes == hb.bytes;
}

struct Rewrite {
  int at;                    // the op node, replaced by `node`
  int q;                     // the QuantizeLinear, removed
  onnx::NodeProto node;
};

void copy_attrs(const onnx::NodeProto& from, onnx::NodeProto& to, std::initializer_list<const char*> skip = {}) {
  for (const auto& a : from.attribute()) {
    bool drop = false;
    for (const char* s : skip) drop = drop || a.name() == s;
    if (!drop) *to.add_attribute() = a;
  }
}

// DQ(x) / DQ(w) [/ DQ(bias)] -> Conv / MatMul / Gemm -> Q.
std::optional<Rewrite> match_product(const GraphIndex& ix, int k) {
  const onnx::NodeProto& n = ix.g.node(k);
  const bool conv = is_op(n, "Conv"), mm = is_op(n, "MatMul"), gemm = is_op(n, "Gemm");
  if (!(conv || mm || gemm) || n.input_size() < 2 || n.output_size() != 1) return std::nullopt;
  auto q = ix.only_q_consumer(n.output(0));
  if (!q) return std::nullopt;
  const onnx::NodeProto& qn = ix.g.node(*q);
  const onnx::NodeProto* dx = ix.produced_by(n.input(0), "DequantizeLinear");
  const onnx::NodeProto* dw = ix.produced_by(n.input(1), "DequantizeLinear");
  if (!dx || !dw) return std::nullopt;
  const onnx::TensorProto* w = ix.init(dw->input(0));
  if ((conv || gemm) && !w) return std::nullopt;
  int64_t w_rank = w ? w->dims_size() : 0;
  int64_t w_axis = conv ? 0 : gemm ? (attr_i(n, "transB", 0) ? 0 : 1) : (w ? w_rank - 1 : -1);
  auto px = qparams(ix, *dx), pw = qparams(ix, *dw, w_axis, w_rank), py = qparams(ix, qn);
  if (!px || !pw || !py) return std::nullopt;
  if (ix.init(px->zp)->data_type() == onnx::TensorProto::INT32 || ix.init(py->zp)->data_type() == onnx::TensorProto::INT32 ||
      ix.init(pw->zp)->data_type() == onnx::TensorProto::INT32)
    return std::nullopt;
  std::string bias;
  if ((conv || gemm) && n.input_size() > 2 && !n.input(2).empty()) {
    const onnx::NodeProto* db = ix.produced_by(n.input(2), "DequantizeLinear");
    const onnx::TensorProto* b = db ? ix.init(db->input(0)) : nullptr;
    if (!b || b->data_type() != onnx::TensorProto::INT32) return std::nullopt;
    if (gemm && attr_f(n, "beta", 1.0f) != 1.0f) return std::nullopt;
    bias = db->input(0);
  }
  Rewrite r{k, *q, {}};
  onnx::NodeProto& f = r.node;
  f.set_name(n.name());
  f.add_output(qn.output(0));
  if (conv || mm) {
    f.set_op_type(conv ? "QLinearConv" : "QLinearMatMul");
    for (const std::string& s : {px->value, px->scale, px->zp, pw->value, pw->scale, pw->zp, py->scale, py->zp}) f.add_input(s);
    if (!bias.empty()) f.add_input(bias);
    copy_attrs(n, f);
  } else {
    f.set_op_type("QGemm");
    f.set_domain(kMsDomain);
    for (const std::string& s : {px->value, px->scale, px->zp, pw->value, pw->scale, pw->zp, bias, py->scale, py->zp}) f.add_input(s);
    copy_attrs(n, f, {"beta"});
  }
  return r;
}

// DQ(x) -> op -> Q with equal quantization on both sides: the op on the quantized values
// (max and data movement commute with the monotonic, elementwise dequantization).
std::optional<Rewrite> match_drop_qdq(const GraphIndex& ix, int k) {
  const onnx::NodeProto& n = ix.g.node(k);
  bool movement = false;
  for (const char* op : {"MaxPool", "Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze"})
    movement = movement || is_op(n, op);
  if (!movement || n.input_size() < 1 || n.output_size() != 1) return std::nullopt;
  if (is_op(n, "MaxPool") && attr_i(n, "storage_order", 0) != 0) return std::nullopt;
  auto q = ix.only_q_consumer(n.output(0));
  const onnx::NodeProto* dx = ix.produced_by(n.input(0), "DequantizeLinear");
  if (!q || !dx) return std::nullopt;
  auto px = qparams(ix, *dx), py = qparams(ix, ix.g.node(*q));
  if (!px || !py || !same_const(ix, px->scale, py->scale) || !same_const(ix, px->zp, py->zp)) return std::nullopt;
  Rewrite r{k, *q, n};
  r.node.set_input(0, px->value);
  r.node.set_output(0, ix.g.node(*q).output(0));
  return r;
}

// DQ(inputs) -> Add / Mul / Sigmoid / LeakyRelu / (Global)AveragePool / Concat / Softmax -> Q, per-tensor
// and one 8-bit type throughout => the com.microsoft QLinear op onnxruntime runs instead.
std::optional<Rewrite> match_qlinear(const GraphIndex& ix, int k, int64_t opset) {
  const onnx::NodeProto& n = ix.g.node(k);
  const char* op = nullptr;
  for (const char* o : {"Add", "Mul", "Sigmoid", "LeakyRelu", "GlobalAveragePool", "AveragePool", "Concat", "Softmax"})
    if (is_op(n, o)) op = o;
  // QLinearSoftmax: uint8, and the opset-13 Softmax (one axis, not the flattened tail).
  if (op && std::string(op) == "Softmax" && opset < 13) return std::nullopt;
  if (!op || n.output_size() != 1 || n.input_size() < 1) return std::nullopt;
  const std::string type(op);
  const bool binary = type == "Add" || type == "Mul", concat = type == "Concat";
  if ((binary && n.input_size() != 2) || (!binary && !concat && n.input_size() != 1)) return std::nullopt;
  auto q = ix.only_q_consumer(n.output(0));
  if (!q) return std::nullopt;
  auto py = qparams(ix, ix.g.node(*q));
  if (!py) return std::nullopt;
  const int type_y = ix.init(py->zp)->data_type();
  if (type_y == onnx::TensorProto::INT32) return std::nullopt;
  if (type == "Softmax" && type_y != onnx::TensorProto::UINT8) return std::nullopt;
  std::vector<QParams> xs;
  for (const std::string& in : n.input()) {
    const onnx::NodeProto* d = ix.produced_by(in, "DequantizeLinear");
    if (!d) return std::nullopt;
    auto p = qparams(ix, *d);
    if (!p || ix.init(p->zp)->data_type() != type_y) return std::nullopt;
    xs.push_back(*p);
  }
  Rewrite r{k, *q, {}};
  onnx::NodeProto& f = r.node;
  f.set_name(n.name());
  f.set_domain(kMsDomain);
  f.set_op_type("QLinear" + type);
  f.add_output(ix.g.node(*q).output(0));
  if (concat) {
    f.add_input(py->scale), f.add_input(py->zp);
    for (const QParams& p : xs) f.add_input(p.value), f.add_input(p.scale), f.add_input(p.zp);
  } else {
    for (const QParams& p : xs) f.add_input(p.value), f.add_input(p.scale), f.add_input(p.zp);
    f.add_input(py->scale), f.add_input(py->zp);
  }
  copy_attrs(n, f);
  if (type == "Softmax") {
    onnx::AttributeProto* a = f.add_attribute();
    a->set_name("opset");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(opset);
  }
  return r;
}

}  // namespace

int fuse_qdq_groups(onnx::GraphProto& graph, int64_t opset) {
  // A subgraph (If / Loop / Scan body) may read any value of this graph: the consumer
  // counts above would be incomplete, so such graphs are imported as they are.
  for (const auto& n : graph.node())
    for (const auto& a : n.attribute())
      if (a.type() == onnx::AttributeProto::GRAPH || a.type() == onnx::AttributeProto::GRAPHS) return 0;
  std::vector<Rewrite> rewrites;
  {
    GraphIndex ix(graph);
    std::unordered_set<int> used;
    for (int k = 0; k < graph.node_size(); ++k) {
      std::optional<Rewrite> r = match_product(ix, k);
      if (!r) r = match_drop_qdq(ix, k);
      if (!r) r = match_qlinear(ix, k, opset);
      if (r && !used.count(r->q)) {
        used.insert(r->q);
        rewrites.push_back(std::move(*r));
      }
    }
  }
  if (rewrites.empty()) return 0;
  std::unordered_map<int, const Rewrite*> at;
  std::unordered_set<int> drop;
  for (const Rewrite& r : rewrites) at[r.at] = &r, drop.insert(r.q);
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  for (int k = 0; k < graph.node_size(); ++k) {
    if (drop.count(k)) continue;
    auto it = at.find(k);
    *nodes.Add() = it != at.end() ? it->second->node : graph.node(k);
  }
  graph.mutable_node()->Swap(&nodes);
  // DequantizeLinear nodes nothing reads any more (the fused groups' weights): dropped, so
  // their float copies are never built. One pass from the end with use counts: a dropped
  // node's inputs may leave earlier ones unread (a pass per node of a chain of them was
  // quadratic: 8,000 took minutes).
  std::unordered_map<std::string, int> uses;
  std::unordered_set<std::string> outputs;
  for (const auto& vi : graph.output()) outputs.insert(vi.name());
  for (const auto& n : graph.node())
    for (const auto& in : n.input()) ++uses[in];
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  std::vector<bool> dead(size_t(graph.node_size()), false);
  for (int k = graph.node_size(); k-- > 0;) {
    const onnx::NodeProto& n = graph.node(k);
    if (!is_op(n, "DequantizeLinear") || n.output_size() != 1 || outputs.count(n.output(0)) || uses[n.output(0)] > 0)
      continue;
    dead[size_t(k)] = true;
    for (const auto& in : n.input()) --uses[in];
  }
  for (int k = 0; k < graph.node_size(); ++k)
    if (!dead[size_t(k)]) *kept.Add() = graph.node(k);
  graph.mutable_node()->Swap(&kept);
  return int(rewrites.size());
}

}  // namespace edgec::onnx_frontend
