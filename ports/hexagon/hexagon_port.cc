// hexagon_port.cc — the machine side of the hexagon port (cpu_port.h's functions for the DSP):
// which bundles this DSP runs, executable memory for kernel code, the clock. The replay itself
// is the cpu port's (ports/cpu/cpu_context.cc, one thread).
#include "cpu_port.h"

#include "internal.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace edgert::cpu {

edge::bundle::Arch host_arch() { return edge::bundle::Arch::Hexagon; }

namespace {

struct Feature {
  const char* name;
  bool present;
};

#if !defined(__HEXAGON_ARCH__)
#error "the hexagon port is built for Hexagon (toolchains/hexagon.cmake)"
#endif

// What the code may require, as LLVM names the features: the architecture version this
// runtime was built for (a v66 runtime runs v65 code) and HVX with 128-byte vectors, which
// every v65 / v66 compute DSP has (the cDSP of the Snapdragon 845 / 855).
const Feature kFeatures[] = {
    {"v65", __HEXAGON_ARCH__ >= 65},       {"v66", __HEXAGON_ARCH__ >= 66},
    {"hvxv65", __HEXAGON_ARCH__ >= 65},    {"hvxv66", __HEXAGON_ARCH__ >= 66},
    {"hvx-length128b", true},
};
constexpr size_t kNumFeatures = sizeof(kFeatures) / sizeof(kFeatures[0]);

}  // namespace

bool has_feature(const char* name, bool* known) {
  if (name[0] == '+') ++name;
  for (const Feature& f : kFeatures)
    if (std::strcmp(f.name, name) == 0) {
      *known = true;
      return f.present;
    }
  *known = false;
  return false;
}

const char* describe_features(char* buf, size_t size) {
  if (size == 0) return buf;
  buf[0] = '\0';
  size_t used = 0;
  for (size_t i = 0; i < kNumFeatures; ++i) {
    if (!kFeatures[i].present) continue;
    const int n = std::snprintf(buf + used, size - used, "%s%s", used ? "," : "", kFeatures[i].name);
    if (n < 0 || static_cast<size_t>(n) >= size - used) {
      if (size >= 4) std::memcpy(buf + size - 4, "...", 4);
      break;
    }
    used += static_cast<size_t>(n);
  }
  return buf;
}

// Pages of the code's size, written, then made read + execute. On the device the data cache
// must be cleaned and the instruction cache invalidated over them before the first call
// (QuRT: qurt_mem_cache_clean(..., QURT_MEM_CACHE_FLUSH_INVALIDATE, QURT_MEM_ICACHE)); under
// qemu-user, mprotect is enough.
int map_code(const uint8_t* bytes, size_t size, CodeMapping* out) {
  *out = CodeMapping{};
  if (size == 0) return 0;
  const size_t page = 4096;
  const size_t mapped = (size + page - 1) / page * page;
  void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return errno;
  std::memcpy(p, bytes, size);
  if (mprotect(p, mapped, PROT_READ | PROT_EXEC) != 0) {
    int err = errno;
    munmap(p, mapped);
    return err;
  }
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
