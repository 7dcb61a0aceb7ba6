#include "codegen/target.h"

#include "graph/graph.h"

namespace edgec {

namespace {
std::vector<TargetSpec> all_targets() {
  return {
      // Any x86-64 with AVX2 and FMA (Haswell, Zen 1 and later): x86-64-v3.
      {"x86_64", "x86_64-unknown-linux-gnu", "x86-64-v3", "", {"avx2", "fma"}, /*X86_64*/ 0, 32},
      {"x86_64-avx512", "x86_64-unknown-linux-gnu", "x86-64-v4", "", {"avx2", "fma", "avx512f"}, 0, 64},
      // ARMv8.0-A with NEON, the baseline of every Kryo core.
      {"aarch64", "aarch64-unknown-linux-gnu", "generic", "+neon", {"neon"}, /*AArch64*/ 1, 16},
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
