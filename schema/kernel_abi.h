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

// Every function of a MachineCode section starts at a multiple of this (Section.functions):
// an entry point moved into the middle of an instruction is refused at open.
inline constexpr uint64_t kFunctionAlignment = 16;

// The contract compiled into the code. Called with num_cores == 0, a kernel does no work: it
// stores at args[0] (a slot the port provides) the address of these 8-byte words inside
// its own code section, and returns:
//   { kContractMagic, n, then per argument: access | dtype << 8, extent in bytes }
// with the meaning of bundle.fbs's ArgContract. The cpu port probes every kernel when it
// creates a context and refuses a bundle whose Kernel.args say otherwise, so editing the
// FlatBuffer cannot shorten the arguments a kernel reads or lend it smaller buffers than
// its code touches; only changed code can (which signing covers).
inline constexpr uint64_t kContractMagic = 0x3154434152544e43ull;  // "CNTRACT1"
inline constexpr uint64_t contract_arg_word(uint32_t access, uint32_t dtype) {
  return access | static_cast<uint64_t>(dtype) << 8;
}

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

}  // namespace edge::abi
