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

// set_error, dtype_size and describe_target are also what a port library (libedgert_opencl,
// ports/port.h) calls in libedgert.so: their symbols are named edgert_port_*, which its
// exports map (edgert_*) exports, and which nothing declares outside this header.

// Records a printf-style message as the thread's last error and returns `status`.
edgert_status set_error(edgert_status status, const char* format, ...) __asm__("edgert_port_set_error")
    __attribute__((format(printf, 2, 3)));

// Size of one element, 0 for a dtype value outside the enum.
size_t dtype_size(uint32_t dtype) __asm__("edgert_port_dtype_size");

// Names of the bundle.fbs enum values that messages print, spelled as flatc's EnumName*
// spells them, packed into one string per enum: flatc's EnumNames* arrays hold a pointer per
// name, and each pointer in a shared library is a relocation (33 of them, 0.8 KB of text).
// runtime_flatbuffer_verify_test holds them to EnumName*.
inline constexpr char kDTypeNames[] = "F32\0F16\0I8\0U8\0I16\0I32\0I64\0Bool\0U16\0U32\0U64\0F64\0BF16\0";
inline constexpr char kArchNames[] = "X86_64\0AArch64\0Hexagon\0OpenCL\0Adreno\0";
inline constexpr char kSectionKindNames[] = "Code\0Weights\0ReferenceIO\0";
inline constexpr char kCodeFormatNames[] = "None\0MachineCode\0OpenCLC\0OpenCLBinary\0Ir3A630\0";
inline constexpr char kArgAccessNames[] = "Read\0Write\0";
// Name `value` of `names`; "" past the last (EnumName* of a value outside the enum).
const char* enum_name(const char* names, uint32_t value);

// Checks everything in a bundle the runtime will later use without checking again
// (verify.cc). On success *out_root is the verified FlatBuffer root. `signature_checked`:
// check_signature passed, whose digest covers every byte the content hash does (and the
// header), so the content hash is not computed again; or check_fsverity_signature did,
// whose digest covers the whole file.
// The verifier's checks of one kernel of an Ir3A630 section (verify_a630.cc).
edgert_status check_a630_kernel(const edge::bundle::Kernel* k, uint32_t index, const edge::bundle::Section* s);

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
const char* describe_target(const edge::bundle::Target* target, char* buf, size_t size)
    __asm__("edgert_port_describe_target");
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
