// ops_roi.cc — RoiAlign and DeformConv: bilinear sampling at positions computed at run
// time, as one-hot weight rows per spatial dim contracted with the input (like GridSample:
// O(input plane) work per sample).
#include <cmath>

#include "frontend/lowering.h"

namespace edgec::onnx_frontend {
namespace {

using Outs = std::vector<Node*>;

// One-hot row over [0, len) for each integral-valued float position p: (..., len).
Node* one_hot_rows(Graph& g, Node* p, int64_t len) {
  Shape s = p->shape;
  s.push_back(1);
  Node* pos = g.cast(iota(g, len, DType::I64, s.size(), s.size() - 1), p->dtype);
  return g.binary(Op::CmpEq, g.reshape(p, s), pos);
}

// Bilinear weights over [0, len) for float coordinates c: (1 - t) at floor(c), t at
// floor(c) + 1; taps outside the input get no weight.
Node* bilinear_rows(Graph& g, Node* c, int64_t len) {
  Node* lo = g.unary(Op::Floor, c);
  Node* t = g.binary(Op::Sub, c, lo);
  Shape s = c->shape;
  s.push_back(1);
  Node* zero = scalar(g, 0, c);
  Node* w_lo = g.where(one_hot_rows(g, lo, len), g.reshape(g.binary(Op::Sub, scalar(g, 1, c), t), s), zero);
  Node* w_hi = g.where(one_hot_rows(g, g.binary(Op::Add, lo, scalar(g, 1, c)), len), g.reshape(t, s), zero);
  return g.binary(Op::Add, w_lo, w_hi);
}

Outs lower_roi_align(OpContext& ctx) {
  Graph& g = ctx.g;
  Node *x = ctx.input(0), *rois = ctx.input(1), *bidx = ctx.input(2);
  if (x->shape.size() != 4 || !is_float(x->dtype)) ctx.fail("X must be a 4-D float tensor");
  int64_t n = x->shape[0], c = x->shape[1], h = x->shape[2], w = x->shape[3];
  if (rois->shape.size() != 2 || rois->shape[1] != 4) ctx.fail("rois must be (num_rois, 4)");
  int64_t r = rois->shape[0];
  if (bidx->shape != Shape{r} || is_float(bidx->dtype)) ctx.fail("batch_indices must be (num_rois) integers");
  int64_t ph = ctx.attr_int("output_height", 1), pw = ctx.attr_int("output_width", 1);
  int64_t ratio = ctx.attr_int("sampling_ratio", 0);
  if (ratio <= 0) ctx.fail("sampling_ratio 0 (a grid that depends on each ROI's size) is not supported");
  double scale = ctx.attr_float("spatial_scale", 1.0f);
  std::string mode = ctx.attr_string("mode", "avg");
  if (mode != "avg" && mode != "max") ctx.fail("unknown mode '" + mode + "'");
  std::string ctm = ctx.attr_string("coordinate_transformation_mode", ctx.opset >= 16 ? "half_pixel" : "output_half_pixel");
  if (ctm != "half_pixel" && ctm != "output_half_pixel") ctx.fail("unknown coordinate_transformation_mode '" + ctm + "'");
  bool half = ctm == "half_pixel";
  Node* rf = g.cast(rois, x->dtype);
  auto c_ = [&](double v) { return scalar(g, v, rf); };
  auto roi_col = [&](int64_t k) {
    Node* v = g.reshape(strided_slice(g, rf, 1, k, 1, 1), {r});
    return g.binary(Op::Sub, g.binary(Op::Mul, v, c_(scale)), c_(half ? 0.5 : 0.0));
  };
  Node *x0 = roi_col(0), *y0 = roi_col(1), *x1 = roi_col(2), *y1 = roi_col(3);
  // Sample positions along one dim, (R, P, S) each: start + (p + (s + 0.5) / S) * bin,
  // validity, then clamped as the reference does: {low, high, fraction, valid}.
  auto positions = [&](Node* start, Node* end, int64_t pooled, int64_t len) {
    Node* size = g.binary(Op::Sub, end, start);
    if (!half) size = g.binary(Op::Max, size, c_(1));
    Node* bin = g.binary(Op::Div, size, c_(double(pooled)));
    std::vector<double> offs;
    for (int64_t p = 0; p < pooled; ++p)
      for (int64_t s = 0; s < ratio; ++s) offs.push_back(double(p) + (double(s) + 0.5) / double(ratio));
    Node* o = g.weight(HostTensor::from_doubles(x->dtype, {1, pooled, ratio}, offs));
    Node* v = g.binary(Op::Add, g.reshape(start, {r, 1, 1}), g.binary(Op::Mul, o, g.reshape(bin, {r, 1, 1})));
    Node* valid = g.unary(Op::Not, g.binary(Op::Or, g.binary(Op::CmpLt, v, c_(-1)), g.binary(Op::CmpLt, c_(double(len)), v)));
    v = g.binary(Op::Max, v, c_(0));
    Node* lo = g.unary(Op::Floor, v);
    Node* at_end = g.unary(Op::Not, g.binary(Op::CmpLt, lo, c_(double(len - 1))));
    lo = g.where(at_end, c_(double(len - 1)), lo);
    v = g.where(at_end, lo, v);
    Node* hi = g.where(at_end, lo, g.binary(Op::Add, lo, c_(1)));
    return std::vector<Node*>{lo, hi, g.binary(Op::Sub, v, lo), valid};
  };
  auto py = positions(y0, y1, ph, h), px = positions(x0, x1, pw, w);
  // The ROI's image: (R, C, H, W) selected by batch index.
  Node* table = g.expand(g.reshape(x, {1, n, c, h, w}), {r, n, c, h, w});
  Node* xr = g.reshape(select_along(g, table, 1, g.reshape(bidx, {r, 1, 1, 1, 1})), {r, c, h, w});
  Node* zero = scalar(g, 0, xr);
  if (mode == "avg") {
    // Weight rows per dim summed over the samples (the validity of a sample factorizes).
    auto summed_rows = [&](const std::vector<Node*>& pos, int64_t pooled, int64_t len) {
      Shape s{r, pooled, ratio, 1};
      Node* rows = g.binary(Op::Add, g.where(one_hot_rows(g, pos[0], len), g.reshape(g.binary(Op::Sub, c_(1), pos[2]), s), zero),
                            g.where(one_hot_rows(g, pos[1], len), g.reshape(pos[2], s), zero));
      rows = g.where(g.reshape(pos[3], s), rows, zero);
      return g.reshape(g.reduce(Op::ReduceSum, rows, {2}), {r, pooled, len});
    };
    Node* sy = summed_rows(py, ph, h);
    Node* sx = summed_rows(px, pw, w);
    // (R, C, H, 1, W) * (R, 1, 1, PW, W) -> sum W -> (R, C, H, PW)
    Node* t = g.reduce(Op::ReduceSum, g.binary(Op::Mul, g.reshape(xr, {r, c, h, 1, w}), g.reshape(sx, {r, 1, 1, pw, w})), {4});
    t = g.permute(g.reshape(t, {r, c, 1, h, pw}), {0, 1, 2, 4, 3});  // (R, C, 1, PW, H)
    Node* y = g.reduce(Op::ReduceSum, g.binary(Op::Mul, t, g.reshape(sy, {r, 1, ph, 1, h})), {4});
    y = g.reshape(y, {r, c, ph, pw});
    return {g.binary(Op::Div, y, scalar(g, double(ratio * ratio), y))};
  }
  // max: per sample the largest of the four weighted corners, then the largest sample.
  Node* valid = g.binary(Op::And, g.reshape(py[3], {r, ph, ratio, 1, 1}), g.reshape(px[3], {r, 1, 1, pw, ratio}));
  Node* best = nullptr;
  for (int cy = 0; cy < 2; ++cy) {
    Node* fy = cy ? py[2] : g.binary(Op::Sub, c_(1), py[2]);  // (R, PH, S)
    // (R, C, PH, S, W): rows of the image at the corner's y.
    Node* oy = g.cast(one_hot_rows(g, py[cy], h), x->dtype);  // (R, PH, S, H)
    Node* rows = g.reduce(Op::ReduceSum, g.binary(Op::Mul, g.reshape(xr, {r, c, 1, 1, h, w}), g.reshape(oy, {r, 1, ph, ratio, h, 1})), {4});
    rows = g.reshape(rows, {r, c, ph, ratio, 1, 1, w});
    for (int cx = 0; cx < 2; ++cx) {
      Node* fx = cx ? px[2] : g.binary(Op::Sub, c_(1), px[2]);  // (R, PW, S)
      Node* ox = g.cast(one_hot_rows(g, px[cx], w), x->dtype);  // (R, PW, S, W)
      Node* v = g.reduce(Op::ReduceSum, g.binary(Op::Mul, rows, g.reshape(ox, {r, 1, 1, 1, pw, ratio, w})), {6});
      v = g.reshape(v, {r, c, ph, ratio, pw, ratio});
      Node* wgt = g.binary(Op::Mul, g.reshape(fy, {r, 1, ph, ratio, 1, 1}), g.reshape(fx, {r, 1, 1, 1, pw, ratio}));
      wgt = g.where(g.reshape(valid, {r, 1, ph, ratio, pw, ratio}), wgt, zero);
      Node* term = g.binary(Op::Mul, v, wgt);
      best = best ? g.binary(Op::Max, best, term) : term;
    }
  }
  Node* y = g.reduce(Op::ReduceMax, best, {3, 5});
  return {g.reshape(y, {r, c, ph, pw})};
}

Outs lower_deform_conv(OpContext& ctx) {
  Graph& g = ctx.g;
  Node *x = ctx.input(0), *wt = ctx.input(1), *off = ctx.input(2), *bias = ctx.optional_input(3), *mask = ctx.optional_input(4);
  if (x->shape.size() != 4 || !is_float(x->dtype)) ctx.fail("only 2-D (N, C, H, W) float inputs are supported");
  int64_t n = x->shape[0], c = x->shape[1], h = x->shape[2], w = x->shape[3];
  if (wt->shape.size() != 4) ctx.fail("W must be (oC, C/group, kH, kW)");
  int64_t oc = wt->shape[0], kh = wt->shape[2], kw = wt->shape[3], k = kh * kw;
  int64_t group = ctx.attr_int("group", 1), og = ctx.attr_int("offset_group", 1);
  if (group < 1 || c % group || oc % group || wt->shape[1] != c / group) ctx.fail("channels, W and group do not fit");
  if (og < 1 || c % og) ctx.fail("offset_group must divide the channels");
  std::vector<int64_t> st = ctx.attr_ints("strides", {1, 1}), dil = ctx.attr_ints("dilations", {1, 1}), pads = ctx.attr_ints("pads", {0, 0, 0, 0});
  if (st.size() != 2 || dil.size() != 2 || pads.size() != 4) ctx.fail("strides / dilations / pads must be 2-D");
  if (off->shape.size() != 4 || off->shape[0] != n || off->shape[1] != og * 2 * k) ctx.fail("offset " + shape_str(off->shape) + " does not fit");
  int64_t oh = off->shape[2], ow = off->shape[3];
  if (oh != (h + pads[0] + pads[2] - ((kh - 1) * dil[0] + 1)) / st[0] + 1 || ow != (w + pads[1] + pads[3] - ((kw - 1) * dil[1] + 1)) / st[1] + 1)
    ctx.fail("offset spatial size does not match the convolution output");
  // Sampling positions (N, OG, kH, kW, oH, oW): base + kernel tap + offset.
  Node* o6 = g.reshape(off, {n, og, kh, kw, 2, oh, ow});
  auto coord = [&](int64_t which, int64_t stride, int64_t dilation, int64_t pad, bool is_h) {
    Node* d = g.reshape(strided_slice(g, o6, 4, which, 1, 1), {n, og, kh, kw, oh, ow});
    std::vector<double> base;
    for (int64_t i = 0; i < kh; ++i)
      for (int64_t j = 0; j < kw; ++j)
        for (int64_t a = 0; a < oh; ++a)
          for (int64_t b = 0; b < ow; ++b)
            base.push_back(double((is_h ? a : b) * stride - pad + (is_h ? i : j) * dilation));
    return g.binary(Op::Add, d, g.weight(HostTensor::from_doubles(x->dtype, {1, 1, kh, kw, oh, ow}, base)));
  };
  Node* py = coord(0, st[0], dil[0], pads[0], true);
  Node* px = coord(1, st[1], dil[1], pads[1], false);
  Node* wy = bilinear_rows(g, py, h);  // (N, OG, kH, kW, oH, oW, H)
  Node* wx = bilinear_rows(g, px, w);  // (N, OG, kH, kW, oH, oW, W)
  int64_t cg = c / og;
  // sampled (N, OG, Cg, kH, kW, oH, oW) = sum_{h, w} X * wy * wx
  Node* xs = g.reshape(x, {n, og, cg, 1, 1, 1, 1, h, w});
  Node* t = g.reduce(Op::ReduceSum, g.binary(Op::Mul, xs, g.reshape(wx, {n, og, 1, kh, kw, oh, ow, 1, w})), {8});
  t = g.reshape(t, {n, og, cg, kh, kw, oh, ow, h});
  Node* s = g.reduce(Op::ReduceSum, g.binary(Op::Mul, t, g.reshape(wy, {n, og, 1, kh, kw, oh, ow, h})), {7});
  s = g.reshape(s, {n, og, cg, kh, kw, oh, ow});
  if (mask) {
    if (mask->shape != Shape{n, og * k, oh, ow}) ctx.fail("mask " + shape_str(mask->shape) + " does not fit");
    s = g.binary(Op::Mul, s, g.reshape(mask, {n, og, 1, kh, kw, oh, ow}));
  }
  // Grouped contraction with W: (N, G, 1, Cgw, kH, kW, oH, oW) * (1, G, Mg, Cgw, kH, kW, 1, 1).
  int64_t cgw = c / group, mg = oc / group;
  Node* sv = g.reshape(s, {n, group, 1, cgw, kh, kw, oh, ow});
  Node* wv = g.reshape(wt, {1, group, mg, cgw, kh, kw, 1, 1});
  Node* prod = g.permute(g.binary(Op::Mul, sv, wv), {0, 1, 2, 6, 7, 3, 4, 5});
  Node* y = g.reshape(g.reduce(Op::ReduceSum, prod, {5, 6, 7}), {n, oc, oh, ow});
  if (bias) {
    if (bias->shape != Shape{oc}) ctx.fail("B must be (oC)");
    y = g.binary(Op::Add, y, g.reshape(bias, {oc, 1, 1}));
  }
  return {y};
}

}  // namespace

void add_roi_ops(OpTable& t) {
  t["RoiAlign"] = lower_roi_align;
  t["DeformConv"] = lower_deform_conv;
}

}  // namespace edgec::onnx_frontend
