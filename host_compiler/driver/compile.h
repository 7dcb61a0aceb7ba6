// compile.h — the whole edgec pipeline: ONNX -> graph -> schedule -> code -> memory
// plan -> bundle bytes.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "driver/reference.h"
#include "frontend/onnx_importer.h"
#include "graph/graph.h"

namespace edgec {

struct CompileOptions {
  std::string target = "x86_64";
  int opt_level = 3;
  std::map<std::string, Shape> input_shapes;   // overrides for symbolic input dims
  std::map<std::string, HostTensor> constant_inputs;  // inputs frozen to these values
  ReferenceOptions reference;                  // --embed-reference and its values
  // Stride-1 3x3 convs (edgec --winograd); unset: Auto where the target says so, else Off.
  std::optional<Winograd> winograd;
  // Padded stride-1 grouped convs over an explicitly padded copy of their input (edgec
  // --padded-grouped-convs; ImportOptions::padded_grouped_convs); unset: on CPU targets.
  std::optional<bool> padded_grouped_convs;
  // --precision: F32, or BF16 (convolutions and matrix products with constant weights take
  // bfloat16 operands; codegen/target.h with_precision says which targets can).
  DType precision = DType::F32;
  // --one-part-below: CodegenOptions::one_part_below_work; unset: its default.
  std::optional<int64_t> one_part_below_work;
  std::string dump_kernels;                    // write the kernel IR here
  std::string dump_llvm_ir;                    // write the optimized LLVM IR here
  std::string dump_source;                     // OpenCL targets: write the OpenCL C here
  // Register tiles per kernel shape (driver/tune.h): --tune times candidates on this machine
  // and keeps the fastest; --tune-cache reads decisions from this file (and --tune writes
  // them back).
  bool tune = false;
  size_t tune_candidates = 8;                  // tiles timed per shape: the cost model's best
  std::string tune_cache;
  std::function<void(const std::string&)> progress;  // one line per stage
  std::function<void(const std::string&)> warn;      // what the model has that was tolerated
};

struct CompileResult {
  std::vector<uint8_t> bundle;
  size_t num_kernels = 0;
  size_t num_weights = 0;
  uint64_t weight_bytes = 0;
  uint64_t arena_size = 0;
  uint64_t arena_lower_bound = 0;
  uint64_t code_bytes = 0;
};

CompileResult compile_onnx_file(const std::string& model_path, const CompileOptions& options);

}  // namespace edgec
