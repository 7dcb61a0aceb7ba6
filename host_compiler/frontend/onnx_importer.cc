// onnx_importer.cc — walks an ONNX graph in node order, lowering each node through the
// op table, then folds constants.
#include "frontend/onnx_importer.h"

#include <filesystem>
#include <fstream>
#include <new>
#include <sstream>
#include <unordered_map>
#include <algorithm>
#include <unordered_set>

#include "frontend/lowering.h"

namespace edgec {
namespace {

using onnx_frontend::OpContext;


bool is_default_domain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

std::string node_label(const onnx::NodeProto& node, int index) {
  std::string name = node.name().empty() ? "#" + std::to_string(index) : "'" + node.name() + "'";
  return "node " + name + " (" + node.op_type() + ")";
}

constexpr const char* kMlDomain = "ai.onnx.ml";
// onnxruntime's contrib operators: the quantized ones its quantizer writes (QGemm, QLinearAdd, ...).
constexpr const char* kMsDomain = "com.microsoft";

// The version of an operator set the model imports, 0 if none.
int64_t opset_version(const onnx::ModelProto& model, bool default_domain) {
  for (const auto& o : model.opset_import())
    if (default_domain ? is_default_domain(o.domain()) : o.domain() == kMlDomain) return o.version();
  return 0;
}

// The op table key of a node: the op type, prefixed with "ai.onnx.ml." in that domain.
std::string table_key(const std::string& domain, const std::string& op_type) {
  return is_default_domain(domain) ? op_type : domain + "." + op_type;
}

Shape input_shape(const onnx::ValueInfoProto& vi, const ImportOptions& options) {
  const auto& tt = vi.type().tensor_type();
  auto it = options.input_shapes.find(vi.name());
  if (it != options.input_shapes.end()) {
    if (tt.has_shape() && size_t(tt.shape().dim_size()) != it->second.size())
      throw CompileError("input '" + vi.name() + "': override " + shape_str(it->second) + " has rank " +
                         std::to_string(it->second.size()) + ", the model says " +
                         std::to_string(tt.shape().dim_size()));
    return it->second;
  }
  if (!tt.has_shape()) throw CompileError("input '" + vi.name() + "' has no shape; pass one in the import options");
  Shape shape;
  for (int d = 0; d < tt.shape().dim_size(); ++d) {
    const auto& dim = tt.shape().dim(d);
    if (!dim.has_dim_value() || dim.dim_value() < 0) {
      std::string what = dim.has_dim_param() ? "symbolic ('" + dim.dim_param() + "')" : "unknown";
      throw CompileError("input '" + vi.name() + "': dim " + std::to_string(d) + " is " + what +
                         "; pass a static shape in the import options");
    }
    shape.push_back(dim.dim_value());
  }
  return shape;
}

// Checks a computed output against the type the model declares (catches lowering bugs).
// A declared dtype must match. A declared shape that disagrees (stale after an edit, or -1
// for "unknown", as exporters in the wild write) is replaced by the computed one with a
// warning, as onnxruntime does.
void check_declared(const onnx::ValueInfoProto& vi, const Node* n, const ImportOptions& options) {
  if (!vi.type().has_tensor_type()) return;
  const auto& tt = vi.type().tensor_type();
  std::string got = std::string(dtype_name(n->dtype)) + shape_str(n->shape);
  if (tt.elem_type() != 0 && onnx_frontend::dtype_from_onnx(tt.elem_type()) != n->dtype)
    throw CompileError("output '" + vi.name() + "': computed " + got + " but the model declares " +
                       dtype_name(onnx_frontend::dtype_from_onnx(tt.elem_type())));
  if (!tt.has_shape()) return;
  bool mismatch = size_t(tt.shape().dim_size()) != n->shape.size();
  std::string declared = "[";
  for (int d = 0; d < tt.shape().dim_size(); ++d) {
    const auto& dim = tt.shape().dim(d);
    declared += (d ? "," : "") + (dim.has_dim_value() ? std::to_string(dim.dim_value()) : dim.has_dim_param() ? dim.dim_param() : "?");
    mismatch = mismatch || (dim.has_dim_value() && dim.dim_value() != n->shape[size_t(d)]);
  }
  declared += "]";
  if (mismatch && options.warn)
    options.warn("output '" + vi.name() + "': the model declares shape " + declared + ", computed " + shape_str(n->shape) +
                 "; using the computed shape");
}

// The structural rules onnxruntime enforces on a graph: every value defined once (graph
// inputs, initializers that are not also inputs, node outputs), graph outputs named once.
void check_graph_names(const onnx::GraphProto& graph) {
  std::unordered_set<std::string> inputs, outputs, defined;
  for (const auto& vi : graph.input())
    if (!inputs.insert(vi.name()).second) throw CompileError("graph input '" + vi.name() + "' is declared twice");
  for (const auto& vi : graph.output())
    if (!outputs.insert(vi.name()).second) throw CompileError("graph output '" + vi.name() + "' is declared twice");
  defined = inputs;
  for (const auto& t : graph.initializer())
    if (!defined.insert(t.name()).second && !inputs.count(t.name()))
      throw CompileError("initializer '" + t.name() + "' is defined twice");
  for (int k = 0; k < graph.node_size(); ++k)
    for (const std::string& name : graph.node(k).output()) {
      if (name.empty() || defined.insert(name).second) continue;
      std::string what = inputs.count(name) ? "a graph input" : "an initializer or an earlier node's output";
      throw CompileError(node_label(graph.node(k), k) + ": output '" + name + "' redefines " + what);
    }
}

// The longest chain of primitive ops edgec compiles: its passes recurse along chains, and
// edgec runs them on a 1 GiB stack (edgec_main.cc). Far past any real model (ResNet-152
// lowers to chains of a few thousand).
constexpr int64_t kMaxGraphDepth = 50000;

void check_graph_depth(const Graph& g) {
  std::unordered_map<const Node*, int64_t> depth;
  for (const Node* n : g.live_nodes()) {  // sources before their consumers
    int64_t d = 0;
    for (const Node* s : n->srcs) d = std::max(d, depth[s]);
    depth[n] = d + 1;
    if (d + 1 > kMaxGraphDepth)
      throw CompileError("the graph has a chain of more than " + std::to_string(kMaxGraphDepth) +
                         " primitive ops (ending at '" + n->name + "'), deeper than edgec compiles");
  }
}

// The newest operator sets whose operators edgec implements: a model stamped with a later
// one may rely on semantics edgec does not know.
constexpr int64_t kMaxOpset = 23;
constexpr int64_t kMaxMlOpset = 5;

// Values by name; subgraphs (If / Loop / Scan bodies) see their enclosing scopes.
struct Scope {
  std::unordered_map<std::string, Node*> values;
  const Scope* parent = nullptr;
  Node* find(const std::string& name) const {
    for (const Scope* s = this; s; s = s->parent) {
      auto it = s->values.find(name);
      if (it != s->values.end()) return it->second;
    }
    return nullptr;
  }
};

// Control flow is unrolled at compile time: If needs a constant condition, Loop a
// constant trip count (or conditions that fold), Scan a static sequence length.
constexpr int64_t kMaxUnrolledIterations = 1024;
// ONNX nodes that unrolling may instantiate in all, bodies of nested loops once per
// iteration of every enclosing loop: three Loops of 1,000 trips, one inside the other, are
// 10^9 bodies (edgec ran for hours). A loop of 1,024 trips over a 256-node body fits.
constexpr int64_t kMaxUnrolledNodes = int64_t{1} << 18;

struct NodeImporter {
  Graph& g;
  int64_t opset, ml_opset;
  Winograd winograd = Winograd::Off;  // ImportOptions::winograd
  DotLayout dots;                       // ImportOptions::dots
  bool padded_grouped_convs = false;    // ImportOptions::padded_grouped_convs
  bool byte_pair_tables = false;        // ImportOptions::byte_pair_tables
  int64_t unrolled_nodes = 0;           // body nodes instantiated so far (kMaxUnrolledNodes)

  void run(const onnx::GraphProto& graph, Scope& scope) {
    const auto& table = onnx_frontend::op_table();
    for (int k = 0; k < graph.node_size(); ++k) {
      const onnx::NodeProto& node = graph.node(k);
      const std::string label = node_label(node, k);
      bool ml = node.domain() == kMlDomain, ms = node.domain() == kMsDomain;
      if (!is_default_domain(node.domain()) && !ml && !ms)
        throw CompileError(label + ": unsupported operator in domain '" + node.domain() + "'");
      // com.microsoft has one version of each op edgec implements; the default set's
      // version stands in (the QDQ fusion writes such nodes into models that import none).
      int64_t node_opset = ml ? ml_opset : opset;
      if (node_opset == 0)
        throw CompileError(label + ": the model imports no version of the " +
                           (ml ? std::string("ai.onnx.ml") : std::string("default (ai.onnx)")) + " operator set");
      bool control = !ml && (node.op_type() == "If" || node.op_type() == "Loop" || node.op_type() == "Scan");
      auto fn = table.find(table_key(node.domain(), node.op_type()));
      if (!control && fn == table.end())
        throw CompileError(label + ": unsupported operator" +
                           (ml || ms ? " in domain '" + node.domain() + "'" : std::string()));
      std::vector<Node*> inputs;
      for (const std::string& name : node.input()) {
        if (name.empty()) {  // an omitted optional input
          inputs.push_back(nullptr);
          continue;
        }
        Node* v = scope.find(name);
        if (!v) throw CompileError(label + ": input '" + name + "' is not defined before this node");
        inputs.push_back(v);
      }
      std::vector<Node*> outputs;
      try {
        OpContext ctx(g, node, node_opset, std::move(inputs));
        ctx.winograd = winograd;
        ctx.dots = dots;
        ctx.padded_grouped_convs = padded_grouped_convs;
        ctx.byte_pair_tables = byte_pair_tables;
        if (!control) outputs = fn->second(ctx);
        else if (node.op_type() == "If") outputs = lower_if(ctx, scope);
        else if (node.op_type() == "Loop") outputs = lower_loop(ctx, scope);
        else outputs = lower_scan(ctx, scope);
      } catch (const CompileError& e) {
        throw CompileError(label + ": " + e.what());
      } catch (const std::bad_alloc&) {
        throw CompileError(label + ": out of memory while lowering it");
      }
      for (int i = 0; i < node.output_size(); ++i) {
        const std::string& name = node.output(i);
        if (name.empty()) continue;
        if (size_t(i) >= outputs.size() || !outputs[i])
          throw CompileError(label + ": output " + std::to_string(i) + " ('" + name + "') is not supported");
        if (outputs[i]->name.empty()) outputs[i]->name = name;
        scope.values[name] = outputs[i];
      }
    }
  }

  const onnx::GraphProto& body(const OpContext& ctx, const std::string& name) {
    const auto* a = ctx.attr(name);
    if (!a || !a->has_g()) ctx.fail("attribute '" + name + "' (a graph) is required");
    return a->g();
  }

  // Runs a subgraph with its inputs bound; returns its outputs.
  std::vector<Node*> call(const onnx::GraphProto& graph, const std::string& what, const Scope& outer,
                          const std::vector<Node*>& args) {
    Scope scope;
    scope.parent = &outer;
    unrolled_nodes += graph.node_size();
    if (unrolled_nodes > kMaxUnrolledNodes)
      throw CompileError(what + ": control flow unrolls to more than " + std::to_string(kMaxUnrolledNodes) +
                         " nodes (loop and scan bodies times their iterations, nested ones included)");
    if (size_t(graph.input_size()) != args.size())
      throw CompileError(what + " takes " + std::to_string(graph.input_size()) + " inputs, " + std::to_string(args.size()) + " given");
    for (int i = 0; i < graph.input_size(); ++i) scope.values[graph.input(i).name()] = args[size_t(i)];
    for (const auto& t : graph.initializer()) scope.values[t.name()] = g.weight(onnx_frontend::tensor_from_proto(t), t.name());
    try {
      run(graph, scope);
    } catch (const CompileError& e) {
      throw CompileError(what + ": " + e.what());
    }
    std::vector<Node*> outs;
    for (const auto& o : graph.output()) {
      Node* v = scope.find(o.name());
      if (!v) throw CompileError(what + ": output '" + o.name() + "' is never computed");
      outs.push_back(v);
    }
    return outs;
  }

  Node* scalar_i64(int64_t v) { return g.weight(HostTensor::from_ints(DType::I64, {}, {v})); }
  Node* scalar_bool(bool v) { return g.weight(HostTensor::from_ints(DType::Bool, {}, {v ? 1 : 0})); }

  bool const_flag(const OpContext& ctx, Node* v, const std::string& what) {
    if (!g.is_constant(v)) ctx.fail(what + " must be known at compile time");
    HostTensor t = g.evaluate(v);
    if (t.numel() != 1) ctx.fail(what + " must hold one value");
    return t.get(0) != 0.0;
  }

  // Stacks per-iteration values along a new axis.
  Node* stack(const std::vector<Node*>& xs, int64_t axis) {
    std::vector<Node*> parts;
    for (Node* x : xs) parts.push_back(onnx_frontend::unsqueeze_axes(g, x, {axis}));
    return onnx_frontend::concat(g, parts, axis);
  }

  std::vector<Node*> lower_if(OpContext& ctx, const Scope& scope) {
    Node* cond = ctx.input(0);
    if (g.is_constant(cond)) {
      bool taken = const_flag(ctx, cond, "the condition");
      return call(body(ctx, taken ? "then_branch" : "else_branch"), taken ? "then_branch" : "else_branch", scope, {});
    }
    // A condition computed at run time (openWakeWord's heads run a verifier net when their
    // score passes 0.5): the command queue has no branches, so both branches are computed and
    // each output selected by the condition. Branches are side-effect free; the cost is the
    // branch not taken.
    if (numel(cond->shape) != 1) ctx.fail("the condition must hold one value, it has shape " + shape_str(cond->shape));
    std::vector<Node*> then_outs = call(body(ctx, "then_branch"), "then_branch", scope, {});
    std::vector<Node*> else_outs = call(body(ctx, "else_branch"), "else_branch", scope, {});
    if (then_outs.size() != else_outs.size())
      ctx.fail("then_branch has " + std::to_string(then_outs.size()) + " outputs, else_branch " +
               std::to_string(else_outs.size()));
    Node* flag = g.reshape(cond->dtype == DType::Bool ? cond : g.cast(cond, DType::Bool), {});
    std::vector<Node*> outs;
    for (size_t i = 0; i < then_outs.size(); ++i) {
      Node* a = then_outs[i];
      Node* b = else_outs[i];
      if (a->shape != b->shape || a->dtype != b->dtype) {
        ctx.fail("the condition is computed at run time and output " + std::to_string(i) + " differs between the branches (" +
                 std::string(dtype_name(a->dtype)) + " " + shape_str(a->shape) + " / " + dtype_name(b->dtype) + " " +
                 shape_str(b->shape) + "): a bundle's shapes are fixed; freeze the inputs the condition depends on: " +
                 onnx_frontend::frozen_inputs_hint(g, cond));
      }
      outs.push_back(g.where(flag, a, b));
    }
    return outs;
  }

  std::vector<Node*> lower_loop(OpContext& ctx, const Scope& scope) {
    const onnx::GraphProto& b = body(ctx, "body");
    int64_t trips = kMaxUnrolledIterations + 1;
    bool counted = ctx.optional_input(0) != nullptr;
    if (counted) {
      HostTensor m = ctx.const_input(0);
      if (m.numel() != 1) ctx.fail("M must hold one value");
      trips = m.get_int(0);
    }
    bool cond = ctx.optional_input(1) ? (ctx.const_input(1), const_flag(ctx, ctx.input(1), "the condition")) : true;
    std::vector<Node*> carried;
    for (size_t i = 2; i < ctx.num_inputs(); ++i) carried.push_back(ctx.input(i));
    size_t n_carried = carried.size();
    if (size_t(b.output_size()) < 1 + n_carried) ctx.fail("the body has too few outputs");
    size_t n_scan = size_t(b.output_size()) - 1 - n_carried;
    std::vector<std::vector<Node*>> scans(n_scan);
    int64_t i = 0;
    for (; i < trips && cond; ++i) {
      if (i >= kMaxUnrolledIterations)
        ctx.fail("more than " + std::to_string(kMaxUnrolledIterations) + " iterations (unrolling limit)");
      std::vector<Node*> args{scalar_i64(i), scalar_bool(cond)};
      args.insert(args.end(), carried.begin(), carried.end());
      std::vector<Node*> outs = call(b, "body (iteration " + std::to_string(i) + ")", scope, args);
      cond = const_flag(ctx, outs[0], "the body's condition output");
      for (size_t k = 0; k < n_carried; ++k) carried[k] = outs[1 + k];
      for (size_t k = 0; k < n_scan; ++k) scans[k].push_back(outs[1 + n_carried + k]);
    }
    std::vector<Node*> result = carried;
    for (size_t k = 0; k < n_scan; ++k) {
      if (scans[k].empty()) ctx.fail("scan outputs of a loop that runs no iteration are not supported");
      result.push_back(stack(scans[k], 0));
    }
    return result;
  }

  std::vector<Node*> lower_scan(OpContext& ctx, const Scope& scope) {
    const onnx::GraphProto& b = body(ctx, "body");
    int64_t m = ctx.attr_int("num_scan_inputs", 0);
    bool v8 = ctx.opset < 9;
    size_t first = v8 ? 1 : 0;  // Scan-8 starts with sequence_lens and has a batch dim
    if (m < 1 || size_t(m) > ctx.num_inputs() - first) ctx.fail("num_scan_inputs does not fit the inputs");
    size_t n_state = ctx.num_inputs() - first - size_t(m);
    std::vector<Node*> state, xs;
    for (size_t i = first; i < first + n_state; ++i) state.push_back(ctx.input(i));
    for (size_t i = first + n_state; i < ctx.num_inputs(); ++i) xs.push_back(ctx.input(i));
    size_t n_out = size_t(b.output_size());
    if (n_out < n_state) ctx.fail("the body has too few outputs");
    size_t n_scan_out = n_out - n_state;
    auto ints = [&](const char* name, size_t n) {
      std::vector<int64_t> v = ctx.attr_ints(name, std::vector<int64_t>(n, 0));
      if (v.size() != n) ctx.fail(std::string(name) + " must have one entry per scan input / output");
      return v;
    };
    std::vector<int64_t> in_dirs = ints(v8 ? "directions" : "scan_input_directions", size_t(m));
    std::vector<int64_t> in_axes = v8 ? std::vector<int64_t>(size_t(m), 0) : ints("scan_input_axes", size_t(m));
    std::vector<int64_t> out_dirs = v8 ? std::vector<int64_t>(n_scan_out, 0) : ints("scan_output_directions", n_scan_out);
    std::vector<int64_t> out_axes = v8 ? std::vector<int64_t>(n_scan_out, 0) : ints("scan_output_axes", n_scan_out);
    // One scan over (state, xs) with the sequence along in_axes.
    auto scan_once = [&](std::vector<Node*> st, const std::vector<Node*>& seq) {
      int64_t len = -1;
      std::vector<int64_t> axes(static_cast<size_t>(m), 0);
      for (size_t j = 0; j < size_t(m); ++j) {
        axes[j] = normalize_axis(in_axes[j], int64_t(seq[j]->shape.size()));
        int64_t l = seq[j]->shape[size_t(axes[j])];
        if (len >= 0 && l != len) ctx.fail("scan inputs differ in sequence length");
        len = l;
      }
      if (len > kMaxUnrolledIterations) ctx.fail("sequence length " + std::to_string(len) + " exceeds the unrolling limit");
      std::vector<std::vector<Node*>> outs(n_scan_out);
      for (int64_t t = 0; t < len; ++t) {
        std::vector<Node*> args = st;
        for (size_t j = 0; j < size_t(m); ++j) {
          int64_t at = in_dirs[j] ? len - 1 - t : t;
          Node* slice = onnx_frontend::strided_slice(g, seq[j], axes[j], at, 1, 1);
          args.push_back(onnx_frontend::squeeze_axes(g, slice, {axes[j]}));
        }
        std::vector<Node*> r = call(b, "body (step " + std::to_string(t) + ")", scope, args);
        for (size_t k = 0; k < n_state; ++k) st[k] = r[k];
        for (size_t k = 0; k < n_scan_out; ++k) outs[k].push_back(r[n_state + k]);
      }
      if (len == 0 && n_scan_out) ctx.fail("empty scan sequences are not supported");
      std::vector<Node*> result = st;
      for (size_t k = 0; k < n_scan_out; ++k) {
        if (out_dirs[k]) std::reverse(outs[k].begin(), outs[k].end());
        int64_t rank = int64_t(outs[k][0]->shape.size()) + 1;
        result.push_back(stack(outs[k], normalize_axis(out_axes[k], rank)));
      }
      return result;
    };
    if (!v8) return scan_once(state, xs);
    // Scan-8: every input has a leading batch dim; the sequence is dim 1.
    for (Node* v : xs)  // xs[0] first: the others are compared with it
      if (v->shape.size() < 2 || v->shape[0] != xs[0]->shape[0])
        ctx.fail("Scan-8 input " + shape_str(v->shape) + " needs a batch dim (as the first input's) and a sequence dim");
    for (Node* v : state)
      if (v->shape.empty() || v->shape[0] != xs[0]->shape[0])
        ctx.fail("Scan-8 state " + shape_str(v->shape) + " needs the scan inputs' batch dim first");
    if (ctx.optional_input(0)) {
      HostTensor lens = ctx.const_input(0);
      for (int64_t v : lens.to_ints())
        if (xs.empty() || v != xs[0]->shape[1]) ctx.fail("sequence_lens shorter than the sequence are not supported");
    }
    int64_t batch = xs[0]->shape[0];
    std::vector<std::vector<Node*>> per_batch(n_out);
    for (int64_t bi = 0; bi < batch; ++bi) {
      auto take = [&](Node* v) {
        return onnx_frontend::squeeze_axes(g, onnx_frontend::strided_slice(g, v, 0, bi, 1, 1), {0});
      };
      std::vector<Node*> st, seq;
      for (Node* v : state) st.push_back(take(v));
      for (Node* v : xs) seq.push_back(take(v));
      std::vector<Node*> r = scan_once(st, seq);
      for (size_t k = 0; k < n_out; ++k) per_batch[k].push_back(r[k]);
    }
    std::vector<Node*> result;
    for (size_t k = 0; k < n_out; ++k) result.push_back(stack(per_batch[k], 0));
    return result;
  }
};

std::unique_ptr<Graph> import_graph(const onnx::ModelProto& model, const ImportOptions& options) {
  const int64_t opset = opset_version(model, true), ml_opset = opset_version(model, false);
  if (!model.has_graph()) throw CompileError("the model has no graph");
  // 0: none imported (refused at the first node that needs one); no version is negative.
  if (opset < 0 || opset > kMaxOpset)
    throw CompileError("the model imports operator set " + std::to_string(opset) + " of ai.onnx; edgec implements 1 to " +
                       std::to_string(kMaxOpset));
  if (ml_opset < 0 || ml_opset > kMaxMlOpset)
    throw CompileError("the model imports operator set " + std::to_string(ml_opset) + " of ai.onnx.ml; edgec implements 1 to " +
                       std::to_string(kMaxMlOpset));
  check_graph_names(model.graph());
  // QDQ groups become the integer ops onnxruntime runs them as (qdq_fusion.cc); a copy, as
  // the caller's model is const.
  onnx::GraphProto fused;
  bool quantized = false;
  for (const auto& n : model.graph().node()) quantized = quantized || n.op_type() == "QuantizeLinear";
  if (quantized) {
    fused = model.graph();
    onnx_frontend::fuse_qdq_groups(fused, opset);
  }
  const onnx::GraphProto& graph = quantized ? fused : model.graph();
  auto g = std::make_unique<Graph>();
  std::unordered_map<std::string, Node*> values;

  std::unordered_set<std::string> initializer_names;
  for (const auto& t : graph.initializer()) {
    values[t.name()] = g->weight(onnx_frontend::tensor_from_proto(t), t.name());
    initializer_names.insert(t.name());
  }
  for (const auto& vi : graph.input()) {
    if (initializer_names.count(vi.name())) continue;  // an initializer's default is final here
    if (!vi.type().has_tensor_type()) throw CompileError("input '" + vi.name() + "' is not a tensor");
    DType dtype = onnx_frontend::dtype_from_onnx(vi.type().tensor_type().elem_type());
    if (auto frozen = options.constant_inputs.find(vi.name()); frozen != options.constant_inputs.end()) {
      if (frozen->second.dtype != dtype)
        throw CompileError("constant for input '" + vi.name() + "' is " + dtype_name(frozen->second.dtype) +
                           ", the model says " + dtype_name(dtype));
      values[vi.name()] = g->weight(frozen->second, vi.name());
      continue;
    }
    values[vi.name()] = g->input(vi.name(), dtype, input_shape(vi, options));
  }
  for (const auto& [name, shape] : options.input_shapes)
    if (!values.count(name) || values[name]->op != Op::Input)
      throw CompileError("import options give a shape for '" + name + "', which is not a graph input");
  for (const auto& [name, value] : options.constant_inputs)
    if (!values.count(name) || initializer_names.count(name))
      throw CompileError("import options give a constant for '" + name + "', which is not a graph input");

  Scope top;
  top.values = std::move(values);
  NodeImporter importer{*g, opset, ml_opset, options.winograd, options.dots, options.padded_grouped_convs,
                        options.byte_pair_tables};
  importer.run(graph, top);
  values = std::move(top.values);

  for (const auto& vi : graph.output()) {
    auto it = values.find(vi.name());
    if (it == values.end()) throw CompileError("graph output '" + vi.name() + "' is never computed");
    check_declared(vi, it->second, options);
    g->add_output(vi.name(), it->second);
  }
  check_graph_depth(*g);
  g->fold_constants();
  g->merge_identical_weights();
  return g;
}

}  // namespace

namespace {

// model_dir: the folder of the model's file, where its external data may be; null for bytes.
std::unique_ptr<Graph> import_serialized(const std::string& serialized_model, const std::string& model_name,
                                         const ImportOptions& options, const std::string* model_dir) {
  onnx::ModelProto model;
  if (serialized_model.empty()) throw CompileError(model_name + ": empty file, not an ONNX model");
  if (!model.ParseFromString(serialized_model))
    throw CompileError(model_name + ": not a valid ONNX model (protobuf parse failed)");
  try {
    if (model.has_graph()) onnx_frontend::load_external_data(*model.mutable_graph(), model_dir);
    return import_graph(model, options);
  } catch (const CompileError& e) {
    throw CompileError(model_name + ": " + e.what());
  }
}

}  // namespace

std::unique_ptr<Graph> import_onnx_model(const std::string& serialized_model, const std::string& model_name,
                                         const ImportOptions& options) {
  return import_serialized(serialized_model, model_name, options, nullptr);
}

std::unique_ptr<Graph> import_onnx_file(const std::string& path, const ImportOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CompileError("cannot open '" + path + "'");
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string folder = std::filesystem::path(path).parent_path().string();
  return import_serialized(buffer.str(), path, options, &folder);
}

bool is_supported_onnx_op(const std::string& domain, const std::string& op_type) {
  if (!is_default_domain(domain) && domain != kMlDomain && domain != kMsDomain) return false;
  if (is_default_domain(domain) && (op_type == "If" || op_type == "Loop" || op_type == "Scan")) return true;
  return onnx_frontend::op_table().count(table_key(domain, op_type)) > 0;
}

std::vector<std::string> supported_onnx_ops() {
  std::vector<std::string> names;
  for (const auto& [name, fn] : onnx_frontend::op_table()) names.push_back(name);
  names.insert(names.end(), {"If", "Loop", "Scan"});  // unrolled by the importer
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace edgec
