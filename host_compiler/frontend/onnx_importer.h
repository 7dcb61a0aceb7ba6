// onnx_importer.h — ONNX model -> primitive Graph (static shapes, constants folded).
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace edgec {

struct ImportOptions {
  // Shapes for graph inputs by name; required where the model has symbolic or unknown dims.
  std::map<std::string, Shape> input_shapes;
  // Graph inputs frozen to a value at compile time (they become weights, not inputs), e.g.
  // shape or axes tensors that a model takes as inputs.
  std::map<std::string, HostTensor> constant_inputs;
  // Told what the importer tolerates in a model that onnxruntime also runs (an output's
  // declared shape that the computed one replaces); null: silent.
  std::function<void(const std::string&)> warn;
};

// Throw CompileError naming the ONNX node and op type for anything they cannot import.
std::unique_ptr<Graph> import_onnx_file(const std::string& path, const ImportOptions& options = {});
std::unique_ptr<Graph> import_onnx_model(const std::string& serialized_model, const std::string& model_name,
                                         const ImportOptions& options = {});

// True if the importer has a lowering for this op ("" / "ai.onnx" is the default domain).
bool is_supported_onnx_op(const std::string& domain, const std::string& op_type);
std::vector<std::string> supported_onnx_ops();

}  // namespace edgec
