// opencl_port.cc — the opencl port's table: which bundles it runs (check_target), device
// selection, program builds from OpenCL C or from prepared binaries, and prepare() for
// edgert_prepare. The context itself (memory, kernels, the queue) is in opencl_context.cc.
#include "opencl_port.h"

#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "internal.h"

namespace edgert::opencl {
namespace {

using namespace edge::bundle;

// OpenCL C 1.2 is what edgec generates (schema/kernel_abi.h); binaries get the same options.
constexpr const char* kBuildOptions = "-cl-std=CL1.2";

template <typename T>
uint32_t count(const flatbuffers::Vector<T>* v) {
  return v ? v->size() : 0;
}

const char* str(const flatbuffers::String* s) { return s ? s->c_str() : ""; }

char lower(char ch) { return ch >= 'A' && ch <= 'Z' ? static_cast<char>(ch - 'A' + 'a') : ch; }

bool contains_ignore_case(const char* haystack, const char* needle) {
  const size_t n = std::strlen(needle);
  for (const char* h = haystack; *h; ++h) {
    size_t i = 0;
    while (i < n && h[i] && lower(h[i]) == lower(needle[i])) ++i;
    if (i == n) return true;
  }
  return n == 0;
}

// Appends printf output to buf (used bytes in *used), silently truncating.
__attribute__((format(printf, 4, 5))) void append(char* buf, size_t size, size_t* used, const char* format,
                                                  ...) {
  if (*used >= size) return;
  va_list args;
  va_start(args, format);
  const int n = std::vsnprintf(buf + *used, size - *used, format, args);
  va_end(args);
  if (n > 0) *used = *used + static_cast<size_t>(n) < size ? *used + static_cast<size_t>(n) : size - 1;
}

// An info string of any length (extension lists are long; CL refuses a short buffer): into
// a fresh allocation, null when it cannot be read. `get` is clGet*Info bound to the object.
template <typename Get>
char* info_string_alloc(Get get) {
  size_t size = 0;
  if (get(0, nullptr, &size) != CL_SUCCESS) return nullptr;
  char* s = static_cast<char*>(std::calloc(size + 1, 1));
  if (s && get(size, s, nullptr) != CL_SUCCESS) s[0] = '\0';
  return s;
}

// The same, truncated into buf ("" when it cannot be read).
template <typename Get>
void info_string(Get get, char* buf, size_t size) {
  char* s = info_string_alloc(get);
  std::snprintf(buf, size, "%s", s ? s : "");
  std::free(s);
}

void platform_string(const Api& cl, cl_platform_id p, cl_platform_info what, char* buf, size_t size) {
  info_string([&](size_t n, void* v, size_t* r) { return cl.clGetPlatformInfo(p, what, n, v, r); }, buf,
              size);
}

void device_string(const Api& cl, cl_device_id d, cl_device_info what, char* buf, size_t size) {
  info_string([&](size_t n, void* v, size_t* r) { return cl.clGetDeviceInfo(d, what, n, v, r); }, buf, size);
}

char* device_string_alloc(const Api& cl, cl_device_id d, cl_device_info what) {
  return info_string_alloc(
      [&](size_t n, void* v, size_t* r) { return cl.clGetDeviceInfo(d, what, n, v, r); });
}

// Whether the space-separated list contains `word` as a whole entry.
bool has_word(const char* list, const char* word) {
  const size_t n = std::strlen(word);
  if (n == 0) return false;  // a bundle naming an empty extension is refused, not looped on
  for (const char* p = list; (p = std::strstr(p, word)) != nullptr; p += n) {
    const bool starts = p == list || p[-1] == ' ';
    const bool ends = p[n] == '\0' || p[n] == ' ';
    if (starts && ends) return true;
  }
  return false;
}

// EDGERT_OPENCL_DEVICE, when set, overrides options->device_index.
edgert_status device_index(const edgert_context_options* options, int32_t* out) {
  *out = options->device_index;
  const char* env = std::getenv("EDGERT_OPENCL_DEVICE");
  if (env && *env) {
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(env, &end, 10);
    if (*end != '\0' || errno != 0 || v < 0 || v > INT32_MAX)
      return set_error(EDGERT_ERROR_INVALID_ARGUMENT, "EDGERT_OPENCL_DEVICE=%s is not a device index", env);
    *out = static_cast<int32_t>(v);
  }
  if (*out < 0) return set_error(EDGERT_ERROR_INVALID_ARGUMENT, "OpenCL device index %d is negative", *out);
  return EDGERT_OK;
}

edgert_status check_target(const Bundle* b) {
  const Target* t = b->target();
  for (uint32_t i = 0; i < count(b->sections()); ++i)
    if (b->sections()->Get(i)->format() == CodeFormat::Ir3A630)
      return set_error(EDGERT_ERROR_UNSUPPORTED,
                       "section %u holds Adreno a630 machine code (Ir3A630, edgec --target adreno630), which needs "
                       "the kgsl port (not written yet), not the opencl port",
                       i);
  if (t->arch() != Arch::OpenCL) {
    char target[160];
    return set_error(EDGERT_ERROR_UNSUPPORTED,
                     "bundle targets %s [arch %u], but the opencl port runs bundles for arch OpenCL",
                     describe_target(t, target, sizeof(target)), static_cast<unsigned>(t->arch()));
  }
  for (uint32_t i = 0; i < count(b->sections()); ++i) {
    const Section* s = b->sections()->Get(i);
    if (s->kind() == SectionKind::Code && s->format() != CodeFormat::OpenCLC &&
        s->format() != CodeFormat::OpenCLBinary)
      return set_error(EDGERT_ERROR_INVALID_BUNDLE,
                       "section %u: the opencl port runs OpenCLC or OpenCLBinary code, not format %u", i,
                       static_cast<unsigned>(s->format()));
  }
  return EDGERT_OK;
}

// ---- prepare: program binaries for edgert_prepare ----

// What prepare() allocates, owned through PreparedPrograms::port_data.
struct PreparedStorage {
  Device device;
  PreparedProgram* programs = nullptr;
  uint32_t count = 0;
};

void release_prepared(PreparedPrograms* prepared) {
  auto* storage = static_cast<PreparedStorage*>(prepared->port_data);
  if (storage) {
    for (uint32_t i = 0; i < storage->count; ++i)
      std::free(const_cast<uint8_t*>(storage->programs[i].binary));
    std::free(storage->programs);
    storage->~PreparedStorage();
    std::free(storage);
  }
  *prepared = PreparedPrograms{};
}

// The binary of a built program for its one device.
edgert_status program_binary(const Device& d, cl_program program, uint32_t section, PreparedProgram* out) {
  const Api& cl = *d.cl;
  size_t size = 0;
  cl_int err = cl.clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, nullptr);
  if (err != CL_SUCCESS || size == 0)
    return set_error(EDGERT_ERROR_UNSUPPORTED,
                     "section %u: the driver of %s returned no program binary (clGetProgramInfo: %s (%d))",
                     section, d.name, cl_error_name(err), err);
  auto* binary = static_cast<unsigned char*>(std::malloc(size));
  if (!binary)
    return set_error(EDGERT_ERROR_OUT_OF_MEMORY, "out of memory for a %zu-byte program binary", size);
  unsigned char* binaries[1] = {binary};
  err = cl.clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof(binaries), binaries, nullptr);
  if (err != CL_SUCCESS) {
    std::free(binary);
    return set_error(status_for(err), "section %u: reading the program binary from %s: %s (%d)", section,
                     d.name, cl_error_name(err), err);
  }
  out->source_section = section;
  out->binary = binary;
  out->size = size;
  return EDGERT_OK;
}

edgert_status prepare(const edgert_bundle* bundle, const edgert_context_options* options,
                      PreparedPrograms* out) {
  *out = PreparedPrograms{};
  void* mem = std::calloc(1, sizeof(PreparedStorage));
  if (!mem) return set_error(EDGERT_ERROR_OUT_OF_MEMORY, "out of memory preparing programs");
  auto* storage = new (mem) PreparedStorage;
  out->port_data = storage;
  const Bundle* b = bundle->root;
  storage->programs =
      static_cast<PreparedProgram*>(std::calloc(count(b->sections()) + 1, sizeof(PreparedProgram)));
  if (!storage->programs) {
    release_prepared(out);
    return set_error(EDGERT_ERROR_OUT_OF_MEMORY, "out of memory preparing programs");
  }
  Device& d = storage->device;
  edgert_status st = select_device(options, &d);
  if (st == EDGERT_OK) st = check_extensions(bundle, d);
  cl_context context = nullptr;
  if (st == EDGERT_OK) st = create_cl_context(d, &context);
  for (uint32_t i = 0; st == EDGERT_OK && i < count(b->sections()); ++i) {
    if (b->sections()->Get(i)->format() != CodeFormat::OpenCLC) continue;
    cl_program program = nullptr;
    st = build_from_source(d, context, bundle, i, &program);
    if (st == EDGERT_OK) st = program_binary(d, program, i, &storage->programs[storage->count]);
    if (st == EDGERT_OK) ++storage->count;
    if (program) d.cl->clReleaseProgram(program);
  }
  if (context) d.cl->clReleaseContext(context);
  if (st != EDGERT_OK) {
    release_prepared(out);
    return st;
  }
  out->platform = d.platform_id;
  out->device = d.name;
  out->driver = d.driver;
  out->programs = storage->programs;
  out->count = storage->count;
  return EDGERT_OK;
}

}  // namespace

edgert_status select_device(const edgert_context_options* options, Device* out) {
  edgert_status st = load_api(&out->cl);
  if (st != EDGERT_OK) return st;
  const Api& cl = *out->cl;
  int32_t index = 0;
  if ((st = device_index(options, &index)) != EDGERT_OK) return st;
  const char* only = std::getenv("EDGERT_OPENCL_PLATFORM");
  if (only && !*only) only = nullptr;

  cl_uint num_platforms = 0;
  cl_int err = cl.clGetPlatformIDs(0, nullptr, &num_platforms);
  if (err == CL_PLATFORM_NOT_FOUND_KHR || (err == CL_SUCCESS && num_platforms == 0))
    return set_error(EDGERT_ERROR_UNSUPPORTED,
                     "no OpenCL device: no OpenCL platform is installed (the ICD loader found no driver)");
  if (err != CL_SUCCESS)
    return set_error(EDGERT_ERROR_UNSUPPORTED, "no OpenCL device: clGetPlatformIDs failed: %s (%d)",
                     cl_error_name(err), err);
  auto* platforms = static_cast<cl_platform_id*>(std::calloc(num_platforms, sizeof(cl_platform_id)));
  if (!platforms) return set_error(EDGERT_ERROR_OUT_OF_MEMORY, "out of memory listing OpenCL platforms");
  err = cl.clGetPlatformIDs(num_platforms, platforms, nullptr);
  if (err != CL_SUCCESS) num_platforms = 0;

  // What was seen, for the messages: "Portable Computing Language: 1 device, Clover: 0 devices".
  char seen[256] = "";
  size_t seen_used = 0;
  int64_t total = 0;
  bool found = false;
  for (cl_uint p = 0; p < num_platforms && !found; ++p) {
    char name[128];
    platform_string(cl, platforms[p], CL_PLATFORM_NAME, name, sizeof(name));
    if (only && !contains_ignore_case(name, only)) continue;
    cl_uint num_devices = 0;
    if (cl.clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 0, nullptr, &num_devices) != CL_SUCCESS)
      num_devices = 0;  // CL_DEVICE_NOT_FOUND: a platform without devices (Mesa's Clover, often)
    append(seen, sizeof(seen), &seen_used, "%s%s: %u device%s", seen_used ? ", " : "", name, num_devices,
           num_devices == 1 ? "" : "s");
    if (index < total + num_devices) {
      auto* devices = static_cast<cl_device_id*>(std::calloc(num_devices, sizeof(cl_device_id)));
      if (!devices) {
        std::free(platforms);
        return set_error(EDGERT_ERROR_OUT_OF_MEMORY, "out of memory listing OpenCL devices");
      }
      err = cl.clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, num_devices, devices, nullptr);
      if (err == CL_SUCCESS) {
        out->platform = platforms[p];
        out->device = devices[index - total];
        found = true;
      }
      std::free(devices);
      if (!found) {
        std::free(platforms);
        return set_error(EDGERT_ERROR_UNSUPPORTED, "OpenCL platform %s: clGetDeviceIDs failed: %s (%d)", name,
                         cl_error_name(err), err);
      }
    }
    total += num_devices;
  }
  std::free(platforms);
  char filter[160] = "";
  if (only)
    std::snprintf(filter, sizeof(filter), " whose name contains \"%s\" (EDGERT_OPENCL_PLATFORM)", only);
  if (!found && total == 0)
    return set_error(EDGERT_ERROR_UNSUPPORTED, "no OpenCL device: no device on the OpenCL platforms%s (%s)",
                     filter, seen_used ? seen : "none");
  if (!found)
    return set_error(EDGERT_ERROR_INVALID_ARGUMENT,
                     "OpenCL device index %d is out of range: %" PRId64 " device(s) on the platforms%s (%s)",
                     index, total, filter, seen);

  char platform_name[192], platform_version[256];
  platform_string(cl, out->platform, CL_PLATFORM_NAME, platform_name, sizeof(platform_name));
  platform_string(cl, out->platform, CL_PLATFORM_VERSION, platform_version, sizeof(platform_version));
  std::snprintf(out->platform_id, sizeof(out->platform_id), "%s %s", platform_name, platform_version);
  device_string(cl, out->device, CL_DEVICE_NAME, out->name, sizeof(out->name));
  device_string(cl, out->device, CL_DRIVER_VERSION, out->driver, sizeof(out->driver));
  return EDGERT_OK;
}

bool has_extension(const Device& d, const char* name) {
  char* extensions = device_string_alloc(*d.cl, d.device, CL_DEVICE_EXTENSIONS);
  const bool found = extensions && has_word(extensions, name);
  std::free(extensions);
  return found;
}

edgert_status check_extensions(const edgert_bundle* bundle, const Device& d) {
  const auto* features = bundle->root->target()->features();
  if (count(features) == 0) return EDGERT_OK;
  char* extensions = device_string_alloc(*d.cl, d.device, CL_DEVICE_EXTENSIONS);
  if (!extensions)
    return set_error(EDGERT_ERROR_UNSUPPORTED, "cannot read the extensions of OpenCL device %s", d.name);
  edgert_status st = EDGERT_OK;
  for (uint32_t i = 0; i < count(features) && st == EDGERT_OK; ++i) {
    const char* want = str(features->Get(i));
    if (!has_word(extensions, want))
      st = set_error(EDGERT_ERROR_UNSUPPORTED,
                     "bundle needs OpenCL extension %s, which device %s (%s) lacks; its extensions: %s", want,
                     d.name, d.platform_id, extensions);
  }
  std::free(extensions);
  return st;
}

edgert_status create_cl_context(const Device& d, cl_context* out) {
  const cl_context_properties properties[] = {CL_CONTEXT_PLATFORM,
                                              reinterpret_cast<cl_context_properties>(d.platform), 0};
  cl_int err = CL_SUCCESS;
  *out = d.cl->clCreateContext(properties, 1, &d.device, nullptr, nullptr, &err);
  if (err != CL_SUCCESS || !*out) {
    *out = nullptr;
    return set_error(status_for(err), "cannot create an OpenCL context on %s: %s (%d)", d.name,
                     cl_error_name(err), err);
  }
  return EDGERT_OK;
}

edgert_status build_from_source(const Device& d, cl_context context, const edgert_bundle* bundle,
                                uint32_t section, cl_program* out) {
  const Api& cl = *d.cl;
  const Section* s = bundle->root->sections()->Get(section);
  const char* source = reinterpret_cast<const char*>(bundle->data + s->offset());
  const size_t length = static_cast<size_t>(s->size());
  cl_int err = CL_SUCCESS;
  *out = cl.clCreateProgramWithSource(context, 1, &source, &length, &err);
  if (err != CL_SUCCESS) {
    *out = nullptr;
    return set_error(status_for(err), "section %u: clCreateProgramWithSource on %s: %s (%d)", section, d.name,
                     cl_error_name(err), err);
  }
  err = cl.clBuildProgram(*out, 1, &d.device, kBuildOptions, nullptr, nullptr);
  if (err == CL_SUCCESS) return EDGERT_OK;
  // The log says what the compiler disliked; the message buffer keeps its start.
  size_t log_size = 0;
  char* log = nullptr;
  if (cl.clGetProgramBuildInfo(*out, d.device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &log_size) == CL_SUCCESS &&
      (log = static_cast<char*>(std::calloc(log_size + 1, 1))) != nullptr)
    cl.clGetProgramBuildInfo(*out, d.device, CL_PROGRAM_BUILD_LOG, log_size, log, nullptr);
  const char* shown = log ? log : "";
  while (*shown == '\n' || *shown == ' ') ++shown;
  edgert_status st =
      set_error(status_for(err), "section %u: building its OpenCL C on %s failed: %s (%d); build log: %s",
                section, d.name, cl_error_name(err), err, *shown ? shown : "(empty)");
  std::free(log);
  cl.clReleaseProgram(*out);
  *out = nullptr;
  return st;
}

edgert_status load_binary(const Device& d, cl_context context, const uint8_t* binary, size_t size,
                          uint32_t source_section, cl_program* out) {
  const Api& cl = *d.cl;
  cl_int binary_status = CL_SUCCESS, err = CL_SUCCESS;
  *out = cl.clCreateProgramWithBinary(context, 1, &d.device, &size, &binary, &binary_status, &err);
  if (err == CL_SUCCESS && binary_status != CL_SUCCESS) err = binary_status;
  // CL wants a build even for a binary: the driver finishes loading it (no compile from source).
  if (err == CL_SUCCESS) err = cl.clBuildProgram(*out, 1, &d.device, kBuildOptions, nullptr, nullptr);
  if (err == CL_SUCCESS) return EDGERT_OK;
  if (*out) cl.clReleaseProgram(*out);
  *out = nullptr;
  return set_error(EDGERT_ERROR_UNSUPPORTED,
                   "the prepared program binary of section %u (%zu bytes) does not load on %s: %s (%d); "
                   "run edgert-prepare again",
                   source_section, size, d.name, cl_error_name(err), err);
}

}  // namespace edgert::opencl

namespace {
const edgert::Port kPort = {
    "opencl",    edgert::opencl::check_target, edgert::opencl::create, edgert::opencl::destroy,
    edgert::opencl::bind, edgert::opencl::run, edgert::opencl::timestamps, edgert::opencl::stats,
    edgert::opencl::prepare, edgert::opencl::release_prepared,
};
}  // namespace

// libedgert_opencl registers the port with the core as it loads (ports/port.h): before main
// when linked, statically or not. Callable again (a second registration changes nothing).
extern "C" __attribute__((constructor)) void edgert_opencl_register(void) {
  edgert_port_register("opencl", edgert::kPortAbi, &kPort);
}
