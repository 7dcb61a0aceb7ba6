// Kernel IR -> LLVM IR. Every kernel becomes
//   void name(void* const* args, int32_t core_id, int32_t num_cores)
// that loads its buffer pointers, takes its share of the outermost parallel loop, and
// runs the loop nest. Math that would call libm (exp, log, tanh, erf, sin, cos, pow)
// is expanded inline so that the code needs no dynamic linker.
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <cmath>
#include <functional>
#include <map>

#include "codegen/llvm_emit.h"

namespace edgec {

namespace {

using llvm::IRBuilder;
using LV = llvm::Value;

bool is_unsigned(DType t) { return t == DType::U8 || t == DType::U16 || t == DType::U32 || t == DType::U64 || t == DType::Bool; }

class Emitter {
 public:
  Emitter(llvm::Module& m, const KernelIR& k) : m_(m), ctx_(m.getContext()), k_(k), b_(ctx_) {}

  void emit() {
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
    llvm::Argument* core = fn_->getArg(1);
    llvm::Argument* cores = fn_->getArg(2);
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

    // Outer loops over the output; the first dim longer than 1 is split across cores.
    const Shape& out = k_.out_shape;
    int par = 0;
    while (par < static_cast<int>(out.size()) && out[par] == 1) ++par;
    std::function<void(int)> loop_out = [&](int d) {
      if (d == static_cast<int>(out.size())) {
        emit_element();
        return;
      }
      if (out[d] == 1) {
        loop_out(d + 1);
        return;
      }
      LV* lo = i64(0);
      LV* hi = i64(out[d]);
      if (d == par) {
        LV* c = b_.CreateSExt(core, b_.getInt64Ty());
        LV* n = b_.CreateSExt(cores, b_.getInt64Ty());
        lo = b_.CreateUDiv(b_.CreateMul(c, hi), n);
        hi = b_.CreateUDiv(b_.CreateMul(b_.CreateAdd(c, i64(1)), hi), n);
      }
      emit_loop(lo, hi, [&](LV* iv) {
        vars_[d] = iv;
        loop_out(d + 1);
      });
    };
    loop_out(0);
    b_.CreateRetVoid();
  }

 private:
  LV* i64(int64_t v) { return b_.getInt64(static_cast<uint64_t>(v)); }

  void emit_loop(LV* lo, LV* hi, const std::function<void(LV*)>& body) {
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    auto* header = llvm::BasicBlock::Create(ctx_, "loop", fn_);
    auto* bodyb = llvm::BasicBlock::Create(ctx_, "body", fn_);
    auto* exit = llvm::BasicBlock::Create(ctx_, "exit", fn_);
    b_.CreateBr(header);
    b_.SetInsertPoint(header);
    llvm::PHINode* iv = b_.CreatePHI(b_.getInt64Ty(), 2);
    iv->addIncoming(lo, pre);
    b_.CreateCondBr(b_.CreateICmpSLT(iv, hi), bodyb, exit);
    b_.SetInsertPoint(bodyb);
    body(iv);
    LV* next = b_.CreateAdd(iv, i64(1), "", true, true);
    iv->addIncoming(next, b_.GetInsertBlock());
    b_.CreateBr(header);
    b_.SetInsertPoint(exit);
  }

  // ---- types ----
  llvm::Type* compute_type(DType t) {
    switch (t) {
      case DType::F32: case DType::F16: return b_.getFloatTy();
      case DType::F64: return b_.getDoubleTy();
      case DType::Bool: return b_.getInt1Ty();
      default: return b_.getIntNTy(static_cast<unsigned>(dtype_size(t) * 8));
    }
  }
  llvm::Type* storage_type(DType t) {
    if (t == DType::F16) return b_.getHalfTy();
    if (t == DType::Bool) return b_.getInt8Ty();
    return compute_type(t);
  }

  // ---- one output element ----
  void emit_element() {
    std::map<const Value*, LV*> outer_memo;
    LV* acc_value = nullptr;
    if (k_.has_reduce()) {
      llvm::Type* at = compute_type(k_.acc_dtype);
      llvm::AllocaInst* acc;
      {
        // Allocas belong in the entry block so mem2reg turns them into registers.
        IRBuilder<> eb(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
        acc = eb.CreateAlloca(at);
      }
      b_.CreateStore(reduce_identity(at), acc);
      int first = static_cast<int>(k_.out_shape.size());
      std::function<void(int)> loop_red = [&](int j) {
        if (j == static_cast<int>(k_.reduce_extents.size())) {
          memo_.clear();
          LV* x = value(k_.reduce_body);
          LV* a = b_.CreateLoad(at, acc);
          b_.CreateStore(combine(a, x, k_.acc_dtype), acc);
          return;
        }
        if (k_.reduce_extents[j] == 1) {
          loop_red(j + 1);
          return;
        }
        emit_loop(i64(0), i64(k_.reduce_extents[j]), [&](LV* iv) {
          vars_[first + j] = iv;
          loop_red(j + 1);
        });
      };
      loop_red(0);
      acc_value = b_.CreateLoad(at, acc);
    }
    memo_.clear();
    acc_ = acc_value;
    LV* r = value(k_.result);
    store(0, output_index(), r, k_.out_dtype);
  }

  Index output_index() {
    Index flat(0);
    int64_t stride = 1;
    for (int d = static_cast<int>(k_.out_shape.size()) - 1; d >= 0; --d) {
      flat = flat + Index::var(d, k_.out_shape[d]) * stride;
      stride *= k_.out_shape[d];
    }
    return flat;
  }

  LV* reduce_identity(llvm::Type* t) {
    if (k_.reduce_op == Op::ReduceSum) return llvm::Constant::getNullValue(t);
    if (t->isFloatingPointTy()) return llvm::ConstantFP::getInfinity(t, true);
    if (is_unsigned(k_.acc_dtype)) return llvm::Constant::getNullValue(t);
    return llvm::ConstantInt::get(t, llvm::APInt::getSignedMinValue(t->getIntegerBitWidth()));
  }
  LV* combine(LV* a, LV* x, DType t) {
    if (k_.reduce_op == Op::ReduceSum) return t == DType::Bool ? b_.CreateOr(a, x) : add(a, x);
    return max(a, x, t);
  }

  // ---- index math ----
  LV* index(const Index& ix) {
    LV* r = i64(ix.constant());
    for (const auto& [atom, coef] : ix.terms()) {
      LV* a = this->atom(*atom);
      r = b_.CreateAdd(r, coef == 1 ? a : b_.CreateMul(a, i64(coef)));
    }
    return r;
  }
  LV* atom(const Atom& a) {
    if (a.kind == Atom::Kind::Var) return vars_[a.var];
    LV* x = index(a.inner);
    LV* k = i64(a.divisor);
    if (a.inner.min() >= 0) return a.kind == Atom::Kind::Div ? b_.CreateUDiv(x, k) : b_.CreateURem(x, k);
    // Floor semantics for a dividend that can be negative.
    LV* q = b_.CreateSDiv(x, k);
    LV* r = b_.CreateSRem(x, k);
    LV* neg = b_.CreateICmpSLT(r, i64(0));
    if (a.kind == Atom::Kind::Div) return b_.CreateSub(q, b_.CreateZExt(neg, b_.getInt64Ty()));
    return b_.CreateAdd(r, b_.CreateSelect(neg, k, i64(0)));
  }
  LV* guards_hold(const std::vector<Guard>& guards) {
    LV* ok = b_.getTrue();
    for (const Guard& g : guards) {
      LV* x = index(g.index);
      if (g.index.min() < g.lo) ok = b_.CreateAnd(ok, b_.CreateICmpSGE(x, i64(g.lo)));
      if (g.index.max() >= g.hi) ok = b_.CreateAnd(ok, b_.CreateICmpSLT(x, i64(g.hi)));
    }
    return ok;
  }

  // ---- memory ----
  void annotate(llvm::Instruction* inst, int arg) {
    inst->setMetadata(llvm::LLVMContext::MD_alias_scope, scope_md_[arg]);
    inst->setMetadata(llvm::LLVMContext::MD_noalias, noalias_md_[arg]);
  }
  LV* load(int arg, LV* idx, DType t) {
    llvm::Type* st = storage_type(t);
    LV* p = b_.CreateInBoundsGEP(st, buffers_[arg], idx);
    auto* l = b_.CreateAlignedLoad(st, p, llvm::Align(dtype_size(t)));
    annotate(l, arg);
    if (t == DType::F16) return b_.CreateFPExt(l, b_.getFloatTy());
    if (t == DType::Bool) return b_.CreateICmpNE(l, b_.getInt8(0));
    return l;
  }
  void store(int arg, const Index& ix, LV* v, DType t) {
    llvm::Type* st = storage_type(t);
    if (t == DType::F16) v = b_.CreateFPTrunc(v, st);
    if (t == DType::Bool) v = b_.CreateZExt(v, st);
    LV* p = b_.CreateInBoundsGEP(st, buffers_[arg], index(ix));
    annotate(b_.CreateAlignedStore(v, p, llvm::Align(dtype_size(t))), arg);
  }

  // ---- values ----
  LV* value(const Value* v) {
    if (auto it = memo_.find(v); it != memo_.end()) return it->second;
    LV* r = compute(v);
    memo_[v] = r;
    return r;
  }

  LV* constant(double c, DType t) {
    llvm::Type* ty = compute_type(t);
    if (ty->isFloatingPointTy()) return llvm::ConstantFP::get(ty, t == DType::F16 ? static_cast<float>(c) : c);
    if (t == DType::Bool) return b_.getInt1(c != 0.0);
    if (is_unsigned(t)) return llvm::ConstantInt::get(ty, static_cast<uint64_t>(c));
    return llvm::ConstantInt::get(ty, static_cast<uint64_t>(static_cast<int64_t>(c)), true);
  }

  LV* compute(const Value* v) {
    switch (v->kind) {
      case Value::Kind::Const: return constant(v->constant, v->dtype);
      case Value::Kind::Accumulator: return acc_;
      case Value::Kind::InBounds: return guards_hold(v->guards);
      case Value::Kind::Load: {
        LV* idx = index(v->index);
        if (!v->guards.empty()) idx = b_.CreateSelect(guards_hold(v->guards), idx, i64(0));
        return load(v->arg, idx, v->dtype);
      }
      case Value::Kind::Alu: break;
    }
    std::vector<LV*> s;
    for (const Value* x : v->srcs) s.push_back(value(x));
    DType in = v->srcs.empty() ? v->dtype : v->srcs[0]->dtype;
    bool fp = compute_type(in)->isFloatingPointTy();
    switch (v->op) {
      case Op::Neg: return fp ? b_.CreateFNeg(s[0]) : b_.CreateNeg(s[0]);
      case Op::Exp: return math1(s[0], [&](LV* x) { return exp(x); });
      case Op::Log: return math1(s[0], [&](LV* x) { return log(x); });
      case Op::Tanh: return math1(s[0], [&](LV* x) { return tanh(x); });
      case Op::Erf: return math1(s[0], [&](LV* x) { return erf(x); });
      case Op::Sin: return math1(s[0], [&](LV* x) { return sincos(x, false); });
      case Op::Cos: return math1(s[0], [&](LV* x) { return sincos(x, true); });
      case Op::Sqrt: return intrinsic(llvm::Intrinsic::sqrt, s[0]);
      case Op::Recip: return b_.CreateFDiv(llvm::ConstantFP::get(s[0]->getType(), 1.0), s[0]);
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

  LV* add(LV* a, LV* b) { return a->getType()->isFloatingPointTy() ? b_.CreateFAdd(a, b) : b_.CreateAdd(a, b); }
  LV* max(LV* a, LV* b, DType t) {
    if (a->getType()->isFloatingPointTy()) return b_.CreateSelect(b_.CreateFCmpUGT(a, b), a, b);  // NaN in a wins
    if (t == DType::Bool) return b_.CreateOr(a, b);
    return b_.CreateSelect(is_unsigned(t) ? b_.CreateICmpUGT(a, b) : b_.CreateICmpSGT(a, b), a, b);
  }
  LV* min(LV* a, LV* b, DType t) {
    if (a->getType()->isFloatingPointTy()) return b_.CreateSelect(b_.CreateFCmpULT(a, b), a, b);
    if (t == DType::Bool) return b_.CreateAnd(a, b);
    return b_.CreateSelect(is_unsigned(t) ? b_.CreateICmpULT(a, b) : b_.CreateICmpSLT(a, b), a, b);
  }
  // Integer division or remainder, C semantics; x/0 gives 0 instead of trapping.
  LV* int_div(LV* a, LV* b, DType t, bool rem) {
    LV* zero = llvm::Constant::getNullValue(b->getType());
    LV* is0 = b_.CreateICmpEQ(b, zero);
    LV* safe = b_.CreateSelect(is0, llvm::ConstantInt::get(b->getType(), 1), b);
    LV* r = is_unsigned(t) ? (rem ? b_.CreateURem(a, safe) : b_.CreateUDiv(a, safe))
                           : (rem ? b_.CreateSRem(a, safe) : b_.CreateSDiv(a, safe));
    return b_.CreateSelect(is0, zero, r);
  }

  LV* cast(LV* x, DType from, DType to) {
    llvm::Type* tt = compute_type(to);
    llvm::Type* ft = x->getType();
    if (to == DType::Bool) {
      return ft->isFloatingPointTy() ? b_.CreateFCmpUNE(x, llvm::ConstantFP::get(ft, 0.0))
                                     : b_.CreateICmpNE(x, llvm::Constant::getNullValue(ft));
    }
    if (ft == tt) {
      // F16 computes in float: rounding to half precision is what a cast to F16 means.
      if (to == DType::F16 && from != DType::F16) return b_.CreateFPExt(b_.CreateFPTrunc(x, b_.getHalfTy()), tt);
      return x;
    }
    if (ft->isFloatingPointTy() && tt->isFloatingPointTy()) {
      LV* r = b_.CreateFPCast(x, tt);
      // double -> half has no instruction (LLVM would call __truncdfhf2): go through float.
      if (to == DType::F16) r = b_.CreateFPExt(b_.CreateFPTrunc(r, b_.getHalfTy()), tt);
      return r;
    }
    if (ft->isFloatingPointTy()) {
      // Saturate first: out-of-range float to int is undefined in LLVM.
      return is_unsigned(to) ? b_.CreateIntrinsic(llvm::Intrinsic::fptoui_sat, {tt, ft}, {x})
                             : b_.CreateIntrinsic(llvm::Intrinsic::fptosi_sat, {tt, ft}, {x});
    }
    if (tt->isFloatingPointTy()) {
      LV* r = is_unsigned(from) ? b_.CreateUIToFP(x, tt) : b_.CreateSIToFP(x, tt);
      if (to == DType::F16) r = b_.CreateFPExt(b_.CreateFPTrunc(r, b_.getHalfTy()), tt);
      return r;
    }
    return b_.CreateIntCast(x, tt, !is_unsigned(from));
  }

  LV* intrinsic(llvm::Intrinsic::ID id, LV* x) { return b_.CreateUnaryIntrinsic(id, x); }

  // Transcendentals are computed in float; double values round-trip through float.
  LV* math1(LV* x, const std::function<LV*(LV*)>& f) {
    if (x->getType()->isDoubleTy()) return b_.CreateFPExt(f(b_.CreateFPTrunc(x, b_.getFloatTy())), b_.getDoubleTy());
    return f(x);
  }
  LV* math2(LV* x, LV* y, const std::function<LV*(LV*, LV*)>& f) {
    if (x->getType()->isDoubleTy())
      return b_.CreateFPExt(f(b_.CreateFPTrunc(x, b_.getFloatTy()), b_.CreateFPTrunc(y, b_.getFloatTy())), b_.getDoubleTy());
    return f(x, y);
  }
  LV* f32(double c) { return llvm::ConstantFP::get(b_.getFloatTy(), c); }
  LV* poly(LV* x, std::initializer_list<double> coefs) {  // Horner, highest degree first
    LV* r = nullptr;
    for (double c : coefs) r = r ? b_.CreateFAdd(b_.CreateFMul(r, x), f32(c)) : f32(c);
    return r;
  }
  // 2^n for an integer-valued float n in [-126, 127].
  LV* exp2i(LV* n) {
    LV* bits = b_.CreateShl(b_.CreateAdd(b_.CreateFPToSI(n, b_.getInt32Ty()), b_.getInt32(127)), 23);
    return b_.CreateBitCast(bits, b_.getFloatTy());
  }

  LV* exp(LV* x) {
    // e^x = 2^n * e^r with n = round(x / ln2), |r| <= ln2/2; Cody-Waite split of ln2.
    LV* xc = b_.CreateSelect(b_.CreateFCmpOGT(x, f32(88.8)), f32(88.8), x);
    xc = b_.CreateSelect(b_.CreateFCmpOLT(xc, f32(-87.33654)), f32(-87.33654), xc);
    LV* n = intrinsic(llvm::Intrinsic::roundeven, b_.CreateFMul(xc, f32(1.44269504088896341)));
    LV* r = b_.CreateFSub(xc, b_.CreateFMul(n, f32(0.693359375)));
    r = b_.CreateFSub(r, b_.CreateFMul(n, f32(-2.12194440e-4)));
    LV* p = poly(r, {1.9875691500E-4, 1.3981999507E-3, 8.3334519073E-3, 4.1665795894E-2, 1.6666665459E-1, 5.0000001201E-1});
    p = b_.CreateFAdd(b_.CreateFAdd(b_.CreateFMul(p, b_.CreateFMul(r, r)), r), f32(1.0));
    // n can be 128 near the overflow threshold: scale in two steps.
    LV* n1 = b_.CreateSelect(b_.CreateFCmpOGT(n, f32(127.0)), f32(127.0), n);
    LV* y = b_.CreateFMul(p, exp2i(n1));
    y = b_.CreateSelect(b_.CreateFCmpOGT(n, n1), b_.CreateFMul(y, f32(2.0)), y);
    y = b_.CreateSelect(b_.CreateFCmpOLT(x, f32(-87.33654)), f32(0.0), y);
    return b_.CreateSelect(b_.CreateFCmpUNO(x, x), x, y);
  }

  LV* log(LV* x) {
    // x = m * 2^e with m in [sqrt(1/2), sqrt(2)); log(x) = log1p(m - 1) + e*ln2.
    auto* i32 = b_.getInt32Ty();
    LV* tiny = b_.CreateFCmpOLT(x, f32(1.17549435e-38));
    LV* xs = b_.CreateSelect(tiny, b_.CreateFMul(x, f32(8388608.0)), x);  // lift denormals
    LV* bits = b_.CreateBitCast(xs, i32);
    LV* e = b_.CreateSub(b_.CreateLShr(bits, 23), b_.getInt32(127));
    e = b_.CreateSelect(tiny, b_.CreateSub(e, b_.getInt32(23)), e);
    LV* m = b_.CreateBitCast(b_.CreateOr(b_.CreateAnd(bits, b_.getInt32(0x7fffff)), b_.getInt32(0x3f800000)), b_.getFloatTy());
    LV* big = b_.CreateFCmpOGT(m, f32(1.41421356237));
    m = b_.CreateSelect(big, b_.CreateFMul(m, f32(0.5)), m);
    e = b_.CreateSelect(big, b_.CreateAdd(e, b_.getInt32(1)), e);
    LV* ef = b_.CreateSIToFP(e, b_.getFloatTy());
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
    LV* big = b_.CreateFSub(f32(1.0), b_.CreateFMul(p, exp(b_.CreateFNeg(x2))));
    big = b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, big, x);
    return b_.CreateSelect(b_.CreateFCmpOLT(ax, f32(0.5)), small, big);
  }

  LV* sincos(LV* x, bool cosine) {
    // Reduce by pi/2 (three-part Cody-Waite), then the quadrant picks sin or cos of r.
    LV* n = intrinsic(llvm::Intrinsic::roundeven, b_.CreateFMul(x, f32(0.63661977236758134)));
    LV* r = b_.CreateFSub(x, b_.CreateFMul(n, f32(1.5703125)));
    r = b_.CreateFSub(r, b_.CreateFMul(n, f32(4.837512969970703125e-4)));
    r = b_.CreateFSub(r, b_.CreateFMul(n, f32(7.54978995489188216e-8)));
    LV* q = b_.CreateFPToSI(n, b_.getInt32Ty());
    if (cosine) q = b_.CreateAdd(q, b_.getInt32(1));
    LV* r2 = b_.CreateFMul(r, r);
    LV* s = b_.CreateFAdd(r, b_.CreateFMul(b_.CreateFMul(r, r2), poly(r2, {-1.9515295891E-4, 8.3321608736E-3, -1.6666654611E-1})));
    LV* c = b_.CreateFAdd(f32(1.0), b_.CreateFMul(r2, poly(r2, {2.443315711809948E-5, -1.388731625493765E-3, 4.166664568298827E-2, -0.5})));
    LV* odd = b_.CreateICmpNE(b_.CreateAnd(q, b_.getInt32(1)), b_.getInt32(0));
    LV* v = b_.CreateSelect(odd, c, s);
    LV* neg = b_.CreateICmpNE(b_.CreateAnd(q, b_.getInt32(2)), b_.getInt32(0));
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
  std::vector<LV*> vars_;
  std::map<const Value*, LV*> memo_;
  LV* acc_ = nullptr;
};

}  // namespace

void emit_kernel(llvm::Module& module, const KernelIR& kernel) { Emitter(module, kernel).emit(); }

}  // namespace edgec
