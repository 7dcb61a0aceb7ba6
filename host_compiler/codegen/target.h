// target.h — what edgec can generate code for, which code generator does it, and how the
// runtime recognizes it.
#pragma once
#include <string>
#include <vector>

#include "graph/graph.h"

namespace edgec {

// The code generator a target uses (codegen/backend.h).
enum class BackendKind {
  LlvmCpu,   // LLVM -> machine code -> flat blob (x86-64, aarch64): the cpu port
  OpenCL,    // OpenCL C 1.2 source (generic devices, Adreno): the opencl port
  Ir3,       // Adreno a630 machine code from Mesa's ir3 (libtinymesa.so): compile-only today
};

struct TargetSpec {
  std::string name;                 // as given to --target
  BackendKind backend = BackendKind::LlvmCpu;
  std::string port = "cpu";         // runtime port that runs the bundle (Target.port)
  int bundle_arch;                  // edge::bundle::Arch value
  std::string cpu;                  // LLVM cpu name / OpenCL device profile (Target.cpu)
  std::vector<std::string> required_features;  // checked by the runtime on the device
  // LLVM CPU targets
  std::string triple;               // LLVM target triple
  std::string llvm_features;        // LLVM feature string ("+avx2,+fma")
  int vector_bytes = 16;            // widest vector register the optimizer should fill
  int vector_registers = 16;        // how many of them (unroll / accumulator budget)
  // The same for kernels that accumulate integers (8-bit convs and matrix products) where
  // the target's integer vectors differ (Hexagon: 128-byte HVX, float scalar); 0: as above.
  int int_vector_bytes = 0;
  int int_vector_registers = 0;
  // Private (L2) cache of one core the code may assume for cache blocking: a tile's slice
  // of a conv's or matrix product's weights stays under 5/8 of it.
  int cache_bytes_per_core = 512 * 1024;
  // Stride-1 3x3 convs as Winograd F(m x m, 3 x 3) where it pays, unless edgec --winograd
  // says otherwise (the products are the fast kernels of the CPU code generator).
  bool winograd = false;
  // edgec --precision bf16 is allowed (x86_64-avx512: AVX512_BF16's vdpbf16ps, which
  // with_precision adds to the features) / was asked for (the code generator emits it).
  bool bf16_capable = false;
  bool bf16_products = false;
  // The 8-bit dot product the code may use where a kernel reduces 8-bit groups of
  // int8_dot_group elements per 32-bit lane (the frontend's DotLayout): vpdpbusd (u8 x s8
  // quads, AVX512_VNNI), sdot (s8 x s8 quads, ARMv8.2 DotProd: a u8 activation is read as
  // x - 128, DotLayout::int8_signed), vpmaddwd (any 8-bit pairs widened to int16, AVX2:
  // exact, no saturation) or HVX's vrmpy (u8 x s8 quads as vpdpbusd, 32 lanes). A bundle
  // using it requires int8_dot_feature (runtime name; empty: nothing beyond the target's
  // features). The weight panels hold int8_dot_columns output channels (DotLayout).
  enum class Int8Dot : uint8_t { None, U8S8, S8S8, I16Pairs, HvxU8S8 };
  Int8Dot int8_dot = Int8Dot::None;
  std::string int8_dot_feature;
  int int8_dot_group = 1;
  int int8_dot_columns = 16;
  // The same for 8-bit depthwise convs (DotLayout::int8_depthwise_columns).
  int int8_depthwise_columns = 16;
  // Storage and arithmetic. F16 intermediates are kept as F16 only where the target reads
  // and writes half cheaply (GPUs: vload_half / vstore_half; aarch64-fp16); other CPUs store
  // them as F32 (AVX2 has no masked or gathered 16-bit loads, see ScheduleOptions).
  bool f16_storage = false;
  bool half_arithmetic = false;     // compute F16 values in half (cl_khr_fp16; ARMv8.2 FP16)
  // OpenCL targets
  bool image_mode = false;          // activations and weights as image2d_t (RGBA texels)
  int image_pitch_alignment = 0;    // bytes an image row pitch must be a multiple of
  int image_max_width = 16384;      // texels; larger tensors stay buffers
  int image_max_height = 16384;
  int arena_alignment = 64;         // every arena offset (GPUs: sub-buffer base alignment)
  int address_bits = 64;            // the device's pointers (Hexagon: 32): the runtime's byte counts
  // What the target's instructions lack and LLVM would otherwise call a library helper for
  // (Hexagon: no integer divide, no float sqrt / floor / ceil / trunc / round instructions).
  // Kernels call nothing, so the code generator expands these inline instead.
  bool int_divide = true;           // udiv / sdiv / urem / srem by a run-time value
  bool fp_rounding = true;          // llvm.sqrt, llvm.floor, ceil, trunc, roundeven on float
  // Double arithmetic (Hexagon: none, every op a helper). Where it has none, the frontend's
  // float64 forms of a float32 fused multiply-add (ops_quant.cc: QLinearAdd) become that
  // fused multiply-add; any other double arithmetic is refused naming the helper.
  bool f64_arithmetic = true;
  // float <-> half conversion instructions (Hexagon before v68: none); without them the code
  // generator converts in integer operations (exact, round to nearest even).
  bool f16_conversion = true;
};

// Throws CompileError listing the known targets if `name` is unknown.
TargetSpec target_by_name(const std::string& name);
// The target with edgec --precision applied: F32 leaves it as it is; BF16 (products with
// bfloat16 operands) needs a bf16_capable target and adds the feature the code then needs.
TargetSpec with_precision(TargetSpec target, DType precision);
std::vector<std::string> known_targets();
// One line on what a target generates and needs (edgec --list-targets).
std::string target_summary(const TargetSpec& t);

}  // namespace edgec
