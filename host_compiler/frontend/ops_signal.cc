// ops_signal.cc — DFT and STFT as products with constant cos / sin matrices (O(n) per
// output bin). Complex values are a trailing dim of 2 (real, imaginary), as in ONNX.
#include <cmath>

#include "frontend/lowering.h"

namespace edgec::onnx_frontend {
namespace {

using Outs = std::vector<Node*>;

// DFT over the last axis of re / im (im may be null: a real signal), zero-padded or cut to
// `length`; `bins` outputs. Returns {real, imaginary} with the last axis of size bins.
std::pair<Node*, Node*> dft_last(Graph& g, Node* re, Node* im, int64_t length, int64_t bins, bool inverse) {
  size_t r = re->shape.size();
  int64_t n = re->shape[r - 1];
  auto fit = [&](Node* v) {
    if (!v) return v;
    if (n > length) return strided_slice(g, v, int64_t(r - 1), 0, length, 1);
    std::vector<int64_t> lo(r, 0), hi(r, 0);
    hi[r - 1] = length - n;
    return g.pad(v, lo, hi, 0.0);
  };
  re = fit(re);
  im = fit(im);
  std::vector<double> cs, sn;
  for (int64_t k = 0; k < bins; ++k)
    for (int64_t j = 0; j < length; ++j) {
      // exact angle reduction: (j*k) mod length
      double a = 2 * M_PI * double((j * k) % length) / double(length);
      cs.push_back(std::cos(a));
      sn.push_back(std::sin(a));
    }
  Node* c = g.weight(HostTensor::from_doubles(re->dtype, {bins, length}, cs));
  Node* s = g.weight(HostTensor::from_doubles(re->dtype, {bins, length}, sn));
  Shape vs = re->shape;
  vs.insert(vs.end() - 1, 1);  // (..., 1, length)
  auto dot = [&](Node* v, Node* m) {
    Node* p = g.reduce(Op::ReduceSum, g.binary(Op::Mul, g.reshape(v, vs), m), {-1});
    Shape out = re->shape;
    out.back() = bins;
    return g.reshape(p, out);
  };
  // forward: (re + i im)(cos - i sin); inverse: (re + i im)(cos + i sin) / length
  double sign = inverse ? 1.0 : -1.0;
  Node* out_re = dot(re, c);
  Node* out_im = g.binary(Op::Mul, dot(re, s), scalar(g, sign, re));
  if (im) {
    out_re = g.binary(Op::Sub, out_re, g.binary(Op::Mul, dot(im, s), scalar(g, sign, re)));
    out_im = g.binary(Op::Add, out_im, dot(im, c));
  }
  if (inverse) {
    out_re = g.binary(Op::Div, out_re, scalar(g, double(length), re));
    out_im = g.binary(Op::Div, out_im, scalar(g, double(length), re));
  }
  return {out_re, out_im};
}

// Splits (..., 1|2) into real and imaginary parts (null for a real signal).
std::pair<Node*, Node*> complex_parts(OpContext& ctx, Node* x) {
  Graph& g = ctx.g;
  size_t r = x->shape.size();
  if (r < 2 || (x->shape[r - 1] != 1 && x->shape[r - 1] != 2)) ctx.fail("input must end in a dim of 1 (real) or 2 (complex)");
  if (!is_float(x->dtype)) ctx.fail("input must be a float tensor");
  Shape s(x->shape.begin(), x->shape.end() - 1);
  Node* re = g.reshape(strided_slice(g, x, int64_t(r - 1), 0, 1, 1), s);
  Node* im = x->shape[r - 1] == 2 ? g.reshape(strided_slice(g, x, int64_t(r - 1), 1, 1, 1), s) : nullptr;
  return {re, im};
}

Node* stack_complex(Graph& g, Node* re, Node* im) {
  Shape s = re->shape;
  s.push_back(1);
  return concat(g, {g.reshape(re, s), g.reshape(im, s)}, int64_t(s.size() - 1));
}

Outs lower_dft(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  size_t r = x->shape.size();
  int64_t axis;
  if (ctx.opset >= 20) {
    axis = ctx.optional_input(2) ? ctx.const_input(2).get_int(0) : -2;
  } else {
    axis = ctx.attr_int("axis", 1);
  }
  axis = ctx.axis(axis, int64_t(r));
  if (axis == int64_t(r) - 1) ctx.fail("axis must not be the last (complex) dim");
  auto [re, im] = complex_parts(ctx, x);
  int64_t length = re->shape[size_t(axis)];
  if (ctx.optional_input(1)) {
    HostTensor l = ctx.const_input(1);
    if (l.numel() != 1) ctx.fail("dft_length must hold one value");
    length = l.get_int(0);
  }
  if (length < 1) ctx.fail("dft_length must be positive");
  bool inverse = ctx.attr_int("inverse", 0) != 0, onesided = ctx.attr_int("onesided", 0) != 0;
  if (onesided && im && !inverse) ctx.fail("onesided needs a real input");
  int64_t bins = onesided ? length / 2 + 1 : length;
  // The inverse with onesided keeps the first length/2 + 1 samples of the full inverse.
  int64_t computed = inverse ? length : bins;
  re = move_axis_last(g, re, axis);
  if (im) im = move_axis_last(g, im, axis);
  auto [yr, yi] = dft_last(g, re, im, length, computed, inverse);
  if (computed != bins) {
    yr = strided_slice(g, yr, int64_t(yr->shape.size() - 1), 0, bins, 1);
    yi = strided_slice(g, yi, int64_t(yi->shape.size() - 1), 0, bins, 1);
  }
  return {stack_complex(g, move_last_to(g, yr, axis), move_last_to(g, yi, axis))};
}

Outs lower_stft(OpContext& ctx) {
  Graph& g = ctx.g;
  Node* x = ctx.input(0);
  if (x->shape.size() != 3) ctx.fail("signal must be (batch, length, 1|2)");
  HostTensor step_t = ctx.const_input(1);
  if (step_t.numel() != 1) ctx.fail("frame_step must hold one value");
  int64_t step = step_t.get_int(0);
  Node* window = ctx.optional_input(2);
  int64_t frame_length = 0;
  if (ctx.optional_input(3)) frame_length = ctx.const_input(3).get_int(0);
  else if (window) frame_length = window->shape.empty() ? 0 : window->shape[0];
  else frame_length = x->shape[1];
  if (window && window->shape != Shape{frame_length}) ctx.fail("window must have frame_length elements");
  if (step < 1 || frame_length < 1 || frame_length > x->shape[1]) ctx.fail("frame_step / frame_length do not fit the signal");
  bool onesided = ctx.attr_int("onesided", 1) != 0;
  auto [re, im] = complex_parts(ctx, x);  // (batch, length)
  if (onesided && im) ctx.fail("onesided needs a real signal");
  // Frames (batch, frames, frame_length) as a strided window view.
  Node* fr = g.window(re, {frame_length}, {step}, {1});
  Node* fi = im ? g.window(im, {frame_length}, {step}, {1}) : nullptr;
  if (window) {
    fr = g.binary(Op::Mul, fr, window);
    if (fi) fi = g.binary(Op::Mul, fi, window);
  }
  int64_t bins = onesided ? frame_length / 2 + 1 : frame_length;
  auto [yr, yi] = dft_last(g, fr, fi, frame_length, bins, false);
  return {stack_complex(g, yr, yi)};
}

}  // namespace

void add_signal_ops(OpTable& t) {
  t["DFT"] = lower_dft;
  t["STFT"] = lower_stft;
}

}  // namespace edgec::onnx_frontend
