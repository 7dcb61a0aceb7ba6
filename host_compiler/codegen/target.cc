#include "codegen/target.h"

#include "graph/graph.h"

namespace edgec {

namespace {

TargetSpec cpu_target(std::string name, int arch, std::string triple, std::string cpu, std::string llvm_features,
                      std::vector<std::string> required, int vector_bytes, int vector_registers,
                      int cache_bytes_per_core) {
  TargetSpec t;
  t.name = std::move(name);
  t.bundle_arch = arch;
  t.triple = std::move(triple);
  t.cpu = std::move(cpu);
  t.llvm_features = std::move(llvm_features);
  t.required_features = std::move(required);
  t.vector_bytes = vector_bytes;
  t.vector_registers = vector_registers;
  t.cache_bytes_per_core = cache_bytes_per_core;
  t.winograd = true;
  return t;
}

TargetSpec opencl_target(std::string name, std::string profile) {
  TargetSpec t;
  t.name = std::move(name);
  t.backend = BackendKind::OpenCL;
  t.port = "opencl";
  t.bundle_arch = 3;  // edge::bundle::Arch::OpenCL
  t.cpu = std::move(profile);
  t.f16_storage = true;  // vload_half / vstore_half are core OpenCL 1.2
  // Sub-buffers of the arena start at multiples of CL_DEVICE_MEM_BASE_ADDR_ALIGN (1024 bits
  // on Adreno 6xx and PoCL); 256 bytes leaves room.
  t.arena_alignment = 256;
  return t;
}

std::vector<TargetSpec> all_targets() {
  const int x86 = 0, arm = 1;  // edge::bundle::Arch
  // Every feature of the x86-64 microarchitecture levels LLVM compiles for (its code may use
  // any: BMI2 shifts, MOVBE, F16C conversions), so the runtime refuses a CPU that lacks one
  // instead of dying of SIGILL. v3 = v2 + AVX, AVX2, BMI1/2, F16C, FMA, LZCNT, MOVBE, XSAVE.
  const std::vector<std::string> x86_64_v3 = {"cx16", "sahf", "popcnt", "sse3", "ssse3", "sse4.1", "sse4.2",
                                              "avx", "avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt", "movbe", "xsave"};
  std::vector<std::string> x86_64_v4 = x86_64_v3;
  for (const char* f : {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}) x86_64_v4.push_back(f);
  std::vector<TargetSpec> targets = {
      // Any x86-64 with AVX2 and FMA (Haswell, Zen 1 and later): x86-64-v3. L2 per core:
      // 256 KB (Haswell, Skylake client) to 1 MB (Zen 4): assume 512 KB.
      cpu_target("x86_64", x86, "x86_64-unknown-linux-gnu", "x86-64-v3", "", x86_64_v3, 32, 16, 512 << 10),
      // AVX-512 cores (Skylake-SP and later, Zen 4) have 1 MB or more of L2.
      cpu_target("x86_64-avx512", x86, "x86_64-unknown-linux-gnu", "x86-64-v4", "", x86_64_v4, 64, 32, 1 << 20),
      // ARMv8.0-A with NEON (Advanced SIMD), the baseline of every Kryo core: 32 vector
      // registers of 16 bytes. The cpu stays "generic" in every aarch64 variant: a named
      // core would imply features (LSE, CRC, ...) the runtime does not check.
      // L2 per core: 256-512 KB on the Cortex-A7x cores of automotive Snapdragons.
      cpu_target("aarch64", arm, "aarch64-unknown-linux-gnu", "generic", "+neon", {"neon"}, 16, 32, 256 << 10),
  };
  // + ARMv8.2 dot products (FEAT_DotProd: Cortex-A55/A75/A76 and later, Kryo 3xx+, the
  // SA8155P): int8 convs and matrix products as `sdot v.4s, v.16b, v.4b[]`, 4 products per
  // lane. sdot takes signed bytes only (u8 x s8 is usdot, FEAT_I8MM, which the A76 lacks),
  // so uint8 activations are read as x - 128 (x ^ 0x80) and 128 * sum(w) is folded into the
  // int32 bias constant (ops_quant.cc). +dotprod is enabled only in the kernels that use sdot
  // (llvm_emit.cc, as vpdpbusd on x86_64-avx512): the others are the code of "aarch64" (LLVM
  // would otherwise form sdot from other int8 sums unasked), and the bundle requires
  // "dotprod" only where a kernel used it.
  TargetSpec dotprod = cpu_target("aarch64-dotprod", arm, "aarch64-unknown-linux-gnu", "generic", "+neon",
                                  {"neon"}, 16, 32, 256 << 10);
  dotprod.int8_dot = TargetSpec::Int8Dot::S8S8;
  dotprod.int8_dot_feature = "dotprod";
  dotprod.int8_dot_group = 4;
  targets.push_back(dotprod);
  // + ARMv8.2 half-precision arithmetic (FEAT_FP16: FPHP scalar, ASIMDHP vector): float16
  // values are computed in half, 8 lanes per register (`fmla v.8h`), and F16 intermediates
  // stay half in memory (NEON loads and stores half as cheaply as float); sums accumulate in
  // half over short blocks added in float (llvm_emit.cc, kHalfBlock).
  TargetSpec fp16 = cpu_target("aarch64-fp16", arm, "aarch64-unknown-linux-gnu", "generic", "+neon,+fullfp16",
                               {"neon", "fp16", "fullfp16"}, 16, 32, 256 << 10);
  fp16.half_arithmetic = true;
  fp16.f16_storage = true;
  targets.push_back(fp16);
  // Hexagon DSP (Snapdragon 845: v65, 855 / SA8155P: v66), scalar core: 32 32-bit general
  // registers, float arithmetic only in them (sfadd / sfmpy / sffma): HVX (128-byte vectors)
  // has no float before v68, so float code is scalar (vector_bytes 4: one lane). Kernels that
  // accumulate integers (8-bit convs and matrix products) use HVX: 32 int32 lanes, 32
  // vector registers, the 8-bit products as vrmpy (Vu.ub x Vv.b quads summed per int32
  // lane: vpdpbusd's layout, 32 output channels per panel). No integer divide, no double
  // arithmetic, no float rounding or sqrt instructions: the code generator expands those
  // inline (target.h). 32-bit addresses, so
  // indices are 32-bit (llvm_emit.cc). L2: 512 KB shared by the DSP's hardware threads; the
  // runtime uses one (threads = 1): assume 256 KB for a tile's weights.
  const int hexagon = 2;  // edge::bundle::Arch::Hexagon
  for (const char* v : {"65", "66"}) {
    TargetSpec h = cpu_target(std::string("hexagon-v") + v, hexagon, "hexagon-unknown-none-elf",
                              std::string("hexagonv") + v,
                              std::string("+hvxv") + v + ",+hvx-length128b",
                              {std::string("v") + v, std::string("hvxv") + v}, 4, 16, 256 << 10);
    h.port = "hexagon";  // ports/hexagon: the cpu port's replay, single-threaded, freestanding
    h.address_bits = 32;
    h.int_divide = false;
    h.fp_rounding = false;
    h.f64_arithmetic = false;
    h.f16_conversion = false;
    h.int_vector_bytes = 128;
    h.int_vector_registers = 32;
    h.int8_dot = TargetSpec::Int8Dot::HvxU8S8;
    h.int8_dot_group = 4;
    h.int8_dot_columns = 32;
    h.int8_depthwise_columns = 128;  // a tap's 128 channels: one HVX vector of bytes
    targets.push_back(h);
  }
  // AVX512_BF16 (Cooper Lake, Sapphire Rapids, Zen 4 and later) comes with AVX-512 only.
  for (TargetSpec& t : targets) t.bf16_capable = t.name == "x86_64-avx512";
  // AVX512_VNNI: Cascade Lake, Ice Lake, Zen 4 and later (not Skylake-SP: an int8 bundle
  // then needs a newer AVX-512 core; float bundles do not).
  // Every AVX2 core has vpmaddwd: 8-bit pairs widened to int16 (ResNet-18 int8 77 -> 41 ms
  // against int32 multiplies, edgert-bench --profile, BENCHMARKS.md).
  for (TargetSpec& t : targets) {
    if (t.name == "x86_64-avx512")
      t.int8_dot = TargetSpec::Int8Dot::U8S8, t.int8_dot_feature = "avx512vnni", t.int8_dot_group = 4;
    if (t.name == "x86_64") t.int8_dot = TargetSpec::Int8Dot::I16Pairs, t.int8_dot_group = 2;
  }
  // Any OpenCL 1.2 device: global buffers, F32 arithmetic, F16 stored as half.
  targets.push_back(opencl_target("opencl", "generic"));
  // The same with activations and weights in images (what Adreno reads fastest), F32 texels.
  TargetSpec image = opencl_target("opencl-image", "generic");
  image.image_mode = true;
  image.image_max_width = image.image_max_height = 8192;  // the OpenCL 1.2 minimum (PoCL's limit)
  targets.push_back(image);
  // Adreno 630 (Snapdragon 845): half arithmetic (cl_khr_fp16), IMAGE mode with half
  // texels, image row pitch aligned to 64 bytes, 16384 x 16384 images.
  TargetSpec a630 = opencl_target("opencl-adreno630", "adreno630");
  a630.half_arithmetic = true;
  a630.required_features = {"cl_khr_fp16"};
  a630.image_mode = true;
  a630.image_pitch_alignment = 64;
  targets.push_back(a630);
  // The same GPU through native machine code: kernel IR -> NIR -> Mesa's ir3 on the host
  // (libtinymesa.so, dlopen'd when this target is used). The schedule is the OpenCL back
  // end's; float16 in half, reductions in float. No runtime port runs it yet (a KGSL port
  // is planned): compile-only, checked by decoding and limits.
  TargetSpec native = opencl_target("adreno630", "a630");
  native.backend = BackendKind::Ir3;
  native.port = "kgsl";
  native.bundle_arch = 4;  // edge::bundle::Arch::Adreno
  native.half_arithmetic = true;
  targets.push_back(native);
  return targets;
}

}  // namespace

TargetSpec target_by_name(const std::string& name) {
  for (const TargetSpec& t : all_targets())
    if (t.name == name) return t;
  std::string known;
  for (const std::string& n : known_targets()) known += (known.empty() ? "" : ", ") + n;
  throw CompileError("unknown target '" + name + "' (known: " + known + ")");
}

TargetSpec with_precision(TargetSpec t, DType precision) {
  if (precision == DType::F32) return t;
  if (precision != DType::BF16) throw CompileError(std::string("--precision ") + dtype_name(precision) + " is not supported");
  if (!t.bf16_capable) {
    std::string capable;
    for (const TargetSpec& c : all_targets())
      if (c.bf16_capable) capable += (capable.empty() ? "" : ", ") + c.name;
    throw CompileError("--precision bf16 needs bfloat16 dot products, which target " + t.name + " lacks (targets with them: " +
                       capable + ")");
  }
  t.llvm_features += t.llvm_features.empty() ? "+avx512bf16" : ",+avx512bf16";
  t.required_features.push_back("avx512bf16");
  t.bf16_products = true;
  return t;
}

std::vector<std::string> known_targets() {
  std::vector<std::string> names;
  for (const TargetSpec& t : all_targets()) names.push_back(t.name);
  return names;
}

std::string target_summary(const TargetSpec& t) {
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const std::string& x : v) s += (s.empty() ? "" : ",") + x;
    return s.empty() ? std::string("no features") : s;
  };
  if (t.backend == BackendKind::Ir3)
    return "Adreno " + t.cpu.substr(1) + " machine code (Mesa ir3 via libtinymesa.so from the PyPI wheel tinymesa, "
           "loaded when used); float16 computed in half; compile-only today: no runtime port runs it (port " + t.port +
           " is planned)";
  std::string s = t.backend == BackendKind::OpenCL ? "OpenCL C 1.2 (port opencl)" + std::string(t.image_mode ? ", tensors in images" : "")
                                                   : t.triple + ", cpu " + t.cpu + ", needs " + join(t.required_features);
  if (t.backend == BackendKind::LlvmCpu && t.port != "cpu") s += " (port " + t.port + ")";
  if (t.vector_bytes == 4) s += "; float scalar";
  if (t.half_arithmetic) s += "; float16 computed in half";
  switch (t.int8_dot) {
    case TargetSpec::Int8Dot::U8S8: s += "; int8 dot: vpdpbusd (needs " + t.int8_dot_feature + " where used)"; break;
    case TargetSpec::Int8Dot::S8S8: s += "; int8 dot: sdot (needs " + t.int8_dot_feature + " where used)"; break;
    case TargetSpec::Int8Dot::I16Pairs: s += "; int8 dot: vpmaddwd pairs"; break;
    case TargetSpec::Int8Dot::HvxU8S8: s += "; int8 dot: HVX vrmpy"; break;
    case TargetSpec::Int8Dot::None: break;
  }
  if (t.bf16_capable) s += "; --precision bf16 (needs avx512bf16)";
  return s;
}

}  // namespace edgec
