// The OpenCL C back end: plans every kernel's NDRange (codegen/opencl_emit.h tiles the
// outputs, this file picks work-group sizes), decides in IMAGE mode which buffers are images
// and renders all kernels into one program.
#include <algorithm>
#include <cctype>
#include <fstream>
#include <numeric>
#include <optional>
#include <set>

#include "codegen/backend.h"
#include "bundle_header.h"
#include "codegen/opencl_emit.h"

namespace edgec {

namespace {

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

// ---- IMAGE mode ----
// What every OpenCL 1.2 (full profile) device with images supports: 8192 x 8192 images (PoCL
// has no more) and 128 read-only images per kernel. Layouts within 8192 are preferred where
// they exist, so an image of a generic target opens on any device.
constexpr uint64_t kPortableImageSide = 8192;
constexpr int kMaxReadImages = 128;

// The image holding `numel` elements of `dtype`, if the target's limits allow one: one row
// where the texels fit, else the width with the least padding, preferring (when that costs at
// most 1/16 more) widths holding whole rows of `row_elems` elements so neighbouring rows of
// the tensor's innermost dim share an image row. Widths keep row pitches aligned.
std::optional<ImageLayout> image_layout(int64_t numel, DType dtype, int64_t row_elems, const TargetSpec& t) {
  if (numel <= 0) return std::nullopt;
  const uint64_t texel_bytes = 4 * dtype_size(dtype), texels = (static_cast<uint64_t>(numel) + 3) / 4;
  const uint64_t pitch = t.image_pitch_alignment > 0 ? static_cast<uint64_t>(t.image_pitch_alignment) : 1;
  const uint64_t align = pitch / std::gcd(pitch, texel_bytes);  // width multiple giving that pitch
  const uint64_t row = row_elems % 4 == 0 && row_elems > 0 ? static_cast<uint64_t>(row_elems) / 4 : 1;
  auto fit = [&](uint64_t max_w, uint64_t max_h) -> std::optional<ImageLayout> {
    max_w = max_w / align * align;
    if (max_w == 0 || max_h == 0) return std::nullopt;
    const uint64_t one_row = edge::bundle::align_up(texels, align);
    if (one_row <= max_w) return ImageLayout{static_cast<uint32_t>(one_row), 1, 0};
    auto least_padding = [&](uint64_t unit) -> std::optional<ImageLayout> {
      std::optional<ImageLayout> best;
      uint64_t best_pad = 0;
      for (uint64_t w = unit; w <= max_w; w += unit) {
        uint64_t h = (texels + w - 1) / w, pad = w * h - texels;
        if (h > max_h) continue;
        if (!best || pad <= best_pad)
          best = ImageLayout{static_cast<uint32_t>(w), static_cast<uint32_t>(h), 0}, best_pad = pad;
      }
      return best;
    };
    auto padding = [&](const ImageLayout& l) { return uint64_t{l.width} * l.height - texels; };
    std::optional<ImageLayout> any = least_padding(align);
    const uint64_t unit = std::lcm(row, align);
    std::optional<ImageLayout> rows = unit <= max_w ? least_padding(unit) : std::nullopt;
    if (rows && any && padding(*rows) <= padding(*any) + texels / 16) return rows;
    return any;
  };
  const uint64_t max_w = static_cast<uint64_t>(std::max(t.image_max_width, 0));
  const uint64_t max_h = static_cast<uint64_t>(std::max(t.image_max_height, 0));
  std::optional<ImageLayout> l =
      fit(std::min(max_w, kPortableImageSide), std::min(max_h, kPortableImageSide));
  if (!l) l = fit(max_w, max_h);
  if (l) l->bytes = uint64_t{l->width} * l->height * texel_bytes;
  return l;
}

// The buffers kept as images, decided once for every kernel that uses them: float weights
// (any shape: the port pads the last texel and rows with zeros) and float intermediates
// whose writers fill whole texels (innermost dim a multiple of 4). Model inputs and outputs
// stay buffers: the caller binds linear memory for them.
std::map<int, ImageLayout> choose_images(const std::vector<KernelIR>& kernels, const TargetSpec& target) {
  struct Use {
    const KernelArg* arg = nullptr;
    bool writable = true;  // every kernel writing it writes whole texels, none reads it too
  };
  std::map<int, Use> uses;
  for (const KernelIR& k : kernels)
    for (size_t i = 0; i < k.args.size(); ++i) {
      const KernelArg& a = k.args[i];
      Use& u = uses[a.buffer];
      if (!u.arg) u.arg = &a;
      if (i == 0 && (k.out_shape.empty() || k.out_shape.back() % 4 != 0 || numel(k.out_shape) != a.numel))
        u.writable = false;
      if (i > 0 && a.buffer == k.args[0].buffer) u.writable = false;
    }
  std::map<int, ImageLayout> images;
  for (const auto& [buffer, u] : uses) {
    const KernelArg& a = *u.arg;
    if (a.dtype != DType::F32 && a.dtype != DType::F16) continue;
    const int64_t inner = a.shape.empty() ? 1 : a.shape.back();
    if (a.role == BufferRole::Intermediate) {
      if (!u.writable || inner % 4 != 0) continue;
    } else if (a.role != BufferRole::Weight || !u.writable) {
      continue;
    }
    if (auto l = image_layout(a.numel, a.dtype, inner, target)) images[buffer] = *l;
  }
  // A kernel reading more images than every device allows reads the rest as buffers.
  for (const KernelIR& k : kernels) {
    int read = 0;
    for (size_t i = 1; i < k.args.size(); ++i)
      if (images.count(k.args[i].buffer) && ++read > kMaxReadImages) images.erase(k.args[i].buffer);
  }
  return images;
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
    if (target_.image_mode) code.images = choose_images(kernels, target_);
    for (KernelIR& k : kernels) {
      std::vector<ArgPlacement> place(k.args.size());
      for (size_t i = 0; i < k.args.size(); ++i)
        if (auto it = code.images.find(k.args[i].buffer); it != code.images.end())
          place[i] = {ArgStorage::Image2D, it->second.width, it->second.height};
      OpenCLTiling tiling = choose_opencl_tiling(k, place[0].storage == ArgStorage::Image2D);
      k.launch = plan_gpu_launch(tiling, 32, "OpenCL");
      std::string entry = entry_name(k.name, used);
      writer.add_kernel(k, tiling, entry, place);
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
