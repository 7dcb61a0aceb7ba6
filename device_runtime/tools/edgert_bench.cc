// edgert-bench — latency of edgert_run on one bundle: warm-up runs, then timed runs,
// reported as min / median / mean / p90 / max (text or one JSON object).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "edgert.h"
#include "npy.h"
#include "slow_kernels.h"
#include "tool_common.h"

using namespace edgert_tools;

namespace {

const char* kTool = "edgert-bench";

const char* kUsage =
    "usage: edgert-bench BUNDLE [options]\n"
    "\n"
    "Times edgert_run. Inputs not given with --input are filled with deterministic\n"
    "pseudo-random values (floats in [-1, 1), small integers).\n"
    "\n"
    "options:\n"
    "  --threads N            worker threads (cpu port; 1 to 1024, default 1)\n"
    "  --device N             OpenCL device index over all platforms (opencl port; default 0,\n"
    "                         EDGERT_OPENCL_DEVICE overrides it)\n"
    "  --require-prepared     refuse an OpenCL bundle that edgert-prepare did not prepare for\n"
    "                         this device (default: build its programs from source, and say so)\n"
    EDGERT_TOOLS_OPEN_USAGE
    "  --warmup W             untimed runs first (0 to 10000000, default 5)\n"
    "  --iters K              timed runs (1 to 10000000, default 50)\n"
    "  --input NAME=FILE.npy  use this input instead of generated values\n"
    "  --open-iters K         also open and close the bundle K more times (same options) and\n"
    "                         report the median open time (0 to 10000000, default 0)\n"
    "  --json                 print one JSON object instead of text\n"
    "  --profile              then time every command of the queue over K more runs and\n"
    "                         list the kernels by time, with their GFLOP/s and GB/s (the\n"
    "                         bytes of the buffers each reads and writes over its time);\n"
    "                         SLOW marks a cliff, slow both per FLOP and per byte: below\n"
    "                         1/4 of the FLOP-weighted mean GFLOP/s of the other kernels,\n"
    "                         over 3% of the time and with at least 0.1% of the FLOPs,\n"
    "                         over 20% of the time or below 1/100 of that mean (or with\n"
    "                         5% of the FLOPs below 1/4 of the fastest kernel with 1%),\n"
    "                         and below 1/4 of the byte-weighted mean GB/s of the other\n"
    "                         streaming kernels (at most 1 FLOP per byte), so a kernel\n"
    "                         that runs at memory speed is not one; times are each\n"
    "                         command's median over the K runs\n"
    "  --help                 this text\n";

struct Options : CommonOptions {
  long warmup = 5, iters = 50;
  long open_iters = 0;
  bool json = false;
  bool profile = false;
};

int parse_args(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    std::string error;
    if (a == "--warmup") {
      if (!parse_int_option("--warmup", value(), 0, kMaxRuns, &o->warmup, &error)) return fail(kTool, error);
    } else if (a == "--iters") {
      // Bounded: one timing is kept per timed run.
      if (!parse_int_option("--iters", value(), 1, kMaxRuns, &o->iters, &error)) return fail(kTool, error);
    } else if (a == "--open-iters") {
      if (!parse_int_option("--open-iters", value(), 0, kMaxRuns, &o->open_iters, &error)) return fail(kTool, error);
    } else if (a == "--json") {
      o->json = true;
    } else if (a == "--profile") {
      o->profile = true;
    } else if (int r = parse_common_option(kTool, kUsage, argc, argv, &i, o); r != -1) {
      return r;
    }
  }
  if (o->bundle.empty()) return fail(kTool, "no bundle given (see --help)");
  return -1;
}

// Deterministic fill: the same bundle always benchmarks on the same data.
void fill_pseudo_random(edgert_dtype dtype, uint8_t* data, size_t bytes, uint64_t seed) {
  uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
  auto next = [&s]() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  };
  const size_t elem = edgert_dtype_size(dtype), n = bytes / elem;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t r = next();
    const float f = static_cast<float>(r >> 40) / static_cast<float>(1 << 24) * 2.0f - 1.0f;
    uint8_t* p = data + i * elem;
    switch (dtype) {
      case EDGERT_F32: std::memcpy(p, &f, 4); break;
      case EDGERT_F64: {
        double d = f;
        std::memcpy(p, &d, 8);
        break;
      }
      case EDGERT_F16: {  // k/64 for k in [-64, 64): exact in half precision
        const int k = static_cast<int>(r % 128) - 64;
        uint16_t h = 0;
        if (k != 0) {
          const unsigned m = static_cast<unsigned>(k < 0 ? -k : k);
          int e = 31 - __builtin_clz(m);  // m = 2^e * (1 + frac)
          const unsigned frac = (m << (10 - e)) & 0x3ff;
          h = static_cast<uint16_t>((k < 0 ? 0x8000 : 0) | ((e - 6 + 15) << 10) | frac);
        }
        std::memcpy(p, &h, 2);
        break;
      }
      case EDGERT_BOOL: *p = r & 1; break;
      default: {  // integers: small values that are valid in every integer type
        const int64_t v = static_cast<int64_t>(r % 8);
        std::memcpy(p, &v, elem);  // little-endian: the low bytes
        break;
      }
    }
  }
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

double median_of(double* v, size_t n) {
  std::sort(v, v + n);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Median milliseconds of `count` edgert_bundle_open_with_options + close of the bundle (the
// file read, signature check and verification: what a process pays at start), -1 on failure.
double median_open_ms(const Options& o, long count) {
  if (count == 0) return 0;
  std::vector<double> ms;
  const edgert_open_options options = open_options(o);
  for (long i = 0; i < count; ++i) {
    edgert_bundle* b = nullptr;
    const auto t0 = std::chrono::steady_clock::now();
    const edgert_status st = edgert_bundle_open_with_options(o.bundle.c_str(), &options, &b);
    const auto t1 = std::chrono::steady_clock::now();
    edgert_bundle_close(b);
    if (st != EDGERT_OK) return -1;
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return median_of(ms.data(), ms.size());
}

int bench(const Options& o) {
  Session h;
  std::vector<NpyArray> inputs;
  std::vector<bool> given;
  std::string error;
  if (!open_with_inputs(o, &h, &inputs, &given, &error)) return fail(kTool, error);
  const int32_t num_inputs = edgert_bundle_input_count(h.bundle);
  edgert_status st = EDGERT_OK;

  const edgert_context_options options = context_options(o);
  st = edgert_context_create(h.bundle, &options, &h.context);
  if (st != EDGERT_OK) return fail(kTool, "cannot create context: " + status_text(st));
  note_source_builds(h.context);
  edgert_context_stats stats;
  edgert_context_get_stats(h.context, &stats);
  for (int32_t i = 0; i < num_inputs; ++i) {
    if (!given[i]) {
      edgert_tensor_info info;
      edgert_bundle_input_info(h.bundle, i, &info);
      if (!inputs[i].data.allocate(info.size_bytes))
        return fail(kTool, std::string("out of memory for input '") + info.name + "'");
      fill_pseudo_random(info.dtype, inputs[i].data.data(), info.size_bytes,
                         static_cast<uint64_t>(i));
    }
    st = edgert_bind_input(h.context, i, inputs[i].data.data(), inputs[i].data.size());
    if (st != EDGERT_OK) return fail(kTool, "cannot bind input: " + status_text(st));
  }
  const int32_t num_outputs = edgert_bundle_output_count(h.bundle);
  std::vector<AlignedBuffer> outputs(static_cast<size_t>(num_outputs));
  for (int32_t i = 0; i < num_outputs; ++i) {
    edgert_tensor_info info;
    edgert_bundle_output_info(h.bundle, i, &info);
    if (!outputs[i].allocate(info.size_bytes))
      return fail(kTool, std::string("out of memory for output '") + info.name + "'");
    st = edgert_bind_output(h.context, i, outputs[i].data(), info.size_bytes);
    if (st != EDGERT_OK) return fail(kTool, "cannot bind output: " + status_text(st));
  }

  for (long i = 0; i < o.warmup; ++i)
    if ((st = edgert_run(h.context)) != EDGERT_OK)
      return fail(kTool, "run failed: " + status_text(st));
  // Not a std::vector: without exceptions, running out of memory there aborts.
  const size_t n = static_cast<size_t>(o.iters);
  AlignedBuffer timings;
  if (!timings.allocate(n * sizeof(double)))
    return fail(kTool, "out of memory for " + std::to_string(n) + " timings (--iters)");
  double* const ms = reinterpret_cast<double*>(timings.data());
  for (long i = 0; i < o.iters; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    st = edgert_run(h.context);
    const auto t1 = std::chrono::steady_clock::now();
    if (st != EDGERT_OK) return fail(kTool, "run failed: " + status_text(st));
    ms[static_cast<size_t>(i)] = std::chrono::duration<double, std::milli>(t1 - t0).count();
  }

  const double median = median_of(ms, n);
  const size_t p90_rank = (n * 9 + 9) / 10;  // nearest rank: ceil(0.9 n)
  const double p90 = ms[p90_rank - 1];
  double mean = 0;
  for (size_t i = 0; i < n; ++i) mean += ms[i];
  mean /= static_cast<double>(n);
  const size_t arena = edgert_bundle_arena_size(h.bundle);
  const double open_ms = median_open_ms(o, o.open_iters);
  if (open_ms < 0) return fail(kTool, "--open-iters: cannot open bundle again: " + std::string(edgert_last_error()));

  // Per-command times over K separate runs, so the timed ones above stay clean. The profile
  // ranks and flags by each command's median: on a shared machine the one run in which the
  // thread was preempted inside a 10 us kernel would make that kernel's mean look 100x slower
  // (tiny GRU step kernels were flagged SLOW so). The first kMaxProfileSamples runs give the
  // median; the mean is over all K.
  constexpr size_t kMaxProfileSamples = 1000;
  const int32_t num_commands = edgert_bundle_command_count(h.bundle);
  std::vector<double> command_ms(static_cast<size_t>(num_commands), 0.0), command_mean_ms(command_ms);
  if (o.profile) {
    const size_t kept = std::min(static_cast<size_t>(o.iters), kMaxProfileSamples);
    std::vector<double> samples(kept * static_cast<size_t>(num_commands), 0.0);
    edgert_context_set_profiling(h.context, 1);
    for (long i = 0; i < o.iters; ++i) {
      if ((st = edgert_run(h.context)) != EDGERT_OK) return fail(kTool, "run failed: " + status_text(st));
      const uint64_t* ns = nullptr;
      int32_t count = 0;
      edgert_context_command_times(h.context, &ns, &count);
      for (int32_t c = 0; c < count && c < num_commands; ++c) {
        const double v = static_cast<double>(ns[c]) / 1e6;
        command_mean_ms[c] += v;
        if (static_cast<size_t>(i) < kept) samples[static_cast<size_t>(c) * kept + static_cast<size_t>(i)] = v;
      }
    }
    for (int32_t c = 0; c < num_commands; ++c) {
      command_mean_ms[c] /= static_cast<double>(o.iters);
      command_ms[c] = median_of(&samples[static_cast<size_t>(c) * kept], kept);
    }
  }
  std::vector<int32_t> by_time(static_cast<size_t>(num_commands));
  for (int32_t c = 0; c < num_commands; ++c) by_time[c] = c;
  std::stable_sort(by_time.begin(), by_time.end(), [&](int32_t a, int32_t b) { return command_ms[a] > command_ms[b]; });
  double profiled_total = 0;
  for (double v : command_ms) profiled_total += v;
  // The SLOW rule (slow_kernels.h): slow per FLOP and per byte against the model's own kernels.
  std::vector<KernelCost> costs(static_cast<size_t>(num_commands));
  for (int32_t c = 0; c < num_commands; ++c) {
    edgert_command_info info;
    costs[c].ms = command_ms[c];
    if (edgert_bundle_command_info(h.bundle, c, &info) == EDGERT_OK) costs[c].flops = info.flops, costs[c].bytes = info.bytes;
  }
  const SlowKernelRule rule(costs);
  auto slow = [&](int32_t c) { return o.profile && rule.slow(static_cast<size_t>(c)); };

  if (o.json) {
    std::string profile;
    if (o.profile) {
      profile = ", \"profile\": [";
      for (int32_t c = 0; c < num_commands; ++c) {
        edgert_command_info info;
        edgert_bundle_command_info(h.bundle, c, &info);
        char item[240];
        std::snprintf(item, sizeof item,
                      "%s{\"command\": %d, \"median_ms\": %.6f, \"mean_ms\": %.6f, \"flops\": %llu, \"bytes\": %llu, "
                      "\"slow\": %s, \"name\": \"",
                      c ? ", " : "", c, command_ms[c], command_mean_ms[c], static_cast<unsigned long long>(info.flops),
                      static_cast<unsigned long long>(info.bytes), slow(c) ? "true" : "false");
        profile += item + json_escape(info.name) + "\"}";
      }
      char mean[96];
      std::snprintf(mean, sizeof mean, "], \"flop_weighted_gflops\": %.3f, \"streaming_gbs\": %.3f", rule.mean_gflops(),
                    rule.streaming_gbs());
      profile += mean;
    }
    std::printf(
        "{\"bundle\": \"%s\", \"threads\": %ld, \"warmup\": %ld, \"iters\": %ld, "
        "\"arena_bytes\": %zu, \"min_ms\": %.6f, \"median_ms\": %.6f, \"mean_ms\": %.6f, "
        "\"p90_ms\": %.6f, \"max_ms\": %.6f, \"port\": \"%s\", \"device\": \"%s\", "
        "\"programs_built\": %d, \"programs_loaded\": %d, \"buffer_bytes\": %llu, "
        "\"image_bytes\": %llu, \"open_iters\": %ld, \"open_median_ms\": %.6f%s}\n",
        json_escape(o.bundle).c_str(), o.threads, o.warmup, o.iters, arena, ms[0], median,
        mean, p90, ms[n - 1], json_escape(stats.port).c_str(), json_escape(stats.device).c_str(),
        stats.programs_built, stats.programs_loaded, static_cast<unsigned long long>(stats.buffer_bytes),
        static_cast<unsigned long long>(stats.image_bytes), o.open_iters, open_ms, profile.c_str());
  } else {
    std::printf("bundle:  %s\nthreads: %ld  warmup: %ld  iters: %ld  arena: %zu bytes\n",
                o.bundle.c_str(), o.threads, o.warmup, o.iters, arena);
    std::printf("port:    %s  device: %s  programs built: %d  loaded: %d  device memory: %llu bytes"
                " in buffers, %llu in images\n",
                stats.port, stats.device, stats.programs_built, stats.programs_loaded,
                static_cast<unsigned long long>(stats.buffer_bytes),
                static_cast<unsigned long long>(stats.image_bytes));
    std::printf("latency (ms): min %.6f  median %.6f  mean %.6f  p90 %.6f  max %.6f\n", ms[0],
                median, mean, p90, ms[n - 1]);
    if (o.open_iters > 0) std::printf("open (ms): median %.6f over %ld opens\n", open_ms, o.open_iters);
    if (o.profile) {
      std::printf("\nprofile (each command's median over %ld runs, %.3f ms in all), slowest first:\n", o.iters,
                  profiled_total);
      std::printf("  %4s %9s %6s %9s %8s  %s\n", "#", "ms", "%", "GFLOP/s", "GB/s", "command");
      for (int32_t c : by_time) {
        edgert_command_info info;
        edgert_bundle_command_info(h.bundle, c, &info);
        std::printf("  %4d %9.4f %6.2f %9.2f %8.2f  %s%s\n", c, command_ms[c],
                    profiled_total > 0 ? 100.0 * command_ms[c] / profiled_total : 0.0,
                    SlowKernelRule::gflops(costs[c]), SlowKernelRule::gbytes(costs[c]), info.name, slow(c) ? "  SLOW" : "");
      }
      int slow_count = 0;
      double slow_ms = 0;
      for (int32_t c = 0; c < num_commands; ++c)
        if (slow(c)) ++slow_count, slow_ms += command_ms[c];
      std::printf("FLOP-weighted mean %.2f GFLOP/s, streaming kernels' mean %.2f GB/s; %d SLOW kernel(s) (below 1/4 of"
                  " the others' mean per FLOP and per byte; see --help): %.1f%% of the time\n",
                  rule.mean_gflops(), rule.streaming_gbs(), slow_count,
                  profiled_total > 0 ? 100.0 * slow_ms / profiled_total : 0.0);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  int code = parse_args(argc, argv, &o);
  if (code >= 0) return code;
  return bench(o);
}
