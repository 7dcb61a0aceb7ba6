// npy.cc — the .npy format: magic "\x93NUMPY", version, header length (2 bytes in 1.0,
// 4 bytes in 2.0/3.0), a Python dict literal, then the raw array bytes.
#include "npy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

// '|' and '=' dtypes are read as this machine's byte order, which must be little-endian.
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the .npy reader assumes a little-endian host"
#endif

namespace edgert_tools {
namespace {

struct File {
  FILE* f = nullptr;
  ~File() {
    if (f) std::fclose(f);
  }
};

std::string errno_text() { return std::strerror(errno); }

const char* file_kind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a file";
}

std::string not_regular(const char* path, mode_t mode) {
  return std::string(path) + ": not a regular file (" + file_kind(mode) + ")";
}

// Opens `path` for reading if it is a regular file, and gets its size; -1 with *error set
// otherwise. O_NONBLOCK so that opening a FIFO returns at once instead of waiting for a writer.
int open_regular(const char* path, uint64_t* size, std::string* error) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    *error = std::string("cannot open ") + path + ": " + errno_text();
    return -1;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    *error = std::string("cannot stat ") + path + ": " + errno_text();
    ::close(fd);
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    *error = not_regular(path, st.st_mode);
    ::close(fd);
    return -1;
  }
  // Back to blocking reads (no effect on a regular file, but nothing to surprise a reader).
  const int flags = fcntl(fd, F_GETFL);
  if (flags >= 0) fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  *size = static_cast<uint64_t>(st.st_size);
  return fd;
}

// The header dict, e.g. {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }.
// numpy reads it with ast.literal_eval and wants exactly these three keys; this parses that
// subset of Python literals (keys in any order, either quote, any whitespace, trailing
// commas) and refuses anything else, so a file is never read differently from numpy.
struct HeaderDict {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

class HeaderParser {
 public:
  HeaderParser(const char* begin, const char* end) : p_(begin), end_(end) {}

  bool parse(HeaderDict* out, std::string* error) {
    error_ = error;
    bool seen[3] = {false, false, false};  // descr, fortran_order, shape
    if (!eat('{')) return fail("the header is not a dict (expected '{')");
    while (!at('}')) {
      std::string key;
      if (!string(&key, "key")) return false;
      const int k = key == "descr" ? 0 : key == "fortran_order" ? 1 : key == "shape" ? 2 : -1;
      if (k < 0)
        return fail("unknown key '" + key + "' in the header (a .npy header has 'descr', " +
                    "'fortran_order' and 'shape')");
      // Python keeps the last of repeated keys; refusing is clearer than either choice.
      if (seen[k]) return fail("key '" + key + "' appears twice in the header");
      seen[k] = true;
      if (!eat(':')) return fail("expected ':' after '" + key + "'" + near());
      if (k == 0 && at('[')) return fail("structured dtypes (a list as 'descr') are not supported");
      const bool ok = k == 0 ? string(&out->descr, "'descr' string")
                      : k == 1 ? boolean(&out->fortran_order)
                               : tuple(&out->shape);
      if (!ok) return false;
      if (!eat(',') && !at('}')) return fail("expected ',' or '}' after the value of '" + key + "'" + near());
    }
    ++p_;  // '}'
    skip_space();  // numpy pads with spaces and ends with '\n'
    if (p_ != end_) return fail("unexpected text after the header dict" + near());
    const char* const names[3] = {"descr", "fortran_order", "shape"};
    for (int k = 0; k < 3; ++k)
      if (!seen[k]) return fail(std::string("the header has no '") + names[k] + "'");
    return true;
  }

 private:
  bool fail(const std::string& message) {
    *error_ = message;
    return false;
  }
  // " at '...'": where parsing stopped, for messages.
  std::string near() const {
    if (p_ == end_) return " (the header ends there)";
    std::string s;
    for (const char* q = p_; q < end_ && s.size() < 16; ++q) s += (*q >= 0x20 && *q < 0x7f) ? *q : '?';
    return " at '" + s + "'";
  }
  void skip_space() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r' || *p_ == '\f' || *p_ == '\v')) ++p_;
  }
  bool at(char c) {
    skip_space();
    return p_ < end_ && *p_ == c;
  }
  bool eat(char c) {
    if (!at(c)) return false;
    ++p_;
    return true;
  }
  static bool word_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  }
  // A plain '...' or "..." string: no escapes or prefixes (numpy writes none).
  bool string(std::string* out, const char* what) {
    if (!at('\'') && !at('"')) return fail(std::string("expected a quoted ") + what + near());
    const char quote = *p_++;
    const char* start = p_;
    while (p_ < end_ && *p_ != quote) {
      if (*p_ == '\\' || *p_ == '\n') return fail("escapes and line breaks in header strings are not supported");
      ++p_;
    }
    if (p_ == end_) return fail("unterminated string in the header");
    out->assign(start, p_);
    ++p_;
    return true;
  }
  bool boolean(bool* out) {
    skip_space();
    const char* start = p_;
    while (p_ < end_ && word_char(*p_)) ++p_;
    const std::string w(start, p_);
    if (w != "True" && w != "False") {
      p_ = start;
      return fail("'fortran_order' must be True or False" + near());
    }
    *out = w == "True";
    return true;
  }
  // A non-negative decimal integer, as Python writes it (no sign, leading zeros or '_').
  bool integer(int64_t* out) {
    skip_space();
    const char* start = p_;
    uint64_t v = 0;
    for (; p_ < end_ && *p_ >= '0' && *p_ <= '9'; ++p_) {
      const unsigned digit = static_cast<unsigned>(*p_ - '0');
      if (v > (static_cast<uint64_t>(INT64_MAX) - digit) / 10) return fail("a dimension in 'shape' is too large");
      v = v * 10 + digit;
    }
    if (p_ == start || (p_ < end_ && (word_char(*p_) || *p_ == '.')) || (*start == '0' && p_ - start > 1)) {
      p_ = start;
      return fail("'shape' must hold non-negative decimal integers" + near());
    }
    *out = static_cast<int64_t>(v);
    return true;
  }
  // (), (N,), (N, M), (N, M,)
  bool tuple(std::vector<int64_t>* out) {
    if (!eat('(')) return fail("'shape' must be a tuple such as (2, 3)" + near());
    out->clear();
    if (eat(')')) return true;
    for (;;) {
      int64_t d = 0;
      if (!integer(&d)) return false;
      out->push_back(d);
      if (out->size() > 64) return fail("'shape' has more than 64 dimensions");
      if (eat(',')) {
        if (eat(')')) return true;
      } else if (eat(')')) {
        // Python reads (N) as the integer N, which numpy refuses as a shape.
        if (out->size() == 1) return fail("'shape' (" + std::to_string(d) + ") is not a tuple; a 1-D shape is written (N,)");
        return true;
      } else {
        return fail("expected ',' or ')' in 'shape'" + near());
      }
    }
  }

  const char* p_;
  const char* end_;
  std::string* error_ = nullptr;
};

// The edgert dtype of a .npy descr such as '<f4'.
bool parse_descr(const std::string& descr, edgert_dtype* out, std::string* error) {
  // Byte order: '<' little, '>' big, '|' not applicable, '=' native (little, see above).
  char order = '=';
  std::string type = descr;
  if (!type.empty() && (type[0] == '<' || type[0] == '>' || type[0] == '|' || type[0] == '=')) {
    order = type[0];
    type.erase(0, 1);
  }
  if (!type.empty() && type[0] == 'O') {
    *error = "object arrays (dtype '" + descr + "') are not supported: numpy stores them with pickle";
    return false;
  }
  static const struct {
    const char* code;
    edgert_dtype dtype;
  } kTypes[] = {{"f2", EDGERT_F16}, {"f4", EDGERT_F32}, {"f8", EDGERT_F64}, {"i1", EDGERT_I8},
                {"i2", EDGERT_I16}, {"i4", EDGERT_I32}, {"i8", EDGERT_I64}, {"u1", EDGERT_U8},
                {"u2", EDGERT_U16}, {"u4", EDGERT_U32}, {"u8", EDGERT_U64}, {"b1", EDGERT_BOOL}};
  for (const auto& t : kTypes) {
    if (type != t.code) continue;
    if (order == '>' && edgert_dtype_size(t.dtype) > 1) {
      *error = "big-endian dtype '" + descr + "' is not supported (little-endian only; save arr.astype('<" +
               type + "'))";
      return false;
    }
    *out = t.dtype;
    return true;
  }
  *error = "unsupported dtype '" + descr + "' (f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1, little-endian)";
  return false;
}

}  // namespace

bool AlignedBuffer::allocate(size_t size, size_t alignment) {
  if (size > SIZE_MAX - 2 * 64) return false;  // the rounding below must not wrap
  void* p = nullptr;
  // Round up so the block is never empty and any tail vector load stays inside it.
  const size_t rounded = (size + 63) / 64 * 64 + 64;
  if (posix_memalign(&p, alignment < 64 ? 64 : alignment, rounded) != 0) return false;
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
    case EDGERT_BF16: return "|V2";  // numpy has no bfloat16: the raw 2-byte values
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

bool check_regular_file(const char* path, std::string* error) {
  struct stat st;
  if (stat(path, &st) != 0) {
    *error = std::string(path) + ": " + errno_text();
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    *error = not_regular(path, st.st_mode);
    return false;
  }
  return true;
}

bool read_regular_file(const char* path, size_t alignment, AlignedBuffer* out, std::string* error) {
  uint64_t size = 0;
  const int fd = open_regular(path, &size, error);
  if (fd < 0) return false;
  if (size > SIZE_MAX || !out->allocate(static_cast<size_t>(size), alignment)) {
    ::close(fd);
    *error = std::string(path) + ": out of memory reading " + std::to_string(size) + " bytes";
    return false;
  }
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::read(fd, out->data() + done, static_cast<size_t>(size) - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *error = std::string("cannot read ") + path + ": " + errno_text();
      ::close(fd);
      return false;
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  if (done != size) {
    *error = std::string(path) + ": the file shrank while being read";
    return false;
  }
  return true;
}

NpyReader::~NpyReader() {
  if (file_) std::fclose(file_);
}

bool NpyReader::open(const char* path, std::string* error) {
  path_ = path;
  const int fd = open_regular(path, &file_size_, error);
  if (fd < 0) return false;
  file_ = fdopen(fd, "rb");
  if (!file_) {
    *error = std::string("cannot open ") + path + ": " + errno_text();
    ::close(fd);
    return false;
  }
  const std::string where = path_ + ": ";
  unsigned char pre[8];
  if (std::fread(pre, 1, 8, file_) != 8 || std::memcmp(pre, "\x93NUMPY", 6) != 0) {
    *error = where + "not a .npy file";
    return false;
  }
  const int major = pre[6], minor = pre[7];
  if (major < 1 || major > 3 || minor != 0) {
    *error = where + "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
             " (1.0, 2.0 and 3.0 are read)";
    return false;
  }
  // The header length: 2 bytes in 1.0, 4 in 2.0 and 3.0 (little-endian).
  const size_t len_bytes = major == 1 ? 2 : 4;
  unsigned char b[4] = {0, 0, 0, 0};
  if (std::fread(b, 1, len_bytes, file_) != len_bytes) {
    *error = where + "truncated .npy file (it ends inside the header length)";
    return false;
  }
  const uint32_t header_len = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint32_t>(b[3]) << 24);
  if (header_len > (1u << 20)) {
    *error = where + ".npy header too large (" + std::to_string(header_len) + " bytes)";
    return false;
  }
  data_offset_ = 8 + len_bytes + header_len;
  if (data_offset_ > file_size_) {
    *error = where + "truncated .npy file: its header is " + std::to_string(header_len) + " bytes, but only " +
             std::to_string(file_size_ - (8 + len_bytes)) + " follow the header length";
    return false;
  }
  std::string header(header_len, '\0');
  if (header_len && std::fread(&header[0], 1, header_len, file_) != header_len) {
    *error = where + "truncated .npy file (it shrank while being read)";
    return false;
  }
  HeaderDict dict;
  std::string why;
  if (!HeaderParser(header.data(), header.data() + header.size()).parse(&dict, &why) ||
      !parse_descr(dict.descr, &dtype_, &why)) {
    *error = where + why;
    return false;
  }
  shape_ = dict.shape;
  // Column-major data has the same bytes as row-major when at most one dimension exceeds 1.
  int long_dims = 0;
  for (int64_t d : shape_) long_dims += d > 1;
  if (dict.fortran_order && long_dims > 1) {
    *error = where + "fortran_order is True for shape " + shape_string(shape_.data(), shape_.size()) +
             "; only C-order data is supported (save np.ascontiguousarray(arr))";
    return false;
  }
  return true;
}

bool NpyReader::read(NpyArray* out, std::string* error) {
  const std::string where = path_ + ": ";
  const std::string declared = std::string(edgert_dtype_name(dtype_)) + " " + shape_string(shape_.data(), shape_.size());
  // Elements times element size, without overflow.
  uint64_t bytes = edgert_dtype_size(dtype_);
  for (int64_t d : shape_) {
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes) || bytes > SIZE_MAX) {
      *error = where + "array too large: its header declares " + declared + ", over 2^64 bytes";
      return false;
    }
  }
  // Against the file size before allocating: a short file must not cost the memory it claims.
  const uint64_t available = file_size_ - data_offset_;
  if (available != bytes) {
    *error = where + (available < bytes ? "truncated .npy file, shorter than its header says: "
                                        : "trailing bytes after the array data: ") +
             "the header declares " + declared + " = " + std::to_string(bytes) + " bytes of data, and " +
             std::to_string(available) + " bytes follow the header";
    return false;
  }
  out->dtype = dtype_;
  out->shape = shape_;
  if (!out->data.allocate(static_cast<size_t>(bytes))) {
    *error = where + "out of memory for " + std::to_string(bytes) + " bytes";
    return false;
  }
  if (bytes && std::fread(out->data.data(), 1, static_cast<size_t>(bytes), file_) != bytes) {
    *error = where + "truncated .npy file (it shrank while being read)";
    return false;
  }
  return true;
}

bool read_npy(const char* path, NpyArray* out, std::string* error) {
  NpyReader reader;
  return reader.open(path, error) && reader.read(out, error);
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
