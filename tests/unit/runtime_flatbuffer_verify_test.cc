// The runtime's table-driven FlatBuffers verifier (device_runtime/src/flatbuffer_verify.cc)
// against what it replaces, flatc's generated VerifyBundleBuffer:
//  - its field table lists every field of every table of schema/bundle.fbs, at the right
//    vtable slot, with a kind that fits the field's type (read from flatc's reflection of the
//    schema, bundle.bfbs, which tests/CMakeLists.txt has flatc write): a field added to the
//    schema and not to the table fails here, before a bundle could carry it unverified;
//  - on a bundle that fills every table and field, and on 100,000 seeded mutations and every
//    truncation of its FlatBuffer, the two verifiers give the same answer.
// And the enum names the runtime's messages print (internal.h) are flatc's.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bundle_header.h"
#include "flatbuffer_verify.h"
#include "internal.h"
#include "flatbuffers/reflection_generated.h"
#include "runtime_test_util.h"

using namespace rt_test;
namespace fbv = edgert::fbv;

namespace {

const char* const kTableNames[fbv::kNumTables] = {
    "edge.bundle.Target",      "edge.bundle.Section",   "edge.bundle.Buffer",     "edge.bundle.TensorInfo",
    "edge.bundle.ArgContract", "edge.bundle.A630Arg",   "edge.bundle.A630Program", "edge.bundle.Kernel",
    "edge.bundle.Command",     "edge.bundle.PreparedFor", "edge.bundle.Bundle"};

std::vector<uint8_t> read_file(const char* path) {
  std::vector<uint8_t> bytes;
  if (FILE* f = std::fopen(path, "rb")) {
    uint8_t buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) bytes.insert(bytes.end(), buf, buf + n);
    std::fclose(f);
  }
  return bytes;
}

int table_id(const char* name) {
  for (int t = 0; t < fbv::kNumTables; ++t)
    if (std::strcmp(kTableNames[t], name) == 0) return t;
  return -1;
}

// The kind the generated code's checks amount to for a field of this type; -1: none known.
int expected_kind(const reflection::Schema* schema, const reflection::Type* type, int* sub) {
  using reflection::BaseType;
  auto scalar = [](BaseType b, int k1, int k4, int k8) {
    switch (b) {
      case BaseType::Bool: case BaseType::Byte: case BaseType::UByte: return k1;
      case BaseType::Int: case BaseType::UInt: case BaseType::Float: return k4;
      case BaseType::Long: case BaseType::ULong: case BaseType::Double: return k8;
      default: return -1;
    }
  };
  *sub = fbv::kNumTables;
  const BaseType base = type->base_type();
  if (base == BaseType::String) return fbv::kString;
  if (base == BaseType::Obj) {
    const reflection::Object* o = schema->objects()->Get(type->index());
    if (o->is_struct()) return -1;  // no struct field outside a vector in bundle.fbs
    *sub = table_id(o->name()->c_str());
    return fbv::kTable;
  }
  if (base == BaseType::Vector) {
    const BaseType e = type->element();
    if (e == BaseType::String) return fbv::kStrings;
    if (e == BaseType::Obj) {
      const reflection::Object* o = schema->objects()->Get(type->index());
      if (o->is_struct()) return o->bytesize() == sizeof(edge::bundle::Function) ? fbv::kVectorFunction : -1;
      *sub = table_id(o->name()->c_str());
      return fbv::kTables;
    }
    return scalar(e, -1, fbv::kVector4, fbv::kVector8);
  }
  return scalar(base, fbv::kScalar1, fbv::kScalar4, fbv::kScalar8);
}

TEST_CASE("flatbuffer verifier: its field table is bundle.fbs, field by field") {
  const std::vector<uint8_t> bfbs = read_file(EDGE_BUNDLE_BFBS);
  REQUIRE_MESSAGE(!bfbs.empty(), "cannot read " EDGE_BUNDLE_BFBS " (flatc -b --schema schema/bundle.fbs)");
  flatbuffers::Verifier v(bfbs.data(), bfbs.size());
  REQUIRE(reflection::VerifySchemaBuffer(v));
  const reflection::Schema* schema = reflection::GetSchema(bfbs.data());
  int tables = 0;
  for (const reflection::Object* o : *schema->objects()) {
    if (o->is_struct()) continue;
    ++tables;
    CAPTURE(o->name()->c_str());
    const int id = table_id(o->name()->c_str());
    REQUIRE_MESSAGE(id >= 0, "a table of bundle.fbs that flatbuffer_verify.cc does not know");
    uint32_t count = 0;
    const fbv::FieldCheck* checks = fbv::fields_of(static_cast<fbv::TableId>(id), &count);
    uint32_t live = 0;
    for (const reflection::Field* f : *o->fields()) {
      if (f->deprecated()) continue;  // the generated code does not verify those either
      ++live;
      CAPTURE(f->name()->c_str());
      const fbv::FieldCheck* c = nullptr;
      for (uint32_t i = 0; i < count; ++i)
        if (checks[i].slot == f->offset()) c = &checks[i];
      REQUIRE_MESSAGE(c != nullptr, "a field of bundle.fbs missing from flatbuffer_verify.cc's table");
      int sub = fbv::kNumTables;
      const int kind = expected_kind(schema, f->type(), &sub);
      REQUIRE_MESSAGE(kind >= 0, "a field type flatbuffer_verify.cc has no kind for");
      CHECK(static_cast<int>(c->kind) == kind);
      if (kind == fbv::kTable || kind == fbv::kTables) CHECK(static_cast<int>(c->sub) == sub);
    }
    CHECK(count == live);  // and nothing else (a stale entry)
  }
  CHECK(tables == fbv::kNumTables);
}

// A bundle with every table and every field of bundle.fbs set (its FlatBuffer is all that is
// verified here, so the values need not make sense to the runtime's own checks).
std::vector<uint8_t> full_bundle() {
  BundleDesc d = add_bundle();
  d.producer = "edgec test";
  d.source_model = "model.onnx";
  d.target.features = {"avx2", "fma"};
  d.target.cpu = "x86-64-v3";
  SectionData a630;
  a630.kind = SectionKind::Code;
  a630.format = CodeFormat::Ir3A630;
  a630.bytes.assign(256, 0);
  d.sections.push_back(a630);
  SectionData cl;
  cl.kind = SectionKind::Code;
  cl.format = CodeFormat::OpenCLBinary;
  cl.source_section = 0;
  cl.bytes.assign(64, 1);
  d.sections.push_back(cl);
  KernelDesc k;
  k.name = "a630 kernel";
  k.section = static_cast<uint32_t>(d.sections.size() - 2);
  k.entry_name = "entry";
  k.args = f32_contracts(2);
  k.parallel_extent = 7;
  k.global_size = {64, 2};
  k.local_size = {32, 1};
  k.flops = 100;
  k.bytes = 200;
  k.has_a630 = true;
  k.a630.code_offset = 0;
  k.a630.code_size = 64;
  k.a630.instructions = 8;
  k.a630.nops = 1;
  k.a630.full_regs = 3;
  k.a630.half_regs = 1;
  k.a630.constlen = 4;
  k.a630.branchstack = 1;
  k.a630.private_bytes = 16;
  k.a630.shared_bytes = 32;
  k.a630.max_waves = 16;
  k.a630.args = {{A630ArgKind::Address, 0}, {A630ArgKind::Texture, 1}};
  k.a630.immediates_dword = 8;
  k.a630.immediates = {1, 2, 3};
  k.a630.driver_params_dword = 12;
  k.a630.num_textures = 1;
  k.a630.num_samplers = 1;
  k.a630.num_images = 1;
  k.a630.loop_trips = {4, 5};
  d.kernels.push_back(k);
  d.buffers[0].memory = MemorySpace::Image2D;
  d.buffers[0].image_width = 2;
  d.buffers[0].image_height = 3;
  d.reference_inputs = {0};
  d.reference_outputs = {1};
  d.reference_rtol = 1e-3f;
  d.reference_atol = 1e-4f;
  d.has_prepared = true;
  d.prepared = PreparedDesc{"platform", "device", "driver"};
  d.arena_lower_bound = 64;
  return serialize_bundle(d);
}

bool generated_accepts(const std::vector<uint8_t>& fb) {
  flatbuffers::Verifier v(fb.data(), fb.size());
  return edge::bundle::VerifyBundleBuffer(v);
}

bool table_driven_accepts(const std::vector<uint8_t>& fb) {
  flatbuffers::Verifier v(fb.data(), fb.size());
  return edgert::verify_bundle_flatbuffer(v, fb.data(), fb.size());
}

TEST_CASE("flatbuffer verifier: the same answers as flatc's generated verifier") {
  const std::vector<uint8_t> file = full_bundle();
  edge::bundle::BundleHeader h;
  std::memcpy(&h, file.data(), sizeof h);
  const std::vector<uint8_t> fb(file.begin() + static_cast<long>(h.fb_offset),
                                file.begin() + static_cast<long>(h.fb_offset + h.fb_size));
  REQUIRE(generated_accepts(fb));
  REQUIRE(table_driven_accepts(fb));
  const edge::bundle::Bundle* root = edge::bundle::GetBundle(fb.data());
  REQUIRE(root->prepared());
  REQUIRE(root->kernels()->Get(root->kernels()->size() - 1)->a630());

  // Every truncation (a copy of the prefix: the verifiers read nothing past what they are given).
  for (size_t n = 0; n < fb.size(); ++n) {
    const std::vector<uint8_t> prefix(fb.begin(), fb.begin() + static_cast<long>(n));
    CAPTURE(n);
    CHECK(generated_accepts(prefix) == table_driven_accepts(prefix));
  }
  // Seeded mutations: 1 to 4 bytes set to a random value, a bit flipped, 0 or 0xff.
  std::mt19937 rng(12345);
  int accepted = 0, refused = 0, differ = 0;
  for (int trial = 0; trial < 100000; ++trial) {
    std::vector<uint8_t> m = fb;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t at = rng() % m.size();
      switch (rng() % 4) {
        case 0: m[at] = static_cast<uint8_t>(rng()); break;
        case 1: m[at] ^= static_cast<uint8_t>(1u << (rng() % 8)); break;
        case 2: m[at] = 0; break;
        default: m[at] = 0xff; break;
      }
    }
    const bool generated = generated_accepts(m);
    if (generated != table_driven_accepts(m)) ++differ;
    (generated ? accepted : refused) += 1;
  }
  MESSAGE("mutations: " << accepted << " accepted, " << refused << " refused by both");
  CHECK(differ == 0);
  CHECK(accepted > 1000);
  CHECK(refused > 1000);
}

TEST_CASE("enum names: the runtime's packed name strings spell what flatc's EnumName* spell") {
  using namespace edge::bundle;
  for (uint32_t v = 0; v < 256; ++v) {
    CAPTURE(v);
    const auto u8 = static_cast<uint8_t>(v);
    CHECK(std::string(edgert::enum_name(edgert::kDTypeNames, v)) == EnumNameDType(static_cast<DType>(u8)));
    CHECK(std::string(edgert::enum_name(edgert::kArchNames, v)) == EnumNameArch(static_cast<Arch>(u8)));
    CHECK(std::string(edgert::enum_name(edgert::kSectionKindNames, v)) == EnumNameSectionKind(static_cast<SectionKind>(u8)));
    CHECK(std::string(edgert::enum_name(edgert::kCodeFormatNames, v)) == EnumNameCodeFormat(static_cast<CodeFormat>(u8)));
    CHECK(std::string(edgert::enum_name(edgert::kArgAccessNames, v)) == EnumNameArgAccess(static_cast<ArgAccess>(u8)));
  }
}

}  // namespace
