// The flat linker (codegen/llvm_backend.cc, link_flat) on real aarch64 objects from LLVM:
// ADRP page relocations with an addend that lands on a later page, the :lo12: ADD / LDR
// immediates that complete them, BL between functions, and the refusal of external calls.
// The address arithmetic of the linked instructions is decoded here for a page-aligned load
// (what the runtime does), so a wrong immediate or field mask fails the test.
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/llvm_backend.h"
#include "graph/graph.h"
#include "llvm_object_for_test.h"

namespace {

constexpr const char* kTriple = "aarch64-unknown-linux-gnu";

// LLVM IR text -> relocatable aarch64 ELF object, with the code model edgec uses.
std::vector<uint8_t> compile_ir(const std::string& ir) { return edgec_test::object_for(ir, kTriple, "generic", "+neon"); }

using edgec_test::word;

int64_t sign_extend(uint64_t v, int bits) {
  const uint64_t m = uint64_t{1} << (bits - 1);
  return static_cast<int64_t>((v ^ m) - m);
}

bool is_adrp(uint32_t insn) { return (insn & 0x9f000000u) == 0x90000000u; }
// Where ADRP at blob offset p points when the blob is loaded at a page boundary.
uint64_t adrp_page(uint32_t insn, uint64_t p) {
  const uint64_t imm = (((insn >> 5) & 0x7ffffu) << 2) | ((insn >> 29) & 3u);
  return (p & ~uint64_t{0xfff}) + static_cast<uint64_t>(sign_extend(imm, 21) * 4096);
}

// First ADRP in the function at `entry` and the address its page + :lo12: partner forms:
// ADD Xd, Xn, #imm12 or LDR Wt, [Xn, #imm12*4] (32-bit unsigned offset).
uint64_t adrp_target(const std::vector<uint8_t>& blob, uint64_t entry) {
  for (uint64_t p = entry; p + 4 <= blob.size() && p < entry + 256; p += 4) {
    const uint32_t insn = word(blob, p);
    if (!is_adrp(insn)) continue;
    const uint32_t reg = insn & 31u;
    const uint64_t page = adrp_page(insn, p);
    for (uint64_t q = p + 4; q < p + 64; q += 4) {
      const uint32_t lo = word(blob, q);
      const uint32_t rn = (lo >> 5) & 31u, imm12 = (lo >> 10) & 0xfffu;
      if (rn != reg) continue;
      if ((lo & 0xffc00000u) == 0x91000000u) return page + imm12;          // ADD (64-bit, imm)
      if ((lo & 0xffc00000u) == 0xb9400000u) return page + imm12 * 4u;     // LDR W (unsigned offset)
    }
    FAIL("ADRP at " << p << " has no :lo12: ADD/LDR partner");
  }
  FAIL("no ADRP in the function at " << entry);
  return 0;
}

}  // namespace

TEST_CASE("link_flat aarch64: ADRP + lo12 reach a constant table several pages away, BL reaches its callee") {
  // 4096 words (16 KiB) of constants after the code: table[4095] sits three pages past the
  // table's start, and `last` folds that offset into the relocation addend.
  const std::string ir = edgec_test::table_global_ir() + R"(
define i32 @first(i64 %i) noinline {
  %p = getelementptr [4096 x i32], ptr @table, i64 0, i64 %i
  %v = load i32, ptr %p
  ret i32 %v
}
define i32 @last() {
  %v = load i32, ptr getelementptr ([4096 x i32], ptr @table, i64 0, i64 4095)
  ret i32 %v
}
define i32 @caller(i64 %i) {
  %v = call i32 @first(i64 %i)
  %w = add i32 %v, 1
  ret i32 %w
}
)";
  // From blob offset 0, and after a code directory whose size is no multiple of a page.
  for (const uint64_t code_start : {uint64_t{0}, uint64_t{208}}) {
    CAPTURE(code_start);
    const edgec::CodeBlob blob = edgec::link_flat(compile_ir(ir), {"first", "last", "caller"}, code_start);
    REQUIRE(blob.entry_offsets.size() == 3);
    REQUIRE(blob.bytes.size() > 4 * 4096);
    // The function table: the three entries' functions, sorted, after code_start.
    REQUIRE(blob.functions.size() == 3);
    for (size_t k = 0; k < 3; ++k) CHECK(blob.functions[blob.entry_functions[k]].offset == blob.entry_offsets[k]);
    CHECK(blob.functions[0].offset >= code_start);
    CHECK(blob.functions[0].offset < blob.functions[1].offset);
    CHECK(blob.functions[1].offset < blob.functions[2].offset);
    for (uint64_t i = 0; i < code_start; ++i) REQUIRE(blob.bytes[i] == 0);

    const uint64_t table0 = adrp_target(blob.bytes, blob.entry_offsets[0]);
    CHECK(word(blob.bytes, table0) == 1u);
    CHECK(word(blob.bytes, table0 + 4) == 8u);
    const uint64_t table_last = adrp_target(blob.bytes, blob.entry_offsets[1]);
    CHECK(table_last == table0 + 4095 * 4);
    CHECK(word(blob.bytes, table_last) == 4095u * 7 + 1);
    CHECK((table_last >> 12) > (blob.entry_offsets[1] >> 12));  // really another page

    bool found_bl = false;
    for (uint64_t p = blob.entry_offsets[2]; p < blob.entry_offsets[2] + 64; p += 4) {
      const uint32_t insn = word(blob.bytes, p);
      if ((insn & 0xfc000000u) == 0x94000000u || (insn & 0xfc000000u) == 0x14000000u) {  // BL / B (tail call)
        CHECK(p + static_cast<uint64_t>(sign_extend(insn & 0x3ffffffu, 26) * 4) == blob.entry_offsets[0]);
        found_bl = true;
        break;
      }
    }
    CHECK(found_bl);
  }
}

TEST_CASE("link_flat aarch64: a call to an external function is refused") {
  const char* ir = R"(
declare float @expf(float)
define float @k(float %x) {
  %y = call float @expf(float %x)
  ret float %y
}
)";
  const std::vector<uint8_t> obj = compile_ir(ir);
  CHECK_THROWS_WITH_AS(edgec::link_flat(obj, {"k"}), doctest::Contains("kernel k calls 'expf', a library helper"), edgec::CompileError);
}
