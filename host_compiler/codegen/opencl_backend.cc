// Placeholder until the OpenCL C renderer lands: the target exists, code generation says so.
#include "codegen/backend.h"

namespace edgec {

std::unique_ptr<Backend> make_opencl_backend(const TargetSpec& target) {
  throw CompileError("target " + target.name + ": the OpenCL C back end is not built yet");
}

}  // namespace edgec
