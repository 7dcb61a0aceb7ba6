// fuzz_onnx.cc — libFuzzer target over edgec's front half (tests/fuzz/run_fuzz.py drives it):
// ONNX bytes -> import (protobuf parse, checks, lowering, shape inference, constant folding)
// -> schedule -> kernel IR, as driver/compile.cc runs them for the x86_64 target. LLVM code
// generation is left out: it is not reached by bytes the front half did not accept, and
// leaving it out keeps LLVM out of the sanitized build.
//
// CompileError is how edgec refuses a model (the CLI prints it); any other exception but
// std::bad_alloc is a bug (the CLI would print "internal error"), and so is every sanitizer
// report.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>

#include <google/protobuf/stubs/logging.h>

#include "codegen/kernel_ir.h"
#include "frontend/onnx_importer.h"
#include "schedule/schedule.h"

// protobuf logs every string field with bad UTF-8 that it parses: thousands of lines a second.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    edgec::ImportOptions import_options;
    import_options.winograd = edgec::Winograd::Auto;  // as for the CPU targets
    std::unique_ptr<edgec::Graph> graph =
        edgec::import_onnx_model(std::string(reinterpret_cast<const char*>(data), size), "fuzz.onnx", import_options);
    edgec::ScheduleOptions options;
    options.channels_last = true;  // as for the CPU targets
    edgec::Schedule schedule = edgec::schedule_graph(*graph, options);
    for (const edgec::ScheduledKernel& k : schedule.kernels) edgec::build_kernel_ir(schedule, k);
  } catch (const edgec::CompileError&) {
  } catch (const std::bad_alloc&) {
    // Tensors up to kMaxTensorElements (16 GiB of f32) are accepted by design; run_fuzz.py
    // caps allocations at 2 GiB, so folding a large constant ends here.
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_onnx: internal error: %s\n", e.what());
    std::abort();
  }
  return 0;
}
