// edgert_skel.cc — the DSP side of the FastRPC interface in edgert.idl: the skeleton FastRPC
// calls for each remote call, hand-written (no qaic here) from the marshaling edgert.idl spells
// out, over the runtime's C API (edgert.h). Linked into libedgert_skel.so with the runtime;
// tests/hexagon/fastrpc_call.cc links the same object into a qemu-hexagon program.
//
// Every call is checked against the layout its method expects (buffer counts in sc, each
// buffer at least as long as its length word, a handle this skel gave out) before anything is
// read: a malformed call returns AEE_EBADPARM, never reads past a buffer. The bundle arrives
// as a buffer and is copied, since FastRPC maps a call's buffers only for that call; no file
// is opened on the DSP. One call at a time (the runtime's error message is one global in this
// build): the ARM side must not call into the same process from two threads at once.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edgert.h"
#include "fastrpc_abi.h"

namespace {

constexpr int kMaxSessions = 4;  // handles open at once (one per ARM-side client, typically)
constexpr size_t kAlign = 64;    // tensor offsets in the run buffers (edgert.idl)

struct Session {
  bool used;
  void* bundle_copy;
  edgert_bundle* bundle;
  edgert_context* context;
  char error[512];
};

Session g_sessions[kMaxSessions];  // handle form: the handle is the slot's address
Session g_static;                  // static form: one session per process

int fail(Session* s, int code, const char* what) {
  if (s) {
    size_t n = strlen(what);
    if (n >= sizeof s->error) n = sizeof s->error - 1;
    memcpy(s->error, what, n);
    s->error[n] = 0;
  }
  return code;
}

// The runtime's message, after the method's name.
int runtime_failed(Session* s, const char* method, edgert_status st) {
  snprintf(s->error, sizeof s->error, "%s: %s", method, edgert_last_error());
  return EDGERT_SKEL_STATUS(st);
}

// The counts in sc must be what the method's signature gives, and primIn must hold `words`
// 32-bit words; pra is only read after this.
bool layout(uint32_t sc, uint32_t in, uint32_t out, uint32_t hin, uint32_t hout, const remote_arg* pra,
            uint32_t words) {
  if (EDGE_RPC_SC_INBUFS(sc) != in || EDGE_RPC_SC_OUTBUFS(sc) != out || EDGE_RPC_SC_INHANDLES(sc) != hin ||
      EDGE_RPC_SC_OUTHANDLES(sc) != hout)
    return false;
  if (in + out + hin + hout > 0 && !pra) return false;
  if (words == 0) return true;
  return pra[0].buf.pv && pra[0].buf.nLen >= words * sizeof(uint32_t);
}

uint32_t prim(const remote_arg* pra, int i) {
  uint32_t v;
  memcpy(&v, static_cast<const char*>(pra[0].buf.pv) + 4 * i, sizeof v);  // primIn may be unaligned
  return v;
}

void release(Session* s) {
  if (s->context) edgert_context_destroy(s->context);
  if (s->bundle) edgert_bundle_close(s->bundle);
  free(s->bundle_copy);
  s->context = nullptr;
  s->bundle = nullptr;
  s->bundle_copy = nullptr;
}

int dsp_open_bundle(Session* s, uint32_t sc, remote_arg* pra) {
  if (!layout(sc, 2, 0, 0, 0, pra, 1)) return fail(s, EDGE_AEE_EBADPARM, "dsp_open_bundle: call not marshaled as (in 2, out 0)");
  const uint32_t len = prim(pra, 0);
  if (pra[1].buf.nLen < len || (len && !pra[1].buf.pv))
    return fail(s, EDGE_AEE_EBADPARM, "dsp_open_bundle: the bundle buffer is shorter than its length");
  if (s->bundle) return fail(s, EDGE_AEE_EBADSTATE, "dsp_open_bundle: a bundle is already open (dsp_close_bundle first)");
  // Page-aligned, as the runtime wants sections aligned up to a page (edgert_bundle_open_memory).
  void* copy = nullptr;
  if (posix_memalign(&copy, 4096, len ? len : 1) != 0)
    return fail(s, EDGE_AEE_ENOMEMORY, "dsp_open_bundle: no memory for the bundle");
  memcpy(copy, pra[1].buf.pv, len);
  s->bundle_copy = copy;
  edgert_status st = edgert_bundle_open_memory(copy, len, &s->bundle);
  if (st == EDGERT_OK) {
    edgert_context_options options = {};  // one thread: the hexagon port has no others
    st = edgert_context_create(s->bundle, &options, &s->context);
  }
  if (st != EDGERT_OK) {
    int code = runtime_failed(s, "dsp_open_bundle", st);
    release(s);
    return code;
  }
  s->error[0] = 0;
  return 0;
}

size_t align_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// Binds every tensor of one side to its slot in the packed buffer; the buffer's length must
// be exactly the packed total.
int bind_side(Session* s, bool outputs, char* base, size_t len) {
  const int32_t count = outputs ? edgert_bundle_output_count(s->bundle) : edgert_bundle_input_count(s->bundle);
  size_t offset = 0;
  for (int32_t i = 0; i < count; ++i) {
    edgert_tensor_info info;
    edgert_status st = outputs ? edgert_bundle_output_info(s->bundle, i, &info)
                               : edgert_bundle_input_info(s->bundle, i, &info);
    if (st != EDGERT_OK) return runtime_failed(s, "dsp_run", st);
    offset = align_up(offset);
    if (info.size_bytes > len || offset > len - info.size_bytes) break;
    st = outputs ? edgert_bind_output(s->context, i, base + offset, info.size_bytes)
                 : edgert_bind_input(s->context, i, base + offset, info.size_bytes);
    if (st != EDGERT_OK) return runtime_failed(s, "dsp_run", st);
    offset += info.size_bytes;
    if (i + 1 == count && offset == len) return 0;
  }
  if (count == 0 && len == 0) return 0;
  return fail(s, EDGE_AEE_EBADPARM, outputs ? "dsp_run: the outputs buffer is not the packed size of the bundle's outputs"
                                            : "dsp_run: the inputs buffer is not the packed size of the bundle's inputs");
}

int dsp_run(Session* s, uint32_t sc, remote_arg* pra) {
  if (!layout(sc, 2, 1, 0, 0, pra, 2)) return fail(s, EDGE_AEE_EBADPARM, "dsp_run: call not marshaled as (in 2, out 1)");
  const uint32_t in_len = prim(pra, 0), out_len = prim(pra, 1);
  if (pra[1].buf.nLen < in_len || pra[2].buf.nLen < out_len || (in_len && !pra[1].buf.pv) ||
      (out_len && !pra[2].buf.pv))
    return fail(s, EDGE_AEE_EBADPARM, "dsp_run: a buffer is shorter than its length");
  if (!s->context) return fail(s, EDGE_AEE_EBADSTATE, "dsp_run: no bundle is open (dsp_open_bundle first)");
  int code = bind_side(s, false, static_cast<char*>(pra[1].buf.pv), in_len);
  if (code == 0) code = bind_side(s, true, static_cast<char*>(pra[2].buf.pv), out_len);
  if (code != 0) return code;
  edgert_status st = edgert_run(s->context);
  if (st != EDGERT_OK) return runtime_failed(s, "dsp_run", st);
  s->error[0] = 0;
  return 0;
}

int dsp_last_error(Session* s, uint32_t sc, remote_arg* pra) {
  // Not recorded as the session's error: it would overwrite the message being asked for.
  if (!layout(sc, 1, 1, 0, 0, pra, 1)) return EDGE_AEE_EBADPARM;
  const uint32_t len = prim(pra, 0);
  if (len == 0 || pra[1].buf.nLen < len || !pra[1].buf.pv) return EDGE_AEE_EBADPARM;
  char* out = static_cast<char*>(pra[1].buf.pv);
  size_t n = strlen(s->error);
  if (n >= len) n = len - 1;
  memcpy(out, s->error, n);
  out[n] = 0;
  return 0;
}

int dsp_close_bundle(Session* s, uint32_t sc, remote_arg* pra) {
  if (!layout(sc, 0, 0, 0, 0, pra, 0)) return fail(s, EDGE_AEE_EBADPARM, "dsp_close_bundle: call not marshaled as (in 0, out 0)");
  release(s);
  s->error[0] = 0;
  return 0;
}

// Methods 2..5 of the handle form, 0..3 of the static form (edgert.idl).
int dispatch(Session* s, uint32_t method, uint32_t sc, remote_arg* pra) {
  switch (method) {
    case EDGERT_M_OPEN_BUNDLE: return dsp_open_bundle(s, sc, pra);
    case EDGERT_M_RUN: return dsp_run(s, sc, pra);
    case EDGERT_M_LAST_ERROR: return dsp_last_error(s, sc, pra);
    case EDGERT_M_CLOSE_BUNDLE: return dsp_close_bundle(s, sc, pra);
  }
  return fail(s, EDGE_AEE_EUNSUPPORTED, "no such method in edgert.idl");
}

Session* session_of(remote_handle64 h) {
  for (Session& s : g_sessions)
    if (s.used && h == static_cast<remote_handle64>(reinterpret_cast<uintptr_t>(&s))) return &s;
  return nullptr;
}

// Method 0: open(in string uri, rout remote_handle64 h). primIn = { uriLen }, pra[1] = the
// NUL-terminated URI the ARM side opened, pra[2] = the output handle.
int open_handle(uint32_t sc, remote_arg* pra) {
  if (!layout(sc, 2, 0, 0, 1, pra, 1)) return EDGE_AEE_EBADPARM;
  const uint32_t len = prim(pra, 0);
  const char* uri = static_cast<const char*>(pra[1].buf.pv);
  if (len == 0 || pra[1].buf.nLen < len || !uri || uri[len - 1] != 0) return EDGE_AEE_EBADPARM;
  for (Session& s : g_sessions) {
    if (s.used) continue;
    s = Session{};
    s.used = true;
    pra[2].h64 = static_cast<remote_handle64>(reinterpret_cast<uintptr_t>(&s));
    return 0;
  }
  return EDGE_AEE_ENOMEMORY;
}

// Method 1: close(in remote_handle64 h), the handle in pra[0] (the only input handle).
int close_handle(uint32_t sc, remote_arg* pra) {
  if (!layout(sc, 0, 0, 1, 0, pra, 0)) return EDGE_AEE_EBADPARM;
  Session* s = session_of(pra[0].h64);
  if (!s) return EDGE_AEE_EBADPARM;
  release(s);
  s->used = false;
  return 0;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int edgert_skel_handle_invoke(remote_handle64 h, uint32_t sc,
                                                                               remote_arg* pra) {
  const uint32_t method = EDGE_RPC_SC_METHOD(sc);
  if (method == EDGERT_M_OPEN) return open_handle(sc, pra);
  if (method == EDGERT_M_CLOSE) return close_handle(sc, pra);
  Session* s = session_of(h);
  if (!s) return EDGE_AEE_EBADPARM;
  return dispatch(s, method, sc, pra);
}

extern "C" __attribute__((visibility("default"))) int edgert_skel_invoke(uint32_t sc, remote_arg* pra) {
  g_static.used = true;
  return dispatch(&g_static, EDGE_RPC_SC_METHOD(sc) + EDGERT_STATIC_METHOD_OFFSET, sc, pra);
}
