// ops_resize.cc — Resize (every mode, coordinate transformation, nearest rounding, cubic
// coefficient, antialias, exclude_outside, tf_crop_and_resize extrapolation, axes,
// keep_aspect_ratio_policy) and Upsample.
//
// Resize is separable: along each resized axis, output o reads a few input elements with
// weights that depend only on o. Those taps are computed at compile time, following the
// ONNX reference implementation, and applied axis by axis with the cheapest primitive form:
//   - a selection (nearest): a repeat view (integer upsampling), a strided slice (integer
//     downsampling), or slices joined along the axis;
//   - integer up- / downsampling (linear / cubic): a few shifted views of the input, each
//     repeated or strided, times per-output weights (edge clamping folded into them);
//   - anything else: a dense (out, in) weight matrix, a ReduceSum over the input axis.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "frontend/lowering.h"

namespace edgec::onnx_frontend {
namespace {

using Outs = std::vector<Node*>;

struct Taps {
  std::vector<int64_t> idx;  // unclamped input positions (outside [0, in) read the edge)
  std::vector<double> w;
};

struct AxisPlan {
  int64_t in = 0, out = 0;
  std::vector<Taps> taps;   // per output position
  std::vector<bool> valid;  // false: tf_crop_and_resize extrapolates there
};

struct ResizeParams {
  std::string mode = "nearest", ctm = "half_pixel", nearest_mode = "round_prefer_floor";
  double cubic_a = -0.75, extrapolation = 0.0;
  bool exclude_outside = false, antialias = false;
  bool scale_is_f32 = false;  // scales came from a float tensor: output_width is float32 math
};

double f32(double v) { return double(float(v)); }

// The n integers in [-p, in + p) nearest to x (ties: the smaller), ascending; p = ceil(n/2).
std::vector<int64_t> neighbors(double x, int64_t n, int64_t in) {
  int64_t p = (n + 1) / 2, lo = -p, hi = in + p;
  int64_t c = std::clamp<int64_t>(int64_t(std::floor(x)), lo, hi - 1);
  std::vector<int64_t> cand;
  for (int64_t i = std::max(lo, c - n - 1); i < std::min(hi, c + n + 2); ++i) cand.push_back(i);
  std::stable_sort(cand.begin(), cand.end(), [&](int64_t a, int64_t b) {
    double da = std::fabs(x - double(a)), db = std::fabs(x - double(b));
    return da != db ? da < db : a < b;
  });
  cand.resize(size_t(std::min<int64_t>(n, int64_t(cand.size()))));
  std::sort(cand.begin(), cand.end());
  return cand;
}

std::vector<double> coefficients(const ResizeParams& p, double ratio, double scale) {
  if (p.mode == "nearest") {
    if (ratio == std::floor(ratio)) return {0, 1};
    if (p.nearest_mode == "round_prefer_floor") return {double(ratio <= 0.5), double(ratio > 0.5)};
    if (p.nearest_mode == "round_prefer_ceil") return {double(ratio < 0.5), double(ratio >= 0.5)};
    if (p.nearest_mode == "floor") return {1, 0};
    return {0, 1};  // ceil
  }
  double a = p.cubic_a;
  if (p.mode == "linear") {
    if (!p.antialias) return {1 - ratio, ratio};
    double s = std::min(scale, 1.0);
    int64_t start = int64_t(std::floor(-1 / s) + 1), footprint = 2 - 2 * start;
    std::vector<double> c;
    double sum = 0;
    for (int64_t i = start; i < start + footprint; ++i) {
      double v = std::clamp(1 - std::fabs((double(i) - ratio) * s), 0.0, 1.0);
      c.push_back(v);
      sum += v;
    }
    for (double& v : c) v /= sum;
    return c;
  }
  // cubic
  if (!p.antialias) {
    double r1 = ratio + 1, q = 1 - ratio, q1 = q + 1;
    return {((a * r1 - 5 * a) * r1 + 8 * a) * r1 - 4 * a, ((a + 2) * ratio - (a + 3)) * ratio * ratio + 1,
            ((a + 2) * q - (a + 3)) * q * q + 1, ((a * q1 - 5 * a) * q1 + 8 * a) * q1 - 4 * a};
  }
  double s = std::min(scale, 1.0);
  auto coeff = [&](double x) {
    x = std::fabs(x);
    double x2 = x * x, x3 = x * x2;
    if (x <= 1) return (a + 2) * x3 - (a + 3) * x2 + 1;
    if (x < 2) return a * x3 - 5 * a * x2 + 8 * a * x - 4 * a;
    return 0.0;
  };
  int64_t start = int64_t(std::floor(-2 / s) + 1), end = 2 - start;
  std::vector<double> c;
  double sum = 0;
  for (int64_t i = start; i < end; ++i) {
    c.push_back(coeff(s * (double(i) - ratio)));
    sum += c.back();
  }
  for (double& v : c) v /= sum;
  return c;
}

AxisPlan plan_axis(const OpContext& ctx, const ResizeParams& p, int64_t in, int64_t out, double scale, double roi_lo,
                   double roi_hi) {
  AxisPlan plan;
  plan.in = in;
  plan.out = out;
  double out_width = p.scale_is_f32 ? f32(f32(scale) * double(in)) : scale * double(in);
  for (int64_t o = 0; o < out; ++o) {
    double x = double(o), xo = 0;
    bool valid = true;
    const std::string& m = p.ctm;
    if (m == "align_corners") {
      xo = out_width == 1 ? 0.0 : x * double(in - 1) / (out_width - 1);
    } else if (m == "asymmetric") {
      xo = x / scale;
    } else if (m == "tf_crop_and_resize") {
      if (out_width == 1) xo = (roi_hi - roi_lo) * double(in - 1) / 2;
      else xo = x * (roi_hi - roi_lo) * double(in - 1) / (out_width - 1);
      xo += roi_lo * double(in - 1);
      valid = !(xo < 0 || xo > double(in - 1));
    } else if (m == "pytorch_half_pixel") {
      xo = out_width == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
    } else if (m == "half_pixel") {
      xo = (x + 0.5) / scale - 0.5;
    } else if (m == "half_pixel_symmetric") {
      double adjustment = double(out) / out_width, center = double(in) / 2;
      xo = center * (1 - adjustment) + (x + 0.5) / scale - 0.5;
    } else if (m == "tf_half_pixel_for_nn") {
      xo = (x + 0.5) / scale;
    } else {
      ctx.fail("unknown coordinate_transformation_mode '" + m + "'");
    }
    plan.valid.push_back(valid);
    Taps t;
    if (valid) {
      double base = std::floor(xo), ratio = xo == base ? 1.0 : xo - base;
      std::vector<double> c = coefficients(p, ratio, scale);
      std::vector<int64_t> idx = neighbors(xo, int64_t(c.size()), in);
      if (idx.size() != c.size()) ctx.fail("internal: resize taps");
      if (p.exclude_outside) {
        double sum = 0;
        for (size_t i = 0; i < c.size(); ++i) {
          if (idx[i] < 0 || idx[i] >= in) c[i] = 0;
          sum += c[i];
        }
        for (double& v : c) v /= sum;
      }
      t.idx = idx;
      t.w = c;
    }
    plan.taps.push_back(std::move(t));
  }
  return plan;
}

int64_t clamp_index(int64_t i, int64_t in) { return std::clamp<int64_t>(i, 0, in - 1); }

// If every output reads one input element with weight 1: which one (else empty).
std::vector<int64_t> selection(const AxisPlan& plan) {
  std::vector<int64_t> sel;
  for (int64_t o = 0; o < plan.out; ++o) {
    const Taps& t = plan.taps[size_t(o)];
    int64_t pick = -1;
    for (size_t i = 0; i < t.w.size(); ++i) {
      if (t.w[i] == 0) continue;
      int64_t c = clamp_index(t.idx[i], plan.in);
      if (pick >= 0 && pick != c) return {};
      pick = c;
    }
    double sum = 0;
    for (size_t i = 0; i < t.w.size(); ++i)
      if (t.w[i] != 0) sum += t.w[i];
    if (pick < 0 || sum != 1.0) return {};
    sel.push_back(pick);
  }
  return sel;
}

Shape with_dim(Shape s, int64_t axis, int64_t size) {
  s[size_t(axis)] = size;
  return s;
}

// x shifted along axis: y[i] = x[i + c], 0 where i + c is outside.
Node* shifted(Graph& g, Node* x, int64_t axis, int64_t c) {
  int64_t in = x->shape[size_t(axis)];
  if (c == 0) return x;
  size_t r = x->shape.size();
  std::vector<int64_t> lo(r, 0), hi(r, 0);
  if (std::abs(c) >= in) return g.constant(0, x->dtype, x->shape);
  Node* part = c > 0 ? strided_slice(g, x, axis, c, in - c, 1) : strided_slice(g, x, axis, 0, in + c, 1);
  (c > 0 ? hi : lo)[size_t(axis)] = std::abs(c);
  return g.pad(part, lo, hi, 0.0);
}

// Interpolation along one axis of a float tensor.
Node* interpolate(Graph& g, Node* x, int64_t axis, const AxisPlan& plan) {
  int64_t in = plan.in, out = plan.out;
  // Banded form for integer up- / downsampling: output o reads x[base(o) + c] for a few
  // offsets c, base(o) = o / k (a repeat view) or o * k (a strided view). Edge clamping is
  // folded into the per-output weights, so every read is a view of x: O(offsets) per output.
  std::vector<int64_t> base(static_cast<size_t>(out), 0);
  bool banded = out % in == 0 || in % out == 0;
  for (int64_t o = 0; o < out && banded; ++o) base[size_t(o)] = out % in == 0 ? o / (out / in) : o * (in / out);
  std::map<int64_t, std::vector<double>> bands;  // offset -> weight per output
  for (int64_t o = 0; o < out && banded; ++o) {
    const Taps& t = plan.taps[size_t(o)];
    for (size_t i = 0; i < t.idx.size(); ++i) {
      if (t.w[i] == 0) continue;
      auto& w = bands[clamp_index(t.idx[i], in) - base[size_t(o)]];
      w.resize(size_t(out), 0.0);
      w[size_t(o)] += t.w[i];
    }
    banded = bands.size() <= 8;
  }
  if (banded) {
    Node* acc = nullptr;
    Shape ws(x->shape.size(), 1);
    ws[size_t(axis)] = out;
    for (const auto& [c, w] : bands) {
      Node* view = gather_positions(g, shifted(g, x, axis, c), axis, base);
      bool ones = std::all_of(w.begin(), w.end(), [](double v) { return v == 1.0; });
      Node* term = ones ? view : g.binary(Op::Mul, view, g.weight(HostTensor::from_doubles(x->dtype, ws, w)));
      acc = acc ? g.binary(Op::Add, acc, term) : term;
    }
    return acc ? acc : g.constant(0, x->dtype, with_dim(x->shape, axis, out));
  }
  // Dense weights (out, in).
  std::vector<double> w(size_t(out * in), 0.0);
  for (int64_t o = 0; o < out; ++o) {
    const Taps& t = plan.taps[size_t(o)];
    for (size_t i = 0; i < t.idx.size(); ++i) w[size_t(o * in + clamp_index(t.idx[i], in))] += t.w[i];
  }
  Node* wm = g.weight(HostTensor::from_doubles(x->dtype, {out, in}, w));
  Node* xl = move_axis_last(g, x, axis);
  Shape s = xl->shape;
  s.insert(s.end() - 1, 1);
  Node* y = g.reduce(Op::ReduceSum, g.binary(Op::Mul, g.reshape(xl, s), wm), {-1});
  Shape ys = xl->shape;
  ys.back() = out;
  return move_last_to(g, g.reshape(y, ys), axis);
}

// floor(scale * size), refused before it overflows or builds tables for a tensor past the
// size limit (a scale of 1e9).
int64_t scaled_size(const OpContext& ctx, double scale, int64_t size) {
  double out = std::floor(scale * double(size));
  if (!(out <= double(kMaxTensorElements)))
    ctx.fail("scale " + std::to_string(scale) + " makes a dim of " + std::to_string(size) + " larger than edgec supports");
  return int64_t(out);
}

Node* resize(OpContext& ctx, Node* x, const ResizeParams& p, const std::vector<int64_t>& out_size,
             const std::vector<double>& scales, const std::vector<double>& roi) {
  Graph& g = ctx.g;
  size_t r = x->shape.size();
  if (p.mode != "nearest" && p.mode != "linear" && p.mode != "cubic") ctx.fail("unknown mode '" + p.mode + "'");
  if (p.mode == "nearest" && p.nearest_mode != "round_prefer_floor" && p.nearest_mode != "round_prefer_ceil" &&
      p.nearest_mode != "floor" && p.nearest_mode != "ceil")
    ctx.fail("unknown nearest_mode '" + p.nearest_mode + "'");
  checked_numel(Shape(out_size.begin(), out_size.end()), "output");  // before any per-position table
  // Each dim too: with a zero dim elsewhere the output has no elements, and a table per position
  // of a dim of 2e17 ran for hours (fuzz_onnx: resize_sizes_huge_dim_of_empty_output.onnx).
  for (size_t d = 0; d < r; ++d)
    if (out_size[d] > kMaxTensorElements)
      ctx.fail("output dim " + std::to_string(d) + " of " + shape_str(Shape(out_size.begin(), out_size.end())) +
               " is larger than edgec supports");
  std::vector<AxisPlan> plans(r);
  Node* valid = nullptr;  // tf_crop_and_resize: every coordinate inside the input
  for (size_t d = 0; d < r; ++d) {
    int64_t in = x->shape[d];
    if (in == 0 || out_size[d] < 0) ctx.fail("cannot resize dim " + std::to_string(d) + " of " + shape_str(x->shape));
    plans[d] = plan_axis(ctx, p, in, out_size[d], scales[d], roi[d], roi[r + d]);
    if (std::find(plans[d].valid.begin(), plans[d].valid.end(), false) != plans[d].valid.end()) {
      std::vector<int64_t> v(plans[d].valid.begin(), plans[d].valid.end());
      Shape vs(r, 1);
      vs[d] = out_size[d];
      Node* vd = g.weight(HostTensor::from_ints(DType::Bool, vs, v));
      valid = valid ? g.binary(Op::And, valid, vd) : vd;
    }
  }
  // Axes that shrink first, then the others (last to first among equal ratios): each step
  // reads the previous one's result, so shrinking first keeps those small, and a Gather
  // (gather_positions) that shrinks then reads the input rather than a grown intermediate
  // stored for it (56 -> 34 rows after 56 -> 168 columns: 4.7x onnxruntime).
  std::vector<size_t> order;
  for (size_t d = r; d-- > 0;) order.push_back(d);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return plans[a].out * plans[b].in < plans[b].out * plans[a].in;
  });
  DType t = x->dtype;
  Node* y = x;
  bool computed = false;
  for (size_t d : order) {
    const AxisPlan& plan = plans[d];
    std::vector<int64_t> sel = selection(plan);
    bool identity = plan.in == plan.out && !sel.empty();
    for (int64_t o = 0; identity && o < plan.out; ++o) identity = sel[size_t(o)] == o;
    if (identity) continue;
    if (!sel.empty()) {
      y = gather_positions(g, y, int64_t(d), sel);
      continue;
    }
    if (y->dtype != DType::F32 && y->dtype != DType::F64) y = g.cast(y, DType::F32);  // f16 / integers
    computed = true;
    y = interpolate(g, y, int64_t(d), plan);
  }
  if (valid) {
    if (!is_float(y->dtype)) y = g.cast(y, DType::F32), computed = true;
    y = g.where(valid, y, scalar(g, p.extrapolation, y));
  }
  if (computed && !is_float(t)) y = g.unary(Op::Round, y);  // integer images: round, then the cast saturates
  return g.cast(y, t);
}

std::vector<double> const_doubles(OpContext& ctx, size_t i) { return ctx.const_input(i).to_doubles(); }

Outs lower_resize(OpContext& ctx) {
  Node* x = ctx.input(0);
  size_t r = x->shape.size();
  ResizeParams p;
  p.mode = ctx.attr_string("mode", "nearest");
  std::vector<double> scales_in, roi_in;
  std::vector<int64_t> sizes_in;
  if (ctx.opset < 11) {  // Resize-10: X, scales; asymmetric coordinates, nearest rounds down
    p.ctm = "asymmetric";
    p.nearest_mode = "floor";
    scales_in = const_doubles(ctx, 1);
    p.scale_is_f32 = true;
  } else {
    p.ctm = ctx.attr_string("coordinate_transformation_mode", "half_pixel");
    p.nearest_mode = ctx.attr_string("nearest_mode", "round_prefer_floor");
    p.cubic_a = ctx.attr_float("cubic_coeff_a", -0.75f);
    p.exclude_outside = ctx.attr_int("exclude_outside", 0) != 0;
    p.extrapolation = ctx.attr_float("extrapolation_value", 0.0f);
    p.antialias = ctx.attr_int("antialias", 0) != 0;
    if (ctx.optional_input(1) && numel(ctx.input(1)->shape) > 0) roi_in = const_doubles(ctx, 1);
    if (ctx.optional_input(2) && numel(ctx.input(2)->shape) > 0) {
      scales_in = const_doubles(ctx, 2);
      p.scale_is_f32 = ctx.input(2)->dtype == DType::F32;
    }
    if (ctx.optional_input(3) && numel(ctx.input(3)->shape) > 0) sizes_in = ctx.const_ints(3);
  }
  if (p.antialias && p.mode == "nearest") ctx.fail("antialias is not defined for mode 'nearest'");
  if (scales_in.empty() == sizes_in.empty()) ctx.fail("exactly one of scales and sizes must be given");
  std::vector<int64_t> axes = ctx.attr_ints("axes");
  if (axes.empty()) axes = iota_ints(0, int64_t(r));
  for (int64_t& a : axes) a = ctx.axis(a, int64_t(r));
  size_t n = axes.size();
  if ((!scales_in.empty() && scales_in.size() != n) || (!sizes_in.empty() && sizes_in.size() != n))
    ctx.fail("scales / sizes must have one entry per resized axis");
  std::vector<double> scales(r, 1.0), roi(2 * r, 0.0);
  std::vector<int64_t> out = x->shape;
  for (size_t d = 0; d < r; ++d) roi[r + d] = 1.0;
  if (!roi_in.empty()) {
    if (roi_in.size() != 2 * n) ctx.fail("roi must have two entries per resized axis");
    for (size_t i = 0; i < n; ++i) roi[size_t(axes[i])] = roi_in[i], roi[r + size_t(axes[i])] = roi_in[n + i];
  }
  if (!scales_in.empty()) {
    for (size_t i = 0; i < n; ++i) {
      if (!(scales_in[i] > 0)) ctx.fail("scales must be positive");
      scales[size_t(axes[i])] = scales_in[i];
    }
    for (size_t d = 0; d < r; ++d) out[d] = scaled_size(ctx, scales[d], x->shape[d]);
  } else {
    for (size_t i = 0; i < n; ++i) out[size_t(axes[i])] = sizes_in[i];
    for (size_t d = 0; d < r; ++d) scales[d] = double(out[d]) / double(x->shape[d]);
    std::string policy = ctx.attr_string("keep_aspect_ratio_policy", "stretch");
    if (policy != "stretch") {
      double s = policy == "not_larger" ? INFINITY : -INFINITY;
      if (policy != "not_larger" && policy != "not_smaller") ctx.fail("unknown keep_aspect_ratio_policy '" + policy + "'");
      for (int64_t a : axes) s = policy == "not_larger" ? std::min(s, scales[size_t(a)]) : std::max(s, scales[size_t(a)]);
      for (int64_t a : axes) {
        scales[size_t(a)] = s;
        out[size_t(a)] = int64_t(s * double(x->shape[size_t(a)]) + 0.5);
      }
    }
  }
  return {resize(ctx, x, p, out, scales, roi)};
}

Outs lower_upsample(OpContext& ctx) {
  Node* x = ctx.input(0);
  ResizeParams p;
  p.mode = ctx.attr_string("mode", "nearest");
  if (p.mode == "bilinear") p.mode = "linear";
  p.ctm = "asymmetric";
  p.nearest_mode = "floor";
  p.scale_is_f32 = true;
  std::vector<double> scales;
  if (ctx.opset >= 9) {
    scales = const_doubles(ctx, 1);
  } else {
    for (float f : ctx.attr_floats("scales")) scales.push_back(f);
  }
  size_t r = x->shape.size();
  if (scales.size() != r) ctx.fail("scales must have one entry per dim");
  std::vector<int64_t> out;
  for (size_t d = 0; d < r; ++d) out.push_back(scaled_size(ctx, scales[d], x->shape[d]));
  std::vector<double> roi(2 * r, 0.0);
  return {resize(ctx, x, p, out, scales, roi)};
}

}  // namespace

void add_resize_ops(OpTable& t) {
  t["Resize"] = lower_resize;
  t["Upsample"] = lower_upsample;
}

}  // namespace edgec::onnx_frontend
