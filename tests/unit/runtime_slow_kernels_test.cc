// edgert-bench --profile's SLOW rule (device_runtime/tools/slow_kernels.h) on kernels measured
// with `edgert-bench BUNDLE --profile --json --iters 20` (x86_64, 1 thread, AMD EPYC, at
// 599e78b): a memory-bound matrix-vector product, slow per FLOP, is not flagged; a bilinear
// upsample slow per FLOP and per byte is.
#include <doctest/doctest.h>

#include <vector>

#include "slow_kernels.h"

using edgert_tools::KernelCost;
using edgert_tools::SlowKernelRule;

namespace {

// The driving model's (samples/driving_model, fp32) slowest kernels: convs and products at
// 50-80 GFLOP/s, and the streaming kernels, among them the FC layers (matrix-vector
// products over 8 MB of weights each) at 11-13 GFLOP/s and 11-25 GB/s.
const std::vector<KernelCost> kDriving = {
    {1.5719, 102236160, 4243724},  // 0 stem patchify conv + GELU
    {0.7082, 52736000, 4458508},   // 1 policy FFN product
    {0.6431, 52454400, 4503552},   // 2 policy FFN product + residual
    {0.4995, 39360000, 3356672},   // 3 policy attention QKV
    {0.5175, 26345472, 1098508},   // 4 stage 0 ConvFFN 1x1 + GELU
    {0.5161, 26345472, 1098508},   // 5
    {0.3772, 25313280, 3282956},   // 6 stage 3 ConvFFN 1x1 + GELU
    {0.7344, 8392704, 8421376},    // 7 FC 1024 -> 2048 (the vision features): memory speed
    {0.3688, 4229136, 8474752},    // 8 heads FC
    {0.3334, 4197376, 8409100},    // 9 policy token FC
    {0.2527, 3145728, 3932168},    // 10 image normalization (elementwise)
    {0.1194, 1054720, 2156556},    // 11 FC
};
constexpr size_t kDrivingFc = 7;

// DeepLabV3-MobileNetV3's final bilinear Resize (21 classes, 65x65 -> 520x520) at 0.7
// GFLOP/s and 0.6 GB/s, with the model's 1x1 convs at 85-97 GFLOP/s and its streaming
// kernels (elementwise, pools, sums) at 20-50 GB/s.
const std::vector<KernelCost> kDeepLab = {
    {9.8925, 6881280, 5852160},    // 0 Resize: the cliff
    {1.5808, 134217728, 6291456},  // 1 ASPP pooling branch product
    {1.4251, 125960192, 2229248},  // 2 ASPP 1x1 conv
    {0.8705, 78725120, 1925760},   // 3 backbone 1x1 conv + residual
    {0.8392, 78725120, 1925760},   // 4
    {0.8259, 80117760, 1765120},   // 5
    {0.8232, 80117760, 1765120},   // 6
    {0.1427, 5193856, 5245440},    // 7 elementwise
    {0.1009, 2097152, 2097216},    // 8 ReduceSum
    {0.0392, 245760, 1969920},     // 9 squeeze-excite scale
    {0.0473, 1048576, 1572896},    // 10 ReduceSum
    {0.0249, 246720, 986880},      // 11 average pool
};

std::vector<bool> flags(const std::vector<KernelCost>& k) {
  const SlowKernelRule rule(k);
  std::vector<bool> out;
  for (size_t i = 0; i < k.size(); ++i) out.push_back(rule.slow(i));
  return out;
}

std::vector<KernelCost> without_bytes(std::vector<KernelCost> k) {
  for (KernelCost& c : k) c.bytes = 0;
  return k;
}

}  // namespace

TEST_CASE("SLOW rule: a matrix-vector product at memory speed is not a cliff") {
  const std::vector<bool> slow = flags(kDriving);
  for (size_t i = 0; i < kDriving.size(); ++i) CHECK_MESSAGE(!slow[i], "kernel ", i);
  // The byte term is what clears it: by FLOPs alone (a bundle without byte counts, or the
  // rule before it had them) the FC is below 1/4 of the model's mean and over 3% of the time.
  const std::vector<bool> by_flops = flags(without_bytes(kDriving));
  CHECK(by_flops[kDrivingFc]);
  const SlowKernelRule rule(kDriving);
  CHECK(rule.mean_gflops() > 4 * SlowKernelRule::gflops(kDriving[kDrivingFc]));
  CHECK(SlowKernelRule::gbytes(kDriving[kDrivingFc]) > 0.25 * rule.streaming_gbs());
}

TEST_CASE("SLOW rule: a bilinear upsample slow per FLOP and per byte is a cliff") {
  const std::vector<bool> slow = flags(kDeepLab);
  CHECK(slow[0]);
  for (size_t i = 1; i < kDeepLab.size(); ++i) CHECK_MESSAGE(!slow[i], "kernel ", i);
  // The same upsample at memory speed (the streaming kernels' GB/s) would not be one.
  std::vector<KernelCost> fast = kDeepLab;
  fast[0].ms = static_cast<double>(fast[0].bytes) / (30.0 * 1e6);  // 30 GB/s
  CHECK_FALSE(flags(fast)[0]);
}

TEST_CASE("SLOW rule: a streaming kernel far below the others' GB/s is a cliff") {
  // A stored Concat whose index arithmetic (div / mod per element) makes it crawl: Swin-T's
  // patch merging at 0.07 GFLOP/s and 0.19 GB/s (under 1 FLOP per byte: itself streaming),
  // beside the driving model's kernels.
  std::vector<KernelCost> k = kDriving;
  k.push_back({12.4812, 903168, 2408448});
  const std::vector<bool> slow = flags(k);
  CHECK(slow.back());
  CHECK_FALSE(slow[kDrivingFc]);
}

TEST_CASE("SLOW rule: nothing to compare with flags nothing") {
  CHECK_FALSE(flags({{1.0, 1000, 1000}})[0]);
  CHECK_FALSE(flags({{1.0, 0, 1000}, {0.5, 0, 0}})[0]);
  CHECK(flags({}).empty());
}
