// ir3_inspect.h — what `edgec inspect` shows of a bundle's Adreno a630 programs (Ir3A630
// sections): per kernel its footprint, its disassembly and decode check (--disasm), and the
// static a630 cost of the whole model (--a630-cost: codegen/ir3_cost.h). Disassembly and
// cost need libtinymesa.so (the decoder is Mesa's).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "bundle_generated.h"
#include "codegen/ir3_cost.h"

namespace edgec {

struct A630KernelReport {
  std::string name;
  const edge::bundle::A630Program* program = nullptr;  // null: not an a630 kernel
  uint64_t work_items = 0;        // product of Kernel.global_size
  // With the disassembly:
  std::string disassembly;
  unsigned decoded = 0, decode_errors = 0;
  bool ends_with_end = false;
  A630Cost per_item, total;       // total = per_item * work_items
};

// One report per kernel of the bundle (data: the bundle's data blob). `disassemble` loads
// libtinymesa.so and decodes every program (throws CompileError when it cannot be loaded).
std::vector<A630KernelReport> a630_reports(const edge::bundle::Bundle* b, const uint8_t* data, uint64_t data_size,
                                           bool disassemble);
// The kernel's one-line summary: "a630: 108 instructions (37 nops), 12 full / 3 half regs, ...".
std::string a630_summary(const A630KernelReport& r);
// The cost table (one row per kernel, the total last).
std::string a630_cost_table(const std::vector<A630KernelReport>& reports);

}  // namespace edgec
