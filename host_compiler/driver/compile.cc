#include "driver/compile.h"

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
#include "schedule/schedule.h"

namespace edgec {

namespace {

constexpr int kTuneWarmup = 2, kTuneRuns = 7;  // timed runs: at least these, and 0.2 s
constexpr double kTuneMinGain = 0.97;   // a tile replaces the model's only when 3% faster (noise)

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
  std::map<std::string, std::vector<double>> us;  // key -> median us per run, per candidate
  for (size_t r = 0; r < rounds; ++r) {
    CodegenOptions trial_cg = cg;
    for (const auto& [key, shape] : shapes) trial_cg.register_tiles[key] = shape.allowed[r < shape.allowed.size() ? r : 0];
    std::map<std::string, double> ns = time_kernels(trial(trial_cg), kTuneWarmup, kTuneRuns);
    double total = 0;
    size_t timed = 0;
    for (const auto& [key, shape] : shapes) {
      if (r >= shape.allowed.size()) continue;
      double t = 0;
      for (const std::string& name : shape.kernels) t += ns.count(name) ? ns[name] / 1e3 : 0;
      us[key].push_back(t);
      total += t;
      ++timed;
    }
    char line[160];
    std::snprintf(line, sizeof line, "tune round %zu/%zu: %zu kernel shapes, %.3f ms per run", r + 1, rounds, timed,
                  total / 1e3);
    progress(line);
  }
  double before = 0, after = 0;
  size_t changed = 0;
  for (const auto& [key, shape] : shapes) {
    const std::vector<double>& t = us[key];
    size_t best = 0;
    for (size_t i = 1; i < t.size(); ++i)
      if (t[i] < t[best]) best = i;
    if (t[best] > kTuneMinGain * t[0]) best = 0;
    changed += best != 0;
    before += t[0];
    after += t[best];
    cg.register_tiles[key] = shape.allowed[best];
    cache[key] = TuneEntry{target.name, shape.allowed[best], t[best], t[0], shape.summary};
  }
  char line[160];
  std::snprintf(line, sizeof line, "tuned %zu kernel shapes: %zu changed, their kernels %.2f -> %.2f ms", shapes.size(),
                changed, before / 1e3, after / 1e3);
  progress(line);
  if (!options.tune_cache.empty()) {
    write_tune_cache(options.tune_cache, cache);
    progress("wrote " + std::to_string(cache.size()) + " decisions to " + options.tune_cache);
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
  TargetSpec target = target_by_name(options.target);
  if (options.tune) check_target_runs_here(target);  // before the work it would waste

  ImportOptions import_options;
  import_options.input_shapes = options.input_shapes;
  import_options.constant_inputs = options.constant_inputs;
  import_options.warn = options.warn;
  import_options.winograd = options.winograd.value_or(target.winograd ? Winograd::Auto : Winograd::Off);
  std::unique_ptr<Graph> graph = import_onnx_file(model_path, import_options);
  progress("imported " + model_path + ": " + std::to_string(graph->live_nodes().size()) + " primitive ops");

  ScheduleOptions schedule_options;
  schedule_options.f16_intermediates_in_f32 = !target.f16_storage;
  schedule_options.channels_last = target.backend == BackendKind::LlvmCpu;
  Schedule schedule = schedule_graph(*graph, schedule_options);
  std::vector<KernelIR> kernels;
  for (const ScheduledKernel& k : schedule.kernels) kernels.push_back(build_kernel_ir(schedule, k));
  progress("scheduled " + std::to_string(kernels.size()) + " kernels");
  if (!options.dump_kernels.empty()) {
    std::ofstream f(options.dump_kernels);
    for (const KernelIR& k : kernels) f << to_string(k) << "\n";
  }

  CodegenOptions cg;
  cg.opt_level = options.opt_level;
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
      for (const ScheduledBuffer& b : schedule.buffers) fp16 = fp16 || b.dtype == DType::F16;
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
