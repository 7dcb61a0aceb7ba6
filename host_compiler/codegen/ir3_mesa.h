// ir3_mesa.h — Mesa's NIR builder and ir3 compiler (Adreno a6xx machine code), loaded at run
// time from the PyPI wheel tinymesa 25.2.7.2 (libtinymesa.so, MIT), for target adreno630 only.
//
// The wheel ships no headers, and no other Mesa version may stand in for it: what edgec needs
// of Mesa's ABI is declared here as facts read from Mesa 25.2.7's source (the byte offsets of
// the few struct fields it touches, the sizes of the structs it allocates, enum values). The
// library carries its debug information; tests/e2e/test_adreno630.py holds every fact below
// against it (gdb on the .so), and the loader refuses a library whose ELF build id is not the
// wheel's, so the facts and the code they describe cannot drift apart unnoticed.
//
// Opcode and intrinsic numbers are not facts here: they are looked up by name in the library's
// own tables (nir_op_infos, nir_intrinsic_infos) when it is loaded.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace edgec::mesa {

// The wheel this code was written against (tinymesa 25.2.7.2, x86-64 manylinux).
inline constexpr const char* kWheel = "tinymesa==25.2.7.2";
inline constexpr const char* kBuildId = "7fd3f45c2e07500c5f989abd2dd72be7774cd2f6";

// X(type, member, byte offset): offsetof(type, member) in Mesa 25.2.7 (x86-64).
#define EDGE_MESA_OFFSETS(X)                                        \
  X(nir_builder, cursor, 0)                                         \
  X(nir_builder, shader, 24)                                        \
  X(nir_builder, impl, 32)                                          \
  X(nir_def, num_components, 28)                                    \
  X(nir_def, bit_size, 29)                                          \
  X(nir_src, ssa, 24)                                               \
  X(nir_intrinsic_instr, def, 40)                                   \
  X(nir_intrinsic_instr, num_components, 72)                        \
  X(nir_intrinsic_instr, const_index, 76)                           \
  X(nir_intrinsic_instr, src, 120)                                  \
  X(nir_load_const_instr, def, 32)                                  \
  X(nir_load_const_instr, value, 64)                                \
  X(nir_alu_instr, def, 40)                                         \
  X(nir_alu_instr, src, 72)                                         \
  X(nir_alu_src, swizzle, 32)                                       \
  X(nir_intrinsic_info, name, 0)                                    \
  X(nir_intrinsic_info, index_map, 33)                              \
  X(nir_op_info, name, 0)                                           \
  X(nir_shader, info.name, 48)                                      \
  X(nir_shader, info.num_textures, 101)                             \
  X(nir_shader, info.num_ubos, 102)                                 \
  X(nir_shader, info.num_ssbos, 104)                                \
  X(nir_shader, info.num_images, 105)                               \
  X(nir_shader, info.shared_size, 316)                              \
  X(nir_shader, info.workgroup_size, 328)                           \
  X(struct ir3_compiler_options, disable_cache, 1)                  \
  X(struct ir3_compiler_options, storage_16bit, 12)                 \
  X(struct ir3_compiler_options, storage_8bit, 13)                  \
  X(struct fd_dev_id, gpu_id, 0)                                    \
  X(struct fd_dev_id, chip_id, 8)                                   \
  X(struct ir3_compiler, nir_options, 32)                           \
  X(struct ir3_compiler, nir_options.max_unroll_iterations, 188)    \
  X(struct ir3_compiler, nir_options.max_unroll_iterations_aggressive, 192) \
  X(struct ir3_compiler, max_const_compute, 330)                    \
  X(struct ir3_compiler, threadsize_base, 344)                      \
  X(struct ir3_compiler, wave_granularity, 348)                     \
  X(struct ir3_compiler, max_waves, 352)                            \
  X(struct ir3_compiler, reg_size_vec4, 356)                        \
  X(struct ir3_compiler, local_mem_size, 360)                       \
  X(struct ir3_compiler, branchstack_size, 364)                     \
  X(struct ir3_compiler, has_preamble, 409)                         \
  X(struct ir3_shader, type, 0)                                     \
  X(struct ir3_shader, variant_count, 8)                            \
  X(struct ir3_shader, compiler, 16)                                \
  X(struct ir3_shader, nir, 256)                                    \
  X(struct ir3_shader, variants, 1064)                              \
  X(struct ir3_shader_variant, type, 136)                           \
  X(struct ir3_shader_variant, compiler, 144)                       \
  X(struct ir3_shader_variant, const_state, 200)                    \
  X(struct ir3_shader_variant, imm_state.count, 212)                \
  X(struct ir3_shader_variant, imm_state.values, 216)               \
  X(struct ir3_shader_variant, info.size, 224)                      \
  X(struct ir3_shader_variant, info.instrs_count, 234)              \
  X(struct ir3_shader_variant, info.nops_count, 238)                \
  X(struct ir3_shader_variant, info.max_reg, 248)                   \
  X(struct ir3_shader_variant, info.max_half_reg, 249)              \
  X(struct ir3_shader_variant, info.max_const, 250)                 \
  X(struct ir3_shader_variant, info.max_waves, 252)                 \
  X(struct ir3_shader_variant, info.double_threadsize, 254)         \
  X(struct ir3_shader_variant, branchstack, 564)                    \
  X(struct ir3_shader_variant, instrlen, 572)                       \
  X(struct ir3_shader_variant, constlen, 576)                       \
  X(struct ir3_shader_variant, pvtmem_size, 580)                    \
  X(struct ir3_shader_variant, shared_size, 588)                    \
  X(struct ir3_shader_variant, image_mapping.tex_to_image, 1188)    \
  X(struct ir3_shader_variant, image_mapping.num_tex, 1220)         \
  X(struct ir3_shader_variant, num_samp, 1224)                      \
  X(struct ir3_shader_variant, mergedregs, 1243)                    \
  X(struct ir3_shader_variant, num_uavs, 1480)                      \
  X(struct ir3_shader_variant, cs.local_invocation_id, 1492)        \
  X(struct ir3_shader_variant, cs.work_group_id, 1496)              \
  X(struct ir3_const_state, allocs.consts, 44)                      \
  X(struct ir3_const_state, allocs.max_const_offset_vec4, 236)      \
  X(struct ir3_const_state, ubo_state.range, 384)                   \
  X(struct ir3_const_state, ubo_state.num_enabled, 1408)            \
  X(struct ir3_const_allocation, offset_vec4, 0)                    \
  X(struct ir3_const_allocation, size_vec4, 4)                      \
  X(struct ir3_ubo_range, ubo.block, 8)                             \
  X(struct ir3_ubo_range, ubo.bindless, 14)                         \
  X(struct ir3_ubo_range, ubo.global, 15)                           \
  X(struct ir3_ubo_range, offset, 16)                               \
  X(struct ir3_ubo_range, start, 20)                                \
  X(struct ir3_ubo_range, end, 24)                                  \
  X(struct isa_decode_options, gpu_id, 0)                           \
  X(struct isa_decode_options, show_errors, 4)                      \
  X(struct isa_decode_options, max_errors, 8)                       \
  X(struct isa_decode_options, branch_labels, 12)                   \
  X(struct isa_decode_options, cbdata, 16)                          \
  X(struct isa_decode_options, pre_instr_cb, 40)                    \
  X(struct isa_decode_options, no_match_cb, 56)

// X(type, bytes): sizeof(type).
#define EDGE_MESA_SIZES(X)                  \
  X(nir_builder, 40)                        \
  X(nir_src, 32)                            \
  X(nir_alu_src, 48)                        \
  X(nir_const_value, 8)                     \
  X(nir_intrinsic_info, 112)                \
  X(nir_op_info, 56)                        \
  X(nir_shader_compiler_options, 248)       \
  X(struct fd_dev_id, 16)                   \
  X(struct ir3_compiler_options, 32)        \
  X(struct ir3_shader_nir_options, 4)       \
  X(struct ir3_shader, 1216)                \
  X(struct ir3_shader_variant, 2040)        \
  X(struct ir3_const_state, 1424)           \
  X(struct ir3_const_allocation, 16)        \
  X(struct ir3_ubo_range, 32)               \
  X(struct isa_decode_options, 80)

// X(name, value): enum constants.
#define EDGE_MESA_ENUMS(X)                  \
  X(MESA_SHADER_COMPUTE, 5)                 \
  X(nir_jump_break, 2)                      \
  X(NIR_INTRINSIC_BASE, 0)                  \
  X(NIR_INTRINSIC_WRITE_MASK, 1)            \
  X(NIR_INTRINSIC_RANGE_BASE, 4)            \
  X(NIR_INTRINSIC_RANGE, 5)                 \
  X(NIR_INTRINSIC_IMAGE_DIM, 14)            \
  X(NIR_INTRINSIC_IMAGE_ARRAY, 15)          \
  X(NIR_INTRINSIC_FORMAT, 16)               \
  X(NIR_INTRINSIC_ACCESS, 17)               \
  X(NIR_INTRINSIC_ALIGN_MUL, 20)            \
  X(NIR_INTRINSIC_ALIGN_OFFSET, 21)         \
  X(NIR_INTRINSIC_SRC_TYPE, 23)             \
  X(NIR_INTRINSIC_DEST_TYPE, 24)            \
  X(NIR_INTRINSIC_EXECUTION_SCOPE, 40)      \
  X(NIR_INTRINSIC_NUM_COMPONENTS, 55)       \
  X(NIR_INTRINSIC_NUM_ARRAY_ELEMS, 56)      \
  X(NIR_INTRINSIC_BIT_SIZE, 57)             \
  X(NIR_INTRINSIC_DIVERGENT, 58)            \
  X(NIR_INTRINSIC_LEGACY_FABS, 59)          \
  X(NIR_INTRINSIC_LEGACY_FNEG, 60)          \
  X(NIR_INTRINSIC_LEGACY_FSAT, 61)          \
  X(NIR_INTRINSIC_NUM_INDEX_FLAGS, 75)      \
  X(nir_num_intrinsics, 732)                \
  X(nir_num_opcodes, 489)                   \
  X(ACCESS_NON_WRITEABLE, 16)               \
  X(ACCESS_CAN_REORDER, 64)                 \
  X(GLSL_SAMPLER_DIM_2D, 1)                 \
  X(nir_type_float16, 144)                  \
  X(nir_type_float32, 160)                  \
  X(IR3_CONST_ALLOC_DRIVER_PARAMS, 3)

// The facts by name, at compile time: EDGE_MESA_OFF(nir_def, bit_size),
// EDGE_MESA_SIZE(struct ir3_shader). A name missing from the lists does not compile.
constexpr size_t offset_of(std::string_view type, std::string_view member) {
#define EDGE_MESA_FIND(t, m, v) \
  if (type == #t && member == #m) return v;
  EDGE_MESA_OFFSETS(EDGE_MESA_FIND)
#undef EDGE_MESA_FIND
  throw "ir3_mesa.h: no such offset";
}
constexpr size_t size_of(std::string_view type) {
#define EDGE_MESA_FIND(t, v) \
  if (type == #t) return v;
  EDGE_MESA_SIZES(EDGE_MESA_FIND)
#undef EDGE_MESA_FIND
  throw "ir3_mesa.h: no such size";
}
#define EDGE_MESA_OFF(type, member) (std::integral_constant<size_t, ::edgec::mesa::offset_of(#type, #member)>::value)
#define EDGE_MESA_SIZE(type) (std::integral_constant<size_t, ::edgec::mesa::size_of(#type)>::value)

// Named constants for the code (the lists above are what the test reads).
namespace enums {
#define EDGE_MESA_ENUM_CONST(name, value) inline constexpr int name = value;
EDGE_MESA_ENUMS(EDGE_MESA_ENUM_CONST)
#undef EDGE_MESA_ENUM_CONST
}  // namespace enums

// The Adreno 630 of a Snapdragon 845: fd_dev_id as Mesa's freedreno device table knows it.
inline constexpr uint32_t kA630GpuId = 630;
inline constexpr uint64_t kA630ChipId = 0x06030001;

// One compiled compute shader and what a dispatcher needs to launch it.
struct Ir3Binary {
  std::vector<uint8_t> code;          // a6xx instructions, 8 bytes each
  unsigned instructions = 0;          // ir3_info.instrs_count (nops included)
  unsigned nops = 0;
  int full_regs = 0;                  // vec4 full registers (max_reg + 1)
  int half_regs = 0;                  // vec4 half registers (max_half_reg + 1)
  unsigned constlen = 0;              // vec4 units of the constant file
  unsigned branchstack = 0;
  unsigned private_bytes = 0;         // pvtmem_size (per fiber)
  unsigned shared_bytes = 0;
  unsigned max_waves = 0;             // waves per SP core this footprint allows (ir3's estimate)
  bool double_threadsize = false;     // 128 fibers per wave instead of 64
  uint32_t ubo0_const_dword = 0;      // where UBO 0 bytes [0, ubo0_bytes) sit in the constant file
  uint32_t ubo0_bytes = 0;
  bool ubo0_pushed = false;           // false: UBO 0 is not in the constant file (no arguments read)
  uint32_t immediates_dword = 0;      // where the immediates go in the constant file
  std::vector<uint32_t> immediates;
  uint32_t driver_params_dword = 0;   // driver params (work-group size ...); 0 with none
  bool has_driver_params = false;
  unsigned work_group_id_reg = 0xfc;  // register ids (4 * register + component); 0xfc: none
  unsigned local_id_reg = 0xfc;
  unsigned num_textures = 0, num_samplers = 0, num_uavs = 0;
  std::vector<uint8_t> tex_to_image;  // texture slot -> image index
};

// The a630 limits the compiler reports (ir3_compiler fields for gpu 630).
struct Ir3Limits {
  unsigned max_const_compute = 0;   // vec4
  unsigned threadsize_base = 0;
  unsigned wave_granularity = 0;
  unsigned max_waves = 0;
  unsigned reg_size_vec4 = 0;
  unsigned local_mem_size = 0;
  unsigned branchstack_size = 0;
};

// One disassembled program: text and the instructions that failed to decode.
struct Ir3Disassembly {
  std::string text;
  unsigned instructions = 0;
  unsigned decode_errors = 0;
};

// A nir_builder as raw bytes (sizeof(nir_builder), pointer-aligned).
struct NirBuilderBytes {
  alignas(8) unsigned char bytes[40];
};

// The loaded library. get() loads it on first use (only target adreno630 calls it) and throws
// CompileError naming the wheel and how to install it when it is missing or another build.
class Mesa {
 public:
  static Mesa& get();
  Ir3Limits limits() const;
  // NIR -> ir3 -> a6xx machine code. Takes ownership of (and frees) the shader.
  Ir3Binary compile(void* nir_shader, const std::string& kernel);
  Ir3Disassembly disassemble(const uint8_t* code, size_t size) const;
  const void* nir_options() const { return nir_options_; }
  int op(const char* name) const;         // nir_op by name
  int intrinsic(const char* name) const;  // nir_intrinsic_op by name
  // const_index slot of an intrinsic's index (NIR_INTRINSIC_*), -1 when it has none.
  int index_slot(int intrinsic, int index) const;
  std::string path() const { return path_; }

  // The library's functions edgec calls (prototypes as in Mesa 25.2.7; pointers are opaque).
  struct Fns {
    void (*glsl_type_singleton_init_or_ref)();
    const void* (*fd_dev_info_raw)(const void* dev_id);
    void* (*ir3_compiler_create)(void* dev, const void* dev_id, const void* dev_info, const void* options);
    const void* (*ir3_get_compiler_options)(void* compiler);
    void (*ir3_finalize_nir)(void* compiler, const void* options, void* nir);
    void (*ir3_nir_lower_io_vars_to_temporaries)(void* nir);
    void (*ir3_nir_post_finalize)(void* shader);
    int (*ir3_compile_shader_nir)(void* compiler, void* shader, void* variant);
    void* (*ir3_shader_assemble)(void* variant);
    void (*ir3_isa_disasm)(void* bin, int size, FILE* out, const void* options);
    void* (*ralloc_context)(const void* parent);
    void* (*rzalloc_size)(const void* ctx, size_t size);
    void (*ralloc_free)(void* ptr);
    // Returns the 40-byte nir_builder by value (in memory: the caller's buffer); variadic.
    NirBuilderBytes (*nir_builder_init_simple_shader)(int stage, const void* options, const char* name, ...);
    void* (*nir_build_alu1)(void* b, int op, void* a);
    void* (*nir_build_alu2)(void* b, int op, void* a, void* c);
    void* (*nir_build_alu3)(void* b, int op, void* a, void* c, void* d);
    void* (*nir_intrinsic_instr_create)(void* shader, int op);
    void* (*nir_load_const_instr_create)(void* shader, unsigned num_components, unsigned bit_size);
    void* (*nir_alu_instr_create)(void* shader, int op);
    void* (*nir_jump_instr_create)(void* shader, int type);
    void* (*nir_undef_instr_create)(void* shader, unsigned num_components, unsigned bit_size);
    void (*nir_def_init)(void* instr, void* def, unsigned num_components, unsigned bit_size);
    void (*nir_builder_instr_insert)(void* b, void* instr);
    void (*nir_builder_instr_insert_at_top)(void* b, void* instr);
    void* (*nir_push_loop)(void* b);
    void (*nir_pop_loop)(void* b, void* loop);
    void* (*nir_push_if)(void* b, void* cond);
    void* (*nir_push_else)(void* b, void* nif);
    void (*nir_pop_if)(void* b, void* nif);
    bool (*nir_lower_reg_intrinsics_to_ssa)(void* shader);
    void (*nir_validate_shader)(void* shader, const char* when);
    void (*nir_print_shader)(void* shader, FILE* out);
  };
  const Fns& fn() const { return fn_; }

 private:
  Mesa() = default;
  void load();
  std::string path_;
  void* handle_ = nullptr;
  void* compiler_ = nullptr;
  const void* nir_options_ = nullptr;    // a copy of ir3's, loop unrolling off (see load())
  std::vector<uint8_t> nir_options_copy_;
  const uint8_t* intrinsic_infos_ = nullptr;
  const uint8_t* op_infos_ = nullptr;
  Fns fn_{};
};

// The ELF build id (hex) of a shared object file, empty when it has none or is no ELF file.
std::string elf_build_id(const std::string& path);

}  // namespace edgec::mesa
