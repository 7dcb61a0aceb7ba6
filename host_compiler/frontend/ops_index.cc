// ops_index.cc — data-dependent indexing and index-pattern ops: GatherElements, GatherND,
// ScatterElements / Scatter, ScatterND, OneHot, Trilu, EyeLike, CumSum, TopK, Hardmax.
//
// GatherElements and GatherND use the Gather primitive (one data-dependent load per output
// element). Elsewhere (Scatter*) an index computed at run time selects through a one-hot
// comparison with an iota and a ReduceSum (select_along), O(candidates) work per output
// element. Index patterns known at compile time (Trilu, EyeLike) are constant masks.
#include <algorithm>
#include <cmath>

#include "frontend/lowering.h"

namespace edgec::onnx_frontend {
namespace {

using Outs = std::vector<Node*>;

void check_int_indices(const OpContext& ctx, const Node* idx) {
  if (is_float(idx->dtype) || idx->dtype == DType::Bool)
    ctx.fail(std::string("indices must be int32 or int64, got ") + dtype_name(idx->dtype));
}

// Indices known at compile time are held to the dims they index, as Gather's are: element e
// of idx indexes a dim of size dims[e % dims.size()] (GatherND / ScatterND: one index tuple
// per row of the last axis). An index known only at run time stays inside the data in the
// kernels; a constant one out of range is a broken model (onnxruntime refuses it when it runs).
void check_constant_indices(const OpContext& ctx, const Node* idx, const Shape& dims) {
  if (!ctx.g.is_constant(idx) || dims.empty()) return;
  const std::vector<int64_t> values = ctx.g.evaluate(idx).to_ints();
  for (size_t e = 0; e < values.size(); ++e) {
    const int64_t i = values[e], dim = dims[e % dims.size()];
    if (i < -dim || i >= dim) ctx.fail("index " + std::to_string(i) + " out of range for dim " + std::to_string(dim));
  }
}

Shape insert_dim(Shape s, size_t at, int64_t size) {
  s.insert(s.begin() + int64_t(at), size);
  return s;
}

// x with dim `axis` moved to the end and a size-1 dim left in its place:
// (d0.., d_axis, ..) -> (d0.., 1, .., d_axis).
Node* axis_to_candidates(Graph& g, Node* x, int64_t axis) {
  Node* y = move_axis_last(g, x, axis);
  Shape s = x->shape;
  s[axis] = 1;
  s.push_back(x->shape[axis]);
  return g.reshape(y, s);
}

Outs lower_gather_elements(OpContext& ctx) {
  Graph& g = ctx.g;
  Node *data = ctx.input(0), *idx = ctx.input(1);
  check_int_indices(ctx, idx);
  int64_t rank = int64_t(data->shape.size());
  if (int64_t(idx->shape.size()) != rank) ctx.fail("data and indices differ in rank");
  int64_t axis = ctx.axis(ctx.attr_int("axis", 0), rank), dim = data->shape[axis];
  // Data restricted to the index extent in the other dims.
  std::vector<int64_t> begin(size_t(rank), 0), end = idx->shape;
  end[axis] = dim;
  for (int64_t d = 0; d < rank; ++d)
    if (end[d] > data->shape[d]) ctx.fail("indices " + shape_str(idx->shape) + " exceed data " + shape_str(data->shape));
  check_constant_indices(ctx, idx, {dim});
  if (dim > 0 || numel(idx->shape) == 0) {
    // The data-dependent read: data restricted to the index extent in the other dims.
    Node* i = wrap_negative(g, idx, dim);
    if (i->dtype != DType::I32 && i->dtype != DType::I64) i = g.cast(i, DType::I64);
    return {g.gather(g.shrink(data, begin, end), i, axis)};
  }
  Node* table = axis_to_candidates(g, g.shrink(data, begin, end), axis);  // (I.. with 1 at axis, dim)
  table = g.expand(table, insert_dim(idx->shape, size_t(rank), dim));
  Node* which = g.reshape(wrap_negative(g, idx, dim), insert_dim(idx->shape, size_t(rank), 1));
  return {g.reshape(select_along(g, table, rank, which), idx->shape)};
}

// Flat index into the first k dims of `dims` from the last axis of idx (..., k).
Node* flat_index(Graph& g, Node* idx, const Shape& dims) {
  size_t k = dims.size(), r = idx->shape.size();
  Shape out(idx->shape.begin(), idx->shape.end() - 1);
  Node* flat = nullptr;
  int64_t stride = 1;
  Node* idx64 = g.cast(idx, DType::I64);
  for (size_t i = k; i-- > 0;) {
    Node* part = g.reshape(strided_slice(g, idx64, int64_t(r - 1), int64_t(i), 1, 1), out);
    part = wrap_negative(g, part, dims[i]);
    if (stride != 1) part = g.binary(Op::Mul, part, g.constant(double(stride), DType::I64));
    flat = flat ? g.binary(Op::Add, flat, part) : part;
    stride *= dims[i];
  }
  return flat ? flat : g.constant(0, DType::I64, out);
}

Outs lower_gather_nd(OpContext& ctx) {
  Graph& g = ctx.g;
  Node *data = ctx.input(0), *idx = ctx.input(1);
  check_int_indices(ctx, idx);
  int64_t b = ctx.attr_int("batch_dims", 0);
  size_t r = data->shape.size(), q = idx->shape.size();
  if (q < 1 || b < 0 || size_t(b) >= std::min(r, q)) ctx.fail("batch_dims " + std::to_string(b) + " does not fit");
  int64_t k = idx->shape.back();
  if (k < 1 || size_t(b + k) > r) ctx.fail("index depth " + std::to_string(k) + " does not fit data " + shape_str(data->shape));
  for (int64_t d = 0; d < b; ++d)
    if (data->shape[d] != idx->shape[d]) ctx.fail("batch dims of data and indices differ");
  Shape batch(data->shape.begin(), data->shape.begin() + b);
  Shape indexed(data->shape.begin() + b, data->shape.begin() + b + k);
  Shape rest(data->shape.begin() + b + k, data->shape.end());
  Shape qdims(idx->shape.begin() + b, idx->shape.end() - 1);
  check_constant_indices(ctx, idx, indexed);
  int64_t f = numel(indexed);
  Node* flat = flat_index(g, idx, indexed);  // (B..., Q...)
  Shape out = batch;
  out.insert(out.end(), qdims.begin(), qdims.end());
  out.insert(out.end(), rest.begin(), rest.end());
  int64_t nq = numel(qdims);
  if (f > 0 && nq > 0 && numel(out) > 0) {
    // The Gather primitive: data with the indexed dims flattened to one axis (B..., F, R...)
    // read at the flat index, (B..., Q, 1...) expanded over R: one load per output element.
    Shape src = batch, ish = batch, ifull = batch;
    src.push_back(f);
    src.insert(src.end(), rest.begin(), rest.end());
    ish.push_back(nq);
    ish.insert(ish.end(), rest.size(), 1);
    ifull.push_back(nq);
    ifull.insert(ifull.end(), rest.begin(), rest.end());
    Node* i = g.expand(g.reshape(flat, ish), ifull);
    return {g.reshape(g.gather(g.reshape(data, src), i, b), out)};
  }
  // Empty: a one-hot select. Table (B..., Q..., F, R...) and index (B..., Q..., 1, 1...).
  Shape ts = batch;
  ts.insert(ts.end(), qdims.size(), 1);
  ts.push_back(f);
  ts.insert(ts.end(), rest.begin(), rest.end());
  Node* table = g.reshape(data, ts);
  Shape full = batch;
  full.insert(full.end(), qdims.begin(), qdims.end());
  full.push_back(f);
  full.insert(full.end(), rest.begin(), rest.end());
  table = g.expand(table, full);
  Shape is(idx->shape.begin(), idx->shape.end() - 1);
  is.insert(is.end(), 1 + rest.size(), 1);
  int64_t axis = b + int64_t(qdims.size());
  Node* y = select_along(g, table, axis, g.reshape(flat, is));
  return {g.reshape(y, out)};
}

// Combines the updates that hit each element: mask (D..., U) says which of the U candidate
// updates (upd, same shape) land on each data element.
Node* scatter_combine(OpContext& ctx, Node* data, Node* mask, Node* upd) {
  Graph& g = ctx.g;
  std::string reduction = ctx.attr_string("reduction", "none");
  int64_t last = int64_t(mask->shape.size()) - 1;
  Shape out = data->shape;
  DType t = data->dtype;
  bool boolean = t == DType::Bool;
  if (boolean) {
    data = g.cast(data, DType::U8);
    upd = g.cast(upd, DType::U8);
  }
  auto drop_last = [&](Node* x) { return g.reshape(x, out); };
  Node* y;
  if (reduction == "none" || reduction == "add") {
    Node* sum = drop_last(g.reduce(Op::ReduceSum, g.where(mask, upd, scalar(g, 0, upd)), {last}));
    if (reduction == "add") {
      y = g.binary(Op::Add, data, sum);
    } else {
      // Indices are unique in this mode (ONNX leaves duplicates undefined): the sum is the update.
      Node* any = drop_last(g.reduce(Op::ReduceMax, mask, {last}));
      y = g.where(any, sum, data);
    }
  } else if (reduction == "mul") {
    y = g.binary(Op::Mul, data, drop_last(reduce_prod(g, g.where(mask, upd, scalar(g, 1, upd)), {last})));
  } else if (reduction == "max") {
    Node* m = g.reduce(Op::ReduceMax, g.where(mask, upd, scalar(g, lowest_value(upd->dtype), upd)), {last});
    Node* any = drop_last(g.reduce(Op::ReduceMax, mask, {last}));
    y = g.where(any, g.binary(Op::Max, data, drop_last(m)), data);
  } else if (reduction == "min") {
    Node* m = reduce_min(g, g.where(mask, upd, scalar(g, highest_value(upd->dtype), upd)), {last});
    Node* any = drop_last(g.reduce(Op::ReduceMax, mask, {last}));
    y = g.where(any, g.binary(Op::Min, data, drop_last(m)), data);
  } else {
    ctx.fail("unsupported reduction '" + reduction + "'");
  }
  return boolean ? g.cast(y, DType::Bool) : y;
}

Outs lower_scatter_elements(OpContext& ctx) {
  Graph& g = ctx.g;
  Node *data = ctx.input(0), *idx = ctx.input(1), *upd = ctx.input(2);
  check_int_indices(ctx, idx);
  int64_t rank = int64_t(data->shape.size());
  if (int64_t(idx->shape.size()) != rank || idx->shape != upd->shape)
    ctx.fail("indices " + shape_str(idx->shape) + " and updates " + shape_str(upd->shape) + " must match in shape and data's rank");
  if (upd->dtype != data->dtype) ctx.fail("updates and data differ in dtype");
  int64_t axis = ctx.axis(ctx.attr_int("axis", 0), rank), dim = data->shape[axis], n = idx->shape[axis];
  check_constant_indices(ctx, idx, {dim});
  // Candidates per data element: the updates in its line along the axis, (D.. with 1 at axis, n),
  // padded with index -1 (never matches) beyond the index extent in the other dims.
  std::vector<int64_t> lo(size_t(rank + 1), 0), hi(size_t(rank + 1), 0);
  for (int64_t d = 0; d < rank; ++d) {
    if (d == axis) continue;
    if (idx->shape[d] > data->shape[d]) ctx.fail("indices " + shape_str(idx->shape) + " exceed data " + shape_str(data->shape));
    hi[d] = data->shape[d] - idx->shape[d];
  }
  Node* cand_idx = g.pad(axis_to_candidates(g, wrap_negative(g, idx, dim), axis), lo, hi, -1.0);
  Node* cand_upd = g.pad(axis_to_candidates(g, upd, axis), lo, hi, 0.0);
  Node* mask = g.binary(Op::CmpEq, cand_idx, iota(g, dim, idx->dtype, size_t(rank + 1), size_t(axis)));
  Shape full = data->shape;
  full.push_back(n);
  return {scatter_combine(ctx, data, g.expand(mask, full), g.expand(cand_upd, full))};
}

Outs lower_scatter_nd(OpContext& ctx) {
  Graph& g = ctx.g;
  Node *data = ctx.input(0), *idx = ctx.input(1), *upd = ctx.input(2);
  check_int_indices(ctx, idx);
  if (idx->shape.empty()) ctx.fail("indices must have rank >= 1");
  int64_t k = idx->shape.back();
  size_t r = data->shape.size();
  if (k < 1 || size_t(k) > r) ctx.fail("index depth " + std::to_string(k) + " does not fit data " + shape_str(data->shape));
  Shape indexed(data->shape.begin(), data->shape.begin() + k), rest(data->shape.begin() + k, data->shape.end());
  Shape qdims(idx->shape.begin(), idx->shape.end() - 1);
  Shape want = qdims;
  want.insert(want.end(), rest.begin(), rest.end());
  if (upd->shape != want) ctx.fail("updates " + shape_str(upd->shape) + " should be " + shape_str(want));
  if (upd->dtype != data->dtype) ctx.fail("updates and data differ in dtype");
  check_constant_indices(ctx, idx, indexed);
  int64_t f = numel(indexed), u = numel(qdims);
  Node* flat = g.reshape(flat_index(g, idx, indexed), {1, u});  // (1, U)
  Node* mask = g.binary(Op::CmpEq, flat, iota(g, f, DType::I64, 2, 0));  // (F, U)
  Shape ms{f, u}, us{1, u};
  ms.insert(ms.end(), rest.size(), 1);
  us.insert(us.end(), rest.begin(), rest.end());
  Shape full{f, u};
  full.insert(full.end(), rest.begin(), rest.end());
  // Work in (F, R..., U) so the candidates are the last dim.
  std::vector<int64_t> perm{0};
  for (size_t i = 0; i < rest.size(); ++i) perm.push_back(int64_t(2 + i));
  perm.push_back(1);
  Node* m = g.permute(g.expand(g.reshape(mask, ms), full), perm);
  Node* up = g.permute(g.expand(g.reshape(upd, us), full), perm);
  Shape ds{f};
  ds.insert(ds.end(), rest.begin(), rest.end());
  Node* y = scatter_combine(ctx, g.reshape(data, ds), m, up);
  return {g.reshape(y, data->shape)};
}

Outs lower_one_hot(OpContext& ctx) {
  Graph& g = ctx.g;
  Node *indices = ctx.input(0), *values = ctx.input(2);
  HostTensor depth_t = ctx.const_input(1);
  if (depth_t.numel() != 1) ctx.fail("depth must hold one value");
  int64_t depth = int64_t(depth_t.get(0));
  if (depth < 1) ctx.fail("depth must be positive");
  Shape out_shape = indices->shape;
  out_shape.push_back(depth);
  checked_numel(out_shape, "output");  // before the iota of `depth` values is built
  if (values->shape.size() != 1 || values->shape[0] != 2) ctx.fail("values must be [off_value, on_value]");
  size_t rank = indices->shape.size() + 1;
  int64_t axis = ctx.axis(ctx.attr_int("axis", -1), int64_t(rank));
  Node* idx = indices;
  if (is_float(idx->dtype)) idx = g.cast(idx, DType::I64);  // non-integral indices are cast first
  if (!is_signed_int(idx->dtype)) idx = g.cast(idx, DType::I64);
  idx = wrap_negative(g, idx, depth);
  idx = g.reshape(idx, insert_dim(indices->shape, size_t(axis), 1));
  Node* mask = g.binary(Op::CmpEq, idx, iota(g, depth, idx->dtype, rank, size_t(axis)));
  Node* off = g.reshape(strided_slice(g, values, 0, 0, 1, 1), {});
  Node* on = g.reshape(strided_slice(g, values, 0, 1, 1, 1), {});
  return {g.where(mask, on, off)};
}

// Bool mask over the last two dims (n, m): keep[i][j] = lower ? j - i <= k : j - i >= k.
Node* band_mask(Graph& g, int64_t n, int64_t m, int64_t k, bool upper, bool equal_only = false) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) v.push_back(equal_only ? j - i == k : upper ? j - i >= k : j - i <= k);
  return g.weight(HostTensor::from_ints(DType::Bool, {n, m}, v));
}

Outs lower_trilu(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  if (x->shape.size() < 2) ctx.fail("input must have rank >= 2");
  int64_t k = 0;
  if (ctx.optional_input(1)) {
    HostTensor kt = ctx.const_input(1);
    if (kt.numel() != 1) ctx.fail("k must hold one value");
    k = kt.get_int(0);
  }
  int64_t n = x->shape[x->shape.size() - 2], m = x->shape.back();
  Node* keep = band_mask(g, n, m, k, ctx.attr_int("upper", 1) != 0);
  return {g.where(keep, x, scalar(g, 0, x))};
}

Outs lower_eye_like(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  if (x->shape.size() != 2) ctx.fail("input must be 2-D");
  DType t = ctx.has_attr("dtype") ? dtype_from_onnx(int32_t(ctx.attr_int("dtype", 0))) : x->dtype;
  Node* mask = band_mask(g, x->shape[0], x->shape[1], ctx.attr_int("k", 0), false, true);
  return {g.cast(mask, t)};
}

// Inclusive prefix sums of y along `axis` in place (suffix sums with `reverse`) as a sum over
// the whole axis under a triangular mask: y'[j] = sum over k of y[k] where k <= j (k >= j),
// n adds per element (n = the axis' length). Each tap reads element k itself, no padded window
// whose taps cross the axis' ends (a view of a blocked axis then indexes the merged one with
// div/mod), and the axis stays where it is, so the kernel vectorizes along the trailing dims.
Node* masked_prefix_sum(Graph& g, Node* y, int64_t axis, bool reverse) {
  const size_t a = size_t(axis), rank = y->shape.size();
  const int64_t n = y->shape[a];
  // Stored (k, j), j contiguous: along the last axis the kernel vectorizes over j.
  std::vector<int64_t> keep;
  for (int64_t k = 0; k < n; ++k)
    for (int64_t j = 0; j < n; ++j) keep.push_back(reverse ? k >= j : k <= j);
  Node* stored_mask = g.weight(HostTensor::from_ints(DType::Bool, {n, n}, keep));
  stored_mask->packed = true;  // constant folding keeps this order and reads it through the permute
  Shape mask_shape(rank - a + 1, 1);  // (j, k, 1..) against (.., j, k, ..)
  mask_shape[0] = mask_shape[1] = n;
  Node* mask = g.reshape(g.permute(stored_mask, {1, 0}), mask_shape);
  Shape spread = y->shape;  // (.., 1, k, ..)
  spread.insert(spread.begin() + axis, 1);
  Node* taps = g.where(mask, g.reshape(y, spread), scalar(g, 0, y));  // (.., j, k, ..)
  return g.reshape(g.reduce(Op::ReduceSum, taps, {axis + 1}), y->shape);
}

// y shifted by one element along `axis`, a zero entering: 0, y0, .., y_{n-2} (reverse: y1, ..,
// y_{n-1}, 0). An inclusive prefix sum of it is the exclusive one of y.
Node* shift_in_zero(Graph& g, Node* y, int64_t axis, bool reverse) {
  const int64_t n = y->shape[size_t(axis)];
  std::vector<int64_t> lo(y->shape.size(), 0), hi(y->shape.size(), 0);
  (reverse ? hi : lo)[size_t(axis)] = 1;
  return g.pad(strided_slice(g, y, axis, reverse ? 1 : 0, n - 1, 1), lo, hi, 0.0);
}

// Elements per block of a blocked prefix sum: along the innermost axis one vector of f32, the
// target's (OpContext::vector_floats: the kernel's lanes run along the block, (i)/b the same in
// all of them; a shorter block split a vector between blocks, a longer one adds taps), along an
// outer one fewer taps, each a whole vector of the inner dims (onnxruntime adds whole rows there,
// memory bound). Swept at 1 thread on x86_64 AVX2 (8 floats), n = 16..4096, best rounds against
// onnxruntime: innermost blocks of 8 0.15-0.36x, of 16 0.28-0.53x, of 32 0.33-1.05x; outer
// blocks of 2-4 2.4-5.4x, of 8 4.7-5.8x, of 16 6.5-10x. (Not timed on NEON or AVX-512.)
constexpr int64_t kOuterBlock = 4;

// Inclusive prefix sums along `axis` (suffix sums with `reverse`): a sum as long as the axis
// costs n adds per element (CumSum along 128 channels of 80x80 took 30-50x onnxruntime's time).
// Axes up to a block long are one masked sum; a longer one is cut into m blocks of b (zeros
// padded after its end): each block's own prefix sums are a masked b-tap sum, the blocks'
// totals are prefix-summed the same way (recursively: about log_b(n) levels, each 1/b the size
// of the one before) and each element adds its block's sum of the blocks before it, about
// b + 2 adds per element at any length. The kernels loop over the axis itself, splitting it
// into (i/b, i%b), which are the same in all lanes of a vector or fixed for the row.
// innermost_block: the block along the last axis (a vector: OpContext::vector_floats).
Node* prefix_sum(Graph& g, Node* y, int64_t axis, bool reverse, int64_t innermost_block) {
  const size_t a = size_t(axis), rank = y->shape.size();
  const int64_t n = y->shape[a], b = a + 1 == rank ? innermost_block : kOuterBlock;
  if (n <= b) return masked_prefix_sum(g, y, axis, reverse);
  const int64_t m = (n + b - 1) / b;
  Node* x = y;
  if (m * b != n) {  // zeros after the end change no prefix (or suffix) sum of the elements
    std::vector<int64_t> lo(rank, 0), hi(rank, 0);
    hi[a] = m * b - n;
    x = g.pad(x, lo, hi, 0.0);
  }
  Shape blocked = x->shape;  // (.., m, b, ..)
  blocked[a] = m;
  blocked.insert(blocked.begin() + axis + 1, b);
  Node* blocks = g.reshape(x, blocked);
  Node* within = masked_prefix_sum(g, blocks, axis + 1, reverse);
  Shape totals_shape = blocked;  // (.., m, ..)
  totals_shape.erase(totals_shape.begin() + axis + 1);
  Node* totals = g.reshape(g.reduce(Op::ReduceSum, blocks, {axis + 1}), totals_shape);
  Node* before = shift_in_zero(g, prefix_sum(g, totals, axis, reverse, innermost_block), axis, reverse);
  Shape offset_shape = blocked;  // (.., m, 1, ..)
  offset_shape[a + 1] = 1;
  Node* sums = g.reshape(g.binary(Op::Add, within, g.reshape(before, offset_shape)), x->shape);
  return m * b == n ? sums : strided_slice(g, sums, axis, 0, n, 1);
}

Outs lower_cumsum(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  HostTensor at = ctx.const_input(1);
  if (at.numel() != 1) ctx.fail("axis must hold one value");
  int64_t rank = int64_t(x->shape.size());
  int64_t axis = ctx.axis(at.get_int(0), rank), n = x->shape[axis];
  bool exclusive = ctx.attr_int("exclusive", 0), reverse = ctx.attr_int("reverse", 0);
  if (n == 0) return {x};
  return {prefix_sum(g, exclusive ? shift_in_zero(g, x, axis, reverse) : x, axis, reverse, ctx.vector_floats())};
}

// Rank of each element along the last dim in the order TopK returns them (largest: greater
// first, ties by lower index), as int64: (..., n).
Node* sort_rank(Graph& g, Node* x, bool largest) {
  size_t r = x->shape.size();
  Shape si = x->shape, sj = x->shape;
  si.push_back(1);                 // x_i (..., n, 1)
  sj.insert(sj.end() - 1, 1);      // x_j (..., 1, n)
  Node* xi = g.reshape(x, si);
  Node* xj = g.reshape(x, sj);
  int64_t n = x->shape.back();
  Node* before = largest ? g.binary(Op::CmpLt, xi, xj) : g.binary(Op::CmpLt, xj, xi);  // x_j ranks before x_i
  std::vector<int64_t> earlier;  // j < i
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) earlier.push_back(j < i);
  Node* tie = g.binary(Op::And, g.binary(Op::CmpEq, xi, xj), g.weight(HostTensor::from_ints(DType::Bool, {n, n}, earlier)));
  Node* ahead = g.cast(g.binary(Op::Or, before, tie), DType::I64);
  Node* rank = g.reduce(Op::ReduceSum, ahead, {int64_t(r)});
  return g.reshape(rank, x->shape);
}

Outs lower_topk(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  int64_t rank = int64_t(x->shape.size());
  int64_t axis = ctx.axis(ctx.attr_int("axis", -1), rank), n = x->shape[axis];
  int64_t k;
  if (ctx.opset >= 10) {
    HostTensor kt = ctx.const_input(1);
    if (kt.numel() != 1) ctx.fail("K must hold one value");
    k = kt.get_int(0);
  } else {
    k = ctx.attr_int("k", -1);
  }
  if (k < 0 || k > n) ctx.fail("K = " + std::to_string(k) + " is outside [0, " + std::to_string(n) + "]");
  bool largest = ctx.attr_int("largest", 1);  // `sorted` = 0 allows any order: sorted is one
  Node* xl = move_axis_last(g, x, axis);      // (..., n)
  Shape outl = xl->shape;
  outl.back() = k;
  if (k == 0) {
    std::vector<int64_t> zero(outl.size(), 0);
    Node* none = g.shrink(xl, zero, outl);
    return {move_last_to(g, none, axis), move_last_to(g, g.cast(none, DType::I64), axis)};
  }
  size_t r = xl->shape.size();
  int64_t last = int64_t(r) - 1;
  if (k <= 16 || 8 * k <= n) {
    // k rounds of selecting the extreme among the elements not yet taken (first index on
    // ties): O(k n) work.
    Node* pos = iota(g, n, DType::I64, r, size_t(last));
    Node* avail = g.constant(1, DType::Bool, xl->shape);
    Node* fill = scalar(g, largest ? lowest_value(x->dtype) : highest_value(x->dtype), xl);
    std::vector<Node*> values, indices;
    for (int64_t i = 0; i < k; ++i) {
      Node* masked = g.where(avail, xl, fill);
      Node* best = largest ? g.reduce(Op::ReduceMax, masked, {last}) : reduce_min(g, masked, {last});
      Node* hit = g.binary(Op::And, avail, g.binary(Op::CmpEq, xl, best));
      Node* at = reduce_min(g, g.where(hit, pos, g.constant(double(n), DType::I64)), {last});
      values.push_back(best);
      indices.push_back(at);
      if (i + 1 < k) avail = g.binary(Op::And, avail, g.unary(Op::Not, g.binary(Op::CmpEq, pos, at)));
    }
    return {move_last_to(g, concat(g, values, last), axis), move_last_to(g, concat(g, indices, last), axis)};
  }
  // Large k: every element's rank (O(n^2)), then the element of each rank.
  Node* rk = sort_rank(g, xl, largest);
  // Output slot s takes the element whose rank is s: (..., k, n) masks over the candidates.
  Shape rs = rk->shape;
  rs.insert(rs.end() - 1, 1);
  Node* slot = iota(g, k, DType::I64, rs.size(), rs.size() - 2);
  Node* which = g.binary(Op::CmpEq, g.reshape(rk, rs), slot);
  Shape cand = xl->shape;
  cand.insert(cand.end() - 1, 1);
  Node* src = g.reshape(xl, cand);
  Node* values = g.reduce(Op::ReduceSum, g.where(which, src, scalar(g, 0, src)), {-1});
  Node* positions = iota(g, n, DType::I64, rs.size(), rs.size() - 1);
  Node* indices = g.reduce(Op::ReduceSum, g.where(which, positions, g.constant(0, DType::I64)), {-1});
  return {move_last_to(g, g.reshape(values, outl), axis), move_last_to(g, g.reshape(indices, outl), axis)};
}

Outs lower_hardmax(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  int64_t rank = int64_t(x->shape.size());
  bool flatten = ctx.opset < 13;
  int64_t axis = ctx.axis(ctx.attr_int("axis", flatten ? 1 : -1), rank);
  Node* y = x;
  if (flatten) {  // as if reshaped to 2-D at axis
    int64_t outer = numel(Shape(x->shape.begin(), x->shape.begin() + axis));
    y = g.reshape(x, {outer, numel(x->shape) / std::max<int64_t>(outer, 1)});
    axis = 1;
  }
  int64_t n = y->shape[axis];
  size_t r = y->shape.size();
  Node* hit = g.binary(Op::CmpEq, y, g.reduce(Op::ReduceMax, y, {axis}));
  Node* pos = iota(g, n, DType::I64, r, size_t(axis));
  Node* first = reduce_min(g, g.where(hit, pos, g.constant(double(n), DType::I64)), {axis});
  Node* one_hot = g.binary(Op::CmpEq, pos, first);
  return {g.reshape(g.cast(one_hot, x->dtype), x->shape)};
}

// Compress: the output size depends on the condition, so it must be known at compile time.
Outs lower_compress(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  HostTensor cond = ctx.const_input(1);
  if (cond.shape.size() != 1) ctx.fail("condition must be 1-D");
  Node* data = x;
  int64_t axis = 0;
  if (ctx.has_attr("axis")) {
    axis = ctx.axis(ctx.attr_int("axis", 0), int64_t(x->shape.size()));
  } else {
    data = g.reshape(x, {numel(x->shape)});
  }
  int64_t dim = data->shape[size_t(axis)];
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < std::min(dim, cond.numel()); ++i)
    if (cond.get(i) != 0) keep.push_back(i);
  if (keep.empty()) {
    Shape empty = data->shape;
    empty[size_t(axis)] = 0;
    return {g.shrink(data, std::vector<int64_t>(data->shape.size(), 0), empty)};
  }
  return {gather_positions(g, data, axis, keep)};
}

}  // namespace

void add_index_ops(OpTable& t) {
  t["Compress"] = lower_compress;
  t["GatherElements"] = lower_gather_elements;
  t["GatherND"] = lower_gather_nd;
  t["ScatterElements"] = lower_scatter_elements;
  t["Scatter"] = lower_scatter_elements;
  t["ScatterND"] = lower_scatter_nd;
  t["OneHot"] = lower_one_hot;
  t["Trilu"] = lower_trilu;
  t["EyeLike"] = lower_eye_like;
  t["CumSum"] = lower_cumsum;
  t["TopK"] = lower_topk;
  t["Hardmax"] = lower_hardmax;
}

}  // namespace edgec::onnx_frontend
