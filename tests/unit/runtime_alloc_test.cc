// edgert_run must not allocate. What this verifies, honestly:
//  - This test binary replaces the C allocator entry points (malloc, calloc, realloc,
//    posix_memalign, aligned_alloc, memalign, valloc, pvalloc), forwarding to glibc's
//    __libc_* implementations, and counts calls made while a counter is armed. The
//    replacements live in the executable, so they also catch allocations made by libc and
//    by libstdc++'s operator new (which calls malloc).
//  - A control check proves the counter sees allocations (plain malloc, operator new, and
//    the runtime's own in edgert_context_create); then edgert_bind_* and many edgert_run
//    calls, successful and NOT_BOUND ones, must count zero.
//  - Not covered: raw mmap/brk system calls (edgert_run makes none: it calls kernels,
//    memmove and clock_gettime only).
//  - An OpenCL driver allocates inside clEnqueue* (PoCL: tens of allocations per run). For
//    the opencl port's test (runtime_opencl_test.cc) the counter can leave out allocations
//    with code on their stack that was loaded after program start (dlopen: the ICD loader,
//    the drivers, what they load); the runtime is linked into this executable, so its own
//    allocations still count (a control check in that test proves it).
// glibc only (the __libc_* entry points). Under sanitizers, or under valgrind (which
// swaps in its own allocator, so the counter sees nothing), the test says so and skips.
#include <doctest/doctest.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

#include "runtime_alloc_counter.h"
#include "runtime_test_util.h"

// GCC defines __SANITIZE_*__; clang (scripts/build_sanitizers.sh) answers __has_feature.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define EDGE_SANITIZED 1
#endif
#endif
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__) && !defined(EDGE_SANITIZED)
#define EDGE_COUNT_ALLOCATIONS 1
#include <execinfo.h>
#include <link.h>

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};
std::atomic<bool> g_ignore_loaded{false};  // leave out allocations by dlopen'ed code
std::atomic<long> g_ignored{0};
thread_local bool t_in_hook = false;  // the stack walk's own allocations are not counted

// Code mapped at program start (the executable and its shared libraries), recorded before
// main; code outside these ranges was loaded later with dlopen.
struct CodeRange {
  uintptr_t begin, end;
};
CodeRange g_startup_code[256];
int g_num_startup_code = 0;

int record_code(dl_phdr_info* info, size_t, void*) {
  for (int i = 0; i < info->dlpi_phnum && g_num_startup_code < 256; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
    const uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
    g_startup_code[g_num_startup_code++] = CodeRange{begin, begin + ph.p_memsz};
  }
  return 0;
}

struct RecordStartupCode {
  RecordStartupCode() {
    void* frames[4];
    backtrace(frames, 4);  // loads the unwinder (libgcc_s) now, so it counts as startup code
    dl_iterate_phdr(record_code, nullptr);
  }
} g_record_startup_code;

bool startup_code(const void* pc) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(pc);
  for (int i = 0; i < g_num_startup_code; ++i)
    if (a >= g_startup_code[i].begin && a < g_startup_code[i].end) return true;
  return false;
}

// Whether some frame of the current stack is in code loaded after program start.
bool loaded_code_on_stack() {
  void* frames[64];
  const int n = backtrace(frames, 64);
  for (int i = 0; i < n; ++i)
    if (!startup_code(frames[i])) return true;
  return false;
}

inline void note_allocation() {
  if (!g_counting.load(std::memory_order_relaxed)) return;
  if (g_ignore_loaded.load(std::memory_order_relaxed)) {
    if (t_in_hook) return;
    t_in_hook = true;
    const bool loaded = loaded_code_on_stack();
    t_in_hook = false;
    if (loaded) {
      g_ignored.fetch_add(1);
      return;
    }
  }
  g_allocations.fetch_add(1);
}
}  // namespace

extern "C" {
void* __libc_malloc(size_t size);
void* __libc_calloc(size_t count, size_t size);
void* __libc_realloc(void* ptr, size_t size);
void* __libc_memalign(size_t alignment, size_t size);
void* __libc_valloc(size_t size);
void* __libc_pvalloc(size_t size);
void __libc_free(void* ptr);

void* malloc(size_t size) {
  note_allocation();
  return __libc_malloc(size);
}
void* calloc(size_t count, size_t size) {
  note_allocation();
  return __libc_calloc(count, size);
}
void* realloc(void* ptr, size_t size) {
  note_allocation();
  return __libc_realloc(ptr, size);
}
void free(void* ptr) { __libc_free(ptr); }
void* memalign(size_t alignment, size_t size) {
  note_allocation();
  return __libc_memalign(alignment, size);
}
void* aligned_alloc(size_t alignment, size_t size) {
  note_allocation();
  return __libc_memalign(alignment, size);
}
int posix_memalign(void** out, size_t alignment, size_t size) {
  note_allocation();
  if (alignment < sizeof(void*) || (alignment & (alignment - 1)) != 0) return 22;  // EINVAL
  void* p = __libc_memalign(alignment, size);
  if (!p) return 12;  // ENOMEM
  *out = p;
  return 0;
}
void* valloc(size_t size) {
  note_allocation();
  return __libc_valloc(size);
}
void* pvalloc(size_t size) {
  note_allocation();
  return __libc_pvalloc(size);
}
}  // extern "C"

namespace {
// Counts allocations between construction and count().
struct AllocationCounter {
  AllocationCounter() {
    g_allocations = 0;
    g_counting = true;
  }
  ~AllocationCounter() { g_counting = false; }
  long count() {
    g_counting = false;
    return g_allocations.load();
  }
};
}  // namespace
#endif  // glibc

using namespace rt_test;

#if defined(EDGE_COUNT_ALLOCATIONS)
namespace {
// False where another allocator took over the entry points (valgrind): the counter would
// then read zero whatever happens, so the no-allocation check would prove nothing.
bool counter_works() {
  void* (*volatile m)(size_t) = std::malloc;  // volatile: the call cannot be elided
  AllocationCounter counter;
  std::free(m(16));
  if (counter.count() == 1) return true;
  MESSAGE("allocation counter not effective here (valgrind?): skipping");
  return false;
}
}  // namespace

TEST_CASE("alloc: the counter sees malloc, new and the runtime's own allocations") {
  if (!counter_works()) return;
  {
    void* (*volatile m)(size_t) = std::malloc;  // volatile: the call cannot be elided
    AllocationCounter counter;
    std::free(m(16));
    CHECK(counter.count() == 1);
  }
  {
    void* (*volatile n)(size_t) = static_cast<void* (*)(size_t)>(&::operator new);
    AllocationCounter counter;
    ::operator delete(n(16));
    CHECK(counter.count() == 1);
  }
  Opened o(copy_bundle());
  REQUIRE(o.status == EDGERT_OK);
  edgert_context* ctx = nullptr;
  {
    AllocationCounter counter;
    REQUIRE(edgert_context_create(o.bundle, nullptr, &ctx) == EDGERT_OK);
    CHECK(counter.count() >= 5);  // context, arena, ops, arg table, timestamps, ...
  }
  edgert_context_destroy(ctx);
}

namespace {
long allocations_during_runs(const BundleDesc& d) {
  Opened o(d);
  REQUIRE(o.status == EDGERT_OK);
  edgert_context* ctx = nullptr;
  REQUIRE(edgert_context_create(o.bundle, nullptr, &ctx) == EDGERT_OK);
  alignas(64) float x[4] = {1, 2, 3, 4}, y[4] = {}, w[4] = {};
  long count = 0;
  {
    AllocationCounter counter;
    // NOT_BOUND (formats an error message) must not allocate either.
    CHECK(edgert_run(ctx) == EDGERT_ERROR_NOT_BOUND);
    REQUIRE(edgert_bind_input(ctx, 0, x, 16) == EDGERT_OK);
    REQUIRE(edgert_bind_output(ctx, 0, y, 16) == EDGERT_OK);
    REQUIRE(edgert_bind_output(ctx, 1, w, 16) == EDGERT_OK);
    for (int i = 0; i < 50; ++i) CHECK(edgert_run(ctx) == EDGERT_OK);
    count = counter.count();
  }
  CHECK(y[3] != 0.0f);  // the runs did run
  edgert_context_destroy(ctx);
  return count;
}
}  // namespace

TEST_CASE("alloc: edgert_run and edgert_bind_* make no heap allocation") {
  if (!counter_works()) return;
  CHECK(allocations_during_runs(copy_bundle()) == 0);
#if defined(EDGE_TEST_HAS_KERNELS)
  CHECK(allocations_during_runs(add_bundle()) == 0);
#endif
}
#endif

// For other test files (runtime_alloc_counter.h).
namespace rt_test {
#if defined(EDGE_COUNT_ALLOCATIONS)
bool allocation_counting_works() { return counter_works(); }
void start_counting_allocations(bool ignore_loaded_libraries) {
  g_allocations = 0;
  g_ignored = 0;
  g_ignore_loaded = ignore_loaded_libraries;
  g_counting = true;
}
long stop_counting_allocations() {
  g_counting = false;
  g_ignore_loaded = false;
  return g_allocations.load();
}
long ignored_allocations() { return g_ignored.load(); }
#else
bool allocation_counting_works() {
  MESSAGE("allocations are counted on glibc without sanitizers only: skipping");
  return false;
}
void start_counting_allocations(bool) {}
long stop_counting_allocations() { return 0; }
long ignored_allocations() { return 0; }
#endif
}  // namespace rt_test
