// fixed_pool.h — the hexagon port's worker threads. A parallel launch is split as the cpu
// port splits it (the kernel ABI's core_id / num_cores: each share writes its own outputs,
// so any split is bit-identical to one thread), but into one fixed share per thread: thread
// t (0 = the caller) always runs share t. Hardware threads on the DSP are not preempted the
// way an OS schedules threads, so there is nothing to balance, and a fixed share makes every
// thread's work (and its packet count under qemu) the same from run to run.
// Workers start at context creation and end at its destruction; a run starts and stops no
// thread and allocates nothing. They sleep on a futex between launches (no spinning, which
// would burn a hardware thread and make packet counts depend on timing).
// A worker runs kernels (which call nothing) and platform.h's futex calls, nothing else: the
// freestanding C library (malloc, errno, the runtime's last-error message) is single-threaded
// and stays the calling thread's.
// fixed_pool.cc implements it over platform.h's threads; the FastRPC skeleton links
// fastrpc/one_thread_pool.cc instead (one thread: no thread layer for QuRT is built here).
#pragma once
#include <stdint.h>

namespace edgert::cpu {

// A compiled kernel's entry point (the same type as edge::abi::CpuKernelFn).
using PoolKernelFn = void (*)(void* const* args, int32_t core_id, int32_t num_cores);

// The most threads a context may run on: a v65 / v66 compute DSP has 4 hardware threads
// (and 2 HVX contexts: more than 2 threads of HVX code wait for a context).
constexpr int32_t kMaxPoolThreads = 4;

struct FixedPool;

// Starts num_threads - 1 workers (2 <= num_threads <= kMaxPoolThreads). 0 or an errno value
// (then *out is null and no thread runs).
int fixed_pool_create(int32_t num_threads, FixedPool** out);
// fn(args, t, shares) for t in [0, shares), shares = min(parallel_extent, threads): share 0
// on the calling thread, share t on worker t; returns when all are done.
void fixed_pool_run(FixedPool* pool, PoolKernelFn fn, void* const* args, uint64_t parallel_extent);
// Ends and joins the workers, frees the pool. Null is fine.
void fixed_pool_destroy(FixedPool* pool);

}  // namespace edgert::cpu
