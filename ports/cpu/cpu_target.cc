// cpu_target.cc — whether this machine runs a bundle's machine code: its arch and every
// feature it lists, from each port's host_arch / feature_table (cpu_port.cc for x86-64 and
// aarch64, ports/hexagon/hexagon_port.cc for the DSP).
#include "cpu_port.h"

#include "internal.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace edgert::cpu {

namespace {
// Large enough for every port's table.
constexpr size_t kMaxFeatures = 64;
}  // namespace

bool has_feature(const char* name, bool* known) {
  if (name[0] == '+') ++name;
  Feature table[kMaxFeatures];
  const size_t count = feature_table(table, kMaxFeatures);
  for (size_t i = 0; i < count; ++i) {
    if (std::strcmp(table[i].name, name) == 0) {
      *known = true;
      return table[i].present;
    }
  }
  *known = false;
  return false;
}

const char* describe_features(char* buf, size_t size) {
  if (size == 0) return buf;
  buf[0] = '\0';
  Feature table[kMaxFeatures];
  const size_t count = feature_table(table, kMaxFeatures);
  size_t used = 0;
  for (size_t i = 0; i < count; ++i) {
    if (!table[i].present) continue;
    const int n = std::snprintf(buf + used, size - used, "%s%s", used ? "," : "", table[i].name);
    if (n < 0 || static_cast<size_t>(n) >= size - used) {  // truncated: end with "..."
      if (size >= 4) std::memcpy(buf + size - 4, "...", 4);
      break;
    }
    used += static_cast<size_t>(n);
  }
  return buf;
}

edgert_status check_target(const edge::bundle::Bundle* b) {
  using edge::bundle::Arch;
  const edge::bundle::Target* t = b->target();
  auto str = [](const flatbuffers::String* s) { return s ? s->c_str() : ""; };
  char target[384];
  char machine[256];
  if (t->arch() != host_arch())
    return set_error(EDGERT_ERROR_UNSUPPORTED,
                     "bundle targets %s [arch %u], but this machine is %s: compile it for this machine",
                     describe_target(t, target, sizeof(target)), static_cast<unsigned>(t->arch()),
                     arch_name(host_arch()));
  const uint32_t num_sections = b->sections() ? b->sections()->size() : 0;
  for (uint32_t i = 0; i < num_sections; ++i) {
    const edge::bundle::Section* s = b->sections()->Get(i);
    if (s->kind() == edge::bundle::SectionKind::Code && s->format() == edge::bundle::CodeFormat::Ir3A630)
      return set_error(EDGERT_ERROR_UNSUPPORTED,
                       "section %u holds Adreno a630 machine code (Ir3A630, edgec --target adreno630), which needs "
                       "the kgsl port (not written yet), not the cpu port",
                       i);
    if (s->kind() == edge::bundle::SectionKind::Code && s->format() != edge::bundle::CodeFormat::MachineCode)
      return set_error(EDGERT_ERROR_INVALID_BUNDLE, "section %u: the cpu port runs MachineCode, not format %u",
                       i, static_cast<unsigned>(s->format()));
  }
  // Every feature the machine lacks, named at once (a bundle for a newer core usually needs
  // several: avx512f, avx512bw, ..., avx512bf16).
  char missing[256] = "";
  size_t used = 0;
  const uint32_t num_features = t->features() ? t->features()->size() : 0;
  for (uint32_t i = 0; i < num_features; ++i) {
    const char* name = str(t->features()->Get(i));
    bool known = false;
    bool present = has_feature(name, &known);
    if (!known)
      return set_error(EDGERT_ERROR_UNSUPPORTED,
                       "bundle targets %s; CPU feature \"%s\" is unknown to this runtime; refusing to guess",
                       describe_target(t, target, sizeof(target)), name);
    if (!present && used + 1 < sizeof(missing)) {
      const int n = std::snprintf(missing + used, sizeof(missing) - used, "%s%s", used ? "," : "", name);
      used = n > 0 ? std::min(used + static_cast<size_t>(n), sizeof(missing) - 1) : used;
    }
  }
  if (used)
    return set_error(EDGERT_ERROR_UNSUPPORTED,
                     "bundle targets %s and needs CPU features \"%s\", which this machine lacks (%s, features %s)",
                     describe_target(t, target, sizeof(target)), missing, arch_name(host_arch()),
                     describe_features(machine, sizeof(machine)));
  return EDGERT_OK;
}

}  // namespace edgert::cpu
