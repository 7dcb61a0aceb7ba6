// fixed_pool.cc — thread_pool.h for the hexagon port (fixed_pool.h) over platform.h's threads
// and futexes (ports/hexagon/freestanding/: clone threads under qemu-hexagon;
// qurt_thread_create and qurt_futex_* on the device, see ports/hexagon/README.md).
#include "fixed_pool.h"

#include <cerrno>
#include <cstdlib>

#include "platform.h"

namespace edgert::cpu {

namespace {

// Kernels call nothing and keep their frames small (the int8 MobileNetV2's largest: 16 KB);
// 64 KB is ample, and the guard below it (platform.h) turns an overflow into a fault
// rather than a write into other memory.
constexpr size_t kWorkerStack = 64 * 1024;

uint32_t load_acquire(const volatile uint32_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }

}  // namespace

struct ThreadPool {
  struct Worker {
    ThreadPool* pool;
    int32_t share;  // the share of every launch this worker runs
  };
  edge_pf_thread* threads[kMaxPoolThreads - 1];
  Worker workers[kMaxPoolThreads - 1];
  int32_t num_workers;

  // The launch: written by the calling thread while no worker looks at it (before the
  // generation that publishes it, after every worker has finished the previous one).
  edge::abi::CpuKernelFn fn;
  void* const* args;
  int32_t shares;
  // Bumped once per launch (and once to stop); workers sleep on it.
  volatile uint32_t generation;
  // Workers still busy with the current launch; the caller sleeps on it.
  volatile uint32_t pending;
  volatile uint32_t quit;

  static void worker_main(void* arg);
};

void ThreadPool::worker_main(void* arg) {
  const Worker* w = static_cast<const Worker*>(arg);
  ThreadPool* pool = w->pool;
  uint32_t seen = 0;  // workers start before the first launch, at generation 0
  for (;;) {
    uint32_t gen;
    while ((gen = load_acquire(&pool->generation)) == seen) edge_pf_futex_wait(&pool->generation, seen);
    seen = gen;
    if (load_acquire(&pool->quit)) return;
    if (w->share < pool->shares) pool->fn(pool->args, w->share, pool->shares);
    if (__atomic_sub_fetch(&pool->pending, 1, __ATOMIC_ACQ_REL) == 0) edge_pf_futex_wake(&pool->pending, 1);
  }
}

int thread_pool_create(int32_t num_threads, ThreadPool** out) {
  *out = nullptr;
  if (num_threads < 2 || num_threads > kMaxPoolThreads) return EINVAL;
  auto* pool = static_cast<ThreadPool*>(std::calloc(1, sizeof(ThreadPool)));
  if (!pool) return ENOMEM;
  for (int32_t i = 0; i < num_threads - 1; ++i) {
    pool->workers[i] = ThreadPool::Worker{pool, i + 1};
    long r = edge_pf_thread_start(&pool->threads[i], &ThreadPool::worker_main, &pool->workers[i], kWorkerStack);
    if (r < 0) {
      thread_pool_destroy(pool);
      return static_cast<int>(-r);
    }
    pool->num_workers = i + 1;
  }
  *out = pool;
  return 0;
}

int32_t thread_pool_max_threads() { return kMaxPoolThreads; }

// Share t of min(parallel_extent, threads) on thread t: share 0 on the caller, share t on worker t.
void thread_pool_launch(ThreadPool* pool, edge::abi::CpuKernelFn fn, void* const* args, uint64_t parallel_extent) {
  const uint64_t threads = pool ? static_cast<uint64_t>(pool->num_workers) + 1 : 1;
  const int32_t shares = static_cast<int32_t>(parallel_extent < threads ? parallel_extent : threads);
  if (shares < 2) {
    fn(args, 0, 1);
    return;
  }
  pool->fn = fn;
  pool->args = args;
  pool->shares = shares;
  // Every worker takes part in every launch (one past the shares only counts itself done).
  __atomic_store_n(&pool->pending, static_cast<uint32_t>(pool->num_workers), __ATOMIC_RELAXED);
  __atomic_add_fetch(&pool->generation, 1, __ATOMIC_RELEASE);
  edge_pf_futex_wake(&pool->generation, pool->num_workers);
  fn(args, 0, shares);
  for (uint32_t p; (p = load_acquire(&pool->pending)) != 0;) edge_pf_futex_wait(&pool->pending, p);
}

void thread_pool_destroy(ThreadPool* pool) {
  if (!pool) return;
  __atomic_store_n(&pool->quit, 1u, __ATOMIC_RELAXED);
  __atomic_add_fetch(&pool->generation, 1, __ATOMIC_RELEASE);
  edge_pf_futex_wake(&pool->generation, pool->num_workers);
  for (int32_t i = 0; i < pool->num_workers; ++i) edge_pf_thread_join(pool->threads[i]);
  std::free(pool);
}

}  // namespace edgert::cpu
