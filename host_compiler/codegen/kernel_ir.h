// kernel_ir.h — one kernel as a loop nest over its output with index expressions.
//
//   for each output element (vars 0..rank-1, row-major):
//     acc = identity(reduce_op)
//     for each reduce element (vars rank..rank+k-1): acc = reduce_op(acc, reduce_body)
//     out[element] = result            // may read acc through an Accumulator value
//
// Values form a DAG shared within the kernel. Movement ops have disappeared into the
// Index of each Load; a padded view became a Where over an InBounds test, and every
// Load below it carries the same guards so that it reads element 0 instead of out of
// bounds where the guards fail (the Where discards that value).
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codegen/symbolic.h"
#include "graph/graph.h"
#include "schedule/schedule.h"

namespace edgec {

struct Value {
  enum class Kind { Const, Load, Alu, InBounds, Accumulator };
  explicit Value(Kind k) : kind(k) {}
  Kind kind;
  DType dtype = DType::F32;
  Op op = Op::Add;               // Alu: an elementwise op (unary, binary, Where, Cast)
  double constant = 0.0;         // Const
  int arg = 0;                   // Load: kernel argument
  Index index;                   // Load: element offset in the argument's buffer
  std::vector<Guard> guards;     // Load, InBounds
  std::vector<const Value*> srcs;  // Alu operands
  bool exp_arg_nonpositive = false;  // Alu Exp: Node::exp_arg_nonpositive
  int stage = -1;                // Accumulator of KernelIR::row_stages[stage]; -1: of the kernel's reduce
  // Load with a data-dependent term (a Gather): the element offset is
  //   index + clamp(dynamic, 0, dynamic_extent - 1) * dynamic_stride
  // where `index` is the static part, computed with the gathered axis at 0, and `dynamic`
  // an integer (I32 / I64) value of the kernel. Null for an ordinary load.
  const Value* dynamic = nullptr;
  int64_t dynamic_stride = 0;
  int64_t dynamic_extent = 0;
};

struct KernelArg {
  int buffer;                    // schedule buffer id
  DType dtype;                   // storage dtype (the Load/result dtype says what is computed)
  int64_t numel;
  BufferRole role = BufferRole::Intermediate;  // where the buffer comes from (back ends place it)
  Shape shape;                   // of the buffer
};

// How a back end launches a kernel (filled by Backend::generate, copied into the bundle).
struct LaunchPlan {
  // The output dim whose iterations are split across cores (CPU) or mapped to work-items
  // (GPU); -1 when every dim is 1.
  int parallel_dim = -1;
  uint64_t parallel_extent = 1;            // CPU: iterations a core_id split divides
  std::vector<uint64_t> global_size;       // GPU: NDRange (1-3 dims)
  std::vector<uint64_t> local_size;        // GPU: work-group size (empty: driver's choice)
};

struct KernelIR {
  std::string name;
  std::vector<KernelArg> args;   // args[0] is the output
  Shape out_shape;
  DType out_dtype = DType::F32;
  // Reduction; reduce_op is Op::Const when the kernel has none.
  Op reduce_op = Op::Const;
  Shape reduce_extents;
  DType acc_dtype = DType::F32;
  const Value* reduce_body = nullptr;
  const Value* result = nullptr;

  // A row kernel (ScheduledKernel::row_stages; no reduce of its own): for each row, the
  // output elements along the dims from row_dim on (the trailing dims, contiguous) with the
  // other vars fixed,
  //   for each stage in order: acc = identity; for each element of the row: acc = op(acc, body)
  //                            (the stage's value: `value`, from its Accumulator)
  //   for each element of the row: out = result
  // Bodies and the result run at the row's elements (vars row_dim... move); they and the later
  // stages read a stage through its `value`, the same for the whole row. row_staged, where
  // set, is a value of the last stage's body that the result reads too (Softmax's exp): the
  // last stage stores it into the output row and the result reads it back from there.
  struct RowStage {
    Op reduce_op;
    DType acc_dtype;
    const Value* body;
    const Value* value;
  };
  std::vector<RowStage> row_stages;
  int row_dim = -1;
  const Value* row_staged = nullptr;

  LaunchPlan launch;                           // decided by the back end

  // A piece of a kernel split along its output (split_at_part_boundaries): the loops run
  // over out_shape and element (v0, v1, ...) is stored at (out_origin[0] + v0, ...) of an
  // output buffer of stored shape out_full_shape. Both empty: the loops cover the buffer.
  std::vector<int64_t> out_origin;
  Shape out_full_shape;

  std::vector<std::unique_ptr<Value>> values;  // owns every Value above
  Value* add_value(Value v) {                  // a new Value owned by this kernel
    values.push_back(std::make_unique<Value>(std::move(v)));
    return values.back().get();
  }
  const Value* add_constant(double c, DType t) {
    Value v(Value::Kind::Const);
    v.dtype = t;
    v.constant = c;
    return add_value(std::move(v));
  }
  int num_vars() const { return static_cast<int>(out_shape.size() + reduce_extents.size()); }
  bool has_reduce() const { return reduce_op != Op::Const; }
  bool is_row_kernel() const { return !row_stages.empty(); }
  int64_t flops() const;                       // estimate: ALU ops per output * outputs
};

KernelIR build_kernel_ir(const Schedule& schedule, const ScheduledKernel& kernel);

// The row-major element offset of the output element at loop vars 0..rank-1.
Index output_index(const KernelIR& k);

// A kernel without a reduction whose value is assembled from parts that each cover an
// interval of an output dim (a Concat: each source padded with zeros to the full extent and
// the parts summed; a conv summed by regions) reads every part at every element, through
// guarded loads and selects. Split at the ends of those intervals, each piece is a kernel of
// its own over a box of the output in which every such bounds test is decided at compile
// time: it reads the one part that lies there with plain loads. Returns the pieces in
// output order (at most max_pieces: with more parts than that, a piece holds several), or k
// alone where no dim has two or more such intervals. A piece is an ordinary kernel to a back end, except that its output's later
// dims may not be contiguous (out_full_shape); compile.cc cuts kernels for the cpu port's
// targets and OpenCL.
std::vector<KernelIR> split_at_part_boundaries(KernelIR&& k, size_t max_pieces);
// split_at_part_boundaries over a whole schedule: kernels[i] is schedule.kernels[i]'s IR
// before and after; a kernel split in n pieces becomes n kernels (and queue steps) in a row,
// all writing its buffer.
void split_kernels_at_part_boundaries(Schedule& schedule, std::vector<KernelIR>& kernels, size_t max_pieces);
// A reduce dim read only through a floor div and mod by one divisor b (a reduction over a
// reshape that merged dims the buffer stores in another order: GroupNorm's statistics over
// (N, G, C/G * H * W) of a channels-last buffer read 64 * (r % 1600) + r / 1600) becomes two
// dims, r / b and r % b, where that leaves every index affine in both; the one the loads
// move least along goes last, where the back end vectorizes. Returns whether k changed.
bool split_reduce_dims_at_divisions(KernelIR& k);

// Index analysis the back ends share.
// Whether `var` occurs in ix (also inside a div/mod).
bool index_depends_on(const Index& ix, int var);
// Coefficient of `var` if ix is affine in it (var not inside a div/mod), else nullopt.
std::optional<int64_t> index_affine_coef(const Index& ix, int var);
// The same for a load: one with a data-dependent term (a Gather) counts as depending on
// every variable and as never affine: nothing proves its lanes consecutive.
// Elements between consecutive lanes of ix when `lanes` lanes run along `var` from a
// multiple of `lanes`, or nullopt where that is no constant. Beyond affine terms this
// covers a floor div/mod by a multiple of `lanes` of a dividend that moves by one per
// lane and is otherwise a multiple of `lanes`: the lanes never cross a block (a weight
// stored in blocks of 16 output channels, read 4, 8 or 16 lanes at a time).
std::optional<int64_t> lane_stride(const Index& ix, int var, int lanes);
// Where lanes along `var` (from a multiple of `lanes`) read each element `repeat` times
// in a row: ix depends on var only through c * (var + ...) / repeat with repeat dividing
// lanes (a grouped conv with 2 output channels per input channel reads input channel
// m / 2). Returns {repeat, c}: lanes / repeat elements c apart, each repeated.
struct LaneRepeat {
  int64_t repeat, stride;
};
std::optional<LaneRepeat> lane_repeat(const Index& ix, int var, int lanes);
// The element offset of each lane from lane 0 when `lanes` lanes run along `var` from a
// multiple of `lanes`, or nullopt where that is no constant pattern: affine terms, and floor
// divs / mods whose dividend moves by one per lane from the start of a block of either the
// lanes (a multiple of them) or of a divisor of the lanes. A grouped conv's input channel
// (m / (M/G)) * (C/G) + c: the same for every lane where M/G is a multiple of the lanes,
// (j / (M/G)) * (C/G) apart otherwise (lanes spanning several groups).
std::optional<std::vector<int64_t>> lane_offsets(const Index& ix, int var, int lanes);
bool load_depends_on(const Value* load, int var);
std::optional<int64_t> load_affine_coef(const Value* load, int var);
// The loads of the reduce body (none without a reduce), each once, in first-use order.
std::vector<const Value*> reduce_body_loads(const KernelIR& k);

// The argument contracts: what the bundle's Kernel.args say and the code itself reports
// (schema/kernel_abi.h). args[0] is written, the others read, each over the bytes from the
// buffer's start that the kernel may touch (one past the furthest element a load, or the
// store, reaches; at most the buffer).
struct ArgUse {
  bool written;
  DType dtype;            // storage dtype
  uint64_t extent_bytes;
};
std::vector<ArgUse> arg_contracts(const KernelIR& k);

// Every index and guard bound of the kernel fits in int32 with headroom for lane offsets:
// back ends may do its index math in 32 bits.
bool index_math_fits_32_bits(const KernelIR& k);
std::string to_string(const KernelIR& k);       // for `edgec compile --dump-kernels`

}  // namespace edgec
