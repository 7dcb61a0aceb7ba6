// The cpu port's worker pool: every launch runs each of its chunks exactly once (also
// more chunks than threads), and the pool starts and stops cleanly however launches and
// shutdown interleave; and thread_pool.h over it (what the replay calls) splits a launch
// into at most 4 parts per thread and never more than its extent.
#include <doctest/doctest.h>

#include <atomic>

#include "thread_pool.h"
#include "worker_pool.h"

namespace {

// Which parts of launches ran, and the num_cores they were given.
struct Tally {
  std::atomic<int> hits[64];
  std::atomic<int> wrong_cores{0};
  std::atomic<int> cores{0};
};

void count_core(void* const* args, int32_t core, int32_t cores) {
  auto* t = static_cast<Tally*>(args[0]);
  t->cores = cores;
  if (core < 0 || core >= cores || cores > 64) t->wrong_cores++;
  else t->hits[core]++;
}

int parts_run_once(const Tally& t) {
  int n = 0;
  for (const auto& h : t.hits) n += h == 1 ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("worker pool: each chunk of each launch runs exactly once") {
  for (int32_t threads : {2, 3, 4}) {
    edgert::cpu::WorkerPool pool;
    REQUIRE(pool.start(threads) == 0);
    CHECK(pool.threads() == threads);
    Tally t;
    for (auto& h : t.hits) h = 0;
    void* args[1] = {&t};
    const int launches = 2000;
    for (int i = 0; i < launches; ++i) pool.run(count_core, args, 1 + i % 8);
    CHECK(t.wrong_cores == 0);
    for (int32_t chunk = 0; chunk < 8; ++chunk) {
      int expected = 0;
      for (int i = 0; i < launches; ++i) expected += chunk < 1 + i % 8 ? 1 : 0;
      CHECK(t.hits[chunk] == expected);
    }
  }
}

TEST_CASE("worker pool: stop right after start, and with no launch, does not hang") {
  for (int i = 0; i < 50; ++i) {
    edgert::cpu::WorkerPool pool;
    REQUIRE(pool.start(4) == 0);
    if (i % 2) {
      Tally t;
      for (auto& h : t.hits) h = 0;
      void* args[1] = {&t};
      pool.run(count_core, args, 4);
      CHECK(t.hits[3] == 1);
    }
    pool.stop();
  }
}

TEST_CASE("thread pool (thread_pool.h over the worker pool): a launch runs whole or in parts, each once") {
  edgert::cpu::ThreadPool* pool = nullptr;
  REQUIRE(edgert::cpu::thread_pool_create(3, &pool) == 0);
  REQUIRE(pool != nullptr);
  for (uint64_t extent : {uint64_t{1}, uint64_t{2}, uint64_t{5}, uint64_t{12}, uint64_t{1000}}) {
    Tally t;
    for (auto& h : t.hits) h = 0;
    void* args[1] = {&t};
    edgert::cpu::thread_pool_launch(pool, count_core, args, extent);
    // Never more parts than the extent, nor than 4 chunks per thread (3 threads: 12).
    const int want = static_cast<int>(extent < 12 ? extent : 12);
    CHECK(t.wrong_cores == 0);
    CHECK(t.cores == want);
    CHECK(parts_run_once(t) == want);
  }
  edgert::cpu::thread_pool_destroy(pool);

  Tally t;  // no pool: the calling thread runs the launch whole
  for (auto& h : t.hits) h = 0;
  void* args[1] = {&t};
  edgert::cpu::thread_pool_launch(nullptr, count_core, args, 1000);
  CHECK(t.cores == 1);
  CHECK(parts_run_once(t) == 1);
  edgert::cpu::thread_pool_destroy(nullptr);
}
