// kernel_split.cc — split a kernel assembled from parts along its output (kernel_ir.h,
// split_at_part_boundaries).
//
// A Concat is lowered as a sum of its sources, each padded with zeros to the full extent
// (lowering.h, concat): every output element reads every source through a guarded load and
// a select, and a vector of lanes gathers where it straddles no boundary at all. DenseNet's
// BN + ReLU over each dense block's Concat (6-32 sources of 32 channels) ran at 2 GFLOP/s,
// a quarter of the model's time. Cut at the ends of the sources' intervals, each piece of
// the output lies inside one source: its bounds tests fold to constants, the selects and
// the zero parts of the sum drop out, and what is left is a plain copy (or elementwise op)
// of that source.
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "codegen/kernel_ir.h"

namespace edgec {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return -floordiv(-a, b); }

// ix with every variable v (of extent e) replaced by subst(v, e), an Index over new variables.
Index substitute_vars(const Index& ix, const std::function<Index(int, int64_t)>& subst) {
  Index r(ix.constant());
  for (const auto& [atom, coef] : ix.terms()) {
    Index t;
    if (atom->kind == Atom::Kind::Var) t = subst(atom->var, atom->hi + 1);
    else if (atom->kind == Atom::Kind::Div) t = substitute_vars(atom->inner, subst).floordiv(atom->divisor);
    else t = substitute_vars(atom->inner, subst).mod(atom->divisor);
    r = r + t * coef;
  }
  return r;
}

// ix with loop variable `var` (extent now `extent`) replaced by var + offset.
Index shift_var(const Index& ix, int var, int64_t extent, int64_t offset) {
  return substitute_vars(ix, [&](int v, int64_t e) {
    return v == var ? Index::var(var, extent) + Index(offset) : Index::var(v, e);
  });
}

// The interval [lo, hi) of output var `var` where guard g holds, when g tests that var
// alone (a * var + c with a > 0).
struct VarInterval {
  int var;
  int64_t lo, hi;
};
std::optional<VarInterval> single_var_interval(const Guard& g, int rank) {
  if (g.index.terms().size() != 1) return std::nullopt;
  const auto& [atom, a] = g.index.terms()[0];
  if (atom->kind != Atom::Kind::Var || atom->var >= rank || a <= 0) return std::nullopt;
  const int64_t c = g.index.constant(), extent = atom->hi + 1;
  const int64_t lo = std::clamp<int64_t>(ceil_div(g.lo - c, a), 0, extent);
  const int64_t hi = std::clamp<int64_t>(ceil_div(g.hi - c, a), 0, extent);
  return VarInterval{atom->var, lo, std::max(lo, hi)};
}

// Rebuilds k's values for the piece where output var `var` runs over [lo, lo + extent).
class PieceBuilder {
 public:
  PieceBuilder(const KernelIR& k, KernelIR& piece, int var, int64_t lo, int64_t extent)
      : piece_(piece), var_(var), lo_(lo), extent_(extent) {
    (void)k;
  }

  const Value* rebuild(const Value* v) {
    if (auto it = memo_.find(v); it != memo_.end()) return it->second;
    const Value* r = compute(v);
    memo_[v] = r;
    return r;
  }

 private:
  Value* make(Value v) { return piece_.add_value(std::move(v)); }
  const Value* constant(double c, DType t) { return piece_.add_constant(c, t); }
  // The guards left once var is shifted: those not always true; nullopt if one always fails.
  std::optional<std::vector<Guard>> shifted(const std::vector<Guard>& guards) {
    std::vector<Guard> out;
    for (const Guard& g : guards) {
      Guard s{shift_var(g.index, var_, extent_, lo_), g.lo, g.hi};
      if (s.always_false()) return std::nullopt;
      if (!s.always_true()) out.push_back(std::move(s));
    }
    return out;
  }

  const Value* compute(const Value* v) {
    switch (v->kind) {
      case Value::Kind::Const:
      case Value::Kind::Accumulator:
        return make(*v);
      case Value::Kind::Load: {
        auto guards = shifted(v->guards);
        // Never read: every select above it takes the other side here.
        if (!guards) return constant(0.0, v->dtype);
        Value l = *v;
        l.index = shift_var(v->index, var_, extent_, lo_);
        l.guards = std::move(*guards);
        if (v->dynamic) l.dynamic = rebuild(v->dynamic);
        return make(std::move(l));
      }
      case Value::Kind::InBounds: {
        auto guards = shifted(v->guards);
        if (!guards) return constant(0.0, DType::Bool);
        if (guards->empty()) return constant(1.0, DType::Bool);
        Value b = *v;
        b.guards = std::move(*guards);
        return make(std::move(b));
      }
      case Value::Kind::Alu: {
        std::vector<const Value*> srcs;
        for (const Value* s : v->srcs) srcs.push_back(rebuild(s));
        if (v->op == Op::Where && srcs[0]->kind == Value::Kind::Const) {
          const Value* taken = srcs[0]->constant != 0.0 ? srcs[1] : srcs[2];
          // The zero a padded part contributes outside its interval: the sum drops it.
          if (taken->kind == Value::Kind::Const && taken->constant == 0.0) absent_parts_.insert(taken);
          return taken;
        }
        if ((v->op == Op::Add || v->op == Op::Or) && srcs.size() == 2) {
          if (absent_parts_.count(srcs[0])) return srcs[1];
          if (absent_parts_.count(srcs[1])) return srcs[0];
        }
        Value a = *v;
        a.srcs = std::move(srcs);
        return make(std::move(a));
      }
    }
    return nullptr;
  }

  KernelIR& piece_;
  int var_;
  int64_t lo_, extent_;
  std::map<const Value*, const Value*> memo_;
  std::set<const Value*> absent_parts_;
};

// The piece of k over [lo, hi) of output var `var`, named k's name + suffix.
KernelIR make_piece(const KernelIR& k, int var, int64_t lo, int64_t hi, const std::string& suffix) {
  KernelIR p;
  p.name = k.name + suffix;
  p.out_shape = k.out_shape;
  p.out_shape[size_t(var)] = hi - lo;
  p.out_dtype = k.out_dtype;
  p.acc_dtype = k.acc_dtype;
  p.out_full_shape = k.out_full_shape.empty() ? k.out_shape : k.out_full_shape;
  p.out_origin = k.out_origin.empty() ? std::vector<int64_t>(k.out_shape.size(), 0) : k.out_origin;
  p.out_origin[size_t(var)] += lo;
  PieceBuilder b(k, p, var, lo, hi - lo);
  p.result = b.rebuild(k.result);
  // Keep the output and the arguments the piece still reads, in their order.
  std::set<int> used{0};
  std::set<const Value*> seen;
  std::function<void(const Value*)> walk = [&](const Value* v) {
    if (!seen.insert(v).second) return;
    if (v->kind == Value::Kind::Load) used.insert(v->arg);
    for (const Value* s : v->srcs) walk(s);
    if (v->dynamic) walk(v->dynamic);
  };
  walk(p.result);
  std::map<int, int> renumber;
  for (int a : used) {
    renumber[a] = static_cast<int>(p.args.size());
    p.args.push_back(k.args[size_t(a)]);
  }
  // Values rebuilt but no longer reachable (the dropped parts) must not count as reads.
  std::vector<std::unique_ptr<Value>> live;
  for (auto& v : p.values)
    if (seen.count(v.get())) {
      if (v->kind == Value::Kind::Load) v->arg = renumber.at(v->arg);
      live.push_back(std::move(v));
    }
  p.values = std::move(live);
  return p;
}

// Cuts (0 = c[0] < ... < c.back() = extent) thinned to at most max_pieces pieces, evenly by
// count: a Concat of more sources than that (an unrolled loop's 256 steps stacked) is cut
// into max_pieces pieces of a few sources each, so every element tests a few bounds, not
// all of them (uncut, each element selected among all 256: 16x onnxruntime's time, and LLVM
// took minutes over one function of 20000 selects).
std::vector<int64_t> at_most_pieces(std::vector<int64_t> c, size_t max_pieces) {
  const size_t pieces = c.size() - 1;
  if (pieces <= max_pieces) return c;
  std::vector<int64_t> kept;
  for (size_t j = 0; j <= max_pieces; ++j) kept.push_back(c[j * pieces / max_pieces]);
  return kept;
}

// A load indexed by (a * v + c) mod d along the innermost output var v, with d no multiple
// of the vector width, gathers wherever a vector of outputs straddles a period: a Tile of a
// last dim of 20 four times read element by element, 8.8x onnxruntime's time. Cut at the
// periods' ends (at most 16, each two vectors long at least), each piece reads one period
// with a plain index: (a * v + c) mod d folds once v's range lies in one period. Periods
// shorter than two vectors are left alone: 4 pieces of 10 took 1.5x the gathering kernel.
void add_period_cuts(const KernelIR& k, std::vector<std::set<std::pair<int64_t, int64_t>>>& intervals) {
  constexpr int64_t kMaxPeriods = 16;
  const int v = static_cast<int>(k.out_shape.size()) - 1;
  if (v < 0) return;
  const int64_t extent = k.out_shape[size_t(v)];
  std::set<const Value*> seen;
  std::function<void(const Value*)> walk = [&](const Value* x) {
    if (!seen.insert(x).second) return;
    if (x->kind == Value::Kind::Load)
      for (const auto& [atom, coef] : x->index.terms()) {
        if (atom->kind != Atom::Kind::Mod || atom->inner.terms().size() != 1) continue;
        const auto& [inner, a] = atom->inner.terms()[0];
        const int64_t d = atom->divisor, c = atom->inner.constant();
        if (inner->kind != Atom::Kind::Var || inner->var != v || a != 1 || d < 16 || d % 8 == 0 || extent <= d ||
            extent > kMaxPeriods * d)
          continue;
        // Period j covers v + c in [j d, (j + 1) d).
        for (int64_t start = -floormod(c, d); start < extent; start += d)
          intervals[size_t(v)].insert({std::max<int64_t>(start, 0), std::min(start + d, extent)});
      }
    for (const Value* s : x->srcs) walk(s);
    if (x->dynamic) walk(x->dynamic);
  };
  walk(k.result);
}

}  // namespace

std::vector<KernelIR> split_at_part_boundaries(KernelIR&& k, size_t max_pieces) {
  std::vector<KernelIR> out;
  const int rank = static_cast<int>(k.out_shape.size());
  if (k.has_reduce() || k.is_row_kernel() || !k.result || max_pieces < 2) {
    out.push_back(std::move(k));
    return out;
  }
  // The distinct intervals the bounds tests of the parts cover, per output var.
  std::vector<std::set<std::pair<int64_t, int64_t>>> intervals(static_cast<size_t>(rank));
  std::set<const Value*> seen;
  std::function<void(const Value*)> walk = [&](const Value* v) {
    if (!seen.insert(v).second) return;
    if (v->kind == Value::Kind::InBounds)
      for (const Guard& g : v->guards)
        if (auto iv = single_var_interval(g, rank)) intervals[size_t(iv->var)].insert({iv->lo, iv->hi});
    for (const Value* s : v->srcs) walk(s);
    if (v->dynamic) walk(v->dynamic);
  };
  walk(k.result);
  add_period_cuts(k, intervals);
  // The var with the most parts (two at least: a single padded part is a padded copy,
  // which its border tests cost little).
  int best = -1;
  std::vector<int64_t> cuts;
  for (int d = 0; d < rank; ++d) {
    if (intervals[size_t(d)].size() < 2) continue;
    std::set<int64_t> ends{0, k.out_shape[size_t(d)]};
    for (const auto& [lo, hi] : intervals[size_t(d)]) {
      ends.insert(lo);
      ends.insert(hi);
    }
    std::vector<int64_t> c(ends.begin(), ends.end());
    while (!c.empty() && c.back() > k.out_shape[size_t(d)]) c.pop_back();
    c = at_most_pieces(std::move(c), max_pieces);
    if (best < 0 || c.size() > cuts.size()) {
      best = d;
      cuts = std::move(c);
    }
  }
  if (best < 0) {
    out.push_back(std::move(k));
    return out;
  }
  // Each piece may split again along another var, within what is left of the budget.
  const size_t pieces = cuts.size() - 1;
  for (size_t i = 0; i < pieces; ++i) {
    KernelIR p = make_piece(k, best, cuts[i], cuts[i + 1], "_" + std::to_string(i));
    const size_t budget = (max_pieces - out.size()) - (pieces - 1 - i);
    for (KernelIR& q : split_at_part_boundaries(std::move(p), budget)) out.push_back(std::move(q));
  }
  return out;
}

namespace {

// The divisor of the first floor div / mod whose dividend is reduce var `var` alone, or 0.
int64_t divisor_of_var(const Index& ix, int var) {
  for (const auto& [atom, coef] : ix.terms()) {
    if (atom->kind == Atom::Kind::Var) continue;
    const Index& in = atom->inner;
    if (in.constant() == 0 && in.terms().size() == 1 && in.terms()[0].second == 1 &&
        in.terms()[0].first->kind == Atom::Kind::Var && in.terms()[0].first->var == var)
      return atom->divisor;
    if (int64_t d = divisor_of_var(in, var)) return d;
  }
  return 0;
}

template <typename F>
void for_each_index(KernelIR& k, F&& f) {
  for (auto& v : k.values) {
    if (v->kind == Value::Kind::Load) f(v->index);
    for (Guard& g : v->guards) f(g.index);
  }
}

}  // namespace

bool split_reduce_dims_at_divisions(KernelIR& k) {
  if (!k.has_reduce() || k.is_row_kernel()) return false;
  const int rank = static_cast<int>(k.out_shape.size());
  bool changed = false;
  for (size_t j = 0; j < k.reduce_extents.size(); ++j) {
    const int var = rank + static_cast<int>(j);
    const int64_t extent = k.reduce_extents[j];
    int64_t b = 0;
    for_each_index(k, [&](const Index& ix) {
      if (!b) b = divisor_of_var(ix, var);
    });
    if (b <= 1 || b >= extent || extent % b != 0) continue;
    // var = q * b + s, q (extent / b) and s (extent b) at var's place and the one after it, in
    // either order (the vars after var move up by one).
    auto split = [&](bool s_first) {
      const int q = s_first ? var + 1 : var, s = s_first ? var : var + 1;
      return [=](int v, int64_t e) {
        if (v == var) return Index::var(q, extent / b) * b + Index::var(s, b);
        return Index::var(v > var ? v + 1 : v, e);
      };
    };
    // Only where the division disappears: every index affine in both new vars.
    bool affine = true;
    int64_t moved_q = 0, moved_s = 0;  // how far the loads move per step of q / of s
    std::vector<Index> rewritten;
    for_each_index(k, [&](const Index& ix) {
      rewritten.push_back(substitute_vars(ix, split(false)));
      const auto cq = index_affine_coef(rewritten.back(), var), cs = index_affine_coef(rewritten.back(), var + 1);
      if (!cq || !cs) affine = false;
      else moved_q += std::abs(*cq), moved_s += std::abs(*cs);
    });
    if (!affine) continue;
    // The one that moves least last: the back end vectorizes the last reduce dim.
    const bool s_first = moved_q < moved_s;
    size_t i = 0;
    for_each_index(k, [&](Index& ix) { ix = s_first ? substitute_vars(ix, split(true)) : rewritten[i++]; });
    k.reduce_extents[j] = s_first ? b : extent / b;
    k.reduce_extents.insert(k.reduce_extents.begin() + static_cast<std::ptrdiff_t>(j) + 1, s_first ? extent / b : b);
    changed = true;
    ++j;  // both new vars are plain
  }
  return changed;
}

void split_kernels_at_part_boundaries(Schedule& schedule, std::vector<KernelIR>& kernels, size_t max_pieces) {
  std::vector<KernelIR> new_kernels;
  std::vector<ScheduledKernel> new_scheduled;
  std::vector<std::vector<int>> pieces_of(kernels.size());
  for (size_t i = 0; i < kernels.size(); ++i)
    for (KernelIR& p : split_at_part_boundaries(std::move(kernels[i]), max_pieces)) {
      ScheduledKernel sk = schedule.kernels[i];
      sk.name = p.name;
      pieces_of[i].push_back(static_cast<int>(new_kernels.size()));
      new_scheduled.push_back(std::move(sk));
      new_kernels.push_back(std::move(p));
    }
  std::vector<Step> steps;
  for (const Step& st : schedule.steps) {
    if (st.kind != Step::Kind::Kernel) {
      steps.push_back(st);
      continue;
    }
    for (int p : pieces_of[size_t(st.index)]) steps.push_back({Step::Kind::Kernel, p});
  }
  schedule.steps = std::move(steps);
  schedule.kernels = std::move(new_scheduled);
  kernels = std::move(new_kernels);
}

}  // namespace edgec
