// lowering.cc — OpContext, tensor decoding and the helpers op families share.
#include "frontend/lowering.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

namespace edgec::onnx_frontend {

DType dtype_from_onnx(int32_t t) {
  using TP = onnx::TensorProto;
  switch (t) {
    case TP::FLOAT: return DType::F32;
    case TP::UINT8: return DType::U8;
    case TP::INT8: return DType::I8;
    case TP::UINT16: return DType::U16;
    case TP::INT16: return DType::I16;
    case TP::INT32: return DType::I32;
    case TP::INT64: return DType::I64;
    case TP::BOOL: return DType::Bool;
    case TP::FLOAT16: return DType::F16;
    case TP::DOUBLE: return DType::F64;
    case TP::UINT32: return DType::U32;
    case TP::UINT64: return DType::U64;
    default:
      if (TP::DataType_IsValid(t)) throw CompileError("unsupported data type " + TP::DataType_Name(TP::DataType(t)));
      throw CompileError("unsupported data type " + std::to_string(t));
  }
}

HostTensor tensor_from_proto(const onnx::TensorProto& t) {
  const std::string label = "tensor '" + t.name() + "'";
  if (t.data_location() == onnx::TensorProto::EXTERNAL || t.external_data_size() > 0)
    throw CompileError(label + ": external data was not loaded (load_external_data)");
  HostTensor out;
  out.dtype = dtype_from_onnx(t.data_type());
  for (int64_t d : t.dims()) out.shape.push_back(d);
  const size_t n = size_t(checked_numel(out.shape, label)), elem = dtype_size(out.dtype);
  if (t.has_raw_data()) {
    if (t.raw_data().size() != n * elem)
      throw CompileError(label + ": raw_data has " + std::to_string(t.raw_data().size()) + " bytes, expected " +
                         std::to_string(n * elem));
    out.bytes.assign(t.raw_data().begin(), t.raw_data().end());
    return out;
  }
  auto check_count = [&](int count) {
    if (size_t(count) != n)
      throw CompileError(label + ": " + std::to_string(count) + " values for shape " + shape_str(out.shape));
  };
  switch (out.dtype) {
    case DType::F32:
      check_count(t.float_data_size());
      out.bytes.resize(n * 4);
      if (n) std::memcpy(out.bytes.data(), t.float_data().data(), n * 4);
      return out;
    case DType::F64:
      check_count(t.double_data_size());
      out.bytes.resize(n * 8);
      if (n) std::memcpy(out.bytes.data(), t.double_data().data(), n * 8);
      return out;
    case DType::I64:
      check_count(t.int64_data_size());
      return HostTensor::from_ints(out.dtype, out.shape, {t.int64_data().begin(), t.int64_data().end()});
    case DType::U32:
    case DType::U64: {
      check_count(t.uint64_data_size());
      out.bytes.resize(n * elem);
      for (size_t k = 0; k < n; ++k) {
        uint64_t v = t.uint64_data(int(k));
        std::memcpy(&out.bytes[k * elem], &v, elem);  // little-endian: the low bytes
      }
      return out;
    }
    case DType::F16: {  // the bits, one per int32
      check_count(t.int32_data_size());
      std::vector<int64_t> bits(t.int32_data().begin(), t.int32_data().end());
      HostTensor u = HostTensor::from_ints(DType::U16, out.shape, bits);
      out.bytes = std::move(u.bytes);
      return out;
    }
    default:  // int8/16/32, uint8/16, bool: one value per int32
      check_count(t.int32_data_size());
      return HostTensor::from_ints(out.dtype, out.shape, {t.int32_data().begin(), t.int32_data().end()});
  }
}

// ---- OpContext ----

std::string frozen_inputs_hint(const Graph& g, const Node* x) {
  std::string from;
  for (const std::string& name : g.inputs_feeding(x))
    from += std::string(from.empty() ? "" : ", ") + "'" + name + "' (--const-input " + name + "=FILE.npy)";
  return from;
}

void OpContext::fail(const std::string& message) const { throw CompileError(message); }

Node* OpContext::input(size_t i) const {
  Node* n = optional_input(i);
  if (!n) fail("missing required input " + std::to_string(i));
  return n;
}

Node* OpContext::optional_input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }

HostTensor OpContext::const_input(size_t i) const {
  Node* n = input(i);
  if (!g.is_constant(n)) {
    // A value computed from model inputs (silero VAD's If on its sample-rate input): name
    // them and the flag that freezes them, which makes the value a constant.
    fail("input " + std::to_string(i) + " ('" + node.input(int(i)) + "') must be a constant; it depends on the model input(s) " +
         frozen_inputs_hint(g, n) + ": freeze them to compile");
  }
  // Values a lowering reads on the host (shapes, axes, indices, pads) are small; a shape
  // tensor of 470M entries (ConstantOfShape of a huge count, found by fuzz_onnx) took 5 GB to
  // evaluate before its Reshape could refuse it.
  constexpr int64_t kMaxConstInputElements = int64_t{1} << 24;
  if (numel(n->shape) > kMaxConstInputElements)
    fail("input " + std::to_string(i) + " ('" + node.input(int(i)) + "') has " + std::to_string(numel(n->shape)) +
         " elements, more than a compile-time operand may have (2^24)");
  return g.evaluate(n);
}

std::optional<std::vector<int64_t>> OpContext::ints_from_input_or_attr(size_t i, const char* attr_name,
                                                                       int64_t since) const {
  if (opset >= since) {
    if (!optional_input(i)) return std::nullopt;
    return const_ints(i);
  }
  if (!has_attr(attr_name)) return std::nullopt;
  return attr_ints(attr_name);
}

const onnx::AttributeProto* OpContext::attr(const std::string& name) const {
  for (const auto& a : node.attribute())
    if (a.name() == name) {
      if (!a.ref_attr_name().empty()) fail("attribute '" + name + "' refers to a function attribute");
      return &a;
    }
  return nullptr;
}

int64_t OpContext::attr_int(const std::string& name, int64_t def) const {
  const auto* a = attr(name);
  return a ? a->i() : def;
}

float OpContext::attr_float(const std::string& name, float def) const {
  const auto* a = attr(name);
  return a ? a->f() : def;
}

std::string OpContext::attr_string(const std::string& name, const std::string& def) const {
  const auto* a = attr(name);
  return a ? a->s() : def;
}

std::vector<int64_t> OpContext::attr_ints(const std::string& name, std::vector<int64_t> def) const {
  const auto* a = attr(name);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : def;
}

std::vector<float> OpContext::attr_floats(const std::string& name) const {
  const auto* a = attr(name);
  return a ? std::vector<float>(a->floats().begin(), a->floats().end()) : std::vector<float>{};
}

int64_t OpContext::axis(int64_t axis, int64_t rank) const { return normalize_axis(axis, rank); }

const OpTable& op_table() {
  static const OpTable table = [] {
    OpTable t;
    add_elementwise_ops(t);
    add_nn_ops(t);
    add_shape_ops(t);
    add_reduce_ops(t);
    add_index_ops(t);
    add_loss_ops(t);
    add_resize_ops(t);
    add_quant_ops(t);
    add_rnn_ops(t);
    add_misc_ops(t);
    add_grid_sample_ops(t);
    add_signal_ops(t);
    add_roi_ops(t);
    add_attention_ops(t);
    add_ml_ops(t);
    return t;
  }();
  return table;
}

// ---- shared helpers ----

std::vector<int64_t> iota_ints(int64_t from, int64_t to) {
  std::vector<int64_t> v(static_cast<size_t>(std::max<int64_t>(to - from, 0)));
  std::iota(v.begin(), v.end(), from);
  return v;
}

Node* scalar(Graph& g, double value, const Node* like) { return g.constant(value, like->dtype); }

Node* concat(Graph& g, const std::vector<Node*>& xs, int64_t axis) {
  if (xs.empty()) throw CompileError("concat of no tensors");
  Shape shape = xs[0]->shape;
  axis = normalize_axis(axis, int64_t(shape.size()));
  int64_t total = 0;
  for (Node* x : xs) {
    Shape s = x->shape;
    if (s.size() != shape.size() || x->dtype != xs[0]->dtype)
      throw CompileError("concat: " + shape_str(s) + " does not match " + shape_str(shape));
    s[axis] = shape[axis];
    if (s != shape) throw CompileError("concat: " + shape_str(x->shape) + " does not match " + shape_str(shape));
    total += x->shape[axis];
  }
  Node* sum = nullptr;
  int64_t offset = 0;
  for (Node* x : xs) {
    int64_t len = x->shape[axis];
    if (len == 0) continue;  // empty parts add nothing
    std::vector<int64_t> lo(shape.size(), 0), hi(shape.size(), 0);
    lo[axis] = offset;
    hi[axis] = total - offset - len;
    Node* part = g.pad(x, lo, hi, 0.0);
    sum = !sum ? part : g.binary(x->dtype == DType::Bool ? Op::Or : Op::Add, sum, part);
    offset += len;
  }
  if (!sum) {  // all parts empty
    shape[axis] = 0;
    return g.reshape(xs[0], shape);
  }
  return sum;
}

Node* strided_slice(Graph& g, Node* x, int64_t axis, int64_t begin, int64_t count, int64_t step) {
  Shape shape = x->shape;
  std::vector<int64_t> lo(shape.size(), 0), hi = shape;
  if (step == 1 || count <= 1) {
    lo[axis] = begin;
    hi[axis] = begin + count;
    return g.shrink(x, lo, hi);
  }
  // Take [begin, begin + count*step) (padding the tail if it runs past the end), view it as
  // (count, step) and keep column 0.
  int64_t end = std::min(begin + count * step, shape[axis]);
  lo[axis] = begin;
  hi[axis] = end;
  Node* y = g.shrink(x, lo, hi);
  std::vector<int64_t> plo(shape.size(), 0), phi(shape.size(), 0);
  phi[axis] = begin + count * step - end;
  y = g.pad(y, plo, phi, 0.0);
  Shape split = shape;
  split[axis] = count;
  split.insert(split.begin() + axis + 1, step);
  y = g.reshape(y, split);
  std::vector<int64_t> slo(split.size(), 0), shi = split;
  shi[axis + 1] = 1;
  y = g.shrink(y, slo, shi);
  shape[axis] = count;
  return g.reshape(y, shape);
}

Node* dilate_axis(Graph& g, Node* x, int64_t axis, int64_t stride) {
  int64_t n = x->shape[size_t(axis)];
  if (stride == 1 || n == 0) return x;
  // (.., n, ..) -> (.., n, 1, ..) padded to (.., n, stride, ..) -> (.., n*stride, ..), cut.
  Shape split, merged = x->shape;
  for (size_t d = 0; d < x->shape.size(); ++d) {
    split.push_back(x->shape[d]);
    if (int64_t(d) == axis) split.push_back(1);
  }
  std::vector<int64_t> lo(split.size(), 0), hi(split.size(), 0);
  hi[size_t(axis) + 1] = stride - 1;
  merged[size_t(axis)] = n * stride;
  Node* y = g.reshape(g.pad(g.reshape(x, split), lo, hi, 0.0), merged);
  return strided_slice(g, y, axis, 0, (n - 1) * stride + 1, 1);
}

Node* squeeze_axes(Graph& g, Node* x, std::vector<int64_t> axes) {
  int64_t rank = int64_t(x->shape.size());
  std::vector<bool> drop(rank, false);
  for (int64_t a : axes) {
    a = normalize_axis(a, rank);
    if (x->shape[a] != 1)
      throw CompileError("cannot squeeze dim " + std::to_string(a) + " of " + shape_str(x->shape) + ": size is not 1");
    drop[a] = true;
  }
  Shape shape;
  for (int64_t d = 0; d < rank; ++d)
    if (!drop[d]) shape.push_back(x->shape[d]);
  return g.reshape(x, shape);
}

Node* unsqueeze_axes(Graph& g, Node* x, std::vector<int64_t> axes) {
  int64_t rank = int64_t(x->shape.size() + axes.size());
  std::vector<bool> inserted(rank, false);
  for (int64_t a : axes) {
    a = normalize_axis(a, rank);
    if (inserted[a]) throw CompileError("unsqueeze: repeated axis " + std::to_string(a));
    inserted[a] = true;
  }
  Shape shape;
  size_t next = 0;
  for (int64_t d = 0; d < rank; ++d) shape.push_back(inserted[d] ? 1 : x->shape[next++]);
  return g.reshape(x, shape);
}

Node* int8_operand_i32(Graph& g, Node* v, bool shift) {
  Node* wide = g.cast(v, DType::I32);
  return shift ? g.binary(Op::Sub, wide, g.constant(128.0, DType::I32)) : wide;
}

namespace {
// Whether consecutive elements along `dim` of x are consecutive in the memory that a kernel
// computing from x reads: the views (Permute, Reshape, ...) and fused elementwise ops above
// the buffers x comes from keep `dim` their last one. Anything else (an input, a reduce, a
// node the frontend realizes) is taken as stored row-major in its own shape. Conservative
// where unsure (a reshape's inner dims, a window, a flip): false; past `depth` levels, true.
bool reads_contiguous_along(const Node* x, size_t dim, int depth = 16) {
  if (depth == 0) return true;
  if (x->realize || is_reduce(x->op)) return dim + 1 == x->shape.size();
  if (x->op == Op::Const || x->shape[dim] == 1) return true;  // the same element for every step
  if (is_elementwise(x->op)) {
    for (const Node* s : x->srcs)
      if (!reads_contiguous_along(s, dim, depth - 1)) return false;
    return true;
  }
  switch (x->op) {
    case Op::Permute: return reads_contiguous_along(x->srcs[0], size_t(x->axes[dim]), depth - 1);
    case Op::Reshape:
      return dim + 1 == x->shape.size() && !x->srcs[0]->shape.empty() &&
             reads_contiguous_along(x->srcs[0], x->srcs[0]->shape.size() - 1, depth - 1);
    case Op::Expand: case Op::Pad: case Op::Shrink: return reads_contiguous_along(x->srcs[0], dim, depth - 1);
    case Op::Flip: case Op::Window: return false;
    default: return dim + 1 == x->shape.size();  // a leaf or a gather's own buffer
  }
}
// A computed (non-constant) b of a product with at least this many rows per batch entry is
// copied into its own (..., K, N) buffer where the product would read it across its rows
// (the K^T of attention's Q K^T): the product's vectors along N then load consecutive
// elements instead of gathering them (41 -> 81 GFLOP/s on x86_64 AVX2, 12 heads x 197 x 64),
// and the copy, K * N elements against M * K * N multiply-adds, costs a fraction of that.
// With fewer rows the product keeps its dot products along K (choose_reduce_vectorization).
constexpr int64_t kRowsToCopyStridedOperand = 16;
// Nor where N is just past a multiple of the vectors (less than 7/8 of N's blocks of 16
// columns useful): the product's last, mostly masked vector of columns costs as much as a
// full one, and swin_t's 49 columns (3 x 49 x 32 per window) ran at 17-21 GFLOP/s that way
// against 35 as dot products along K (x86_64 AVX2, edgert-bench --profile).
bool columns_fill_vectors(int64_t n) { return n * 8 >= (n + kColumnBlock - 1) / kColumnBlock * kColumnBlock * 7; }
}  // namespace

Node* stored_int16_copy(const Graph& g, const Node* x) {
  // Made after x: the nodes back to x (a layer's few, not the whole graph's).
  const auto& nodes = g.nodes();
  for (auto it = nodes.rbegin(); it != nodes.rend() && it->get() != x; ++it)
    if ((*it)->op == Op::Cast && (*it)->dtype == DType::I16 && (*it)->realize && (*it)->srcs[0] == x) return it->get();
  return nullptr;
}

Node* stored_as_int16(Graph& g, Node* x) {
  // One copy per tensor: the products of Q, K and V read one layer norm's output.
  if (Node* copy = stored_int16_copy(g, x)) return copy;
  Node* wide = g.cast(x, DType::I16);
  wide->realize = true;
  return wide;
}

Node* matmul(Graph& g, Node* a, Node* b, const DotLayout& dots, int64_t* a_shift) {
  if (a_shift) *a_shift = 0;
  if (a->shape.empty() || b->shape.empty()) throw CompileError("MatMul of a scalar");
  bool a_vec = a->shape.size() == 1, b_vec = b->shape.size() == 1;
  if (a_vec) a = g.reshape(a, {1, a->shape[0]});
  if (b_vec) b = g.reshape(b, {b->shape[0], 1});
  size_t ra = a->shape.size(), rb = b->shape.size();
  if (a->shape[ra - 1] != b->shape[rb - 2])
    throw CompileError("MatMul: inner dims of " + shape_str(a->shape) + " and " + shape_str(b->shape) + " differ");
  const int64_t k = a->shape[ra - 1];
  const int64_t rows = k ? numel(a->shape) / k : 0;  // K = 0: no rows to share
  auto is_8bit = [](const Node* v) { return v->dtype == DType::I8 || v->dtype == DType::U8; };
  const bool int8 = is_8bit(a) && is_8bit(b);
  // A constant b (weights) multiplied by several rows of a stays stored (..., K, N), read
  // through a transposing view: a kernel computing a vector of N outputs for a few rows
  // loads consecutive weights that the rows share (Node::packed). With one row (a
  // matrix-vector product) the folded (N, K) order is better: each output is a dot product
  // over consecutive weights.
  const bool weights = rows >= 4 && g.is_constant(b);
  const bool bf16 = weights && a->dtype == DType::F32 && dots.float_operands == DType::BF16 && k % kBf16Pair == 0;
  // 8-bit products take the target's dot layout for any number of rows: the instruction
  // sums along K and the N outputs fill the vectors (a classifier's one row too: MobileNetV2
  // int8's 1280 x 1000 product 3.5x faster than the folded int32 loop).
  // A computed b (attention's K^T or V) too where the target's dot takes any bytes
  // (DotLayout::int8_any_bytes) and a has the rows to repay copying b into its panels at run
  // time (kRowsToCopyStridedOperand): the same pairs as the weights' instead of int32 operands.
  const bool computed_int8_dots = int8 && !g.is_constant(b) && dots.int8_any_bytes && ra >= 2 && rb >= 2 &&
                                  a->shape[ra - 2] >= kRowsToCopyStridedOperand;
  const bool int8_dots =
      int8 && (g.is_constant(b) || computed_int8_dots) && dots.int8_group > 1 && k % dots.int8_group == 0;
  const int64_t group = bf16 ? kBf16Pair : int8_dots ? dots.int8_group : 1;
  Node *av, *bv;
  std::vector<int64_t> summed;
  // vpmaddwd's pairs (DotLayout::int8_any_bytes) read a stored as int16: each pair a plain
  // 32-bit broadcast, not a 16-bit one widened by vpshufb beside every row of the register
  // tile (2 of the 5 vector instructions per pair of rows and columns; written once, 2 bytes
  // per element of a against the N columns each is multiplied by).
  if (int8_dots && dots.int8_any_bytes) a = stored_as_int16(g, a);
  if (group > 1) {
    // The reduction in groups: (..., M, 1, K/g, g) * (..., 1, N, K/g, g), each column's
    // group of b stored together (packed_in_column_groups).
    Shape as = a->shape;
    as.back() = k / group;
    as.push_back(group);
    as.insert(as.end() - 2, 1);
    Node* bp = bf16 ? packed_in_column_groups(g, g.cast(b, DType::BF16), group)
                    : packed_in_column_groups(g, b, group, dots.int8_columns, /*computed=*/!g.is_constant(b));
    std::vector<int64_t> to_nk = iota_ints(0, int64_t(rb) + 1);
    std::rotate(to_nk.end() - 3, to_nk.end() - 1, to_nk.end());  // (..., N, K/g, g)
    Node* bt = g.permute(bp, to_nk);
    Shape bs = bt->shape;
    bs.insert(bs.end() - 3, 1);
    av = g.reshape(a, as);
    bv = g.reshape(bt, bs);
    if (bf16) av = bf16_operand(g, av), bv = g.cast(bv, DType::F32);
    summed = {-2, -1};
  } else {
    // (..., M, K) x (..., K, N) as (..., M, 1, K) * (..., 1, N, K) summed over the last dim,
    // so the reduction runs over contiguous elements of a.
    Shape as = a->shape;
    as.insert(as.end() - 1, 1);
    std::vector<int64_t> perm = iota_ints(0, int64_t(rb));
    std::swap(perm[rb - 1], perm[rb - 2]);
    if (weights) b = packed_in_column_blocks(g, b);
    else if (!g.is_constant(b) && !b_vec && a->shape[ra - 2] >= kRowsToCopyStridedOperand &&
             columns_fill_vectors(b->shape[rb - 1]) &&
             !reads_contiguous_along(b, rb - 1))
      b->realize = true;
    Node* bt = g.permute(b, perm);
    // 8-bit weights in the folded (N, K) order: Node::packed stores them as they are, instead
    // of the fold widening them to int32 with the cast below.
    if (int8 && !weights && g.is_constant(b)) bt->packed = true;
    Shape bs = bt->shape;
    bs.insert(bs.end() - 2, 1);
    av = g.reshape(a, as);
    bv = g.reshape(bt, bs);
    summed = {-1};
  }
  if (int8) {  // int32 products and sums; broadcast before widening (see conv_core)
    Shape both = broadcast_shapes(av->shape, bv->shape);
    const bool shift = a_shift && group > 1 && dots.int8_signed && a->dtype == DType::U8 && b->dtype == DType::I8;
    if (shift) *a_shift = 128;
    av = int8_operand_i32(g, g.broadcast_to(av, both), shift);
    bv = g.cast(g.broadcast_to(bv, both), DType::I32);
  }
  Node* sum = g.reduce(Op::ReduceSum, g.binary(Op::Mul, av, bv), summed);
  Node* y = g.reshape(sum, Shape(sum->shape.begin(), sum->shape.end() - int64_t(summed.size())));
  std::vector<int64_t> drop;
  if (a_vec) drop.push_back(-2);
  if (b_vec) drop.push_back(-1);
  return drop.empty() ? y : squeeze_axes(g, y, drop);
}

namespace {
// x with its last dim filled up with zero columns to a multiple of `columns` (a
// classifier's 1000 columns: 63 panels of 16).
Node* filled_to_column_blocks(Graph& g, Node* x, int64_t columns = kColumnBlock) {
  const int64_t r = int64_t(x->shape.size()), n = x->shape.back();
  const int64_t filled = (n + columns - 1) / columns * columns;
  if (filled == n) return x;
  std::vector<int64_t> lo(size_t(r), 0), hi(size_t(r), 0);
  hi.back() = filled - n;
  return g.pad(x, lo, hi, 0.0);
}

// The view y of filled columns cropped back to n columns.
Node* cropped_to_columns(Graph& g, Node* y, int64_t n) {
  if (y->shape.back() == n) return y;
  Shape end = y->shape;
  end.back() = n;
  return g.shrink(y, std::vector<int64_t>(end.size(), 0), end);
}
}  // namespace

Node* packed_in_column_blocks(Graph& g, Node* x, int64_t columns) {
  const Shape s = x->shape;
  const int64_t r = int64_t(s.size()), n = s.back();
  if (n <= kColumnBlock && columns == kColumnBlock) {
    x->packed = true;
    return x;
  }
  Node* filled = filled_to_column_blocks(g, x, columns);
  const int64_t blocks = filled->shape.back() / columns;
  Shape split(s.begin(), s.end() - 1);
  split.push_back(blocks);
  split.push_back(columns);
  std::vector<int64_t> to_stored{r - 1}, to_split;  // (..., N/16, 16) <-> (N/16, ..., 16)
  for (int64_t i = 0; i < r - 1; ++i) to_stored.push_back(i), to_split.push_back(i + 1);
  to_stored.push_back(r);
  to_split.insert(to_split.begin() + (r - 1), 0);
  to_split.push_back(r);
  Node* stored = g.permute(g.reshape(filled, split), to_stored);
  stored->packed = true;
  return cropped_to_columns(g, g.reshape(g.permute(stored, to_split), filled->shape), n);
}

Node* packed_in_column_groups(Graph& g, Node* x, int64_t group, int64_t columns, bool computed) {
  const Shape s = x->shape;
  const int64_t r = int64_t(s.size()), n = s.back(), k = s[size_t(r - 2)];
  if (r < 2 || k % group) throw CompileError("internal: " + shape_str(s) + " has no groups of " + std::to_string(group));
  Node* filled = filled_to_column_blocks(g, x, columns);
  const int64_t blocks = filled->shape.back() / columns;
  // (..., K/group, group, N/16, 16) (16: columns): dims lead 0..r-3, K/group r-2, group r-1,
  // N/16 r, 16 r+1.
  Shape split(s.begin(), s.end() - 2);
  for (int64_t d : {k / group, group, blocks, columns}) split.push_back(d);
  std::vector<int64_t> to_stored{r};  // (N/16, lead..., K/group, 16, group)
  for (int64_t i = 0; i < r - 1; ++i) to_stored.push_back(i);
  to_stored.push_back(r + 1);
  to_stored.push_back(r - 1);
  Node* stored = g.permute(g.reshape(filled, split), to_stored);
  if (computed) stored->realize = true;  // copied into its panels at run time
  else stored->packed = true;
  // Back to (lead..., K/group, group, N/16, 16): stored dims lead 1..r-2, K/group r-1, 16 r, group r+1.
  std::vector<int64_t> to_split;
  for (int64_t i = 1; i <= r - 1; ++i) to_split.push_back(i);
  for (int64_t d : {r + 1, int64_t{0}, r}) to_split.push_back(d);
  Shape view(s.begin(), s.end() - 2);
  for (int64_t d : {k / group, group, blocks * columns}) view.push_back(d);
  return cropped_to_columns(g, g.reshape(g.permute(stored, to_split), view), n);
}

Node* bf16_operand(Graph& g, Node* x) { return g.cast(g.cast(x, DType::BF16), x->dtype); }

Node* reduce_min(Graph& g, Node* x, const std::vector<int64_t>& axes) {
  if (is_float(x->dtype))  // min(x) = -max(-x), exact for floats
    return g.unary(Op::Neg, g.reduce(Op::ReduceMax, g.unary(Op::Neg, x), axes));
  if (x->dtype == DType::Bool)  // all(x) = !any(!x)
    return g.unary(Op::Not, g.reduce(Op::ReduceMax, g.unary(Op::Not, x), axes));
  if (x->dtype == DType::U64)
    throw CompileError(std::string("min reduction of ") + dtype_name(x->dtype) + " is not supported");
  // Integers: complementing every bit reverses the order without overflow (~x = -x-1,
  // or MAX-x unsigned): min(x) = ~max(~x).
  double ones = is_signed_int(x->dtype) ? -1.0 : double((uint64_t(1) << (8 * dtype_size(x->dtype))) - 1);
  Node* mask = scalar(g, ones, x);
  return g.binary(Op::Xor, g.reduce(Op::ReduceMax, g.binary(Op::Xor, x, mask), axes), mask);
}

Node* reduce_mean(Graph& g, Node* x, const std::vector<int64_t>& axes) {
  int64_t count = 1;
  for (int64_t a : axes) count *= x->shape[normalize_axis(a, int64_t(x->shape.size()))];
  return g.binary(Op::Div, g.reduce(Op::ReduceSum, x, axes), scalar(g, double(count), x));
}

Node* reduce_prod(Graph& g, Node* x, const std::vector<int64_t>& axes_in) {
  int64_t rank = int64_t(x->shape.size());
  std::vector<bool> reduced(size_t(rank), false);
  for (int64_t a : axes_in) reduced[normalize_axis(a, rank)] = true;
  // Kept dims first, reduced dims last, merged into one dim of n elements.
  std::vector<int64_t> perm;
  Shape kept, out = x->shape;
  int64_t n = 1;
  for (int64_t d = 0; d < rank; ++d)
    if (!reduced[d]) perm.push_back(d), kept.push_back(x->shape[d]);
  for (int64_t d = 0; d < rank; ++d)
    if (reduced[d]) perm.push_back(d), n *= x->shape[d], out[d] = 1;
  if (n == 0) return g.constant(1, x->dtype, out);
  Node* y = g.permute(x, perm);
  Shape flat = kept;
  flat.push_back(n);
  y = g.reshape(y, flat);
  size_t last = kept.size();
  while (n > 1) {
    if (n % 2) {  // pad with the neutral element
      std::vector<int64_t> lo(last + 1, 0), hi(last + 1, 0);
      hi[last] = 1;
      y = g.pad(y, lo, hi, 1.0);
      ++n;
    }
    Shape pairs = kept;
    pairs.insert(pairs.end(), {n / 2, 2});
    y = g.reshape(y, pairs);
    std::vector<int64_t> begin(last + 2, 0), end = pairs;
    end[last + 1] = 1;
    Node* a = g.shrink(y, begin, end);
    begin[last + 1] = 1, end[last + 1] = 2;
    Node* b = g.shrink(y, begin, end);
    n /= 2;
    flat[last] = n;
    y = g.binary(x->dtype == DType::Bool ? Op::And : Op::Mul, g.reshape(a, flat), g.reshape(b, flat));
  }
  return g.reshape(y, out);
}

Node* move_axis_last(Graph& g, Node* x, int64_t axis) {
  int64_t rank = int64_t(x->shape.size());
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis) perm.push_back(d);
  perm.push_back(axis);
  return g.permute(x, perm);
}

Node* move_last_to(Graph& g, Node* x, int64_t axis) {
  int64_t rank = int64_t(x->shape.size());
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < rank - 1; ++d) {
    if (d == axis) perm.push_back(rank - 1);
    perm.push_back(d);
  }
  if (axis == rank - 1) perm.push_back(rank - 1);
  return g.permute(x, perm);
}

Node* iota(Graph& g, int64_t n, DType dtype, size_t rank, size_t axis) {
  Shape shape(rank, 1);
  shape[axis] = n;
  return g.weight(HostTensor::from_ints(dtype, shape, iota_ints(0, n)));
}

Node* wrap_negative(Graph& g, Node* idx, int64_t dim) {
  if (!is_signed_int(idx->dtype)) return idx;
  Node* negative = g.binary(Op::CmpLt, idx, scalar(g, 0, idx));
  return g.where(negative, g.binary(Op::Add, idx, scalar(g, double(dim), idx)), idx);
}

Node* select_along(Graph& g, Node* table, int64_t axis, Node* idx) {
  size_t rank = table->shape.size();
  axis = normalize_axis(axis, int64_t(rank));
  if (is_float(idx->dtype) || idx->dtype == DType::Bool)
    throw CompileError(std::string("indices must be integers, got ") + dtype_name(idx->dtype));
  Node* mask = g.binary(Op::CmpEq, idx, iota(g, table->shape[axis], idx->dtype, rank, size_t(axis)));
  DType t = table->dtype;
  Node* src = t == DType::Bool ? g.cast(table, DType::U8) : table;
  Node* picked = g.where(mask, src, scalar(g, 0, src));
  return g.cast(g.reduce(Op::ReduceSum, picked, {axis}), t);
}

// gather_positions joins at most this many runs of consecutive positions as slices; more
// are one Gather.
constexpr int64_t kMaxJoinedRuns = 4;

Node* gather_positions(Graph& g, Node* x, int64_t axis, const std::vector<int64_t>& sel) {
  int64_t in = x->shape[size_t(axis)], out = int64_t(sel.size());
  // Repeat: sel[o] = o / k.
  if (out % in == 0) {
    const int64_t k = out / in;
    auto repeated = [&] {
      Shape split = x->shape;
      split.insert(split.begin() + axis + 1, 1);
      Shape grown = split;
      grown[size_t(axis) + 1] = k;
      return g.reshape(g.expand(g.reshape(x, split), grown), [&] { Shape s = x->shape; s[size_t(axis)] = out; return s; }());
    };
    bool repeat = true;
    for (int64_t o = 0; o < out && repeat; ++o) repeat = sel[size_t(o)] == o / k;
    if (repeat) return repeated();
    // The repeat shifted by c, clamped at the edges: sel[o] = clamp(floor((o + c) / k), 0,
    // in - 1) (nearest upsampling with half_pixel and floor or ceil: c = -1 or 1 at k = 2),
    // as the repeat's view and |c| copies of its first or last element. The runs or the
    // one-hot matrix below cost O(in) per element there (4x onnxruntime at 40 -> 80).
    for (int64_t c = 1 - k; c < k; ++c) {
      bool shifted = c != 0;
      for (int64_t o = 0; o < out && shifted; ++o) shifted = sel[size_t(o)] == (o + c < 0 ? 0 : std::min((o + c) / k, in - 1));
      if (!shifted) continue;
      Node* rep = repeated();
      const int64_t n = std::abs(c);
      Shape edge_shape = rep->shape;
      edge_shape[size_t(axis)] = n;
      Node* edge = g.expand(strided_slice(g, rep, axis, c < 0 ? 0 : out - 1, 1, 1), edge_shape);
      Node* body = strided_slice(g, rep, axis, c < 0 ? 0 : c, out - n, 1);
      return c < 0 ? concat(g, {edge, body}, axis) : concat(g, {body, edge}, axis);
    }
  }
  // Strided: sel[o] = first + o * step.
  if (out >= 1) {
    int64_t first = sel[0], step = out > 1 ? sel[1] - sel[0] : 1;
    bool strided = step >= 1;
    for (int64_t o = 0; o < out && strided; ++o) strided = sel[size_t(o)] == first + o * step;
    if (strided) return strided_slice(g, x, axis, first, out, step);
  }
  // A few runs of consecutive positions: slices joined along the axis. (Joined, the parts
  // cost a kernel each or, where the join is fused into its reader, a select per part and
  // element: 222x onnxruntime for a Gather of 256 channels.)
  std::vector<std::pair<int64_t, int64_t>> runs;  // (first, length)
  for (int64_t o = 0; o < out; ++o) {
    if (!runs.empty() && sel[size_t(o)] == runs.back().first + runs.back().second) ++runs.back().second;
    else runs.push_back({sel[size_t(o)], 1});
  }
  if (int64_t(runs.size()) <= kMaxJoinedRuns) {
    std::vector<Node*> parts;
    for (auto [first, len] : runs) parts.push_back(strided_slice(g, x, axis, first, len, 1));
    return concat(g, parts, axis);
  }
  // Else the Gather primitive with the positions as a constant index, broadcast over the
  // other dims: one read per element. (The one-hot matrix this replaced summed `in` products
  // per element: 13x onnxruntime for a nearest Resize of 56 -> 140 rows, issue 22.)
  Shape index_shape(x->shape.size(), 1), full = x->shape;
  index_shape[size_t(axis)] = out;
  full[size_t(axis)] = out;
  Node* index = g.weight(HostTensor::from_ints(DType::I32, index_shape, sel));
  return g.gather(x, g.expand(index, full), axis);
}

double lowest_value(DType t) {
  if (is_float(t)) return -INFINITY;
  if (is_signed_int(t)) return -std::ldexp(1.0, 8 * int(dtype_size(t)) - 1);
  return 0.0;
}

double highest_value(DType t) {
  if (is_float(t)) return INFINITY;
  if (t == DType::Bool) return 1.0;
  int bits = 8 * int(dtype_size(t)) - (is_signed_int(t) ? 1 : 0);
  return std::ldexp(1.0, bits) - 1.0;  // rounds to 2^bits for 64-bit types; Const saturates
}

}  // namespace edgec::onnx_frontend
