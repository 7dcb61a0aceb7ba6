// A QEMU TCG plugin that counts how often each guest instruction executes: for every distinct
// (vaddr, bytes) it keeps a counter that the translated code increments inline, and at exit
// writes one line per executed instruction to the file named by its argument:
//   # edge-insn-count v1 target=<name>
//   <vaddr hex> <size> <bytes hex> <count>
// On qemu-hexagon (7.2) one plugin "instruction" is one packet (1-4 words): see README.md.
// Built by count.py with the host gcc: gcc -shared -fPIC -O2 insn_count.c -o insn_count.so
//   qemu-hexagon -plugin ./insn_count.so,arg=out=FILE PROGRAM ...   (qemu 7.2 syntax)
//
// With the argument vcpus=1 it counts per vCPU (qemu-user gives each guest thread its own):
// the inline counters are one per instruction for all vCPUs together, and two threads running
// the same code at once would lose increments (a plain load-add-store each), so instead every
// translation block counts its executions per vCPU in a callback run on that vCPU's thread,
// and at exit each instruction gets the counts of the blocks it is in (a block runs start to
// end: hexagon's blocks end at a branch or a trap). Lines then carry the count per vCPU:
//   # edge-insn-count v1 target=<name> vcpus=<K>
//   <vaddr hex> <size> <bytes hex> <count> <count on vCPU 0> ... <count on vCPU K-1>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu_plugin_api.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

enum { kMaxBytes = 32, kMaxVcpus = 16 };

typedef struct Insn {
  uint64_t count;  // first: incremented by generated code
  uint64_t per_vcpu[kMaxVcpus];  // vcpus=1: summed from the blocks at exit
  uint64_t vaddr;
  size_t size;
  unsigned char bytes[kMaxBytes];
  struct Insn* next;
} Insn;

// Chained hash on vaddr; entries are never freed (their counters are referenced by
// translated code, which may outlive a translation-cache flush).
enum { kBuckets = 1 << 16 };
static Insn* table[kBuckets];
static char out_path[4096];
static const char* target_name = "?";
static int overflow_reported;

// vcpus=1: one record per translated block, never freed (translated code refers to it).
typedef struct Block {
  uint64_t runs[kMaxVcpus];  // runs[v]: written only on vCPU v's thread
  struct Block* next;
  size_t n;
  Insn* insns[];
} Block;
static int per_vcpu;
static Block* blocks;
static int vcpu_overflow;

static Insn* lookup(uint64_t vaddr, const void* data, size_t size) {
  size_t keep = size < kMaxBytes ? size : kMaxBytes;
  Insn** head = &table[(vaddr >> 2) & (kBuckets - 1)];
  for (Insn* e = *head; e; e = e->next)
    if (e->vaddr == vaddr && e->size == size && memcmp(e->bytes, data, keep) == 0) return e;
  Insn* e = calloc(1, sizeof *e);
  if (!e) {
    qemu_plugin_outs("insn_count: out of memory\n");
    abort();
  }
  if (size > kMaxBytes && !overflow_reported) {
    overflow_reported = 1;
    qemu_plugin_outs("insn_count: an instruction longer than 32 bytes: bytes truncated\n");
  }
  e->vaddr = vaddr;
  e->size = size;
  memcpy(e->bytes, data, keep);
  e->next = *head;
  *head = e;
  return e;
}

static void on_block(unsigned int vcpu, void* userdata) {
  Block* b = userdata;
  if (vcpu < kMaxVcpus)
    ++b->runs[vcpu];
  else
    vcpu_overflow = 1;
}

// Translation is serialized by qemu (one thread at a time), so the table and the block list
// need no lock.
static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb* tb) {
  (void)id;
  size_t n = qemu_plugin_tb_n_insns(tb);
  Block* b = NULL;
  if (per_vcpu) {
    b = calloc(1, sizeof *b + n * sizeof(Insn*));
    if (!b) {
      qemu_plugin_outs("insn_count: out of memory\n");
      abort();
    }
    b->n = n;
    b->next = blocks;
    blocks = b;
    qemu_plugin_register_vcpu_tb_exec_cb(tb, on_block, QEMU_PLUGIN_CB_NO_REGS, b);
  }
  for (size_t i = 0; i < n; ++i) {
    struct qemu_plugin_insn* insn = qemu_plugin_tb_get_insn(tb, i);
    Insn* e = lookup(qemu_plugin_insn_vaddr(insn), qemu_plugin_insn_data(insn), qemu_plugin_insn_size(insn));
    if (b)
      b->insns[i] = e;
    else
      qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &e->count, 1);
  }
}

static void write_counts(qemu_plugin_id_t id, void* userdata) {
  (void)id;
  (void)userdata;
  FILE* f = fopen(out_path, "w");
  if (!f) {
    char msg[4200];
    snprintf(msg, sizeof msg, "insn_count: cannot write %s\n", out_path);
    qemu_plugin_outs(msg);
    return;
  }
  int vcpus = 0;
  if (per_vcpu) {
    if (vcpu_overflow) qemu_plugin_outs("insn_count: more than 16 vCPUs: the others are not counted\n");
    for (Block* b = blocks; b; b = b->next)
      for (int v = 0; v < kMaxVcpus; ++v) {
        if (!b->runs[v]) continue;
        if (v >= vcpus) vcpus = v + 1;
        for (size_t i = 0; i < b->n; ++i) {
          b->insns[i]->per_vcpu[v] += b->runs[v];
          b->insns[i]->count += b->runs[v];
        }
      }
    fprintf(f, "# edge-insn-count v1 target=%s vcpus=%d\n", target_name, vcpus);
  } else {
    fprintf(f, "# edge-insn-count v1 target=%s\n", target_name);
  }
  for (size_t b = 0; b < kBuckets; ++b)
    for (Insn* e = table[b]; e; e = e->next) {
      if (!e->count) continue;
      fprintf(f, "%llx %zu ", (unsigned long long)e->vaddr, e->size);
      size_t keep = e->size < kMaxBytes ? e->size : kMaxBytes;
      for (size_t k = 0; k < keep; ++k) fprintf(f, "%02x", e->bytes[k]);
      if (!keep) fputc('-', f);
      fprintf(f, " %llu", (unsigned long long)e->count);
      for (int v = 0; v < vcpus; ++v) fprintf(f, " %llu", (unsigned long long)e->per_vcpu[v]);
      fputc('\n', f);
    }
  fclose(f);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t* info, int argc, char** argv) {
  for (int i = 0; i < argc; ++i)
    if (strncmp(argv[i], "out=", 4) == 0)
      snprintf(out_path, sizeof out_path, "%s", argv[i] + 4);
    else if (strcmp(argv[i], "vcpus=1") == 0)
      per_vcpu = 1;
  if (!out_path[0]) {
    qemu_plugin_outs("insn_count: needs an argument out=FILE (-plugin insn_count.so,arg=out=FILE)\n");
    return -1;
  }
  if (info && info->target_name) target_name = info->target_name;
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
  qemu_plugin_register_atexit_cb(id, write_counts, NULL);
  return 0;
}
