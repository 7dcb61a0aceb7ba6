// ops_shape.cc — shape and movement ops, constants, indexing (Gather, Slice, Split, Pad).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "frontend/lowering.h"

namespace edgec::onnx_frontend {
namespace {

using Outs = std::vector<Node*>;

Node* weight_i64(Graph& g, const Shape& shape, const std::vector<int64_t>& values) {
  return g.weight(HostTensor::from_ints(DType::I64, shape, values));
}

Outs lower_reshape(OpContext& ctx) {
  Node* x = ctx.input(0);
  std::vector<int64_t> target = ctx.opset >= 5 ? ctx.const_ints(1) : ctx.attr_ints("shape");
  bool allow_zero = ctx.attr_int("allowzero", 0);
  Shape shape;
  int64_t infer = -1, known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t d = target[i];
    if (d == 0 && !allow_zero) {  // 0 copies the input dim
      if (i >= x->shape.size()) ctx.fail("shape dim " + std::to_string(i) + " is 0 but the input has no such dim");
      d = x->shape[i];
    }
    if (d == -1) {
      if (infer >= 0) ctx.fail("more than one -1 in shape " + shape_str(target));
      infer = int64_t(i);
      d = 1;
    } else if (d < 0) {
      ctx.fail("invalid dim in shape " + shape_str(target));
    }
    if (__builtin_mul_overflow(known, d, &known))
      ctx.fail("shape " + shape_str(target) + " has more than 2^63 elements");
    shape.push_back(d);
  }
  if (infer >= 0) {
    if (known == 0 || numel(x->shape) % known)
      ctx.fail("cannot infer -1 reshaping " + shape_str(x->shape) + " to " + shape_str(target));
    shape[infer] = numel(x->shape) / known;
  }
  return {ctx.g.reshape(x, shape)};
}

Outs lower_flatten(OpContext& ctx) {
  Node* x = ctx.input(0);
  int64_t rank = int64_t(x->shape.size());
  int64_t axis = ctx.attr_int("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) ctx.fail("axis out of range");
  int64_t outer = numel(Shape(x->shape.begin(), x->shape.begin() + axis));
  int64_t inner = numel(Shape(x->shape.begin() + axis, x->shape.end()));
  return {ctx.g.reshape(x, {outer, inner})};
}

Outs lower_transpose(OpContext& ctx) {
  Node* x = ctx.input(0);
  std::vector<int64_t> perm(x->shape.size());
  std::iota(perm.rbegin(), perm.rend(), 0);  // default: reverse the dims
  return {ctx.g.permute(x, ctx.attr_ints("perm", perm))};
}

Outs lower_concat(OpContext& ctx) {
  std::vector<Node*> xs;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) xs.push_back(ctx.input(i));
  return {concat(ctx.g, xs, ctx.attr_int("axis", 0))};
}

Outs lower_shape(OpContext& ctx) {
  const Shape& s = ctx.input(0)->shape;
  int64_t rank = int64_t(s.size());
  auto clamp_dim = [&](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t(0), rank); };
  int64_t start = clamp_dim(ctx.attr_int("start", 0)), end = clamp_dim(ctx.attr_int("end", rank));
  std::vector<int64_t> dims(s.begin() + start, s.begin() + std::max(start, end));
  return {weight_i64(ctx.g, {int64_t(dims.size())}, dims)};
}

Outs lower_size(OpContext& ctx) { return {weight_i64(ctx.g, {}, {numel(ctx.input(0)->shape)})}; }

Outs lower_gather(OpContext& ctx) {
  Graph& g = ctx.g;
  Node *data = ctx.input(0), *indices = ctx.input(1);
  int64_t rank = int64_t(data->shape.size());
  int64_t axis = ctx.axis(ctx.attr_int("axis", 0), rank), dim = data->shape[axis];
  // Output: data.shape[:axis] + indices.shape + data.shape[axis+1:]
  Shape out(data->shape.begin(), data->shape.begin() + axis);
  out.insert(out.end(), indices->shape.begin(), indices->shape.end());
  out.insert(out.end(), data->shape.begin() + axis + 1, data->shape.end());

  if (g.is_constant(indices)) {
    // Known indices: views and slices (gather_positions).
    std::vector<int64_t> idx = ctx.const_ints(1);
    for (int64_t& i : idx) {
      int64_t v = i < 0 ? i + dim : i;
      if (v < 0 || v >= dim) ctx.fail("index " + std::to_string(i) + " out of range for dim " + std::to_string(dim));
      i = v;
    }
    if (idx.empty()) {
      Shape empty = data->shape;
      empty[axis] = 0;
      return {g.reshape(g.shrink(data, std::vector<int64_t>(rank, 0), empty), out)};
    }
    return {g.reshape(gather_positions(g, data, axis, idx), out)};
  }
  if (is_float(indices->dtype)) ctx.fail("indices must be integers");
  if (dim > 0 && numel(out) > 0) {
    // Computed indices: the Gather primitive over data as it is. The indices, flattened to
    // one axis in data's place and expanded over the other dims, give GatherElements form
    // (d<axis, n, d>axis); the result is reshaped to the output.
    // Negative indices wrap after the expand: a compare and a select per element fused into
    // the gather beat a separate kernel for the wrapped indices.
    Node* idx = indices;
    if (idx->dtype != DType::I32 && idx->dtype != DType::I64) idx = g.cast(idx, DType::I64);
    int64_t n = numel(indices->shape);
    Shape flat(size_t(rank), 1), full = data->shape;
    flat[size_t(axis)] = n;
    full[size_t(axis)] = n;
    idx = wrap_negative(g, g.expand(g.reshape(idx, flat), full), dim);
    return {g.reshape(g.gather(data, idx, axis), out)};
  }
  // An empty data axis or output: a one-hot select. mask[i..., j] = (index[i...] == j)
  // picks data along the axis and a sum over it keeps the one selected element.
  if (is_float(indices->dtype)) ctx.fail("indices must be integers");
  size_t irank = indices->shape.size();
  Node* dim_c = scalar(g, double(dim), indices);
  Node* idx = g.where(g.binary(Op::CmpLt, indices, scalar(g, 0, indices)), g.binary(Op::Add, indices, dim_c), indices);
  std::vector<int64_t> positions = iota_ints(0, dim);
  Node* iota = g.cast(weight_i64(g, {dim}, positions), indices->dtype);
  Shape idx_shape = indices->shape;
  idx_shape.push_back(1);
  Node* mask = g.binary(Op::CmpEq, g.reshape(idx, idx_shape), iota);  // (I..., dim)
  Shape mask_shape(size_t(axis), 1);
  mask_shape.insert(mask_shape.end(), mask->shape.begin(), mask->shape.end());
  mask_shape.insert(mask_shape.end(), size_t(rank - axis - 1), 1);
  Shape data_shape(data->shape.begin(), data->shape.begin() + axis);
  data_shape.insert(data_shape.end(), irank, 1);
  data_shape.insert(data_shape.end(), data->shape.begin() + axis, data->shape.end());
  Node* src = data->dtype == DType::Bool ? g.cast(data, DType::U8) : data;
  Node* picked = g.where(g.reshape(mask, mask_shape), g.reshape(src, data_shape), scalar(g, 0, src));
  Node* sum = g.reduce(Op::ReduceSum, picked, {axis + int64_t(irank)});
  return {g.cast(g.reshape(sum, out), data->dtype)};
}

Outs lower_unsqueeze(OpContext& ctx) {
  auto axes = ctx.ints_from_input_or_attr(1, "axes", 13);
  if (!axes) ctx.fail("axes are required");
  return {unsqueeze_axes(ctx.g, ctx.input(0), *axes)};
}

Outs lower_squeeze(OpContext& ctx) {
  Node* x = ctx.input(0);
  auto axes = ctx.ints_from_input_or_attr(1, "axes", 13);
  if (!axes) {  // all size-1 dims
    axes.emplace();
    for (size_t d = 0; d < x->shape.size(); ++d)
      if (x->shape[d] == 1) axes->push_back(int64_t(d));
  }
  return {squeeze_axes(ctx.g, x, *axes)};
}

Outs lower_slice(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  int64_t rank = int64_t(x->shape.size());
  std::vector<int64_t> starts, ends, axes, steps;
  if (ctx.opset < 10) {
    starts = ctx.attr_ints("starts");
    ends = ctx.attr_ints("ends");
    axes = ctx.attr_ints("axes");
  } else {
    starts = ctx.const_ints(1);
    ends = ctx.const_ints(2);
    if (ctx.optional_input(3)) axes = ctx.const_ints(3);
    if (ctx.optional_input(4)) steps = ctx.const_ints(4);
  }
  if (axes.empty()) axes = iota_ints(0, int64_t(starts.size()));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    ctx.fail("starts, ends, axes and steps differ in length");
  Node* y = x;
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t axis = ctx.axis(axes[i], rank), dim = x->shape[axis], step = steps[i];
    if (step == 0) ctx.fail("step 0");
    // A step past the dim takes at most one element, as a step of the dim does; clamping it
    // keeps -step and the count below from overflowing (a step of INT64_MIN).
    const int64_t max_step = std::max<int64_t>(dim, 1);
    step = std::clamp(step, -max_step, max_step);
    auto resolve = [&](int64_t v, int64_t lo, int64_t hi) {
      if (v < 0) v += dim;
      return std::clamp(v, lo, hi);
    };
    int64_t start, end;
    if (step > 0) {
      start = resolve(starts[i], 0, dim);
      end = resolve(ends[i], 0, dim);
    } else {  // walk backwards: flip the axis and slice forwards
      start = dim - 1 - resolve(starts[i], 0, dim - 1);
      end = dim - 1 - (ends[i] < -dim ? -1 : resolve(ends[i], -1, dim - 1));
      step = -step;
      y = g.flip(y, {axis});
    }
    int64_t count = end > start ? (end - start + step - 1) / step : 0;
    y = strided_slice(g, y, axis, std::min(start, dim), count, step);
  }
  return {y};
}

Outs lower_split(OpContext& ctx) {
  Node* x = ctx.input(0);
  int64_t axis = ctx.axis(ctx.attr_int("axis", 0), int64_t(x->shape.size())), dim = x->shape[axis];
  auto sizes = ctx.ints_from_input_or_attr(1, "split", 13);
  if (!sizes) {  // equal parts (the last one smaller when they do not divide)
    int64_t parts = ctx.attr_int("num_outputs", int64_t(ctx.num_outputs()));
    if (parts < 1 || parts != int64_t(ctx.num_outputs()))
      ctx.fail("num_outputs " + std::to_string(parts) + " does not match the node's " +
               std::to_string(ctx.num_outputs()) + " outputs");
    int64_t chunk = (dim + parts - 1) / parts;
    sizes.emplace();
    for (int64_t p = 0, left = dim; p < parts; ++p, left -= chunk) sizes->push_back(std::clamp(left, int64_t(0), chunk));
  }
  if (sizes->size() != ctx.num_outputs())
    ctx.fail("split sizes " + shape_str(*sizes) + " for " + std::to_string(ctx.num_outputs()) + " outputs");
  int64_t total = 0;
  bool valid = true;
  for (int64_t s : *sizes) valid = valid && s >= 0 && !__builtin_add_overflow(total, s, &total);
  if (!valid || total != dim)
    ctx.fail("split sizes " + shape_str(*sizes) + " do not add up to dim " + std::to_string(dim));
  Outs outs;
  int64_t offset = 0;
  for (int64_t s : *sizes) {
    outs.push_back(strided_slice(ctx.g, x, axis, offset, s, 1));
    offset += s;
  }
  return outs;
}

Outs lower_expand(OpContext& ctx) {
  Node* x = ctx.input(0);
  return {ctx.g.broadcast_to(x, broadcast_shapes(x->shape, ctx.const_ints(1)))};
}

Node* tile(OpContext& ctx, Node* x, const std::vector<int64_t>& repeats);

Outs lower_tile(OpContext& ctx) {
  Node* x = ctx.input(0);
  std::vector<int64_t> repeats = ctx.const_ints(1);
  if (repeats.size() != x->shape.size()) ctx.fail("repeats must have one entry per dim");
  // A last dim that repeats with a period no multiple of the vector (the target's floats:
  // 8 on AVX2) is read modulo the period, a gather per vector that straddles two periods:
  // the rows repeated first into a buffer of their own, then the outer dims' repeats copy
  // whole rows (Tile [1,3,2,4] of 256 x 14 x 14: 2.2x onnxruntime's time as one gathering
  // kernel over all six copies, x86_64 AVX2, op_cliffs.py --random-ops 40 --seed 35).
  // (Whether any outer dim repeats, not the repeats' product: a hostile model's product
  // overflows; tile() refuses repeats whose dims overflow.)
  const bool outer_repeats = !repeats.empty() && std::any_of(repeats.begin(), repeats.end() - 1, [](int64_t r) { return r > 1; });
  if (!repeats.empty() && repeats.back() > 1 && x->shape.back() % ctx.vector_floats() != 0 && outer_repeats) {
    std::vector<int64_t> last_only(repeats.size(), 1), outer = repeats;
    last_only.back() = repeats.back();
    outer.back() = 1;
    Node* rows = tile(ctx, x, last_only);
    rows->realize = true;
    return {tile(ctx, rows, outer)};
  }
  return {tile(ctx, x, repeats)};
}

Node* tile(OpContext& ctx, Node* x, const std::vector<int64_t>& repeats) {
  // (d0, d1, ...) -> (1, d0, 1, d1, ...) -> expand (r0, d0, r1, d1, ...) -> (r0*d0, r1*d1, ...)
  Shape interleaved, expanded, out;
  for (size_t i = 0; i < repeats.size(); ++i) {
    interleaved.insert(interleaved.end(), {1, x->shape[i]});
    expanded.insert(expanded.end(), {repeats[i], x->shape[i]});
    int64_t dim = 0;
    if (repeats[i] < 0 || __builtin_mul_overflow(repeats[i], x->shape[i], &dim))  // before Expand checks the size
      ctx.fail("repeats " + shape_str(repeats) + " of " + shape_str(x->shape) + " are negative or overflow a dim");
    out.push_back(dim);
  }
  return ctx.g.reshape(ctx.g.expand(ctx.g.reshape(x, interleaved), expanded), out);
}

// The product of a dim and blocksize factors; the node fails where it overflows (blocksize
// 2^32 squared wrapped to 0, and edgec died of SIGFPE taking the channels modulo it; an input
// with a zero dim bounds none of its other dims).
int64_t block_product(const OpContext& ctx, int64_t dim, int64_t b, int64_t times) {
  for (int64_t i = 0; i < times; ++i)
    if (__builtin_mul_overflow(dim, b, &dim)) ctx.fail("blocksize " + std::to_string(b) + " overflows the dims");
  return dim;
}

// DepthToSpace / SpaceToDepth are a reshape, a permutation and a reshape.
Outs lower_depth_to_space(OpContext& ctx) {
  Node* x = ctx.input(0);
  if (x->shape.size() != 4) ctx.fail("input must be 4-D");
  int64_t b = ctx.attr_int("blocksize", 0), n = x->shape[0], c = x->shape[1], h = x->shape[2], w = x->shape[3];
  if (b < 1) ctx.fail("blocksize must be positive");
  const int64_t bb = block_product(ctx, 1, b, 2);
  if (c % bb) ctx.fail("blocksize does not divide the channels");
  bool crd = ctx.attr_string("mode", "DCR") == "CRD";
  Shape split = crd ? Shape{n, c / bb, b, b, h, w} : Shape{n, b, b, c / bb, h, w};
  std::vector<int64_t> perm = crd ? std::vector<int64_t>{0, 1, 4, 2, 5, 3} : std::vector<int64_t>{0, 3, 4, 1, 5, 2};
  return {ctx.g.reshape(ctx.g.permute(ctx.g.reshape(x, split), perm),
                        {n, c / bb, block_product(ctx, h, b, 1), block_product(ctx, w, b, 1)})};
}

Outs lower_space_to_depth(OpContext& ctx) {
  Node* x = ctx.input(0);
  if (x->shape.size() != 4) ctx.fail("input must be 4-D");
  int64_t b = ctx.attr_int("blocksize", 0), n = x->shape[0], c = x->shape[1], h = x->shape[2], w = x->shape[3];
  if (b < 1 || h % b || w % b) ctx.fail("blocksize does not divide the spatial dims");
  Node* split = ctx.g.reshape(x, {n, c, h / b, b, w / b, b});
  return {ctx.g.reshape(ctx.g.permute(split, {0, 3, 5, 1, 2, 4}), {n, block_product(ctx, c, b, 2), h / b, w / b})};
}

Outs lower_constant(OpContext& ctx) {
  Graph& g = ctx.g;
  if (const auto* a = ctx.attr("value")) return {g.weight(tensor_from_proto(a->t()))};
  if (const auto* a = ctx.attr("value_float")) return {g.constant(a->f(), DType::F32)};
  if (const auto* a = ctx.attr("value_int")) return {weight_i64(g, {}, {a->i()})};
  if (const auto* a = ctx.attr("value_floats")) {
    std::vector<double> v(a->floats().begin(), a->floats().end());
    return {g.weight(HostTensor::from_doubles(DType::F32, {int64_t(v.size())}, v))};
  }
  if (const auto* a = ctx.attr("value_ints"))
    return {weight_i64(g, {a->ints_size()}, {a->ints().begin(), a->ints().end()})};
  ctx.fail("only tensor, float(s) and int(s) values are supported");
}

Outs lower_constant_of_shape(OpContext& ctx) {
  Shape shape = ctx.const_ints(0);
  if (const auto* a = ctx.attr("value")) {
    HostTensor v = tensor_from_proto(a->t());
    if (v.numel() != 1) ctx.fail("value must hold one element");
    return {ctx.g.constant(v.get(0), v.dtype, shape)};
  }
  return {ctx.g.constant(0.0, DType::F32, shape)};
}

Outs lower_range(OpContext& ctx) {
  Node* start_node = ctx.input(0);
  double start = ctx.const_input(0).get(0), limit = ctx.const_input(1).get(0), delta = ctx.const_input(2).get(0);
  if (delta == 0) ctx.fail("delta 0");
  double count = std::ceil((limit - start) / delta);
  if (!(count <= double(kMaxTensorElements)))  // also NaN
    ctx.fail("(" + std::to_string(limit) + " - " + std::to_string(start) + ") / " + std::to_string(delta) +
             " elements: more than edgec supports");
  int64_t n = std::max<int64_t>(0, int64_t(count));
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(start + double(i) * delta);
  return {ctx.g.weight(HostTensor::from_doubles(start_node->dtype, {n}, v))};
}

// Pad modes other than constant, built per axis from slices of x (reversed for reflect).
Node* pad_from_edges(OpContext& ctx, Node* x, int64_t axis, int64_t lo, int64_t hi, const std::string& mode) {
  Graph& g = ctx.g;
  int64_t dim = x->shape[axis];
  auto slice = [&](int64_t begin, int64_t end) { return strided_slice(g, x, axis, begin, end - begin, 1); };
  Node *left = nullptr, *right = nullptr;
  if (mode == "reflect") {
    if (lo >= dim || hi >= dim) ctx.fail("reflect padding must be smaller than the dim");
    if (lo) left = g.flip(slice(1, lo + 1), {axis});
    if (hi) right = g.flip(slice(dim - 1 - hi, dim - 1), {axis});
  } else if (mode == "edge") {
    auto repeat = [&](int64_t at, int64_t n) {
      Shape s = x->shape;
      s[axis] = n;
      return g.expand(slice(at, at + 1), s);
    };
    if (lo) left = repeat(0, lo);
    if (hi) right = repeat(dim - 1, hi);
  } else if (mode == "wrap") {
    if (lo > dim || hi > dim) ctx.fail("wrap padding larger than the dim");
    if (lo) left = slice(dim - lo, dim);
    if (hi) right = slice(0, hi);
  } else {
    ctx.fail("unsupported pad mode '" + mode + "'");
  }
  if (dim == 0 && (lo || hi)) ctx.fail("cannot pad an empty dim in mode '" + mode + "'");
  std::vector<Node*> parts;
  if (left) parts.push_back(left);
  parts.push_back(x);
  if (right) parts.push_back(right);
  return concat(g, parts, axis);
}

Outs lower_pad(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  int64_t rank = int64_t(x->shape.size());
  std::string mode = ctx.attr_string("mode", "constant");
  std::vector<int64_t> pads;
  double fill = 0.0;
  Node* fill_node = nullptr;  // a fill value known only at run time
  std::vector<int64_t> axes;
  if (ctx.opset < 11) {
    pads = ctx.attr_ints(ctx.opset < 2 ? "paddings" : "pads");
    fill = ctx.attr_float("value", 0.0f);
  } else {
    pads = ctx.const_ints(1);
    if (Node* v = ctx.optional_input(2)) {
      if (numel(v->shape) != 1) ctx.fail("constant_value must hold one value");
      if (g.is_constant(v)) fill = ctx.const_input(2).get(0);
      else fill_node = g.reshape(v, {});
    }
    if (ctx.optional_input(3)) axes = ctx.const_ints(3);
  }
  if (axes.empty()) axes = iota_ints(0, rank);
  if (pads.size() != 2 * axes.size()) ctx.fail("pads must have two entries per padded axis");
  std::vector<int64_t> lo(size_t(rank), 0), hi(size_t(rank), 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = ctx.axis(axes[i], rank);
    lo[a] = pads[i];
    hi[a] = pads[i + axes.size()];
  }
  // Negative pads crop first (compared before negated: -INT64_MIN overflows).
  std::vector<int64_t> begin(static_cast<size_t>(rank)), end = x->shape;
  for (int64_t a = 0; a < rank; ++a) {
    if (lo[a] < -x->shape[a] || hi[a] < -x->shape[a] || -std::min<int64_t>(0, lo[a]) > end[a] + std::min<int64_t>(0, hi[a]))
      ctx.fail("negative pads remove more than the dim");
    begin[a] = std::max<int64_t>(0, -lo[a]);
    end[a] -= std::max<int64_t>(0, -hi[a]);
    lo[a] = std::max<int64_t>(0, lo[a]);
    hi[a] = std::max<int64_t>(0, hi[a]);
  }
  x = g.shrink(x, begin, end);
  if (mode == "constant") {
    if (!fill_node) return {g.pad(x, lo, hi, fill)};
    Node* inside = g.pad(g.constant(1, DType::Bool, x->shape), lo, hi, 0.0);
    return {g.where(inside, g.pad(x, lo, hi, 0.0), fill_node)};
  }
  for (int64_t a = 0; a < rank; ++a)
    if (lo[a] || hi[a]) x = pad_from_edges(ctx, x, a, lo[a], hi[a], mode);
  return {x};
}

}  // namespace

void add_shape_ops(OpTable& t) {
  t["Reshape"] = lower_reshape;
  t["Flatten"] = lower_flatten;
  t["Transpose"] = lower_transpose;
  t["Concat"] = lower_concat;
  t["Shape"] = lower_shape;
  t["Size"] = lower_size;
  t["Gather"] = lower_gather;
  t["Unsqueeze"] = lower_unsqueeze;
  t["Squeeze"] = lower_squeeze;
  t["Slice"] = lower_slice;
  t["Split"] = lower_split;
  t["Expand"] = lower_expand;
  t["Tile"] = lower_tile;
  t["DepthToSpace"] = lower_depth_to_space;
  t["SpaceToDepth"] = lower_space_to_depth;
  t["Constant"] = lower_constant;
  t["ConstantOfShape"] = lower_constant_of_shape;
  t["Range"] = lower_range;
  t["Pad"] = lower_pad;
}

}  // namespace edgec::onnx_frontend
