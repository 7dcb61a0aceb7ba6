#include "codegen/kernel_ir.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <set>
#include <sstream>

namespace edgec {

namespace {

std::vector<int64_t> row_major_strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

Index flat_index(const std::vector<Index>& idx, const Shape& shape) {
  auto strides = row_major_strides(shape);
  Index flat(0);
  for (size_t d = 0; d < idx.size(); ++d)
    if (shape[d] != 1) flat = flat + idx[d] * strides[d];
  return flat;
}

// The range [lo, hi] of x where `holding` all hold: its variables' range, narrowed by each
// guard on x plus a constant.
std::pair<int64_t, int64_t> range_where(const Index& x, const std::vector<Guard>& holding) {
  int64_t lo = x.min(), hi = x.max();
  for (const Guard& g : holding) {
    const Index offset = x - g.index;
    if (!offset.is_constant()) continue;
    lo = std::max(lo, g.lo + offset.constant());
    hi = std::min(hi, g.hi - 1 + offset.constant());
  }
  return {lo, hi};
}

// Index of the source element a movement op reads for output element `idx`, where the
// guards `holding` hold (the kernel reads nothing elsewhere). Pad also adds guards that say
// where the source exists at all.
std::vector<Index> source_index(const Node* n, const std::vector<Index>& idx, const std::vector<Guard>& holding,
                                std::vector<Guard>& guards) {
  const Shape& in = n->srcs[0]->shape;
  std::vector<Index> src(in.size());
  switch (n->op) {
    case Op::Reshape: {
      // A source without elements is never read (and its zero dims would divide by zero).
      if (std::find(in.begin(), in.end(), 0) != in.end()) break;
      Index flat = flat_index(idx, n->shape);
      auto strides = row_major_strides(in);
      // Where the guards that hold narrow the flat index to one block of strides[d] * in[d]
      // elements (under a Pad's guard: tf2onnx pads an (N, L, 1) signal reshaped to (N, 1,
      // L), then reshapes it to (N, 1, 1, L') for a Conv), dim d is (flat - block) / stride,
      // no modulo: a strided conv's taps then read the signal plainly (Basic Pitch's 256-tap
      // stride-2 CQT decimation: 7.7 -> 0.58 ms, 1.5 -> 19 GFLOP/s, an integer division per tap gone).
      const auto [lo, hi] = range_where(flat, holding);
      const bool narrowed = lo > flat.min() || hi < flat.max();
      for (size_t d = 0; d < in.size(); ++d) {
        if (in[d] == 1) continue;
        if (d == 0) {
          src[d] = flat.floordiv(strides[d]);
          continue;
        }
        const int64_t block = strides[d] * in[d], block_start = floordiv(lo, block) * block;
        src[d] = narrowed && floordiv(hi, block) * block == block_start
                     ? (flat - Index(block_start)).floordiv(strides[d])
                     : flat.floordiv(strides[d]).mod(in[d]);
      }
      break;
    }
    case Op::Permute:
      for (size_t d = 0; d < idx.size(); ++d) src[n->axes[d]] = idx[d];
      break;
    case Op::Expand:
      for (size_t d = 0; d < in.size(); ++d) src[d] = in[d] == 1 ? Index(0) : idx[d];
      break;
    case Op::Pad:
      for (size_t d = 0; d < in.size(); ++d) {
        src[d] = idx[d] - Index(n->lo[d]);
        Guard g{src[d], 0, in[d]};
        if (!g.always_true()) guards.push_back(g);
      }
      break;
    case Op::Shrink:
      for (size_t d = 0; d < in.size(); ++d) src[d] = idx[d] + Index(n->lo[d]);
      break;
    case Op::Flip: {
      for (size_t d = 0; d < in.size(); ++d) src[d] = idx[d];
      for (int64_t a : n->axes) src[a] = Index(in[a] - 1) - idx[a];
      break;
    }
    case Op::Window: {
      size_t k = n->kernel.size(), lead = in.size() - k;
      for (size_t d = 0; d < lead; ++d) src[d] = idx[d];
      for (size_t j = 0; j < k; ++j)
        src[lead + j] = idx[lead + j] * n->stride[j] + idx[lead + k + j] * n->dilation[j];
      break;
    }
    default:
      throw CompileError(std::string("internal: not a movement op: ") + op_name(n->op));
  }
  return src;
}

// Element offset of logical element idx in a buffer, in its stored layout.
Index buffer_offset(const ScheduledBuffer& b, const std::vector<Index>& idx) {
  if (b.layout.empty()) return flat_index(idx, b.shape);
  std::vector<Index> stored;
  for (int64_t d : b.layout) stored.push_back(idx[d]);
  return flat_index(stored, b.stored_shape());
}

// Element stride of logical dim `axis` in a buffer's stored layout.
int64_t buffer_stride(const ScheduledBuffer& b, int64_t axis) {
  if (b.layout.empty()) return row_major_strides(b.shape)[axis];
  auto strides = row_major_strides(b.stored_shape());
  for (size_t i = 0; i < b.layout.size(); ++i)
    if (b.layout[i] == axis) return strides[i];
  throw CompileError("internal: layout misses a dim");
}

std::string guards_key(const std::vector<Guard>& guards) {
  std::string k;
  for (const Guard& g : guards) k += g.index.key() + "@" + std::to_string(g.lo) + ":" + std::to_string(g.hi) + ";";
  return k;
}

class KernelBuilder {
 public:
  KernelBuilder(const Schedule& s, const ScheduledKernel& k, KernelIR& ir) : s_(s), k_(k), ir_(ir) {}

  void build() {
    const Node* root = k_.root;
    const ScheduledBuffer& out = s_.buffers[k_.output];
    ir_.name = k_.name;
    // The loops run over the output in its stored order; var i is stored dim i.
    ir_.out_shape = out.stored_shape();
    ir_.out_dtype = root->dtype;
    for (int b : {k_.output})
      ir_.args.push_back({b, s_.buffers[b].storage, numel(s_.buffers[b].shape), s_.buffers[b].role, s_.buffers[b].stored_shape()});
    for (int b : k_.inputs)
      ir_.args.push_back({b, s_.buffers[b].storage, numel(s_.buffers[b].shape), s_.buffers[b].role, s_.buffers[b].stored_shape()});
    std::vector<Index> idx(root->shape.size(), Index(0));
    for (size_t i = 0; i < ir_.out_shape.size(); ++i) {
      size_t d = out.layout.empty() ? i : static_cast<size_t>(out.layout[i]);
      idx[d] = Index::var(static_cast<int>(i), ir_.out_shape[i]);
    }
    if (!k_.row_stages.empty()) build_row_stages(idx);
    ir_.result = value(root, idx, {}, true);
    if (!k_.row_stages.empty()) ir_.row_staged = value_to_stage();
  }

 private:
  Value* make(Value v) { return ir_.add_value(std::move(v)); }
  const Value* constant(double c, DType t) { return ir_.add_constant(c, t); }

  // Each stage's value at the row's start (the row dim 0: where the kernel's Expand of the
  // stage reads it), its reduce's body along the row.
  void build_row_stages(const std::vector<Index>& idx) {
    if (!s_.buffers[k_.output].layout.empty()) throw CompileError("internal: row kernel " + k_.name + " with a layout");
    ir_.row_dim = k_.row_axis;
    for (const Node* t : k_.row_stages) {
      std::vector<Index> at_row(idx.size());
      for (size_t d = 0; d < idx.size(); ++d) at_row[d] = t->shape[d] == 1 ? Index(0) : idx[d];
      stage_ = static_cast<int>(ir_.row_stages.size());
      ir_.row_stages.push_back({Op::Const, t->dtype, nullptr, nullptr});
      ir_.row_stages.back().value = value(t, at_row, {}, true);
      if (!ir_.row_stages.back().body) throw CompileError("internal: row stage of " + k_.name + " without a reduce");
    }
    stage_ = -1;
  }

  // The largest value of the last stage's body that the result reads too (nearest the
  // result, not a stage's value, which is the same for the whole row); null if none.
  const Value* value_to_stage() const {
    std::set<const Value*> stage_values, in_body;
    for (const KernelIR::RowStage& st : ir_.row_stages) stage_values.insert(st.value);
    std::function<void(const Value*)> mark = [&](const Value* v) {
      if (stage_values.count(v) || !in_body.insert(v).second) return;
      for (const Value* x : v->srcs) mark(x);
    };
    mark(ir_.row_stages.back().body);
    std::vector<const Value*> level{ir_.result};
    std::set<const Value*> seen;
    while (!level.empty()) {
      std::vector<const Value*> next;
      for (const Value* v : level) {
        if (stage_values.count(v) || !seen.insert(v).second) continue;
        if (in_body.count(v) && v->kind == Value::Kind::Alu && v->dtype == ir_.out_dtype) return v;
        next.insert(next.end(), v->srcs.begin(), v->srcs.end());
      }
      level = std::move(next);
    }
    return nullptr;
  }

  bool is_row_stage(const Node* n) const {
    return std::find(k_.row_stages.begin(), k_.row_stages.end(), n) != k_.row_stages.end();
  }

  int arg_of(const Node* n) {
    int b = s_.buffer_of(n);
    for (size_t i = 1; i < ir_.args.size(); ++i)
      if (ir_.args[i].buffer == b) return static_cast<int>(i);
    throw CompileError("internal: kernel " + k_.name + " reads a buffer it did not list");
  }

  // The value of node n at element idx, read where `guards` hold.
  const Value* value(const Node* n, const std::vector<Index>& idx, const std::vector<Guard>& guards, bool is_root = false) {
    std::string key = std::to_string(n->id) + "|" + guards_key(guards);
    for (const Index& i : idx) key += i.key() + ",";
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    const Value* v = compute(n, idx, guards, is_root);
    memo_[key] = v;
    return v;
  }

  const Value* compute(const Node* n, const std::vector<Index>& idx, const std::vector<Guard>& guards, bool is_root) {
    // A stage is read where build_row_stages computed it (the memo has it), nowhere else.
    if (!is_root && is_row_stage(n)) throw CompileError("internal: kernel " + k_.name + " reads a row stage off its row");
    if (!is_root && s_.buffer_of(n) >= 0) {
      Value v(Value::Kind::Load);
      v.dtype = n->dtype;
      v.arg = arg_of(n);
      v.index = buffer_offset(s_.buffers[s_.buffer_of(n)], idx);
      v.guards = guards;
      return make(std::move(v));
    }
    if (n->op == Op::Const) return constant(n->value, n->dtype);
    if (is_movement(n->op)) {
      std::vector<Guard> inner = guards;
      std::vector<Guard> added;
      auto src = source_index(n, idx, guards, added);
      for (const Guard& g : added) {
        if (g.always_false()) return constant(n->value, n->dtype);  // all padding here
        inner.push_back(g);
      }
      const Value* x = value(n->srcs[0], src, inner);
      if (added.empty()) return x;
      Value in(Value::Kind::InBounds);
      in.dtype = DType::Bool;
      in.guards = added;
      Value w(Value::Kind::Alu);
      w.op = Op::Where;
      w.dtype = n->dtype;
      w.srcs = {make(std::move(in)), x, constant(n->value, n->dtype)};
      return make(std::move(w));
    }
    if (n->op == Op::Gather) {
      // src is always a buffer (the scheduler realizes it): a Load whose offset along the
      // gathered axis is the index value read here.
      const Node* src = n->srcs[0];
      if (s_.buffer_of(src) < 0) throw CompileError("internal: the source of a Gather is not a buffer");
      int64_t axis = n->axes[0];
      std::vector<Index> src_idx = idx;
      src_idx[axis] = Index(0);
      Value v(Value::Kind::Load);
      v.dtype = n->dtype;
      const ScheduledBuffer& src_buf = s_.buffers[s_.buffer_of(src)];
      v.arg = arg_of(src);
      v.index = buffer_offset(src_buf, src_idx);
      v.guards = guards;
      v.dynamic = value(n->srcs[1], idx, guards);
      v.dynamic_stride = buffer_stride(src_buf, axis);
      v.dynamic_extent = src->shape[axis];
      return make(std::move(v));
    }
    if (is_reduce(n->op) && stage_ >= 0) {
      KernelIR::RowStage& st = ir_.row_stages[size_t(stage_)];
      // Its axes: the row, the trailing dims from row_dim on (those of extent 1 may be left out).
      bool along_the_row = !st.body;
      for (size_t d = 0; d < ir_.out_shape.size(); ++d) {
        const bool reduced = std::find(n->axes.begin(), n->axes.end(), int64_t(d)) != n->axes.end();
        along_the_row = along_the_row && (int(d) >= ir_.row_dim ? reduced || ir_.out_shape[d] == 1 : !reduced);
      }
      if (!along_the_row) throw CompileError("internal: row stage of " + k_.name + " is no single reduce along its row");
      st.reduce_op = n->op;
      st.acc_dtype = n->dtype;
      std::vector<Index> along_row = idx;
      for (int64_t axis : n->axes) along_row[size_t(axis)] = Index::var(int(axis), ir_.out_shape[size_t(axis)]);
      st.body = value(n->srcs[0], along_row, guards);
      Value acc(Value::Kind::Accumulator);
      acc.dtype = n->dtype;
      acc.stage = stage_;
      return make(std::move(acc));
    }
    if (is_reduce(n->op)) {
      if (ir_.has_reduce()) throw CompileError("internal: kernel " + k_.name + " has two reduces");
      ir_.reduce_op = n->op;
      ir_.acc_dtype = n->dtype;
      const Node* src = n->srcs[0];
      int var = static_cast<int>(ir_.out_shape.size());
      std::vector<Index> src_idx = idx;
      for (int64_t axis : n->axes) {
        ir_.reduce_extents.push_back(src->shape[axis]);
        src_idx[axis] = Index::var(var++, src->shape[axis]);
      }
      ir_.reduce_body = value(src, src_idx, guards);
      Value acc(Value::Kind::Accumulator);
      acc.dtype = n->dtype;
      return make(std::move(acc));
    }
    if (is_elementwise(n->op)) {
      Value v(Value::Kind::Alu);
      v.op = n->op;
      v.dtype = n->dtype;
      v.exp_arg_nonpositive = n->exp_arg_nonpositive;
      for (const Node* s : n->srcs) v.srcs.push_back(value(s, idx, guards));
      return make(std::move(v));
    }
    throw CompileError(std::string("internal: cannot generate code for op ") + op_name(n->op));
  }

  const Schedule& s_;
  const ScheduledKernel& k_;
  KernelIR& ir_;
  std::map<std::string, const Value*> memo_;
  int stage_ = -1;  // the row stage being built
};

}  // namespace

KernelIR build_kernel_ir(const Schedule& schedule, const ScheduledKernel& kernel) {
  KernelIR ir;
  KernelBuilder(schedule, kernel, ir).build();
  return ir;
}

namespace {

void index_vars(const Index& ix, std::set<int>& vars) {
  for (const auto& [atom, coef] : ix.terms()) {
    if (atom->kind == Atom::Kind::Var) vars.insert(atom->var);
    else index_vars(atom->inner, vars);
  }
}

int64_t evaluate(const Index& ix, const std::vector<int64_t>& vals) {
  int64_t v = ix.constant();
  for (const auto& [atom, coef] : ix.terms()) {
    const int64_t t = atom->kind == Atom::Kind::Var ? vals[size_t(atom->var)]
                      : atom->kind == Atom::Kind::Div ? floordiv(evaluate(atom->inner, vals), atom->divisor)
                                                      : floormod(evaluate(atom->inner, vals), atom->divisor);
    v += coef * t;
  }
  return v;
}

// The share of a reduce kernel's (output, reduce) points where `guards` all hold: the guards
// fall into groups with no variable in common (a conv's row guard reads the output row and
// the kernel row, its column guard the column and kernel column), each group's points are
// counted where they are few (at most kMaxPoints), and the shares multiply. 1 where a group
// has too many points to count.
double share_inside(const std::vector<Guard>& guards, const std::vector<int64_t>& extents) {
  constexpr int64_t kMaxPoints = int64_t{1} << 20;
  std::vector<std::set<int>> vars;
  std::vector<size_t> group(guards.size());
  for (size_t i = 0; i < guards.size(); ++i) {
    vars.emplace_back();
    index_vars(guards[i].index, vars.back());
    group[i] = i;
  }
  // Union-find over the guards by shared variables.
  std::function<size_t(size_t)> root = [&](size_t i) { return group[i] == i ? i : group[i] = root(group[i]); };
  for (size_t i = 0; i < guards.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      for (int v : vars[i])
        if (vars[j].count(v)) group[root(i)] = root(j);
  double share = 1.0;
  std::vector<int64_t> vals(extents.size(), 0);
  for (size_t r = 0; r < guards.size(); ++r) {
    if (root(r) != r) continue;
    std::vector<const Guard*> members;
    std::set<int> used;
    for (size_t i = 0; i < guards.size(); ++i)
      if (root(i) == r) members.push_back(&guards[i]), used.insert(vars[i].begin(), vars[i].end());
    int64_t points = 1;
    for (int v : used)
      if ((points *= extents[size_t(v)]) > kMaxPoints) return 1.0;
    std::vector<int> order(used.begin(), used.end());
    int64_t inside = 0;
    for (int v : order) vals[size_t(v)] = 0;
    for (int64_t p = 0; p < points; ++p) {
      bool holds = true;
      for (const Guard* g : members) {
        const int64_t x = evaluate(g->index, vals);
        holds = holds && x >= g->lo && x < g->hi;
      }
      inside += holds;
      for (size_t d = order.size(); d-- > 0;)
        if (++vals[size_t(order[d])] < extents[size_t(order[d])]) break;
        else vals[size_t(order[d])] = 0;
    }
    share *= double(inside) / double(points);
  }
  return share;
}

}  // namespace

int64_t KernelIR::flops() const {
  std::set<const Value*> seen;
  std::function<int64_t(const Value*)> count = [&](const Value* v) -> int64_t {
    if (!v || !seen.insert(v).second) return 0;
    // A Where that selects padding (its condition is an InBounds test) is no arithmetic
    // of the model: a padded conv counts two FLOPs per multiply-add, like any other.
    bool padding = v->kind == Value::Kind::Alu && v->op == Op::Where && v->srcs[0]->kind == Value::Kind::InBounds;
    int64_t c = v->kind == Value::Kind::Alu && !padding ? 1 : 0;
    for (const Value* s : v->srcs) c += count(s);
    if (v->dynamic) c += count(v->dynamic);
    return c;
  };
  int64_t per_reduce = has_reduce() ? count(reduce_body) + 1 : 0;
  int64_t per_out = 0;
  for (const RowStage& st : row_stages) per_out += count(st.body) + 1;  // a value shared with the result counts once
  per_out += count(result);
  // The products a padded window reads from the padding are none of the model's arithmetic
  // either (they add zeros): where the reduce body selects padding under one set of guards
  // (a conv's or a pooling window's), only the points where those guards hold count, so a
  // dilated conv whose taps mostly read padding does not look fast.
  double share = 1.0;
  if (has_reduce()) {
    std::set<std::string> keys;
    const std::vector<Guard>* guards = nullptr;
    seen.clear();
    std::function<void(const Value*)> find = [&](const Value* v) {
      if (!v || !seen.insert(v).second) return;
      if (v->kind == Value::Kind::Alu && v->op == Op::Where && v->srcs[0]->kind == Value::Kind::InBounds &&
          !v->srcs[0]->guards.empty()) {
        keys.insert(guards_key(v->srcs[0]->guards));
        guards = &v->srcs[0]->guards;
      }
      for (const Value* s : v->srcs) find(s);
      if (v->dynamic) find(v->dynamic);
    };
    find(reduce_body);
    if (keys.size() == 1) {
      std::vector<int64_t> extents(out_shape.begin(), out_shape.end());
      extents.insert(extents.end(), reduce_extents.begin(), reduce_extents.end());
      share = share_inside(*guards, extents);
    }
  }
  const double reduced = double(numel(out_shape)) * double(numel(reduce_extents)) * share;
  return numel(out_shape) * per_out + static_cast<int64_t>(std::llround(double(per_reduce) * reduced));
}

std::string to_string(const KernelIR& k) {
  std::ostringstream os;
  std::map<const Value*, int> ids;
  std::function<std::string(const Value*)> show = [&](const Value* v) -> std::string {
    auto it = ids.find(v);
    if (it != ids.end()) return "%" + std::to_string(it->second);
    std::string body;
    switch (v->kind) {
      case Value::Kind::Const: return std::to_string(v->constant);
      case Value::Kind::Accumulator: return v->stage >= 0 ? "acc" + std::to_string(v->stage) : "acc";
      case Value::Kind::Load: {
        body = "load arg" + std::to_string(v->arg) + "[" + v->index.key();
        if (v->dynamic)
          body += " + clamp(" + show(v->dynamic) + ", 0, " + std::to_string(v->dynamic_extent - 1) + ")*" +
                  std::to_string(v->dynamic_stride);
        body += "]";
        if (!v->guards.empty()) body += " if " + guards_key(v->guards);
        break;
      }
      case Value::Kind::InBounds: body = "inbounds " + guards_key(v->guards); break;
      case Value::Kind::Alu: {
        body = std::string(op_name(v->op)) + (v->exp_arg_nonpositive ? "_nonpositive(" : "(");
        for (size_t i = 0; i < v->srcs.size(); ++i) body += (i ? ", " : "") + show(v->srcs[i]);
        body += ")";
        break;
      }
    }
    int id = static_cast<int>(ids.size());
    ids[v] = id;
    os << "  %" << id << " = " << body << " : " << dtype_name(v->dtype) << "\n";
    return "%" + std::to_string(id);
  };
  os << "kernel " << k.name << " out" << shape_str(k.out_shape) << " " << dtype_name(k.out_dtype);
  if (!k.out_full_shape.empty()) os << " at " << shape_str(k.out_origin) << " of " << shape_str(k.out_full_shape);
  os << "\n";
  for (size_t j = 0; j < k.row_stages.size(); ++j) {
    os << " row stage " << j << ": " << op_name(k.row_stages[j].reduce_op) << " along dim " << k.row_dim
       << (k.row_dim + 1 < int(k.out_shape.size()) ? " and those after it" : "") << ":\n";
    std::string b = show(k.row_stages[j].body);
    os << "  acc" << j << " <- " << b << "\n";
    std::string v = show(k.row_stages[j].value);
    os << "  stage" << j << " = " << v << "\n";
  }
  if (k.row_staged) os << " staged in the output row: " << show(k.row_staged) << "\n";
  if (k.has_reduce()) {
    os << " reduce " << op_name(k.reduce_op) << " over " << shape_str(k.reduce_extents) << ":\n";
    std::string b = show(k.reduce_body);
    os << "  acc <- " << b << "\n";
  }
  std::string r = show(k.result);
  os << "  out <- " << r << "\n";
  return os.str();
}

Index output_index(const KernelIR& k) {
  const bool piece = !k.out_full_shape.empty();
  Index flat(0);
  int64_t stride = 1;
  for (int d = static_cast<int>(k.out_shape.size()) - 1; d >= 0; --d) {
    Index v = Index::var(d, k.out_shape[d]);
    if (piece) v = v + Index(k.out_origin[size_t(d)]);
    flat = flat + v * stride;
    stride *= piece ? k.out_full_shape[size_t(d)] : k.out_shape[d];
  }
  return flat;
}

bool index_depends_on(const Index& ix, int var) {
  for (const auto& [atom, coef] : ix.terms())
    if (atom->kind == Atom::Kind::Var ? atom->var == var : index_depends_on(atom->inner, var)) return true;
  return false;
}

std::optional<int64_t> index_affine_coef(const Index& ix, int var) {
  int64_t c = 0;
  for (const auto& [atom, coef] : ix.terms()) {
    if (atom->kind == Atom::Kind::Var) {
      if (atom->var == var) c += coef;
    } else if (index_depends_on(atom->inner, var)) {
      return std::nullopt;
    }
  }
  return c;
}

namespace {
// Whether `dividend` moves by one per step of `var` and is otherwise a multiple of `block`:
// from a multiple of `block`, that many consecutive steps stay inside one block. A term
// x mod m, m a multiple of block and x itself such a dividend, moves as x does there (a
// panel of a computed operand packed per head: (c mod 64) / 16 for the head's 64 columns).
bool steps_by_one_from_block_start(const Index& dividend, int var, int64_t block) {
  if (floormod(dividend.constant(), block) != 0) return false;
  int64_t step = 0;
  for (const auto& [atom, coef] : dividend.terms()) {
    if (atom->kind == Atom::Kind::Var && atom->var == var) {
      step += coef;
    } else if (atom->kind == Atom::Kind::Var || !index_depends_on(atom->inner, var)) {
      if (coef % block != 0) return false;
    } else if (atom->kind == Atom::Kind::Mod && atom->divisor % block == 0 &&
               steps_by_one_from_block_start(atom->inner, var, block)) {
      step += coef;
    } else {
      return false;
    }
  }
  return step == 1;
}
}  // namespace

std::optional<int64_t> lane_stride(const Index& ix, int var, int lanes) {
  if (std::optional<int64_t> c = index_affine_coef(ix, var)) return c;
  int64_t stride = 0;
  for (const auto& [atom, coef] : ix.terms()) {
    if (atom->kind == Atom::Kind::Var) {
      if (atom->var == var) stride += coef;
      continue;
    }
    if (!index_depends_on(atom->inner, var)) continue;
    if (atom->divisor % lanes != 0 || !steps_by_one_from_block_start(atom->inner, var, lanes)) return std::nullopt;
    if (atom->kind == Atom::Kind::Mod) stride += coef;  // a Div is the same for every lane
  }
  return stride;
}

std::optional<LaneRepeat> lane_repeat(const Index& ix, int var, int lanes) {
  std::optional<LaneRepeat> found;
  for (const auto& [atom, coef] : ix.terms()) {
    if (atom->kind == Atom::Kind::Var) {
      if (atom->var == var) return std::nullopt;
      continue;
    }
    if (!index_depends_on(atom->inner, var)) continue;
    const int64_t k = atom->divisor;
    // The dividend starts a block of k at lane 0 and moves by one per lane: lane j adds j / k.
    if (found || atom->kind != Atom::Kind::Div || k < 2 || lanes % k != 0 || !steps_by_one_from_block_start(atom->inner, var, k))
      return std::nullopt;
    found = LaneRepeat{k, coef};
  }
  return found;
}

std::optional<std::vector<int64_t>> lane_offsets(const Index& ix, int var, int lanes) {
  std::vector<int64_t> offsets(static_cast<size_t>(lanes), 0);
  for (const auto& [atom, coef] : ix.terms()) {
    if (atom->kind == Atom::Kind::Var) {
      if (atom->var == var)
        for (int j = 0; j < lanes; ++j) offsets[size_t(j)] += coef * j;
      continue;
    }
    if (!index_depends_on(atom->inner, var)) continue;
    const int64_t d = atom->divisor;
    const bool mod = atom->kind == Atom::Kind::Mod;
    if (d % lanes == 0 && steps_by_one_from_block_start(atom->inner, var, lanes)) {
      // Inside one block of d: a Div is the same for every lane, a Mod moves by one.
      if (mod)
        for (int j = 0; j < lanes; ++j) offsets[size_t(j)] += coef * j;
    } else if (d > 0 && lanes % d == 0 && steps_by_one_from_block_start(atom->inner, var, d)) {
      // Blocks of d lanes: lane j adds j / d (Div) or j % d (Mod).
      for (int j = 0; j < lanes; ++j) offsets[size_t(j)] += coef * (mod ? j % d : j / d);
    } else {
      return std::nullopt;
    }
  }
  return offsets;
}

bool load_depends_on(const Value* load, int var) { return load->dynamic || index_depends_on(load->index, var); }

std::optional<int64_t> load_affine_coef(const Value* load, int var) {
  if (load->dynamic) return std::nullopt;
  return index_affine_coef(load->index, var);
}

std::vector<const Value*> reduce_body_loads(const KernelIR& k) {
  std::vector<const Value*> loads;
  if (!k.has_reduce()) return loads;
  std::set<const Value*> seen;
  std::function<void(const Value*)> collect = [&](const Value* v) {
    if (!seen.insert(v).second) return;
    if (v->kind == Value::Kind::Load) loads.push_back(v);
    for (const Value* x : v->srcs) collect(x);
    if (v->dynamic) collect(v->dynamic);
  };
  collect(k.reduce_body);
  return loads;
}

static std::vector<int64_t> arg_reach(const KernelIR& k) {
  std::vector<int64_t> reach(k.args.size(), 0);
  if (!k.args.empty()) reach[0] = output_index(k).max() + 1;
  for (const auto& v : k.values) {
    if (v->kind != Value::Kind::Load) continue;
    int64_t last = v->index.max();
    if (v->dynamic) last += (v->dynamic_extent - 1) * std::max<int64_t>(v->dynamic_stride, 0);
    reach[v->arg] = std::max(reach[v->arg], last + 1);
  }
  // A guarded load reads element 0 where its guards fail: the guards only lower the bound,
  // which the interval of the bare index overstates at padded borders.
  for (size_t a = 0; a < reach.size(); ++a) reach[a] = std::clamp<int64_t>(reach[a], 0, k.args[a].numel);
  return reach;
}

std::vector<ArgUse> arg_contracts(const KernelIR& k) {
  const std::vector<int64_t> reach = arg_reach(k);
  std::vector<ArgUse> uses;
  for (size_t a = 0; a < k.args.size(); ++a)
    uses.push_back(ArgUse{a == 0, k.args[a].dtype, static_cast<uint64_t>(reach[a]) * dtype_size(k.args[a].dtype)});
  return uses;
}

bool index_math_fits_32_bits(const KernelIR& k) {
  constexpr int64_t lim = int64_t{1} << 30;  // headroom for the lane offsets
  std::function<bool(const Index&)> fits = [&](const Index& ix) {
    if (ix.min() < -lim || ix.max() > lim) return false;
    for (const auto& [atom, coef] : ix.terms())
      if (atom->kind != Atom::Kind::Var && !fits(atom->inner)) return false;
    return true;
  };
  for (const KernelArg& a : k.args)
    if (a.numel > lim) return false;
  for (const auto& v : k.values) {
    if (v->kind == Value::Kind::Load && !fits(v->index)) return false;
    // A gathered offset adds [0, extent-1] * stride to the static part.
    if (v->kind == Value::Kind::Load && v->dynamic &&
        v->index.max() + (v->dynamic_extent - 1) * v->dynamic_stride > lim)
      return false;
    for (const Guard& g : v->guards)
      if (!fits(g.index) || std::abs(g.lo) > lim || std::abs(g.hi) > lim) return false;
  }
  return true;
}

}  // namespace edgec
