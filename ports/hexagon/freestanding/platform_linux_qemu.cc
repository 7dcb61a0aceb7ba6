// platform_linux_qemu.cc — platform.h over raw Linux system calls for Hexagon (what
// qemu-hexagon's user mode implements): `trap0(#1)` with the call number in r6, arguments in
// r0-r5, the result (or -errno) in r0. Numbers and structures are the kernel's generic
// 32-bit ABI (asm-generic/unistd.h), which Hexagon Linux uses. Threads are raw clone()
// threads (qemu-user runs each as a host thread with its own vCPU), synchronized by futex.
#include "platform.h"

namespace {

enum : long {
  kMkdirat = 34, kOpenat = 56, kClose = 57, kRead = 63, kWrite = 64, kPread64 = 67, kFstat64 = 80,
  kExitGroup = 94, kClockGettime = 113, kMunmap = 215, kMmap2 = 222, kMprotect = 226,
  kFutex = 98,  // kExit (93) and kClone (220): edge_pf_clone_thread below
};
constexpr long kFutexWait = 0, kFutexWake = 1, kFutexPrivate = 128;
// Thread stacks are rounded to, and guarded by, 64 KB: qemu-hexagon's pages are 64 KB (its
// mmap and mprotect work in them: a 4 KB guard would protect a whole 64 KB page), and a
// Hexagon Linux kernel's are 4 KB to 256 KB.
constexpr size_t kStackPage = 64 * 1024;
constexpr long kAtFdcwd = -100;
constexpr long kOpenRead = 0x80000 | 0x800;            // O_RDONLY | O_CLOEXEC | O_NONBLOCK
constexpr long kOpenWrite = 01 | 0100 | 01000 | 0x80000;  // O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC

long syscall6(long n, long a0, long a1, long a2, long a3, long a4, long a5) {
  register long r0 __asm__("r0") = a0;
  register long r1 __asm__("r1") = a1;
  register long r2 __asm__("r2") = a2;
  register long r3 __asm__("r3") = a3;
  register long r4 __asm__("r4") = a4;
  register long r5 __asm__("r5") = a5;
  register long r6 __asm__("r6") = n;
  __asm__ volatile("trap0(#1)" : "+r"(r0) : "r"(r1), "r"(r2), "r"(r3), "r"(r4), "r"(r5), "r"(r6) : "memory");
  return r0;
}
long sys(long n, long a0 = 0, long a1 = 0, long a2 = 0, long a3 = 0, long a4 = 0, long a5 = 0) {
  return syscall6(n, a0, a1, a2, a3, a4, a5);
}

// struct stat64 of asm-generic/stat.h (the 32-bit generic layout).
struct KernelStat64 {
  unsigned long long st_dev, st_ino;
  unsigned int st_mode, st_nlink, st_uid, st_gid;
  unsigned long long st_rdev, pad1;
  long long st_size;
  int st_blksize, pad2;
  long long st_blocks;
  int st_atime, st_atime_nsec, st_mtime, st_mtime_nsec, st_ctime, st_ctime_nsec;
  unsigned int unused4, unused5;
};
static_assert(sizeof(KernelStat64) == 104, "asm-generic struct stat64");

struct KernelTimespec32 {
  long tv_sec, tv_nsec;
};

long prot_bits(int prot) {
  return (prot & EDGE_PF_PROT_READ ? 1 : 0) | (prot & EDGE_PF_PROT_WRITE ? 2 : 0) | (prot & EDGE_PF_PROT_EXEC ? 4 : 0);
}

}  // namespace

extern "C" {

// clone(flags, stack_top, parent_tid = tid, child_tid = tid, tls = 0) (the generic argument
// order); the child, on its new stack, calls fn(arg) and then ends with exit(0) (one thread,
// not exit_group). fn and arg travel in r10 / r11, which the child inherits. Returns the
// child's id or -errno in the parent.
long edge_pf_clone_thread(long flags, void* stack_top, volatile uint32_t* tid, void (*fn)(void*), void* arg);
__asm__(
    ".text\n"
    ".globl edge_pf_clone_thread\n"
    ".type edge_pf_clone_thread,@function\n"
    ".p2align 4\n"
    "edge_pf_clone_thread:\n"
    "  { r10 = r3; r11 = r4; r3 = r2; r6 = #220 }\n"
    "  { r4 = #0 }\n"
    "  { trap0(#1) }\n"
    "  { p0 = cmp.eq(r0, #0) }\n"
    "  { if (!p0) jumpr r31 }\n"
    "  { r0 = r11; r30 = #0; r31 = #0 }\n"
    "  { callr r10 }\n"
    "  { r0 = #0; r6 = #93 }\n"
    "  { trap0(#1) }\n"
    ".size edge_pf_clone_thread, .-edge_pf_clone_thread\n");

long edge_pf_open(const char* path, int mode) {
  return sys(kOpenat, kAtFdcwd, reinterpret_cast<long>(path), mode == EDGE_PF_OPEN_WRITE_CREATE ? kOpenWrite : kOpenRead,
             0644);
}
long edge_pf_close(int fd) { return sys(kClose, fd); }
long edge_pf_read(int fd, void* buf, size_t n) { return sys(kRead, fd, reinterpret_cast<long>(buf), static_cast<long>(n)); }
long edge_pf_pread(int fd, void* buf, size_t n, uint64_t offset) {
  // A 64-bit argument goes in an aligned register pair (r4:r5; r3 is skipped).
  return sys(kPread64, fd, reinterpret_cast<long>(buf), static_cast<long>(n), 0, static_cast<long>(offset & 0xffffffffu),
             static_cast<long>(offset >> 32));
}
long edge_pf_write(int fd, const void* buf, size_t n) {
  return sys(kWrite, fd, reinterpret_cast<long>(buf), static_cast<long>(n));
}
long edge_pf_file_info(int fd, int* regular, uint64_t* size) {
  KernelStat64 st;
  long r = sys(kFstat64, fd, reinterpret_cast<long>(&st));
  if (r < 0) return r;
  *regular = (st.st_mode & 0170000) == 0100000;
  *size = static_cast<uint64_t>(st.st_size);
  return 0;
}
long edge_pf_mkdir(const char* path) { return sys(kMkdirat, kAtFdcwd, reinterpret_cast<long>(path), 0755); }
void* edge_pf_map_anon(size_t size, int prot) {
  return reinterpret_cast<void*>(sys(kMmap2, 0, static_cast<long>(size), prot_bits(prot), 0x02 | 0x20, -1, 0));
}
void* edge_pf_map_file(int fd, size_t size) {
  return reinterpret_cast<void*>(sys(kMmap2, 0, static_cast<long>(size), 1, 0x02, fd, 0));
}
long edge_pf_unmap(void* p, size_t size) { return sys(kMunmap, reinterpret_cast<long>(p), static_cast<long>(size)); }
long edge_pf_protect(void* p, size_t size, int prot) {
  return sys(kMprotect, reinterpret_cast<long>(p), static_cast<long>(size), prot_bits(prot));
}
static uint64_t clock_ns(long clock) {
  KernelTimespec32 ts{0, 0};
  sys(kClockGettime, clock, reinterpret_cast<long>(&ts));
  return static_cast<uint64_t>(static_cast<unsigned long>(ts.tv_sec)) * 1000000000ull +
         static_cast<uint64_t>(ts.tv_nsec);
}
uint64_t edge_pf_monotonic_ns(void) { return clock_ns(1); }
uint64_t edge_pf_realtime_ns(void) { return clock_ns(0); }

// A thread's handle, kept at the top of its stack mapping (the stack grows down below it).
// `tid` is nonzero while the thread exists and becomes 0 when it has ended: the kernel clears
// it and wakes a futex waiter on it, which is what join waits for.
struct edge_pf_thread {
  volatile uint32_t tid;
  void* mapping;  // guard + stack + this handle
  size_t mapping_size;
};

long edge_pf_thread_start(edge_pf_thread** out, void (*fn)(void*), void* arg, size_t stack_size) {
  // CLONE_VM | FS | FILES | SIGHAND | THREAD | SYSVSEM: a thread of this process (the set
  // qemu-user requires of a thread); PARENT_SETTID | CHILD_CLEARTID: tid is set before clone
  // returns and cleared, with a futex wake, when the thread ends (what join waits on).
  constexpr long kFlags = 0x100 | 0x200 | 0x400 | 0x800 | 0x10000 | 0x40000 | 0x100000 | 0x200000;
  *out = nullptr;
  const size_t size = (stack_size + kStackPage - 1) / kStackPage * kStackPage + kStackPage;
  void* mem = edge_pf_map_anon(size, EDGE_PF_PROT_READ | EDGE_PF_PROT_WRITE);
  if (edge_pf_failed(mem)) return reinterpret_cast<long>(mem);
  // The handle at the top (it takes 16 of the stack's bytes), 8-byte aligned, as the stack
  // pointer below it must be.
  const uintptr_t top = (reinterpret_cast<uintptr_t>(mem) + size - sizeof(edge_pf_thread)) & ~uintptr_t{7};
  auto* t = reinterpret_cast<edge_pf_thread*>(top);
  t->mapping = mem;
  t->mapping_size = size;
  long r = edge_pf_protect(mem, kStackPage, 0);  // the guard: a stack overflow faults
  if (r == 0) r = edge_pf_clone_thread(kFlags, t, &t->tid, fn, arg);
  if (r < 0) {
    edge_pf_unmap(mem, size);
    return r;
  }
  *out = t;
  return 0;
}

long edge_pf_thread_join(edge_pf_thread* t) {
  if (!t) return -22;  // EINVAL: not started
  // The kernel's wake at thread exit is a shared (not process-private) futex wake.
  for (uint32_t v; (v = t->tid) != 0;) sys(kFutex, reinterpret_cast<long>(&t->tid), kFutexWait, static_cast<long>(v), 0);
  return edge_pf_unmap(t->mapping, t->mapping_size);
}

long edge_pf_futex_wait(volatile uint32_t* word, uint32_t expected) {
  return sys(kFutex, reinterpret_cast<long>(word), kFutexWait | kFutexPrivate, static_cast<long>(expected), 0);
}
long edge_pf_futex_wake(volatile uint32_t* word, int count) {
  return sys(kFutex, reinterpret_cast<long>(word), kFutexWake | kFutexPrivate, count);
}

void edge_pf_exit(int code) {
  for (;;) sys(kExitGroup, code);
}

}  // extern "C"
