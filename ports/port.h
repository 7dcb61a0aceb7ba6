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
#pragma once
#include <cstddef>
#include <cstdint>

#include "edgert.h"

struct edgert_bundle;
namespace edge::bundle {
struct Bundle;
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

// The port named `name` among those compiled in, or null (port_registry.cc, generated).
const Port* find_port(const char* name);
// "cpu, opencl": the ports compiled in, for messages.
const char* compiled_port_names();

}  // namespace edgert
