// reference.h — the sample inputs and expected outputs `edgec compile --embed-reference`
// stores in a bundle, for `edgert-run --self-test` on the device.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace edgec {

struct ReferenceOptions {
  bool embed = false;
  std::map<std::string, HostTensor> inputs;   // --reference-input: instead of random samples
  std::map<std::string, HostTensor> outputs;  // --reference-output: instead of onnxruntime's
  double rtol = -1, atol = -1;                // --reference-rtol / -atol; < 0: the defaults
};

// A model input or output of the bundle, in bundle order.
struct TensorSpec {
  std::string name;
  DType dtype;
  Shape shape;
};

struct ReferenceData {
  std::vector<HostTensor> inputs, outputs;  // parallel to the bundle's inputs and outputs
  float rtol = 0, atol = 0;
};

// Inputs: the supplied ones, else seeded random values (floats uniform in [-1, 1), integers
// in {0, 1, 2, 3}, bools 0/1; the same every compile). Outputs: the supplied ones, else what
// onnxruntime computes on the model (python3, or $EDGE_PYTHON, run as a subprocess; the
// frozen `constant_inputs` are fed too). Throws CompileError naming the tensor and the flag
// when a value does not fit or an output has no source. `fp16` picks the larger default
// tolerance.
ReferenceData make_reference(const std::string& model_path, const std::vector<TensorSpec>& inputs,
                             const std::vector<TensorSpec>& outputs,
                             const std::map<std::string, HostTensor>& constant_inputs, bool fp16,
                             const ReferenceOptions& options);

}  // namespace edgec
