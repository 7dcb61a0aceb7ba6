// tool_common.cc — shared helpers of the edgert command-line tools.
#include "tool_common.h"

#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace edgert_tools {
namespace {

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff, bits;
  if (exp == 0 && mant == 0) {
    bits = sign;
  } else if (exp == 0) {  // subnormal: normalize
    exp = 127 - 15 + 1;
    while (!(mant & 0x400)) {
      mant <<= 1;
      --exp;
    }
    bits = sign | (exp << 23) | ((mant & 0x3ff) << 13);
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

template <typename T>
T load(const void* data, size_t i) {
  T v;
  std::memcpy(&v, static_cast<const uint8_t*>(data) + i * sizeof(T), sizeof(T));
  return v;
}

}  // namespace

int fail(const char* tool, const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", tool, message.c_str());
  return 1;
}

std::string status_text(edgert_status status) {
  return std::string(edgert_status_name(status)) + ": " + edgert_last_error();
}

bool parse_count(const char* text, long* out) {
  std::string unused;
  return parse_int_option("", text, 0, LONG_MAX, out, &unused);
}

bool parse_int_option(const char* flag, const char* text, long min, long max, long* out, std::string* error) {
  const std::string range = "an integer from " + std::to_string(min) + " to " + std::to_string(max);
  if (!text) {
    *error = std::string(flag) + " needs a value (" + range + ")";
    return false;
  }
  // Digit by digit, not strtol: it would take " +4", and a long cast to int32 wraps.
  unsigned long v = 0;
  bool ok = *text != '\0';
  for (const char* p = text; ok && *p; ++p) {
    const unsigned digit = static_cast<unsigned>(*p - '0');
    ok = digit <= 9 && v <= (static_cast<unsigned long>(max) - digit) / 10;
    v = v * 10 + digit;
  }
  if (!ok || static_cast<long>(v) < min) {
    *error = std::string(flag) + " wants " + range + ", got '" + text + "'";
    return false;
  }
  *out = static_cast<long>(v);
  return true;
}

std::string tensor_type(edgert_dtype dtype, const int64_t* shape, size_t rank) {
  return std::string(edgert_dtype_name(dtype)) + " " + shape_string(shape, rank);
}

std::string input_names(const edgert_bundle* bundle) {
  std::string names;
  for (int32_t i = 0; i < edgert_bundle_input_count(bundle); ++i) {
    edgert_tensor_info info;
    if (edgert_bundle_input_info(bundle, i, &info) != EDGERT_OK) continue;
    if (!names.empty()) names += ", ";
    names += info.name;
  }
  return names.empty() ? "(none)" : names;
}

bool load_input(const edgert_bundle* bundle, const std::string& spec, std::vector<NpyArray>* inputs,
                std::vector<bool>* given, std::string* error) {
  const size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
    *error = "--input wants NAME=FILE.npy, got '" + spec + "'";
    return false;
  }
  const std::string name = spec.substr(0, eq), path = spec.substr(eq + 1);
  const int32_t index = edgert_bundle_find_input(bundle, name.c_str());
  if (index < 0) {
    *error = "unknown input '" + name + "' (the bundle's inputs: " + input_names(bundle) + ")";
    return false;
  }
  if ((*given)[index]) {
    *error = "input '" + name + "' given twice";
    return false;
  }
  edgert_tensor_info info;
  edgert_bundle_input_info(bundle, index, &info);
  NpyReader reader;
  if (!reader.open(path.c_str(), error)) {
    *error = "input '" + name + "': " + *error;
    return false;
  }
  // The header's dtype and shape first: a wrong file is named as such, before its data is
  // read or its size matters.
  const std::vector<int64_t>& shape = reader.shape();
  const std::string expected = tensor_type(info.dtype, info.shape, static_cast<size_t>(info.rank));
  const std::string got = tensor_type(reader.dtype(), shape.data(), shape.size());
  // Exact match only: a reshaped or 0-d array of the right size is still a caller mistake.
  bool same = reader.dtype() == info.dtype && shape.size() == static_cast<size_t>(info.rank);
  for (size_t d = 0; same && d < shape.size(); ++d) same = shape[d] == info.shape[d];
  if (!same) {
    *error = "input '" + name + "' (" + path + "): expected " + expected + ", got " + got;
    return false;
  }
  NpyArray array;
  if (!reader.read(&array, error)) {
    *error = "input '" + name + "': " + *error;
    return false;
  }
  (*inputs)[index] = std::move(array);
  (*given)[index] = true;
  return true;
}

std::string element_text(edgert_dtype dtype, const void* data, size_t i) {
  char buf[64];
  switch (dtype) {
    case EDGERT_F32:
      std::snprintf(buf, sizeof(buf), "%.6g", static_cast<double>(load<float>(data, i)));
      break;
    case EDGERT_F16:
      std::snprintf(buf, sizeof(buf), "%.5g",
                    static_cast<double>(half_to_float(load<uint16_t>(data, i))));
      break;
    case EDGERT_F64: std::snprintf(buf, sizeof(buf), "%.10g", load<double>(data, i)); break;
    case EDGERT_I8: std::snprintf(buf, sizeof(buf), "%d", load<int8_t>(data, i)); break;
    case EDGERT_U8: std::snprintf(buf, sizeof(buf), "%u", load<uint8_t>(data, i)); break;
    case EDGERT_BOOL:
      std::snprintf(buf, sizeof(buf), "%s", load<uint8_t>(data, i) ? "true" : "false");
      break;
    case EDGERT_I16: std::snprintf(buf, sizeof(buf), "%d", load<int16_t>(data, i)); break;
    case EDGERT_U16: std::snprintf(buf, sizeof(buf), "%u", load<uint16_t>(data, i)); break;
    case EDGERT_I32: std::snprintf(buf, sizeof(buf), "%" PRId32, load<int32_t>(data, i)); break;
    case EDGERT_U32: std::snprintf(buf, sizeof(buf), "%" PRIu32, load<uint32_t>(data, i)); break;
    case EDGERT_I64: std::snprintf(buf, sizeof(buf), "%" PRId64, load<int64_t>(data, i)); break;
    case EDGERT_U64: std::snprintf(buf, sizeof(buf), "%" PRIu64, load<uint64_t>(data, i)); break;
    default: std::snprintf(buf, sizeof(buf), "?"); break;
  }
  return buf;
}

double element_value(edgert_dtype dtype, const void* data, size_t i) {
  switch (dtype) {
    case EDGERT_F32: return static_cast<double>(load<float>(data, i));
    case EDGERT_F16: return static_cast<double>(half_to_float(load<uint16_t>(data, i)));
    case EDGERT_F64: return load<double>(data, i);
    case EDGERT_I8: return load<int8_t>(data, i);
    case EDGERT_U8:
    case EDGERT_BOOL: return load<uint8_t>(data, i);
    case EDGERT_I16: return load<int16_t>(data, i);
    case EDGERT_U16: return load<uint16_t>(data, i);
    case EDGERT_I32: return load<int32_t>(data, i);
    case EDGERT_U32: return load<uint32_t>(data, i);
    case EDGERT_I64: return static_cast<double>(load<int64_t>(data, i));
    case EDGERT_U64: return static_cast<double>(load<uint64_t>(data, i));
    default: return 0;
  }
}

bool read_hex_key_file(const std::string& path, size_t size, std::vector<uint8_t>* out, std::string* error) {
  AlignedBuffer file;
  if (!read_regular_file(path.c_str(), 8, &file, error)) return false;
  const char* text = reinterpret_cast<const char*>(file.data());
  size_t n = file.size();
  while (n > 0 && std::isspace(static_cast<unsigned char>(text[n - 1]))) --n;
  auto nibble = [](char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
  };
  bool ok = n == 2 * size;
  std::vector<uint8_t> bytes(size);
  for (size_t i = 0; ok && i < size; ++i) {
    const int hi = nibble(text[2 * i]), lo = nibble(text[2 * i + 1]);
    ok = hi >= 0 && lo >= 0;
    bytes[i] = static_cast<uint8_t>(hi * 16 + lo);
  }
  if (!ok) {
    *error = path + " is not a key file (" + std::to_string(2 * size) + " hex digits, as edgec keygen writes)";
    return false;
  }
  out->insert(out->end(), bytes.begin(), bytes.end());
  return true;
}

edgert_open_options open_options(const CommonOptions& o) {
  edgert_open_options options{};
  options.flags = (o.map_in_place ? EDGERT_OPEN_MAP_IN_PLACE : 0u) | (o.fsverity ? EDGERT_OPEN_FSVERITY : 0u);
  options.trusted_public_keys = o.trusted_keys.data();
  options.num_trusted_keys = o.trusted_keys.size() / EDGERT_ED25519_PUBLIC_KEY_SIZE;
  options.fsverity_signature = o.fsverity_signature.data();
  options.fsverity_signature_size = o.fsverity_signature.size();
  return options;
}

bool open_with_inputs(const CommonOptions& o, Session* session, std::vector<NpyArray>* inputs,
                      std::vector<bool>* given, std::string* error) {
  const std::string& path = o.bundle;
  const std::vector<std::string>& specs = o.inputs;
  // edgert_bundle_open would block on a FIFO (open waits for a writer): refuse it first.
  std::string why;
  if (!check_regular_file(path.c_str(), &why)) {
    *error = "cannot open bundle " + why;
    return false;
  }
  const edgert_open_options options = open_options(o);
  edgert_status st = edgert_bundle_open_with_options(path.c_str(), &options, &session->bundle);
  if (st != EDGERT_OK) {
    *error = "cannot open bundle " + path + ": " + status_text(st);
    return false;
  }
  const size_t num_inputs = static_cast<size_t>(edgert_bundle_input_count(session->bundle));
  inputs->clear();
  inputs->resize(num_inputs);
  given->assign(num_inputs, false);
  for (const std::string& spec : specs)
    if (!load_input(session->bundle, spec, inputs, given, error)) return false;
  return true;
}

edgert_context_options context_options(const CommonOptions& o) {
  edgert_context_options options{};
  options.num_threads = static_cast<int32_t>(o.threads);
  options.device_index = static_cast<int32_t>(o.device);
  options.allow_source_build = o.require_prepared ? 0 : 1;
  return options;
}

void note_source_builds(const edgert_context* context) {
  edgert_context_stats stats;
  if (edgert_context_get_stats(context, &stats) == EDGERT_OK && stats.programs_built > 0)
    std::fprintf(stderr,
                 "edgert: built %d OpenCL program(s) from source at context creation; run edgert-prepare to "
                 "skip this\n",
                 stats.programs_built);
}

int parse_common_option(const char* tool, const char* usage, int argc, char** argv, int* i, CommonOptions* o) {
  const std::string a = argv[*i];
  auto value = [&]() -> const char* { return *i + 1 < argc ? argv[++*i] : nullptr; };
  if (a == "--help" || a == "-h") {
    std::fputs(usage, stdout);
    return 0;
  }
  if (a == "--input") {
    const char* v = value();
    if (!v) return fail(tool, "--input needs NAME=FILE.npy");
    o->inputs.push_back(v);
    return -1;
  }
  if (a.rfind("--input=", 0) == 0) {
    o->inputs.push_back(a.substr(8));
    return -1;
  }
  if (a == "--threads" || a == "--device") {
    const bool threads = a == "--threads";
    std::string error;
    if (!parse_int_option(a.c_str(), value(), threads ? 1 : 0, threads ? kMaxThreads : INT32_MAX,
                          threads ? &o->threads : &o->device, &error))
      return fail(tool, error);
    return -1;
  }
  if (a == "--require-prepared") {
    o->require_prepared = true;
    return -1;
  }
  if (a == "--map-in-place") {
    o->map_in_place = true;
    return -1;
  }
  if (a == "--trusted-key") {
    const char* v = value();
    if (!v) return fail(tool, "--trusted-key needs a public key file (edgec keygen's KEYBASE.pub)");
    std::string error;
    if (!read_hex_key_file(v, EDGERT_ED25519_PUBLIC_KEY_SIZE, &o->trusted_keys, &error))
      return fail(tool, "--trusted-key: " + error);
    return -1;
  }
  if (a == "--fsverity-signature") {
    const char* v = value();
    if (!v) return fail(tool, "--fsverity-signature needs a signature file (edgec sign --fsverity's BUNDLE.fsvsig)");
    AlignedBuffer file;
    std::string error;
    if (!read_regular_file(v, 8, &file, &error)) return fail(tool, "--fsverity-signature: " + error);
    // The runtime checks the contents (size, fields, key) and names what is wrong.
    o->fsverity_signature.assign(file.data(), file.data() + file.size());
    o->fsverity = true;
    return -1;
  }
  if (!a.empty() && a[0] == '-') return fail(tool, "unknown option " + a + " (see --help)");
  if (!o->bundle.empty()) return fail(tool, "more than one bundle given: " + o->bundle + " and " + a);
  o->bundle = a;
  return -1;
}

int serve_command_lines(const char* tool, const std::function<int(std::vector<std::string>& words)>& run) {
  char* line = nullptr;
  size_t capacity = 0;
  ssize_t length;
  while ((length = getline(&line, &capacity, stdin)) > 0) {
    if (line[length - 1] == '\n') line[--length] = '\0';
    std::vector<std::string> words{tool};
    for (const char* field = line;;) {
      const char* tab = std::strchr(field, '\t');
      words.emplace_back(field, tab ? static_cast<size_t>(tab - field) : std::strlen(field));
      if (!tab) break;
      field = tab + 1;
    }
    const int code = run(words);
    std::fflush(stderr);
    std::printf("\x1e%d\n", code);
    std::fflush(stdout);
  }
  std::free(line);
  return 0;
}

}  // namespace edgert_tools
