// cpu_port.cc — the CPU port's machine (x86-64, aarch64): its arch and the CPU features it
// can check. The checks themselves are cpu_target.cc's; code pages and the clock code_pages.cc's.
#include "cpu_port.h"

#if defined(__x86_64__)
#include <cpuid.h>
#elif defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace edgert::cpu {

edge::bundle::Arch host_arch() {
#if defined(__x86_64__)
  return edge::bundle::Arch::X86_64;
#elif defined(__aarch64__)
  return edge::bundle::Arch::AArch64;
#else
#error "the CPU port supports x86-64 and aarch64 only"
#endif
}

namespace {

size_t copy_table(const Feature* table, size_t count, Feature* out, size_t cap) {
  if (count > cap) count = cap;
  for (size_t i = 0; i < count; ++i) out[i] = table[i];
  return count;
}

#if defined(__x86_64__)
bool cpuid_bit(unsigned leaf, int reg, unsigned bit) {
  unsigned r[4] = {0, 0, 0, 0};
  if (!__get_cpuid(leaf, &r[0], &r[1], &r[2], &r[3])) return false;
  return (r[reg] >> bit) & 1u;
}
constexpr int kEcx = 2;
#endif

}  // namespace

#if defined(__x86_64__)
// __builtin_cpu_supports wants literals (and checks that the OS saves AVX/AVX-512 state);
// the few features it does not know come from cpuid directly. Evaluated on each call (only
// at bundle open): a function-local static would need the C++ runtime's init guards.
#define EDGE_FEATURE(n) \
  { n, __builtin_cpu_supports(n) != 0 }
size_t feature_table(Feature* out, size_t cap) {
  __builtin_cpu_init();
  const Feature table[] = {
      EDGE_FEATURE("cmov"),       EDGE_FEATURE("mmx"),          EDGE_FEATURE("popcnt"),
      EDGE_FEATURE("sse"),        EDGE_FEATURE("sse2"),         EDGE_FEATURE("sse3"),
      EDGE_FEATURE("ssse3"),      EDGE_FEATURE("sse4.1"),       EDGE_FEATURE("sse4.2"),
      EDGE_FEATURE("avx"),        EDGE_FEATURE("avx2"),         EDGE_FEATURE("fma"),
      EDGE_FEATURE("bmi"),        EDGE_FEATURE("bmi2"),         EDGE_FEATURE("aes"),
      EDGE_FEATURE("pclmul"),     EDGE_FEATURE("gfni"),         EDGE_FEATURE("vpclmulqdq"),
      EDGE_FEATURE("avx512f"),    EDGE_FEATURE("avx512vl"),     EDGE_FEATURE("avx512bw"),
      EDGE_FEATURE("avx512dq"),   EDGE_FEATURE("avx512cd"),     EDGE_FEATURE("avx512vnni"),
      EDGE_FEATURE("avx512bf16"), EDGE_FEATURE("avx512vbmi"),   EDGE_FEATURE("avx512vbmi2"),
      EDGE_FEATURE("avx512ifma"), EDGE_FEATURE("avx512bitalg"), EDGE_FEATURE("avx512vpopcntdq"),
      {"f16c", cpuid_bit(1, kEcx, 29)},
      {"movbe", cpuid_bit(1, kEcx, 22)},
      {"xsave", cpuid_bit(1, kEcx, 26)},
      {"lzcnt", cpuid_bit(0x80000001u, kEcx, 5)},
      {"64bit", true},
      {"cx8", true},
      {"fxsr", true},
  };
  return copy_table(table, sizeof(table) / sizeof(table[0]), out, cap);
}
#undef EDGE_FEATURE

#elif defined(__aarch64__)
size_t feature_table(Feature* out, size_t cap) {
#if defined(__linux__)
  const unsigned long hw = getauxval(AT_HWCAP);
#else
  const unsigned long hw = 0;
#endif
  const Feature table[] = {
    {"neon", true},  // mandatory in AArch64
    {"fp-armv8", true},
#if defined(__linux__)
    {"dotprod", (hw & HWCAP_ASIMDDP) != 0},
    {"fullfp16", (hw & HWCAP_ASIMDHP) != 0},
    {"fp16", (hw & HWCAP_FPHP) != 0},
    {"crc", (hw & HWCAP_CRC32) != 0},
    {"aes", (hw & HWCAP_AES) != 0},
    {"sha2", (hw & HWCAP_SHA2) != 0},
    {"lse", (hw & HWCAP_ATOMICS) != 0},
    {"rdm", (hw & HWCAP_ASIMDRDM) != 0},
    {"sve", (hw & HWCAP_SVE) != 0},
#endif
  };
  (void)hw;
  return copy_table(table, sizeof(table) / sizeof(table[0]), out, cap);
}
#endif

}  // namespace edgert::cpu
