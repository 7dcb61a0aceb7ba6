// bundle_header.h — the fixed 64-byte header at the start of every bundle file,
// and the content hash. Shared by edgec (C++20) and edgert (C++17, no exceptions).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace edge::bundle {

inline constexpr char kMagic[8] = {'E', 'D', 'G', 'E', 'B', 'N', 'D', 'L'};
// 2: code formats, launch shapes, memory spaces, prepared OpenCL programs (bundle.fbs).
// 3: argument contracts and function tables (bundle.fbs).
// 4: MachineCode sections start with a code directory (code_directory.h).
inline constexpr uint32_t kFormatVersion = 4;
inline constexpr uint32_t kHeaderSize = 64;
inline constexpr uint64_t kDataAlignment = 4096;   // data blob offset in the file
inline constexpr uint64_t kSectionAlignment = 64;  // minimum section / buffer alignment

// Little-endian on disk; every target we support is little-endian.
struct BundleHeader {
  char magic[8];
  uint32_t format_version;
  uint32_t header_size;
  uint64_t fb_offset;     // FlatBuffer (root Bundle)
  uint64_t fb_size;
  uint64_t data_offset;   // data blob (sections)
  uint64_t data_size;
  uint64_t content_hash;  // content_hash() of the FlatBuffer bytes, then the data blob bytes
  uint64_t reserved;
};
static_assert(sizeof(BundleHeader) == kHeaderSize, "header must be 64 bytes");

// 64-bit FNV-1a over 8-byte words (bytes for the tail): fast enough to check a
// 50 MB bundle at open, and stable across hosts. Not cryptographic: it catches
// truncation and corruption, not tampering (that is what a signature is for:
// bundle_signature.h).
inline uint64_t content_hash_update(uint64_t h, const void* data, size_t size) {
  const uint64_t prime = 0x100000001b3ull;
  const unsigned char* p = static_cast<const unsigned char*>(data);
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t w;
    __builtin_memcpy(&w, p + i, 8);  // inline even where -ffreestanding makes memcpy a call (Hexagon)
    h = (h ^ w) * prime;
  }
  for (; i < size; ++i) h = (h ^ p[i]) * prime;
  return h;
}
inline constexpr uint64_t kContentHashSeed = 0xcbf29ce484222325ull;

// n rounded up to a multiple of a (a > 0): section, weight, directory and program offsets.
inline uint64_t align_up(uint64_t n, uint64_t a) { return (n + a - 1) / a * a; }

}  // namespace edge::bundle
