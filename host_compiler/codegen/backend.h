// backend.h — the compiler's back-end seam: a target chooses a code generator, which turns
// the kernels' loop IR into one code section of the bundle. Each back end decides how its
// kernels are launched (which output dim is split across cores or work-items, vector and
// work-group sizes) and records it in KernelIR::launch, so the bundle writer copies the
// decision instead of guessing it again. The calling convention each produces is written
// in schema/kernel_abi.h.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "codegen/kernel_ir.h"
#include "codegen/target.h"

namespace edgec {

// A reduce kernel's register tile on CPU targets (llvm_emit.cc): `vectors` vectors along the
// vectorized output dim times `unroll` outputs along one more dim.
struct RegisterTile {
  int vectors = 1, unroll = 1;
  bool operator==(const RegisterTile&) const = default;
};

struct CodegenOptions {
  int opt_level = 3;
  std::string dump_llvm_ir;   // LLVM back ends: write the optimized module here
  std::string dump_source;    // source back ends (OpenCL C): write the program here
  // schedule_key -> the tile to use instead of the cost model's (edgec --tune, --tune-cache).
  // Only tiles that register_tile_candidates offers for the kernel are taken.
  std::map<std::string, RegisterTile> register_tiles;
  // CPU targets of the cpu port (not Hexagon): a launch with less work than this
  // (launch_work: ALU operations + elements read and written) runs as one part, on the calling
  // thread. Splitting it, the parts' hand-off between threads (claims, the other core's
  // cache misses on the data) costs more than the share of work it moves. On a 2-core AMD
  // EPYC (AVX2), fastest of 6 x 200 runs at 2 threads: GRU steps of hidden 128 (3 products of
  // ~66k) took 0.28 ms whole, 0.32 ms split; of hidden 256 (~197k each, the recurrent
  // weights reused every step: split, each core keeps its half in its L2) 1.11 ms whole,
  // 0.84 ms split (BENCHMARKS.md). 0: split every launch (edgec --one-part-below).
  int64_t one_part_below_work = int64_t{1} << 17;
};

// What identifies a kernel for a schedule decision: a hash of its loop IR (without its name)
// and argument shapes, and the target. Kernels of the same shape share it, across models.
std::string schedule_key(const KernelIR& k, const TargetSpec& target);
// A readable summary of the kernel's shape for a cache file ("out[1,28,28,128]/r[3,3,128]").
std::string schedule_shape(const KernelIR& k);

// The register tiles worth timing for a kernel on a CPU target, the cost model's choice
// first, then the next best by the same model, at most `max`; empty when there is no choice
// (not a reduce kernel, or not an LLVM CPU target). Plans the kernel's launch.
std::vector<RegisterTile> register_tile_candidates(KernelIR& k, const TargetSpec& target, size_t max);

// A buffer a back end keeps as a 2-D image of RGBA texels (4 elements each, row-major over
// the buffer's elements; schema/kernel_abi.h). Its memory footprint is the padded image.
struct ImageLayout {
  uint32_t width = 0, height = 0;   // texels
  uint64_t bytes = 0;               // width * height * 4 * element size
};

// One function of a MachineCode section (the bundle's function table).
struct CodeRange {
  uint64_t offset = 0, size = 0;
};

// Adreno a630 machine code of one kernel (target adreno630, codegen/ir3_backend.cc): where it
// sits in the section and what a dispatcher needs to launch it without a compiler
// (bundle.fbs, Ir3Program). Compile-only today: nothing here has run on an a630.
struct A630Arg {
  enum class Kind { Address, Texture, Image, Unused } kind = Kind::Address;
  uint32_t slot = 0;  // Address: constant-file dword of its 64-bit address; else the slot
};
struct A630Program {
  uint64_t offset = 0, size = 0;       // in the section
  uint32_t instructions = 0, nops = 0;
  uint32_t full_regs = 0, half_regs = 0, constlen = 0, branchstack = 0;
  uint32_t private_bytes = 0, shared_bytes = 0, threadsize = 64, max_waves = 0;
  std::vector<A630Arg> args;           // parallel to the kernel's arguments
  uint32_t immediates_dword = 0;
  std::vector<uint32_t> immediates;
  uint32_t driver_params_dword = 0xffffffffu;  // none
  uint32_t work_group_id_reg = 0xfc, local_id_reg = 0xfc;
  uint32_t num_textures = 0, num_samplers = 0, num_images = 0;
  std::vector<uint32_t> loop_trips;    // trip count of each loop, in the order they open
};

// One Code section: its format (edge::bundle::CodeFormat), bytes and how to find each
// kernel in it, in the order of the kernels given to generate().
struct GeneratedCode {
  int format = 0;                         // edge::bundle::CodeFormat value
  uint32_t alignment = 64;                // of the section in the bundle
  std::vector<uint8_t> bytes;
  std::vector<CodeRange> functions;       // MachineCode: every function, sorted, disjoint
  std::vector<uint32_t> entry_functions;  // MachineCode: each kernel's index in `functions`
  std::vector<std::string> entry_names;   // OpenCLC: __kernel function names
  std::vector<std::string> required_features;  // beyond the target's (e.g. cl_khr_fp64)
  std::map<int, ImageLayout> images;      // schedule buffer id -> image (IMAGE mode)
  std::vector<A630Program> a630;          // Ir3A630: one per kernel
};

class Backend {
 public:
  virtual ~Backend() = default;
  // Fills every kernel's `launch`, then generates the code of all of them.
  virtual GeneratedCode generate(std::vector<KernelIR>& kernels, const CodegenOptions& options) = 0;
};

std::unique_ptr<Backend> make_backend(const TargetSpec& target);

// The back ends (codegen/llvm_backend.cc, codegen/opencl_backend.cc, codegen/ir3_backend.cc).
std::unique_ptr<Backend> make_llvm_cpu_backend(const TargetSpec& target);
std::unique_ptr<Backend> make_opencl_backend(const TargetSpec& target);
std::unique_ptr<Backend> make_ir3_backend(const TargetSpec& target);

}  // namespace edgec
