// runtime_test_util.h — small bundles for the runtime's unit tests, built in memory with
// the same writer edgec uses.
#pragma once
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bundle_writer.h"
#include "code_directory.h"
#include "edgert.h"
#include "kernel_abi.h"

namespace rt_test {

using namespace edge::bundle;

inline Arch host_arch() {
#if defined(__x86_64__)
  return Arch::X86_64;
#else
  return Arch::AArch64;
#endif
}

template <typename T>
std::vector<uint8_t> bytes_of(const std::vector<T>& v) {
  std::vector<uint8_t> out(v.size() * sizeof(T));
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

inline BufferDesc buffer(const char* name, BufferKind kind, std::vector<int64_t> shape,
                         uint64_t offset = 0, uint32_t section = 0, uint32_t io_index = 0) {
  BufferDesc b;
  b.name = name;
  b.kind = kind;
  b.shape = shape;
  b.size = 4;
  for (int64_t d : shape) b.size *= static_cast<uint64_t>(d);
  b.offset = offset;
  b.section = section;
  b.io_index = io_index;
  return b;
}

inline CommandDesc command(CommandKind kind, std::vector<uint32_t> args, uint32_t kernel = 0) {
  CommandDesc c;
  c.kind = kind;
  c.kernel = kernel;
  c.args = args;
  return c;
}

// Weight values of the test bundles.
inline const std::vector<float>& weight_values() {
  static const std::vector<float> w = {10.0f, 20.0f, 30.0f, 40.0f};
  return w;
}

// Argument contracts of a kernel taking `n` F32 buffers, the first written, each over
// `extent` bytes (the compiler's convention: output first).
inline std::vector<ArgContractDesc> f32_contracts(uint32_t n, uint64_t extent = 16) {
  std::vector<ArgContractDesc> args(n, ArgContractDesc{ArgAccess::Read, DType::F32, extent});
  if (n) args[0].access = ArgAccess::Write;
  return args;
}

// Runs on every CPU: input x f32[4] -> arena tmp -> output y (two Copy commands), and
// the weight w copied to output w_out; Timestamp commands first and last.
//   buffers: 0 x (Input), 1 y (Output), 2 tmp (Arena @64), 3 w (Weight), 4 w_out (Output)
inline BundleDesc copy_bundle() {
  BundleDesc d;
  d.producer = "runtime unit tests";
  d.source_model = "copy.onnx";
  d.target.arch = host_arch();
  SectionData weights;
  weights.kind = SectionKind::Weights;
  weights.bytes = bytes_of(weight_values());
  d.sections.push_back(weights);
  d.buffers = {
      buffer("x", BufferKind::Input, {4}, 0, 0, 0), buffer("y", BufferKind::Output, {4}, 0, 0, 0),
      buffer("tmp", BufferKind::Arena, {4}, 64), buffer("w", BufferKind::Weight, {4}, 0, 0),
      buffer("w_out", BufferKind::Output, {4}, 0, 0, 1)};
  d.inputs = {TensorDesc{"x", DType::F32, {4}, 0}};
  d.outputs = {TensorDesc{"y", DType::F32, {4}, 1}, TensorDesc{"w_out", DType::F32, {4}, 4}};
  d.commands = {command(CommandKind::Timestamp, {}), command(CommandKind::Copy, {0, 2}),
                command(CommandKind::Copy, {2, 1}), command(CommandKind::Copy, {3, 4}),
                command(CommandKind::Timestamp, {})};
  d.arena_size = 128;
  d.arena_alignment = 64;
  d.arena_lower_bound = 16;
  return d;
}

#if defined(__x86_64__) || defined(__aarch64__)
#define EDGE_TEST_HAS_KERNELS 1

#if defined(__aarch64__)
// A64 instructions are little-endian 32-bit words.
inline std::vector<uint8_t> words(std::vector<uint32_t> w) { return bytes_of(w); }
#endif

// Hand-assembled kernels with the bundle's C signature
//   void kernel(void* const* args, int32_t core_id, int32_t num_cores).

// add4: args[0][i] = args[1][i] + args[2][i] for 4 floats.
inline std::vector<uint8_t> add4_code() {
#if defined(__x86_64__)
  return {0x48, 0x8b, 0x07,        // mov rax, [rdi]        ; out
          0x48, 0x8b, 0x4f, 0x08,  // mov rcx, [rdi+8]      ; a
          0x48, 0x8b, 0x57, 0x10,  // mov rdx, [rdi+16]     ; b
          0x0f, 0x10, 0x01,        // movups xmm0, [rcx]
          0x0f, 0x10, 0x0a,        // movups xmm1, [rdx]
          0x0f, 0x58, 0xc1,        // addps xmm0, xmm1
          0x0f, 0x11, 0x00,        // movups [rax], xmm0
          0xc3};                   // ret
#else
  return words({0xf9400003,    // ldr x3, [x0]
                0xf9400404,    // ldr x4, [x0, #8]
                0xf9400805,    // ldr x5, [x0, #16]
                0x3dc00080,    // ldr q0, [x4]
                0x3dc000a1,    // ldr q1, [x5]
                0x4e21d400,    // fadd v0.4s, v0.4s, v1.4s
                0x3d800060,    // str q0, [x3]
                0xd65f03c0});  // ret
#endif
}

// cores: args[0] = {core_id, num_cores} as int32.
inline std::vector<uint8_t> cores_code() {
#if defined(__x86_64__)
  return {0x48, 0x8b, 0x07,  // mov rax, [rdi]
          0x89, 0x30,        // mov [rax], esi
          0x89, 0x50, 0x04,  // mov [rax+4], edx
          0xc3};             // ret
#else
  return words({0xf9400003,    // ldr x3, [x0]
                0xb9000061,    // str w1, [x3]
                0xb9000462,    // str w2, [x3, #4]
                0xd65f03c0});  // ret
#endif
}

// where: *(uint64_t*)args[0] = (uint64_t)args[1], the address the runtime passed.
inline std::vector<uint8_t> where_code() {
#if defined(__x86_64__)
  return {0x48, 0x8b, 0x07,        // mov rax, [rdi]
          0x48, 0x8b, 0x4f, 0x08,  // mov rcx, [rdi+8]
          0x48, 0x89, 0x08,        // mov [rax], rcx
          0xc3};                   // ret
#else
  return words({0xf9400003,    // ldr x3, [x0]
                0xf9400404,    // ldr x4, [x0, #8]
                0xf9000064,    // str x4, [x3]
                0xd65f03c0});  // ret
#endif
}

// 16 bytes that trap if executed (int3 / brk #0 / ret where nothing runs): the fill between
// functions.
inline std::vector<uint8_t> trap_padding() {
#if defined(__x86_64__)
  return std::vector<uint8_t>(16, 0xcc);
#else
  return words({0xd4200000, 0xd4200000, 0xd4200000, 0xd4200000});
#endif
}

// One function of a hand-made MachineCode section and the contract of its arguments.
struct CodeFunction {
  std::vector<uint8_t> code;
  std::vector<ArgContractDesc> contract;
};

// A MachineCode section as edgec lays one out: the code directory (schema/code_directory.h)
// listing the functions, their contracts and `features` (comma-separated), then 16 trap
// bytes and each function at a 16-byte boundary, trap bytes between them.
inline SectionData machine_code(const std::vector<CodeFunction>& functions, const std::string& features,
                                Arch arch = host_arch()) {
  std::vector<edge::abi::DirectoryFunction> dir(functions.size());
  size_t num_words = 0;
  for (size_t i = 0; i < functions.size(); ++i) {
    for (const ArgContractDesc& a : functions[i].contract) {
      dir[i].contract_words.push_back(
          edge::abi::contract_arg_word(static_cast<uint32_t>(a.access), static_cast<uint32_t>(a.dtype)));
      dir[i].contract_words.push_back(a.extent);
    }
    num_words += dir[i].contract_words.size();
  }
  const uint64_t dir_size =
      edge::abi::code_directory_size(functions.size(), num_words, features, edge::abi::kFunctionAlignment);
  SectionData s;
  s.kind = SectionKind::Code;
  s.format = CodeFormat::MachineCode;
  s.bytes.resize(dir_size);
  const std::vector<uint8_t> trap = trap_padding();
  s.bytes.insert(s.bytes.end(), trap.begin(), trap.end());
  for (size_t i = 0; i < functions.size(); ++i) {
    dir[i].offset = s.bytes.size();
    dir[i].size = functions[i].code.size();
    s.bytes.insert(s.bytes.end(), functions[i].code.begin(), functions[i].code.end());
    while (s.bytes.size() % 16 != 0) s.bytes.push_back(trap[0]);
    s.functions.push_back(Function(dir[i].offset, dir[i].size));
  }
  edge::abi::write_code_directory(s.bytes, dir_size, static_cast<uint32_t>(arch), dir, features);
  return s;
}

// y = x + w through a real kernel: Launch add4(tmp, x, w); Copy tmp -> y.
inline BundleDesc add_bundle() {
  BundleDesc d = copy_bundle();
#if defined(__x86_64__)
  d.target.features = {"sse2"};
#else
  d.target.features = {"neon"};
#endif
  KernelDesc k;
  k.name = "add4";
  k.section = 1;
  k.function = 0;
  k.args = f32_contracts(3);
  d.sections.push_back(machine_code({{add4_code(), k.args}}, d.target.features[0]));
  k.parallel_extent = 4;
  d.kernels = {k};
  d.commands = {command(CommandKind::Launch, {2, 0, 3}, 0), command(CommandKind::Copy, {2, 1}),
                command(CommandKind::Copy, {3, 4})};
  return d;
}
#endif

// Page-aligned memory (like a file mapping) of exactly `size` bytes, so valgrind sees any
// read past the end, holding a copy of `bytes`; kept alive for edgert_bundle_open_memory.
class AlignedCopy {
 public:
  AlignedCopy(const uint8_t* bytes, size_t size) : size_(size) {
    void* p = nullptr;
    if (posix_memalign(&p, 4096, size ? size : 1) == 0) ptr_ = static_cast<uint8_t*>(p);
    if (ptr_ && size) std::memcpy(ptr_, bytes, size);
  }
  explicit AlignedCopy(const std::vector<uint8_t>& v) : AlignedCopy(v.data(), v.size()) {}
  ~AlignedCopy() { std::free(ptr_); }
  AlignedCopy(const AlignedCopy&) = delete;
  AlignedCopy& operator=(const AlignedCopy&) = delete;
  uint8_t* data() const { return ptr_; }
  size_t size() const { return size_; }

 private:
  uint8_t* ptr_ = nullptr;
  size_t size_ = 0;
};

// A bundle opened from aligned memory, closed at scope exit.
struct Opened {
  AlignedCopy memory;
  edgert_bundle* bundle = nullptr;
  edgert_status status;
  Opened(const uint8_t* bytes, size_t size) : memory(bytes, size) {
    status = edgert_bundle_open_memory(memory.data(), memory.size(), &bundle);
  }
  explicit Opened(const std::vector<uint8_t>& v) : Opened(v.data(), v.size()) {}
  explicit Opened(const BundleDesc& d) : Opened(serialize_bundle(d)) {}
  ~Opened() { edgert_bundle_close(bundle); }
};

inline bool contains(const char* haystack, const char* needle) { return std::strstr(haystack, needle) != nullptr; }

// Opens `d` and expects `status` with every `needle` in the message.
inline void expect_error(const BundleDesc& d, edgert_status status, std::vector<const char*> needles) {
  Opened o(d);
  CHECK(o.status == status);
  CHECK(o.bundle == nullptr);
  const char* msg = edgert_last_error();
  INFO("message: " << std::string(msg));
  for (const char* n : needles) CHECK(contains(msg, n));
}

}  // namespace rt_test
