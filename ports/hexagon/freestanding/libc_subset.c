/* libc_subset.c — the C library functions the runtime and edgert-run call, for a Hexagon
 * build with no C library (toolchains/hexagon.cmake: -ffreestanding -nostdlib): string and
 * memory functions, malloc / calloc / free / posix_memalign (each block its own pages), the
 * POSIX file and memory calls of device_runtime/src/bundle.cc and the hexagon port (open,
 * fstat, pread, mmap, mprotect, ...), clock_gettime, snprintf / vsnprintf (flags, width,
 * precision, the integer conversions, %s %c %p, %g / %f / %e to float precision), strerror,
 * errno (the integer division helpers: hexagon_divide.c).
 * Everything OS-specific goes through platform.h. Prototypes come from the build machine's
 * C headers (toolchains/hexagon.cmake), so the definitions follow their declarations. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "platform.h"

static int g_errno;
int* __errno_location(void) { return &g_errno; }

/* ---- memory and strings ---- */
void* memcpy(void* restrict dst, const void* restrict src, size_t n) {
  unsigned char* d = dst;
  const unsigned char* s = src;
  if ((((uintptr_t)d | (uintptr_t)s) & 3) == 0) {
    for (; n >= 4; n -= 4, d += 4, s += 4) *(uint32_t*)d = *(const uint32_t*)s;
  }
  while (n--) *d++ = *s++;
  return dst;
}
void* memmove(void* dst, const void* src, size_t n) {
  unsigned char* d = dst;
  const unsigned char* s = src;
  if (d == s || n == 0) return dst;
  if (d < s || d >= s + n) return memcpy(dst, src, n) , dst;
  while (n--) d[n] = s[n];
  return dst;
}
void* memset(void* dst, int c, size_t n) {
  unsigned char* d = dst;
  while (n--) *d++ = (unsigned char)c;
  return dst;
}
int memcmp(const void* a, const void* b, size_t n) {
  const unsigned char *x = a, *y = b;
  for (size_t i = 0; i < n; ++i)
    if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
  return 0;
}
size_t strlen(const char* s) {
  size_t n = 0;
  while (s[n]) ++n;
  return n;
}
int strcmp(const char* a, const char* b) {
  while (*a && *a == *b) ++a, ++b;
  return (unsigned char)*a - (unsigned char)*b;
}
char* strchr(const char* s, int c) {
  for (;; ++s) {
    if (*s == (char)c) return (char*)s;
    if (!*s) return NULL;
  }
}
int strncmp(const char* a, const char* b, size_t n) {
  for (; n; --n, ++a, ++b) {
    if (*a != *b) return (unsigned char)*a - (unsigned char)*b;
    if (!*a) return 0;
  }
  return 0;
}

uint64_t edge_udivmod64(uint64_t a, uint64_t b, uint64_t* rem); /* hexagon_divide.c */

/* The integer division helpers LLVM calls (__hexagon_udivdi3, ...) are in hexagon_divide.c,
 * which libedgert_skel.so links too. */

/* ---- memory: every block its own pages, a header in front ---- */
struct Block {
  void* base;
  size_t length;
};
static void* alloc_block(size_t alignment, size_t size, int zero) {
  (void)zero; /* fresh anonymous pages are zeroed */
  if (alignment < 16) alignment = 16;
  const size_t head = alignment >= sizeof(struct Block) ? alignment : 16;
  if (size > (size_t)-1 - head - 4096) return NULL;
  const size_t length = (head + size + 4095) & ~(size_t)4095;
  void* base = edge_pf_map_anon(length, EDGE_PF_PROT_READ | EDGE_PF_PROT_WRITE);
  if (edge_pf_failed(base)) {
    g_errno = ENOMEM;
    return NULL;
  }
  unsigned char* p = (unsigned char*)base + head;
  struct Block* b = (struct Block*)p - 1;
  b->base = base;
  b->length = length;
  return p;
}
void* malloc(size_t size) { return alloc_block(16, size, 0); }
void* calloc(size_t n, size_t size) {
  if (size && n > (size_t)-1 / size) return NULL;
  return alloc_block(16, n * size, 1);
}
void free(void* p) {
  if (!p) return;
  struct Block* b = (struct Block*)p - 1;
  edge_pf_unmap(b->base, b->length);
}
void* realloc(void* p, size_t size) {
  if (!p) return malloc(size);
  struct Block* b = (struct Block*)p - 1;
  const size_t have = b->length - (size_t)((unsigned char*)p - (unsigned char*)b->base);
  if (size <= have) return p;
  void* q = malloc(size);
  if (q) {
    memcpy(q, p, have);
    free(p);
  }
  return q;
}
int posix_memalign(void** out, size_t alignment, size_t size) {
  if (alignment == 0 || (alignment & (alignment - 1)) || alignment > 4096) return EINVAL;
  void* p = alloc_block(alignment, size, 0);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}
void abort(void) { edge_pf_exit(134); }
void exit(int code) { edge_pf_exit(code); }
void __assert_fail(const char* expr, const char* file, unsigned int line, const char* fn) {
  char buf[256];
  int n = snprintf(buf, sizeof buf, "%s:%u: %s: assertion failed: %s\n", file, line, fn, expr);
  edge_pf_write(2, buf, n > 0 && (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
  edge_pf_exit(134);
}

/* ---- POSIX files and memory ---- */
static long set_errno(long r) {
  if (r < 0 && r >= -4095) {
    g_errno = (int)-r;
    return -1;
  }
  return r;
}
int open(const char* path, int flags, ...) {
  return (int)set_errno(edge_pf_open(path, (flags & O_ACCMODE) == O_RDONLY ? EDGE_PF_OPEN_READ : EDGE_PF_OPEN_WRITE_CREATE));
}
int close(int fd) { return (int)set_errno(edge_pf_close(fd)); }
ssize_t read(int fd, void* buf, size_t n) { return set_errno(edge_pf_read(fd, buf, n)); }
ssize_t write(int fd, const void* buf, size_t n) { return set_errno(edge_pf_write(fd, buf, n)); }
ssize_t pread(int fd, void* buf, size_t n, off_t offset) {
  return set_errno(edge_pf_pread(fd, buf, n, (uint64_t)(int64_t)offset));
}
int fstat(int fd, struct stat* st) {
  int regular = 0;
  uint64_t size = 0;
  long r = edge_pf_file_info(fd, &regular, &size);
  if (r < 0) return (int)set_errno(r);
  memset(st, 0, sizeof *st);
  st->st_mode = regular ? S_IFREG | 0644 : S_IFIFO;
  st->st_size = (off_t)size;
  return 0;
}
int mkdir(const char* path, mode_t mode) {
  (void)mode;
  return (int)set_errno(edge_pf_mkdir(path));
}
static int pf_prot(int prot) {
  return (prot & PROT_READ ? EDGE_PF_PROT_READ : 0) | (prot & PROT_WRITE ? EDGE_PF_PROT_WRITE : 0) |
         (prot & PROT_EXEC ? EDGE_PF_PROT_EXEC : 0);
}
void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
  (void)addr;
  void* p;
  if (flags & MAP_ANONYMOUS) {
    p = edge_pf_map_anon(length, pf_prot(prot));
  } else {
    if (offset != 0 || (prot & PROT_WRITE)) {
      g_errno = EINVAL;
      return MAP_FAILED;
    }
    p = edge_pf_map_file(fd, length);
  }
  if (edge_pf_failed(p)) {
    g_errno = (int)-(intptr_t)p;
    return MAP_FAILED;
  }
  return p;
}
int munmap(void* p, size_t length) { return (int)set_errno(edge_pf_unmap(p, length)); }
int mprotect(void* p, size_t length, int prot) { return (int)set_errno(edge_pf_protect(p, length, pf_prot(prot))); }
int madvise(void* p, size_t length, int advice) {
  (void)p, (void)length, (void)advice;
  return 0;
}
int ioctl(int fd, unsigned long request, ...) {
  (void)fd, (void)request;
  g_errno = ENOTTY; /* no fs-verity on the DSP */
  return -1;
}
int clock_gettime(clockid_t clock, struct timespec* ts) {
  const uint64_t ns = clock == CLOCK_REALTIME ? edge_pf_realtime_ns() : edge_pf_monotonic_ns();
  ts->tv_sec = (time_t)(ns / 1000000000u);
  ts->tv_nsec = (long)(ns % 1000000000u);
  return 0;
}
long sysconf(int name) { return name == _SC_PAGESIZE ? 4096 : -1; }

char* strerror(int err) {
  switch (err) {
    case ENOENT: return (char*)"No such file or directory";
    case EACCES: return (char*)"Permission denied";
    case ENOMEM: return (char*)"Cannot allocate memory";
    case EINVAL: return (char*)"Invalid argument";
    case EISDIR: return (char*)"Is a directory";
    case ENOTDIR: return (char*)"Not a directory";
    case EEXIST: return (char*)"File exists";
    case EIO: return (char*)"Input/output error";
    case ENOTTY: return (char*)"Inappropriate ioctl for device";
    case EOPNOTSUPP: return (char*)"Operation not supported";
    case EOVERFLOW: return (char*)"Value too large for defined data type";
    default: return (char*)"Unknown error";
  }
}

/* ---- formatting ---- */
struct Out {
  char* buf;
  size_t cap, len;
};
static void put(struct Out* o, char c) {
  if (o->len + 1 < o->cap) o->buf[o->len] = c;
  o->len++;
}
static void put_padded(struct Out* o, const char* s, size_t n, int width, int left, char pad, const char* prefix) {
  size_t plen = prefix ? strlen(prefix) : 0;
  int fill = width > (int)(n + plen) ? width - (int)(n + plen) : 0;
  if (!left && pad == ' ')
    while (fill-- > 0) put(o, ' ');
  for (size_t i = 0; i < plen; ++i) put(o, prefix[i]);
  if (!left && pad == '0')
    while (fill-- > 0) put(o, '0');
  for (size_t i = 0; i < n; ++i) put(o, s[i]);
  if (left)
    while (fill-- > 0) put(o, ' ');
}
static size_t utoa(uint64_t v, unsigned base, int upper, char* end) {
  const char* digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  size_t n = 0;
  do {
    uint64_t r;
    v = edge_udivmod64(v, base, &r);
    *--end = digits[r];
    ++n;
  } while (v);
  return n;
}
/* %f / %e / %g in float arithmetic (the DSP has float, not double, instructions): about 7
 * significant digits, enough for the runtime's messages. */
static void format_float(struct Out* o, double dv, char conv, int prec, int width, int left, char pad, int plus) {
  float v = (float)dv;
  char tmp[64];
  size_t n = 0;
  const char* sign = v < 0 || (v == 0 && 1.0f / v < 0) ? "-" : plus ? "+" : "";
  if (v < 0) v = -v;
  if (v != v || v - v != 0) {
    const char* s = v != v ? "nan" : "inf";
    put_padded(o, s, 3, width, left, ' ', sign);
    return;
  }
  if (prec < 0) prec = 6;
  int exp10 = 0;
  if (v != 0) {
    while (v >= 10.0f) v /= 10.0f, ++exp10;
    while (v < 1.0f) v *= 10.0f, --exp10;
  }
  /* v in [1, 10): v * 10^exp10 */
  int use_exp = conv == 'e';
  int frac_digits = prec;
  if (conv == 'g') {
    if (prec == 0) prec = 1;
    use_exp = exp10 < -4 || exp10 >= prec;
    frac_digits = use_exp ? prec - 1 : prec - 1 - exp10;
    if (frac_digits < 0) frac_digits = 0;
  }
  if (frac_digits > 9) frac_digits = 9;
  /* digits: integer part and frac_digits decimals of the mantissa (e) or the value (f) */
  int int_part_digits = use_exp ? 1 : (exp10 >= 0 ? exp10 + 1 : 1);
  int total = int_part_digits + frac_digits;
  if (total > 9) total = 9, frac_digits = total - int_part_digits < 0 ? 0 : total - int_part_digits;
  /* scaled = round(value * 10^frac_digits) as an integer with `total` digits */
  float scaled = v;
  int shift = use_exp ? frac_digits : exp10 + frac_digits;
  for (int i = 0; i < shift; ++i) scaled *= 10.0f;
  for (int i = 0; i > shift; --i) scaled /= 10.0f;
  uint64_t digits = (uint64_t)(scaled + 0.5f);
  uint64_t limit = 1;
  for (int i = 0; i < (use_exp ? 1 + frac_digits : int_part_digits + frac_digits); ++i) limit *= 10;
  if (use_exp && digits >= limit) digits /= 10, ++exp10;
  char dig[32];
  size_t dn = utoa(digits, 10, 0, dig + sizeof dig);
  const char* d = dig + sizeof dig - dn;
  /* pad to at least frac_digits + 1 digits */
  char full[40];
  size_t fn = 0;
  for (int i = (int)dn; i < frac_digits + 1; ++i) full[fn++] = '0';
  memcpy(full + fn, d, dn);
  fn += dn;
  size_t int_len = fn - (size_t)frac_digits;
  memcpy(tmp + n, full, int_len), n += int_len;
  if (frac_digits > 0) {
    size_t end = fn;
    if (conv == 'g')
      while (end > int_len && full[end - 1] == '0') --end; /* %g drops trailing zeros */
    if (end > int_len) {
      tmp[n++] = '.';
      memcpy(tmp + n, full + int_len, end - int_len), n += end - int_len;
    }
  }
  if (use_exp) {
    tmp[n++] = 'e';
    tmp[n++] = exp10 < 0 ? '-' : '+';
    unsigned e = (unsigned)(exp10 < 0 ? -exp10 : exp10);
    if (e < 10) tmp[n++] = '0';
    char eb[8];
    size_t en = utoa(e, 10, 0, eb + sizeof eb);
    memcpy(tmp + n, eb + sizeof eb - en, en), n += en;
  }
  put_padded(o, tmp, n, width, left, pad, sign);
}
int vsnprintf(char* buf, size_t cap, const char* fmt, va_list ap) {
  struct Out o = {buf, cap, 0};
  for (const char* f = fmt; *f; ++f) {
    if (*f != '%') {
      put(&o, *f);
      continue;
    }
    ++f;
    int left = 0, plus = 0, space = 0, alt = 0;
    char pad = ' ';
    for (;; ++f) {
      if (*f == '-') left = 1;
      else if (*f == '0') pad = '0';
      else if (*f == '+') plus = 1;
      else if (*f == ' ') space = 1;
      else if (*f == '#') alt = 1;
      else break;
    }
    int width = 0, prec = -1;
    if (*f == '*') {
      width = va_arg(ap, int);
      if (width < 0) left = 1, width = -width;
      ++f;
    } else {
      while (*f >= '0' && *f <= '9') width = width * 10 + (*f++ - '0');
    }
    if (*f == '.') {
      ++f;
      prec = 0;
      if (*f == '*') {
        prec = va_arg(ap, int);
        ++f;
      } else {
        while (*f >= '0' && *f <= '9') prec = prec * 10 + (*f++ - '0');
      }
    }
    int len = 0; /* 0 int, 1 long, 2 long long, 3 size_t, -1 short, -2 char */
    for (;; ++f) {
      if (*f == 'l') len = len == 1 ? 2 : 1;
      else if (*f == 'h') len = len == -1 ? -2 : -1;
      else if (*f == 'z' || *f == 't') len = 3;
      else if (*f == 'j' || *f == 'q') len = 2;
      else if (*f == 'L') len = 0;
      else break;
    }
    if (left) pad = ' ';
    char tmp[72];
    char* end = tmp + sizeof tmp;
    switch (*f) {
      case 'd':
      case 'i': {
        int64_t v = len == 2 ? va_arg(ap, long long) : len == 1 ? va_arg(ap, long) : len == 3 ? (int64_t)va_arg(ap, ssize_t) : va_arg(ap, int);
        if (len == -1) v = (short)v;
        if (len == -2) v = (signed char)v;
        size_t n = utoa(v < 0 ? -(uint64_t)v : (uint64_t)v, 10, 0, end);
        if (prec >= 0) pad = ' ';
        while ((int)n < prec) *(end - ++n) = '0';
        put_padded(&o, end - n, n, width, left, pad, v < 0 ? "-" : plus ? "+" : space ? " " : "");
        break;
      }
      case 'u':
      case 'x':
      case 'X':
      case 'o': {
        uint64_t v = len == 2 ? va_arg(ap, unsigned long long) : len == 1 ? va_arg(ap, unsigned long) : len == 3 ? (uint64_t)va_arg(ap, size_t) : va_arg(ap, unsigned);
        if (len == -1) v = (unsigned short)v;
        if (len == -2) v = (unsigned char)v;
        const unsigned base = *f == 'u' ? 10 : *f == 'o' ? 8 : 16;
        size_t n = utoa(v, base, *f == 'X', end);
        if (prec >= 0) pad = ' ';
        while ((int)n < prec) *(end - ++n) = '0';
        put_padded(&o, end - n, n, width, left, pad, alt && v && base == 16 ? (*f == 'X' ? "0X" : "0x") : "");
        break;
      }
      case 'p': {
        size_t n = utoa((uintptr_t)va_arg(ap, void*), 16, 0, end);
        put_padded(&o, end - n, n, width, left, ' ', "0x");
        break;
      }
      case 'c': {
        char c = (char)va_arg(ap, int);
        put_padded(&o, &c, 1, width, left, ' ', "");
        break;
      }
      case 's': {
        const char* s = va_arg(ap, const char*);
        if (!s) s = "(null)";
        size_t n = 0;
        while (s[n] && (prec < 0 || (int)n < prec)) ++n;
        put_padded(&o, s, n, width, left, ' ', "");
        break;
      }
      case 'f':
      case 'F':
      case 'e':
      case 'g':
      case 'G':
        format_float(&o, va_arg(ap, double), *f == 'F' ? 'f' : *f == 'G' ? 'g' : *f, prec, width, left, pad, plus);
        break;
      case '%': put(&o, '%'); break;
      case '\0': --f; break;
      default: put(&o, '%'), put(&o, *f); break;
    }
  }
  if (cap) buf[o.len < cap ? o.len : cap - 1] = '\0';
  return (int)o.len;
}
int snprintf(char* buf, size_t cap, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, cap, fmt, ap);
  va_end(ap);
  return n;
}
