// lowering.h — what the ONNX op lowerings share: the per-node context (inputs, attributes
// with defaults, constant inputs), the op table, and helpers several op families use.
//
// Adding an op: write `std::vector<Node*> lower_foo(OpContext& ctx)` in the ops_*.cc file of
// its family and add it to that file's table function.
#pragma once
#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "frontend/onnx_importer.h"
#include "graph/graph.h"
#include "onnx_subset.pb.h"

namespace edgec::onnx_frontend {

// ONNX TensorProto.DataType -> DType; throws CompileError for types edgec lacks.
DType dtype_from_onnx(int32_t onnx_type);
// Decodes raw_data or the typed fields (float16 stays uint16 bits).
HostTensor tensor_from_proto(const onnx::TensorProto& t);
// Reads every tensor of the graph (initializers, attributes, subgraphs) whose data is in an
// external file into its raw_data: files inside model_dir only, offsets and lengths checked
// against the file and the tensor (external_data.cc). model_dir null: such tensors are refused.
void load_external_data(onnx::GraphProto& graph, const std::string* model_dir);

// The model inputs x depends on, each with the flag that freezes it:
// "'sr' (--const-input sr=FILE.npy), ...". For errors about values that must be constants.
std::string frozen_inputs_hint(const Graph& g, const Node* x);

class OpContext {
 public:
  OpContext(Graph& graph, const onnx::NodeProto& node, int64_t opset, std::vector<Node*> inputs)
      : g(graph), node(node), opset(opset), inputs_(std::move(inputs)) {}

  Graph& g;
  const onnx::NodeProto& node;
  const int64_t opset;  // version of the default (ai.onnx) operator set the model imports
  Winograd winograd = Winograd::Off;  // ImportOptions::winograd
  DotLayout dots;                       // ImportOptions::dots
  bool padded_grouped_convs = false;    // ImportOptions::padded_grouped_convs
  bool byte_pair_tables = false;        // ImportOptions::byte_pair_tables
  // Floats per vector that the frontend's rules fit periods and blocks to (Tile's rows first,
  // CumSum's innermost blocks): the target's float lanes (NEON 4, AVX2 8, AVX-512 16). Where
  // float_lanes is 1 (Hexagon: scalar float before v68; OpenCL: work items, no vector the
  // frontend fills) 8, AVX2's width, the one the rules were measured with: no other width was
  // measured there, so those bundles stay as they were, and a CumSum block must hold 2 or more.
  int64_t vector_floats() const { return dots.float_lanes > 1 ? dots.float_lanes : 8; }

  // Throws CompileError(message); the importer prefixes the node name and op type.
  [[noreturn]] void fail(const std::string& message) const;

  // ---- inputs ----
  size_t num_inputs() const { return inputs_.size(); }
  Node* input(size_t i) const;           // required
  Node* optional_input(size_t i) const;  // nullptr where absent or named ""
  // Input i evaluated on the host; it must be constant.
  HostTensor const_input(size_t i) const;
  std::vector<int64_t> const_ints(size_t i) const { return const_input(i).to_ints(); }
  // A required int list: from input `i` when the model's opset passes it as an input
  // (opset >= since), from attribute `attr` before that. nullopt when absent.
  std::optional<std::vector<int64_t>> ints_from_input_or_attr(size_t i, const char* attr, int64_t since) const;

  // ---- outputs ----
  size_t num_outputs() const { return size_t(node.output_size()); }
  bool output_used(size_t i) const { return i < num_outputs() && !node.output(int(i)).empty(); }

  // ---- attributes ----
  const onnx::AttributeProto* attr(const std::string& name) const;  // nullptr if absent
  bool has_attr(const std::string& name) const { return attr(name) != nullptr; }
  int64_t attr_int(const std::string& name, int64_t def) const;
  float attr_float(const std::string& name, float def) const;
  std::string attr_string(const std::string& name, const std::string& def) const;
  std::vector<int64_t> attr_ints(const std::string& name, std::vector<int64_t> def = {}) const;
  std::vector<float> attr_floats(const std::string& name) const;

  // Axis attribute / value normalized against rank.
  int64_t axis(int64_t axis, int64_t rank) const;

 private:
  std::vector<Node*> inputs_;
};

// Returns one node per ONNX output (nullptr for an optional output it does not produce).
using LowerFn = std::vector<Node*> (*)(OpContext&);
using OpTable = std::map<std::string, LowerFn>;
void add_elementwise_ops(OpTable& table);
void add_nn_ops(OpTable& table);
void add_shape_ops(OpTable& table);
void add_reduce_ops(OpTable& table);
void add_index_ops(OpTable& table);
void add_loss_ops(OpTable& table);
void add_resize_ops(OpTable& table);
void add_quant_ops(OpTable& table);
void add_rnn_ops(OpTable& table);
void add_misc_ops(OpTable& table);
void add_grid_sample_ops(OpTable& table);
void add_signal_ops(OpTable& table);
void add_roi_ops(OpTable& table);
void add_attention_ops(OpTable& table);
void add_ml_ops(OpTable& table);  // keys "ai.onnx.ml.<op>"
const OpTable& op_table();

// Rewrites the QDQ groups of a graph (DequantizeLinear -> Conv / MatMul / Gemm ->
// QuantizeLinear, and QDQ around pure data movement) into the integer operators onnxruntime
// runs them as (qdq_fusion.cc); returns how many groups it rewrote. opset: the model's
// default operator set.
int fuse_qdq_groups(onnx::GraphProto& graph, int64_t opset);

// ---- helpers shared by op families ----

// from, from+1, ..., to-1 (empty if to <= from).
std::vector<int64_t> iota_ints(int64_t from, int64_t to);
// A scalar constant of x's dtype (broadcasts in binary ops).
Node* scalar(Graph& g, double value, const Node* like);
// Concatenation along axis: each input is padded with zeros to the full extent and the
// results are added (or'ed for bool). Every output element then reads exactly one input
// through a guarded load, which fuses into one kernel with no copies.
Node* concat(Graph& g, const std::vector<Node*>& xs, int64_t axis);
// Elements begin, begin+step, ... (count of them) along axis; step >= 1.
Node* strided_slice(Graph& g, Node* x, int64_t axis, int64_t begin, int64_t count, int64_t step);
// stride - 1 zeros between consecutive elements along axis: size n -> (n - 1) * stride + 1.
Node* dilate_axis(Graph& g, Node* x, int64_t axis, int64_t stride);
// Drops / inserts size-1 dims.
Node* squeeze_axes(Graph& g, Node* x, std::vector<int64_t> axes);
Node* unsqueeze_axes(Graph& g, Node* x, std::vector<int64_t> axes);
// ONNX Conv of x and w (+ bias) with the node's attributes (pads, strides, dilations,
// group, auto_pad); any numeric dtype. The padding reads pad_value (an integer conv on
// raw quantized values pads with the input's zero point). With int8 / uint8 x and w the
// result is int32: the operands are widened at the multiply (the weights stay 8-bit).
// x_shift: as matmul's a_shift (8-bit x read as x - *x_shift; the padding too).
// Kernel taps that read only padding for every output are left out (a dilated conv on a
// small map); kept_weight: the weight with only the taps computed (w where none is dropped).
Node* conv_node(OpContext& ctx, Node* x, Node* w, Node* bias, double pad_value = 0.0, int64_t* x_shift = nullptr,
                Node** kept_weight = nullptr);
// The Winograd tile (2 or 4) that `mode` gives a stride-1 3x3 conv with c input and k output
// channels in `groups` groups and an oh x ow output; 0 for the direct convolution
// (conv_winograd.cc). operands BF16 (bf16 products): auto never picks F(4x4); grouped (groups
// > 1): auto keeps the direct form (measured faster), a forced tile applies; batch: the
// images whose tiles one transform covers (auto: the transformed tiles must stay below
// kMaxWinogradTransformedBytes).
int winograd_tile_for(Winograd mode, int64_t c, int64_t k, int64_t oh, int64_t ow, DType operands = DType::F32,
                      int64_t groups = 1, int64_t batch = 1);
// Stride-1, undilated 3x3 convolution of x (N, C, H, W) with the constant weight w
// (K, C/groups, 3, 3) as Winograd F(tile x tile, 3 x 3), tile 2 or 4 (conv_winograd.cc). No
// bias. A grouped conv's products are one batched product per group (each group's own panel
// of U). operands BF16: the products in bf16 pairs (bf16_operand) where C is even (ungrouped).
Node* winograd_conv(Graph& g, Node* x, const HostTensor& w, int tile, const std::array<int64_t, 2>& pad_lo,
                    const std::array<int64_t, 2>& pad_hi, DType operands = DType::F32, int64_t groups = 1);
// numpy matmul (batch broadcasting, 1-D operands). With int8 / uint8 a and b the result is
// int32: the operands are widened at the multiply (constant weights stay 8-bit). A constant
// b of 4 rows or more takes the dot layout where the inner dim splits into its groups.
// a_shift: where non-null, 8-bit a may be read as a - *a_shift (set to 128 where a uint8 a
// feeds a signed dot, DotLayout::int8_signed; else 0): the caller adds *a_shift * sum_k(b).
Node* matmul(Graph& g, Node* a, Node* b, const DotLayout& dots = {}, int64_t* a_shift = nullptr);
// x (8-bit) widened to int16 and stored so, once per x: the broadcast operand of vpmaddwd's
// pairs (DotLayout::int8_any_bytes), which matmul reads that way.
Node* stored_as_int16(Graph& g, Node* x);
// That copy of x where one was made, else null.
Node* stored_int16_copy(const Graph& g, const Node* x);
// An 8-bit dot operand (already broadcast) widened to int32, minus 128 where `shift`: the
// byte x ^ 0x80 read as int8, what a signed dot instruction multiplies (DotLayout::int8_signed).
Node* int8_operand_i32(Graph& g, Node* v, bool shift);
// A constant x (..., N) that kernels read as vectors along its last dim (weights whose
// columns are output channels): stored as (N/16, ..., 16) — each block of 16 columns one
// contiguous panel, so a tile of output channels streams its weights from consecutive
// memory — and read through a view of x's shape; the last panel is filled up with zeros.
// Where N is 16 or less, x itself is stored. Marks the stored node packed (constant
// folding materializes it and keeps the view above it). columns: panels of that many
// columns instead of 16 (a multiple of 16), the last one always filled up.
Node* packed_in_column_blocks(Graph& g, Node* x, int64_t columns = kColumnBlock);
// The same for the operand of a dot-product instruction that reduces `group` consecutive
// elements per lane (vdpbf16ps: pairs): x (..., K, N), K a multiple of group, stored as
// (N/columns, ..., K/group, columns, group) and read as (..., K/group, group, N); columns
// is 16 or a multiple of it (DotLayout::int8_columns). computed: x is not a constant; a
// kernel copies it into that order at run time.
Node* packed_in_column_groups(Graph& g, Node* x, int64_t group, int64_t columns = kColumnBlock, bool computed = false);

// Products with bfloat16 operands (edgec --precision bf16): float32 rounded to bf16 and back,
// products summed in float32 — what vdpbf16ps computes, a pair of products per lane, where
// the code generator finds the pairs (reduction split as (K/2, 2), weights packed by
// packed_in_column_groups). Elsewhere the same values are computed one product at a time.
constexpr int64_t kBf16Pair = 2;
Node* bf16_operand(Graph& g, Node* x);
// Reductions over normalized axes, reduced dims kept as 1.
Node* reduce_min(Graph& g, Node* x, const std::vector<int64_t>& axes);
// DynamicQuantizeLinear of float32 x (ops_quant.cc): uint8 values, float32 scale and uint8
// zero point (scalars) from the range of all of x, widened to contain 0.
struct DynamicQuantized {
  Node *y, *scale, *zero_point;
};
DynamicQuantized dynamic_quantize_u8(Graph& g, Node* x);
// sum_k (a - a_zp) * (b - b_zp) in int32 for 8-bit a, b (ops_quant.cc): with constant b, a zero
// b_zp and a scalar a_zp, b keeps 8 bits and the target's dot layout.
Node* integer_matmul(OpContext& ctx, Node* a, Node* a_zp, Node* b, Node* b_zp);
Node* reduce_mean(Graph& g, Node* x, const std::vector<int64_t>& axes);
// Product over axes (reduced dims kept as 1) as a tree of pairwise products of views:
// exact for integers, log2(n) levels.
Node* reduce_prod(Graph& g, Node* x, const std::vector<int64_t>& axes);
// Permutes dim `axis` to the end / back from the end.
Node* move_axis_last(Graph& g, Node* x, int64_t axis);
Node* move_last_to(Graph& g, Node* x, int64_t axis);

// ---- data-dependent indexing ----
// 0, 1, ..., n-1 as a dtype tensor of rank `rank` with n at `axis` and 1 elsewhere.
Node* iota(Graph& g, int64_t n, DType dtype, size_t rank = 1, size_t axis = 0);
// idx + dim where idx < 0 (ONNX's negative indices), in idx's dtype.
Node* wrap_negative(Graph& g, Node* idx, int64_t dim);
// One-hot selection: table has the candidates along `axis`; idx (integer, broadcastable to
// table with size 1 at axis) says which one. Returns table's shape with `axis` reduced to 1;
// an index outside [0, table.shape[axis]) selects 0 (false for bool). O(candidates) per
// output element, all elementwise + one ReduceSum.
Node* select_along(Graph& g, Node* table, int64_t axis, Node* idx);
// x gathered along axis at positions known at compile time (each in [0, dim)): a repeat
// view, a strided slice, a few slices joined along the axis, or a Gather with a constant
// index, whichever is cheapest.
Node* gather_positions(Graph& g, Node* x, int64_t axis, const std::vector<int64_t>& positions);
// The lowest / highest value of dtype (-inf / inf for floats).
double lowest_value(DType t);
double highest_value(DType t);

}  // namespace edgec::onnx_frontend
