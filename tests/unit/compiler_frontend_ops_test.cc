// Op lowerings beyond what the ONNX node tests pin down: the shared indexing helpers
// (reduce_prod, gather_positions, select_along, dilate_axis), the primitive forms chosen
// for cheap cases (Resize as views), tie and edge semantics (TopK, CumSum, Einsum), the
// ai.onnx.ml domain, and error messages that name the node, the op and the attribute; and
// the register tile the x86_64 (AVX2) cost model gives an imported 1x1 conv.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "codegen/backend.h"
#include "codegen/kernel_ir.h"
#include "codegen/llvm_backend.h"
#include "codegen/llvm_emit.h"
#include "codegen/target.h"
#include "frontend/lowering.h"
#include "frontend/onnx_importer.h"
#include "schedule/schedule.h"

using namespace edgec;
using namespace edgec::onnx_frontend;

namespace {

class Model {
 public:
  explicit Model(int64_t opset, const std::string& domain = "") {
    model_.set_ir_version(8);
    auto* o = model_.add_opset_import();
    o->set_domain(domain);
    o->set_version(opset);
  }
  void input(const std::string& name, const std::vector<int64_t>& dims, int elem = onnx::TensorProto::FLOAT) {
    auto* vi = model_.mutable_graph()->add_input();
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem);
    tt->mutable_shape();  // a scalar has a shape with no dims
    for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  }
  void output(const std::string& name) { model_.mutable_graph()->add_output()->set_name(name); }
  void init_i64(const std::string& name, const std::vector<int64_t>& dims, const std::vector<int64_t>& values) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    for (int64_t d : dims) t->add_dims(d);
    for (int64_t v : values) t->add_int64_data(v);
  }
  void init_f32(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& values) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    for (float v : values) t->add_float_data(v);
  }
  onnx::NodeProto* node(const std::string& op, std::vector<std::string> ins, std::vector<std::string> outs,
                        const std::string& name = "n", const std::string& domain = "") {
    auto* n = model_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name);
    n->set_domain(domain);
    for (auto& s : ins) n->add_input(s);
    for (auto& s : outs) n->add_output(s);
    return n;
  }
  static void attr(onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr(onnx::NodeProto* n, const std::string& name, float v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void attr(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  static void attr(onnx::NodeProto* n, const std::string& name, const std::string& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  }
  std::unique_ptr<Graph> import(const ImportOptions& options = {}) const {
    return import_onnx_model(model_.SerializeAsString(), "test.onnx", options);
  }
  std::string error() const {
    try {
      import();
    } catch (const CompileError& e) {
      return e.what();
    }
    return "(no error)";
  }

 private:
  onnx::ModelProto model_;
};

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::vector<double> run(const Graph& g, const std::vector<HostTensor>& inputs) {
  return g.evaluate(g.outputs()[0].node, inputs).to_doubles();
}

HostTensor f32(const Shape& shape, std::vector<double> v) { return HostTensor::from_doubles(DType::F32, shape, v); }

// The schedule as edgec makes it for a CPU target (driver/compile.cc): 4-D intermediates
// channels-last.
Schedule cpu_schedule(const Graph& g) {
  ScheduleOptions so;
  so.channels_last = true;
  return schedule_graph(g, so);
}

int count_ops(const Graph& g, bool (*pred)(Op)) {
  int n = 0;
  for (const Node* x : g.live_nodes()) n += pred(x->op);
  return n;
}

}  // namespace

TEST_CASE("frontend ops: reduce_prod is exact for integers and handles odd sizes") {
  Graph g;
  std::vector<int64_t> v;
  for (int64_t i = 0; i < 2 * 7 * 3; ++i) v.push_back(i % 5 - 2 + (i % 5 == 2));  // no zeros: -2..2 without 0
  Node* x = g.weight(HostTensor::from_ints(DType::I32, {2, 7, 3}, v));
  HostTensor p = g.evaluate(reduce_prod(g, x, {1}));
  CHECK(p.shape == Shape{2, 1, 3});
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t c = 0; c < 3; ++c) {
      int64_t want = 1;
      for (int64_t b = 0; b < 7; ++b) want *= v[size_t((a * 7 + b) * 3 + c)];
      CHECK(p.get_int(a * 3 + c) == want);
    }
  HostTensor all = g.evaluate(reduce_prod(g, x, {0, 1, 2}));
  CHECK(all.shape == Shape{1, 1, 1});
  int64_t want = 1;
  for (int64_t e : v) want = int64_t(int32_t(want * e));
  CHECK(all.get_int(0) == want);
  Node* b = g.weight(HostTensor::from_ints(DType::Bool, {2, 3}, {1, 1, 1, 1, 0, 1}));
  CHECK(g.evaluate(reduce_prod(g, b, {1})).to_ints() == std::vector<int64_t>{1, 0});
}

TEST_CASE("frontend ops: gather_positions picks views before selections") {
  Graph g;
  Node* x = g.input("x", DType::F32, {2, 4});
  HostTensor xv = f32({2, 4}, {0, 1, 2, 3, 10, 11, 12, 13});
  auto gather = [&](const std::vector<int64_t>& pos) { return g.evaluate(gather_positions(g, x, 1, pos), {xv}).to_doubles(); };
  // Repeat (nearest upsampling) is a reshape + expand view.
  Node* rep = gather_positions(g, x, 1, {0, 0, 1, 1, 2, 2, 3, 3});
  CHECK(rep->op == Op::Reshape);
  CHECK(rep->srcs[0]->op == Op::Expand);
  CHECK(gather({0, 0, 1, 1, 2, 2, 3, 3}) == std::vector<double>{0, 0, 1, 1, 2, 2, 3, 3, 10, 10, 11, 11, 12, 12, 13, 13});
  CHECK(gather({1, 3}) == std::vector<double>{1, 3, 11, 13});           // strided
  CHECK(gather({3, 0, 1}) == std::vector<double>{3, 0, 1, 13, 10, 11});  // joined runs
  CHECK(gather({2, 0, 3, 1, 2}) == std::vector<double>{2, 0, 3, 1, 2, 12, 10, 13, 11, 12});  // one-hot
}

TEST_CASE("frontend ops: select_along and wrap_negative") {
  Graph g;
  Node* table = g.weight(f32({2, 3}, {1, 2, 3, 4, 5, 6}));
  Node* idx = g.weight(HostTensor::from_ints(DType::I64, {2, 1}, {-1, 7}));
  // -1 wraps to 2; 7 is out of range and selects 0.
  CHECK(g.evaluate(select_along(g, table, 1, wrap_negative(g, idx, 3))).to_doubles() == std::vector<double>{3, 0});
  Node* flags = g.weight(HostTensor::from_ints(DType::Bool, {1, 3}, {0, 1, 0}));
  Node* one = g.weight(HostTensor::from_ints(DType::I32, {1, 1}, {1}));
  HostTensor sel = g.evaluate(select_along(g, flags, 1, one));
  CHECK(sel.dtype == DType::Bool);
  CHECK(sel.get_int(0) == 1);
}

TEST_CASE("frontend ops: dilate_axis") {
  Graph g;
  Node* x = g.weight(f32({1, 3}, {1, 2, 3}));
  HostTensor d = g.evaluate(dilate_axis(g, x, 1, 3));
  CHECK(d.shape == Shape{1, 7});
  CHECK(d.to_doubles() == std::vector<double>{1, 0, 0, 2, 0, 0, 3});
}

TEST_CASE("frontend ops: Resize nearest x2 is a view, linear x2 has no reduction") {
  for (const char* mode : {"nearest", "linear"}) {
    Model m(19);
    m.input("x", {1, 1, 3, 4});
    m.init_f32("roi", {0}, {});
    m.init_f32("scales", {4}, {1, 1, 2, 2});
    auto* n = m.node("Resize", {"x", "roi", "scales"}, {"y"}, "up");
    Model::attr(n, "mode", std::string(mode));
    m.output("y");
    auto g = m.import();
    const Node* y = g->outputs()[0].node;
    CHECK(y->shape == Shape{1, 1, 6, 8});
    CHECK(count_ops(*g, is_reduce) == 0);
    if (std::string(mode) == "nearest") CHECK(count_ops(*g, is_elementwise) == 0);
    std::vector<double> xv;
    for (int i = 0; i < 12; ++i) xv.push_back(i);
    std::vector<double> out = run(*g, {f32({1, 1, 3, 4}, xv)});
    if (std::string(mode) == "nearest") {
      CHECK(out[0] == 0);
      CHECK(out[1] == 0);
      CHECK(out[8 + 2] == 1);
      CHECK(out[47] == 11);
    } else {  // half_pixel: output 1 of a row reads 0.75 * x0 + 0.25 * x1
      CHECK(out[0] == doctest::Approx(0));
      CHECK(out[1] == doctest::Approx(0.25));
      CHECK(out[2] == doctest::Approx(0.75));
      CHECK(out[7] == doctest::Approx(3));
    }
  }
}

TEST_CASE("frontend ops: TopK orders ties by index, CumSum exclusive + reverse") {
  Model m(11);
  m.input("x", {1, 5});
  m.init_i64("k", {1}, {3});
  m.node("TopK", {"x", "k"}, {"v", "i"}, "top");
  m.output("v");
  m.output("i");
  auto g = m.import();
  HostTensor x = f32({1, 5}, {2, 7, 2, 7, 1});
  auto outs = g->evaluate({g->outputs()[0].node, g->outputs()[1].node}, {x});
  CHECK(outs[0].to_doubles() == std::vector<double>{7, 7, 2});
  CHECK(outs[1].to_ints() == std::vector<int64_t>{1, 3, 0});

  Model c(14);
  c.input("x", {4});
  c.init_i64("axis", {}, {0});
  auto* n = c.node("CumSum", {"x", "axis"}, {"y"}, "cs");
  Model::attr(n, "exclusive", int64_t(1));
  Model::attr(n, "reverse", int64_t(1));
  c.output("y");
  auto gc = c.import();
  CHECK(run(*gc, {f32({4}, {1, 2, 3, 4})}) == std::vector<double>{9, 7, 4, 0});
}

TEST_CASE("frontend ops: Einsum diagonal, trace and batched products") {
  auto einsum = [](const std::string& eq, const std::vector<Shape>& shapes) {
    Model m(12);
    std::vector<std::string> names;
    for (size_t i = 0; i < shapes.size(); ++i) {
      names.push_back("x" + std::to_string(i));
      m.input(names.back(), shapes[i]);
    }
    Model::attr(m.node("Einsum", names, {"y"}, "e"), "equation", eq);
    m.output("y");
    return m.import();
  };
  HostTensor sq = f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  auto diag = einsum("ii->i", {{3, 3}});
  CHECK(run(*diag, {sq}) == std::vector<double>{1, 5, 9});
  auto trace = einsum("ii", {{3, 3}});
  CHECK(run(*trace, {sq}) == std::vector<double>{15});
  auto bmm = einsum("bij,bjk->bik", {{2, 1, 2}, {2, 2, 1}});
  CHECK(run(*bmm, {f32({2, 1, 2}, {1, 2, 3, 4}), f32({2, 2, 1}, {5, 6, 7, 8})}) == std::vector<double>{17, 53});
}

TEST_CASE("frontend ops: the ai.onnx.ml domain imports without a default opset") {
  Model m(1, "ai.onnx.ml");
  m.input("x", {4});
  Model::attr(m.node("Binarizer", {"x"}, {"y"}, "bin", "ai.onnx.ml"), "threshold", 0.5f);
  m.output("y");
  auto g = m.import();
  CHECK(run(*g, {f32({4}, {0, 0.5, 0.7, 2})}) == std::vector<double>{0, 0, 1, 1});

  Model u(1, "ai.onnx.ml");
  u.input("x", {4});
  u.node("Normalizer", {"x"}, {"y"}, "norm", "ai.onnx.ml");
  u.output("y");
  CHECK(contains(u.error(), "node 'norm' (Normalizer): unsupported operator in domain 'ai.onnx.ml'"));

  Model d(1, "ai.onnx.ml");  // a default-domain node needs a default opset import
  d.input("x", {4});
  d.node("Relu", {"x"}, {"y"}, "relu");
  d.output("y");
  CHECK(contains(d.error(), "node 'relu' (Relu): the model imports no version of the default (ai.onnx) operator set"));
}

TEST_CASE("frontend ops: unsupported attribute values name the node, op and attribute") {
  auto resize_error = [](const std::string& attr, const std::string& value) {
    Model m(19);
    m.input("x", {1, 1, 2, 2});
    m.init_f32("roi", {0}, {});
    m.init_f32("scales", {4}, {1, 1, 2, 2});
    Model::attr(m.node("Resize", {"x", "roi", "scales"}, {"y"}, "up"), attr, value);
    m.output("y");
    return m.error();
  };
  CHECK(contains(resize_error("mode", "area"), "node 'up' (Resize): unknown mode 'area'"));
  CHECK(contains(resize_error("coordinate_transformation_mode", "odd"), "node 'up' (Resize): unknown coordinate_transformation_mode 'odd'"));
  CHECK(contains(resize_error("nearest_mode", "up"), "node 'up' (Resize): unknown nearest_mode 'up'"));

  Model gs(16);
  gs.input("x", {1, 1, 2, 2});
  gs.input("grid", {1, 2, 2, 2});
  Model::attr(gs.node("GridSample", {"x", "grid"}, {"y"}, "gs"), "padding_mode", std::string("wrap"));
  gs.output("y");
  CHECK(contains(gs.error(), "node 'gs' (GridSample): unknown padding_mode 'wrap'"));

  Model ra(16);
  ra.input("x", {1, 1, 4, 4});
  ra.input("rois", {1, 4});
  ra.input("b", {1}, onnx::TensorProto::INT64);
  ra.node("RoiAlign", {"x", "rois", "b"}, {"y"}, "roi");
  ra.output("y");
  CHECK(contains(ra.error(), "node 'roi' (RoiAlign): sampling_ratio 0"));

  Model bs(18);
  bs.input("x", {4}, onnx::TensorProto::UINT8);
  bs.input("s", {4}, onnx::TensorProto::UINT8);
  Model::attr(bs.node("BitShift", {"x", "s"}, {"y"}, "sh"), "direction", std::string("UP"));
  bs.output("y");
  CHECK(contains(bs.error(), "node 'sh' (BitShift): direction must be LEFT or RIGHT, got 'UP'"));

  Model sc(18);
  sc.input("x", {4});
  sc.init_i64("i", {1}, {0});
  sc.init_f32("u", {1}, {1});
  Model::attr(sc.node("ScatterElements", {"x", "i", "u"}, {"y"}, "sc"), "reduction", std::string("avg"));
  sc.output("y");
  CHECK(contains(sc.error(), "node 'sc' (ScatterElements): unsupported reduction 'avg'"));
}

TEST_CASE("frontend ops: If / Loop unroll at compile time") {
  // y = If(c, then: -x, else: |x|). A condition known at compile time (frozen by
  // --const-input) imports the chosen branch only; one computed at run time imports both and
  // selects (the bundle has no branches); branches whose outputs differ in shape are refused
  // naming the model input the condition depends on and the flag that freezes it.
  auto add_if = [](Model& m, const std::string& cond, const char* else_op = "Abs") {
    auto* n = m.node("If", {cond}, {"y"}, "branch");
    for (const char* branch : {"then_branch", "else_branch"}) {
      auto* a = n->add_attribute();
      a->set_name(branch);
      a->set_type(onnx::AttributeProto::GRAPH);
      auto* sub = a->mutable_g();
      auto* op = sub->add_node();
      const bool then = std::string(branch) == "then_branch";
      op->set_op_type(then ? "Neg" : else_op);
      op->add_input("x");  // from the enclosing scope
      if (!then && std::string(else_op) == "Concat") {
        op->add_input("x");
        auto* axis = op->add_attribute();
        axis->set_name("axis");
        axis->set_type(onnx::AttributeProto::INT);
        axis->set_i(0);
      }
      op->add_output(std::string(branch) + "_y");
      sub->add_output()->set_name(std::string(branch) + "_y");
    }
    m.output("y");
  };
  const auto bool_scalar = [](int v) { return HostTensor::from_ints(DType::Bool, {}, {v}); };
  Model m(13);
  m.input("c", {}, onnx::TensorProto::BOOL);
  m.input("x", {2});
  add_if(m, "c");
  INFO(m.error());
  for (int c : {0, 1}) {
    ImportOptions frozen;  // frozen, only the chosen branch is imported
    frozen.constant_inputs["c"] = bool_scalar(c);
    auto g = m.import(frozen);
    CHECK(run(*g, {f32({2}, {-1, 2})}) == (c ? std::vector<double>{1, -2} : std::vector<double>{1, 2}));
    auto both = m.import();  // computed at run time: both branches, selected
    CHECK(run(*both, {bool_scalar(c), f32({2}, {-1, 2})}) == (c ? std::vector<double>{1, -2} : std::vector<double>{1, 2}));
  }
  // Silero VAD's form: the condition compares a sample-rate input with 16000; here the else
  // branch gives 4 values where the then branch gives 2.
  Model rate(13);
  rate.input("x", {2});
  rate.input("sr", {}, onnx::TensorProto::INT64);
  rate.init_i64("r16k", {}, {16000});
  rate.node("Equal", {"sr", "r16k"}, {"is_16k"}, "eq");
  add_if(rate, "is_16k", "Concat");
  INFO(rate.error());
  CHECK(contains(rate.error(), "node 'branch' (If): the condition is computed at run time and output 0 differs between "
                               "the branches"));
  CHECK(contains(rate.error(), "(--const-input sr=FILE.npy)"));

  // Loop with a constant trip count: y = x + 0 + 1 + 2, scan output stacks the iterations.
  Model l(13);
  l.input("x", {1});
  l.init_i64("M", {}, {3});
  auto* loop = l.node("Loop", {"M", "", "x"}, {"y", "ys"}, "loop");
  auto* a = loop->add_attribute();
  a->set_name("body");
  a->set_type(onnx::AttributeProto::GRAPH);
  auto* body = a->mutable_g();
  for (const char* in : {"i", "cond_in", "acc"}) body->add_input()->set_name(in);
  auto add_node = [&](const std::string& op, std::vector<std::string> ins, const std::string& out) {
    auto* nd = body->add_node();
    nd->set_op_type(op);
    for (auto& s : ins) nd->add_input(s);
    nd->add_output(out);
    return nd;
  };
  Model::attr(add_node("Cast", {"i"}, "fi"), "to", int64_t(onnx::TensorProto::FLOAT));
  add_node("Add", {"acc", "fi"}, "acc_out");
  add_node("Identity", {"cond_in"}, "cond_out");
  for (const char* out : {"cond_out", "acc_out", "acc_out"}) body->add_output()->set_name(out);
  l.output("y");
  l.output("ys");
  auto g = l.import();
  auto outs = g->evaluate({g->outputs()[0].node, g->outputs()[1].node}, {f32({1}, {10})});
  CHECK(outs[0].to_doubles() == std::vector<double>{13});
  CHECK(outs[1].shape == Shape{3, 1});
  CHECK(outs[1].to_doubles() == std::vector<double>{10, 11, 13});
}

TEST_CASE("frontend ops: TopK with a large k ranks every element") {
  // k > 16 and 8k > n: the O(n^2) rank form; ties keep the lower index first.
  const int64_t n = 24, k = 20;
  Model m(11);
  m.input("x", {n});
  m.init_i64("k", {1}, {k});
  Model::attr(m.node("TopK", {"x", "k"}, {"v", "i"}, "top"), "largest", int64_t(0));
  m.output("v");
  m.output("i");
  auto g = m.import();
  std::vector<double> xv;
  for (int64_t j = 0; j < n; ++j) xv.push_back(double((j * 7) % 10));  // many ties
  auto outs = g->evaluate({g->outputs()[0].node, g->outputs()[1].node}, {f32({n}, xv)});
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) order[size_t(j)] = j;
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return xv[size_t(a)] < xv[size_t(b)]; });
  order.resize(size_t(k));
  CHECK(outs[1].to_ints() == order);
  for (int64_t j = 0; j < k; ++j) CHECK(outs[0].to_doubles()[size_t(j)] == xv[size_t(order[size_t(j)])]);
}

TEST_CASE("frontend ops: Attention (opset 23) averages values under uniform scores, causally") {
  // Q = 0: every score is 0, so each query averages the values it may attend to.
  Model m(23);
  m.input("q", {1, 1, 3, 2});
  m.input("k", {1, 1, 3, 2});
  m.input("v", {1, 1, 3, 2});
  Model::attr(m.node("Attention", {"q", "k", "v"}, {"y"}, "att"), "is_causal", int64_t(1));
  m.output("y");
  auto g = m.import();
  std::vector<double> y = run(*g, {f32({1, 1, 3, 2}, {0, 0, 0, 0, 0, 0}), f32({1, 1, 3, 2}, {1, 2, 3, 4, 5, 6}),
                                   f32({1, 1, 3, 2}, {3, 6, 6, 0, 0, 3})});
  std::vector<double> want{3, 6, 4.5, 3, 3, 3};
  for (size_t i = 0; i < want.size(); ++i) CHECK(y[i] == doctest::Approx(want[i]));
}

TEST_CASE("frontend ops: RotaryEmbedding rotates pairs, RMSNormalization") {
  Model m(23);
  m.input("x", {1, 1, 1, 4});
  m.input("cos", {1, 1, 2});
  m.input("sin", {1, 1, 2});
  m.node("RotaryEmbedding", {"x", "cos", "sin"}, {"y"}, "rope");
  m.output("y");
  auto g = m.import();
  // cos 0, sin 1: (x1, x2) -> (-x2, x1) with x1 the first half, x2 the second.
  CHECK(run(*g, {f32({1, 1, 1, 4}, {1, 2, 3, 4}), f32({1, 1, 2}, {0, 0}), f32({1, 1, 2}, {1, 1})}) ==
        std::vector<double>{-3, -4, 1, 2});

  Model r(23);
  r.input("x", {1, 2});
  r.init_f32("s", {2}, {1, 2});
  Model::attr(r.node("RMSNormalization", {"x", "s"}, {"y"}, "rms"), "epsilon", 0.0f);
  r.output("y");
  auto gr = r.import();
  std::vector<double> y = run(*gr, {f32({1, 2}, {3, 4})});  // rms = sqrt(12.5)
  CHECK(y[0] == doctest::Approx(3 / std::sqrt(12.5)));
  CHECK(y[1] == doctest::Approx(8 / std::sqrt(12.5)));
}

// The x86_64 register tile candidates, best first, of the first kernel of g's CPU schedule
// with a reduction (over `reduce_dims` dims where that is not 0).
static std::vector<RegisterTile> x86_64_tiles_of_first_reduce(const Graph& g, size_t reduce_dims = 0) {
  Schedule s = cpu_schedule(g);
  for (const ScheduledKernel& sk : s.kernels) {
    KernelIR ir = build_kernel_ir(s, sk);
    if (ir.has_reduce() && (reduce_dims == 0 || ir.reduce_extents.size() == reduce_dims))
      return register_tile_candidates(ir, target_by_name("x86_64"), 8);
  }
  return {};
}

TEST_CASE("register tiles: an AVX2 1x1 conv keeps more than 8 accumulators") {
  // RegNetX-400MF's late 1x1 convs (7x7 map, 400 channels): 2 x 4 / 4 x 2 tiles (8 accumulators,
  // the 4-cycle multiply-add latency with no cycle to spare) ran 10-25% slower there than the
  // 3 x 4 that edgec --tune picked; the model counts 5 cycles a step for them (llvm_emit.cc,
  // single_reduce_slack_).
  Model m(13);
  m.input("x", {1, 400, 7, 7});
  m.init_f32("w", {400, 400, 1, 1}, std::vector<float>(400 * 400, 0.5f));
  m.node("Conv", {"x", "w"}, {"y"}, "conv");
  m.node("Relu", {"y"}, {"r"}, "relu");
  m.node("Conv", {"r", "w"}, {"z"}, "conv2");  // so the first conv's result is channels-last
  m.output("z");
  std::vector<RegisterTile> tiles = x86_64_tiles_of_first_reduce(*m.import());
  REQUIRE_FALSE(tiles.empty());
  INFO(tiles[0].vectors << " x " << tiles[0].unroll);
  CHECK(tiles[0].vectors * tiles[0].unroll > 8);
}

TEST_CASE("register tiles: an AVX2 tile of one vector keeps a register per output's broadcast") {
  // Basic Pitch's 8 -> 8 channel 3x39 conv: vectors of its 8 output channels times a broadcast
  // input pixel per output. The 1 x 12 tile the cost model picked (12 accumulators, and 12
  // broadcasts LLVM issues ahead of the multiply-adds) spilled in its inner loop: 27 ms against
  // 15.4 at 1 x 8 (edgert-bench --profile, CPU time).
  Model m(13);
  m.input("x", {1, 8, 6, 60});
  m.init_f32("w", {8, 8, 3, 39}, std::vector<float>(8 * 8 * 3 * 39, 0.5f));
  m.init_f32("w2", {8, 8, 1, 1}, std::vector<float>(8 * 8, 0.5f));
  Model::attr(m.node("Conv", {"x", "w"}, {"y"}, "conv"), "pads", std::vector<int64_t>{1, 19, 1, 19});
  m.node("Relu", {"y"}, {"r"}, "relu");
  m.node("Conv", {"r", "w2"}, {"z"}, "conv2");  // so the first conv's result is channels-last
  m.output("z");
  std::vector<RegisterTile> tiles = x86_64_tiles_of_first_reduce(*m.import(), 3);
  REQUIRE_FALSE(tiles.empty());
  INFO(tiles[0].vectors << " x " << tiles[0].unroll);
  CHECK(tiles[0].vectors == 1);
  CHECK(tiles[0].unroll >= 6);
  CHECK(tiles[0].unroll <= 8);
}

TEST_CASE("loop order: vector tiles go outermost only where the shared data is read again") {
  // A conv's kernels on x86_64: each one's output shape, reduce extents, output loop order,
  // and whether the largest buffer its reduction reads is split across cores with its
  // outputs (the loads depend on the parallel dim; else every core reads all of it).
  struct Planned {
    Shape shape, reduce;
    std::vector<int> order;
    bool input_split;
  };
  auto plans = [](int64_t c, int64_t k, int64_t hw, int64_t kernel, Winograd winograd) {
    Model m(13);
    m.input("x", {1, c, hw, hw});
    m.init_f32("w", {k, c, kernel, kernel}, std::vector<float>(size_t(k * c * kernel * kernel), 0.5f));
    m.init_f32("w2", {k, k, 1, 1}, std::vector<float>(size_t(k * k), 0.5f));
    m.node("Conv", {"x", "w"}, {"y"}, "conv");
    m.node("Relu", {"y"}, {"r"}, "relu");
    m.node("Conv", {"r", "w2"}, {"z"}, "conv2");  // so that the first conv's result is channels-last
    m.output("z");
    ImportOptions io;
    io.winograd = winograd;
    std::unique_ptr<Graph> g = m.import(io);
    Schedule s = cpu_schedule(*g);
    std::vector<Planned> planned;
    for (const ScheduledKernel& sk : s.kernels) {
      KernelIR ir = build_kernel_ir(s, sk);
      plan_cpu_launch(ir, 0);
      const Value* largest = nullptr;
      for (const Value* l : reduce_body_loads(ir))
        if (!largest || ir.args[l->arg].numel > ir.args[largest->arg].numel) largest = l;
      planned.push_back({ir.out_shape, ir.reduce_extents, output_loop_order(ir, target_by_name("x86_64")),
                         largest && load_depends_on(largest, ir.launch.parallel_dim)});
    }
    return planned;
  };
  // Winograd F(4x4) of PP-OCRv4 det's 96 -> 24 convs at 160 x 160. Each input transform pass's
  // (6, 6, 1600 tiles, 96 channels) output reads 6 rows of a 9.8 / 22 MB input that no other
  // tile reads: with the channel vectors outermost each pass read a 64-byte piece of every
  // 384-byte row, the rest of the row again in the next 5 passes (2-4 GB/s). Every transform
  // pass (a sum of 6 terms) splits its input across cores: with the table's rows outermost,
  // the dim split across cores and the register tile's, each of 2 cores read all the input.
  int transforms = 0, passes = 0;
  for (const Planned& p : plans(96, 24, 160, 3, Winograd::Tile4)) {
    if (p.reduce != Shape{6}) continue;
    ++passes;
    CHECK(p.input_split);
    if (p.shape != Shape{6, 6, 1600, 96, 1}) continue;
    ++transforms;
    CHECK(p.order == std::vector<int>{0, 1, 2, 3, 4});
  }
  CHECK(transforms == 2);
  CHECK(passes == 4);
  // A 1x1 conv with 4 MB of weights, read again by every row of the image: the vector tiles
  // (each with its slice of the weights) stay outermost.
  std::vector<Planned> convs = plans(1024, 1024, 14, 1, Winograd::Off);
  REQUIRE(convs.size() == 2);
  CHECK(convs[0].shape == Shape{1, 14, 14, 1024});  // (N, H, W, K), K vectorized
  CHECK(convs[0].order == std::vector<int>{3, 0, 1, 2});
}

TEST_CASE("loop order: a grouped conv whose weights outgrow the cache runs its groups in chunks") {
  // A 3x3 stride-2 conv of 32 groups of 24 channels over 80 x 80 (663 KB of weights, more
  // than the cache budget): each group's pass over the image read 96 bytes of every 3 KB
  // input pixel (22 GFLOP/s against 75 at 24 x 24); chunks of groups whose weights fit run
  // outermost, the image row-major inside. With 8 groups of 16 over 64 channels (37 KB of
  // weights) the order stays row-major.
  auto conv_orders = [](int64_t c, int64_t groups, int64_t hw) {
    Model m(13);
    m.input("x", {1, 16, hw, hw});
    m.init_f32("w1", {c, 16, 1, 1}, std::vector<float>(size_t(c * 16), 0.5f));
    m.init_f32("w", {c, c / groups, 3, 3}, std::vector<float>(size_t(c * c / groups * 9), 0.5f));
    m.init_f32("w2", {c, c, 1, 1}, std::vector<float>(size_t(c * c), 0.5f));
    m.node("Conv", {"x", "w1"}, {"a"}, "conv1");
    onnx::NodeProto* conv = m.node("Conv", {"a", "w"}, {"y"}, "grouped");
    Model::attr(conv, "group", groups);
    Model::attr(conv, "strides", std::vector<int64_t>{2, 2});
    Model::attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
    m.node("Relu", {"y"}, {"r"}, "relu");
    m.node("Conv", {"r", "w2"}, {"z"}, "conv2");  // so that the grouped conv's result is channels-last
    m.output("z");
    std::unique_ptr<Graph> g = m.import();
    Schedule s = cpu_schedule(*g);
    std::vector<std::vector<int>> orders;
    for (const ScheduledKernel& sk : s.kernels) {
      KernelIR ir = build_kernel_ir(s, sk);
      plan_cpu_launch(ir, 0);
      if (ir.reduce_extents == Shape{c / groups, 3, 3}) orders.push_back(output_loop_order(ir, target_by_name("x86_64")));
    }
    return orders;
  };
  std::vector<std::vector<int>> big = conv_orders(768, 32, 80);
  REQUIRE(big.size() == 1);
  CHECK(big[0] == std::vector<int>{kVectorChunkLevel, 0, 1, 2, 3});
  std::vector<std::vector<int>> small = conv_orders(64, 4, 80);
  REQUIRE(small.size() == 1);
  CHECK(small[0] == std::vector<int>{0, 1, 2, 3});
}

TEST_CASE("CPU launches: a tiny kernel runs as one part, a big one is split") {
  // A GRU step's product (1 x 64 by 64 x 64, ~13k operations) split across 2 threads ran
  // slower than on one: the hand-off costs more than half its work (CodegenOptions).
  auto planned_parts = [](int64_t rows, int64_t n, int64_t one_part_below) {
    Model m(13);
    m.input("x", {rows, n});
    m.init_f32("w", {n, n}, std::vector<float>(size_t(n * n), 0.5f));
    m.node("MatMul", {"x", "w"}, {"y"}, "mm");
    m.output("y");
    std::unique_ptr<Graph> g = m.import();
    Schedule s = schedule_graph(*g);
    REQUIRE(s.kernels.size() == 1);
    KernelIR ir = build_kernel_ir(s, s.kernels[0]);
    plan_cpu_launch(ir, one_part_below);
    return ir.launch.parallel_extent;
  };
  const int64_t dflt = CodegenOptions{}.one_part_below_work;
  CHECK(planned_parts(1, 64, dflt) == 1);
  CHECK(planned_parts(4, 64, dflt) == 1);
  CHECK(planned_parts(1, 64, 0) == 64);     // 0: every launch split
  CHECK(planned_parts(64, 256, dflt) == 64);  // ~4M operations
}

TEST_CASE("frontend ops: a product copies a computed operand it would read across rows (Q K^T)") {
  // K^T as attention exports it, Transpose(K) of a K that is not constant: without the copy the product's
  // vectors along N gather K's elements 64 apart (x86_64 AVX2: 41 against 81 GFLOP/s for the
  // same product with K^T in rows, 12 heads x 197 x 64).
  auto product_kernels = [](int64_t m, bool transposed, int64_t n = 32) {
    Graph g;
    Node* q = g.input("q", DType::F32, {4, m, 16});
    Node* k = g.input("k", DType::F32, {4, n, 16});  // (4, N, K)
    Node* b = transposed ? g.permute(k, {0, 2, 1}) : g.reshape(k, {4, 16, n});
    g.add_output("y", onnx_frontend::matmul(g, q, b));
    Schedule s = schedule_graph(g);
    std::vector<KernelIR> irs;
    for (const ScheduledKernel& sk : s.kernels) irs.push_back(build_kernel_ir(s, sk));
    return irs;
  };
  std::vector<KernelIR> qkt = product_kernels(20, true);
  REQUIRE(qkt.size() == 2);  // the copy of K^T as (4, K, N) rows, then the product
  const KernelIR& product = qkt[1];
  REQUIRE(product.has_reduce());
  for (const Value* l : reduce_body_loads(product))  // q is the same for every lane, K^T consecutive
    CHECK(lane_stride(l->index, 2, 8).value_or(-1) <= 1);
  // Few rows: the copy would cost about what it saves; a b already in rows needs none.
  CHECK(product_kernels(4, true).size() == 1);
  CHECK(product_kernels(20, true, 49).size() == 1);  // 49 columns: a mostly empty last vector
  CHECK(product_kernels(20, false).size() == 1);
}

TEST_CASE("GridSample: the scheduler stores each dim's taps, not each combination of them") {
  // The ops suite's shapes: X (2, 3, 5, 7), grid (2, 4, 6, 2). Each of bicubic's 16 tap
  // combinations broadcasts a flat index, a weight product and a validity over the channels;
  // the per-dim taps below them are stored instead, and the coordinate math each tap repeats
  // is recomputed where it is one kernel's (schedule.cc). Kernels on main (session 36):
  // bicubic 80 / 94 / 164, bilinear 24 / 34 / 72, nearest 8 / 10 / 34 (zeros / border /
  // reflection).
  auto kernels = [](const std::string& mode, const std::string& padding) {
    Model m(16);
    m.input("x", {2, 3, 5, 7});
    m.input("grid", {2, 4, 6, 2});
    auto* n = m.node("GridSample", {"x", "grid"}, {"y"}, "gs");
    Model::attr(n, "mode", mode);
    Model::attr(n, "padding_mode", padding);
    m.output("y");
    std::unique_ptr<Graph> g = m.import();
    return schedule_graph(*g).kernels.size();
  };
  CHECK(kernels("bicubic", "zeros") <= 28);
  CHECK(kernels("bicubic", "border") <= 28);
  CHECK(kernels("bicubic", "reflection") <= 36);
  CHECK(kernels("bilinear", "reflection") <= 20);
  CHECK(kernels("nearest", "reflection") <= 6);
}
