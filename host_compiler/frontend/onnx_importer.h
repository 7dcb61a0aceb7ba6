// onnx_importer.h — ONNX model -> primitive Graph (static shapes, constants folded).
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace edgec {

// How stride-1 3x3 convolutions are lowered: direct sums, Winograd F(2x2, 3x3) or F(4x4, 3x3)
// wherever it applies, or per conv the tile that pays (conv_winograd.cc).
enum class Winograd : uint8_t { Off, Tile2, Tile4, Auto };

// How a product with constant weights lays out its reduction for a dot-product instruction
// of the target: split as (K/group, group), each column's group of weights stored together
// (lowering.h packed_in_column_groups). bf16 operands go in pairs (vdpbf16ps); 8-bit ones in
// groups of int8_group (4: vpdpbusd, sdot; 1: not split).
struct DotLayout {
  // BF16: convolutions and matrix products with constant float weights take bfloat16
  // operands, products summed in float32 (edgec --precision bf16; lowering.h bf16_operand).
  DType float_operands = DType::F32;
  int64_t int8_group = 1;
  // Floats per vector of the target's float products (CPU targets; 1: no vectors to fit).
  // A grouped conv's vector of output channels reads one input pixel per group it covers:
  // where M/G is neither a multiple nor a divisor of the lanes, which groups a vector covers
  // changes from vector to vector and every input load became a gather (ops_nn.cc
  // conv_with_lane_padded_groups).
  int64_t float_lanes = 1;
  // Bytes of weights one register tile's slice may take and stay in the core's cache as the
  // image passes under it (CPU targets: llvm_emit.cc's slice budget, 5/8 of L2; 0: no
  // limit). A float conv whose two vectors of output channels would need more sums chunks
  // of its input channels instead (ops_nn.cc conv_in_reduction_chunks).
  int64_t weight_slice_bytes = 0;
  // The target's 8-bit dot multiplies signed bytes only (AArch64 sdot): a grouped reduction
  // reads a uint8 activation x as x - 128 (the byte x ^ 0x80 as int8), where the caller
  // asks for it and adds 128 * sum(w) back (ops_quant.cc, folded into the bias constant).
  bool int8_signed = false;
  // The target's 8-bit dot takes bytes of either signedness on both sides (x86_64 AVX2: each
  // byte widened to int16, vpmaddwd pairs): a product of two computed 8-bit tensors (attention's
  // Q K^T and P V) takes the dot layout too (ops_quant.cc integer_matmul).
  bool int8_any_bytes = false;
  // Output channels per packed weight panel of an 8-bit dot (packed_in_column_groups): a
  // multiple of the lanes one instruction fills (HVX's vrmpy: 32 int32 lanes).
  int64_t int8_columns = 16;
  // Output channels per packed weight panel of an 8-bit depthwise conv (one input channel
  // per output channel): each tap's weights for that many consecutive channels are one
  // contiguous row, filled up with zeros (HVX: 128, one vector register of bytes that the
  // 16-bit products read in one load; llvm_emit.cc emit_depthwise_hvx). 16 elsewhere.
  int64_t int8_depthwise_columns = 16;
};

struct ImportOptions {
  // Shapes for graph inputs by name; required where the model has symbolic or unknown dims.
  std::map<std::string, Shape> input_shapes;
  // Graph inputs frozen to a value at compile time (they become weights, not inputs), e.g.
  // shape or axes tensors that a model takes as inputs.
  std::map<std::string, HostTensor> constant_inputs;
  // Told what the importer tolerates in a model that onnxruntime also runs (an output's
  // declared shape that the computed one replaces); null: silent.
  std::function<void(const std::string&)> warn;
  // Stride-1 3x3 float convolutions with constant weights and at least 16 input and output
  // channels as Winograd F(m x m, 3 x 3): fewer multiply-adds where the products dominate
  // (CPUs), more weight bytes; results differ from the direct sums by rounding.
  Winograd winograd = Winograd::Off;
  DotLayout dots;
  // Padded float grouped convs (1 < groups < channels, stride 1), and dense 1 x k / k x 1
  // ones (k >= 3), read a zero-bordered
  // channels-last copy of their input made by a kernel of its own, and run unpadded over
  // it: every tile takes the reduction without bounds tests (CPU targets; ops_nn.cc).
  bool padded_grouped_convs = false;
  // QLinearAdd (and QDQ Adds) of two same-shape 8-bit operands as one 65,536-entry table of
  // both bytes (ops_quant.cc lower_qlinear_add): where the target's elementwise 8-bit code
  // is scalar (Hexagon), three byte loads and a store per output instead of float arithmetic.
  bool byte_pair_tables = false;
};

// Throw CompileError naming the ONNX node and op type for anything they cannot import. A
// file's tensors may keep their data in files of its folder (external data); bytes may not.
std::unique_ptr<Graph> import_onnx_file(const std::string& path, const ImportOptions& options = {});
std::unique_ptr<Graph> import_onnx_model(const std::string& serialized_model, const std::string& model_name,
                                         const ImportOptions& options = {});

// True if the importer has a lowering for this op ("" / "ai.onnx" is the default domain).
bool is_supported_onnx_op(const std::string& domain, const std::string& op_type);
std::vector<std::string> supported_onnx_ops();

}  // namespace edgec
