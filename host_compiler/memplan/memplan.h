// memplan.h — places every intermediate tensor in one arena, reusing space whose
// lifetime has ended.
#pragma once
#include <cstdint>
#include <vector>

namespace edgec {

struct Lifetime {
  uint64_t size;   // bytes
  int first;       // queue step that writes it
  int last;        // last queue step that reads it (inclusive)
};

struct MemoryPlan {
  std::vector<uint64_t> offsets;  // per Lifetime, multiples of the alignment
  uint64_t arena_size = 0;
  // The largest total of (aligned) sizes live at one step: no plan can be smaller.
  uint64_t lower_bound = 0;
};

// Greedy by size (largest first, each at the lowest offset that no buffer live at the
// same time overlaps), as in TFLite's arena planner. Deterministic.
MemoryPlan plan_memory(const std::vector<Lifetime>& buffers, uint64_t alignment);

}  // namespace edgec
