// cl_api.h — the OpenCL entry points the opencl port calls, as a table of function pointers
// filled with dlsym from libOpenCL.so.1 (the ICD loader). The runtime has no link-time
// dependency on OpenCL: a device without it still runs cpu bundles, and an opencl bundle
// there fails with a clear message at context creation. The Khronos headers provide only
// the types and constants.
#pragma once
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <CL/cl_ext.h>

#include "edgert.h"

namespace edgert::opencl {

// Every function the port uses: X(name).
#define EDGE_CL_FUNCTIONS(X)    \
  X(clGetPlatformIDs)           \
  X(clGetPlatformInfo)          \
  X(clGetDeviceIDs)             \
  X(clGetDeviceInfo)            \
  X(clCreateContext)            \
  X(clReleaseContext)           \
  X(clCreateCommandQueue)       \
  X(clReleaseCommandQueue)      \
  X(clCreateBuffer)             \
  X(clCreateSubBuffer)          \
  X(clCreateImage)              \
  X(clReleaseMemObject)         \
  X(clCreateProgramWithSource)  \
  X(clCreateProgramWithBinary)  \
  X(clBuildProgram)             \
  X(clGetProgramInfo)           \
  X(clGetProgramBuildInfo)      \
  X(clReleaseProgram)           \
  X(clCreateKernel)             \
  X(clGetKernelInfo)            \
  X(clSetKernelArg)             \
  X(clReleaseKernel)            \
  X(clEnqueueWriteBuffer)       \
  X(clEnqueueReadBuffer)        \
  X(clEnqueueCopyBuffer)        \
  X(clEnqueueCopyImage)         \
  X(clEnqueueCopyBufferToImage) \
  X(clEnqueueCopyImageToBuffer) \
  X(clEnqueueFillBuffer)        \
  X(clEnqueueFillImage)         \
  X(clEnqueueNDRangeKernel)     \
  X(clFinish)                   \
  X(clGetEventProfilingInfo)    \
  X(clReleaseEvent)

struct Api {
#define EDGE_CL_MEMBER(name) decltype(&::name) name;
  EDGE_CL_FUNCTIONS(EDGE_CL_MEMBER)
#undef EDGE_CL_MEMBER
};

// The table, loaded once per process (the library stays loaded: drivers keep threads and
// exit handlers). On failure: EDGERT_ERROR_UNSUPPORTED with a message that starts with
// "no OpenCL device" and says which library or symbol is missing.
edgert_status load_api(const Api** out);

// "CL_OUT_OF_RESOURCES" for -5; "CL_<unknown error>" for a code it does not know.
// Messages print it with the number: "%s (%d)".
const char* cl_error_name(cl_int err);

// The runtime status for a failed OpenCL call: OUT_OF_MEMORY for allocation failures,
// UNSUPPORTED for everything else (the device or driver cannot do what the bundle asks).
edgert_status status_for(cl_int err);

}  // namespace edgert::opencl
