// fuzz_bundle.cc — libFuzzer target over the runtime's C API (tests/fuzz/run_fuzz.py drives it).
//
// Each input is taken as a bundle. When it has a plausible header, the content hash is
// recomputed and stored (in a copy), so that mutations reach the verifier's semantic checks
// instead of stopping at the hash. An input that opens is queried (inputs, outputs,
// commands) and gets a cpu context (the fuzz build has only the cpu port) when its code could
// be probed safely: creating a context calls each kernel's entry once to read the contract
// compiled into it (schema/kernel_abi.h), so the Code sections must equal a seed's and every
// kernel's entry must be one of that seed's kernel entries (the rest of the FlatBuffer,
// Kernel.args included, may be mutated: the probe's comparison is fuzzed).
//
// Running it is another matter: a bundle's code section is machine code that the runtime
// executes as is, and its kernels trust the buffer sizes they were compiled for. A mutated
// code section, entry point or buffer table runs arbitrary code, so a crash there says
// nothing about the runtime (refusing such bundles is the job of signatures, not of the
// verifier). So edgert_run is called only when the FlatBuffer and every Code section are
// byte-identical to one of the seeds in $EDGE_FUZZ_SEEDS (the weights may differ): that
// covers binding and replay without executing mutated code.
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
#include "edgert.h"

namespace {

namespace eb = edge::bundle;

// What must equal a seed's for a mutated bundle to be run: its FlatBuffer and code bytes.
struct Trusted {
  std::vector<uint8_t> flatbuffer;
  std::vector<uint8_t> code;     // the Code sections, concatenated in section order
  std::vector<uint64_t> entries; // kernel_entries()
};
std::vector<Trusted> g_trusted;

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
    code.insert(code.end(), b, b + s->size());
  }
  return code;
}

// The MachineCode kernels' entry points of a verified bundle as sorted section << 48 | offset.
std::vector<uint64_t> kernel_entries(const uint8_t* p, const eb::BundleHeader& h) {
  std::vector<uint64_t> entries;
  const eb::Bundle* b = eb::GetBundle(p + h.fb_offset);
  for (uint32_t i = 0; b->kernels() && i < b->kernels()->size(); ++i) {
    const eb::Kernel* k = b->kernels()->Get(i);
    const eb::Section* s = b->sections()->Get(k->section());
    if (s->format() == eb::CodeFormat::MachineCode)
      entries.push_back(uint64_t{k->section()} << 48 | s->functions()->Get(k->function())->offset());
  }
  std::sort(entries.begin(), entries.end());
  entries.erase(std::unique(entries.begin(), entries.end()), entries.end());
  return entries;
}

// Whether creating a context only probes real kernel entries of a seed's code.
bool may_probe(const uint8_t* p, const eb::BundleHeader& h) {
  const std::vector<uint64_t> entries = kernel_entries(p, h);
  for (const Trusted& t : g_trusted)
    if (t.code == code_bytes(p, h) && std::includes(t.entries.begin(), t.entries.end(), entries.begin(), entries.end()))
      return true;
  return false;
}

bool trusted(const uint8_t* p, const eb::BundleHeader& h) {
  for (const Trusted& t : g_trusted)
    if (t.flatbuffer.size() == h.fb_size && std::memcmp(t.flatbuffer.data(), p + h.fb_offset, h.fb_size) == 0 &&
        t.code == code_bytes(p, h))
      return true;
  return false;
}

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
  may_run = may_run && trusted(p, h);

  edgert_bundle_port(bundle);
  edgert_bundle_arena_size(bundle);
  int32_t n_in = edgert_bundle_input_count(bundle), n_out = edgert_bundle_output_count(bundle);
  std::vector<std::vector<uint8_t>> in(static_cast<size_t>(n_in)), out(static_cast<size_t>(n_out));
  for (int32_t i = 0; i < n_in; ++i) {
    edgert_tensor_info info;
    if (edgert_bundle_input_info(bundle, i, &info) != EDGERT_OK) std::abort();
    if (edgert_bundle_find_input(bundle, info.name) < 0) std::abort();
    if (may_run) in[i].assign(info.size_bytes, 0);
  }
  for (int32_t i = 0; i < n_out; ++i) {
    edgert_tensor_info info;
    if (edgert_bundle_output_info(bundle, i, &info) != EDGERT_OK) std::abort();
    if (edgert_bundle_find_output(bundle, info.name) < 0) std::abort();
    if (may_run) out[i].assign(info.size_bytes, 0);
  }
  for (int32_t i = 0, n = edgert_bundle_command_count(bundle); i < n; ++i) {
    edgert_command_info info;
    if (edgert_bundle_command_info(bundle, i, &info) != EDGERT_OK) std::abort();
  }

  edgert_context_options options{};
  options.num_threads = may_run ? 2 : 1;  // the worker pool too, where the replay runs
  edgert_context* ctx = nullptr;
  if ((may_run || may_probe(p, h)) && edgert_context_create(bundle, &options, &ctx) == EDGERT_OK) {
    if (may_run) {
      bool bound = true;
      for (int32_t i = 0; i < n_in; ++i)
        bound = bound && edgert_bind_input(ctx, i, in[i].data(), in[i].size()) == EDGERT_OK;
      for (int32_t i = 0; i < n_out; ++i)
        bound = bound && edgert_bind_output(ctx, i, out[i].data(), out[i].size()) == EDGERT_OK;
      edgert_context_set_profiling(ctx, 1);
      if (bound && edgert_run(ctx) != EDGERT_OK) std::abort();  // a seed's queue must replay
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
    g_trusted.push_back({std::vector<uint8_t>(copy.p + h.fb_offset, copy.p + h.fb_offset + h.fb_size),
                         code_bytes(copy.p, h), kernel_entries(copy.p, h)});
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
    uint64_t hash = eb::content_hash_update(eb::kContentHashSeed, copy.p + h.fb_offset, h.fb_size);
    h.content_hash = eb::content_hash_update(hash, copy.p + h.data_offset, h.data_size);
    std::memcpy(copy.p, &h, sizeof h);
  }
  exercise(copy.p, size, !g_trusted.empty());
  return 0;
}
