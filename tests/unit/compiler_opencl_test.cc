// OpenCL C back end: the programs it renders pass clang's OpenCL C 1.2 front end (when
// clang-19 is installed), launch plans are valid NDRanges, entry names are unique
// identifiers, and unsupported ops are refused by name. Numerics are checked against
// onnxruntime by the opencl e2e suites, which need an OpenCL device.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <set>
#include <string>

#include "codegen/backend.h"
#include "codegen/kernel_ir.h"
#include "graph/graph.h"
#include "schedule/schedule.h"

using namespace edgec;

namespace {

Node* random_weight(Graph& g, DType t, const Shape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> dist;
  std::vector<double> v(static_cast<size_t>(numel(shape)));
  for (double& x : v) x = dist(rng);
  return g.weight(HostTensor::from_doubles(t, shape, v));
}

// conv 3x3 (pad 1) + bias + relu, then a 2x2 max pool: the shape of a CNN's first layers.
// The conv's output (1, 8, n, n) is an intermediate: the pool reads it through a window.
void build_conv(Graph& g, DType t, int64_t n = 9) {
  Node* x = g.input("x", t, {1, 3, n, n});
  Node* w = random_weight(g, t, {8, 3, 3, 3}, 1);
  Node* bias = random_weight(g, t, {8, 1, 1}, 2);
  Node* win = g.window(g.pad(x, {0, 0, 1, 1}, {0, 0, 1, 1}), {3, 3}, {1, 1}, {1, 1});
  Node* xv = g.expand(g.reshape(win, {1, 1, 3, n, n, 3, 3}), {1, 8, 3, n, n, 3, 3});
  Node* wv = g.expand(g.reshape(w, {1, 8, 3, 1, 1, 3, 3}), {1, 8, 3, n, n, 3, 3});
  Node* conv = g.reshape(g.reduce(Op::ReduceSum, g.binary(Op::Mul, xv, wv), {2, 5, 6}), {1, 8, n, n});
  Node* y = g.binary(Op::Max, g.binary(Op::Add, conv, bias), g.constant(0.0, t));
  Node* pool = g.reduce(Op::ReduceMax, g.window(y, {2, 2}, {2, 2}, {1, 1}), {4, 5});
  pool = g.reshape(pool, {1, 8, n / 2, n / 2});
  g.add_output("y", pool);
}

// An elementwise chain with broadcasting and a transpose.
void build_elementwise(Graph& g, DType t) {
  Node* a = g.input("a", t, {4, 37});
  Node* b = g.input("b", t, {37});
  Node* e = g.unary(Op::Tanh, g.binary(Op::Mul, g.binary(Op::Sub, a, b), g.constant(0.5, t)));
  g.add_output("y", g.permute(g.binary(Op::Add, e, g.unary(Op::Exp, a)), {1, 0}));
}

// Every kind of value the renderer handles: integer division, casts, Pow, Where, Gather,
// comparisons, logic, an integer max reduction, and NaN-aware float min / max.
void build_mixed(Graph& g) {
  Node* x = g.input("x", DType::F32, {6, 10});
  Node* i = g.input("i", DType::I32, {6, 10});
  Node* j = g.input("j", DType::I64, {6, 4});
  Node* q = g.binary(Op::Div, i, g.binary(Op::Sub, i, g.constant(3, DType::I32)));
  Node* r = g.binary(Op::Mod, g.cast(i, DType::I8), g.constant(-3, DType::I8));
  Node* p = g.binary(Op::Pow, x, g.cast(i, DType::F32));
  Node* lt = g.binary(Op::CmpLt, x, g.constant(0.25, DType::F32));
  Node* c = g.binary(Op::And, lt, g.unary(Op::Not, g.binary(Op::CmpEq, i, g.constant(2, DType::I32))));
  Node* w = g.where(c, g.binary(Op::Min, p, x), g.unary(Op::Round, x));
  g.add_output("w", g.binary(Op::Max, w, g.cast(q, DType::F32)));
  g.add_output("r", g.cast(r, DType::U16));
  g.add_output("h", g.cast(g.binary(Op::Mod, x, g.constant(0.75, DType::F32)), DType::F16));
  g.add_output("m", g.reduce(Op::ReduceMax, g.cast(x, DType::I64), {1}));
  g.add_output("s", g.reduce(Op::ReduceSum, g.cast(c, DType::I16), {0}));
  g.add_output("gather", g.gather(g.unary(Op::Exp, x), j, 1));
  g.add_output("d", g.cast(g.unary(Op::Sqrt, g.cast(x, DType::F64)), DType::U8));
}

std::vector<KernelIR> kernels_of(const Graph& g, const Schedule& s) {
  std::vector<KernelIR> ks;
  for (const ScheduledKernel& k : s.kernels) ks.push_back(build_kernel_ir(s, k));
  return ks;
}

bool have_clang() { return std::system("command -v clang-19 > /dev/null 2>&1") == 0; }

// clang-19's OpenCL C 1.2 front end (parse + semantic analysis) accepts the program.
void check_clang_accepts(const GeneratedCode& code, const std::string& name, const std::string& extensions) {
  if (!have_clang()) {
    MESSAGE("clang-19 not found: OpenCL C syntax not checked");
    return;
  }
  auto dir = std::filesystem::temp_directory_path() / "edgec_opencl_test";
  std::filesystem::create_directories(dir);
  auto path = dir / (name + ".cl");
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(code.bytes.data()),
                                              static_cast<std::streamsize>(code.bytes.size()));
  std::string cmd = "clang-19 -x cl -cl-std=CL1.2 -fsyntax-only -Werror=implicit-function-declaration "
                    "-Xclang -finclude-default-header " + extensions + " " + path.string() + " 2> " +
                    (dir / (name + ".log")).string();
  int rc = std::system(cmd.c_str());
  std::ifstream log(dir / (name + ".log"));
  std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  INFO(name << ": " << text);
  CHECK(rc == 0);
}

GeneratedCode generate(const std::string& target, std::vector<KernelIR>& ks, const std::string& dump = "") {
  CodegenOptions opt;
  opt.dump_source = dump;
  return make_backend(target_by_name(target))->generate(ks, opt);
}

std::string source_of(const GeneratedCode& code) { return std::string(code.bytes.begin(), code.bytes.end()); }

void check_launch(const KernelIR& k) {
  const LaunchPlan& p = k.launch;
  REQUIRE(!p.global_size.empty());
  CHECK(p.global_size.size() <= 3);
  REQUIRE(p.local_size.size() == p.global_size.size());
  uint64_t group = 1;
  for (size_t d = 0; d < p.global_size.size(); ++d) {
    CHECK(p.local_size[d] >= 1);
    CHECK(p.global_size[d] % p.local_size[d] == 0);
    CHECK(p.global_size[d] < (uint64_t{1} << 32));
    group *= p.local_size[d];
  }
  CHECK(group <= 64);
  CHECK(p.parallel_dim < static_cast<int>(k.out_shape.size()));
  if (p.parallel_dim >= 0) CHECK(k.out_shape[p.parallel_dim] > 1);
  // Enough work-items for every output.
  uint64_t items = 1;
  for (uint64_t g : p.global_size) items *= g;
  CHECK(items * 16 >= static_cast<uint64_t>(numel(k.out_shape)));
}

}  // namespace

TEST_CASE("opencl: a conv and an elementwise graph render to OpenCL C 1.2") {
  for (const std::string target : {"opencl", "opencl-image"}) {
    for (int which = 0; which < 2; ++which) {
      Graph g;
      if (which == 0) build_conv(g, DType::F32);
      else build_elementwise(g, DType::F32);
      Schedule s = schedule_graph(g);
      std::vector<KernelIR> ks = kernels_of(g, s);
      GeneratedCode code = generate(target, ks);
      CHECK(code.format == 2);
      CHECK(code.alignment == 64);
      REQUIRE(code.entry_names.size() == ks.size());
      CHECK(code.required_features.empty());
      std::string src = source_of(code);
      CHECK(src.find('\0') == std::string::npos);
      CHECK(src.find("printf") == std::string::npos);
      for (const std::string& e : code.entry_names)
        CHECK(src.find("__kernel void " + e + "(") != std::string::npos);
      for (const KernelIR& k : ks) check_launch(k);
      check_clang_accepts(code, target + (which ? "_elementwise" : "_conv"), "");
    }
  }
}

TEST_CASE("opencl: the conv shares its input window across output channels") {
  Graph g;
  build_conv(g, DType::F32);
  Schedule s = schedule_graph(g);
  std::vector<KernelIR> ks = kernels_of(g, s);
  GeneratedCode code = generate("opencl", ks);
  const KernelIR& conv = ks.at(0);
  REQUIRE(conv.has_reduce());
  // Output (1, 8, 9, 9): 9 columns -> 2 lanes per work-item (4 would waste 3 of 12), 8
  // channels -> 4 per work-item, rows in global dim 2.
  REQUIRE(conv.launch.global_size.size() == 3);
  CHECK(conv.launch.parallel_dim == 3);
  std::string src = source_of(code);
  auto start = src.find("__kernel void " + code.entry_names[0]);
  auto end = src.find("__kernel", start + 1);
  std::string body = src.substr(start, end - start);
  // 2 x 4 accumulators; one input load per lane and one weight load per channel each step.
  CHECK(body.find("acc3_1") != std::string::npos);
  CHECK(body.find("acc4_0") == std::string::npos);
  size_t loads = 0;
  for (size_t at = body.find("= p"); at != std::string::npos; at = body.find("= p", at + 1)) ++loads;
  CHECK(loads == 2 + 4 + 4);  // input lanes, weight per channel, bias per channel after the loop
}

TEST_CASE("opencl: a product with a transposed weight loads 4 reduce steps at once") {
  Graph g;
  Node* a = g.input("a", DType::F32, {5, 64});
  Node* w = random_weight(g, DType::F32, {30, 64}, 3);
  Node* prod = g.binary(Op::Mul, g.reshape(a, {5, 1, 64}), g.reshape(w, {1, 30, 64}));
  g.add_output("y", g.reduce(Op::ReduceSum, prod, {2}));
  Schedule s = schedule_graph(g);
  std::vector<KernelIR> ks = kernels_of(g, s);
  REQUIRE(ks.size() == 1);
  GeneratedCode code = generate("opencl", ks);
  std::string src = source_of(code);
  CHECK(src.find("r0 += 4)") != std::string::npos);
  CHECK(src.find("vload4(0, p1 + (") != std::string::npos);
  CHECK(src.find("vload4(0, p2 + (") != std::string::npos);
  check_launch(ks[0]);
  check_clang_accepts(code, "transposed_weight", "");
}

TEST_CASE("opencl: every value kind renders; F64 asks for cl_khr_fp64") {
  Graph g;
  build_mixed(g);
  Schedule s = schedule_graph(g, ScheduleOptions{false});
  std::vector<KernelIR> ks = kernels_of(g, s);
  auto dump = std::filesystem::temp_directory_path() / "edgec_opencl_test_mixed.cl";
  std::filesystem::remove(dump);
  GeneratedCode code = generate("opencl", ks, dump.string());
  std::string src = source_of(code);
  CHECK(std::filesystem::exists(dump));
  CHECK(std::filesystem::file_size(dump) == src.size());
  CHECK(code.required_features == std::vector<std::string>{"cl_khr_fp64"});
  CHECK(src.find("#pragma OPENCL EXTENSION cl_khr_fp64 : enable") != std::string::npos);
  CHECK(src.find("vstore_half_rte") != std::string::npos);  // the F16 output
  CHECK(src.find("edge_div_int") != std::string::npos);
  CHECK(src.find("edge_pow_float") != std::string::npos);
  // Helpers are defined once.
  CHECK(src.find("float edge_pow_float(") == src.rfind("float edge_pow_float("));
  for (const KernelIR& k : ks) check_launch(k);
  check_clang_accepts(code, "mixed", "-Xclang -cl-ext=+cl_khr_fp64");
}

TEST_CASE("opencl: F16 stores half, computes in float, or in half on opencl-adreno630") {
  for (const std::string target : {"opencl", "opencl-adreno630"}) {
    for (int which = 0; which < 3; ++which) {
      Graph g;
      if (which == 0) build_conv(g, DType::F16);
      else if (which == 1) build_elementwise(g, DType::F16);
      else build_mixed(g);
      ScheduleOptions so;
      so.f16_intermediates_in_f32 = false;  // what every OpenCL target does
      Schedule s = schedule_graph(g, so);
      std::vector<KernelIR> ks = kernels_of(g, s);
      GeneratedCode code = generate(target, ks);
      std::string src = source_of(code);
      bool half = target == "opencl-adreno630";
      CHECK((src.find("#pragma OPENCL EXTENSION cl_khr_fp16 : enable") != std::string::npos) == half);
      if (which < 2) {
        CHECK(src.find("__global const half* restrict") != std::string::npos);
        // Without cl_khr_fp16 no half value exists, only half pointers.
        CHECK((src.find("const half v") != std::string::npos) == half);
        if (which == 0) CHECK(src.find("float acc") != std::string::npos);  // float accumulators
      }
      for (const KernelIR& k : ks) check_launch(k);
      std::string ext = half ? "-Xclang -cl-ext=+cl_khr_fp16 " : "";
      ext += "-Xclang -cl-ext=+cl_khr_fp64";
      check_clang_accepts(code, target + "_f16_" + std::to_string(which), ext);
    }
  }
}

TEST_CASE("opencl: entry names are valid, unique C identifiers") {
  Graph g;
  build_elementwise(g, DType::F32);
  Schedule s = schedule_graph(g);
  std::vector<KernelIR> base = kernels_of(g, s);
  REQUIRE(base.size() == 1);
  std::vector<KernelIR> ks;
  for (const char* name : {"k0_y", "k0_y", "3x-bad name", "exp", "kernel", "", "k_exp", "k12"}) {
    ks.push_back(build_kernel_ir(s, s.kernels[0]));
    ks.back().name = name;
  }
  GeneratedCode code = generate("opencl", ks);
  REQUIRE(code.entry_names.size() == ks.size());
  CHECK(code.entry_names[0] == "k0_y");  // the scheduler's names stay as they are
  std::set<std::string> seen;
  std::regex ident("[A-Za-z_][A-Za-z0-9_]*");
  std::string src = source_of(code);
  for (const std::string& e : code.entry_names) {
    CHECK(std::regex_match(e, ident));
    CHECK(e.rfind("__", 0) != 0);
    CHECK(e != "exp");
    CHECK(e != "kernel");
    CHECK(seen.insert(e).second);
    CHECK(src.find("__kernel void " + e + "(") != std::string::npos);
  }
  check_clang_accepts(code, "names", "");
}

TEST_CASE("opencl: launch plans for tiny, ragged and large outputs") {
  for (const Shape& shape : {Shape{1}, Shape{1, 1, 1}, Shape{3}, Shape{7, 5}, Shape{2, 3, 5, 7, 11},
                             Shape{1, 64, 56, 56}, Shape{100003}}) {
    Graph g;
    Node* x = g.input("x", DType::F32, shape);
    g.add_output("y", g.unary(Op::Neg, x));
    Schedule s = schedule_graph(g);
    std::vector<KernelIR> ks = kernels_of(g, s);
    generate("opencl", ks);
    for (const KernelIR& k : ks) {
      INFO(shape_str(shape));
      check_launch(k);
    }
  }
}

TEST_CASE("opencl: indices past 2^30 compute in long") {
  Graph g;
  Node* x = g.input("x", DType::F32, {3, (int64_t{1} << 30) + 7});
  Node* i = g.input("i", DType::I32, {3, 5});
  Node* sum = g.reduce(Op::ReduceSum, g.pad(x, {0, 2}, {0, 2}), {1});
  g.add_output("y", g.binary(Op::Add, sum, g.reduce(Op::ReduceMax, g.gather(x, i, 1), {1})));
  Schedule s = schedule_graph(g);
  std::vector<KernelIR> ks = kernels_of(g, s);
  GeneratedCode code = generate("opencl", ks);
  std::string src = source_of(code);
  CHECK(src.find("const long t0 = (long)get_global_id(0);") != std::string::npos);
  CHECK(src.find("const int t0") == std::string::npos);
  for (const KernelIR& k : ks) check_launch(k);
  check_clang_accepts(code, "long_indices", "");
}

TEST_CASE("opencl: an op the renderer cannot compute is refused by name") {
  KernelIR k;
  k.name = "k0_bad";
  k.out_shape = {4};
  k.out_dtype = DType::I32;
  k.args = {{0, DType::I32, 4}, {1, DType::I32, 4}};
  auto load = std::make_unique<Value>(Value::Kind::Load);
  load->dtype = DType::I32;
  load->arg = 1;
  load->index = Index::var(0, 4);
  auto exp = std::make_unique<Value>(Value::Kind::Alu);
  exp->op = Op::Exp;
  exp->dtype = DType::I32;
  exp->srcs = {load.get()};
  k.result = exp.get();
  k.values.push_back(std::move(load));
  k.values.push_back(std::move(exp));
  std::vector<KernelIR> ks;
  ks.push_back(std::move(k));
  try {
    generate("opencl", ks);
    FAIL("no error");
  } catch (const CompileError& e) {
    std::string what = e.what();
    CHECK(what.find("Exp") != std::string::npos);
    CHECK(what.find(dtype_name(DType::I32)) != std::string::npos);
  }
}

namespace {

// The images a back end chose, each checked against its buffer: not an input or output,
// float, enough texels, bytes of the padded image, row pitch a multiple of `pitch`.
void check_images(const GeneratedCode& code, const Schedule& s, int pitch) {
  for (const auto& [b, im] : code.images) {
    REQUIRE(b >= 0);
    REQUIRE(b < static_cast<int>(s.buffers.size()));
    const ScheduledBuffer& buf = s.buffers[b];
    INFO(buf.name << " " << shape_str(buf.shape) << ": " << im.width << " x " << im.height);
    CHECK((buf.role == BufferRole::Weight || buf.role == BufferRole::Intermediate));
    CHECK((buf.storage == DType::F32 || buf.storage == DType::F16));
    if (buf.role == BufferRole::Intermediate) CHECK(buf.shape.back() % 4 == 0);
    CHECK(im.width >= 1);
    CHECK(im.height >= 1);
    CHECK(im.width <= 16384);
    CHECK(im.height <= 16384);
    CHECK(uint64_t{im.width} * im.height * 4 >= static_cast<uint64_t>(numel(buf.shape)));
    const uint64_t elements = static_cast<uint64_t>(numel(buf.shape));
    CHECK(uint64_t{im.width} * im.height * 4 < elements + 4 * uint64_t{im.width});  // padding < a row
    const uint64_t texel = 4 * dtype_size(buf.storage);
    CHECK(im.bytes == uint64_t{im.width} * im.height * texel);
    if (pitch > 0) CHECK(im.width * texel % pitch == 0);
  }
}

// The graph scheduled, lowered and generated for an image target, its images checked.
struct ImageCode {
  Schedule s;
  std::vector<KernelIR> ks;
  GeneratedCode code;
};
ImageCode image_code(const Graph& g, const std::string& target, const ScheduleOptions& options = {}, int pitch = 0) {
  ImageCode c;
  c.s = schedule_graph(g, options);
  c.ks = kernels_of(g, c.s);
  c.code = generate(target, c.ks);
  check_images(c.code, c.s, pitch);
  return c;
}

int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string kernel_body(const std::string& src, const std::string& entry) {
  auto start = src.find("__kernel void " + entry + "(");
  auto end = src.find("__kernel", start + 1);
  return src.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

}  // namespace

TEST_CASE("opencl-image: a conv keeps its weights and its output in images") {
  Graph g;
  build_conv(g, DType::F32, 8);
  auto [s, ks, code] = image_code(g, "opencl-image");
  int weights = 0, intermediates = 0;
  for (size_t b = 0; b < s.buffers.size(); ++b) {
    const ScheduledBuffer& buf = s.buffers[b];
    const bool image = code.images.count(static_cast<int>(b)) > 0;
    INFO(buf.name);
    if (buf.role == BufferRole::Weight) CHECK(image);
    if (buf.role == BufferRole::Input || buf.role == BufferRole::Output) CHECK(!image);
    weights += buf.role == BufferRole::Weight && image;
    intermediates += buf.role == BufferRole::Intermediate && image;
  }
  CHECK(weights == 2);
  CHECK(intermediates == 1);  // the conv's (1, 8, 8, 8)
  // The 8 x 3 x 3 x 3 weight: 54 texels in one row.
  for (const auto& [b, im] : code.images)
    if (numel(s.buffers[b].shape) == 216) CHECK((im.width == 54 && im.height == 1));
  std::string src = source_of(code);
  CHECK(src.find("__write_only image2d_t p0") != std::string::npos);
  CHECK(src.find("__read_only image2d_t p") != std::string::npos);
  CHECK(src.find("read_imagef(") != std::string::npos);
  CHECK(src.find("write_imagef(p0, ") != std::string::npos);
  CHECK(count_of(src, "__constant sampler_t") == 1);
  // The conv writes whole texels: 4 lanes along its innermost dim.
  REQUIRE(ks.size() == 2);
  CHECK(ks[0].launch.parallel_dim == 3);
  CHECK(ks[0].launch.global_size[0] == 2);
  // Its bias: one texel for the 4 output channels of a tile.
  CHECK(kernel_body(src, code.entry_names[0]).find(".s3") != std::string::npos);
  for (const KernelIR& k : ks) check_launch(k);
  check_clang_accepts(code, "image_conv", "");
}

TEST_CASE("opencl-image: an intermediate whose innermost dim is 7 stays a buffer") {
  Graph g;
  build_conv(g, DType::F32, 7);
  auto [s, ks, code] = image_code(g, "opencl-image");
  for (size_t b = 0; b < s.buffers.size(); ++b) {
    INFO(s.buffers[b].name);
    CHECK(code.images.count(static_cast<int>(b)) == (s.buffers[b].role == BufferRole::Weight ? 1u : 0u));
  }
  std::string src = source_of(code);
  CHECK(src.find("__write_only") == std::string::npos);
  CHECK(src.find("__global float* restrict p0") != std::string::npos);
  check_clang_accepts(code, "image_conv7", "");
}

TEST_CASE("opencl-image: a large intermediate is a 2-D image of whole tensor rows") {
  Graph g;
  Node* x = g.input("x", DType::F32, {1, 16, 64, 80});
  Node* w = random_weight(g, DType::F32, {16, 1, 1}, 4);
  Node* y = g.unary(Op::Exp, g.binary(Op::Mul, x, w));
  // A 3 x 3 max pool reads y through a window: y is realized.
  Node* pool = g.reduce(Op::ReduceMax, g.window(y, {3, 3}, {1, 1}, {1, 1}), {4, 5});
  g.add_output("z", g.reshape(pool, {1, 16, 62, 78}));
  auto [s, ks, code] = image_code(g, "opencl-image");
  bool found = false;
  for (const auto& [b, im] : code.images)
    if (s.buffers[b].role == BufferRole::Intermediate && numel(s.buffers[b].shape) == 16 * 64 * 80) {
      found = true;
      CHECK(im.width <= 8192);  // every OpenCL 1.2 device opens it
      CHECK(im.height > 1);
      CHECK(im.width % 20 == 0);  // whole rows of 80 elements
      CHECK(uint64_t{im.width} * im.height == 16 * 64 * 80 / 4);  // no padding
      CHECK(source_of(code).find(" % " + std::to_string(im.width) + ", ") != std::string::npos);
    }
  CHECK(found);
  for (const KernelIR& k : ks) check_launch(k);
  check_clang_accepts(code, "image_2d", "");
}

TEST_CASE("opencl-image: texel reads along a reduce loop, unaligned lanes and a gather") {
  Graph g;
  Node* a = g.input("a", DType::F32, {5, 64});
  Node* w = random_weight(g, DType::F32, {30, 64}, 3);
  Node* prod = g.binary(Op::Mul, g.reshape(a, {5, 1, 64}), g.reshape(w, {1, 30, 64}));
  g.add_output("y", g.reduce(Op::ReduceSum, prod, {2}));
  // Lanes 1..8 of each weight row: 4 lanes straddle two texels.
  Node* v = random_weight(g, DType::F32, {4, 10}, 5);
  g.add_output("s", g.binary(Op::Add, g.input("b", DType::F32, {4, 8}), g.shrink(v, {0, 1}, {4, 9})));
  // A data-dependent index: element by element.
  g.add_output("gather", g.gather(v, g.input("i", DType::I32, {4, 3}), 1));
  // Padded: the lanes' guards differ, yet the image is read unguarded (the Where discards
  // what the lanes past the edges read; the sampler makes it safe), 4 lanes at once.
  g.add_output("padded", g.binary(Op::Add, g.input("c", DType::F32, {4, 12}), g.pad(v, {0, 1}, {0, 1})));
  auto [s, ks, code] = image_code(g, "opencl-image");
  REQUIRE(ks.size() == 4);
  CHECK(code.images.size() == 2);
  std::string src = source_of(code);
  std::string product = kernel_body(src, code.entry_names[0]);
  CHECK(product.find("r0 += 4)") != std::string::npos);
  CHECK(product.find("vload4(0, p1 + (") != std::string::npos);
  CHECK(product.find("read_imagef(p2, ") != std::string::npos);
  CHECK(product.find("edge_channel") == std::string::npos);  // whole texels only
  CHECK(product.find("edge_join") == std::string::npos);
  CHECK(kernel_body(src, code.entry_names[1]).find("edge_join_float4(") != std::string::npos);
  CHECK(kernel_body(src, code.entry_names[2]).find("edge_channel_float(") != std::string::npos);
  std::string padded = kernel_body(src, code.entry_names[3]);
  CHECK(padded.find("edge_join_float4(") != std::string::npos);
  CHECK(count_of(padded, "read_imagef(") == 2);
  for (const KernelIR& k : ks) check_launch(k);
  check_clang_accepts(code, "image_reads", "");
}

TEST_CASE("opencl-adreno630: half images with 64-byte row pitches") {
  for (DType t : {DType::F16, DType::F32}) {
    Graph g;
    build_conv(g, t, 12);
    ScheduleOptions so;
    so.f16_intermediates_in_f32 = false;
    INFO(dtype_name(t));
    auto [s, ks, code] = image_code(g, "opencl-adreno630", so, 64);
    CHECK(code.images.size() == 3);
    std::string src = source_of(code);
    const bool half = t == DType::F16;
    CHECK((src.find("read_imageh(") != std::string::npos) == half);
    CHECK((src.find("write_imageh(p0, ") != std::string::npos) == half);
    CHECK((src.find("read_imagef(") != std::string::npos) == !half);
    for (const KernelIR& k : ks) check_launch(k);
    check_clang_accepts(code, std::string("a630_images_") + dtype_name(t), "-Xclang -cl-ext=+cl_khr_fp16");
  }
  // F16 images without half arithmetic: read_imagef, and writes rounded to nearest even.
  Graph g;
  build_conv(g, DType::F16, 8);
  ScheduleOptions so;
  so.f16_intermediates_in_f32 = false;
  auto [s, ks, code] = image_code(g, "opencl-image", so);
  CHECK(code.images.size() == 3);
  std::string src = source_of(code);
  CHECK(src.find("read_imageh") == std::string::npos);
  CHECK(src.find("write_imagef(p0, (int2)(") != std::string::npos);
  CHECK(src.find("edge_round_half4(") != std::string::npos);
  check_clang_accepts(code, "image_f16", "");
}
