// bundle_lie.cc — test tool: rewrites a real bundle with one lie in its metadata and a valid
// content hash (serialize_bundle recomputes it), as someone who can edit the file but not
// the code would. tests/e2e/test_bundle_lies.py runs edgert-run on each and expects a refusal.
//
//   edge-bundle-lie IN.bundle OUT.bundle LIE      (LIE: one of the names in kLies below)
//   edge-bundle-lie --rehash FILE...              store each file's content hash (computed over
//                                                 the ranges its header gives), in place: for
//                                                 tests/trust/test_bundle_mutations.py's mutants
//   edge-bundle-lie --redigest FILE...            the same, after storing the FlatBuffer's digest
//                                                 in the code directory (code_directory.h)
//
// Exit 0: written; 2: usage; 3: the bundle offers no place for this lie (e.g. no arena buffer).
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "bundle_writer.h"
#include "code_directory.h"
#include "kernel_abi.h"

namespace {

using namespace edge::bundle;

constexpr const char* kLies[] = {
    "resize-buffer",   // an arena buffer a kernel reads shrunk to one element at the arena's end
    "swap-arg",        // a kernel's input replaced by the smallest weight of its dtype
    "forge-extent",    // swap-arg with Kernel.args' extent lowered to match the smaller buffer
    "shorten-args",    // a kernel's last argument dropped from Kernel.args and from its commands
    "move-entry",      // a kernel's function table entry moved 16 bytes into its code
    "bad-function",    // a kernel naming a function past the section's table
    "drop-command",    // the queue without its last command
    "overlap-buffers", // a kernel's arena output placed on the arena input it reads
    "lower-features",  // Target.features without its last feature (what the code needs)
    "weights-on-code", // the Weights section's offset moved onto the code (after writing)
    "code-on-weights", // the MachineCode section's offset moved onto the weights
    // Not a metadata-only lie: a weight shrunk by 64 bytes with the extent lowered in
    // Kernel.args AND in the contract in the code directory (part of the code bytes). Accepted (only a signature
    // covers the code); a sanitizer build with separate buffers catches the overrun.
    "forge-code-contract"
};

// The first Launch command with an arg (index >= 1, read) for which `pick` holds.
template <typename Pick>
bool find_read_arg(const BundleDesc& d, Pick pick, size_t* cmd, size_t* arg) {
  for (size_t c = 0; c < d.commands.size(); ++c) {
    if (d.commands[c].kind != CommandKind::Launch) continue;
    for (size_t a = 1; a < d.commands[c].args.size(); ++a)
      if (pick(d.commands[c], d.buffers[d.commands[c].args[a]])) {
        *cmd = c;
        *arg = a;
        return true;
      }
  }
  return false;
}

// The smallest weight of `dtype` that `c` does not already pass (always readable), or -1.
long smallest_other(const BundleDesc& d, const CommandDesc& c, DType dtype) {
  long best = -1;
  for (size_t i = 0; i < d.buffers.size(); ++i) {
    bool passed = false;
    for (uint32_t a : c.args) passed |= a == i;
    if (passed || d.buffers[i].kind != BufferKind::Weight || d.buffers[i].dtype != dtype || d.buffers[i].size == 0)
      continue;
    if (best < 0 || d.buffers[i].size < d.buffers[static_cast<size_t>(best)].size) best = static_cast<long>(i);
  }
  return best;
}

// Lowers the extent of argument `a` in the contract of kernel k's function in its section's
// code directory (schema/code_directory.h): an edit of the code bytes.
bool patch_code_contract(BundleDesc& d, const KernelDesc& k, size_t a, uint64_t extent) {
  std::vector<uint8_t>& code = d.sections[k.section].bytes;
  edge::abi::CodeDirectory dir;
  if (edge::abi::read_code_directory(code.data(), code.size(), edge::abi::kFunctionAlignment, &dir)) return false;
  const edge::abi::CodeDirectoryEntry e = dir.entry(k.function);
  if (a >= e.num_args) return false;
  std::memcpy(code.data() + e.contract_offset + 8 * (2 * a + 1), &extent, 8);
  return true;
}

bool apply(BundleDesc& d, const std::string& lie) {
  size_t c = 0, a = 0;
  if (lie == "resize-buffer") {
    if (!find_read_arg(d, [](const CommandDesc&, const BufferDesc& b) { return b.kind == BufferKind::Arena && b.shape.size() > 0 && b.size > 64; }, &c, &a))
      return false;
    BufferDesc& b = d.buffers[d.commands[c].args[a]];
    int64_t numel = 1;
    for (int64_t s : b.shape) numel *= s;
    const uint64_t element = b.size / static_cast<uint64_t>(numel);
    b.shape = {1};
    b.size = element;
    b.offset = (d.arena_size - element) / d.arena_alignment * d.arena_alignment;
    return true;
  }
  if (lie == "swap-arg" || lie == "forge-extent") {
    long small = -1;
    if (!find_read_arg(d, [&](const CommandDesc& cmd, const BufferDesc& b) {
          small = smallest_other(d, cmd, b.dtype);
          return small >= 0 && d.buffers[static_cast<size_t>(small)].size < b.size;
        }, &c, &a))
      return false;
    d.commands[c].args[a] = static_cast<uint32_t>(small);
    if (lie == "forge-extent") {
      KernelDesc& k = d.kernels[d.commands[c].kernel];
      k.args[a].extent = std::min(k.args[a].extent, d.buffers[static_cast<size_t>(small)].size);
    }
    return true;
  }
  if (lie == "shorten-args") {
    for (size_t k = 0; k < d.kernels.size(); ++k) {
      if (d.kernels[k].args.size() < 2) continue;
      d.kernels[k].args.pop_back();
      for (CommandDesc& cmd : d.commands)
        if (cmd.kind == CommandKind::Launch && cmd.kernel == k) cmd.args.pop_back();
      return true;
    }
    return false;
  }
  if (lie == "move-entry" || lie == "bad-function") {
    if (d.kernels.empty() || d.sections[d.kernels[0].section].functions.empty()) return false;
    std::vector<Function>& fns = d.sections[d.kernels[0].section].functions;
    if (lie == "bad-function") {
      d.kernels[0].function = static_cast<uint32_t>(fns.size());
      return true;
    }
    Function& f = fns[d.kernels[0].function];
    if (f.size() <= 16) return false;
    f = Function(f.offset() + 16, f.size() - 16);
    return true;
  }
  if (lie == "forge-code-contract") {
    auto uses = [&](uint32_t buffer) {
      int n = 0;
      for (const CommandDesc& cmd : d.commands)
        for (uint32_t x : cmd.args) n += x == buffer;
      return n;
    };
    if (!find_read_arg(d, [&](const CommandDesc& cmd, const BufferDesc& b) {
          return b.kind == BufferKind::Weight && b.size >= 128 && uses(static_cast<uint32_t>(&b - d.buffers.data())) == 1 &&
                 d.kernels[cmd.kernel].args.size() == cmd.args.size();
        }, &c, &a))
      return false;
    BufferDesc& w = d.buffers[d.commands[c].args[a]];
    KernelDesc& k = d.kernels[d.commands[c].kernel];
    int64_t numel = 1;
    for (int64_t x : w.shape) numel *= x;
    const uint64_t element = w.size / static_cast<uint64_t>(numel);
    if (k.args[a].extent != w.size) return false;
    // 64 bytes: guard pages see past the arena alignment's slack (cpu_context.cc)
    w.shape = {numel - static_cast<int64_t>(64 / element)};
    w.size -= 64;
    k.args[a].extent = w.size;
    return patch_code_contract(d, k, a, w.size);
  }
  if (lie == "weights-on-code") return true;  // after serialize_bundle: place_weights_on_code
  if (lie == "lower-features") {
    if (d.target.features.empty()) return false;
    d.target.features.pop_back();
    return true;
  }
  if (lie == "drop-command") {
    if (d.commands.empty()) return false;
    d.commands.pop_back();
    return true;
  }
  if (lie == "overlap-buffers") {
    if (!find_read_arg(d, [](const CommandDesc& cmd, const BufferDesc& b) {
          return b.kind == BufferKind::Arena && cmd.args.size() > 0;
        }, &c, &a))
      return false;
    for (size_t k = c; k < d.commands.size(); ++k) {  // a kernel writing an arena buffer from one
      const CommandDesc& cmd = d.commands[k];
      if (cmd.kind != CommandKind::Launch) continue;
      for (size_t i = 1; i < cmd.args.size(); ++i)
        if (d.buffers[cmd.args[i]].kind == BufferKind::Arena && d.buffers[cmd.args[0]].kind == BufferKind::Arena) {
          d.buffers[cmd.args[0]].offset = d.buffers[cmd.args[i]].offset;
          return true;
        }
    }
    return false;
  }
  return false;
}

// The Weights section moved to blob offset 64, over the code that starts the blob, in the
// written file (serialize_bundle lays sections out itself), the content hash recomputed.
bool place_weights_on_code(std::vector<uint8_t>& file) {
  BundleHeader h;
  std::memcpy(&h, file.data(), sizeof h);
  auto* sections = GetMutableBundle(file.data() + h.fb_offset)->mutable_sections();
  for (flatbuffers::uoffset_t i = 0; sections && i < sections->size(); ++i) {
    Section* s = sections->GetMutableObject(i);
    if (s->kind() != SectionKind::Weights || !s->mutate_offset(64)) continue;
    h.content_hash = content_hash_update(content_hash_update(kContentHashSeed, file.data() + h.fb_offset, h.fb_size),
                                         file.data() + h.data_offset, h.data_size);
    std::memcpy(file.data(), &h, sizeof h);
    return true;
  }
  return false;
}

}  // namespace

// The content hash of each file, stored in its header (the header's ranges must be inside it).
// --rehash: the content hash; --redigest: first the code directory's FlatBuffer digest (the
// MachineCode section starts the data blob), as an attacker who edits the FlatBuffer and that
// word of the code section would.
int rehash(int argc, char** argv, bool digest) {
  for (int i = 2; i < argc; ++i) {
    std::fstream f(argv[i], std::ios::binary | std::ios::in | std::ios::out);
    std::vector<uint8_t> file((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    BundleHeader h;
    if (file.size() < sizeof h) return std::fprintf(stderr, "%s: not a bundle\n", argv[i]), 2;
    std::memcpy(&h, file.data(), sizeof h);
    if (h.fb_offset > file.size() || h.fb_size > file.size() - h.fb_offset || h.data_offset > file.size() ||
        h.data_size > file.size() - h.data_offset)
      return std::fprintf(stderr, "%s: the header's ranges exceed the file\n", argv[i]), 2;
    if (digest)
      edge::abi::store_flatbuffer_digest(file.data() + h.data_offset, h.data_size, file.data() + h.fb_offset,
                                         h.fb_size);
    h.content_hash = content_hash_update(content_hash_update(kContentHashSeed, file.data() + h.fb_offset, h.fb_size),
                                         file.data() + h.data_offset, h.data_size);
    f.clear();
    f.seekp(0);
    f.write(reinterpret_cast<const char*>(&h), sizeof h);
    if (digest && h.data_size >= sizeof(edge::abi::CodeDirectoryHeader)) {
      f.seekp(static_cast<std::streamoff>(h.data_offset));
      f.write(reinterpret_cast<const char*>(file.data() + h.data_offset), sizeof(edge::abi::CodeDirectoryHeader));
    }
    if (!f) return std::fprintf(stderr, "%s: cannot write\n", argv[i]), 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "--rehash") == 0) return rehash(argc, argv, false);
  if (argc >= 2 && std::strcmp(argv[1], "--redigest") == 0) return rehash(argc, argv, true);
  if (argc != 4 || std::strcmp(argv[1], "--help") == 0) {
    std::fprintf(stderr, "usage: edge-bundle-lie IN.bundle OUT.bundle LIE | --rehash FILE... | --redigest FILE...\nLIE:");
    for (const char* l : kLies) std::fprintf(stderr, " %s", l);
    std::fprintf(stderr, "\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  std::vector<uint8_t> file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  BundleHeader h;
  if (file.size() < sizeof h) {
    std::fprintf(stderr, "%s: not a bundle\n", argv[1]);
    return 2;
  }
  std::memcpy(&h, file.data(), sizeof h);
  // Our own compiler's output, verified by the test before: read it without re-checking.
  BundleDesc d = desc_from_bundle(GetBundle(file.data() + h.fb_offset), file.data() + h.data_offset);
  if (!apply(d, argv[3])) {
    std::fprintf(stderr, "%s: no place for the lie %s (or unknown lie)\n", argv[1], argv[3]);
    return 3;
  }
  std::vector<uint8_t> out = serialize_bundle(d);
  if (std::strcmp(argv[3], "weights-on-code") == 0 && !place_weights_on_code(out)) {
    std::fprintf(stderr, "%s: no place for the lie %s\n", argv[1], argv[3]);
    return 3;
  }
  std::ofstream o(argv[2], std::ios::binary | std::ios::trunc);
  o.write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.size()));
  return o ? 0 : 1;
}
