// The opencl port on whatever OpenCL device this machine has (PoCL in CI), with bundles built
// by hand (OpenCL C in the bundle, no compiler): outputs, determinism, prepared binaries and
// their refusal elsewhere, extensions, images, sub-buffers, no allocation in edgert_run.
// Each case skips (with a MESSAGE) when there is no OpenCL device, unless
// EDGE_REQUIRE_OPENCL=1 (set by the ctest registration), where that is a failure.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "edgert_prepare.h"
#include "runtime_alloc_counter.h"
#include "runtime_test_util.h"

using namespace rt_test;

namespace {

constexpr int kN = 1000;  // elements of x and y

const char* kSource = R"CL(
__kernel void add1(__global float* out, __global const float* in) {
  size_t i = get_global_id(0);
  if (i < 1000) out[i] = in[i] + 1.0f;
}
__kernel void scale(__global float* out, __global const float* in, __global const float* w) {
  size_t i = get_global_id(0);
  if (i < 1000) out[i] = in[i] * w[i % 4];
}
)CL";

const char* kImageSource = R"CL(
__constant sampler_t kNearest = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_NONE | CLK_FILTER_NEAREST;
__kernel void to_image(__write_only image2d_t out, __global const float* in) {
  int t = get_global_id(0);
  if (t < 250) write_imagef(out, (int2)(t % 64, t / 64), vload4(t, in));
}
__kernel void from_image(__global float* out, __read_only image2d_t in) {
  int t = get_global_id(0);
  if (t < 250) vstore4(read_imagef(in, kNearest, (int2)(t % 64, t / 64)), t, out);
}
)CL";

const std::vector<float> kWeights = {0.5f, 2.0f, -1.0f, 3.0f};

std::vector<uint8_t> text_bytes(const char* s) { return std::vector<uint8_t>(s, s + std::strlen(s)); }

KernelDesc kernel(const char* name, uint32_t num_args, uint64_t global, uint64_t local = 0) {
  KernelDesc k;
  k.name = name;
  k.entry_name = name;
  k.section = 1;
  k.args = f32_contracts(num_args, 0);
  k.global_size = {global};
  if (local) k.local_size = {local};
  return k;
}

BundleDesc opencl_base(const char* source) {
  BundleDesc d;
  d.producer = "runtime unit tests";
  d.source_model = "opencl.onnx";
  d.target.arch = Arch::OpenCL;
  d.target.port = "opencl";
  SectionData weights;
  weights.kind = SectionKind::Weights;
  weights.bytes = bytes_of(kWeights);
  SectionData code;
  code.kind = SectionKind::Code;
  code.format = CodeFormat::OpenCLC;
  code.bytes = text_bytes(source);
  d.sections = {weights, code};
  d.arena_alignment = 256;
  return d;
}

// y = (x + 1) * w[i % 4] + 1, through two arena intermediates and a Copy; add1 is launched
// twice with different arguments. Timestamps first and last.
//   buffers: 0 x (Input), 1 y (Output), 2 tmp (Arena @0), 3 w (Weight), 4 tmp2 (Arena @tmp2_offset)
BundleDesc opencl_bundle(uint64_t tmp2_offset = 4096, uint32_t arena_alignment = 256) {
  BundleDesc d = opencl_base(kSource);
  d.buffers = {buffer("x", BufferKind::Input, {kN}, 0, 0, 0), buffer("y", BufferKind::Output, {kN}, 0, 0, 0),
               buffer("tmp", BufferKind::Arena, {kN}, 0), buffer("w", BufferKind::Weight, {4}, 0, 0),
               buffer("tmp2", BufferKind::Arena, {kN}, tmp2_offset)};
  d.inputs = {TensorDesc{"x", DType::F32, {kN}, 0}};
  d.outputs = {TensorDesc{"y", DType::F32, {kN}, 1}};
  d.kernels = {kernel("add1", 2, 1024), kernel("scale", 3, 1024, 64)};
  d.commands = {command(CommandKind::Timestamp, {}),        command(CommandKind::Launch, {2, 0}, 0),
                command(CommandKind::Launch, {4, 2, 3}, 1), command(CommandKind::Launch, {2, 4}, 0),
                command(CommandKind::Copy, {2, 1}),         command(CommandKind::Timestamp, {})};
  d.arena_size = tmp2_offset + 4096;
  d.arena_alignment = arena_alignment;
  d.arena_lower_bound = 8000;
  return d;
}

std::vector<float> input_values(float bias = 0.0f) {
  std::vector<float> x(kN);
  for (int i = 0; i < kN; ++i) x[i] = static_cast<float>(i) * 0.25f - 100.0f + bias;  // exact in f32
  return x;
}

std::vector<float> expected_y(const std::vector<float>& x) {
  std::vector<float> y(kN);
  for (int i = 0; i < kN; ++i) y[i] = (x[i] + 1.0f) * kWeights[i % 4] + 1.0f;  // exact: no rounding
  return y;
}

edgert_context_options options_with(int32_t allow_source_build) {
  edgert_context_options o{};
  o.allow_source_build = allow_source_build;
  return o;
}

struct Context {
  edgert_context* ctx = nullptr;
  edgert_status status;
  std::string error;
  Context(const edgert_bundle* b, int32_t allow_source_build = 1) {
    const edgert_context_options o = options_with(allow_source_build);
    status = edgert_context_create(b, &o, &ctx);
    if (status != EDGERT_OK) error = edgert_last_error();
  }
  ~Context() { edgert_context_destroy(ctx); }
  edgert_context_stats stats() const {
    edgert_context_stats s{};
    REQUIRE(edgert_context_get_stats(ctx, &s) == EDGERT_OK);
    return s;
  }
};

// False (after a MESSAGE) when the opencl port is not compiled in or this machine has no
// OpenCL device; with EDGE_REQUIRE_OPENCL=1 a missing device is a test failure instead.
bool have_device() {
  if (!contains(edgert_runtime_ports(), "opencl")) {
    MESSAGE("skipping: the opencl port is not compiled in (EDGE_PORTS=" << std::string(edgert_runtime_ports())
                                                                        << ")");
    return false;
  }
  Opened o(opencl_bundle());
  REQUIRE(o.status == EDGERT_OK);
  Context c(o.bundle);
  if (c.status == EDGERT_OK || !contains(c.error.c_str(), "no OpenCL device")) return true;
  const char* require = std::getenv("EDGE_REQUIRE_OPENCL");
  if (require && std::strcmp(require, "1") == 0) {
    FAIL_CHECK("EDGE_REQUIRE_OPENCL=1, but " << c.error << " (install pocl-opencl-icd: scripts/setup.sh)");
  } else {
    MESSAGE("skipping: " << c.error);
  }
  return false;
}

// Runs y = f(x) once on a fresh binding.
std::vector<float> run_once(edgert_context* ctx, const std::vector<float>& x) {
  std::vector<float> y(kN, -7.0f);
  REQUIRE(edgert_bind_input(ctx, 0, x.data(), x.size() * 4) == EDGERT_OK);
  REQUIRE(edgert_bind_output(ctx, 0, y.data(), y.size() * 4) == EDGERT_OK);
  REQUIRE(edgert_run(ctx) == EDGERT_OK);
  return y;
}

// A file under TMPDIR, removed (with its ".tmp") at scope exit.
struct TempFile {
  std::string path;
  explicit TempFile(const char* name) {
    const char* dir = std::getenv("TMPDIR");
    path = std::string(dir && *dir ? dir : "/tmp") + "/edgert_opencl_test_" + std::to_string(getpid()) + "_" +
           name;
  }
  ~TempFile() {
    std::remove(path.c_str());
    std::remove((path + ".tmp").c_str());
  }
};

void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  REQUIRE(std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size());
  REQUIRE(std::fclose(f) == 0);
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::vector<uint8_t> bytes;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  REQUIRE(f != nullptr);
  uint8_t buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) bytes.insert(bytes.end(), buf, buf + n);
  std::fclose(f);
  return bytes;
}

// The desc of a bundle file's bytes (written by serialize_bundle or edgert_prepare).
BundleDesc read_desc(const std::vector<uint8_t>& file) {
  BundleHeader h;
  REQUIRE(file.size() >= sizeof(h));
  std::memcpy(&h, file.data(), sizeof(h));
  return desc_from_bundle(GetBundle(file.data() + h.fb_offset), file.data() + h.data_offset);
}

// edgert_prepare of opencl_bundle() into *out (options: defaults, environment decides).
void prepare(const TempFile& in, const TempFile& out) {
  write_file(in.path, serialize_bundle(opencl_bundle()));
  const edgert_context_options o = options_with(0);
  const edgert_status st = edgert_prepare(in.path.c_str(), out.path.c_str(), &o);
  INFO(std::string(edgert_last_error()));
  REQUIRE(st == EDGERT_OK);
}

// A bundle file opened with edgert_bundle_open, closed at scope exit.
struct OpenedFile {
  edgert_bundle* bundle = nullptr;
  edgert_status status;
  explicit OpenedFile(const std::string& path) { status = edgert_bundle_open(path.c_str(), &bundle); }
  ~OpenedFile() { edgert_bundle_close(bundle); }
};

// Sets an environment variable for one scope, then restores it.
struct ScopedEnv {
  std::string name, old;
  bool had;
  ScopedEnv(const char* n, const char* value) : name(n) {
    const char* v = std::getenv(n);
    had = v != nullptr;
    if (had) old = v;
    setenv(n, value, 1);
  }
  ~ScopedEnv() {
    if (had)
      setenv(name.c_str(), old.c_str(), 1);
    else
      unsetenv(name.c_str());
  }
};

}  // namespace

TEST_CASE("opencl: a hand-built bundle computes its outputs on the default device") {
  if (!have_device()) return;
  Opened o(opencl_bundle());
  REQUIRE(o.status == EDGERT_OK);
  CHECK(std::strcmp(edgert_bundle_port(o.bundle), "opencl") == 0);
  Context c(o.bundle);
  INFO(c.error);
  REQUIRE(c.status == EDGERT_OK);
  const std::vector<float> x = input_values();
  CHECK(run_once(c.ctx, x) == expected_y(x));

  const edgert_context_stats s = c.stats();
  MESSAGE("OpenCL device: " << std::string(s.device));
  CHECK(std::strcmp(s.port, "opencl") == 0);
  CHECK(std::strlen(s.device) > 0);
  CHECK(s.programs_built == 1);
  CHECK(s.programs_loaded == 0);
  CHECK(s.image_bytes == 0);
  // Arena offsets at multiples of 4096 suit any device's sub-buffer alignment: one arena
  // allocation, plus x, y and the weights.
  CHECK(s.buffer_bytes == 8192 + 4000 + 4000 + 16);

  const uint64_t* ts = nullptr;
  int32_t num_ts = 0;
  REQUIRE(edgert_context_timestamps(c.ctx, &ts, &num_ts) == EDGERT_OK);
  REQUIRE(num_ts == 2);
  CHECK(ts[0] == 0);  // nothing before the first command
  CHECK(ts[1] >= ts[0]);
}

TEST_CASE("opencl: repeated runs are bit-identical; rebinding and profiling work") {
  if (!have_device()) return;
  Opened o(opencl_bundle());
  REQUIRE(o.status == EDGERT_OK);
  Context c(o.bundle);
  INFO(c.error);
  REQUIRE(c.status == EDGERT_OK);
  const std::vector<float> x = input_values();
  const std::vector<float> first = run_once(c.ctx, x);
  for (int r = 0; r < 20; ++r) {
    std::vector<float> y = run_once(c.ctx, x);
    REQUIRE(std::memcmp(y.data(), first.data(), y.size() * 4) == 0);
  }
  const std::vector<float> x2 = input_values(3.0f);
  CHECK(run_once(c.ctx, x2) == expected_y(x2));

  REQUIRE(edgert_context_set_profiling(c.ctx, 1) == EDGERT_OK);
  CHECK(run_once(c.ctx, x) == first);
  const uint64_t* ns = nullptr;
  int32_t n = 0;
  REQUIRE(edgert_context_command_times(c.ctx, &ns, &n) == EDGERT_OK);
  REQUIRE(n == 6);
  CHECK(ns[0] == 0);  // Timestamp commands take no device time
  CHECK(ns[5] == 0);
}

TEST_CASE("opencl: an unprepared bundle is refused without allow_source_build") {
  if (!have_device()) return;
  Opened o(opencl_bundle());
  REQUIRE(o.status == EDGERT_OK);
  Context c(o.bundle, /*allow_source_build=*/0);
  CHECK(c.status == EDGERT_ERROR_UNSUPPORTED);
  CHECK(contains(c.error.c_str(), "no program binaries for this device"));
  CHECK(contains(c.error.c_str(), "edgert-prepare"));
}

TEST_CASE("opencl: edgert_prepare writes binaries that load without building") {
  if (!have_device()) return;
  TempFile in("prepare_in.bundle"), out("prepare_out.bundle"), again("prepare_again.bundle");
  prepare(in, out);
  {
    OpenedFile b(out.path);
    REQUIRE(b.status == EDGERT_OK);
    Context c(b.bundle, /*allow_source_build=*/0);
    INFO(c.error);
    REQUIRE(c.status == EDGERT_OK);
    const edgert_context_stats s = c.stats();
    CHECK(s.programs_built == 0);
    CHECK(s.programs_loaded == 1);
    const std::vector<float> x = input_values();
    CHECK(run_once(c.ctx, x) == expected_y(x));

    const BundleDesc d = read_desc(read_file(out.path));
    CHECK(d.has_prepared);
    CHECK(d.prepared.device == s.device);
    REQUIRE(d.sections.size() == 3);  // weights, OpenCL C, the binary
    CHECK(d.sections[2].format == CodeFormat::OpenCLBinary);
    CHECK(d.sections[2].source_section == 1);
    CHECK(d.sections[2].bytes.size() > 0);
  }
  // Preparing a prepared bundle replaces its binaries rather than adding more.
  const edgert_context_options o = options_with(0);
  REQUIRE(edgert_prepare(out.path.c_str(), again.path.c_str(), &o) == EDGERT_OK);
  const BundleDesc d = read_desc(read_file(again.path));
  CHECK(d.sections.size() == 3);
}

TEST_CASE("opencl: a bundle prepared for another device or driver is refused") {
  if (!have_device()) return;
  TempFile in("other_in.bundle"), out("other_out.bundle");
  prepare(in, out);
  BundleDesc d = read_desc(read_file(out.path));
  d.prepared.device += " (another one)";
  Opened o(d);
  REQUIRE(o.status == EDGERT_OK);
  {
    Context c(o.bundle, /*allow_source_build=*/0);
    CHECK(c.status == EDGERT_ERROR_UNSUPPORTED);
    CHECK(contains(c.error.c_str(), "prepared for"));
    CHECK(contains(c.error.c_str(), "(another one)"));
    CHECK(contains(c.error.c_str(), "run edgert-prepare on this device"));
  }
  // Allowed to build from source, it does (and counts it), ignoring the foreign binaries.
  Context c(o.bundle, /*allow_source_build=*/1);
  INFO(c.error);
  REQUIRE(c.status == EDGERT_OK);
  CHECK(c.stats().programs_built == 1);
  CHECK(c.stats().programs_loaded == 0);
  const std::vector<float> x = input_values();
  CHECK(run_once(c.ctx, x) == expected_y(x));
}

TEST_CASE("opencl: a missing OpenCL extension is refused, naming it") {
  if (!have_device()) return;
  BundleDesc d = opencl_bundle();
  d.target.features = {"cl_khr_made_up"};
  Opened o(d);
  REQUIRE(o.status == EDGERT_OK);
  Context c(o.bundle);
  CHECK(c.status == EDGERT_ERROR_UNSUPPORTED);
  CHECK(contains(c.error.c_str(), "cl_khr_made_up"));
  CHECK(contains(c.error.c_str(), "lacks"));
}

TEST_CASE("opencl: arena buffers as sub-buffers or separate allocations give the same outputs") {
  if (!have_device()) return;
  const std::vector<float> x = input_values();
  // 4032: 64-aligned only, so a device that wants more alignment for sub-buffers gets
  // separate allocations; 4096 suits every device.
  for (uint64_t offset : {uint64_t{4032}, uint64_t{4096}}) {
    CAPTURE(offset);
    Opened o(opencl_bundle(offset, 64));
    REQUIRE(o.status == EDGERT_OK);
    Context c(o.bundle);
    INFO(c.error);
    REQUIRE(c.status == EDGERT_OK);
    CHECK(run_once(c.ctx, x) == expected_y(x));
    const uint64_t bytes = c.stats().buffer_bytes;
    CHECK((bytes == offset + 4096 + 8016 || bytes == 4000 + 4000 + 8016));
  }
}

TEST_CASE("opencl: a copy between overlapping arena buffers moves the bytes like memmove") {
  if (!have_device()) return;
  BundleDesc d = opencl_base(kSource);
  // a = x + 1 at arena 0; b at 256 overlaps it; Copy a -> b; y = b + 1.
  d.buffers = {buffer("x", BufferKind::Input, {kN}, 0, 0, 0), buffer("y", BufferKind::Output, {kN}, 0, 0, 0),
               buffer("a", BufferKind::Arena, {kN}, 0), buffer("b", BufferKind::Arena, {kN}, 256)};
  d.inputs = {TensorDesc{"x", DType::F32, {kN}, 0}};
  d.outputs = {TensorDesc{"y", DType::F32, {kN}, 1}};
  d.kernels = {kernel("add1", 2, 1000)};
  d.commands = {command(CommandKind::Launch, {2, 0}, 0), command(CommandKind::Copy, {2, 3}),
                command(CommandKind::Launch, {1, 3}, 0)};
  d.arena_size = 4352;
  Opened o(d);
  REQUIRE(o.status == EDGERT_OK);
  Context c(o.bundle);
  INFO(c.error);
  REQUIRE(c.status == EDGERT_OK);
  const std::vector<float> x = input_values();
  std::vector<float> want(kN);
  for (int i = 0; i < kN; ++i) want[i] = x[i] + 2.0f;
  CHECK(run_once(c.ctx, x) == want);
  CHECK(run_once(c.ctx, x) == want);
}

TEST_CASE("opencl: Image2D buffers: kernels write and read images, copies to and from them") {
  if (!have_device()) return;
  BundleDesc d = opencl_base(kImageSource);
  auto image = [](BufferDesc b) {
    b.memory = MemorySpace::Image2D;
    b.image_width = 64;  // 256 texels of 4 floats hold the 1000 elements
    b.image_height = 4;
    return b;
  };
  // img = x (to_image); y = img (from_image); y2 (an Image2D output) = img; y3 = img (Copy).
  // x5 (998 floats: the last texel half used) -> img5 -> y5, both copies through scratch.
  // x6 (an Image2D input) -> from_image -> y6.
  constexpr int kOdd = 998;
  d.buffers = {buffer("x", BufferKind::Input, {kN}, 0, 0, 0),
               buffer("y", BufferKind::Output, {kN}, 0, 0, 0),
               image(buffer("img", BufferKind::Arena, {kN}, 0)),
               image(buffer("y2", BufferKind::Output, {kN}, 0, 0, 1)),
               buffer("y3", BufferKind::Output, {kN}, 0, 0, 2),
               buffer("x5", BufferKind::Input, {kOdd}, 0, 0, 1),
               image(buffer("img5", BufferKind::Arena, {kOdd}, 4096)),
               buffer("y5", BufferKind::Output, {kOdd}, 0, 0, 3),
               image(buffer("x6", BufferKind::Input, {kN}, 0, 0, 2)),
               buffer("y6", BufferKind::Output, {kN}, 0, 0, 4)};
  d.inputs = {TensorDesc{"x", DType::F32, {kN}, 0}, TensorDesc{"x5", DType::F32, {kOdd}, 5},
              TensorDesc{"x6", DType::F32, {kN}, 8}};
  d.outputs = {TensorDesc{"y", DType::F32, {kN}, 1}, TensorDesc{"y2", DType::F32, {kN}, 3},
               TensorDesc{"y3", DType::F32, {kN}, 4}, TensorDesc{"y5", DType::F32, {kOdd}, 7},
               TensorDesc{"y6", DType::F32, {kN}, 9}};
  d.kernels = {kernel("to_image", 2, 256, 64), kernel("from_image", 2, 256)};
  d.commands = {command(CommandKind::Launch, {2, 0}, 0), command(CommandKind::Launch, {1, 2}, 1),
                command(CommandKind::Copy, {2, 3}),      command(CommandKind::Copy, {2, 4}),
                command(CommandKind::Copy, {5, 6}),      command(CommandKind::Copy, {6, 7}),
                command(CommandKind::Launch, {9, 8}, 1)};
  d.arena_size = 8192;
  Opened o(d);
  REQUIRE(o.status == EDGERT_OK);
  Context c(o.bundle);
  if (c.status != EDGERT_OK && contains(c.error.c_str(), "no image support")) {
    MESSAGE("skipping: " << c.error);
    return;
  }
  INFO(c.error);
  REQUIRE(c.status == EDGERT_OK);
  const std::vector<float> x = input_values();
  const std::vector<float> x5(x.begin(), x.begin() + kOdd);
  std::vector<float> y(kN), y2(kN), y3(kN), y5(kOdd), y6(kN);
  REQUIRE(edgert_bind_input(c.ctx, 0, x.data(), 4 * kN) == EDGERT_OK);
  REQUIRE(edgert_bind_input(c.ctx, 1, x5.data(), 4 * kOdd) == EDGERT_OK);
  REQUIRE(edgert_bind_input(c.ctx, 2, x.data(), 4 * kN) == EDGERT_OK);
  REQUIRE(edgert_bind_output(c.ctx, 0, y.data(), 4 * kN) == EDGERT_OK);
  REQUIRE(edgert_bind_output(c.ctx, 1, y2.data(), 4 * kN) == EDGERT_OK);
  REQUIRE(edgert_bind_output(c.ctx, 2, y3.data(), 4 * kN) == EDGERT_OK);
  REQUIRE(edgert_bind_output(c.ctx, 3, y5.data(), 4 * kOdd) == EDGERT_OK);
  REQUIRE(edgert_bind_output(c.ctx, 4, y6.data(), 4 * kN) == EDGERT_OK);
  for (int r = 0; r < 2; ++r) {
    const edgert_status st = edgert_run(c.ctx);
    INFO(std::string(edgert_last_error()));
    REQUIRE(st == EDGERT_OK);
    CHECK(y == x);
    CHECK(y2 == x);
    CHECK(y3 == x);
    CHECK(y5 == x5);
    CHECK(y6 == x);
  }
  // Four images of 64x4 RGBA f32 texels (img, y2, img5 and x6), each 4096 bytes.
  CHECK(c.stats().image_bytes == 4 * 4096);
}

TEST_CASE("opencl: edgert_run and edgert_bind_* make no heap allocation (the driver's aside)") {
  if (!have_device() || !allocation_counting_works()) return;
  {
    // Control: an allocation by code linked into this binary (as the runtime is) counts.
    void* (*volatile m)(size_t) = std::malloc;  // volatile: the call cannot be elided
    start_counting_allocations(/*ignore_loaded_libraries=*/true);
    std::free(m(16));
    REQUIRE(stop_counting_allocations() == 1);
  }
  Opened o(opencl_bundle());
  REQUIRE(o.status == EDGERT_OK);
  Context c(o.bundle);
  INFO(c.error);
  REQUIRE(c.status == EDGERT_OK);
  const std::vector<float> x = input_values();
  std::vector<float> y(kN);
  REQUIRE(edgert_bind_input(c.ctx, 0, x.data(), 4 * kN) == EDGERT_OK);
  REQUIRE(edgert_bind_output(c.ctx, 0, y.data(), 4 * kN) == EDGERT_OK);
  REQUIRE(edgert_run(c.ctx) == EDGERT_OK);  // the driver's first-run work is not ours to judge
  start_counting_allocations(/*ignore_loaded_libraries=*/true);
  REQUIRE(edgert_bind_input(c.ctx, 0, x.data(), 4 * kN) == EDGERT_OK);
  REQUIRE(edgert_bind_output(c.ctx, 0, y.data(), 4 * kN) == EDGERT_OK);
  for (int i = 0; i < 50; ++i) CHECK(edgert_run(c.ctx) == EDGERT_OK);
  // With profiling: events are requested and released every run.
  REQUIRE(edgert_context_set_profiling(c.ctx, 1) == EDGERT_OK);
  for (int i = 0; i < 10; ++i) CHECK(edgert_run(c.ctx) == EDGERT_OK);
  const long count = stop_counting_allocations();
  MESSAGE("60 runs: " << count << " allocations by the runtime, " << ignored_allocations()
                      << " by the OpenCL driver (not counted)");
  CHECK(count == 0);
  CHECK(y == expected_y(x));
}

TEST_CASE("prepare: a cpu bundle has nothing to prepare") {
  TempFile in("cpu.bundle"), out("cpu_out.bundle");
  write_file(in.path, serialize_bundle(copy_bundle()));
  const edgert_context_options o = options_with(0);
  CHECK(edgert_prepare(in.path.c_str(), out.path.c_str(), &o) == EDGERT_ERROR_INVALID_ARGUMENT);
  CHECK(contains(edgert_last_error(), "the cpu port has nothing to prepare"));
  CHECK(access(out.path.c_str(), F_OK) != 0);
  CHECK(edgert_prepare((in.path + ".missing").c_str(), out.path.c_str(), &o) == EDGERT_ERROR_IO);
}

TEST_CASE("opencl: a bundle prepared on PoCL is refused on rusticl") {
  if (!have_device()) return;
  TempFile in("pocl_in.bundle"), out("pocl_out.bundle");
  {
    ScopedEnv platform("EDGERT_OPENCL_PLATFORM", "Portable");
    write_file(in.path, serialize_bundle(opencl_bundle()));
    const edgert_context_options o = options_with(0);
    if (edgert_prepare(in.path.c_str(), out.path.c_str(), &o) != EDGERT_OK) {
      MESSAGE("skipping: no PoCL device: " << edgert_last_error());
      return;
    }
  }
  ScopedEnv platform("EDGERT_OPENCL_PLATFORM", "rusticl");
  OpenedFile b(out.path);
  REQUIRE(b.status == EDGERT_OK);
  Context c(b.bundle, /*allow_source_build=*/0);
  if (c.status != EDGERT_OK && contains(c.error.c_str(), "no OpenCL device")) {
    MESSAGE("skipping: no rusticl device (RUSTICL_ENABLE=llvmpipe enables one): " << c.error);
    return;
  }
  CHECK(c.status == EDGERT_ERROR_UNSUPPORTED);
  CHECK(contains(c.error.c_str(), "prepared for Portable Computing Language"));
  CHECK(contains(c.error.c_str(), "this is rusticl"));
}
