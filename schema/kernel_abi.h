// kernel_abi.h — how a port calls a compiled kernel, for every code format of bundle.fbs.
// The one place this is written: edgec's back ends generate to it, edgert's ports call by
// it. Plain C++ (C++17 and C++20), no dependencies.
#pragma once
#include <cstdint>

namespace edge::abi {

// ---- MachineCode (cpu port: x86-64, aarch64) ----
// Every kernel is a function
//   void kernel(void* const* args, int32_t core_id, int32_t num_cores)
// args[i] points at the buffer Command.args[i] (args[0] is the output). A kernel split
// across cores computes the part `core_id` of `num_cores` of its Kernel.parallel_extent
// outermost iterations (the range [extent*core_id/num_cores, extent*(core_id+1)/num_cores))
// and nothing else, so any split gives bit-identical results. It calls nothing, keeps no
// state and is position-independent: a copy into executable pages is all the loading it needs.
using CpuKernelFn = void (*)(void* const* args, int32_t core_id, int32_t num_cores);

// Every function of a MachineCode section starts at a multiple of this. Where functions
// start, and nowhere else, the runtime may jump: the section's code directory
// (schema/code_directory.h) lists them, with each kernel's argument contract (access, dtype
// and the bytes its code may touch, bundle.fbs's ArgContract), as data the verifier reads
// without running any code. Editing the FlatBuffer cannot move an entry point, shorten the
// arguments a kernel reads or lend it smaller buffers than its code touches; only changed
// code bytes can (which signing covers).
inline constexpr uint64_t kFunctionAlignment = 16;

// ---- OpenCLC / OpenCLBinary (opencl port) ----
// Every kernel is an OpenCL C 1.2 function `__kernel void <Kernel.entry_name>(...)` whose
// parameters are Command.args in order: a Global buffer is `__global T*` (`const` when read),
// an Image2D buffer is `__read_only image2d_t` / `__write_only image2d_t`. Bool is stored as
// uchar, F16 as half read with vload_half / written with vstore_half (core OpenCL 1.2; half
// arithmetic only with cl_khr_fp16, listed in Target.features). The port enqueues it once
// per Launch with Kernel.global_size / local_size; a work-item finds its outputs from
// get_global_id(0..2) and must not touch memory past its buffers for work-items whose ids
// fall outside the outputs (the global size is rounded up to the work-group size).
inline constexpr int kMaxLaunchDims = 3;

// An Image2D buffer holds 4 elements per RGBA texel, row-major over the buffer's elements:
// element e is channel e % 4 of texel (e / 4) % image_width, row (e / 4) / image_width.
inline constexpr int kImageChannels = 4;

// ---- Ir3A630 (Adreno 630 machine code; no port runs it yet, a KGSL port is planned) ----
// One program per kernel (Kernel.a630): a6xx instructions, 8 bytes each, at a multiple of
// kA630ProgramAlignment in its section. A dispatcher loads the program, writes argument i's
// 64-bit device address at constant-file dword A630Program.args[i].slot and the immediates
// at immediates_dword, and runs Kernel.global_size / local_size work-items (the work-group
// size is compiled in); work-items past the outputs return without touching memory.
// A port must place every buffer it passes so that it does not cross a 4 GiB boundary of the
// GPU address space ((address >> 32) == ((address + size - 1) >> 32)): kernels whose indices
// fit 32 bits add their byte offsets to the address's low word only. (a6xx GPU addresses have
// 48 bits, so a high word is never all ones; kernels rely on that too.) Buffers start at a
// multiple of 16 bytes: a tile's lanes load up to 4 consecutive elements with one instruction.
// The limits below are the Adreno 630's as Mesa's ir3 (25.2.7) states them for gpu 630
// (ir3_compiler for a6xx); the verifier holds every A630Program to them.
inline constexpr uint64_t kA630ProgramAlignment = 128;
inline constexpr uint32_t kA630MaxRegs = 64;           // full / half vec4 registers of a footprint (6-bit fields)
inline constexpr uint32_t kA630MaxConstVec4 = 256;     // constlen of a compute program (max_const_compute)
inline constexpr uint32_t kA630BranchStack = 64;       // branchstack_size
inline constexpr uint32_t kA630SharedBytes = 32768;    // local_mem_size
inline constexpr uint32_t kA630MaxWorkGroup = 1024;    // work-items per work-group
inline constexpr uint32_t kA630UnusedReg = 252;        // regid of r63.x: "not used"

}  // namespace edge::abi
