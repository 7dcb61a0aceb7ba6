// bundle_writer.h — builds a complete bundle file in memory (header + FlatBuffer + data blob).
// Header-only so that edgec (C++20) and the runtime's tests (C++17) share one writer and
// therefore one idea of the file layout. Needs no exceptions.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "bundle_generated.h"
#include "bundle_header.h"
#include "code_directory.h"

namespace edge::bundle {

struct SectionData {
  SectionKind kind = SectionKind::Weights;
  std::vector<uint8_t> bytes;
  uint32_t alignment = 64;  // raised to kSectionAlignment if smaller
  CodeFormat format = CodeFormat::None;  // Code sections
  uint32_t source_section = 0;           // OpenCLBinary
  std::vector<Function> functions;       // MachineCode: sorted by offset, disjoint
};

struct BufferDesc {
  std::string name;
  BufferKind kind = BufferKind::Arena;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  uint64_t size = 0;      // bytes
  uint64_t offset = 0;    // arena offset (Arena) or offset inside `section` (Weight)
  uint32_t section = 0;   // Weight only
  uint32_t io_index = 0;  // Input/Output only
  MemorySpace memory = MemorySpace::Global;
  uint32_t image_width = 0, image_height = 0;  // Image2D
};

struct TensorDesc {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  uint32_t buffer = 0;
};

struct ArgContractDesc {
  ArgAccess access = ArgAccess::Read;
  DType dtype = DType::F32;
  uint64_t extent = 0;      // bytes
};

struct A630ArgDesc {
  A630ArgKind kind = A630ArgKind::Address;
  uint32_t slot = 0;
};

struct A630ProgramDesc {
  uint64_t code_offset = 0, code_size = 0;
  uint32_t instructions = 0, nops = 0, full_regs = 0, half_regs = 0, constlen = 0, branchstack = 0;
  uint32_t private_bytes = 0, shared_bytes = 0, threadsize = 64, max_waves = 0;
  std::vector<A630ArgDesc> args;
  uint32_t immediates_dword = 0;
  std::vector<uint32_t> immediates;
  uint32_t driver_params_dword = 0xffffffffu, work_group_id_reg = 252, local_id_reg = 252;
  uint32_t num_textures = 0, num_samplers = 0, num_images = 0;
  std::vector<uint32_t> loop_trips;
};

struct KernelDesc {
  std::string name;
  uint32_t section = 0;
  uint32_t function = 0;    // MachineCode: index into the section's functions
  std::string entry_name;   // OpenCLC
  std::vector<ArgContractDesc> args;  // output first
  uint64_t parallel_extent = 1;
  std::vector<uint64_t> global_size, local_size;
  uint64_t flops = 0;
  uint64_t bytes = 0;
  bool has_a630 = false;    // Ir3A630 sections
  A630ProgramDesc a630;
};

struct CommandDesc {
  CommandKind kind = CommandKind::Launch;
  uint32_t kernel = 0;
  std::vector<uint32_t> args;
};

struct TargetDesc {
  Arch arch = Arch::X86_64;
  std::string cpu;
  std::vector<std::string> features;
  std::string port = "cpu";
};

struct PreparedDesc {
  std::string platform, device, driver;
};

struct BundleDesc {
  std::string producer, source_model;
  TargetDesc target;
  std::vector<SectionData> sections;
  std::vector<BufferDesc> buffers;
  std::vector<TensorDesc> inputs, outputs;
  std::vector<KernelDesc> kernels;
  std::vector<CommandDesc> commands;
  uint64_t arena_size = 0;
  uint32_t arena_alignment = 64;
  uint64_t arena_lower_bound = 0;
  std::vector<uint32_t> reference_inputs, reference_outputs;
  float reference_rtol = 0, reference_atol = 0;
  bool has_prepared = false;  // write `prepared` (edgert-prepare)
  PreparedDesc prepared;
};

namespace detail {

inline flatbuffers::Offset<TensorInfo> write_tensor(flatbuffers::FlatBufferBuilder& fbb,
                                                    const TensorDesc& t) {
  auto name = fbb.CreateString(t.name);
  auto shape = fbb.CreateVector(t.shape);
  return CreateTensorInfo(fbb, name, t.dtype, shape, t.buffer);
}

inline std::vector<flatbuffers::Offset<TensorInfo>> write_tensors(
    flatbuffers::FlatBufferBuilder& fbb, const std::vector<TensorDesc>& tensors) {
  std::vector<flatbuffers::Offset<TensorInfo>> out;
  out.reserve(tensors.size());
  for (const TensorDesc& t : tensors) out.push_back(write_tensor(fbb, t));
  return out;
}

}  // namespace detail

// The complete file: 64-byte BundleHeader, the FlatBuffer (identifier "EDGB") at offset 64,
// zero padding, then the data blob at a multiple of kDataAlignment holding the sections (a
// MachineCode section first, then the others in order), each at a blob offset that is a
// multiple of max(alignment, 64); zero padding between them. The file ends with the last section (edgec sign may append a signature trailer:
// bundle_signature.h). Deterministic: the same desc gives the same bytes.
inline std::vector<uint8_t> serialize_bundle(const BundleDesc& desc) {
  // Lay out the data blob first: Section.offset goes into the FlatBuffer. A MachineCode
  // section comes first (the runtime takes machine code only from blob offset 0), then the
  // others in order.
  std::vector<uint64_t> section_offsets(desc.sections.size());
  std::vector<uint32_t> section_alignments(desc.sections.size());
  uint64_t data_size = 0;
  for (int machine_code = 1; machine_code >= 0; --machine_code)
    for (size_t i = 0; i < desc.sections.size(); ++i) {
      const SectionData& s = desc.sections[i];
      if ((s.format == CodeFormat::MachineCode) != (machine_code == 1)) continue;
      uint32_t alignment =
          s.alignment < kSectionAlignment ? static_cast<uint32_t>(kSectionAlignment) : s.alignment;
      uint64_t offset = align_up(data_size, alignment);
      section_offsets[i] = offset;
      section_alignments[i] = alignment;
      data_size = offset + s.bytes.size();
    }

  flatbuffers::FlatBufferBuilder fbb(1024);
  auto producer = fbb.CreateString(desc.producer);
  auto source_model = fbb.CreateString(desc.source_model);

  std::vector<flatbuffers::Offset<flatbuffers::String>> feature_strings;
  for (const std::string& f : desc.target.features) feature_strings.push_back(fbb.CreateString(f));
  auto target_cpu = fbb.CreateString(desc.target.cpu);
  auto target_features = fbb.CreateVector(feature_strings);
  auto target_port = fbb.CreateString(desc.target.port);
  auto target = CreateTarget(fbb, desc.target.arch, target_cpu, target_features, target_port);

  std::vector<flatbuffers::Offset<Section>> sections;
  for (size_t i = 0; i < desc.sections.size(); ++i) {
    const SectionData& s = desc.sections[i];
    auto functions = s.functions.empty() ? 0 : fbb.CreateVectorOfStructs(s.functions);
    sections.push_back(CreateSection(fbb, s.kind, section_offsets[i], s.bytes.size(),
                                     section_alignments[i], s.format, s.source_section, functions));
  }

  std::vector<flatbuffers::Offset<Buffer>> buffers;
  for (const BufferDesc& b : desc.buffers) {
    auto name = fbb.CreateString(b.name);
    auto shape = fbb.CreateVector(b.shape);
    buffers.push_back(CreateBuffer(fbb, name, b.kind, b.dtype, shape, b.size, b.offset, b.section,
                                   b.io_index, b.memory, b.image_width, b.image_height));
  }

  auto inputs = detail::write_tensors(fbb, desc.inputs);
  auto outputs = detail::write_tensors(fbb, desc.outputs);

  std::vector<flatbuffers::Offset<Kernel>> kernels;
  for (const KernelDesc& k : desc.kernels) {
    auto name = fbb.CreateString(k.name);
    auto entry_name = k.entry_name.empty() ? 0 : fbb.CreateString(k.entry_name);
    auto global_size = k.global_size.empty() ? 0 : fbb.CreateVector(k.global_size);
    auto local_size = k.local_size.empty() ? 0 : fbb.CreateVector(k.local_size);
    std::vector<flatbuffers::Offset<ArgContract>> contracts;
    for (const ArgContractDesc& a : k.args)
      contracts.push_back(CreateArgContract(fbb, a.access, a.dtype, a.extent));
    auto args = fbb.CreateVector(contracts);
    flatbuffers::Offset<A630Program> a630 = 0;
    if (k.has_a630) {
      const A630ProgramDesc& p = k.a630;
      std::vector<flatbuffers::Offset<A630Arg>> bindings;
      for (const A630ArgDesc& a : p.args) bindings.push_back(CreateA630Arg(fbb, a.kind, a.slot));
      auto bound = fbb.CreateVector(bindings);
      auto immediates = fbb.CreateVector(p.immediates);
      auto trips = fbb.CreateVector(p.loop_trips);
      a630 = CreateA630Program(fbb, p.code_offset, p.code_size, p.instructions, p.nops, p.full_regs, p.half_regs,
                               p.constlen, p.branchstack, p.private_bytes, p.shared_bytes, p.threadsize, p.max_waves,
                               bound, p.immediates_dword, immediates, p.driver_params_dword, p.work_group_id_reg,
                               p.local_id_reg, p.num_textures, p.num_samplers, p.num_images, trips);
    }
    kernels.push_back(CreateKernel(fbb, name, k.section, k.function, entry_name, args,
                                   k.parallel_extent, global_size, local_size, k.flops, k.bytes, a630));
  }

  std::vector<flatbuffers::Offset<Command>> commands;
  for (const CommandDesc& c : desc.commands) {
    auto args = fbb.CreateVector(c.args);
    commands.push_back(CreateCommand(fbb, c.kind, c.kernel, args));
  }

  flatbuffers::Offset<PreparedFor> prepared = 0;
  if (desc.has_prepared) {
    auto platform = fbb.CreateString(desc.prepared.platform);
    auto device = fbb.CreateString(desc.prepared.device);
    auto driver = fbb.CreateString(desc.prepared.driver);
    prepared = CreatePreparedFor(fbb, platform, device, driver);
  }
  auto root = CreateBundle(
      fbb, kFormatVersion, producer, source_model, target, fbb.CreateVector(sections),
      fbb.CreateVector(buffers), fbb.CreateVector(inputs), fbb.CreateVector(outputs),
      fbb.CreateVector(kernels), fbb.CreateVector(commands), desc.arena_size, desc.arena_alignment,
      desc.arena_lower_bound, fbb.CreateVector(desc.reference_inputs),
      fbb.CreateVector(desc.reference_outputs), prepared, desc.reference_rtol, desc.reference_atol);
  FinishBundleBuffer(fbb, root);

  const uint8_t* fb = fbb.GetBufferPointer();
  const uint64_t fb_size = fbb.GetSize();
  const uint64_t data_offset = align_up(kHeaderSize + fb_size, kDataAlignment);

  // Zero-initialized, so all padding is zero (the runtime checks that).
  std::vector<uint8_t> file(data_offset + data_size, 0);
  std::memcpy(file.data() + kHeaderSize, fb, fb_size);
  uint8_t* data = file.data() + data_offset;
  for (size_t i = 0; i < desc.sections.size(); ++i) {
    const std::vector<uint8_t>& bytes = desc.sections[i].bytes;
    if (!bytes.empty()) std::memcpy(data + section_offsets[i], bytes.data(), bytes.size());
    // A code directory pins the FlatBuffer it was compiled with (code_directory.h).
    if (desc.sections[i].format == CodeFormat::MachineCode)
      edge::abi::store_flatbuffer_digest(data + section_offsets[i], bytes.size(), fb, fb_size);
  }

  BundleHeader header;
  std::memset(&header, 0, sizeof(header));
  std::memcpy(header.magic, kMagic, sizeof(kMagic));
  header.format_version = kFormatVersion;
  header.header_size = kHeaderSize;
  header.fb_offset = kHeaderSize;
  header.fb_size = fb_size;
  header.data_offset = data_offset;
  header.data_size = data_size;
  uint64_t hash = content_hash_update(kContentHashSeed, fb, fb_size);
  header.content_hash = content_hash_update(hash, data, data_size);
  std::memcpy(file.data(), &header, sizeof(header));
  return file;
}

namespace detail {

inline std::string string_of(const flatbuffers::String* s) { return s ? s->str() : std::string(); }

template <typename T>
std::vector<T> vector_of(const flatbuffers::Vector<T>* v) {
  return v ? std::vector<T>(v->begin(), v->end()) : std::vector<T>();
}

inline std::vector<TensorDesc> tensors_of(const flatbuffers::Vector<flatbuffers::Offset<TensorInfo>>* v) {
  std::vector<TensorDesc> out;
  for (flatbuffers::uoffset_t i = 0; v && i < v->size(); ++i) {
    const TensorInfo* t = v->Get(i);
    out.push_back(TensorDesc{string_of(t->name()), t->dtype(), vector_of(t->shape()), t->buffer()});
  }
  return out;
}

}  // namespace detail

// The inverse of serialize_bundle: every field of a verified bundle (root of its FlatBuffer,
// `data` its data blob) back in a BundleDesc, section bytes copied. For a bundle that
// serialize_bundle wrote, serialize_bundle(desc_from_bundle(...)) gives the same bytes;
// edgert_prepare edits the desc (program binaries) and writes it again.
inline BundleDesc desc_from_bundle(const Bundle* root, const uint8_t* data) {
  using detail::string_of;
  using detail::vector_of;
  BundleDesc d;
  d.producer = string_of(root->producer());
  d.source_model = string_of(root->source_model());
  if (const Target* t = root->target()) {
    d.target.arch = t->arch();
    d.target.cpu = string_of(t->cpu());
    for (flatbuffers::uoffset_t i = 0; t->features() && i < t->features()->size(); ++i)
      d.target.features.push_back(string_of(t->features()->Get(i)));
    d.target.port = string_of(t->port());
  }
  for (flatbuffers::uoffset_t i = 0; root->sections() && i < root->sections()->size(); ++i) {
    const Section* s = root->sections()->Get(i);
    SectionData sd;
    sd.kind = s->kind();
    sd.bytes.assign(data + s->offset(), data + s->offset() + s->size());
    sd.alignment = s->alignment();
    sd.format = s->format();
    sd.source_section = s->source_section();
    for (flatbuffers::uoffset_t f = 0; s->functions() && f < s->functions()->size(); ++f)
      sd.functions.push_back(*s->functions()->Get(f));
    d.sections.push_back(std::move(sd));
  }
  for (flatbuffers::uoffset_t i = 0; root->buffers() && i < root->buffers()->size(); ++i) {
    const Buffer* b = root->buffers()->Get(i);
    BufferDesc bd;
    bd.name = string_of(b->name());
    bd.kind = b->kind();
    bd.dtype = b->dtype();
    bd.shape = vector_of(b->shape());
    bd.size = b->size();
    bd.offset = b->offset();
    bd.section = b->section();
    bd.io_index = b->io_index();
    bd.memory = b->memory();
    bd.image_width = b->image_width();
    bd.image_height = b->image_height();
    d.buffers.push_back(std::move(bd));
  }
  d.inputs = detail::tensors_of(root->inputs());
  d.outputs = detail::tensors_of(root->outputs());
  for (flatbuffers::uoffset_t i = 0; root->kernels() && i < root->kernels()->size(); ++i) {
    const Kernel* k = root->kernels()->Get(i);
    KernelDesc kd;
    kd.name = string_of(k->name());
    kd.section = k->section();
    kd.function = k->function();
    kd.entry_name = string_of(k->entry_name());
    for (flatbuffers::uoffset_t a = 0; k->args() && a < k->args()->size(); ++a) {
      const ArgContract* c = k->args()->Get(a);
      kd.args.push_back(ArgContractDesc{c->access(), c->dtype(), c->extent()});
    }
    kd.parallel_extent = k->parallel_extent();
    kd.global_size = vector_of(k->global_size());
    kd.local_size = vector_of(k->local_size());
    kd.flops = k->flops();
    kd.bytes = k->bytes();
    if (const A630Program* p = k->a630()) {
      kd.has_a630 = true;
      A630ProgramDesc& a = kd.a630;
      a.code_offset = p->code_offset();
      a.code_size = p->code_size();
      a.instructions = p->instructions();
      a.nops = p->nops();
      a.full_regs = p->full_regs();
      a.half_regs = p->half_regs();
      a.constlen = p->constlen();
      a.branchstack = p->branchstack();
      a.private_bytes = p->private_bytes();
      a.shared_bytes = p->shared_bytes();
      a.threadsize = p->threadsize();
      a.max_waves = p->max_waves();
      for (flatbuffers::uoffset_t j = 0; p->args() && j < p->args()->size(); ++j)
        a.args.push_back(A630ArgDesc{p->args()->Get(j)->kind(), p->args()->Get(j)->slot()});
      a.immediates_dword = p->immediates_dword();
      a.immediates = vector_of(p->immediates());
      a.driver_params_dword = p->driver_params_dword();
      a.work_group_id_reg = p->work_group_id_reg();
      a.local_id_reg = p->local_id_reg();
      a.num_textures = p->num_textures();
      a.num_samplers = p->num_samplers();
      a.num_images = p->num_images();
      a.loop_trips = vector_of(p->loop_trips());
    }
    d.kernels.push_back(std::move(kd));
  }
  for (flatbuffers::uoffset_t i = 0; root->commands() && i < root->commands()->size(); ++i) {
    const Command* c = root->commands()->Get(i);
    d.commands.push_back(CommandDesc{c->kind(), c->kernel(), vector_of(c->args())});
  }
  d.arena_size = root->arena_size();
  d.arena_alignment = root->arena_alignment();
  d.arena_lower_bound = root->arena_lower_bound();
  d.reference_inputs = vector_of(root->reference_inputs());
  d.reference_outputs = vector_of(root->reference_outputs());
  d.reference_rtol = root->reference_rtol();
  d.reference_atol = root->reference_atol();
  if (const PreparedFor* p = root->prepared()) {
    d.has_prepared = true;
    d.prepared = PreparedDesc{string_of(p->platform()), string_of(p->device()), string_of(p->driver())};
  }
  return d;
}

}  // namespace edge::bundle
