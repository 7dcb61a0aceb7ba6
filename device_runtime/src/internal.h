// internal.h — what the runtime's source files share: the bundle and context objects
// and the error helpers. Not installed; the public contract is include/edgert.h.
#pragma once
#include <cstddef>
#include <cstdint>

#include "bundle_generated.h"
#include "edgert.h"

namespace edgert {
struct Port;
}

namespace edgert {

// Records a printf-style message as the thread's last error and returns `status`.
edgert_status set_error(edgert_status status, const char* format, ...)
    __attribute__((format(printf, 2, 3)));

// Size of one element, 0 for a dtype value outside the enum.
size_t dtype_size(uint32_t dtype);

// Checks everything in a bundle the runtime will later use without checking again
// (verify.cc). On success *out_root is the verified FlatBuffer root. `signature_checked`:
// check_signature passed, whose digest covers every byte the content hash does (and the
// header), so the content hash is not computed again; or check_fsverity_signature did,
// whose digest covers the whole file.
edgert_status verify_bundle(const uint8_t* file, size_t file_size, bool signature_checked,
                            const edge::bundle::Bundle** out_root, const uint8_t** out_data,
                            size_t* out_data_size);

// Signed mode (signature.cc): the file ends in a signature trailer by one of the
// `num_keys` 32-byte public keys at `keys`, over every byte before it. Reads nothing but the
// trailer and the digest's bytes. EDGERT_ERROR_UNSUPPORTED in a runtime built without
// EDGE_SIGNATURES.
edgert_status check_signature(const uint8_t* file, size_t file_size, const uint8_t* keys, size_t num_keys);
bool signatures_supported();

// EDGERT_OPEN_FSVERITY (signature.cc): `signature` (`signature_size` bytes, the caller's
// copy of BUNDLE.fsvsig) is a detached signature by one of the trusted keys over the
// fs-verity digest the kernel measured for the open file `fd`. The kernel then checks every
// byte read from the file, so nothing of it is hashed here. `path` is for messages.
// EDGERT_ERROR_UNSUPPORTED off Linux and without EDGE_SIGNATURES.
edgert_status check_fsverity_signature(int fd, const char* path, const uint8_t* signature, size_t signature_size,
                                       const uint8_t* keys, size_t num_keys);

// How check_fsverity_signature asks the kernel for a file's fs-verity digest
// (FS_IOC_MEASURE_VERITY): 0 with the digest's algorithm (FS_VERITY_HASH_ALG_*) and its bytes
// (at most `capacity`) in *size, else an errno value. A variable only so that the unit tests
// can stand in for a kernel with fs-verity (the build machine's has none): a test-only seam,
// not part of the C API (libedgert.so exports nothing but edgert_*).
using MeasureVerityFn = int (*)(int fd, uint16_t* algorithm, uint8_t* digest, size_t capacity, size_t* size);
extern MeasureVerityFn measure_verity;

// "AArch64 (cpu generic, features neon,dotprod)": what a bundle was compiled for, for
// messages; returns buf.
const char* describe_target(const edge::bundle::Target* target, char* buf, size_t size);
const char* arch_name(edge::bundle::Arch arch);

// Name of a buffer for messages; never null.
inline const char* buffer_name(const edge::bundle::Buffer* b) {
  return b->name() ? b->name()->c_str() : "";
}

}  // namespace edgert

// An open, verified bundle. Immutable after open, so several contexts may share it.
struct edgert_bundle {
  const uint8_t* file = nullptr;  // the whole file (private copy, mapping or caller memory)
  size_t file_size = 0;
  bool owns_mapping = false;  // munmap on close (edgert_bundle_open: a copy or a mapping)
  const edge::bundle::Bundle* root = nullptr;
  const uint8_t* data = nullptr;  // data blob: sections live here
  size_t data_size = 0;
  const edgert::Port* port = nullptr;  // the port its Target.port names (found at open)
};
