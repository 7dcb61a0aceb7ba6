// one_thread_pool.cc — thread_pool.h for the FastRPC skeleton: no worker threads. The skeleton
// runs on the DSP under QuRT, whose thread layer (ports/hexagon/README.md, "Threads") is
// documented but not built here, so a context asking for more than one thread is refused
// with ENOSYS. It keeps fixed_pool.cc and the thread calls out of libedgert_skel.so.
#include <cerrno>

#include "fixed_pool.h"

namespace edgert::cpu {

int32_t thread_pool_max_threads() { return kMaxPoolThreads; }
int thread_pool_create(int32_t, ThreadPool** out) {
  *out = nullptr;
  return ENOSYS;
}
// No pool is ever created: every launch runs whole on the calling thread.
void thread_pool_launch(ThreadPool*, edge::abi::CpuKernelFn fn, void* const* args, uint64_t) { fn(args, 0, 1); }
void thread_pool_destroy(ThreadPool*) {}

}  // namespace edgert::cpu
