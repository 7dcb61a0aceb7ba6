#include "codegen/llvm_backend.h"

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/BinaryFormat/ELF.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/StructuralHash.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/TargetParser/Triple.h>
#include <llvm/Transforms/Utils/FunctionComparator.h>
#include <llvm/Transforms/Utils/LoopUtils.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <set>

#include "bundle_generated.h"
#include "code_directory.h"
#include "codegen/llvm_emit.h"
#include "kernel_abi.h"

namespace edgec {

namespace {

// Hexagon's two scalar bit-field passes, "generate insert instructions" and "bit
// simplification", took 40 of llc's 64 s on the int8 MobileNetV2 (18 MB of IR, mostly HVX
// kernels; llc-19 -time-passes) and, off, its packets per run fell 0.6% (count.py: 19.67 M
// -> 19.55 M): they look for scalar bit-field idioms our kernels hardly have. Set once per process
// through LLVM's option registry; a later LLVM without these options just keeps them on.
//
// Hexagon Vector Combine's alignment part ("hvc-va": merges unaligned HVX loads and stores)
// orders something by address in LLVM 19: with address-space randomization, llc-19 on one
// kernel of the int8 MobileNetV2 gave 2-3 different objects in 3-8 runs from identical IR
// (the first pass whose output differed, by -print-after-all, was hexagon-vc), so two compiles
// of a model gave different bundles. Off, 14 of 14 runs were identical (and that kernel's code
// 3 % smaller).
//
// Three more cost time and give our kernels nothing (llc-19 -time-passes on the int8
// MobileNetV2's IR, one function per distinct kernel: 17 s in all): "Optimize addressing
// mode of load/store" (9%) and "Hexagon Loop Rescheduling" (7%) left the object byte for byte
// the same, and "Hexagon RDF optimizations" (15%: copy propagation and dead code over a
// register data-flow graph) off, its packets per run fell 0.04%
// (qemu_insn_count/count.py: 11,471,850 -> 11,466,880; BENCHMARKS.md "Hexagon compile time").
void set_hexagon_codegen_options() {
  llvm::StringMap<llvm::cl::Option*>& options = llvm::cl::getRegisteredOptions();
  auto set = [&](const char* name, const char* value) {
    auto it = options.find(name);
    if (it != options.end()) it->second->addOccurrence(0, name, value);
  };
  for (const char* name : {"hexagon-insert", "hexagon-bit", "hvc-va", "hexagon-loop-resched", "rdf-opt"}) set(name, "false");
  set("disable-hexagon-amodeopt", "true");
  // The machine pipeliner's window scheduler (LLVM 19 runs it on a loop the modulo scheduler
  // gave up on) crashed edgec with SIGSEGV in LiveIntervals::handleMove on an int8 attention
  // product's 8 rows over an odd depth (test_int8.py attention_products_of_computed_bytes on
  // hexagon-v66). Off, the modulo scheduler still pipelines what it can.
  set("window-sched", "off");
}

void init_llvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Only the back ends of edgec's targets (codegen/target.cc): a self-contained build
    // (EDGE_SELF_CONTAINED) links just these from LLVM's static archives.
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
    LLVMInitializeAArch64TargetInfo();
    LLVMInitializeAArch64Target();
    LLVMInitializeAArch64TargetMC();
    LLVMInitializeAArch64AsmPrinter();
    LLVMInitializeHexagonTargetInfo();
    LLVMInitializeHexagonTarget();
    LLVMInitializeHexagonTargetMC();
    LLVMInitializeHexagonAsmPrinter();
    set_hexagon_codegen_options();
  });
}

std::unique_ptr<llvm::TargetMachine> make_target_machine(const TargetSpec& t, int opt_level) {
  init_llvm();
  std::string err;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(t.triple, err);
  if (!target) throw CompileError("LLVM has no back end for " + t.triple + ": " + err);
  llvm::TargetOptions opts;
  // Position-independent, small code model: every reference inside the blob is
  // PC-relative, so the runtime can load it anywhere with a plain copy.
  auto level = opt_level >= 3 ? llvm::CodeGenOptLevel::Aggressive
             : opt_level == 2 ? llvm::CodeGenOptLevel::Default
             : opt_level == 1 ? llvm::CodeGenOptLevel::Less : llvm::CodeGenOptLevel::None;
  return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
      t.triple, t.cpu, t.llvm_features, opts, llvm::Reloc::PIC_, llvm::CodeModel::Small, level));
}

void optimize(llvm::Module& m, llvm::TargetMachine& tm, int opt_level) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions pto;
  pto.LoopVectorization = opt_level >= 2;
  pto.SLPVectorization = opt_level >= 2;
  llvm::PassBuilder pb(&tm, pto);
  // No library functions exist where the code runs: stop LLVM from turning loops
  // into memset/memcpy calls or math into libm calls.
  llvm::TargetLibraryInfoImpl tlii(llvm::Triple(m.getTargetTriple()));
  tlii.disableAllFunctions();
  fam.registerPass([&] { return llvm::TargetLibraryAnalysis(tlii); });
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  auto level = opt_level >= 3 ? llvm::OptimizationLevel::O3
             : opt_level == 2 ? llvm::OptimizationLevel::O2
             : opt_level == 1 ? llvm::OptimizationLevel::O1 : llvm::OptimizationLevel::O0;
  llvm::ModulePassManager mpm = opt_level == 0 ? pb.buildO0DefaultPipeline(level) : pb.buildPerModuleDefaultPipeline(level);
  mpm.run(m, mam);
}

// LLVM 19's Hexagon back end software-pipelines innermost loops: swing modulo scheduling,
// then, where that fails, the window scheduler, which reschedules three copies of the loop
// body at several offsets and grows steeply with its length. On our unrolled HVX conv/gemm/pool
// loops it took most of edgec's time (perf: WindowScheduler::restoreTripleMBB): the int8
// EfficientNet-B0 compiled in 700-990 s, the int8 suite's squeeze_excite block in 26 s. Its
// options bound the search, not the loop's length (-window-search-num=1: 14 s), and
// -window-sched=off (4.4 s) costs MobileNetV2 +1.1% packets. So loops longer than this many IR
// instructions (after optimization) get llvm.loop.pipeline.disable, which skips both
// schedulers for them. At 100: squeeze_excite 6.2 s, EfficientNet-B0 190 s of CPU, MobileNetV2's
// packets +0.002% (count.py, test_insn_budget.py: 12,831,812 -> 12,832,023); at 60:
// EfficientNet-B0 147 s, MobileNetV2 12,802,097 packets (-0.2%: pipelining did not pay there).
constexpr size_t kHexagonPipelinedLoopLimit = 60;

// Marks each innermost loop of more than max_instructions instructions not to be software
// pipelined.
void no_software_pipelining_of_big_loops(llvm::Module& m, size_t max_instructions) {
  for (llvm::Function& f : m) {
    if (f.isDeclaration()) continue;
    llvm::DominatorTree dt(f);
    llvm::LoopInfo li(dt);
    for (llvm::Loop* top : li)
      for (llvm::Loop* l : llvm::depth_first(top)) {
        if (!l->isInnermost()) continue;
        size_t n = 0;
        for (llvm::BasicBlock* bb : l->blocks()) n += bb->size();
        if (n <= max_instructions) continue;
        llvm::addStringMetadataToLoop(l, "llvm.loop.pipeline.disable", 1);
      }
  }
}

std::vector<uint8_t> emit_object(llvm::Module& m, llvm::TargetMachine& tm) {
  llvm::SmallVector<char, 0> buf;
  llvm::raw_svector_ostream os(buf);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::ObjectFile))
    throw CompileError("LLVM cannot emit object code for " + m.getTargetTriple());
  pm.run(m);
  return std::vector<uint8_t>(buf.begin(), buf.end());
}

template <typename T>
T take(llvm::Expected<T> e, const std::string& what) {
  if (!e) throw CompileError(what + ": " + llvm::toString(e.takeError()));
  return std::move(*e);
}

void put32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }
uint32_t get32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Hexagon (RELA): an immediate is scattered over the instruction word by a mask, value bits
// from the lowest into the mask's set bits from the lowest; the field is zero in the object.
// A constant-extended operand (`##x`) is an immext word carrying bits 31..6 (the _X
// relocation of the extender, value >> 6) followed by the instruction with bits 5..0 (the
// *_X / 6_PCREL_X relocation of the instruction, value & 0x3f). Every value here is
// PC-relative, P being the word the relocation patches (the assembler's addend accounts for
// the extender's place). Absolute, GOT and TLS forms would tie the code to its load address
// or to a dynamic linker, and are refused.
uint32_t hexagon_scatter(uint32_t mask, uint32_t value) {
  uint32_t out = 0;
  for (int bit = 0; bit < 32; ++bit)
    if (mask >> bit & 1) {
      out |= (value & 1) << bit;
      value >>= 1;
    }
  return out;
}

// Where the 6 low bits of a constant-extended operand go, by instruction class (the
// Hexagon ABI's R_HEX_6_X table; a duplex's sub-instruction keeps them in bits 25..20).
uint32_t hexagon_mask_6(uint32_t insn) {
  if ((insn & 0xc000) == 0) return 0x03f00000;  // duplex: parse bits 15..14 are zero
  static const uint32_t table[][2] = {
      {0x38000000, 0x0000201f}, {0x39000000, 0x0000201f}, {0x3e000000, 0x00001f80}, {0x3f000000, 0x00001f80},
      {0x40000000, 0x000020f8}, {0x41000000, 0x000007e0}, {0x42000000, 0x000020f8}, {0x43000000, 0x000007e0},
      {0x44000000, 0x000020f8}, {0x45000000, 0x000007e0}, {0x46000000, 0x000020f8}, {0x47000000, 0x000007e0},
      {0x6a000000, 0x00001f80}, {0x7c000000, 0x001f2000}, {0x9a000000, 0x00000f60}, {0x9b000000, 0x00000f60},
      {0x9c000000, 0x00000f60}, {0x9d000000, 0x00000f60}, {0x9f000000, 0x001f0100}, {0xab000000, 0x0000003f},
      {0xad000000, 0x0000003f}, {0xaf000000, 0x00030078}, {0xd7000000, 0x006020e0}, {0xd8000000, 0x006020e0},
      {0xdb000000, 0x006020e0}, {0xdf000000, 0x006020e0}};
  for (const auto& row : table)
    if ((insn & 0xff000000) == row[0]) return row[1];
  return 0;
}

template <typename Fail, typename CheckRange>
void apply_hexagon_relocation(uint32_t type, uint8_t* loc, int64_t v, const Fail& fail, const CheckRange& check_range) {
  using namespace llvm::ELF;
  const uint32_t insn = get32(loc);
  const uint32_t u = static_cast<uint32_t>(v);
  auto branch = [&](uint32_t mask, int bits) {  // word offset, `bits` wide
    if (v % 4 != 0) fail("branch target not word-aligned");
    check_range(v >> 2, bits);
    put32(loc, insn | hexagon_scatter(mask, static_cast<uint32_t>(v >> 2)));
  };
  switch (type) {
    case R_HEX_B22_PCREL:
    case R_HEX_PLT_B22_PCREL: return branch(0x01ff3ffe, 22);
    case R_HEX_B15_PCREL: return branch(0x00df20fe, 15);
    case R_HEX_B13_PCREL: return branch(0x00202ffe, 13);
    case R_HEX_B9_PCREL: return branch(0x003000fe, 9);
    case R_HEX_B7_PCREL: return branch(0x00001f18, 7);
    case R_HEX_B32_PCREL_X: put32(loc, insn | hexagon_scatter(0x0fff3fff, u >> 6)); return;
    case R_HEX_B22_PCREL_X: put32(loc, insn | hexagon_scatter(0x01ff3ffe, u & 0x3f)); return;
    case R_HEX_B15_PCREL_X: put32(loc, insn | hexagon_scatter(0x00df20fe, u & 0x3f)); return;
    case R_HEX_B13_PCREL_X: put32(loc, insn | hexagon_scatter(0x00202ffe, u & 0x3f)); return;
    case R_HEX_B9_PCREL_X: put32(loc, insn | hexagon_scatter(0x003000fe, u & 0x3f)); return;
    case R_HEX_B7_PCREL_X: put32(loc, insn | hexagon_scatter(0x00001f18, u & 0x3f)); return;
    case R_HEX_6_PCREL_X: {
      const uint32_t mask = hexagon_mask_6(insn);
      if (mask == 0) fail("instruction word " + std::to_string(insn) + " has no known 6-bit operand");
      put32(loc, insn | hexagon_scatter(mask, u & 0x3f));
      return;
    }
    case R_HEX_32_PCREL: check_range(v, 32); put32(loc, u); return;
    default: fail("unsupported for hexagon (only PC-relative relocations keep the code position-independent)");
  }
}

// Applies one relocation at blob offset `at`: S + A is the target address, P = at.
void apply_relocation(uint16_t machine, uint32_t type, uint8_t* blob, uint64_t at, int64_t s_plus_a,
                      const std::string& symbol) {
  int64_t p = static_cast<int64_t>(at);
  uint8_t* loc = blob + at;
  auto fail = [&](const std::string& why) {
    throw CompileError("linking kernels: relocation type " + std::to_string(type) + " against '" + symbol + "': " + why);
  };
  auto check_range = [&](int64_t v, int bits) {
    if (v < -(int64_t{1} << (bits - 1)) || v >= (int64_t{1} << (bits - 1))) fail("out of range");
  };
  if (machine == llvm::ELF::EM_X86_64) {
    switch (type) {
      case llvm::ELF::R_X86_64_PC32:
      case llvm::ELF::R_X86_64_PLT32: {
        int64_t v = s_plus_a - p;
        check_range(v, 32);
        put32(loc, static_cast<uint32_t>(v));
        return;
      }
      case llvm::ELF::R_X86_64_PC64: {
        int64_t v = s_plus_a - p;
        std::memcpy(loc, &v, 8);
        return;
      }
      default: fail("not PC-relative, the code would depend on its load address");
    }
  }
  if (machine == llvm::ELF::EM_AARCH64) {
    uint32_t insn = get32(loc);
    switch (type) {
      case llvm::ELF::R_AARCH64_ADR_PREL_PG_HI21: {  // the blob is loaded page-aligned
        int64_t v = ((s_plus_a & ~int64_t{0xfff}) - (p & ~int64_t{0xfff})) >> 12;
        check_range(v, 21);
        uint32_t imm = static_cast<uint32_t>(v) & 0x1fffff;
        insn = (insn & ~((3u << 29) | (0x7ffffu << 5))) | ((imm & 3) << 29) | ((imm >> 2) << 5);
        break;
      }
      case llvm::ELF::R_AARCH64_ADD_ABS_LO12_NC:
      case llvm::ELF::R_AARCH64_LDST8_ABS_LO12_NC:
      case llvm::ELF::R_AARCH64_LDST16_ABS_LO12_NC:
      case llvm::ELF::R_AARCH64_LDST32_ABS_LO12_NC:
      case llvm::ELF::R_AARCH64_LDST64_ABS_LO12_NC:
      case llvm::ELF::R_AARCH64_LDST128_ABS_LO12_NC: {
        int shift = type == llvm::ELF::R_AARCH64_LDST16_ABS_LO12_NC   ? 1
                    : type == llvm::ELF::R_AARCH64_LDST32_ABS_LO12_NC  ? 2
                    : type == llvm::ELF::R_AARCH64_LDST64_ABS_LO12_NC  ? 3
                    : type == llvm::ELF::R_AARCH64_LDST128_ABS_LO12_NC ? 4 : 0;
        uint32_t imm = static_cast<uint32_t>(s_plus_a & 0xfff) >> shift;
        insn = (insn & ~(0xfffu << 10)) | (imm << 10);
        break;
      }
      case llvm::ELF::R_AARCH64_CALL26:
      case llvm::ELF::R_AARCH64_JUMP26: {
        int64_t v = (s_plus_a - p) >> 2;
        check_range(v, 26);
        insn = (insn & ~0x3ffffffu) | (static_cast<uint32_t>(v) & 0x3ffffff);
        break;
      }
      case llvm::ELF::R_AARCH64_PREL32: {
        int64_t v = s_plus_a - p;
        check_range(v, 32);
        insn = static_cast<uint32_t>(v);
        break;
      }
      default: fail("unsupported for aarch64");
    }
    put32(loc, insn);
    return;
  }
  if (machine == llvm::ELF::EM_HEXAGON) {
    apply_hexagon_relocation(type, loc, s_plus_a - p, fail, check_range);
    return;
  }
  fail("unsupported machine " + std::to_string(machine));
}

// What a helper the code calls would have done, from its name (compiler-rt's and the Hexagon
// library's naming), for the error message; empty when unknown.
std::string helper_purpose(const std::string& name) {
  auto has = [&](const char* s) { return name.find(s) != std::string::npos; };
  if (has("hf")) return " (a float16 conversion or arithmetic)";
  if (has("df")) return " (float64 arithmetic)";
  if (has("div") || has("mod")) return " (an integer division)";
  return "";
}

// The function of `obj` whose code in `section` holds `offset`: the kernel a relocation is in.
std::string function_at(const llvm::object::ObjectFile& obj, const llvm::object::SectionRef& section, uint64_t offset) {
  for (const llvm::object::SymbolRef& sym : obj.symbols()) {
    auto type = sym.getType();
    auto sec = sym.getSection();
    auto value = sym.getValue();
    auto name = sym.getName();
    if (!type || !sec || !value || !name) {
      llvm::consumeError(type.takeError()), llvm::consumeError(sec.takeError());
      llvm::consumeError(value.takeError()), llvm::consumeError(name.takeError());
      continue;
    }
    if (*type != llvm::object::SymbolRef::ST_Function || *sec != section) continue;
    const uint64_t size = llvm::object::ELFSymbolRef(sym).getSize();
    if (offset >= *value && offset < *value + size) return name->str();
  }
  return "";
}

}  // namespace

CodeBlob link_flat(const std::vector<uint8_t>& elf_object, const std::vector<std::string>& entry_symbols,
                   uint64_t code_start) {
  llvm::MemoryBufferRef ref(llvm::StringRef(reinterpret_cast<const char*>(elf_object.data()), elf_object.size()), "kernels.o");
  auto obj = take(llvm::object::ObjectFile::createObjectFile(ref), "reading kernel object");
  auto* elf = llvm::dyn_cast<llvm::object::ELFObjectFileBase>(obj.get());
  if (!elf) throw CompileError("kernel object is not ELF");
  uint16_t machine = elf->getEMachine();

  // Lay out the sections that occupy memory at run time (code, constants), from code_start.
  CodeBlob blob;
  blob.bytes.resize(code_start, 0);
  std::map<uint64_t, uint64_t> section_offset;  // section index -> offset in blob
  for (const llvm::object::SectionRef& sec : obj->sections()) {
    llvm::object::ELFSectionRef esec(sec);
    if (!(esec.getFlags() & llvm::ELF::SHF_ALLOC) || sec.getSize() == 0) continue;
    std::string name = take(sec.getName(), "section name").str();
    if (name == ".eh_frame") continue;  // nothing unwinds through a kernel
    if (esec.getFlags() & llvm::ELF::SHF_WRITE)
      throw CompileError("kernel object has writable section " + name + ": kernels must keep no state");
    uint64_t align = std::max<uint64_t>(sec.getAlignment().value(), 1);
    uint64_t off = (blob.bytes.size() + align - 1) / align * align;
    blob.bytes.resize(off, 0);
    if (sec.isBSS()) {
      blob.bytes.resize(off + sec.getSize(), 0);
    } else {
      llvm::StringRef contents = take(sec.getContents(), "section contents");
      blob.bytes.insert(blob.bytes.end(), contents.begin(), contents.end());
    }
    section_offset[sec.getIndex()] = off;
  }
  auto symbol_address = [&](const llvm::object::SymbolRef& sym, std::string& name) -> int64_t {
    name = take(sym.getName(), "symbol name").str();
    auto sec = take(sym.getSection(), "symbol section");
    if (sec == obj->section_end())
      throw CompileError("kernels reference external symbol '" + name + "': generated code must call nothing");
    auto it = section_offset.find(sec->getIndex());
    if (it == section_offset.end()) throw CompileError("symbol '" + name + "' lives in a section that is not loaded");
    return static_cast<int64_t>(it->second + take(sym.getValue(), "symbol value"));
  };
  for (const llvm::object::SectionRef& sec : obj->sections()) {
    auto target = take(sec.getRelocatedSection(), "relocated section");
    if (target == obj->section_end()) continue;
    auto it = section_offset.find(target->getIndex());
    if (it == section_offset.end()) continue;  // relocations of sections we dropped
    for (const llvm::object::RelocationRef& rel : sec.relocations()) {
      std::string name;
      auto sym = rel.getSymbol();
      if (sym == obj->symbol_end()) throw CompileError("kernel object has a relocation without symbol");
      if (take(sym->getSection(), "symbol section") == obj->section_end()) {
        name = take(sym->getName(), "symbol name").str();
        const std::string kernel = function_at(*obj, *target, rel.getOffset());
        throw CompileError((kernel.empty() ? std::string("kernels call") : "kernel " + kernel + " calls") + " '" + name +
                           "'" + helper_purpose(name) +
                           ", a library helper the target has no instruction for: generated code must call nothing");
      }
      int64_t s = symbol_address(*sym, name);
      int64_t addend = take(llvm::object::ELFRelocationRef(rel).getAddend(), "relocation addend");
      apply_relocation(machine, static_cast<uint32_t>(rel.getType()), blob.bytes.data(), it->second + rel.getOffset(),
                       s + addend, name);
    }
  }
  // Every function's [offset, offset + size) in the blob (aliases of one address counted
  // once): they must not overlap. The kernels' functions become the function table, the only
  // places the runtime jumps to.
  std::map<std::string, uint64_t> symbols;
  std::map<uint64_t, uint64_t> function_size;  // offset -> size
  for (const llvm::object::SymbolRef& sym : obj->symbols()) {
    auto type = take(sym.getType(), "symbol type");
    if (type != llvm::object::SymbolRef::ST_Function) continue;
    std::string name;
    const uint64_t offset = static_cast<uint64_t>(symbol_address(sym, name));
    symbols[name] = offset;
    uint64_t& size = function_size[offset];
    size = std::max<uint64_t>(size, llvm::object::ELFSymbolRef(sym).getSize());
  }
  uint64_t end = 0;
  for (const auto& [offset, size] : function_size) {
    if (offset < end)
      throw CompileError("internal: functions overlap at offset " + std::to_string(offset) + " of the code");
    if (size == 0 || offset + size > blob.bytes.size())
      throw CompileError("internal: function at offset " + std::to_string(offset) + " has a bad size");
    end = offset + size;
  }
  std::map<uint64_t, uint32_t> entry_index;  // offset -> index in the table, sorted
  for (const std::string& e : entry_symbols) {
    auto it = symbols.find(e);
    if (it == symbols.end()) throw CompileError("kernel object lacks entry point '" + e + "'");
    entry_index[it->second] = 0;
  }
  for (auto& [offset, index] : entry_index) {
    index = static_cast<uint32_t>(blob.functions.size());
    blob.functions.push_back(CodeRange{offset, function_size[offset]});
  }
  for (const std::string& e : entry_symbols) {
    blob.entry_offsets.push_back(symbols[e]);
    blob.entry_functions.push_back(entry_index[symbols[e]]);
  }
  return blob;
}

namespace {

// A kernel's argument contract as its code directory holds it: 2 words per argument.
std::vector<uint64_t> contract_words(const KernelIR& k) {
  std::vector<uint64_t> words;
  for (const ArgUse& u : arg_contracts(k)) {
    const auto access = u.written ? edge::bundle::ArgAccess::Write : edge::bundle::ArgAccess::Read;
    words.push_back(edge::abi::contract_arg_word(static_cast<uint32_t>(access), static_cast<uint32_t>(u.dtype)));
    words.push_back(u.extent_bytes);
  }
  return words;
}

// Kernels whose code is the same share one function. A model repeats its blocks (MobileNetV2
// int8: 65 kernels, 38 different functions; three of its largest depthwise kernels are one):
// LLVM then optimizes and selects each block's code once: edgec's CPU time for it fell from
// 48 to 28 s on hexagon-v65 (code 1,008,388 -> 584,836 bytes, packets per run the same) and
// from 6.7 to 4.1 s on x86_64. Equal means equal LLVM IR (llvm::FunctionComparator: instructions,
// constants, types, attributes; the alias scopes, made the same way for the same loops, only
// in shape) and the same argument contract (the code directory holds one per function).
class IdenticalKernels {
 public:
  // The name of the function kernel k's code is: its own, just emitted into m under k.name,
  // or, where an earlier kernel's is the same, that one's (k's then leaves the module).
  std::string function_for(llvm::Module& m, const KernelIR& k) {
    llvm::Function* f = m.getFunction(k.name);
    if (!f) throw CompileError("internal: kernel " + k.name + " emitted no function");
    const llvm::IRHash hash = llvm::StructuralHash(*f);
    std::vector<uint64_t> contract = contract_words(k);
    for (const Emitted& e : emitted_)
      if (e.hash == hash && e.contract == contract && llvm::FunctionComparator(e.function, f, &globals_).compare() == 0) {
        f->eraseFromParent();
        return e.function->getName().str();
      }
    emitted_.push_back(Emitted{f, hash, std::move(contract)});
    return k.name;
  }

 private:
  struct Emitted {
    llvm::Function* function;
    llvm::IRHash hash;  // equal for equal functions: compared first
    std::vector<uint64_t> contract;
  };
  std::vector<Emitted> emitted_;  // in kernel order: the first of equal kernels keeps its function
  llvm::GlobalNumberState globals_;
};

}  // namespace

int64_t launch_work(const KernelIR& k) {
  int64_t elements = 0;
  for (const ArgUse& u : arg_contracts(k)) elements += static_cast<int64_t>(u.extent_bytes / dtype_size(u.dtype));
  return k.flops() + elements;
}

// The first output dim longer than 1 is split across cores (schema/kernel_abi.h), into one
// part when the launch has less work than one_part_below_work; not a row kernel's row (its
// dims from row_dim on), which one core computes whole (its stages reduce along it).
void plan_cpu_launch(KernelIR& k, int64_t one_part_below_work) {
  k.launch = LaunchPlan{};
  for (size_t d = 0; d < k.out_shape.size(); ++d)
    if (k.out_shape[d] != 1 && !(k.is_row_kernel() && static_cast<int>(d) >= k.row_dim)) {
      k.launch.parallel_dim = static_cast<int>(d);
      k.launch.parallel_extent = static_cast<uint64_t>(k.out_shape[d]);
      break;
    }
  // The code stays the same (it splits by core_id / num_cores); only the parts the runtime
  // asks for change, so the outputs are the same bits either way.
  if (k.launch.parallel_extent > 1 && launch_work(k) < one_part_below_work) k.launch.parallel_extent = 1;
}

namespace {

class LlvmCpuBackend : public Backend {
 public:
  explicit LlvmCpuBackend(const TargetSpec& target) : target_(target) {}

  GeneratedCode generate(std::vector<KernelIR>& kernels, const CodegenOptions& options) override {
    auto tm = make_target_machine(target_, options.opt_level);
    llvm::LLVMContext ctx;
    llvm::Module module("edgec_kernels", ctx);
    module.setTargetTriple(target_.triple);
    module.setDataLayout(tm->createDataLayout());
    std::vector<std::string> names;  // each kernel's function: its own, or an identical earlier one's
    IdenticalKernels same_code;
    std::set<std::string> features;  // the code needs beyond the target's (dot-product instructions)
    // Hexagon's threads share one core and run fixed shares (ports/hexagon/fixed_pool.cc):
    // the threshold, measured on x86-64 cores, is not theirs.
    const bool hexagon = llvm::Triple(target_.triple).getArch() == llvm::Triple::hexagon;
    for (KernelIR& k : kernels) {
      plan_cpu_launch(k, hexagon ? 0 : options.one_part_below_work);
      const RegisterTile* tile = nullptr;
      if (!options.register_tiles.empty()) {
        auto it = options.register_tiles.find(schedule_key(k, target_));
        if (it != options.register_tiles.end()) tile = &it->second;
      }
      for (std::string& f : emit_kernel(module, k, target_, tile)) features.insert(std::move(f));
      names.push_back(same_code.function_for(module, k));
    }
    std::string verify_errors;
    llvm::raw_string_ostream vos(verify_errors);
    if (llvm::verifyModule(module, &vos)) throw CompileError("internal: generated LLVM IR is invalid: " + vos.str());
    optimize(module, *tm, options.opt_level);
    if (llvm::Triple(target_.triple).getArch() == llvm::Triple::hexagon)
      no_software_pipelining_of_big_loops(module, kHexagonPipelinedLoopLimit);
    for (llvm::Function& f : module)  // the runtime takes entry points only at this alignment
      if (!f.isDeclaration()) f.setAlignment(llvm::Align(edge::abi::kFunctionAlignment));
    if (!options.dump_llvm_ir.empty()) {
      std::error_code ec;
      llvm::raw_fd_ostream out(options.dump_llvm_ir, ec, llvm::sys::fs::OF_Text);
      if (ec) throw CompileError("cannot write " + options.dump_llvm_ir + ": " + ec.message());
      module.print(out, nullptr);
    }
    GeneratedCode code;
    for (const std::string& f : features)
      if (std::find(target_.required_features.begin(), target_.required_features.end(), f) == target_.required_features.end())
        code.required_features.push_back(f);
    // The code directory first (schema/code_directory.h): the runtime reads entry points,
    // contracts and needed features from it, as data.
    std::string needed;
    for (const std::vector<std::string>* list : {&target_.required_features, &code.required_features})
      for (const std::string& f : *list) needed += (needed.empty() ? "" : ",") + f;
    std::vector<std::vector<uint64_t>> contracts;
    size_t num_words = 0;
    for (const KernelIR& k : kernels) {
      contracts.push_back(contract_words(k));
      num_words += contracts.back().size();
    }
    const uint64_t directory_size =
        edge::abi::code_directory_size(kernels.size(), num_words, needed, edge::abi::kFunctionAlignment);
    CodeBlob blob = link_flat(emit_object(module, *tm), names, directory_size);
    std::vector<edge::abi::DirectoryFunction> directory(blob.functions.size());
    for (size_t f = 0; f < blob.functions.size(); ++f)
      directory[f].offset = blob.functions[f].offset, directory[f].size = blob.functions[f].size;
    for (size_t k = 0; k < kernels.size(); ++k) directory[blob.entry_functions[k]].contract_words = contracts[k];
    edge::abi::write_code_directory(blob.bytes, directory_size, static_cast<uint32_t>(target_.bundle_arch), directory,
                                    needed);
    code.format = 1;        // edge::bundle::CodeFormat::MachineCode
    code.alignment = 4096;  // loaded page-aligned (aarch64 ADRP is page-relative)
    code.bytes = std::move(blob.bytes);
    code.functions = std::move(blob.functions);
    code.entry_functions = std::move(blob.entry_functions);
    return code;
  }

 private:
  TargetSpec target_;
};

}  // namespace

std::vector<RegisterTile> register_tile_candidates(KernelIR& k, const TargetSpec& target, size_t max) {
  if (target.backend != BackendKind::LlvmCpu) return {};
  plan_cpu_launch(k, 0);  // the tiles depend on the parallel dim only
  std::vector<RegisterTile> tiles = register_tiles_by_cost(k, target);
  if (tiles.size() < 2) return {};  // nothing to choose
  if (tiles.size() > max) tiles.resize(max);
  return tiles;
}

std::unique_ptr<Backend> make_llvm_cpu_backend(const TargetSpec& target) {
  return std::make_unique<LlvmCpuBackend>(target);
}

}  // namespace edgec
