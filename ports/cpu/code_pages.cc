// code_pages.cc — executable memory for kernel code and the clock, over POSIX (mmap,
// mprotect, clock_gettime): shared by the cpu port and the hexagon port (whose freestanding
// build takes them from ports/hexagon/freestanding/).
#include "cpu_port.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

namespace edgert::cpu {

// Pages of the code's size, written, then made read + execute.
int map_code(const uint8_t* bytes, size_t size, CodeMapping* out) {
  *out = CodeMapping{};
  if (size == 0) return 0;
#if defined(__HEXAGON_ARCH__)
  const size_t page = 4096;  // the freestanding build has no sysconf
#else
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
#endif
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
  // On a Hexagon DSP the data cache must be cleaned and the instruction cache invalidated
  // over the pages before the first call (QuRT: qurt_mem_cache_clean(...,
  // QURT_MEM_CACHE_FLUSH_INVALIDATE, QURT_MEM_ICACHE)); under qemu-user mprotect is enough.
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
