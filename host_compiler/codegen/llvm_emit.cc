// Kernel IR -> LLVM IR. Every kernel becomes
//   void name(void* const* args, int32_t core_id, int32_t num_cores)
// that loads its buffer pointers, takes its share of the outermost parallel loop, and
// runs the loop nest. Math that would call libm (exp, log, tanh, erf, sin, cos, pow)
// is expanded inline so that the code needs no dynamic linker.
//
// The innermost output dimension is vectorized explicitly: each iteration computes
// `lanes` consecutive outputs as one LLVM vector (a reduce keeps `lanes` accumulators),
// which keeps the order of every float reduction and so the results of the scalar
// loop, while LLVM's own vectorizers would need reassociation. A load whose index
// moves by one element per lane is a vector load (masked where a pad guard applies),
// by 2-4 elements a masked load of the span and a shuffle; one that does not depend on
// the lane is a broadcast; anything else a gather. A load with a data-dependent term (the
// Gather op) clamps that term into its axis and is a gather unless the term is the same
// for every lane.
// Index math runs in 32 bits when every index in the kernel fits.
//
// A reduce kernel (conv, matrix product, pooling) computes a register tile per step of its
// loops: several vectors along the vectorized dim times several outputs along one more dim
// (choose_register_tile; edgec --tune times the model's best few and may force another),
// with the reduce loops reordered so the loads move least in the innermost one, the tiles
// along the vectorized dim outermost where the weights outgrow the cache, and a guard-free
// copy of the reduction for tiles inside the image (in a border tile, of the innermost loop
// for each tap that reads no padding).
#include <llvm/Analysis/VectorUtils.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsAArch64.h>
#include <llvm/IR/IntrinsicsHexagon.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "codegen/llvm_emit.h"

#include "bundle_generated.h"

namespace edgec {

namespace {

using llvm::IRBuilder;
using LV = llvm::Value;

bool is_unsigned(DType t) { return t == DType::U8 || t == DType::U16 || t == DType::U32 || t == DType::U64 || t == DType::Bool; }

// F16 on a target with half arithmetic (TargetSpec::half_arithmetic; on the CPU:
// aarch64-fp16, ARMv8.2 FEAT_FP16). As in the OpenCL emitter's half mode: F16 values are
// computed in half (loads and stores convert nothing, a vector register holds 8 of them), F16
// constants are half, a cast to or from F16 is one fptrunc / fpext, and the transcendentals
// (exp, log, tanh, erf, sin, cos, pow) stay float expansions between an fpext and an fptrunc
// (a half polynomial would lose digits for no gain: they are a small part of the time).
// ReduceMax over F16 runs in half (exact).
//
// F16 sums differ from the OpenCL policy, which adds each half product into a float
// accumulator. On NEON that costs two fcvtl and two float adds per 8 products: no faster
// than the float code, so the point of FP16 (8 multiply-adds per `fmla v.8h`) would be lost.
// A half accumulator over the whole reduction is no answer either: its error grows with the
// length (2048 + 1 == 2048 in half; a 3x3 conv over 256 channels sums 2304 products). So a
// sum accumulates in half over blocks of at most kHalfBlock steps of its reduce loops, one
// `fmla` per step, and the blocks are added in float (two fcvtl and two fadd per block); the
// total is rounded to half once. The half rounding error is then bounded by the block's
// length, not the reduction's: at most about kHalfBlock half-ulps (2^-11) of a block's sum of
// magnitudes, typically a few. A reduction of at most kHalfBlock steps sums in half only.
// 8 trades the two: the fp16 driving model under qemu (BENCHMARKS.md, seeds 1-3) used at
// most 65% / 84% / 88% / 105% of its tolerance with blocks of 1 / 8 / 16 / 32 steps, and
// with 16 a change of code shape elsewhere (the written-out taps; not traced, likely other
// multiply-adds fused, which in half rounds visibly) took it to 113%, where 8 stays at 82%. A block's overhead
// per accumulator (fcvtl, fcvtl2, two fadd, the zeroing, and spills of the float sums where a
// tile has many: 5-8 instructions) is then up to about one per `fmla`.
constexpr int64_t kHalfBlock = 8;

// Vector registers the integer requantization epilogue (Hexagon: emit_requantize_vector)
// holds beside a register tile's accumulators: its values derived from one vector of scales
// (shared by the tile's pixels) and its constants. A tile that leaves fewer spilled them:
// MobileNetV2's 3 x 7 tiles spent half the epilogue's packets on spills and reloads.
constexpr int kEpiloguePerVector = 8;
constexpr int kEpilogueShared = 10;

// Whether a kernel computes in half where the target can: its accumulator (a reduction) or
// its result is F16. Such a kernel gets twice the lanes (CPU vectors of 2-byte elements).
bool computes_in_half(const KernelIR& k) {
  return k.has_reduce() ? k.acc_dtype == DType::F16 : k.result->dtype == DType::F16;
}

// Whether a kernel gets the target's integer vectors (TargetSpec::int_vector_bytes: HVX on
// Hexagon, whose float code is scalar): it accumulates integers (an 8-bit conv or matrix
// product); its float epilogue then runs lane by lane.
bool uses_int_vectors(const KernelIR& k, const TargetSpec& t) {
  return t.int_vector_bytes > 0 && k.has_reduce() && k.acc_dtype == DType::I32;
}

// The 8-bit table index a Gather's data-dependent term is, where it is one: a widened uint8
// load (index x), or a widened int8 load plus 128 (index x + 128, x's byte with its top bit
// flipped). Returns that load and whether the top bit flips; null where the term is
// anything else.
std::pair<const Value*, bool> byte_table_index(const Value* load) {
  if (!load->dynamic || load->dynamic_stride != 1 || load->dynamic_extent < 256 || !load->guards.empty() ||
      load->index.max() != 0 || load->index.min() != 0)
    return {nullptr, false};
  const Value* d = load->dynamic;
  int64_t plus = 0;
  if (d->kind == Value::Kind::Alu && (d->op == Op::Add || d->op == Op::Sub) && d->srcs[1]->kind == Value::Kind::Const) {
    plus = static_cast<int64_t>(d->srcs[1]->constant) * (d->op == Op::Sub ? -1 : 1);
    d = d->srcs[0];
  }
  if (d->kind != Value::Kind::Alu || d->op != Op::Cast || is_float(d->dtype) || d->srcs[0]->kind != Value::Kind::Load ||
      d->srcs[0]->dynamic)
    return {nullptr, false};
  const DType t = d->srcs[0]->dtype;
  if (t == DType::U8 && plus == 0) return {d->srcs[0], false};
  if (t == DType::I8 && plus == 128) return {d->srcs[0], true};
  return {nullptr, false};
}

// Whether a kernel runs on HVX in byte lanes (Hexagon, whose float code is scalar): every
// value an integer or bool, loads of 1-byte elements, its only data-dependent reads 8-bit
// tables indexed by a byte (vlut32: QLinearSigmoid, SiLU, LeakyRelu tables), its result 8-bit
// and its reduction, if any, a max (MaxPool). A pair table (65,536 entries) stays scalar.
bool uses_byte_vectors(const KernelIR& k, const TargetSpec& t) {
  if (t.int_vector_bytes <= 0 || dtype_size(k.args[0].dtype) != 1 || is_float(k.out_dtype)) return false;
  if (k.has_reduce() && (k.reduce_op != Op::ReduceMax || dtype_size(k.acc_dtype) != 1 || is_float(k.acc_dtype))) return false;
  for (const auto& v : k.values) {
    if (is_float(v->dtype) || v->dtype == DType::I64 || v->dtype == DType::U64) return false;
    if (v->kind == Value::Kind::Load) {
      if (dtype_size(k.args[size_t(v->arg)].dtype) != 1) return false;
      if (v->dynamic && !byte_table_index(v.get()).first) return false;
    }
    if (v->kind == Value::Kind::Alu)
      switch (v->op) {
        case Op::Cast: case Op::Where: case Op::Max: case Op::Min: case Op::Add: case Op::Sub:
        case Op::CmpLt: case Op::CmpEq: case Op::And: case Op::Or: case Op::Not: break;
        default: return false;
      }
  }
  return true;
}

// QuantizeLinear's roundeven(fl32(x / s)) for a constant s > 0 without the division
// (Hexagon has none: a float divide is ~10 packets of reciprocal and Newton steps). The
// result is monotone in x, so code k is reached exactly from the float threshold t_k = the
// smallest float32 x with roundeven(fl32(x / s)) >= k, found here with the host's IEEE
// division (the ONNX definition itself). Returns t_k for k = lo .. hi + 1 with t_lo = -inf (any x
// clamps to at least lo) and t_{hi+1} = NaN (no x compares >= it); nullopt where s is outside
// the range the run-time estimate is proved for (threshold_quantize) or a search does not end.
std::optional<std::vector<float>> quantize_thresholds(float s, int lo, int hi) {
  if (!(s >= 0x1p-100f && s <= 0x1p100f) || hi < lo || hi - lo > 1024) return std::nullopt;
  auto reaches = [s](float x, int k) {
    volatile float q = x / s;  // float32 division, correctly rounded
    return std::nearbyint(q) >= float(k);  // half to even in the default rounding mode
  };
  const float inf = std::numeric_limits<float>::infinity(), big = std::numeric_limits<float>::max();
  std::vector<float> t{-inf};
  for (int k = lo + 1; k <= hi; ++k) {
    if (reaches(-big, k)) return std::nullopt;  // every finite x reaches k: not a case s allows
    if (!reaches(big, k)) {  // only +inf does
      t.push_back(inf);
      continue;
    }
    float x = float(std::clamp((double(k) - 0.5) * double(s), -double(big), double(big)));
    int steps = 0;
    while (!reaches(x, k) && ++steps < 64) x = std::nextafter(x, inf);
    while (reaches(std::nextafter(x, -inf), k) && ++steps < 64) x = std::nextafter(x, -inf);
    if (steps >= 64 || !reaches(x, k)) return std::nullopt;
    t.push_back(x);
  }
  t.push_back(std::numeric_limits<float>::quiet_NaN());
  return t;
}

// x86_64 with AVX2's 16 vector registers: the target the cost rules below that name it were
// measured on (AVX-512's 32 registers and the other targets keep the general model).
bool measured_on_avx2(const TargetSpec& target) {
  return target.bundle_arch == static_cast<int>(edge::bundle::Arch::X86_64) && target.vector_registers <= 16;
}

class Emitter {
 public:
  // forced: the register tile to use when the cost model allows it (edgec --tune).
  Emitter(llvm::Module& m, const KernelIR& k, const TargetSpec& target, const RegisterTile* forced = nullptr)
      : m_(m), ctx_(m.getContext()), k_(k), b_(ctx_), forced_tile_(forced), bf16_dot_(target.bf16_products),
        int8_dot_(target.int8_dot), int8_dot_feature_(target.int8_dot_feature),
        x86_gathers_(target.bundle_arch == static_cast<int>(edge::bundle::Arch::X86_64)),
        hvx_block_loads_(target.bundle_arch == static_cast<int>(edge::bundle::Arch::Hexagon)),
        depthwise_border_model_(measured_on_avx2(target)),
        single_reduce_slack_(measured_on_avx2(target)),
        row_pass_tiles_(measured_on_avx2(target)),
        row_stream_bytes_(int64_t{2} * target.cache_bytes_per_core),
        border_work_limit_(measured_on_avx2(target) ? 8 : 4),
        target_features_(target.llvm_features),
        half_(target.half_arithmetic), int_divide_(target.int_divide), fp_rounding_(target.fp_rounding),
        f64_arithmetic_(target.f64_arithmetic), f16_conversion_(target.f16_conversion),
        // A vector register holds vector_bytes / 4 floats, or twice as many halves where
        // the kernel computes in half (NEON: 8 lanes of .8h): the lanes of the vectorized dim,
        // and the accumulator vectors the register-tile cost model counts, are registers.
        // (The float sums of half blocks, kHalfBlock, are not counted: they are touched once
        // per block, outside the inner loops, and spill there when they must.)
        int_vectors_(uses_int_vectors(k, target)),
        byte_vectors_(!int_vectors_ && uses_byte_vectors(k, target)),
        vector_lanes_(int_vectors_    ? target.int_vector_bytes / 4
                      : byte_vectors_ ? target.int_vector_bytes
                                      : std::max(1, target.vector_bytes / (half_ && computes_in_half(k) ? 2 : 4))),
        vector_registers_(int_vectors_ ? target.int_vector_registers : target.vector_registers),
        int8_dot_columns_(target.int8_dot_columns),
        float_scalar_epilogue_(int_vectors_ && target.vector_bytes < target.int_vector_bytes),
        // A tile's slice of the weights stays in cache while the image passes under it: 5/8 of
        // the core's L2 (measured on Zen 4, 1 MB: ResNet-18's last convs ran 40% faster with
        // 590 KB slices than with 295 KB ones; the rest holds the input and output rows).
        slice_budget_(static_cast<int64_t>(target.cache_bytes_per_core) * 5 / 8) {
    // a*b+c may become one fused multiply-add: as deterministic, and more accurate.
    llvm::FastMathFlags fmf;
    fmf.setAllowContract(true);
    b_.setFastMathFlags(fmf);
  }

  // The decisions before any code: the vectorized dim (returned; -1: none), the unrolled
  // dim and the register tile. Outer loops run over the output; the first dim longer than 1
  // is split across cores (the back end's plan), the last one longer than 1 (stride 1 in
  // the output) is vectorized.
  int plan() {
    const Shape& out = k_.out_shape;
    int vec = static_cast<int>(out.size()) - 1;
    while (vec >= 0 && out[vec] == 1) --vec;
    vec = choose_vectorized_output_dim(vec);
    // Some kernels read along their innermost reduce dim, not along the output (a
    // matrix-vector product with a transposed weight): vectorize the reduction there.
    reduce_vec_ = choose_reduce_vectorization(vec);
    if (reduce_vec_ >= 0) vec = -1;
    unroll_dim_ = choose_unroll_dim(reduce_vec_ >= 0 ? reduce_vec_ : vec, k_.launch.parallel_dim);
    choose_register_tile(vec, vec >= 0 ? lanes_for(out[vec]) : 1);
    find_depthwise_hvx(vec);
    choose_transposed_blocks(vec);
    transpose_tile_stores_ = stores_tile_transposed(vec);
    interleave_dim_ = choose_interleaved_stores(vec);
    return vec;
  }

  // Every register tile the cost model allows, cheapest first (the first is its choice).
  std::vector<RegisterTile> allowed_tiles() {
    if (k_.is_row_kernel()) return {};  // no register tile
    const int vec = plan();
    std::vector<RegisterTile> tiles;
    if (row_pass_vectors(vec, vec >= 0 ? lanes_for(k_.out_shape[vec]) : 1) > 0) return tiles;  // no choice
    for (const auto& [cost, tile] : tile_costs(vec, vec >= 0 ? lanes_for(k_.out_shape[vec]) : 1)) tiles.push_back(tile);
    return tiles;
  }

  // The order of the output loops the code will have, outermost first (choose_output_order).
  std::vector<int> planned_output_order() {
    if (k_.is_row_kernel()) return {};
    return choose_output_order(plan());
  }

  // Returns the CPU features the code uses beyond the target's (emit_kernel).
  std::vector<std::string> emit() {
    auto* ptr = llvm::PointerType::get(ctx_, 0);
    auto* i32 = llvm::Type::getInt32Ty(ctx_);
    auto* fty = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx_), {ptr, i32, i32}, false);
    fn_ = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, k_.name, m_);
    fn_->setDSOLocal(true);
    fn_->addFnAttr(llvm::Attribute::NoUnwind);
    fn_->addFnAttr("no-builtins");
    fn_->addFnAttr("no-trapping-math", "true");
    auto* entry = llvm::BasicBlock::Create(ctx_, "entry", fn_);
    b_.SetInsertPoint(entry);
    llvm::Argument* args = fn_->getArg(0);
    // Every argument is a distinct buffer: the memory planner never lets a kernel's
    // output overlap what it reads. Tell LLVM so it can vectorize freely.
    llvm::MDBuilder mdb(ctx_);
    llvm::MDNode* domain = mdb.createAnonymousAliasScopeDomain(k_.name);
    std::vector<llvm::Metadata*> scopes;
    for (size_t i = 0; i < k_.args.size(); ++i) scopes.push_back(mdb.createAnonymousAliasScope(domain));
    for (size_t i = 0; i < k_.args.size(); ++i) {
      LV* slot = b_.CreateConstInBoundsGEP1_64(ptr, args, i);
      auto* p = b_.CreateLoad(ptr, slot);
      p->setMetadata(llvm::LLVMContext::MD_nonnull, llvm::MDNode::get(ctx_, {}));
      buffers_.push_back(p);
      std::vector<llvm::Metadata*> others;
      for (size_t j = 0; j < scopes.size(); ++j)
        if (j != i) others.push_back(scopes[j]);
      scope_md_.push_back(llvm::MDNode::get(ctx_, {scopes[i]}));
      noalias_md_.push_back(llvm::MDNode::get(ctx_, others));
    }
    vars_.assign(k_.num_vars(), nullptr);
    // Index math in 64 bits, as addresses are: 32-bit indices (where every index fits) cost a
    // sign extension per load address and kept LLVM from folding the constant offsets of a
    // register tile's loads into their addresses (depthwise convs 10-28% slower, EfficientNet-B0
    // 13% slower with AVX2, 5% with AVX-512; BENCHMARKS.md).
    // A 32-bit target (Hexagon) indexes in 32 bits, as its addresses are: 64-bit index math
    // would cost register pairs there, and nothing it can address needs more.
    idx_ty_ = m_.getDataLayout().getPointerSizeInBits() == 32 ? b_.getInt32Ty() : b_.getInt64Ty();

    if (k_.is_row_kernel()) {
      emit_row_kernel();
      b_.CreateRetVoid();
      return {};
    }
    const Shape& out = k_.out_shape;
    const int par = k_.launch.parallel_dim;
    const int vec = plan();
    check_requant_params_once(vec);
    int max_lanes = vector_lanes_;
    unroll_copies_ = unroll_;
    reduce_order_ = choose_reduce_order();
    if (vec >= 0) find_dot_groups(vec);
    std::vector<int> out_order = choose_output_order(vec);
    int lanes = 1;           // of the vectorized dim, once its loop is open
    LV* vec_end = nullptr;   // where it stops, when it is ragged
    const int64_t chunk = vector_chunk(vec);
    LV* chunk_lo = nullptr;  // the chunk of the vectorized dim being emitted (vector_chunk)
    LV* chunk_hi = nullptr;
    std::function<void(size_t)> loop_out = [&](size_t level) {
      if (level == out_order.size()) {
        vec_var_ = lanes > 1 ? vec : -1;
        emit_element(lanes, vec_end);
        vec_var_ = -1;
        return;
      }
      const int d = out_order[level];
      if (d == kVectorChunkLevel) {  // this core's share of the vectorized dim, chunk by chunk
        const int step = lanes_for(out[vec]) * tile_vectors_;
        auto [lo, hi] = vec == par ? core_share(out[vec], step) : std::pair<LV*, LV*>(ic(0), ic(out[vec]));
        emit_loop(lo, hi, static_cast<int>(chunk), [&](LV* iv) {
          chunk_lo = iv;
          LV* end = b_.CreateAdd(iv, ic(chunk));
          chunk_hi = b_.CreateSelect(b_.CreateICmpSLT(end, hi), end, hi);
          loop_out(level + 1);
        });
        return;
      }
      if (out[d] == 1) {
        loop_out(level + 1);
        return;
      }
      const bool vectorized = d == vec && vec >= 0 && max_lanes > 1;
      // Vectors of `lanes` outputs, tile_vectors_ at a time along this dim.
      const int step = vectorized ? lanes_for(out[d]) * tile_vectors_ : 1;
      auto [lo, hi] = d == vec && chunk_lo ? std::pair<LV*, LV*>(chunk_lo, chunk_hi)
                      : d == par            ? core_share(out[d], step)
                                            : std::pair<LV*, LV*>(ic(0), ic(out[d]));
      if (vectorized) {
        lanes = lanes_for(out[d]);
        emit_tiles_then_rest(lo, hi, out[d], step, [&](LV* iv, LV* end) {
          vars_[d] = iv;
          vec_end = end;
          loop_out(level + 1);
        });
        lanes = 1;
        vec_end = nullptr;
        return;
      }
      if (d == interleave_dim_) {  // all of it in each element (emit_interleaved_element)
        vars_[d] = ic(0);
        loop_out(level + 1);
        return;
      }
      if (d == transpose_dim_) {
        // Blocks of as many outputs as a vector has lanes (transposed_loads_); the last one
        // may be short.
        emit_loop(lo, hi, lanes_for(out[vec]), [&](LV* iv) {
          vars_[d] = iv;
          transpose_end_ = hi;
          loop_out(level + 1);
          transpose_end_ = nullptr;
        });
        return;
      }
      if (d == unroll_dim_) {
        // A tile of `copies` outputs from iv on; copies past `end` repeat the last one.
        auto tile_at = [&](LV* iv, LV* end, int copies) {
          vars_[d] = iv;
          unroll_end_ = end;
          unroll_copies_ = copies;
          loop_out(level + 1);
          unroll_copies_ = unroll_;
        };
        std::vector<bool> open(out.size(), false);
        for (size_t l = 0; l < level; ++l)
          if (out_order[l] != kVectorChunkLevel) open[out_order[l]] = true;
        if (vec >= 0) open[vec] = false;  // a guard along the lanes differs between them
        std::vector<const Guard*> along = guards_along_unroll(open);
        if (!along.empty()) {
          emit_tiles_between_borders(lo, hi, along, tile_at);
          return;
        }
        emit_loop(lo, hi, unroll_, [&](LV* iv) { tile_at(iv, hi, unroll_); });
        return;
      }
      emit_loop(lo, hi, 1, [&](LV* iv) {
        vars_[d] = iv;
        loop_out(level + 1);
      });
    };
    loop_out(0);
    b_.CreateRetVoid();
    // An instruction past the target's features (vpdpbusd) is enabled in this function only:
    // the other kernels never use it and the bundle requires it only where a kernel does.
    std::vector<std::string> extra;
    for (const std::string& f : used_features_)
      if (target_features_.find("+" + f) == std::string::npos) extra.push_back(f);
    if (!extra.empty()) {
      std::string fs = target_features_;
      for (const std::string& f : extra) fs += (fs.empty() ? "+" : ",+") + f;
      fn_->addFnAttr("target-features", fs);
    }
    return {used_features_.begin(), used_features_.end()};
  }

 private:
  // ---- row kernels (KernelIR::row_stages) ----
  // The loops run over the output's other dims (the first longer than 1 split across
  // cores), each row's stages and outputs inside. The row is the trailing dims from row_dim
  // on (schedule.cc fuse_row_reductions: a LayerNorm over the last two dims, an
  // InstanceNorm's H and W), contiguous in memory; it runs in vectors along its innermost
  // dim longer than 1, the others looped inside: each stage keeps one partial result per
  // lane, combined in a fixed tree after the row (scalar where the target's float code is:
  // one accumulator in the row's order). A row is computed by one core with the same code:
  // bit-identical for any split.
  void emit_row_kernel() {
    const Shape& out = k_.out_shape;
    const int rank = static_cast<int>(out.size()), row = k_.row_dim, par = k_.launch.parallel_dim;
    int vector_dim = rank - 1;
    while (vector_dim > row && out[size_t(vector_dim)] == 1) --vector_dim;
    const int row_lanes = vector_lanes_ > 1 ? lanes_for(out[size_t(vector_dim)]) : 1;
    for (int d = 0; d < rank; ++d) vars_[d] = ic(0);
    std::function<void(int)> loop_out = [&](int d) {
      if (d == row) {
        emit_row(vector_dim, row_lanes);
        return;
      }
      if (out[d] == 1) {
        loop_out(d + 1);
        return;
      }
      auto [lo, hi] = d == par ? core_share(out[d], 1) : std::pair<LV*, LV*>(ic(0), ic(out[d]));
      emit_loop(lo, hi, 1, [&](LV* iv) {
        vars_[d] = iv;
        loop_out(d + 1);
      });
    };
    loop_out(0);
  }

  // One row: row_lanes > 1 runs it in vectors along vector_dim, its innermost dim.
  void emit_row(int vector_dim, int row_lanes) {
    const int64_t extent = k_.out_shape[size_t(vector_dim)];
    // A stage's vector loop keeps `chains` accumulators, vector u of each step into the u-th,
    // combined in a fixed order after the loop: with one, each step waited for the last
    // one's add (the zoo's LayerNorms over 128 elements ran 1.4x slower as a row kernel
    // than as three kernels).
    const int chains = row_lanes > 1 ? static_cast<int>(std::clamp<int64_t>(extent / row_lanes, 1, 4)) : 1;
    // Loops over the row (its outer dims, then vector_dim), body(chain) at each element (or
    // vector of them, the ragged end's lanes masked, in chain 0) with a fresh memo: the
    // values of one loop's body do not dominate the next's. Steps of `ways` vectors.
    std::function<void(int, int, const std::function<void(int)>&)> over_row = [&](int d, int ways,
                                                                                  const std::function<void(int)>& body) {
      if (d < vector_dim) {
        if (k_.out_shape[size_t(d)] == 1) return over_row(d + 1, ways, body);
        emit_loop(ic(0), ic(k_.out_shape[size_t(d)]), 1, [&](LV* iv) {
          vars_[d] = iv;
          over_row(d + 1, ways, body);
        });
        return;
      }
      if (row_lanes > 1) {
        const int64_t whole = ways > 1 ? extent / (row_lanes * ways) * (row_lanes * ways) : 0;
        if (whole > 0)
          emit_loop(ic(0), ic(whole), row_lanes * ways, [&](LV* iv) {
            for (int u = 0; u < ways; ++u) {
              vars_[vector_dim] = b_.CreateAdd(iv, ic(int64_t(u) * row_lanes));
              begin_lanes(vector_dim, row_lanes, nullptr);
              body(u);
              end_lanes();
            }
          });
        emit_tiles_then_rest(ic(whole), ic(extent), extent, row_lanes, [&](LV* iv, LV* end) {
          vars_[vector_dim] = iv;
          begin_lanes(vector_dim, row_lanes, end);
          body(0);
          end_lanes();
        });
        return;
      }
      emit_loop(ic(0), ic(extent), 1, [&](LV* iv) {
        vars_[vector_dim] = iv;
        memo_.clear();
        body(0);
      });
      memo_.clear();
    };
    // The staged value, read back from the output row by the result.
    Value staged_load(Value::Kind::Load);
    staged_load.dtype = k_.out_dtype;
    staged_load.index = output_index(k_);
    const size_t stages = k_.row_stages.size();
    stage_accs_.assign(stages, nullptr);
    for (size_t j = 0; j < stages; ++j) {
      const KernelIR::RowStage& st = k_.row_stages[j];
      llvm::Type* at = lanes_of(scalar_type(st.acc_dtype), row_lanes);
      std::vector<llvm::AllocaInst*> accs(size_t(chains), nullptr);
      for (llvm::AllocaInst*& acc : accs) {
        IRBuilder<> eb(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
        acc = eb.CreateAlloca(at);
        b_.CreateStore(reduce_identity(at, st.reduce_op, st.acc_dtype), acc);
      }
      over_row(k_.row_dim, chains, [&](int chain) {
        LV* a = b_.CreateLoad(at, accs[size_t(chain)]);
        LV* c = combine(a, value(st.body), st.reduce_op, st.acc_dtype);
        if (lane_mask_) c = b_.CreateSelect(lane_mask_, c, a);  // past the row's end
        b_.CreateStore(c, accs[size_t(chain)]);
        if (j + 1 == stages && k_.row_staged) store(output_index(k_), splat(value(k_.row_staged), lanes_), k_.args[0].dtype);
      });
      std::vector<LV*> partial;
      for (llvm::AllocaInst* acc : accs) partial.push_back(b_.CreateLoad(at, acc));
      for (size_t n = partial.size(); n > 1; n = (n + 1) / 2)  // pairwise, a fixed tree
        for (size_t i = 0; i < n / 2; ++i)
          partial[i] = combine(partial[i], partial[i + (n + 1) / 2], st.reduce_op, st.acc_dtype);
      stage_accs_[j] = row_lanes > 1 ? horizontal(partial[0], st.reduce_op, st.acc_dtype) : partial[0];
      row_values_[st.value] = value(st.value);  // once per row (a Softmax's reciprocal of the sum)
    }
    over_row(k_.row_dim, 1, [&](int) {
      if (k_.row_staged) memo_[k_.row_staged] = load(&staged_load);
      store(output_index(k_), splat(value(k_.result), lanes_), k_.args[0].dtype);
    });
    row_values_.clear();
    memo_.clear();
  }

  // ---- constants of the type of a value (scalars, or splats for vectors) ----
  LV* ic(int64_t v) { return llvm::ConstantInt::get(idx_ty_, static_cast<uint64_t>(v), true); }
  static LV* fc(LV* like, double c) { return llvm::ConstantFP::get(like->getType(), c); }
  static LV* intc(LV* like, int64_t c) { return llvm::ConstantInt::get(like->getType(), static_cast<uint64_t>(c), true); }
  // The type `elem` with as many lanes as `like` has.
  static llvm::Type* same_lanes(LV* like, llvm::Type* elem) {
    if (auto* v = llvm::dyn_cast<llvm::FixedVectorType>(like->getType())) return llvm::FixedVectorType::get(elem, v->getNumElements());
    return elem;
  }
  llvm::Type* lanes_of(llvm::Type* elem, int lanes) {
    return lanes == 1 ? elem : static_cast<llvm::Type*>(llvm::FixedVectorType::get(elem, lanes));
  }
  LV* splat(LV* x, int lanes) { return lanes == 1 || x->getType()->isVectorTy() ? x : b_.CreateVectorSplat(lanes, x); }

  // A loop: iv from `start` by `step` while cond(iv) holds, running body(iv); returns iv
  // where it stopped. keep_rolled: LLVM must not unroll it (a register tile's reduction step
  // already issues enough independent multiply-adds; unrolled, the loads of several steps
  // are hoisted together and spill the accumulators).
  // no_pipelining: the machine pipeliner must leave it alone (check_requant_params_once's
  // loop: LLVM 19's window scheduler crashed on loops of hexagon-v65 code near it).
  LV* emit_while(LV* start, int step, const std::function<LV*(LV*)>& cond, const std::function<void(LV*)>& body,
                 bool keep_rolled = false, bool no_pipelining = false) {
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    auto* header = llvm::BasicBlock::Create(ctx_, "loop", fn_);
    auto* bodyb = llvm::BasicBlock::Create(ctx_, "body", fn_);
    auto* exit = llvm::BasicBlock::Create(ctx_, "exit", fn_);
    b_.CreateBr(header);
    b_.SetInsertPoint(header);
    llvm::PHINode* iv = b_.CreatePHI(idx_ty_, 2);
    iv->addIncoming(start, pre);
    b_.CreateCondBr(cond(iv), bodyb, exit);
    b_.SetInsertPoint(bodyb);
    body(iv);
    LV* next = b_.CreateAdd(iv, ic(step), "", /*HasNUW=*/step > 0, /*HasNSW=*/true);
    iv->addIncoming(next, b_.GetInsertBlock());
    llvm::Instruction* back = b_.CreateBr(header);
    if (keep_rolled || no_pipelining) {
      std::vector<llvm::Metadata*> ops = {nullptr};
      if (keep_rolled) ops.push_back(llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.unroll.disable")}));
      if (no_pipelining)
        ops.push_back(llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.pipeline.disable"),
                                               llvm::ConstantAsMetadata::get(b_.getTrue())}));
      llvm::MDNode* loop_id = llvm::MDNode::getDistinct(ctx_, ops);
      loop_id->replaceOperandWith(0, loop_id);
      back->setMetadata(llvm::LLVMContext::MD_loop, loop_id);
    }
    b_.SetInsertPoint(exit);
    return iv;
  }
  void emit_loop(LV* lo, LV* hi, int step, const std::function<void(LV*)>& body, bool keep_rolled = false,
                 bool no_pipelining = false) {
    emit_while(lo, step, [&](LV* iv) { return b_.CreateICmpSLT(iv, hi); }, body, keep_rolled, no_pipelining);
  }
  // Steps iv from `start` while cond(iv) holds and returns where it stopped.
  LV* emit_scan(LV* start, int step, const std::function<LV*(LV*)>& cond) {
    return emit_while(start, step, cond, [](LV*) {});
  }

  // A loop over [lo, hi) (hi at most `extent`) by `step`: whole steps unmasked, as body(iv,
  // null) (plain loads that fold into the multiply-adds); the remainder past the last whole
  // step of the extent, if [lo, hi) has it, once as body(start, hi): lanes from hi on masked off.
  void emit_tiles_then_rest(LV* lo, LV* hi, int64_t extent, int step, const std::function<void(LV*, LV*)>& body) {
    const int64_t whole = extent / step * step;
    LV* whole_end = b_.CreateSelect(b_.CreateICmpSLT(hi, ic(whole)), hi, ic(whole));
    if (whole > 0) emit_loop(lo, whole_end, step, [&](LV* iv) { body(iv, nullptr); });
    if (whole < extent) {
      auto* rest = llvm::BasicBlock::Create(ctx_, "rest", fn_);
      auto* done = llvm::BasicBlock::Create(ctx_, "rest_done", fn_);
      b_.CreateCondBr(b_.CreateICmpSGT(hi, ic(whole)), rest, done);
      b_.SetInsertPoint(rest);
      body(ic(whole), hi);
      b_.CreateBr(done);
      b_.SetInsertPoint(done);
    }
  }

  // This core's share [lo, hi) of a parallel loop over [0, extent): whole tiles of `step`,
  // [tiles*core/cores, tiles*(core+1)/cores) * step, in 64 bits and capped at the extent:
  // vectors start at multiples of the lanes and no tile is split between cores.
  std::pair<LV*, LV*> core_share(int64_t extent, int step) {
    const int64_t tiles = (extent + step - 1) / step;
    LV* c64 = b_.CreateSExt(fn_->getArg(1), b_.getInt64Ty());
    LV* n64 = b_.CreateSExt(fn_->getArg(2), b_.getInt64Ty());
    LV* t64 = b_.getInt64(static_cast<uint64_t>(tiles));
    LV* s64 = b_.getInt64(static_cast<uint64_t>(step));
    LV* lo64 = b_.CreateMul(udiv(b_.CreateMul(c64, t64), n64), s64);
    LV* hi64 = b_.CreateMul(udiv(b_.CreateMul(b_.CreateAdd(c64, b_.getInt64(1)), t64), n64), s64);
    hi64 = b_.CreateSelect(b_.CreateICmpULT(hi64, b_.getInt64(static_cast<uint64_t>(extent))), hi64,
                           b_.getInt64(static_cast<uint64_t>(extent)));
    return {b_.CreateIntCast(lo64, idx_ty_, false), b_.CreateIntCast(hi64, idx_ty_, false)};
  }

  // ---- types ----
  // F16 values are computed in float, or in half where the target has half arithmetic
  // (aarch64-fp16: ARMv8.2 FP16, `fmla v.8h`); see the policy at kHalfBlock.
  llvm::Type* scalar_type(DType t) {
    switch (t) {
      case DType::F16: return half_ ? b_.getHalfTy() : b_.getFloatTy();
      case DType::F32: case DType::BF16: return b_.getFloatTy();
      case DType::F64: return b_.getDoubleTy();
      case DType::Bool: return b_.getInt1Ty();
      default: return b_.getIntNTy(static_cast<unsigned>(dtype_size(t) * 8));
    }
  }
  // F16 and BF16 values are computed in float and stored narrow (F16 in half with half
  // arithmetic: cast() handles it before round_to_narrow).
  llvm::Type* narrow_float_type(DType t) {
    return t == DType::F16 ? b_.getHalfTy() : t == DType::BF16 ? b_.getBFloatTy() : nullptr;
  }
  // x (float) rounded to the narrow float dtype t and back: what a cast to t means.
  LV* round_to_narrow(LV* x, DType t) {
    llvm::Type* nt = narrow_float_type(t);
    return nt ? fp_convert(fp_convert(x, same_lanes(x, nt)), x->getType()) : x;
  }
  llvm::Type* storage_type(DType t) {
    if (llvm::Type* nt = narrow_float_type(t)) return nt;
    if (t == DType::Bool) return b_.getInt8Ty();
    return scalar_type(t);
  }

  // ---- one output element, or `lanes` consecutive ones along vec_var_ ----
  // A reduce kernel computes a register tile of outputs at once: tile_vectors_ vectors
  // along the vectorized dim times unroll_ outputs along one more dim. Its accumulators stay
  // in registers for the whole reduction, hiding the latency of the multiply-adds, and a
  // load that does not depend on one of the two dims is shared by the tile's outputs along
  // it (a conv's weight vector by the pixels, an input pixel's broadcast by the channels).

  // A row shorter than half the register gets narrower vectors (7 outputs: 8 lanes, not 16).
  int lanes_for(int64_t extent) const {
    int lanes = vector_lanes_;
    if (int_vectors_) return lanes;  // HVX has one vector width (narrower ones are widened)
    // HVX bytes: LLVM 19 widens 64-byte vectors to HVX, 32-byte ones it loads byte by byte.
    while (lanes > (byte_vectors_ ? 64 : 2) && lanes / 2 >= extent) lanes /= 2;
    return lanes;
  }

  // Loads of the reduce body (of the whole kernel without one) that would be gathers with
  // lanes along `var`.
  int gathered_loads(int var) const {
    std::vector<const Value*> loads = reduce_body_loads(k_);
    if (!k_.has_reduce())
      for (const auto& v : k_.values)
        if (v->kind == Value::Kind::Load) loads.push_back(v.get());
    int n = 0;
    for (const Value* l : loads)
      if (!cheap_vector_load(l, var)) ++n;
    return n;
  }
  // A load that is one vector load (and at most a shuffle) with lanes along `var`:
  // consecutive, strided by at most 4, the same for every lane, or each element repeated.
  bool cheap_vector_load(const Value* l, int var) const {
    if (l->dynamic) return false;
    std::optional<int64_t> c = lane_stride(l->index, var, vector_lanes_);
    if (c && *c >= 0 && *c <= 4) return true;
    std::optional<LaneRepeat> r = lane_repeat(l->index, var, vector_lanes_);
    return (r && r->stride == 1) || shuffled_span(l->index, var, vector_lanes_).has_value();
  }
  // The output dim whose lanes the reduce body gathers least: the innermost one unless
  // another reads with fewer gathers (a conv writing a model output in NCHW from
  // channels-last data: along the pixels every input load is a gather, along the channels
  // none; its stores become scatters, one per output vector after the whole reduction).
  // Without a reduction only where the innermost dim fills less than half a vector (an
  // image's channels padded to 4 and stored channels-last: one scatter per vector of
  // pixels instead of a gather per channel from each plane).
  int choose_vectorized_output_dim(int innermost) const {
    int64_t reduced = 1;  // per output: what the gathers are saved on, the scatter paid once
    for (int64_t e : k_.reduce_extents) reduced *= e;
    if (innermost < 0 || vector_lanes_ < 2) return innermost;
    if (k_.has_reduce() ? reduced < 4 : k_.out_shape[innermost] * 2 >= vector_lanes_) return innermost;
    int best = innermost, fewest = gathered_loads(innermost);
    for (int d = 0; d < static_cast<int>(k_.out_shape.size()); ++d) {
      if (d == innermost || k_.out_shape[d] * 2 < vector_lanes_) continue;
      int g = gathered_loads(d);
      if (g < fewest) best = d, fewest = g;
    }
    return best;
  }

  // Loads of the reduce body that are cheap vector loads (consecutive, strided by at most
  // 4, or the same for every lane) when lanes run along `var`.
  int cheap_loads(int var) const {
    int n = 0;
    for (const Value* l : reduce_body_loads(k_))
      if (cheap_vector_load(l, var)) ++n;
    return n;
  }
  // The variable of the innermost reduce dim to vectorize, or -1 to vectorize the output.
  // A max (min is a max of negations) is exact in any order, so there the reduce dim with the most cheap loads
  // is taken wherever it is (and run innermost, choose_reduce_order): a DynamicQuantizeLinear's
  // range of a channels-last conv output, reduced over (C, H, W) with C the consecutive one,
  // ran as a scalar chain at 0.1-2 GB/s.
  int choose_reduce_vectorization(int vec) const {
    if (!k_.has_reduce() || vector_lanes_ < 2) return -1;
    int j = static_cast<int>(k_.reduce_extents.size()) - 1;
    while (j >= 0 && k_.reduce_extents[j] == 1) --j;
    if (j < 0) return -1;
    const int first = static_cast<int>(k_.out_shape.size());
    int rvar = k_.reduce_extents[j] >= vector_lanes_ ? first + j : -1;
    if (k_.reduce_op == Op::ReduceMax) {
      int most = rvar >= 0 ? cheap_loads(rvar) : 0;
      for (int i = 0; i < j; ++i) {
        if (k_.reduce_extents[i] < vector_lanes_) continue;
        const int cheap = cheap_loads(first + i);
        if (cheap > most) rvar = first + i, most = cheap;
      }
    }
    if (rvar < 0) return -1;
    int along_out = vec >= 0 && k_.out_shape[vec] * 2 >= vector_lanes_ ? cheap_loads(vec) : 0;
    return cheap_loads(rvar) > along_out ? rvar : -1;
  }

  // The output dim to unroll: the one along which the most loads are shared (vector
  // loads weigh more); on a tie one that is not split across cores, then the later one.
  int choose_unroll_dim(int vec, int par) const {
    if (!k_.has_reduce()) return -1;
    std::vector<const Value*> loads = reduce_body_loads(k_);
    int best = -1, best_score = 0;
    for (int d = 0; d < static_cast<int>(k_.out_shape.size()); ++d) {
      if (d == vec || k_.out_shape[d] < 2) continue;
      int score = 0;
      for (const Value* l : loads)
        if (!load_depends_on(l, d)) score += (vec >= 0 && load_varies_along(l, vec, vector_lanes_)) ? 2 : 1;
      score = score * 2 + (d != par);
      if (score > 1 && score >= best_score) best = d, best_score = score;
    }
    return best;
  }

  // The register tile with the fewest cycles per useful multiply-add (tile_costs), or the
  // one the caller forces (edgec --tune) when the model allows it.
  void choose_register_tile(int vec, int lanes) {
    tile_vectors_ = 1;
    unroll_ = 1;
    std::vector<std::pair<double, RegisterTile>> tiles = tile_costs(vec, lanes);
    if (tiles.empty()) return;
    RegisterTile pick = tiles[0].second;
    for (const auto& [cost, tile] : tiles)
      if (forced_tile_ && tile == *forced_tile_) pick = tile;
    tile_vectors_ = pick.vectors;
    unroll_ = pick.unroll;
    if (const int row = row_pass_vectors(vec, lanes); row > 0) tile_vectors_ = row, unroll_ = 1;
  }
  // The vectors of a row-pass tile, or 0: a reduction of a vectorized output with
  // no second output dim to unroll, whose steps each read a row along the lanes (a
  // GlobalAveragePool / ReduceMean over the pixels of a channels-last intermediate: a step
  // is one pixel's channels). The register tile (at most 12 vectors on AVX2, 8 by the cost
  // model, 4 by edgec --tune) walked every pixel once per tile, reading a few cache lines of
  // each: [1, 112, 112, 256] (12.8 MB) in 8 or 4 passes took 1.3-2.7 ms where onnxruntime's
  // NCHWc GlobalAveragePool takes 0.45-0.8 ms (1 thread, CPU time). This tile covers up to
  // kRowVectors vectors (512 bytes of a pixel's floats; AVX2's 16 registers hold the
  // accumulators), the vectors balanced over the passes; every lane still sums its outputs
  // in the order of the reduce loops (bit-identical to the register tile's results).
  // 256 x 112 x 112: 0.52-0.64 of main's time (2 tiles: both cores busy at 2 threads),
  // 256 x 56 x 56: 0.73, 144 x 56 x 56: 0.85-0.9, one pass over 96 x 56 x 56: 0.61 and over
  // 104 x 28 x 28: 0.51 (edgert-bench --profile; BENCHMARKS.md). 32 vectors (spilled, one
  // pass over 256 channels) took 0.8 of 16's time at 256 x 112 x 112 but 1.3x at 672 x 14
  // x 14; tiles of 16 with a masked last one (not balanced) up to 1.9x.
  int row_pass_vectors(int vec, int lanes) const {
    static constexpr int64_t kRowVectors = 16;
    if (!row_pass_tiles_ || !k_.has_reduce() || vec < 0 || lanes < 2 || unroll_dim_ >= 0 || reduce_vec_ >= 0 ||
        int_vectors_ || byte_vectors_ || !is_float(k_.acc_dtype))
      return 0;
    int64_t steps = 1;
    for (int64_t e : k_.reduce_extents) steps *= e;
    const int64_t vectors = (k_.out_shape[vec] + lanes - 1) / lanes;
    if (steps < 16 || vectors <= 1) return 0;
    // Every load reads consecutive elements along the lanes or one for all of them, and some
    // load's row moves with the reduce steps.
    const int first = static_cast<int>(k_.out_shape.size());
    bool rows = false;
    for (const Value* l : reduce_body_loads(k_)) {
      if (l->dynamic) return 0;
      if (!load_varies_along(l, vec, lanes)) {
        // A broadcast that moves with the steps: a matrix-vector product (an SE block's
        // excitation), whose weights the register tile reads from cache: there tiles of 11-14
        // vectors took 1.4-1.9x its time (RegNetY-400MF's 440 -> 110 and MobileNetV3's
        // 672 -> 168 products, edgert-bench --profile).
        for (int j = 0; j < static_cast<int>(k_.reduce_extents.size()); ++j)
          if (k_.reduce_extents[size_t(j)] > 1 && load_depends_on(l, first + j)) return 0;
        continue;
      }
      if (lane_stride(l->index, vec, lanes) != std::optional<int64_t>(1)) return 0;
      for (int j = 0; j < static_cast<int>(k_.reduce_extents.size()); ++j)
        rows = rows || (k_.reduce_extents[size_t(j)] > 1 && load_depends_on(l, first + j));
    }
    if (!rows) return 0;
    const int64_t passes = (vectors + kRowVectors - 1) / kRowVectors;
    // Over data within twice the core's L2 the register tile's extra passes cost little, and
    // tiles of 14-15 vectors took up to 1.3x its time there (240 x 28 x 28 in 2 x 15, 440 x 7
    // x 7 in 4 x 14); one pass still pays (104 x 28 x 28: 0.5).
    if (passes > 1 && steps * k_.out_shape[vec] * 4 <= row_stream_bytes_) return 0;
    return static_cast<int>((vectors + passes - 1) / passes);  // balanced
  }
  // The tiles that fit the registers (and the cache slice), cheapest first (ties: in the
  // order tried, fewer vectors and then fewer outputs first), none without a choice to make.
  // The cost is cycles per useful multiply-add in a simple model: a step of the reduction
  // issues vectors * unroll multiply-adds (two per cycle) and its distinct loads (two per
  // cycle), and takes at least the 4-cycle latency of a multiply-add (5 cycles where
  // single_reduce_slack_); outputs computed past the end of a dim are waste.
  std::vector<std::pair<double, RegisterTile>> tile_costs(int vec, int lanes) const {
    std::vector<std::pair<double, RegisterTile>> tiles;
    if (!k_.has_reduce() || (unroll_dim_ < 0 && vec < 0)) return tiles;
    std::vector<const Value*> loads = reduce_body_loads(k_);
    const int64_t along_unroll = unroll_dim_ >= 0 ? k_.out_shape[unroll_dim_] : 1;
    const int64_t along_vec = vec >= 0 ? k_.out_shape[vec] : 1;
    // Without a second dim to unroll, more vectors along the first keep enough multiply-adds
    // in flight (a matrix-vector product, a reduction over a whole image).
    const int max_vectors = vec < 0 ? 1 : unroll_dim_ >= 0 ? 4 : 16;
    auto waste = [](int64_t extent, int64_t step) {
      return static_cast<double>(extent) / static_cast<double>((extent + step - 1) / step * step);
    };
    // With the vector tiles outermost, a tile's slice of the shared data (the weights for
    // its channels) must stay in the core's cache while the image passes under it.
    const double slice_per_vector =
        vec >= 0 && unroll_dim_ >= 0 ? bytes_shared_along_per_slice(unroll_dim_, vec) * lanes / along_vec : 0;
    auto loads_per_step = [&](int v, int u) {
      int distinct_loads = 0;
      for (const Value* l : loads)
        distinct_loads += (vec >= 0 && load_varies_along(l, vec, v * lanes) ? v : 1) *
                          (unroll_dim_ >= 0 && load_depends_on(l, unroll_dim_) ? u : 1);
      return distinct_loads;
    };
    // A depthwise conv (an input vector per pixel, lanes along the channels) has its
    // innermost taps written out (unroll_taps_for_reuse) and its tiles run between the
    // padded borders of each row (emit_tiles_between_borders): a row is ceil(between / u)
    // tiles, the last one ending at the border (overlapping the one before), and its border
    // outputs one at a time. Those test their bounds at every tap (a select per input vector)
    // and are latency-bound chains with no other output to overlap, so a second vector per
    // tile halves their cost per channel. Sized by the whole row with the border outputs
    // left out, EfficientNet-B0's 5x5 depthwise convs on 14-pixel rows took 1 x 7 tiles over
    // the 10 outputs between the borders; 2 x 5 takes 0.64 of the time (edgec --tune picked 2
    // vectors for every depthwise shape of the model; docs/benchmarks-history.md). Measured on
    // x86_64 (AVX2, 16 registers) only: the other targets keep the whole-row model until
    // measured (depthwise_border_model_).
    const std::vector<int> order = choose_reduce_order();
    const int tap_var = order.empty() ? -1 : static_cast<int>(k_.out_shape.size()) + order.back();
    const int64_t taps = order.empty() ? 1 : k_.reduce_extents[size_t(order.back())];
    // A load whose taps are written out and shared by the tile's outputs: it moves along
    // the unrolled dim by `stride` times its move along the taps.
    auto tap_stride = [&](const Value* l) -> std::optional<int64_t> {
      if (tap_var < 0 || taps > 7) return std::nullopt;
      return shared_tap_stride(l, tap_var, taps);
    };
    bool depthwise = false;
    for (const Value* l : loads) depthwise = depthwise || (vec >= 0 && load_varies_along(l, vec, lanes) && tap_stride(l));
    const int64_t between = depthwise && depthwise_border_model_ ? outputs_between_borders().value_or(-1) : -1;
    // Cycles of one tap of a depthwise tile: its loads with the taps written out read
    // (u - 1) * stride + taps input vectors per row of taps, not u * taps.
    auto depthwise_cycles_per_step = [&](int v, int u) {
      double distinct = 0;
      for (const Value* l : loads) {
        const double vectors = vec >= 0 && load_varies_along(l, vec, v * lanes) ? v : 1;
        std::optional<int64_t> stride = tap_stride(l);
        if (!load_depends_on(l, unroll_dim_)) distinct += vectors;
        else if (stride) distinct += vectors * static_cast<double>((u - 1) * *stride + taps) / static_cast<double>(taps);
        else distinct += vectors * u;
      }
      return std::max({v * u / 2.0, distinct / 2.0, 4.0});
    };
    const double min_cycles = single_reduce_slack_ && one_channel_loop() ? 5.0 : 4.0;
    // vpmaddwd does not accumulate: its product takes a register before the vpaddd, and the
    // vpshufb mask that widens the broadcast pair another (widened_byte_pair_splat). A 3 x 4
    // tile counted as 16 of 16 registers spilled two accumulators in its inner loop
    // (MobileNetV2's 16 -> 96 channel 1x1 conv).
    const int pair_product_registers = multiplies_8bit_pairs() ? 2 : 0;
    // A load broadcast per output of the unrolled dim (a conv's input pixel, vectors along the
    // output channels).
    bool broadcast_per_output = false;
    for (const Value* l : loads)
      if (vec >= 0 && unroll_dim_ >= 0 && load_depends_on(l, unroll_dim_) && !load_varies_along(l, vec, lanes))
        broadcast_per_output = true;
    for (int v = 1; v <= max_vectors && (v - 1) * lanes < along_vec; ++v)
      for (int u = 1; u <= std::min<int64_t>(along_unroll, 16); ++u) {
        if (v > 1 && slice_per_vector * v > slice_budget_ && vector_tiles_outermost(vec, u)) continue;
        // Accumulators, the vectors shared along the unrolled dim and a broadcast; a
        // quarter of the registers stays free for the code generator's temporaries (a
        // 2 x 14 tile, 28 of 32 registers, ran ResNet-18's 28x28 convs at 65 GFLOP/s in
        // edgert-bench --profile where a 4 x 4 tile ran them at 150).
        if (v * u > vector_registers_ * 3 / 4 || v * u + v + 1 + pair_product_registers > vector_registers_) break;
        // With one vector per output, each output's broadcast is live beside its accumulator
        // (LLVM issues the broadcasts ahead of their multiply-adds): on AVX2's 16 registers 1 x 10
        // and 1 x 12 tiles spilled in their inner loop (Basic Pitch's 8 -> 8 channel 3x39 conv,
        // channels-last: 27 ms at 1 x 12 and 1 x 10, 15.4 at 1 x 8, 16.1 at 1 x 6, CPU time).
        if (v == 1 && broadcast_per_output && 2 * u > vector_registers_) break;
        if (float_scalar_epilogue_ && v * u + kEpiloguePerVector * v + kEpilogueShared > vector_registers_) break;
        const int distinct_loads = loads_per_step(v, u);
        const double vec_useful = waste(along_vec, int64_t{v} * lanes);
        double cost;
        if (between >= 0) {
          // More than 2 vectors with the taps written out ran out of registers (3 x 4 on
          // 14x14x672 5x5: 2x the time of 2 x 5).
          if (v > 2) continue;
          const double border_cycles = std::max({4.0, 2.0 * v, loads_per_step(v, 1) / 2.0});
          const double row_cycles = static_cast<double>((between + u - 1) / u) * depthwise_cycles_per_step(v, u) +
                                    static_cast<double>(along_unroll - between) * border_cycles;
          cost = row_cycles / (static_cast<double>(v * along_unroll) * vec_useful);
        } else {
          const double cycles = std::max({v * u / 2.0, distinct_loads / 2.0, min_cycles});
          cost = cycles / (v * u * vec_useful * waste(along_unroll, u));
        }
        // Ties go to the tile with fewer loads per multiply-add.
        cost += 1e-3 * distinct_loads / (v * u);
        tiles.push_back({cost, RegisterTile{v, u}});
      }
    std::stable_sort(tiles.begin(), tiles.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    return tiles;
  }

  // Whether the reduction is one loop over channels (single_reduce_slack_): one reduce dim
  // (a 1x1 conv, a matrix product), or a long innermost one (16 or more) whose other dims
  // only reorder it: some load moves less along each of them than along the innermost (a 1x1
  // conv reading a ShuffleNet channel shuffle sums r[2, C/2], its packed weights interleaving
  // the halves). A window's taps move every load more than its channels do.
  bool one_channel_loop() const {
    if (k_.reduce_extents.size() == 1) return true;
    const std::vector<int> order = choose_reduce_order();
    const int rank = static_cast<int>(k_.out_shape.size());
    const int inner = rank + order.back();
    if (k_.reduce_extents[size_t(order.back())] < 16) return false;
    const std::vector<const Value*> loads = reduce_body_loads(k_);
    for (size_t i = 0; i + 1 < order.size(); ++i) {
      const int j = order[i];
      if (k_.reduce_extents[size_t(j)] == 1) continue;
      const bool reorders = std::any_of(loads.begin(), loads.end(), [&](const Value* l) {
        const std::optional<int64_t> along = load_affine_coef(l, rank + j), along_inner = load_affine_coef(l, inner);
        return along && along_inner && *along != 0 && std::abs(*along) < std::abs(*along_inner);
      });
      if (!reorders) return false;
    }
    return true;
  }

  // Whether the reduction is a sum of products of two 8-bit loads in pairs (a reduce dim of
  // 2) that the target computes with vpmaddwd (find_dot_groups decides it once the tile is
  // known; a depthwise conv has no pairs).
  bool multiplies_8bit_pairs() const {
    ProductOperands p;
    if (int8_dot_ != TargetSpec::Int8Dot::I16Pairs || k_.acc_dtype != DType::I32 || !k_.has_reduce() ||
        k_.reduce_op != Op::ReduceSum || std::count(k_.reduce_extents.begin(), k_.reduce_extents.end(), 2) == 0 ||
        !reduce_product_operands(&p))
      return false;
    auto is_8bit = [&](const Value* l) { return k_.args[l->arg].dtype == DType::U8 || k_.args[l->arg].dtype == DType::I8; };
    auto is_16bit = [&](const Value* l) { return k_.args[l->arg].dtype == DType::I16; };  // stored widened
    return (is_8bit(p.a) || is_16bit(p.a)) && (is_8bit(p.b) || is_16bit(p.b)) && !(is_16bit(p.a) && is_16bit(p.b));
  }

  // Bytes of the buffers the reduction reads without depending on `var` (shared by the
  // outputs along it): a conv's weights for a pixel dim, its input for the channel dim.
  int64_t bytes_shared_along(int var) const {
    int64_t total = 0;
    std::set<int> counted;
    for (const Value* l : reduce_body_loads(k_))
      if (!load_depends_on(l, var) && counted.insert(l->arg).second)
        total += k_.args[l->arg].numel * static_cast<int64_t>(dtype_size(k_.args[l->arg].dtype));
    return total;
  }
  // The same per slice along the other output dims those loads depend on (not `var`, not
  // `vec`): a batched product's weights for one batch entry (Winograd's P products), which is
  // what the tiles along `vec` reuse while the loops over that batch dim run outside them.
  double bytes_shared_along_per_slice(int var, int vec) const {
    double total = 0;
    std::set<int> counted;
    for (const Value* l : reduce_body_loads(k_)) {
      if (load_depends_on(l, var) || !counted.insert(l->arg).second) continue;
      double bytes = static_cast<double>(k_.args[l->arg].numel) * static_cast<double>(dtype_size(k_.args[l->arg].dtype));
      for (int d = 0; d < static_cast<int>(k_.out_shape.size()); ++d)
        if (d != var && d != vec && k_.out_shape[d] > 1 && load_depends_on(l, d)) bytes /= static_cast<double>(k_.out_shape[d]);
      total += bytes;
    }
    return total;
  }
  // Whether the data shared along the unrolled dim is read again by a later tile of `unroll`
  // outputs: the unrolled dim is longer than a tile, or a load shared along it is shared along
  // another output dim too (a conv's weights, by every row of the image). Where neither holds
  // (Winograd's tile transforms: the 6 rows of a tile's table all in one tile, the tiles read
  // once), each byte of it is read once whatever the loop order.
  bool shared_data_reread(int vec, int unroll) const {
    if (k_.out_shape[size_t(unroll_dim_)] > unroll) return true;
    for (const Value* l : reduce_body_loads(k_)) {
      if (load_depends_on(l, unroll_dim_)) continue;
      for (int d = 0; d < static_cast<int>(k_.out_shape.size()); ++d)
        if (d != vec && d != unroll_dim_ && k_.out_shape[d] > 1 && !load_depends_on(l, d)) return true;
    }
    return false;
  }
  // Whether the tiles along the vectorized dim go outermost, for a register tile of `unroll`
  // outputs along the unrolled dim: when the data shared along the unrolled dim (a conv's
  // weights) outgrows the cache, outweighs the data shared along the vectorized one (its
  // input) and is read again (shared_data_reread). Each slice of the weights is then read
  // once and stays in cache over the whole image, and the input, the smaller, is read again
  // for every slice. Data read once gains nothing, and its reads would stride: a cache line
  // per row per vector tile, the row read again by the next one (Winograd's input transforms
  // of PP-OCRv4 det's 160x160x96 convs read 2 GB/s, BENCHMARKS.md).
  bool vector_tiles_outermost(int vec, int unroll) const {
    if (vec < 0 || unroll_dim_ < 0) return false;
    int64_t weights = bytes_shared_along(unroll_dim_);
    return weights > slice_budget_ && weights > bytes_shared_along(vec) && shared_data_reread(vec, unroll);
  }
  // Outputs along the vectorized dim per chunk (0: not chunked), for a grouped conv whose
  // weights outgrow the cache (vector_tiles_outermost): its input is read per group, a slice
  // of each pixel (a load varying along the unrolled dim that depends on the vectorized one
  // by a division). With the vector tiles outermost each pass reads one group's slice, a few
  // cache lines of every input pixel kilobytes apart: RegNet-like 3x3 stride-2 convs, 32
  // groups of 24 channels over 80x80x768, ran at 22 GFLOP/s against 75 for the same conv on
  // 24x24 (edgert-bench --profile). Chunks of groups whose weights fit in the cache budget
  // run outermost instead, the other dims row-major inside: each pass reads a contiguous
  // slice of every pixel, ceil(weights / budget) passes in all.
  int64_t vector_chunk(int vec) const {
    if (vec < 0 || !vector_tiles_outermost(vec, unroll_)) return 0;
    bool read_per_group = false;
    for (const Value* l : reduce_body_loads(k_))
      read_per_group = read_per_group || (load_depends_on(l, unroll_dim_) && load_depends_on(l, vec) &&
                                          !load_varies_along(l, vec, vector_lanes_));
    if (!read_per_group) return 0;
    const int64_t extent = k_.out_shape[size_t(vec)];
    const int64_t step = int64_t{lanes_for(extent)} * tile_vectors_;
    const int64_t weights = bytes_shared_along(unroll_dim_);
    const int64_t chunks = std::max<int64_t>(1, (weights + slice_budget_ - 1) / slice_budget_);
    const int64_t per_chunk = (extent + chunks - 1) / chunks;
    return (per_chunk + step - 1) / step * step;
  }
  // The order of the output loops, outermost first: row-major, or with the vectorized dim
  // first (vector_tiles_outermost), or a loop over chunks of it first (vector_chunk:
  // kVectorChunkLevel) and the dims in their order inside. A tile stored transposed
  // (stores_tile_transposed: lanes along an NCHW output's channels) runs its channel tiles
  // inside the rows, as a channels-last conv does: row-major, each channel tile passed over
  // the whole image again, reading only its group's slice of every input pixel (a grouped
  // 1x1 conv at 32 of 1024 channels per group: 128 bytes of each 4 KB pixel, a page per
  // pixel, from memory each time); inside the rows, a row's input stays in cache for all of
  // them.
  std::vector<int> choose_output_order(int vec) const {
    std::vector<int> order;
    for (int d = 0; d < static_cast<int>(k_.out_shape.size()); ++d) order.push_back(d);
    const bool chunked = vector_chunk(vec) > 0;
    if (!chunked && vector_tiles_outermost(vec, unroll_)) {
      order.erase(order.begin() + vec);
      order.insert(order.begin(), vec);
    } else if (transpose_tile_stores_ && unroll_dim_ > vec) {
      order.erase(order.begin() + vec);
      order.insert(std::find(order.begin(), order.end(), unroll_dim_), vec);
    }
    if (chunked) order.insert(order.begin(), kVectorChunkLevel);
    return order;
  }

  // The order of the reduce loops, outermost first: the dim along which the loads move
  // least goes innermost (a channels-last conv: the input channels, read consecutively
  // from the input pixel and the packed weight), the others keep their order. A
  // vectorized reduce dim stays innermost.
  std::vector<int> choose_reduce_order() const {
    std::vector<int> order;
    const int rank = static_cast<int>(k_.out_shape.size());
    const int dims = static_cast<int>(k_.reduce_extents.size());
    for (int j = 0; j < dims; ++j) order.push_back(j);
    if (dims < 2) return order;
    if (reduce_vec_ >= 0) {  // the vectorized dim innermost
      const int j = reduce_vec_ - rank;
      order.erase(std::find(order.begin(), order.end(), j));
      order.push_back(j);
      return order;
    }
    std::vector<const Value*> loads = reduce_body_loads(k_);
    auto move_least_moving_inward = [&](size_t keep_inner) {
      int inner = -1;
      int64_t least = 0;
      for (size_t i = 0; i + keep_inner < order.size(); ++i) {
        const int j = order[i];
        if (k_.reduce_extents[j] == 1) continue;
        int64_t moved = 0;
        for (const Value* l : loads) {
          std::optional<int64_t> c = load_affine_coef(l, rank + j);
          moved += c ? std::abs(*c) : int64_t{1} << 40;
        }
        if (inner < 0 || moved <= least) inner = static_cast<int>(i), least = moved;
      }
      if (inner < 0) return -1;
      const int j = order[size_t(inner)];
      order.erase(order.begin() + inner);
      order.insert(order.end() - static_cast<std::ptrdiff_t>(keep_inner), j);
      return j;
    };
    const int inner = move_least_moving_inward(0);
    // A dot instruction's group (vpdpbusd / sdot: 4 bytes, vpmaddwd: 2) is one instruction,
    // not a loop: the loop around it is the one that has to move least (the channel groups,
    // not a kernel tap: ResNet-18 int8 21.1 -> 12.5 ms, edgert-bench --profile, BENCHMARKS.md). Integer sums are exact in any order; float ones (the bf16
    // pairs) keep theirs, which rounds like onnxruntime's channel-major sums (test_bf16).
    const int64_t group = int8_dot_ == TargetSpec::Int8Dot::I16Pairs ? 2 : 4;
    if (int8_dot_ != TargetSpec::Int8Dot::None && inner >= 0 && k_.acc_dtype == DType::I32 && k_.reduce_extents[size_t(inner)] == group)
      move_least_moving_inward(1);
    return order;
  }

  // end: where the vectorized dim stops for this core; lanes at or past it are masked.
  void emit_element(int lanes, LV* end = nullptr) {
    if (transpose_end_) {
      emit_transposed_block(lanes, end);
      return;
    }
    if (interleave_dim_ >= 0 && lanes > 1) {
      emit_interleaved_element(lanes, end);
      return;
    }
    if (unroll_dim_ >= 0) {
      emit_unrolled_element(lanes, end);
      return;
    }
    emit_element_copies(lanes, end, {});
  }

  void emit_unrolled_element(int lanes, LV* end) {
    // Outputs base..base+unroll_copies_-1 of the unrolled dim; past `unroll_end_`, the last
    // valid one again (the same value stored twice: cheaper than a remainder loop).
    LV* base = vars_[unroll_dim_];
    unroll_base_ = base;
    LV* last = b_.CreateSub(unroll_end_, ic(1));
    std::vector<LV*> values;
    for (int u = 0; u < unroll_copies_; ++u) {
      LV* v = b_.CreateAdd(base, ic(u));
      values.push_back(b_.CreateSelect(b_.CreateICmpSLT(v, unroll_end_), v, last));
    }
    emit_element_copies(lanes, end, values);
    vars_[unroll_dim_] = base;
  }

  // A kernel without a reduction that reads a buffer across its rows (a Transpose: lanes
  // along the output's last dim, elements far apart in the source) gathers every vector
  // element by element. Where such a load reads consecutive elements along another output
  // dim, a block of `lanes` x `lanes` outputs loads `lanes` rows along that dim instead and
  // transposes them in registers (log2(lanes) rounds of interleaving shuffles). x86_64 AVX2
  // (edgert-bench medians): 12 x 197 x 64 floats -> 12 x 64 x 197 0.11 -> 0.047 ms, NHWC ->
  // NCHW of 56 x 56 x 128 1.0 -> 0.15 ms. Decides transpose_dim_ (-1: none) and
  // transposed_loads_: 4-byte loads that gather along the lanes and move by one element
  // along the chosen dim, without guards or with guards the same for every lane (a padded
  // channels-last copy of an NCHW input, its border tested along the rows: the rows are
  // then loaded masked by the guards).
  void choose_transposed_blocks(int vec) {
    transpose_dim_ = -1;
    transposed_loads_.clear();
    if (k_.has_reduce() || vec < 0 || vector_lanes_ < 4 || int_vectors_ || byte_vectors_) return;
    const int lanes = lanes_for(k_.out_shape[size_t(vec)]);
    if (lanes < 4 || k_.out_shape[size_t(vec)] < lanes) return;
    for (int d = 0; d < vec; ++d) {  // a dim whose loop is outside the lanes' (row-major order)
      if (k_.out_shape[size_t(d)] < lanes) continue;
      std::vector<const Value*> loads;
      for (const auto& v : k_.values) {
        const Value* l = v.get();
        if (l->kind != Value::Kind::Load || l->dynamic || cheap_vector_load(l, vec)) continue;
        // Guarded rows along the dim split across cores (a Conv1d's padded copy, along its
        // length) ran 7% slower than the gathers (64 channels x 16,000).
        if (!l->guards.empty() && d == k_.launch.parallel_dim) continue;
        if (std::any_of(l->guards.begin(), l->guards.end(), [&](const Guard& g) { return index_depends_on(g.index, vec); }))
          continue;
        const DType stored = k_.args[size_t(l->arg)].dtype;
        if (stored != l->dtype || dtype_size(stored) != 4 || index_affine_coef(l->index, d) != 1) continue;
        loads.push_back(l);
      }
      if (loads.size() > transposed_loads_.size()) transpose_dim_ = d, transposed_loads_ = loads;
    }
  }
  // The outputs of a block along transpose_dim_ (up to transpose_end_) for one vector along
  // the lanes (lanes at or past `end` masked off): row j holds the block's elements along t
  // at lane j's position along vec (a lane past `end` reads the last real one's again);
  // transposed, vector i holds the block's output i along t for every lane.
  void emit_transposed_block(int lanes, LV* end) {
    const int t = transpose_dim_, vec = vec_var_;
    LV* t_base = vars_[t];
    LV* vec_base = vars_[vec];
    // A short block (out[t] not a multiple of the lanes, or a core's share of t) reads its
    // rows masked and stores only its outputs.
    const int64_t extent = k_.out_shape[size_t(t)];
    const bool may_be_short = extent % lanes != 0 || t == k_.launch.parallel_dim;
    LV* row_mask = nullptr;
    if (may_be_short) {
      std::vector<llvm::Constant*> iota;
      for (int i = 0; i < lanes; ++i) iota.push_back(llvm::ConstantInt::get(idx_ty_, static_cast<uint64_t>(i)));
      row_mask = b_.CreateICmpSLT(llvm::ConstantVector::get(iota),
                                  b_.CreateVectorSplat(static_cast<unsigned>(lanes), b_.CreateSub(transpose_end_, t_base)));
    }
    end_lanes();
    std::map<const Value*, std::vector<LV*>> columns;
    for (const Value* l : transposed_loads_) {
      llvm::Type* st = storage_type(l->dtype);
      llvm::Type* vt = llvm::FixedVectorType::get(st, static_cast<unsigned>(lanes));
      // Guards (the same for every lane) hold or fail per element of a row: a row loads the
      // elements along t where they hold, 0 elsewhere (the kernel's Where picks its fill).
      LV* mask = row_mask;
      if (!l->guards.empty()) {
        begin_lanes(t, lanes, nullptr);  // the guards as vectors along t
        LV* held = guards_hold(l->guards, true);
        end_lanes();
        mask = mask ? b_.CreateAnd(mask, held) : held;
      }
      std::vector<LV*> rows;
      for (int j = 0; j < lanes; ++j) {
        LV* at = b_.CreateAdd(vec_base, ic(j));
        if (end) at = b_.CreateSelect(b_.CreateICmpSLT(at, end), at, b_.CreateSub(end, ic(1)));
        vars_[vec] = at;
        // A guarded row may start outside the buffer (its first elements masked off).
        LV* ptr = l->guards.empty() ? b_.CreateInBoundsGEP(st, buffers_[size_t(l->arg)], index(l->index))
                                    : b_.CreateGEP(st, buffers_[size_t(l->arg)], index(l->index));
        rows.push_back(vector_load(vt, ptr, llvm::Align(dtype_size(l->dtype)), mask, l->arg));
      }
      columns[l] = transposed(rows);
    }
    vars_[vec] = vec_base;
    for (int i = 0; i < lanes; ++i) {
      vars_[t] = b_.CreateAdd(t_base, ic(i));
      llvm::BasicBlock* done = nullptr;
      if (may_be_short && i > 0) {
        auto* store_block = llvm::BasicBlock::Create(ctx_, "transposed_out", fn_);
        done = llvm::BasicBlock::Create(ctx_, "transposed_next", fn_);
        b_.CreateCondBr(b_.CreateICmpSLT(vars_[t], transpose_end_), store_block, done);
        b_.SetInsertPoint(store_block);
      }
      begin_lanes(vec, lanes, end);
      for (const auto& [l, cols] : columns) memo_[l] = cols[size_t(i)];
      acc_ = nullptr;
      store(output_index(k_), splat(value(k_.result), lanes), k_.args[0].dtype);
      if (done) {
        b_.CreateBr(done);
        b_.SetInsertPoint(done);
      }
    }
    vars_[t] = t_base;
    vec_var_ = vec;
  }
  // A kernel without a reduction whose output's innermost dim is short (2-4 elements: a
  // padded channels-last copy of a model's RGB input, a box's coordinates) takes its lanes
  // along the dim outside it, where the loads run (the input's rows): each vector was a
  // scatter, one element every 2-4 floats (8 extracts and scalar stores on AVX2). Instead
  // the element computes a vector for each position along the short dim, interleaves them in
  // registers and stores them as consecutive vectors (emit_interleaved_element). Float
  // outputs in vectors of 4-8 lanes (NEON, AVX2), as stores_tile_transposed. Returns the
  // short dim (-1: none).
  int choose_interleaved_stores(int vec) const {
    if (k_.has_reduce() || vec < 0 || transpose_dim_ >= 0 || unroll_dim_ >= 0 || tile_vectors_ != 1) return -1;
    if (int_vectors_ || byte_vectors_ || float_scalar_epilogue_ || hvx_block_loads_ || k_.args[0].dtype != DType::F32) return -1;
    const int last = static_cast<int>(k_.out_shape.size()) - 1;
    const int64_t parts = k_.out_shape[size_t(last)];
    const int lanes = lanes_for(k_.out_shape[size_t(vec)]);
    if (vec == last || parts < 2 || parts > 4 || lanes < 4 || lanes > 8 || last == k_.launch.parallel_dim) return -1;
    const Index out = output_index(k_);
    if (index_affine_coef(out, last) != 1 || lane_stride(out, vec, lanes).value_or(0) != parts) return -1;
    return last;
  }
  // One vector along vec_var_ (lanes at or past `end` masked off) for every position along
  // interleave_dim_: output k of the stored run is position k % parts of lane k / parts.
  void emit_interleaved_element(int lanes, LV* end) {
    const int d = interleave_dim_, vec = vec_var_;
    const int parts = static_cast<int>(k_.out_shape[size_t(d)]);
    llvm::Type* st = storage_type(k_.args[0].dtype);
    std::vector<LV*> rows;
    for (int c = 0; c < parts; ++c) {
      vars_[d] = ic(c);
      begin_lanes(vec, lanes, end);
      acc_ = nullptr;
      LV* v = splat(value(k_.result), lanes);
      rows.push_back(fp_convert(v, same_lanes(v, st)));
    }
    vars_[d] = ic(0);
    end_lanes();
    // Rows 0-1 and 2-3 concatenated, then one shuffle of the two.
    auto two_rows = [&](int first) {
      LV* second = first + 1 < parts ? rows[size_t(first + 1)] : llvm::PoisonValue::get(rows[0]->getType());
      return b_.CreateShuffleVector(rows[size_t(first)], second, llvm::createSequentialMask(0, unsigned(2 * lanes), 0));
    };
    LV* low = two_rows(0);
    LV* high = parts > 2 ? two_rows(2) : llvm::PoisonValue::get(low->getType());
    std::vector<int> order;
    std::vector<llvm::Constant*> lane_of;
    for (int k = 0; k < parts * lanes; ++k) {
      order.push_back((k % parts) * lanes + k / parts);
      lane_of.push_back(llvm::ConstantInt::get(idx_ty_, static_cast<uint64_t>(k / parts)));
    }
    LV* run = b_.CreateShuffleVector(low, high, order);
    LV* p = b_.CreateInBoundsGEP(st, buffers_[0], index(output_index(k_)));  // (vec_var_'s base, 0)
    const llvm::Align align(dtype_size(k_.args[0].dtype));
    llvm::Instruction* st_inst;
    if (end) {
      const unsigned n = static_cast<unsigned>(parts * lanes);
      LV* at = b_.CreateAdd(b_.CreateVectorSplat(n, vars_[vec]), llvm::ConstantVector::get(lane_of));
      st_inst = b_.CreateMaskedStore(run, p, align, b_.CreateICmpSLT(at, b_.CreateVectorSplat(n, end)));
    } else {
      st_inst = b_.CreateAlignedStore(run, p, align);
    }
    annotate(st_inst, 0);
  }

  // Whether a register tile (vectors along `vec`, unroll_ outputs along unroll_dim_) stores
  // its outputs transposed: where the output is consecutive along the unrolled dim and not
  // along the lanes (a conv writing a model output in NCHW from channels-last data: lanes
  // along the channels, choose_vectorized_output_dim, the tile's outputs along the width),
  // each vector would be a scatter, one element per channel plane (8 extracts and scalar
  // stores on AVX2). Transposed in registers, the tile is one store per channel of its run of
  // pixels (store_tile_transposed). Float outputs in vectors of 4-8 lanes (NEON, AVX2):
  // Hexagon (HVX) and AVX-512's 16-lane vectors (vscatterdps; not measured on an AVX-512
  // host) keep their scatters.
  bool stores_tile_transposed(int vec) const {
    if (!k_.has_reduce() || vec < 0 || unroll_dim_ < 0 || reduce_vec_ >= 0) return false;
    if (int_vectors_ || byte_vectors_ || float_scalar_epilogue_ || hvx_block_loads_) return false;
    if (k_.args[0].dtype != DType::F32 || (half_ && computes_in_half(k_))) return false;
    const int lanes = lanes_for(k_.out_shape[size_t(vec)]);
    if (lanes < 4 || lanes > 8) return false;
    const Index out = output_index(k_);
    return lane_stride(out, vec, lanes).value_or(0) != 1 && index_affine_coef(out, unroll_dim_) == 1;
  }
  // Stores a register tile's results (copy c: output unroll_base_ + c / vectors along the
  // unrolled dim, vector c % vectors along the lanes from vec_base; channels at or past `end`
  // are not stored) transposed: for each vector, blocks of up to `lanes` outputs along the
  // unrolled dim become `lanes` vectors along it, one per lane, stored consecutively. A tile
  // that runs past unroll_end_ (its copies repeat the last output) stores its real outputs
  // only, masked.
  void store_tile_transposed(const std::vector<LV*>& results, int lanes, int vectors, LV* vec_base, LV* end) {
    const int vec = vec_var_;
    const int u_count = static_cast<int>(results.size()) / vectors;
    end_lanes();
    LV* base = unroll_base_;
    LV* left = b_.CreateSub(unroll_end_, base);  // real outputs of the tile along the unrolled dim
    auto* full = llvm::BasicBlock::Create(ctx_, "tile_store", fn_);
    auto* part = u_count > 1 ? llvm::BasicBlock::Create(ctx_, "tile_store_part", fn_) : nullptr;
    auto* done = llvm::BasicBlock::Create(ctx_, "tile_stored", fn_);
    if (part) b_.CreateCondBr(b_.CreateICmpSGE(left, ic(u_count)), full, part);
    else b_.CreateBr(full);
    llvm::Type* ft = b_.getFloatTy();
    for (auto* block : {full, part}) {
      if (!block) continue;
      b_.SetInsertPoint(block);
      for (int first = 0; first < u_count; first += lanes) {
        const int n = std::min(lanes, u_count - first);
        auto* nt = llvm::FixedVectorType::get(ft, static_cast<unsigned>(n));
        LV* mask = nullptr;
        if (block == part) {
          std::vector<llvm::Constant*> iota;
          for (int i = 0; i < n; ++i) iota.push_back(llvm::ConstantInt::get(idx_ty_, static_cast<uint64_t>(first + i)));
          mask = b_.CreateICmpSLT(llvm::ConstantVector::get(iota), b_.CreateVectorSplat(static_cast<unsigned>(n), left));
        }
        for (int v = 0; v < vectors; ++v) {
          std::vector<LV*> rows;
          for (int i = 0; i < lanes; ++i)
            rows.push_back(i < n ? results[size_t((first + i) * vectors + v)]
                                 : llvm::PoisonValue::get(results[0]->getType()));
          // The run of channel c: lane c of each output (a tile of one output, a border
          // output: its lane c alone, no transposition).
          std::vector<LV*> columns = n > 1 ? transposed(rows) : std::vector<LV*>();
          auto run_of = [&](int c) {
            return n > 1 ? b_.CreateShuffleVector(columns[size_t(c)], llvm::createSequentialMask(0, unsigned(n), 0))
                         : b_.CreateShuffleVector(rows[0], llvm::ArrayRef<int>{c});
          };
          for (int c = 0; c < lanes; ++c) {
            LV* channel = b_.CreateAdd(vec_base, ic(int64_t{v} * lanes + c));
            llvm::BasicBlock* next = nullptr;
            if (end) {  // the ragged last vectors: lanes past the end are no outputs
              auto* store_block = llvm::BasicBlock::Create(ctx_, "tile_store_lane", fn_);
              next = llvm::BasicBlock::Create(ctx_, "tile_store_next", fn_);
              b_.CreateCondBr(b_.CreateICmpSLT(channel, end), store_block, next);
              b_.SetInsertPoint(store_block);
            }
            vars_[vec] = channel;
            vars_[unroll_dim_] = b_.CreateAdd(base, ic(first));
            LV* run = fp_convert(run_of(c), nt);
            LV* p = b_.CreateInBoundsGEP(ft, buffers_[0], index(output_index(k_)));
            llvm::Instruction* st = mask ? static_cast<llvm::Instruction*>(b_.CreateMaskedStore(run, p, llvm::Align(4), mask))
                                         : b_.CreateAlignedStore(run, p, llvm::Align(4));
            annotate(st, 0);
            if (next) {
              b_.CreateBr(next);
              b_.SetInsertPoint(next);
            }
          }
        }
      }
      b_.CreateBr(done);
    }
    b_.SetInsertPoint(done);
    vars_[vec] = vec_base;
    vars_[unroll_dim_] = base;
    vec_var_ = vec;
  }

  // The transpose of a square matrix of vectors (rows[j] lane i -> result[i] lane j),
  // as log2(n) rounds of the perfect shuffle: row 2m of a round interleaves the low halves of
  // rows m and m + n/2, row 2m + 1 their high halves.
  std::vector<LV*> transposed(std::vector<LV*> rows) {
    const int n = static_cast<int>(rows.size());
    std::vector<int> low, high;
    for (int i = 0; i < n / 2; ++i) {
      low.push_back(i), low.push_back(i + n);
      high.push_back(i + n / 2), high.push_back(i + n / 2 + n);
    }
    for (int round = 1; round < n; round *= 2) {
      std::vector<LV*> next;
      for (int m = 0; m < n / 2; ++m) {
        next.push_back(b_.CreateShuffleVector(rows[size_t(m)], rows[size_t(m + n / 2)], low));
        next.push_back(b_.CreateShuffleVector(rows[size_t(m)], rows[size_t(m + n / 2)], high));
      }
      rows = std::move(next);
    }
    return rows;
  }

  // Whether a tile's reduce loops stay rolled. Each step loads values that several of the
  // tile's multiply-adds share (a broadcast input pixel, a weight vector): they need
  // registers, unlike a load folded into its one multiply-add. LLVM unrolls the short
  // innermost loop and hoists the loads of all its steps; past the register file that
  // spills (MobileNetV2's stem: 16% faster rolled), below it the unrolled steps overlap
  // better (a depthwise conv: 1.3-1.5x slower rolled).
  bool keep_reduce_loops_rolled(size_t copies) const {
    if (copies < 2 || reduce_order_.empty()) return false;
    int shared = 0;
    for (const Value* l : reduce_body_loads(k_)) {
      bool along_vec = vec_var_ >= 0 && load_varies_along(l, vec_var_, lanes_ * tile_vectors_);
      bool along_unroll = unroll_dim_ >= 0 && load_depends_on(l, unroll_dim_);
      if (!(along_vec && along_unroll)) shared += along_vec ? tile_vectors_ : along_unroll ? unroll_ : 1;
    }
    int64_t inner = 1;
    for (auto j = reduce_order_.rbegin(); j != reduce_order_.rend() && inner == 1; ++j) inner = k_.reduce_extents[*j];
    return shared * std::min<int64_t>(inner, 8) + static_cast<int64_t>(copies) > vector_registers_;
  }

  // Whether the innermost reduce loop is written out step by step: a window's taps along
  // the unrolled dim (a depthwise conv's kw, pixels along w) read input vectors the tile's
  // neighbouring pixels read at other taps; with the taps as constants the loads have equal
  // addresses that LLVM merges (u + kw - 1 loads per row of taps instead of u * kw).
  bool unroll_taps_for_reuse(size_t level) const {
    if (level + 1 != reduce_order_.size() || unroll_dim_ < 0 || unroll_copies_ < 2) return false;
    const int j = reduce_order_[level];
    if (k_.reduce_extents[j] > 7) return false;
    for (const Value* l : reduce_body_loads(k_))
      if (shared_tap_stride(l, static_cast<int>(k_.out_shape.size()) + j, k_.reduce_extents[j])) return true;
    return false;
  }
  // Whether the reduce loop at `level` is a short one (2 to 4 steps) right around vpmaddwd's
  // pair: written out, not a loop. A 3-channel stem padded to 4 (2 pairs) ran a 2-step loop
  // per tap, its branch and induction around every pair's step: ResNet-18's 7x7 stem 3.4 ->
  // 2.7 ms (edgert-bench --profile, CPU time, alternating). The other dot instructions'
  // groups (4 bytes) cover a padded stem's 4 channels in one step; not measured elsewhere.
  bool short_loop_around_dot(size_t level) const {
    if (dot_.kind != DotKind::I16Pairs || level + 2 != reduce_order_.size()) return false;
    const int first = static_cast<int>(k_.out_shape.size());
    const int64_t extent = k_.reduce_extents[size_t(reduce_order_[level])];
    return first + reduce_order_[level + 1] == dot_.var && extent >= 2 && extent <= 4;
  }
  // The stride s by which load l's taps (reduce var tap_var, `taps` of them) are shared
  // along the unrolled dim: output i + 1 at tap t reads what output i reads at tap t + s
  // (l moves along the unrolled dim by s times its move along the taps, s < taps). None
  // where no two outputs read one address: a stem's 3 input channels (they move the read by
  // 1, the next pixel by 3 x stride) written out were 3 x u broadcasts that LLVM hoisted
  // out of their multiply-adds and spilled (GoogLeNet's 7x7 stem on AVX2, ShuffleNetV2's
  // 3x3 one on AVX-512).
  std::optional<int64_t> shared_tap_stride(const Value* l, int tap_var, int64_t taps) const {
    if (unroll_dim_ < 0) return std::nullopt;
    std::optional<int64_t> along_tap = load_affine_coef(l, tap_var), along_unroll = load_affine_coef(l, unroll_dim_);
    if (!along_tap || !along_unroll || *along_tap == 0 || *along_unroll == 0 || *along_unroll % *along_tap != 0)
      return std::nullopt;
    const int64_t stride = std::abs(*along_unroll / *along_tap);
    if (stride >= taps) return std::nullopt;
    return stride;
  }

  // Whether the innermost reduce loop is written out step by step for a grouped conv whose
  // vector of output channels spans groups: its input channel c (this loop, a few steps)
  // moves the span load by one element, so with c a constant every step loads the same
  // span (from c = 0), which LLVM merges, and only the shuffle differs (span_shift).
  // `lanes`: of the tile's vectors (the loops open before the tile's copies set lanes_).
  bool unroll_channels_for_span_reuse(size_t level, int lanes) const {
    if (level + 1 != reduce_order_.size() || vec_var_ < 0 || lanes < 2) return false;
    const int var = static_cast<int>(k_.out_shape.size()) + reduce_order_[level];
    if (k_.reduce_extents[size_t(reduce_order_[level])] > 8) return false;
    for (const Value* l : reduce_body_loads(k_))
      if (!l->dynamic && span_shift_var(l->index, var) && loads_shuffled_span(l->index, lanes)) return true;
    return false;
  }
  // Whether load() reads ix through a shuffled span at `lanes` lanes (its order of cases:
  // not a strided or repeating vector load, nor the same element for every lane).
  bool loads_shuffled_span(const Index& ix, int lanes) const {
    const int64_t stride = lane_stride(ix, vec_var_, lanes).value_or(0);
    if (stride == 1 || stride == 2 || stride == 4) return false;
    std::optional<LaneRepeat> repeat = lane_repeat(ix, vec_var_, lanes);
    if (repeat && repeat->stride == 1) return false;
    std::optional<std::vector<int64_t>> offsets = shuffled_span(ix, vec_var_, lanes);
    return offsets && std::any_of(offsets->begin(), offsets->end(), [](int64_t o) { return o != 0; });
  }
  // Whether `var` enters ix only as a term of coefficient 1 (not inside a div or mod).
  static bool span_shift_var(const Index& ix, int var) {
    bool plain = false;
    for (const auto& [atom, coef] : ix.terms()) {
      if (atom->kind == Atom::Kind::Var) {
        if (atom->var == var) plain = coef == 1;
      } else if (index_depends_on(atom->inner, var)) {
        return false;
      }
    }
    return plain;
  }

  // Emits the register tile: one output element (or `lanes` of them) for each value of the
  // unrolled dim in `unrolled` (none: just the current one) and each of tile_vectors_
  // vectors along the vectorized dim, sharing the reduce loops.
  void emit_element_copies(int lanes, LV* end, const std::vector<LV*>& unrolled) {
    const int vectors = lanes > 1 ? tile_vectors_ : 1;
    const int vec_var = vec_var_;
    LV* vec_base = lanes > 1 ? vars_[vec_var] : nullptr;
    const size_t copies = (unrolled.empty() ? 1 : unrolled.size()) * vectors;
    tile_vec_base_ = vectors > 1 ? vec_base : nullptr;
    tile_lanes_ = lanes * vectors;
    auto select_copy = [&](size_t c) {
      if (!unrolled.empty()) vars_[unroll_dim_] = unrolled[c / vectors];
      if (lanes > 1) {
        vars_[vec_var] = c % vectors ? b_.CreateAdd(vec_base, ic(int64_t{lanes} * static_cast<int64_t>(c % vectors))) : vec_base;
        begin_lanes(vec_var, lanes, end);
      } else {
        memo_.clear();
      }
    };
    if (lanes == 1) lanes_ = 1, lane_mask_ = nullptr;
    std::vector<LV*> acc_values(copies, nullptr);
    if (k_.has_reduce()) {
      // With a vectorized reduction each accumulator holds one partial result per lane,
      // combined in a fixed order at the end: deterministic, if not the scalar order.
      const int acc_lanes = reduce_vec_ >= 0 ? vector_lanes_ : lanes;
      llvm::Type* at = lanes_of(scalar_type(k_.acc_dtype), acc_lanes);
      std::vector<llvm::AllocaInst*> accs;
      {
        // Allocas belong in the entry block so mem2reg turns them into registers.
        IRBuilder<> eb(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
        for (size_t u = 0; u < copies; ++u) accs.push_back(eb.CreateAlloca(at));
      }
      for (llvm::AllocaInst* acc : accs) b_.CreateStore(reduce_identity(at, k_.reduce_op, k_.acc_dtype), acc);
      int first = static_cast<int>(k_.out_shape.size());
      // An F16 sum in half accumulates in blocks (kHalfBlock): the iterations of the reduce
      // loop at block_level go block_iters at a time, each block from a zero half
      // accumulator, added into a float sum after it. block_level -1: the whole reduction
      // is one block (no float sum).
      int block_level = -1;
      int64_t block_iters = 0;
      if (half_ && k_.acc_dtype == DType::F16 && k_.reduce_op == Op::ReduceSum) {
        int64_t inner = 1;  // steps of the loops inside the level
        for (int l = static_cast<int>(reduce_order_.size()) - 1; l >= 0 && block_level < 0; --l) {
          const int j = reduce_order_[l];
          const int64_t extent = k_.reduce_extents[j];
          const int64_t iters = first + j == reduce_vec_ ? (extent + vector_lanes_ - 1) / vector_lanes_ : extent;
          if (inner * iters > kHalfBlock) block_level = l, block_iters = std::max<int64_t>(1, kHalfBlock / inner);
          inner *= iters;
        }
      }
      llvm::Type* sum_type = lanes_of(b_.getFloatTy(), acc_lanes);
      std::vector<llvm::AllocaInst*> sums;
      if (block_level >= 0) {
        IRBuilder<> eb(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
        for (size_t u = 0; u < copies; ++u) sums.push_back(eb.CreateAlloca(sum_type));
        for (llvm::AllocaInst* sum : sums) b_.CreateStore(llvm::Constant::getNullValue(sum_type), sum);
      }
      std::function<void(size_t)> loop_red = [&](size_t level) {
        if (level == 0 && depthwise_.x && lanes == 32 && vectors == kDepthwiseVectors &&
            emit_depthwise_hvx(copies, select_copy, accs))
          return;
        auto accumulate = [&](size_t u) {  // one step of the reduction into copy u
          select_copy(u);
          LV* x = splat(value(k_.reduce_body), acc_lanes);
          LV* a = b_.CreateLoad(at, accs[u]);
          LV* c = combine(a, x, k_.reduce_op, k_.acc_dtype);
          if (reduce_vec_ >= 0 && lane_mask_) c = b_.CreateSelect(lane_mask_, c, a);  // past the end
          b_.CreateStore(c, accs[u]);
        };
        if (level == reduce_order_.size()) {
          for (size_t u = 0; u < copies; ++u) accumulate(u);
          return;
        }
        const int j = reduce_order_[level];
        if (k_.reduce_extents[j] == 1) {
          vars_[first + j] = ic(0);
          loop_red(level + 1);
          return;
        }
        if (first + j == dot_.var && emit_dot_groups(lanes, copies, select_copy, accs, at)) return;
        const int64_t extent = k_.reduce_extents[j];
        const bool vectorized = first + j == reduce_vec_;
        const int step = vectorized ? vector_lanes_ : 1;
        auto run = [&](LV* lo, LV* hi) {  // this level's loop over [lo, hi)
          if (vectorized) {
            emit_loop(lo, hi, step, [&](LV* iv) {
              vars_[first + j] = iv;
              begin_lanes(first + j, vector_lanes_, extent % vector_lanes_ ? ic(extent) : nullptr);
              loop_red(level + 1);
              end_lanes();
            });
            return;
          }
          emit_loop(lo, hi, 1, [&](LV* iv) {
            vars_[first + j] = iv;
            loop_red(level + 1);
          }, keep_reduce_loops_rolled(copies));
        };
        if (static_cast<int>(level) != block_level) {
          if (LV* inside = border_tile_ && !guards_known_true_ ? step_inside_guards(level, copies, select_copy) : nullptr) {
            // A border tile: the innermost loop (a conv's input channels) for this step of
            // the outer ones (a tap) runs unguarded where every guard holds for the whole
            // tile here; only the taps that read padding test it (a 1 x 7 tile at a
            // stride-2 conv's left border: 3 of its 9 taps, not all).
            auto* fast = llvm::BasicBlock::Create(ctx_, "step_inside", fn_);
            auto* slow = llvm::BasicBlock::Create(ctx_, "step_border", fn_);
            auto* join = llvm::BasicBlock::Create(ctx_, "step_joined", fn_);
            const std::vector<LV*> saved = vars_;
            b_.CreateCondBr(inside, fast, slow);
            for (auto* block : {fast, slow}) {
              b_.SetInsertPoint(block);
              vars_ = saved;
              guards_known_true_ = block == fast;
              border_tile_ = false;  // the test above is made once per step
              loop_red(level);
              border_tile_ = true;
              b_.CreateBr(join);
            }
            guards_known_true_ = false;
            vars_ = saved;
            memo_.clear();
            b_.SetInsertPoint(join);
            return;
          }
          if (!vectorized && unroll_channels_for_span_reuse(level, lanes)) {
            // Copy by copy, all its steps in a row: a copy's span is live for its own steps
            // only (step by step over the copies, a 1 x 8 tile held 8 spans beside its 8
            // accumulators, past AVX2's 16 registers, and spilled: rx_l1, 4 channels per
            // group, no faster than the masked loads); the steps' weight vectors are shared.
            for (size_t u = 0; u < copies; ++u)
              for (int64_t t = 0; t < extent; ++t) {
                vars_[first + j] = ic(t);
                accumulate(u);
              }
            return;
          }
          if (!vectorized && (unroll_taps_for_reuse(level) || short_loop_around_dot(level))) {
            for (int64_t t = 0; t < extent; ++t) {
              vars_[first + j] = ic(t);
              loop_red(level + 1);
            }
            return;
          }
          run(ic(0), ic(extent));
          return;
        }
        const int64_t span = block_iters * step;
        emit_loop(ic(0), ic(extent), static_cast<int>(span), [&](LV* lo) {
          for (llvm::AllocaInst* acc : accs) b_.CreateStore(reduce_identity(at, k_.reduce_op, k_.acc_dtype), acc);
          LV* hi = b_.CreateAdd(lo, ic(span));
          if (extent % span) hi = b_.CreateSelect(b_.CreateICmpSLT(hi, ic(extent)), hi, ic(extent));
          run(lo, hi);
          for (size_t u = 0; u < copies; ++u) {
            LV* block = b_.CreateFPExt(b_.CreateLoad(at, accs[u]), sum_type);
            b_.CreateStore(b_.CreateFAdd(b_.CreateLoad(sum_type, sums[u]), block), sums[u]);
          }
        });
      };
      // Most tiles lie inside the image: where every guard of the reduction holds for the
      // whole tile and window, run a copy of the loops that tests none (no padding).
      if (LV* inside = tile_inside_guards(copies, select_copy)) {
        auto* fast = llvm::BasicBlock::Create(ctx_, "inside", fn_);
        auto* slow = llvm::BasicBlock::Create(ctx_, "border", fn_);
        auto* join = llvm::BasicBlock::Create(ctx_, "joined", fn_);
        b_.CreateCondBr(inside, fast, slow);
        b_.SetInsertPoint(fast);
        guards_known_true_ = true;
        loop_red(0);
        guards_known_true_ = false;
        b_.CreateBr(join);
        b_.SetInsertPoint(slow);
        border_tile_ = true;
        loop_red(0);
        border_tile_ = false;
        b_.CreateBr(join);
        b_.SetInsertPoint(join);
      } else {
        loop_red(0);
      }
      for (size_t u = 0; u < copies; ++u) {
        acc_values[u] = block_level >= 0 ? b_.CreateLoad(sum_type, sums[u]) : b_.CreateLoad(at, accs[u]);
        if (reduce_vec_ >= 0) acc_values[u] = horizontal(acc_values[u], k_.reduce_op, k_.acc_dtype);
        if (block_level >= 0) acc_values[u] = b_.CreateFPTrunc(acc_values[u], same_lanes(acc_values[u], b_.getHalfTy()));
      }
    }
    // The integer requantization with its parameters checked once per kernel call: one
    // branch for the whole tile, every vector's exact integer form on one side (a block that
    // LLVM schedules together), the lane-by-lane epilogue on the other.
    if (lanes > 1 && float_scalar_epilogue_ && requant_prechecked()) {
      auto* fast = llvm::BasicBlock::Create(ctx_, "requant_tile", fn_);
      auto* slow = llvm::BasicBlock::Create(ctx_, "requant_tile_lanes", fn_);
      auto* join = llvm::BasicBlock::Create(ctx_, "requant_tile_done", fn_);
      LV* bad = b_.CreateICmpNE(b_.CreateLoad(b_.getInt32Ty(), requant_scales_bad_, /*isVolatile=*/true), b_.getInt32(0));
      if (requant_zp_load_) bad = b_.CreateOr(bad, b_.CreateNot(requant_zp_.second));
      b_.CreateCondBr(bad, slow, fast);
      b_.SetInsertPoint(fast);
      auto integer_form = [&](bool nonneg_at_run_time) {
        for (size_t u = 0; u < copies; ++u) {
          select_copy(u);
          emit_requantize_vector(acc_values[u], lanes, end, /*prechecked=*/true, nonneg_at_run_time);
        }
        b_.CreateBr(join);
      };
      if (requant_negatives_signed_) {
        // Both forms: negatives as 0 where this call's zero point allows (a ReLU's
        // output, zero point 0: no sign to carry), signed otherwise.
        auto* nonneg = llvm::BasicBlock::Create(ctx_, "requant_tile_nonneg", fn_);
        auto* sign = llvm::BasicBlock::Create(ctx_, "requant_tile_signed", fn_);
        LV* is_signed = b_.CreateICmpNE(b_.CreateLoad(b_.getInt32Ty(), requant_negatives_signed_, /*isVolatile=*/true), b_.getInt32(0));
        b_.CreateCondBr(is_signed, sign, nonneg);
        b_.SetInsertPoint(nonneg);
        integer_form(true);
        b_.SetInsertPoint(sign);
      }
      integer_form(false);
      b_.SetInsertPoint(slow);
      for (size_t u = 0; u < copies; ++u) {
        select_copy(u);
        emit_epilogue_lane_by_lane(acc_values[u], lanes, end);
      }
      b_.CreateBr(join);
      b_.SetInsertPoint(join);
      select_copy(copies - 1);
      vars_[vec_var] = vec_base;
      return;
    }
    if (lanes > 1 && transpose_tile_stores_ && !unrolled.empty()) {
      std::vector<LV*> results(copies);
      for (size_t u = 0; u < copies; ++u) {
        select_copy(u);
        acc_ = acc_values[u];
        results[u] = splat(value(k_.result), lanes);
      }
      store_tile_transposed(results, lanes, vectors, vec_base, end);
      return;
    }
    for (size_t u = 0; u < copies; ++u) {
      select_copy(u);
      if (lanes > 1 && float_scalar_epilogue_) {
        if (!emit_requantize_vector(acc_values[u], lanes, end)) emit_epilogue_lane_by_lane(acc_values[u], lanes, end);
        continue;
      }
      acc_ = acc_values[u];
      LV* r = splat(value(k_.result), lanes);
      store(output_index(k_), r, k_.args[0].dtype);
    }
    if (lanes > 1) vars_[vec_var] = vec_base;
  }

  // The epilogue of a vector of integer sums where float arithmetic is scalar (Hexagon:
  // HVX sums, float requantization): a rolled loop over the lanes, each computed as a
  // scalar kernel would. LLVM would otherwise split every float vector operation into
  // lanes inline (test_int8's conv_relu for hexagon-v65: 121,544 against 27,592 bytes of
  // code, 16 s against 0.8 s of `edgec compile`).
  void emit_epilogue_lane_by_lane(LV* sums, int lanes, LV* end) {
    llvm::Type* at = sums->getType();
    llvm::AllocaInst* spill;
    {
      IRBuilder<> eb(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
      spill = eb.CreateAlloca(at);
    }
    b_.CreateStore(sums, spill);
    const int var = vec_var_;
    LV* base = vars_[var];
    LV* count = ic(lanes);
    if (end) {
      LV* left = b_.CreateSub(end, base);
      count = b_.CreateSelect(b_.CreateICmpSLT(left, count), left, count);
    }
    end_lanes();
    llvm::Type* elem = at->getScalarType();
    emit_loop(ic(0), count, 1, [&](LV* lane) {
      memo_.clear();
      vars_[var] = b_.CreateAdd(base, lane);
      acc_ = b_.CreateLoad(elem, b_.CreateInBoundsGEP(elem, spill, lane));
      store(output_index(k_), value(k_.result), k_.args[0].dtype);
    }, /*keep_rolled=*/true);
    vars_[var] = base;
    begin_lanes(var, lanes, end);
  }

  // ---- requantization in integer vector operations ----
  // The epilogue saturate(round_half_even(float32(x) * s) + zp) of an int32 x (ops_quant.cc
  // requantize: QLinearConv / QLinearMatMul / QDQ groups), where float arithmetic is scalar
  // (Hexagon v65: no HVX float), computed exactly in 32-bit integer lanes instead.
  //
  // The chain above the Round: Add / Sub / Max / Min by integer constants, then a Cast to an
  // 8-bit type; it is monotone, so where it gives the same value at r = +-256 and at
  // +-FLT_MAX every |r| >= 256 saturates and only |round(v)| <= 256 needs computing exactly.
  //
  // With s = m * 2^-e (m the 24-bit significand, e in [24, 39], i.e. s in [2^-16, 1)) and
  // a = min(|x|, 2^24) (float32(x) = x below 2^24; above it float32(x) * s >= 2^24 * s >= 256
  // saturates anyway), v = a * m * 2^-e exactly and P = a * m < 2^48:
  //   hi = floor(P / 2^24) (the high word of a * (m << 8)), lo = P mod 2^32;
  //   v >= 256  iff  hi >= 2^(e - 16)                          (saturated: r = 256);
  //   else q = floor(P / 2^sh), sh = e - 24 in [0, 15], is v in 8.24 fixed point:
  //   q = hi << (24 - sh) | (lo mod 2^24) >> sh, rem = P mod 2^sh (the bits below q);
  //   n = q >> 24, f = q mod 2^24 (v = n + (f + rem / 2^sh) / 2^24).
  // float32(v) then round-half-even differs from rounding v once only where float32(v) is a
  // tie t = n + 0.5 (half-integers below 2^22 are floats; rounding is monotone): v within
  // half an ulp of t, ulp = 2^(k - 23) for t in [2^k, 2^(k+1)), k = floor(log2 n) for n >= 1,
  // the window's ends included (t's significand is even). In units of 2^-24 the window is
  // |f + rem / 2^sh - 2^23| <= 2^k; for n = 0 (t = 0.5, ulp 2^-24 above it, 2^-25 below,
  // where both roundings give 0 anyway) it is f == 2^23, rem <= 2^(sh - 1). In the window
  // r = the even one of n, n + 1; elsewhere r = n + (f >= 2^23). The sign is applied last
  // (both roundings are symmetric). tests/hexagon/test_requant_exact.py checks this form
  // against numpy's float32 arithmetic over every x below saturation for real models'
  // scales, and over the boundary classes and random values for many scales.
  //
  // A vector with a lane's s outside [2^-16, 1) (or not a positive normal float) takes the
  // lane-by-lane float epilogue instead (a branch per vector).
  struct RequantChain {
    const Value* x = nullptr;  // the int32 value
    const Value* s = nullptr;  // the float32 factor (a load or a constant)
    struct Step {
      const Value* op;       // Add / Sub / Max / Min
      const Value* operand;  // the other operand: an integer constant or a lane-invariant load
    };
    std::vector<Step> ops;  // innermost first
    const Value* zp = nullptr;  // the one load among the operands (a zero point), if any
    DType out = DType::U8;
    // The chain maps every r in [-256, 0] to what it maps 0 to (a ReLU's clamp at the zero
    // point), for every zero point: a negative x then needs no sign, max(x, 0) gives its result.
    bool negatives_as_zero = false;
    bool negatives_as_zero_for_some = false;  // for some zero point: decided at run time
    bool sat_as_255 = false;  // the chain gives the same at +-255 as at +-256, every zero point
  };
  static bool small_int_const(const Value* v) {
    return v->kind == Value::Kind::Const && v->constant == std::floor(v->constant) && std::fabs(v->constant) <= double(1 << 20);
  }
  bool invariant_f32_load(const Value* v) const {
    return v->kind == Value::Kind::Load && v->dtype == DType::F32 && !v->dynamic && v->guards.empty() &&
           !load_depends_on(v, vec_var_);
  }
  std::optional<RequantChain> match_requant_chain() const {
    const Value* v = k_.result;
    if (v->kind != Value::Kind::Alu || v->op != Op::Cast || (v->dtype != DType::U8 && v->dtype != DType::I8) ||
        v->srcs[0]->dtype != DType::F32 || k_.args[0].dtype != v->dtype)
      return std::nullopt;
    RequantChain c;
    c.out = v->dtype;
    v = v->srcs[0];
    while (v->kind == Value::Kind::Alu && v->dtype == DType::F32 &&
           (v->op == Op::Add || v->op == Op::Sub || v->op == Op::Max || v->op == Op::Min)) {
      int other = -1;  // the operand that is not the chain: srcs[1], or srcs[0] but for Sub
      for (int i : {1, 0}) {
        const Value* o = v->srcs[size_t(i)];
        if (other < 0 && (i == 1 || v->op != Op::Sub) && (small_int_const(o) || (!c.zp && invariant_f32_load(o)))) other = i;
      }
      if (other < 0) return std::nullopt;
      const Value* o = v->srcs[size_t(other)];
      if (o->kind == Value::Kind::Load) c.zp = o;
      c.ops.push_back({v, o});
      v = v->srcs[size_t(1 - other)];
    }
    std::reverse(c.ops.begin(), c.ops.end());
    if (v->kind != Value::Kind::Alu || v->op != Op::Round || v->dtype != DType::F32) return std::nullopt;
    v = v->srcs[0];
    if (v->kind != Value::Kind::Alu || v->op != Op::Mul || v->dtype != DType::F32) return std::nullopt;
    for (int i = 0; i < 2; ++i) {
      const Value* x = v->srcs[size_t(i)];
      const Value* s = v->srcs[size_t(1 - i)];
      if (x->kind == Value::Kind::Alu && x->op == Op::Cast && x->srcs[0]->dtype == DType::I32 &&
          (s->kind == Value::Kind::Load || s->kind == Value::Kind::Const) && s->dtype == DType::F32 && !s->dynamic) {
        c.x = x->srcs[0];
        c.s = s;
        break;
      }
    }
    if (!c.x) return std::nullopt;
    // The chain in float32 as the scalar code computes it, at a rounded value r, the load
    // operand (if any) holding z.
    auto chain = [&](float r, float z) {
      for (const RequantChain::Step& st : c.ops) {
        const float k = st.operand->kind == Value::Kind::Const ? static_cast<float>(st.operand->constant) : z;
        switch (st.op->op) {
          case Op::Add: r = r + k; break;
          case Op::Sub: r = r - k; break;
          case Op::Max: r = r > k ? r : k; break;
          default: r = r < k ? r : k; break;
        }
      }
      return r;
    };
    const float lo = c.out == DType::U8 ? 0.0f : -128.0f, hi = c.out == DType::U8 ? 255.0f : 127.0f;
    const float big = std::numeric_limits<float>::max();
    // A load operand (the output's zero point) must hold an integer of the output type.
    const int z_lo = c.zp ? int(lo) : 0, z_hi = c.zp ? int(hi) : 0;
    c.negatives_as_zero = true;
    c.sat_as_255 = true;
    for (int z = z_lo; z <= z_hi; ++z) {
      for (float sign : {1.0f, -1.0f})
        if (chain(sign * 255.0f, float(z)) != chain(sign * 256.0f, float(z))) c.sat_as_255 = false;
      for (float sign : {1.0f, -1.0f}) {
        float at = chain(sign * 256.0f, float(z)), far = chain(sign * big, float(z));
        if (at != far || at < lo || at > hi) return std::nullopt;
      }
      // Monotone: equal at -256 and 0, equal in between.
      if (chain(-256.0f, float(z)) != chain(0.0f, float(z))) c.negatives_as_zero = false;
      else c.negatives_as_zero_for_some = true;
    }
    return c;
  }

  // Stores int32 lanes (values of the 8-bit type t) as bytes. On HVX with 32 lanes along the
  // output: two packs (vpacke: the low half of each word, then of each half) put the 32 bytes
  // at the front of a vector register, stored under a predicate (LLVM splits an unaligned
  // one into two aligned predicated stores); LLVM would take the words apart one by one.
  void store_bytes(const Index& ix, LV* words, DType t) {
    const int lanes = static_cast<int>(llvm::cast<llvm::FixedVectorType>(words->getType())->getNumElements());
    if (int8_dot_ != TargetSpec::Int8Dot::HvxU8S8 || lanes != 32 || lane_stride(ix, vec_var_, lanes_).value_or(0) != 1) {
      store(ix, b_.CreateTrunc(words, lanes_of(b_.getInt8Ty(), lanes)), t);
      return;
    }
    auto* v32 = words->getType();
    LV* halves = b_.CreateIntrinsic(v32, llvm::Intrinsic::hexagon_V6_vpackeh_128B, {words, words});
    LV* bytes = b_.CreateIntrinsic(v32, llvm::Intrinsic::hexagon_V6_vpackeb_128B, {halves, halves});
    auto* v128 = llvm::FixedVectorType::get(b_.getInt8Ty(), 128);
    bytes = b_.CreateBitCast(bytes, v128);
    std::vector<llvm::Constant*> front;
    for (int i = 0; i < 128; ++i) front.push_back(b_.getInt1(i < 32));
    LV* mask = llvm::ConstantVector::get(front);
    if (lane_mask_) {
      std::vector<int> widen;
      for (int i = 0; i < 128; ++i) widen.push_back(i < 32 ? i : 32);
      mask = b_.CreateShuffleVector(lane_mask_, llvm::Constant::getNullValue(lane_mask_->getType()), widen);
    }
    LV* p = b_.CreateInBoundsGEP(b_.getInt8Ty(), buffers_[0], index(ix));
    annotate(b_.CreateMaskedStore(bytes, p, llvm::Align(1), mask), 0);
  }

  // The load operand of the chain (the output zero point, float) as an int32, and whether it
  // is an integer of the output type (else the lane-by-lane epilogue runs).
  std::pair<LV*, LV*> requant_zero_point(LV* zf, DType out) {
    if (zf->getType()->isVectorTy()) zf = b_.CreateExtractElement(zf, uint64_t{0});
    const bool u8 = out == DType::U8;
    LV* in_range = b_.CreateAnd(b_.CreateFCmpOGE(zf, llvm::ConstantFP::get(zf->getType(), u8 ? 0.0 : -128.0)),
                                b_.CreateFCmpOLE(zf, llvm::ConstantFP::get(zf->getType(), u8 ? 255.0 : 127.0)));
    LV* zi = b_.CreateFPToSI(b_.CreateSelect(in_range, zf, llvm::ConstantFP::get(zf->getType(), 0.0)), b_.getInt32Ty());
    LV* exact = b_.CreateAnd(in_range, b_.CreateFCmpOEQ(b_.CreateSIToFP(zi, zf->getType()), zf));
    return {zi, exact};
  }

  // Once per kernel call, before its loops: whether every element of the requantization's
  // scale tensor lies in [2^-16, 1) (the integer form's range), and the zero point where it
  // is one fixed element. Checked per vector instead, the test (a reduction of 32 compares
  // across the lanes, then a branch on a predicate) and the zero point's conversion took
  // about 20 of the 70 packets of each vector's epilogue. The whole tensor is checked, not
  // only the channels a vector reads: one bad scale sends every vector to the lane-by-lane
  // epilogue, which is exact for any scale.
  void check_requant_params_once(int vec) {
    if (!float_scalar_epilogue_ || int8_dot_ != TargetSpec::Int8Dot::HvxU8S8 || vec < 0) return;
    vec_var_ = vec;  // match_requant_chain's lane-invariance tests are along the vectorized dim
    std::optional<RequantChain> c = match_requant_chain();
    vec_var_ = -1;
    if (!c) return;
    if (c->s->kind == Value::Kind::Load && k_.args[c->s->arg].dtype == DType::F32) {
      const int64_t n = k_.args[c->s->arg].numel;
      if (n > 0 && n <= (1 << 16)) {
        llvm::AllocaInst* bad;
        {
          IRBuilder<> eb(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
          bad = eb.CreateAlloca(b_.getInt32Ty());
        }
        b_.CreateStore(b_.getInt32(0), bad);
        emit_loop(ic(0), ic(n), 1, [&](LV* i) {
          LV* bits = b_.CreateLoad(b_.getInt32Ty(), b_.CreateInBoundsGEP(b_.getInt32Ty(), buffers_[c->s->arg], i));
          LV* ef = b_.CreateLShr(bits, b_.getInt32(23));  // 256 + the biased exponent for a negative s
          LV* out = b_.CreateZExt(b_.CreateICmpUGT(b_.CreateSub(ef, b_.getInt32(111)), b_.getInt32(15)), b_.getInt32Ty());
          b_.CreateStore(b_.CreateOr(b_.CreateLoad(b_.getInt32Ty(), bad), out), bad);
        }, /*keep_rolled=*/false, /*no_pipelining=*/true);
        requant_scales_bad_ = bad;
        requant_scale_arg_ = c->s->arg;
      }
    }
    if (c->zp && c->zp->index.terms().empty() && c->zp->guards.empty()) {
      LV* zf = b_.CreateLoad(b_.getFloatTy(), b_.CreateInBoundsGEP(b_.getFloatTy(), buffers_[c->zp->arg], ic(c->zp->index.constant())));
      requant_zp_ = requant_zero_point(zf, c->out);
      requant_zp_load_ = c->zp;
      if (requant_scales_bad_ && c->negatives_as_zero_for_some) {
        // Whether this zero point maps every r in [-256, 0] as 0 (match_requant_chain: the
        // chain is monotone), read back per tile: volatile, as requant_scales_bad_.
        {
          IRBuilder<> eb(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
          requant_negatives_signed_ = eb.CreateAlloca(b_.getInt32Ty());
        }
        LV* zi = requant_zp_.first;
        LV* same = b_.CreateICmpEQ(apply_requant_chain(*c, b_.getInt32(-256), zi), apply_requant_chain(*c, b_.getInt32(0), zi));
        b_.CreateStore(b_.CreateZExt(b_.CreateNot(same), b_.getInt32Ty()), requant_negatives_signed_);
      }
    }
  }

  // Whether this kernel's requantization can take the integer form without a test per
  // vector: its scales and zero point were checked once (check_requant_params_once).
  bool requant_prechecked() const {
    std::optional<RequantChain> c = match_requant_chain();
    return c && requant_scales_bad_ && c->s->kind == Value::Kind::Load && c->s->arg == requant_scale_arg_ &&
           (!c->zp || c->zp == requant_zp_load_);
  }

  // prechecked: the caller branched on the checks already (requant_prechecked); only the
  // integer form is emitted, into the current block.
  // nonneg_at_run_time: the caller branched on the run-time zero point mapping negatives as
  // 0 (requant_negatives_signed_), where the chain does not for every zero point.
  bool emit_requantize_vector(LV* sums, int lanes, LV* end, bool prechecked = false, bool nonneg_at_run_time = false) {
    std::optional<RequantChain> c = match_requant_chain();
    if (!c || lanes < 2) return false;
    const bool nonneg = c->negatives_as_zero || nonneg_at_run_time;
    acc_ = sums;
    LV* x = splat(value(c->x), lanes);
    LV* sv = splat(value(c->s), lanes);
    auto* ty = llvm::cast<llvm::VectorType>(x->getType());
    if (!ty->getElementType()->isIntegerTy(32) || !sv->getType()->getScalarType()->isFloatTy()) return false;
    auto k = [&](uint32_t v) -> LV* { return llvm::ConstantInt::get(ty, v); };
    LV* bits = b_.CreateBitCast(sv, ty);
    LV* ef = b_.CreateLShr(bits, k(23));  // the biased exponent; 256 + it for a negative s
    LV* any_bad = nullptr;  // a vector takes the lane-by-lane epilogue (unless prechecked)
    if (!prechecked && requant_scales_bad_ && c->s->kind == Value::Kind::Load && c->s->arg == requant_scale_arg_) {
      // Checked once (check_requant_params_once), read back per vector: a volatile load, so
      // that LLVM does not unswitch the output loops on it (LLVM 19's machine pipeliner then
      // crashed on the lane-by-lane loops of a ragged QLinearMatMul for hexagon-v65, onnx's
      // test_qlinearmatmul_2D_uint8_float32); one scalar load per vector.
      any_bad = b_.CreateICmpNE(b_.CreateLoad(b_.getInt32Ty(), requant_scales_bad_, /*isVolatile=*/true), b_.getInt32(0));
    } else if (!prechecked) {
      LV* bad = b_.CreateICmpUGT(b_.CreateSub(ef, k(111)), k(15));
      if (lane_mask_) bad = b_.CreateAnd(bad, lane_mask_);
      any_bad = b_.CreateOrReduce(bad);
    }
    LV* zp = nullptr;  // the load operand as an int32 splat
    if (c->zp) {
      auto [zi, exact] = c->zp == requant_zp_load_ ? requant_zp_ : requant_zero_point(value(c->zp), c->out);
      if (!prechecked) any_bad = b_.CreateOr(any_bad, b_.CreateNot(exact));
      zp = b_.CreateVectorSplat(lanes, zi);
    }

    const int var = vec_var_;
    llvm::BasicBlock *slow = nullptr, *join = nullptr;
    if (!prechecked) {
      auto* fast = llvm::BasicBlock::Create(ctx_, "requant_vector", fn_);
      slow = llvm::BasicBlock::Create(ctx_, "requant_lanes", fn_);
      join = llvm::BasicBlock::Create(ctx_, "requant_done", fn_);
      b_.CreateCondBr(any_bad, slow, fast);
      b_.SetInsertPoint(fast);
    }
    LV* e = b_.CreateSub(k(150), ef);
    LV* m = b_.CreateOr(b_.CreateAnd(bits, k(0x7FFFFF)), k(0x800000));
    // a = min(|x|, 2^24) without a sign predicate held to the end (HVX has 4; one live
    // across the tile's epilogues was spilled through vector registers): where the chain
    // maps negatives as 0, max(x, 0) and no sign at all; else the sign is tested again at
    // the end, and |x| saturates (vabs:sat, INT32_MIN -> INT32_MAX) so that a signed min
    // (vmin.w; HVX has no unsigned word min: a compare and a mux) clamps it.
    LV* a;
    if (nonneg) {
      a = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, x, k(0)), k(1u << 24));
    } else if (int8_dot_ == TargetSpec::Int8Dot::HvxU8S8 && lanes == 32) {
      a = b_.CreateIntrinsic(ty, llvm::Intrinsic::hexagon_V6_vabsw_sat_128B, {x});
      a = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, a, k(1u << 24));
    } else {
      a = b_.CreateSelect(b_.CreateICmpSLT(x, k(0)), b_.CreateNeg(x), x);  // INT32_MIN: 2^31 unsigned
      a = b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, a, k(1u << 24));
    }
    // hi as a signed high product: m << 8 has its top bit set, so as a signed word it is
    // (m << 8) - 2^32 and a * that / 2^32 is hi - a exactly (a is an integer in [0, 2^24]).
    // HVX's 32 x 32 products are signed: the unsigned one took a per-channel predicate and
    // two more instructions per vector to correct.
    auto* wide = llvm::VectorType::get(b_.getInt64Ty(), ty->getElementCount());
    LV* product = b_.CreateMul(b_.CreateSExt(a, wide), b_.CreateSExt(b_.CreateShl(m, k(8)), wide));
    LV* hi = b_.CreateAdd(b_.CreateTrunc(b_.CreateAShr(product, llvm::ConstantInt::get(wide, 32)), ty), a);
    // The low word of the same product: (P mod 2^24) << 8 (one multiply for both words).
    LV* lo8 = b_.CreateTrunc(product, ty);
    // Saturated (hi >= 2^(e - 16)): where the chain gives the same at +-255 as at +-256
    // (sat_as_255), hi clamped to 2^(e - 16) - 1 instead makes n = 255 and r 255 or 256
    // (one vmin.w; no predicate held to the end); else a select of 256.
    LV* sat_hi = b_.CreateShl(k(1), b_.CreateSub(e, k(16)));
    LV* sat = nullptr;
    if (c->sat_as_255) hi = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, hi, b_.CreateSub(sat_hi, k(1)));
    else sat = b_.CreateICmpUGE(hi, sat_hi);
    LV* sh = b_.CreateSub(e, k(24));
    LV* sh8 = b_.CreateAdd(sh, k(8));
    LV* q = b_.CreateOr(b_.CreateShl(hi, b_.CreateSub(k(24), sh)), b_.CreateLShr(lo8, sh8));
    LV* pow_sh = b_.CreateShl(k(1), sh);
    LV* rem8 = b_.CreateAnd(lo8, b_.CreateShl(b_.CreateSub(pow_sh, k(1)), k(8)));  // rem << 8, rem = P mod 2^sh
    LV* n = b_.CreateLShr(q, k(24));
    LV* f = b_.CreateAnd(q, k(0xFFFFFF));
    // The window in units of 2^-25: |2F - 2^24| <= w2 with F = f + rem / 2^sh,
    // w2 = 2^(32 - clz(n)) (1 for n = 0: half a unit of 2^-24; below 0.5 both roundings give
    // 0, so the window may reach that far down). With g = floor(2F) and ceil(2F) = g + frac_nz
    // that is 0 <= g - (2^24 - w2) <= 2 w2 - frac_nz: one unsigned compare (a g below the
    // window wraps to over 2^31; w2 <= 2^9 below saturation), one predicate for one select
    // (Hexagon lowers a compare feeding a select as vcmp + vmux; and / or of predicates it
    // would not: 8 instructions fewer per vector than two compares as 0 / 1 words).
    LV* w2 = b_.CreateShl(k(1), b_.CreateSub(k(32), b_.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, n, b_.getFalse())));
    // 2v as an HVX add, not a shift (LLVM writes v + v as v << 1): HVX issues one shift per
    // packet, and this form has a dozen per vector.
    auto twice = [&](LV* v) -> LV* {
      if (int8_dot_ == TargetSpec::Int8Dot::HvxU8S8 && lanes == 32)
        return b_.CreateIntrinsic(ty, llvm::Intrinsic::hexagon_V6_vaddw_128B, {v, v});
      return b_.CreateShl(v, k(1));
    };
    // In units of 2^-8 (rem8 = rem << 8, the low word's bits): 2 rem << 8 < 2^24.
    LV* mask8 = b_.CreateShl(b_.CreateSub(pow_sh, k(1)), k(8));
    LV* rem2_8 = twice(rem8);
    LV* bit = b_.CreateLShr(rem2_8, sh8);                                       // floor(2 rem / 2^sh)
    // (t + 2^sh - 1) >> sh for t = 2 rem mod 2^sh < 2^sh: 1 where t > 0 (no predicate)
    LV* frac_nz = b_.CreateLShr(b_.CreateAdd(b_.CreateAnd(rem2_8, mask8), mask8), sh8);
    LV* g_floor = b_.CreateAdd(twice(f), bit);                                  // floor(2F)
    LV* from_window_start = b_.CreateAdd(g_floor, b_.CreateSub(w2, k(1u << 24)));
    LV* window_width = b_.CreateSub(twice(w2), frac_nz);
    LV* in_window = b_.CreateICmpULE(from_window_start, window_width);
    // In the window the even one of n, n + 1; elsewhere n + (F > 2^23), F never 2^23 there.
    LV* up = b_.CreateAnd(b_.CreateSelect(in_window, n, b_.CreateLShr(f, k(23))), k(1));
    LV* r = b_.CreateAdd(n, up);
    if (sat) r = b_.CreateSelect(sat, k(256), r);
    if (!nonneg) r = b_.CreateSelect(b_.CreateICmpSLT(x, k(0)), b_.CreateNeg(r), r);
    store_bytes(output_index(k_), apply_requant_chain(*c, r, zp), c->out);
    if (prechecked) return true;
    b_.CreateBr(join);

    b_.SetInsertPoint(slow);
    emit_epilogue_lane_by_lane(sums, lanes, end);
    b_.CreateBr(join);

    b_.SetInsertPoint(join);
    begin_lanes(var, lanes, end);
    return true;
  }

  // The chain above the Round on integer r (a vector, or a scalar), zp its load operand.
  LV* apply_requant_chain(const RequantChain& c, LV* r, LV* zp) {
    for (const RequantChain::Step& st : c.ops) {
      LV* kv = st.operand->kind == Value::Kind::Const
                   ? llvm::ConstantInt::get(r->getType(), static_cast<uint64_t>(static_cast<int64_t>(st.operand->constant)), true)
                   : zp;
      switch (st.op->op) {
        case Op::Add: r = b_.CreateAdd(r, kv); break;
        case Op::Sub: r = b_.CreateSub(r, kv); break;
        case Op::Max: r = b_.CreateSelect(b_.CreateICmpSGT(r, kv), r, kv); break;
        default: r = b_.CreateSelect(b_.CreateICmpSLT(r, kv), r, kv); break;
      }
    }
    return r;
  }

  // ---- dot-product instructions ----
  // A reduction the frontend split into groups along its innermost dim: bf16 pairs
  // (lowering.h bf16_operand) or 8-bit quads (lowering.h kInt8Quad). The body is the product
  // of two narrow loads widened to the accumulator's type, one the same for every lane (a
  // pixel, a row) and one `group` elements apart per lane (a weight panel storing each
  // column's group together). One instruction then computes the whole group per lane:
  //   vdpbf16ps  acc + a[1] b[1] + a[0] b[0]   (bf16 -> f32; products exact in float32,
  //              each sum rounded to nearest even, denormals flushed)
  //   vpdpbusd   acc + sum of 4 u8 x s8        (int32, exact: no intermediate saturation)
  //   vpmaddwd   acc + sum of 2 int16 x int16  (AVX2; the 8-bit pairs widened first: exact)
  //   sdot       acc + sum of 4 s8 x s8        (AArch64 DotProd, int32, exact); a uint8
  //              operand the frontend shifted (x - 128, DotLayout::int8_signed) is its
  //              byte x ^ 0x80 read as int8
  // A padding guard on the lane-invariant load (a channels-last conv's border pixels) makes
  // its group the padding value; ragged vectors keep the loop: the same products one by one.
  enum class DotKind { None, Bf16Pairs, U8S8Quads, S8S8Quads, I16Pairs };
  struct DotGroups {
    DotKind kind = DotKind::None;
    int var = -1;                      // the group's reduce variable
    int group = 1;                     // its extent
    const Value* broadcast = nullptr;  // the lane-invariant load
    const Value* panel = nullptr;      // the load `group` elements apart per lane
    double fill = 0.0;                 // what the broadcast reads where its guard fails
    bool flip = false;                 // the broadcast is uint8 read as x - 128 (x ^ 0x80)
  };
  // The load under a dot operand: one widening cast to the accumulator's type and, for a
  // padded view, a Where(InBounds, ., constant) above or below it; for a signed dot, a
  // Sub(., 128) above the cast (*shifted; lowering.h int8_operand_i32). *fill is what the
  // load reads where the guard fails, in its own type. Null for anything else.
  const Value* dot_load_under(const Value* v, double* fill, bool* shifted) const {
    bool widened = false, filled_shifted = false;
    *fill = 0.0;
    *shifted = false;
    while (v->kind == Value::Kind::Alu) {
      if (v->op == Op::Where && v->srcs[0]->kind == Value::Kind::InBounds && v->srcs[2]->kind == Value::Kind::Const) {
        *fill = v->srcs[2]->constant;
        filled_shifted = !*shifted;  // above the Sub: the shifted value's fill
        v = v->srcs[1];
      } else if (v->op == Op::Sub && !widened && !*shifted && int8_dot_ == TargetSpec::Int8Dot::S8S8 &&
                 v->dtype == k_.acc_dtype && v->srcs[1]->kind == Value::Kind::Const && v->srcs[1]->constant == 128.0) {
        *shifted = true;
        if (filled_shifted) *fill += 128.0;  // back to the load's own value
        v = v->srcs[0];
      } else if (v->op == Op::Cast && v->dtype == k_.acc_dtype && !widened) {
        widened = true;
        v = v->srcs[0];
      } else {
        return nullptr;
      }
    }
    return widened && v->kind == Value::Kind::Load && !v->dynamic ? v : nullptr;
  }
  // The reduce body's product of two dot operand loads (dot_load_under on each side).
  struct ProductOperands {
    const Value* a = nullptr;
    const Value* b = nullptr;
    double fill_a = 0.0, fill_b = 0.0;
    bool shift_a = false, shift_b = false;
    void swap_sides() { std::swap(a, b), std::swap(fill_a, fill_b), std::swap(shift_a, shift_b); }
  };
  bool reduce_product_operands(ProductOperands* p) const {
    const Value* body = k_.reduce_body;
    if (body->kind != Value::Kind::Alu || body->op != Op::Mul) return false;
    p->a = dot_load_under(body->srcs[0], &p->fill_a, &p->shift_a);
    p->b = dot_load_under(body->srcs[1], &p->fill_b, &p->shift_b);
    return p->a && p->b;
  }
  void find_dot_groups(int vec) {
    dot_ = {};
    if (!k_.has_reduce() || k_.reduce_op != Op::ReduceSum || reduce_order_.empty()) return;
    const int j = reduce_order_.back();
    const int var = static_cast<int>(k_.out_shape.size()) + j;
    ProductOperands operands;
    if (!reduce_product_operands(&operands)) return;
    // a: the operand the same for every lane (a grouped conv's input too, where a vector of
    // output channels stays in one group: load_varies_along).
    if (load_varies_along(operands.a, vec, vector_lanes_)) operands.swap_sides();
    auto& [a, b, fill_a, fill_b, shift_a, shift_b] = operands;
    const DType ta = k_.args[a->arg].dtype, tb = k_.args[b->arg].dtype;
    DotKind kind = DotKind::None;
    int group = 1;
    if (bf16_dot_ && k_.acc_dtype == DType::F32 && ta == DType::BF16 && tb == DType::BF16) kind = DotKind::Bf16Pairs, group = 2;
    auto is_8bit = [](DType t) { return t == DType::U8 || t == DType::I8; };
    const bool u8s8 = int8_dot_ == TargetSpec::Int8Dot::U8S8 || int8_dot_ == TargetSpec::Int8Dot::HvxU8S8;
    if (u8s8 && k_.acc_dtype == DType::I32 && !shift_a && !shift_b &&
        ((ta == DType::U8 && tb == DType::I8) || (ta == DType::I8 && tb == DType::U8)))
      kind = DotKind::U8S8Quads, group = 4;
    // sdot: signed bytes on both sides, the broadcast a shifted uint8 or an int8.
    if (int8_dot_ == TargetSpec::Int8Dot::S8S8 && k_.acc_dtype == DType::I32 && tb == DType::I8 && !shift_b &&
        ((ta == DType::U8 && shift_a) || (ta == DType::I8 && !shift_a)))
      kind = DotKind::S8S8Quads, group = 4;
    // vpmaddwd: the broadcast pair 8-bit (widened here) or int16 (stored widened: lowering.cc matmul).
    if (int8_dot_ == TargetSpec::Int8Dot::I16Pairs && k_.acc_dtype == DType::I32 && !shift_a && !shift_b &&
        (is_8bit(ta) || ta == DType::I16) && is_8bit(tb))
      kind = DotKind::I16Pairs, group = 2;
    if (kind == DotKind::None || k_.reduce_extents[j] != group) return;
    const int lanes = lanes_for(k_.out_shape[vec]);
    if (kind == DotKind::S8S8Quads && lanes != 4) return;  // one sdot: 4 int32 lanes
    if (load_varies_along(a, vec, lanes * tile_vectors_) || load_affine_coef(a, var) != 1 || load_affine_coef(b, var) != 1 ||
        lane_stride(b->index, vec, lanes) != group || !b->guards.empty())
      return;
    for (const Guard& g : a->guards)
      if (index_depends_on(g.index, vec) || index_depends_on(g.index, var)) return;
    dot_ = {kind, var, group, a, b, fill_a, shift_a};
  }
  // The largest value of `ix` with variable `var` at `value`, `zero_var` at 0 and every other variable
  // anywhere in its range; none unless those others only add (a positive multiple of each,
  // outside any division: a packed panel's column v as 4*(v%16) + 1536*(v/16) + 64*k + j).
  static std::optional<int64_t> largest_index_at(const Index& ix, int var, int64_t value, int zero_var = -1) {
    std::function<std::optional<int64_t>(const Index&, bool)> at = [&](const Index& e, bool only_var) -> std::optional<int64_t> {
      int64_t r = e.constant();
      for (const auto& [atom, coef] : e.terms()) {
        if (atom->kind == Atom::Kind::Var && atom->var == var) {
          r += coef * value;
        } else if (atom->kind == Atom::Kind::Var && atom->var == zero_var) {
        } else if (atom->kind == Atom::Kind::Var && coef >= 0 && !only_var) {
          r += coef * atom->hi;
        } else if (atom->kind != Atom::Kind::Var && coef >= 0) {
          std::optional<int64_t> inner = at(atom->inner, true);
          if (!inner || *inner < 0) return std::nullopt;
          r += coef * (atom->kind == Atom::Kind::Div ? *inner / atom->divisor : *inner % atom->divisor);
        } else {
          return std::nullopt;
        }
      }
      return r;
    };
    return at(ix, false);
  }

  // Whether ix is a multiple of m wherever its variables are, `skip_var` held at 0.
  static bool index_multiple_of(const Index& ix, int64_t m, int skip_var) {
    if (ix.constant() % m) return false;
    for (const auto& [atom, coef] : ix.terms())
      if (coef % m && !(atom->kind == Atom::Kind::Var && atom->var == skip_var)) return false;
    return true;
  }

  // What the broadcast operand reads where its guard fails, as one element of its type.
  llvm::Constant* dot_fill_element(llvm::Type* elem) const {
    if (llvm::isa<llvm::IntegerType>(elem)) return llvm::ConstantInt::get(elem, static_cast<uint64_t>(static_cast<int64_t>(dot_.fill)), true);
    return llvm::ConstantFP::get(elem, dot_.fill);
  }

  // Constant fill values covering what the broadcast operand reads over the loop around
  // the dot (a padded pixel's channel groups), where its guards do not change in that loop
  // and that is at most 16 KB; null otherwise.
  llvm::GlobalVariable* dot_fill_block(llvm::Type* elem) {
    constexpr int64_t kMaxBytes = 16 << 10;
    const Value* l = dot_.broadcast;
    if (l->guards.empty() || reduce_order_.size() < 2) return nullptr;
    const int j = reduce_order_[reduce_order_.size() - 2];
    const int var = static_cast<int>(k_.out_shape.size()) + j;
    std::optional<int64_t> coef = load_affine_coef(l, var);
    if (!coef || *coef < 0) return nullptr;
    for (const Guard& g : l->guards)
      if (index_depends_on(g.index, var)) return nullptr;
    const int64_t reach = *coef * (k_.reduce_extents[j] - 1) + dot_.group;
    if (reach * static_cast<int64_t>(dtype_size(k_.args[l->arg].dtype)) > kMaxBytes) return nullptr;
    auto* type = llvm::ArrayType::get(elem, static_cast<uint64_t>(reach));
    auto* init = llvm::ConstantArray::get(type, std::vector<llvm::Constant*>(size_t(reach), dot_fill_element(elem)));
    auto* block = new llvm::GlobalVariable(m_, type, /*isConstant=*/true, llvm::GlobalValue::PrivateLinkage, init,
                                           k_.name + ".fill");
    block->setAlignment(llvm::Align(64));
    return block;
  }

  // vpmaddwd's broadcast operand: the 8-bit pair (an i16) in every 32-bit lane, each byte
  // widened to int16. With 4 or 8 lanes that is vpbroadcastw + vpshufb (zero-extending: the
  // mask's 0x80 bytes write zeros; sign-extending: each byte to the top of its word, then
  // vpsraw 8), not vpbroadcastw + vpmovzxbw: on Zen 3 a vpmovzxbw ymm, xmm issues at 0.8
  // per cycle, vpshufb and vpsraw at 2, and with one per pixel of a 2 x 4 register tile it
  // bounded the int8 convs' inner loop (microbenchmark: 15 -> 21 multiply-adds per cycle).
  LV* widened_byte_pair_splat(LV* pair, int lanes, bool zero_extend) {
    auto* words = llvm::FixedVectorType::get(b_.getInt16Ty(), static_cast<unsigned>(2 * lanes));
    auto* bytes = llvm::FixedVectorType::get(b_.getInt8Ty(), static_cast<unsigned>(4 * lanes));
    if (lanes != 4 && lanes != 8) {  // vpbroadcastw + vpmov[sz]xbw
      LV* halves = b_.CreateVectorSplat(static_cast<unsigned>(lanes), pair);
      return b_.CreateIntCast(b_.CreateBitCast(halves, llvm::FixedVectorType::get(b_.getInt8Ty(), static_cast<unsigned>(2 * lanes))),
                              words, !zero_extend);
    }
    LV* splat = b_.CreateVectorSplat(static_cast<unsigned>(2 * lanes), pair);
    std::vector<llvm::Constant*> mask;
    for (int i = 0; i < 4 * lanes; i += 4)
      for (int byte : zero_extend ? std::array<int, 4>{0, 0x80, 1, 0x80} : std::array<int, 4>{0x80, 0, 0x80, 1})
        mask.push_back(b_.getInt8(static_cast<uint8_t>(byte)));
    const llvm::Intrinsic::ID pshufb = lanes == 8 ? llvm::Intrinsic::x86_avx2_pshuf_b : llvm::Intrinsic::x86_ssse3_pshuf_b_128;
    LV* placed = b_.CreateBitCast(
        b_.CreateIntrinsic(pshufb, {}, {b_.CreateBitCast(splat, bytes), llvm::ConstantVector::get(mask)}), words);
    return zero_extend ? placed : b_.CreateAShr(placed, llvm::ConstantInt::get(words, 8));
  }

  // The group step for every copy of the tile; false where the loop must run instead.
  template <typename SelectCopy>
  bool emit_dot_groups(int lanes, size_t copies, SelectCopy& select_copy, const std::vector<llvm::AllocaInst*>& accs,
                       llvm::Type* at) {
    const bool hvx = int8_dot_ == TargetSpec::Int8Dot::HvxU8S8 && dot_.kind == DotKind::U8S8Quads;
    if (!(lanes == 4 || lanes == 8 || lanes == 16 || (hvx && lanes == 32))) return false;
    // A ragged copy (lanes past the end masked) still takes the instruction where its whole
    // panel read stays in the buffer: packed panels fill their last block of 16 (8-bit:
    // int8_dot_columns) columns (packed_in_column_groups) and copies start at multiples of
    // the lanes, so a copy that starts before the end reads padding columns there (their
    // sums are never stored). A copy wholly past the end is skipped.
    std::vector<bool> skip(copies, false);
    for (size_t u = 0; u < copies; ++u) {
      select_copy(u);
      if (!lane_mask_) continue;
      auto* start = llvm::dyn_cast<llvm::ConstantInt>(vars_[vec_var_]);
      if (!start) return false;
      const int64_t first = start->getSExtValue(), extent = k_.out_shape[size_t(vec_var_)];
      if (first >= extent) {
        skip[u] = true;
        continue;
      }
      std::optional<int64_t> last = largest_index_at(dot_.panel->index, vec_var_, first + lanes - 1, dot_.var);
      const int columns = dot_.kind == DotKind::Bf16Pairs ? 16 : int8_dot_columns_;
      if (first % lanes || columns % lanes || !last || *last + dot_.group > k_.args[dot_.panel->arg].numel) return false;
    }
    select_copy(0);
    const bool bf16 = dot_.kind == DotKind::Bf16Pairs, pairs16 = dot_.kind == DotKind::I16Pairs;
    const bool sdot = dot_.kind == DotKind::S8S8Quads;
    if (sdot && lanes != 4) return false;
    const int size = lanes >= 16 ? 2 : lanes == 8 ? 1 : 0;
    using llvm::Intrinsic::ID;
    const ID dot = hvx       ? ID(llvm::Intrinsic::hexagon_V6_vrmpybusv_acc_128B)
                   : sdot    ? ID(llvm::Intrinsic::aarch64_neon_sdot)
                   : bf16    ? std::array<ID, 3>{llvm::Intrinsic::x86_avx512bf16_dpbf16ps_128, llvm::Intrinsic::x86_avx512bf16_dpbf16ps_256,
                                                 llvm::Intrinsic::x86_avx512bf16_dpbf16ps_512}[size]
                   : pairs16 ? std::array<ID, 3>{llvm::Intrinsic::x86_sse2_pmadd_wd, llvm::Intrinsic::x86_avx2_pmadd_wd,
                                                 llvm::Intrinsic::x86_avx512_pmaddw_d_512}[size]
                             : std::array<ID, 3>{llvm::Intrinsic::x86_avx512_vpdpbusd_128, llvm::Intrinsic::x86_avx512_vpdpbusd_256,
                                                 llvm::Intrinsic::x86_avx512_vpdpbusd_512}[size];
    const DType bt = k_.args[dot_.broadcast->arg].dtype, pt = k_.args[dot_.panel->arg].dtype;
    llvm::Type* elem = storage_type(bt);
    auto vector_of = [&](llvm::Type* e, int n) { return llvm::FixedVectorType::get(e, static_cast<unsigned>(n)); };
    auto* lanes_i32 = vector_of(b_.getInt32Ty(), lanes);
    // A group as the 32 bits each lane of the instruction takes: vpmaddwd's pairs widened
    // to int16 first (by the 8-bit type's signedness).
    const bool bytes16 = pairs16 && bt != DType::I16;  // the broadcast pair widened here
    auto dot_word = [&](LV* group) {
      if (bytes16) group = b_.CreateIntCast(group, vector_of(b_.getInt16Ty(), dot_.group), !is_unsigned(bt));
      return b_.CreateBitCast(group, b_.getInt32Ty());
    };
    // The padding value of the whole group.
    LV* fill = dot_word(b_.CreateVectorSplat(static_cast<unsigned>(dot_.group), dot_fill_element(elem)));
    vars_[dot_.var] = ic(0);
    llvm::GlobalVariable* fill_block = dot_fill_block(elem);
    const int around = fill_block ? static_cast<int>(k_.out_shape.size()) + reduce_order_[reduce_order_.size() - 2] : -1;
    // A group whose address is a multiple of its size (an arena or weight buffer, 64-byte
    // aligned, at an index that is a multiple of the group at the group's first element) is
    // one aligned load: on Hexagon one memw where a load of unknown alignment took four
    // memub and three shift-or (half the packets of vrmpy's inner loop).
    const Value* bl = dot_.broadcast;
    const int64_t group_bytes_total = dot_.group * int64_t(dtype_size(bt));
    const bool arena_or_weight = k_.args[bl->arg].role == BufferRole::Intermediate || k_.args[bl->arg].role == BufferRole::Weight;
    const llvm::Align broadcast_alignment =
        hvx && arena_or_weight && group_bytes_total <= 64 && index_multiple_of(bl->index, dot_.group, dot_.var)
            ? llvm::Align(uint64_t(group_bytes_total))
            : llvm::Align(dtype_size(bt));
    std::vector<LV*> results(copies);
    for (size_t u = 0; u < copies; ++u) {
      select_copy(u);
      if (skip[u]) {
        results[u] = b_.CreateLoad(at, accs[u]);
        continue;
      }
      // Where a guard fails (padding) the load reads element 0 and the group becomes the fill.
      LV* ok = guards_known_true_ || dot_.broadcast->guards.empty() ? nullptr : guards_hold(dot_.broadcast->guards, false);
      auto load_at = [&](const Value* l, llvm::Type* ty, LV* ok) {
        LV* idx = index(l->index);
        if (ok) idx = b_.CreateSelect(ok, idx, ic(0));
        auto* ld = b_.CreateAlignedLoad(ty, b_.CreateInBoundsGEP(storage_type(k_.args[l->arg].dtype), buffers_[l->arg], idx),
                                        l == dot_.broadcast ? broadcast_alignment : llvm::Align(dtype_size(k_.args[l->arg].dtype)));
        annotate(ld, l->arg);
        return ld;
      };
      // Or, with a block of fill values, from an address chosen once per step of the loop
      // around the dot (the pixel or the block): LLVM hoists the choice out of that loop.
      auto load_through_fill_block = [&]() {
        LV* iv = vars_[around];
        vars_[around] = ic(0);
        LV* base = b_.CreateGEP(elem, buffers_[dot_.broadcast->arg], index(dot_.broadcast->index));
        vars_[around] = iv;
        LV* p = b_.CreateGEP(elem, b_.CreateSelect(ok, base, fill_block),
                             b_.CreateMul(iv, ic(*load_affine_coef(dot_.broadcast, around))));
        const bool aligned = broadcast_alignment.value() > dtype_size(bt) &&
                             *load_affine_coef(dot_.broadcast, around) % int64_t(broadcast_alignment.value()) == 0;
        auto* ld = b_.CreateAlignedLoad(vector_of(elem, dot_.group), p, aligned ? broadcast_alignment : llvm::Align(dtype_size(bt)));
        annotate(ld, dot_.broadcast->arg);
        return ld;
      };
      // The group as one 32-bit element, broadcast to every lane (vpmaddwd's unguarded pair
      // also as its two bytes: group_bytes).
      LV* group;
      LV* group_bytes = nullptr;
      if (ok && fill_block) {
        LV* raw = load_through_fill_block();
        group = dot_word(raw);
        if (bytes16) group_bytes = b_.CreateBitCast(raw, b_.getInt16Ty());
      } else {
        LV* raw = load_at(dot_.broadcast, vector_of(elem, dot_.group), ok);
        group = dot_word(raw);
        if (ok) group = b_.CreateSelect(ok, group, fill);
        else if (bytes16) group_bytes = b_.CreateBitCast(raw, b_.getInt16Ty());
      }
      // x - 128 of each uint8 byte as int8: its top bit flipped (one eor per group; the fill,
      // from the block or the constant, is the load's own value and flips alike).
      if (dot_.flip) group = b_.CreateXor(group, b_.getInt32(0x80808080u));
      LV* spread = b_.CreateVectorSplat(static_cast<unsigned>(lanes), group);
      if (group_bytes) spread = widened_byte_pair_splat(group_bytes, lanes, is_unsigned(bt));
      LV* panel = load_at(dot_.panel, vector_of(storage_type(pt), dot_.group * lanes), nullptr);
      LV* acc = b_.CreateLoad(at, accs[u]);
      if (sdot) {  // panel <16 x i8>: lane j's 4 weights at 4j
        results[u] = b_.CreateIntrinsic(dot, {acc->getType(), panel->getType()}, {acc, b_.CreateBitCast(spread, panel->getType()), panel});
      } else if (bf16) {
        results[u] = b_.CreateIntrinsic(dot, {}, {acc, b_.CreateBitCast(spread, panel->getType()), panel});
      } else if (pairs16) {
        auto* pairs_ty = vector_of(b_.getInt16Ty(), 2 * lanes);
        panel = b_.CreateIntCast(panel, pairs_ty, !is_unsigned(pt));
        results[u] = b_.CreateAdd(acc, b_.CreateIntrinsic(dot, {}, {b_.CreateBitCast(spread, pairs_ty), panel}));
      } else {
        // vpdpbusd multiplies unsigned bytes (its first source) by signed ones; so does vrmpy
        // (Vu.ub by Vv.b, all three <32 x i32>).
        panel = b_.CreateBitCast(panel, lanes_i32);
        const bool broadcast_unsigned = bt == DType::U8;
        results[u] = b_.CreateIntrinsic(dot, {}, {acc, broadcast_unsigned ? spread : panel, broadcast_unsigned ? panel : spread});
      }
    }
    for (size_t u = 0; u < copies; ++u) b_.CreateStore(results[u], accs[u]);
    if (bf16) used_features_.insert("avx512bf16");
    if ((dot_.kind == DotKind::U8S8Quads || sdot) && !int8_dot_feature_.empty()) used_features_.insert(int8_dot_feature_);
    return true;
  }


  // ---- 8-bit depthwise convs on HVX as 16-bit products ----
  // A depthwise conv's output channel reads one input channel: no reduction over channels
  // for vrmpy's quads. Its taps are products of uint8 activations and int8 weights over 128
  // channels at a time (the activations channels-last, the weights in panels of 128 channels
  // per tap: DotLayout::int8_depthwise_columns): vmpybusv multiplies 128 byte pairs into
  // 16-bit products (exact: |u8 x s8| < 2^15), as even / odd channels in a vector pair, and
  // vaddhw_acc widens two taps' products and adds them into 32-bit sums (exact), also as
  // even / odd halves. Per pixel and two taps: 2 vmpybusv, 2 vaddhw_acc for 256 products,
  // where 32-bit lanes take about 8 instructions per 32. After the taps the sums are
  // shuffled back into channel order (4 vshuff per pixel) for the epilogue's 32-lane vectors.
  // An activation row is read with two aligned loads and a valign, both inside the bytes
  // the step uses (a step's last channels may end near a buffer's end: an unaligned load
  // could cross into an unmapped page).
  static constexpr int kDepthwiseVectors = 4;  // 32-lane vectors per step: 128 channels
  struct DepthwiseHvx {
    const Value* x = nullptr;  // the activation (uint8, channels-last, padding guards)
    const Value* w = nullptr;  // the weight panel (int8)
    double fill = 0.0;         // what x reads where its guard fails (the zero point)
  };
  void find_depthwise_hvx(int vec) {
    depthwise_ = {};
    if (int8_dot_ != TargetSpec::Int8Dot::HvxU8S8 || !int_vectors_ || vec < 0 || reduce_vec_ >= 0 ||
        k_.reduce_op != Op::ReduceSum || k_.acc_dtype != DType::I32)
      return;
    ProductOperands operands;
    if (!reduce_product_operands(&operands) || operands.shift_a || operands.shift_b) return;
    if (k_.args[operands.a->arg].dtype != DType::U8) operands.swap_sides();
    const auto& [a, b, fill_a, fill_b, shift_a, shift_b] = operands;
    if (k_.args[a->arg].dtype != DType::U8 || k_.args[b->arg].dtype != DType::I8 || !b->guards.empty()) return;
    const int step = vector_lanes_ * kDepthwiseVectors;
    if (lane_stride(a->index, vec, step) != 1 || lane_stride(b->index, vec, step) != 1) return;
    for (const Guard& g : a->guards)
      if (index_depends_on(g.index, vec)) return;
    int64_t taps = 1;
    for (int64_t e : k_.reduce_extents) taps *= e;
    if (taps < 2 || taps > 25) return;  // written out: up to 5x5
    depthwise_ = {a, b, fill_a};
    tile_vectors_ = kDepthwiseVectors;
    // Pixels per tile: their 4 pairs of sums stay in registers with a tap pair's loads.
    unroll_ = unroll_dim_ >= 0 ? static_cast<int>(std::min<int64_t>(4, k_.out_shape[size_t(unroll_dim_)])) : 1;
  }

  // The 128 bytes from p (of which the first `valid` are used) as two aligned loads inside
  // those bytes and a valign.
  LV* load_row_aligned(LV* p, int64_t valid, int arg) {
    auto* v32 = llvm::FixedVectorType::get(b_.getInt32Ty(), 32);
    LV* addr = b_.CreatePtrToInt(p, b_.getInt32Ty());
    LV* skew = b_.CreateAnd(addr, b_.getInt32(127));
    LV* lo_p = b_.CreateGEP(b_.getInt8Ty(), p, b_.CreateNeg(skew));
    LV* hi_off = b_.CreateSub(b_.CreateAnd(b_.CreateAdd(addr, b_.getInt32(static_cast<uint32_t>(valid - 1))), b_.getInt32(~127u)), addr);
    LV* hi_p = b_.CreateGEP(b_.getInt8Ty(), p, hi_off);
    auto* lo = b_.CreateAlignedLoad(v32, lo_p, llvm::Align(128));
    auto* hi = b_.CreateAlignedLoad(v32, hi_p, llvm::Align(128));
    annotate(lo, arg);
    annotate(hi, arg);
    return b_.CreateIntrinsic(v32, llvm::Intrinsic::hexagon_V6_valignb_128B, {hi, lo, skew});
  }

  // The whole reduction of the tile (copies: pixels x kDepthwiseVectors) into accs; false
  // where it cannot take it (a ragged step whose weight panel would end past the buffer).
  template <typename SelectCopy>
  bool emit_depthwise_hvx(size_t copies, SelectCopy& select_copy, const std::vector<llvm::AllocaInst*>& accs) {
    using llvm::Intrinsic::ID;
    const size_t pixels = copies / kDepthwiseVectors;
    const int step = vector_lanes_ * kDepthwiseVectors;
    const int first = static_cast<int>(k_.out_shape.size());
    const int nr = static_cast<int>(k_.reduce_extents.size());
    select_copy(0);
    int64_t valid = step;  // channels of this step that exist
    if (lane_mask_) {
      auto* start = llvm::dyn_cast<llvm::ConstantInt>(vars_[vec_var_]);
      if (!start) return false;
      const int64_t c0 = start->getSExtValue();
      valid = k_.out_shape[size_t(vec_var_)] - c0;
      std::optional<int64_t> last = largest_index_at(depthwise_.w->index, vec_var_, c0 + step - 1);
      if (valid <= 0 || !last || *last >= k_.args[depthwise_.w->arg].numel) return false;
    }
    auto* v32 = llvm::FixedVectorType::get(b_.getInt32Ty(), 32);
    auto* v64 = llvm::FixedVectorType::get(b_.getInt32Ty(), 64);
    LV* fill = b_.CreateBitCast(b_.CreateVectorSplat(128, b_.getInt8(static_cast<uint8_t>(static_cast<int>(depthwise_.fill)))), v32);
    auto half = [&](LV* pair, bool hi) {
      return b_.CreateIntrinsic(v32, hi ? ID(llvm::Intrinsic::hexagon_V6_hi_128B) : ID(llvm::Intrinsic::hexagon_V6_lo_128B), {pair});
    };
    // The taps in row-major order of the reduce dims.
    std::vector<std::vector<int64_t>> taps{{}};
    for (int j = 0; j < nr; ++j) {
      std::vector<std::vector<int64_t>> next;
      for (const auto& t : taps)
        for (int64_t v = 0; v < k_.reduce_extents[size_t(j)]; ++v) {
          next.push_back(t);
          next.back().push_back(v);
        }
      taps = std::move(next);
    }
    auto at_tap = [&](const std::vector<int64_t>& t) {
      for (int j = 0; j < nr; ++j) vars_[size_t(first + j)] = ic(t[size_t(j)]);
    };
    // Sums per pixel: (channels 4i, 4i+2) and (4i+1, 4i+3) as vector pairs.
    std::vector<LV*> even(pixels, nullptr), odd(pixels, nullptr);
    for (size_t t = 0; t < taps.size(); t += 2) {
      const size_t in_pair = std::min<size_t>(2, taps.size() - t);
      std::vector<LV*> w(in_pair);
      for (size_t i = 0; i < in_pair; ++i) {
        select_copy(0);
        at_tap(taps[t + i]);
        auto* ld = b_.CreateAlignedLoad(v32, b_.CreateInBoundsGEP(b_.getInt8Ty(), buffers_[depthwise_.w->arg], index(depthwise_.w->index)),
                                        llvm::Align(1));
        annotate(ld, depthwise_.w->arg);
        w[i] = ld;
      }
      for (size_t px = 0; px < pixels; ++px) {
        std::vector<LV*> prod(2, nullptr);
        for (size_t i = 0; i < in_pair; ++i) {
          select_copy(px * kDepthwiseVectors);
          at_tap(taps[t + i]);
          const Value* xl = depthwise_.x;
          LV* ok = guards_known_true_ || xl->guards.empty() ? nullptr : guards_hold(xl->guards, false);
          LV* idx = index(xl->index);
          if (ok) idx = b_.CreateSelect(ok, idx, ic(0));
          LV* row = load_row_aligned(b_.CreateInBoundsGEP(b_.getInt8Ty(), buffers_[xl->arg], idx), valid, xl->arg);
          if (ok) row = b_.CreateSelect(ok, row, fill);
          prod[i] = b_.CreateIntrinsic(v64, llvm::Intrinsic::hexagon_V6_vmpybusv_128B, {row, w[i]});
        }
        LV* zero = llvm::Constant::getNullValue(v32);
        for (bool hi : {false, true}) {
          LV* p0 = half(prod[0], hi);
          LV* p1 = prod[1] ? half(prod[1], hi) : zero;
          LV*& acc = hi ? odd[px] : even[px];
          acc = acc ? b_.CreateIntrinsic(v64, llvm::Intrinsic::hexagon_V6_vaddhw_acc_128B, {acc, p0, p1})
                    : b_.CreateIntrinsic(v64, llvm::Intrinsic::hexagon_V6_vaddhw_128B, {p0, p1});
        }
      }
    }
    // Back to channel order: interleave words (4i | 4i+1, 4i+2 | 4i+3), then word pairs.
    auto shuffle = [&](LV* lo_src, LV* hi_src, int bytes) {
      return b_.CreateIntrinsic(v64, llvm::Intrinsic::hexagon_V6_vshuffvdd_128B, {hi_src, lo_src, b_.getInt32(static_cast<uint32_t>(-bytes))});
    };
    for (size_t px = 0; px < pixels; ++px) {
      LV* e = shuffle(half(even[px], false), half(odd[px], false), 4);  // 4i, 4i+1
      LV* f = shuffle(half(even[px], true), half(odd[px], true), 4);    // 4i+2, 4i+3
      LV* g0 = shuffle(half(e, false), half(f, false), 8);              // channels 0..63
      LV* g1 = shuffle(half(e, true), half(f, true), 8);                // channels 64..127
      LV* in_order[kDepthwiseVectors] = {half(g0, false), half(g0, true), half(g1, false), half(g1, true)};
      for (int v = 0; v < kDepthwiseVectors; ++v) b_.CreateStore(in_order[v], accs[px * kDepthwiseVectors + size_t(v)]);
    }
    select_copy(0);
    return true;
  }

  // The guards of the reduce body's loads (a conv's padding).
  std::vector<const Guard*> reduce_guards() const {
    std::vector<const Guard*> guards;
    std::set<const Value*> seen;
    std::function<void(const Value*)> collect = [&](const Value* v) {
      if (!seen.insert(v).second) return;
      if (v->kind == Value::Kind::Load || v->kind == Value::Kind::InBounds)
        for (const Guard& g : v->guards) guards.push_back(&g);
      for (const Value* x : v->srcs) collect(x);
      if (v->dynamic) collect(v->dynamic);
    };
    collect(k_.reduce_body);
    return guards;
  }

  // Whether guard g holds for every value of the `ranged` vars — reduce vars over their
  // extents, the vectorized var over the current lanes — and the others as they are. The
  // index is affine in the ranged vars, so it is smallest and largest at their ends.
  LV* guard_holds_over(const Guard& g, const std::vector<int>& ranged) {
    const int first = static_cast<int>(k_.out_shape.size());
    std::vector<LV*> saved = vars_;
    auto at_end = [&](bool lowest) {
      for (int var : ranged) {
        int64_t coef = *index_affine_coef(g.index, var);
        bool low = (coef >= 0) == lowest;
        if (var == vec_var_) vars_[var] = low ? saved[var] : b_.CreateAdd(saved[var], ic(lanes_ - 1));
        else vars_[var] = ic(low ? 0 : k_.reduce_extents[var - first] - 1);
      }
      LV* x = index(g.index);
      vars_ = saved;
      return x;
    };
    LV* holds = b_.getTrue();
    if (g.index.min() < g.lo) holds = b_.CreateAnd(holds, b_.CreateICmpSGE(at_end(true), ic(g.lo)));
    if (g.index.max() >= g.hi) holds = b_.CreateAnd(holds, b_.CreateICmpSLT(at_end(false), ic(g.hi)));
    return holds;
  }
  std::vector<int> reduce_vars() const {
    std::vector<int> vars;
    const int first = static_cast<int>(k_.out_shape.size());
    for (int j = 0; j < static_cast<int>(k_.reduce_extents.size()); ++j) vars.push_back(first + j);
    return vars;
  }

  // Whether every guard of the reduce body holds for every copy of the tile, all its
  // lanes and every value of the reduce vars: a scalar i1, or null where that cannot be
  // told up front (no guards, or a guard not affine in a reduce var or the lanes).
  LV* tile_inside_guards(size_t copies, const std::function<void(size_t)>& select_copy) {
    std::vector<const Guard*> guards = reduce_guards();
    if (guards.empty() || reduce_vec_ >= 0) return nullptr;
    std::vector<int> ranged = reduce_vars();  // vars that move inside the tile
    if (vec_var_ >= 0) ranged.push_back(vec_var_);
    for (const Guard* g : guards)
      for (int var : ranged)
        if (!index_affine_coef(g->index, var)) return nullptr;
    LV* inside = b_.getTrue();
    std::vector<LV*> saved = vars_;
    for (size_t u = 0; u < copies; ++u) {
      select_copy(u);
      for (const Guard* g : guards) inside = b_.CreateAnd(inside, guard_holds_over(*g, ranged));
    }
    vars_ = saved;
    return inside;
  }

  // For the innermost reduce level of a border tile (tile_inside_guards failed) when no
  // guard depends on its var: whether every guard holds for every copy and lane of the tile
  // at the current values of the outer reduce vars (a conv's tap), or null where the level
  // does not qualify.
  LV* step_inside_guards(size_t level, size_t copies, const std::function<void(size_t)>& select_copy) {
    if (level + 1 != reduce_order_.size()) return nullptr;
    const int var = static_cast<int>(k_.out_shape.size()) + reduce_order_[level];
    std::vector<const Guard*> guards = reduce_guards();
    if (guards.empty()) return nullptr;
    for (const Guard* g : guards)
      if (index_depends_on(g->index, var)) return nullptr;
    std::vector<int> ranged;
    if (vec_var_ >= 0) ranged.push_back(vec_var_);
    LV* inside = b_.getTrue();
    const std::vector<LV*> saved = vars_;
    for (size_t u = 0; u < copies; ++u) {
      select_copy(u);
      for (const Guard* g : guards) inside = b_.CreateAnd(inside, guard_holds_over(*g, ranged));
    }
    vars_ = saved;
    memo_.clear();
    return inside;
  }

  // The guards that depend on the unrolled dim, when each is affine in it and in the reduce
  // vars and depends on no other output var but those `open` (set by an outer loop): a
  // conv's padding along the row its tiles run over. Empty when the tiles cannot be kept
  // off the borders that way.
  std::vector<const Guard*> guards_along_unroll(const std::vector<bool>& open) const {
    if (unroll_ < 2 || !border_tiles_pay(reduce_order_)) return {};
    const int rank = static_cast<int>(k_.out_shape.size());
    std::vector<const Guard*> guards = reduce_guards();
    std::vector<const Guard*> along;
    for (const Guard* g : guards) {
      if (!index_depends_on(g->index, unroll_dim_)) continue;
      if (!index_affine_coef(g->index, unroll_dim_)) return {};
      for (int e = 0; e < rank; ++e)
        if (e != unroll_dim_ && index_depends_on(g->index, e) && !open[e]) return {};
      for (int var : reduce_vars())
        if (!index_affine_coef(g->index, var)) return {};
      along.push_back(g);
    }
    return along;
  }

  // Whether the tiles along the unrolled dim are kept off the padded borders: only where a
  // guarded tile is much slower than an inside one, where the guards are evaluated for
  // little work (a depthwise conv's taps, a 3-channel stem), not where they are hoisted over
  // a long input-channel loop (ResNet-18's 7x7 convs ran 1.6x slower with their tiles kept
  // off the borders). `order`: the reduce loops, outermost first.
  bool border_tiles_pay(const std::vector<int>& order) const {
    if (reduce_vec_ >= 0) return false;
    const int rank = static_cast<int>(k_.out_shape.size());
    std::vector<const Guard*> guards = reduce_guards();
    int64_t work_per_guard = 1;
    for (auto j = order.rbegin(); j != order.rend(); ++j) {
      bool guarded = false;
      for (const Guard* g : guards) guarded = guarded || index_depends_on(g->index, rank + *j);
      if (guarded) break;
      work_per_guard *= k_.reduce_extents[*j];
    }
    return work_per_guard <= border_work_limit_;
  }

  // For the register-tile cost model: how many outputs along the unrolled dim have windows
  // inside every guard along it (a conv row between its padded borders), where the tiles
  // will run between the borders (emit_tiles_between_borders) and the other outputs go one
  // at a time. None where the tiles are laid over the whole dim, or where the guards are
  // not plain affine sums of the unrolled dim and the reduce vars (then the tile is chosen
  // by the whole extent, as before).
  std::optional<int64_t> outputs_between_borders() const {
    if (unroll_dim_ < 0 || !border_tiles_pay(choose_reduce_order())) return std::nullopt;
    const int rank = static_cast<int>(k_.out_shape.size());
    std::vector<const Guard*> along;
    for (const Guard* g : reduce_guards()) {
      if (!index_depends_on(g->index, unroll_dim_)) continue;
      for (const auto& [atom, coef] : g->index.terms())
        if (atom->kind != Atom::Kind::Var || (atom->var != unroll_dim_ && atom->var < rank)) return std::nullopt;
      along.push_back(g);
    }
    if (along.empty()) return std::nullopt;
    int64_t inside = 0;
    for (int64_t x = 0; x < k_.out_shape[size_t(unroll_dim_)]; ++x) {
      bool holds = true;
      for (const Guard* g : along) {
        // The index's smallest and largest values over the reduce vars at this output.
        int64_t lo = g->index.constant(), hi = lo;
        for (const auto& [atom, coef] : g->index.terms()) {
          if (atom->var == unroll_dim_) {
            lo += coef * x, hi += coef * x;
          } else {
            const int64_t last = coef * (k_.reduce_extents[size_t(atom->var - rank)] - 1);
            lo += std::min<int64_t>(0, last), hi += std::max<int64_t>(0, last);
          }
        }
        holds = holds && lo >= g->lo && hi < g->hi;
      }
      inside += holds;
    }
    return inside;
  }

  // Along the unrolled dim the outputs whose windows lie inside every guard along it form
  // one range [a, e) (the guards are affine in it). Register tiles run over that range —
  // the last one ends at e — and take the guard-free reduction wherever the other dims are
  // inside too; the few border outputs before and after it go one at a time. Tiles laid
  // from 0 instead put the border in the first and last tile of every row, and a whole
  // guarded tile of a depthwise conv costs several times an inside one.
  void emit_tiles_between_borders(LV* lo, LV* hi, const std::vector<const Guard*>& along,
                                  const std::function<void(LV*, LV*, int)>& tile_at) {
    auto inside = [&](LV* x) {
      LV* saved = vars_[unroll_dim_];
      vars_[unroll_dim_] = x;
      LV* holds = b_.getTrue();
      for (const Guard* g : along) holds = b_.CreateAnd(holds, guard_holds_over(*g, reduce_vars()));
      vars_[unroll_dim_] = saved;
      return holds;
    };
    LV* a = emit_scan(lo, 1, [&](LV* x) { return b_.CreateAnd(b_.CreateICmpSLT(x, hi), b_.CreateNot(inside(x))); });
    LV* e = emit_scan(hi, -1, [&](LV* x) {
      return b_.CreateAnd(b_.CreateICmpSGT(x, a), b_.CreateNot(inside(b_.CreateSub(x, ic(1)))));
    });
    emit_loop(a, e, unroll_, [&](LV* x) { tile_at(x, e, unroll_); });
    LV* before = b_.CreateSub(a, lo);
    LV* borders = b_.CreateAdd(before, b_.CreateSub(hi, e));
    emit_loop(ic(0), borders, 1, [&](LV* i) {
      LV* x = b_.CreateSelect(b_.CreateICmpSLT(i, before), b_.CreateAdd(lo, i), b_.CreateAdd(e, b_.CreateSub(i, before)));
      tile_at(x, hi, 1);
    });
  }

  // From here on values have `lanes` lanes along `var`, starting at vars_[var]; lanes at
  // or past `end` (if given) are masked off.
  void begin_lanes(int var, int lanes, LV* end) {
    vec_var_ = var;
    lanes_ = lanes;
    std::vector<llvm::Constant*> iota;
    for (int u = 0; u < lanes; ++u) iota.push_back(llvm::ConstantInt::get(idx_ty_, static_cast<uint64_t>(u)));
    vec_iota_ = b_.CreateAdd(b_.CreateVectorSplat(lanes, vars_[var]), llvm::ConstantVector::get(iota));
    lane_mask_ = end ? b_.CreateICmpSLT(vec_iota_, b_.CreateVectorSplat(lanes, end)) : nullptr;
    memo_.clear();
    varies_memo_.clear();
  }
  void end_lanes() {
    vec_var_ = -1;
    lanes_ = 1;
    lane_mask_ = nullptr;
    memo_.clear();
    varies_memo_.clear();
  }
  // Combines the lanes of a vectorized reduction pairwise (a fixed tree: deterministic).
  LV* horizontal(LV* v, Op op, DType t) {
    auto* vt = llvm::cast<llvm::FixedVectorType>(v->getType());
    for (int n = static_cast<int>(vt->getNumElements()); n > 1; n /= 2) {
      std::vector<int> lo, hi;
      for (int i = 0; i < n / 2; ++i) lo.push_back(i), hi.push_back(i + n / 2);
      v = combine(b_.CreateShuffleVector(v, lo), b_.CreateShuffleVector(v, hi), op, t);
    }
    return b_.CreateExtractElement(v, uint64_t{0});
  }

  // op: ReduceSum or ReduceMax (the kernel's reduce or a row stage's), acc: its dtype.
  LV* reduce_identity(llvm::Type* t, Op op, DType acc) {
    if (op == Op::ReduceSum) return llvm::Constant::getNullValue(t);
    if (t->isFPOrFPVectorTy()) return llvm::ConstantFP::getInfinity(t, true);
    if (is_unsigned(acc)) return llvm::Constant::getNullValue(t);
    return llvm::ConstantInt::get(t, llvm::APInt::getSignedMinValue(t->getScalarSizeInBits()));
  }
  LV* combine(LV* a, LV* x, Op op, DType t) {
    // A product summed into its accumulator is one llvm.fmuladd, not a contractible fmul and
    // fadd: where two copies of a tile multiply the same values (a ragged tile's last copy
    // repeated) LLVM would share the fmul, and a product with two uses is not fused: that
    // copy's sums rounded unlike the other tiles' (ResNet-50, 7x7 pixels in tiles of 4).
    if (auto* mul = llvm::dyn_cast<llvm::BinaryOperator>(x); mul && op == Op::ReduceSum &&
        mul->getOpcode() == llvm::Instruction::FMul && mul->use_empty()) {
      // (The fmul, now unused, stays for LLVM to delete: memo_ may still name it.)
      return b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {x->getType()}, {mul->getOperand(0), mul->getOperand(1), a});
    }
    if (op == Op::ReduceSum) return t == DType::Bool ? b_.CreateOr(a, x) : add(a, x);
    return max(a, x, t);
  }

  // ---- index math ----
  // An index that depends on the lanes' variable only through a div by a multiple of the
  // lanes (a grouped conv's input channel (m / (M/G)) * (C/G) + c with M/G a multiple of the
  // lanes) is the same for every lane: one scalar load, broadcast, as in a dense conv.
  bool varies(const Index& ix) const {
    return lanes_ > 1 && index_depends_on(ix, vec_var_) && !same_for_every_lane(ix, vec_var_, lanes_);
  }
  static bool same_for_every_lane(const Index& ix, int var, int lanes) {
    std::optional<std::vector<int64_t>> offsets = lane_offsets(ix, var, lanes);
    return offsets && std::all_of(offsets->begin(), offsets->end(), [](int64_t o) { return o == 0; });
  }
  // Whether an index and its guards are the same for every lane of the register tile's
  // vectors (tile_lanes_ lanes from the tile's start, tile_vec_base_).
  bool same_for_every_tile_lane(const Index& ix, const std::vector<Guard>& guards) const {
    auto same = [&](const Index& i) {
      return !index_depends_on(i, vec_var_) || same_for_every_lane(i, vec_var_, tile_lanes_);
    };
    return same(ix) && std::all_of(guards.begin(), guards.end(), [&](const Guard& g) { return same(g.index); });
  }
  // A load along whose lanes (vectors of `lanes` from a multiple of them) `var` moves its
  // index: load_depends_on, less the indexes that are the same for every lane.
  bool load_varies_along(const Value* l, int var, int lanes) const {
    return load_depends_on(l, var) && (l->dynamic || !same_for_every_lane(l->index, var, lanes));
  }
  // The lanes' offsets from lane 0 where they are a constant, non-negative pattern within a
  // span of at most 4 vectors: one masked load of the span and a shuffle (a grouped conv whose vector of output channels spans groups
  // of fewer channels than the lanes: lane j reads input channel (j / (M/G)) * (C/G) + c).
  static std::optional<std::vector<int64_t>> shuffled_span(const Index& ix, int var, int lanes) {
    std::optional<std::vector<int64_t>> offsets = lane_offsets(ix, var, lanes);
    if (!offsets) return std::nullopt;
    for (int64_t o : *offsets)
      if (o < 0 || o >= 4 * int64_t{lanes}) return std::nullopt;
    return offsets;
  }
  // Whether a value differs between the lanes of the vectorized variable.
  bool value_varies(const Value* v) {
    if (lanes_ == 1) return false;
    if (auto it = varies_memo_.find(v); it != varies_memo_.end()) return it->second;
    bool r = false;
    switch (v->kind) {
      case Value::Kind::Const: r = false; break;
      case Value::Kind::Accumulator: r = true; break;  // conservatively
      case Value::Kind::InBounds: case Value::Kind::Load:
        r = varies(v->index) || (v->dynamic && value_varies(v->dynamic));
        for (const Guard& g : v->guards) r = r || varies(g.index);
        break;
      case Value::Kind::Alu:
        for (const Value* x : v->srcs) r = r || value_varies(x);
        break;
    }
    varies_memo_[v] = r;
    return r;
  }

  // The index at lane 0 (vec = false), or one per lane.
  LV* index(const Index& ix, bool vec = false) { return sum_of_terms(ix, vec, 0, std::numeric_limits<int>::max()); }
  // The constant and the terms of ix whose loop depth (loop_depth) lies in [lo, hi], summed
  // outermost loop first, so the part a reduce loop does not move is one value that LLVM
  // hoists out of it; null where no term is in range and lo > 0 (the constant goes with the
  // outermost part).
  LV* sum_of_terms(const Index& ix, bool vec, int lo, int hi) {
    std::vector<std::pair<int, size_t>> order;  // (loop depth, term)
    for (size_t t = 0; t < ix.terms().size(); ++t)
      if (const int depth = loop_depth(*ix.terms()[t].first); depth >= lo && depth <= hi) order.emplace_back(depth, t);
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    LV* r = nullptr;
    for (const auto& [depth, t] : order) {
      const auto& [atom, coef] = ix.terms()[t];
      LV* a = this->atom(*atom, vec);
      if (coef != 1) a = b_.CreateMul(a, vec ? b_.CreateVectorSplat(lanes_, ic(coef)) : ic(coef));
      r = r ? b_.CreateAdd(r, a) : a;
    }
    if (lo > 0) return r;
    LV* c = vec ? b_.CreateVectorSplat(lanes_, ic(ix.constant())) : ic(ix.constant());
    return r ? b_.CreateAdd(r, c) : c;
  }
  // The address of element ix of base, as the pointer to the part the innermost reduce loop
  // does not move plus that loop's part: the first is one value hoisted out of the loop and
  // a load inside is [base register + index register * size]. (Summed into one index, a
  // register tile's six input rows cost a lea each per step of a 1x1 conv's channel loop:
  // LLVM splits the sum into a chain of GEPs with the loop's var first.)
  LV* element_ptr(llvm::Type* st, LV* base, const Index& ix) {
    const int inner = static_cast<int>(reduce_order_.size());
    LV* moving = inner > 0 ? sum_of_terms(ix, false, inner, inner) : nullptr;
    if (!moving) return b_.CreateInBoundsGEP(st, base, index(ix));
    // Not inbounds: the part before the loop's may point outside the buffer (a flipped tap).
    return b_.CreateGEP(st, b_.CreateGEP(st, base, sum_of_terms(ix, false, 0, inner - 1)), moving);
  }
  // How deep in the loop nest an atom's value changes: 0 for the output vars (fixed while a
  // reduction runs), 1 + the reduce loop's level for a reduce var, the deepest of its vars
  // for a division or remainder.
  int loop_depth(const Atom& a) const {
    if (a.kind != Atom::Kind::Var) {
      int depth = 0;
      for (const auto& [inner, coef] : a.inner.terms()) depth = std::max(depth, loop_depth(*inner));
      return depth;
    }
    const int reduce = a.var - static_cast<int>(k_.out_shape.size());
    if (reduce < 0) return 0;
    const auto at = std::find(reduce_order_.begin(), reduce_order_.end(), reduce);
    return at == reduce_order_.end() ? 0 : 1 + static_cast<int>(at - reduce_order_.begin());
  }
  LV* atom(const Atom& a, bool vec) {
    if (a.kind == Atom::Kind::Var) {
      if (vec) return a.var == vec_var_ ? vec_iota_ : b_.CreateVectorSplat(lanes_, vars_[a.var]);
      return vars_[a.var];
    }
    LV* x = index(a.inner, vec);
    LV* k = vec ? b_.CreateVectorSplat(lanes_, ic(a.divisor)) : ic(a.divisor);
    if (a.inner.min() >= 0) return a.kind == Atom::Kind::Div ? b_.CreateUDiv(x, k) : b_.CreateURem(x, k);
    // Floor semantics for a dividend that can be negative.
    LV* q = b_.CreateSDiv(x, k);
    LV* r = b_.CreateSRem(x, k);
    LV* neg = b_.CreateICmpSLT(r, llvm::Constant::getNullValue(r->getType()));
    if (a.kind == Atom::Kind::Div) return b_.CreateSub(q, b_.CreateZExt(neg, q->getType()));
    return b_.CreateAdd(r, b_.CreateSelect(neg, k, llvm::Constant::getNullValue(k->getType())));
  }
  LV* guards_hold(const std::vector<Guard>& guards, bool vec) {
    LV* ok = vec ? b_.CreateVectorSplat(lanes_, b_.getTrue()) : b_.getTrue();
    for (const Guard& g : guards) {
      LV* x = index(g.index, vec);
      auto bound = [&](int64_t v) { return vec ? b_.CreateVectorSplat(lanes_, ic(v)) : ic(v); };
      if (g.index.min() < g.lo) ok = b_.CreateAnd(ok, b_.CreateICmpSGE(x, bound(g.lo)));
      if (g.index.max() >= g.hi) ok = b_.CreateAnd(ok, b_.CreateICmpSLT(x, bound(g.hi)));
    }
    return ok;
  }

  // ---- memory ----
  void annotate(llvm::Instruction* inst, int arg) {
    inst->setMetadata(llvm::LLVMContext::MD_alias_scope, scope_md_[arg]);
    inst->setMetadata(llvm::LLVMContext::MD_noalias, noalias_md_[arg]);
  }
  // A load of buffer `arg`, masked (masked-off lanes 0) or, with no mask, of lanes all in
  // the buffer. On Hexagon LLVM 19 loads a masked vector whole (vmemu: up to 127 bytes past
  // the lanes wanted), and widens a vector of 16 to 127 bytes (hexagon-hvx-widen) to a whole
  // 128-byte vmemu, either of which faults where the buffer ends at an unmapped page, as a
  // caller's camera frame may (the guard-page run, hexagon_guard_e2e_*). There each 128 bytes
  // are two aligned loads of the blocks holding their first and last byte wanted, joined by
  // valign; masked, those addresses are clamped to the buffer's bytes: every block read holds
  // a byte of the buffer, and a lane whose block was clamped lies outside it (mask off).
  LV* vector_load(llvm::Type* vt, LV* ptr, llvm::Align align, LV* mask, int arg) {
    const uint64_t bytes = m_.getDataLayout().getTypeStoreSize(vt);
    if (!hvx_block_loads_ || bytes < 16 || (!mask && bytes % 128 == 0)) {
      llvm::Instruction* l = mask ? static_cast<llvm::Instruction*>(b_.CreateMaskedLoad(vt, ptr, align, mask, llvm::Constant::getNullValue(vt)))
                                  : b_.CreateAlignedLoad(vt, ptr, align);
      annotate(l, arg);
      return l;
    }
    auto* block_t = llvm::FixedVectorType::get(b_.getInt32Ty(), 32);
    LV* first = b_.CreatePtrToInt(buffers_[arg], idx_ty_);
    LV* last = b_.CreateAdd(first, ic(k_.args[arg].numel * int64_t(dtype_size(k_.args[arg].dtype)) - 1));
    LV* at = b_.CreatePtrToInt(ptr, idx_ty_);
    auto block = [&](LV* a) {
      LV* in = mask ? b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, b_.CreateBinaryIntrinsic(llvm::Intrinsic::umax, a, first), last) : a;
      auto* l = b_.CreateAlignedLoad(block_t, b_.CreateIntToPtr(b_.CreateAnd(in, ic(-128)), ptr->getType()), llvm::Align(128));
      annotate(l, arg);
      return l;
    };
    std::vector<LV*> pieces;
    for (uint64_t off = 0; off < bytes; off += 128) {
      LV* a = b_.CreateAdd(at, ic(int64_t(off)));
      LV* lo = block(a);
      LV* hi = block(b_.CreateAdd(a, ic(int64_t(std::min<uint64_t>(127, bytes - off - 1)))));
      pieces.push_back(b_.CreateBitCast(b_.CreateIntrinsic(block_t, llvm::Intrinsic::hexagon_V6_valignb_128B,
                                                           {hi, lo, b_.CreateTrunc(a, b_.getInt32Ty())}),
                                        llvm::FixedVectorType::get(b_.getInt8Ty(), 128)));
    }
    LV* all = llvm::concatenateVectors(b_, pieces);
    if (bytes % 128) all = b_.CreateShuffleVector(all, llvm::createSequentialMask(0, unsigned(bytes), 0));
    return mask ? b_.CreateSelect(mask, b_.CreateBitCast(all, vt), llvm::Constant::getNullValue(vt)) : b_.CreateBitCast(all, vt);
  }
  // A loaded element (of storage dtype t) as the value dtype `as` computes in.
  LV* widen(LV* l, DType t, DType as) {
    if (t == DType::Bool) return b_.CreateICmpNE(l, llvm::Constant::getNullValue(l->getType()));
    if (narrow_float_type(t) || as == DType::F16) return fp_convert(l, same_lanes(l, scalar_type(as)));
    return l;
  }
  // fpext / fptrunc / nothing, by the widths (half <-> bfloat through float; half <-> float
  // by hand where the target has no instruction for it, TargetSpec::f16_conversion).
  LV* fp_convert(LV* x, llvm::Type* to) {
    if (x->getType() == to) return x;
    if (x->getType()->getScalarSizeInBits() == to->getScalarSizeInBits()) x = fp_convert(x, same_lanes(x, b_.getFloatTy()));
    if (!f16_conversion_ && x->getType()->getScalarType()->isHalfTy()) return fp_convert(float_of_half(x), to);
    if (!f16_conversion_ && to->getScalarType()->isHalfTy()) {
      if (!x->getType()->getScalarType()->isFloatTy()) x = fp_convert(x, same_lanes(x, b_.getFloatTy()));
      return half_of_float(x);
    }
    return x->getType()->getScalarSizeInBits() < to->getScalarSizeInBits() ? b_.CreateFPExt(x, to) : b_.CreateFPTrunc(x, to);
  }
  // IEEE half -> float, exactly, in integer operations: normal numbers rebias the exponent,
  // subnormals are mantissa * 2^-24 (exact in float), inf / NaN keep their payload.
  LV* float_of_half(LV* h) {
    llvm::Type* i32 = same_lanes(h, b_.getInt32Ty());
    llvm::Type* f32 = same_lanes(h, b_.getFloatTy());
    LV* w = b_.CreateZExt(b_.CreateBitCast(h, same_lanes(h, b_.getInt16Ty())), i32);
    LV* sign = b_.CreateShl(b_.CreateAnd(w, intc(w, 0x8000)), intc(w, 16));
    LV* em = b_.CreateAnd(w, intc(w, 0x7fff));
    LV* exp = b_.CreateLShr(em, intc(w, 10));
    LV* normal = b_.CreateAdd(b_.CreateShl(em, intc(w, 13)), intc(w, (127 - 15) << 23));
    LV* inf_nan = b_.CreateAdd(b_.CreateShl(em, intc(w, 13)), intc(w, (255 - 31) << 23));
    LV* mant = b_.CreateUIToFP(em, f32);  // exp 0: the mantissa alone
    LV* sub = b_.CreateBitCast(b_.CreateFMul(mant, fc(mant, std::ldexp(1.0, -24))), i32);
    LV* bits = b_.CreateSelect(b_.CreateICmpEQ(exp, intc(w, 0)), sub,
                               b_.CreateSelect(b_.CreateICmpEQ(exp, intc(w, 31)), inf_nan, normal));
    return b_.CreateBitCast(b_.CreateOr(bits, sign), f32);
  }
  // float -> IEEE half, rounded to nearest even, in integer operations: NaN stays NaN
  // (quiet), >= 65520 is inf, below 2^-14 the float adder rounds to the half's 2^-24 steps
  // (x + 0.5 has that ulp), normal numbers round on the 13 dropped bits.
  LV* half_of_float(LV* x) {
    llvm::Type* i32 = same_lanes(x, b_.getInt32Ty());
    LV* f = b_.CreateBitCast(x, i32);
    LV* sign = b_.CreateAnd(b_.CreateLShr(f, intc(f, 16)), intc(f, 0x8000));
    LV* a = b_.CreateAnd(f, intc(f, 0x7fffffff));
    LV* nan = b_.CreateOr(intc(f, 0x7e00), b_.CreateAnd(b_.CreateLShr(a, intc(f, 13)), intc(f, 0x3ff)));
    LV* inf_nan = b_.CreateSelect(b_.CreateICmpUGT(a, intc(f, 0x7f800000)), nan, intc(f, 0x7c00));
    LV* sub = b_.CreateSub(b_.CreateBitCast(b_.CreateFAdd(b_.CreateBitCast(a, x->getType()), fc(x, 0.5)), i32),
                           intc(f, 0x3f000000));
    LV* odd = b_.CreateAnd(b_.CreateLShr(a, intc(f, 13)), intc(f, 1));
    LV* normal = b_.CreateLShr(b_.CreateAdd(b_.CreateAdd(a, intc(f, -(int64_t{127 - 15} << 23) + 0xfff)), odd), intc(f, 13));
    LV* h = b_.CreateSelect(b_.CreateICmpUGE(a, intc(f, 0x477ff000)), inf_nan,
                            b_.CreateSelect(b_.CreateICmpULT(a, intc(f, 0x38800000)), sub, normal));
    h = b_.CreateOr(h, sign);
    return b_.CreateBitCast(b_.CreateTrunc(h, same_lanes(x, b_.getInt16Ty())), same_lanes(x, b_.getHalfTy()));
  }
  // The index of a guarded scalar load, or 0 (the buffer's start: never an address outside
  // it) where a guard fails. Where no guard depends on the innermost reduce loop's var (a
  // conv's input channels under a tap's padding test), that var's term is added after the
  // select: the select, the guards and the rest of the index stay the same over the loop
  // and LLVM hoists them (a guarded tap of a stride-2 grouped conv's border tile recomputed
  // them, SLP-vectorized across the tile's pixels, for every multiply-add). The failing
  // guard then reads elements 0 .. coef * (extent - 1): only where those lie in the buffer.
  LV* guarded_scalar_index(const Value* v, const std::vector<Guard>& guards, const std::function<LV*(LV*)>& plus_offset) {
    LV* ok = guards_hold(guards, false);
    const int inner = reduce_order_.empty() || reduce_vec_ >= 0 ? -1
                      : static_cast<int>(k_.out_shape.size()) + reduce_order_.back();
    const int64_t coef = inner >= 0 && !v->dynamic ? index_affine_coef(v->index, inner).value_or(0) : 0;
    bool guarded_along_inner = false;
    for (const Guard& g : guards) guarded_along_inner = guarded_along_inner || index_depends_on(g.index, inner);
    const int64_t extent = inner >= 0 ? k_.reduce_extents[size_t(inner - static_cast<int>(k_.out_shape.size()))] : 0;
    if (coef <= 0 || guarded_along_inner || coef * (extent - 1) >= k_.args[v->arg].numel)
      return b_.CreateSelect(ok, plus_offset(index(v->index)), ic(0));
    LV* const step = vars_[inner];
    vars_[inner] = ic(0);
    LV* rest = plus_offset(index(v->index));
    vars_[inner] = step;
    return b_.CreateAdd(b_.CreateSelect(ok, rest, ic(0)), b_.CreateMul(step, ic(coef)));
  }
  LV* load(const Value* v) {
    // Storage and value dtypes differ only for F16 values stored as F32 (targets without
    // f16_storage): they compute in float, or in half (fptrunc) with half arithmetic.
    const DType stored = k_.args[v->arg].dtype;
    auto widen = [&](LV* l, DType t) { return this->widen(l, t, v->dtype); };
    static const std::vector<Guard> kNoGuards;
    const std::vector<Guard>& guards = guards_known_true_ ? kNoGuards : v->guards;
    llvm::Type* st = storage_type(stored);
    llvm::Align align(dtype_size(stored));
    LV* base = buffers_[v->arg];
    if ((byte_vectors_ || int_vectors_) && v->dynamic && lanes_ > 1 && value_varies(v->dynamic))
      if (LV* r = byte_table_lookup(v)) return widen(r, stored);
    // A Gather's data-dependent term: scalar when it is the same for every lane.
    bool offset_varies = false;
    LV* offset = v->dynamic ? dynamic_offset(v, &offset_varies) : nullptr;
    auto plus_offset = [&](LV* idx) {
      return offset ? b_.CreateAdd(idx, idx->getType()->isVectorTy() ? splat(offset, lanes_) : offset) : idx;
    };
    bool guards_vary = false;
    for (const Guard& g : guards) guards_vary = guards_vary || varies(g.index);
    if (!offset_varies && !varies(v->index) && !guards_vary) {
      // The same element for every lane: one scalar load, broadcast. Where it is the same for
      // every lane of the register tile's vectors too, it is indexed from the tile's first
      // vector: the tile's copies then load one address, which LLVM merges. (A grouped conv
      // with 24 channels per group, tiles of 3 vectors: LLVM could not prove
      // (v + 8) / 24 == v / 24 for v a multiple of 24 and loaded the input pixel once per
      // vector, 15 loads for 12 multiply-adds.)
      LV* const lane_base = vec_var_ >= 0 ? vars_[vec_var_] : nullptr;
      if (tile_vec_base_ && lane_base && same_for_every_tile_lane(v->index, guards)) vars_[vec_var_] = tile_vec_base_;
      LV* ptr = guards.empty() && !offset ? element_ptr(st, base, v->index)
                                          : b_.CreateInBoundsGEP(st, base, guards.empty() ? plus_offset(index(v->index)) : guarded_scalar_index(v, guards, plus_offset));
      if (lane_base) vars_[vec_var_] = lane_base;
      auto* l = b_.CreateAlignedLoad(st, ptr, align);
      annotate(l, v->arg);
      return splat(widen(l, stored), lanes_);
    }
    llvm::Type* vt = llvm::FixedVectorType::get(st, lanes_);
    // Elements between lanes (0: not affine in the lane, or a gathered offset that varies).
    // Vectors start at multiples of the lanes (the loops and each core's share are tiled so).
    const int64_t stride = offset_varies ? 0 : lane_stride(v->index, vec_var_, lanes_).value_or(0);
    // Where the guards are the same for every lane (channels-last padding) and fail, the
    // lanes read the buffer's first elements instead, which the Where above the load
    // discards: never an address outside the buffer, where even a masked-off lane can cost
    // a fault-suppression assist (measured: 10x on a depthwise conv whose padding pointed
    // below the arena).
    // Strides 1, 2 and 4 as one (masked) vector load of the span; 3 as a gather: LLVM 19's
    // x86 lowering of a <3 x lanes> masked load read parts whose lanes were all masked off
    // (found at a page end by the guard-page conformance run: a dilated 3-D pool, stride 3).
    const bool span_load = stride == 1 || stride == 2 || stride == 4;
    const int64_t span = span_load ? lanes_ * stride : 0;  // elements a vector load covers
    LV* first_index = span > 0 ? plus_offset(index(v->index)) : nullptr;
    LV* mask = nullptr;
    if (!guards.empty() && !guards_vary && span > 0) {
      LV* ok = guards_hold(guards, false);
      first_index = b_.CreateSelect(ok, first_index, ic(0));
      if (k_.args[v->arg].numel < span) mask = b_.CreateVectorSplat(lanes_, ok);
    } else if (!guards.empty()) {
      mask = guards_hold(guards, true);  // lanes to read: where the guards hold
    }
    if (lane_mask_) mask = mask ? b_.CreateAnd(mask, lane_mask_) : lane_mask_;  // and real outputs
    if (stride == 1) {
      // Consecutive elements: a vector load, masked where needed.
      LV* ptr = guards.empty() && !offset ? element_ptr(st, base, v->index) : b_.CreateInBoundsGEP(st, base, first_index);
      return widen(vector_load(vt, ptr, align, mask, v->arg), stored);
    }
    if (span_load && stride > 1) {
      // A small stride (a stride-2 conv): read the span with one masked load of only the
      // elements the lanes want, then pick every coef-th: cheaper than a gather.
      int c = static_cast<int>(stride), wide = lanes_ * c;
      std::vector<int> lane_of, picks;
      std::vector<llvm::Constant*> pattern;
      for (int j = 0; j < wide; ++j) {
        lane_of.push_back(j / c);
        pattern.push_back(b_.getInt1(j % c == 0));
      }
      for (int u = 0; u < lanes_; ++u) picks.push_back(u * c);
      LV* wide_mask = llvm::ConstantVector::get(pattern);
      if (mask) wide_mask = b_.CreateAnd(wide_mask, b_.CreateShuffleVector(mask, lane_of));
      llvm::Type* wt = llvm::FixedVectorType::get(st, wide);
      LV* ptr = b_.CreateInBoundsGEP(st, base, first_index);
      LV* l = vector_load(wt, ptr, align, wide_mask, v->arg);
      return widen(b_.CreateShuffleVector(l, picks), stored);
    }
    std::optional<LaneRepeat> repeat = offset_varies || guards_vary ? std::nullopt : lane_repeat(v->index, vec_var_, lanes_);
    if (repeat && repeat->stride == 1) {
      // Each element for `repeat` lanes in a row (a grouped conv's input channel m / 2):
      // load lanes / repeat consecutive elements and spread them with a shuffle.
      const int narrow = lanes_ / static_cast<int>(repeat->repeat);
      LV* first = plus_offset(index(v->index));
      LV* narrow_mask = nullptr;
      if (!guards.empty()) {
        LV* ok = guards_hold(guards, false);
        first = b_.CreateSelect(ok, first, ic(0));  // failing lanes read the buffer's start
        if (k_.args[v->arg].numel < narrow) narrow_mask = b_.CreateVectorSplat(narrow, ok);
      }
      std::vector<int> spread, firsts;
      for (int u = 0; u < lanes_; ++u) spread.push_back(u / static_cast<int>(repeat->repeat));
      for (int u = 0; u < narrow; ++u) firsts.push_back(u * static_cast<int>(repeat->repeat));
      if (lane_mask_) {
        LV* real = b_.CreateShuffleVector(lane_mask_, firsts);  // an element is read if its first lane is real
        narrow_mask = narrow_mask ? b_.CreateAnd(narrow_mask, real) : real;
      }
      llvm::Type* nt = llvm::FixedVectorType::get(st, narrow);
      LV* ptr = b_.CreateInBoundsGEP(st, base, first);
      LV* l = vector_load(nt, ptr, align, narrow_mask, v->arg);
      return widen(b_.CreateShuffleVector(l, spread), stored);
    }
    std::optional<std::vector<int64_t>> offsets =
        offset_varies || guards_vary ? std::nullopt : shuffled_span(v->index, vec_var_, lanes_);
    if (offsets) {
      // A constant pattern of lane offsets within a few vectors (a grouped conv's input
      // channels when a vector of output channels spans several groups): one masked load of
      // the elements some lane reads, then a shuffle. An element is read where the first lane
      // reading it is a real output (the lanes past the end are a suffix).
      // The span rounded up to whole vectors: a masked load of an odd width (5 elements for
      // 4 channels per group on AVX2) is split into pieces, 3-4 instructions before the
      // shuffle; a whole vector is one masked load, and its in-lane shuffle one more.
      // A reduce var written out as constants (unroll_channels_for_span_reuse) that moves
      // the span by one element per step: the span loaded from its step 0, covering every
      // step, and this step picked by the shuffle (the same load at every step: merged).
      int shift_var = -1;
      int64_t shift = 0, steps = 1;
      const int rank = static_cast<int>(k_.out_shape.size());
      for (const auto& [atom, coef] : v->index.terms()) {
        if (atom->kind != Atom::Kind::Var || atom->var < rank || !span_shift_var(v->index, atom->var)) continue;
        auto* step = llvm::dyn_cast<llvm::ConstantInt>(vars_[atom->var]);
        const int64_t extent = k_.reduce_extents[size_t(atom->var - rank)];
        bool guarded = false;
        for (const Guard& g : guards) guarded = guarded || index_depends_on(g.index, atom->var);
        if (!step || guarded || v->dynamic ||
            *std::max_element(offsets->begin(), offsets->end()) + extent > 4 * int64_t{lanes_})
          continue;
        shift_var = atom->var, shift = step->getSExtValue(), steps = extent;
        break;
      }
      const int64_t last = *std::max_element(offsets->begin(), offsets->end()) + steps - 1;
      const int64_t wide = (last / lanes_ + 1) * lanes_;
      std::vector<int> first_reader(size_t(wide), -1), picks;
      for (int j = 0; j < lanes_; ++j) {
        const int64_t o = (*offsets)[size_t(j)];
        for (int64_t e = o; e < o + steps; ++e)
          if (first_reader[size_t(e)] < 0) first_reader[size_t(e)] = j;
        picks.push_back(static_cast<int>(o + shift));
      }
      LV* saved = shift_var >= 0 ? vars_[shift_var] : nullptr;
      if (shift_var >= 0) vars_[shift_var] = ic(0);
      LV* first = plus_offset(index(v->index));
      LV* ok = nullptr;
      if (!guards.empty()) {
        ok = guards_hold(guards, false);
        first = b_.CreateSelect(ok, first, ic(0));  // failing lanes read the buffer's start
        if (k_.args[v->arg].numel >= wide) ok = nullptr;
      }
      if (shift_var >= 0) vars_[shift_var] = saved;
      std::vector<llvm::Constant*> used;
      std::vector<int> reader;
      for (int64_t e = 0; e < wide; ++e) {
        used.push_back(b_.getInt1(first_reader[size_t(e)] >= 0));
        reader.push_back(std::max(first_reader[size_t(e)], 0));
      }
      LV* wide_mask = llvm::ConstantVector::get(used);
      if (lane_mask_) wide_mask = b_.CreateAnd(wide_mask, b_.CreateShuffleVector(lane_mask_, reader));
      if (ok) wide_mask = b_.CreateAnd(wide_mask, b_.CreateVectorSplat(static_cast<unsigned>(wide), ok));
      llvm::Type* wt = llvm::FixedVectorType::get(st, static_cast<unsigned>(wide));
      LV* ptr = b_.CreateInBoundsGEP(st, base, first);
      LV* l = vector_load(wt, ptr, align, wide_mask, v->arg);
      return widen(b_.CreateShuffleVector(l, picks), stored);
    }
    LV* idx = plus_offset(index(v->index, true));
    if (mask) idx = b_.CreateSelect(mask, idx, llvm::Constant::getNullValue(idx->getType()));
    LV* ptrs = b_.CreateInBoundsGEP(st, base, idx);
    if (dtype_size(stored) == 1 && x86_gathers_ && last_element_read(v) + 4 <= k_.args[v->arg].numel) {
      // Bytes gathered as 32-bit lanes, each lane's low byte kept: vpgatherdd, where LLVM
      // would insert the bytes one by one. The buffer holds 3 more bytes after the last one
      // a lane can read (the 8-bit lookup tables' spare entries, ops_quant.cc).
      auto* wide = llvm::FixedVectorType::get(b_.getInt32Ty(), lanes_);
      auto* l = b_.CreateMaskedGather(wide, ptrs, llvm::Align(1));
      annotate(l, v->arg);
      return widen(b_.CreateTrunc(l, vt), stored);
    }
    auto* l = b_.CreateMaskedGather(vt, ptrs, align);
    annotate(l, v->arg);
    return widen(l, stored);
  }
  // table[x] for a vector of bytes x (byte_table_index) on HVX (a byte kernel, or an integer
  // one: a GlobalAveragePool summing a SiLU table): vlut32 picks from 32 table entries per
  // instruction, those of the 32 whose index bits 7-5 match its control word (0 elsewhere),
  // so 8 of them, or-ed, cover the 256 entries. A control word's entries are
  // the even (control bit 1 clear) or odd bytes of halfwords 0-31 (bit 0 clear) or 32-63 of
  // the table vector: entries 0-127 as one vector with entry j at byte 2j and entry 64 + j
  // at byte 2j + 1 (j < 64), entries 128-255 as another. Both are built once per call.
  LV* byte_table_lookup(const Value* v) {
    auto [x_load, flip] = byte_table_index(v);
    if (!x_load || lanes_ > 128) return nullptr;
    auto* bytes = llvm::FixedVectorType::get(b_.getInt8Ty(), 128);
    auto* words = llvm::FixedVectorType::get(b_.getInt32Ty(), 32);
    auto& tables = vlut_tables_[v->arg];
    if (!tables.first) {
      llvm::BasicBlock& entry = fn_->getEntryBlock();
      IRBuilder<> eb(&entry, entry.getTerminator() ? entry.getTerminator()->getIterator() : entry.end());
      std::vector<int> interleave;
      for (int j = 0; j < 64; ++j) interleave.push_back(j), interleave.push_back(64 + j);
      auto half = [&](int64_t first) {
        auto* l = eb.CreateAlignedLoad(bytes, eb.CreateConstInBoundsGEP1_32(eb.getInt8Ty(), buffers_[v->arg], uint32_t(first)),
                                       llvm::Align(1));
        annotate(l, v->arg);
        return eb.CreateBitCast(eb.CreateShuffleVector(l, interleave), words);
      };
      tables = {half(0), half(128)};
    }
    std::vector<int> widen_mask, narrow_mask;
    for (int u = 0; u < 128; ++u) widen_mask.push_back(u < lanes_ ? u : lanes_);
    for (int u = 0; u < lanes_; ++u) narrow_mask.push_back(u);
    LV* x = nullptr;
    if (lanes_ < 64 && x_load->guards.empty() && dtype_size(k_.args[x_load->arg].dtype) == 1 &&
        lane_stride(x_load->index, vec_var_, lanes_).value_or(0) == 1) {
      // The bytes of an integer kernel's 32 lanes as one masked HVX load (LLVM 19 loads a
      // 32-byte vector byte by byte).
      std::vector<llvm::Constant*> first;
      for (int u = 0; u < 128; ++u) first.push_back(b_.getInt1(u < lanes_));
      LV* mask = llvm::ConstantVector::get(first);
      if (lane_mask_) mask = b_.CreateAnd(mask, b_.CreateShuffleVector(lane_mask_, llvm::ConstantVector::getSplat(
                                                                            llvm::ElementCount::getFixed(unsigned(lanes_)), b_.getFalse()),
                                                                        widen_mask));
      x = vector_load(bytes, b_.CreateInBoundsGEP(b_.getInt8Ty(), buffers_[x_load->arg], index(x_load->index)),
                      llvm::Align(1), mask, x_load->arg);
    } else {
      x = value(x_load);
      if (lanes_ < 128) x = b_.CreateShuffleVector(x, llvm::Constant::getNullValue(x->getType()), widen_mask);
    }
    if (flip) x = b_.CreateXor(x, llvm::ConstantInt::get(x->getType(), 0x80));
    LV* idx = b_.CreateBitCast(x, words);
    LV* r = b_.CreateIntrinsic(words, llvm::Intrinsic::hexagon_V6_vlutvvb_128B, {idx, tables.first, b_.getInt32(0)});
    for (uint32_t m = 1; m < 8; ++m)
      r = b_.CreateIntrinsic(words, llvm::Intrinsic::hexagon_V6_vlutvvb_oracc_128B,
                             {r, idx, m < 4 ? tables.first : tables.second, b_.getInt32(m)});
    r = b_.CreateBitCast(r, bytes);
    return lanes_ < 128 ? b_.CreateShuffleVector(r, narrow_mask) : r;
  }

  // The last element a load can read: its index's largest value plus, for a Gather, the
  // largest data-dependent term (clamped to its axis, and to what an 8-bit index can be).
  int64_t last_element_read(const Value* v) const {
    int64_t last = v->index.max();
    if (v->dynamic) {
      if (v->dynamic_stride < 0) return std::numeric_limits<int64_t>::max();
      int64_t hi = v->dynamic_extent - 1;
      if (std::optional<int64_t> bound = largest_value(v->dynamic)) hi = std::clamp<int64_t>(*bound, 0, hi);
      last += hi * v->dynamic_stride;
    }
    return last;
  }
  // An upper bound of an integer value where it is plain: a widened 8-bit load, plus or
  // minus constants (an int8 table index x + 128).
  static std::optional<int64_t> largest_value(const Value* v) {
    if (v->kind == Value::Kind::Alu && v->op == Op::Cast && v->srcs[0]->kind == Value::Kind::Load) {
      const DType t = v->srcs[0]->dtype;
      if (t == DType::U8) return 255;
      if (t == DType::I8) return 127;
      return std::nullopt;
    }
    if (v->kind == Value::Kind::Alu && (v->op == Op::Add || v->op == Op::Sub) && v->srcs[1]->kind == Value::Kind::Const) {
      std::optional<int64_t> a = largest_value(v->srcs[0]);
      if (!a) return std::nullopt;
      const int64_t c = static_cast<int64_t>(v->srcs[1]->constant);
      return v->op == Op::Add ? *a + c : *a - c;
    }
    return std::nullopt;
  }
  // A Gather's term clamp(dynamic, 0, extent-1) * stride, in the index type; one per lane
  // where it differs between lanes (*varies), else one scalar.
  LV* dynamic_offset(const Value* v, bool* varies) {
    *varies = lanes_ > 1 && value_varies(v->dynamic);
    LV* d = value(v->dynamic);
    if (!*varies && d->getType()->isVectorTy()) d = b_.CreateExtractElement(d, uint64_t{0});
    // Clamp in the index's own type (I32 / I64, signed), then convert: the result fits.
    llvm::Type* dt = d->getType();
    unsigned bits = dt->getScalarSizeInBits();
    int64_t hi = v->dynamic_extent - 1;
    if (bits < 64) hi = std::min<int64_t>(hi, (int64_t{1} << (bits - 1)) - 1);
    LV* zero = llvm::Constant::getNullValue(dt);
    d = b_.CreateSelect(b_.CreateICmpSLT(d, zero), zero, d);
    LV* hic = llvm::ConstantInt::get(dt, static_cast<uint64_t>(hi), true);
    d = b_.CreateSelect(b_.CreateICmpSGT(d, hic), hic, d);
    d = b_.CreateIntCast(d, *varies ? lanes_of(idx_ty_, lanes_) : idx_ty_, true);
    LV* stride = *varies ? b_.CreateVectorSplat(lanes_, ic(v->dynamic_stride)) : ic(v->dynamic_stride);
    if (v->dynamic_stride != 1) d = b_.CreateMul(d, stride, "", true, true);
    return d;
  }

  void store(const Index& ix, LV* v, DType t) {
    llvm::Type* st = storage_type(t);
    if (v->getType()->isFPOrFPVectorTy()) v = fp_convert(v, same_lanes(v, st));  // F16 in float, or F32 / F16 mixed
    if (t == DType::Bool) v = b_.CreateZExt(v, same_lanes(v, st));
    llvm::Align align(dtype_size(t));
    llvm::Instruction* st_inst;
    if (lanes_ > 1 && lane_stride(ix, vec_var_, lanes_).value_or(0) != 1) {
      // Lanes along a dim that is not the output's innermost (choose_vectorized_output_dim).
      LV* ptrs = b_.CreateInBoundsGEP(st, buffers_[0], index(ix, true));
      LV* mask = lane_mask_ ? lane_mask_ : b_.CreateVectorSplat(lanes_, b_.getTrue());
      st_inst = b_.CreateMaskedScatter(v, ptrs, align, mask);
    } else {
      LV* p = b_.CreateInBoundsGEP(st, buffers_[0], index(ix));  // lanes are consecutive outputs
      st_inst = lane_mask_ ? static_cast<llvm::Instruction*>(b_.CreateMaskedStore(v, p, align, lane_mask_))
                           : b_.CreateAlignedStore(v, p, align);
    }
    annotate(st_inst, 0);
  }

  // ---- values ----
  LV* value(const Value* v) {
    if (auto it = row_values_.find(v); it != row_values_.end()) return splat(it->second, lanes_);
    if (auto it = memo_.find(v); it != memo_.end()) return it->second;
    LV* r = compute(v);
    memo_[v] = r;
    return r;
  }

  LV* constant(double c, DType t) {
    llvm::Type* ty = lanes_of(scalar_type(t), lanes_);
    if (ty->isFPOrFPVectorTy()) return llvm::ConstantFP::get(ty, narrow_float_type(t) ? round_to_dtype(c, t) : c);
    if (t == DType::Bool) return llvm::ConstantInt::get(ty, c != 0.0 ? 1 : 0);
    if (is_unsigned(t)) return llvm::ConstantInt::get(ty, static_cast<uint64_t>(c));
    return llvm::ConstantInt::get(ty, static_cast<uint64_t>(static_cast<int64_t>(c)), true);
  }

  LV* compute(const Value* v) {
    switch (v->kind) {
      case Value::Kind::Const: return constant(v->constant, v->dtype);
      case Value::Kind::Accumulator: return v->stage >= 0 ? splat(stage_accs_[size_t(v->stage)], lanes_) : acc_;
      case Value::Kind::InBounds: {
        if (guards_known_true_) return splat(b_.getTrue(), lanes_);
        bool vary = false;
        for (const Guard& g : v->guards) vary = vary || varies(g.index);
        return vary ? guards_hold(v->guards, true) : splat(guards_hold(v->guards, false), lanes_);
      }
      case Value::Kind::Load: return load(v);
      case Value::Kind::Alu: break;
    }
    if (!f64_arithmetic_)
      if (LV* r = float_fma_of_double_form(v)) return r;
    if (!fp_rounding_) {
      if (LV* r = threshold_quantize(v)) return r;
      if (LV* r = clamped_round(v)) return r;
    }
    if (const Value* x = sigmoid_argument(v)) {
      LV* arg = value(x);
      if (arg->getType()->getScalarType()->isFloatTy())
        return b_.CreateFDiv(f32(1.0), b_.CreateFAdd(f32(1.0), exp_saturating(arg)));
    }
    std::vector<LV*> s;
    for (const Value* x : v->srcs) s.push_back(value(x));
    DType in = v->srcs.empty() ? v->dtype : v->srcs[0]->dtype;
    bool fp = s[0]->getType()->isFPOrFPVectorTy();
    switch (v->op) {
      case Op::Neg: return fp ? b_.CreateFNeg(s[0]) : b_.CreateNeg(s[0]);
      case Op::Exp: return math1(s[0], [&](LV* x) { return v->exp_arg_nonpositive ? exp_nonpositive(x) : exp(x); });
      case Op::Log: return math1(s[0], [&](LV* x) { return log(x); });
      case Op::Tanh: return math1(s[0], [&](LV* x) { return tanh(x); });
      case Op::Erf: return math1(s[0], [&](LV* x) { return erf(x); });
      case Op::Sin: return math1(s[0], [&](LV* x) { return sincos(x, false); });
      case Op::Cos: return math1(s[0], [&](LV* x) { return sincos(x, true); });
      case Op::Sqrt: return intrinsic(llvm::Intrinsic::sqrt, s[0]);
      case Op::Recip: return b_.CreateFDiv(fc(s[0], 1.0), s[0]);
      case Op::Abs:
        if (fp) return intrinsic(llvm::Intrinsic::fabs, s[0]);
        if (is_unsigned(in)) return s[0];
        return b_.CreateSelect(b_.CreateICmpSLT(s[0], llvm::Constant::getNullValue(s[0]->getType())), b_.CreateNeg(s[0]), s[0]);
      case Op::Floor: return fp ? intrinsic(llvm::Intrinsic::floor, s[0]) : s[0];
      case Op::Ceil: return fp ? intrinsic(llvm::Intrinsic::ceil, s[0]) : s[0];
      case Op::Round: return fp ? intrinsic(llvm::Intrinsic::roundeven, s[0]) : s[0];
      case Op::Cast: return cast(s[0], in, v->dtype);
      case Op::Not: return b_.CreateNot(s[0]);
      case Op::Add: return in == DType::Bool ? b_.CreateOr(s[0], s[1]) : add(s[0], s[1]);
      case Op::Sub: return fp ? b_.CreateFSub(s[0], s[1]) : b_.CreateSub(s[0], s[1]);
      case Op::Mul: return fp ? b_.CreateFMul(s[0], s[1]) : (in == DType::Bool ? b_.CreateAnd(s[0], s[1]) : b_.CreateMul(s[0], s[1]));
      case Op::Div:
        if (fp) return b_.CreateFDiv(s[0], s[1]);
        return int_div(s[0], s[1], in, false);
      case Op::Mod:
        if (fp) {  // C fmod: a - trunc(a / b) * b
          LV* q = intrinsic(llvm::Intrinsic::trunc, b_.CreateFDiv(s[0], s[1]));
          return b_.CreateFSub(s[0], b_.CreateFMul(q, s[1]));
        }
        return int_div(s[0], s[1], in, true);
      case Op::Max: return max(s[0], s[1], in);
      case Op::Min: return min(s[0], s[1], in);
      case Op::Pow: return math2(s[0], s[1], [&](LV* a, LV* e) { return pow(a, e); });
      case Op::CmpLt:
        if (fp) return b_.CreateFCmpOLT(s[0], s[1]);
        return is_unsigned(in) ? b_.CreateICmpULT(s[0], s[1]) : b_.CreateICmpSLT(s[0], s[1]);
      case Op::CmpEq: return fp ? b_.CreateFCmpOEQ(s[0], s[1]) : b_.CreateICmpEQ(s[0], s[1]);
      case Op::And: return b_.CreateAnd(s[0], s[1]);
      case Op::Or: return b_.CreateOr(s[0], s[1]);
      case Op::Xor: return b_.CreateXor(s[0], s[1]);
      case Op::Where: return b_.CreateSelect(s[0], s[1], s[2]);
      default: break;
    }
    throw CompileError(std::string("code generator: unsupported op ") + op_name(v->op) + " (" + dtype_name(in) + ")");
  }

  LV* add(LV* a, LV* b) { return a->getType()->isFPOrFPVectorTy() ? b_.CreateFAdd(a, b) : b_.CreateAdd(a, b); }
  LV* max(LV* a, LV* b, DType t) {
    if (a->getType()->isFPOrFPVectorTy()) return b_.CreateSelect(b_.CreateFCmpUGT(a, b), a, b);  // NaN in a wins
    if (t == DType::Bool) return b_.CreateOr(a, b);
    return b_.CreateSelect(is_unsigned(t) ? b_.CreateICmpUGT(a, b) : b_.CreateICmpSGT(a, b), a, b);
  }
  LV* min(LV* a, LV* b, DType t) {
    if (a->getType()->isFPOrFPVectorTy()) return b_.CreateSelect(b_.CreateFCmpULT(a, b), a, b);
    if (t == DType::Bool) return b_.CreateAnd(a, b);
    return b_.CreateSelect(is_unsigned(t) ? b_.CreateICmpULT(a, b) : b_.CreateICmpSLT(a, b), a, b);
  }
  // Integer division or remainder, C semantics; x/0 gives 0 instead of trapping, and a signed
  // x/-1 is -x (wrapping: INT_MIN/-1 = INT_MIN), x%-1 is 0, where the CPU would trap.
  LV* int_div(LV* a, LV* b, DType t, bool rem) {
    LV* zero = llvm::Constant::getNullValue(b->getType());
    LV* one = llvm::ConstantInt::get(b->getType(), 1);
    LV* is0 = b_.CreateICmpEQ(b, zero);
    if (is_unsigned(t)) {
      LV* safe = b_.CreateSelect(is0, one, b);
      if (int_divide_) return b_.CreateSelect(is0, zero, rem ? b_.CreateURem(a, safe) : b_.CreateUDiv(a, safe));
      LV* q = udiv(a, safe);
      return b_.CreateSelect(is0, zero, rem ? b_.CreateSub(a, b_.CreateMul(q, safe)) : q);
    }
    LV* is_m1 = b_.CreateICmpEQ(b, llvm::Constant::getAllOnesValue(b->getType()));
    LV* safe = b_.CreateSelect(b_.CreateOr(is0, is_m1), one, b);
    LV* r;
    if (int_divide_) {
      r = rem ? b_.CreateSRem(a, safe) : b_.CreateSDiv(a, safe);
    } else {  // C semantics from the magnitudes: the quotient truncates toward zero
      LV* a_neg = b_.CreateICmpSLT(a, zero);
      LV* b_neg = b_.CreateICmpSLT(safe, zero);
      LV* ua = b_.CreateSelect(a_neg, b_.CreateNeg(a), a);
      LV* ub = b_.CreateSelect(b_neg, b_.CreateNeg(safe), safe);
      LV* uq = udiv(ua, ub);
      if (rem) {
        LV* ur = b_.CreateSub(ua, b_.CreateMul(uq, ub));
        r = b_.CreateSelect(a_neg, b_.CreateNeg(ur), ur);
      } else {
        r = b_.CreateSelect(b_.CreateXor(a_neg, b_neg), b_.CreateNeg(uq), uq);
      }
    }
    r = b_.CreateSelect(is_m1, rem ? zero : b_.CreateNeg(a), r);
    return b_.CreateSelect(is0, zero, r);
  }

  LV* cast(LV* x, DType from, DType to) {
    if (half_ && from != to && (from == DType::F16 || to == DType::F16) && to != DType::Bool) {
      // In half: F16 <-> F32 is one fpext / fptrunc. Other types go through float, exactly
      // as the float code does (half -> float is exact; double -> half has no instruction,
      // LLVM would call __truncdfhf2; integers round to float first, as before).
      if (from == DType::F16) return to == DType::F32 ? b_.CreateFPExt(x, vtype(to)) : cast(b_.CreateFPExt(x, f32t()), DType::F32, to);
      if (from != DType::F32) x = cast(x, from, DType::F32);
      return b_.CreateFPTrunc(x, vtype(DType::F16));
    }
    llvm::Type* tt = vtype(to);
    llvm::Type* ft = x->getType();
    if (to == DType::Bool) {
      return ft->isFPOrFPVectorTy() ? b_.CreateFCmpUNE(x, llvm::ConstantFP::get(ft, 0.0))
                                     : b_.CreateICmpNE(x, llvm::Constant::getNullValue(ft));
    }
    if (ft == tt) {
      // F16 / BF16 compute in float: rounding to the narrow type is what a cast to it means
      // (from F16 to BF16 too: not every half is a bfloat16).
      return from == to ? x : round_to_narrow(x, to);
    }
    if (ft->isFPOrFPVectorTy() && tt->isFPOrFPVectorTy()) {
      // double -> half has no instruction (LLVM would call __truncdfhf2): go through float.
      return round_to_narrow(b_.CreateFPCast(x, tt), to);
    }
    if (ft->isFPOrFPVectorTy() && dtype_size(to) <= 2) {
      // To 8 / 16 bits (a quantized output): the saturating conversion by hand, NaN to 0,
      // clamped to the type's range (exact in float), then a plain float -> int32 and a
      // truncation: vector instructions, where LLVM scalarizes fptoui.sat to i8 lane by lane.
      const double lo = is_unsigned(to) ? 0.0 : -std::ldexp(1.0, 8 * int(dtype_size(to)) - 1);
      const double hi = is_unsigned(to) ? std::ldexp(1.0, 8 * int(dtype_size(to))) - 1 : -lo - 1;
      LV* v = b_.CreateSelect(b_.CreateFCmpUNO(x, x), fc(x, 0.0), x);
      v = b_.CreateSelect(b_.CreateFCmpOLT(v, fc(x, lo)), fc(x, lo), v);
      v = b_.CreateSelect(b_.CreateFCmpOGT(v, fc(x, hi)), fc(x, hi), v);
      return b_.CreateTrunc(b_.CreateFPToSI(v, same_lanes(x, b_.getInt32Ty())), tt);
    }
    if (ft->isFPOrFPVectorTy() && x86_gathers_) {
      // To 32 / 64 bits on x86: fptosi.sat's semantics (NaN to 0, clamped to the type's
      // range) by hand, as above. LLVM 19 scalarizes the vector fptosi.sat on x86 into a
      // compare and branch per lane (a Cast to int32 of 800K floats: 3.3x onnxruntime's time);
      // this is a vector min / compare / cvttps2dq. The range's ends are powers of two, exact
      // in float: past the upper one the result is the type's maximum.
      const int bits = 8 * int(dtype_size(to));
      const double lo = is_unsigned(to) ? 0.0 : -std::ldexp(1.0, bits - 1);
      const double above = std::ldexp(1.0, is_unsigned(to) ? bits : bits - 1);
      LV* v = b_.CreateSelect(b_.CreateFCmpUNO(x, x), fc(x, 0.0), x);
      v = b_.CreateSelect(b_.CreateFCmpOLT(v, fc(x, lo)), fc(x, lo), v);
      LV* past = b_.CreateFCmpOGE(v, fc(x, above));
      v = b_.CreateSelect(past, fc(x, 0.0), v);
      LV* r = is_unsigned(to) ? b_.CreateFPToUI(v, tt) : b_.CreateFPToSI(v, tt);
      const llvm::APInt max = is_unsigned(to) ? llvm::APInt::getMaxValue(unsigned(bits)) : llvm::APInt::getSignedMaxValue(unsigned(bits));
      return b_.CreateSelect(past, llvm::ConstantInt::get(tt, max), r);
    }
    if (ft->isFPOrFPVectorTy()) {
      // Saturate first: out-of-range float to int is undefined in LLVM.
      return is_unsigned(to) ? b_.CreateIntrinsic(llvm::Intrinsic::fptoui_sat, {tt, ft}, {x})
                             : b_.CreateIntrinsic(llvm::Intrinsic::fptosi_sat, {tt, ft}, {x});
    }
    if (tt->isFPOrFPVectorTy()) {
      return round_to_narrow(is_unsigned(from) ? b_.CreateUIToFP(x, tt) : b_.CreateSIToFP(x, tt), to);
    }
    return b_.CreateIntCast(x, tt, !is_unsigned(from));
  }

  // Min(Max(Round(w) [+ z], lo), hi) with integer constants lo, hi and z (the quantizing
  // epilogue's saturation), on a target without a rounding instruction: the clamp moves
  // before the rounding, Round(clamp(w, lo - z, hi - z)) + z, which is the same value (Round
  // is monotone and the bounds are integers; NaN and infinities give what the original gives),
  // and the clamped |w| <= 2^21 rounds half to even as (w + 1.5 * 2^23) - 1.5 * 2^23: two
  // additions instead of soft_round's sign and range handling. Null for anything else.
  LV* clamped_round(const Value* v) {
    std::optional<RoundClamp> m = round_clamp(v);
    if (!m) return nullptr;
    // Round(-0.3) is -0, which a negative lo would let through; the form here gives +0.
    if (m->z == 0.0 && m->lo < 0.0) return nullptr;
    LV* w = value(m->w);
    if (!w->getType()->getScalarType()->isFloatTy()) return nullptr;
    LV* wc = min(max(w, fc(w, m->lo - m->z), DType::F32), fc(w, m->hi - m->z), DType::F32);
    const double magic = 12582912.0;  // 1.5 * 2^23: the sum's ulp is 1 for |wc| <= 2^22
    LV* q = b_.CreateFSub(b_.CreateFAdd(wc, fc(w, magic)), fc(w, magic));
    return m->z != 0.0 ? b_.CreateFAdd(q, fc(w, m->z)) : q;
  }

  // Min(Max(Round(w) [+ z], lo), hi) in float32 with integer constants lo <= hi and z.
  struct RoundClamp {
    const Value* w;
    double lo, hi, z;
  };
  static std::optional<RoundClamp> round_clamp(const Value* v) {
    auto int_const = [](const Value* x) {
      return x->kind == Value::Kind::Const && x->constant == std::floor(x->constant) && std::fabs(x->constant) <= double(1 << 20);
    };
    if (v->kind != Value::Kind::Alu || v->op != Op::Min || v->dtype != DType::F32 || !int_const(v->srcs[1])) return std::nullopt;
    const Value* mx = v->srcs[0];
    if (mx->kind != Value::Kind::Alu || mx->op != Op::Max || !int_const(mx->srcs[1])) return std::nullopt;
    const double lo = mx->srcs[1]->constant, hi = v->srcs[1]->constant;
    if (lo > hi) return std::nullopt;
    const Value* r = mx->srcs[0];
    double z = 0.0;
    if (r->kind == Value::Kind::Alu && r->op == Op::Add && int_const(r->srcs[1])) {
      z = r->srcs[1]->constant;
      r = r->srcs[0];
    }
    if (r->kind != Value::Kind::Alu || r->op != Op::Round || r->dtype != DType::F32) return std::nullopt;
    return RoundClamp{r->srcs[0], lo, hi, z};
  }

  // Cast(Min(Max(Round(x / s) [+ z], lo), hi)) to an 8- or 16-bit integer type whose range
  // holds [lo, hi], s a constant > 0 (QuantizeLinear with constant parameters), on a target
  // without a float divide: the code from the thresholds of quantize_thresholds, exact. With
  // L = lo - z, H = hi - z, C = clamp(roundeven(fl32(x / s)), L, H) the wanted code less z and
  // T[i] = t_{L+i}: the estimate j = clamp(floor(fma(x, 1/s, 0.25 - L)), 0, H - L) is C - L or
  // C - L - 1, and one compare with T[j + 1] decides which. Why: where no clamp applies
  // (|x / s| < 2^11, as L and H are within +-1024) the fma is within 2^-10 of x / s + 0.25 - L
  // and fl32(x / s) within 2^-13 of x / s, and roundeven(f) is floor(f + 0.5) or, at a tie to
  // even, floor(f + 0.5) - 1: the bias 0.25 below the 0.5 keeps j at or under C - L (ties
  // included) and within one of it; the clamps move both the same way. NaN gives j = 0 and no
  // correction: lo, as the division's form gives on Hexagon (tests/hexagon/
  // test_quantize_exact.py). Null for anything else.
  LV* threshold_quantize(const Value* v) {
    if (v->kind != Value::Kind::Alu || v->op != Op::Cast || v->srcs[0]->dtype != DType::F32) return nullptr;
    const DType to = v->dtype;
    if (!(is_signed_int(to) || is_unsigned(to)) || to == DType::Bool || dtype_size(to) > 2) return nullptr;
    std::optional<RoundClamp> m = round_clamp(v->srcs[0]);
    const double type_lo = is_unsigned(to) ? 0.0 : -std::ldexp(1.0, 8 * int(dtype_size(to)) - 1);
    const double type_hi = is_unsigned(to) ? std::ldexp(1.0, 8 * int(dtype_size(to))) - 1 : -type_lo - 1;
    if (!m || m->lo < type_lo || m->hi > type_hi) return nullptr;
    const Value* div = m->w;
    if (div->kind != Value::Kind::Alu || div->op != Op::Div || div->dtype != DType::F32 ||
        div->srcs[1]->kind != Value::Kind::Const || div->srcs[0]->dtype != DType::F32)
      return nullptr;
    const double sd = div->srcs[1]->constant;
    const float s = float(sd);
    if (double(s) != sd) return nullptr;
    const double L = m->lo - m->z, H = m->hi - m->z;
    if (L > 0.0 || H < 0.0) return nullptr;  // 0 inside: the proof's and the tables' case
    std::optional<std::vector<float>> t = quantize_thresholds(s, int(L), int(H));
    if (!t) return nullptr;
    LV* x = value(div->srcs[0]);
    if (!x->getType()->getScalarType()->isFloatTy()) return nullptr;
    llvm::Type* f32t = b_.getFloatTy();
    auto* table_ty = llvm::ArrayType::get(f32t, t->size());
    std::vector<llvm::Constant*> elems;
    for (float e : *t) elems.push_back(llvm::ConstantFP::get(f32t, double(e)));
    auto* table = new llvm::GlobalVariable(m_, table_ty, /*isConstant=*/true, llvm::GlobalValue::PrivateLinkage,
                                           llvm::ConstantArray::get(table_ty, elems), k_.name + ".thresholds");
    table->setAlignment(llvm::Align(64));
    LV* est = b_.CreateIntrinsic(llvm::Intrinsic::fma, {x->getType()},
                                 {x, fc(x, double(float(1.0 / sd))), fc(x, 0.25 - L)});
    est = b_.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, est, fc(x, 0.0));  // NaN -> 0
    est = b_.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, est, fc(x, H - L));
    LV* j = b_.CreateFPToSI(est, same_lanes(x, b_.getInt32Ty()));
    LV* next = b_.CreateInBoundsGEP(f32t, table, b_.CreateAdd(j, intc(j, 1)));
    LV* t_next = next->getType()->isVectorTy() ? static_cast<LV*>(b_.CreateMaskedGather(x->getType(), next, llvm::Align(4)))
                                               : b_.CreateAlignedLoad(f32t, next, llvm::Align(4));
    LV* up = b_.CreateZExt(b_.CreateFCmpOGE(x, t_next), j->getType());
    LV* q = b_.CreateAdd(b_.CreateAdd(j, up), intc(j, int64_t(m->lo)));
    return b_.CreateTrunc(q, vtype(to));
  }

  // float32(double(a) * c + b) with a, c and b floats (a an 8- or 16-bit integer or a float,
  // c a constant, b a constant or a float widened): the product is exact in double (at most
  // 48 significant bits), so this is the frontend's way of writing the float32 fused
  // multiply-add fma(a, c, b) (ops_quant.cc, QLinearAdd) — one rounding, as a target without
  // double arithmetic computes it (Hexagon's sffma). Null for anything else.
  LV* float_fma_of_double_form(const Value* v) {
    auto exact_in_float = [](double c) { return double(float(c)) == c; };
    auto as_float = [&](const Value* x) -> const Value* {  // x's float32 source, if any
      if (x->kind == Value::Kind::Const) return exact_in_float(x->constant) ? x : nullptr;
      if (x->kind != Value::Kind::Alu || x->op != Op::Cast) return nullptr;
      const DType from = x->srcs[0]->dtype;
      const bool exact = from == DType::F32 || ((is_signed_int(from) || is_unsigned(from)) && dtype_size(from) <= 2);
      return exact ? x->srcs[0] : nullptr;
    };
    if (v->kind != Value::Kind::Alu || v->op != Op::Cast || v->dtype != DType::F32) return nullptr;
    const Value* sum = v->srcs[0];
    if (sum->dtype != DType::F64 || sum->kind != Value::Kind::Alu || sum->op != Op::Add) return nullptr;
    for (int m = 0; m < 2; ++m) {
      const Value* prod = sum->srcs[size_t(m)];
      if (prod->kind != Value::Kind::Alu || prod->op != Op::Mul) continue;
      const Value* a = as_float(prod->srcs[0]);
      const Value* c = as_float(prod->srcs[1]);
      const Value* b = as_float(sum->srcs[size_t(1 - m)]);
      if (!a || !c || !b || (a->kind != Value::Kind::Const && c->kind != Value::Kind::Const)) continue;
      auto f32_of = [&](const Value* x) {
        return x->kind == Value::Kind::Const ? constant(x->constant, DType::F32) : cast(value(x), x->dtype, DType::F32);
      };
      LV* x = f32_of(a);
      LV* y = f32_of(c);
      LV* z = f32_of(b);
      return b_.CreateIntrinsic(llvm::Intrinsic::fma, {x->getType()}, {x, y, z});
    }
    return nullptr;
  }

  LV* intrinsic(llvm::Intrinsic::ID id, LV* x) {
    if (!fp_rounding_ && x->getType()->getScalarType()->isFloatTy()) {
      switch (id) {
        case llvm::Intrinsic::sqrt: return soft_sqrt(x);
        case llvm::Intrinsic::floor:
        case llvm::Intrinsic::ceil:
        case llvm::Intrinsic::trunc:
        case llvm::Intrinsic::roundeven: return soft_round(id, x);
        default: break;
      }
    }
    return b_.CreateUnaryIntrinsic(id, x);
  }

  // ---- what a target without the instructions (TargetSpec::int_divide, fp_rounding) gets
  // instead of LLVM's library calls; kernels call nothing outside their code ----
  // Unsigned a / b (b != 0; scalars or vectors): the udiv instruction where the target has
  // one, else a call of a private restoring-division function compiled into the kernels
  // (one per width, lanes one by one).
  LV* udiv(LV* a, LV* b) {
    if (int_divide_) return b_.CreateUDiv(a, b);
    if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(a->getType())) {
      LV* r = llvm::PoisonValue::get(vt);
      for (unsigned i = 0; i < vt->getNumElements(); ++i)
        r = b_.CreateInsertElement(r, udiv(b_.CreateExtractElement(a, i), b_.CreateExtractElement(b, i)), i);
      return r;
    }
    return b_.CreateCall(soft_udiv_function(llvm::cast<llvm::IntegerType>(a->getType())), {a, b});
  }
  llvm::Function* soft_udiv_function(llvm::IntegerType* t) {
    const unsigned bits = t->getBitWidth();
    const std::string name = "edgec.udiv" + std::to_string(bits);
    if (llvm::Function* f = m_.getFunction(name)) return f;
    auto* f = llvm::Function::Create(llvm::FunctionType::get(t, {t, t}, false), llvm::Function::PrivateLinkage, name, m_);
    f->addFnAttr(llvm::Attribute::NoUnwind);
    f->addFnAttr(llvm::Attribute::NoInline);  // once per width, not per division
    f->addFnAttr("no-builtins");
    llvm::IRBuilder<> b(ctx_);
    auto* entry = llvm::BasicBlock::Create(ctx_, "entry", f);
    auto* loop = llvm::BasicBlock::Create(ctx_, "loop", f);
    auto* done = llvm::BasicBlock::Create(ctx_, "done", f);
    b.SetInsertPoint(entry);
    b.CreateBr(loop);
    b.SetInsertPoint(loop);
    // Bit i from the top: r = r << 1 | bit i of a; r >= d: r -= d, quotient bit i set.
    llvm::PHINode* i = b.CreatePHI(t, 2);
    llvm::PHINode* q = b.CreatePHI(t, 2);
    llvm::PHINode* r = b.CreatePHI(t, 2);
    LV* a = f->getArg(0);
    LV* d = f->getArg(1);
    LV* one = llvm::ConstantInt::get(t, 1);
    LV* r1 = b.CreateOr(b.CreateShl(r, one), b.CreateAnd(b.CreateLShr(a, i), one));
    LV* ge = b.CreateICmpUGE(r1, d);
    LV* r2 = b.CreateSelect(ge, b.CreateSub(r1, d), r1);
    LV* q2 = b.CreateOr(q, b.CreateShl(b.CreateZExt(ge, t), i));
    LV* next = b.CreateSub(i, one);
    i->addIncoming(llvm::ConstantInt::get(t, bits - 1), entry);
    q->addIncoming(llvm::ConstantInt::get(t, 0), entry);
    r->addIncoming(llvm::ConstantInt::get(t, 0), entry);
    i->addIncoming(next, loop);
    q->addIncoming(q2, loop);
    r->addIncoming(r2, loop);
    b.CreateCondBr(b.CreateICmpEQ(i, llvm::ConstantInt::get(t, 0)), done, loop);
    b.SetInsertPoint(done);
    b.CreateRet(q2);
    return f;
  }
  // floor / ceil / trunc / roundeven of floats: |x| >= 2^23 (and inf, NaN) is integral
  // already; below, trunc through a 32-bit integer and correct by one, and roundeven as
  // (|x| + 2^23) - 2^23 in the default rounding mode. The sign of x is kept (-0.5 -> -0).
  LV* soft_round(llvm::Intrinsic::ID id, LV* x) {
    llvm::Type* it = same_lanes(x, b_.getInt32Ty());
    LV* bits = b_.CreateBitCast(x, it);
    LV* sign = b_.CreateAnd(bits, intc(bits, int64_t{1} << 31));
    LV* ax = b_.CreateBitCast(b_.CreateAnd(bits, intc(bits, 0x7fffffff)), x->getType());
    LV* small = b_.CreateFCmpOLT(ax, fc(x, 8388608.0));  // false for NaN
    auto with_sign = [&](LV* v) {
      return b_.CreateBitCast(b_.CreateOr(b_.CreateBitCast(v, it), sign), x->getType());
    };
    LV* r;
    if (id == llvm::Intrinsic::roundeven) {
      r = b_.CreateFSub(b_.CreateFAdd(ax, fc(x, 8388608.0)), fc(x, 8388608.0));
      r = with_sign(r);
    } else {
      LV* t = with_sign(b_.CreateSIToFP(b_.CreateFPToSI(b_.CreateSelect(small, x, fc(x, 0.0)), it), x->getType()));
      if (id == llvm::Intrinsic::floor)
        r = b_.CreateSelect(b_.CreateFCmpOGT(t, x), b_.CreateFSub(t, fc(x, 1.0)), t);
      else if (id == llvm::Intrinsic::ceil)
        r = b_.CreateSelect(b_.CreateFCmpOLT(t, x), with_sign(b_.CreateFAdd(t, fc(x, 1.0))), t);
      else
        r = t;
    }
    return b_.CreateSelect(small, r, x);
  }
  // sqrt(x) = x * rsqrt(x): the bit-trick estimate, three Newton steps for rsqrt, one for
  // the root (within an ulp or two of the rounded root for normal x). 0, +inf and NaN /
  // negative x as sqrt gives them; subnormal x is read as 0.
  LV* soft_sqrt(LV* x) {
    llvm::Type* it = same_lanes(x, b_.getInt32Ty());
    LV* tiny = b_.CreateFCmpOLT(x, fc(x, 1.17549435e-38));  // includes -0 and 0
    LV* xs = b_.CreateSelect(tiny, fc(x, 1.0), x);
    LV* y = b_.CreateBitCast(b_.CreateSub(intc(b_.CreateBitCast(xs, it), 0x5f3759df),
                                          b_.CreateLShr(b_.CreateBitCast(xs, it), intc(b_.CreateBitCast(xs, it), 1))),
                             x->getType());
    LV* half_x = b_.CreateFMul(xs, fc(x, 0.5));
    for (int i = 0; i < 3; ++i)
      y = b_.CreateFMul(y, b_.CreateFSub(fc(x, 1.5), b_.CreateFMul(half_x, b_.CreateFMul(y, y))));
    LV* s = b_.CreateFMul(xs, y);
    s = b_.CreateFAdd(s, b_.CreateFMul(b_.CreateFMul(y, fc(x, 0.5)), b_.CreateFSub(xs, b_.CreateFMul(s, s))));
    LV* inf = fc(x, std::numeric_limits<double>::infinity());
    s = b_.CreateSelect(b_.CreateFCmpOEQ(x, inf), inf, s);
    s = b_.CreateSelect(b_.CreateFCmpUNO(x, x), x, s);
    LV* neg = b_.CreateFCmpOLT(x, fc(x, 0.0));
    LV* zero_or_neg = b_.CreateSelect(neg, fc(x, std::numeric_limits<double>::quiet_NaN()), b_.CreateFMul(x, fc(x, 0.0)));
    return b_.CreateSelect(tiny, zero_or_neg, s);
  }

  // Transcendentals are computed in float; double and half values round-trip through float.
  LV* math1(LV* x, const std::function<LV*(LV*)>& f) {
    llvm::Type* t = x->getType();
    if (t->getScalarType()->isFloatTy()) return f(x);
    return fp_convert(f(fp_convert(x, f32t())), t);
  }
  LV* math2(LV* x, LV* y, const std::function<LV*(LV*, LV*)>& f) {
    llvm::Type* t = x->getType();
    if (t->getScalarType()->isFloatTy()) return f(x, y);
    return fp_convert(f(fp_convert(x, f32t()), fp_convert(y, f32t())), t);
  }
  // Constants and types with the current number of lanes.
  llvm::Type* vtype(DType t) { return lanes_of(scalar_type(t), lanes_); }
  llvm::Type* f32t() { return lanes_of(b_.getFloatTy(), lanes_); }
  llvm::Type* i32t() { return lanes_of(b_.getInt32Ty(), lanes_); }
  LV* f32(double c) { return llvm::ConstantFP::get(f32t(), c); }
  LV* i32c(int64_t c) { return llvm::ConstantInt::get(i32t(), static_cast<uint64_t>(c), true); }
  LV* poly(LV* x, std::initializer_list<double> coefs) {  // Horner, highest degree first
    LV* r = nullptr;
    for (double c : coefs) r = r ? b_.CreateFAdd(b_.CreateFMul(r, x), f32(c)) : f32(c);
    return r;
  }
  // 2^n for an integer-valued float n in [-126, 127].
  LV* exp2i(LV* n) {
    LV* bits = b_.CreateShl(b_.CreateAdd(b_.CreateFPToSI(n, i32t()), i32c(127)), 23);
    return b_.CreateBitCast(bits, f32t());
  }

  // x when v is 1 / (1 + e^x) (Sigmoid, and SiLU's second factor), else null.
  static const Value* sigmoid_argument(const Value* v) {
    if (v->op != Op::Recip || v->dtype != DType::F32) return nullptr;
    const Value* sum = v->srcs[0];
    if (sum->kind != Value::Kind::Alu || sum->op != Op::Add) return nullptr;
    for (int i = 0; i < 2; ++i) {
      const Value* one = sum->srcs[i];
      const Value* e = sum->srcs[1 - i];
      if (one->kind == Value::Kind::Const && one->constant == 1.0 && e->kind == Value::Kind::Alu && e->op == Op::Exp)
        return e->srcs[0];
    }
    return nullptr;
  }

  // e^x where only 1 / (1 + e^x) (sigmoid) or 1 - c e^x with x <= 0 (erf) is wanted: past
  // the clamps both are 1 or 0 either way, so this drops exp's two-step scaling near
  // overflow (n = 128 gives inf: 1/(1+inf) = 0 where the exact value is below 4e-39) and
  // its underflow and NaN selects (a NaN x makes n and p NaN, and the product NaN); 2^n by a
  // float add instead of a conversion. Equal to exp() for x in [-87.3, 88.3]. SiLU's and
  // GELU's epilogues are a large part of EfficientNet's and the driving model's time.
  LV* exp_saturating(LV* x) {
    auto [n, p] = exp_reduced(x);
    return b_.CreateFMul(p, exp2i_by_add(n));
  }

  // 2^n for an integral float n in [-126, 128]: n + 1.5 * 2^23 + 127 holds n + 127 in its
  // low mantissa bits, shifted into the exponent field.
  LV* exp2i_by_add(LV* n) {
    LV* biased = b_.CreateBitCast(b_.CreateFAdd(n, f32(12582912.0 + 127.0)), i32t());
    return b_.CreateBitCast(b_.CreateShl(biased, 23), f32t());
  }

  // e^x = 2^n * p: x clamped to [-87.34, 88.8] (nonpositive: only from below), n =
  // round(x / ln2) and p = e^r for r = x - n ln2 (Cody-Waite split of ln2, |r| <= ln2/2).
  // Returns {n, p}.
  std::pair<LV*, LV*> exp_reduced(LV* x) {
    LV* xc = b_.CreateSelect(b_.CreateFCmpOGT(x, f32(88.8)), f32(88.8), x);
    xc = b_.CreateSelect(b_.CreateFCmpOLT(xc, f32(-87.33654)), f32(-87.33654), xc);
    auto [n, q] = exp_reduced_minus_one(xc);
    return {n, b_.CreateFAdd(q, f32(1.0))};
  }
  // n = round(x / ln2) and q = e^r - 1 for r = x - n ln2, x unclamped.
  std::pair<LV*, LV*> exp_reduced_minus_one(LV* x) {
    LV* n = intrinsic(llvm::Intrinsic::roundeven, b_.CreateFMul(x, f32(1.44269504088896341)));
    LV* r = b_.CreateFSub(x, b_.CreateFMul(n, f32(0.693359375)));
    r = b_.CreateFSub(r, b_.CreateFMul(n, f32(-2.12194440e-4)));
    LV* p = poly(r, {1.9875691500E-4, 1.3981999507E-3, 8.3334519073E-3, 4.1665795894E-2, 1.6666665459E-1, 5.0000001201E-1});
    return {n, b_.CreateFAdd(b_.CreateFMul(p, b_.CreateFMul(r, r)), r)};
  }

  // e^x for x <= 0 or NaN (x - max(x) in Softmax): no clamps, n in [-126, 0] for the x it
  // keeps so 2^n in one step by exp_saturating's float add; below -87.34 (-inf too: n and r
  // are then garbage) the last select gives 0 as exp() does, and a NaN x makes q NaN. Then
  // 2^n (1 + q) as 2^n q + 2^n, one multiply-add: fewer constants live in the loop (AVX2's 16
  // registers held them only by copying them around each step). Within an ulp of exp().
  LV* exp_nonpositive(LV* x) {
    auto [n, q] = exp_reduced_minus_one(x);
    LV* scale = exp2i_by_add(n);
    LV* y = b_.CreateFAdd(b_.CreateFMul(q, scale), scale);
    return b_.CreateSelect(b_.CreateFCmpOLT(x, f32(-87.33654)), f32(0.0), y);
  }

  LV* exp(LV* x) {
    auto [n, p] = exp_reduced(x);
    // n can be 128 near the overflow threshold: scale in two steps.
    LV* n1 = b_.CreateSelect(b_.CreateFCmpOGT(n, f32(127.0)), f32(127.0), n);
    LV* y = b_.CreateFMul(p, exp2i(n1));
    y = b_.CreateSelect(b_.CreateFCmpOGT(n, n1), b_.CreateFMul(y, f32(2.0)), y);
    y = b_.CreateSelect(b_.CreateFCmpOLT(x, f32(-87.33654)), f32(0.0), y);
    return b_.CreateSelect(b_.CreateFCmpUNO(x, x), x, y);
  }

  LV* log(LV* x) {
    // x = m * 2^e with m in [sqrt(1/2), sqrt(2)); log(x) = log1p(m - 1) + e*ln2.
    auto* i32 = i32t();
    LV* tiny = b_.CreateFCmpOLT(x, f32(1.17549435e-38));
    LV* xs = b_.CreateSelect(tiny, b_.CreateFMul(x, f32(8388608.0)), x);  // lift denormals
    LV* bits = b_.CreateBitCast(xs, i32);
    LV* e = b_.CreateSub(b_.CreateLShr(bits, 23), i32c(127));
    e = b_.CreateSelect(tiny, b_.CreateSub(e, i32c(23)), e);
    LV* m = b_.CreateBitCast(b_.CreateOr(b_.CreateAnd(bits, i32c(0x7fffff)), i32c(0x3f800000)), f32t());
    LV* big = b_.CreateFCmpOGT(m, f32(1.41421356237));
    m = b_.CreateSelect(big, b_.CreateFMul(m, f32(0.5)), m);
    e = b_.CreateSelect(big, b_.CreateAdd(e, i32c(1)), e);
    LV* ef = b_.CreateSIToFP(e, f32t());
    LV* f = b_.CreateFSub(m, f32(1.0));
    LV* z = b_.CreateFMul(f, f);
    LV* y = poly(f, {7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1, 1.4249322787E-1,
                     -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1});
    y = b_.CreateFMul(b_.CreateFMul(y, f), z);
    y = b_.CreateFAdd(y, b_.CreateFMul(ef, f32(-2.12194440e-4)));
    y = b_.CreateFSub(y, b_.CreateFMul(z, f32(0.5)));
    LV* r = b_.CreateFAdd(b_.CreateFAdd(f, y), b_.CreateFMul(ef, f32(0.693359375)));
    r = b_.CreateSelect(b_.CreateFCmpOEQ(x, f32(INFINITY)), x, r);
    r = b_.CreateSelect(b_.CreateFCmpOEQ(x, f32(0.0)), f32(-INFINITY), r);
    return b_.CreateSelect(b_.CreateFCmpULT(x, f32(0.0)), f32(NAN), r);  // also NaN in
  }

  LV* tanh(LV* x) {
    // Small |x|: odd Taylor series (no cancellation); otherwise 1 - 2/(e^{2|x|} + 1).
    LV* ax = intrinsic(llvm::Intrinsic::fabs, x);
    LV* x2 = b_.CreateFMul(x, x);
    LV* small = b_.CreateFMul(x, poly(x2, {62.0 / 2835, -17.0 / 315, 2.0 / 15, -1.0 / 3, 1.0}));
    LV* e = exp(b_.CreateFMul(ax, f32(2.0)));
    LV* big = b_.CreateFSub(f32(1.0), b_.CreateFDiv(f32(2.0), b_.CreateFAdd(e, f32(1.0))));
    big = b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, big, x);
    return b_.CreateSelect(b_.CreateFCmpOLT(ax, f32(0.1)), small, big);
  }

  LV* erf(LV* x) {
    // |x| < 0.5: Taylor series; else Abramowitz & Stegun 7.1.26 (abs. error < 1.5e-7).
    LV* ax = intrinsic(llvm::Intrinsic::fabs, x);
    LV* x2 = b_.CreateFMul(x, x);
    LV* small = b_.CreateFMul(b_.CreateFMul(x, f32(1.1283791670955126)),
                              poly(x2, {-1.0 / 1320, 1.0 / 216, -1.0 / 42, 1.0 / 10, -1.0 / 3, 1.0}));
    LV* t = b_.CreateFDiv(f32(1.0), b_.CreateFAdd(f32(1.0), b_.CreateFMul(ax, f32(0.3275911))));
    LV* p = b_.CreateFMul(t, poly(t, {1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592}));
    LV* big = b_.CreateFSub(f32(1.0), b_.CreateFMul(p, exp_saturating(b_.CreateFNeg(x2))));
    big = b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, big, x);
    return b_.CreateSelect(b_.CreateFCmpOLT(ax, f32(0.5)), small, big);
  }

  LV* sincos(LV* x, bool cosine) {
    // Reduce by pi/2 (three-part Cody-Waite), then the quadrant picks sin or cos of r.
    LV* n = intrinsic(llvm::Intrinsic::roundeven, b_.CreateFMul(x, f32(0.63661977236758134)));
    LV* r = b_.CreateFSub(x, b_.CreateFMul(n, f32(1.5703125)));
    r = b_.CreateFSub(r, b_.CreateFMul(n, f32(4.837512969970703125e-4)));
    r = b_.CreateFSub(r, b_.CreateFMul(n, f32(7.54978995489188216e-8)));
    LV* q = b_.CreateFPToSI(n, i32t());
    if (cosine) q = b_.CreateAdd(q, i32c(1));
    LV* r2 = b_.CreateFMul(r, r);
    LV* s = b_.CreateFAdd(r, b_.CreateFMul(b_.CreateFMul(r, r2), poly(r2, {-1.9515295891E-4, 8.3321608736E-3, -1.6666654611E-1})));
    LV* c = b_.CreateFAdd(f32(1.0), b_.CreateFMul(r2, poly(r2, {2.443315711809948E-5, -1.388731625493765E-3, 4.166664568298827E-2, -0.5})));
    LV* odd = b_.CreateICmpNE(b_.CreateAnd(q, i32c(1)), i32c(0));
    LV* v = b_.CreateSelect(odd, c, s);
    LV* neg = b_.CreateICmpNE(b_.CreateAnd(q, i32c(2)), i32c(0));
    return b_.CreateSelect(neg, b_.CreateFNeg(v), v);
  }

  LV* pow(LV* a, LV* e) {
    // |a|^e = exp(e * log|a|); a negative base needs an integer exponent.
    LV* r = exp(b_.CreateFMul(e, log(intrinsic(llvm::Intrinsic::fabs, a))));
    LV* e_int = b_.CreateFCmpOEQ(intrinsic(llvm::Intrinsic::floor, e), e);
    LV* half = b_.CreateFMul(e, f32(0.5));
    LV* e_odd = b_.CreateAnd(e_int, b_.CreateFCmpONE(intrinsic(llvm::Intrinsic::floor, half), half));
    LV* a_neg = b_.CreateFCmpOLT(a, f32(0.0));
    r = b_.CreateSelect(b_.CreateAnd(a_neg, e_odd), b_.CreateFNeg(r), r);
    r = b_.CreateSelect(b_.CreateAnd(a_neg, b_.CreateNot(e_int)), f32(NAN), r);
    LV* a0 = b_.CreateFCmpOEQ(a, f32(0.0));
    LV* zero_case = b_.CreateSelect(b_.CreateFCmpOGT(e, f32(0.0)), f32(0.0), f32(INFINITY));
    r = b_.CreateSelect(a0, zero_case, r);
    return b_.CreateSelect(b_.CreateFCmpOEQ(e, f32(0.0)), f32(1.0), r);
  }

  llvm::Module& m_;
  llvm::LLVMContext& ctx_;
  const KernelIR& k_;
  IRBuilder<> b_;
  llvm::Function* fn_ = nullptr;
  std::vector<LV*> buffers_;
  std::vector<llvm::MDNode*> scope_md_, noalias_md_;
  std::vector<LV*> vars_;            // loop variables (lane 0 for the vectorized one)
  std::map<const Value*, LV*> memo_;
  std::map<const Value*, bool> varies_memo_;  // value_varies, for the current lanes
  LV* acc_ = nullptr;
  // Row kernels: each stage's accumulated value after its loop over the row, and the
  // stages' values (KernelIR::RowStage::value), computed once per row.
  std::vector<LV*> stage_accs_;
  std::map<const Value*, LV*> row_values_;
  const RegisterTile* forced_tile_;
  const bool bf16_dot_;      // the target has vdpbf16ps (TargetSpec::bf16_products)
  const TargetSpec::Int8Dot int8_dot_;  // and vpdpbusd / sdot / vpmaddwd (TargetSpec::int8_dot)
  const std::string int8_dot_feature_;
  const bool x86_gathers_;  // AVX2 / AVX-512 gather 32-bit lanes (vpgatherdd)
  const bool hvx_block_loads_;  // Hexagon: vector_load by aligned blocks + valign
  // Depthwise tiles sized by the outputs between a row's borders (tile_costs): x86_64 (AVX2).
  const bool depthwise_border_model_;
  // A reduction over one dim (1x1 convs, matrix products) counts a step at 5 cycles at least,
  // not the multiply-add's 4-cycle latency (tile_costs): x86_64 (AVX2). There a tile of 8
  // accumulators (2 x 4, 4 x 2: two multiply-adds per cycle, no cycle to spare) ran 1x1 convs
  // 10-25% slower than 3 x 4 or 2 x 6 (edgec --tune on RegNetX-400MF picked 3 x 4 for each
  // 1x1 shape it confirmed; edgert-bench --profile); the windowed convs (r[16,3,3], the stem)
  // ran slower with the 5 (RegNetX's grouped convs 2 x 4 -> 2 x 5: +7%).
  const bool single_reduce_slack_;
  // Pixel reductions take tiles as wide as 16 vectors of a row (row_pass_vectors): x86_64
  // (AVX2); in several passes only over more than row_stream_bytes_ (twice the core's cache
  // share). AVX-512 (16 lanes, 32 registers) keeps the register tile until measured.
  const bool row_pass_tiles_;
  const int64_t row_stream_bytes_;
  // border_tiles_pay's limit on the multiply-adds per bounds test: 4, and on x86_64 (AVX2)
  // 8, so the stride-2 grouped convs of 8 channels per group (no padded copy) keep their
  // tiles off the borders too: RegNetY-400MF's took 7-23% less time (edgert-bench --profile,
  // median of 5). At 16 channels per group (RegNetX) that ran up to 23% slower.
  const int64_t border_work_limit_;
  DotGroups dot_;
  DepthwiseHvx depthwise_;
  // check_requant_params_once's results: a stack word, nonzero where a scale of arg
  // requant_scale_arg_ is outside the integer form's range (null: not checked), and the zero
  // point load's int32 and
  // exactness (requant_zp_load_ null: not computed).
  llvm::AllocaInst* requant_scales_bad_ = nullptr;
  int requant_scale_arg_ = -1;
  const Value* requant_zp_load_ = nullptr;
  std::pair<LV*, LV*> requant_zp_{nullptr, nullptr};
  // 1 where this call's zero point needs the signed integer form (null: the chain decides at
  // compile time, RequantChain::negatives_as_zero).
  llvm::AllocaInst* requant_negatives_signed_ = nullptr;
  const std::string target_features_;    // TargetSpec::llvm_features
  std::set<std::string> used_features_;  // CPU features of the instructions emitted (runtime names)  // edgec --tune's choice, or null
  bool half_;                        // F16 values computed in half (kHalfBlock)
  bool int_divide_;                  // TargetSpec::int_divide
  bool fp_rounding_;                 // TargetSpec::fp_rounding
  bool f64_arithmetic_;              // TargetSpec::f64_arithmetic
  bool f16_conversion_;              // TargetSpec::f16_conversion
  bool int_vectors_;                 // uses_int_vectors: the target's integer vectors
  bool byte_vectors_;                // uses_byte_vectors: HVX in byte lanes
  std::map<int, std::pair<LV*, LV*>> vlut_tables_;  // byte_table_lookup's table vectors, by arg
  int vector_lanes_;                 // lanes for the vectorized dim, from the target
  int vector_registers_;             // how many vector registers the target has
  int int8_dot_columns_;             // TargetSpec::int8_dot_columns: a packed panel's columns
  bool float_scalar_epilogue_;       // integer vectors, scalar float: emit_epilogue_lane_by_lane
  int64_t slice_budget_;             // bytes a tile's slice of shared data may take in cache
  int lanes_ = 1;                    // lanes of the element being emitted
  int vec_var_ = -1;                 // the vectorized loop variable, -1 when lanes_ == 1
  LV* vec_iota_ = nullptr;           // its value in each lane
  LV* lane_mask_ = nullptr;          // lanes that are real outputs (null: all)
  int unroll_dim_ = -1;              // output dim computed unroll_ at a time (-1: none)
  int unroll_ = 1;                   // outputs of the register tile along unroll_dim_
  int unroll_copies_ = 1;            // of them in the tile being emitted (1 at a border)
  int tile_vectors_ = 1;             // vectors of the register tile along the vectorized dim
  LV* tile_vec_base_ = nullptr;      // the vectorized var at the tile's first vector (tiles of several)
  int tile_lanes_ = 0;               // lanes of all the tile's vectors
  std::vector<int> reduce_order_;    // reduce dims (indices into reduce_extents), outermost first
  int transpose_dim_ = -1;           // output dim of blocks whose loads are transposed rows (-1: none)
  std::vector<const Value*> transposed_loads_;  // the loads read as rows along it
  LV* transpose_end_ = nullptr;       // inside such a block: where its dim ends (else null)
  int reduce_vec_ = -1;              // reduce variable vectorized instead of the output
  bool guards_known_true_ = false;   // emitting the copy of the reduction for inside tiles
  bool border_tile_ = false;         // emitting the reduction of a tile tile_inside_guards left guarded
  LV* unroll_end_ = nullptr;         // where it stops for this core
  LV* unroll_base_ = nullptr;        // the unrolled dim's first output in the tile being emitted
  bool transpose_tile_stores_ = false;  // stores_tile_transposed
  int interleave_dim_ = -1;          // choose_interleaved_stores (-1: none)
  llvm::Type* idx_ty_ = nullptr;
};

}  // namespace

std::vector<std::string> emit_kernel(llvm::Module& module, const KernelIR& kernel, const TargetSpec& target,
                                     const RegisterTile* tile) {
  return Emitter(module, kernel, target, tile).emit();
}

std::vector<RegisterTile> register_tiles_by_cost(const KernelIR& kernel, const TargetSpec& target) {
  llvm::LLVMContext ctx;
  llvm::Module scratch("edgec_plan", ctx);  // the Emitter's home; nothing is emitted into it
  return Emitter(scratch, kernel, target).allowed_tiles();
}

std::vector<int> output_loop_order(const KernelIR& kernel, const TargetSpec& target) {
  llvm::LLVMContext ctx;
  llvm::Module scratch("edgec_plan", ctx);
  return Emitter(scratch, kernel, target).planned_output_order();
}

}  // namespace edgec
