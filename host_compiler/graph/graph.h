// graph.h — the primitive tensor graph every ONNX op lowers to.
//
// A small op set is what lets one code generator cover all of ONNX:
//   leaves      Input, Weight (constant data), Const (one scalar broadcast to a shape)
//   elementwise unary / binary / ternary ops on operands of identical shape
//   reduce      ReduceSum, ReduceMax over some axes (reduced axes are kept as size 1)
//   movement    Reshape, Permute, Expand, Pad, Shrink, Flip, Window — *views*: they change
//               how an element is indexed and never copy. Window is the strided, dilated
//               sliding window that turns Conv and pooling into elementwise + reduce.
//   gather      Gather(src, index, axis): the one data-dependent read (GatherElements
//               semantics). Neither elementwise, reduce nor movement: its src is always
//               a buffer, it is fused into its consumer like an elementwise op.
// Builders check shapes and dtypes and throw CompileError; the importer adds the ONNX
// node name to the message.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace edgec {

// Values match edge::bundle::DType in schema/bundle.fbs.
enum class DType : uint8_t { F32 = 0, F16 = 1, I8 = 2, U8 = 3, I16 = 4, I32 = 5, I64 = 6, Bool = 7,
                             U16 = 8, U32 = 9, U64 = 10, F64 = 11,
                             // bfloat16: float32's upper half. Only `edgec --precision bf16`
                             // makes it (weights and the operands of dot products).
                             BF16 = 12 };
size_t dtype_size(DType t);
const char* dtype_name(DType t);
bool is_float(DType t);
bool is_signed_int(DType t);

using Shape = std::vector<int64_t>;
int64_t numel(const Shape& s);
std::string shape_str(const Shape& s);

struct CompileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The most elements one tensor may have (16 GiB of f32): far past any edge model, and a
// limit that a hostile shape (Range to 2^60, Resize by 1e9) hits with a message instead of
// an allocation failure or a wrapped product.
constexpr int64_t kMaxTensorElements = int64_t{1} << 32;
// numel(s), or CompileError naming `what` when the product overflows or passes the limit.
int64_t checked_numel(const Shape& s, const std::string& what);
// The columns (output channels) per panel of a packed weight (Node::packed; the frontend's
// lowering.h packed_in_column_blocks), which the scheduler also keeps whole. 16: a multiple of
// every CPU target's float lanes (NEON 4, AVX2 8, AVX-512 16), so a vector of columns never
// straddles two panels on any of them.
constexpr int64_t kColumnBlock = 16;

enum class Op : uint8_t {
  // leaves
  Input, Weight, Const,
  // elementwise unary (Cast converts to Node::dtype; Not is logical on Bool)
  Neg, Exp, Log, Sqrt, Recip, Tanh, Sin, Cos, Abs, Floor, Ceil, Round, Erf, Cast, Not,
  // elementwise binary (operands same dtype and shape; comparisons give Bool)
  Add, Sub, Mul, Div, Max, Min, Pow, Mod, CmpLt, CmpEq, And, Or, Xor,
  // elementwise ternary: Where(cond: Bool, a, b)
  Where,
  // reductions
  ReduceSum, ReduceMax,
  // movement views
  Reshape, Permute, Expand, Pad, Shrink, Flip, Window,
  // data-dependent read: Gather(src, index), axis in axes[0]
  Gather,
};
const char* op_name(Op op);
bool is_unary(Op op);
bool is_binary(Op op);
bool is_elementwise(Op op);  // unary, binary, Where
bool is_reduce(Op op);
bool is_movement(Op op);
struct Node;
// A Cast to a wider type of the same kind (bf16 -> f32, u8 -> i32, i8 -> i32): exact, and as
// cheap as a load, so constant folding and the scheduler let it ride along with the views
// above a buffer.
bool is_widening_cast(const Node* n);

struct Node {
  int id = 0;
  Op op = Op::Const;
  DType dtype = DType::F32;
  Shape shape;
  std::vector<Node*> srcs;

  // Op arguments (only the ones an op uses are set):
  //   Input:    index (graph input number)
  //   Weight:   data (little-endian bytes, numel*dtype_size)
  //   Const:    value;            Pad: value is the fill value
  //   Reduce:   axes              Permute: axes = permutation (output dim i = input dim axes[i])
  //   Flip:     axes              Pad: lo/hi (elements added before/after each dim, >= 0)
  //   Gather:   axes = {axis}
  //   Shrink:   lo/hi = [begin, end) per dim
  //   Window:   over the last k dims: kernel, stride, dilation (k entries each). Input
  //             (..., S_0..S_k-1) -> output (..., O_0..O_k-1, K_0..K_k-1) reading input
  //             index o*stride + j*dilation. Pad first for padded windows.
  int index = 0;
  double value = 0.0;
  std::shared_ptr<const std::vector<uint8_t>> data;
  std::vector<int64_t> axes, lo, hi, kernel, stride, dilation;
  // A constant in the order its consumers stream it (a packed conv weight), read through a
  // view: constant folding materializes this node and never folds the view above it.
  bool packed = false;
  // A conv result computed without a Window, its dims in (N, H, W, C) order (Winograd's
  // output transform, permuted to (N, C, H, W) after it): the scheduler stores it
  // channels-last like the result of a conv.
  bool conv_result = false;
  // Gets a buffer of its own, in this shape, row-major: the frontend chose the layout that
  // its consumers read best (Winograd's transformed tiles and products), so no kernel may
  // fuse it away or store it through the views that follow it.
  bool realize = false;
  // Exp whose operand is x - max(x) (Softmax): at most 0 or NaN, so it cannot overflow and
  // the CPU code drops exp's overflow handling (cheaper in the attention's hot loop).
  bool exp_arg_nonpositive = false;

  std::string name;  // ONNX value name it came from (diagnostics, buffer names)
};

// A dense host tensor: constant data the compiler can compute with.
struct HostTensor {
  DType dtype = DType::F32;
  Shape shape;
  std::vector<uint8_t> bytes;
  double get(int64_t flat_index) const;   // element as double
  int64_t get_int(int64_t flat_index) const;
  std::vector<int64_t> to_ints() const;   // all elements as int64
  std::vector<double> to_doubles() const;
  int64_t numel() const { return edgec::numel(shape); }
  // Encodes values (rounded / wrapped to dtype as a cast would) into a new tensor.
  static HostTensor from_doubles(DType dtype, const Shape& shape, const std::vector<double>& values);
  static HostTensor from_ints(DType dtype, const Shape& shape, const std::vector<int64_t>& values);
};

struct GraphInput {
  std::string name;
  DType dtype;
  Shape shape;
  Node* node;
};
struct GraphOutput {
  std::string name;
  Node* node;
};

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // ---- leaves ----
  Node* input(const std::string& name, DType dtype, const Shape& shape);
  Node* weight(DType dtype, const Shape& shape, std::vector<uint8_t> bytes, const std::string& name = "");
  Node* weight(const HostTensor& t, const std::string& name = "");
  Node* constant(double value, DType dtype, const Shape& shape = {});

  // ---- elementwise ----
  Node* unary(Op op, Node* x);
  Node* binary(Op op, Node* a, Node* b);   // numpy-broadcasts a and b first
  Node* where(Node* cond, Node* a, Node* b);  // broadcasts all three
  Node* cast(Node* x, DType to);
  // ---- reduce (axes may be negative; reduced dims are kept with size 1) ----
  Node* reduce(Op op, Node* x, std::vector<int64_t> axes);
  // ---- movement ----
  Node* reshape(Node* x, const Shape& shape);
  Node* permute(Node* x, std::vector<int64_t> perm);
  Node* expand(Node* x, const Shape& shape);           // same rank; size-1 dims grow
  Node* broadcast_to(Node* x, const Shape& shape);     // numpy rules (prepends 1-dims)
  Node* pad(Node* x, std::vector<int64_t> lo, std::vector<int64_t> hi, double fill = 0.0);
  Node* shrink(Node* x, std::vector<int64_t> begin, std::vector<int64_t> end);
  Node* flip(Node* x, std::vector<int64_t> axes);
  Node* window(Node* x, std::vector<int64_t> kernel, std::vector<int64_t> stride, std::vector<int64_t> dilation);
  // ---- data-dependent read ----
  // out[i...] = src[i_0, .., clamp(index[i...], 0, src.shape[axis]-1), .., i_n]: GatherElements
  // semantics. index (I32 or I64) has src's rank and, except along axis, src's dims; the
  // output has index's shape and src's dtype. Out-of-range indices are CLAMPED (negative
  // ones too: a frontend wraps ONNX's negative indices first). src.shape[axis] must be > 0
  // unless index is empty.
  Node* gather(Node* src, Node* index, int64_t axis);

  // ---- outputs ----
  void add_output(const std::string& name, Node* node);

  // ---- constant evaluation ----
  // True if x depends on no Input (only Weight / Const leaves).
  bool is_constant(const Node* x) const;
  // The names of the graph inputs x depends on, in input order (with first_only, at most one).
  std::vector<std::string> inputs_feeding(const Node* x, bool first_only = false) const;
  // Computes a constant node on the host. Throws CompileError if x is not constant.
  HostTensor evaluate(const Node* x) const;
  // Same with values bound to the graph's inputs (inputs[i] feeds input number i); used
  // as the reference interpreter in tests. Evaluates several nodes sharing the work.
  HostTensor evaluate(const Node* x, const std::vector<HostTensor>& inputs) const;
  std::vector<HostTensor> evaluate(const std::vector<const Node*>& xs, const std::vector<HostTensor>& inputs) const;
  // Replaces, where it pays, constant subgraphs by Weight nodes (never materializes an
  // Expand of a small constant into a big one). Returns how many nodes it folded.
  int fold_constants();
  // Weights with the same dtype, shape, layout flags and bytes become one node, so that the
  // bundle stores them once (an unrolled LSTM's recurrent matrix, folded once per step;
  // tied weights). Graph outputs are left alone. Returns how many nodes it merged away.
  int merge_identical_weights();

  const std::vector<GraphInput>& inputs() const { return inputs_; }
  const std::vector<GraphOutput>& outputs() const { return outputs_; }
  // All nodes, in creation order (a topological order).
  const std::vector<std::unique_ptr<Node>>& nodes() const { return nodes_; }
  std::vector<Node*> live_nodes() const;  // reachable from outputs, topological order

 private:
  Node* make(Op op, DType dtype, Shape shape, std::vector<Node*> srcs);
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<GraphInput> inputs_;
  std::vector<GraphOutput> outputs_;
};

// numpy broadcasting of two shapes; throws CompileError if incompatible.
Shape broadcast_shapes(const Shape& a, const Shape& b);
// Maps axis in [-rank, rank) to [0, rank); throws CompileError otherwise.
int64_t normalize_axis(int64_t axis, int64_t rank);
// Rounds a value to what dtype can hold, as a Cast would (floats round to nearest, integers
// truncate toward zero and saturate, Bool is value != 0).
double round_to_dtype(double value, DType dtype);
// IEEE half <-> float, round to nearest even.
uint16_t float_to_half(float f);
float half_to_float(uint16_t h);
// float <-> bfloat16, round to nearest even (a NaN stays a quiet NaN).
uint16_t float_to_bf16(float f);
float bf16_to_float(uint16_t b);

}  // namespace edgec
