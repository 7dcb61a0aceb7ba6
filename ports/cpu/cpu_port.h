// cpu_port.h — the CPU back end of the runtime (x86-64, aarch64): which bundles this
// machine can run, executable memory for kernel code, and kernel launch.
#pragma once
#include <cstddef>
#include <cstdint>

#include "bundle_generated.h"
#include "edgert.h"
#include "kernel_abi.h"

namespace edgert::cpu {

// Entry point of every compiled kernel (schema/kernel_abi.h).
using KernelFn = edge::abi::CpuKernelFn;

// Whether this machine runs the bundle's code: its arch, and every CPU feature it lists
// (an unknown feature is refused, not guessed). The message names both sides.
edgert_status check_target(const edge::bundle::Bundle* bundle);

// The architecture this runtime was built for, as the bundle names it.
edge::bundle::Arch host_arch();

// A feature this machine can check, as LLVM/GCC spell it, and whether it is present.
struct Feature {
  const char* name;
  bool present;
};
// This machine's checkable features (each port's own: cpu_port.cc for x86-64 / aarch64,
// ports/hexagon/hexagon_port.cc for the DSP), at most `cap` of them; returns the count.
size_t feature_table(Feature* out, size_t cap);

// Whether this CPU (and OS) supports the feature `name` as LLVM/GCC spell it ("avx2",
// "fma", "avx512f", "dotprod", ...; a leading '+' is ignored). *known is set false for a
// name this port cannot check: the caller refuses those rather than guess.
bool has_feature(const char* name, bool* known);

// The features of this CPU that has_feature knows and finds present, comma-separated
// ("neon,fp-armv8,dotprod,..."), truncated with "..." to fit `size`; returns buf.
const char* describe_features(char* buf, size_t size);

// Code copied into its own pages and made read+execute (never writable and executable
// at once). Kernels are position-independent and call nothing external, so a copy is all
// the loading they need.
struct CodeMapping {
  void* base = nullptr;
  size_t mapped_size = 0;
};
// Returns 0 or an errno value.
int map_code(const uint8_t* bytes, size_t size, CodeMapping* out);
void unmap_code(CodeMapping* mapping);

// Monotonic clock in nanoseconds, for Timestamp commands (vDSO: no system call).
// map_code, unmap_code and now_ns: code_pages.cc (POSIX), for every cpu-like port.
uint64_t now_ns();

}  // namespace edgert::cpu
