// Contexts and runs: binding, replay, determinism, kernels with real machine code.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "runtime_test_util.h"

using namespace rt_test;

namespace {

struct Context {
  edgert_context* ctx = nullptr;
  edgert_status status;
  Context(const edgert_bundle* b, int32_t threads = 0) {
    edgert_context_options options = {};
    options.num_threads = threads;
    status = edgert_context_create(b, &options, &ctx);
  }
  ~Context() { edgert_context_destroy(ctx); }
};

}  // namespace

TEST_CASE("run: copy bundle gives the input and the weight back") {
  Opened o(copy_bundle());
  REQUIRE(o.status == EDGERT_OK);
  Context c(o.bundle);
  REQUIRE(c.status == EDGERT_OK);
  alignas(64) float x[4] = {1.5f, -2.0f, 3.25f, 1e-30f};
  alignas(64) float y[4] = {0, 0, 0, 0};
  alignas(64) float w[4] = {0, 0, 0, 0};
  REQUIRE(edgert_bind_input(c.ctx, 0, x, sizeof(x)) == EDGERT_OK);
  REQUIRE(edgert_bind_output(c.ctx, 0, y, sizeof(y)) == EDGERT_OK);
  REQUIRE(edgert_bind_output(c.ctx, 1, w, sizeof(w)) == EDGERT_OK);
  REQUIRE(edgert_run(c.ctx) == EDGERT_OK);
  CHECK(std::memcmp(x, y, sizeof(x)) == 0);
  CHECK(w[0] == 10.0f);
  CHECK(w[3] == 40.0f);

  // Rebinding takes effect on the next run; the old buffer is left alone.
  alignas(64) float x2[4] = {7, 8, 9, 10};
  alignas(64) float y2[4] = {0, 0, 0, 0};
  REQUIRE(edgert_bind_input(c.ctx, 0, x2, sizeof(x2)) == EDGERT_OK);
  REQUIRE(edgert_bind_output(c.ctx, 0, y2, sizeof(y2)) == EDGERT_OK);
  REQUIRE(edgert_run(c.ctx) == EDGERT_OK);
  CHECK(y2[0] == 7.0f);
  CHECK(y2[3] == 10.0f);
  CHECK(y[0] == 1.5f);
}

TEST_CASE("run: NOT_BOUND names the first unbound tensor") {
  Opened o(copy_bundle());
  REQUIRE(o.status == EDGERT_OK);
  Context c(o.bundle);
  REQUIRE(c.status == EDGERT_OK);
  CHECK(edgert_run(c.ctx) == EDGERT_ERROR_NOT_BOUND);
  CHECK(contains(edgert_last_error(), "input 0 (x)"));
  alignas(64) float buf[3][4] = {};
  REQUIRE(edgert_bind_input(c.ctx, 0, buf[0], 16) == EDGERT_OK);
  REQUIRE(edgert_bind_output(c.ctx, 0, buf[1], 16) == EDGERT_OK);
  CHECK(edgert_run(c.ctx) == EDGERT_ERROR_NOT_BOUND);
  CHECK(contains(edgert_last_error(), "output 1 (w_out)"));
  REQUIRE(edgert_bind_output(c.ctx, 1, buf[2], 16) == EDGERT_OK);
  CHECK(edgert_run(c.ctx) == EDGERT_OK);
}

TEST_CASE("run: bind checks index, size, pointer and alignment") {
  Opened o(copy_bundle());
  REQUIRE(o.status == EDGERT_OK);
  Context c(o.bundle);
  REQUIRE(c.status == EDGERT_OK);
  alignas(64) uint8_t buf[80] = {};
  CHECK(edgert_bind_input(c.ctx, 0, buf, 12) == EDGERT_ERROR_INVALID_ARGUMENT);
  CHECK(contains(edgert_last_error(), "bound 12 bytes, expected 16"));
  CHECK(edgert_bind_output(c.ctx, 1, buf, 64) == EDGERT_ERROR_INVALID_ARGUMENT);
  CHECK(edgert_bind_input(c.ctx, 1, buf, 16) == EDGERT_ERROR_INVALID_ARGUMENT);
  CHECK(contains(edgert_last_error(), "input index 1 out of range"));
  CHECK(edgert_bind_output(c.ctx, -1, buf, 16) == EDGERT_ERROR_INVALID_ARGUMENT);
  CHECK(edgert_bind_input(c.ctx, 0, nullptr, 16) == EDGERT_ERROR_INVALID_ARGUMENT);
  CHECK(edgert_bind_input(c.ctx, 0, buf + 2, 16) == EDGERT_ERROR_INVALID_ARGUMENT);
  CHECK(contains(edgert_last_error(), "element size 4"));
  CHECK(edgert_bind_input(c.ctx, 0, buf + 4, 16) == EDGERT_OK);  // element alignment suffices
  CHECK(edgert_bind_input(nullptr, 0, buf, 16) == EDGERT_ERROR_INVALID_ARGUMENT);
  CHECK(edgert_run(nullptr) == EDGERT_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("context: options and failures") {
  Opened o(copy_bundle());
  REQUIRE(o.status == EDGERT_OK);
  {
    Context c(o.bundle, -1);
    CHECK(c.status == EDGERT_ERROR_INVALID_ARGUMENT);
    CHECK(c.ctx == nullptr);
  }
  {
    Context c(o.bundle, 4);  // accepted; runs serially for now
    CHECK(c.status == EDGERT_OK);
  }
  edgert_context* ctx = nullptr;
  CHECK(edgert_context_create(o.bundle, nullptr, &ctx) == EDGERT_OK);  // null options: defaults
  edgert_context_destroy(ctx);
  CHECK(edgert_context_create(nullptr, nullptr, &ctx) == EDGERT_ERROR_INVALID_ARGUMENT);

  BundleDesc d = copy_bundle();
  d.arena_size = 1ull << 62;  // verifies, but cannot be allocated
  Opened huge(d);
  REQUIRE(huge.status == EDGERT_OK);
  Context c(huge.bundle);
  CHECK(c.status == EDGERT_ERROR_OUT_OF_MEMORY);
  CHECK(contains(edgert_last_error(), "arena"));
}

TEST_CASE("run: timestamps record the clock in queue order") {
  Opened o(copy_bundle());
  REQUIRE(o.status == EDGERT_OK);
  Context c(o.bundle);
  REQUIRE(c.status == EDGERT_OK);
  const uint64_t* ts = nullptr;
  int32_t n = -1;
  REQUIRE(edgert_context_timestamps(c.ctx, &ts, &n) == EDGERT_OK);
  REQUIRE(n == 2);
  CHECK(ts[0] == 0);
  alignas(64) float buf[3][4] = {};
  edgert_bind_input(c.ctx, 0, buf[0], 16);
  edgert_bind_output(c.ctx, 0, buf[1], 16);
  edgert_bind_output(c.ctx, 1, buf[2], 16);
  REQUIRE(edgert_run(c.ctx) == EDGERT_OK);
  CHECK(ts[0] > 0);
  CHECK(ts[1] >= ts[0]);
}

TEST_CASE("run: a bundle opened from a file (mmap) runs") {
  char path[] = "/tmp/edgert_run_XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  const std::vector<uint8_t> file = serialize_bundle(copy_bundle());
  REQUIRE(write(fd, file.data(), file.size()) == static_cast<ssize_t>(file.size()));
  close(fd);
  edgert_bundle* b = nullptr;
  REQUIRE(edgert_bundle_open(path, &b) == EDGERT_OK);
  std::remove(path);  // the mapping keeps the data
  {
    Context c(b);
    REQUIRE(c.status == EDGERT_OK);
    alignas(64) float x[4] = {1, 2, 3, 4}, y[4] = {}, w[4] = {};
    edgert_bind_input(c.ctx, 0, x, 16);
    edgert_bind_output(c.ctx, 0, y, 16);
    edgert_bind_output(c.ctx, 1, w, 16);
    REQUIRE(edgert_run(c.ctx) == EDGERT_OK);
    CHECK(y[2] == 3.0f);
    CHECK(w[1] == 20.0f);
  }
  edgert_bundle_close(b);
}

#if defined(EDGE_TEST_HAS_KERNELS)
TEST_CASE("run: machine-code kernel computes y = x + w, bit-identical every run") {
  Opened o(add_bundle());
  REQUIRE(o.status == EDGERT_OK);
  Context c(o.bundle);
  REQUIRE(c.status == EDGERT_OK);
  alignas(64) float x[4] = {1.0f, 2.0f, 3.0f, 0.1f};
  alignas(64) float y[4] = {}, w[4] = {}, first[4] = {};
  REQUIRE(edgert_bind_input(c.ctx, 0, x, 16) == EDGERT_OK);
  REQUIRE(edgert_bind_output(c.ctx, 0, y, 16) == EDGERT_OK);
  REQUIRE(edgert_bind_output(c.ctx, 1, w, 16) == EDGERT_OK);
  REQUIRE(edgert_run(c.ctx) == EDGERT_OK);
  CHECK(y[0] == 11.0f);
  CHECK(y[1] == 22.0f);
  CHECK(y[2] == 33.0f);
  CHECK(y[3] == 0.1f + 40.0f);
  std::memcpy(first, y, 16);
  for (int i = 0; i < 100; ++i) {
    std::memset(y, 0xff, 16);
    REQUIRE(edgert_run(c.ctx) == EDGERT_OK);
    REQUIRE(std::memcmp(first, y, 16) == 0);
  }

  // A second context on the same bundle has its own arena and gives the same bits.
  Context c2(o.bundle);
  REQUIRE(c2.status == EDGERT_OK);
  alignas(64) float y2[4] = {}, w2[4] = {};
  edgert_bind_input(c2.ctx, 0, x, 16);
  edgert_bind_output(c2.ctx, 0, y2, 16);
  edgert_bind_output(c2.ctx, 1, w2, 16);
  REQUIRE(edgert_run(c2.ctx) == EDGERT_OK);
  CHECK(std::memcmp(first, y2, 16) == 0);
}

TEST_CASE("trust: the contract in the code directory overrules a consistent lie in Kernel.args") {
  // Each lie is consistent within the FlatBuffer (commands agree with Kernel.args); the
  // contract the code directory holds (schema/code_directory.h) refuses it at open, without
  // running anything.
  BundleDesc d = add_bundle();
  d.kernels[0].args.resize(2);  // "takes 2 args": the code would read a third
  d.commands[0].args.resize(2);
  expect_error(d, EDGERT_ERROR_INVALID_BUNDLE, {"kernel 0 (add4): Kernel.args has 2 arguments", "takes 3"});
  d = add_bundle();
  d.kernels[0].args[2].extent = 4;  // would let a 4-byte buffer stand in for the 16 it reads
  expect_error(d, EDGERT_ERROR_INVALID_BUNDLE, {"Kernel.args[2] (Read F32 over 4 bytes) differs from the contract of its code"});
  d = add_bundle();
  d.kernels[0].args[0].access = ArgAccess::Read;  // the output called read-only
  d.commands.insert(d.commands.begin(), command(CommandKind::Copy, {0, 2}));  // so tmp is written first
  expect_error(d, EDGERT_ERROR_INVALID_BUNDLE, {"Kernel.args[0] (Read F32"});
}

TEST_CASE("run: kernels get core 0 of 1 and weights in place from the bundle") {
  // Kernel 0 writes {core_id, num_cores}; kernel 1 writes its args[1] pointer (the weight).
  BundleDesc d = copy_bundle();
  SectionData code;
  code.kind = SectionKind::Code;
  code.format = CodeFormat::MachineCode;
  KernelDesc cores;
  cores.name = "cores";
  cores.section = 1;
  cores.args = {ArgContractDesc{ArgAccess::Write, DType::I32, 8}};
  KernelDesc where = cores;
  where.name = "where";
  where.function = 1;
  where.args = {ArgContractDesc{ArgAccess::Write, DType::U32, 8}, ArgContractDesc{ArgAccess::Read, DType::F32, 0}};
  d.sections.push_back(machine_code({{cores_code(), cores.args}, {where_code(), where.args}}, ""));
  d.kernels = {cores, where};
  d.buffers.push_back(buffer("ids", BufferKind::Output, {2}, 0, 0, 2));
  d.buffers[5].dtype = DType::I32;
  d.buffers.push_back(buffer("addr", BufferKind::Output, {2}, 0, 0, 3));
  d.buffers[6].dtype = DType::U32;
  d.outputs.push_back(TensorDesc{"ids", DType::I32, {2}, 5});
  d.outputs.push_back(TensorDesc{"addr", DType::U32, {2}, 6});
  d.commands.push_back(command(CommandKind::Launch, {5}, 0));
  d.commands.push_back(command(CommandKind::Launch, {6, 3}, 1));

  Opened o(d);
  REQUIRE(o.status == EDGERT_OK);
  Context c(o.bundle, 4);
  REQUIRE(c.status == EDGERT_OK);
  alignas(64) float x[4] = {}, y[4] = {}, w[4] = {};
  alignas(64) int32_t ids[2] = {-1, -1};
  alignas(64) uint64_t addr = 0;
  edgert_bind_input(c.ctx, 0, x, 16);
  edgert_bind_output(c.ctx, 0, y, 16);
  edgert_bind_output(c.ctx, 1, w, 16);
  edgert_bind_output(c.ctx, 2, ids, 8);
  edgert_bind_output(c.ctx, 3, &addr, 8);
  REQUIRE(edgert_run(c.ctx) == EDGERT_OK);
  CHECK(ids[0] == 0);
  CHECK(ids[1] == 1);
  BundleHeader h;
  std::memcpy(&h, o.memory.data(), sizeof(h));
  const Section* weights = GetBundle(o.memory.data() + h.fb_offset)->sections()->Get(0);
  CHECK(addr == reinterpret_cast<uint64_t>(o.memory.data() + h.data_offset + weights->offset()));
}
#endif

TEST_CASE("run: profiling records one time per command, and names them") {
  Opened o(copy_bundle());
  REQUIRE(o.status == EDGERT_OK);
  const int32_t n = edgert_bundle_command_count(o.bundle);
  REQUIRE(n == static_cast<int32_t>(copy_bundle().commands.size()));
  edgert_command_info info;
  int copies = 0;
  for (int32_t i = 0; i < n; ++i) {
    REQUIRE(edgert_bundle_command_info(o.bundle, i, &info) == EDGERT_OK);
    CHECK(info.is_launch == 0);
    copies += std::string(info.name) == "copy";
  }
  CHECK(copies == 3);
  CHECK(edgert_bundle_command_info(o.bundle, n, &info) == EDGERT_ERROR_INVALID_ARGUMENT);

  Context c(o.bundle);
  REQUIRE(c.status == EDGERT_OK);
  alignas(64) float x[4] = {}, y[4] = {}, w[4] = {};
  edgert_bind_input(c.ctx, 0, x, 16);
  edgert_bind_output(c.ctx, 0, y, 16);
  edgert_bind_output(c.ctx, 1, w, 16);
  const uint64_t* ns = nullptr;
  int32_t count = -1;
  REQUIRE(edgert_run(c.ctx) == EDGERT_OK);
  REQUIRE(edgert_context_command_times(c.ctx, &ns, &count) == EDGERT_OK);
  REQUIRE(count == n);
  for (int32_t i = 0; i < n; ++i) CHECK(ns[i] == 0);  // not recorded while disabled
  REQUIRE(edgert_context_set_profiling(c.ctx, 1) == EDGERT_OK);
  REQUIRE(edgert_run(c.ctx) == EDGERT_OK);
  uint64_t total = 0;
  for (int32_t i = 0; i < n; ++i) total += ns[i];
  CHECK(total > 0);
}
