// fixed_pool.h — the hexagon port's worker threads (thread_pool.h). A parallel launch is
// split as the cpu port splits it (the kernel ABI's core_id / num_cores: each share writes its
// own outputs, so any split is bit-identical to one thread), but into one fixed share per
// thread: thread t (0 = the caller) always runs share t. Hardware threads on the DSP are not preempted the
// way an OS schedules threads, so there is nothing to balance, and a fixed share makes every
// thread's work (and its packet count under qemu) the same from run to run.
// Workers start at context creation and end at its destruction; a run starts and stops no
// thread and allocates nothing. They sleep on a futex between launches (no spinning, which
// would burn a hardware thread and make packet counts depend on timing).
// A worker runs kernels (which call nothing) and platform.h's futex calls, nothing else: the
// freestanding C library (malloc, errno, the runtime's last-error message) is single-threaded
// and stays the calling thread's.
// fixed_pool.cc implements thread_pool.h so, over platform.h's threads; the FastRPC skeleton
// links fastrpc/one_thread_pool.cc instead (one thread: no thread layer for QuRT is built here).
#pragma once
#include <stdint.h>

#include "thread_pool.h"

namespace edgert::cpu {

// The most threads a context may run on (thread_pool_max_threads): a v65 / v66 compute DSP
// has 4 hardware threads (and 2 HVX contexts: more than 2 threads of HVX code wait for a context).
constexpr int32_t kMaxPoolThreads = 4;

}  // namespace edgert::cpu
