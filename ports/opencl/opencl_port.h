// opencl_port.h — the OpenCL back end of the runtime: device selection, program builds
// (shared by a context and by edgert_prepare), and the context functions of the port table.
#pragma once
#include <cstddef>
#include <cstdint>

#include "cl_api.h"
#include "edgert.h"
#include "port.h"

namespace edgert::opencl {

// The device a context or a prepare runs on, and the identity a prepared bundle records.
struct Device {
  const Api* cl = nullptr;
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  char platform_id[512] = "";  // CL_PLATFORM_NAME + " " + CL_PLATFORM_VERSION
  char name[256] = "";         // CL_DEVICE_NAME
  char driver[256] = "";       // CL_DRIVER_VERSION
};

// Enumerates every device of every platform in platform order (EDGERT_OPENCL_PLATFORM=text
// keeps only platforms whose name contains it, ignoring case) and picks
// options->device_index, or EDGERT_OPENCL_DEVICE=N when set. No library, platform or device:
// EDGERT_ERROR_UNSUPPORTED with a message starting "no OpenCL device".
edgert_status select_device(const edgert_context_options* options, Device* out);

// Whether the device lists the extension in CL_DEVICE_EXTENSIONS.
bool has_extension(const Device& device, const char* name);

// Every Target.features entry of the bundle is an extension the device lists.
edgert_status check_extensions(const edgert_bundle* bundle, const Device& device);

// A context with that one device; *out is null on failure.
edgert_status create_cl_context(const Device& device, cl_context* out);

// Compiles OpenCLC section `section` with the driver (the build log goes into the error).
edgert_status build_from_source(const Device& device, cl_context context, const edgert_bundle* bundle,
                                uint32_t section, cl_program* out);

// Loads a program binary built by edgert_prepare for OpenCLC section `source_section`.
edgert_status load_binary(const Device& device, cl_context context, const uint8_t* binary, size_t size,
                          uint32_t source_section, cl_program* out);

// The context half of the port table (opencl_context.cc).
edgert_status create(const edgert_bundle* bundle, const edgert_context_options* options, PortContext** out);
void destroy(PortContext* ctx);
edgert_status bind(PortContext* ctx, bool input, uint32_t index, void* data, size_t size);
edgert_status run(PortContext* ctx, uint64_t* command_ns);
void timestamps(const PortContext* ctx, const uint64_t** ns, int32_t* count);
void stats(const PortContext* ctx, edgert_context_stats* out);

}  // namespace edgert::opencl
