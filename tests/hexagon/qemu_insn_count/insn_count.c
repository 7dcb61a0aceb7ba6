// A QEMU TCG plugin that counts how often each guest instruction executes: for every distinct
// (vaddr, bytes) it keeps a counter that the translated code increments inline, and at exit
// writes one line per executed instruction to the file named by its argument:
//   # edge-insn-count v1 target=<name>
//   <vaddr hex> <size> <bytes hex> <count>
// On qemu-hexagon (7.2) one plugin "instruction" is one packet (1-4 words): see README.md.
// Built by count.py with the host gcc: gcc -shared -fPIC -O2 insn_count.c -o insn_count.so
//   qemu-hexagon -plugin ./insn_count.so,arg=out=FILE PROGRAM ...   (qemu 7.2 syntax)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu_plugin_api.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

enum { kMaxBytes = 32 };

typedef struct Insn {
  uint64_t count;  // first: incremented by generated code
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

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb* tb) {
  (void)id;
  size_t n = qemu_plugin_tb_n_insns(tb);
  for (size_t i = 0; i < n; ++i) {
    struct qemu_plugin_insn* insn = qemu_plugin_tb_get_insn(tb, i);
    Insn* e = lookup(qemu_plugin_insn_vaddr(insn), qemu_plugin_insn_data(insn), qemu_plugin_insn_size(insn));
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
  fprintf(f, "# edge-insn-count v1 target=%s\n", target_name);
  for (size_t b = 0; b < kBuckets; ++b)
    for (Insn* e = table[b]; e; e = e->next) {
      if (!e->count) continue;
      fprintf(f, "%llx %zu ", (unsigned long long)e->vaddr, e->size);
      size_t keep = e->size < kMaxBytes ? e->size : kMaxBytes;
      for (size_t k = 0; k < keep; ++k) fprintf(f, "%02x", e->bytes[k]);
      if (!keep) fputc('-', f);
      fprintf(f, " %llu\n", (unsigned long long)e->count);
    }
  fclose(f);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t* info, int argc, char** argv) {
  for (int i = 0; i < argc; ++i)
    if (strncmp(argv[i], "out=", 4) == 0) snprintf(out_path, sizeof out_path, "%s", argv[i] + 4);
  if (!out_path[0]) {
    qemu_plugin_outs("insn_count: needs an argument out=FILE (-plugin insn_count.so,arg=out=FILE)\n");
    return -1;
  }
  if (info && info->target_name) target_name = info->target_name;
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
  qemu_plugin_register_atexit_cb(id, write_counts, NULL);
  return 0;
}
