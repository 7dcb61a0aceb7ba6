// runtime_limits.h — what every edgert takes, in one place: the runtime's verifier refuses a
// bundle past these limits, and edgec refuses to write one (naming the input, output or
// kernel), so a model that compiles also opens. Plain C++ (C++17 and C++20).
#pragma once
#include <cstdint>

namespace edge::limits {

// Dimensions of a model input or output (edgert.h's EDGERT_MAX_RANK: edgert_tensor_info).
inline constexpr uint32_t kMaxRank = 8;
// The arena's alignment, and that of every arena offset: a power of two in this range.
inline constexpr uint32_t kMinArenaAlignment = 64;
inline constexpr uint32_t kMaxArenaAlignment = 1u << 20;
// One dimension of an OpenCL launch (Kernel.global_size): the work-item ids are 32-bit.
inline constexpr uint64_t kMaxLaunchSize = 0xffffffffull;
// A runtime on a 32-bit device (the Hexagon DSP) holds byte counts in a 32-bit size_t: the
// arena, and each model input or output, must stay below this there.
inline constexpr uint64_t kMaxBytes32Bit = 0xffffffffull;

}  // namespace edge::limits
