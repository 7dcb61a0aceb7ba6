// platform_linux_qemu.cc — platform.h over raw Linux system calls for Hexagon (what
// qemu-hexagon's user mode implements): `trap0(#1)` with the call number in r6, arguments in
// r0-r5, the result (or -errno) in r0. Numbers and structures are the kernel's generic
// 32-bit ABI (asm-generic/unistd.h), which Hexagon Linux uses.
#include "platform.h"

namespace {

enum : long {
  kMkdirat = 34, kOpenat = 56, kClose = 57, kRead = 63, kWrite = 64, kPread64 = 67, kFstat64 = 80,
  kExitGroup = 94, kClockGettime = 113, kMunmap = 215, kMmap2 = 222, kMprotect = 226,
};
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
void edge_pf_exit(int code) {
  for (;;) sys(kExitGroup, code);
}

}  // extern "C"
