// The adreno630 back end: kernel IR -> NIR (Mesa's builder) -> ir3 -> a630 machine code, one
// program per kernel in one Ir3A630 code section (bundle.fbs). It renders the schedule of the
// OpenCL back end (choose_opencl_tiling: a work-item computes a tile of vec_lanes x
// unroll_lanes outputs) with the semantics of opencl_emit.cc: the NaN rules of max / min,
// saturating float -> int casts, integer division by zero giving 0, clamped Gather positions,
// float16 computed in half with float32 accumulators, guarded loads reading element 0.
//
// Compile-only: no executor of a6xx shaders exists here, so the code is checked by decoding
// it and by the register and constant limits, never by running it.
//
// Kernel ABI (schema/kernel_abi.h): argument i's 64-bit address is read from UBO 0 at byte
// 8 * i (ir3 moves UBO 0 into the constant file; A630Program.args says where), the
// work-group size is fixed at compile time, work-item ids come from the work-group id and
// local invocation id system values.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "codegen/backend.h"
#include "codegen/ir3_mesa.h"
#include "codegen/ir3_nir.h"
#include "bundle_header.h"
#include "codegen/opencl_emit.h"

namespace edgec {

namespace {

using mesa::Def;
using mesa::NirBuilder;
namespace me = mesa::enums;

bool is_unsigned(DType t) {
  return t == DType::U8 || t == DType::U16 || t == DType::U32 || t == DType::U64 || t == DType::Bool;
}
bool is_fp(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::F64; }
int bits_of(DType t) { return static_cast<int>(dtype_size(t) * 8); }

// How a kernel value of dtype t is held in NIR: floats at their width (F16 in half), Bool
// as NIR's 1-bit boolean, integers up to 32 bits in 32 bits (sign- or zero-extended from
// their own width after every operation), 64-bit integers in 64 bits.
unsigned rep_bits(DType t) {
  switch (t) {
    case DType::F32: return 32;
    case DType::F16: return 16;
    case DType::Bool: return 1;
    case DType::I64:
    case DType::U64: return 64;
    case DType::F64:
    case DType::BF16: return 0;  // refused before
    default: return 32;
  }
}

enum class Axis { Vec, Unroll, Reduce };  // the lanes a vector load spans

struct Deps {
  int level = 0;
  bool vec = false, unroll = false, red = false;  // red: on the unrolled reduce var
  void add(const Deps& o) {
    level = std::max(level, o.level);
    vec = vec || o.vec;
    unroll = unroll || o.unroll;
    red = red || o.red;
  }
};

// One kernel's NIR.
class Ir3KernelEmitter {
 public:
  Ir3KernelEmitter(const KernelIR& k, const OpenCLTiling& tl, NirBuilder& b)
      : k_(k), tl_(tl), b_(b) {
    narrow_ = index_math_fits_32_bits(k);
    ib_ = narrow_ ? 32 : 64;
    const int rank = static_cast<int>(k.out_shape.size());
    var_level_.assign(k.num_vars(), 0);
    for (size_t j = 0; j < k.reduce_extents.size(); ++j)
      if (k.reduce_extents[j] != 1) {
        loop_dims_.push_back(static_cast<int>(j));
        var_level_[rank + j] = static_cast<int>(loop_dims_.size());
      }
    vec_full_ = tl.vec_dim < 0 || k.out_shape[tl.vec_dim] % tl.vec_lanes == 0;
    unroll_full_ = tl.unroll_dim < 0 || k.out_shape[tl.unroll_dim] % tl.unroll_lanes == 0;
    check_dtypes();
    choose_reduce_lanes();
  }

  // Emits the kernel; returns each loop's trip count in the order the loops open.
  std::vector<uint32_t> emit() {
    std::vector<uint32_t> trips;
    if (numel(k_.out_shape) == 0) return trips;
    const int nu = tl_.unroll_lanes, nv = tl_.vec_lanes;
    // Work-items past the outputs (the global size is rounded up) do nothing.
    void* bounds = nullptr;
    {
      Def in_range = nullptr;
      for (size_t g = 0; g < tl_.work.size() && tl_.vec_dim >= 0; ++g)
        if (k_.launch.global_size[g] > tl_.work[g]) {
          Def c = b_.alu("ult", global_id(g), b_.imm_int(static_cast<int64_t>(tl_.work[g]), 32));
          in_range = in_range ? b_.alu("iand", in_range, c) : c;
        }
      if (in_range) bounds = b_.push_if(in_range);
    }
    cursors_.assign(loop_dims_.size() + 1, b_.cursor());
    std::vector<std::vector<Def>> accs(nu, std::vector<Def>(nv, nullptr));
    if (k_.has_reduce()) {
      const unsigned abits = rep_bits(acc_type());
      for (int u = 0; u < nu; ++u)
        for (int l = 0; l < nv; ++l) {
          accs[u][l] = b_.decl_reg(abits);
          b_.store_reg(accs[u][l], reduce_identity());
        }
      // The loops, outermost first: counter, exit test, then (innermost) the body.
      std::vector<std::pair<void*, Def>> loops;  // loop, counter register
      const int rank = static_cast<int>(k_.out_shape.size());
      for (size_t j = 0; j < loop_dims_.size(); ++j) {
        const int64_t extent = k_.reduce_extents[loop_dims_[j]];
        const int step = rank + loop_dims_[j] == red_var_ ? red_lanes_ : 1;
        trips.push_back(static_cast<uint32_t>(extent / step));
        Def counter = b_.decl_reg(ib_);
        b_.store_reg(counter, b_.imm_int(0, ib_));
        void* loop = b_.push_loop();
        Def i = b_.load_reg(counter);
        void* done = b_.push_if(b_.alu("ige", i, b_.imm_int(extent, ib_)));
        b_.break_loop();
        b_.pop_if(done);
        loop_vars_[rank + loop_dims_[j]] = i;
        loops.push_back({loop, counter});
        cursors_[j + 1] = b_.cursor();
        cur_level_ = static_cast<int>(j + 1);
      }
      if (loop_dims_.empty()) cur_level_ = 0;
      // Each accumulator takes the unrolled reduce steps in order: the sum is the scalar loop's.
      for (int r = 0; r < red_lanes_; ++r)
        for (int u = 0; u < nu; ++u)
          for (int l = 0; l < nv; ++l) {
            u_ = u, l_ = l, r_ = r;
            Def acc = b_.load_reg(accs[u][l]);
            b_.store_reg(accs[u][l], accumulate(acc, k_.reduce_body));
          }
      r_ = 0;
      for (size_t j = loops.size(); j-- > 0;) {
        cur_level_ = static_cast<int>(j);
        Def i = b_.load_reg(loops[j].second);
        const int step = rank + loop_dims_[j] == red_var_ ? red_lanes_ : 1;
        b_.store_reg(loops[j].second, b_.alu("iadd", i, b_.imm_int(step, ib_)));
        b_.pop_loop(loops[j].first);
      }
    }
    cur_level_ = 0;
    // A row of the tile along the vec dim is one vector store where its outputs are
    // consecutive and aligned.
    const bool vector_store = index_vector_ok(output_index(k_), k_.args[0].dtype, Axis::Vec, nv, tl_.vec_dim, vec_full_) &&
                              k_.result->dtype == k_.args[0].dtype;
    for (int u = 0; u < nu; ++u) {
      std::vector<Def> row;
      for (int l = 0; l < nv; ++l) {
        u_ = u, l_ = l;
        if (k_.has_reduce()) acc_value_ = b_.load_reg(accs[u][l]);
        row.push_back(val(k_.result));  // values reading the accumulator are per lane (copy_of)
      }
      for (int l = 0; l < nv; ++l) {
        if (vector_store && l > 0) break;
        l_ = l;
        store(vector_store ? row : std::vector<Def>{row[l]});
      }
    }
    if (bounds) b_.pop_if(bounds);
    return trips;
  }

 private:
  // Unrolls the innermost reduce loop by the OpenCL back end's step count (reduce_unroll_lanes):
  // loads the tile's lanes cannot share become vector loads along the reduce dim where they
  // read consecutive elements, and the loop's counter, compare and branches (with their nops)
  // are paid once per 4 steps (ir3 unrolls nothing itself here: ir3_mesa.cc). Unlike the
  // OpenCL back end, also where no load becomes a vector load: a 1x1 conv's loop body of 16
  // multiply-adds spends a fifth of its issues on the loop.
  void choose_reduce_lanes() {
    if (!k_.has_reduce() || loop_dims_.empty()) return;
    red_var_ = static_cast<int>(k_.out_shape.size()) + loop_dims_.back();
    red_lanes_ = reduce_unroll_lanes(k_, tl_, loop_dims_.back(), true);
    if (red_lanes_ < 2) red_var_ = -1;
    if (red_var_ >= 0 && k_.reduce_extents[loop_dims_.back()] == red_lanes_) {  // unrolled whole: no loop
      loop_dims_.pop_back();
      var_level_[red_var_] = static_cast<int>(loop_dims_.size());
    }
    value_deps_.clear();  // computed while choosing
    index_deps_.clear();
  }

  // ---- dtypes ----
  void check_dtypes() {
    auto bad = [&](DType t) { return t == DType::F64 || t == DType::BF16; };
    for (const KernelArg& a : k_.args)
      if (bad(a.dtype))
        throw CompileError(std::string("adreno630: ") + dtype_name(a.dtype) + " tensors are not supported (no " +
                           dtype_name(a.dtype) + " arithmetic in ir3); kernel " + k_.name);
    for (const auto& v : k_.values)
      if (bad(v->dtype))
        throw CompileError(std::string("adreno630: ") + dtype_name(v->dtype) + " values are not supported (no " +
                           dtype_name(v->dtype) + " arithmetic in ir3); kernel " + k_.name);
  }
  DType acc_type() const { return k_.acc_dtype == DType::F16 ? DType::F32 : k_.acc_dtype; }

  // ---- the work-item ----
  Def global_id(size_t g) {
    if (gid_[g]) return gid_[g];
    if (!wg_id_) {
      wg_id_ = b_.intrinsic("load_workgroup_id", {}, 3, 32, {});
      local_id_ = b_.intrinsic("load_local_invocation_id", {}, 3, 32, {});
    }
    const auto local = static_cast<int64_t>(k_.launch.local_size.empty() ? 1 : k_.launch.local_size[g]);
    Def wg = b_.channel(wg_id_, static_cast<unsigned>(g));
    Def lid = b_.channel(local_id_, static_cast<unsigned>(g));
    return gid_[g] = b_.alu("iadd", b_.alu("imul", wg, b_.imm_int(local, 32)), lid);
  }
  // Output var of the current tile copy, at level 0 (an index of ib_ bits).
  Def out_var(int var) {
    const int lane = var == tl_.vec_dim ? l_ : var == tl_.unroll_dim ? u_ : 0;
    auto key = std::make_pair(var, lane);
    if (auto it = out_vars_.find(key); it != out_vars_.end()) return it->second;
    Def r;
    auto widen = [&](Def x) { return ib_ == 64 ? b_.alu("u2u64", x) : x; };
    if (var == tl_.vec_dim || var == tl_.unroll_dim) {
      const int lanes = var == tl_.vec_dim ? tl_.vec_lanes : tl_.unroll_lanes;
      const bool full = var == tl_.vec_dim ? vec_full_ : unroll_full_;
      Def t = widen(global_id(var == tl_.vec_dim ? 0 : 1));
      r = lanes == 1 ? t : b_.alu("imul", t, b_.imm_int(lanes, ib_));
      if (lane) r = b_.alu("iadd", r, b_.imm_int(lane, ib_));
      if (lane && !full) r = b_.alu("umin", r, b_.imm_int(k_.out_shape[var] - 1, ib_));
    } else {
      // A rest dim: from the last global id, innermost fastest.
      Def t = widen(global_id(tl_.work.size() - 1));
      int64_t stride = 1;
      size_t pos = 0;
      for (size_t i = tl_.rest_dims.size(); i-- > 0;) {
        if (tl_.rest_dims[i] == var) pos = i;
      }
      for (size_t i = tl_.rest_dims.size(); i-- > pos + 1;) stride *= k_.out_shape[tl_.rest_dims[i]];
      r = stride == 1 ? t : b_.alu("udiv", t, b_.imm_int(stride, ib_));
      if (pos > 0) r = b_.alu("umod", r, b_.imm_int(k_.out_shape[var], ib_));
    }
    return out_vars_[key] = r;
  }

  // ---- levels: where a value's instructions go ----
  Deps var_deps(int var) const {
    Deps d;
    d.level = var_level_[var];
    d.vec = var == tl_.vec_dim;
    d.unroll = var == tl_.unroll_dim;
    d.red = var == red_var_;
    return d;
  }
  // Runs f with the builder at the end of level `level`'s code: before the loops nested in
  // it, so the value dominates every use inside them. In the epilogue, level 0 is here.
  // Every memoized value goes through here: a value emitted inside a loop would not
  // dominate its uses after the loop.
  template <typename F>
  Def at_level(int level, F f) {
    if (level == cur_level_) return f();
    const mesa::NirBuilder::Cursor here = b_.cursor();
    const int saved_level = cur_level_;
    b_.set_cursor(cursors_[level]);
    cur_level_ = level;
    Def r = f();
    cursors_[level] = b_.cursor();
    cur_level_ = saved_level;
    b_.set_cursor(here);
    return r;
  }
  using Copy = std::tuple<int, int, int>;  // unroll lane, vec lane, reduce step (-1: shared)
  Copy copy_of(const Deps& d) const { return {d.unroll ? u_ : -1, d.vec ? l_ : -1, d.red ? r_ : -1}; }

  // ---- index math ----
  Deps index_deps(const Index& ix) {
    if (auto it = index_deps_.find(ix.key()); it != index_deps_.end()) return it->second;
    Deps d;
    for (const auto& [atom, coef] : ix.terms())
      d.add(atom->kind == Atom::Kind::Var ? var_deps(atom->var) : index_deps(atom->inner));
    return index_deps_[ix.key()] = d;
  }
  Def var_value(int var) {
    const int rank = static_cast<int>(k_.out_shape.size());
    const int64_t extent = var < rank ? k_.out_shape[var] : k_.reduce_extents[var - rank];
    if (extent == 1) return b_.imm_int(0, ib_);
    if (var == red_var_ && !loop_vars_.count(var)) return b_.imm_int(r_, ib_);  // unrolled whole
    if (var == red_var_ && r_ > 0)  // step r_ of the unrolled loop
      return at_level(var_level_[var], [&] { return b_.alu("iadd", loop_vars_.at(var), b_.imm_int(r_, ib_)); });
    if (var >= rank) return loop_vars_.at(var);
    return at_level(0, [&] { return out_var(var); });
  }
  Def index_value(const Index& ix) {
    if (ix.is_constant()) return b_.imm_int(ix.constant(), ib_);
    const Deps d = index_deps(ix);
    auto key = std::make_tuple(ix.key(), copy_of(d));
    if (auto it = indices_.find(key); it != indices_.end()) return it->second;
    Def r = at_level(d.level, [&] {
      Def s = nullptr;
      for (const auto& [atom, coef] : ix.terms()) {
        Def a = atom_value(*atom);
        Def term = coef == 1 ? a : b_.alu("imul", a, b_.imm_int(coef, ib_));
        s = s ? b_.alu("iadd", s, term) : term;
      }
      if (ix.constant() != 0) s = b_.alu("iadd", s, b_.imm_int(ix.constant(), ib_));
      return s;
    });
    return indices_[key] = r;
  }
  Def atom_value(const Atom& a) {
    if (a.kind == Atom::Kind::Var) return var_value(a.var);
    const Deps d = index_deps(a.inner);
    auto key = std::make_tuple("a" + a.key, copy_of(d));
    if (auto it = indices_.find(key); it != indices_.end()) return it->second;
    Def r = at_level(d.level, [&] {
      Def x = index_value(a.inner);
      Def k = b_.imm_int(a.divisor, ib_);
      const bool div = a.kind == Atom::Kind::Div;
      if (a.inner.min() >= 0) return b_.alu(div ? "udiv" : "umod", x, k);
      // Floor semantics for a dividend that can be negative (the divisor is positive).
      Def m = b_.alu("imod", x, k);
      return div ? b_.alu("idiv", b_.alu("isub", x, m), k) : m;
    });
    return indices_[key] = r;
  }
  Deps guards_deps(const std::vector<Guard>& guards) {
    Deps d;
    for (const Guard& g : guards) d.add(index_deps(g.index));
    return d;
  }
  // The guards as one boolean (null: always true).
  Def guards_value(const std::vector<Guard>& guards) {
    const Deps d = guards_deps(guards);
    std::string key = "g";
    for (const Guard& g : guards) key += g.index.key() + "@" + std::to_string(g.lo) + ":" + std::to_string(g.hi) + ";";
    auto mkey = std::make_tuple(key, copy_of(d));
    if (auto it = indices_.find(mkey); it != indices_.end()) return it->second;
    std::vector<Def> conds;  // each guard's test where its index is computed
    for (const Guard& g : guards)
      if (Def c = guard_value(g)) conds.push_back(c);
    Def r = at_level(d.level, [&]() -> Def {
      Def cond = nullptr;
      for (Def c : conds) cond = cond ? b_.alu("iand", cond, c) : c;
      return cond;
    });
    return indices_[mkey] = r;
  }
  // lo <= x < hi as one unsigned compare, x - lo < hi - lo (lo < hi; both in the index
  // type's signed range, so the difference does not wrap past hi - lo); null: always true.
  Def guard_value(const Guard& g) {
    const bool lo = g.index.min() < g.lo, hi = g.index.max() >= g.hi;
    if (!lo && !hi) return nullptr;
    const Deps d = index_deps(g.index);
    auto key = std::make_tuple("t" + g.index.key() + "@" + std::to_string(g.lo) + ":" + std::to_string(g.hi), copy_of(d));
    if (auto it = indices_.find(key); it != indices_.end()) return it->second;
    Def r = at_level(d.level, [&]() -> Def {
      Def x = index_value(g.index);
      if (!hi) return b_.alu("ige", x, b_.imm_int(g.lo, ib_));
      if (!lo) return b_.alu("ilt", x, b_.imm_int(g.hi, ib_));
      if (g.hi <= g.lo) return b_.imm_bool(false);
      return b_.alu("ult", b_.alu("isub", x, b_.imm_int(g.lo, ib_)), b_.imm_int(g.hi - g.lo, ib_));
    });
    return indices_[key] = r;
  }

  // ---- values ----
  Deps value_deps(const Value* v) {
    if (!v) return {};
    if (auto it = value_deps_.find(v); it != value_deps_.end()) return it->second;
    Deps d;
    switch (v->kind) {
      case Value::Kind::Const: break;
      case Value::Kind::Accumulator: d.vec = d.unroll = true; break;
      case Value::Kind::InBounds: d = guards_deps(v->guards); break;
      case Value::Kind::Load:
        d = index_deps(v->index);
        d.add(guards_deps(v->guards));
        if (v->dynamic) d.add(value_deps(v->dynamic));
        break;
      case Value::Kind::Alu:
        for (const Value* x : v->srcs) d.add(value_deps(x));
        break;
    }
    return value_deps_[v] = d;
  }
  bool depends_on_acc(const Value* v) {
    if (!v) return false;
    if (auto it = on_acc_.find(v); it != on_acc_.end()) return it->second;
    bool r = v->kind == Value::Kind::Accumulator;
    for (const Value* x : v->srcs) r = r || depends_on_acc(x);
    if (v->dynamic) r = r || depends_on_acc(v->dynamic);
    return on_acc_[v] = r;
  }

  Def val(const Value* v) {
    const Deps d = value_deps(v);
    auto key = std::make_tuple(v, copy_of(d));
    if (v->kind != Value::Kind::Accumulator)
      if (auto it = values_.find(key); it != values_.end()) return it->second;
    Def r = nullptr;
    switch (v->kind) {
      case Value::Kind::Const: r = at_level(0, [&] { return constant(v->constant, v->dtype); }); break;
      case Value::Kind::Accumulator: {
        r = acc_value_;
        if (k_.acc_dtype == DType::F16) r = b_.alu("f2f16_rtne", live_after_loop(r));
        return r;
      }
      case Value::Kind::InBounds: {
        Def g = guards_value(v->guards);
        r = g ? g : at_level(0, [&] { return b_.imm_bool(true); });
        break;
      }
      case Value::Kind::Load:
        if (d.vec && vector_load_ok(v, Axis::Vec)) {
          // The tile's lanes read consecutive elements: one vector load, a channel per lane.
          r = vector_channel(v, d, Axis::Vec);
          break;
        }
        if (d.unroll && !d.vec && vector_load_ok(v, Axis::Unroll)) {  // the same along the unrolled dim
          r = vector_channel(v, d, Axis::Unroll);
          break;
        }
        if (d.red && vector_load_ok(v, Axis::Reduce)) {  // along the reduce steps, one per lane
          r = vector_channel(v, d, Axis::Reduce);
          break;
        }
        r = at_level(acc_free_level(v, d), [&] { return load(v); });
        break;
      case Value::Kind::Alu: r = at_level(acc_free_level(v, d), [&] { return alu(v); }); break;
    }
    values_[key] = r;
    return r;
  }
  // ir3's NIR narrows a loop value whose only use after the loop is a conversion to half by
  // converting it on every trip (nir_opt_phi_precision): one cov per accumulator and trip.
  // Selecting it on a condition NIR cannot fold keeps the float value live after the loop, so
  // it is converted once: the high word of the output's address is never all ones (a630 GPU
  // addresses have 48 bits).
  Def live_after_loop(Def acc) {
    if (!loop_dims_.empty() && !keep_) {
      keep_ = at_level(0, [&] { return b_.alu("ine", arg_words(0).second, b_.imm_int(0xffffffff, 32)); });
    }
    return keep_ ? b_.alu("bcsel", keep_, acc, b_.imm_float(0.0, 32)) : acc;
  }
  // Values that read the accumulator belong to the epilogue (level 0, after the loops).
  int acc_free_level(const Value* v, const Deps& d) { return depends_on_acc(v) ? 0 : d.level; }

  Def constant(double c, DType t) {
    if (t == DType::Bool) return b_.imm_bool(c != 0.0);
    if (is_fp(t)) return b_.imm_float(c, rep_bits(t));
    // Converted as llvm_emit's constants: signed through int64, unsigned through uint64,
    // then wrapped to the width (and extended back to the 32-bit representation).
    uint64_t u;
    if (is_unsigned(t)) {
      u = c < 0 ? static_cast<uint64_t>(static_cast<int64_t>(c))
                : c >= 18446744073709551616.0 ? ~uint64_t{0} : static_cast<uint64_t>(c);
    } else {
      int64_t s = c <= -9223372036854775808.0 ? INT64_MIN : c >= 9223372036854775807.0 ? INT64_MAX : static_cast<int64_t>(c);
      u = static_cast<uint64_t>(s);
    }
    const int bits = bits_of(t);
    if (bits < 64) {
      const uint64_t mask = (uint64_t{1} << bits) - 1;
      u &= mask;
      if (!is_unsigned(t) && (u >> (bits - 1))) u |= ~mask;  // sign-extend
    }
    return b_.imm(u, rep_bits(t));
  }

  // An integer held in 32 bits, wrapped to dtype t's width and extended back.
  Def wrap(Def x, DType t) {
    switch (t) {
      case DType::I8: return b_.alu("ishr", b_.alu("ishl", x, b_.imm_int(24, 32)), b_.imm_int(24, 32));
      case DType::I16: return b_.alu("ishr", b_.alu("ishl", x, b_.imm_int(16, 32)), b_.imm_int(16, 32));
      case DType::U8: return b_.alu("iand", x, b_.imm_int(0xff, 32));
      case DType::U16: return b_.alu("iand", x, b_.imm_int(0xffff, 32));
      default: return x;
    }
  }

  // ---- loads and stores ----
  Def arg_address(int arg) {
    if (auto it = arg_addr_.find(arg); it != arg_addr_.end()) return it->second;
    const int range = static_cast<int>(8 * k_.args.size());
    Def r = at_level(0, [&] {
      return b_.intrinsic("load_ubo", {b_.imm_int(0, 32), b_.imm_int(8 * arg, 32)}, 1, 64,
                          {{me::NIR_INTRINSIC_ACCESS, me::ACCESS_CAN_REORDER | me::ACCESS_NON_WRITEABLE},
                           {me::NIR_INTRINSIC_ALIGN_MUL, 8},
                           {me::NIR_INTRINSIC_ALIGN_OFFSET, 0},
                           {me::NIR_INTRINSIC_RANGE_BASE, 0},
                           {me::NIR_INTRINSIC_RANGE, range}},
                          1);
    });
    return arg_addr_[arg] = r;
  }
  // base + element * size, as a 64-bit address (the element index is never negative). With
  // 32-bit indices the byte offset is added to the address's low word alone: a buffer never
  // crosses a 4 GiB boundary of the GPU address space (kernel_abi.h), so there is no carry,
  // and the 64-bit add (add, compare, convert, add per load) becomes one add.
  Def element_address(int arg, Def element) {
    Def bytes = b_.alu("imul", element, b_.imm_int(static_cast<int64_t>(dtype_size(k_.args[arg].dtype)), ib_));
    if (ib_ == 64) return b_.alu("iadd", arg_address(arg), bytes);
    auto [lo, hi] = arg_words(arg);
    return b_.alu("pack_64_2x32_split", b_.alu("iadd", lo, bytes), hi);
  }
  std::pair<Def, Def> arg_words(int arg) {
    if (auto it = arg_words_.find(arg); it != arg_words_.end()) return it->second;
    Def base = arg_address(arg);
    Def lo = at_level(0, [&] { return b_.alu("unpack_64_2x32_split_x", base); });
    Def hi = at_level(0, [&] { return b_.alu("unpack_64_2x32_split_y", base); });
    return arg_words_[arg] = {lo, hi};
  }
  // The address of element ix of an argument (32-bit indices) as the sum of two parts: the
  // terms that vary at the index's innermost level, and the rest (with the base address, the
  // constant and a full tile's lane offsets) computed once where it is invariant. The varying
  // part is shared by every load with the same terms (a tile's rows and lanes), so a load in a
  // loop costs one add: no per-load index products, shifts or lane adds.
  Def split_address(int arg, const Index& ix, Def ok = nullptr) {
    const int64_t size = static_cast<int64_t>(dtype_size(k_.args[arg].dtype));
    const int level = index_deps(ix).level;
    int64_t constant = ix.constant();
    std::vector<std::pair<Def, int64_t>> inner, outer;  // values with byte multipliers
    std::string ikey = "I", okey = "O" + std::to_string(arg) + ":";
    Deps ideps, odeps;
    for (const auto& [atom, coef] : ix.terms()) {
      Deps ad = atom->kind == Atom::Kind::Var ? var_deps(atom->var) : index_deps(atom->inner);
      Def value;
      std::string key = atom->key;
      const bool lane_var = atom->kind == Atom::Kind::Var && (ad.vec || ad.unroll || ad.red) &&
                            (ad.vec ? vec_full_ : ad.unroll ? unroll_full_ : true);
      if (lane_var) {  // var = lane-0 value + lane: the lane (or reduce step) goes into the constant
        int& lane = ad.vec ? l_ : ad.unroll ? u_ : r_;
        const int saved = lane;
        constant += coef * lane;
        lane = 0;
        value = var_value(atom->var);
        lane = saved;
        ad.vec = ad.unroll = ad.red = false;
        key += "@0";
      } else {
        value = atom_value(*atom);
        const auto [cu, cl, cr] = copy_of(ad);
        key += "@" + std::to_string(cu) + "," + std::to_string(cl) + "," + std::to_string(cr);
      }
      const std::string term = key + "*" + std::to_string(coef) + ";";
      if (ad.level == level && level > 0) inner.push_back({value, coef * size}), ikey += term, ideps.add(ad);
      else outer.push_back({value, coef * size}), okey += term, odeps.add(ad);
    }
    auto sum = [&](const std::vector<std::pair<Def, int64_t>>& terms, Def start) {
      Def s = start;
      for (const auto& [x, mul] : terms) {
        Def t = mul == 1 ? x : b_.alu("imul", x, b_.imm_int(mul, 32));
        s = s ? b_.alu("iadd", s, t) : t;
      }
      return s;
    };
    okey += "+" + std::to_string(constant * size);
    Def base = bases_.count(okey) ? bases_[okey] : nullptr;
    if (!base) {
      Def lo = arg_words(arg).first;
      base = bases_[okey] = at_level(odeps.level, [&] {
        Def b = sum(outer, lo);
        return constant ? b_.alu("iadd", b, b_.imm_int(constant * size, 32)) : b;
      });
    }
    Def lo = base;
    if (!inner.empty()) {
      Def part = bases_.count(ikey) ? bases_[ikey] : nullptr;
      if (!part) part = bases_[ikey] = at_level(level, [&] { return sum(inner, nullptr); });
      lo = at_level(level, [&] { return b_.alu("iadd", base, part); });
    }
    // A guarded load's (null: none) address, where its guards fail, is element 0's. At the
    // current level: the guards may vary where the index does not.
    if (ok) return b_.alu("pack_64_2x32_split", b_.alu("bcsel", ok, lo, arg_words(arg).first), arg_words(arg).second);
    return at_level(level, [&] { return b_.alu("pack_64_2x32_split", lo, arg_words(arg).second); });
  }
  // Lane `lane` of one vector load shared by the tile's lanes along the vec dim (or, with
  // vec false, along the unrolled dim), the load emitted once for lane 0.
  Def vector_channel(const Value* v, const Deps& d, Axis axis) {
    int& lane_var = axis == Axis::Vec ? l_ : axis == Axis::Unroll ? u_ : r_;
    const int lane = lane_var;
    Copy copy = copy_of(d);
    (axis == Axis::Vec ? std::get<1>(copy) : axis == Axis::Unroll ? std::get<0>(copy) : std::get<2>(copy)) = -2;
    auto vkey = std::make_tuple(v, copy);
    if (!values_.count(vkey)) {
      lane_var = 0;
      values_[vkey] = at_level(acc_free_level(v, d), [&] { return vector_load(v, lanes_of(axis)); });
      lane_var = lane;
    }
    Def x = values_[vkey];
    return at_level(acc_free_level(v, d), [&] { return b_.channel(x, static_cast<unsigned>(lane)); });
  }
  // Whether lane l of a full tile reads element (lane 0's) + l of an argument, lane 0's element
  // a multiple of the lane count (so the vector is aligned): the lanes' var with coefficient 1,
  // or its remainder by a multiple of the lane count (packed weights: (v % 16) + 8192 (v / 16)),
  // every other term a multiple of the lane count and free of the lanes. The lanes are the
  // vec dim's (vec) or the unrolled dim's (a conv's output channels, reading packed weights).
  int lanes_of(Axis axis) const {
    return axis == Axis::Vec ? tl_.vec_lanes : axis == Axis::Unroll ? tl_.unroll_lanes : red_lanes_;
  }
  bool vector_load_ok(const Value* v, Axis axis) {
    const int nv = lanes_of(axis);
    const int dim = axis == Axis::Vec ? tl_.vec_dim : axis == Axis::Unroll ? tl_.unroll_dim : red_var_;
    const bool full = axis == Axis::Vec ? vec_full_ : axis == Axis::Unroll ? unroll_full_ : true;
    const DType sdt = k_.args[v->arg].dtype;
    if (v->dynamic || !v->guards.empty() || sdt != v->dtype) return false;
    return index_vector_ok(v->index, sdt, axis, nv, dim, full);
  }
  // The same for an index of an argument of dtype sdt: nv lanes along `dim` read consecutive
  // elements from an aligned first one.
  bool index_vector_ok(const Index& ix, DType sdt, Axis axis, int nv, int dim, bool full) {
    if (nv <= 1 || (nv & (nv - 1)) || !full || ib_ != 32) return false;
    if (sdt != DType::F16 && sdt != DType::F32 && sdt != DType::I32 && sdt != DType::U32) return false;
    int64_t step = 0;
    if (ix.constant() % nv) return false;
    for (const auto& [atom, coef] : ix.terms()) {
      const bool is_vec = atom->kind == Atom::Kind::Var && atom->var == dim;
      const bool on_vec = atom->kind != Atom::Kind::Var && atom->inner.terms().size() == 1 &&
                          atom->inner.constant() == 0 && atom->inner.terms()[0].second == 1 &&
                          atom->inner.terms()[0].first->kind == Atom::Kind::Var &&
                          atom->inner.terms()[0].first->var == dim && atom->divisor % nv == 0;
      if (is_vec || (on_vec && atom->kind == Atom::Kind::Mod)) {
        step += coef;
      } else if (on_vec && atom->kind == Atom::Kind::Div) {
        if (coef % nv) return false;
      } else {
        const Deps ad = atom->kind == Atom::Kind::Var ? var_deps(atom->var) : index_deps(atom->inner);
        if ((axis == Axis::Vec ? ad.vec : axis == Axis::Unroll ? ad.unroll : ad.red) || coef % nv) return false;
      }
    }
    return step == 1;
  }
  Def vector_load(const Value* v, int nv) {
    const unsigned bits = static_cast<unsigned>(bits_of(k_.args[v->arg].dtype));
    return b_.intrinsic("load_global", {split_address(v->arg, v->index)}, static_cast<unsigned>(nv), bits,
                        {{me::NIR_INTRINSIC_ACCESS, me::ACCESS_CAN_REORDER | me::ACCESS_NON_WRITEABLE},
                         {me::NIR_INTRINSIC_ALIGN_MUL, static_cast<int>(nv * bits / 8)},
                         {me::NIR_INTRINSIC_ALIGN_OFFSET, 0}},
                        static_cast<unsigned>(nv));
  }
  Def load(const Value* v) {
    const DType sdt = k_.args[v->arg].dtype;
    const unsigned bits = static_cast<unsigned>(bits_of(sdt == DType::Bool ? DType::U8 : sdt));
    Def address = nullptr;
    if (ib_ == 32 && !v->dynamic) {
      // Where the guards fail, the argument's own address: element 0.
      Def ok = v->guards.empty() ? nullptr : guards_value(v->guards);
      address = split_address(v->arg, v->index, ok);
    } else {
      Def idx = index_value(v->index);
      if (v->dynamic) idx = b_.alu("iadd", idx, dynamic_offset(v));
      if (!v->guards.empty()) {
        Def ok = guards_value(v->guards);
        if (ok) idx = b_.alu("bcsel", ok, idx, b_.imm_int(0, ib_));
      }
      address = element_address(v->arg, idx);
    }
    Def x = b_.intrinsic("load_global", {address}, 1, bits,
                         {{me::NIR_INTRINSIC_ACCESS, me::ACCESS_CAN_REORDER | me::ACCESS_NON_WRITEABLE},
                          {me::NIR_INTRINSIC_ALIGN_MUL, static_cast<int>(bits / 8)},
                          {me::NIR_INTRINSIC_ALIGN_OFFSET, 0}},
                         1);
    switch (sdt) {
      case DType::Bool: x = b_.alu("ine", b_.alu("u2u32", x), b_.imm_int(0, 32)); break;
      case DType::I8:
      case DType::I16: x = b_.alu("i2i32", x); break;
      case DType::U8:
      case DType::U16: x = b_.alu("u2u32", x); break;
      default: break;
    }
    if (sdt != v->dtype) x = cast(x, sdt, v->dtype);  // F32 storage read as F16
    return x;
  }
  // clamp(dynamic, 0, extent - 1) * stride, clamped in the dynamic value's own signed type
  // (as llvm_emit and opencl_emit), then in the index type.
  Def dynamic_offset(const Value* v) {
    Def x = val(v->dynamic);
    const DType dt = v->dynamic->dtype;
    const unsigned xb = rep_bits(dt);
    int64_t hi = v->dynamic_extent - 1;
    const int bits = bits_of(dt);
    if (bits < 64) hi = std::min<int64_t>(hi, (int64_t{1} << (bits - 1)) - 1);
    // Unsigned values reinterpreted as signed of their width: a u8 holding 255 is -1.
    if (is_unsigned(dt) && dt != DType::Bool) {
      if (dt == DType::U8) x = wrap(x, DType::I8);
      if (dt == DType::U16) x = wrap(x, DType::I16);
    }
    if (dt == DType::Bool) x = b_.alu("b2i32", x);
    const unsigned w = dt == DType::Bool ? 32 : xb;
    Def zero = b_.imm_int(0, w), h = b_.imm_int(hi, w);
    Def c = b_.alu("bcsel", b_.alu("ilt", x, zero), zero, b_.alu("bcsel", b_.alu("ilt", h, x), h, x));
    if (w != ib_) c = ib_ == 64 ? b_.alu("i2i64", c) : b_.alu("u2u32", c);
    if (v->dynamic_stride != 1) c = b_.alu("imul", c, b_.imm_int(v->dynamic_stride, ib_));
    return c;
  }
  // Stores the results of lanes l_, l_ + 1, ... (one, or a vector of consecutive outputs).
  void store(std::vector<Def> rs) {
    const DType sdt = k_.args[0].dtype, rdt = k_.result->dtype;
    unsigned bits = static_cast<unsigned>(bits_of(sdt == DType::Bool ? DType::U8 : sdt));
    for (Def& r : rs) {
      if (sdt != rdt) r = cast(r, rdt, sdt);
      if (sdt == DType::Bool) r = b_.alu("u2u8", b_.alu("b2i32", r));
      else if (bits < 32 && !is_fp(sdt)) r = b_.alu(bits == 8 ? "u2u8" : "u2u16", r);
    }
    const int n = static_cast<int>(rs.size());
    Def r = n == 1 ? rs[0] : b_.vec(rs);
    Def idx = index_value(output_index(k_));
    Def addr = element_address(0, idx);
    auto emit_store = [&] {
      b_.intrinsic("store_global", {r, addr}, 0, 0,
                   {{me::NIR_INTRINSIC_WRITE_MASK, (1 << n) - 1},
                    {me::NIR_INTRINSIC_ACCESS, 0},
                    {me::NIR_INTRINSIC_ALIGN_MUL, static_cast<int>(n * bits / 8)},
                    {me::NIR_INTRINSIC_ALIGN_OFFSET, 0}},
                   static_cast<unsigned>(n));
    };
    // Lanes past the end of a tiled dim repeat its last element: they must not store.
    Def cond = nullptr;
    auto past = [&](int dim, int lane, bool full) {
      if (dim < 0 || lane == 0 || full) return;
      Def base = b_.alu("imul", b_.alu(ib_ == 64 ? "u2u64" : "mov", global_id(dim == tl_.vec_dim ? 0 : 1)),
                        b_.imm_int(dim == tl_.vec_dim ? tl_.vec_lanes : tl_.unroll_lanes, ib_));
      Def c = b_.alu("ult", b_.alu("iadd", base, b_.imm_int(lane, ib_)), b_.imm_int(k_.out_shape[dim], ib_));
      cond = cond ? b_.alu("iand", cond, c) : c;
    };
    past(tl_.vec_dim, l_, vec_full_);
    past(tl_.unroll_dim, u_, unroll_full_);
    if (cond) {
      void* nif = b_.push_if(cond);
      emit_store();
      b_.pop_if(nif);
    } else {
      emit_store();
    }
  }

  // ---- reductions ----
  Def reduce_identity() {
    const DType t = acc_type();
    if (k_.reduce_op == Op::ReduceSum) return constant(0.0, t);
    if (k_.reduce_op != Op::ReduceMax)
      throw CompileError(std::string("adreno630: unsupported reduction ") + op_name(k_.reduce_op) + " in kernel " + k_.name);
    if (is_fp(t)) return b_.imm_float(-INFINITY, rep_bits(t));
    if (t == DType::Bool || is_unsigned(t)) return constant(0.0, t);
    return constant(-std::ldexp(1.0, bits_of(t) - 1), t);
  }
  // A float sum of products accumulates with one fused multiply-add per step, as the CPU's
  // code does (LLVM contracts a * b + acc there). Half operands are widened first: the
  // product of two halves (11 significant bits each, exponents within float's range) is exact
  // in float, so it is never rounded to half (nor overflows there) before the float sum.
  Def accumulate(Def acc, const Value* body) {
    if (k_.reduce_op == Op::ReduceSum && is_fp(k_.acc_dtype) && body->kind == Value::Kind::Alu &&
        body->op == Op::Mul && body->srcs.size() == 2 && is_fp(body->srcs[0]->dtype) &&
        body->srcs[0]->dtype == body->srcs[1]->dtype) {
      const DType t = body->srcs[0]->dtype;
      return b_.alu("ffma", widened(body->srcs[0], t), widened(body->srcs[1], t), acc);
    }
    return combine(acc, val(body));
  }
  // v as float, converted where v is computed (once per loop trip that changes it).
  Def widened(const Value* v, DType t) {
    Def x = val(v);
    if (t != DType::F16) return x;
    const Deps d = value_deps(v);
    auto key = std::make_tuple(v, copy_of(d));
    if (auto it = widened_.find(key); it != widened_.end()) return it->second;
    return widened_[key] = at_level(acc_free_level(v, d), [&] { return b_.alu("f2f32", x); });
  }
  Def combine(Def acc, Def x) {
    const DType t = k_.acc_dtype;
    if (t == DType::F16) x = b_.alu("f2f32", x);
    if (k_.reduce_op == Op::ReduceSum) {
      if (t == DType::Bool) return b_.alu("ior", acc, x);
      if (is_fp(t)) return b_.alu("fadd", acc, x);
      return wrap(b_.alu("iadd", acc, x), t);
    }
    // select(fcmp ugt acc x, acc, x): a NaN accumulator stays, a NaN x does not replace it.
    if (is_fp(t)) return b_.alu("bcsel", b_.alu("fge", x, acc), x, acc);
    if (t == DType::Bool) return b_.alu("ior", acc, x);
    return b_.alu("bcsel", b_.alu(is_unsigned(t) ? "ult" : "ilt", x, acc), acc, x);
  }

  // ---- arithmetic ----
  Def f32(Def x, DType t) { return t == DType::F16 ? b_.alu("f2f32", x) : x; }
  Def back(Def x, DType t) { return t == DType::F16 ? b_.alu("f2f16_rtne", x) : x; }
  Def fimm(double c, DType t) { return b_.imm_float(c, rep_bits(t)); }

  Def cast(Def x, DType from, DType to) {
    if (to == DType::Bool) {
      if (from == DType::Bool) return x;
      if (is_fp(from)) return b_.alu("fneu", x, fimm(0.0, from));  // NaN != 0 holds
      return b_.alu("ine", x, b_.imm_int(0, rep_bits(from)));
    }
    if (from == to) return x;
    if (from == DType::Bool) {
      if (is_fp(to)) return b_.alu(to == DType::F16 ? "b2f16" : "b2f32", x);
      x = b_.alu("b2i32", x);
      from = DType::I32;
      if (to == DType::I32 || to == DType::U32) return x;
    }
    if (is_fp(from) && is_fp(to)) return to == DType::F16 ? b_.alu("f2f16_rtne", x) : b_.alu("f2f32", x);
    if (is_fp(from)) return float_to_int(f32(x, from), to);
    if (is_fp(to)) {
      const bool wide = rep_bits(from) == 64;
      Def f = b_.alu(is_unsigned(from) ? (wide ? "u2f32" : "u2f32") : "i2f32", x);
      return to == DType::F16 ? b_.alu("f2f16_rtne", f) : f;  // via float, as opencl_emit
    }
    // Integer to integer: extend or truncate by the source's signedness, wrap to the target.
    const unsigned fb = rep_bits(from), tb = rep_bits(to);
    if (tb == 64 && fb == 32) return b_.alu(is_unsigned(from) ? "u2u64" : "i2i64", x);
    if (tb == 32 && fb == 64) x = b_.alu("u2u32", x);
    return wrap(x, to);
  }
  // convert_T_sat: NaN -> 0, clamped to T's range, truncated toward zero.
  Def float_to_int(Def f, DType to) {
    f = b_.alu("ftrunc", f);
    Def not_nan = b_.alu("feq", f, f);
    const unsigned tb = rep_bits(to);
    const bool u = is_unsigned(to);
    const int bits = bits_of(to);
    if (bits <= 16) {
      const double lo = u ? 0.0 : -std::ldexp(1.0, bits - 1), hi = u ? std::ldexp(1.0, bits) - 1 : std::ldexp(1.0, bits - 1) - 1;
      Def c = b_.alu("fmin", b_.alu("fmax", b_.alu("bcsel", not_nan, f, b_.imm_float(0.0, 32)), b_.imm_float(lo, 32)),
                     b_.imm_float(hi, 32));
      return b_.alu("f2i32", c);
    }
    // 32 and 64 bits: the range ends are not all floats; compare against powers of two.
    const double top = std::ldexp(1.0, u ? bits : bits - 1);
    Def max_v = b_.imm(u ? (bits == 64 ? ~uint64_t{0} : 0xffffffffull)
                         : (bits == 64 ? 0x7fffffffffffffffull : 0x7fffffffull),
                       tb);
    Def min_v = u ? b_.imm(0, tb) : b_.imm(bits == 64 ? 0x8000000000000000ull : 0xffffffff80000000ull, tb);
    const char* conv = u ? (tb == 64 ? "f2u64" : "f2u32") : (tb == 64 ? "f2i64" : "f2i32");
    Def low = b_.alu("flt", f, b_.imm_float(u ? 0.0 : -top, 32));
    Def high = b_.alu("fge", f, b_.imm_float(top, 32));
    // Keep the conversion's operand in range so its result is defined.
    Def safe = b_.alu("bcsel", b_.alu("iand", not_nan, b_.alu("inot", b_.alu("ior", low, high))), f, b_.imm_float(0.0, 32));
    Def r = b_.alu(conv, safe);
    r = b_.alu("bcsel", low, min_v, r);
    r = b_.alu("bcsel", high, max_v, r);
    return b_.alu("bcsel", not_nan, r, b_.imm(0, tb));
  }
  Def int_div(DType t, Def a, Def b, bool rem) {
    if (t == DType::Bool) return rem ? b_.imm_bool(false) : b_.alu("iand", a, b);  // a / b: b ? a : false
    const unsigned w = rep_bits(t);
    Def zero = b_.imm_int(0, w), one = b_.imm_int(1, w);
    Def b0 = b_.alu("ieq", b, zero);
    if (is_unsigned(t)) {
      Def q = b_.alu(rem ? "umod" : "udiv", a, b_.alu("bcsel", b0, one, b));
      return b_.alu("bcsel", b0, zero, q);
    }
    // C semantics (truncating); x / 0 gives 0, x / -1 negates with wrap-around (INT_MIN / -1
    // traps on some hardware), x % -1 and x % 0 give 0.
    Def m1 = b_.alu("ieq", b, b_.imm_int(-1, w));
    Def bad = b_.alu("ior", b0, m1);
    Def bs = b_.alu("bcsel", bad, one, b);
    if (rem) return b_.alu("bcsel", bad, zero, b_.alu("irem", a, bs));
    Def q = b_.alu("idiv", a, bs);
    return b_.alu("bcsel", b0, zero, b_.alu("bcsel", m1, wrap(b_.alu("ineg", a), t), q));
  }
  // exp(x) = 2^(x log2 e), log(x) = log2(x) ln 2: ir3's transcendental instructions.
  Def fexp(Def x) { return b_.alu("fexp2", b_.alu("fmul", x, b_.imm_float(1.4426950408889634, 32))); }
  Def ftanh(Def x) {
    // tanh(x) = sign(x) (1 - 2 / (exp(2|x|) + 1)): no overflow (exp -> inf gives 1), NaN stays.
    Def ax = b_.alu("fabs", x);
    Def e = fexp(b_.alu("fmul", ax, b_.imm_float(2.0, 32)));
    Def t = b_.alu("fsub", b_.imm_float(1.0, 32), b_.alu("fdiv", b_.imm_float(2.0, 32), b_.alu("fadd", e, b_.imm_float(1.0, 32))));
    return b_.alu("bcsel", b_.alu("flt", x, b_.imm_float(0.0, 32)), b_.alu("fneg", t), t);
  }
  Def ferf(Def x) {
    // Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7): 1 - (a1 t + ... + a5 t^5) e^(-x^2),
    // t = 1 / (1 + p |x|), odd in x.
    Def ax = b_.alu("fabs", x);
    Def t = b_.alu("fdiv", b_.imm_float(1.0, 32), b_.alu("fadd", b_.imm_float(1.0, 32), b_.alu("fmul", b_.imm_float(0.3275911, 32), ax)));
    const double a[] = {0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429};
    Def poly = b_.imm_float(a[4], 32);
    for (int i = 3; i >= 0; --i) poly = b_.alu("fadd", b_.alu("fmul", poly, t), b_.imm_float(a[i], 32));
    poly = b_.alu("fmul", poly, t);
    Def e = fexp(b_.alu("fneg", b_.alu("fmul", ax, ax)));
    Def y = b_.alu("fsub", b_.imm_float(1.0, 32), b_.alu("fmul", poly, e));
    y = b_.alu("bcsel", b_.alu("feq", ax, ax), y, ax);  // NaN stays NaN
    return b_.alu("bcsel", b_.alu("flt", x, b_.imm_float(0.0, 32)), b_.alu("fneg", y), y);
  }
  // pow with llvm_emit's rules: |a|^e, the sign of a negative base with an odd integer
  // exponent, NaN for a negative base and a fractional one, 0^e = 0 (e > 0) or inf, x^0 = 1.
  Def fpow(Def a, Def e) {
    Def zero = b_.imm_float(0.0, 32), one = b_.imm_float(1.0, 32);
    Def r = b_.alu("fexp2", b_.alu("fmul", e, b_.alu("flog2", b_.alu("fabs", a))));
    Def e_int = b_.alu("feq", b_.alu("ffloor", e), e);
    Def h = b_.alu("fmul", e, b_.imm_float(0.5, 32));
    Def e_odd = b_.alu("iand", e_int, b_.alu("fneu", b_.alu("ffloor", h), h));
    Def neg = b_.alu("flt", a, zero);
    r = b_.alu("bcsel", b_.alu("iand", neg, e_odd), b_.alu("fneg", r), r);
    r = b_.alu("bcsel", b_.alu("iand", neg, b_.alu("inot", e_int)), b_.imm_float(NAN, 32), r);
    r = b_.alu("bcsel", b_.alu("feq", a, zero), b_.alu("bcsel", b_.alu("flt", zero, e), zero, b_.imm_float(INFINITY, 32)), r);
    return b_.alu("bcsel", b_.alu("feq", e, zero), one, r);
  }

  Def alu(const Value* v) {
    std::vector<Def> s;
    for (const Value* x : v->srcs) s.push_back(val(x));
    const DType in = v->srcs.empty() ? v->dtype : v->srcs[0]->dtype;
    const bool fp = is_fp(in), bl = in == DType::Bool, u = is_unsigned(in);
    auto fail = [&]() -> Def {
      throw CompileError(std::string("adreno630 code generator: unsupported op ") + op_name(v->op) + " (" + dtype_name(in) +
                         ") in kernel " + k_.name);
    };
    // Transcendentals compute in float32 (half inputs and results converted).
    auto math = [&](auto f) -> Def { return fp ? back(f(f32(s[0], in)), in) : fail(); };
    const unsigned w = rep_bits(in);
    switch (v->op) {
      case Op::Neg:
        if (fp) return b_.alu("fneg", s[0]);
        return bl ? s[0] : wrap(b_.alu("ineg", s[0]), in);
      case Op::Exp: return math([&](Def x) { return fexp(x); });
      case Op::Log:
        return math([&](Def x) { return b_.alu("fmul", b_.alu("flog2", x), b_.imm_float(0.6931471805599453, 32)); });
      case Op::Tanh: return math([&](Def x) { return ftanh(x); });
      case Op::Erf: return math([&](Def x) { return ferf(x); });
      case Op::Sin: return math([&](Def x) { return b_.alu("fsin", x); });
      case Op::Cos: return math([&](Def x) { return b_.alu("fcos", x); });
      case Op::Sqrt: return fp ? b_.alu("fsqrt", s[0]) : fail();
      case Op::Recip: return fp ? b_.alu("fdiv", fimm(1.0, in), s[0]) : fail();
      case Op::Abs:
        if (fp) return b_.alu("fabs", s[0]);
        if (u) return s[0];
        return b_.alu("bcsel", b_.alu("ilt", s[0], b_.imm_int(0, w)), wrap(b_.alu("ineg", s[0]), in), s[0]);
      case Op::Floor: return fp ? b_.alu("ffloor", s[0]) : s[0];
      case Op::Ceil: return fp ? b_.alu("fceil", s[0]) : s[0];
      case Op::Round: return fp ? b_.alu("fround_even", s[0]) : s[0];
      case Op::Cast: return cast(s[0], in, v->dtype);
      case Op::Not:
        if (bl) return b_.alu("inot", s[0]);
        return fp ? fail() : wrap(b_.alu("inot", s[0]), in);
      case Op::Add: return bl ? b_.alu("ior", s[0], s[1]) : fp ? b_.alu("fadd", s[0], s[1]) : wrap(b_.alu("iadd", s[0], s[1]), in);
      case Op::Sub: return bl ? b_.alu("ixor", s[0], s[1]) : fp ? b_.alu("fsub", s[0], s[1]) : wrap(b_.alu("isub", s[0], s[1]), in);
      case Op::Mul: return bl ? b_.alu("iand", s[0], s[1]) : fp ? b_.alu("fmul", s[0], s[1]) : wrap(b_.alu("imul", s[0], s[1]), in);
      case Op::Div: return fp ? b_.alu("fdiv", s[0], s[1]) : int_div(in, s[0], s[1], false);
      case Op::Mod:  // C fmod: a - trunc(a / b) * b
        if (fp) return b_.alu("fsub", s[0], b_.alu("fmul", b_.alu("ftrunc", b_.alu("fdiv", s[0], s[1])), s[1]));
        return int_div(in, s[0], s[1], true);
      case Op::Max:  // select(fcmp ugt a b, a, b): a NaN in a wins, a NaN in b loses
        if (fp) return b_.alu("bcsel", b_.alu("fge", s[1], s[0]), s[1], s[0]);
        if (bl) return b_.alu("ior", s[0], s[1]);
        return b_.alu("bcsel", b_.alu(u ? "ult" : "ilt", s[1], s[0]), s[0], s[1]);
      case Op::Min:  // select(fcmp ult a b, a, b)
        if (fp) return b_.alu("bcsel", b_.alu("fge", s[0], s[1]), s[1], s[0]);
        if (bl) return b_.alu("iand", s[0], s[1]);
        return b_.alu("bcsel", b_.alu(u ? "ult" : "ilt", s[0], s[1]), s[0], s[1]);
      case Op::Pow: return fp ? back(fpow(f32(s[0], in), f32(s[1], in)), in) : fail();
      case Op::CmpLt:  // ordered for floats; unsigned types compare unsigned
        if (fp) return b_.alu("flt", s[0], s[1]);
        if (bl) return b_.alu("iand", b_.alu("inot", s[0]), s[1]);
        return b_.alu(u ? "ult" : "ilt", s[0], s[1]);
      case Op::CmpEq: return b_.alu(fp ? "feq" : "ieq", s[0], s[1]);
      case Op::And: return fp ? fail() : b_.alu("iand", s[0], s[1]);
      case Op::Or: return fp ? fail() : b_.alu("ior", s[0], s[1]);
      case Op::Xor: return fp ? fail() : b_.alu("ixor", s[0], s[1]);
      case Op::Where: return b_.alu("bcsel", s[0], s[1], s[2]);
      default: break;
    }
    return fail();
  }

  const KernelIR& k_;
  const OpenCLTiling& tl_;
  NirBuilder& b_;
  bool narrow_ = true;
  unsigned ib_ = 32;                 // index bits
  std::vector<int> var_level_;
  std::vector<int> loop_dims_;
  bool vec_full_ = true, unroll_full_ = true;
  int u_ = 0, l_ = 0, r_ = 0;
  int red_var_ = -1;   // reduce var whose (innermost) loop runs red_lanes_ steps per trip (-1: none)
  int red_lanes_ = 1;
  int cur_level_ = 0;
  std::vector<NirBuilder::Cursor> cursors_;
  Def wg_id_ = nullptr, local_id_ = nullptr;
  std::array<Def, 3> gid_{};
  Def acc_value_ = nullptr;
  std::map<std::pair<int, int>, Def> out_vars_;
  std::map<int, Def> loop_vars_;
  std::map<int, Def> arg_addr_;
  std::map<int, std::pair<Def, Def>> arg_words_;
  std::map<std::string, Def> bases_;
  Def keep_ = nullptr;
  std::map<std::string, Deps> index_deps_;
  std::map<const Value*, Deps> value_deps_;
  std::map<const Value*, bool> on_acc_;
  std::map<std::tuple<std::string, Copy>, Def> indices_;
  std::map<std::tuple<const Value*, Copy>, Def> values_;
  std::map<std::tuple<const Value*, Copy>, Def> widened_;
};

// Section layout: each program starts at a multiple of 128 bytes (a6xx fetches shader
// instructions in groups of 16; SP_CS_INSTR_SIZE counts them).
constexpr uint64_t kProgramAlignment = 128;

class Ir3Backend : public Backend {
 public:
  explicit Ir3Backend(const TargetSpec& target) : target_(target) {}

  GeneratedCode generate(std::vector<KernelIR>& kernels, const CodegenOptions& options) override {
    mesa::Mesa& m = mesa::Mesa::get();
    GeneratedCode code;
    code.format = 4;  // edge::bundle::CodeFormat::Ir3A630
    code.alignment = 4096;
    std::ofstream dump;
    if (!options.dump_source.empty()) dump.open(options.dump_source, std::ios::binary | std::ios::trunc);
    for (KernelIR& k : kernels) {
      OpenCLTiling tiling = choose_opencl_tiling(k, false);
      // a6xx counts work-groups in 32-bit registers; ir3's work-group ids are 32-bit (signed).
      k.launch = plan_gpu_launch(tiling, 31, "adreno630");
      std::array<unsigned, 3> wg = {1, 1, 1};
      for (size_t d = 0; d < k.launch.local_size.size(); ++d) wg[d] = static_cast<unsigned>(k.launch.local_size[d]);
      NirBuilder b(m, k.name, wg);
      Ir3KernelEmitter e(k, tiling, b);
      std::vector<uint32_t> trips = e.emit();
      b.set_resources(1, 0, 0);  // UBO 0: the arguments
      mesa::Ir3Binary bin = m.compile(b.release(), k.name);
      A630Program p;
      p.offset = edge::bundle::align_up(code.bytes.size(), kProgramAlignment);
      p.size = bin.code.size();
      code.bytes.resize(p.offset, 0);
      code.bytes.insert(code.bytes.end(), bin.code.begin(), bin.code.end());
      p.instructions = bin.instructions;
      p.nops = bin.nops;
      p.full_regs = static_cast<uint32_t>(std::max(0, bin.full_regs));
      p.half_regs = static_cast<uint32_t>(std::max(0, bin.half_regs));
      p.constlen = bin.constlen;
      p.branchstack = bin.branchstack;
      p.private_bytes = bin.private_bytes;
      p.shared_bytes = bin.shared_bytes;
      p.threadsize = bin.double_threadsize ? 128 : 64;
      p.max_waves = bin.max_waves;
      for (size_t a = 0; a < k.args.size(); ++a) {
        const uint32_t byte = static_cast<uint32_t>(8 * a);
        // ir3 pushes the part of UBO 0 the program reads into the constant file (all of it:
        // the arguments take far less than the a630's constants); an argument outside it is
        // one the program never reads (a kernel with no outputs to compute).
        if (!bin.ubo0_pushed || byte + 8 > bin.ubo0_bytes) p.args.push_back(A630Arg{A630Arg::Kind::Unused, 0});
        else p.args.push_back(A630Arg{A630Arg::Kind::Address, bin.ubo0_const_dword + byte / 4});
      }
      p.immediates_dword = bin.immediates_dword;
      p.immediates = bin.immediates;
      if (bin.has_driver_params) p.driver_params_dword = bin.driver_params_dword;
      p.work_group_id_reg = bin.work_group_id_reg;
      p.local_id_reg = bin.local_id_reg;
      p.num_textures = bin.num_textures;
      p.num_samplers = bin.num_samplers;
      p.num_images = bin.num_uavs >= bin.num_textures ? bin.num_uavs - bin.num_textures : 0;
      p.loop_trips = std::move(trips);
      if (dump) {
        mesa::Ir3Disassembly d = m.disassemble(bin.code.data(), bin.code.size());
        dump << "; kernel " << k.name << ": " << p.instructions << " instructions, " << p.full_regs << " full / "
             << p.half_regs << " half registers, constlen " << p.constlen << "\n"
             << d.text << "\n";
      }
      code.a630.push_back(std::move(p));
    }
    code.bytes.resize(edge::bundle::align_up(code.bytes.size(), kProgramAlignment), 0);
    return code;
  }

 private:
  TargetSpec target_;
};

}  // namespace

std::unique_ptr<Backend> make_ir3_backend(const TargetSpec& target) { return std::make_unique<Ir3Backend>(target); }

}  // namespace edgec
