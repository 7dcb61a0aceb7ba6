// platform.h — the operating-system services the runtime and edgert-run need on the DSP, as
// one small C interface: files (open, read at an offset, size, write, create a directory),
// memory (anonymous pages, protection, a read-only mapping of a file), a monotonic clock,
// exit, and threads (start, join, futex wait / wake) for the hexagon port's worker threads
// (ports/hexagon/fixed_pool.cc). freestanding.cc builds the POSIX / libc subset the runtime calls (open, fstat, pread,
// mmap, mprotect, clock_gettime, malloc, snprintf, ...) on it. Two implementations:
//   platform_linux_qemu.cc  raw Linux system calls (trap0), what qemu-hexagon runs
//   QuRT (the DSP's RTOS; not built here, see README.md): the same functions over
//                           qurt_mem_* / HAP_mmap, the FastRPC file system or apps_std_*,
//                           qurt_timer_get_ticks, FARF logging, qurt_thread_create /
//                           qurt_futex_wait / qurt_futex_wake
// Every function returns >= 0 (or a pointer) on success, -errno on failure.
#pragma once
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { EDGE_PF_PROT_READ = 1, EDGE_PF_PROT_WRITE = 2, EDGE_PF_PROT_EXEC = 4 };
enum { EDGE_PF_OPEN_READ = 0, EDGE_PF_OPEN_WRITE_CREATE = 1 };

long edge_pf_open(const char* path, int mode);                     // fd
long edge_pf_close(int fd);
long edge_pf_read(int fd, void* buf, size_t n);                     // bytes read, 0 at the end
long edge_pf_pread(int fd, void* buf, size_t n, uint64_t offset);  // bytes read, 0 at the end
long edge_pf_write(int fd, const void* buf, size_t n);              // bytes written
// A regular file's size in *size; *regular = 0 for anything else (FIFO, directory, device).
long edge_pf_file_info(int fd, int* regular, uint64_t* size);
long edge_pf_mkdir(const char* path);                               // -EEXIST if it exists
// Fresh zeroed pages (page-aligned) / pages mapping a file read-only; -errno cast to a pointer
// in [-4095, -1] on failure (edge_pf_failed).
void* edge_pf_map_anon(size_t size, int prot);
void* edge_pf_map_file(int fd, size_t size);
long edge_pf_unmap(void* p, size_t size);
long edge_pf_protect(void* p, size_t size, int prot);
uint64_t edge_pf_monotonic_ns(void);
uint64_t edge_pf_realtime_ns(void);
[[noreturn]] void edge_pf_exit(int code);

// Threads of this process, sharing its memory. A thread gets its own stack (mapped here with
// an inaccessible guard region below it, unmapped by join) and runs fn(arg); when fn returns
// the thread ends. Start and join happen at context creation and destruction, never during
// a run. A started thread is a handle whose contents are the implementation's (it keeps
// them in the thread's own stack mapping): join it exactly once, and it is gone.
typedef struct edge_pf_thread edge_pf_thread;
long edge_pf_thread_start(edge_pf_thread** out, void (*fn)(void*), void* arg, size_t stack_size);  // 0 or -errno
long edge_pf_thread_join(edge_pf_thread* t);                                                       // 0 or -errno
// Sleeps while *word == expected (returns at once if it differs; may return spuriously:
// callers re-check). 0, -EAGAIN (it differed) or -EINTR.
long edge_pf_futex_wait(volatile uint32_t* word, uint32_t expected);
// Wakes up to `count` threads sleeping on word; the number woken.
long edge_pf_futex_wake(volatile uint32_t* word, int count);

static inline int edge_pf_failed(const void* p) { return (uintptr_t)p >= (uintptr_t)-4095; }

#ifdef __cplusplus
}
#endif
