#include "memplan/memplan.h"

#include <algorithm>
#include <numeric>

namespace edgec {

MemoryPlan plan_memory(const std::vector<Lifetime>& buffers, uint64_t alignment) {
  auto aligned = [&](uint64_t n) { return (n + alignment - 1) / alignment * alignment; };
  MemoryPlan plan;
  plan.offsets.assign(buffers.size(), 0);

  int steps = 0;
  for (const Lifetime& b : buffers) steps = std::max(steps, b.last + 1);
  std::vector<uint64_t> live(steps, 0);
  for (const Lifetime& b : buffers)
    for (int t = b.first; t <= b.last; ++t) live[t] += aligned(b.size);
  for (uint64_t l : live) plan.lower_bound = std::max(plan.lower_bound, l);

  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].size != buffers[b].size) return buffers[a].size > buffers[b].size;
    return buffers[a].first < buffers[b].first;
  });
  std::vector<size_t> placed;
  for (size_t i : order) {
    const Lifetime& b = buffers[i];
    // Placed buffers that are live at the same time, by offset.
    std::vector<size_t> conflicts;
    for (size_t j : placed)
      if (buffers[j].first <= b.last && b.first <= buffers[j].last) conflicts.push_back(j);
    std::sort(conflicts.begin(), conflicts.end(), [&](size_t x, size_t y) { return plan.offsets[x] < plan.offsets[y]; });
    uint64_t offset = 0;
    for (size_t j : conflicts) {
      if (offset + aligned(b.size) <= plan.offsets[j]) break;  // fits in the gap below j
      offset = std::max(offset, aligned(plan.offsets[j] + buffers[j].size));
    }
    plan.offsets[i] = offset;
    plan.arena_size = std::max(plan.arena_size, offset + aligned(b.size));
    placed.push_back(i);
  }
  return plan;
}

}  // namespace edgec
