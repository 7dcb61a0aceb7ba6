// tool_common.h — what edgert-run and edgert-bench share: argument helpers, loading
// --input NAME=FILE.npy against a bundle's declared inputs, and tensor formatting.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "edgert.h"
#include "npy.h"

namespace edgert_tools {

// --serve (edgert-run, edgec): one command line per line of stdin, arguments separated by
// tabs. `run` gets each one's words (the tool's name first, as argv) and returns its exit
// code, which follows the line's output on stdout as "\x1e<code>\n". Returns 0 at the end of
// the input. A process per command line costs more than a small model's work (edgec loads
// LLVM, edgert-run an OpenCL driver): test harnesses send thousands through one of these.
int serve_command_lines(const char* tool, const std::function<int(std::vector<std::string>& words)>& run);

// The options edgert-run and edgert-bench share.
struct CommonOptions {
  std::string bundle;
  std::vector<std::string> inputs;  // NAME=FILE.npy
  long threads = 1;
  long device = 0;                // --device N: OpenCL device index
  bool require_prepared = false;  // --require-prepared: no OpenCL builds from source
  std::vector<uint8_t> trusted_keys;  // --trusted-key FILE.pub, 32 bytes each: signed mode
  bool map_in_place = false;          // --map-in-place: EDGERT_OPEN_MAP_IN_PLACE
  bool fsverity = false;              // --fsverity-signature FILE: EDGERT_OPEN_FSVERITY
  std::vector<uint8_t> fsverity_signature;  // that file's bytes
};

// The usage lines of the options parse_common_option handles for opening a bundle.
#define EDGERT_TOOLS_OPEN_USAGE                                                                  \
  "  --trusted-key FILE.pub  signed mode: refuse the bundle unless it is signed (edgec sign) by\n" \
  "                         this key (repeat for several keys)\n"                                 \
  "  --map-in-place         use the file's pages instead of a private copy (faster open; only\n" \
  "                         for files nothing can change while open, e.g. a read-only or\n"     \
  "                         dm-verity partition)\n"                                              \
  "  --fsverity-signature FILE  with --trusted-key, on Linux: the bundle file has fs-verity\n"    \
  "                         (sha256, 4096-byte blocks) and FILE (edgec sign --fsverity's\n"       \
  "                         BUNDLE.fsvsig) signs the digest the kernel measured for it; that\n"   \
  "                         stands in for hashing the file (with --map-in-place the open is\n"   \
  "                         O(1)); a file without fs-verity is refused\n"

// Reads a key file written by `edgec keygen`: `size` bytes as hex digits, then optional
// whitespace. False with *error naming the file on anything else.
bool read_hex_key_file(const std::string& path, size_t size, std::vector<uint8_t>* out, std::string* error);

// The open options the shared flags ask for; points into `o`.
edgert_open_options open_options(const CommonOptions& o);

// Parses argv[*i] as a shared option (--help, --input, --threads, --device,
// --require-prepared, --trusted-key, --map-in-place, --fsverity-signature) or the bundle path;
// *i advances past an option's value. Call it after the tool's own options: anything
// else starting with '-' is an unknown option. Returns -1 to go on, else the exit code.
int parse_common_option(const char* tool, const char* usage, int argc, char** argv, int* i, CommonOptions* o);

// The context options the shared flags ask for. The tools allow building OpenCL programs
// from source unless --require-prepared (then an unprepared bundle is refused).
edgert_context_options context_options(const CommonOptions& o);

// One line on stderr when the context built OpenCL programs from source (a bundle that
// edgert-prepare did not prepare for this device): that cost is paid at every start.
void note_source_builds(const edgert_context* context);

// A bundle and a context, released in the right order when the tool returns.
struct Session {
  edgert_bundle* bundle = nullptr;
  edgert_context* context = nullptr;
  Session() = default;
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session() {
    edgert_context_destroy(context);
    edgert_bundle_close(bundle);
  }
};

// Opens o.bundle into session->bundle (with open_options(o)) and loads the --input specs;
// on failure returns false with *error set ("cannot open bundle ...", or load_input's message).
bool open_with_inputs(const CommonOptions& o, Session* session, std::vector<NpyArray>* inputs,
                      std::vector<bool>* given, std::string* error);

// Prints "<tool>: <message>" to stderr and returns 1 (the tools' exit code on error).
int fail(const char* tool, const std::string& message);

// "STATUS: last error" for a failed edgert call.
std::string status_text(edgert_status status);

// Parses a non-negative integer option value (decimal digits only); false if it is not one.
bool parse_count(const char* text, long* out);

// Bounds of the numeric options.
constexpr long kMaxThreads = 1024;    // --threads: far more than any device has cores
constexpr long kMaxRuns = 10000000;   // --repeat, --iters, --warmup

// Parses the value of numeric option `flag` strictly: the whole text a decimal integer in
// [min, max] (no sign, spaces, suffix or wrap-around). Else false, *error naming both.
bool parse_int_option(const char* flag, const char* text, long min, long max, long* out, std::string* error);

// Loads NAME=FILE.npy into (*inputs)[index of NAME], checking the name, dtype and shape
// against the bundle. *inputs has one entry per bundle input; an entry is empty until set.
bool load_input(const edgert_bundle* bundle, const std::string& spec, std::vector<NpyArray>* inputs,
                std::vector<bool>* given, std::string* error);

// "f32 (1, 3, 224, 224)".
std::string tensor_type(edgert_dtype dtype, const int64_t* shape, size_t rank);

// Comma-separated names of the bundle's inputs, for "unknown input" messages.
std::string input_names(const edgert_bundle* bundle);

// Value `i` of a tensor as text (f16 converted to float).
std::string element_text(edgert_dtype dtype, const void* data, size_t i);

// Value `i` of a tensor as a double (f16 converted; 64-bit integers past 2^53 rounded).
double element_value(edgert_dtype dtype, const void* data, size_t i);

}  // namespace edgert_tools
