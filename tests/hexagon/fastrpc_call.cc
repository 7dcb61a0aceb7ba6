// fastrpc_call.cc — calls libedgert_skel's skeleton the way the DSP's FastRPC framework does,
// under qemu-hexagon: a static freestanding program (like edgert-run) linked with the same
// edgert_skel.cc object the shared library has. Each call builds the scalars word from the
// method and the buffer / handle counts and the remote_arg array (primIn first) exactly as
// edgert.idl says qaic marshals it. tests/hexagon/test_hexagon.py drives it:
//   fastrpc-call run BUNDLE INPUTS.bin OUTPUTS.bin OUTPUTS_LEN [--static]
//       open (handle form, or the static form with --static), dsp_open_bundle, dsp_run, dsp_last_error,
//       dsp_close_bundle, close; writes the packed outputs. Exit 0, or 1 naming the failing call.
//   fastrpc-call malformed BUNDLE INPUTS_LEN OUTPUTS_LEN
//       malformed calls (wrong sc, short buffers, unknown handle and method, truncated and
//       corrupted bundles, calls out of order), each of which must return its error code
//       without crashing; prints one line per call. Exit 0 when every code is the expected one.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

#include "fastrpc_abi.h"

namespace {

void say(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void say(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n > 0) write(1, buf, static_cast<size_t>(n) < sizeof buf ? static_cast<size_t>(n) : sizeof buf - 1);
}

// The whole file in page-aligned memory (the way the ARM side's rpcmem buffer is aligned).
char* read_all(const char* path, size_t* size) {
  int fd = open(path, O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    say("fastrpc-call: cannot open %s\n", path);
    return nullptr;
  }
  void* p = nullptr;
  if (posix_memalign(&p, 4096, st.st_size ? st.st_size : 1) != 0) return nullptr;
  size_t done = 0;
  while (done < static_cast<size_t>(st.st_size)) {
    ssize_t r = read(fd, static_cast<char*>(p) + done, st.st_size - done);
    if (r <= 0) break;
    done += r;
  }
  close(fd);
  *size = done;
  return static_cast<char*>(p);
}

// The libc subset has no strtoul / strstr.
size_t to_size(const char* s) {
  size_t v = 0;
  for (; *s >= '0' && *s <= '9'; ++s) v = v * 10 + static_cast<size_t>(*s - '0');
  return v;
}
bool contains(const char* text, const char* word) {
  const size_t n = std::strlen(word);
  for (; *text; ++text)
    if (std::strncmp(text, word, n) == 0) return true;
  return false;
}

remote_arg buf(const void* p, size_t n) {
  remote_arg a;
  a.buf.pv = const_cast<void*>(p);
  a.buf.nLen = n;
  return a;
}

// One remote call: the handle form when `handle` is given, else the static form (whose
// methods are the handle form's minus EDGERT_STATIC_METHOD_OFFSET).
struct Caller {
  bool is_static;
  remote_handle64 handle;
  int call(uint32_t method, uint32_t in, uint32_t out, remote_arg* pra) const {
    if (is_static)
      return edgert_skel_invoke(EDGE_RPC_SC_MAKE(method - EDGERT_STATIC_METHOD_OFFSET, in, out), pra);
    return edgert_skel_handle_invoke(handle, EDGE_RPC_SC_MAKE(method, in, out), pra);
  }
  int dsp_open_bundle(const void* data, uint32_t len) const {
    uint32_t prim[1] = {len};
    remote_arg pra[2] = {buf(prim, sizeof prim), buf(data, len)};
    return call(EDGERT_M_OPEN_BUNDLE, 2, 0, pra);
  }
  int dsp_run(const void* in, uint32_t in_len, void* out, uint32_t out_len) const {
    uint32_t prim[2] = {in_len, out_len};
    remote_arg pra[3] = {buf(prim, sizeof prim), buf(in, in_len), buf(out, out_len)};
    return call(EDGERT_M_RUN, 2, 1, pra);
  }
  int dsp_last_error(char* text, uint32_t len) const {
    uint32_t prim[1] = {len};
    remote_arg pra[2] = {buf(prim, sizeof prim), buf(text, len)};
    return call(EDGERT_M_LAST_ERROR, 1, 1, pra);
  }
  int dsp_close_bundle() const { return call(EDGERT_M_CLOSE_BUNDLE, 0, 0, nullptr); }
};

const char kUri[] = "file:///libedgert_skel.so?edgert_skel_handle_invoke&_modver=1.0&_dom=cdsp";

// Method 0: open(in string uri, rout remote_handle64 h): in 2 (primIn, uri), out handle 1.
int open_handle(const char* uri, uint32_t len, remote_handle64* h) {
  uint32_t prim[1] = {len};
  remote_arg pra[3] = {buf(prim, sizeof prim), buf(uri, len), {}};
  int rc = edgert_skel_handle_invoke(0, EDGE_RPC_SC_MAKEX(0, EDGERT_M_OPEN, 2, 0, 0, 1), pra);
  *h = pra[2].h64;
  return rc;
}

// Method 1: close(in remote_handle64 h): one input handle.
int close_handle(remote_handle64 h) {
  remote_arg pra[1];
  pra[0].h64 = h;
  return edgert_skel_handle_invoke(h, EDGE_RPC_SC_MAKEX(0, EDGERT_M_CLOSE, 0, 0, 1, 0), pra);
}

int run_mode(int argc, char** argv) {
  if (argc < 6) return 2;
  const bool is_static = argc > 6 && std::strcmp(argv[6], "--static") == 0;
  size_t bundle_len = 0, in_len = 0;
  char* bundle = read_all(argv[2], &bundle_len);
  char* in = read_all(argv[3], &in_len);
  const size_t out_len = to_size(argv[5]);
  void* out = nullptr;
  if (!bundle || !in || posix_memalign(&out, 4096, out_len ? out_len : 1) != 0) return 1;
  std::memset(out, 0xA5, out_len);  // a run that writes nothing cannot pass for a result

  Caller c{is_static, 0};
  if (!is_static) {
    int rc = open_handle(kUri, sizeof kUri, &c.handle);
    say("open -> 0x%x, handle %s\n", rc, c.handle ? "set" : "0");
    if (rc != 0 || c.handle == 0) return 1;
  }
  char text[512];
  int rc = c.dsp_open_bundle(bundle, bundle_len);
  say("dsp_open_bundle(%zu bytes) -> 0x%x\n", bundle_len, rc);
  if (rc == 0) {
    rc = c.dsp_run(in, in_len, out, out_len);
    say("dsp_run(%zu in, %zu out) -> 0x%x\n", in_len, out_len, rc);
  }
  if (rc != 0) {
    int rc2 = c.dsp_last_error(text, sizeof text);
    say("dsp_last_error -> 0x%x: %s\n", rc2, rc2 == 0 ? text : "?");
    return 1;
  }
  if ((rc = c.dsp_close_bundle()) != 0 || (!is_static && (rc = close_handle(c.handle)) != 0)) {
    say("close -> 0x%x\n", rc);
    return 1;
  }
  int fd = open(argv[4], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || write(fd, out, out_len) != static_cast<ssize_t>(out_len)) return 1;
  close(fd);
  return 0;
}

int g_bad = 0;
void expect(const char* what, int got, int want) {
  say("%-44s -> 0x%08x %s\n", what, static_cast<unsigned>(got), got == want ? "(as expected)" : "UNEXPECTED");
  if (got != want) {
    say("    expected 0x%08x\n", static_cast<unsigned>(want));
    g_bad = 1;
  }
}
// The message dsp_last_error gives must contain `word` (and `word2`, if given).
void expect_text(const Caller& c, const char* word, const char* word2 = nullptr) {
  char text[512];
  int rc = c.dsp_last_error(text, sizeof text);
  say("    dsp_last_error: %s\n", rc == 0 ? text : "(failed)");
  for (const char* w : {word, word2}) {
    if (w && (rc != 0 || !contains(text, w))) {
      say("    UNEXPECTED: dsp_last_error does not mention '%s'\n", w);
      g_bad = 1;
    }
  }
}

int malformed_mode(int argc, char** argv) {
  if (argc < 5) return 2;
  size_t bundle_len = 0;
  char* bundle = read_all(argv[2], &bundle_len);
  const size_t in_len = to_size(argv[3]), out_len = to_size(argv[4]);
  char* in = static_cast<char*>(std::calloc(1, in_len + 64));
  char* out = static_cast<char*>(std::calloc(1, out_len + 64));
  if (!bundle || !in || !out) return 1;

  remote_handle64 h = 0;
  const char no_nul[4] = {'f', 'i', 'l', 'e'};
  expect("open with a URI not NUL-terminated", open_handle(no_nul, sizeof no_nul, &h), EDGE_AEE_EBADPARM);
  expect("open", open_handle(kUri, sizeof kUri, &h), 0);
  Caller c{false, h};
  Caller stranger{false, h ^ 0x40};
  expect("dsp_run on a handle the skel never gave out", stranger.dsp_run(in, in_len, out, out_len), EDGE_AEE_EBADPARM);
  expect("dsp_run before dsp_open_bundle", c.dsp_run(in, in_len, out, out_len), EDGE_AEE_EBADSTATE);
  expect_text(c, "no bundle");
  {
    uint32_t prim[1] = {static_cast<uint32_t>(bundle_len)};
    remote_arg pra[2] = {buf(prim, sizeof prim), buf(bundle, bundle_len)};
    expect("dsp_open_bundle with sc (in 1, out 0)", c.call(EDGERT_M_OPEN_BUNDLE, 1, 0, pra), EDGE_AEE_EBADPARM);
    pra[1] = buf(bundle, bundle_len / 2);
    expect("dsp_open_bundle, buffer shorter than its length", c.call(EDGERT_M_OPEN_BUNDLE, 2, 0, pra), EDGE_AEE_EBADPARM);
    pra[0] = buf(prim, 2);
    expect("dsp_open_bundle, primIn of 2 bytes", c.call(EDGERT_M_OPEN_BUNDLE, 2, 0, pra), EDGE_AEE_EBADPARM);
  }
  expect("dsp_open_bundle of a truncated bundle", c.dsp_open_bundle(bundle, bundle_len / 2),
         EDGERT_SKEL_STATUS(2 /* EDGERT_ERROR_INVALID_BUNDLE */));
  expect_text(c, "dsp_open_bundle: ", "truncated");
  expect("dsp_open_bundle of 10 bytes", c.dsp_open_bundle(bundle, 10), EDGERT_SKEL_STATUS(2));
  bundle[bundle_len - 100] ^= 0x10;  // past the header: the content hash must catch it
  expect("dsp_open_bundle of a corrupted bundle", c.dsp_open_bundle(bundle, bundle_len), EDGERT_SKEL_STATUS(2));
  expect_text(c, "corrupted");
  bundle[bundle_len - 100] ^= 0x10;
  expect("dsp_open_bundle", c.dsp_open_bundle(bundle, bundle_len), 0);
  expect("dsp_open_bundle again", c.dsp_open_bundle(bundle, bundle_len), EDGE_AEE_EBADSTATE);
  expect("dsp_run, inputs one byte short", c.dsp_run(in, in_len - 1, out, out_len), EDGE_AEE_EBADPARM);
  expect_text(c, "inputs");
  expect("dsp_run, outputs one byte long", c.dsp_run(in, in_len, out, out_len + 1), EDGE_AEE_EBADPARM);
  expect_text(c, "outputs");
  {
    uint32_t prim[2] = {static_cast<uint32_t>(in_len), static_cast<uint32_t>(out_len)};
    remote_arg pra[3] = {buf(prim, sizeof prim), buf(in, in_len), buf(out, out_len - 1)};
    expect("dsp_run, outputs buffer shorter than its length", c.call(EDGERT_M_RUN, 2, 1, pra), EDGE_AEE_EBADPARM);
    pra[2] = buf(out, out_len);
    expect("dsp_run with sc (in 2, out 0)", c.call(EDGERT_M_RUN, 2, 0, pra), EDGE_AEE_EBADPARM);
    expect("dsp_run with sc (in 2, out 1, in handles 1)",
           edgert_skel_handle_invoke(h, EDGE_RPC_SC_MAKEX(0, EDGERT_M_RUN, 2, 1, 1, 0), pra), EDGE_AEE_EBADPARM);
    expect("dsp_run with no arguments", c.call(EDGERT_M_RUN, 2, 1, nullptr), EDGE_AEE_EBADPARM);
    expect("method 17", c.call(17, 2, 1, pra), EDGE_AEE_EUNSUPPORTED);
  }
  expect("dsp_run", c.dsp_run(in, in_len, out, out_len), 0);  // the errors left the session usable
  expect("dsp_close_bundle", c.dsp_close_bundle(), 0);
  expect("close of a handle the skel never gave out", close_handle(h ^ 0x40), EDGE_AEE_EBADPARM);
  expect("close", close_handle(h), 0);
  expect("dsp_run after close", c.dsp_run(in, in_len, out, out_len), EDGE_AEE_EBADPARM);
  expect("static form: dsp_run before dsp_open_bundle", Caller{true, 0}.dsp_run(in, in_len, out, out_len), EDGE_AEE_EBADSTATE);
  return g_bad;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "run") == 0) return run_mode(argc, argv);
  if (argc > 1 && std::strcmp(argv[1], "malformed") == 0) return malformed_mode(argc, argv);
  say("usage: fastrpc-call run BUNDLE INPUTS.bin OUTPUTS.bin OUTPUTS_LEN [--static]\n"
      "       fastrpc-call malformed BUNDLE INPUTS_LEN OUTPUTS_LEN\n");
  return 2;
}
