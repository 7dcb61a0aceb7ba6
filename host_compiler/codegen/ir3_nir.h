// ir3_nir.h — a small C++ face over Mesa's NIR builder (libtinymesa.so, codegen/ir3_mesa.h):
// constants, ALU ops by name, the intrinsics edgec's kernels use, loops and ifs. SSA values
// are opaque nir_def pointers.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "codegen/ir3_mesa.h"

namespace edgec::mesa {

using Def = void*;  // nir_def*

class NirBuilder {
 public:
  // A compute shader named `name` with a fixed work-group size.
  NirBuilder(Mesa& mesa, const std::string& name, std::array<unsigned, 3> workgroup_size);
  void* shader() const;
  Mesa& mesa() { return m_; }

  Def imm(uint64_t bits, unsigned bit_size);
  Def imm_int(int64_t v, unsigned bit_size) { return imm(static_cast<uint64_t>(v), bit_size); }
  Def imm_float(double v, unsigned bit_size);  // 16 or 32 bits, rounded to nearest even
  Def imm_bool(bool v) { return imm(v ? 1 : 0, 1); }
  Def alu(const char* op, Def a);
  Def alu(const char* op, Def a, Def b);
  Def alu(const char* op, Def a, Def b, Def c);
  Def channel(Def vec, unsigned c);  // one component of a vector
  Def vec(const std::vector<Def>& xs);  // a vector of 2-4 scalars of one bit size
  static unsigned bit_size(Def d);
  static unsigned num_components(Def d);

  // An intrinsic: sources, then NIR_INTRINSIC_* indices; a result of dest_components x
  // dest_bits unless dest_components is 0. num_components: the instruction's own field
  // (vectorized loads and stores), 0 to leave it.
  Def intrinsic(const char* name, const std::vector<Def>& srcs, unsigned dest_components, unsigned dest_bits,
                const std::vector<std::pair<int, int>>& indices, unsigned num_components = 0);

  // Registers (NIR's decl_reg / load_reg / store_reg, made SSA before ir3 sees them):
  // accumulators and loop counters.
  Def decl_reg(unsigned bit_size);
  Def load_reg(Def reg);
  void store_reg(Def reg, Def value);

  void* push_loop();
  void pop_loop(void* loop);
  void* push_if(Def cond);
  void pop_if(void* nif);
  void break_loop();  // at the current position, inside a loop

  // Where instructions go: the builder's nir_cursor as bytes, to save and restore.
  using Cursor = std::array<uint8_t, 16>;
  Cursor cursor() const;
  void set_cursor(const Cursor& c);

  // shader_info's counts of UBOs, images and textures the shader uses (ir3 needs them).
  void set_resources(unsigned ubos, unsigned images, unsigned textures);

  // Hands the shader to the caller (Mesa::compile frees it); the builder is done.
  void* release();

 private:
  int op(const char* name);
  int intr(const char* name);
  Def insert_alu_def(void* alu_instr);
  Mesa& m_;
  NirBuilderBytes b_;
  void* shader_ = nullptr;
  std::unordered_map<std::string, int> ops_, intrinsics_;
};

}  // namespace edgec::mesa
