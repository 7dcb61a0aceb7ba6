// cl_api.cc — loading libOpenCL with dlopen/dlsym, and OpenCL error names.
#include "cl_api.h"

#include <dlfcn.h>
#include <pthread.h>

#include <cstdio>

#include "internal.h"

namespace edgert::opencl {
namespace {

Api g_api;
bool g_loaded = false;
char g_load_error[400] = "";
pthread_once_t g_once = PTHREAD_ONCE_INIT;

void load_once() {
  // RTLD_NODELETE: nothing ever unloads the driver under its own threads.
  const int flags = RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE;
  void* lib = dlopen("libOpenCL.so.1", flags);
  if (!lib) lib = dlopen("libOpenCL.so", flags);
  if (!lib) {
    const char* why = dlerror();
    std::snprintf(g_load_error, sizeof(g_load_error),
                  "no OpenCL device: cannot load the OpenCL library libOpenCL.so.1 or libOpenCL.so (%s); "
                  "install an OpenCL ICD loader and a driver",
                  why ? why : "not found");
    return;
  }
  // dlsym returns void*; the table holds typed pointers (POSIX guarantees the conversion).
#define EDGE_CL_LOAD(name)                                                                      \
  g_api.name = reinterpret_cast<decltype(g_api.name)>(dlsym(lib, #name));                       \
  if (!g_api.name) {                                                                            \
    std::snprintf(g_load_error, sizeof(g_load_error),                                           \
                  "no OpenCL device: the OpenCL library has no " #name " (OpenCL 1.2 needed)"); \
    return;                                                                                     \
  }
  EDGE_CL_FUNCTIONS(EDGE_CL_LOAD)
#undef EDGE_CL_LOAD
  g_loaded = true;
}

}  // namespace

edgert_status load_api(const Api** out) {
  *out = nullptr;
  pthread_once(&g_once, load_once);
  if (!g_loaded) return set_error(EDGERT_ERROR_UNSUPPORTED, "%s", g_load_error);
  *out = &g_api;
  return EDGERT_OK;
}

const char* cl_error_name(cl_int err) {
  switch (err) {
#define EDGE_CL_ERROR(code) \
  case code: return #code;
    EDGE_CL_ERROR(CL_SUCCESS)
    EDGE_CL_ERROR(CL_DEVICE_NOT_FOUND)
    EDGE_CL_ERROR(CL_DEVICE_NOT_AVAILABLE)
    EDGE_CL_ERROR(CL_COMPILER_NOT_AVAILABLE)
    EDGE_CL_ERROR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    EDGE_CL_ERROR(CL_OUT_OF_RESOURCES)
    EDGE_CL_ERROR(CL_OUT_OF_HOST_MEMORY)
    EDGE_CL_ERROR(CL_PROFILING_INFO_NOT_AVAILABLE)
    EDGE_CL_ERROR(CL_MEM_COPY_OVERLAP)
    EDGE_CL_ERROR(CL_IMAGE_FORMAT_MISMATCH)
    EDGE_CL_ERROR(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    EDGE_CL_ERROR(CL_BUILD_PROGRAM_FAILURE)
    EDGE_CL_ERROR(CL_MAP_FAILURE)
    EDGE_CL_ERROR(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    EDGE_CL_ERROR(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    EDGE_CL_ERROR(CL_COMPILE_PROGRAM_FAILURE)
    EDGE_CL_ERROR(CL_LINKER_NOT_AVAILABLE)
    EDGE_CL_ERROR(CL_LINK_PROGRAM_FAILURE)
    EDGE_CL_ERROR(CL_DEVICE_PARTITION_FAILED)
    EDGE_CL_ERROR(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    EDGE_CL_ERROR(CL_INVALID_VALUE)
    EDGE_CL_ERROR(CL_INVALID_DEVICE_TYPE)
    EDGE_CL_ERROR(CL_INVALID_PLATFORM)
    EDGE_CL_ERROR(CL_INVALID_DEVICE)
    EDGE_CL_ERROR(CL_INVALID_CONTEXT)
    EDGE_CL_ERROR(CL_INVALID_QUEUE_PROPERTIES)
    EDGE_CL_ERROR(CL_INVALID_COMMAND_QUEUE)
    EDGE_CL_ERROR(CL_INVALID_HOST_PTR)
    EDGE_CL_ERROR(CL_INVALID_MEM_OBJECT)
    EDGE_CL_ERROR(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    EDGE_CL_ERROR(CL_INVALID_IMAGE_SIZE)
    EDGE_CL_ERROR(CL_INVALID_SAMPLER)
    EDGE_CL_ERROR(CL_INVALID_BINARY)
    EDGE_CL_ERROR(CL_INVALID_BUILD_OPTIONS)
    EDGE_CL_ERROR(CL_INVALID_PROGRAM)
    EDGE_CL_ERROR(CL_INVALID_PROGRAM_EXECUTABLE)
    EDGE_CL_ERROR(CL_INVALID_KERNEL_NAME)
    EDGE_CL_ERROR(CL_INVALID_KERNEL_DEFINITION)
    EDGE_CL_ERROR(CL_INVALID_KERNEL)
    EDGE_CL_ERROR(CL_INVALID_ARG_INDEX)
    EDGE_CL_ERROR(CL_INVALID_ARG_VALUE)
    EDGE_CL_ERROR(CL_INVALID_ARG_SIZE)
    EDGE_CL_ERROR(CL_INVALID_KERNEL_ARGS)
    EDGE_CL_ERROR(CL_INVALID_WORK_DIMENSION)
    EDGE_CL_ERROR(CL_INVALID_WORK_GROUP_SIZE)
    EDGE_CL_ERROR(CL_INVALID_WORK_ITEM_SIZE)
    EDGE_CL_ERROR(CL_INVALID_GLOBAL_OFFSET)
    EDGE_CL_ERROR(CL_INVALID_EVENT_WAIT_LIST)
    EDGE_CL_ERROR(CL_INVALID_EVENT)
    EDGE_CL_ERROR(CL_INVALID_OPERATION)
    EDGE_CL_ERROR(CL_INVALID_GL_OBJECT)
    EDGE_CL_ERROR(CL_INVALID_BUFFER_SIZE)
    EDGE_CL_ERROR(CL_INVALID_MIP_LEVEL)
    EDGE_CL_ERROR(CL_INVALID_GLOBAL_WORK_SIZE)
    EDGE_CL_ERROR(CL_INVALID_PROPERTY)
    EDGE_CL_ERROR(CL_INVALID_IMAGE_DESCRIPTOR)
    EDGE_CL_ERROR(CL_INVALID_COMPILER_OPTIONS)
    EDGE_CL_ERROR(CL_INVALID_LINKER_OPTIONS)
    EDGE_CL_ERROR(CL_INVALID_DEVICE_PARTITION_COUNT)
    EDGE_CL_ERROR(CL_PLATFORM_NOT_FOUND_KHR)
#undef EDGE_CL_ERROR
    default: return "CL_<unknown error>";
  }
}

edgert_status status_for(cl_int err) {
  switch (err) {
    case CL_OUT_OF_HOST_MEMORY:
    case CL_OUT_OF_RESOURCES:
    case CL_MEM_OBJECT_ALLOCATION_FAILURE: return EDGERT_ERROR_OUT_OF_MEMORY;
    default: return EDGERT_ERROR_UNSUPPORTED;
  }
}

}  // namespace edgert::opencl
