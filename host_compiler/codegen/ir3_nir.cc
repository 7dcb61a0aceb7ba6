// NIR construction over libtinymesa.so (codegen/ir3_nir.h), through ir3_mesa.h's offsets.
#include "codegen/ir3_nir.h"

#include <cmath>
#include <cstring>

#include "graph/graph.h"

namespace edgec::mesa {

namespace {
constexpr size_t kBuilderShader = EDGE_MESA_OFF(nir_builder, shader);
constexpr size_t kDefNumComponents = EDGE_MESA_OFF(nir_def, num_components), kDefBitSize = EDGE_MESA_OFF(nir_def, bit_size);
constexpr size_t kSrcSize = EDGE_MESA_SIZE(nir_src), kSrcSsa = EDGE_MESA_OFF(nir_src, ssa);
constexpr size_t kIntrDef = EDGE_MESA_OFF(nir_intrinsic_instr, def);
constexpr size_t kIntrNumComponents = EDGE_MESA_OFF(nir_intrinsic_instr, num_components);
constexpr size_t kIntrConstIndex = EDGE_MESA_OFF(nir_intrinsic_instr, const_index);
constexpr size_t kIntrSrc = EDGE_MESA_OFF(nir_intrinsic_instr, src);
constexpr size_t kConstDef = EDGE_MESA_OFF(nir_load_const_instr, def), kConstValue = EDGE_MESA_OFF(nir_load_const_instr, value);
constexpr size_t kAluDef = EDGE_MESA_OFF(nir_alu_instr, def), kAluSrc = EDGE_MESA_OFF(nir_alu_instr, src);
constexpr size_t kAluSrcSwizzle = EDGE_MESA_OFF(nir_alu_src, swizzle), kAluSrcSize = EDGE_MESA_SIZE(nir_alu_src);
constexpr size_t kShaderWorkgroupSize = EDGE_MESA_OFF(nir_shader, info.workgroup_size);

uint8_t* at(void* p, size_t off) { return static_cast<uint8_t*>(p) + off; }

// float -> IEEE half bits, round to nearest even (constants only).
uint16_t half_bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000;
  const uint32_t absx = x & 0x7fffffff;
  if (absx > 0x7f800000) return static_cast<uint16_t>(sign | 0x7e00);  // NaN
  if (absx >= 0x477ff000) return static_cast<uint16_t>(sign | 0x7c00);  // rounds to inf
  if (absx < 0x38800000) {  // subnormal half (or zero)
    float a;
    std::memcpy(&a, &absx, 4);
    const float scaled = a * 16777216.0f;  // 2^24: one unit of the smallest subnormal
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(scaled)));
  }
  const uint32_t mant = absx & 0x7fffff;
  uint32_t h = ((absx >> 23) - 112) << 10 | (mant >> 13);
  const uint32_t rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) ++h;
  return static_cast<uint16_t>(sign | h);
}
}  // namespace

NirBuilder::NirBuilder(Mesa& mesa, const std::string& name, std::array<unsigned, 3> workgroup_size) : m_(mesa) {
  b_ = m_.fn().nir_builder_init_simple_shader(enums::MESA_SHADER_COMPUTE, m_.nir_options(), "%s", name.c_str());
  std::memcpy(&shader_, b_.bytes + kBuilderShader, sizeof shader_);
  if (!shader_) throw CompileError("internal: nir_builder_init_simple_shader failed");
  for (int d = 0; d < 3; ++d) {
    const uint16_t s = static_cast<uint16_t>(workgroup_size[d]);
    std::memcpy(at(shader_, kShaderWorkgroupSize + 2 * d), &s, 2);
  }
}

void* NirBuilder::shader() const { return shader_; }

void NirBuilder::set_resources(unsigned ubos, unsigned images, unsigned textures) {
  *at(shader_, EDGE_MESA_OFF(nir_shader, info.num_ubos)) = static_cast<uint8_t>(ubos);
  *at(shader_, EDGE_MESA_OFF(nir_shader, info.num_images)) = static_cast<uint8_t>(images);
  *at(shader_, EDGE_MESA_OFF(nir_shader, info.num_textures)) = static_cast<uint8_t>(textures);
}

void* NirBuilder::release() {
  void* s = shader_;
  shader_ = nullptr;
  return s;
}

int NirBuilder::op(const char* name) {
  auto it = ops_.find(name);
  if (it != ops_.end()) return it->second;
  return ops_[name] = m_.op(name);
}
int NirBuilder::intr(const char* name) {
  auto it = intrinsics_.find(name);
  if (it != intrinsics_.end()) return it->second;
  return intrinsics_[name] = m_.intrinsic(name);
}

unsigned NirBuilder::bit_size(Def d) { return *at(d, kDefBitSize); }
unsigned NirBuilder::num_components(Def d) { return *at(d, kDefNumComponents); }

Def NirBuilder::imm(uint64_t bits, unsigned bit_size) {
  void* instr = m_.fn().nir_load_const_instr_create(shader_, 1, bit_size);
  if (bit_size < 64) bits &= (uint64_t{1} << bit_size) - 1;
  if (bit_size == 1) {
    const bool b = bits != 0;
    std::memset(at(instr, kConstValue), 0, 8);
    std::memcpy(at(instr, kConstValue), &b, 1);
  } else {
    std::memcpy(at(instr, kConstValue), &bits, 8);  // nir_const_value: little-endian union
  }
  m_.fn().nir_builder_instr_insert(b_.bytes, instr);
  return at(instr, kConstDef);
}

Def NirBuilder::imm_float(double v, unsigned bit_size) {
  const float f = static_cast<float>(v);
  if (bit_size == 16) return imm(half_bits(f), 16);
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return imm(bits, 32);
}

Def NirBuilder::alu(const char* name, Def a) { return m_.fn().nir_build_alu1(b_.bytes, op(name), a); }
Def NirBuilder::alu(const char* name, Def a, Def b) { return m_.fn().nir_build_alu2(b_.bytes, op(name), a, b); }
Def NirBuilder::alu(const char* name, Def a, Def b, Def c) {
  return m_.fn().nir_build_alu3(b_.bytes, op(name), a, b, c);
}

Def NirBuilder::channel(Def vec, unsigned c) {
  void* mov = m_.fn().nir_alu_instr_create(shader_, op("mov"));
  std::memcpy(at(mov, kAluSrc + kSrcSsa), &vec, sizeof vec);
  *at(mov, kAluSrc + kAluSrcSwizzle) = static_cast<uint8_t>(c);
  m_.fn().nir_def_init(mov, at(mov, kAluDef), 1, bit_size(vec));
  m_.fn().nir_builder_instr_insert(b_.bytes, mov);
  return at(mov, kAluDef);
}

Def NirBuilder::vec(const std::vector<Def>& xs) {
  static const char* const names[] = {"vec2", "vec3", "vec4"};
  if (xs.size() < 2 || xs.size() > 4) throw CompileError("internal: NIR vector of " + std::to_string(xs.size()));
  void* v = m_.fn().nir_alu_instr_create(shader_, op(names[xs.size() - 2]));
  for (size_t i = 0; i < xs.size(); ++i) {
    std::memcpy(at(v, kAluSrc + i * kAluSrcSize + kSrcSsa), &xs[i], sizeof xs[i]);
    *at(v, kAluSrc + i * kAluSrcSize + kAluSrcSwizzle) = 0;
  }
  m_.fn().nir_def_init(v, at(v, kAluDef), static_cast<unsigned>(xs.size()), bit_size(xs[0]));
  m_.fn().nir_builder_instr_insert(b_.bytes, v);
  return at(v, kAluDef);
}

Def NirBuilder::intrinsic(const char* name, const std::vector<Def>& srcs, unsigned dest_components, unsigned dest_bits,
                          const std::vector<std::pair<int, int>>& indices, unsigned num_components) {
  const int id = intr(name);
  void* instr = m_.fn().nir_intrinsic_instr_create(shader_, id);
  if (num_components) *at(instr, kIntrNumComponents) = static_cast<uint8_t>(num_components);
  for (const auto& [index, value] : indices) {
    const int slot = m_.index_slot(id, index);
    if (slot < 0) throw CompileError(std::string("internal: NIR intrinsic ") + name + " has no index " + std::to_string(index));
    std::memcpy(at(instr, kIntrConstIndex + 4 * slot), &value, 4);
  }
  for (size_t i = 0; i < srcs.size(); ++i) std::memcpy(at(instr, kIntrSrc + i * kSrcSize + kSrcSsa), &srcs[i], sizeof(Def));
  Def def = nullptr;
  if (dest_components) {
    def = at(instr, kIntrDef);
    m_.fn().nir_def_init(instr, def, dest_components, dest_bits);
  }
  m_.fn().nir_builder_instr_insert(b_.bytes, instr);
  return def;
}

Def NirBuilder::decl_reg(unsigned bits) {
  const int id = intr("decl_reg");
  void* instr = m_.fn().nir_intrinsic_instr_create(shader_, id);
  const std::pair<int, int> indices[] = {{enums::NIR_INTRINSIC_NUM_COMPONENTS, 1},
                                         {enums::NIR_INTRINSIC_NUM_ARRAY_ELEMS, 0},
                                         {enums::NIR_INTRINSIC_BIT_SIZE, static_cast<int>(bits)},
                                         {enums::NIR_INTRINSIC_DIVERGENT, 1}};
  for (const auto& [index, value] : indices) {
    const int slot = m_.index_slot(id, index);
    if (slot < 0) throw CompileError("internal: decl_reg lacks an index");
    std::memcpy(at(instr, kIntrConstIndex + 4 * slot), &value, 4);
  }
  Def def = at(instr, kIntrDef);
  m_.fn().nir_def_init(instr, def, 1, 32);
  m_.fn().nir_builder_instr_insert_at_top(b_.bytes, instr);  // declarations open the function
  return def;
}

Def NirBuilder::load_reg(Def reg) {
  // The register's bit size: decl_reg's BIT_SIZE index.
  const int decl = intr("decl_reg");
  const int slot = m_.index_slot(decl, enums::NIR_INTRINSIC_BIT_SIZE);
  uint8_t* decl_instr = static_cast<uint8_t*>(reg) - kIntrDef;
  int bits;
  std::memcpy(&bits, decl_instr + kIntrConstIndex + 4 * slot, 4);
  return intrinsic("load_reg", {reg}, 1, static_cast<unsigned>(bits),
                   {{enums::NIR_INTRINSIC_BASE, 0}, {enums::NIR_INTRINSIC_LEGACY_FABS, 0}, {enums::NIR_INTRINSIC_LEGACY_FNEG, 0}});
}

void NirBuilder::store_reg(Def reg, Def value) {
  intrinsic("store_reg", {value, reg}, 0, 0,
            {{enums::NIR_INTRINSIC_BASE, 0}, {enums::NIR_INTRINSIC_WRITE_MASK, 1}, {enums::NIR_INTRINSIC_LEGACY_FSAT, 0}},
            1);
}

void* NirBuilder::push_loop() { return m_.fn().nir_push_loop(b_.bytes); }
void NirBuilder::pop_loop(void* loop) { m_.fn().nir_pop_loop(b_.bytes, loop); }
void* NirBuilder::push_if(Def cond) { return m_.fn().nir_push_if(b_.bytes, cond); }
void NirBuilder::pop_if(void* nif) { m_.fn().nir_pop_if(b_.bytes, nif); }
void NirBuilder::break_loop() {
  void* jump = m_.fn().nir_jump_instr_create(shader_, enums::nir_jump_break);
  m_.fn().nir_builder_instr_insert(b_.bytes, jump);
}

NirBuilder::Cursor NirBuilder::cursor() const {
  Cursor c;
  std::memcpy(c.data(), b_.bytes, c.size());
  return c;
}
void NirBuilder::set_cursor(const Cursor& c) { std::memcpy(b_.bytes, c.data(), c.size()); }

}  // namespace edgec::mesa
