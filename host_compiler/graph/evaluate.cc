// evaluate.cc — the dense host interpreter of the primitive graph and constant folding.
//
// Values are computed element by element and rounded to the node's dtype after every op,
// so float32 results are what float32 code computes (double holds every float32 sum,
// product and quotient exactly before the one rounding), integers stay exact in int64_t
// and wrap like the C type. Reductions accumulate in input order with the same rounding.
// Integer division or remainder by zero gives 0 here (undefined in ONNX and in C).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <unordered_map>

#include "graph/graph.h"

namespace edgec {
namespace {

// An evaluated value. Float dtypes live in `f` (each element already rounded to the dtype);
// integer and Bool dtypes live in `i` as the value of the C type (uint64 as its bit pattern).
struct Dense {
  DType dtype = DType::F32;
  Shape shape;
  std::vector<double> f;
  std::vector<int64_t> i;

  Dense() = default;
  Dense(DType t, Shape s) : dtype(t), shape(std::move(s)) {
    (is_float(t) ? (void)f.resize(numel(shape)) : (void)i.resize(numel(shape)));
  }
};

// Calls fn with a value of the C type that holds dtype t (integer and Bool dtypes only).
template <class Fn>
decltype(auto) with_int_type(DType t, Fn&& fn) {
  switch (t) {
    case DType::I8: return fn(int8_t{});
    case DType::U8: return fn(uint8_t{});
    case DType::Bool: return fn(uint8_t{});
    case DType::I16: return fn(int16_t{});
    case DType::U16: return fn(uint16_t{});
    case DType::I32: return fn(int32_t{});
    case DType::U32: return fn(uint32_t{});
    case DType::I64: return fn(int64_t{});
    case DType::U64: return fn(uint64_t{});
    default: throw CompileError(std::string("internal: not an integer dtype: ") + dtype_name(t));
  }
}

// Modular conversion of a 64-bit pattern into T, stored back as int64 (C++20 semantics).
template <class T>
int64_t wrap(uint64_t v) {
  return int64_t(T(v));
}

std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t d = s.size(); d-- > 1;) st[d - 1] = st[d] * s[d];
  return st;
}

// Calls fn(multi_index) for every element of shape, in row-major order.
template <class Fn>
void for_each_index(const Shape& shape, Fn&& fn) {
  int64_t n = numel(shape);
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    fn(idx);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

// ---- conversions between Dense and HostTensor bytes ----

Dense decode(const HostTensor& t) {
  Dense out(t.dtype, t.shape);
  int64_t n = numel(t.shape);
  if (t.bytes.size() != size_t(n) * dtype_size(t.dtype))
    throw CompileError("tensor of " + shape_str(t.shape) + " " + dtype_name(t.dtype) + " has " +
                       std::to_string(t.bytes.size()) + " bytes");
  const uint8_t* p = t.bytes.data();
  switch (t.dtype) {
    case DType::F32:
      for (int64_t k = 0; k < n; ++k) { float v; std::memcpy(&v, p + 4 * k, 4); out.f[k] = v; }
      break;
    case DType::F64:
      for (int64_t k = 0; k < n; ++k) std::memcpy(&out.f[k], p + 8 * k, 8);
      break;
    case DType::F16:
      for (int64_t k = 0; k < n; ++k) { uint16_t h; std::memcpy(&h, p + 2 * k, 2); out.f[k] = half_to_float(h); }
      break;
    case DType::BF16:
      for (int64_t k = 0; k < n; ++k) { uint16_t h; std::memcpy(&h, p + 2 * k, 2); out.f[k] = bf16_to_float(h); }
      break;
    default:
      with_int_type(t.dtype, [&](auto tag) {
        using T = decltype(tag);
        for (int64_t k = 0; k < n; ++k) { T v; std::memcpy(&v, p + sizeof(T) * k, sizeof(T)); out.i[k] = int64_t(v); }
      });
      if (t.dtype == DType::Bool)
        for (int64_t& v : out.i) v = v != 0;
  }
  return out;
}

HostTensor encode(const Dense& d) {
  HostTensor t;
  t.dtype = d.dtype;
  t.shape = d.shape;
  int64_t n = numel(d.shape);
  t.bytes.resize(size_t(n) * dtype_size(d.dtype));
  uint8_t* p = t.bytes.data();
  switch (d.dtype) {
    case DType::F32:
      for (int64_t k = 0; k < n; ++k) { float v = float(d.f[k]); std::memcpy(p + 4 * k, &v, 4); }
      break;
    case DType::F64:
      if (n > 0) std::memcpy(p, d.f.data(), size_t(n) * 8);  // an empty vector's data() may be null
      break;
    case DType::F16:
      for (int64_t k = 0; k < n; ++k) { uint16_t h = float_to_half(float(d.f[k])); std::memcpy(p + 2 * k, &h, 2); }
      break;
    case DType::BF16:
      for (int64_t k = 0; k < n; ++k) { uint16_t h = float_to_bf16(float(d.f[k])); std::memcpy(p + 2 * k, &h, 2); }
      break;
    default:
      with_int_type(d.dtype, [&](auto tag) {
        using T = decltype(tag);
        for (int64_t k = 0; k < n; ++k) { T v = T(d.i[k]); std::memcpy(p + sizeof(T) * k, &v, sizeof(T)); }
      });
  }
  return t;
}

// ---- elementwise ----

double float_unary(Op op, double x) {
  switch (op) {
    case Op::Neg: return -x;
    case Op::Exp: return std::exp(x);
    case Op::Log: return std::log(x);
    case Op::Sqrt: return std::sqrt(x);
    case Op::Recip: return 1.0 / x;
    case Op::Tanh: return std::tanh(x);
    case Op::Sin: return std::sin(x);
    case Op::Cos: return std::cos(x);
    case Op::Abs: return std::fabs(x);
    case Op::Floor: return std::floor(x);
    case Op::Ceil: return std::ceil(x);
    case Op::Round: return std::nearbyint(x);  // default rounding mode: half to even
    case Op::Erf: return std::erf(x);
    default: throw CompileError(std::string("internal: float unary ") + op_name(op));
  }
}

template <class T>
int64_t int_unary(Op op, T x) {
  switch (op) {
    case Op::Neg: return wrap<T>(0 - uint64_t(x));
    case Op::Abs: return x < 0 ? wrap<T>(0 - uint64_t(x)) : int64_t(x);
    case Op::Not: return !x;
    default: throw CompileError(std::string("internal: integer unary ") + op_name(op));
  }
}

// Comparisons give 0 / 1.
double float_binary(Op op, double a, double b) {
  switch (op) {
    case Op::Add: return a + b;
    case Op::Sub: return a - b;
    case Op::Mul: return a * b;
    case Op::Div: return a / b;
    case Op::Max: return (a > b || std::isnan(a)) ? a : b;
    case Op::Min: return (a < b || std::isnan(a)) ? a : b;
    case Op::Pow: return std::pow(a, b);
    case Op::Mod: return std::fmod(a, b);
    case Op::CmpLt: return a < b;
    case Op::CmpEq: return a == b;
    default: throw CompileError(std::string("internal: float binary ") + op_name(op));
  }
}

template <class T>
int64_t int_binary(Op op, T a, T b) {
  uint64_t ua = uint64_t(a), ub = uint64_t(b);  // arithmetic modulo 2^64, then wrapped to T
  switch (op) {
    case Op::Add: return wrap<T>(ua + ub);
    case Op::Sub: return wrap<T>(ua - ub);
    case Op::Mul: return wrap<T>(ua * ub);
    case Op::Div:  // truncates toward zero; MIN / -1 wraps
      if (b == 0) return 0;
      if constexpr (std::is_signed_v<T>) if (b == -1) return wrap<T>(0 - ua);
      return wrap<T>(uint64_t(int64_t(a / b)));
    case Op::Mod:  // sign of the dividend, as C's %
      if (b == 0) return 0;
      if constexpr (std::is_signed_v<T>) if (b == -1) return 0;
      return wrap<T>(uint64_t(int64_t(a % b)));
    case Op::Max: return int64_t(std::max(a, b));
    case Op::Min: return int64_t(std::min(a, b));
    case Op::CmpLt: return a < b;
    case Op::CmpEq: return a == b;
    case Op::And: return wrap<T>(ua & ub);
    case Op::Or: return wrap<T>(ua | ub);
    case Op::Xor: return wrap<T>(ua ^ ub);
    default: throw CompileError(std::string("internal: integer binary ") + op_name(op));
  }
}

Dense eval_unary(Op op, const Dense& x) {
  Dense out(x.dtype, x.shape);
  if (is_float(x.dtype)) {
    for (size_t k = 0; k < x.f.size(); ++k) out.f[k] = round_to_dtype(float_unary(op, x.f[k]), x.dtype);
  } else {
    with_int_type(x.dtype, [&](auto tag) {
      using T = decltype(tag);
      for (size_t k = 0; k < x.i.size(); ++k) out.i[k] = int_unary<T>(op, T(x.i[k]));
    });
  }
  return out;
}

Dense eval_cast(const Dense& x, DType to) {
  Dense out(to, x.shape);
  size_t n = size_t(numel(x.shape));
  if (is_float(x.dtype)) {
    for (size_t k = 0; k < n; ++k) {
      double v = round_to_dtype(x.f[k], to);  // floats round, integers truncate and saturate
      if (is_float(to)) out.f[k] = v;
      else out.i[k] = to == DType::U64 ? int64_t(uint64_t(v)) : int64_t(v);
    }
    return out;
  }
  with_int_type(x.dtype, [&](auto from_tag) {
    using From = decltype(from_tag);
    for (size_t k = 0; k < n; ++k) {
      From v = From(x.i[k]);
      if (is_float(to)) out.f[k] = round_to_dtype(double(v), to);
      else if (to == DType::Bool) out.i[k] = v != 0;
      else with_int_type(to, [&](auto to_tag) { out.i[k] = int64_t(decltype(to_tag)(v)); });
    }
  });
  return out;
}

Dense eval_binary(Op op, DType out_dtype, const Dense& a, const Dense& b) {
  Dense out(out_dtype, a.shape);
  size_t n = size_t(numel(a.shape));
  if (is_float(a.dtype)) {
    for (size_t k = 0; k < n; ++k) {
      double v = float_binary(op, a.f[k], b.f[k]);
      if (is_float(out_dtype)) out.f[k] = round_to_dtype(v, out_dtype);
      else out.i[k] = int64_t(v);
    }
  } else {
    with_int_type(a.dtype, [&](auto tag) {
      using T = decltype(tag);
      for (size_t k = 0; k < n; ++k) out.i[k] = int_binary<T>(op, T(a.i[k]), T(b.i[k]));
    });
  }
  return out;
}

Dense eval_where(const Dense& c, const Dense& a, const Dense& b) {
  Dense out(a.dtype, a.shape);
  for (size_t k = 0; k < c.i.size(); ++k) {
    if (is_float(a.dtype)) out.f[k] = c.i[k] ? a.f[k] : b.f[k];
    else out.i[k] = c.i[k] ? a.i[k] : b.i[k];
  }
  return out;
}

// ---- reduce ----

Dense eval_reduce(const Node& n, const Dense& x) {
  Dense out(x.dtype, n.shape);
  std::vector<int64_t> ost = strides_of(n.shape);
  for (int64_t a : n.axes) ost[a] = 0;  // every reduced index lands on the same output
  bool sum = n.op == Op::ReduceSum;
  auto out_index = [&](const std::vector<int64_t>& idx) {
    int64_t o = 0;
    for (size_t d = 0; d < idx.size(); ++d) o += idx[d] * ost[d];
    return o;
  };
  if (is_float(x.dtype)) {
    std::fill(out.f.begin(), out.f.end(), sum ? 0.0 : -INFINITY);
    int64_t k = 0;
    for_each_index(x.shape, [&](const std::vector<int64_t>& idx) {
      double& acc = out.f[out_index(idx)];
      double v = x.f[k++];
      acc = sum ? round_to_dtype(acc + v, x.dtype) : float_binary(Op::Max, acc, v);
    });
  } else {
    with_int_type(x.dtype, [&](auto tag) {
      using T = decltype(tag);
      std::fill(out.i.begin(), out.i.end(), sum ? 0 : int64_t(std::numeric_limits<T>::lowest()));
      int64_t k = 0;
      for_each_index(x.shape, [&](const std::vector<int64_t>& idx) {
        int64_t& acc = out.i[out_index(idx)];
        acc = int_binary<T>(sum ? Op::Add : Op::Max, T(acc), T(x.i[k++]));
      });
    });
  }
  return out;
}

// ---- movement: out[idx] = in[src(idx)], or the fill value where src gives -1 ----

template <class Src>
Dense remap(const Dense& in, const Shape& shape, double fill, Src&& src) {
  Dense out(in.dtype, shape);
  int64_t k = 0;
  bool fl = is_float(in.dtype);
  for_each_index(shape, [&](const std::vector<int64_t>& idx) {
    int64_t s = src(idx);
    if (fl) out.f[k++] = s < 0 ? fill : in.f[s];
    else out.i[k++] = s < 0 ? int64_t(fill) : in.i[s];
  });
  return out;
}

Dense eval_movement(const Node& n, const Dense& x) {
  std::vector<int64_t> st = strides_of(x.shape);
  const Shape& xs = x.shape;
  size_t rank = xs.size();
  switch (n.op) {
    case Op::Reshape: {
      Dense out = x;
      out.shape = n.shape;
      return out;
    }
    case Op::Permute:
      return remap(x, n.shape, 0, [&](const std::vector<int64_t>& idx) {
        int64_t s = 0;
        for (size_t d = 0; d < rank; ++d) s += idx[d] * st[n.axes[d]];
        return s;
      });
    case Op::Expand:
      return remap(x, n.shape, 0, [&](const std::vector<int64_t>& idx) {
        int64_t s = 0;
        for (size_t d = 0; d < rank; ++d) s += xs[d] == 1 ? 0 : idx[d] * st[d];
        return s;
      });
    case Op::Pad:
      return remap(x, n.shape, n.value, [&](const std::vector<int64_t>& idx) {
        int64_t s = 0;
        for (size_t d = 0; d < rank; ++d) {
          int64_t i = idx[d] - n.lo[d];
          if (i < 0 || i >= xs[d]) return int64_t(-1);
          s += i * st[d];
        }
        return s;
      });
    case Op::Shrink:
      return remap(x, n.shape, 0, [&](const std::vector<int64_t>& idx) {
        int64_t s = 0;
        for (size_t d = 0; d < rank; ++d) s += (idx[d] + n.lo[d]) * st[d];
        return s;
      });
    case Op::Flip: {
      std::vector<bool> flipped(rank, false);
      for (int64_t a : n.axes) flipped[a] = true;
      return remap(x, n.shape, 0, [&](const std::vector<int64_t>& idx) {
        int64_t s = 0;
        for (size_t d = 0; d < rank; ++d) s += (flipped[d] ? xs[d] - 1 - idx[d] : idx[d]) * st[d];
        return s;
      });
    }
    case Op::Window: {
      size_t k = n.kernel.size(), batch = rank - k;
      return remap(x, n.shape, 0, [&](const std::vector<int64_t>& idx) {
        int64_t s = 0;
        for (size_t d = 0; d < batch; ++d) s += idx[d] * st[d];
        for (size_t t = 0; t < k; ++t)
          s += (idx[batch + t] * n.stride[t] + idx[batch + k + t] * n.dilation[t]) * st[batch + t];
        return s;
      });
    }
    default:
      throw CompileError(std::string("internal: movement ") + op_name(n.op));
  }
}

// out[idx] = src[idx with idx[axis] = clamp(index[idx], 0, dim - 1)].
Dense eval_gather(const Node& n, const Dense& src, const Dense& index) {
  Dense out(src.dtype, n.shape);
  std::vector<int64_t> st = strides_of(src.shape);
  size_t axis = size_t(n.axes[0]);
  int64_t dim = src.shape[axis];
  bool fl = is_float(src.dtype);
  int64_t k = 0;
  for_each_index(n.shape, [&](const std::vector<int64_t>& idx) {
    int64_t s = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      s += (d == axis ? std::clamp<int64_t>(index.i[k], 0, dim - 1) : idx[d]) * st[d];
    if (fl) out.f[k] = src.f[s];
    else out.i[k] = src.i[s];
    ++k;
  });
  return out;
}

Dense eval_leaf(const Node& n, const std::vector<HostTensor>& inputs) {
  switch (n.op) {
    case Op::Input: {
      if (size_t(n.index) >= inputs.size())
        throw CompileError("cannot evaluate: node depends on graph input '" + n.name + "'");
      const HostTensor& t = inputs[n.index];
      if (t.dtype != n.dtype || t.shape != n.shape)
        throw CompileError("input '" + n.name + "': expected " + dtype_name(n.dtype) + shape_str(n.shape) +
                           ", got " + dtype_name(t.dtype) + shape_str(t.shape));
      return decode(t);
    }
    case Op::Weight: {
      HostTensor t;
      t.dtype = n.dtype;
      t.shape = n.shape;
      t.bytes = *n.data;
      return decode(t);
    }
    default: {  // Const
      Dense out(n.dtype, n.shape);
      if (is_float(n.dtype)) std::fill(out.f.begin(), out.f.end(), n.value);
      else std::fill(out.i.begin(), out.i.end(), n.dtype == DType::U64 ? int64_t(uint64_t(n.value)) : int64_t(n.value));
      return out;
    }
  }
}

Dense eval_node(const Node& n, const std::vector<const Dense*>& s, const std::vector<HostTensor>& inputs) {
  if (n.srcs.empty()) return eval_leaf(n, inputs);
  if (n.op == Op::Cast) return eval_cast(*s[0], n.dtype);
  if (is_unary(n.op)) return eval_unary(n.op, *s[0]);
  if (is_binary(n.op)) return eval_binary(n.op, n.dtype, *s[0], *s[1]);
  if (n.op == Op::Where) return eval_where(*s[0], *s[1], *s[2]);
  if (is_reduce(n.op)) return eval_reduce(n, *s[0]);
  if (n.op == Op::Gather) return eval_gather(n, *s[0], *s[1]);
  return eval_movement(n, *s[0]);
}

// Evaluates the given nodes over their ancestors in id (= topological) order, dropping
// each intermediate value after its last use.
std::vector<Dense> run(const std::vector<const Node*>& targets, const std::vector<HostTensor>& inputs) {
  std::unordered_map<const Node*, int> uses;  // remaining consumers within the evaluated set
  std::vector<const Node*> order, stack(targets.begin(), targets.end());
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (uses.count(n)) continue;
    uses[n] = 0;
    order.push_back(n);
    for (const Node* s : n->srcs) stack.push_back(s);
  }
  std::sort(order.begin(), order.end(), [](const Node* a, const Node* b) { return a->id < b->id; });
  for (const Node* n : order)
    for (const Node* s : n->srcs) ++uses[s];
  for (const Node* t : targets) ++uses[t];  // targets stay until the end

  std::unordered_map<const Node*, Dense> values;
  std::vector<const Dense*> srcs;
  for (const Node* n : order) {
    srcs.clear();
    for (const Node* s : n->srcs) srcs.push_back(&values.at(s));
    Dense v = eval_node(*n, srcs, inputs);
    for (const Node* s : n->srcs)
      if (--uses[s] == 0) values.erase(s);
    values.emplace(n, std::move(v));
  }
  std::vector<Dense> out;
  for (const Node* t : targets) out.push_back(values.at(t));
  return out;
}

}  // namespace

// ---- HostTensor ----

double HostTensor::get(int64_t k) const {
  HostTensor one{dtype, {}, {}};
  one.bytes.assign(bytes.begin() + k * dtype_size(dtype), bytes.begin() + (k + 1) * dtype_size(dtype));
  Dense d = decode(one);
  if (is_float(dtype)) return d.f[0];
  return dtype == DType::U64 ? double(uint64_t(d.i[0])) : double(d.i[0]);
}

int64_t HostTensor::get_int(int64_t k) const {
  HostTensor one{dtype, {}, {}};
  one.bytes.assign(bytes.begin() + k * dtype_size(dtype), bytes.begin() + (k + 1) * dtype_size(dtype));
  Dense d = decode(one);
  return is_float(dtype) ? int64_t(round_to_dtype(d.f[0], DType::I64)) : d.i[0];
}

std::vector<int64_t> HostTensor::to_ints() const {
  Dense d = decode(*this);
  if (!is_float(dtype)) return d.i;
  std::vector<int64_t> out;
  for (double v : d.f) out.push_back(int64_t(round_to_dtype(v, DType::I64)));
  return out;
}

std::vector<double> HostTensor::to_doubles() const {
  Dense d = decode(*this);
  if (is_float(dtype)) return d.f;
  std::vector<double> out;
  for (int64_t v : d.i) out.push_back(dtype == DType::U64 ? double(uint64_t(v)) : double(v));
  return out;
}

HostTensor HostTensor::from_doubles(DType dtype, const Shape& shape, const std::vector<double>& values) {
  if (int64_t(values.size()) != edgec::numel(shape))
    throw CompileError("from_doubles: " + std::to_string(values.size()) + " values for " + shape_str(shape));
  Dense d(DType::F64, shape);
  d.f = values;
  return encode(eval_cast(d, dtype));
}

HostTensor HostTensor::from_ints(DType dtype, const Shape& shape, const std::vector<int64_t>& values) {
  if (int64_t(values.size()) != edgec::numel(shape))
    throw CompileError("from_ints: " + std::to_string(values.size()) + " values for " + shape_str(shape));
  Dense d(DType::I64, shape);
  d.i = values;
  return encode(eval_cast(d, dtype));
}

// ---- Graph evaluation and folding ----

HostTensor Graph::evaluate(const Node* x) const { return evaluate(x, {}); }

HostTensor Graph::evaluate(const Node* x, const std::vector<HostTensor>& inputs) const {
  return evaluate(std::vector<const Node*>{x}, inputs)[0];
}

std::vector<HostTensor> Graph::evaluate(const std::vector<const Node*>& xs, const std::vector<HostTensor>& inputs) const {
  std::vector<HostTensor> out;
  for (const Dense& d : run(xs, inputs)) out.push_back(encode(d));
  return out;
}

namespace {
// The packed node under a chain of views, if any. A widening cast counts as a view: the
// kernel converts as it loads (bf16 and int8 weights stay narrow in the bundle).
Node* packed_under_views(Node* n) {
  while (!n->packed && (is_movement(n->op) || is_widening_cast(n))) n = n->srcs[0];
  return n->packed ? n : nullptr;
}
// The cast of float32 to float64 under a chain of views, if any.
Node* float_widened_to_double(Node* n) {
  while (is_movement(n->op)) n = n->srcs[0];
  return n->op == Op::Cast && n->dtype == DType::F64 && n->srcs[0]->dtype == DType::F32 ? n : nullptr;
}
}  // namespace

// Folding rule: a constant node is replaced by a Weight when its element count is at most
// that of the largest constant leaf it derives from (a Weight's numel; a Const counts 1).
// So weight preprocessing (reshape, transpose, cast, BatchNorm scale math) and shape
// arithmetic fold, while an Expand / Pad / Window of a small constant stays a cheap view.
// Only the outermost foldable nodes feeding non-constant nodes or graph outputs are
// folded; the nodes under them become dead. A packed node (Node::packed) is folded as it
// is, the views (and widening casts) above it stay. Deterministic: targets are taken in id order.
int Graph::fold_constants() {
  std::vector<Node*> live = live_nodes();
  std::vector<char> constant(nodes_.size(), 0);
  std::vector<int64_t> leaf_size(nodes_.size(), 0);
  for (Node* n : live) {
    if (n->op == Op::Input) continue;
    bool c = true;
    int64_t size = n->op == Op::Weight ? numel(n->shape) : n->op == Op::Const ? 1 : 0;
    for (Node* s : n->srcs) {
      c = c && constant[s->id];
      size = std::max(size, leaf_size[s->id]);
    }
    constant[n->id] = c;
    leaf_size[n->id] = size;
  }

  std::vector<char> visited(nodes_.size(), 0);
  std::vector<const Node*> targets;
  std::vector<Node*> stack;
  auto consider = [&](Node* root) {
    stack.push_back(root);
    while (!stack.empty()) {
      Node* n = stack.back();
      stack.pop_back();
      if (visited[n->id] || n->srcs.empty()) continue;
      visited[n->id] = 1;
      if (Node* packed = packed_under_views(n)) {
        // The packed node is folded as it is (even where padding makes it a little larger
        // than its source); the views above it stay.
        if (packed == n) targets.push_back(n);
        else stack.push_back(packed);
        continue;
      }
      if (Node* widened = float_widened_to_double(n)) {
        // Float values widened to double (under views) stay float in the bundle and widen
        // as they load: half the bytes, and the double form stays visible to the code
        // generator (a target without double arithmetic computes it as float, llvm_emit.cc).
        stack.push_back(widened->srcs[0]);
      } else if (numel(n->shape) <= leaf_size[n->id]) {
        targets.push_back(n);
      } else {
        for (Node* s : n->srcs) stack.push_back(s);
      }
    }
  };
  for (Node* n : live)
    if (!constant[n->id])
      for (Node* s : n->srcs)
        if (constant[s->id]) consider(s);
  for (const GraphOutput& o : outputs_)
    if (constant[o.node->id]) consider(o.node);
  if (targets.empty()) return 0;
  std::sort(targets.begin(), targets.end(), [](const Node* a, const Node* b) { return a->id < b->id; });

  std::vector<HostTensor> values = evaluate(targets, {});
  for (size_t k = 0; k < targets.size(); ++k) {
    Node* n = nodes_[targets[k]->id].get();
    n->op = Op::Weight;  // in place: every consumer keeps its pointer
    n->srcs.clear();
    n->axes.clear(), n->lo.clear(), n->hi.clear(), n->kernel.clear(), n->stride.clear(), n->dilation.clear();
    n->value = 0.0;
    n->data = std::make_shared<const std::vector<uint8_t>>(std::move(values[k].bytes));
  }
  return int(targets.size());
}

}  // namespace edgec
