// tune.h — what `edgec compile --tune` needs besides the pipeline: the decision cache file,
// the check that a target runs on this machine, and timing a bundle's kernels in-process
// with the runtime's C API.
//
// Cache file (--tune-cache FILE), plain text, one decision per line:
//   edgec-tune-cache 1
//   # KEY TARGET VECTORS UNROLL TUNED_US DEFAULT_US SHAPE
//   9c0d4e1f2a3b4c5d x86_64-avx512 2 6 101.30 123.40 out[1,28,28,128]/r[3,3,128]
// KEY is schedule_key (16 hex digits), VECTORS x UNROLL the register tile, TUNED_US and
// DEFAULT_US the median microseconds per run of all kernels with that key with the tile and
// with the cost model's (equal where the model's tile was kept), SHAPE a readable summary. Lines starting with '#' are comments.
// Entries of other targets are kept; entries are written sorted by key.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "codegen/backend.h"
#include "codegen/target.h"

namespace edgec {

struct TuneEntry {
  std::string target;
  RegisterTile tile;
  double tuned_us = 0, default_us = 0;
  std::string shape;
};
using TuneCache = std::map<std::string, TuneEntry>;  // key -> decision

// Throws CompileError naming the file and line for anything that is not a cache line.
// A file that does not exist is an empty cache when `missing_ok`, else an error.
TuneCache read_tune_cache(const std::string& path, bool missing_ok);
void write_tune_cache(const std::string& path, const TuneCache& cache);  // atomically

// Throws CompileError unless code for `target` runs on this machine (an x86-64 CPU target
// whose required features this CPU has): --tune times it here.
void check_target_runs_here(const TargetSpec& target);

// Runs `bundle` in this process (all inputs zero, one thread) `warmup` times, then at least
// `runs` times and 0.2 s, and returns per kernel name its median nanoseconds over the timed
// runs (summed over its launches in one run).
std::map<std::string, double> time_kernels(const std::vector<uint8_t>& bundle, int warmup, int runs);

}  // namespace edgec
