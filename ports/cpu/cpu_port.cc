// cpu_port.cc — feature detection, executable code memory and the clock for the CPU port.
#include "cpu_port.h"

#include "internal.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

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

struct Feature {
  const char* name;
  bool present;
};

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

// Large enough for every table above.
constexpr size_t kMaxFeatures = 64;

}  // namespace

bool has_feature(const char* name, bool* known) {
  if (name[0] == '+') ++name;
  Feature table[kMaxFeatures];
  const size_t count = feature_table(table, kMaxFeatures);
  for (size_t i = 0; i < count; ++i) {
    if (std::strcmp(table[i].name, name) == 0) {
      *known = true;
      return table[i].present;
    }
  }
  *known = false;
  return false;
}

const char* describe_features(char* buf, size_t size) {
  if (size == 0) return buf;
  buf[0] = '\0';
  Feature table[kMaxFeatures];
  const size_t count = feature_table(table, kMaxFeatures);
  size_t used = 0;
  for (size_t i = 0; i < count; ++i) {
    if (!table[i].present) continue;
    const int n = std::snprintf(buf + used, size - used, "%s%s", used ? "," : "", table[i].name);
    if (n < 0 || static_cast<size_t>(n) >= size - used) {  // truncated: end with "..."
      if (size >= 4) std::memcpy(buf + size - 4, "...", 4);
      break;
    }
    used += static_cast<size_t>(n);
  }
  return buf;
}

int map_code(const uint8_t* bytes, size_t size, CodeMapping* out) {
  *out = CodeMapping{};
  if (size == 0) return 0;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t mapped = (size + page - 1) / page * page;
  void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return errno;
  std::memcpy(p, bytes, size);
  if (mprotect(p, mapped, PROT_READ | PROT_EXEC) != 0) {
    int err = errno;
    munmap(p, mapped);
    return err;
  }
#if defined(__aarch64__)
  // The instruction cache is not coherent with data writes on ARM.
  __builtin___clear_cache(static_cast<char*>(p), static_cast<char*>(p) + size);
#endif
  out->base = p;
  out->mapped_size = mapped;
  return 0;
}

void unmap_code(CodeMapping* mapping) {
  if (mapping->base) munmap(mapping->base, mapping->mapped_size);
  *mapping = CodeMapping{};
}

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace edgert::cpu
