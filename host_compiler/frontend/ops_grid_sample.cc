// ops_grid_sample.cc — GridSample (nearest / linear / cubic, zeros / border / reflection
// padding, align_corners, 2-D and 3-D) following the ONNX reference implementation.
//
// Sampling positions come from the grid input, so they are known only at run time. Each
// spatial dim gets a one-hot weight row over its input positions (the taps' coefficients
// at the taps' indices); the input is contracted with those rows one dim at a time. That
// costs O(input plane) per output point and channel: fine for small maps, slow for large
// ones — a data-dependent load primitive would make it O(taps).
#include <cmath>

#include "frontend/lowering.h"

namespace edgec::onnx_frontend {
namespace {

using Outs = std::vector<Node*>;

struct GsCtx {
  Graph& g;
  Node* like;  // float dtype of the coordinate math
  Node* c(double v) const { return scalar(g, v, like); }
  Node* add(Node* a, Node* b) const { return g.binary(Op::Add, a, b); }
  Node* sub(Node* a, Node* b) const { return g.binary(Op::Sub, a, b); }
  Node* mul(Node* a, Node* b) const { return g.binary(Op::Mul, a, b); }
  Node* lt(Node* a, Node* b) const { return g.binary(Op::CmpLt, a, b); }
  Node* trunc(Node* v) const { return g.where(lt(v, c(0)), g.unary(Op::Ceil, v), g.unary(Op::Floor, v)); }
  // The reference's _gs_reflect: reflect by the nearer border until inside [lo, hi].
  Node* reflect(Node* x, double lo, double hi) const {
    double range = hi - lo;
    if (range <= 0) return g.binary(Op::Min, g.binary(Op::Max, x, c(lo)), c(hi));
    auto fold = [&](Node* dx, bool from_lo) {
      Node* n = g.unary(Op::Floor, g.binary(Op::Div, dx, c(range)));
      Node* r = sub(dx, mul(n, c(range)));
      Node* odd = g.binary(Op::CmpEq, sub(n, mul(g.unary(Op::Floor, mul(n, c(0.5))), c(2))), c(1));
      Node* even_v = from_lo ? add(c(lo), r) : sub(c(hi), r);
      Node* odd_v = from_lo ? sub(c(hi), r) : add(c(lo), r);
      return g.where(odd, odd_v, even_v);
    };
    Node* below = fold(sub(c(lo), x), true);
    Node* above = fold(sub(x, c(hi)), false);
    return g.where(lt(x, c(lo)), below, g.where(lt(c(hi), x), above, x));
  }
};

Outs lower_grid_sample(OpContext& ctx) {
  Graph& g = ctx.g;
  Node *x = ctx.input(0), *grid = ctx.input(1);
  size_t r = x->shape.size();
  if (r < 3) ctx.fail("X must be (N, C, D1, ...)");
  size_t k = r - 2;
  int64_t n = x->shape[0], ch = x->shape[1];
  if (grid->shape.size() != r || grid->shape[0] != n || grid->shape[r - 1] != int64_t(k))
    ctx.fail("grid " + shape_str(grid->shape) + " does not fit X " + shape_str(x->shape));
  if (!is_float(x->dtype) || !is_float(grid->dtype)) ctx.fail("X and grid must be float tensors");
  std::string mode = ctx.attr_string("mode", ctx.opset >= 20 ? "linear" : "bilinear");
  if (mode == "bilinear") mode = "linear";
  if (mode == "bicubic") mode = "cubic";
  if (mode != "nearest" && mode != "linear" && mode != "cubic") ctx.fail("unknown mode '" + mode + "'");
  std::string padding = ctx.attr_string("padding_mode", "zeros");
  if (padding != "zeros" && padding != "border" && padding != "reflection") ctx.fail("unknown padding_mode '" + padding + "'");
  bool align = ctx.attr_int("align_corners", 0) != 0;
  Shape out_pts(grid->shape.begin() + 1, grid->shape.end() - 1);  // O...
  GsCtx m{g, grid};

  // Per spatial dim d: weights (N, O..., L_d) over its input positions.
  std::vector<Node*> weights(k);
  for (size_t d = 0; d < k; ++d) {
    int64_t len = x->shape[2 + d];
    Shape ps{n};
    ps.insert(ps.end(), out_pts.begin(), out_pts.end());
    // Grid components are (x, y[, z]): spatial dim d reads component k-1-d.
    Node* gv = g.reshape(strided_slice(g, grid, int64_t(r - 1), int64_t(k - 1 - d), 1, 1), ps);
    Node* v = align ? m.mul(m.mul(m.add(gv, m.c(1)), m.c(0.5)), m.c(double(len - 1)))
                    : m.mul(m.sub(m.mul(m.add(gv, m.c(1)), m.c(double(len))), m.c(1)), m.c(0.5));
    if (mode == "nearest") v = g.unary(Op::Round, v);
    double lo = align ? 0.0 : -0.5, hi = align ? double(len - 1) : double(len) - 0.5;
    if (padding == "border") {
      Node* outside = g.binary(Op::Or, m.lt(v, m.c(lo)), m.lt(m.c(hi), v));
      v = g.where(outside, g.binary(Op::Min, g.binary(Op::Max, v, m.c(0)), m.c(double(len - 1))), v);
    } else if (padding == "reflection") {
      v = m.reflect(v, lo, hi);
    }
    // Taps: (index, coefficient) with index integral floats.
    std::vector<std::pair<Node*, Node*>> taps;
    if (mode == "nearest") {
      taps.push_back({m.trunc(v), m.c(1)});
    } else {
      Node* x0 = g.unary(Op::Floor, v);
      Node* t = m.sub(v, x0);
      if (mode == "linear") {
        taps.push_back({x0, m.sub(m.c(1), t)});
        taps.push_back({m.add(x0, m.c(1)), t});
      } else {
        double a = -0.75;
        Node* t1 = m.add(t, m.c(1));
        Node* u = m.sub(m.c(1), t);
        Node* u1 = m.add(u, m.c(1));
        auto far = [&](Node* s) {  // ((a s - 5a) s + 8a) s - 4a
          return m.sub(m.mul(m.add(m.mul(m.sub(m.mul(m.c(a), s), m.c(5 * a)), s), m.c(8 * a)), s), m.c(4 * a));
        };
        auto near = [&](Node* s) {  // ((a + 2) s - (a + 3)) s s + 1
          return m.add(m.mul(m.mul(m.sub(m.mul(m.c(a + 2), s), m.c(a + 3)), s), s), m.c(1));
        };
        taps.push_back({m.sub(x0, m.c(1)), far(t1)});
        taps.push_back({x0, near(t)});
        taps.push_back({m.add(x0, m.c(1)), near(u)});
        taps.push_back({m.add(x0, m.c(2)), far(u1)});
      }
    }
    Shape ws = ps;
    ws.push_back(1);
    Node* pos = g.cast(iota(g, len, DType::I64, ws.size(), ws.size() - 1), grid->dtype);
    Node* w = nullptr;
    for (auto [idx, coeff] : taps) {
      Node* valid = nullptr;
      if (padding == "zeros") valid = g.binary(Op::And, g.unary(Op::Not, m.lt(idx, m.c(0))), m.lt(idx, m.c(double(len))));
      else if (padding == "border") idx = g.binary(Op::Min, g.binary(Op::Max, idx, m.c(0)), m.c(double(len - 1)));
      else idx = m.trunc(m.reflect(idx, lo, hi));
      Node* hit = g.binary(Op::CmpEq, g.reshape(idx, ws), pos);  // (N, O..., L)
      if (valid) hit = g.binary(Op::And, hit, g.reshape(valid, ws));
      Node* term = g.where(hit, coeff->shape.empty() ? coeff : g.reshape(coeff, ws), m.c(0));
      w = w ? m.add(w, term) : term;
    }
    weights[d] = g.cast(w, x->dtype);
  }
  // Contract the last spatial dim first: (N, C, O..., L0.., Lj) * w_j -> sum over Lj.
  Shape xs{n, ch};
  xs.insert(xs.end(), out_pts.size(), 1);
  xs.insert(xs.end(), x->shape.begin() + 2, x->shape.end());
  Node* y = g.reshape(x, xs);
  for (size_t d = k; d-- > 0;) {
    Shape wsh{n, 1};
    wsh.insert(wsh.end(), out_pts.begin(), out_pts.end());
    wsh.insert(wsh.end(), d, 1);
    wsh.push_back(x->shape[2 + d]);
    y = g.reduce(Op::ReduceSum, g.binary(Op::Mul, y, g.reshape(weights[d], wsh)), {-1});
    Shape s(y->shape.begin(), y->shape.end() - 1);
    y = g.reshape(y, s);
  }
  return {y};
}

}  // namespace

void add_grid_sample_ops(OpTable& t) { t["GridSample"] = lower_grid_sample; }

}  // namespace edgec::onnx_frontend
