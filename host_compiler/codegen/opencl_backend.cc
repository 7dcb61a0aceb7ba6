// The OpenCL C back end: plans every kernel's NDRange (codegen/opencl_emit.h tiles the
// outputs, this file picks work-group sizes) and renders all kernels into one program.
#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>

#include "codegen/backend.h"
#include "codegen/opencl_emit.h"

namespace edgec {

namespace {

uint64_t pow2_ceil(uint64_t n) {
  uint64_t p = 1;
  while (p < n) p *= 2;
  return p;
}
uint64_t round_up(uint64_t n, uint64_t m) { return (n + m - 1) / m * m; }

// Work-groups of 64 work-items (two NVIDIA warps, one Adreno wave) or, for tiny kernels, the
// smallest power of two holding all their work-items. Of the power-of-two shapes of that
// size, those whose rounding up costs at most a quarter more work-items than the best one
// qualify, and the widest in dim 0 wins: consecutive work-items then touch consecutive
// outputs (coalesced loads and stores), worth more than a few idle lanes.
LaunchPlan plan_launch(const OpenCLTiling& tl) {
  LaunchPlan plan;
  plan.parallel_dim = tl.vec_dim;
  plan.parallel_extent = 1;
  const size_t rank = tl.work.size();
  uint64_t total = 1;
  for (uint64_t w : tl.work) total *= w;
  const uint64_t size = std::min<uint64_t>(64, pow2_ceil(total));
  std::vector<std::pair<std::vector<uint64_t>, uint64_t>> shapes;  // local size, work-items
  uint64_t fewest = ~uint64_t{0};
  auto limit = [&](size_t d) { return d < rank ? std::min(size, pow2_ceil(tl.work[d])) : 1; };
  for (uint64_t l0 = 1; l0 <= limit(0); l0 *= 2)
    for (uint64_t l1 = 1; l1 <= limit(1) && l0 * l1 <= size; l1 *= 2) {
      uint64_t l2 = size / (l0 * l1);
      if (l2 > limit(2) || (rank < 3 && l2 != 1)) continue;
      std::vector<uint64_t> local = {l0, l1, l2};
      local.resize(rank);
      uint64_t items = 1;
      for (size_t d = 0; d < rank; ++d) items *= round_up(tl.work[d], local[d]);
      shapes.push_back({local, items});
      fewest = std::min(fewest, items);
    }
  // In order of l0, then l1: the last one that qualifies is the widest.
  std::vector<uint64_t> best(rank, 1);  // none qualifies only if size exceeds the limits
  for (const auto& [local, items] : shapes)
    if (items * 4 <= fewest * 5) best = local;
  plan.local_size = best;
  for (size_t d = 0; d < rank; ++d) {
    uint64_t g = round_up(tl.work[d], best[d]);
    if (g >= (uint64_t{1} << 32))
      throw CompileError("OpenCL: a kernel needs more than 2^32 work-items in one dim");
    plan.global_size.push_back(g);
  }
  return plan;
}

// A valid, unique OpenCL C identifier: the scheduler's names (k<N>_<buffer>) stay as they
// are; anything else gets a "k_" prefix, which no keyword, built-in or helper starts with.
std::string entry_name(const std::string& name, std::set<std::string>& used) {
  std::string s;
  for (char c : name) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  size_t digits = 1;
  while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
  bool scheduler_name = s.size() > 2 && s[0] == 'k' && digits > 1 && digits < s.size() && s[digits] == '_';
  if (!scheduler_name) s = "k_" + s;
  std::string unique = s;
  for (int i = 2; !used.insert(unique).second; ++i) unique = s + "_" + std::to_string(i);
  return unique;
}

class OpenCLBackend : public Backend {
 public:
  explicit OpenCLBackend(const TargetSpec& target) : target_(target) {}

  GeneratedCode generate(std::vector<KernelIR>& kernels, const CodegenOptions& options) override {
    OpenCLProgramWriter writer(target_);
    GeneratedCode code;
    code.format = 2;  // edge::bundle::CodeFormat::OpenCLC
    code.alignment = 64;
    std::set<std::string> used;
    for (KernelIR& k : kernels) {
      OpenCLTiling tiling = choose_opencl_tiling(k);
      k.launch = plan_launch(tiling);
      std::string entry = entry_name(k.name, used);
      // IMAGE mode (target_.image_mode) would choose Image2D for some arguments here.
      writer.add_kernel(k, tiling, entry, std::vector<ArgStorage>(k.args.size(), ArgStorage::Buffer));
      code.entry_names.push_back(entry);
    }
    std::string source = writer.source();
    code.bytes.assign(source.begin(), source.end());
    auto& have = target_.required_features;
    if (writer.uses_fp64() && std::find(have.begin(), have.end(), "cl_khr_fp64") == have.end())
      code.required_features.push_back("cl_khr_fp64");
    if (!options.dump_source.empty()) {
      std::ofstream f(options.dump_source, std::ios::binary | std::ios::trunc);
      f << source;
      if (!f.flush()) throw CompileError("cannot write " + options.dump_source);
    }
    return code;
  }

 private:
  TargetSpec target_;
};

}  // namespace

std::unique_ptr<Backend> make_opencl_backend(const TargetSpec& target) {
  return std::make_unique<OpenCLBackend>(target);
}

}  // namespace edgec
