// npy.h — reading and writing NumPy .npy files for the edgert command-line tools.
// Little-endian, C order only; the dtypes are exactly edgert's.
#pragma once
#include <cstddef>
#include <cstdint>
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
  bool allocate(size_t size);  // false when out of memory
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

// Reads a .npy file (format 1.0, 2.0 or 3.0). On failure returns false and sets *error.
bool read_npy(const char* path, NpyArray* out, std::string* error);

// Writes a format 1.0 .npy file. On failure returns false and sets *error.
bool write_npy(const char* path, edgert_dtype dtype, const int64_t* shape, int rank,
               const void* data, size_t size, std::string* error);

// The .npy descr of a dtype ("<f4", "|u1", ...).
const char* npy_descr(edgert_dtype dtype);

// "(2, 3)", "(4,)", "()": shapes in messages look like NumPy's.
std::string shape_string(const int64_t* shape, size_t rank);

}  // namespace edgert_tools
