#include "codegen/backend.h"

namespace edgec {

std::unique_ptr<Backend> make_backend(const TargetSpec& target) {
  switch (target.backend) {
    case BackendKind::LlvmCpu: return make_llvm_cpu_backend(target);
    case BackendKind::OpenCL: return make_opencl_backend(target);
  }
  throw CompileError("internal: target " + target.name + " has no code generator");
}

}  // namespace edgec
