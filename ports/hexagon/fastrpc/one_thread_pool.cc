// one_thread_pool.cc — fixed_pool.h for the FastRPC skeleton: no worker threads. The skeleton
// runs on the DSP under QuRT, whose thread layer (ports/hexagon/README.md, "Threads") is
// documented but not built here, so a context asking for more than one thread is refused
// with ENOSYS. It keeps fixed_pool.cc and the thread calls out of libedgert_skel.so.
#include <cerrno>

#include "fixed_pool.h"

namespace edgert::cpu {

int fixed_pool_create(int32_t, FixedPool** out) {
  *out = nullptr;
  return ENOSYS;
}
// Unreachable (create fails, so no pool exists); runs the launch whole if ever reached.
void fixed_pool_run(FixedPool*, PoolKernelFn fn, void* const* args, uint64_t) { fn(args, 0, 1); }
void fixed_pool_destroy(FixedPool*) {}

}  // namespace edgert::cpu
