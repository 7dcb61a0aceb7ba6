#include "driver/compile.h"

#include <chrono>
#include <filesystem>
#include <fstream>

#include "bundle/bundle_builder.h"
#include "codegen/kernel_ir.h"
#include "codegen/backend.h"
#include "codegen/target.h"
#include "frontend/onnx_importer.h"
#include "memplan/memplan.h"
#include "schedule/schedule.h"

namespace edgec {

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
  cg.dump_llvm_ir = options.dump_llvm_ir;
  cg.dump_source = options.dump_source;
  GeneratedCode code = make_backend(target)->generate(kernels, cg);
  progress("generated " + std::to_string(code.bytes.size()) + " bytes of " + target.name + " code");

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
  progress("planned arena: " + std::to_string(plan.arena_size) + " bytes (lower bound " +
           std::to_string(plan.lower_bound) + ")");

  ReferenceData reference;
  if (options.reference.embed) {
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
  if (options.reference.embed) in.reference = &reference;
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
}

}  // namespace edgec
