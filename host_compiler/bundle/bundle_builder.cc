#include "bundle/bundle_builder.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "bundle_writer.h"
#include "runtime_limits.h"

namespace edgec {

namespace eb = edge::bundle;

namespace {


eb::BufferKind kind_of(BufferRole r) {
  switch (r) {
    case BufferRole::Input: return eb::BufferKind::Input;
    case BufferRole::Output: return eb::BufferKind::Output;
    case BufferRole::Weight: return eb::BufferKind::Weight;
    case BufferRole::Intermediate: return eb::BufferKind::Arena;
  }
  return eb::BufferKind::Arena;
}

}  // namespace

std::vector<uint8_t> build_bundle(const BundleInputs& in) {
  const Schedule& s = *in.schedule;
  // What every runtime takes (schema/runtime_limits.h), named here rather than at open.
  if (in.target->address_bits == 32 && in.plan->arena_size > edge::limits::kMaxBytes32Bit)
    throw CompileError("the arena needs " + std::to_string(in.plan->arena_size) + " bytes, more than a 32-bit " +
                       in.target->name + " runtime can address");
  for (const KernelIR& k : *in.kernels)
    for (uint64_t g : k.launch.global_size)
      if (g > edge::limits::kMaxLaunchSize)
        throw CompileError("kernel " + k.name + ": a launch of " + std::to_string(g) +
                           " work-items in one dimension; OpenCL ids are 32-bit");
  eb::BundleDesc d;
  d.producer = std::string("edgec ") + EDGEC_VERSION;
  d.source_model = in.source_model;
  d.target.arch = static_cast<eb::Arch>(in.target->bundle_arch);
  d.target.cpu = in.target->cpu;
  d.target.features = in.target->required_features;
  for (const std::string& f : in.code->required_features)
    if (std::find(d.target.features.begin(), d.target.features.end(), f) == d.target.features.end())
      d.target.features.push_back(f);
  d.target.port = in.target->port;

  constexpr uint32_t kCodeSection = 0, kWeightSection = 1;
  eb::SectionData code;
  code.kind = eb::SectionKind::Code;
  code.format = static_cast<eb::CodeFormat>(in.code->format);
  code.bytes = in.code->bytes;
  code.alignment = in.code->alignment;
  for (const CodeRange& f : in.code->functions) code.functions.push_back(eb::Function(f.offset, f.size));
  eb::SectionData weights;
  weights.kind = eb::SectionKind::Weights;
  weights.alignment = 64;

  for (const ScheduledBuffer& b : s.buffers) {
    eb::BufferDesc bd;
    bd.name = b.name;
    bd.kind = kind_of(b.role);
    bd.dtype = static_cast<eb::DType>(b.storage);
    bd.shape = b.shape;
    bd.size = b.bytes();
    if (b.role == BufferRole::Input || b.role == BufferRole::Output) bd.io_index = static_cast<uint32_t>(b.io_index);
    if (auto image = in.code->images.find(static_cast<int>(d.buffers.size())); image != in.code->images.end()) {
      bd.memory = eb::MemorySpace::Image2D;
      bd.image_width = image->second.width;
      bd.image_height = image->second.height;
    }
    if (b.role == BufferRole::Weight) {
      bd.section = kWeightSection;
      bd.offset = eb::align_up(weights.bytes.size(), 64);
      weights.bytes.resize(bd.offset, 0);
      const auto& data = *b.node->data;
      if (data.size() != bd.size) throw CompileError("internal: weight " + b.name + " has the wrong byte size");
      weights.bytes.insert(weights.bytes.end(), data.begin(), data.end());
    }
    d.buffers.push_back(std::move(bd));
  }
  for (size_t i = 0; i < in.arena_buffers.size(); ++i) d.buffers[in.arena_buffers[i]].offset = in.plan->offsets[i];
  d.sections = {std::move(code), std::move(weights)};

  auto tensor = [&](int b) {
    eb::TensorDesc t;
    t.name = s.buffers[b].name;
    t.dtype = static_cast<eb::DType>(s.buffers[b].dtype);
    t.shape = s.buffers[b].shape;
    t.buffer = static_cast<uint32_t>(b);
    return t;
  };
  for (int b : s.inputs) d.inputs.push_back(tensor(b));
  for (int b : s.outputs) d.outputs.push_back(tensor(b));

  for (size_t k = 0; k < s.kernels.size(); ++k) {
    const KernelIR& ir = (*in.kernels)[k];
    eb::KernelDesc kd;
    kd.name = ir.name;
    kd.section = kCodeSection;
    if (!in.code->entry_functions.empty()) kd.function = in.code->entry_functions[k];
    if (!in.code->entry_names.empty()) kd.entry_name = in.code->entry_names[k];
    for (const ArgUse& u : arg_contracts(ir))
      kd.args.push_back(eb::ArgContractDesc{u.written ? eb::ArgAccess::Write : eb::ArgAccess::Read,
                                            static_cast<eb::DType>(u.dtype), u.extent_bytes});
    kd.parallel_extent = ir.launch.parallel_extent;
    kd.global_size = ir.launch.global_size;
    kd.local_size = ir.launch.local_size;
    kd.flops = static_cast<uint64_t>(ir.flops());
    uint64_t bytes = 0;
    for (const KernelArg& a : ir.args) bytes += static_cast<uint64_t>(a.numel) * dtype_size(a.dtype);
    kd.bytes = bytes;
    if (!in.code->a630.empty()) {
      const A630Program& p = in.code->a630[k];
      kd.has_a630 = true;
      eb::A630ProgramDesc& a = kd.a630;
      a.code_offset = p.offset;
      a.code_size = p.size;
      a.instructions = p.instructions;
      a.nops = p.nops;
      a.full_regs = p.full_regs;
      a.half_regs = p.half_regs;
      a.constlen = p.constlen;
      a.branchstack = p.branchstack;
      a.private_bytes = p.private_bytes;
      a.shared_bytes = p.shared_bytes;
      a.threadsize = p.threadsize;
      a.max_waves = p.max_waves;
      for (const A630Arg& arg : p.args)
        a.args.push_back(eb::A630ArgDesc{static_cast<eb::A630ArgKind>(arg.kind), arg.slot});
      a.immediates_dword = p.immediates_dword;
      a.immediates = p.immediates;
      a.driver_params_dword = p.driver_params_dword;
      a.work_group_id_reg = p.work_group_id_reg;
      a.local_id_reg = p.local_id_reg;
      a.num_textures = p.num_textures;
      a.num_samplers = p.num_samplers;
      a.num_images = p.num_images;
      a.loop_trips = p.loop_trips;
    }
    d.kernels.push_back(std::move(kd));
  }
  for (const Step& st : s.steps) {
    eb::CommandDesc c;
    if (st.kind == Step::Kind::Kernel) {
      c.kind = eb::CommandKind::Launch;
      c.kernel = static_cast<uint32_t>(st.index);
      for (const KernelArg& a : (*in.kernels)[st.index].args) c.args.push_back(static_cast<uint32_t>(a.buffer));
    } else {
      c.kind = eb::CommandKind::Copy;
      c.args = {static_cast<uint32_t>(s.copies[st.index].src), static_cast<uint32_t>(s.copies[st.index].dst)};
    }
    d.commands.push_back(std::move(c));
  }
  if (in.reference) {
    // One more section, after the weights, with a Weight buffer per sample and expected value.
    eb::SectionData section;
    section.kind = eb::SectionKind::ReferenceIO;
    auto add = [&](const HostTensor& t, const eb::TensorDesc& tensor, const char* what) {
      eb::BufferDesc bd;
      bd.name = std::string(what) + ":" + tensor.name;
      bd.kind = eb::BufferKind::Weight;
      bd.dtype = tensor.dtype;
      bd.shape = tensor.shape;
      bd.size = t.bytes.size();
      bd.section = static_cast<uint32_t>(d.sections.size());
      bd.offset = eb::align_up(section.bytes.size(), 64);
      section.bytes.resize(bd.offset, 0);
      section.bytes.insert(section.bytes.end(), t.bytes.begin(), t.bytes.end());
      d.buffers.push_back(std::move(bd));
      return static_cast<uint32_t>(d.buffers.size() - 1);
    };
    for (size_t i = 0; i < d.inputs.size(); ++i)
      d.reference_inputs.push_back(add(in.reference->inputs[i], d.inputs[i], "reference_input"));
    for (size_t i = 0; i < d.outputs.size(); ++i)
      d.reference_outputs.push_back(add(in.reference->outputs[i], d.outputs[i], "reference_output"));
    d.sections.push_back(std::move(section));
    d.reference_rtol = in.reference->rtol;
    d.reference_atol = in.reference->atol;
  }
  d.arena_size = in.plan->arena_size;
  d.arena_alignment = static_cast<uint32_t>(in.arena_alignment);
  d.arena_lower_bound = in.plan->lower_bound;
  return eb::serialize_bundle(d);
}

void write_file_atomically(const std::string& path, const std::vector<uint8_t>& bytes) {
  auto write_to = [&](const std::string& name) {
    std::ofstream f(name, std::ios::binary | std::ios::trunc);
    if (!f) throw CompileError("cannot write " + name);
    f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return static_cast<bool>(f.flush());
  };
  // A device, pipe or socket (-o /dev/null, /dev/stdout, a FIFO) is written in place: renaming
  // a file over it would replace it (as root, -o /dev/null turned /dev/null into a file).
  std::error_code type_ec;
  const auto type = std::filesystem::status(path, type_ec).type();
  if (!type_ec && type != std::filesystem::file_type::regular && type != std::filesystem::file_type::directory &&
      type != std::filesystem::file_type::not_found) {
    if (!write_to(path)) throw CompileError("failed writing " + path);
    return;
  }
  std::string tmp = path + ".tmp";
  if (!write_to(tmp)) {
    std::remove(tmp.c_str());
    throw CompileError("failed writing " + tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw CompileError("cannot rename " + tmp + " to " + path + ": " + ec.message());
  }
}

}  // namespace edgec
