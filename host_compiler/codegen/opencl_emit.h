// opencl_emit.h — Kernel IR -> OpenCL C 1.2 source, the renderer behind codegen/opencl_backend.cc.
//
// Every kernel becomes `__kernel void name(__global T* restrict p0, __global const T* restrict p1,
// ...)` (schema/kernel_abi.h). A work-item computes a register tile of outputs: vec_lanes
// consecutive ones along the innermost output dim longer than 1 (global dim 0) times
// unroll_lanes along a second output dim whose loads the tile shares (global dim 1, reduce
// kernels only); the other output dims are flattened into the last global dim. The tile is
// rendered as textually unrolled copies that share every value not depending on the tiled
// dims, so a conv's input window is loaded once per reduce step for all its output channels.
// Loads along the tile's lanes are one vloadN where the lanes read consecutive elements; where
// consecutive steps of the innermost reduce loop do instead (a matrix product with a
// transposed weight), that loop is unrolled by up to 4 for vloadN along it. Every accumulator
// still takes the reduce steps in order: sums are those of the scalar loop nest.
//
// IMAGE mode: an argument may be an image2d_t of RGBA texels instead (element e is channel
// e % 4 of texel e / 4). An image output is written one texel per tile (4 lanes along the
// innermost output dim, a multiple of 4); 4 lanes reading consecutive elements read one texel
// when aligned, else two; any other read fetches its element's texel and picks the channel.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "codegen/kernel_ir.h"
#include "codegen/target.h"

namespace edgec {

// Where a kernel argument lives on the device: a global buffer, or (IMAGE mode) a 2-D image
// of RGBA texels, row-major over the buffer's elements (schema/kernel_abi.h).
enum class ArgStorage { Buffer, Image2D };

struct ArgPlacement {
  ArgStorage storage = ArgStorage::Buffer;
  uint32_t image_width = 0, image_height = 0;  // Image2D: in texels
};

// How one kernel's outputs are shared out among work-items.
struct OpenCLTiling {
  int vec_dim = -1;            // output dim mapped to global dim 0 (-1: every dim is 1)
  int vec_lanes = 1;           // consecutive outputs along it per work-item
  int unroll_dim = -1;         // output dim mapped to global dim 1 (-1: none)
  int unroll_lanes = 1;        // outputs along it per work-item
  std::vector<int> rest_dims;  // the other output dims longer than 1, outermost first
  std::vector<uint64_t> work;  // work-items needed per global dim (1-3 entries)
};

// An image output (IMAGE mode) takes 4 lanes along the innermost output dim, whose extent
// must be a multiple of 4: each tile then writes one whole texel.
OpenCLTiling choose_opencl_tiling(const KernelIR& k, bool image_output = false);

// The NDRange of a tiling, for both GPU back ends (they launch the same schedule): work-groups
// of 64 work-items (two NVIDIA warps, one Adreno wave) or, for tiny kernels, the smallest power
// of two holding all their work-items. Of the power-of-two shapes of that size, those whose
// rounding up costs at most a quarter more work-items than the best one qualify, and the
// widest in dim 0 wins: consecutive work-items then touch consecutive outputs (coalesced
// loads and stores), worth more than a few idle lanes. A global size of 2^max_global_bits or
// more in one dim is a CompileError naming `target`.
LaunchPlan plan_gpu_launch(const OpenCLTiling& tl, int max_global_bits, const std::string& target);

// Steps per trip of reduce dim j's loop when it is unrolled to turn loads into vector loads
// along it (both GPU back ends: 4 or 2 dividing the extent, within a budget of body copies
// per tile; 1: none). Whether unrolling helps is the back end's call (its vector loads).
// whole_short: a loop of at most 8 steps that 4 does not divide is unrolled whole.
int reduce_unroll_lanes(const KernelIR& k, const OpenCLTiling& tl, int j, bool whole_short);

// One OpenCL C program: kernels rendered one by one, the helpers they call emitted once on top.
class OpenCLProgramWriter {
 public:
  explicit OpenCLProgramWriter(const TargetSpec& target) : target_(target) {}
  // Renders k as `__kernel void entry(...)`; k.launch.global_size must be planned (the
  // kernel returns early for the work-items the rounding up to the local size adds).
  // `args` says where each of k.args lives; an Image2D output needs the image_output tiling.
  void add_kernel(const KernelIR& k, const OpenCLTiling& tiling, const std::string& entry,
                  const std::vector<ArgPlacement>& args);
  std::string source() const;
  bool uses_fp64() const { return fp64_; }

  // A helper function the kernels call, defined once (by name) ahead of them.
  void need_helper(const std::string& name, const std::string& definition);
  void need_fp64() { fp64_ = true; }

 private:
  TargetSpec target_;
  std::vector<std::string> helper_order_;
  std::map<std::string, std::string> helpers_;
  std::string kernels_;
  bool fp64_ = false;
};

}  // namespace edgec
