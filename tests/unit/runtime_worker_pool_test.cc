// The cpu port's worker pool: every launch runs each of its chunks exactly once (also
// more chunks than threads), and the pool starts and stops cleanly however launches and
// shutdown interleave.
#include <doctest/doctest.h>

#include <atomic>

#include "worker_pool.h"

namespace {

struct Tally {
  std::atomic<int> hits[8];
  std::atomic<int> wrong_cores{0};
};

void count_core(void* const* args, int32_t core, int32_t cores) {
  auto* t = static_cast<Tally*>(args[0]);
  if (core < 0 || core >= cores || cores > 8) t->wrong_cores++;
  else t->hits[core]++;
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
