// worker_pool.h — splits one kernel launch across threads: the calling thread and workers
// started once per context. A launch is cut into `chunks` parts (kernel calls with
// core_id = chunk, num_cores = chunks) that every thread claims from a shared counter,
// so a worker the OS has not scheduled yet delays nobody: the others take its chunks.
// Workers spin briefly between launches (they follow each other closely during a run)
// and then sleep on a condition variable. No allocation after start().
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

  // fn(args, chunk, chunks) for every chunk in [0, chunks), each exactly once, on any of
  // the threads; returns when all have finished. chunks <= kMaxChunks.
  void run(KernelFn fn, void* const* args, int32_t chunks);
  static constexpr int32_t kMaxChunks = 0xffff;

 private:
  static void* worker_main(void* pool);
  // Claims and runs chunks of launch `gen` until none is left.
  void work_on(uint32_t gen);

  static constexpr int32_t kMaxWorkers = 63;
  pthread_t workers_[kMaxWorkers] = {};
  int32_t num_workers_ = 0;

  // The launch being run. Written only while no chunk of a launch is outstanding; a
  // thread reads them after claiming a chunk, which keeps them stable until it is done.
  KernelFn fn_ = nullptr;
  void* const* args_ = nullptr;
  // generation << 32 | chunks << 16 | next chunk to claim. A claim is a compare-and-swap
  // of the whole word, so a thread still looking at an older launch can never take a
  // chunk of the current one, nor count against the wrong number of chunks.
  std::atomic<uint64_t> next_{0};
  std::atomic<int32_t> done_{0};
  std::atomic<uint32_t> generation_{0};
  uint32_t start_generation_ = 0;
  std::atomic<bool> quit_{false};

  pthread_mutex_t mutex_ = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t wake_ = PTHREAD_COND_INITIALIZER;
  std::atomic<int32_t> sleeping_{0};
};

}  // namespace edgert::cpu
