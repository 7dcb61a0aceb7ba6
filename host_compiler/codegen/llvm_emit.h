// llvm_emit.h — lowers one kernel's IR to an LLVM function (see llvm_emit.cc).
#pragma once
#include "codegen/kernel_ir.h"
#include "codegen/target.h"

namespace llvm {
class Module;
}

namespace edgec {
// Vector width and register count come from the target.
void emit_kernel(llvm::Module& module, const KernelIR& kernel, const TargetSpec& target);
}
