// schema/bundle_writer.h: desc_from_bundle is the inverse of serialize_bundle (edgert_prepare
// rewrites bundles through it, so a field it forgot would silently vanish from prepared bundles).
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "runtime_test_util.h"

using namespace rt_test;

namespace {

// The FlatBuffer root and data blob of a serialized bundle.
BundleDesc round_trip(const std::vector<uint8_t>& file) {
  BundleHeader h;
  REQUIRE(file.size() >= sizeof(h));
  std::memcpy(&h, file.data(), sizeof(h));
  return desc_from_bundle(GetBundle(file.data() + h.fb_offset), file.data() + h.data_offset);
}

// Every field of the schema set to something other than its default.
BundleDesc everything_bundle() {
  BundleDesc d = copy_bundle();
  d.producer = "edgec 9.9";
  d.source_model = "every_field.onnx";
  d.target.arch = Arch::OpenCL;
  d.target.cpu = "adreno630";
  d.target.features = {"cl_khr_fp16", "cl_khr_fp64"};
  d.target.port = "opencl";
  SectionData code;
  code.kind = SectionKind::Code;
  code.format = CodeFormat::OpenCLC;
  code.bytes = {'_', '_', 'k', 'e', 'r', 'n', 'e', 'l'};
  code.alignment = 4096;
  code.functions = {Function(0, 4), Function(4, 4)};  // (a MachineCode section's, in reality)
  SectionData binary;
  binary.kind = SectionKind::Code;
  binary.format = CodeFormat::OpenCLBinary;
  binary.source_section = 1;
  binary.bytes = std::vector<uint8_t>(100, 0xab);
  SectionData reference;
  reference.kind = SectionKind::ReferenceIO;
  reference.bytes = bytes_of(std::vector<float>{1, 2, 3, 4});
  d.sections.push_back(code);
  d.sections.push_back(binary);
  d.sections.push_back(reference);
  BufferDesc image = buffer("img", BufferKind::Arena, {2, 8}, 128);
  image.dtype = DType::F16;
  image.size = 32;
  image.memory = MemorySpace::Image2D;
  image.image_width = 2;
  image.image_height = 2;
  d.buffers.push_back(image);
  d.buffers.push_back(buffer("ref_x", BufferKind::Weight, {4}, 0, 3));
  KernelDesc k;
  k.name = "k0";
  k.section = 1;
  k.function = 3;
  k.entry_name = "k0_entry";
  k.args = {ArgContractDesc{ArgAccess::Write, DType::F16, 32}, ArgContractDesc{ArgAccess::Read, DType::F32, 12}};
  k.parallel_extent = 7;
  k.global_size = {64, 8};
  k.local_size = {16, 2};
  k.flops = 1234;
  k.bytes = 5678;
  d.kernels = {k};
  d.commands.push_back(command(CommandKind::Launch, {5, 0}, 0));
  d.arena_size = 4096;
  d.arena_alignment = 128;
  d.arena_lower_bound = 100;
  d.reference_inputs = {6};
  d.reference_outputs = {3};
  d.reference_rtol = 0.25f;
  d.reference_atol = 0.5f;
  d.has_prepared = true;
  d.prepared = PreparedDesc{"Portable Computing Language OpenCL 3.0 PoCL", "pthread-cpu", "3.1"};
  return d;
}

}  // namespace

TEST_CASE("bundle writer: serialize_bundle(desc_from_bundle(x)) reproduces x byte for byte") {
  for (const BundleDesc& d : {copy_bundle(), everything_bundle()}) {
    const std::vector<uint8_t> bytes = serialize_bundle(d);
    const BundleDesc back = round_trip(bytes);
    CHECK(serialize_bundle(back) == bytes);
  }
}

TEST_CASE("bundle writer: desc_from_bundle reads back every field") {
  const BundleDesc d = everything_bundle();
  const BundleDesc back = round_trip(serialize_bundle(d));
  CHECK(back.producer == d.producer);
  CHECK(back.source_model == d.source_model);
  CHECK(back.target.arch == Arch::OpenCL);
  CHECK(back.target.cpu == "adreno630");
  CHECK(back.target.features == d.target.features);
  CHECK(back.target.port == "opencl");
  REQUIRE(back.sections.size() == d.sections.size());
  for (size_t i = 0; i < d.sections.size(); ++i) {
    CAPTURE(i);
    CHECK(back.sections[i].kind == d.sections[i].kind);
    CHECK(back.sections[i].bytes == d.sections[i].bytes);
    CHECK(back.sections[i].format == d.sections[i].format);
    CHECK(back.sections[i].source_section == d.sections[i].source_section);
    REQUIRE(back.sections[i].functions.size() == d.sections[i].functions.size());
    for (size_t f = 0; f < d.sections[i].functions.size(); ++f) {
      CHECK(back.sections[i].functions[f].offset() == d.sections[i].functions[f].offset());
      CHECK(back.sections[i].functions[f].size() == d.sections[i].functions[f].size());
    }
    CHECK(back.sections[i].alignment == (d.sections[i].alignment < 64 ? 64 : d.sections[i].alignment));
  }
  REQUIRE(back.buffers.size() == d.buffers.size());
  for (size_t i = 0; i < d.buffers.size(); ++i) {
    CAPTURE(i);
    const BufferDesc &a = back.buffers[i], &b = d.buffers[i];
    CHECK(a.name == b.name);
    CHECK(a.kind == b.kind);
    CHECK(a.dtype == b.dtype);
    CHECK(a.shape == b.shape);
    CHECK(a.size == b.size);
    CHECK(a.offset == b.offset);
    CHECK(a.section == b.section);
    CHECK(a.io_index == b.io_index);
    CHECK(a.memory == b.memory);
    CHECK(a.image_width == b.image_width);
    CHECK(a.image_height == b.image_height);
  }
  REQUIRE(back.outputs.size() == 2);
  CHECK(back.outputs[1].name == "w_out");
  CHECK(back.outputs[1].shape == std::vector<int64_t>{4});
  CHECK(back.outputs[1].buffer == 4);
  REQUIRE(back.kernels.size() == 1);
  const KernelDesc& k = back.kernels[0];
  CHECK(k.name == "k0");
  CHECK(k.section == 1);
  CHECK(k.function == 3);
  CHECK(k.entry_name == "k0_entry");
  REQUIRE(k.args.size() == 2);
  CHECK(k.args[0].access == ArgAccess::Write);
  CHECK(k.args[0].dtype == DType::F16);
  CHECK(k.args[0].extent == 32);
  CHECK(k.args[1].access == ArgAccess::Read);
  CHECK(k.args[1].dtype == DType::F32);
  CHECK(k.args[1].extent == 12);
  CHECK(k.parallel_extent == 7);
  CHECK(k.global_size == std::vector<uint64_t>{64, 8});
  CHECK(k.local_size == std::vector<uint64_t>{16, 2});
  CHECK(k.flops == 1234);
  CHECK(k.bytes == 5678);
  REQUIRE(back.commands.size() == d.commands.size());
  CHECK(back.commands.back().kind == CommandKind::Launch);
  CHECK(back.commands.back().args == std::vector<uint32_t>{5, 0});
  CHECK(back.arena_size == 4096);
  CHECK(back.arena_alignment == 128);
  CHECK(back.arena_lower_bound == 100);
  CHECK(back.reference_inputs == std::vector<uint32_t>{6});
  CHECK(back.reference_outputs == std::vector<uint32_t>{3});
  CHECK(back.reference_rtol == 0.25f);
  CHECK(back.reference_atol == 0.5f);
  CHECK(back.has_prepared);
  CHECK(back.prepared.platform == d.prepared.platform);
  CHECK(back.prepared.device == "pthread-cpu");
  CHECK(back.prepared.driver == "3.1");
}
