// status.cc — per-thread last error message, status and dtype names.
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "internal.h"

namespace edgert {
namespace {
// A fixed buffer per thread: setting an error never allocates, so it is safe on the
// edgert_run path, and threads using different contexts do not race on messages.
// A runtime built with no threads (EDGE_FREESTANDING: the Hexagon build, whose freestanding
// process has no thread pointer set up) keeps one buffer.
#ifdef EDGERT_SINGLE_THREADED
char g_last_error[512] = "";
#else
thread_local char g_last_error[512] = "";
#endif
}  // namespace

edgert_status set_error(edgert_status status, const char* format, ...) {
  va_list args;
  va_start(args, format);
  std::vsnprintf(g_last_error, sizeof(g_last_error), format, args);
  va_end(args);
  return status;
}

const char* enum_name(const char* names, uint32_t value) {
  for (; value > 0 && *names; --value) names += std::strlen(names) + 1;
  return names;
}

size_t dtype_size(uint32_t dtype) {
  switch (dtype) {
    case EDGERT_BOOL:
    case EDGERT_I8:
    case EDGERT_U8: return 1;
    case EDGERT_F16:
    case EDGERT_BF16:
    case EDGERT_I16:
    case EDGERT_U16: return 2;
    case EDGERT_F32:
    case EDGERT_I32:
    case EDGERT_U32: return 4;
    case EDGERT_I64:
    case EDGERT_U64:
    case EDGERT_F64: return 8;
    default: return 0;
  }
}

}  // namespace edgert

extern "C" {

const char* edgert_last_error(void) { return edgert::g_last_error; }

const char* edgert_status_name(edgert_status status) {
  switch (status) {
    case EDGERT_OK: return "OK";
    case EDGERT_ERROR_IO: return "IO";
    case EDGERT_ERROR_INVALID_BUNDLE: return "INVALID_BUNDLE";
    case EDGERT_ERROR_UNSUPPORTED: return "UNSUPPORTED";
    case EDGERT_ERROR_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case EDGERT_ERROR_OUT_OF_MEMORY: return "OUT_OF_MEMORY";
    case EDGERT_ERROR_NOT_BOUND: return "NOT_BOUND";
  }
  return "UNKNOWN_STATUS";
}

size_t edgert_dtype_size(edgert_dtype dtype) { return edgert::dtype_size(dtype); }

const char* edgert_dtype_name(edgert_dtype dtype) {
  switch (dtype) {
    case EDGERT_F32: return "f32";
    case EDGERT_F16: return "f16";
    case EDGERT_I8: return "i8";
    case EDGERT_U8: return "u8";
    case EDGERT_I16: return "i16";
    case EDGERT_I32: return "i32";
    case EDGERT_I64: return "i64";
    case EDGERT_BOOL: return "bool";
    case EDGERT_U16: return "u16";
    case EDGERT_U32: return "u32";
    case EDGERT_U64: return "u64";
    case EDGERT_F64: return "f64";
    case EDGERT_BF16: return "bf16";
  }
  return "unknown";
}

}  // extern "C"
