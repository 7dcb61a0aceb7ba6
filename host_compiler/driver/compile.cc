#include "driver/compile.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "bundle/bundle_builder.h"
#include "codegen/kernel_ir.h"
#include "codegen/backend.h"
#include "codegen/target.h"
#include "driver/tune.h"
#include "frontend/onnx_importer.h"
#include "memplan/memplan.h"
#include "runtime_limits.h"
#include "schedule/schedule.h"

namespace edgec {

namespace {

constexpr int kTuneWarmup = 2, kTuneRuns = 7;  // timed runs: at least these, and 0.2 s
constexpr double kTuneMinGain = 0.97;   // a tile replaces the model's only when 3% faster (noise)
constexpr int kConfirmRuns = 3;         // timings of the winners against the model's tiles

// --tune-cache / --tune: fills cg.register_tiles for the kernel shapes that have a choice.
// trial(cg) compiles the whole model with those tiles and returns the bundle.
void choose_register_tiles(std::vector<KernelIR>& kernels, const TargetSpec& target, const CompileOptions& options,
                           const std::function<std::vector<uint8_t>(const CodegenOptions&)>& trial,
                           const std::function<void(const std::string&)>& progress, CodegenOptions& cg) {
  struct KernelShape {
    std::vector<RegisterTile> allowed;  // the cost model's order
    std::vector<std::string> kernels;   // names of the kernels with this key
    std::string summary;
  };
  std::map<std::string, KernelShape> shapes;  // by schedule_key
  for (KernelIR& k : kernels) {
    std::string key = schedule_key(k, target);
    auto [it, fresh] = shapes.try_emplace(key);
    if (fresh) {
      it->second.allowed = register_tile_candidates(k, target, SIZE_MAX);
      it->second.summary = schedule_shape(k);
    }
    it->second.kernels.push_back(k.name);
  }
  std::erase_if(shapes, [](const auto& s) { return s.second.allowed.empty(); });
  auto warn = [&](const std::string& w) { if (options.warn) options.warn(w); };
  auto tile_str = [](RegisterTile t) { return std::to_string(t.vectors) + "x" + std::to_string(t.unroll); };

  TuneCache cache;
  if (!options.tune_cache.empty()) cache = read_tune_cache(options.tune_cache, /*missing_ok=*/options.tune);
  if (!options.tune) {
    size_t used = 0;
    for (const auto& [key, shape] : shapes) {
      auto e = cache.find(key);
      if (e == cache.end()) continue;
      const auto& allowed = shape.allowed;
      if (e->second.target != target.name || std::find(allowed.begin(), allowed.end(), e->second.tile) == allowed.end()) {
        warn("tune cache " + options.tune_cache + ": entry " + key + " (" + e->second.target + ", tile " +
             tile_str(e->second.tile) + ") does not fit kernel " + shape.kernels[0] + " " + shape.summary +
             " on " + target.name + "; using the cost model's tile");
        continue;
      }
      cg.register_tiles[key] = e->second.tile;
      ++used;
    }
    progress("tune cache " + options.tune_cache + ": " + std::to_string(used) + " of " + std::to_string(shapes.size()) +
             " kernel shapes with a tile choice found");
    return;
  }

  // Round r compiles the whole model with every shape's r-th candidate (its first where it
  // has fewer) and times every kernel: one compile per round, not one per candidate.
  size_t rounds = 0;
  for (auto& [key, shape] : shapes) {
    if (shape.allowed.size() > options.tune_candidates) shape.allowed.resize(options.tune_candidates);
    rounds = std::max(rounds, shape.allowed.size());
  }
  // Median microseconds per run of each shape's kernels in a bundle.
  auto time_shapes = [&](const std::vector<uint8_t>& bundle) {
    std::map<std::string, double> ns = time_kernels(bundle, kTuneWarmup, kTuneRuns), us;
    for (const auto& [key, shape] : shapes)
      for (const std::string& name : shape.kernels) us[key] += ns.count(name) ? ns[name] / 1e3 : 0;
    return us;
  };
  std::map<std::string, std::vector<double>> us;  // key -> median us per run, per candidate
  std::vector<uint8_t> model_bundle;              // round 0: the cost model's tiles
  for (size_t r = 0; r < rounds; ++r) {
    CodegenOptions trial_cg = cg;
    for (const auto& [key, shape] : shapes) trial_cg.register_tiles[key] = shape.allowed[r < shape.allowed.size() ? r : 0];
    std::vector<uint8_t> bundle = trial(trial_cg);
    std::map<std::string, double> t = time_shapes(bundle);
    if (r == 0) model_bundle = std::move(bundle);
    double total = 0;
    size_t timed = 0;
    for (const auto& [key, shape] : shapes)
      if (r < shape.allowed.size()) us[key].push_back(t[key]), total += t[key], ++timed;
    char line[160];
    std::snprintf(line, sizeof line, "tune round %zu/%zu: %zu kernel shapes, %.3f ms per run", r + 1, rounds, timed,
                  total / 1e3);
    progress(line);
  }
  std::map<std::string, size_t> best;  // key -> index of the fastest candidate
  for (const auto& [key, shape] : shapes) {
    const std::vector<double>& t = us[key];
    size_t b = 0;
    for (size_t i = 1; i < t.size(); ++i)
      if (t[i] < t[b]) b = i;
    best[key] = t[b] <= kTuneMinGain * t[0] ? b : 0;
  }
  // The fastest of 8 noisy times is often fast by luck: time the winners together against
  // the cost model's tiles again (alternating, median of kConfirmRuns each) and keep only
  // the winners that are still 3% faster.
  CodegenOptions winners_cg = cg;
  for (const auto& [key, shape] : shapes) winners_cg.register_tiles[key] = shape.allowed[best[key]];
  std::map<std::string, std::vector<double>> model_us, winner_us;
  if (std::any_of(best.begin(), best.end(), [](const auto& b) { return b.second != 0; })) {
    std::vector<uint8_t> winners_bundle = trial(winners_cg);
    for (int i = 0; i < kConfirmRuns; ++i) {
      for (const auto& [key, t] : time_shapes(model_bundle)) model_us[key].push_back(t);
      for (const auto& [key, t] : time_shapes(winners_bundle)) winner_us[key].push_back(t);
    }
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  double before = 0, after = 0;
  size_t proposed = 0, kept = 0;
  for (const auto& [key, shape] : shapes) {
    size_t b = best[key];
    double t_model = us[key][0], t_best = us[key][b];
    if (b != 0) {
      ++proposed;
      t_model = median(model_us[key]);
      t_best = median(winner_us[key]);
      if (t_best > kTuneMinGain * t_model) b = 0, t_best = t_model;
    }
    kept += b != 0;
    before += t_model;
    after += t_best;
    cg.register_tiles[key] = shape.allowed[b];
    cache[key] = TuneEntry{target.name, shape.allowed[b], t_best, t_model, shape.summary};
  }
  char line[200];
  std::snprintf(line, sizeof line,
                "tuned %zu kernel shapes: %zu faster tiles found, %zu confirmed; their kernels %.2f -> %.2f ms",
                shapes.size(), proposed, kept, before / 1e3, after / 1e3);
  progress(line);
  if (!options.tune_cache.empty()) {
    write_tune_cache(options.tune_cache, cache);
    progress("wrote " + std::to_string(cache.size()) + " decisions to " + options.tune_cache);
  }
}

// The model's inputs and outputs against what every runtime takes (schema/runtime_limits.h):
// refused here, naming the tensor, rather than written into a bundle no edgert opens.
void check_io_limits(const Schedule& schedule, const TargetSpec& target) {
  for (const std::vector<int>* list : {&schedule.inputs, &schedule.outputs})
    for (int id : *list) {
      const ScheduledBuffer& b = schedule.buffers[id];
      const std::string kind = list == &schedule.inputs ? "input" : "output", what = kind + " '" + b.name + "'";
      // The runtime takes names as C strings (edgert_tensor_info.name).
      if (const size_t nul = b.name.find('\0'); nul != std::string::npos)
        throw CompileError(kind + " '" + b.name.substr(0, nul) +
                           "\\0...': a name with a NUL byte, which the runtime refuses (names are C strings)");
      if (b.shape.size() > edge::limits::kMaxRank)
        throw CompileError(what + " has rank " + std::to_string(b.shape.size()) + "; the runtime takes at most " +
                           std::to_string(edge::limits::kMaxRank) + " dimensions (EDGERT_MAX_RANK)");
      if (target.address_bits == 32 && b.bytes() > edge::limits::kMaxBytes32Bit)
        throw CompileError(what + " is " + std::to_string(b.bytes()) + " bytes, more than a 32-bit " + target.name +
                           " runtime can address");
    }
}

}  // namespace

CompileResult compile_onnx_file(const std::string& model_path, const CompileOptions& options) {
  auto start = std::chrono::steady_clock::now();
  auto progress = [&](const std::string& what) {
    if (!options.progress) return;
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    char stamp[32];
    std::snprintf(stamp, sizeof stamp, "[%6.2fs] ", s);
    options.progress(stamp + what);
  };
  TargetSpec target = with_precision(target_by_name(options.target), options.precision);
  if (options.tune) check_target_runs_here(target);  // before the work it would waste

  ImportOptions import_options;
  import_options.input_shapes = options.input_shapes;
  import_options.constant_inputs = options.constant_inputs;
  import_options.warn = options.warn;
  import_options.winograd = options.winograd.value_or(target.winograd ? Winograd::Auto : Winograd::Off);
  import_options.dots.float_operands = options.precision;
  import_options.dots.int8_group = target.int8_dot_group;
  if (target.backend == BackendKind::LlvmCpu) import_options.dots.float_lanes = std::max(1, target.vector_bytes / 4);
  // Not Hexagon (HVX: no float vectors before v68; its packet budgets pin the code).
  if (target.backend == BackendKind::LlvmCpu && target.int8_dot != TargetSpec::Int8Dot::HvxU8S8)
    import_options.dots.weight_slice_bytes = int64_t{target.cache_bytes_per_core} * 5 / 8;
  import_options.dots.int8_signed = target.int8_dot == TargetSpec::Int8Dot::S8S8;
  import_options.dots.int8_any_bytes = target.int8_dot == TargetSpec::Int8Dot::I16Pairs;
  import_options.dots.int8_columns = target.int8_dot_columns;
  import_options.dots.int8_depthwise_columns = target.int8_depthwise_columns;
  import_options.padded_grouped_convs = options.padded_grouped_convs.value_or(target.backend == BackendKind::LlvmCpu);
  import_options.byte_pair_tables = target.int8_dot == TargetSpec::Int8Dot::HvxU8S8;
  std::unique_ptr<Graph> graph = import_onnx_file(model_path, import_options);
  progress("imported " + model_path + ": " + std::to_string(graph->live_nodes().size()) + " primitive ops");

  ScheduleOptions schedule_options;
  schedule_options.f16_intermediates_in_f32 = !target.f16_storage;
  schedule_options.channels_last = target.backend == BackendKind::LlvmCpu;
  schedule_options.fuse_row_reductions = target.backend == BackendKind::LlvmCpu;
  Schedule schedule = schedule_graph(*graph, schedule_options);
  check_io_limits(schedule, target);
  std::vector<KernelIR> kernels;
  for (const ScheduledKernel& k : schedule.kernels) kernels.push_back(build_kernel_ir(schedule, k));
  // A Concat's consumer in one kernel per source (kernel_ir.h): at most this many pieces.
  // The cpu port's targets (x86-64, aarch64) and OpenCL; Hexagon and a630 machine code are
  // not tested with pieces yet.
  constexpr size_t kMaxKernelPieces = 64;
  if ((target.backend == BackendKind::LlvmCpu && target.port == "cpu") || target.backend == BackendKind::OpenCL) {
    split_kernels_at_part_boundaries(schedule, kernels, kMaxKernelPieces);
    for (KernelIR& k : kernels) split_reduce_dims_at_divisions(k);
  }
  progress("scheduled " + std::to_string(kernels.size()) + " kernels");
  if (!options.dump_kernels.empty()) {
    std::ofstream f(options.dump_kernels);
    for (const KernelIR& k : kernels) f << to_string(k) << "\n";
  }

  CodegenOptions cg;
  cg.opt_level = options.opt_level;
  if (options.one_part_below_work) cg.one_part_below_work = *options.one_part_below_work;
  // The code generation and everything after it; `final` writes the dumps, the reference
  // data and the progress lines (--tune's trial compiles do not).
  auto build = [&](const CodegenOptions& codegen, bool final) {
    GeneratedCode code = make_backend(target)->generate(kernels, codegen);
    if (final) progress("generated " + std::to_string(code.bytes.size()) + " bytes of " + target.name + " code");

    // Lifetimes over the command queue: written at its producing step, read until its
    // last consumer.
    std::vector<int> first(schedule.buffers.size(), -1), last(schedule.buffers.size(), -1);
    for (size_t step = 0; step < schedule.steps.size(); ++step) {
      const Step& st = schedule.steps[step];
      int t = static_cast<int>(step);
      if (st.kind == Step::Kind::Kernel) {
        const ScheduledKernel& k = schedule.kernels[st.index];
        if (first[k.output] < 0) first[k.output] = t;
        last[k.output] = std::max(last[k.output], t);
        for (int b : k.inputs) last[b] = std::max(last[b], t);
      } else {
        last[schedule.copies[st.index].src] = std::max(last[schedule.copies[st.index].src], t);
      }
    }
    std::vector<int> arena_buffers;
    std::vector<Lifetime> lifetimes;
    for (size_t b = 0; b < schedule.buffers.size(); ++b) {
      if (schedule.buffers[b].role != BufferRole::Intermediate) continue;
      arena_buffers.push_back(static_cast<int>(b));
      // An image occupies its padded texels (the arena backs it where images alias buffers).
      auto image = code.images.find(static_cast<int>(b));
      size_t bytes = image != code.images.end() ? std::max<size_t>(image->second.bytes, schedule.buffers[b].bytes())
                                                : schedule.buffers[b].bytes();
      lifetimes.push_back({bytes, first[b], std::max(first[b], last[b])});
    }
    MemoryPlan plan = plan_memory(lifetimes, static_cast<uint64_t>(target.arena_alignment));
    if (final)
      progress("planned arena: " + std::to_string(plan.arena_size) + " bytes (lower bound " +
               std::to_string(plan.lower_bound) + ")");

    ReferenceData reference;
    if (final && options.reference.embed) {
      auto specs = [&](const std::vector<int>& ids) {
        std::vector<TensorSpec> out;
        for (int b : ids) out.push_back({schedule.buffers[b].name, schedule.buffers[b].dtype, schedule.buffers[b].shape});
        return out;
      };
      bool fp16 = target.half_arithmetic;
      // bf16 products round their operands to 8 significant bits: the fp16 tolerances.
      for (const ScheduledBuffer& b : schedule.buffers) fp16 = fp16 || b.dtype == DType::F16 || b.dtype == DType::BF16;
      reference = make_reference(model_path, specs(schedule.inputs), specs(schedule.outputs), options.constant_inputs,
                                 fp16, options.reference);
      progress("reference data: " + std::to_string(reference.inputs.size()) + " inputs, " +
               std::to_string(reference.outputs.size()) + " expected outputs");
    }

    BundleInputs in;
    in.source_model = std::filesystem::path(model_path).filename().string();
    in.schedule = &schedule;
    in.kernels = &kernels;
    in.code = &code;
    in.target = &target;
    in.arena_buffers = arena_buffers;
    in.plan = &plan;
    in.arena_alignment = static_cast<uint64_t>(target.arena_alignment);
    if (final && options.reference.embed) in.reference = &reference;
    CompileResult r;
    r.bundle = build_bundle(in);
    r.num_kernels = kernels.size();
    for (const ScheduledBuffer& b : schedule.buffers)
      if (b.role == BufferRole::Weight) {
        r.num_weights++;
        r.weight_bytes += b.bytes();
      }
    r.arena_size = plan.arena_size;
    r.arena_lower_bound = plan.lower_bound;
    r.code_bytes = code.bytes.size();
    return r;
  };

  if (options.tune || !options.tune_cache.empty()) {
    auto trial = [&](const CodegenOptions& c) { return build(c, false).bundle; };
    choose_register_tiles(kernels, target, options, trial, progress, cg);
  }
  cg.dump_llvm_ir = options.dump_llvm_ir;
  cg.dump_source = options.dump_source;
  return build(cg, true);
}

}  // namespace edgec
