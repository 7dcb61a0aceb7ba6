// llvm_object_for_test.h — for the flat-linker tests (compiler_link_*_test.cc): LLVM IR text
// compiled to a relocatable ELF object for a target, with the relocation and code model edgec
// uses, and 32-bit words read out of the linked blob.
#pragma once
#include <doctest/doctest.h>
#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace edgec_test {

inline std::vector<uint8_t> object_for(const std::string& ir, const char* triple, const char* cpu, const char* features) {
  llvm::InitializeAllTargetInfos();
  llvm::InitializeAllTargets();
  llvm::InitializeAllTargetMCs();
  llvm::InitializeAllAsmPrinters();
  llvm::LLVMContext ctx;
  llvm::SMDiagnostic diag;
  std::unique_ptr<llvm::Module> m = llvm::parseAssemblyString(ir, diag, ctx);
  REQUIRE_MESSAGE(m, diag.getMessage().str());
  std::string err;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, err);
  REQUIRE_MESSAGE(target, err);
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, cpu, features, llvm::TargetOptions(), llvm::Reloc::PIC_, llvm::CodeModel::Small,
      llvm::CodeGenOptLevel::Default));
  m->setTargetTriple(triple);
  m->setDataLayout(tm->createDataLayout());
  llvm::SmallVector<char, 0> buf;
  llvm::raw_svector_ostream os(buf);
  llvm::legacy::PassManager pm;
  REQUIRE_FALSE(tm->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::ObjectFile));
  pm.run(*m);
  return std::vector<uint8_t>(buf.begin(), buf.end());
}

inline uint32_t word(const std::vector<uint8_t>& blob, uint64_t at) {
  REQUIRE(at + 4 <= blob.size());
  uint32_t v;
  std::memcpy(&v, blob.data() + at, 4);
  return v;
}

// `@table`: 4096 constant words, table[i] = 7 i + 1 (16 KiB of constants after the code:
// its last entries are pages away from its start).
inline std::string table_global_ir() {
  std::string values;
  for (int i = 0; i < 4096; ++i) values += (i ? ", i32 " : "i32 ") + std::to_string(i * 7 + 1);
  return "@table = internal unnamed_addr constant [4096 x i32] [" + values + "], align 4\n";
}

}  // namespace edgec_test
