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
      // No "aarch64-dotprod" yet: SDOT/UDOT need int8 reductions vectorized along the reduce
      // axis, and the code generator vectorizes output dims only, so +dotprod emits the very
      // same code (checked on int8 Cast/Mul/ReduceSum and MatMul models) while refusing
      // ARMv8.0 cores. Add it here once it changes code; the runtime already checks "dotprod".
      //
      // + ARMv8.2 half-precision arithmetic (FPHP scalar, ASIMDHP vector): float16 min/max,
      // IsNaN/IsInf and comparisons compute in half precision instead of converting to float.
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
