// cxx_start.cc — what a freestanding C++ program needs beyond libc_subset.c on Hexagon: the
// process entry (_start: argc / argv from the initial stack, static constructors,
// main, exit), operator new / delete (over malloc; the runtime itself uses calloc + placement
// new), __cxa_pure_virtual, one-thread function-local-static guards, __cxa_atexit.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

#include "platform.h"

int main(int argc, char** argv);

extern "C" {
using InitFn = void (*)();
extern InitFn __init_array_start[] __attribute__((weak));
extern InitFn __init_array_end[] __attribute__((weak));
void* __dso_handle = nullptr;

[[noreturn]] __attribute__((used)) void edge_start_c(uint32_t* sp) {
  const int argc = static_cast<int>(sp[0]);
  char** argv = reinterpret_cast<char**>(sp + 1);
  for (InitFn* f = __init_array_start; f && f != __init_array_end; ++f) (*f)();
  edge_pf_exit(main(argc, argv));
}

// The kernel starts a process with r29 (sp) at argc, argv[], 0, envp[], 0, auxv.
__asm__(
    ".text\n"
    ".globl _start\n"
    ".type _start,@function\n"
    "_start:\n"
    "  { r0 = r29; r30 = #0; r31 = #0 }\n"
    "  { r29 = and(r29, #-8) }\n"
    "  { call edge_start_c }\n"
    ".size _start, .-_start\n");

void __cxa_pure_virtual() { edge_pf_exit(134); }
int __cxa_atexit(void (*)(void*), void*, void*) { return 0; }  // the process never unwinds
int __cxa_guard_acquire(uint64_t* guard) { return *reinterpret_cast<uint8_t*>(guard) == 0; }
void __cxa_guard_release(uint64_t* guard) { *reinterpret_cast<uint8_t*>(guard) = 1; }
void __cxa_guard_abort(uint64_t*) {}
}  // extern "C"

void* operator new(std::size_t n) { return std::malloc(n ? n : 1); }
void* operator new[](std::size_t n) { return std::malloc(n ? n : 1); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return std::malloc(n ? n : 1); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return std::malloc(n ? n : 1); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
