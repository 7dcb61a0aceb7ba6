#include "driver/tune.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "bundle/bundle_builder.h"
#include "edgert.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"

namespace edgec {

namespace {

const char* kCacheHeader = "edgec-tune-cache 1";

bool parse_int(const std::string& s, int lo, int hi, int& out) {
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno || v < lo || v > hi) return false;
  out = static_cast<int>(v);
  return true;
}

bool parse_time(const std::string& s, double& out) {
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !(v >= 0 && v < 1e12)) return false;
  out = v;
  return true;
}

bool is_key(const std::string& s) {
  return s.size() == 16 && std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) && !std::isupper(static_cast<unsigned char>(c)); });
}

// LLVM's names for this CPU's features: the names TargetSpec::required_features uses.
bool host_has(const std::string& feature) {
  static const auto features = llvm::sys::getHostCPUFeatures();
  const auto it = features.find(feature);
  return it != features.end() && it->second;
}

}  // namespace

TuneCache read_tune_cache(const std::string& path, bool missing_ok) {
  std::error_code ec;
  if (missing_ok && !std::filesystem::exists(path, ec) && !ec) return {};  // --tune creates it
  if (std::filesystem::is_directory(path, ec)) throw CompileError("tune cache " + path + " is a directory");
  std::ifstream f(path);
  if (!f) throw CompileError("cannot read tune cache " + path + ": " + std::strerror(errno));
  TuneCache cache;
  std::string line;
  int n = 0;
  bool header = false;
  while (std::getline(f, line)) {
    ++n;
    if (line.empty() || line[0] == '#') continue;
    auto bad = [&](const std::string& why) {
      return CompileError("tune cache " + path + ":" + std::to_string(n) + ": " + why + " (delete the file or fix the line; format: edgec --help)");
    };
    if (!header) {
      if (line != kCacheHeader) throw bad("not an edgec tune cache: the first line must be '" + std::string(kCacheHeader) + "'");
      header = true;
      continue;
    }
    std::istringstream fields(line);
    std::vector<std::string> w;
    for (std::string x; fields >> x;) w.push_back(x);
    if (w.size() != 7) throw bad("expected 7 fields (KEY TARGET VECTORS UNROLL TUNED_US DEFAULT_US SHAPE), found " + std::to_string(w.size()));
    TuneEntry e;
    if (!is_key(w[0])) throw bad("key '" + w[0] + "' is not 16 lowercase hex digits");
    e.target = w[1];
    if (!parse_int(w[2], 1, 64, e.tile.vectors) || !parse_int(w[3], 1, 64, e.tile.unroll))
      throw bad("tile '" + w[2] + " " + w[3] + "' is not two integers in 1..64");
    if (!parse_time(w[4], e.tuned_us) || !parse_time(w[5], e.default_us)) throw bad("times must be non-negative numbers");
    e.shape = w[6];
    if (!cache.emplace(w[0], e).second) throw bad("key " + w[0] + " appears twice");
  }
  if (f.bad()) throw CompileError("cannot read tune cache " + path);
  if (!header) throw CompileError("tune cache " + path + " is empty: the first line must be '" + std::string(kCacheHeader) + "'");
  return cache;
}

void write_tune_cache(const std::string& path, const TuneCache& cache) {
  std::string text = std::string(kCacheHeader) + "\n# KEY TARGET VECTORS UNROLL TUNED_US DEFAULT_US SHAPE\n";
  for (const auto& [key, e] : cache) {  // std::map: sorted by key, so a checked-in file diffs well
    char line[512];
    std::snprintf(line, sizeof line, "%s %s %d %d %.2f %.2f %s\n", key.c_str(), e.target.c_str(), e.tile.vectors,
                  e.tile.unroll, e.tuned_us, e.default_us, e.shape.c_str());
    text += line;
  }
  write_file_atomically(path, std::vector<uint8_t>(text.begin(), text.end()));
}

void check_target_runs_here(const TargetSpec& target) {
  const std::string refuse = "--tune times kernels on this machine, and code for target " + target.name;
#if !defined(__x86_64__)
  throw CompileError(refuse + " does not run on it (--tune needs an x86_64 host; use --tune-cache with a file tuned on the target)");
#endif
  if (target.backend != BackendKind::LlvmCpu || target.triple.rfind("x86_64", 0) != 0)
    throw CompileError(refuse + " does not run on it (only x86_64 CPU targets can be tuned here; use --tune-cache with a file tuned on the target)");
  for (const std::string& f : target.required_features)
    if (!host_has(f)) throw CompileError(refuse + " needs CPU feature " + f + ", which this CPU lacks");
}

std::map<std::string, double> time_kernels(const std::vector<uint8_t>& bundle, int warmup, int runs) {
  auto fail = [](const std::string& what) { return CompileError("--tune: " + what + ": " + edgert_last_error()); };
  // The runtime wants the bundle page-aligned in memory (its code section is).
  const size_t size = (bundle.size() + 4095) / 4096 * 4096;
  std::unique_ptr<void, decltype(&std::free)> mem(std::aligned_alloc(4096, size), &std::free);
  if (!mem) throw CompileError("--tune: out of memory for a " + std::to_string(size) + "-byte bundle");
  std::memcpy(mem.get(), bundle.data(), bundle.size());
  edgert_bundle* b = nullptr;
  if (edgert_bundle_open_memory(mem.get(), bundle.size(), &b) != EDGERT_OK) throw fail("opening the trial bundle");
  std::unique_ptr<edgert_bundle, decltype(&edgert_bundle_close)> bundle_guard(b, &edgert_bundle_close);
  edgert_context_options opts{};
  opts.num_threads = 1;  // what one core does; the split across cores does not change with the tile
  edgert_context* c = nullptr;
  if (edgert_context_create(b, &opts, &c) != EDGERT_OK) throw fail("creating a context");
  std::unique_ptr<edgert_context, decltype(&edgert_context_destroy)> context_guard(c, &edgert_context_destroy);
  std::vector<std::vector<uint8_t>> io;  // zeros in, scratch out: the times do not depend on the values
  for (int32_t i = 0; i < edgert_bundle_input_count(b); ++i) {
    edgert_tensor_info info;
    if (edgert_bundle_input_info(b, i, &info) != EDGERT_OK) throw fail("reading input info");
    io.emplace_back(std::max<size_t>(info.size_bytes, 1), 0);
    if (edgert_bind_input(c, i, io.back().data(), info.size_bytes) != EDGERT_OK) throw fail("binding an input");
  }
  for (int32_t i = 0; i < edgert_bundle_output_count(b); ++i) {
    edgert_tensor_info info;
    if (edgert_bundle_output_info(b, i, &info) != EDGERT_OK) throw fail("reading output info");
    io.emplace_back(std::max<size_t>(info.size_bytes, 1), 0);
    if (edgert_bind_output(c, i, io.back().data(), info.size_bytes) != EDGERT_OK) throw fail("binding an output");
  }
  if (edgert_context_set_profiling(c, 1) != EDGERT_OK) throw fail("enabling profiling");
  const int32_t commands = edgert_bundle_command_count(b);
  std::map<std::string, std::vector<double>> samples;
  // Small models run more often: at least `runs` timed runs and 0.2 s (at most 1000 runs).
  const auto start = std::chrono::steady_clock::now();
  auto short_so_far = [&] { return std::chrono::steady_clock::now() - start < std::chrono::milliseconds(200); };
  for (int r = 0; r < warmup + runs || (short_so_far() && r < 1000); ++r) {
    if (edgert_run(c) != EDGERT_OK) throw fail("running the trial bundle");
    if (r < warmup) continue;
    const uint64_t* ns = nullptr;
    int32_t count = 0;
    if (edgert_context_command_times(c, &ns, &count) != EDGERT_OK || count != commands) throw fail("reading command times");
    std::map<std::string, double> run;
    for (int32_t i = 0; i < commands; ++i) {
      edgert_command_info info;
      if (edgert_bundle_command_info(b, i, &info) != EDGERT_OK) throw fail("reading command info");
      if (info.is_launch) run[info.name] += static_cast<double>(ns[i]);
    }
    for (const auto& [name, t] : run) samples[name].push_back(t);
  }
  std::map<std::string, double> median;
  for (auto& [name, v] : samples) {
    std::sort(v.begin(), v.end());
    median[name] = v[v.size() / 2];
  }
  return median;
}

}  // namespace edgec
