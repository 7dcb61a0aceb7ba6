// code_directory.h — the table at the start of every MachineCode section: where each kernel's
// function starts and ends, the contract of its arguments, the architecture and the CPU
// features its code was compiled for. The compiler writes it into the code bytes; the
// runtime's verifier reads it as data (never by running code) and holds the FlatBuffer's
// Section.functions, Kernel.function, Kernel.args and Target to it. So an edit of the
// FlatBuffer alone cannot move an entry point, shorten a contract or lower the features: the
// directory can only change with the code bytes, which only a signature protects
// (docs/bundle-trust.md gives the whole argument). It also holds a digest of the whole
// FlatBuffer the code was compiled with (serialize_bundle writes it last): an edit of any
// field alone, one the verifier cannot tell from a plausible bundle (two same-shaped
// arguments swapped), is refused too, after every other check has named what it can.
//
// Layout: little-endian, all offsets from the start of the section, everything 8-byte aligned:
//   CodeDirectoryHeader                    64 bytes at offset 0
//   CodeDirectoryEntry[num_functions]      sorted by offset, disjoint, after the directory
//   contract words                         2 per argument: access | dtype << 8, extent bytes
//   features                               "avx2,fma": NUL-terminated, NUL-padded to 8 bytes
//   (up to directory_size, a multiple of kFunctionAlignment: then code and its constants)
// Shared by edgec (C++20) and edgert (C++17, no exceptions, no allocation in the reader).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "bundle_header.h"

namespace edge::abi {

inline constexpr uint64_t kCodeDirectoryMagic = 0x31524944454f4345ull;  // "ECOEDIR1"

// 64-bit FNV-1a over the FlatBuffer's bytes (bundle_header.h's content hash, another seed):
// not cryptographic, and it need not be. Whoever can rewrite the code bytes to match an
// edited FlatBuffer could as well rewrite the code; only a signature stops that.
inline uint64_t flatbuffer_digest(const uint8_t* fb, size_t size) {
  return edge::bundle::content_hash_update(0x6564676566626467ull, fb, size);  // seed "gdbfegde"
}

struct CodeDirectoryHeader {
  uint64_t magic;           // kCodeDirectoryMagic
  uint64_t section_size;    // bytes of the whole section as the compiler wrote it
  uint64_t directory_size;  // bytes of the directory; no function starts before it
  uint32_t arch;            // edge::bundle::Arch the code is for
  uint32_t num_functions;   // entries that follow the header
  uint64_t features_offset; // the feature list (NUL-terminated, inside the directory)
  uint64_t flatbuffer_digest;  // flatbuffer_digest() of the bundle's FlatBuffer
  uint64_t reserved[2];     // zero
};
static_assert(sizeof(CodeDirectoryHeader) == 64, "the directory header is 64 bytes");

// One kernel's function: the only places the runtime jumps to are the `offset`s.
struct CodeDirectoryEntry {
  uint64_t offset;           // the function's first byte (a multiple of kFunctionAlignment)
  uint64_t size;             // bytes of its code
  uint64_t contract_offset;  // its argument words
  uint64_t num_args;
};
static_assert(sizeof(CodeDirectoryEntry) == 32, "a directory entry is 32 bytes");

inline constexpr uint64_t contract_arg_word(uint32_t access, uint32_t dtype) {
  return access | static_cast<uint64_t>(dtype) << 8;
}

// ---- writing (edgec, the runtime's tests) ----

// What the writer is told about one function: where it is and what its arguments are, as
// (access | dtype << 8, extent) word pairs.
struct DirectoryFunction {
  uint64_t offset = 0, size = 0;
  std::vector<uint64_t> contract_words;  // 2 per argument
};


// Bytes the directory of these functions and features takes, rounded to `alignment` (the
// function alignment): the linker lays the code out from there.
inline uint64_t code_directory_size(size_t num_functions, size_t num_contract_words, const std::string& features,
                                    uint64_t alignment) {
  const uint64_t bytes = sizeof(CodeDirectoryHeader) + num_functions * sizeof(CodeDirectoryEntry) +
                         num_contract_words * 8 + edge::bundle::align_up(features.size() + 1, 8);
  return edge::bundle::align_up(bytes, alignment);
}

// Writes the directory into section[0, directory_size): the functions (sorted by offset)
// with their contracts, the arch and the comma-separated features. `section` holds the whole
// section (code already laid out after the directory).
inline void write_code_directory(std::vector<uint8_t>& section, uint64_t directory_size, uint32_t arch,
                                 const std::vector<DirectoryFunction>& functions, const std::string& features) {
  CodeDirectoryHeader h{};
  h.magic = kCodeDirectoryMagic;
  h.section_size = section.size();
  h.directory_size = directory_size;
  h.arch = arch;
  h.num_functions = static_cast<uint32_t>(functions.size());
  uint64_t at = sizeof h + functions.size() * sizeof(CodeDirectoryEntry);
  std::memset(section.data(), 0, directory_size);
  for (size_t i = 0; i < functions.size(); ++i) {
    const DirectoryFunction& f = functions[i];
    const CodeDirectoryEntry e{f.offset, f.size, at, f.contract_words.size() / 2};
    std::memcpy(section.data() + sizeof h + i * sizeof e, &e, sizeof e);
    if (!f.contract_words.empty())
      std::memcpy(section.data() + at, f.contract_words.data(), f.contract_words.size() * 8);
    at += f.contract_words.size() * 8;
  }
  h.features_offset = at;
  std::memcpy(section.data() + at, features.data(), features.size());
  std::memcpy(section.data(), &h, sizeof h);
}

// Stores flatbuffer_digest(fb) in the directory at the start of `section` (a MachineCode
// section's bytes), when it starts with one. serialize_bundle calls it last; so do the tests'
// attackers that rewrite the digest along with the FlatBuffer (tests/tools/bundle_lie.cc).
inline void store_flatbuffer_digest(uint8_t* section, uint64_t section_size, const uint8_t* fb, size_t fb_size) {
  CodeDirectoryHeader h;
  if (section_size < sizeof h) return;
  std::memcpy(&h, section, sizeof h);
  if (h.magic != kCodeDirectoryMagic) return;
  h.flatbuffer_digest = flatbuffer_digest(fb, fb_size);
  std::memcpy(section, &h, sizeof h);
}

// ---- reading (the verifier): every field checked before use ----

// A directory read from a section's bytes: valid only after read_code_directory returned null.
struct CodeDirectory {
  CodeDirectoryHeader header;
  const uint8_t* bytes;  // the section

  CodeDirectoryEntry entry(uint32_t i) const {
    CodeDirectoryEntry e;
    std::memcpy(&e, bytes + sizeof(CodeDirectoryHeader) + size_t{i} * sizeof e, sizeof e);
    return e;
  }
  uint64_t contract_word(const CodeDirectoryEntry& e, uint64_t i) const {
    uint64_t w;
    std::memcpy(&w, bytes + e.contract_offset + 8 * i, 8);
    return w;
  }
  const char* features() const { return reinterpret_cast<const char*>(bytes + header.features_offset); }
};

// Checks the directory at the start of a section of `size` bytes: the header, every entry
// (aligned to `function_alignment`, after the directory, inside the section, sorted and
// disjoint), every contract and the feature list inside the directory. Returns null, or what
// is wrong (a constant string; the caller adds which section). Reads nothing outside
// [bytes, bytes + size).
inline const char* read_code_directory(const uint8_t* bytes, uint64_t size, uint64_t function_alignment,
                                       CodeDirectory* out) {
  out->bytes = bytes;
  CodeDirectoryHeader& h = out->header;
  if (size < sizeof h) return "is smaller than a code directory";
  std::memcpy(&h, bytes, sizeof h);
  if (h.magic != kCodeDirectoryMagic) return "does not start with a code directory (magic)";
  if (h.section_size != size) return "has another size than its code directory says";
  if (h.reserved[0] != 0 || h.reserved[1] != 0) return "code directory: reserved words are not zero";
  if (h.directory_size < sizeof h || h.directory_size > size || h.directory_size % function_alignment != 0)
    return "code directory: directory_size is outside the section or not function-aligned";
  const uint64_t entries_end = sizeof h + uint64_t{h.num_functions} * sizeof(CodeDirectoryEntry);
  if (entries_end > h.directory_size) return "code directory: num_functions entries do not fit in the directory";
  uint64_t words_end = entries_end;  // contracts follow the entries, in order
  uint64_t code_end = h.directory_size;
  for (uint32_t i = 0; i < h.num_functions; ++i) {
    const CodeDirectoryEntry e = out->entry(i);
    if (e.offset % function_alignment != 0 || e.offset < code_end || e.size == 0 || e.size > size - e.offset)
      return "code directory: a function is misaligned, empty, before the previous one or outside the section";
    code_end = e.offset + e.size;
    if (e.contract_offset != words_end || e.num_args > (h.directory_size - words_end) / 16)
      return "code directory: a contract is out of place or outside the directory";
    words_end += e.num_args * 16;
  }
  if (h.features_offset != words_end || h.features_offset >= h.directory_size)
    return "code directory: the feature list is out of place";
  for (uint64_t i = h.features_offset;; ++i) {  // loops, not memchr: the DSP's C library subset
    if (i == h.directory_size) return "code directory: the feature list is not terminated";
    if (bytes[i] == 0) break;
  }
  return nullptr;
}

// The features of a comma-separated list one by one: the next one's start and length, null
// at the end. `*cursor` starts at the list.
inline const char* next_feature(const char** cursor, size_t* len) {
  const char* p = *cursor;
  if (*p == '\0') return nullptr;
  size_t n = 0;
  while (p[n] != '\0' && p[n] != ',') ++n;
  *len = n;
  *cursor = p[n] == ',' ? p + n + 1 : p + n;
  return p;
}

}  // namespace edge::abi
