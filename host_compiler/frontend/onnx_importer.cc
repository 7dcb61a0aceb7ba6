// onnx_importer.cc — walks an ONNX graph in node order, lowering each node through the
// op table, then folds constants.
#include "frontend/onnx_importer.h"

#include <fstream>
#include <sstream>
#include <unordered_map>
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
void check_declared(const onnx::ValueInfoProto& vi, const Node* n) {
  if (!vi.type().has_tensor_type()) return;
  const auto& tt = vi.type().tensor_type();
  std::string got = std::string(dtype_name(n->dtype)) + shape_str(n->shape);
  if (tt.elem_type() != 0 && onnx_frontend::dtype_from_onnx(tt.elem_type()) != n->dtype)
    throw CompileError("output '" + vi.name() + "': computed " + got + " but the model declares " +
                       dtype_name(onnx_frontend::dtype_from_onnx(tt.elem_type())));
  if (!tt.has_shape()) return;
  bool mismatch = size_t(tt.shape().dim_size()) != n->shape.size();
  for (int d = 0; !mismatch && d < tt.shape().dim_size(); ++d)
    mismatch = tt.shape().dim(d).has_dim_value() && tt.shape().dim(d).dim_value() != n->shape[d];
  if (mismatch) throw CompileError("output '" + vi.name() + "': computed " + got + " but the model declares another shape");
}

std::unique_ptr<Graph> import_graph(const onnx::ModelProto& model, const ImportOptions& options) {
  const int64_t opset = opset_version(model, true), ml_opset = opset_version(model, false);
  const onnx::GraphProto& graph = model.graph();
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

  const auto& table = onnx_frontend::op_table();
  for (int k = 0; k < graph.node_size(); ++k) {
    const onnx::NodeProto& node = graph.node(k);
    const std::string label = node_label(node, k);
    bool ml = node.domain() == kMlDomain;
    if (!is_default_domain(node.domain()) && !ml)
      throw CompileError(label + ": unsupported operator in domain '" + node.domain() + "'");
    int64_t node_opset = ml ? ml_opset : opset;
    if (node_opset == 0)
      throw CompileError(label + ": the model imports no version of the " +
                         (ml ? std::string("ai.onnx.ml") : std::string("default (ai.onnx)")) + " operator set");
    auto fn = table.find(table_key(node.domain(), node.op_type()));
    if (fn == table.end())
      throw CompileError(label + ": unsupported operator" + (ml ? std::string(" in domain 'ai.onnx.ml'") : std::string()));
    std::vector<Node*> inputs;
    for (const std::string& name : node.input()) {
      if (name.empty()) {  // an omitted optional input
        inputs.push_back(nullptr);
        continue;
      }
      auto it = values.find(name);
      if (it == values.end()) throw CompileError(label + ": input '" + name + "' is not defined before this node");
      inputs.push_back(it->second);
    }
    std::vector<Node*> outputs;
    try {
      OpContext ctx(*g, node, node_opset, std::move(inputs));
      outputs = fn->second(ctx);
    } catch (const CompileError& e) {
      throw CompileError(label + ": " + e.what());
    }
    for (int i = 0; i < node.output_size(); ++i) {
      const std::string& name = node.output(i);
      if (name.empty()) continue;
      if (size_t(i) >= outputs.size() || !outputs[i])
        throw CompileError(label + ": output " + std::to_string(i) + " ('" + name + "') is not supported");
      if (outputs[i]->name.empty()) outputs[i]->name = name;
      values[name] = outputs[i];
    }
  }

  for (const auto& vi : graph.output()) {
    auto it = values.find(vi.name());
    if (it == values.end()) throw CompileError("graph output '" + vi.name() + "' is never computed");
    check_declared(vi, it->second);
    g->add_output(vi.name(), it->second);
  }
  g->fold_constants();
  return g;
}

}  // namespace

std::unique_ptr<Graph> import_onnx_model(const std::string& serialized_model, const std::string& model_name,
                                         const ImportOptions& options) {
  onnx::ModelProto model;
  if (!model.ParseFromString(serialized_model))
    throw CompileError(model_name + ": not a valid ONNX model (protobuf parse failed)");
  try {
    return import_graph(model, options);
  } catch (const CompileError& e) {
    throw CompileError(model_name + ": " + e.what());
  }
}

std::unique_ptr<Graph> import_onnx_file(const std::string& path, const ImportOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CompileError("cannot open '" + path + "'");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return import_onnx_model(buffer.str(), path, options);
}

bool is_supported_onnx_op(const std::string& domain, const std::string& op_type) {
  if (!is_default_domain(domain) && domain != kMlDomain) return false;
  return onnx_frontend::op_table().count(table_key(domain, op_type)) > 0;
}

std::vector<std::string> supported_onnx_ops() {
  std::vector<std::string> names;
  for (const auto& [name, fn] : onnx_frontend::op_table()) names.push_back(name);
  return names;
}

}  // namespace edgec
