// llvm_backend.h — the LLVM CPU back end (make_llvm_cpu_backend in backend.h): kernel IR ->
// LLVM IR -> optimized machine code -> one flat, position-independent code blob the runtime
// can execute after a plain copy.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/backend.h"

namespace edgec {

struct CodeBlob {
  std::vector<uint8_t> bytes;            // load page-aligned (aarch64 ADRP is page-relative)
  std::vector<uint64_t> entry_offsets;   // one per kernel, in input order
  std::vector<CodeRange> functions;      // the entry symbols' functions, sorted by offset, disjoint
  std::vector<uint32_t> entry_functions; // one per kernel: its index in `functions`
};

// Links a relocatable ELF object into a flat blob: lays out its allocated sections from
// `code_start` (the bytes before it are zero, for the code directory) and resolves every
// relocation PC-relatively. Fails on external symbols (the kernels must call nothing; the
// error names the kernel and what the helper does), on absolute relocations (the blob must
// not depend on where it is loaded), and on function symbols that overlap. Exposed for tests.
CodeBlob link_flat(const std::vector<uint8_t>& elf_object, const std::vector<std::string>& entry_symbols,
                   uint64_t code_start = 0);

// The work of one launch of a kernel: its ALU operations (KernelIR::flops) plus the elements
// of the buffers it reads and writes.
int64_t launch_work(const KernelIR& k);

// Plans a CPU kernel's launch (k.launch): its first output dim longer than 1 is split into
// parts across threads, at most its extent; a launch with less work than
// one_part_below_work runs as one part (CodegenOptions::one_part_below_work).
void plan_cpu_launch(KernelIR& k, int64_t one_part_below_work);

}  // namespace edgec
