// Kernel IR -> OpenCL C 1.2. The semantics of every op, cast, NaN rule, guard and Gather
// term are those of the CPU renderer (llvm_emit.cc); comments say where OpenCL C needs care
// to get them (C's integer promotions and undefined overflow, half without cl_khr_fp16).
//
// A kernel's body is written as declarations of `const` values, each placed at the
// shallowest loop level whose variables it uses: what does not depend on the reduce loops
// is computed once before them, the row index of a conv window once per row.
#include "bundle_header.h"
#include "codegen/opencl_emit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <set>
#include <tuple>

namespace edgec {

namespace {

bool is_unsigned(DType t) {
  return t == DType::U8 || t == DType::U16 || t == DType::U32 || t == DType::U64 || t == DType::Bool;
}
bool is_fp(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::F64; }
int bits_of(DType t) { return static_cast<int>(dtype_size(t) * 8); }

// The type a value is computed in: F16 in float unless the target has half arithmetic.
std::string compute_type(DType t, bool half) {
  switch (t) {
    case DType::F32: return "float";
    case DType::F16: return half ? "half" : "float";
    case DType::F64: return "double";
    case DType::I8: return "char";
    case DType::U8: return "uchar";
    case DType::I16: return "short";
    case DType::U16: return "ushort";
    case DType::I32: return "int";
    case DType::U32: return "uint";
    case DType::I64: return "long";
    case DType::U64: return "ulong";
    case DType::Bool: return "bool";
    case DType::BF16: break;  // edgec --precision bf16 is for CPU targets only
  }
  throw CompileError(std::string("internal: OpenCL kernels have no ") + dtype_name(t) + " values");
}
// The element type of a buffer holding dtype t (half is legal behind a pointer only).
std::string storage_type(DType t) {
  if (t == DType::F16) return "half";
  if (t == DType::Bool) return "uchar";
  return compute_type(t, false);
}
// The signed integer type as wide as t.
std::string signed_type(DType t) {
  switch (dtype_size(t)) {
    case 1: return "char";
    case 2: return "short";
    case 4: return "int";
    default: return "long";
  }
}

std::string fmt(const char* f, long long v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}
std::string fmtu(const char* f, unsigned long long v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// A float or double literal that reads back exactly: 17 significant digits pin down a
// double, and so also a float whose value they print (the nearest float is that float).
std::string float_literal(double c, bool is_double) {
  if (!is_double) c = static_cast<double>(static_cast<float>(c));
  const std::string cast = is_double ? "(double)" : "";
  if (std::isnan(c)) return "(" + cast + "NAN)";
  if (std::isinf(c)) return c > 0 ? "(" + cast + "INFINITY)" : "(-" + cast + "INFINITY)";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", c);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  if (!is_double) s += "f";
  return s[0] == '-' ? "(" + s + ")" : s;
}

// An integer literal of type t holding c converted as llvm_emit's constants are (signed
// types through int64, unsigned through uint64, then wrapped to the width).
std::string int_literal(double c, DType t) {
  int bits = bits_of(t);
  if (is_unsigned(t)) {
    uint64_t u = c < 0 ? static_cast<uint64_t>(static_cast<int64_t>(c))
                 : c >= 18446744073709551616.0 ? ~uint64_t{0} : static_cast<uint64_t>(c);
    if (bits < 64) u &= (uint64_t{1} << bits) - 1;
    if (t == DType::U64) return fmtu("%lluUL", u);
    if (t == DType::U32) return fmtu("%lluu", u);
    return "((" + compute_type(t, false) + ")" + fmtu("%llu", u) + ")";
  }
  int64_t s = c <= -9223372036854775808.0 ? INT64_MIN
              : c >= 9223372036854775807.0 ? INT64_MAX : static_cast<int64_t>(c);
  if (bits < 64) {
    uint64_t mask = (uint64_t{1} << bits) - 1, u = static_cast<uint64_t>(s) & mask;
    if (u >> (bits - 1)) u |= ~mask;  // sign-extend the wrapped value
    s = static_cast<int64_t>(u);
  }
  if (t == DType::I64) {
    if (s == INT64_MIN) return "(-9223372036854775807L - 1L)";
    return s < 0 ? "(" + fmt("%lldL", s) + ")" : fmt("%lldL", s);
  }
  if (t == DType::I32) {
    if (s == INT32_MIN) return "(-2147483647 - 1)";
    return s < 0 ? "(" + fmt("%lld", s) + ")" : fmt("%lld", s);
  }
  return "((" + compute_type(t, false) + ")" + fmt("%lld", s) + ")";
}


// Lanes of a tile along a dim of n outputs: 4 or 2 when the lanes past the end waste at
// most a sixth of the work (7 -> 4 lanes, 9 -> 2, 5 -> 1), else 1.
int lanes_for(int64_t n) {
  for (int lanes : {4, 2}) {
    int64_t waste = (n + lanes - 1) / lanes * lanes - n;
    if (lanes <= n && waste * 6 <= n) return lanes;
  }
  return 1;
}

// What a value or index depends on: the deepest reduce loop (0: none), the tiled dims and
// the reduce var whose loop is unrolled.
struct Deps {
  int level = 0;
  bool vec = false, unroll = false, red = false;
  void add(const Deps& o) {
    level = std::max(level, o.level);
    vec = vec || o.vec;
    unroll = unroll || o.unroll;
    red = red || o.red;
  }
};

class KernelRenderer {
 public:
  KernelRenderer(const KernelIR& k, const OpenCLTiling& tl, const TargetSpec& target,
                 const std::vector<ArgPlacement>& place, OpenCLProgramWriter& w)
      : k_(k), tl_(tl), w_(w), half_(target.half_arithmetic), place_(place) {
    if (place_.size() != k.args.size()) throw CompileError("internal: OpenCL: one placement per argument");
    for (size_t i = 0; i < place_.size(); ++i)
      if (place_[i].storage == ArgStorage::Image2D) {
        const DType t = k.args[i].dtype;
        if ((t != DType::F32 && t != DType::F16) || place_[i].image_width == 0)
          throw CompileError("internal: OpenCL: image argument " + std::to_string(i) + " of " + k.name);
      }
    // An image output is written one whole texel per tile.
    if (is_image(0) && (tl.vec_dim != static_cast<int>(k.out_shape.size()) - 1 || tl.vec_lanes != 4 ||
                        k.out_shape.back() % 4 != 0))
      throw CompileError("internal: OpenCL: image output of " + k.name + " without texel tiles");
    narrow_ = index_math_fits_32_bits(k);
    idx_t_ = narrow_ ? "int" : "long";
    const int rank = static_cast<int>(k.out_shape.size());
    var_level_.assign(k.num_vars(), 0);
    for (size_t j = 0; j < k.reduce_extents.size(); ++j)
      if (k.reduce_extents[j] != 1) {
        loop_dims_.push_back(static_cast<int>(j));
        var_level_[rank + j] = static_cast<int>(loop_dims_.size());
      }
    levels_.assign(loop_dims_.size() + 1, "");
    vec_full_ = tl.vec_dim >= 0 && k.out_shape[tl.vec_dim] % tl.vec_lanes == 0;
    unroll_full_ = tl.unroll_dim < 0 || k.out_shape[tl.unroll_dim] % tl.unroll_lanes == 0;
    choose_reduce_lanes();
  }

  std::string render(const std::string& entry) {
    for (const KernelArg& a : k_.args)
      if (a.dtype == DType::F64) w_.need_fp64();
    for (const auto& v : k_.values)
      if (v->dtype == DType::F64) w_.need_fp64();
    std::string s = "__kernel void " + entry + "(";
    for (size_t i = 0; i < k_.args.size(); ++i) {
      s += i ? ", " : "";
      if (is_image(static_cast<int>(i)))
        s += std::string(i ? "__read_only" : "__write_only") + " image2d_t p" + std::to_string(i);
      else
        s += "__global " + std::string(i ? "const " : "") + storage_type(k_.args[i].dtype) + "* restrict p" +
             std::to_string(i);
    }
    s += ") {\n";
    if (numel(k_.out_shape) == 0) return s + "}\n";
    const int nu = tl_.unroll_lanes, nv = tl_.vec_lanes;
    std::string accs, body;
    if (k_.has_reduce()) {
      const std::string at = acc_type();
      for (int u = 0; u < nu; ++u)
        for (int l = 0; l < nv; ++l)
          accs += "  " + at + " " + acc_name(u, l) + " = " + reduce_identity() + ";\n";
      // Each accumulator takes the unrolled reduce steps in order: the sum is the scalar loop's.
      for (int kk = 0; kk < red_lanes_; ++kk)
        for (int u = 0; u < nu; ++u)
          for (int l = 0; l < nv; ++l) {
            u_ = u, l_ = l, r_ = kk;
            body += acc_name(u, l) + " = " + accumulate(acc_name(u, l), k_.reduce_body) + ";\n";
          }
      r_ = 0;
    }
    in_post_ = true;
    std::vector<std::vector<std::string>> results(nu, std::vector<std::string>(nv));
    for (int u = 0; u < nu; ++u)
      for (int l = 0; l < nv; ++l) {
        u_ = u, l_ = l;
        results[u][l] = val(k_.result);
      }
    for (int u = 0; u < nu; ++u) store_tile(u, results[u]);
    std::string head = tile_variables();  // last: it declares only the lanes something reads

    // Assemble: tile variables, level-0 values, accumulators, the reduce loops with the
    // values of each level at its top, the combines innermost, then the epilogue.
    s += head + indent(levels_[0], 1) + accs;
    const int loops = static_cast<int>(loop_dims_.size());
    const int rank = static_cast<int>(k_.out_shape.size());
    for (int j = 0; j < loops; ++j) {
      const int var = rank + loop_dims_[j];
      std::string r = var_name(var), lanes;
      for (int kk : var == red_var_ ? red_names_used_ : std::set<int>())
        lanes += "const " + idx_t_ + " " + r + "_" + std::to_string(kk) + " = " + r + " + " + ilit(kk) +
                 ";\n";
      s += std::string(2 * (j + 1), ' ') + "for (" + idx_t_ + " " + r + " = 0; " + r + " < " +
           ilit(k_.reduce_extents[loop_dims_[j]]) + "; " +
           (var == red_var_ ? r + " += " + ilit(red_lanes_) : "++" + r) + ") {\n";
      s += indent(lanes + levels_[j + 1], j + 2);
    }
    s += indent(body, loops + 1);
    for (int j = loops - 1; j >= 0; --j) s += std::string(2 * (j + 1), ' ') + "}\n";
    s += indent(post_, 1);
    return s + "}\n";
  }

 private:
  static std::string indent(const std::string& text, int depth) {
    std::string out, pad(2 * depth, ' ');
    size_t i = 0;
    while (i < text.size()) {
      size_t e = text.find('\n', i);
      if (e == std::string::npos) e = text.size();
      out += pad + text.substr(i, e - i) + "\n";
      i = e + 1;
    }
    return out;
  }

  std::string ctype(DType t) const { return compute_type(t, half_); }
  // Index literal in the index type.
  std::string ilit(int64_t v) const {
    std::string s = narrow_ ? fmt("%lld", v) : fmt("%lldL", v);
    return v < 0 ? "(" + s + ")" : s;
  }
  // A literal of a value's compute type.
  std::string lit(double c, DType t) const {
    if (t == DType::F64) return float_literal(c, true);
    if (t == DType::F16 && half_) return "((half)" + float_literal(c, false) + ")";
    if (is_fp(t)) return float_literal(c, false);
    if (t == DType::Bool) return c != 0.0 ? "true" : "false";
    return int_literal(c, t);
  }

  // ---- the work-item's tile ----
  std::string var_name(int var) {
    const int rank = static_cast<int>(k_.out_shape.size());
    int64_t extent = var < rank ? k_.out_shape[var] : k_.reduce_extents[var - rank];
    if (extent == 1) return "0";
    if (var >= rank) {
      std::string r = "r" + std::to_string(var - rank);
      if (var != red_var_ || r_ == 0) return r;
      red_names_used_.insert(r_);
      return r + "_" + std::to_string(r_);
    }
    if (var == tl_.vec_dim || var == tl_.unroll_dim) {
      const int lane = var == tl_.vec_dim ? l_ : u_;
      lanes_used_.insert({var, lane});
      return "x" + std::to_string(var) + "_" + std::to_string(lane);
    }
    return "x" + std::to_string(var);
  }
  Deps var_deps(int var) const {
    Deps d;
    d.level = var_level_[var];
    d.vec = var == tl_.vec_dim;
    d.unroll = var == tl_.unroll_dim;
    d.red = var == red_var_;
    return d;
  }

  // Declares the global ids, returns early past the outputs and names the output vars of
  // every lane; lanes past the end of their dim repeat its last element (they read in
  // bounds and store nothing).
  std::string tile_variables() {
    std::string s;
    const std::vector<uint64_t>& work = tl_.work;
    const std::vector<uint64_t>& global = k_.launch.global_size;
    std::string past;
    for (size_t g = 0; g < work.size() && tl_.vec_dim >= 0; ++g) {
      s += "  const " + idx_t_ + " t" + std::to_string(g) + " = (" + idx_t_ + ")get_global_id(" +
           std::to_string(g) + ");\n";
      if (global[g] > work[g])
        past += std::string(past.empty() ? "" : " || ") + "t" + std::to_string(g) + " >= " +
                ilit(static_cast<int64_t>(work[g]));
    }
    if (!past.empty()) s += "  if (" + past + ") return;\n";
    auto tile_dim = [&](int d, int lanes, const std::string& t, bool full) {
      std::string base = "x" + std::to_string(d) + "_0";
      s += "  const " + idx_t_ + " " + base + " = " + (lanes == 1 ? t : t + " * " + ilit(lanes)) + ";\n";
      for (int i = 1; i < lanes; ++i) {
        if (!lanes_used_.count({d, i})) continue;
        std::string v = base + " + " + ilit(i);
        if (!full) v = "min(" + v + ", " + ilit(k_.out_shape[d] - 1) + ")";
        s += "  const " + idx_t_ + " x" + std::to_string(d) + "_" + std::to_string(i) + " = " + v + ";\n";
      }
    };
    if (tl_.vec_dim >= 0) tile_dim(tl_.vec_dim, tl_.vec_lanes, "t0", vec_full_);
    if (tl_.unroll_dim >= 0) tile_dim(tl_.unroll_dim, tl_.unroll_lanes, "t1", unroll_full_);
    if (!tl_.rest_dims.empty()) {
      std::string t = "t" + std::to_string(work.size() - 1);
      int64_t stride = 1;
      for (size_t i = tl_.rest_dims.size(); i-- > 0;) {
        int d = tl_.rest_dims[i];
        std::string v = stride == 1 ? t : t + " / " + ilit(stride);
        if (i > 0) v = (stride == 1 ? v : "(" + v + ")") + " % " + ilit(k_.out_shape[d]);
        s += "  const " + idx_t_ + " x" + std::to_string(d) + " = " + v + ";\n";
        stride *= k_.out_shape[d];
      }
    }
    return s;
  }

  // ---- declarations ----
  // Declares `const type name = expr;` at the loop level of d and returns the name.
  std::string define(const Deps& d, const std::string& type, const std::string& expr) {
    std::string name = "v" + std::to_string(next_name_++);
    std::string line = "const " + type + " " + name + " = " + expr + ";\n";
    if (d.level == 0 && in_post_) post_ += line;
    else levels_[d.level] += line;
    return name;
  }
  // The memo key of something with dependences d in the current tile copy.
  std::tuple<int, int, int> copy_of(const Deps& d) const {
    return {d.unroll ? u_ : -1, d.vec ? l_ : -1, d.red ? r_ : -1};
  }

  // ---- index math ----
  Deps index_deps(const Index& ix) {
    if (auto it = index_deps_.find(ix.key()); it != index_deps_.end()) return it->second;
    Deps d;
    for (const auto& [atom, coef] : ix.terms())
      d.add(atom->kind == Atom::Kind::Var ? var_deps(atom->var) : index_deps(atom->inner));
    index_deps_[ix.key()] = d;
    return d;
  }
  std::string index_expr(const Index& ix) {
    std::string s;
    for (const auto& [atom, coef] : ix.terms()) {
      std::string a = atom_expr(*atom);
      if (a == "0") continue;
      std::string term = std::abs(coef) == 1 ? a : a + " * " + ilit(std::abs(coef));
      if (s.empty()) s = coef < 0 ? "-" + term : term;
      else s += (coef < 0 ? " - " : " + ") + term;
    }
    int64_t c = ix.constant();
    if (s.empty()) return ilit(c);
    if (c != 0) s += (c < 0 ? " - " : " + ") + ilit(std::abs(c));
    return s;
  }
  std::string atom_expr(const Atom& a) {
    if (a.kind == Atom::Kind::Var) return var_name(a.var);
    Deps d = index_deps(a.inner);
    auto key = std::make_tuple(a.key, copy_of(d));
    if (auto it = atoms_.find(key); it != atoms_.end()) return it->second;
    std::string inner = index_expr(a.inner), e;
    const bool div = a.kind == Atom::Kind::Div;
    if (a.inner.min() >= 0) {
      e = "(" + inner + ")" + (div ? " / " : " % ") + ilit(a.divisor);
    } else {  // floor semantics for a dividend that can be negative
      std::string f = std::string(div ? "edge_floordiv_" : "edge_floormod_") + idx_t_;
      const std::string& t = idx_t_;
      w_.need_helper(f, div ? t + " " + f + "(" + t + " a, " + t + " b) {\n  " + t +
                                  " r = a % b;\n  return a / b - (r < 0 ? 1 : 0);\n}\n"
                            : t + " " + f + "(" + t + " a, " + t + " b) {\n  " + t +
                                  " r = a % b;\n  return r < 0 ? r + b : r;\n}\n");
      e = f + "(" + inner + ", " + ilit(a.divisor) + ")";
    }
    return atoms_[key] = define(d, idx_t_, e);
  }
  // An index as a name or literal (declared once per tile copy).
  std::string index_value(const Index& ix) {
    if (ix.is_constant()) return ilit(ix.constant());
    if (ix.constant() == 0 && ix.terms().size() == 1 && ix.terms()[0].second == 1 &&
        ix.terms()[0].first->kind == Atom::Kind::Var)
      return var_name(ix.terms()[0].first->var);
    Deps d = index_deps(ix);
    auto key = std::make_tuple("i" + ix.key(), copy_of(d));
    if (auto it = atoms_.find(key); it != atoms_.end()) return it->second;
    return atoms_[key] = define(d, idx_t_, index_expr(ix));
  }
  Deps guards_deps(const std::vector<Guard>& guards) {
    Deps d;
    for (const Guard& g : guards) d.add(index_deps(g.index));
    return d;
  }
  // The guards as one bool (true where every one holds).
  std::string guards_value(const std::vector<Guard>& guards) {
    Deps d = guards_deps(guards);
    std::string key = "g";
    for (const Guard& g : guards)
      key += g.index.key() + "@" + std::to_string(g.lo) + ":" + std::to_string(g.hi) + ";";
    auto mkey = std::make_tuple(key, copy_of(d));
    if (auto it = atoms_.find(mkey); it != atoms_.end()) return it->second;
    std::string cond;
    for (const Guard& g : guards) {
      bool lo = g.index.min() < g.lo, hi = g.index.max() >= g.hi;
      if (!lo && !hi) continue;
      std::string x = index_value(g.index);
      if (lo) cond += std::string(cond.empty() ? "" : " && ") + x + " >= " + ilit(g.lo);
      if (hi) cond += std::string(cond.empty() ? "" : " && ") + x + " < " + ilit(g.hi);
    }
    if (cond.empty()) return atoms_[mkey] = "true";
    return atoms_[mkey] = define(d, "bool", cond);
  }

  // ---- values ----
  Deps value_deps(const Value* v) {
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
    value_deps_[v] = d;
    return d;
  }

  // The value in the current tile copy: a name, a literal or a vector component.
  std::string val(const Value* v) {
    Deps d = value_deps(v);
    auto key = std::make_tuple(v, copy_of(d));
    if (auto it = values_.find(key); it != values_.end()) return it->second;
    std::string r;
    switch (v->kind) {
      case Value::Kind::Const: r = lit(v->constant, v->dtype); break;
      case Value::Kind::Accumulator:
        r = acc_name(u_, l_);
        if (half_ && k_.acc_dtype == DType::F16) r = define(d, "half", "convert_half(" + r + ")");
        break;
      case Value::Kind::InBounds: r = guards_value(v->guards); break;
      case Value::Kind::Load: r = load(v, d); break;
      case Value::Kind::Alu: r = define(d, ctype(v->dtype), alu(v)); break;
    }
    values_[key] = r;
    return r;
  }

  // ---- loads ----
  // The element offset a load reads: index + the Gather term, element 0 where a guard fails.
  std::string address(const Value* v) {
    std::string idx = index_expr(v->index);
    if (v->dynamic) idx += " + " + dynamic_offset(v);
    if (!v->guards.empty() && !unguarded_image(v)) {
      std::string ok = guards_value(v->guards);
      if (ok != "true") idx = ok + " ? " + idx + " : " + ilit(0);
    }
    return idx;
  }
  // clamp(dynamic, 0, extent - 1) * stride, clamped in the dynamic value's own (signed)
  // type as llvm_emit does, then converted to the index type.
  std::string dynamic_offset(const Value* v) {
    Deps d = value_deps(v->dynamic);
    const DType dt = v->dynamic->dtype;
    const std::string st = signed_type(dt);
    int bits = bits_of(dt);
    int64_t hi = v->dynamic_extent - 1;
    if (bits < 64) hi = std::min<int64_t>(hi, (int64_t{1} << (bits - 1)) - 1);
    std::string x = val(v->dynamic);
    if (ctype(dt) != st) x = define(d, st, "(" + st + ")" + x);
    std::string h = st == "long" ? fmt("%lldL", hi) : fmt("%lld", hi);
    std::string c = "(" + idx_t_ + ")(" + x + " < 0 ? 0 : " + x + " > " + h + " ? " + h + " : " + x + ")";
    if (v->dynamic_stride != 1) c += " * " + ilit(v->dynamic_stride);
    return define(d, idx_t_, c);
  }
  std::string load(const Value* v, const Deps& d) {
    const bool image = is_image(v->arg);
    if (vector_load_ok(v)) return image ? texel_component(v, d, Axis::Vec) : vector_component(v, d, false);
    if (reduce_vector_ok(v, red_var_, red_lanes_))
      return image ? texel_component(v, d, Axis::Reduce) : vector_component(v, d, true);
    if (image && unroll_texel_ok(v)) return texel_component(v, d, Axis::Unroll);
    if (image) return image_element(v, d);
    const DType sdt = k_.args[v->arg].dtype;
    const std::string p = "p" + std::to_string(v->arg), a = address(v);
    std::string e;
    if (sdt == DType::F16) e = half_ ? p + "[" + a + "]" : "vload_half(" + a + ", " + p + ")";
    else if (sdt == DType::Bool) e = "(" + p + "[" + a + "] != 0)";
    else if (sdt == DType::F32 && v->dtype == DType::F16 && half_) e = "convert_half(" + p + "[" + a + "])";
    else e = p + "[" + a + "]";
    return define(d, ctype(v->dtype), e);
  }
  // Consecutive lanes read consecutive elements: one vloadN for the tile row. Only where
  // no lane is past the end (nothing clamped) and no guard differs between lanes.
  bool vector_load_ok(const Value* v) {
    const int lanes = tl_.vec_lanes;
    if (lanes < 2 || !vec_full_) return false;
    if (is_image(v->arg))  // 4 lanes: one or two texels; a gather's lanes read element by element
      return lanes == 4 && !v->dynamic && (unguarded_image(v) || !guards_deps(v->guards).vec) &&
             index_affine_coef(v->index, tl_.vec_dim) == std::optional<int64_t>(1);
    const DType sdt = k_.args[v->arg].dtype;
    if (sdt != v->dtype || k_.args[v->arg].numel < lanes) return false;
    if (guards_deps(v->guards).vec || (v->dynamic && value_deps(v->dynamic).vec)) return false;
    return index_affine_coef(v->index, tl_.vec_dim) == std::optional<int64_t>(1);
  }
  // The same along the unrolled reduce loop: consecutive reduce steps read consecutive
  // elements (a matrix product with a transposed weight, a patchifying conv).
  bool reduce_vector_ok(const Value* v, int var, int lanes) const {
    if (lanes < 2 || v->dynamic) return false;
    const DType sdt = k_.args[v->arg].dtype;
    if (is_image(v->arg) ? lanes != 4 : sdt != v->dtype || k_.args[v->arg].numel < lanes) return false;
    for (const Guard& g : v->guards)
      if (index_depends_on(g.index, var) && !unguarded_image(v)) return false;
    return index_affine_coef(v->index, var) == std::optional<int64_t>(1);
  }
  // Component `lane` of one vloadN along the tile's lanes or the unrolled reduce steps.
  std::string vector_component(const Value* v, const Deps& d, bool along_reduce) {
    int& lane = along_reduce ? r_ : l_;
    auto copy = copy_of(d);
    (along_reduce ? std::get<2>(copy) : std::get<1>(copy)) = -1;
    auto key = std::make_tuple(v, along_reduce, copy);
    auto it = vectors_.find(key);
    if (it == vectors_.end()) {
      const int saved = lane;
      lane = 0;
      const DType t = v->dtype;
      const std::string n = std::to_string(along_reduce ? red_lanes_ : tl_.vec_lanes);
      const std::string p = "p" + std::to_string(v->arg);
      const std::string a = address(v);
      std::string type, e;
      if (t == DType::F16 && !half_) {
        type = "float" + n;
        e = "vload_half" + n + "(0, " + p + " + (" + a + "))";
      } else {
        type = storage_type(t) + n;
        e = "vload" + n + "(0, " + p + " + (" + a + "))";
      }
      lane = saved;
      it = vectors_.emplace(key, define(d, type, e)).first;
    }
    std::string c = it->second + ".s" + std::to_string(lane);
    return v->dtype == DType::Bool ? "(" + c + " != 0)" : c;
  }

  // ---- images ----
  bool is_image(int arg) const { return place_[arg].storage == ArgStorage::Image2D; }
  // An image read needs no guards: the Where above a guarded load discards what it reads
  // where they fail, and the sampler makes any coordinate safe (border texels past the
  // edges). Only the int offset must not overflow: indices computed in long keep them.
  bool unguarded_image(const Value* v) const { return is_image(v->arg) && narrow_ && !v->dynamic; }
  // Texels hold half values only where half is computed in (cl_khr_fp16: read_imageh);
  // read_imagef / write_imagef convert CL_HALF_FLOAT texels otherwise (core OpenCL 1.2).
  bool half_texels(int arg) const { return half_ && k_.args[arg].dtype == DType::F16; }
  std::string texel_type(int arg) const { return half_texels(arg) ? "half" : "float"; }
  // The one sampler: unnormalized coordinates, nearest texel, border (0) past the edge for
  // the second texel of an unaligned 4-element read at the image's end.
  std::string sampler() {
    w_.need_helper("edge_smp", "__constant sampler_t edge_smp = CLK_NORMALIZED_COORDS_FALSE | "
                               "CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST;\n");
    return "edge_smp";
  }
  // The image coordinates of texel t (an int expression) of argument `arg`.
  std::string coord(int arg, const std::string& t) const {
    const ArgPlacement& im = place_[arg];
    if (im.image_height <= 1) return "(int2)(" + t + ", 0)";
    const std::string w = std::to_string(im.image_width);
    return "(int2)(" + t + " % " + w + ", " + t + " / " + w + ")";
  }
  std::string read_texel(int arg, const std::string& t) {
    const std::string smp = sampler();
    const std::string f = half_texels(arg) ? "read_imageh" : "read_imagef";
    return f + "(p" + std::to_string(arg) + ", " + smp + ", " + coord(arg, t) + ")";
  }
  // An element offset as int (images hold fewer than 2^30 elements).
  std::string int_offset(const std::string& a) const { return narrow_ ? a : "(int)(" + a + ")"; }
  // A texel component (or channel picked at run time) as the load's compute type.
  std::string from_texel(const Value* v, const std::string& x) const {
    const std::string want = ctype(v->dtype);
    return want == texel_type(v->arg) ? x : "convert_" + want + "(" + x + ")";
  }
  // One element: its texel, then its channel.
  std::string image_element(const Value* v, const Deps& d) {
    const std::string T = texel_type(v->arg);
    const std::string pick = "edge_channel_" + T;
    w_.need_helper(pick, T + " " + pick + "(" + T + "4 v, int c) {\n"
                         "  return c == 0 ? v.x : c == 1 ? v.y : c == 2 ? v.z : v.w;\n}\n");
    const std::string e = define(d, "int", int_offset(address(v)));
    const std::string t = define(d, "int", e + " >> 2");
    const std::string texel = define(d, T + "4", read_texel(v->arg, t));
    return define(d, ctype(v->dtype), from_texel(v, pick + "(" + texel + ", " + e + " & 3)"));
  }
  // Lane 0 of 4 consecutive elements along `var` sits on a texel boundary: var's lane 0 is a
  // multiple of 4 (a tile's first lane, an unrolled loop's first step) and so is everything else.
  static bool texel_aligned(const Index& ix, int var) {
    if (ix.constant() % 4 != 0) return false;
    for (const auto& [atom, coef] : ix.terms())
      if (!(atom->kind == Atom::Kind::Var && atom->var == var) && coef % 4 != 0) return false;
    return true;
  }
  // The 4 tile rows along the unrolled output dim read consecutive elements (a per-channel
  // bias or scale in a conv's epilogue): one texel for all of them.
  bool unroll_texel_ok(const Value* v) {
    if (tl_.unroll_lanes != 4 || !unroll_full_ || v->dynamic) return false;
    if (guards_deps(v->guards).unroll && !unguarded_image(v)) return false;
    return index_affine_coef(v->index, tl_.unroll_dim) == std::optional<int64_t>(1);
  }
  // Component `lane` of the 4 consecutive elements along the tile's lanes, its unrolled rows
  // or the unrolled reduce steps: one texel where aligned, else the two texels they straddle.
  enum class Axis { Unroll, Vec, Reduce };  // the order of copy_of's tuple
  std::string texel_component(const Value* v, const Deps& d, Axis axis) {
    int& lane = axis == Axis::Unroll ? u_ : axis == Axis::Vec ? l_ : r_;
    auto copy = copy_of(d);
    if (axis == Axis::Unroll) std::get<0>(copy) = -1;
    else if (axis == Axis::Vec) std::get<1>(copy) = -1;
    else std::get<2>(copy) = -1;
    auto key = std::make_tuple(v, static_cast<int>(axis), copy);
    auto it = texels_.find(key);
    if (it == texels_.end()) {
      const int saved = lane;
      lane = 0;
      const std::string T = texel_type(v->arg) + "4";
      const int var = axis == Axis::Unroll ? tl_.unroll_dim : axis == Axis::Vec ? tl_.vec_dim : red_var_;
      const std::string e = define(d, "int", int_offset(address(v)));
      const std::string t = define(d, "int", e + " >> 2");
      std::string texel;
      if (texel_aligned(v->index, var)) {
        texel = define(d, T, read_texel(v->arg, t));
      } else {
        const std::string join = "edge_join_" + T;
        w_.need_helper(join, T + " " + join + "(" + T + " a, " + T + " b, int c) {\n"
                             "  switch (c) {\n"
                             "    case 0: return a;\n"
                             "    case 1: return (" + T + ")(a.yzw, b.x);\n"
                             "    case 2: return (" + T + ")(a.zw, b.xy);\n"
                             "    default: return (" + T + ")(a.w, b.xyz);\n"
                             "  }\n}\n");
        const std::string a = define(d, T, read_texel(v->arg, t));
        const std::string b = define(d, T, read_texel(v->arg, define(d, "int", t + " + 1")));
        texel = define(d, T, join + "(" + a + ", " + b + ", " + e + " & 3)");
      }
      lane = saved;
      it = texels_.emplace(key, texel).first;
    }
    return from_texel(v, it->second + ".s" + std::to_string(lane));
  }

  // Unrolls the innermost reduce loop by 4 (or 2) where that turns loads the tile's lanes
  // cannot vectorize into vloadN along the reduce dim, within a budget of body copies.
  void choose_reduce_lanes() {
    if (!k_.has_reduce() || loop_dims_.empty()) return;
    const int var = static_cast<int>(k_.out_shape.size()) + loop_dims_.back();
    const int lanes = reduce_unroll_lanes(k_, tl_, loop_dims_.back(), false);
    bool useful = false;
    for (const Value* l : reduce_body_loads(k_))
      useful = useful || (!vector_load_ok(l) && reduce_vector_ok(l, var, lanes));
    if (useful) {
      red_var_ = var;
      red_lanes_ = lanes;
      value_deps_.clear();  // they do not know the unrolled var yet
      index_deps_.clear();
    }
  }

  // ---- stores ----
  // A result converted to the output's storage element type.
  std::string stored(const std::string& r) const {
    const DType sdt = k_.args[0].dtype, rdt = k_.result->dtype;
    if (sdt == DType::Bool) return "(uchar)(" + r + ")";
    if (sdt == DType::F32 && rdt == DType::F16 && half_) return "convert_float(" + r + ")";
    return r;
  }
  void store_tile(int u, const std::vector<std::string>& r) {
    const DType sdt = k_.args[0].dtype;
    const int lanes = tl_.vec_lanes;
    u_ = u;
    std::string cond;
    if (!unroll_full_ && u > 0)
      cond = "x" + std::to_string(tl_.unroll_dim) + "_0 + " + ilit(u) + " < " +
             ilit(k_.out_shape[tl_.unroll_dim]);
    auto guarded = [&](const std::string& c, const std::string& stmt) {
      post_ += c.empty() ? stmt + "\n" : "if (" + c + ") " + stmt + "\n";
    };
    if (is_image(0)) {  // 4 lanes from a multiple of 4: one whole texel
      l_ = 0;
      const std::string t = define(Deps{}, "int", "(" + int_offset(index_expr(output_index(k_))) + ") >> 2");
      const std::string T = texel_type(0) + "4";
      std::string parts;
      for (int l = 0; l < lanes; ++l) {
        std::string x = r[l];
        if (half_texels(0)) x = k_.result->dtype == DType::F16 ? x : "convert_half(" + x + ")";
        else x = stored(x);
        parts += std::string(l ? ", " : "") + x;
      }
      std::string texel = "(" + T + ")(" + parts + ")";
      if (sdt == DType::F16 && !half_) {
        // write_imagef may round to half toward zero: round to nearest even first, as vstore_half_rte.
        w_.need_helper("edge_round_half4", "float4 edge_round_half4(float4 x) {\n"
                                           "  ushort4 bits;\n"
                                           "  vstore_half4_rte(x, 0, (__private half*)&bits);\n"
                                           "  return vload_half4(0, (const __private half*)&bits);\n}\n");
        texel = "edge_round_half4(" + texel + ")";
      }
      guarded(cond, std::string(half_texels(0) ? "write_imageh" : "write_imagef") + "(p0, " + coord(0, t) +
                        ", " + texel + ");");
      return;
    }
    if (lanes > 1 && vec_full_) {
      l_ = 0;
      std::string idx = index_expr(output_index(k_));
      const std::string n = std::to_string(lanes);
      std::string parts;
      for (int l = 0; l < lanes; ++l) parts += std::string(l ? ", " : "") + stored(r[l]);
      if (sdt == DType::F16 && !half_)
        guarded(cond, "vstore_half" + n + "_rte((float" + n + ")(" + parts + "), 0, p0 + (" + idx + "));");
      else
        guarded(cond,
                "vstore" + n + "((" + storage_type(sdt) + n + ")(" + parts + "), 0, p0 + (" + idx + "));");
      return;
    }
    for (int l = 0; l < lanes; ++l) {
      l_ = l;
      std::string c = cond;
      if (!vec_full_ && l > 0)
        c += std::string(c.empty() ? "" : " && ") + "x" + std::to_string(tl_.vec_dim) + "_0 + " + ilit(l) +
             " < " + ilit(k_.out_shape[tl_.vec_dim]);
      std::string idx = index_expr(output_index(k_));
      if (sdt == DType::F16 && !half_) guarded(c, "vstore_half_rte(" + r[l] + ", " + idx + ", p0);");
      else guarded(c, "p0[" + idx + "] = " + stored(r[l]) + ";");
    }
  }

  // ---- reductions ----
  // F16 reductions accumulate in float, also with half arithmetic: a half accumulator
  // loses the sum of a long reduction (2048 + 1 == 2048). (llvm_emit's half arithmetic on
  // aarch64-fp16 sums in half over blocks of at most 8 steps, added in float, to keep its
  // `fmla v.8h`: see kHalfBlock there.)
  std::string acc_type() const { return k_.acc_dtype == DType::F16 ? "float" : ctype(k_.acc_dtype); }
  std::string acc_name(int u, int l) const { return "acc" + std::to_string(u) + "_" + std::to_string(l); }
  std::string reduce_identity() const {
    const DType t = k_.acc_dtype == DType::F16 ? DType::F32 : k_.acc_dtype;
    if (k_.reduce_op == Op::ReduceSum) return t == DType::Bool ? "false" : lit(0.0, t);
    if (is_fp(t)) return t == DType::F64 ? "(-(double)INFINITY)" : "(-INFINITY)";
    if (t == DType::Bool) return "false";
    if (is_unsigned(t)) return lit(0.0, t);
    return int_literal(-std::ldexp(1.0, bits_of(t) - 1), t);
  }
  // Half arithmetic: a sum of products of two halves takes each product exact in float (11
  // significant bits each, exponents within float's range), never rounded to half (nor
  // overflowing there), one multiply-add per step: as the adreno630 back end's fma and the
  // targets that compute half in float.
  std::string accumulate(const std::string& acc, const Value* body) {
    if (half_ && k_.acc_dtype == DType::F16 && k_.reduce_op == Op::ReduceSum && body->kind == Value::Kind::Alu &&
        body->op == Op::Mul && body->srcs.size() == 2 && body->srcs[0]->dtype == DType::F16 &&
        body->srcs[1]->dtype == DType::F16)
      return acc + " + convert_float(" + val(body->srcs[0]) + ") * convert_float(" + val(body->srcs[1]) + ")";
    return combine(acc, val(body));
  }
  std::string combine(const std::string& acc, std::string x) {
    const DType t = k_.acc_dtype;
    if (half_ && t == DType::F16) x = "convert_float(" + x + ")";
    if (k_.reduce_op == Op::ReduceSum) {
      if (t == DType::Bool) return acc + " | " + x;
      return is_fp(t) ? acc + " + " + x : int_arith(t, acc, "+", x);
    }
    if (k_.reduce_op != Op::ReduceMax)
      throw CompileError(std::string("OpenCL code generator: unsupported reduction ") +
                         op_name(k_.reduce_op));
    // select(fcmp ugt acc x, acc, x): a NaN accumulator stays, a NaN x does not replace it.
    if (is_fp(t)) return "!(" + acc + " <= " + x + ") ? " + acc + " : " + x;
    if (t == DType::Bool) return acc + " | " + x;
    return acc + " > " + x + " ? " + acc + " : " + x;
  }

  // ---- arithmetic ----
  // Integer +, -, * with wrap-around: int and long in their unsigned types (signed overflow
  // is undefined in C), ushort * ushort in uint (it would overflow int after promotion).
  std::string int_arith(DType t, const std::string& a, const char* op, const std::string& b) const {
    const std::string T = compute_type(t, false);
    if (t == DType::I32 || t == DType::I64)
      return "(" + T + ")((u" + T + ")" + a + " " + op + " (u" + T + ")" + b + ")";
    if (t == DType::U16 && std::string(op) == "*") return "(ushort)((uint)" + a + " * (uint)" + b + ")";
    return "(" + T + ")(" + a + " " + op + " " + b + ")";
  }
  // Integer division and remainder, C semantics; x / 0 gives 0 instead of trapping and
  // x / -1 negates with wrap-around (INT_MIN / -1 traps on some hardware).
  std::string int_div(DType t, const std::string& a, const std::string& b, bool rem) {
    if (t == DType::Bool) return rem ? "false" : "(" + b + " ? " + a + " : false)";
    const std::string T = compute_type(t, false);
    const std::string f = std::string(rem ? "edge_mod_" : "edge_div_") + T;
    std::string def = T + " " + f + "(" + T + " a, " + T + " b) {\n";
    if (is_unsigned(t))
      def += "  return b == 0 ? (" + T + ")0 : (" + T + ")(a " + (rem ? "%" : "/") + " b);\n";
    else if (rem)
      def += "  return b == 0 || b == -1 ? (" + T + ")0 : (" + T + ")(a % b);\n";
    else
      def += "  if (b == 0) return 0;\n"
             "  if (b == -1) return (" + T + ")(0 - (u" + T + ")a);\n"
             "  return (" + T + ")(a / b);\n";
    w_.need_helper(f, def + "}\n");
    return f + "(" + a + ", " + b + ")";
  }
  // pow with llvm_emit's rules: |a|^e, the sign of a negative base with an odd integer
  // exponent, NaN for a negative base and a fractional one, 0^e = 0 (e > 0) or inf, x^0 = 1.
  std::string pow_helper(DType t) {
    auto def = [&](const std::string& T, const std::string& one, const std::string& zero,
                   const std::string& half) {
      std::string f = "edge_pow_" + T;
      w_.need_helper(f, T + " " + f + "(" + T + " a, " + T + " e) {\n"
                        "  " + T + " r = powr(fabs(a), e);\n"
                        "  bool e_int = floor(e) == e;\n"
                        "  " + T + " h = e * " + half + ";\n"
                        "  bool e_odd = e_int && floor(h) != h;\n"
                        "  if (a < " + zero + " && e_odd) r = -r;\n"
                        "  if (a < " + zero + " && !e_int) r = NAN;\n"
                        "  if (a == " + zero + ") r = e > " + zero + " ? " + zero + " : INFINITY;\n"
                        "  if (e == " + zero + ") r = " + one + ";\n"
                        "  return r;\n}\n");
      return f;
    };
    if (t == DType::F64) return def("double", "1.0", "0.0", "0.5");
    std::string f32 = def("float", "1.0f", "0.0f", "0.5f");
    if (t == DType::F16 && half_) {
      w_.need_helper("edge_pow_half", "half edge_pow_half(half a, half e) {\n  return convert_half(" + f32 +
                                          "(convert_float(a), convert_float(e)));\n}\n");
      return "edge_pow_half";
    }
    return f32;
  }
  // F16 computes in float without half arithmetic: a cast to F16 rounds to the nearest
  // half (ties to even) through a private half, as llvm_emit's fptrunc + fpext.
  std::string round_half(const std::string& x) {
    w_.need_helper("edge_round_half", "float edge_round_half(float x) {\n"
                                      "  ushort bits;\n"
                                      "  vstore_half_rte(x, 0, (__private half*)&bits);\n"
                                      "  return vload_half(0, (const __private half*)&bits);\n}\n");
    return "edge_round_half(" + x + ")";
  }

  std::string cast(std::string x, DType from, DType to) {
    if (to == DType::Bool) return "(" + x + " != " + lit(0.0, from) + ")";  // NaN != 0 holds: une
    if (from == to) return x;
    const std::string T = ctype(to);
    if (from == DType::Bool) {
      x = "(" + x + " ? 1 : 0)";
      from = DType::I32;
    }
    if (is_fp(from) && is_fp(to)) {
      if (to == DType::F16) {
        if (from == DType::F64) x = "convert_float(" + x + ")";  // double -> float -> half, as llvm_emit
        return half_ ? "convert_half(" + x + ")" : round_half(x);
      }
      if (from == DType::F16 && !half_ && to == DType::F32) return x;
      return "convert_" + T + "(" + x + ")";
    }
    // convert_T_sat saturates, truncates and takes NaN to 0 by the spec; Mesa 22.3's rusticl
    // gave INT_MIN (-128 to int8) for a NaN, so the NaN test is written out. To 8 / 16 bits
    // through int32 (the same saturation): a select of a NaN test into a char crashed
    // rusticl's compiler.
    if (is_fp(from)) {
      const std::string wide = dtype_size(to) >= 4 ? T : "int";
      const std::string r = "((" + x + ") != (" + x + ") ? (" + wide + ")0 : convert_" + wide + "_sat(" + x + "))";
      return wide == T ? r : "convert_" + T + "_sat(" + r + ")";
    }
    if (is_fp(to)) {
      if (to == DType::F16) {
        x = "convert_float(" + x + ")";
        return half_ ? "convert_half(" + x + ")" : round_half(x);
      }
      return "convert_" + T + "(" + x + ")";
    }
    return "(" + T + ")(" + x + ")";  // sign- or zero-extends by the source type, wraps
  }

  std::string alu(const Value* v) {
    std::vector<std::string> s;
    for (const Value* x : v->srcs) s.push_back(val(x));
    const DType in = v->srcs.empty() ? v->dtype : v->srcs[0]->dtype;
    const bool fp = is_fp(in), b = in == DType::Bool;
    auto fail = [&]() -> std::string {
      throw CompileError(std::string("OpenCL code generator: unsupported op ") + op_name(v->op) + " (" +
                         dtype_name(in) + ")");
    };
    auto math = [&](const char* f) { return fp ? std::string(f) + "(" + s[0] + ")" : fail(); };
    auto bin = [&](const char* op) { return "(" + s[0] + " " + op + " " + s[1] + ")"; };
    switch (v->op) {
      case Op::Neg:
        if (fp) return "-" + s[0];
        return b ? s[0] : int_arith(in, "0", "-", s[0]);
      case Op::Exp: return math("exp");
      case Op::Log: return math("log");
      case Op::Tanh: return math("tanh");
      case Op::Erf: return math("erf");
      case Op::Sin: return math("sin");
      case Op::Cos: return math("cos");
      case Op::Sqrt: return math("sqrt");
      case Op::Recip: return fp ? "(" + lit(1.0, in) + " / " + s[0] + ")" : fail();
      case Op::Abs:
        if (fp) return "fabs(" + s[0] + ")";
        if (is_unsigned(in)) return s[0];
        return "(" + s[0] + " < 0 ? " + int_arith(in, "0", "-", s[0]) + " : " + s[0] + ")";
      case Op::Floor: return fp ? "floor(" + s[0] + ")" : s[0];
      case Op::Ceil: return fp ? "ceil(" + s[0] + ")" : s[0];
      case Op::Round: return fp ? "rint(" + s[0] + ")" : s[0];  // ties to even
      case Op::Cast: return cast(s[0], in, v->dtype);
      case Op::Not:
        if (b) return "!" + s[0];
        return fp ? fail() : "(" + ctype(in) + ")(~" + s[0] + ")";
      case Op::Add: return b ? bin("|") : fp ? bin("+") : int_arith(in, s[0], "+", s[1]);
      case Op::Sub: return b ? bin("^") : fp ? bin("-") : int_arith(in, s[0], "-", s[1]);
      case Op::Mul: return b ? bin("&") : fp ? bin("*") : int_arith(in, s[0], "*", s[1]);
      case Op::Div: return fp ? bin("/") : int_div(in, s[0], s[1], false);
      case Op::Mod:  // C fmod: a - trunc(a / b) * b
        if (fp) return "(" + s[0] + " - trunc(" + s[0] + " / " + s[1] + ") * " + s[1] + ")";
        return int_div(in, s[0], s[1], true);
      case Op::Max:  // select(fcmp ugt a b, a, b): a NaN in a wins, a NaN in b loses
        if (fp) return "(!(" + s[0] + " <= " + s[1] + ") ? " + s[0] + " : " + s[1] + ")";
        return b ? bin("|") : "(" + s[0] + " > " + s[1] + " ? " + s[0] + " : " + s[1] + ")";
      case Op::Min:  // select(fcmp ult a b, a, b)
        if (fp) return "(!(" + s[0] + " >= " + s[1] + ") ? " + s[0] + " : " + s[1] + ")";
        return b ? bin("&") : "(" + s[0] + " < " + s[1] + " ? " + s[0] + " : " + s[1] + ")";
      case Op::Pow: return fp ? pow_helper(in) + "(" + s[0] + ", " + s[1] + ")" : fail();
      case Op::CmpLt: return bin("<");  // ordered for floats; unsigned types compare unsigned
      case Op::CmpEq: return bin("==");
      case Op::And: return fp ? fail() : bin("&");
      case Op::Or: return fp ? fail() : bin("|");
      case Op::Xor: return fp ? fail() : bin("^");
      case Op::Where: return "(" + s[0] + " ? " + s[1] + " : " + s[2] + ")";
      default: break;
    }
    return fail();
  }

  const KernelIR& k_;
  const OpenCLTiling& tl_;
  OpenCLProgramWriter& w_;
  bool half_;
  const std::vector<ArgPlacement>& place_;
  bool narrow_ = true;
  std::string idx_t_;
  std::vector<int> var_level_;   // loop level of each var (0: outside the reduce loops)
  std::vector<int> loop_dims_;   // reduce dims with a loop (extent > 1)
  std::vector<std::string> levels_;  // declarations at each loop level
  std::string post_;             // after the loops: the epilogue and the stores
  bool in_post_ = false;
  bool vec_full_ = true, unroll_full_ = true;  // no lane past the end of its dim
  int u_ = 0, l_ = 0, r_ = 0;    // the tile copy (and unrolled reduce step) being rendered
  int red_var_ = -1;             // reduce var whose loop is unrolled for vector loads (-1: none)
  int red_lanes_ = 1;            // steps per iteration of that loop
  std::set<int> red_names_used_;  // steps whose var is named (not only read through a vloadN)
  std::set<std::pair<int, int>> lanes_used_;  // (output dim, lane) whose var is named
  int next_name_ = 0;
  std::map<std::string, Deps> index_deps_;
  std::map<const Value*, Deps> value_deps_;
  std::map<std::tuple<std::string, std::tuple<int, int, int>>, std::string> atoms_;
  std::map<std::tuple<const Value*, std::tuple<int, int, int>>, std::string> values_;
  std::map<std::tuple<const Value*, bool, std::tuple<int, int, int>>, std::string> vectors_;
  std::map<std::tuple<const Value*, int, std::tuple<int, int, int>>, std::string> texels_;
};

// The output dim besides the vectorized one whose loads the tile shares most, as
// llvm_emit's choose_unroll_dim: a load that does not depend on it is shared by every
// unrolled output (weighing double when it is a row of the vectorized dim).
int choose_unroll_dim(const KernelIR& k, int vec) {
  if (!k.has_reduce()) return -1;
  std::vector<const Value*> loads = reduce_body_loads(k);
  int best = -1, best_score = 0;
  for (int d = 0; d < static_cast<int>(k.out_shape.size()); ++d) {
    if (d == vec || k.out_shape[d] < 2) continue;
    int score = 0;
    for (const Value* l : loads)
      if (!load_depends_on(l, d)) score += (vec >= 0 && load_depends_on(l, vec)) ? 2 : 1;
    if (score > best_score) best = d, best_score = score;
  }
  return best;
}

}  // namespace

int reduce_unroll_lanes(const KernelIR& k, const OpenCLTiling& tl, int j, bool whole_short) {
  const int64_t extent = k.reduce_extents[j];
  int lanes = extent % 4 == 0 ? 4 : extent % 2 == 0 ? 2 : 1;
  if (whole_short && extent <= 8 && extent % 4 != 0) lanes = static_cast<int>(extent);
  std::set<const Value*> seen;
  std::function<int(const Value*)> ops = [&](const Value* v) {
    if (!seen.insert(v).second) return 0;
    int n = v->kind == Value::Kind::Alu ? 1 : 0;
    for (const Value* x : v->srcs) n += ops(x);
    return v->dynamic ? n + ops(v->dynamic) : n;
  };
  const int body_ops = ops(k.reduce_body) + 1;
  while (lanes > 1 && tl.vec_lanes * tl.unroll_lanes * lanes * body_ops > 512)
    lanes = lanes == 4 || (lanes > 2 && lanes % 2 == 0) ? 2 : 1;  // a step count dividing the extent
  return lanes;
}

namespace {
uint64_t pow2_ceil(uint64_t n) {
  uint64_t p = 1;
  while (p < n) p *= 2;
  return p;
}
}  // namespace

LaunchPlan plan_gpu_launch(const OpenCLTiling& tl, int max_global_bits, const std::string& target) {
  using edge::bundle::align_up;
  LaunchPlan plan;
  plan.parallel_dim = tl.vec_dim;
  const size_t rank = tl.work.size();
  uint64_t total = 1;
  for (uint64_t w : tl.work) total *= w;
  const uint64_t size = std::min<uint64_t>(64, pow2_ceil(total));
  std::vector<std::pair<std::vector<uint64_t>, uint64_t>> shapes;  // local size, work-items
  uint64_t fewest = ~uint64_t{0};
  auto limit = [&](size_t d) { return d < rank ? std::min(size, pow2_ceil(tl.work[d])) : 1; };
  for (uint64_t l0 = 1; l0 <= limit(0); l0 *= 2)
    for (uint64_t l1 = 1; l1 <= limit(1) && l0 * l1 <= size; l1 *= 2) {
      uint64_t l2 = size / (l0 * l1);
      if (l2 > limit(2) || (rank < 3 && l2 != 1)) continue;
      std::vector<uint64_t> local = {l0, l1, l2};
      local.resize(rank);
      uint64_t items = 1;
      for (size_t d = 0; d < rank; ++d) items *= align_up(tl.work[d], local[d]);
      shapes.push_back({local, items});
      fewest = std::min(fewest, items);
    }
  // In order of l0, then l1: the last one that qualifies is the widest.
  std::vector<uint64_t> best(rank, 1);  // none qualifies only if size exceeds the limits
  for (const auto& [local, items] : shapes)
    if (items * 4 <= fewest * 5) best = local;
  plan.local_size = best;
  for (size_t d = 0; d < rank; ++d) {
    const uint64_t g = align_up(tl.work[d], best[d]);
    if (g >= (uint64_t{1} << max_global_bits))
      throw CompileError(target + ": a kernel needs more than 2^" + std::to_string(max_global_bits) +
                         " work-items in one dim");
    plan.global_size.push_back(g);
  }
  return plan;
}

OpenCLTiling choose_opencl_tiling(const KernelIR& k, bool image_output) {
  OpenCLTiling tl;
  const Shape& out = k.out_shape;
  if (image_output && (out.empty() || out.back() <= 0 || out.back() % 4 != 0))
    throw CompileError("internal: OpenCL: image output of " + k.name + " whose innermost dim is not 4k");
  int vec = static_cast<int>(out.size()) - 1;
  while (vec >= 0 && out[vec] <= 1) --vec;
  if (vec < 0) {
    tl.work = {1};
    return tl;
  }
  tl.vec_dim = vec;
  // A piece of a split kernel (kernel_ir.h) stores into a larger buffer: its vec dim holds
  // consecutive elements only where the buffer's later dims are all 1 (a depthwise conv cut
  // per output pixel stores its channels 8 floats apart); else one lane, stored by index.
  bool contiguous = true;
  for (size_t d = size_t(vec) + 1; d < k.out_full_shape.size(); ++d) contiguous = contiguous && k.out_full_shape[d] == 1;
  tl.vec_lanes = image_output ? 4 : contiguous ? lanes_for(out[vec]) : 1;
  int unroll = choose_unroll_dim(k, vec);
  if (unroll >= 0 && lanes_for(out[unroll]) > 1) {
    tl.unroll_dim = unroll;
    tl.unroll_lanes = lanes_for(out[unroll]);
  }
  uint64_t rest = 1;
  for (int d = 0; d < static_cast<int>(out.size()); ++d)
    if (d != tl.vec_dim && d != tl.unroll_dim && out[d] > 1) {
      tl.rest_dims.push_back(d);
      rest *= static_cast<uint64_t>(out[d]);
    }
  auto tiles = [](int64_t n, int lanes) { return static_cast<uint64_t>((n + lanes - 1) / lanes); };
  tl.work = {tiles(out[vec], tl.vec_lanes)};
  if (tl.unroll_dim >= 0) tl.work.push_back(tiles(out[tl.unroll_dim], tl.unroll_lanes));
  if (!tl.rest_dims.empty()) tl.work.push_back(rest);
  return tl;
}

void OpenCLProgramWriter::need_helper(const std::string& name, const std::string& definition) {
  if (helpers_.emplace(name, definition).second) helper_order_.push_back(name);
}

void OpenCLProgramWriter::add_kernel(const KernelIR& k, const OpenCLTiling& tiling, const std::string& entry,
                                     const std::vector<ArgPlacement>& args) {
  KernelRenderer r(k, tiling, target_, args, *this);
  kernels_ += "\n" + r.render(entry);
}

std::string OpenCLProgramWriter::source() const {
  std::string s = "// OpenCL C 1.2 program generated by edgec for target " + target_.name + ".\n";
  if (fp64_) s += "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
  // Elementwise F16 values compute in half; reductions still accumulate in float.
  if (target_.half_arithmetic) s += "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n";
  for (const std::string& name : helper_order_) s += "\n" + helpers_.at(name);
  return s + kernels_;
}

}  // namespace edgec
