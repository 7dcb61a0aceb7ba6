// llvm_emit.h — lowers one kernel's IR to an LLVM function (see llvm_emit.cc).
#pragma once
#include "codegen/kernel_ir.h"

namespace llvm {
class Module;
}

namespace edgec {
void emit_kernel(llvm::Module& module, const KernelIR& kernel);
}
