// cpu_time_clock.c — an LD_PRELOAD shim that turns CLOCK_MONOTONIC readings into the calling
// thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so that `edgert-bench --threads 1 --profile`
// (the cpu port times each command with CLOCK_MONOTONIC on the running thread) times every
// kernel by the CPU time it took. On a shared machine under load the wall-clock medians of
// the long kernels include the time other work had the core (load 12 on 2 cores: GoogLeNet's
// 5-15 ms kernels read 3-4x their CPU time and were flagged SLOW); the CPU time is the core's
// rate while the kernel ran (cache and memory contention still count). One thread only.
//   cc -O2 -shared -fPIC -o /tmp/cpu_time_clock.so tests/bench/cpu_time_clock.c -ldl
//   LD_PRELOAD=/tmp/cpu_time_clock.so build/device_runtime/edgert-bench B.bundle --profile
#define _GNU_SOURCE
#include <dlfcn.h>
#include <time.h>

int clock_gettime(clockid_t id, struct timespec* ts) {
  static int (*real)(clockid_t, struct timespec*);
  if (!real) real = (int (*)(clockid_t, struct timespec*))dlsym(RTLD_NEXT, "clock_gettime");
  if (id == CLOCK_MONOTONIC || id == CLOCK_MONOTONIC_RAW) id = CLOCK_THREAD_CPUTIME_ID;
  return real(id, ts);
}
