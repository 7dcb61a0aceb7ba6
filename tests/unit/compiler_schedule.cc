// Fusion decisions: chains fuse, conv + bias + activation is one kernel, reduces that
// feed reduces get their own kernel.
#include <doctest/doctest.h>

#include <tuple>

#include "codegen/kernel_ir.h"
#include "graph/graph.h"
#include "schedule/schedule.h"

using namespace edgec;

namespace {
// conv (1, 2, 5, 5) -> (1, 4, 5, 5) as the frontend lowers it, before any epilogue:
// pad, 3x3 window -> (1,2,5,5,3,3) -> (1,1,2,5,5,3,3) expanded over the 4 outputs.
Node* small_conv(Graph& g, Node* x) {
  std::vector<uint8_t> wbytes(4 * 2 * 3 * 3 * sizeof(float), 0);
  Node* w = g.weight(DType::F32, {4, 2, 3, 3}, wbytes, "w");
  Node* xp = g.pad(x, {0, 0, 1, 1}, {0, 0, 1, 1});
  Node* win = g.window(xp, {3, 3}, {1, 1}, {1, 1});
  Node* xv = g.expand(g.reshape(win, {1, 1, 2, 5, 5, 3, 3}), {1, 4, 2, 5, 5, 3, 3});
  Node* wv = g.expand(g.reshape(w, {1, 4, 2, 1, 1, 3, 3}), {1, 4, 2, 5, 5, 3, 3});
  return g.reshape(g.reduce(Op::ReduceSum, g.binary(Op::Mul, xv, wv), {2, 5, 6}), {1, 4, 5, 5});
}
Node* sigmoid(Graph& g, Node* x) {
  Node* one = g.constant(1.0, DType::F32);
  return g.unary(Op::Recip, g.binary(Op::Add, one, g.unary(Op::Exp, g.unary(Op::Neg, x))));
}
}  // namespace

TEST_CASE("an elementwise chain is one kernel") {
  Graph g;
  Node* x = g.input("x", DType::F32, {2, 3});
  Node* y = g.unary(Op::Exp, g.binary(Op::Mul, g.binary(Op::Add, x, g.constant(1.0, DType::F32)), x));
  y = g.binary(Op::Max, y, g.constant(0.0, DType::F32));
  g.add_output("y", y);
  Schedule s = schedule_graph(g);
  CHECK(s.kernels.size() == 1);
  CHECK(s.kernels[0].inputs.size() == 1);
}

TEST_CASE("conv + bias + relu is one kernel") {
  Graph g;
  Node* x = g.input("x", DType::F32, {1, 2, 5, 5});
  std::vector<uint8_t> bbytes(4 * sizeof(float), 0);
  Node* bias = g.weight(DType::F32, {4, 1, 1}, bbytes, "b");
  Node* conv = small_conv(g, x);
  Node* y = g.binary(Op::Max, g.binary(Op::Add, conv, bias), g.constant(0.0, DType::F32));
  g.add_output("y", y);
  Schedule s = schedule_graph(g);
  REQUIRE(s.kernels.size() == 1);
  KernelIR ir = build_kernel_ir(s, s.kernels[0]);
  CHECK(ir.has_reduce());
  CHECK(ir.reduce_extents == Shape{2, 3, 3});
  CHECK(ir.args.size() == 4);  // out, x, w, b
}

TEST_CASE("softmax: the max and the sum are realized, the rest fuses") {
  Graph g;
  Node* x = g.input("x", DType::F32, {4, 10});
  Node* m = g.reduce(Op::ReduceMax, x, {1});
  Node* e = g.unary(Op::Exp, g.binary(Op::Sub, x, m));
  Node* sum = g.reduce(Op::ReduceSum, e, {1});
  g.add_output("y", g.binary(Op::Div, e, sum));
  Schedule s = schedule_graph(g);
  // max, sum(exp(x - max)), exp(x - max) / sum
  CHECK(s.kernels.size() == 3);
  for (const ScheduledKernel& k : s.kernels) {
    KernelIR ir = build_kernel_ir(s, k);
    CHECK(ir.result != nullptr);
  }
}

namespace {
// Softmax as the frontend lowers it (ops_nn.cc lower_softmax).
Node* softmax(Graph& g, Node* x, int64_t axis) {
  Node* e = g.unary(Op::Exp, g.binary(Op::Sub, x, g.reduce(Op::ReduceMax, x, {axis})));
  return g.binary(Op::Mul, e, g.unary(Op::Recip, g.reduce(Op::ReduceSum, e, {axis})));
}
ScheduleOptions fused_rows() {
  ScheduleOptions o;
  o.fuse_row_reductions = true;
  return o;
}
}  // namespace

TEST_CASE("fuse_row_reductions: a softmax is one row kernel, its exps staged in the output row") {
  Graph g;
  Node* x = g.input("x", DType::F32, {4, 10});
  g.add_output("y", softmax(g, x, 1));
  Schedule s = schedule_graph(g, fused_rows());
  REQUIRE(s.kernels.size() == 1);
  CHECK(s.kernels[0].row_stages.size() == 2);
  CHECK(s.kernels[0].inputs.size() == 1);
  CHECK(s.buffers.size() == 2);  // x and y: the max and the sum have no buffers
  KernelIR ir = build_kernel_ir(s, s.kernels[0]);
  REQUIRE(ir.is_row_kernel());
  CHECK(ir.row_dim == 1);
  CHECK(ir.row_stages[0].reduce_op == Op::ReduceMax);
  CHECK(ir.row_stages[1].reduce_op == Op::ReduceSum);
  CHECK(ir.row_stages[1].value->op == Op::Recip);
  REQUIRE(ir.row_staged != nullptr);
  CHECK(ir.row_staged->op == Op::Exp);
  CHECK(!ir.has_reduce());
}

TEST_CASE("fuse_row_reductions: rows along the innermost dim only") {
  Graph g;
  Node* x = g.input("x", DType::F32, {1, 21, 8, 8});
  g.add_output("y", softmax(g, x, 1));  // rows 64 elements apart: three kernels
  Node* z = g.input("z", DType::F32, {3, 10, 1});
  g.add_output("w", softmax(g, z, 1));  // only 1-dims after the axis: one row kernel
  Schedule s = schedule_graph(g, fused_rows());
  REQUIRE(s.kernels.size() == 4);
  for (size_t k = 0; k < 3; ++k) CHECK(s.kernels[k].row_stages.empty());
  CHECK(s.kernels[3].row_stages.size() == 2);
  KernelIR ir = build_kernel_ir(s, s.kernels[3]);
  CHECK(ir.row_dim == 1);
}

TEST_CASE("fuse_row_reductions: a max that another kernel reads keeps its own kernel") {
  Graph g;
  Node* x = g.input("x", DType::F32, {4, 10});
  Node* m = g.reduce(Op::ReduceMax, x, {1});
  Node* e = g.unary(Op::Exp, g.binary(Op::Sub, x, m));
  g.add_output("y", g.binary(Op::Mul, e, g.unary(Op::Recip, g.reduce(Op::ReduceSum, e, {1}))));
  g.add_output("z", g.binary(Op::Sub, x, m));
  Schedule s = schedule_graph(g, fused_rows());
  CHECK(s.kernels.size() == 4);  // max, sum, y, z: nothing fused
  for (const ScheduledKernel& k : s.kernels) CHECK(k.row_stages.empty());
}

TEST_CASE("fuse_row_reductions: a reduction read other than broadcast along the row is not a stage") {
  Graph g;
  Node* x = g.input("x", DType::F32, {4, 10});
  Node* m = g.reduce(Op::ReduceMax, x, {1});
  // The row maxima read transposed: (4, 1) -> (1, 4), broadcast to (10, 4), not the row's own.
  Node* mt = g.expand(g.permute(m, {1, 0}), {10, 4});
  g.add_output("y", g.binary(Op::Sub, g.permute(x, {1, 0}), mt));
  Schedule s = schedule_graph(g, fused_rows());
  CHECK(s.kernels.size() == 2);
  for (const ScheduledKernel& k : s.kernels) CHECK(k.row_stages.empty());
}

TEST_CASE("gather: the source is realized, the index and the gather fuse into the consumer") {
  Graph g;
  Node* x = g.input("x", DType::F32, {4, 10});
  Node* i = g.input("i", DType::I64, {4, 3});
  Node* src = g.unary(Op::Exp, x);  // a computed source gets a buffer of its own
  Node* idx = g.binary(Op::Add, i, g.constant(1.0, DType::I64));
  Node* y = g.unary(Op::Neg, g.gather(src, idx, 1));
  g.add_output("y", y);
  Schedule s = schedule_graph(g);
  REQUIRE(s.kernels.size() == 2);
  CHECK(s.kernels[0].root == src);
  KernelIR ir = build_kernel_ir(s, s.kernels[1]);
  CHECK(ir.args.size() == 3);  // out, src, i
  const Value* load = ir.result->srcs.at(0);
  REQUIRE(load->kind == Value::Kind::Load);
  REQUIRE(load->dynamic != nullptr);
  CHECK(load->dynamic->kind == Value::Kind::Alu);  // i + 1, fused
  CHECK(load->dynamic_stride == 1);
  CHECK(load->dynamic_extent == 10);
  CHECK(load->index.key() == Index(Index::var(0, 4) * 10).key());
  CHECK(to_string(ir).find("clamp(") != std::string::npos);
}


TEST_CASE("conv + x * sigmoid(x) is one kernel: an elementwise diamond is the epilogue") {
  Graph g;
  Node* x = g.input("x", DType::F32, {1, 2, 5, 5});
  Node* c = small_conv(g, x);
  g.add_output("y", g.binary(Op::Mul, c, sigmoid(g, c)));
  Schedule s = schedule_graph(g);
  CHECK(s.kernels.size() == 1);
}

TEST_CASE("a diamond whose exit feeds a pooling and a scaling is still the conv's epilogue") {
  // EfficientNet's squeeze-excite: s = silu(conv(x)); y = s * f(mean(s)). The SiLU is computed
  // once, in the conv's kernel, not recomputed by the pooling and by the scaling.
  Graph g;
  Node* x = g.input("x", DType::F32, {1, 2, 5, 5});
  Node* c = small_conv(g, x);
  Node* silu = g.binary(Op::Mul, c, sigmoid(g, c));
  Node* pooled = g.reduce(Op::ReduceSum, silu, {2, 3});
  g.add_output("y", g.binary(Op::Mul, silu, sigmoid(g, pooled)));
  Schedule s = schedule_graph(g);
  REQUIRE(s.kernels.size() == 3);  // conv + SiLU, pooling, scaling
  CHECK(s.kernels[0].root == silu);
  int exps = 0;
  for (const ScheduledKernel& k : s.kernels) {
    KernelIR ir = build_kernel_ir(s, k);
    for (const auto& v : ir.values) exps += v->kind == Value::Kind::Alu && v->op == Op::Exp;
  }
  CHECK(exps == 2);  // the conv's SiLU and the scale's sigmoid, once each
}

TEST_CASE("a diamond with a consumer outside it is not fused through") {
  Graph g;
  Node* x = g.input("x", DType::F32, {1, 2, 5, 5});
  Node* c = small_conv(g, x);
  Node* s1 = sigmoid(g, c);
  g.add_output("y", g.binary(Op::Mul, c, s1));
  g.add_output("s", s1);  // the sigmoid leaves the region too: two exits
  Schedule s = schedule_graph(g);
  CHECK(s.kernels.size() >= 2);
}

TEST_CASE("channels_last: conv intermediates are stored NHWC, the model's input and output are not") {
  Graph g;
  Node* x = g.input("x", DType::F32, {1, 2, 5, 5});
  Node* c1 = g.binary(Op::Max, small_conv(g, x), g.constant(0.0, DType::F32));
  // A second conv reads the first through its window.
  Node* c1p = g.pad(c1, {0, 0, 1, 1}, {0, 0, 1, 1});
  Node* win = g.window(c1p, {3, 3}, {1, 1}, {1, 1});
  Node* r = g.reduce(Op::ReduceSum, win, {4, 5});
  g.add_output("y", g.reshape(r, {1, 4, 5, 5}));
  ScheduleOptions o;
  o.channels_last = true;
  Schedule s = schedule_graph(g, o);
  int nhwc = 0;
  for (const ScheduledBuffer& b : s.buffers) {
    if (b.role != BufferRole::Intermediate) {
      CHECK(b.layout.empty());
      continue;
    }
    if (!b.layout.empty()) {
      ++nhwc;
      CHECK(b.layout == std::vector<int64_t>{0, 2, 3, 1});
      CHECK(b.stored_shape() == Shape{b.shape[0], b.shape[2], b.shape[3], b.shape[1]});
    }
  }
  CHECK(nhwc == 1);
  // The kernel writing it iterates in the stored order: channels innermost.
  for (const ScheduledKernel& k : s.kernels)
    if (!s.buffers[k.output].layout.empty()) CHECK(build_kernel_ir(s, k).out_shape == Shape{1, 5, 5, 4});
  // Without the option nothing changes.
  Schedule plain = schedule_graph(g);
  for (const ScheduledBuffer& b : plain.buffers) CHECK(b.layout.empty());
}

TEST_CASE("channels_last leaves 4-D tensors without a window alone (attention heads)") {
  Graph g;
  Node* q = g.input("q", DType::F32, {1, 4, 8, 16});
  Node* e = g.unary(Op::Exp, q);
  Node* sum = g.reduce(Op::ReduceSum, e, {3});
  g.add_output("y", g.binary(Op::Div, e, sum));
  ScheduleOptions o;
  o.channels_last = true;
  Schedule s = schedule_graph(g, o);
  for (const ScheduledBuffer& b : s.buffers) CHECK(b.layout.empty());
}

TEST_CASE("lane_stride: affine indices and blocks of 16 read by aligned vectors") {
  Index m = Index::var(0, 64), k = Index::var(1, 9);
  // A weight stored in panels of 16 output channels: (m/16)*144 + k*16 + m%16.
  Index panel = m.floordiv(16) * 144 + k * 16 + m.mod(16);
  CHECK(lane_stride(panel, 0, 16) == std::optional<int64_t>(1));
  CHECK(lane_stride(panel, 0, 8) == std::optional<int64_t>(1));
  CHECK(lane_stride(panel, 0, 4) == std::optional<int64_t>(1));
  CHECK(lane_stride(panel, 1, 16) == std::optional<int64_t>(16));  // affine in k
  // 32 lanes would cross a block: no constant stride.
  CHECK_FALSE(lane_stride(panel, 0, 32).has_value());
  // A dividend not aligned to the lanes (m + 3) may cross a block.
  Index shifted = (m + Index(3)).mod(16);
  CHECK_FALSE(lane_stride(shifted, 0, 16).has_value());
  // m / 2 repeats each element twice: no constant stride either.
  CHECK_FALSE(lane_stride(m.floordiv(2), 0, 16).has_value());
}

TEST_CASE("flops count only the products of a padded window that read the input") {
  // conv (1, 2, 5, 5) -> (1, 4, 5, 5), 3x3 window with `pad` on every side and `dilation`:
  // per dim the taps read the input for 4 + 5 + 4 outputs (pad 1) or 3 + 5 + 3 (pad 2,
  // dilation 2) of 15, all 15 unpadded; 2 FLOPs (multiply, add) per product, the padding's
  // select none.
  for (auto [pad, dilation, per_dim] : {std::tuple{1, 1, 13}, std::tuple{2, 2, 11}, std::tuple{0, 1, 0}}) {
    Graph g;
    const int64_t size = 5 + 2 * (dilation - pad);  // a 5x5 output
    Node* x = g.input("x", DType::F32, {1, 2, size, size});
    std::vector<uint8_t> wbytes(4 * 2 * 3 * 3 * sizeof(float), 0);
    Node* w = g.weight(DType::F32, {4, 2, 3, 3}, wbytes, "w");
    Node* xp = g.pad(x, {0, 0, pad, pad}, {0, 0, pad, pad});
    Node* win = g.window(xp, {3, 3}, {1, 1}, {dilation, dilation});
    Node* xv = g.expand(g.reshape(win, {1, 1, 2, 5, 5, 3, 3}), {1, 4, 2, 5, 5, 3, 3});
    Node* wv = g.expand(g.reshape(w, {1, 4, 2, 1, 1, 3, 3}), {1, 4, 2, 5, 5, 3, 3});
    g.add_output("y", g.reshape(g.reduce(Op::ReduceSum, g.binary(Op::Mul, xv, wv), {2, 5, 6}), {1, 4, 5, 5}));
    Schedule s = schedule_graph(g);
    REQUIRE(s.kernels.size() == 1);
    KernelIR ir = build_kernel_ir(s, s.kernels[0]);
    // 100 outputs x 2 channels x (inside (output, tap) pairs per output position)
    const int64_t pairs = pad == 0 ? 25 * 9 : int64_t(per_dim) * per_dim;
    INFO("pad " << pad << " dilation " << dilation);
    CHECK(ir.flops() == 2 * 4 * 2 * pairs);
  }
}

namespace {
// An 8-op elementwise chain over x (more than a recomputed value may have).
Node* costly_chain(Graph& g, Node* x) {
  Node* t = x;
  for (int i = 0; i < 4; ++i) t = g.binary(Op::Add, g.binary(Op::Mul, t, g.constant(1.5, DType::F32)), g.constant(0.25, DType::F32));
  return t;
}
}  // namespace

TEST_CASE("a shared value read at the same element of one kernel is computed there, not stored") {
  // The cubic weight polynomial reads its argument three times: one kernel computes it once.
  Graph g;
  Node* x = g.input("x", DType::F32, {2, 24});
  Node* t = costly_chain(g, x);
  Node* poly = g.binary(Op::Add, g.binary(Op::Mul, g.binary(Op::Mul, t, t), t), t);
  g.add_output("y", poly);
  Schedule s = schedule_graph(g);
  CHECK(s.kernels.size() == 1);
}

TEST_CASE("a costly shared value read by two kernels, or at two elements of one, is stored") {
  for (bool through_view : {false, true}) {
    Graph g;
    Node* x = g.input("x", DType::F32, {4, 4});
    Node* t = costly_chain(g, x);
    if (through_view) {
      g.add_output("y", g.binary(Op::Add, t, g.permute(t, {1, 0})));  // t[i][j] + t[j][i]
    } else {
      g.add_output("y", g.unary(Op::Exp, t));
      g.add_output("z", g.unary(Op::Neg, t));
    }
    Schedule s = schedule_graph(g);
    INFO("through a view: " << through_view);
    CHECK(s.kernels.size() == (through_view ? 2u : 3u));
  }
}

TEST_CASE("broadcast combinations of shared per-point values store those values, not the combinations") {
  // GridSample's tap combinations as ops_grid_sample.cc builds them: per point (N, 1, Q) and
  // spatial dim 4 taps (an index and a weight, each costly and read by 4 combinations); each
  // of the 16 combinations broadcasts index_y * 7 + index_x and weight_y * weight_x over the
  // channels. Stored as combinations: 32 values; stored per tap: 16, the combinations' 2-3
  // ops redone per channel.
  Graph g;
  Node* pts = g.input("p", DType::F32, {2, 1, 24});
  Node* x = g.input("x", DType::F32, {2, 3, 35});
  std::vector<Node*> idx[2], weight[2];
  for (int d = 0; d < 2; ++d)
    for (int tap = 0; tap < 4; ++tap) {
      Node* v = costly_chain(g, g.binary(Op::Add, pts, g.constant(d + 0.5 * tap, DType::F32)));
      idx[d].push_back(g.cast(g.unary(Op::Floor, v), DType::I64));
      weight[d].push_back(costly_chain(g, g.binary(Op::Sub, pts, g.constant(d + 0.5 * tap, DType::F32))));
    }
  Node* y = nullptr;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      Node* flat = g.binary(Op::Add, g.binary(Op::Mul, idx[0][i], g.constant(7, DType::I64)), idx[1][j]);
      Node* val = g.gather(x, g.expand(flat, {2, 3, 24}), 2);
      Node* term = g.binary(Op::Mul, val, g.binary(Op::Mul, weight[0][i], weight[1][j]));
      y = y ? g.binary(Op::Add, y, term) : term;
    }
  g.add_output("y", y);
  Schedule s = schedule_graph(g);
  CHECK(s.kernels.size() == 16 + 1);
  // Two broadcast combinations of two cheap shared indices store themselves: storing the
  // indices instead would be as many values and redo the combinations per channel.
  Graph one;
  Node* p1 = one.input("p", DType::F32, {2, 1, 24});
  Node* x1 = one.input("x", DType::F32, {2, 3, 35});
  Node* ia = one.cast(one.unary(Op::Floor, p1), DType::I64);
  Node* ib = one.cast(one.unary(Op::Ceil, p1), DType::I64);
  Node* flat = one.binary(Op::Add, one.binary(Op::Mul, ia, one.constant(7, DType::I64)), ib);
  Node* both = one.cast(one.binary(Op::Sub, ib, ia), DType::F32);
  one.add_output("y", one.binary(Op::Add, one.gather(x1, one.expand(flat, {2, 3, 24}), 2), both));
  Schedule s1 = schedule_graph(one);
  CHECK(s1.kernels.size() == 3);
  CHECK(s1.buffer_of(flat) >= 0);
  CHECK(s1.buffer_of(ia) < 0);
  CHECK(s1.buffer_of(ib) < 0);
}

TEST_CASE("a broadcast operand of a reduce is stored, not recomputed per repeat") {
  // A matrix product's scaled operand (Swin's q * scale): its one multiply recomputed in the
  // product's inner loop would run once per output column.
  Graph g;
  Node* x = g.input("x", DType::F32, {4, 1, 8});
  std::vector<uint8_t> wbytes(5 * 8 * sizeof(float), 0);
  Node* w = g.weight(DType::F32, {1, 5, 8}, wbytes, "w");
  Node* scaled = g.binary(Op::Mul, x, g.constant(0.5, DType::F32));
  g.add_output("y", g.reduce(Op::ReduceSum, g.binary(Op::Mul, g.expand(scaled, {4, 5, 8}), g.expand(w, {4, 5, 8})), {2}));
  Schedule s = schedule_graph(g);
  CHECK(s.kernels.size() == 2);
  CHECK(s.buffer_of(scaled) >= 0);
}

TEST_CASE("a shared value over a reduce keeps its kernel though one kernel reads it") {
  // A GRU's update gate z = sigmoid(product) read as (1 - z) * n + z * h in one kernel, which
  // computes another product: with z in it the kernel would hold two reduces.
  Graph g;
  Node* x = g.input("x", DType::F32, {4, 8});
  Node* y = g.input("y", DType::F32, {4, 8});
  Node* h = g.input("h", DType::F32, {4, 1});
  Node* one = g.constant(1.0, DType::F32);
  Node* pre = g.binary(Op::Add, g.binary(Op::Mul, g.reduce(Op::ReduceSum, x, {1}), g.constant(0.5, DType::F32)),
                       g.constant(0.25, DType::F32));
  Node* z = g.unary(Op::Recip, g.binary(Op::Add, one, g.unary(Op::Exp, g.unary(Op::Neg, pre))));
  Node* n = g.unary(Op::Tanh, g.reduce(Op::ReduceSum, y, {1}));
  g.add_output("out", g.binary(Op::Add, g.binary(Op::Mul, g.binary(Op::Sub, one, z), n), g.binary(Op::Mul, z, h)));
  Schedule s = schedule_graph(g);
  CHECK(s.kernels.size() == 2);
  CHECK(s.buffer_of(z) >= 0);
}

TEST_CASE("a Concat that one kernel reads twice at one element is stored") {
  // Basic Pitch's CQT: a Concat of pieces squared by a reduce. Stored, each piece is a kernel
  // writing its slice; fused, every element of the reader would select among the pieces.
  Graph g;
  Node* a = costly_chain(g, g.input("a", DType::F32, {2, 4}));
  Node* b = costly_chain(g, g.input("b", DType::F32, {2, 4}));
  Node* concat = g.binary(Op::Add, g.pad(a, {0, 0}, {0, 4}), g.pad(b, {0, 4}, {0, 0}));
  g.add_output("y", g.reduce(Op::ReduceSum, g.binary(Op::Mul, concat, concat), {1}));
  Schedule s = schedule_graph(g);
  CHECK(s.buffer_of(concat) >= 0);
}
