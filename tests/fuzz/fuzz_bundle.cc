// fuzz_bundle.cc — libFuzzer target over the runtime's C API (tests/fuzz/run_fuzz.py drives it).
//
// Each input is taken as a bundle. When it has a plausible header, the code directory's
// FlatBuffer digest and the content hash are recomputed and stored (in a copy), so that mutations reach the verifier's checks instead of
// stopping at the hash; and the custom mutator below mostly rewrites integer fields of the
// FlatBuffer (boundary values, small shifts), the way an attacker who can edit the file but
// not the code would, leaving the code bytes as the compiler wrote them.
//
// An input that opens is queried (inputs, outputs, commands) and gets a cpu context (the fuzz
// build has only the cpu port): creating one runs no code, the verifier read the entry points
// and contracts from the code directory as data. It is also *run* whenever its code sections
// are byte-identical to one of the seeds' in $EDGE_FUZZ_SEEDS, however its FlatBuffer and
// weights were mutated: whatever the verifier accepts must then replay without a crash or a
// sanitizer report, since only the code bytes themselves are trusted (signing protects them).
// A mutated code section runs arbitrary code, so a crash there would say nothing about the
// runtime: such inputs are opened but not run.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <dirent.h>

#include "bundle_generated.h"
#include "bundle_header.h"
#include "code_directory.h"
#include "edgert.h"

namespace {

namespace eb = edge::bundle;

// The code bytes of the seeds: a bundle whose code sections equal one seed's is run.
std::vector<std::vector<uint8_t>> g_seed_code;

bool header_of(const uint8_t* p, size_t size, eb::BundleHeader* h) {
  if (size < sizeof(eb::BundleHeader)) return false;
  std::memcpy(h, p, sizeof *h);
  return std::memcmp(h->magic, eb::kMagic, sizeof eb::kMagic) == 0 && h->fb_offset <= size &&
         h->fb_size <= size - h->fb_offset && h->data_offset <= size && h->data_size <= size - h->data_offset;
}

// Only called on bundles that edgert_bundle_open_memory accepted (every offset verified).
std::vector<uint8_t> code_bytes(const uint8_t* p, const eb::BundleHeader& h) {
  std::vector<uint8_t> code;
  const auto* sections = eb::GetBundle(p + h.fb_offset)->sections();
  for (uint32_t i = 0; sections && i < sections->size(); ++i) {
    const eb::Section* s = sections->Get(i);
    if (s->kind() != eb::SectionKind::Code) continue;
    const uint8_t* b = p + h.data_offset + s->offset();
    const size_t at = code.size();
    code.insert(code.end(), b, b + s->size());
    // The FlatBuffer digest in a code directory follows the FlatBuffer (LLVMFuzzerTestOneInput
    // stores it): the code is the seed's whatever its value.
    uint64_t magic = 0;
    if (s->size() >= sizeof(edge::abi::CodeDirectoryHeader)) std::memcpy(&magic, b, 8);
    if (magic == edge::abi::kCodeDirectoryMagic)
      std::memset(code.data() + at + offsetof(edge::abi::CodeDirectoryHeader, flatbuffer_digest), 0, 8);
  }
  return code;
}

bool seed_code(const uint8_t* p, const eb::BundleHeader& h) {
  const std::vector<uint8_t> code = code_bytes(p, h);
  return !code.empty() && std::find(g_seed_code.begin(), g_seed_code.end(), code) != g_seed_code.end();
}

// Runs are skipped past these sizes (allocating and zeroing them would only slow the fuzzer).
constexpr uint64_t kMaxRunArena = 64u << 20, kMaxRunIo = 16u << 20;

// The runtime wants 64-byte (page for wider sections) aligned memory; libFuzzer's is not.
// Exactly n bytes, so that ASan sees a read past the end of the bundle.
struct Aligned {
  uint8_t* p = nullptr;
  explicit Aligned(size_t n) {
    void* m = nullptr;
    if (posix_memalign(&m, 4096, n ? n : 1) == 0) p = static_cast<uint8_t*>(m);
  }
  ~Aligned() { std::free(p); }
};

void exercise(const uint8_t* p, size_t size, bool may_run) {
  edgert_bundle* bundle = nullptr;
  if (edgert_bundle_open_memory(p, size, &bundle) != EDGERT_OK) {
    if (!edgert_last_error() || !*edgert_last_error()) std::abort();  // a refusal must say why
    return;
  }
  eb::BundleHeader h;
  std::memcpy(&h, p, sizeof h);
  may_run = may_run && seed_code(p, h) && edgert_bundle_arena_size(bundle) <= kMaxRunArena;

  edgert_bundle_port(bundle);
  edgert_bundle_arena_size(bundle);
  int32_t n_in = edgert_bundle_input_count(bundle), n_out = edgert_bundle_output_count(bundle);
  std::vector<std::vector<uint8_t>> in(static_cast<size_t>(n_in)), out(static_cast<size_t>(n_out));
  uint64_t io_bytes = 0;
  for (int32_t i = 0; i < n_in + n_out; ++i) {
    const bool input = i < n_in;
    edgert_tensor_info info;
    if ((input ? edgert_bundle_input_info(bundle, i, &info) : edgert_bundle_output_info(bundle, i - n_in, &info)) !=
        EDGERT_OK)
      std::abort();
    if ((input ? edgert_bundle_find_input(bundle, info.name) : edgert_bundle_find_output(bundle, info.name)) < 0)
      std::abort();
    io_bytes += info.size_bytes;
    may_run = may_run && io_bytes <= kMaxRunIo;
  }
  for (int32_t i = 0; may_run && i < n_in + n_out; ++i) {
    edgert_tensor_info info;
    if (i < n_in) edgert_bundle_input_info(bundle, i, &info);
    else edgert_bundle_output_info(bundle, i - n_in, &info);
    (i < n_in ? in[i] : out[i - n_in]).assign(info.size_bytes, 0);
  }
  for (int32_t i = 0, n = edgert_bundle_command_count(bundle); i < n; ++i) {
    edgert_command_info info;
    if (edgert_bundle_command_info(bundle, i, &info) != EDGERT_OK) std::abort();
  }

  edgert_context_options options{};
  options.num_threads = may_run ? 2 : 1;  // the worker pool too, where the replay runs
  edgert_context* ctx = nullptr;
  if (edgert_bundle_arena_size(bundle) <= kMaxRunArena && edgert_context_create(bundle, &options, &ctx) == EDGERT_OK) {
    if (may_run) {
      bool bound = true;
      for (int32_t i = 0; i < n_in; ++i)
        bound = bound && edgert_bind_input(ctx, i, in[i].data(), in[i].size()) == EDGERT_OK;
      for (int32_t i = 0; i < n_out; ++i)
        bound = bound && edgert_bind_output(ctx, i, out[i].data(), out[i].size()) == EDGERT_OK;
      edgert_context_set_profiling(ctx, 1);
      if (bound && edgert_run(ctx) != EDGERT_OK) std::abort();  // an accepted queue must replay
      const uint64_t* ns;
      int32_t count;
      edgert_context_timestamps(ctx, &ns, &count);
      edgert_context_command_times(ctx, &ns, &count);
    }
    edgert_context_stats stats;
    edgert_context_get_stats(ctx, &stats);
    edgert_context_destroy(ctx);
  }
  edgert_bundle_close(bundle);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* dir = std::getenv("EDGE_FUZZ_SEEDS");
  if (!dir) return 0;
  DIR* d = opendir(dir);
  if (!d) return 0;
  while (dirent* e = readdir(d)) {
    std::string path = std::string(dir) + "/" + e->d_name;
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) continue;
    std::vector<uint8_t> bytes;
    uint8_t buf[65536];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) bytes.insert(bytes.end(), buf, buf + n);
    std::fclose(f);
    eb::BundleHeader h;
    if (!header_of(bytes.data(), bytes.size(), &h)) continue;
    Aligned copy(bytes.size());
    std::memcpy(copy.p, bytes.data(), bytes.size());
    edgert_bundle* bundle = nullptr;
    if (edgert_bundle_open_memory(copy.p, bytes.size(), &bundle) != EDGERT_OK) continue;
    edgert_bundle_close(bundle);
    g_seed_code.push_back(code_bytes(copy.p, h));
  }
  closedir(d);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Aligned copy(size);
  if (!copy.p) return 0;
  std::memcpy(copy.p, data, size);
  eb::BundleHeader h;
  if (header_of(copy.p, size, &h)) {
    // The digest too: the fuzzer plays the attacker who also rewrites that word of the code
    // section, so mutated FlatBuffers get past it to every other rule and, with seed code, run.
    edge::abi::store_flatbuffer_digest(copy.p + h.data_offset, h.data_size, copy.p + h.fb_offset, h.fb_size);
    uint64_t hash = eb::content_hash_update(eb::kContentHashSeed, copy.p + h.fb_offset, h.fb_size);
    h.content_hash = eb::content_hash_update(hash, copy.p + h.data_offset, h.data_size);
    std::memcpy(copy.p, &h, sizeof h);
  }
  exercise(copy.p, size, !g_seed_code.empty());
  return 0;
}

// Structure-aware mutation: three times in four, one integer of the FlatBuffer (a 4- or
// 8-byte aligned word: offsets, sizes, indices, counts, enums) set to a boundary value or
// shifted a little, the rest of the file untouched; otherwise libFuzzer's own mutations. The
// content hash is repaired by LLVMFuzzerTestOneInput.
extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  uint64_t state = seed * 0x9e3779b97f4a7c15ull + 1;
  auto next = [&state]() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  eb::BundleHeader h;
  if (next() % 4 == 0 || !header_of(data, size, &h) || h.fb_size < 16) return LLVMFuzzerMutate(data, size, max_size);
  const bool wide = next() % 2 == 0;
  const uint64_t width = wide ? 8 : 4;
  const uint64_t at = h.fb_offset + (next() % (h.fb_size / width)) * width;
  if (at + width > size) return size;
  uint64_t v = 0;
  std::memcpy(&v, data + at, width);
  static const int64_t kShifts[] = {1, -1, 4, -4, 8, -8, 16, -16, 32, 64, -64, 128, 4096, -4096};
  static const uint64_t kValues[] = {0, 1, 2, 3, 7, 8, 15, 16, 17, 63, 64, 65, 255, 256, 4095, 4096, 4097,
                                     0x7fffffff, 0x80000000, 0xffffffff, 0x7fffffffffffffffull, ~0ull};
  if (next() % 2 == 0)
    v += static_cast<uint64_t>(kShifts[next() % (sizeof kShifts / sizeof kShifts[0])]);
  else
    v = kValues[next() % (sizeof kValues / sizeof kValues[0])];
  std::memcpy(data + at, &v, width);
  return size;
}
