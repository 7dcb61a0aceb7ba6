// Primitive graph: builder shape checks, the host interpreter on hand-computed examples,
// and constant folding.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "graph/graph.h"

using namespace edgec;

namespace {

Node* f32(Graph& g, const Shape& shape, const std::vector<double>& v) {
  return g.weight(HostTensor::from_doubles(DType::F32, shape, v));
}
Node* i64(Graph& g, const Shape& shape, const std::vector<int64_t>& v) {
  return g.weight(HostTensor::from_ints(DType::I64, shape, v));
}
std::vector<double> values(Graph& g, Node* n) { return g.evaluate(n).to_doubles(); }
std::vector<int64_t> ints(Graph& g, Node* n) { return g.evaluate(n).to_ints(); }

}  // namespace

TEST_CASE("graph: builders infer shapes and reject bad ones") {
  Graph g;
  Node* x = g.input("x", DType::F32, {2, 3});
  Node* y = g.input("y", DType::F32, {3});
  Node* s = g.binary(Op::Add, x, y);
  CHECK(s->shape == Shape{2, 3});
  // Both operands arrive at the node with the broadcast shape.
  CHECK(s->srcs[1]->op == Op::Expand);
  CHECK(s->srcs[1]->srcs[0]->op == Op::Reshape);
  CHECK(s->srcs[1]->srcs[0]->shape == Shape{1, 3});
  CHECK(g.binary(Op::CmpLt, x, y)->dtype == DType::Bool);

  CHECK_THROWS_AS(g.binary(Op::Add, x, g.input("z", DType::F32, {4})), CompileError);
  CHECK_THROWS_AS(g.binary(Op::Add, x, g.input("i", DType::I32, {2, 3})), CompileError);
  CHECK_THROWS_AS(g.unary(Op::Exp, g.input("j", DType::I32, {2})), CompileError);
  CHECK_THROWS_AS(g.where(x, x, x), CompileError);  // condition must be bool
  CHECK_THROWS_AS(g.reshape(x, {4}), CompileError);
  CHECK_THROWS_AS(g.permute(x, {0, 0}), CompileError);
  CHECK_THROWS_AS(g.expand(x, {4, 3}), CompileError);
  CHECK_THROWS_AS(g.pad(x, {0, -1}, {0, 0}), CompileError);
  CHECK_THROWS_AS(g.shrink(x, {0, 2}, {2, 4}), CompileError);
  CHECK_THROWS_AS(g.window(x, {4}, {1}, {1}), CompileError);
  CHECK_THROWS_AS(g.reduce(Op::ReduceSum, x, {2}), CompileError);

  CHECK(g.reduce(Op::ReduceMax, x, {-1})->shape == Shape{2, 1});
  CHECK(g.permute(x, {1, 0})->shape == Shape{3, 2});
  CHECK(g.pad(x, {1, 0}, {0, 2})->shape == Shape{3, 5});
  CHECK(g.shrink(x, {0, 1}, {1, 3})->shape == Shape{1, 2});
  // Window over the last dim: O = (3 - 2*(2-1) - 1)/1 + 1 = 1 window of 2 taps.
  CHECK(g.window(x, {2}, {1}, {2})->shape == Shape{2, 1, 2});
  // No-op views return their input.
  CHECK(g.reshape(x, {2, 3}) == x);
  CHECK(g.permute(x, {0, 1}) == x);
  CHECK(g.cast(x, DType::F32) == x);
}

TEST_CASE("graph: evaluate movement ops") {
  Graph g;
  Node* x = f32(g, {2, 3}, {1, 2, 3, 4, 5, 6});
  CHECK(values(g, g.permute(x, {1, 0})) == std::vector<double>{1, 4, 2, 5, 3, 6});
  CHECK(values(g, g.flip(x, {1})) == std::vector<double>{3, 2, 1, 6, 5, 4});
  CHECK(values(g, g.shrink(x, {1, 1}, {2, 3})) == std::vector<double>{5, 6});
  CHECK(values(g, g.pad(x, {0, 1}, {0, 1}, -1)) ==
        std::vector<double>{-1, 1, 2, 3, -1, -1, 4, 5, 6, -1});
  CHECK(values(g, g.broadcast_to(f32(g, {3}, {7, 8, 9}), {2, 3})) == std::vector<double>{7, 8, 9, 7, 8, 9});
  CHECK(values(g, g.expand(f32(g, {2, 1}, {1, 2}), {2, 2})) == std::vector<double>{1, 1, 2, 2});
}

TEST_CASE("graph: evaluate window") {
  Graph g;
  Node* x = f32(g, {1, 5}, {0, 1, 2, 3, 4});
  // kernel 2, stride 2, dilation 1: windows start at 0 and 2.
  Node* w = g.window(x, {2}, {2}, {1});
  CHECK(w->shape == Shape{1, 2, 2});
  CHECK(values(g, w) == std::vector<double>{0, 1, 2, 3});
  // kernel 2, stride 1, dilation 3: taps o and o+3 for o in {0, 1}.
  Node* d = g.window(x, {2}, {1}, {3});
  CHECK(d->shape == Shape{1, 2, 2});
  CHECK(values(g, d) == std::vector<double>{0, 3, 1, 4});
  // 2-D: 3x3 input, 2x2 kernel -> (2,2) positions x (2,2) taps.
  Node* m = g.window(f32(g, {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), {2, 2}, {1, 1}, {1, 1});
  CHECK(m->shape == Shape{2, 2, 2, 2});
  CHECK(values(g, g.reduce(Op::ReduceSum, m, {2, 3})) == std::vector<double>{12, 16, 24, 28});
}

TEST_CASE("graph: evaluate reduce, broadcasting, dtypes") {
  Graph g;
  Node* x = f32(g, {2, 3}, {1, 5, 3, 4, 2, 6});
  CHECK(values(g, g.reduce(Op::ReduceMax, x, {1})) == std::vector<double>{5, 6});
  CHECK(values(g, g.reduce(Op::ReduceSum, x, {0})) == std::vector<double>{5, 7, 9});
  CHECK(values(g, g.reduce(Op::ReduceSum, x, {0, 1})) == std::vector<double>{21});
  CHECK(values(g, g.binary(Op::Mul, x, f32(g, {2, 1}, {10, -1}))) ==
        std::vector<double>{10, 50, 30, -4, -2, -6});

  // float32 rounds after every op: 1e8 + 1 is 1e8 in float32.
  Node* big = g.binary(Op::Add, f32(g, {}, {1e8}), g.constant(1, DType::F32));
  CHECK(values(g, big)[0] == 1e8);

  // Integer division truncates toward zero; Mod takes the dividend's sign; int32 wraps.
  Node* a = g.weight(HostTensor::from_ints(DType::I32, {3}, {-7, 7, 2147483647}));
  Node* b = g.weight(HostTensor::from_ints(DType::I32, {3}, {2, -2, 1}));
  CHECK(ints(g, g.binary(Op::Div, a, b)) == std::vector<int64_t>{-3, -3, 2147483647});
  CHECK(ints(g, g.binary(Op::Mod, a, b)) == std::vector<int64_t>{-1, 1, 0});
  CHECK(ints(g, g.binary(Op::Add, a, b)) == std::vector<int64_t>{-5, 5, -2147483647 - 1});
  // int64 stays exact beyond 2^53.
  Node* l = i64(g, {1}, {(int64_t(1) << 60) + 1});
  CHECK(ints(g, g.binary(Op::Add, l, l))[0] == (int64_t(1) << 61) + 2);

  Node* c = g.binary(Op::CmpLt, x, g.constant(4, DType::F32));
  CHECK(g.evaluate(c).dtype == DType::Bool);
  CHECK(ints(g, c) == std::vector<int64_t>{1, 0, 1, 0, 1, 0});
  CHECK(values(g, g.where(c, x, g.constant(0, DType::F32))) == std::vector<double>{1, 0, 3, 0, 2, 0});
  CHECK(ints(g, g.cast(f32(g, {3}, {-1.7, 2.5, 300}), DType::U8)) == std::vector<int64_t>{0, 2, 255});
  CHECK(values(g, g.cast(f32(g, {1}, {0.1}), DType::F16))[0] == doctest::Approx(0.0999755859375));
  CHECK(values(g, g.reduce(Op::ReduceMax, g.shrink(x, {0, 0}, {2, 0}), {1})) ==
        std::vector<double>{-INFINITY, -INFINITY});
}

TEST_CASE("graph: evaluate with bound inputs") {
  Graph g;
  Node* x = g.input("x", DType::F32, {2});
  Node* y = g.unary(Op::Sqrt, g.binary(Op::Mul, x, x));
  CHECK_THROWS_AS(g.evaluate(y), CompileError);
  CHECK_FALSE(g.is_constant(y));
  HostTensor in = HostTensor::from_doubles(DType::F32, {2}, {-3, 4});
  CHECK(g.evaluate(y, {in}).to_doubles() == std::vector<double>{3, 4});
}

TEST_CASE("graph: fold_constants keeps expands of small constants as views") {
  Graph g;
  Node* x = g.input("x", DType::F32, {4, 4});
  Node* w = f32(g, {4}, {1, 2, 3, 4});
  // Weight preprocessing: (w * 2) transposed to a column -> folds into a 4-element Weight.
  Node* w2 = g.reshape(g.binary(Op::Mul, w, g.constant(2, DType::F32)), {4, 1});
  // Expand of a scalar plus one: would materialize 16 elements from 1, must stay.
  Node* ones = g.binary(Op::Add, g.constant(1, DType::F32, {4, 4}), g.constant(1, DType::F32, {4, 4}));
  Node* y = g.binary(Op::Add, g.binary(Op::Mul, x, w2), ones);
  g.add_output("y", y);
  Node* mul = y->srcs[0];
  Node* folded = mul->srcs[1]->srcs[0];  // Expand(w2) -> w2
  CHECK(g.fold_constants() >= 1);
  CHECK(folded->op == Op::Weight);
  CHECK(folded->shape == Shape{4, 1});
  CHECK(g.evaluate(folded).to_doubles() == std::vector<double>{2, 4, 6, 8});
  CHECK(y->srcs[1]->op == Op::Add);  // the 4x4 ones stay computed from Consts
  CHECK(g.fold_constants() == 0);    // idempotent

  std::vector<double> in(16, 1.0);
  auto out = g.evaluate(y, {HostTensor::from_doubles(DType::F32, {4, 4}, in)}).to_doubles();
  CHECK(out[0] == 4);
  CHECK(out[15] == 10);
  // live_nodes: topological and only what reaches the output.
  auto live = g.live_nodes();
  for (size_t i = 1; i < live.size(); ++i) CHECK(live[i - 1]->id < live[i]->id);
  CHECK(std::find(live.begin(), live.end(), w) == live.end());
}

TEST_CASE("graph: half conversion") {
  CHECK(half_to_float(float_to_half(1.0f)) == 1.0f);
  CHECK(float_to_half(65504.0f) == 0x7bff);
  CHECK(float_to_half(1e6f) == 0x7c00);
  CHECK(half_to_float(0x0001) == std::ldexp(1.0f, -24));
  CHECK(float_to_half(std::ldexp(1.0f, -25)) == 0);  // tie rounds to even (0)
  CHECK(std::isnan(half_to_float(float_to_half(NAN))));
}

TEST_CASE("graph: gather builder checks and evaluation (clamped indices)") {
  Graph g;
  Node* x = g.input("x", DType::F32, {2, 3});
  Node* i = g.input("i", DType::I64, {2, 4});
  Node* y = g.gather(x, i, 1);
  CHECK(y->op == Op::Gather);
  CHECK(y->shape == Shape{2, 4});
  CHECK(y->dtype == DType::F32);
  CHECK(y->axes == std::vector<int64_t>{1});
  CHECK(std::string(op_name(Op::Gather)) == "Gather");
  CHECK_FALSE(is_elementwise(Op::Gather));
  CHECK_FALSE(is_movement(Op::Gather));
  CHECK_FALSE(is_reduce(Op::Gather));
  CHECK(g.gather(x, i, -1)->axes == std::vector<int64_t>{1});
  CHECK_THROWS_AS(g.gather(x, g.input("f", DType::F32, {2, 4}), 1), CompileError);   // float index
  CHECK_THROWS_AS(g.gather(x, g.input("u", DType::U8, {2, 4}), 1), CompileError);    // not i32/i64
  CHECK_THROWS_AS(g.gather(x, g.input("r", DType::I64, {8}), 0), CompileError);      // rank
  CHECK_THROWS_AS(g.gather(x, g.input("d", DType::I64, {3, 4}), 1), CompileError);   // dim 0 differs
  CHECK_THROWS_AS(g.gather(x, i, 2), CompileError);                                    // axis
  CHECK_THROWS_AS(g.gather(g.input("e", DType::F32, {2, 0}), i, 1), CompileError);   // empty axis
  // A Const source is the same Const in the index's shape.
  Node* c = g.gather(g.constant(7.0, DType::F32, {2, 3}), i, 1);
  CHECK(c->op == Op::Const);
  CHECK(c->shape == Shape{2, 4});

  // Along axis 1; indices out of range clamp to [0, 2].
  HostTensor xv = HostTensor::from_doubles(DType::F32, {2, 3}, {10, 11, 12, 20, 21, 22});
  HostTensor iv = HostTensor::from_ints(DType::I64, {2, 4}, {2, 0, 1, 5, -1, 1, 1, 2});
  CHECK(g.evaluate(y, {xv, iv}).to_doubles() == std::vector<double>{12, 10, 11, 12, 20, 21, 21, 22});
  // Along axis 0 with i32 indices of fewer rows than the source.
  Graph g2;
  Node* t = i64(g2, {3, 2}, {1, 2, 3, 4, 5, 6});
  Node* j = g2.weight(HostTensor::from_ints(DType::I32, {2, 2}, {2, 0, -3, 9}));
  Node* z = g2.gather(t, j, 0);
  CHECK(z->dtype == DType::I64);
  CHECK(ints(g2, z) == std::vector<int64_t>{5, 2, 1, 6});
  // Constant gathers fold into a weight.
  g2.add_output("z", z);
  CHECK(g2.fold_constants() == 1);
  CHECK(z->op == Op::Weight);
  CHECK(ints(g2, z) == std::vector<int64_t>{5, 2, 1, 6});
}
