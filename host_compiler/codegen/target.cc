#include "codegen/target.h"

#include "graph/graph.h"

namespace edgec {

namespace {
std::vector<TargetSpec> all_targets() {
  return {
      // Any x86-64 with AVX2 and FMA (Haswell, Zen 1 and later): x86-64-v3.
      {"x86_64", "x86_64-unknown-linux-gnu", "x86-64-v3", "", {"avx2", "fma"}, /*X86_64*/ 0, 32, 16},
      {"x86_64-avx512", "x86_64-unknown-linux-gnu", "x86-64-v4", "", {"avx2", "fma", "avx512f"}, 0, 64, 32},
      // ARMv8.0-A with NEON (Advanced SIMD), the baseline of every Kryo core: 32 vector
      // registers of 16 bytes. The cpu stays "generic" in every aarch64 variant: a named
      // core would imply features (LSE, CRC, ...) the runtime does not check.
      {"aarch64", "aarch64-unknown-linux-gnu", "generic", "+neon", {"neon"}, /*AArch64*/ 1, 16, 32},
      // + the ARMv8.2 dot product (SDOT/UDOT: 4-way int8 multiply-accumulate), Cortex-A55/A75
      // and later (Kryo 385+): changes int8 reductions (MatMulInteger, ConvInteger, QLinear*).
      {"aarch64-dotprod", "aarch64-unknown-linux-gnu", "generic", "+neon,+dotprod", {"neon", "dotprod"}, 1, 16, 32},
      // + ARMv8.2 half-precision arithmetic (FPHP scalar, ASIMDHP vector).
      {"aarch64-fp16", "aarch64-unknown-linux-gnu", "generic", "+neon,+fullfp16", {"neon", "fp16", "fullfp16"},
       1, 16, 32},
  };
}
}  // namespace

TargetSpec target_by_name(const std::string& name) {
  for (const TargetSpec& t : all_targets())
    if (t.name == name) return t;
  std::string known;
  for (const std::string& n : known_targets()) known += (known.empty() ? "" : ", ") + n;
  throw CompileError("unknown target '" + name + "' (known: " + known + ")");
}

std::vector<std::string> known_targets() {
  std::vector<std::string> names;
  for (const TargetSpec& t : all_targets()) names.push_back(t.name);
  return names;
}

}  // namespace edgec
