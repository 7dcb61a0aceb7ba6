/* edgert.h — the device runtime's C API.
 *
 * Lifecycle:  edgert_bundle_open  -> edgert_context_create -> (bind inputs/outputs,
 * edgert_run)* -> edgert_context_destroy -> edgert_bundle_close.
 * A bundle is immutable and may back several contexts; a context owns one arena and
 * must be used by one thread at a time. edgert_run performs no heap allocation.
 * Every function returns a status; on failure edgert_last_error() says why (the
 * message is per thread and valid until the next failing call on that thread). */
#ifndef EDGERT_H
#define EDGERT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum edgert_status {
  EDGERT_OK = 0,
  EDGERT_ERROR_IO = 1,             /* file cannot be opened / mapped */
  EDGERT_ERROR_INVALID_BUNDLE = 2, /* malformed, truncated or corrupted bundle */
  EDGERT_ERROR_UNSUPPORTED = 3,    /* bundle needs a target/feature/version we lack */
  EDGERT_ERROR_INVALID_ARGUMENT = 4,
  EDGERT_ERROR_OUT_OF_MEMORY = 5,
  EDGERT_ERROR_NOT_BOUND = 6       /* edgert_run before every input/output was bound */
} edgert_status;

typedef enum edgert_dtype {
  EDGERT_F32 = 0, EDGERT_F16 = 1, EDGERT_I8 = 2, EDGERT_U8 = 3, EDGERT_I16 = 4,
  EDGERT_I32 = 5, EDGERT_I64 = 6, EDGERT_BOOL = 7, EDGERT_U16 = 8, EDGERT_U32 = 9,
  EDGERT_U64 = 10, EDGERT_F64 = 11, EDGERT_BF16 = 12
} edgert_dtype;

#define EDGERT_MAX_RANK 8

typedef struct edgert_tensor_info {
  const char* name;      /* owned by the bundle */
  edgert_dtype dtype;
  int32_t rank;
  int64_t shape[EDGERT_MAX_RANK];
  size_t size_bytes;
} edgert_tensor_info;

typedef struct edgert_bundle edgert_bundle;
typedef struct edgert_context edgert_context;

typedef struct edgert_context_options {
  int32_t num_threads;   /* cpu port: 0 or 1: run on the calling thread; hexagon port: at most 4 */
  /* opencl port: whether edgert_context_create may compile the bundle's OpenCL C with the
   * device's driver when the bundle holds no program binaries for this device (a bundle
   * from edgert_prepare does). 0: refuse with EDGERT_ERROR_UNSUPPORTED. Counted in
   * edgert_context_stats.programs_built. */
  int32_t allow_source_build;
  /* opencl port: index of the device among all OpenCL GPU/CPU/accelerator devices of all
   * platforms, in platform order (0: the first; EDGERT_OPENCL_DEVICE in the environment
   * overrides it). */
  int32_t device_index;
} edgert_context_options;

const char* edgert_last_error(void);
const char* edgert_status_name(edgert_status status);
size_t edgert_dtype_size(edgert_dtype dtype);
const char* edgert_dtype_name(edgert_dtype dtype);

/* How a bundle is opened (edgert_bundle_open_with_options). Zero-initialized: the defaults. */
#define EDGERT_ED25519_PUBLIC_KEY_SIZE 32
/* flags: use the file's pages in place instead of a private copy. Only for files nothing can
 * change while they are open (a read-only or dm-verity partition, an fs-verity file): a
 * write to the file reaches the running bundle unverified, and truncating or replacing it in
 * place (`cp` over it) kills the process with SIGBUS. */
#define EDGERT_OPEN_MAP_IN_PLACE 1u
/* flags, signed mode, Linux (Android included) only: let the kernel's fs-verity stand in for
 * hashing the file. The file must have fs-verity enabled (fsverity enable --hash-alg=sha256
 * --block-size=4096, no salt); the runtime asks the kernel for its measured digest
 * (FS_IOC_MEASURE_VERITY, O(1)) and checks fsverity_signature, a detached signature of that
 * digest by a trusted key (edgec sign --fsverity writes it to BUNDLE.fsvsig), instead of the
 * bundle's own signature trailer. The kernel then checks every page read from the file
 * against the digest, and the file cannot be written, so with EDGERT_OPEN_MAP_IN_PLACE the
 * open reads nothing but what the verifier needs. A file without fs-verity, a signature by
 * another key or over another digest is refused (EDGERT_ERROR_INVALID_BUNDLE; never a silent
 * fallback to trusting the file); so is the flag without trusted keys or signature, or with
 * edgert_bundle_open_memory_with_options (EDGERT_ERROR_INVALID_ARGUMENT). Elsewhere, and
 * without EDGE_SIGNATURES: EDGERT_ERROR_UNSUPPORTED. */
#define EDGERT_OPEN_FSVERITY 2u
typedef struct edgert_open_options {
  uint32_t flags; /* EDGERT_OPEN_*; other bits are refused (EDGERT_ERROR_INVALID_ARGUMENT) */
  /* Signed mode when num_trusted_keys > 0: the bundle must carry an Ed25519 signature
   * (edgec sign) by one of these keys, checked before anything else of it is read; unsigned,
   * differently signed or changed bundles are refused with EDGERT_ERROR_INVALID_BUNDLE. A
   * runtime built without signature support (CMake EDGE_SIGNATURES=OFF) refuses signed mode
   * with EDGERT_ERROR_UNSUPPORTED. num_trusted_keys * 32 bytes; read only during the open. */
  const uint8_t* trusted_public_keys;
  size_t num_trusted_keys;
  /* EDGERT_OPEN_FSVERITY only (not read otherwise): the bytes of the detached signature
   * file (BUNDLE.fsvsig, 112 bytes), read by the caller; read only during the open. */
  const void* fsverity_signature;
  size_t fsverity_signature_size;
} edgert_open_options;

/* Reads and verifies a bundle file (header, FlatBuffer, content hash, every offset) with
 * default options: into private memory, so later changes to the file do not reach it. */
edgert_status edgert_bundle_open(const char* path, edgert_bundle** out_bundle);
/* Same, with options (null: the defaults). */
edgert_status edgert_bundle_open_with_options(const char* path, const edgert_open_options* options,
                                              edgert_bundle** out_bundle);
/* Same, over memory the caller keeps alive and unchanged until edgert_bundle_close.
 * The memory must be 64-byte aligned (page-aligned for sections aligned beyond 64). */
edgert_status edgert_bundle_open_memory(const void* data, size_t size, edgert_bundle** out_bundle);
/* Same, with options (null: the defaults; EDGERT_OPEN_MAP_IN_PLACE does not apply: caller
 * memory is always used in place). */
edgert_status edgert_bundle_open_memory_with_options(const void* data, size_t size,
                                                     const edgert_open_options* options,
                                                     edgert_bundle** out_bundle);
/* Whether this runtime was built with signature checking (EDGE_SIGNATURES): 1 or 0. */
int32_t edgert_signatures_supported(void);
void edgert_bundle_close(edgert_bundle* bundle);

int32_t edgert_bundle_input_count(const edgert_bundle* bundle);
int32_t edgert_bundle_output_count(const edgert_bundle* bundle);
edgert_status edgert_bundle_input_info(const edgert_bundle* bundle, int32_t index, edgert_tensor_info* out_info);
edgert_status edgert_bundle_output_info(const edgert_bundle* bundle, int32_t index, edgert_tensor_info* out_info);
/* Index of the input/output with this name, or -1. */
int32_t edgert_bundle_find_input(const edgert_bundle* bundle, const char* name);
int32_t edgert_bundle_find_output(const edgert_bundle* bundle, const char* name);
size_t edgert_bundle_arena_size(const edgert_bundle* bundle);

/* Reference data that `edgec compile --embed-reference` stored (edgert-run --self-test):
 * for input `index` (is_output 0) a sample value, for output `index` (is_output 1) the value
 * the model gives on those samples, each with that tensor's dtype, shape and size, in place
 * in the bundle (no copy; valid until edgert_bundle_close). *out_rtol / *out_atol: an output
 * element passes when |got - expected| <= atol + rtol * |expected|. A bundle without
 * reference data (or an index out of range): EDGERT_ERROR_INVALID_ARGUMENT. */
edgert_status edgert_bundle_reference(const edgert_bundle* bundle, int32_t is_output, int32_t index,
                                      const void** out_data, size_t* out_size);
edgert_status edgert_bundle_reference_tolerance(const edgert_bundle* bundle, double* out_rtol, double* out_atol);

/* Allocates the arena, makes the code executable, resolves the command queue. */
edgert_status edgert_context_create(const edgert_bundle* bundle, const edgert_context_options* options,
                                    edgert_context** out_context);
void edgert_context_destroy(edgert_context* context);

/* Binds caller memory (size_bytes must equal the tensor's size; 64-byte alignment is
 * best, any alignment of the element size works). The memory is used in place
 * by every later edgert_run until rebound. */
edgert_status edgert_bind_input(edgert_context* context, int32_t index, const void* data, size_t size_bytes);
edgert_status edgert_bind_output(edgert_context* context, int32_t index, void* data, size_t size_bytes);

/* Replays the command queue once. No allocation, no system calls beyond the port's. */
edgert_status edgert_run(edgert_context* context);

/* What a context's port did and holds, for reports and tests. */
typedef struct edgert_context_stats {
  const char* port;            /* "cpu", "opencl"; owned by the runtime */
  const char* device;          /* the device it runs on, e.g. "pthread-..." for PoCL */
  int32_t programs_built;      /* programs compiled from source at context creation */
  int32_t programs_loaded;     /* programs loaded from prepared binaries */
  uint64_t buffer_bytes;       /* device memory in buffers (arena, weights, bound I/O) */
  uint64_t image_bytes;        /* device memory in images */
} edgert_context_stats;
edgert_status edgert_context_get_stats(const edgert_context* context, edgert_context_stats* out_stats);

/* The bundle's target port ("cpu", "opencl") and the ports this runtime was built with. */
const char* edgert_bundle_port(const edgert_bundle* bundle);
const char* edgert_runtime_ports(void);

/* Profiling: the nanoseconds recorded by the bundle's Timestamp commands during the last
 * edgert_run, in queue order (zeros before the first run). cpu port: CLOCK_MONOTONIC when the
 * command runs; opencl port: the device's profiling clock at the end of the command before it
 * (0 when none). The array is owned by the context and valid until it is destroyed. */
edgert_status edgert_context_timestamps(const edgert_context* context, const uint64_t** out_ns,
                                        int32_t* out_count);

/* Per-command profiling, for benchmark reports. While enabled, edgert_run records how long
 * each command of the queue took (cpu port: the clock read once per command; opencl port:
 * the device's profiling events); the times of the last run are in *out_ns (one per command,
 * owned by the context). */
typedef struct edgert_command_info {
  const char* name;     /* kernel name for a launch, "copy" or "timestamp"; owned by the bundle */
  int32_t is_launch;
  uint64_t flops;       /* the compiler's estimates for a launch, else 0 */
  uint64_t bytes;
} edgert_command_info;

int32_t edgert_bundle_command_count(const edgert_bundle* bundle);
edgert_status edgert_bundle_command_info(const edgert_bundle* bundle, int32_t index, edgert_command_info* out_info);
edgert_status edgert_context_set_profiling(edgert_context* context, int32_t enable);
edgert_status edgert_context_command_times(const edgert_context* context, const uint64_t** out_ns,
                                           int32_t* out_count);

#ifdef __cplusplus
}
#endif
#endif /* EDGERT_H */
