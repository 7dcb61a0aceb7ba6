/* consumer.c: a C application of the edgert C API, built against an installed edgert
 * (find_package(edgert)): tests/aarch64/test_aarch64.py runs it under qemu-aarch64.
 *
 *   consumer BUNDLE INPUTS.bin OUTPUTS.bin
 * INPUTS.bin holds the raw bytes of every input, in bundle order; OUTPUTS.bin receives the
 * raw bytes of every output, in bundle order. Runs twice and checks the runs agree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edgert.h"

static int fail(const char* what) {
  fprintf(stderr, "consumer: %s: %s\n", what, edgert_last_error());
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: consumer BUNDLE INPUTS.bin OUTPUTS.bin\n");
    return 2;
  }
  edgert_bundle* bundle = NULL;
  if (edgert_bundle_open(argv[1], &bundle) != EDGERT_OK) return fail(argv[1]);
  edgert_context* ctx = NULL;
  edgert_context_options options = {0};  /* every field zero: defaults */
  options.num_threads = 1;
  if (edgert_context_create(bundle, &options, &ctx) != EDGERT_OK) return fail("context");

  int32_t n_in = edgert_bundle_input_count(bundle), n_out = edgert_bundle_output_count(bundle);
  size_t in_total = 0, out_total = 0;
  edgert_tensor_info info;
  for (int32_t i = 0; i < n_in; ++i) {
    if (edgert_bundle_input_info(bundle, i, &info) != EDGERT_OK) return fail("input info");
    in_total += info.size_bytes;
  }
  for (int32_t i = 0; i < n_out; ++i) {
    if (edgert_bundle_output_info(bundle, i, &info) != EDGERT_OK) return fail("output info");
    out_total += info.size_bytes;
  }
  unsigned char* in = malloc(in_total ? in_total : 1);
  unsigned char* out = malloc(out_total ? out_total : 1);
  unsigned char* again = malloc(out_total ? out_total : 1);
  FILE* f = fopen(argv[2], "rb");
  if (!in || !out || !again || !f || fread(in, 1, in_total, f) != in_total || fgetc(f) != EOF) {
    fprintf(stderr, "consumer: %s must hold exactly %zu bytes\n", argv[2], in_total);
    return 1;
  }
  fclose(f);

  size_t off = 0;
  for (int32_t i = 0; i < n_in; ++i) {
    edgert_bundle_input_info(bundle, i, &info);
    if (edgert_bind_input(ctx, i, in + off, info.size_bytes) != EDGERT_OK) return fail("bind input");
    off += info.size_bytes;
  }
  for (int run = 0; run < 2; ++run) {
    unsigned char* dst = run == 0 ? out : again;
    off = 0;
    for (int32_t i = 0; i < n_out; ++i) {
      edgert_bundle_output_info(bundle, i, &info);
      if (edgert_bind_output(ctx, i, dst + off, info.size_bytes) != EDGERT_OK) return fail("bind output");
      off += info.size_bytes;
    }
    if (edgert_run(ctx) != EDGERT_OK) return fail("run");
  }
  if (memcmp(out, again, out_total) != 0) {
    fprintf(stderr, "consumer: two runs on the same inputs differ\n");
    return 1;
  }
  f = fopen(argv[3], "wb");
  if (!f || fwrite(out, 1, out_total, f) != out_total || fclose(f) != 0) {
    fprintf(stderr, "consumer: cannot write %s\n", argv[3]);
    return 1;
  }
  printf("consumer: %d inputs (%zu bytes), %d outputs (%zu bytes)\n", n_in, in_total, n_out, out_total);
  edgert_context_destroy(ctx);
  edgert_bundle_close(bundle);
  free(in);
  free(out);
  free(again);
  return 0;
}
