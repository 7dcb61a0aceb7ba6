// npy.h — reading and writing NumPy .npy files for the edgert command-line tools.
// Little-endian, C order only; the dtypes are exactly edgert's.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "edgert.h"

namespace edgert_tools {

// A zeroed, 64-byte-aligned block: what edgert_bind_* likes best.
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  // false when out of memory; `alignment` is a power of two >= sizeof(void*)
  bool allocate(size_t size, size_t alignment = 64);
  uint8_t* data() const { return ptr_.get(); }
  size_t size() const { return size_; }

 private:
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t, Free> ptr_;
  size_t size_ = 0;
};

struct NpyArray {
  edgert_dtype dtype = EDGERT_F32;
  std::vector<int64_t> shape;
  AlignedBuffer data;
};

// A .npy file whose header has been read: dtype and shape are known, the data is not
// read (nor allocated) yet, so a caller can check them first.
class NpyReader {
 public:
  NpyReader() = default;
  NpyReader(const NpyReader&) = delete;
  NpyReader& operator=(const NpyReader&) = delete;
  ~NpyReader();
  // Opens `path` (a regular file only) and parses its header (format 1.0, 2.0 or 3.0).
  bool open(const char* path, std::string* error);
  edgert_dtype dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  // Reads the array data into *out (dtype and shape too). Checks the header-declared size
  // against the file size before allocating anything.
  bool read(NpyArray* out, std::string* error);

 private:
  std::string path_;
  FILE* file_ = nullptr;
  uint64_t file_size_ = 0, data_offset_ = 0;
  edgert_dtype dtype_ = EDGERT_F32;
  std::vector<int64_t> shape_;
};

// Reads a .npy file (open + read above). On failure returns false and sets *error.
bool read_npy(const char* path, NpyArray* out, std::string* error);

// Writes a format 1.0 .npy file. On failure returns false and sets *error.
bool write_npy(const char* path, edgert_dtype dtype, const int64_t* shape, int rank,
               const void* data, size_t size, std::string* error);

// The .npy descr of a dtype ("<f4", "|u1", ...).
const char* npy_descr(edgert_dtype dtype);

// "(2, 3)", "(4,)", "()": shapes in messages look like NumPy's.
std::string shape_string(const int64_t* shape, size_t rank);

// Files given on the command line. Anything but a regular file is refused before it is
// read: opening a FIFO blocks until a writer appears, and a device may never end.

// True when `path` is a regular file (after symlinks); else false and *error says
// "PATH: not a regular file (a FIFO)" or why it cannot be examined.
bool check_regular_file(const char* path, std::string* error);

// Reads the whole regular file `path` into *out, its start aligned to `alignment`.
bool read_regular_file(const char* path, size_t alignment, AlignedBuffer* out, std::string* error);

}  // namespace edgert_tools
