#include "worker_pool.h"

#include <cerrno>
#include <cstdlib>
#include <new>

#include "thread_pool.h"

namespace edgert::cpu {

namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Iterations a thread spins before it sleeps: about tens of microseconds, longer than
// the gap between two launches of a run, far shorter than the gap between runs.
constexpr int kSpinIterations = 20000;

}  // namespace

int WorkerPool::start(int32_t num_threads) {
  int32_t want = num_threads - 1;
  if (want > kMaxWorkers) want = kMaxWorkers;
  // Workers count launches from here, whenever they get to run: one that read the
  // counter only after the first launch (or stop) was published would miss it.
  start_generation_ = generation_.load(std::memory_order_acquire);
  for (int32_t i = 0; i < want; ++i) {
    int err = pthread_create(&workers_[i], nullptr, &WorkerPool::worker_main, this);
    if (err != 0) {
      stop();
      return err;
    }
    num_workers_ = i + 1;
  }
  return 0;
}

void WorkerPool::stop() {
  if (num_workers_ == 0) return;
  quit_.store(true, std::memory_order_release);
  pthread_mutex_lock(&mutex_);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  pthread_cond_broadcast(&wake_);
  pthread_mutex_unlock(&mutex_);
  for (int32_t i = 0; i < num_workers_; ++i) pthread_join(workers_[i], nullptr);
  num_workers_ = 0;
  quit_.store(false, std::memory_order_release);
}

void WorkerPool::work_on(uint32_t gen) {
  for (;;) {
    uint64_t v = next_.load(std::memory_order_acquire);
    if (static_cast<uint32_t>(v >> 32) != gen) return;      // a newer launch: not ours
    const int32_t chunks = static_cast<int32_t>((v >> 16) & 0xffff);
    const int32_t chunk = static_cast<int32_t>(v & 0xffff);
    if (chunk >= chunks) return;                             // all claimed
    if (!next_.compare_exchange_weak(v, v + 1, std::memory_order_acq_rel)) continue;
    fn_(args_, chunk, chunks);
    done_.fetch_add(1, std::memory_order_release);
  }
}

void* WorkerPool::worker_main(void* arg) {
  auto* pool = static_cast<WorkerPool*>(arg);
  uint32_t seen = pool->start_generation_;
  for (;;) {
    // Wait for the next launch: spin, then sleep.
    uint32_t gen = seen;
    for (int i = 0; i < kSpinIterations; ++i) {
      gen = pool->generation_.load(std::memory_order_acquire);
      if (gen != seen) break;
      cpu_relax();
    }
    if (gen == seen) {
      pthread_mutex_lock(&pool->mutex_);
      pool->sleeping_.fetch_add(1, std::memory_order_acq_rel);
      while ((gen = pool->generation_.load(std::memory_order_acquire)) == seen)
        pthread_cond_wait(&pool->wake_, &pool->mutex_);
      pool->sleeping_.fetch_sub(1, std::memory_order_acq_rel);
      pthread_mutex_unlock(&pool->mutex_);
    }
    seen = gen;
    if (pool->quit_.load(std::memory_order_acquire)) return nullptr;
    pool->work_on(gen);
  }
}

void WorkerPool::run(KernelFn fn, void* const* args, int32_t chunks) {
  if (chunks <= 1 || num_workers_ == 0) {
    fn(args, 0, 1);
    return;
  }
  if (chunks > kMaxChunks) chunks = kMaxChunks;
  // The previous launch is complete (run returns only then): no thread holds a chunk,
  // so the fields may change.
  fn_ = fn;
  args_ = args;
  done_.store(0, std::memory_order_relaxed);
  const uint32_t gen = generation_.load(std::memory_order_relaxed) + 1;
  // Opens the chunks (release: a claim sees the fields above), then wakes the workers.
  next_.store(static_cast<uint64_t>(gen) << 32 | static_cast<uint64_t>(chunks) << 16, std::memory_order_release);
  generation_.store(gen, std::memory_order_release);
  if (sleeping_.load(std::memory_order_acquire) > 0) {
    pthread_mutex_lock(&mutex_);
    pthread_cond_broadcast(&wake_);
    pthread_mutex_unlock(&mutex_);
  }
  work_on(gen);
  while (done_.load(std::memory_order_acquire) != chunks) cpu_relax();
}

// thread_pool.h over WorkerPool.

namespace {
// Chunks per thread a parallel launch is cut into: whoever is free takes the next one, so a
// thread the OS preempted holds up a small part of the launch, not its whole share.
constexpr uint64_t kChunksPerThread = 4;
}  // namespace

struct ThreadPool {
  WorkerPool workers;
  int32_t threads;  // as asked for (the workers stop at WorkerPool's limit; chunks follow this)
};

// Any count: past WorkerPool's limit the extra threads are not started.
int32_t thread_pool_max_threads() { return INT32_MAX; }

int thread_pool_create(int32_t num_threads, ThreadPool** out) {
  *out = nullptr;
  // calloc + placement new rather than operator new: the runtime needs only libc.
  void* mem = std::calloc(1, sizeof(ThreadPool));
  if (!mem) return ENOMEM;
  auto* pool = new (mem) ThreadPool;
  pool->threads = num_threads;
  if (int err = pool->workers.start(num_threads)) {  // start stopped what it had started
    std::free(pool);
    return err;
  }
  *out = pool;
  return 0;
}

void thread_pool_launch(ThreadPool* pool, KernelFn fn, void* const* args, uint64_t parallel_extent) {
  if (!pool || parallel_extent < 2) {
    fn(args, 0, 1);
    return;
  }
  const uint64_t want = static_cast<uint64_t>(pool->threads) * kChunksPerThread;
  pool->workers.run(fn, args, static_cast<int32_t>(parallel_extent < want ? parallel_extent : want));
}

void thread_pool_destroy(ThreadPool* pool) {
  if (!pool) return;
  pool->~ThreadPool();
  std::free(pool);
}

}  // namespace edgert::cpu
