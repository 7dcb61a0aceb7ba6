// npy.cc — the .npy format: magic "\x93NUMPY", version, header length (2 bytes in 1.0,
// 4 bytes in 2.0/3.0), a Python dict literal, then the raw array bytes.
#include "npy.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace edgert_tools {
namespace {

const edgert_dtype kAllDtypes[] = {EDGERT_F32, EDGERT_F16, EDGERT_I8,  EDGERT_U8,
                                   EDGERT_I16, EDGERT_I32, EDGERT_I64, EDGERT_BOOL,
                                   EDGERT_U16, EDGERT_U32, EDGERT_U64, EDGERT_F64};

struct File {
  FILE* f = nullptr;
  ~File() {
    if (f) std::fclose(f);
  }
};

std::string errno_text() { return std::strerror(errno); }

// Value of `key` in the header dict: the text after "'key':" with leading spaces skipped.
const char* find_key(const std::string& header, const char* key) {
  for (const char quote : {'\'', '"'}) {
    std::string k = std::string(1, quote) + key + quote;
    size_t pos = header.find(k);
    if (pos == std::string::npos) continue;
    pos = header.find(':', pos + k.size());
    if (pos == std::string::npos) return nullptr;
    const char* p = header.c_str() + pos + 1;
    while (*p == ' ') ++p;
    return p;
  }
  return nullptr;
}

bool parse_header(const std::string& header, NpyArray* out, std::string* error) {
  const char* descr = find_key(header, "descr");
  if (!descr || (*descr != '\'' && *descr != '"')) {
    *error = "header has no 'descr'";
    return false;
  }
  const char* end = std::strchr(descr + 1, *descr);
  if (!end) {
    *error = "header 'descr' is not terminated";
    return false;
  }
  std::string d(descr + 1, end);
  bool found = false;
  for (edgert_dtype dt : kAllDtypes) {
    if (d == npy_descr(dt)) {
      out->dtype = dt;
      found = true;
    }
  }
  if (!found) {
    *error = "unsupported dtype '" + d + "' (little-endian numeric or bool only)";
    return false;
  }
  const char* fortran = find_key(header, "fortran_order");
  if (!fortran || std::strncmp(fortran, "False", 5) != 0) {
    *error = "only C-order arrays are supported (fortran_order must be False)";
    return false;
  }
  const char* p = find_key(header, "shape");
  if (!p || *p != '(') {
    *error = "header has no 'shape' tuple";
    return false;
  }
  ++p;
  out->shape.clear();
  for (;;) {
    while (*p == ' ' || *p == ',') ++p;
    if (*p == ')') break;
    char* next = nullptr;
    errno = 0;
    long long v = std::strtoll(p, &next, 10);
    if (next == p || v < 0 || errno != 0) {
      *error = "malformed 'shape' in header";
      return false;
    }
    out->shape.push_back(v);
    p = next;
  }
  return true;
}

}  // namespace

bool AlignedBuffer::allocate(size_t size) {
  void* p = nullptr;
  // Round up so the block is never empty and any tail vector load stays inside it.
  const size_t rounded = (size + 63) / 64 * 64 + 64;
  if (posix_memalign(&p, 64, rounded) != 0) return false;
  std::memset(p, 0, rounded);
  ptr_.reset(static_cast<uint8_t*>(p));
  size_ = size;
  return true;
}

const char* npy_descr(edgert_dtype dtype) {
  switch (dtype) {
    case EDGERT_F32: return "<f4";
    case EDGERT_F16: return "<f2";
    case EDGERT_I8: return "|i1";
    case EDGERT_U8: return "|u1";
    case EDGERT_I16: return "<i2";
    case EDGERT_I32: return "<i4";
    case EDGERT_I64: return "<i8";
    case EDGERT_BOOL: return "|b1";
    case EDGERT_U16: return "<u2";
    case EDGERT_U32: return "<u4";
    case EDGERT_U64: return "<u8";
    case EDGERT_F64: return "<f8";
  }
  return "?";
}

std::string shape_string(const int64_t* shape, size_t rank) {
  std::string s = "(";
  for (size_t i = 0; i < rank; ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (rank == 1) s += ",";
  return s + ")";
}

bool read_npy(const char* path, NpyArray* out, std::string* error) {
  File file;
  file.f = std::fopen(path, "rb");
  if (!file.f) {
    *error = std::string("cannot open ") + path + ": " + errno_text();
    return false;
  }
  unsigned char pre[8];
  if (std::fread(pre, 1, 8, file.f) != 8 || std::memcmp(pre, "\x93NUMPY", 6) != 0) {
    *error = std::string(path) + ": not a .npy file";
    return false;
  }
  const int major = pre[6];
  uint32_t header_len = 0;
  if (major == 1) {
    unsigned char b[2];
    if (std::fread(b, 1, 2, file.f) != 2) goto truncated;
    header_len = b[0] | (b[1] << 8);
  } else if (major == 2 || major == 3) {
    unsigned char b[4];
    if (std::fread(b, 1, 4, file.f) != 4) goto truncated;
    header_len = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint32_t>(b[3]) << 24);
  } else {
    *error = std::string(path) + ": unsupported .npy format version " + std::to_string(major);
    return false;
  }
  if (header_len > (1u << 20)) {
    *error = std::string(path) + ": .npy header too large";
    return false;
  }
  {
    std::string header(header_len, '\0');
    if (header_len && std::fread(&header[0], 1, header_len, file.f) != header_len) goto truncated;
    std::string parse_error;
    if (!parse_header(header, out, &parse_error)) {
      *error = std::string(path) + ": " + parse_error;
      return false;
    }
    size_t bytes = edgert_dtype_size(out->dtype);
    for (int64_t d : out->shape) {
      if (__builtin_mul_overflow(bytes, static_cast<size_t>(d), &bytes)) {
        *error = std::string(path) + ": array too large";
        return false;
      }
    }
    if (!out->data.allocate(bytes)) {
      *error = std::string(path) + ": out of memory";
      return false;
    }
    if (bytes && std::fread(out->data.data(), 1, bytes, file.f) != bytes) goto truncated;
    if (std::fgetc(file.f) != EOF) {
      *error = std::string(path) + ": trailing bytes after the array data";
      return false;
    }
  }
  return true;
truncated:
  *error = std::string(path) + ": truncated .npy file";
  return false;
}

bool write_npy(const char* path, edgert_dtype dtype, const int64_t* shape, int rank,
               const void* data, size_t size, std::string* error) {
  std::string header =
      std::string("{'descr': '") + npy_descr(dtype) +
      "', 'fortran_order': False, 'shape': " + shape_string(shape, static_cast<size_t>(rank)) +
      ", }";
  // Pad with spaces so the data starts at a multiple of 64, then end with '\n' (as NumPy).
  const size_t prefix = 10;
  size_t total = prefix + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  if (header.size() > 65535) {
    *error = std::string(path) + ": header too long for .npy format 1.0";
    return false;
  }
  unsigned char pre[10] = {0x93,
                           'N',
                           'U',
                           'M',
                           'P',
                           'Y',
                           1,
                           0,
                           static_cast<unsigned char>(header.size() & 0xff),
                           static_cast<unsigned char>(header.size() >> 8)};
  File file;
  file.f = std::fopen(path, "wb");
  if (!file.f) {
    *error = std::string("cannot create ") + path + ": " + errno_text();
    return false;
  }
  bool ok = std::fwrite(pre, 1, sizeof(pre), file.f) == sizeof(pre) &&
            std::fwrite(header.data(), 1, header.size(), file.f) == header.size() &&
            (size == 0 || std::fwrite(data, 1, size, file.f) == size);
  ok = (std::fclose(file.f) == 0) && ok;
  file.f = nullptr;
  if (!ok) {
    *error = std::string("cannot write ") + path + ": " + errno_text();
    return false;
  }
  return true;
}

}  // namespace edgert_tools
