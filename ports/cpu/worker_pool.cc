#include "worker_pool.h"

#include <cerrno>

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
    core_slots_[i] = {this, i + 1};
    int err = pthread_create(&workers_[i], nullptr, &WorkerPool::worker_main, &core_slots_[i]);
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

void* WorkerPool::worker_main(void* arg) {
  auto* slot = static_cast<CoreSlot*>(arg);
  WorkerPool* pool = slot->pool;
  const int32_t core = slot->core;
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
    // Every worker acknowledges every launch, also one it has no part in: then no
    // worker can still be reading this launch's fields when the next one is published.
    if (core < pool->cores_) pool->fn_(pool->args_, core, pool->cores_);
    pool->pending_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void WorkerPool::run(KernelFn fn, void* const* args, int32_t cores) {
  if (cores <= 1 || num_workers_ == 0) {
    fn(args, 0, 1);
    return;
  }
  if (cores > num_workers_ + 1) cores = num_workers_ + 1;
  fn_ = fn;
  args_ = args;
  cores_ = cores;
  pending_.store(num_workers_, std::memory_order_relaxed);
  // Publishes fn_/args_/cores_ (release) to the workers that see the new generation.
  generation_.fetch_add(1, std::memory_order_acq_rel);
  if (sleeping_.load(std::memory_order_acquire) > 0) {
    pthread_mutex_lock(&mutex_);
    pthread_cond_broadcast(&wake_);
    pthread_mutex_unlock(&mutex_);
  }
  fn(args, 0, cores);
  while (pending_.load(std::memory_order_acquire) != 0) cpu_relax();
}

}  // namespace edgert::cpu
