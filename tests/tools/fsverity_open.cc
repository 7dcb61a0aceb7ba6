// edge-fsverity-open — opens a bundle through EDGERT_OPEN_FSVERITY with a given digest
// standing in for the kernel's FS_IOC_MEASURE_VERITY, through the runtime's test seam
// (edgert::measure_verity): the build machine's kernel has no fs-verity. A test and
// benchmark tool, never installed; a real device asks its kernel.
//
//   edge-fsverity-open BUNDLE --trusted-key K.pub --fsverity-signature S (--digest sha256:HEX | --compute-digest)
//       one open (in place) and close: exit 0, or 1 with the runtime's message
//   ... --bench OPENS ROUNDS
//       open time, alternating per round: unsigned mode (FNV content hash), signed mode
//       (trailer: BLAKE2b + Ed25519) and the fs-verity path, all mapped in place; prints each
//       way's median of the rounds' medians (the ioctl is not in it: the digest is injected)
//
// --digest takes the digest as `fsverity digest` prints it (an independent implementation);
// --compute-digest computes it here (schema/bundle_signature.h), once, before any timing.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bundle_signature.h"
#include "edgert.h"
#include "internal.h"
#include "npy.h"
#include "tool_common.h"

namespace {

std::vector<uint8_t> g_digest;  // what the stand-in kernel answers

int injected_measure(int, uint16_t* algorithm, uint8_t* digest, size_t capacity, size_t* size) {
  if (g_digest.size() > capacity) return EOVERFLOW;
  *algorithm = edge::bundle::kFsverityHashSha256;
  std::memcpy(digest, g_digest.data(), g_digest.size());
  *size = g_digest.size();
  return 0;
}

bool parse_digest(const std::string& text, std::vector<uint8_t>* out) {
  const std::string prefix = "sha256:";
  if (text.rfind(prefix, 0) != 0 || text.size() != prefix.size() + 64) return false;
  for (size_t i = 0; i < 32; ++i) {
    unsigned v = 0;
    if (std::sscanf(text.c_str() + prefix.size() + 2 * i, "%2x", &v) != 1) return false;
    out->push_back(static_cast<uint8_t>(v));
  }
  return true;
}

int usage_error(const std::string& message) {
  std::fprintf(stderr, "edge-fsverity-open: %s\n", message.c_str());
  return 2;
}

// Milliseconds of each of `n` opens and closes with `options`; empty on a failed open.
std::vector<double> time_opens(const char* path, const edgert_open_options& options, long n) {
  std::vector<double> ms;
  for (long i = 0; i < n; ++i) {
    edgert_bundle* b = nullptr;
    const auto t0 = std::chrono::steady_clock::now();
    const edgert_status st = edgert_bundle_open_with_options(path, &options, &b);
    edgert_bundle_close(b);
    const auto t1 = std::chrono::steady_clock::now();
    if (st != EDGERT_OK) {
      std::fprintf(stderr, "edge-fsverity-open: %s: %s\n", edgert_status_name(st), edgert_last_error());
      return {};
    }
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return ms;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string bundle, key, signature, digest;
  bool compute = false;
  long opens = 0, rounds = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--trusted-key") key = value();
    else if (a == "--fsverity-signature") signature = value();
    else if (a == "--digest") digest = value();
    else if (a == "--compute-digest") compute = true;
    else if (a == "--bench" && i + 2 < argc) {
      opens = std::atol(argv[++i]);
      rounds = std::atol(argv[++i]);
    } else if (a[0] != '-' && bundle.empty()) bundle = a;
    else return usage_error("unexpected argument " + a + " (see the comment at the top of tests/tools/fsverity_open.cc)");
  }
  if (bundle.empty() || key.empty() || signature.empty() || digest.empty() == !compute)
    return usage_error("usage: BUNDLE --trusted-key K.pub --fsverity-signature S (--digest sha256:HEX | "
                       "--compute-digest) [--bench OPENS ROUNDS]");
  std::vector<uint8_t> keys;
  std::string error;
  edgert_tools::AlignedBuffer sig;
  if (!edgert_tools::read_hex_key_file(key, EDGERT_ED25519_PUBLIC_KEY_SIZE, &keys, &error) ||
      !edgert_tools::read_regular_file(signature.c_str(), 8, &sig, &error))
    return usage_error(error);
  if (compute) {
    edgert_tools::AlignedBuffer file;
    if (!edgert_tools::read_regular_file(bundle.c_str(), 8, &file, &error)) return usage_error(error);
    if (sodium_init() < 0) return usage_error("libsodium failed to initialize");
    g_digest.resize(edge::bundle::kFsverityDigestSize);
    edge::bundle::fsverity_digest(file.data(), file.size(), g_digest.data());
  } else if (!parse_digest(digest, &g_digest)) {
    return usage_error("--digest: expected sha256:<64 hex digits>, got " + digest);
  }
  edgert::measure_verity = injected_measure;

  edgert_open_options fsverity = {};
  fsverity.flags = EDGERT_OPEN_MAP_IN_PLACE | EDGERT_OPEN_FSVERITY;
  fsverity.trusted_public_keys = keys.data();
  fsverity.num_trusted_keys = 1;
  fsverity.fsverity_signature = sig.data();
  fsverity.fsverity_signature_size = sig.size();
  if (rounds <= 0) {
    const std::vector<double> ms = time_opens(bundle.c_str(), fsverity, 1);
    if (ms.empty()) return 1;
    std::printf("opened %s through the fs-verity path (digest injected) in %.3f ms\n", bundle.c_str(), ms[0]);
    return 0;
  }
  edgert_open_options trailer = fsverity;
  trailer.flags = EDGERT_OPEN_MAP_IN_PLACE;
  edgert_open_options unsigned_mode = {};
  unsigned_mode.flags = EDGERT_OPEN_MAP_IN_PLACE;
  const struct {
    const char* name;
    const edgert_open_options* options;
  } ways[] = {{"map in place, unsigned mode (FNV)", &unsigned_mode},
              {"map in place, signed mode (BLAKE2b trailer)", &trailer},
              {"map in place, fs-verity signature", &fsverity}};
  std::vector<std::vector<double>> medians(3);
  for (long r = 0; r < rounds; ++r)
    for (size_t w = 0; w < 3; ++w) {
      const std::vector<double> ms = time_opens(bundle.c_str(), *ways[w].options, opens);
      if (ms.empty()) return 1;
      medians[w].push_back(median(ms));
    }
  std::printf("%s: median of %ld rounds x median of %ld opens (fs-verity: digest injected, no ioctl)\n",
              bundle.c_str(), rounds, opens);
  for (size_t w = 0; w < 3; ++w) {
    std::printf("  %-45s %9.3f ms   (rounds:", ways[w].name, median(medians[w]));
    for (double m : medians[w]) std::printf(" %.3f", m);
    std::printf(")\n");
  }
  return 0;
}
