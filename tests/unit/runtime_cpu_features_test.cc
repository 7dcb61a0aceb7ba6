// The cpu port's feature table (ports/cpu/cpu_port.cc) reads cpuid and XCR0 itself rather than
// through libgcc's CPU model (__builtin_cpu_supports, 4.5 KB of code): on x86-64 it must
// answer what __builtin_cpu_supports answers for every feature both know.
#include <doctest/doctest.h>

#include <cstring>

#include "cpu_port.h"
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#if defined(__x86_64__)
namespace {

struct Expected {
  const char* name;
  bool present;
};

// __builtin_cpu_supports takes literals only.
#define EDGE_EXPECT(n) {n, __builtin_cpu_supports(n) != 0}

// The plain cpuid bits that GCC and clang name differently or not at all (cx16, sahf): from
// the compiler's <cpuid.h> constants.
bool cpuid_has(unsigned leaf, unsigned ecx_bit) {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid(leaf, &a, &b, &c, &d) && (c & ecx_bit) != 0;
}

TEST_CASE("cpu feature table: x86-64 features as __builtin_cpu_supports reports them") {
  __builtin_cpu_init();
  const Expected expected[] = {
      EDGE_EXPECT("cmov"),       EDGE_EXPECT("mmx"),          EDGE_EXPECT("popcnt"),
      EDGE_EXPECT("sse"),        EDGE_EXPECT("sse2"),         EDGE_EXPECT("sse3"),
      EDGE_EXPECT("ssse3"),      EDGE_EXPECT("sse4.1"),       EDGE_EXPECT("sse4.2"),
      EDGE_EXPECT("avx"),        EDGE_EXPECT("avx2"),         EDGE_EXPECT("fma"),
      EDGE_EXPECT("bmi"),        EDGE_EXPECT("bmi2"),         EDGE_EXPECT("aes"),
      EDGE_EXPECT("pclmul"),     EDGE_EXPECT("gfni"),         EDGE_EXPECT("vpclmulqdq"),
      EDGE_EXPECT("avx512f"),    EDGE_EXPECT("avx512vl"),     EDGE_EXPECT("avx512bw"),
      EDGE_EXPECT("avx512dq"),   EDGE_EXPECT("avx512cd"),     EDGE_EXPECT("avx512vnni"),
      EDGE_EXPECT("avx512bf16"), EDGE_EXPECT("avx512vbmi"),   EDGE_EXPECT("avx512vbmi2"),
      EDGE_EXPECT("avx512ifma"), EDGE_EXPECT("avx512bitalg"), EDGE_EXPECT("avx512vpopcntdq"),
      EDGE_EXPECT("f16c"),       EDGE_EXPECT("movbe"),        EDGE_EXPECT("xsave"),
      EDGE_EXPECT("lzcnt"),
      {"cx16", cpuid_has(1, bit_CMPXCHG16B)},
      {"sahf", cpuid_has(0x80000001u, bit_LAHF_LM)},
  };
  edgert::cpu::Feature table[64];
  const size_t n = edgert::cpu::feature_table(table, 64);
  for (const Expected& e : expected) {
    CAPTURE(e.name);
    bool known = false;
    const bool present = edgert::cpu::has_feature(e.name, &known);
    CHECK(known);
    CHECK(present == e.present);
  }
  // Nothing in the table that the list above misses, but for the baseline of every x86-64.
  for (size_t i = 0; i < n; ++i) {
    CAPTURE(table[i].name);
    bool listed = false;
    for (const Expected& e : expected) listed |= std::strcmp(e.name, table[i].name) == 0;
    const char* baseline[] = {"64bit", "cx8", "fxsr"};
    for (const char* b : baseline) listed |= std::strcmp(b, table[i].name) == 0;
    CHECK(listed);
  }
}

}  // namespace
#endif
