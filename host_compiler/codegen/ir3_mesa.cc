// Loading libtinymesa.so and driving ir3 (codegen/ir3_mesa.h): where the wheel is, that it is
// the one build these facts describe, the compile sequence of a compute shader and the
// disassembler. Field accesses go through the byte offsets of ir3_mesa.h only.
#include "codegen/ir3_mesa.h"

#include <dlfcn.h>
#include <elf.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>

#include "graph/graph.h"

namespace edgec::mesa {

namespace {

#define OFF(type, member) EDGE_MESA_OFF(type, member)
#define SIZE(type) EDGE_MESA_SIZE(type)

template <typename T>
T peek(const void* base, size_t off) {
  T v;
  std::memcpy(&v, static_cast<const uint8_t*>(base) + off, sizeof v);
  return v;
}
template <typename T>
void poke(void* base, size_t off, T v) {
  std::memcpy(static_cast<uint8_t*>(base) + off, &v, sizeof v);
}

std::string install_hint() {
  return std::string("target adreno630 needs libtinymesa.so from the PyPI wheel ") + kWheel +
         " (scripts/setup.sh installs it: python3 -m pip install " + kWheel +
         "; or set EDGE_TINYMESA=/path/to/libtinymesa.so)";
}

// The wheel's library: $EDGE_TINYMESA, else where the Python package `tinymesa` of
// $EDGE_PYTHON (or python3) says it is.
std::string locate_library() {
  if (const char* p = std::getenv("EDGE_TINYMESA"); p && *p) return p;
  const char* py = std::getenv("EDGE_PYTHON");
  std::string cmd = std::string(py && *py ? py : "python3") +
                    " -c 'import tinymesa; print(tinymesa.libtinymesa)' 2>/dev/null";
  std::string out;
  if (FILE* f = popen(cmd.c_str(), "r")) {
    std::array<char, 512> buf;
    while (std::fgets(buf.data(), buf.size(), f)) out += buf.data();
    pclose(f);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  if (out.empty())
    throw CompileError(install_hint() + ": the Python package tinymesa is not installed for " +
                       (py && *py ? py : "python3"));
  return out;
}

}  // namespace

std::string elf_build_id(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return "";
  Elf64_Ehdr eh;
  if (!f.read(reinterpret_cast<char*>(&eh), sizeof eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > 256)
    return "";
  for (int i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    f.seekg(static_cast<std::streamoff>(eh.e_phoff + i * sizeof ph));
    if (!f.read(reinterpret_cast<char*>(&ph), sizeof ph)) return "";
    if (ph.p_type != PT_NOTE || ph.p_filesz > (1 << 16)) continue;
    std::vector<uint8_t> notes(ph.p_filesz);
    f.seekg(static_cast<std::streamoff>(ph.p_offset));
    if (!f.read(reinterpret_cast<char*>(notes.data()), static_cast<std::streamsize>(notes.size()))) return "";
    size_t at = 0;
    auto align4 = [](size_t n) { return (n + 3) & ~size_t{3}; };
    while (at + sizeof(Elf64_Nhdr) <= notes.size()) {
      Elf64_Nhdr nh;
      std::memcpy(&nh, notes.data() + at, sizeof nh);
      const size_t name_at = at + sizeof nh, desc_at = name_at + align4(nh.n_namesz);
      if (desc_at + nh.n_descsz > notes.size()) break;
      if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && std::memcmp(notes.data() + name_at, "GNU", 4) == 0) {
        static const char* hex = "0123456789abcdef";
        std::string id;
        for (size_t k = 0; k < nh.n_descsz; ++k)
          id += hex[notes[desc_at + k] >> 4], id += hex[notes[desc_at + k] & 15];
        return id;
      }
      at = desc_at + align4(nh.n_descsz);
    }
  }
  return "";
}

Mesa& Mesa::get() {
  static std::unique_ptr<Mesa> mesa;  // never unloaded: Mesa keeps global state (type singletons)
  if (!mesa) {
    std::unique_ptr<Mesa> m(new Mesa);
    m->load();
    mesa = std::move(m);
  }
  return *mesa;
}

void Mesa::load() {
  path_ = locate_library();
  // Checked before dlopen: another build's constructors never run, and its ABI is unknown.
  const std::string id = elf_build_id(path_);
  if (id.empty())
    throw CompileError(install_hint() + ": " + path_ + " is missing or not an ELF shared object");
  if (id != kBuildId)
    throw CompileError(install_hint() + ": " + path_ + " has ELF build id " + id + ", not " + kBuildId +
                       " (that of " + kWheel + "); edgec knows only that build's ABI");
  handle_ = dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) throw CompileError(install_hint() + ": dlopen " + path_ + ": " + dlerror());
  auto sym = [&](const char* name) {
    void* p = dlsym(handle_, name);
    if (!p) throw CompileError(install_hint() + ": " + path_ + " lacks symbol " + name);
    return p;
  };
#define EDGE_BIND(name) fn_.name = reinterpret_cast<decltype(fn_.name)>(sym(#name));
  EDGE_BIND(glsl_type_singleton_init_or_ref)
  EDGE_BIND(fd_dev_info_raw)
  EDGE_BIND(ir3_compiler_create)
  EDGE_BIND(ir3_get_compiler_options)
  EDGE_BIND(ir3_finalize_nir)
  EDGE_BIND(ir3_nir_lower_io_vars_to_temporaries)
  EDGE_BIND(ir3_nir_post_finalize)
  EDGE_BIND(ir3_compile_shader_nir)
  EDGE_BIND(ir3_shader_assemble)
  EDGE_BIND(ir3_isa_disasm)
  EDGE_BIND(ralloc_context)
  EDGE_BIND(rzalloc_size)
  EDGE_BIND(ralloc_free)
  EDGE_BIND(nir_builder_init_simple_shader)
  EDGE_BIND(nir_build_alu1)
  EDGE_BIND(nir_build_alu2)
  EDGE_BIND(nir_build_alu3)
  EDGE_BIND(nir_intrinsic_instr_create)
  EDGE_BIND(nir_load_const_instr_create)
  EDGE_BIND(nir_alu_instr_create)
  EDGE_BIND(nir_jump_instr_create)
  EDGE_BIND(nir_undef_instr_create)
  EDGE_BIND(nir_def_init)
  EDGE_BIND(nir_builder_instr_insert)
  EDGE_BIND(nir_builder_instr_insert_at_top)
  EDGE_BIND(nir_push_loop)
  EDGE_BIND(nir_pop_loop)
  EDGE_BIND(nir_push_if)
  EDGE_BIND(nir_push_else)
  EDGE_BIND(nir_pop_if)
  EDGE_BIND(nir_lower_reg_intrinsics_to_ssa)
  EDGE_BIND(nir_validate_shader)
  EDGE_BIND(nir_print_shader)
#undef EDGE_BIND
  intrinsic_infos_ = static_cast<const uint8_t*>(sym("nir_intrinsic_infos"));
  op_infos_ = static_cast<const uint8_t*>(sym("nir_op_infos"));

  fn_.glsl_type_singleton_init_or_ref();
  uint8_t dev_id[SIZE(struct fd_dev_id)] = {};
  poke<uint32_t>(dev_id, OFF(struct fd_dev_id, gpu_id), kA630GpuId);
  poke<uint64_t>(dev_id, OFF(struct fd_dev_id, chip_id), kA630ChipId);
  const void* info = fn_.fd_dev_info_raw(dev_id);
  if (!info) throw CompileError("internal: Mesa's device table has no Adreno 630");
  uint8_t options[SIZE(struct ir3_compiler_options)] = {};
  poke<bool>(options, OFF(struct ir3_compiler_options, disable_cache), true);
  // 8- and 16-bit loads and stores of global memory (int8 / float16 tensors).
  poke<bool>(options, OFF(struct ir3_compiler_options, storage_16bit), true);
  poke<bool>(options, OFF(struct ir3_compiler_options, storage_8bit), true);
  // ir3_compiler_create keeps the dev_id pointer: it must outlive the compiler.
  static uint8_t kept_dev_id[SIZE(struct fd_dev_id)];
  std::memcpy(kept_dev_id, dev_id, sizeof dev_id);
  compiler_ = fn_.ir3_compiler_create(nullptr, kept_dev_id, info, options);
  if (!compiler_) throw CompileError("internal: ir3_compiler_create failed for the Adreno 630");
  // No preamble: a preamble runs once per dispatch through the shared constants, which a
  // KGSL dispatcher would have to set up; the arguments are read from the constant file.
  poke<bool>(compiler_, OFF(struct ir3_compiler, has_preamble), false);
  // NIR's options with loop unrolling off: every loop of the kernel IR stays one loop of the
  // machine code (edgec unrolls where it chooses to), so the static cost can multiply each
  // loop's instructions by the trip count the kernel IR knows.
  const uint8_t* opts = static_cast<const uint8_t*>(fn_.ir3_get_compiler_options(compiler_));
  nir_options_copy_.assign(opts, opts + SIZE(nir_shader_compiler_options));
  const size_t base = OFF(struct ir3_compiler, nir_options);
  poke<unsigned>(nir_options_copy_.data(), OFF(struct ir3_compiler, nir_options.max_unroll_iterations) - base, 0u);
  poke<unsigned>(nir_options_copy_.data(),
                OFF(struct ir3_compiler, nir_options.max_unroll_iterations_aggressive) - base, 0u);
  nir_options_ = nir_options_copy_.data();
}

Ir3Limits Mesa::limits() const {
  Ir3Limits l;
  l.max_const_compute = peek<uint16_t>(compiler_, OFF(struct ir3_compiler, max_const_compute));
  l.threadsize_base = peek<uint32_t>(compiler_, OFF(struct ir3_compiler, threadsize_base));
  l.wave_granularity = peek<uint32_t>(compiler_, OFF(struct ir3_compiler, wave_granularity));
  l.max_waves = peek<uint32_t>(compiler_, OFF(struct ir3_compiler, max_waves));
  l.reg_size_vec4 = peek<uint32_t>(compiler_, OFF(struct ir3_compiler, reg_size_vec4));
  l.local_mem_size = peek<uint32_t>(compiler_, OFF(struct ir3_compiler, local_mem_size));
  l.branchstack_size = peek<uint32_t>(compiler_, OFF(struct ir3_compiler, branchstack_size));
  return l;
}

int Mesa::op(const char* name) const {
  for (int i = 0; i < enums::nir_num_opcodes; ++i) {
    const char* n = peek<const char*>(op_infos_ + i * SIZE(nir_op_info), OFF(nir_op_info, name));
    if (n && std::strcmp(n, name) == 0) return i;
  }
  throw CompileError(std::string("internal: libtinymesa.so has no NIR op ") + name);
}

int Mesa::intrinsic(const char* name) const {
  for (int i = 0; i < enums::nir_num_intrinsics; ++i) {
    const char* n = peek<const char*>(intrinsic_infos_ + i * SIZE(nir_intrinsic_info), OFF(nir_intrinsic_info, name));
    if (n && std::strcmp(n, name) == 0) return i;
  }
  throw CompileError(std::string("internal: libtinymesa.so has no NIR intrinsic ") + name);
}

int Mesa::index_slot(int intrinsic, int index) const {
  const uint8_t* info = intrinsic_infos_ + intrinsic * SIZE(nir_intrinsic_info);
  return static_cast<int>(info[OFF(nir_intrinsic_info, index_map) + index]) - 1;
}

Ir3Binary Mesa::compile(void* nir, const std::string& kernel) {
  const uint32_t stage = enums::MESA_SHADER_COMPUTE;
  fn_.nir_lower_reg_intrinsics_to_ssa(nir);
  if (std::getenv("EDGE_NIR_VALIDATE")) fn_.nir_validate_shader(nir, "edgec");
  if (const char* dump = std::getenv("EDGE_NIR_PRINT"); dump && *dump) {
    if (FILE* f = std::fopen(dump, "a")) {
      fn_.nir_print_shader(nir, f);
      std::fclose(f);
    }
  }
  fn_.ir3_nir_lower_io_vars_to_temporaries(nir);
  uint32_t nir_opts = 0;  // ir3_shader_nir_options: no robust access modes
  fn_.ir3_finalize_nir(compiler_, &nir_opts, nir);

  void* ctx = fn_.ralloc_context(nullptr);
  struct Free {
    const Fns* fn;
    void* ctx;
    void* nir;
    ~Free() {
      fn->ralloc_free(ctx);
      fn->ralloc_free(nir);
    }
  } cleanup{&fn_, ctx, nir};
  void* shader = fn_.rzalloc_size(ctx, SIZE(struct ir3_shader));
  poke<uint32_t>(shader, OFF(struct ir3_shader, type), stage);
  poke<void*>(shader, OFF(struct ir3_shader, compiler), compiler_);
  poke<void*>(shader, OFF(struct ir3_shader, nir), nir);
  fn_.ir3_nir_post_finalize(shader);
  void* v = fn_.rzalloc_size(ctx, SIZE(struct ir3_shader_variant));
  poke<uint32_t>(v, OFF(struct ir3_shader_variant, type), stage);
  poke<void*>(v, OFF(struct ir3_shader_variant, compiler), compiler_);
  void* const_state = fn_.rzalloc_size(v, SIZE(struct ir3_const_state));
  poke<void*>(v, OFF(struct ir3_shader_variant, const_state), const_state);
  poke<void*>(shader, OFF(struct ir3_shader, variants), v);
  poke<uint32_t>(shader, OFF(struct ir3_shader, variant_count), 1u);
  const unsigned uavs = peek<uint8_t>(nir, OFF(nir_shader, info.num_ssbos)) + peek<uint8_t>(nir, OFF(nir_shader, info.num_images));
  poke<uint32_t>(v, OFF(struct ir3_shader_variant, num_uavs), uavs);
  if (fn_.ir3_compile_shader_nir(compiler_, shader, v) != 0)
    throw CompileError("adreno630: Mesa's ir3 failed to compile kernel " + kernel);
  const void* bin = fn_.ir3_shader_assemble(v);
  if (!bin) throw CompileError("adreno630: ir3 failed to assemble kernel " + kernel);

  Ir3Binary out;
  const uint32_t size = peek<uint32_t>(v, OFF(struct ir3_shader_variant, info.size));
  out.code.assign(static_cast<const uint8_t*>(bin), static_cast<const uint8_t*>(bin) + size);
  out.instructions = peek<uint16_t>(v, OFF(struct ir3_shader_variant, info.instrs_count));
  out.nops = peek<uint16_t>(v, OFF(struct ir3_shader_variant, info.nops_count));
  out.full_regs = peek<int8_t>(v, OFF(struct ir3_shader_variant, info.max_reg)) + 1;
  out.half_regs = peek<int8_t>(v, OFF(struct ir3_shader_variant, info.max_half_reg)) + 1;
  out.max_waves = static_cast<unsigned>(std::max<int>(0, peek<int8_t>(v, OFF(struct ir3_shader_variant, info.max_waves))));
  out.double_threadsize = peek<bool>(v, OFF(struct ir3_shader_variant, info.double_threadsize));
  out.constlen = peek<uint32_t>(v, OFF(struct ir3_shader_variant, constlen));
  out.branchstack = peek<uint32_t>(v, OFF(struct ir3_shader_variant, branchstack));
  out.private_bytes = peek<uint32_t>(v, OFF(struct ir3_shader_variant, pvtmem_size));
  out.shared_bytes = peek<uint32_t>(v, OFF(struct ir3_shader_variant, shared_size));
  out.work_group_id_reg = peek<uint32_t>(v, OFF(struct ir3_shader_variant, cs.work_group_id));
  out.local_id_reg = peek<uint32_t>(v, OFF(struct ir3_shader_variant, cs.local_invocation_id));
  out.num_textures = peek<uint8_t>(v, OFF(struct ir3_shader_variant, image_mapping.num_tex));
  out.num_samplers = static_cast<unsigned>(std::max(0, peek<int>(v, OFF(struct ir3_shader_variant, num_samp))));
  out.num_uavs = peek<uint32_t>(v, OFF(struct ir3_shader_variant, num_uavs));
  const uint8_t* t2i = static_cast<const uint8_t*>(v) + OFF(struct ir3_shader_variant, image_mapping.tex_to_image);
  out.tex_to_image.assign(t2i, t2i + std::min(out.num_textures, 32u));

  // The constant file: UBO 0 (the arguments) where ir3 pushed it, the driver params, then
  // the immediates after every allocation (as ir3_shader.h's layout has them).
  const uint32_t ranges = peek<uint32_t>(const_state, OFF(struct ir3_const_state, ubo_state.num_enabled));
  for (uint32_t r = 0; r < ranges && r < 32; ++r) {
    const uint8_t* range = static_cast<const uint8_t*>(const_state) + OFF(struct ir3_const_state, ubo_state.range) +
                           r * SIZE(struct ir3_ubo_range);
    if (peek<uint32_t>(range, OFF(struct ir3_ubo_range, ubo.block)) != 0 || peek<bool>(range, OFF(struct ir3_ubo_range, ubo.bindless)) ||
        peek<bool>(range, OFF(struct ir3_ubo_range, ubo.global)))
      continue;
    const uint32_t start = peek<uint32_t>(range, OFF(struct ir3_ubo_range, start));
    const uint32_t end = peek<uint32_t>(range, OFF(struct ir3_ubo_range, end));
    if (start != 0) throw CompileError("adreno630: ir3 pushed UBO 0 of kernel " + kernel + " from byte " + std::to_string(start));
    out.ubo0_pushed = true;
    out.ubo0_const_dword = peek<uint32_t>(range, OFF(struct ir3_ubo_range, offset)) / 4;
    out.ubo0_bytes = end;
  }
  const uint8_t* dp = static_cast<const uint8_t*>(const_state) + OFF(struct ir3_const_state, allocs.consts) +
                      enums::IR3_CONST_ALLOC_DRIVER_PARAMS * SIZE(struct ir3_const_allocation);
  if (peek<uint32_t>(dp, OFF(struct ir3_const_allocation, size_vec4)) != 0) {
    out.has_driver_params = true;
    out.driver_params_dword = 4 * peek<uint32_t>(dp, OFF(struct ir3_const_allocation, offset_vec4));
  }
  out.immediates_dword = 4 * peek<uint32_t>(const_state, OFF(struct ir3_const_state, allocs.max_const_offset_vec4));
  const uint32_t imms = peek<uint32_t>(v, OFF(struct ir3_shader_variant, imm_state.count));
  const uint32_t* values = peek<const uint32_t*>(v, OFF(struct ir3_shader_variant, imm_state.values));
  if (imms && values) out.immediates.assign(values, values + imms);
  return out;
}

namespace {
struct DisasmCounts {
  unsigned instructions = 0, errors = 0;
};
thread_local DisasmCounts* g_counts = nullptr;  // no_match_cb gets no user data
void count_instruction(void* data, unsigned, void*) { ++static_cast<DisasmCounts*>(data)->instructions; }
void count_no_match(FILE* out, const unsigned*, size_t) {
  if (g_counts) ++g_counts->errors;
  std::fputs("<decode error>", out);
}
}  // namespace

Ir3Disassembly Mesa::disassemble(const uint8_t* code, size_t size) const {
  Ir3Disassembly d;
  char* buf = nullptr;
  size_t len = 0;
  FILE* f = open_memstream(&buf, &len);
  if (!f) throw CompileError("internal: open_memstream failed");
  DisasmCounts counts;
  g_counts = &counts;
  uint8_t opts[SIZE(struct isa_decode_options)] = {};
  poke<uint32_t>(opts, OFF(struct isa_decode_options, gpu_id), kA630GpuId);
  poke<bool>(opts, OFF(struct isa_decode_options, show_errors), true);
  poke<unsigned>(opts, OFF(struct isa_decode_options, max_errors), 1000u);
  poke<bool>(opts, OFF(struct isa_decode_options, branch_labels), false);
  poke<void*>(opts, OFF(struct isa_decode_options, cbdata), &counts);
  poke<void (*)(void*, unsigned, void*)>(opts, OFF(struct isa_decode_options, pre_instr_cb), count_instruction);
  poke<void (*)(FILE*, const unsigned*, size_t)>(opts, OFF(struct isa_decode_options, no_match_cb), count_no_match);
  std::vector<uint8_t> copy(code, code + size);  // the decoder takes a non-const pointer
  fn_.ir3_isa_disasm(copy.data(), static_cast<int>(copy.size()), f, opts);
  std::fclose(f);
  g_counts = nullptr;
  d.text.assign(buf, len);
  std::free(buf);
  d.instructions = counts.instructions;
  d.decode_errors = counts.errors;
  return d;
}

}  // namespace edgec::mesa
