// peak_flops — the single-core fp32 multiply-add peak that BENCHMARKS.md divides by.
//
// Independent accumulators (enough to cover the multiply-add latency on every core we
// measure), each updated with a fused multiply-add per iteration; the best of several
// timed runs. 24 with AVX-512 (32 zmm registers), 12 with AVX2 (16 ymm registers: 24 would
// spill 11 of them, and the loop would time stack round trips instead of multiply-adds).
// Timed by the thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so that on a machine shared with
// other work the figure is the core's rate while this thread runs, not its share of the core;
// the wall-clock rate of the same run is printed beside it.
// Build for the machine itself:
//   g++ -O3 -march=native -o /tmp/peak_flops tests/bench/peak_flops.cc && taskset -c 1 /tmp/peak_flops
#include <immintrin.h>

#include <time.h>

#include <chrono>
#include <cstdio>

int main() {
#if defined(__AVX512F__)
  using V = __m512;
  constexpr int kLanes = 16;
  auto splat = [](float x) { return _mm512_set1_ps(x); };
  auto fma = [](V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); };
  auto sum = [](V a) { return _mm512_reduce_add_ps(a); };
  constexpr int kAcc = 24;
#elif defined(__AVX2__) && defined(__FMA__)
  using V = __m256;
  constexpr int kLanes = 8;
  auto splat = [](float x) { return _mm256_set1_ps(x); };
  auto fma = [](V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); };
  auto sum = [](V a) {
    float t[8];
    _mm256_storeu_ps(t, a);
    return t[0] + t[1] + t[2] + t[3] + t[4] + t[5] + t[6] + t[7];
  };
  constexpr int kAcc = 12;
#else
#error "build with -march=native on an x86-64 with AVX2+FMA or AVX-512"
#endif
  constexpr long kIters = 20'000'000;
  auto cpu_now = [] {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
  };
  double best = 0, best_wall = 0;
  float sink = 0;
  for (int run = 0; run < 7; ++run) {
    V acc[kAcc];
    for (int i = 0; i < kAcc; ++i) acc[i] = splat(0.001f * i);
    const V a = splat(0.999999f), b = splat(1e-7f);
    auto t0 = std::chrono::steady_clock::now();
    double c0 = cpu_now();
    for (long it = 0; it < kIters; ++it) {
#pragma GCC unroll 24  // keeps every accumulator in a register (up to 24)
      for (int i = 0; i < kAcc; ++i) acc[i] = fma(acc[i], a, b);
    }
    double c1 = cpu_now();
    auto t1 = std::chrono::steady_clock::now();
    for (int i = 0; i < kAcc; ++i) sink += sum(acc[i]);
    double flop = 2.0 * kLanes * kAcc * kIters;
    double gflops = flop / (c1 - c0) / 1e9;
    double wall = flop / std::chrono::duration<double>(t1 - t0).count() / 1e9;
    if (gflops > best) best = gflops;
    if (wall > best_wall) best_wall = wall;
  }
  std::printf("fp32 FMA peak, one core: %.1f GFLOP/s of thread CPU time (wall clock: %.1f; %d lanes, %d accumulators, "
              "best of 7 runs; checksum %g)\n",
              best, best_wall, kLanes, kAcc, sink);
  return 0;
}
