// llvm_emit.h — lowers one kernel's IR to an LLVM function (see llvm_emit.cc).
#pragma once
#include "codegen/kernel_ir.h"

namespace llvm {
class Module;
}

namespace edgec {
// vector_bytes: width of the target's vector registers (32 for AVX2, 16 for NEON).
void emit_kernel(llvm::Module& module, const KernelIR& kernel, int vector_bytes);
}
