/* edgert_prepare.h — the install-time step for OpenCL bundles, in its own library
 * (libedgert_prepare.a, CMake target edgert_prepare / edgert::edgert_prepare) so that the
 * replay runtime (libedgert) carries no bundle writer: it links with the static libedgert.
 * The edgert-prepare tool is this function with a command line. */
#ifndef EDGERT_PREPARE_H
#define EDGERT_PREPARE_H

#include "edgert.h"

#ifdef __cplusplus
extern "C" {
#endif

/* On the device, once (e.g. at install time): builds the bundle's OpenCL programs with this
 * device's driver and writes `out_path`, the same bundle plus the program binaries and the
 * identity of the platform, device and driver that built them. A context on it loads the
 * binaries and compiles nothing; on another device or driver it is refused (or, with
 * allow_source_build, built from source as if unprepared). A bundle for
 * a port with nothing to prepare (cpu) is an EDGERT_ERROR_INVALID_ARGUMENT. Written to a
 * temporary file and renamed: never half a file. */
edgert_status edgert_prepare(const char* bundle_path, const char* out_path,
                             const edgert_context_options* options);

#ifdef __cplusplus
}
#endif
#endif /* EDGERT_PREPARE_H */
