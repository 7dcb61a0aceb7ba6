// edgert-run for targets with no C or C++ library (the Hexagon DSP: toolchains/hexagon.cmake,
// ports/hexagon/freestanding/). The host tool (edgert_run.cc, npy.cc, tool_common.cc) is
// written with std::string, std::vector, stdio and std::set, which such a target has no
// library for; this one has the same command line and writes the same files, with fixed
// buffers and the POSIX subset the freestanding layer provides (open / read / write / mkdir):
//   edgert-run BUNDLE --input NAME=FILE.npy ... --output-dir DIR [--threads N] [--repeat K]
//              [--print] [--map-in-place]
// DIR/<output name>.npy for every output ('/' becomes '_'; a name that then collides gets
// _1, _2, ... and a line on stderr). Inputs must have the bundle's dtype and shape (.npy
// format 1-3, little-endian, C order). Exit 0, or 1 with a message. What the host tool has and
// this one refuses by name: --self-test, --trusted-key, --fsverity-signature, --device,
// --require-prepared (no signatures, no OpenCL on the DSP).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "edgert.h"

namespace {

constexpr int kMaxTensors = 64;
constexpr size_t kPath = 1024;

void say(int fd, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void say(int fd, const char* fmt, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  size_t len = static_cast<size_t>(n) < sizeof buf ? static_cast<size_t>(n) : sizeof buf - 1;
  for (size_t done = 0; done < len;) {
    ssize_t w = write(fd, buf + done, len - done);
    if (w <= 0) return;
    done += static_cast<size_t>(w);
  }
}
int fail(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
int fail(const char* fmt, ...) {
  char buf[1536];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  say(2, "edgert-run: error: %s\n", buf);
  return 1;
}

const char* kUsage =
    "usage: edgert-run BUNDLE --input NAME=FILE.npy ... --output-dir DIR [options]\n"
    "\n"
    "Runs the bundle on the given inputs and writes DIR/<output name>.npy for every\n"
    "output ('/' in names becomes '_'; a name that then collides gets _1, _2, ...).\n"
    "Every input must be given, with exactly the dtype and shape the bundle declares.\n"
    "(The Hexagon build: no --self-test, signatures or OpenCL options.)\n"
    "\n"
    "options:\n"
    "  --input NAME=FILE.npy  an input (repeat for each input)\n"
    "  --output-dir DIR       where to write outputs (created if missing; optional with --print)\n"
    "  --threads N            threads a launch is split across (1-4 on this port)\n"
    "  --map-in-place         use the bundle file's pages in place instead of a private copy\n"
    "  --repeat K             run K times and check that every run gives bit-identical\n"
    "                         outputs (1 to 10000000, default 1)\n"
    "  --print                print each output's dtype, shape and first values\n"
    "  --help                 this text\n";

bool parse_int(const char* s, long lo, long hi, long* out) {
  if (!*s) return false;
  long v = 0;
  for (const char* p = s; *p; ++p) {
    if (*p < '0' || *p > '9') return false;
    v = v * 10 + (*p - '0');
    if (v > hi) return false;
  }
  if (v < lo) return false;
  *out = v;
  return true;
}

// ---- .npy ----
const char* npy_descr(edgert_dtype t) {
  switch (t) {
    case EDGERT_F32: return "<f4";
    case EDGERT_F16: return "<f2";
    case EDGERT_I8: return "|i1";
    case EDGERT_U8: return "|u1";
    case EDGERT_I16: return "<i2";
    case EDGERT_I32: return "<i4";
    case EDGERT_I64: return "<i8";
    case EDGERT_BOOL: return "|b1";
    case EDGERT_U16: return "<u2";
    case EDGERT_U32: return "<u4";
    case EDGERT_U64: return "<u8";
    case EDGERT_F64: return "<f8";
    case EDGERT_BF16: return "|V2";
  }
  return "?";
}
// '<f4' / '|u1' / 'f4' ... -> dtype; false if unknown.
bool parse_descr(const char* d, size_t n, edgert_dtype* out) {
  if (n > 0 && (d[0] == '<' || d[0] == '|' || d[0] == '=')) ++d, --n;
  struct {
    const char* s;
    edgert_dtype t;
  } const table[] = {{"f4", EDGERT_F32}, {"f2", EDGERT_F16}, {"i1", EDGERT_I8},   {"u1", EDGERT_U8},
                     {"i2", EDGERT_I16}, {"i4", EDGERT_I32}, {"i8", EDGERT_I64},  {"b1", EDGERT_BOOL},
                     {"u2", EDGERT_U16}, {"u4", EDGERT_U32}, {"u8", EDGERT_U64},  {"f8", EDGERT_F64}};
  for (const auto& e : table)
    if (n == 2 && std::memcmp(d, e.s, 2) == 0) {
      *out = e.t;
      return true;
    }
  return false;
}

struct Buffer {
  uint8_t* data = nullptr;  // 64-byte aligned
  size_t size = 0;
};
bool alloc_buffer(Buffer* b, size_t size) {
  void* p = nullptr;
  if (posix_memalign(&p, 64, size ? size : 1) != 0) return false;
  b->data = static_cast<uint8_t*>(p);
  b->size = size;
  return true;
}

// Reads the whole regular file into *out (allocated, + 1 zero byte).
bool read_file(const char* path, Buffer* out) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return fail("cannot open %s: %s", path, std::strerror(errno)) == 0;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return fail("%s is not a regular file", path) == 0;
  }
  const size_t size = static_cast<size_t>(st.st_size);
  if (!alloc_buffer(out, size + 1)) {
    close(fd);
    return fail("out of memory reading %s", path) == 0;
  }
  size_t done = 0;
  while (done < size) {
    ssize_t n = read(fd, out->data + done, size - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  close(fd);
  if (done != size) return fail("cannot read %s", path) == 0;
  out->data[size] = 0;
  out->size = size;
  return true;
}

struct NpyArray {
  edgert_dtype dtype = EDGERT_F32;
  int rank = 0;
  int64_t shape[EDGERT_MAX_RANK] = {};
  const uint8_t* data = nullptr;
  size_t size = 0;
};

// Parses the header dict {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }.
bool parse_npy(const char* path, const Buffer& file, NpyArray* out) {
  const uint8_t* b = file.data;
  if (file.size < 10 || std::memcmp(b, "\x93NUMPY", 6) != 0) return fail("%s: not a .npy file", path) == 0;
  const int major = b[6];
  size_t header_len, start;
  if (major == 1) {
    header_len = b[8] | static_cast<size_t>(b[9]) << 8;
    start = 10;
  } else if (major == 2 || major == 3) {
    if (file.size < 12) return fail("%s: truncated header", path) == 0;
    header_len = b[8] | static_cast<size_t>(b[9]) << 8 | static_cast<size_t>(b[10]) << 16 | static_cast<size_t>(b[11]) << 24;
    start = 12;
  } else {
    return fail("%s: .npy format version %d is not supported", path, major) == 0;
  }
  if (header_len > file.size - start) return fail("%s: truncated header", path) == 0;
  const char* h = reinterpret_cast<const char*>(b + start);
  const char* h_end = h + header_len;
  auto find = [&](const char* key) -> const char* {
    const size_t k = std::strlen(key);
    for (const char* p = h; p + k <= h_end; ++p)
      if (std::memcmp(p, key, k) == 0) return p + k;
    return nullptr;
  };
  auto skip = [&](const char* p) {
    while (p < h_end && (*p == ' ' || *p == ':')) ++p;
    return p;
  };
  const char* d = find("'descr'");
  const char* f = find("'fortran_order'");
  const char* s = find("'shape'");
  if (!d || !f || !s) return fail("%s: the header lacks 'descr', 'fortran_order' or 'shape'", path) == 0;
  d = skip(d);
  if (d >= h_end || *d != '\'') return fail("%s: 'descr' is not a string", path) == 0;
  const char* d_end = d + 1;
  while (d_end < h_end && *d_end != '\'') ++d_end;
  if (!parse_descr(d + 1, static_cast<size_t>(d_end - d - 1), &out->dtype))
    return fail("%s: unsupported dtype '%.*s' (f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1, little-endian)", path,
                static_cast<int>(d_end - d - 1), d + 1) == 0;
  f = skip(f);
  if (h_end - f >= 4 && std::memcmp(f, "True", 4) == 0)
    return fail("%s: Fortran-order arrays are not supported (save with np.ascontiguousarray)", path) == 0;
  s = skip(s);
  if (s >= h_end || *s != '(') return fail("%s: 'shape' is not a tuple", path) == 0;
  ++s;
  uint64_t count = 1;
  for (;;) {
    while (s < h_end && (*s == ' ' || *s == ',')) ++s;
    if (s < h_end && *s == ')') break;
    if (s >= h_end || *s < '0' || *s > '9') return fail("%s: bad 'shape'", path) == 0;
    int64_t v = 0;
    while (s < h_end && *s >= '0' && *s <= '9') {
      v = v * 10 + (*s++ - '0');
      if (v > (int64_t{1} << 40)) return fail("%s: dimension too large", path) == 0;
    }
    if (out->rank == EDGERT_MAX_RANK) return fail("%s: more than %d dimensions", path, EDGERT_MAX_RANK) == 0;
    out->shape[out->rank++] = v;
    count *= static_cast<uint64_t>(v);
    if (count > (uint64_t{1} << 40)) return fail("%s: too many elements", path) == 0;
  }
  const uint64_t bytes = count * edgert_dtype_size(out->dtype);
  const size_t data_at = start + header_len;
  if (bytes > file.size - data_at)
    return fail("%s: %llu bytes of data expected, the file has %llu", path, static_cast<unsigned long long>(bytes),
                static_cast<unsigned long long>(file.size - data_at)) == 0;
  out->data = b + data_at;
  out->size = static_cast<size_t>(bytes);
  return true;
}

bool write_all(int fd, const void* p, size_t n) {
  const uint8_t* b = static_cast<const uint8_t*>(p);
  while (n) {
    ssize_t w = write(fd, b, n);
    if (w <= 0) return false;
    b += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool write_npy(const char* path, const edgert_tensor_info& info, const void* data) {
  char header[1024];
  int n = std::snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (", npy_descr(info.dtype));
  for (int i = 0; i < info.rank; ++i)
    n += std::snprintf(header + n, sizeof header - static_cast<size_t>(n), "%s%lld", i ? ", " : "",
                       static_cast<long long>(info.shape[i]));
  n += std::snprintf(header + n, sizeof header - static_cast<size_t>(n), "%s), }", info.rank == 1 ? "," : "");
  // Spaces so the data starts at a multiple of 64, then '\n' (as NumPy writes it).
  size_t len = static_cast<size_t>(n);
  const size_t total = 10 + len + 1;
  for (size_t i = 0; i < (64 - total % 64) % 64; ++i) header[len++] = ' ';
  header[len++] = '\n';
  const uint8_t pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<uint8_t>(len & 0xff), static_cast<uint8_t>(len >> 8)};
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return fail("cannot create %s: %s", path, std::strerror(errno)) == 0;
  bool ok = write_all(fd, pre, sizeof pre) && write_all(fd, header, len) && write_all(fd, data, info.size_bytes);
  ok = close(fd) == 0 && ok;
  if (!ok) return fail("cannot write %s", path) == 0;
  return true;
}

// mkdir -p.
bool make_dirs(const char* dir) {
  char path[kPath];
  const size_t n = std::strlen(dir);
  if (n + 1 > sizeof path) return fail("--output-dir: path too long") == 0;
  std::memcpy(path, dir, n + 1);
  for (size_t i = 1; i <= n; ++i) {
    if (i != n && path[i] != '/') continue;
    const char c = path[i];
    path[i] = 0;
    if (mkdir(path, 0755) != 0 && errno != EEXIST) return fail("cannot create %s: %s", path, std::strerror(errno)) == 0;
    path[i] = c;
  }
  return true;
}

void print_output(const edgert_tensor_info& info, const uint8_t* data) {
  say(1, "%s: %s (", info.name, edgert_dtype_name(info.dtype));
  for (int i = 0; i < info.rank; ++i) say(1, "%s%lld", i ? ", " : "", static_cast<long long>(info.shape[i]));
  say(1, ")");
  const size_t n = info.size_bytes / edgert_dtype_size(info.dtype);
  for (size_t i = 0; i < n && i < 8; ++i) {
    switch (info.dtype) {
      case EDGERT_F32: {
        float v;
        std::memcpy(&v, data + 4 * i, 4);
        say(1, " %g", static_cast<double>(v));
        break;
      }
      case EDGERT_I32: {
        int32_t v;
        std::memcpy(&v, data + 4 * i, 4);
        say(1, " %d", static_cast<int>(v));
        break;
      }
      case EDGERT_I64: {
        int64_t v;
        std::memcpy(&v, data + 8 * i, 8);
        say(1, " %lld", static_cast<long long>(v));
        break;
      }
      case EDGERT_U8:
      case EDGERT_BOOL: say(1, " %u", static_cast<unsigned>(data[i])); break;
      case EDGERT_I8: say(1, " %d", static_cast<int>(static_cast<int8_t>(data[i]))); break;
      default: break;
    }
  }
  say(1, "%s\n", n > 8 ? " ..." : "");
}

}  // namespace

int main(int argc, char** argv) {
  const char* bundle_path = nullptr;
  const char* output_dir = nullptr;
  const char* input_names[kMaxTensors];
  const char* input_files[kMaxTensors];
  int num_inputs = 0;
  long threads = 1, repeat = 1;
  bool print = false, map_in_place = false;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    auto value = [&](const char* flag) -> const char* {
      if (i + 1 >= argc) return nullptr;
      (void)flag;
      return argv[++i];
    };
    if (std::strcmp(a, "--help") == 0 || std::strcmp(a, "-h") == 0) {
      say(1, "%s", kUsage);
      return 0;
    } else if (std::strcmp(a, "--input") == 0) {
      const char* v = value(a);
      if (!v) return fail("--input needs NAME=FILE.npy");
      const char* eq = std::strchr(v, '=');
      if (!eq || eq == v || !eq[1]) return fail("--input wants NAME=FILE.npy, got '%s'", v);
      if (num_inputs == kMaxTensors) return fail("more than %d --input", kMaxTensors);
      char* name = static_cast<char*>(std::malloc(static_cast<size_t>(eq - v) + 1));
      if (!name) return fail("out of memory");
      std::memcpy(name, v, static_cast<size_t>(eq - v));
      name[eq - v] = 0;
      for (int k = 0; k < num_inputs; ++k)
        if (std::strcmp(input_names[k], name) == 0) return fail("input '%s' given twice", name);
      input_names[num_inputs] = name;
      input_files[num_inputs++] = eq + 1;
    } else if (std::strcmp(a, "--output-dir") == 0) {
      if (!(output_dir = value(a))) return fail("--output-dir needs a directory");
    } else if (std::strcmp(a, "--threads") == 0) {
      const char* v = value(a);
      if (!v || !parse_int(v, 1, 1024, &threads)) return fail("--threads wants an integer 1-1024, got '%s'", v ? v : "");
    } else if (std::strcmp(a, "--repeat") == 0) {
      const char* v = value(a);
      if (!v || !parse_int(v, 1, 10000000, &repeat))
        return fail("--repeat wants an integer 1-10000000, got '%s'", v ? v : "");
    } else if (std::strcmp(a, "--print") == 0) {
      print = true;
    } else if (std::strcmp(a, "--map-in-place") == 0) {
      map_in_place = true;
    } else if (std::strcmp(a, "--self-test") == 0 || std::strcmp(a, "--trusted-key") == 0 ||
               std::strcmp(a, "--fsverity-signature") == 0 || std::strcmp(a, "--device") == 0 ||
               std::strcmp(a, "--require-prepared") == 0) {
      return fail("%s is not supported by this build of edgert-run (Hexagon: no self-test, signatures or OpenCL)", a);
    } else if (a[0] == '-' && a[1] != 0) {
      return fail("unknown option %s (see --help)", a);
    } else if (!bundle_path) {
      bundle_path = a;
    } else {
      return fail("unexpected argument '%s' (one BUNDLE; see --help)", a);
    }
  }
  if (!bundle_path) return fail("no BUNDLE given (see --help)");
  if (!output_dir && !print) return fail("no --output-dir given (see --help)");

  edgert_open_options open_options;
  std::memset(&open_options, 0, sizeof open_options);
  if (map_in_place) open_options.flags |= EDGERT_OPEN_MAP_IN_PLACE;
  edgert_bundle* bundle = nullptr;
  if (edgert_bundle_open_with_options(bundle_path, &open_options, &bundle) != EDGERT_OK)
    return fail("%s", edgert_last_error());
  const int32_t n_in = edgert_bundle_input_count(bundle), n_out = edgert_bundle_output_count(bundle);
  if (n_in > kMaxTensors || n_out > kMaxTensors) return fail("the bundle has more than %d inputs or outputs", kMaxTensors);
  for (int k = 0; k < num_inputs; ++k)
    if (edgert_bundle_find_input(bundle, input_names[k]) < 0) return fail("the bundle has no input '%s'", input_names[k]);

  edgert_context_options ctx_options;
  std::memset(&ctx_options, 0, sizeof ctx_options);
  ctx_options.num_threads = static_cast<int32_t>(threads);
  edgert_context* ctx = nullptr;
  if (edgert_context_create(bundle, &ctx_options, &ctx) != EDGERT_OK) return fail("%s", edgert_last_error());

  Buffer files[kMaxTensors];
  for (int32_t i = 0; i < n_in; ++i) {
    edgert_tensor_info info;
    edgert_bundle_input_info(bundle, i, &info);
    int k = 0;
    while (k < num_inputs && std::strcmp(input_names[k], info.name) != 0) ++k;
    if (k == num_inputs) return fail("input '%s' not given (--input %s=FILE.npy)", info.name, info.name);
    NpyArray arr;
    if (!read_file(input_files[k], &files[i]) || !parse_npy(input_files[k], files[i], &arr)) return 1;
    bool same_shape = arr.rank == info.rank;
    for (int d = 0; same_shape && d < arr.rank; ++d) same_shape = arr.shape[d] == info.shape[d];
    if (arr.dtype != info.dtype || !same_shape || arr.size != info.size_bytes)
      return fail("input '%s': %s has dtype %s and %d dims, the bundle wants %s and %d dims of its shape", info.name,
                  input_files[k], edgert_dtype_name(arr.dtype), arr.rank, edgert_dtype_name(info.dtype), info.rank);
    // Bound from an aligned copy (the data of a .npy starts at a multiple of 64 of the file).
    Buffer in;
    if (!alloc_buffer(&in, info.size_bytes)) return fail("out of memory");
    std::memcpy(in.data, arr.data, info.size_bytes);
    if (edgert_bind_input(ctx, i, in.data, info.size_bytes) != EDGERT_OK) return fail("%s", edgert_last_error());
  }
  Buffer outs[kMaxTensors], first[kMaxTensors];
  edgert_tensor_info out_info[kMaxTensors];
  for (int32_t i = 0; i < n_out; ++i) {
    edgert_bundle_output_info(bundle, i, &out_info[i]);
    if (!alloc_buffer(&outs[i], out_info[i].size_bytes)) return fail("out of memory");
    if (edgert_bind_output(ctx, i, outs[i].data, out_info[i].size_bytes) != EDGERT_OK)
      return fail("%s", edgert_last_error());
  }
  for (long r = 0; r < repeat; ++r) {
    if (edgert_run(ctx) != EDGERT_OK) return fail("%s", edgert_last_error());
    for (int32_t i = 0; i < n_out && repeat > 1; ++i) {
      if (r == 0) {
        if (!alloc_buffer(&first[i], out_info[i].size_bytes)) return fail("out of memory");
        std::memcpy(first[i].data, outs[i].data, out_info[i].size_bytes);
      } else if (std::memcmp(first[i].data, outs[i].data, out_info[i].size_bytes) != 0) {
        return fail("run %ld of %ld: output '%s' differs from the first run's", r + 1, repeat, out_info[i].name);
      }
    }
  }
  if (output_dir && !make_dirs(output_dir)) return 1;
  // File names: '/' -> '_'; outputs whose names had no '/' keep theirs, the others take the
  // first free name with _1, _2, ... (as the host tool).
  static char names[kMaxTensors][256];
  for (int pass = 0; pass < 2 && output_dir; ++pass)
    for (int32_t i = 0; i < n_out; ++i) {
      const char* name = out_info[i].name;
      const bool has_slash = std::strchr(name, '/') != nullptr;
      if (has_slash != (pass == 1)) continue;
      char base[200];
      std::snprintf(base, sizeof base, "%s", name);
      for (char* p = base; *p; ++p)
        if (*p == '/') *p = '_';
      std::snprintf(names[i], sizeof names[i], "%s", base);
      for (int suffix = 1;; ++suffix) {
        bool taken = false;
        for (int32_t j = 0; j < n_out && !taken; ++j)
          taken = j != i && names[j][0] && std::strcmp(names[j], names[i]) == 0;
        if (!taken) break;
        std::snprintf(names[i], sizeof names[i], "%s_%d", base, suffix);
      }
      if (std::strcmp(names[i], base) != 0) say(2, "edgert-run: output '%s' written to %s.npy\n", name, names[i]);
    }
  for (int32_t i = 0; i < n_out; ++i) {
    if (print) print_output(out_info[i], outs[i].data);
    if (!output_dir) continue;
    char path[kPath];
    std::snprintf(path, sizeof path, "%s/%s.npy", output_dir, names[i]);
    if (!write_npy(path, out_info[i], outs[i].data)) return 1;
  }
  edgert_context_destroy(ctx);
  edgert_bundle_close(bundle);
  return 0;
}
