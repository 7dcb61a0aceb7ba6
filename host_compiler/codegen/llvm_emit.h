// llvm_emit.h — lowers one kernel's IR to an LLVM function (see llvm_emit.cc).
#pragma once
#include <string>
#include <vector>

#include "codegen/backend.h"
#include "codegen/kernel_ir.h"
#include "codegen/target.h"

namespace llvm {
class Module;
}

namespace edgec {
// Vector width and register count come from the target. tile: the register tile to use
// instead of the cost model's, where the model allows it (null: its choice). Returns the
// CPU features the kernel's code uses (a dot-product instruction: "avx512vnni"), which the
// bundle must require where the target does not already.
std::vector<std::string> emit_kernel(llvm::Module& module, const KernelIR& kernel, const TargetSpec& target,
                                     const RegisterTile* tile = nullptr);
// The register tiles the cost model allows for a kernel whose launch is planned, cheapest
// first (the first is what emit_kernel picks by itself); empty without a choice.
std::vector<RegisterTile> register_tiles_by_cost(const KernelIR& kernel, const TargetSpec& target);
// The output dims in the order of the kernel's loops, outermost first (the launch planned;
// empty for a row kernel): row-major, or the vectorized dim first where the vector tiles go
// outermost (llvm_emit.cc vector_tiles_outermost), or kVectorChunkLevel first and the dims
// row-major after it where a grouped conv's vector tiles run in chunks (vector_chunk).
std::vector<int> output_loop_order(const KernelIR& kernel, const TargetSpec& target);
// In output_loop_order: a loop over chunks of the vectorized dim, whose tiles run within the
// current chunk where that dim comes later in the order.
constexpr int kVectorChunkLevel = -1;
}
