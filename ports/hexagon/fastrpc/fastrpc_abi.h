/* fastrpc_abi.h — the part of FastRPC's calling convention a skeleton sees, written from its
 * documented layout (the Hexagon SDK's remote.h, which this build does not have): the scalars
 * word `sc` and the argument array of a remote call, and the error codes edgert_skel returns.
 * Used by edgert_skel.cc (the DSP side) and by tests/hexagon/fastrpc_call.cc, which marshals
 * calls the way the ARM-side FastRPC framework does. */
#ifndef EDGERT_FASTRPC_ABI_H
#define EDGERT_FASTRPC_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef uint32_t remote_handle;   /* static (single-domain) interfaces */
typedef uint64_t remote_handle64; /* multi-domain interfaces: the value the skel's open returned */

typedef struct {
  void* pv;    /* the buffer as mapped on the DSP for this call */
  size_t nLen; /* its length in bytes */
} remote_buf;

typedef struct {
  int32_t fd;
  uint32_t offset;
} remote_dma_handle;

/* One argument: a buffer, or a handle (8 bytes on the 32-bit DSP). */
typedef union {
  remote_buf buf;
  remote_handle h;
  remote_handle64 h64;
  remote_dma_handle dma;
} remote_arg;

/* sc: bits 29-31 attributes, 24-28 method, 16-23 input buffers, 8-15 output buffers, 4-7 input
 * handles, 0-3 output handles. pra holds the input buffers, then the output buffers, then the
 * input handles, then the output handles. */
#define EDGE_RPC_SC_METHOD(sc) (((sc) >> 24) & 0x1fu)
#define EDGE_RPC_SC_INBUFS(sc) (((sc) >> 16) & 0xffu)
#define EDGE_RPC_SC_OUTBUFS(sc) (((sc) >> 8) & 0xffu)
#define EDGE_RPC_SC_INHANDLES(sc) (((sc) >> 4) & 0x0fu)
#define EDGE_RPC_SC_OUTHANDLES(sc) ((sc) & 0x0fu)
#define EDGE_RPC_SC_MAKEX(attr, method, in, out, hin, hout)                                   \
  ((((uint32_t)(attr) & 0x7u) << 29) | (((uint32_t)(method) & 0x1fu) << 24) |                 \
   (((uint32_t)(in) & 0xffu) << 16) | (((uint32_t)(out) & 0xffu) << 8) |                      \
   (((uint32_t)(hin) & 0x0fu) << 4) | ((uint32_t)(hout) & 0x0fu))
#define EDGE_RPC_SC_MAKE(method, in, out) EDGE_RPC_SC_MAKEX(0, method, in, out, 0, 0)

/* AEE error codes as the DSP side spells them (offset 0x80000400). */
#define EDGE_AEE_ENOMEMORY ((int)0x80000402u)
#define EDGE_AEE_EBADSTATE ((int)0x8000040Du)
#define EDGE_AEE_EBADPARM ((int)0x8000040Eu)
#define EDGE_AEE_EUNSUPPORTED ((int)0x80000414u)
/* A status the runtime returned (edgert_status, edgert.h), in a range of its own. */
#define EDGERT_SKEL_STATUS_BASE 0x45440000
#define EDGERT_SKEL_STATUS(s) ((int)(EDGERT_SKEL_STATUS_BASE + (int)(s)))

/* The interface's methods (edgert.idl): handle form, then the static form's numbering. */
enum {
  EDGERT_M_OPEN = 0,
  EDGERT_M_CLOSE = 1,
  EDGERT_M_OPEN_BUNDLE = 2,
  EDGERT_M_RUN = 3,
  EDGERT_M_LAST_ERROR = 4,
  EDGERT_M_CLOSE_BUNDLE = 5,
  EDGERT_STATIC_METHOD_OFFSET = 2 /* static form: dsp_open_bundle is 0, ..., dsp_close_bundle 3 */
};

/* The skeleton's entry points, which the DSP's FastRPC framework finds by name. */
int edgert_skel_invoke(uint32_t sc, remote_arg* pra);
int edgert_skel_handle_invoke(remote_handle64 h, uint32_t sc, remote_arg* pra);

#ifdef __cplusplus
}
#endif
#endif /* EDGERT_FASTRPC_ABI_H */
