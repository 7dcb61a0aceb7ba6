// The flat linker (codegen/llvm_backend.cc, link_flat) on real Hexagon objects from LLVM:
// a constant-extended PC-relative address (`r = add(pc, ##table@PCREL)`: R_HEX_B32_PCREL_X
// on the immext word, R_HEX_6_PCREL_X on the instruction) into the constants after the
// code, a call into another section (R_HEX_B22_PCREL), and the refusal of external calls
// (LLVM's library helpers: Hexagon has no divide instruction). The linked instructions are
// decoded here (relative to the start of their packet, as the DSP computes PC-relative
// values), so a wrong field mask or PC base fails the test.
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/llvm_backend.h"
#include "graph/graph.h"
#include "llvm_object_for_test.h"

namespace {

constexpr const char* kTriple = "hexagon-unknown-none-elf";

// LLVM IR text -> relocatable Hexagon ELF object, with the code model edgec uses.
std::vector<uint8_t> compile_ir(const std::string& ir) { return edgec_test::object_for(ir, kTriple, "hexagonv65", "+hvxv65,+hvx-length128b"); }

using edgec_test::word;

// The bits of `insn` under `mask`, lowest first, packed (the inverse of the relocation's
// scatter).
uint32_t gather(uint32_t mask, uint32_t insn) {
  uint32_t v = 0;
  int n = 0;
  for (int bit = 0; bit < 32; ++bit)
    if (mask >> bit & 1) v |= (insn >> bit & 1) << n++;
  return v;
}

int64_t sign_extend(uint64_t v, int bits) {
  const uint64_t m = uint64_t{1} << (bits - 1);
  return static_cast<int64_t>((v ^ m) - m);
}

// Parse bits 15..14: 11 ends a packet, 00 is a duplex (always last).
bool ends_packet(uint32_t insn) {
  const uint32_t parse = insn >> 14 & 3;
  return parse == 3 || parse == 0;
}
bool is_immext(uint32_t insn) { return (insn & 0xf0000000u) == 0; }

// Visits every instruction word of the function at `entry` (up to `limit` bytes) with the
// offset of its packet's first word.
template <typename F>
void for_each_word(const std::vector<uint8_t>& blob, uint64_t entry, uint64_t limit, F f) {
  uint64_t packet = entry;
  for (uint64_t p = entry; p < entry + limit && p + 4 <= blob.size(); p += 4) {
    const uint32_t insn = word(blob, p);
    f(p, packet, insn);
    if (ends_packet(insn)) packet = p + 4;
  }
}

// Where the first `Rd = add(pc, ##x)` of the function at `entry` points.
uint64_t pc_add_target(const std::vector<uint8_t>& blob, uint64_t entry) {
  uint64_t found = 0;
  bool ok = false;
  for_each_word(blob, entry, 64, [&](uint64_t p, uint64_t packet, uint32_t insn) {
    if (ok || (insn & 0xffe00000u) != 0x6a400000u || p < entry + 4) return;  // Rd = add(pc, #u6)
    const uint32_t ext = word(blob, p - 4);
    REQUIRE_MESSAGE(is_immext(ext), "add(pc) at " << p << " is not constant-extended");
    const uint32_t imm = gather(0x0fff3fffu, ext) << 6 | gather(0x1f80u, insn);
    found = packet + imm;
    ok = true;
  });
  REQUIRE_MESSAGE(ok, "no add(pc, ##x) in the function at " << entry);
  return found;
}

}  // namespace

TEST_CASE("link_flat hexagon: add(pc, ##x) reaches the constants after the code, a call reaches its callee") {
  const std::string ir = edgec_test::table_global_ir() + R"(
define i32 @first(i32 %i) noinline {
  %p = getelementptr [4096 x i32], ptr @table, i32 0, i32 %i
  %v = load i32, ptr %p
  ret i32 %v
}
define i32 @last() {
  %v = load volatile i32, ptr getelementptr ([4096 x i32], ptr @table, i32 0, i32 4095)
  ret i32 %v
}
; In another section: the call is left to the linker (R_HEX_B22_PCREL).
define i32 @caller(i32 %i) section ".text.far" {
  %v = call i32 @first(i32 %i)
  %w = add i32 %v, 1
  ret i32 %w
}
)";
  const edgec::CodeBlob blob = edgec::link_flat(compile_ir(ir), {"first", "last", "caller"});
  REQUIRE(blob.entry_offsets.size() == 3);
  REQUIRE(blob.bytes.size() > 4 * 4096);

  const uint64_t table0 = pc_add_target(blob.bytes, blob.entry_offsets[0]);
  CHECK(word(blob.bytes, table0) == 1u);
  CHECK(word(blob.bytes, table0 + 4) == 8u);
  // `last` forms the same base (its load adds 4095 * 4 as an extended offset of memw).
  CHECK(pc_add_target(blob.bytes, blob.entry_offsets[1]) == table0);
  CHECK(word(blob.bytes, table0 + 4095 * 4) == 4095u * 7 + 1);

  bool found_call = false;
  for_each_word(blob.bytes, blob.entry_offsets[2], 32, [&](uint64_t p, uint64_t packet, uint32_t insn) {
    if (found_call || (insn & 0xfe000000u) != 0x5a000000u) return;  // call #r22:2
    CHECK(packet + static_cast<uint64_t>(sign_extend(gather(0x01ff3ffeu, insn), 22) * 4) == blob.entry_offsets[0]);
    found_call = true;
  });
  CHECK(found_call);
}

TEST_CASE("link_flat hexagon: a library helper LLVM calls is refused, naming it") {
  // No divide instruction: LLVM calls __hexagon_udivsi3, which does not exist where kernels run.
  const char* ir = R"(
define i32 @k(i32 %a, i32 %b) {
  %q = udiv i32 %a, %b
  ret i32 %q
}
)";
  const std::vector<uint8_t> obj = compile_ir(ir);
  CHECK_THROWS_WITH_AS(edgec::link_flat(obj, {"k"}), doctest::Contains("kernel k calls '__hexagon_udivsi3' (an integer division)"),
                       edgec::CompileError);
}
