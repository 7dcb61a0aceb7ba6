// ONNX importer on small hand-built models: error messages, static shapes, opset-dependent
// semantics and the folding of shape subgraphs.
#include <doctest/doctest.h>

#include <string>

#include "frontend/lowering.h"
#include "frontend/onnx_importer.h"

using namespace edgec;

namespace {

class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset) {
    model_.set_ir_version(8);
    auto* o = model_.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
  }
  // dims < 0 are symbolic ("N").
  void input(const std::string& name, const std::vector<int64_t>& dims, int elem = onnx::TensorProto::FLOAT) {
    auto* tt = model_.mutable_graph()->add_input()->mutable_type()->mutable_tensor_type();
    model_.mutable_graph()->mutable_input()->rbegin()->set_name(name);
    tt->set_elem_type(elem);
    for (int64_t d : dims) {
      auto* dim = tt->mutable_shape()->add_dim();
      if (d < 0) dim->set_dim_param("N");
      else dim->set_dim_value(d);
    }
  }
  void output(const std::string& name) { model_.mutable_graph()->add_output()->set_name(name); }
  void initializer_i64(const std::string& name, const std::vector<int64_t>& values) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(int64_t(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
  }
  void initializer_f32(const std::string& name, const std::vector<int64_t>& dims, float value) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    for (int64_t k = 0; k < numel(dims); ++k) t->add_float_data(value);
  }
  onnx::NodeProto* node(const std::string& op, std::vector<std::string> ins, std::vector<std::string> outs,
                        const std::string& name = "") {
    auto* n = model_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (auto& s : ins) n->add_input(s);
    for (auto& s : outs) n->add_output(s);
    return n;
  }
  static void attr_int(onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  std::unique_ptr<Graph> import(const ImportOptions& options = {}) const {
    return import_onnx_model(model_.SerializeAsString(), "test.onnx", options);
  }

 private:
  onnx::ModelProto model_;
};

std::string import_error(const ModelBuilder& b, const ImportOptions& options = {}) {
  try {
    b.import(options);
  } catch (const CompileError& e) {
    return e.what();
  }
  return "(no error)";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("frontend: errors name the node and op") {
  ModelBuilder b(13);
  b.input("x", {2, 3});
  b.node("Relu", {"x"}, {"r"});
  b.node("Foo", {"r"}, {"y"}, "foo_1");
  b.output("y");
  CHECK(contains(import_error(b), "node 'foo_1' (Foo): unsupported operator"));

  ModelBuilder custom(13);
  custom.input("x", {2});
  custom.node("Bar", {"x"}, {"y"})->set_domain("com.example");
  custom.output("y");
  CHECK(contains(import_error(custom), "node #0 (Bar): unsupported operator in domain 'com.example'"));

  ModelBuilder conv(13);
  conv.input("x", {1, 3, 8, 8});
  conv.input("w", {4, 2, 3, 3});  // 2 input channels per group, but the input has 3
  conv.node("Conv", {"x", "w"}, {"y"}, "Conv_3");
  conv.output("y");
  CHECK(contains(import_error(conv), "node 'Conv_3' (Conv): "));
}

TEST_CASE("frontend: static shapes, overrides and frozen inputs") {
  ModelBuilder b(13);
  b.input("x", {-1, 4});
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  std::string err = import_error(b);
  CHECK(contains(err, "input 'x': dim 0 is symbolic ('N')"));

  ImportOptions options;
  options.input_shapes["x"] = {3, 4};
  auto g = b.import(options);
  REQUIRE(g->inputs().size() == 1);
  CHECK(g->inputs()[0].shape == Shape{3, 4});
  CHECK(g->outputs()[0].name == "y");
  CHECK(g->outputs()[0].node->shape == Shape{3, 4});

  options.input_shapes["z"] = {1};
  CHECK(contains(import_error(b, options), "'z', which is not a graph input"));

  // A shape passed as an input must be frozen to compile.
  ModelBuilder r(13);
  r.input("x", {2, 3});
  r.input("shape", {2}, onnx::TensorProto::INT64);
  r.node("Reshape", {"x", "shape"}, {"y"}, "reshape");
  r.output("y");
  CHECK(contains(import_error(r), "node 'reshape' (Reshape): input 1 ('shape') must be a constant"));
  ImportOptions frozen;
  frozen.constant_inputs["shape"] = HostTensor::from_ints(DType::I64, {2}, {3, -1});
  CHECK(r.import(frozen)->outputs()[0].node->shape == Shape{3, 2});
}

TEST_CASE("frontend: shape subgraphs fold away") {
  // y = Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1]))  -> a plain reshape to (2, 12)
  ModelBuilder b(13);
  b.input("x", {2, 3, 4});
  b.initializer_i64("zero", {0});
  b.initializer_i64("minus_one", {-1});
  b.node("Shape", {"x"}, {"s"});
  b.node("Gather", {"s", "zero"}, {"n"});
  ModelBuilder::attr_int(b.node("Concat", {"n", "minus_one"}, {"target"}), "axis", 0);
  b.node("Reshape", {"x", "target"}, {"y"});
  b.output("y");
  auto g = b.import();
  Node* y = g->outputs()[0].node;
  CHECK(y->shape == Shape{2, 12});
  auto live = g->live_nodes();
  REQUIRE(live.size() == 2);
  CHECK(live[0]->op == Op::Input);
  CHECK(live[1]->op == Op::Reshape);
}

TEST_CASE("frontend: Conv weights are preprocessed into weights, never expanded") {
  ModelBuilder b(13);
  b.input("x", {1, 2, 5, 5});
  b.initializer_f32("w", {3, 2, 3, 3}, 1.0f);
  b.initializer_f32("bias", {3}, 0.5f);
  b.node("Conv", {"x", "w", "bias"}, {"y"});
  b.output("y");
  auto g = b.import();
  Node* y = g->outputs()[0].node;
  CHECK(y->shape == Shape{1, 3, 3, 3});
  for (Node* n : g->live_nodes()) {
    // Constants reach the computation only as Weights or views of them; the conv weight
    // is stored packed, output channels innermost: (KH, KW, C, M).
    if (n->op == Op::Mul) {
      const Node* w = n->srcs[1];
      while (is_movement(w->op)) w = w->srcs[0];
      CHECK(w->op == Op::Weight);
      CHECK(w->packed);
      CHECK(w->shape == Shape{3, 3, 2, 3});
    }
    CHECK(n->op != Op::Const);
  }
  std::vector<double> ones(50, 1.0);
  auto out = g->evaluate(y, {HostTensor::from_doubles(DType::F32, {1, 2, 5, 5}, ones)}).to_doubles();
  CHECK(out.size() == 27);
  CHECK(out[0] == 18.5);  // 2 channels x 3x3 taps of ones, plus the bias
}

TEST_CASE("frontend: Softmax follows the opset") {
  auto softmax = [](int64_t opset) {
    ModelBuilder b(opset);
    b.input("x", {1, 2, 2});
    ModelBuilder::attr_int(b.node("Softmax", {"x"}, {"y"}), "axis", 1);
    b.output("y");
    auto g = b.import();
    HostTensor x = HostTensor::from_doubles(DType::F32, {1, 2, 2}, {0, 0, 0, 0});
    return g->evaluate(g->outputs()[0].node, {x}).to_doubles();
  };
  // Before opset 13: over the flattened dims from axis 1 on (4 elements); after: over dim 1.
  CHECK(softmax(11) == std::vector<double>{0.25, 0.25, 0.25, 0.25});
  CHECK(softmax(13) == std::vector<double>{0.5, 0.5, 0.5, 0.5});
}

TEST_CASE("frontend: initializers honor raw_data and typed fields") {
  onnx::TensorProto raw;
  raw.set_data_type(onnx::TensorProto::FLOAT);
  raw.add_dims(2);
  float values[2] = {1.5f, -2.0f};
  raw.set_raw_data(std::string(reinterpret_cast<const char*>(values), sizeof(values)));
  CHECK(onnx_frontend::tensor_from_proto(raw).to_doubles() == std::vector<double>{1.5, -2.0});

  onnx::TensorProto half;
  half.set_data_type(onnx::TensorProto::FLOAT16);
  half.add_int32_data(0x3c00);  // 1.0
  HostTensor h = onnx_frontend::tensor_from_proto(half);
  CHECK(h.dtype == DType::F16);
  CHECK(h.to_doubles() == std::vector<double>{1.0});

  onnx::TensorProto u32;
  u32.set_data_type(onnx::TensorProto::UINT32);
  u32.add_dims(1);
  u32.add_uint64_data(4000000000u);
  CHECK(onnx_frontend::tensor_from_proto(u32).to_ints() == std::vector<int64_t>{4000000000});

  onnx::TensorProto bad;
  bad.set_data_type(onnx::TensorProto::STRING);
  CHECK_THROWS_AS(onnx_frontend::tensor_from_proto(bad), CompileError);
}
