// ops_grid_sample.cc — GridSample (nearest / linear / cubic, zeros / border / reflection
// padding, align_corners, 2-D and 3-D) following the ONNX reference implementation.
//
// Sampling positions come from the grid input, so they are known only at run time. Each
// spatial dim gets its taps (index, coefficient, in-range mask); every combination of one
// tap per dim reads the input, its spatial dims flattened to one axis, with the Gather
// primitive at the flat index: O(taps) per output point and channel (1, 2^k or 4^k).
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

  // Per spatial dim d: its taps, each an in-range index (I64, 0 where the tap is outside),
  // a coefficient and a validity mask, all (N, O...).
  struct Tap { Node* idx; Node* coeff; Node* valid; };
  std::vector<std::vector<Tap>> dim_taps(k);
  Shape ps{n};
  ps.insert(ps.end(), out_pts.begin(), out_pts.end());
  for (size_t d = 0; d < k; ++d) {
    int64_t len = x->shape[2 + d];
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
    for (auto [idx, coeff] : taps) {
      if (padding == "border") idx = g.binary(Op::Min, g.binary(Op::Max, idx, m.c(0)), m.c(double(len - 1)));
      else if (padding == "reflection") idx = m.trunc(m.reflect(idx, lo, hi));
      // A tap reads only when its index is in [0, len): outside (padding zeros, or a NaN
      // coordinate under any padding) it contributes 0. The index is made 0 there before
      // the cast so that the integer conversion never sees a NaN or a huge value.
      Node* valid = g.binary(Op::And, g.unary(Op::Not, m.lt(idx, m.c(0))), m.lt(idx, m.c(double(len))));
      Node* safe = g.cast(g.where(valid, idx, m.c(0)), DType::I64);
      dim_taps[d].push_back({safe, coeff, valid});
    }
  }
  // The input with its spatial dims flattened into one axis: (N, C, P). Each combination
  // of one tap per spatial dim reads x at the flat index sum_d idx_d * stride_d with the
  // Gather primitive (one load per output element) and is weighted by the product of the
  // taps' coefficients; a combination with an invalid tap contributes 0 (Where, not a
  // multiplication by 0, so an inf or NaN in x at the clamped position does not leak).
  int64_t plane = 1;
  for (size_t d = 0; d < k; ++d) plane *= x->shape[2 + d];
  int64_t q = numel(out_pts);
  Shape os{n, ch};
  os.insert(os.end(), out_pts.begin(), out_pts.end());
  if (plane == 0 || q == 0 || n == 0 || ch == 0) return {g.expand(scalar(g, 0.0, x), os)};  // nothing to read
  Node* xf = g.reshape(x, Shape{n, ch, plane});
  Shape q1{n, 1, q}, qc{n, ch, q};
  std::vector<int64_t> strides(k, 1);
  for (size_t d = k - 1; d-- > 0;) strides[d] = strides[d + 1] * x->shape[3 + d];
  Node* zero = scalar(g, 0.0, x);
  Node* y = nullptr;
  std::vector<size_t> pick(k, 0);
  for (;;) {
    Node *flat = nullptr, *coeff = nullptr, *valid = nullptr;
    for (size_t d = 0; d < k; ++d) {
      const Tap& tp = dim_taps[d][pick[d]];
      Node* term = strides[d] == 1 ? tp.idx : g.binary(Op::Mul, tp.idx, scalar(g, double(strides[d]), tp.idx));
      flat = flat ? g.binary(Op::Add, flat, term) : term;
      coeff = coeff ? m.mul(coeff, tp.coeff) : tp.coeff;
      valid = valid ? g.binary(Op::And, valid, tp.valid) : tp.valid;
    }
    Node* val = g.gather(xf, g.expand(g.reshape(flat, q1), qc), 2);  // (N, C, Q)
    if (!coeff->shape.empty()) val = g.binary(Op::Mul, val, g.reshape(g.cast(coeff, x->dtype), q1));  // nearest: 1
    Node* term = g.where(g.reshape(valid, q1), val, zero);
    y = y ? g.binary(Op::Add, y, term) : term;
    size_t d = k;
    while (d-- > 0) {
      if (++pick[d] < dim_taps[d].size()) break;
      pick[d] = 0;
    }
    if (d == size_t(-1)) break;
  }
  y = g.reshape(y, os);
  return {y};
}

}  // namespace

void add_grid_sample_ops(OpTable& t) { t["GridSample"] = lower_grid_sample; }

}  // namespace edgec::onnx_frontend
