// The rule by which `edgert-bench --profile` marks a kernel SLOW: a cliff, a kernel that
// missed its fast code path, as opposed to one that is slow per FLOP because it runs at the
// speed of memory. Header-only so that the runtime unit tests hold it to measured profiles
// (tests/unit/runtime_slow_kernels_test.cc) without the tool's main.
#ifndef EDGERT_TOOLS_SLOW_KERNELS_H
#define EDGERT_TOOLS_SLOW_KERNELS_H

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace edgert_tools {

// One command of a profiled queue: its median time and the compiler's estimates of what it
// computes (FLOPs, 2 per multiply-add) and moves (bytes of every buffer it reads or writes,
// each counted once: the traffic it cannot avoid). A copy or timestamp has neither.
struct KernelCost {
  double ms = 0;
  uint64_t flops = 0;
  uint64_t bytes = 0;
};

class SlowKernelRule {
 public:
  // Over 3% of the time and below 1/4 of the model's speed per FLOP (see slow()).
  static constexpr double kSlowFraction = 0.25, kSlowTimeShare = 0.03, kSlowFlopShare = 0.001,
                          kSlowDominantShare = 0.2, kSlowFarFraction = 0.01;
  static constexpr double kSlowBigFlopShare = 0.05, kSlowPeerFlopShare = 0.01;
  // A kernel that does at most this many FLOPs per byte it moves streams memory (elementwise
  // ops, pools, a matrix-vector product: 0.5); a conv does tens to hundreds.
  static constexpr double kStreamingFlopsPerByte = 1.0;

  explicit SlowKernelRule(std::vector<KernelCost> k) : k_(std::move(k)) {
    for (const KernelCost& c : k_) {
      if (c.ms <= 0) continue;
      total_ms_ += c.ms;
      if (c.flops > 0) {
        const double f = static_cast<double>(c.flops);
        total_flops_ += f;
        flop_weighted_ += f * gflops(c);
      }
      if (streaming(c)) {
        const double b = static_cast<double>(c.bytes);
        streaming_bytes_ += b;
        byte_weighted_ += b * gbytes(c);
      }
    }
    for (const KernelCost& c : k_)
      if (c.ms > 0 && static_cast<double>(c.flops) >= kSlowPeerFlopShare * total_flops_)
        fastest_peer_ = std::max(fastest_peer_, gflops(c));
  }

  static double gflops(const KernelCost& c) { return c.ms > 0 ? static_cast<double>(c.flops) / (c.ms * 1e6) : 0; }
  static double gbytes(const KernelCost& c) { return c.ms > 0 ? static_cast<double>(c.bytes) / (c.ms * 1e6) : 0; }

  // The FLOP-weighted mean GFLOP/s (sum f r / sum f: the big convs and products set it; an
  // elementwise kernel barely counts): what the model's compute runs at.
  double mean_gflops() const { return total_flops_ > 0 ? flop_weighted_ / total_flops_ : 0; }
  // The byte-weighted mean GB/s of the streaming kernels: what the model's memory-bound
  // kernels reach on this machine (20-70 GB/s over the zoo on one EPYC core, depending on
  // how much of the traffic stays in cache).
  double streaming_gbs() const { return streaming_bytes_ > 0 ? byte_weighted_ / streaming_bytes_ : 0; }

  // Whether kernel i is SLOW: slow per FLOP (1) and not explained by memory (2).
  // (1) Below kSlowFraction of the FLOP-weighted mean of the other kernels (the kernel left
  //     out, so one slow kernel doing most of the FLOPs still stands out), over
  //     kSlowTimeShare of the time, and a compute kernel (kSlowFlopShare of the FLOPs), or
  //     over kSlowDominantShare of the time whatever its FLOPs (a GRU's fused step kernel, a
  //     sliver of the FLOPs, took 86% of the time unflagged), or below kSlowFarFraction of
  //     the mean however few FLOPs it has (a scalar fallback: ShuffleNetV2's stride-2
  //     depthwise conv on 232 channels, 0.07% of the FLOPs at 0.5 GFLOP/s, 7% of the time).
  //     A kernel with kSlowBigFlopShare of the FLOPs is also held to the fastest kernel that
  //     does kSlowPeerFlopShare of them: where slow kernels hold most of the FLOPs they set
  //     the mean themselves (DeepLabV3's three dilated ASPP convs hid one another).
  // (2) Its GB/s (its bytes over its time) is also below kSlowFraction of the other
  //     streaming kernels' byte-weighted mean GB/s. A matrix-vector product streaming 8 MB
  //     of weights runs at 11 GFLOP/s beside convs at 70, and at 12-25 GB/s, as fast as the
  //     model's elementwise kernels: memory speed, not a cliff. A bilinear upsample at 0.6
  //     GFLOP/s and 0.6 GB/s is one. Where the model has no other streaming kernel to
  //     compare with, (1) decides.
  bool slow(size_t i) const {
    const KernelCost& c = k_[i];
    if (c.flops == 0 || c.ms <= 0 || total_ms_ <= 0) return false;
    const double f = static_cast<double>(c.flops), rate = gflops(c);
    if (total_flops_ - f <= 0) return false;  // nothing else to compare with
    if (c.ms <= kSlowTimeShare * total_ms_) return false;
    const double others = (flop_weighted_ - f * rate) / (total_flops_ - f);
    const bool per_flop =
        (rate < kSlowFraction * others && (f >= kSlowFlopShare * total_flops_ || c.ms > kSlowDominantShare * total_ms_ ||
                                           rate < kSlowFarFraction * others)) ||
        (f >= kSlowBigFlopShare * total_flops_ && rate < kSlowFraction * fastest_peer_);
    if (!per_flop) return false;
    double bytes = streaming_bytes_, weighted = byte_weighted_;
    if (streaming(c)) {
      bytes -= static_cast<double>(c.bytes);
      weighted -= static_cast<double>(c.bytes) * gbytes(c);
    }
    if (bytes <= 0) return true;
    return gbytes(c) < kSlowFraction * (weighted / bytes);
  }

 private:
  static bool streaming(const KernelCost& c) {
    return c.ms > 0 && c.bytes > 0 && static_cast<double>(c.flops) <= kStreamingFlopsPerByte * static_cast<double>(c.bytes);
  }

  std::vector<KernelCost> k_;
  double total_ms_ = 0, total_flops_ = 0, flop_weighted_ = 0, fastest_peer_ = 0;
  double streaming_bytes_ = 0, byte_weighted_ = 0;
};

}  // namespace edgert_tools

#endif  // EDGERT_TOOLS_SLOW_KERNELS_H
