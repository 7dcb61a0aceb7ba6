// graph.cc — dtype / op metadata and the shape-checking builders of the primitive graph.
// Constant evaluation and folding live in evaluate.cc.
#include "graph/graph.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <sstream>
#include <string_view>
#include <unordered_map>

namespace edgec {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::I8: case DType::U8: case DType::Bool: return 1;
    case DType::F16: case DType::BF16: case DType::I16: case DType::U16: return 2;
    case DType::F32: case DType::I32: case DType::U32: return 4;
    case DType::I64: case DType::U64: case DType::F64: return 8;
  }
  return 0;
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::F32: return "f32";
    case DType::F16: return "f16";
    case DType::I8: return "i8";
    case DType::U8: return "u8";
    case DType::I16: return "i16";
    case DType::I32: return "i32";
    case DType::I64: return "i64";
    case DType::Bool: return "bool";
    case DType::U16: return "u16";
    case DType::U32: return "u32";
    case DType::U64: return "u64";
    case DType::F64: return "f64";
    case DType::BF16: return "bf16";
  }
  return "?";
}

bool is_float(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16 || t == DType::F64; }
bool is_signed_int(DType t) {
  return t == DType::I8 || t == DType::I16 || t == DType::I32 || t == DType::I64;
}

int64_t numel(const Shape& s) {
  // A tensor without elements may have other dims of any size, whose product overflowed (UB;
  // fuzz_onnx: an edge Pad of a [1, 3, 0, 4] input by pads near 2^62); past int64 it saturates.
  if (std::find(s.begin(), s.end(), 0) != s.end()) return 0;
  int64_t n = 1;
  for (int64_t d : s)
    if (__builtin_mul_overflow(n, d, &n)) return INT64_MAX;
  return n;
}

int64_t checked_numel(const Shape& s, const std::string& what) {
  int64_t n = 1;
  for (int64_t d : s) {
    if (d < 0) throw CompileError(what + ": negative dimension in shape " + shape_str(s));
    if (__builtin_mul_overflow(n, d, &n) || n > kMaxTensorElements) n = kMaxTensorElements + 1;
  }
  if (n > kMaxTensorElements)
    throw CompileError(what + ": shape " + shape_str(s) + " has more than 2^32 elements, more than edgec supports");
  return n;
}

std::string shape_str(const Shape& s) {
  // A hostile model's shape can have millions of dims: messages show the first and last few.
  constexpr size_t kShown = 8;
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.size() > 2 * kShown && i == kShown) {
      out += ",... (" + std::to_string(s.size()) + " dims) ...";
      i = s.size() - kShown;
    }
    if (i) out += ',';
    out += std::to_string(s[i]);
  }
  return out + "]";
}

const char* op_name(Op op) {
  static const char* const names[] = {
      "Input", "Weight", "Const",
      "Neg", "Exp", "Log", "Sqrt", "Recip", "Tanh", "Sin", "Cos", "Abs", "Floor", "Ceil", "Round", "Erf",
      "Cast", "Not",
      "Add", "Sub", "Mul", "Div", "Max", "Min", "Pow", "Mod", "CmpLt", "CmpEq", "And", "Or", "Xor",
      "Where",
      "ReduceSum", "ReduceMax",
      "Reshape", "Permute", "Expand", "Pad", "Shrink", "Flip", "Window",
      "Gather"};
  static_assert(sizeof(names) / sizeof(names[0]) == size_t(Op::Gather) + 1);
  return names[size_t(op)];
}

bool is_unary(Op op) { return op >= Op::Neg && op <= Op::Not; }
bool is_binary(Op op) { return op >= Op::Add && op <= Op::Xor; }
bool is_elementwise(Op op) { return is_unary(op) || is_binary(op) || op == Op::Where; }
bool is_reduce(Op op) { return op == Op::ReduceSum || op == Op::ReduceMax; }
bool is_movement(Op op) { return op >= Op::Reshape && op <= Op::Window; }

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Align from the right; missing leading dims count as 1.
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      throw CompileError("cannot broadcast shapes " + shape_str(a) + " and " + shape_str(b));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int64_t normalize_axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    throw CompileError("axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

double round_to_dtype(double v, DType t) {
  auto saturate = [&](double lo, double hi) {
    if (std::isnan(v)) return 0.0;
    v = std::trunc(v);
    return std::clamp(v, lo, hi);
  };
  switch (t) {
    case DType::F32: return double(float(v));
    case DType::F16: return double(half_to_float(float_to_half(float(v))));
    case DType::BF16: return double(bf16_to_float(float_to_bf16(float(v))));
    case DType::F64: return v;
    case DType::Bool: return v != 0.0 ? 1.0 : 0.0;
    case DType::I8: return saturate(-128, 127);
    case DType::U8: return saturate(0, 255);
    case DType::I16: return saturate(-32768, 32767);
    case DType::U16: return saturate(0, 65535);
    case DType::I32: return saturate(-2147483648.0, 2147483647.0);
    case DType::U32: return saturate(0, 4294967295.0);
    // The largest doubles below 2^63 / 2^64, so the result converts to the C type.
    case DType::I64: return saturate(-9223372036854775808.0, 9223372036854774784.0);
    case DType::U64: return saturate(0, 18446744073709549568.0);
  }
  return v;
}

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t exp = (x >> 23) & 0xffu;
  uint32_t man = x & 0x7fffffu;
  if (exp == 0xff) return uint16_t(sign | 0x7c00u | (man ? 0x200u | (man >> 13) : 0u));  // inf / nan
  int e = int(exp) - 127 + 15;
  if (e >= 31) return uint16_t(sign | 0x7c00u);  // overflow to inf
  if (e <= 0) {                                  // half subnormal (or zero)
    if (e < -10) return uint16_t(sign);
    man |= 0x800000u;
    int shift = 14 - e;
    uint32_t h = man >> shift, rem = man & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (h & 1))) ++h;
    return uint16_t(sign | h);
  }
  uint32_t h = sign | (uint32_t(e) << 10) | (man >> 13);
  uint32_t rem = man & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) ++h;  // a carry correctly bumps the exponent
  return uint16_t(h);
}

float half_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  if (exp == 0) {
    float v = std::ldexp(float(man), -24);
    return sign ? -v : v;
  }
  uint32_t x = sign | (exp == 31 ? 0x7f800000u | (man << 13) : ((exp + 112) << 23) | (man << 13));
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

bool is_widening_cast(const Node* n) {
  if (n->op != Op::Cast) return false;
  const DType from = n->srcs[0]->dtype, to = n->dtype;
  if (from == DType::Bool || to == DType::Bool || is_float(from) != is_float(to) || dtype_size(to) <= dtype_size(from))
    return false;
  return is_float(to) || !is_signed_int(from) || is_signed_int(to);  // a negative value fits no unsigned type
}

uint16_t float_to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40u);  // NaN: keep it quiet
  x += 0x7fffu + ((x >> 16) & 1u);  // round to nearest even; a carry bumps the exponent (to inf)
  return uint16_t(x >> 16);
}

float bf16_to_float(uint16_t b) {
  uint32_t x = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

// ---------------------------------------------------------------------------------------------
// Builders

namespace {

[[noreturn]] void fail(const std::string& what) { throw CompileError(what); }

std::string ints_str(const std::vector<int64_t>& v) { return shape_str(v); }

void check_same_size(const char* op, const char* what, const std::vector<int64_t>& v, size_t rank) {
  if (v.size() != rank)
    fail(std::string(op) + ": " + what + " " + ints_str(v) + " must have one entry per dim (rank " +
         std::to_string(rank) + ")");
}

// Axes normalized, deduplicated and sorted.
std::vector<int64_t> normalized_axes(std::vector<int64_t> axes, size_t rank) {
  for (int64_t& a : axes) a = normalize_axis(a, int64_t(rank));
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  return axes;
}

bool is_float_only(Op op) {
  switch (op) {
    case Op::Exp: case Op::Log: case Op::Sqrt: case Op::Recip: case Op::Tanh: case Op::Sin:
    case Op::Cos: case Op::Floor: case Op::Ceil: case Op::Round: case Op::Erf: case Op::Pow:
      return true;
    default:
      return false;
  }
}

}  // namespace

Node* Graph::make(Op op, DType dtype, Shape shape, std::vector<Node*> srcs) {
  checked_numel(shape, op_name(op));
  // A view of a Const is the same Const in the new shape (Pad excepted: its fill may
  // differ). Keeping it a Const lets kernels use an immediate instead of a load.
  if (is_movement(op) && op != Op::Pad && srcs.size() == 1 && srcs[0]->op == Op::Const)
    return constant(srcs[0]->value, dtype, shape);
  auto node = std::make_unique<Node>();
  node->id = int(nodes_.size());
  node->op = op;
  node->dtype = dtype;
  node->shape = std::move(shape);
  node->srcs = std::move(srcs);
  nodes_.push_back(std::move(node));
  return nodes_.back().get();
}

Node* Graph::input(const std::string& name, DType dtype, const Shape& shape) {
  Node* n = make(Op::Input, dtype, shape, {});
  n->index = int(inputs_.size());
  n->name = name;
  inputs_.push_back({name, dtype, shape, n});
  return n;
}

Node* Graph::weight(DType dtype, const Shape& shape, std::vector<uint8_t> bytes, const std::string& name) {
  if (bytes.size() != size_t(numel(shape)) * dtype_size(dtype))
    fail("Weight '" + name + "': " + std::to_string(bytes.size()) + " bytes for " + dtype_name(dtype) +
         shape_str(shape));
  Node* n = make(Op::Weight, dtype, shape, {});
  n->data = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
  n->name = name;
  return n;
}

Node* Graph::weight(const HostTensor& t, const std::string& name) {
  return weight(t.dtype, t.shape, t.bytes, name);
}

Node* Graph::constant(double value, DType dtype, const Shape& shape) {
  Node* n = make(Op::Const, dtype, shape, {});
  n->value = round_to_dtype(value, dtype);
  return n;
}

Node* Graph::unary(Op op, Node* x) {
  if (!is_unary(op) || op == Op::Cast) fail(std::string("unary: ") + op_name(op) + " is not a unary op");
  if (op == Op::Not && x->dtype != DType::Bool) fail(std::string("Not needs bool, got ") + dtype_name(x->dtype));
  if (is_float_only(op) && !is_float(x->dtype))
    fail(std::string(op_name(op)) + " needs a float operand, got " + dtype_name(x->dtype));
  if ((op == Op::Neg || op == Op::Abs) && x->dtype == DType::Bool)
    fail(std::string(op_name(op)) + " on bool");
  return make(op, x->dtype, x->shape, {x});
}

Node* Graph::binary(Op op, Node* a, Node* b) {
  if (!is_binary(op)) fail(std::string("binary: ") + op_name(op) + " is not a binary op");
  if (a->dtype != b->dtype)
    fail(std::string(op_name(op)) + ": operand dtypes differ (" + dtype_name(a->dtype) + " vs " +
         dtype_name(b->dtype) + ")");
  DType t = a->dtype;
  if (is_float_only(op) && !is_float(t)) fail(std::string(op_name(op)) + " needs float operands");
  bool arithmetic = op == Op::Add || op == Op::Sub || op == Op::Mul || op == Op::Div || op == Op::Mod;
  if (arithmetic && t == DType::Bool) fail(std::string(op_name(op)) + " on bool operands");
  if ((op == Op::And || op == Op::Or || op == Op::Xor) && is_float(t))
    fail(std::string(op_name(op)) + " needs bool or integer operands");
  Shape shape = broadcast_shapes(a->shape, b->shape);
  DType out = (op == Op::CmpLt || op == Op::CmpEq) ? DType::Bool : t;
  return make(op, out, shape, {broadcast_to(a, shape), broadcast_to(b, shape)});
}

Node* Graph::where(Node* cond, Node* a, Node* b) {
  if (cond->dtype != DType::Bool) fail(std::string("Where: condition must be bool, got ") + dtype_name(cond->dtype));
  if (a->dtype != b->dtype)
    fail(std::string("Where: operand dtypes differ (") + dtype_name(a->dtype) + " vs " + dtype_name(b->dtype) + ")");
  Shape shape = broadcast_shapes(broadcast_shapes(cond->shape, a->shape), b->shape);
  return make(Op::Where, a->dtype, shape, {broadcast_to(cond, shape), broadcast_to(a, shape), broadcast_to(b, shape)});
}

Node* Graph::cast(Node* x, DType to) {
  if (x->dtype == to) return x;
  return make(Op::Cast, to, x->shape, {x});
}

Node* Graph::reduce(Op op, Node* x, std::vector<int64_t> axes) {
  if (!is_reduce(op)) fail(std::string("reduce: ") + op_name(op) + " is not a reduction");
  if (op == Op::ReduceSum && x->dtype == DType::Bool) fail("ReduceSum on bool");
  axes = normalized_axes(std::move(axes), x->shape.size());
  // Reducing a size-1 dim is the identity: leave such axes out.
  std::erase_if(axes, [&](int64_t a) { return x->shape[a] == 1; });
  if (axes.empty()) return x;
  Shape shape = x->shape;
  for (int64_t a : axes) shape[a] = 1;
  if (numel(x->shape) == 0) {
    // Nothing to reduce (a MatMul with K = 0, a Conv with no input channels): the identity,
    // as ONNX defines the reduction of an empty set (the lowest value for a max).
    if (numel(shape) == 0) return constant(0.0, x->dtype, shape);
    double lowest = x->dtype == DType::Bool || !(is_float(x->dtype) || is_signed_int(x->dtype)) ? 0.0
                    : is_float(x->dtype) ? -INFINITY
                                          : -std::ldexp(1.0, int(dtype_size(x->dtype) * 8 - 1));
    return constant(op == Op::ReduceSum ? 0.0 : lowest, x->dtype, shape);
  }
  Node* n = make(op, x->dtype, shape, {x});
  n->axes = std::move(axes);
  return n;
}

Node* Graph::reshape(Node* x, const Shape& shape) {
  for (int64_t d : shape)
    if (d < 0) fail("Reshape: negative dimension in " + shape_str(shape));
  if (numel(shape) != numel(x->shape))
    fail("Reshape: " + shape_str(x->shape) + " to " + shape_str(shape) + " changes the element count");
  if (shape == x->shape) return x;
  // A reshape of a reshape is one reshape of the original (unless the first is to be stored:
  // Node::realize).
  if (x->op == Op::Reshape && !x->realize) x = x->srcs[0];
  if (shape == x->shape) return x;
  return make(Op::Reshape, x->dtype, shape, {x});
}

Node* Graph::permute(Node* x, std::vector<int64_t> perm) {
  size_t rank = x->shape.size();
  check_same_size("Permute", "permutation", perm, rank);
  std::vector<bool> seen(rank, false);
  Shape shape(rank);
  bool identity = true;
  for (size_t i = 0; i < rank; ++i) {
    if (perm[i] < 0 || perm[i] >= int64_t(rank) || seen[perm[i]])
      fail("Permute: " + ints_str(perm) + " is not a permutation of rank " + std::to_string(rank));
    seen[perm[i]] = true;
    shape[i] = x->shape[perm[i]];
    identity = identity && perm[i] == int64_t(i);
  }
  if (identity) return x;
  Node* n = make(Op::Permute, x->dtype, shape, {x});
  n->axes = std::move(perm);
  return n;
}

Node* Graph::expand(Node* x, const Shape& shape) {
  if (shape.size() != x->shape.size())
    fail("Expand: " + shape_str(x->shape) + " to " + shape_str(shape) + " changes the rank");
  for (size_t i = 0; i < shape.size(); ++i)
    if (x->shape[i] != shape[i] && x->shape[i] != 1)
      fail("Expand: " + shape_str(x->shape) + " to " + shape_str(shape) + ": only size-1 dims can grow");
  if (shape == x->shape) return x;
  return make(Op::Expand, x->dtype, shape, {x});
}

Node* Graph::broadcast_to(Node* x, const Shape& shape) {
  if (x->shape.size() > shape.size())
    fail("broadcast: " + shape_str(x->shape) + " has a higher rank than " + shape_str(shape));
  Shape padded(shape.size() - x->shape.size(), 1);
  padded.insert(padded.end(), x->shape.begin(), x->shape.end());
  return expand(reshape(x, padded), shape);
}

Node* Graph::pad(Node* x, std::vector<int64_t> lo, std::vector<int64_t> hi, double fill) {
  size_t rank = x->shape.size();
  check_same_size("Pad", "lo", lo, rank);
  check_same_size("Pad", "hi", hi, rank);
  Shape shape = x->shape;
  bool any = false;
  for (size_t i = 0; i < rank; ++i) {
    if (lo[i] < 0 || hi[i] < 0) fail("Pad: negative padding " + ints_str(lo) + " / " + ints_str(hi));
    if (__builtin_add_overflow(shape[i], lo[i], &shape[i]) || __builtin_add_overflow(shape[i], hi[i], &shape[i]))
      fail("Pad: padding " + ints_str(lo) + " / " + ints_str(hi) + " of " + shape_str(x->shape) + " overflows a dim");
    any = any || lo[i] || hi[i];
  }
  if (!any) return x;
  Node* n = make(Op::Pad, x->dtype, shape, {x});
  n->lo = std::move(lo);
  n->hi = std::move(hi);
  n->value = round_to_dtype(fill, x->dtype);
  return n;
}

Node* Graph::shrink(Node* x, std::vector<int64_t> begin, std::vector<int64_t> end) {
  size_t rank = x->shape.size();
  check_same_size("Shrink", "begin", begin, rank);
  check_same_size("Shrink", "end", end, rank);
  Shape shape(rank);
  for (size_t i = 0; i < rank; ++i) {
    if (begin[i] < 0 || begin[i] > end[i] || end[i] > x->shape[i])
      fail("Shrink: [" + ints_str(begin) + ", " + ints_str(end) + ") out of bounds for " + shape_str(x->shape));
    shape[i] = end[i] - begin[i];
  }
  if (shape == x->shape) return x;
  Node* n = make(Op::Shrink, x->dtype, shape, {x});
  n->lo = std::move(begin);
  n->hi = std::move(end);
  return n;
}

Node* Graph::flip(Node* x, std::vector<int64_t> axes) {
  axes = normalized_axes(std::move(axes), x->shape.size());
  std::erase_if(axes, [&](int64_t a) { return x->shape[a] <= 1; });  // flipping those is a no-op
  if (axes.empty()) return x;
  Node* n = make(Op::Flip, x->dtype, x->shape, {x});
  n->axes = std::move(axes);
  return n;
}

Node* Graph::window(Node* x, std::vector<int64_t> kernel, std::vector<int64_t> stride, std::vector<int64_t> dilation) {
  size_t k = kernel.size(), rank = x->shape.size();
  if (stride.empty()) stride.assign(k, 1);
  if (dilation.empty()) dilation.assign(k, 1);
  if (k == 0 || k > rank || stride.size() != k || dilation.size() != k)
    fail("Window: kernel " + ints_str(kernel) + ", stride " + ints_str(stride) + ", dilation " +
         ints_str(dilation) + " do not fit input " + shape_str(x->shape));
  Shape shape(x->shape.begin(), x->shape.end() - k);
  for (size_t i = 0; i < k; ++i) {
    int64_t size = x->shape[rank - k + i], span = dilation[i] * (kernel[i] - 1) + 1;
    if (kernel[i] < 1 || stride[i] < 1 || dilation[i] < 1 || span > size)
      fail("Window: kernel " + ints_str(kernel) + " (dilation " + ints_str(dilation) + ", stride " +
           ints_str(stride) + ") does not fit input " + shape_str(x->shape));
    shape.push_back((size - span) / stride[i] + 1);
  }
  shape.insert(shape.end(), kernel.begin(), kernel.end());
  Node* n = make(Op::Window, x->dtype, shape, {x});
  n->kernel = std::move(kernel);
  n->stride = std::move(stride);
  n->dilation = std::move(dilation);
  return n;
}

Node* Graph::gather(Node* src, Node* index, int64_t axis) {
  size_t rank = src->shape.size();
  if (index->dtype != DType::I32 && index->dtype != DType::I64)
    fail(std::string("Gather: index must be i32 or i64, got ") + dtype_name(index->dtype));
  if (index->shape.size() != rank)
    fail("Gather: index " + shape_str(index->shape) + " and src " + shape_str(src->shape) + " differ in rank");
  axis = normalize_axis(axis, int64_t(rank));
  for (size_t d = 0; d < rank; ++d)
    if (int64_t(d) != axis && index->shape[d] != src->shape[d])
      fail("Gather: index " + shape_str(index->shape) + " and src " + shape_str(src->shape) + " differ in dim " +
           std::to_string(d) + " (only the gather axis " + std::to_string(axis) + " may)");
  if (src->shape[axis] == 0 && numel(index->shape) > 0)
    fail("Gather: gathering along an empty axis of " + shape_str(src->shape));
  // Every element of a Const is the same value.
  if (src->op == Op::Const) return constant(src->value, src->dtype, index->shape);
  Node* n = make(Op::Gather, src->dtype, index->shape, {src, index});
  n->axes = {axis};
  return n;
}

void Graph::add_output(const std::string& name, Node* node) { outputs_.push_back({name, node}); }

std::vector<Node*> Graph::live_nodes() const {
  std::vector<bool> live(nodes_.size(), false);
  std::vector<Node*> stack;
  for (const GraphOutput& o : outputs_) stack.push_back(o.node);
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    if (live[n->id]) continue;
    live[n->id] = true;
    for (Node* s : n->srcs) stack.push_back(s);
  }
  std::vector<Node*> out;
  for (const auto& n : nodes_)
    if (live[n->id]) out.push_back(n.get());
  return out;
}

int Graph::merge_identical_weights() {
  std::vector<Node*> live = live_nodes();
  std::vector<char> is_output(nodes_.size(), 0);
  for (const GraphOutput& o : outputs_) is_output[o.node->id] = 1;
  std::unordered_map<std::string_view, std::vector<Node*>> by_bytes;
  std::vector<Node*> merged_into(nodes_.size(), nullptr);
  int merged = 0;
  for (Node* n : live) {
    if (n->op != Op::Weight || is_output[n->id] || !n->data) continue;
    std::vector<Node*>& same = by_bytes[std::string_view(reinterpret_cast<const char*>(n->data->data()), n->data->size())];
    auto first = std::find_if(same.begin(), same.end(), [&](const Node* m) {
      return m->dtype == n->dtype && m->shape == n->shape && m->packed == n->packed &&
             m->conv_result == n->conv_result && m->realize == n->realize;
    });
    if (first == same.end()) {
      same.push_back(n);
    } else {
      merged_into[n->id] = *first;
      ++merged;
    }
  }
  if (!merged) return 0;
  for (Node* n : live)
    for (Node*& s : n->srcs)
      if (merged_into[s->id]) s = merged_into[s->id];
  return merged;
}

bool Graph::is_constant(const Node* x) const { return inputs_feeding(x, /*first_only=*/true).empty(); }

std::vector<std::string> Graph::inputs_feeding(const Node* x, bool first_only) const {
  std::vector<const Node*> stack{x};
  std::vector<bool> seen(nodes_.size(), false);
  std::vector<bool> fed_by(inputs_.size(), false);
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (seen[n->id]) continue;
    seen[n->id] = true;
    if (n->op == Op::Input) {
      fed_by[size_t(n->index)] = true;
      if (first_only) break;
    }
    for (const Node* s : n->srcs) stack.push_back(s);
  }
  std::vector<std::string> names;
  for (size_t i = 0; i < inputs_.size(); ++i)
    if (fed_by[i]) names.push_back(inputs_[i].name);
  return names;
}

}  // namespace edgec
