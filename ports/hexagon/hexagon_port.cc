// hexagon_port.cc — the machine side of the hexagon port: its arch and the features its code
// may require. The rest is the cpu port's: the replay (ports/cpu/cpu_context.cc, one thread),
// the target check (cpu_target.cc), code pages and the clock (code_pages.cc).
#include "cpu_port.h"

namespace edgert::cpu {

edge::bundle::Arch host_arch() { return edge::bundle::Arch::Hexagon; }

namespace {

#if !defined(__HEXAGON_ARCH__)
#error "the hexagon port is built for Hexagon (toolchains/hexagon.cmake)"
#endif

// What the code may require, as LLVM names the features: the architecture version this
// runtime was built for (a v66 runtime runs v65 code) and HVX with 128-byte vectors, which
// every v65 / v66 compute DSP has (the cDSP of the Snapdragon 845 / 855).
const Feature kFeatures[] = {
    {"v65", __HEXAGON_ARCH__ >= 65},       {"v66", __HEXAGON_ARCH__ >= 66},
    {"hvxv65", __HEXAGON_ARCH__ >= 65},    {"hvxv66", __HEXAGON_ARCH__ >= 66},
    {"hvx-length128b", true},
};

}  // namespace

size_t feature_table(Feature* out, size_t cap) {
  size_t n = 0;
  for (const Feature& f : kFeatures)
    if (n < cap) out[n++] = f;
  return n;
}

}  // namespace edgert::cpu
