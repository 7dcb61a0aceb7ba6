// Fusion decisions: chains fuse, conv + bias + activation is one kernel, reduces that
// feed reduces get their own kernel.
#include <doctest/doctest.h>

#include "codegen/kernel_ir.h"
#include "graph/graph.h"
#include "schedule/schedule.h"

using namespace edgec;

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
  std::vector<uint8_t> wbytes(4 * 2 * 3 * 3 * sizeof(float), 0);
  Node* w = g.weight(DType::F32, {4, 2, 3, 3}, wbytes, "w");
  std::vector<uint8_t> bbytes(4 * sizeof(float), 0);
  Node* bias = g.weight(DType::F32, {4, 1, 1}, bbytes, "b");
  // (1,2,5,5) -pad-> window 3x3 -> (1,2,5,5,3,3) -> (1,1,2,5,5,3,3) expand over 4 outputs.
  Node* xp = g.pad(x, {0, 0, 1, 1}, {0, 0, 1, 1});
  Node* win = g.window(xp, {3, 3}, {1, 1}, {1, 1});
  Node* xv = g.expand(g.reshape(win, {1, 1, 2, 5, 5, 3, 3}), {1, 4, 2, 5, 5, 3, 3});
  Node* wv = g.expand(g.reshape(w, {1, 4, 2, 1, 1, 3, 3}), {1, 4, 2, 5, 5, 3, 3});
  Node* conv = g.reshape(g.reduce(Op::ReduceSum, g.binary(Op::Mul, xv, wv), {2, 5, 6}), {1, 4, 5, 5});
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
