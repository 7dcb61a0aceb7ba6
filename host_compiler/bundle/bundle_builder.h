// bundle_builder.h — turns the compiled pieces into the bundle the runtime replays.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/backend.h"
#include "codegen/target.h"
#include "driver/reference.h"
#include "memplan/memplan.h"
#include "schedule/schedule.h"

namespace edgec {

struct BundleInputs {
  std::string source_model;
  const Schedule* schedule;
  const std::vector<KernelIR>* kernels;   // parallel to schedule->kernels, launches planned
  const GeneratedCode* code;
  const TargetSpec* target;
  std::vector<int> arena_buffers;         // schedule buffer ids placed in the arena
  const MemoryPlan* plan;                 // offsets parallel to arena_buffers
  uint64_t arena_alignment;
  const ReferenceData* reference = nullptr;  // --embed-reference: a ReferenceIO section
};

std::vector<uint8_t> build_bundle(const BundleInputs& in);

// Writes to PATH.tmp and renames, so a failed compile never leaves half a bundle.
void write_file_atomically(const std::string& path, const std::vector<uint8_t>& bytes);

}  // namespace edgec
