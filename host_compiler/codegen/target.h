// target.h — what edgec can generate code for, and how the runtime recognizes it.
#pragma once
#include <string>
#include <vector>

namespace edgec {

struct TargetSpec {
  std::string name;                 // as given to --target
  std::string triple;               // LLVM target triple
  std::string cpu;                  // LLVM cpu name
  std::string llvm_features;        // LLVM feature string ("+avx2,+fma")
  std::vector<std::string> required_features;  // what the runtime checks on the device
  int bundle_arch;                  // edge::bundle::Arch value
  int vector_bytes;                 // widest vector register the optimizer should fill
  int vector_registers = 16;        // how many of them (unroll / accumulator budget)
};

// Throws CompileError listing the known targets if `name` is unknown.
TargetSpec target_by_name(const std::string& name);
std::vector<std::string> known_targets();

}  // namespace edgec
