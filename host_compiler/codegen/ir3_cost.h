// ir3_cost.h — the static cost of a6xx machine code, read from its disassembly (Mesa's
// ir3_isa_disasm text): the instructions one work-item issues, each loop's body counted
// as many times as the loop's trip count (known from the kernel IR, stored in the bundle),
// split into ALU / memory (global, image, shared, private) / control / nop, and the bytes
// its memory instructions move. A static estimate of issue slots, not a measured time:
// conditional code counts as executed, and nothing here has run on an a630.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace edgec {

struct A630Cost {
  // Issues of one work-item ((rptN) counts N + 1, (nopN) N more nops).
  uint64_t alu = 0, global = 0, image = 0, shared = 0, private_mem = 0, control = 0, nop = 0;
  uint64_t bytes = 0;  // bytes its memory instructions read and write
  uint64_t memory() const { return global + image + shared + private_mem; }
  uint64_t issues() const { return alu + memory() + control + nop; }
  A630Cost& operator+=(const A630Cost& o);
  A630Cost scaled(uint64_t n) const;
};

// Cost of one work-item of a program. `loop_trips` lists the trip count of each loop in
// the order the loops open (outermost first); the backward jumps of the disassembly are
// matched to them by nesting. Throws CompileError when the loops do not match.
A630Cost a630_work_item_cost(const std::string& disassembly, const std::vector<uint32_t>& loop_trips);

}  // namespace edgec
