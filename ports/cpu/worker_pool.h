// worker_pool.h — splits one kernel launch across cores: core 0 is the calling thread,
// cores 1..n-1 are workers started once per context. A launch is published by bumping
// a generation counter; workers spin briefly (launches follow each other closely during
// a run) and then sleep on a condition variable. No allocation after start().
#pragma once
#include <pthread.h>

#include <atomic>
#include <cstdint>

#include "cpu_port.h"

namespace edgert::cpu {

class WorkerPool {
 public:
  WorkerPool() = default;
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;
  ~WorkerPool() { stop(); }

  // Starts num_threads - 1 workers. Returns 0 or an errno value (then nothing runs).
  int start(int32_t num_threads);
  void stop();
  int32_t threads() const { return num_workers_ + 1; }

  // fn(args, core, cores) for every core in [0, cores), cores <= threads(); returns
  // when all have finished.
  void run(KernelFn fn, void* const* args, int32_t cores);

 private:
  static void* worker_main(void* slot);

  static constexpr int32_t kMaxWorkers = 63;
  struct CoreSlot {
    WorkerPool* pool;
    int32_t core;
  };
  pthread_t workers_[kMaxWorkers] = {};
  CoreSlot core_slots_[kMaxWorkers] = {};
  int32_t num_workers_ = 0;

  // The launch being run.
  KernelFn fn_ = nullptr;
  void* const* args_ = nullptr;
  int32_t cores_ = 0;
  std::atomic<uint32_t> generation_{0};
  uint32_t start_generation_ = 0;
  std::atomic<int32_t> pending_{0};
  std::atomic<bool> quit_{false};

  pthread_mutex_t mutex_ = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t wake_ = PTHREAD_COND_INITIALIZER;
  std::atomic<int32_t> sleeping_{0};
};

}  // namespace edgert::cpu
