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

#if defined(__aarch64__)
size_t copy_table(const Feature* table, size_t count, Feature* out, size_t cap) {
  if (count > cap) count = cap;
  for (size_t i = 0; i < count; ++i) out[i] = table[i];
  return count;
}
#endif

#if defined(__x86_64__)
struct Regs {
  unsigned a = 0, b = 0, c = 0, d = 0;
};

Regs cpuid(unsigned leaf, unsigned subleaf) {
  Regs r;
  if (__get_cpuid_max(leaf & 0x80000000u, nullptr) >= leaf) __cpuid_count(leaf, subleaf, r.a, r.b, r.c, r.d);
  return r;
}

// Where a feature's bit is: one of the registers below, and the register state the OS must
// save for it to count. A table rather than code: 37 entries of code were 1.4 KB.
enum Word : uint8_t { L1C, L1D, L7B, L7C, L7S1A, EXTC, ALWAYS };
enum Needs : uint8_t { NONE, AVX_STATE, AVX512_STATE };
struct FeatureBit {
  char name[16];
  Word word;
  uint8_t bit;
  Needs needs;
};
constexpr FeatureBit kX86Features[] = {
    {"cmov", L1D, 15, NONE},           {"mmx", L1D, 23, NONE},
    {"popcnt", L1C, 23, NONE},         {"sse", L1D, 25, NONE},
    {"sse2", L1D, 26, NONE},           {"sse3", L1C, 0, NONE},
    {"ssse3", L1C, 9, NONE},           {"sse4.1", L1C, 19, NONE},
    {"sse4.2", L1C, 20, NONE},         {"avx", L1C, 28, AVX_STATE},
    {"avx2", L7B, 5, AVX_STATE},       {"fma", L1C, 12, AVX_STATE},
    {"bmi", L7B, 3, NONE},             {"bmi2", L7B, 8, NONE},
    {"aes", L1C, 25, NONE},            {"pclmul", L1C, 1, NONE},
    {"gfni", L7C, 8, NONE},            {"vpclmulqdq", L7C, 10, AVX_STATE},
    {"avx512f", L7B, 16, AVX512_STATE},      {"avx512vl", L7B, 31, AVX512_STATE},
    {"avx512bw", L7B, 30, AVX512_STATE},     {"avx512dq", L7B, 17, AVX512_STATE},
    {"avx512cd", L7B, 28, AVX512_STATE},     {"avx512vnni", L7C, 11, AVX512_STATE},
    {"avx512bf16", L7S1A, 5, AVX512_STATE},  {"avx512vbmi", L7C, 1, AVX512_STATE},
    {"avx512vbmi2", L7C, 6, AVX512_STATE},   {"avx512ifma", L7B, 21, AVX512_STATE},
    {"avx512bitalg", L7C, 12, AVX512_STATE}, {"avx512vpopcntdq", L7C, 14, AVX512_STATE},
    {"f16c", L1C, 29, AVX_STATE},      {"cx16", L1C, 13, NONE},
    {"sahf", EXTC, 0, NONE},           {"movbe", L1C, 22, NONE},
    {"xsave", L1C, 26, NONE},          {"lzcnt", EXTC, 5, NONE},
    {"64bit", ALWAYS, 0, NONE},        {"cx8", ALWAYS, 0, NONE},
    {"fxsr", ALWAYS, 0, NONE},
};
#endif

}  // namespace

#if defined(__x86_64__)
// What __builtin_cpu_supports answers, read from cpuid directly: libgcc's CPU model behind it
// (__cpu_indicator_init, get_available_features) was 4.5 KB of the runtime's 48. As there, a
// feature of the AVX family counts only where the OS saves the YMM registers, and one of
// AVX-512 only where it saves the ZMM and opmask registers too (XCR0). Evaluated on each call
// (only at bundle open): a function-local static would need the C++ runtime's init guards.
size_t feature_table(Feature* out, size_t cap) {
  const Regs l1 = cpuid(1, 0), l7 = cpuid(7, 0), l7s1 = cpuid(7, 1), ext = cpuid(0x80000001u, 0);
  const unsigned words[] = {l1.c, l1.d, l7.b, l7.c, l7s1.a, ext.c, ~0u};
  unsigned xcr0 = 0, xcr0_high = 0;
  if (l1.c >> 27 & 1u) __asm__("xgetbv" : "=a"(xcr0), "=d"(xcr0_high) : "c"(0));  // OSXSAVE
  const bool state[] = {true, (xcr0 & 0x6) == 0x6,                                     // SSE, AVX
                        (xcr0 & 0xe6) == 0xe6};                                       // + opmask, ZMM
  size_t n = 0;
  for (const FeatureBit& f : kX86Features)
    if (n < cap) out[n++] = Feature{f.name, state[f.needs] && (words[f.word] >> f.bit & 1u) != 0};
  return n;
}

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
