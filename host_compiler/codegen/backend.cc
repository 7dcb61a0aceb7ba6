#include "codegen/backend.h"

#include <algorithm>
#include <cstdio>

namespace edgec {

std::string schedule_key(const KernelIR& k, const TargetSpec& target) {
  // to_string without its first line (the kernel's name, from a buffer name), plus what the
  // loop IR leaves out: each argument's dtype, shape and role.
  std::string text = to_string(k);
  text = target.name + "\n" + shape_str(k.out_shape) + " " + dtype_name(k.out_dtype) + "\n" +
         text.substr(std::min(text.size(), text.find('\n') + 1));
  for (const KernelArg& a : k.args)
    text += std::string("arg ") + dtype_name(a.dtype) + shape_str(a.shape) + " role " +
            std::to_string(static_cast<int>(a.role)) + "\n";
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a, 64 bits: stable across builds and hosts
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

std::string schedule_shape(const KernelIR& k) {
  std::string s = "out" + shape_str(k.out_shape);
  if (k.has_reduce()) s += "/r" + shape_str(k.reduce_extents);
  std::string out;
  for (char c : s)
    if (c != ' ') out += c;  // one field of a cache line
  return out;
}

std::unique_ptr<Backend> make_backend(const TargetSpec& target) {
  switch (target.backend) {
    case BackendKind::LlvmCpu: return make_llvm_cpu_backend(target);
    case BackendKind::OpenCL: return make_opencl_backend(target);
    case BackendKind::Ir3: return make_ir3_backend(target);
  }
  throw CompileError("internal: target " + target.name + " has no code generator");
}

}  // namespace edgec
