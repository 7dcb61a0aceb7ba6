// schedule.h — groups primitive ops into kernels and decides which tensors exist in memory.
//
// A node is *realized* (gets a buffer) only where it must be: graph inputs, weights and
// outputs; the result of a reduce whose value is reused or reached through a view; a
// value that a window or expand would otherwise recompute many times; a value with
// several consumers that is too costly to recompute. Everything else is fused: an
// elementwise chain becomes part of the kernel that consumes it, and the elementwise
// ops after a reduce (bias, batch-norm, activation, residual add) become its epilogue.
#pragma once
#include <string>
#include <vector>

#include "graph/graph.h"

namespace edgec {

enum class BufferRole { Input, Output, Weight, Intermediate };

struct ScheduledBuffer {
  std::string name;
  BufferRole role;
  DType dtype;                 // of the values it holds
  Shape shape;
  const Node* node = nullptr;  // the node whose value it holds
  int io_index = -1;           // Input/Output: position in the model's inputs/outputs
  DType storage = dtype;       // how they are stored (F32 for F16 intermediates, see below)
  // Order of the dims in memory: stored dim i is dim layout[i] of `shape`. Empty: row-major
  // in `shape`'s order. Only intermediates get another order (see channels_last).
  std::vector<int64_t> layout;
  size_t bytes() const { return static_cast<size_t>(numel(shape)) * dtype_size(storage); }
  Shape stored_shape() const;
};

struct ScheduledKernel {
  std::string name;
  const Node* root;            // the realized node it computes
  int output;                  // buffer written
  std::vector<int> inputs;     // buffers read, in first-use order
  // A row kernel (ScheduleOptions::fuse_row_reductions): per row along the root's dims from
  // row_axis on (the trailing dims), these nodes (each a reduce along them, maybe with
  // elementwise ops after it; producers first) are computed before the root, which reads
  // them broadcast along the row. Empty for an ordinary kernel.
  std::vector<const Node*> row_stages;
  int row_axis = -1;
};

// Copies for model outputs that are an input, a weight or another output.
struct ScheduledCopy {
  int src, dst;
};

struct Step {  // one entry of the command queue, in order
  enum class Kind { Kernel, Copy } kind;
  int index;   // into kernels or copies
};

struct Schedule {
  std::vector<ScheduledBuffer> buffers;
  std::vector<ScheduledKernel> kernels;
  std::vector<ScheduledCopy> copies;
  std::vector<Step> steps;
  std::vector<int> inputs, outputs;   // buffer ids, in model order
  // Buffer holding a realized node (-1 if the node is fused into its consumers).
  int buffer_of(const Node* n) const;
  std::vector<int> node_buffer;       // indexed by Node::id
};

struct ScheduleOptions {
  // Keep F16 intermediates in F32. F16 values are computed in F32 anyway on CPUs without
  // half arithmetic, and x86 (AVX2) has no masked or gathered 16-bit loads: stored as
  // F16 every padded or strided read would go element by element. Model inputs,
  // outputs and weights keep their dtype. The driver sets it from the target: GPUs
  // (TargetSpec::f16_storage) keep F16 intermediates in half, read with vload_half, and so
  // does aarch64-fp16, which computes them in half.
  bool f16_intermediates_in_f32 = true;
  // Store the 4-D intermediates of convolutions and pooling channels-last (N, H, W, C) in
  // place of NCHW: a kernel then computes consecutive channels of one pixel as one vector,
  // the weights along output channels are consecutive (the frontend packs them so) and
  // the input of every tap is one broadcast. The model's inputs and outputs keep NCHW.
  bool channels_last = false;
  // Fuse the reductions along the innermost dims that an elementwise kernel reads broadcast
  // along it (Softmax's max and sum) into that kernel: one kernel that, per row, runs the
  // reductions one after the other and then computes the row, while the row is in cache, in
  // place of a kernel per reduction, each streaming the tensor again. The LLVM back end
  // (KernelIR::row_stages) emits such kernels; GPU back ends keep one kernel per reduction.
  bool fuse_row_reductions = false;
};

Schedule schedule_graph(const Graph& graph, const ScheduleOptions& options = {});

}  // namespace edgec
