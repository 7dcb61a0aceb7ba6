// Memory planner: no two buffers live at the same step overlap; space is reused.
#include <doctest/doctest.h>

#include <random>

#include "memplan/memplan.h"

using edgec::Lifetime;

namespace {
void check_no_overlap(const std::vector<Lifetime>& b, const edgec::MemoryPlan& p, uint64_t align) {
  for (size_t i = 0; i < b.size(); ++i) {
    CHECK(p.offsets[i] % align == 0);
    CHECK(p.offsets[i] + b[i].size <= p.arena_size);
    for (size_t j = i + 1; j < b.size(); ++j) {
      bool live_together = b[i].first <= b[j].last && b[j].first <= b[i].last;
      bool overlap = p.offsets[i] < p.offsets[j] + b[j].size && p.offsets[j] < p.offsets[i] + b[i].size;
      CHECK_FALSE((live_together && overlap));
    }
  }
}
}  // namespace

TEST_CASE("a chain reuses memory: arena equals two buffers") {
  // a -> b -> c -> d, each read only by the next step.
  std::vector<Lifetime> b = {{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}, {1000, 3, 4}};
  auto p = edgec::plan_memory(b, 64);
  check_no_overlap(b, p, 64);
  CHECK(p.lower_bound == 2 * 1024);
  CHECK(p.arena_size == 2 * 1024);
}

TEST_CASE("buffers live together never share space") {
  std::vector<Lifetime> b = {{100, 0, 5}, {200, 1, 5}, {300, 2, 5}};
  auto p = edgec::plan_memory(b, 64);
  check_no_overlap(b, p, 64);
  CHECK(p.arena_size == 128 + 256 + 320);
  CHECK(p.lower_bound == p.arena_size);
}

TEST_CASE("random lifetimes: valid plans, never below the lower bound") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<Lifetime> b;
    int n = 1 + static_cast<int>(rng() % 30);
    for (int i = 0; i < n; ++i) {
      int first = static_cast<int>(rng() % 40);
      b.push_back({1 + rng() % 5000, first, first + static_cast<int>(rng() % 8)});
    }
    auto p = edgec::plan_memory(b, 64);
    check_no_overlap(b, p, 64);
    CHECK(p.arena_size >= p.lower_bound);
    // Greedy-by-size stays within 2x of the bound on such inputs.
    CHECK(p.arena_size <= 2 * p.lower_bound);
  }
}
