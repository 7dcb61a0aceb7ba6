// int8_pair_ceiling.c — multiply-adds per cycle of the 8-bit products on an AVX2 core, against
// the fp32 FMA (2 per cycle, 8 multiply-adds each: the clock is taken from it).
//   exact pairs      vpmaddwd + vpaddd: int16 pairs (8-bit operands widened), what edgec emits
//   saturating u8s8  vpmaddubsw + vpmaddwd by ones + vpaddd: onnxruntime's AVX2 u8s8 kernels
//                    (the int16 pair sum saturates: README "Which onnxruntime is the reference")
//   tile 2x4 ...     one step of edgec's 2 x 4 register tile (2 weight vectors by vpmovsxbw from
//                    memory, 4 activation pairs broadcast), the pair widened by vpmovzxbw (before
//                    session 38) or by vpshufb (llvm_emit.cc widened_byte_pair_splat)
// Register operands but the tiles' loads, 8 independent accumulators; timed by the thread's
// CPU time (a shared machine). x86-64 with AVX2 only (GNU inline assembly):
//   cc -O2 -o /tmp/int8_pair_ceiling tests/bench/int8_pair_ceiling.c && /tmp/int8_pair_ceiling
#include <stdio.h>
#include <time.h>

static double cpu_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static char buf[4096] __attribute__((aligned(64)));

#define FMA(i) "vfmadd231ps %%ymm14, %%ymm15, %%ymm" #i "\n"
#define PAIR(acc, tmp) "vpmaddwd %%ymm14, %%ymm15, %%ymm" #tmp "\n vpaddd %%ymm" #tmp ", %%ymm" #acc ", %%ymm" #acc "\n"
#define SAT(acc, tmp)                                                                            \
  "vpmaddubsw %%ymm14, %%ymm15, %%ymm" #tmp "\n vpmaddwd %%ymm13, %%ymm" #tmp ", %%ymm" #tmp "\n " \
  "vpaddd %%ymm" #tmp ", %%ymm" #acc ", %%ymm" #acc "\n"
#define WEIGHTS "vpmovsxbw 0(%0), %%ymm8\n vpmovsxbw 16(%0), %%ymm9\n"
#define PIXEL(load, a, b)                                                                    \
  load "vpmaddwd %%ymm8, %%ymm10, %%ymm11\n vpaddd %%ymm11, %%ymm" #a ", %%ymm" #a "\n " \
       "vpmaddwd %%ymm9, %%ymm10, %%ymm12\n vpaddd %%ymm12, %%ymm" #b ", %%ymm" #b "\n"
#define ZX(o) "vpbroadcastw " #o "(%0), %%xmm10\n vpmovzxbw %%xmm10, %%ymm10\n"
#define SHUF(o) "vpbroadcastw " #o "(%0), %%ymm10\n vpshufb %%ymm15, %%ymm10, %%ymm10\n"

#define TIME(var, macs, body)                                               \
  do {                                                                      \
    double t = cpu_seconds();                                               \
    for (long n = 0; n < kSteps; ++n) __asm__ volatile(body::"r"(buf) : "memory"); \
    var = (double)kSteps * (macs) / (cpu_seconds() - t);                    \
  } while (0)

int main(void) {
  const long kSteps = 30000000;
  for (int round = 0; round < 3; ++round) {
    double fma, pair, sat, tile_zx, tile_shuf;
    TIME(fma, 64, FMA(0) FMA(1) FMA(2) FMA(3) FMA(4) FMA(5) FMA(6) FMA(7));
    TIME(pair, 128, PAIR(0, 8) PAIR(1, 9) PAIR(2, 10) PAIR(3, 11) PAIR(4, 12) PAIR(5, 8) PAIR(6, 9) PAIR(7, 10));
    TIME(sat, 256, SAT(0, 8) SAT(1, 9) SAT(2, 10) SAT(3, 11) SAT(4, 12) SAT(5, 8) SAT(6, 9) SAT(7, 10));
    TIME(tile_zx, 128, WEIGHTS PIXEL(ZX(64), 0, 1) PIXEL(ZX(66), 2, 3) PIXEL(ZX(68), 4, 5) PIXEL(ZX(70), 6, 7));
    TIME(tile_shuf, 128, WEIGHTS PIXEL(SHUF(64), 0, 1) PIXEL(SHUF(66), 2, 3) PIXEL(SHUF(68), 4, 5) PIXEL(SHUF(70), 6, 7));
    const double per_cycle = 16.0 / fma;  // FMA: 16 multiply-adds per cycle
    printf("clock ~%.2f GHz; multiply-adds per cycle: fp32 FMA 16.0, exact pairs %.1f, saturating u8s8 %.1f, "
           "tile 2x4 vpmovzxbw %.1f, tile 2x4 vpshufb %.1f\n",
           fma / 16e9, pair * per_cycle, sat * per_cycle, tile_zx * per_cycle, tile_shuf * per_cycle);
  }
  return 0;
}
