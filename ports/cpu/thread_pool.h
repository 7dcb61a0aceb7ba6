// thread_pool.h — the worker threads of a context, as the replay (cpu_context.cc) sees them.
// One interface, one implementation linked per build:
//   ports/cpu/worker_pool.cc                   x86-64, aarch64: chunks claimed from a counter
//   ports/hexagon/fixed_pool.cc                the DSP: one fixed share per thread
//   ports/hexagon/fastrpc/one_thread_pool.cc   the FastRPC skeleton: no workers at all
// A pool is created with its context and destroyed with it; a launch starts and stops no
// thread and allocates nothing. Every split uses the kernel ABI's core_id / num_cores, so
// the outputs are bit-identical to one thread's whatever the pool does.
#pragma once
#include <stdint.h>

#include "kernel_abi.h"

namespace edgert::cpu {

struct ThreadPool;  // defined by each implementation

// The most threads a context may ask for (the caller refuses more).
int32_t thread_pool_max_threads();
// Starts the workers for num_threads threads in all (2 <= num_threads <= the most; the
// caller is one of them). 0 or an errno value, and then *out is null and no worker runs:
// ENOSYS for a build without threads, ENOMEM or whatever starting a thread failed with.
int thread_pool_create(int32_t num_threads, ThreadPool** out);
// Runs one launch of `fn` split into parts across the threads (at most parallel_extent
// parts; part 0 on the calling thread included) and returns when all are done. A null pool
// runs it whole on the calling thread.
void thread_pool_launch(ThreadPool* pool, edge::abi::CpuKernelFn fn, void* const* args,
                        uint64_t parallel_extent);
// Ends and joins the workers and frees the pool. Null is fine.
void thread_pool_destroy(ThreadPool* pool);

}  // namespace edgert::cpu
