// port.h — what a runtime port implements: one constant table of functions per device back
// end (ports/cpu, ports/opencl, ...). device_runtime/ never names a port: it finds the one a
// bundle's Target.port asks for among those compiled in (CMake option EDGE_PORTS, registry
// generated at configure time) and calls it through this table. Every function returns an
// edgert_status with edgert::set_error's message on failure; none throws.
//
// Lifecycle, as the context drives it:
//   open:    check_target(bundle)                     the machine can run it (names both sides)
//   create:  create(bundle, options) -> PortContext   everything allocated here: executables
//                                                     from the code sections, device memory
//                                                     for arena and weights, the queue recorded
//                                                     as native work
//   bind:    bind(ctx, input?, index, data, size)     size/alignment already checked
//   run:     run(ctx, command_ns)                     replays the queue; no allocation
//   destroy: destroy(ctx)
//
// A port is compiled into libedgert (cpu, hexagon) or is a library of its own (opencl:
// libedgert_opencl, EDGE_LIBRARY_PORTS in device_runtime/CMakeLists.txt) that registers its
// table with edgert_port_register when it is loaded, from a constructor in the object that
// defines edgert_<port>_register (which the CMake target makes the linker keep). Such a
// library calls the core's set_error, describe_target and dtype_size (internal.h), exported
// by libedgert.so as edgert_port_*.
#pragma once
#include <cstddef>
#include <cstdint>

#include "bundle_header.h"
#include "edgert.h"

struct edgert_bundle;
namespace edge::bundle {
struct Bundle;
struct Target;
}

namespace edgert {

struct PortContext;  // each port defines its own

// What edgert-prepare stores for one OpenCLC section: a program binary built on the device.
struct PreparedProgram {
  uint32_t source_section = 0;
  const uint8_t* binary = nullptr;
  size_t size = 0;
};

// Filled by a port's prepare(); the port owns the memory until release_prepared().
struct PreparedPrograms {
  const char* platform = "";
  const char* device = "";
  const char* driver = "";
  const PreparedProgram* programs = nullptr;
  uint32_t count = 0;
  void* port_data = nullptr;
};

struct Port {
  const char* name;  // as Target.port spells it
  edgert_status (*check_target)(const edge::bundle::Bundle* bundle);
  edgert_status (*create)(const edgert_bundle* bundle, const edgert_context_options* options,
                          PortContext** out);
  void (*destroy)(PortContext* ctx);
  edgert_status (*bind)(PortContext* ctx, bool input, uint32_t index, void* data, size_t size);
  // command_ns: null, or one slot per command for the time each took in this run.
  edgert_status (*run)(PortContext* ctx, uint64_t* command_ns);
  // Times recorded by the Timestamp commands of the last run (nanoseconds, port's clock).
  void (*timestamps)(const PortContext* ctx, const uint64_t** ns, int32_t* count);
  void (*stats)(const PortContext* ctx, edgert_context_stats* out);
  // Optional (null: nothing to prepare): builds the bundle's programs for this device.
  edgert_status (*prepare)(const edgert_bundle* bundle, const edgert_context_options* options,
                           PreparedPrograms* out);
  void (*release_prepared)(PreparedPrograms* prepared);
};

// What a port library and the core it registers with must agree on: the Port table, the
// edgert_bundle object (internal.h), the helpers above and the bundle format. Bump the
// revision when any of the first three changes.
inline constexpr uint32_t kPortAbi = 1u << 16 | edge::bundle::kFormatVersion;

// The port named `name` among those compiled in or registered, or null (port_registry.cc,
// generated).
const Port* find_port(const char* name);
// "cpu, opencl": the ports compiled in, then those registered, for messages.
const char* compiled_port_names();
// The refusal of a bundle whose Target.port is none of those: names the library to link
// when the port is a library of its own.
edgert_status missing_port(const edge::bundle::Target* target);

}  // namespace edgert

extern "C" {
// Called by a port library as it loads (before main when linked): makes `port` findable.
// Returns 1, or 0 when `abi` is not this core's kPortAbi (a library built from another
// source: then the port stays missing, and the refusal of its bundles says why) or every
// slot is taken.
int32_t edgert_port_register(const char* name, uint32_t abi, const edgert::Port* port);
}

namespace edgert {

}  // namespace edgert
