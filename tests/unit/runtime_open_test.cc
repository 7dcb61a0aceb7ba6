// Opening bundles with options: the private copy (a later change to the file cannot reach an
// open bundle), the map-in-place opt-out, and signed mode (trusted keys).
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "runtime_test_util.h"
#if !EDGE_SIGNATURES
#define EDGE_SIGNATURE_LAYOUT_ONLY
#endif
#include "bundle_signature.h"

using namespace rt_test;

namespace {

bool contains(const char* haystack, const char* needle) { return std::strstr(haystack, needle) != nullptr; }

// A bundle file in /tmp, removed at scope exit.
struct TempFile {
  char path[32] = "/tmp/edgert_open_XXXXXX";
  explicit TempFile(const std::vector<uint8_t>& bytes) {
    const int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    REQUIRE(write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
    close(fd);
  }
  ~TempFile() { std::remove(path); }
};

// copy_bundle's w_out (the weights, read from the bundle on every run) after one run.
std::vector<float> weights_out(const edgert_bundle* b) {
  edgert_context* ctx = nullptr;
  edgert_context_options options = {};
  REQUIRE(edgert_context_create(b, &options, &ctx) == EDGERT_OK);
  alignas(64) float x[4] = {1, 2, 3, 4}, y[4] = {}, w[4] = {};
  edgert_bind_input(ctx, 0, x, 16);
  edgert_bind_output(ctx, 0, y, 16);
  edgert_bind_output(ctx, 1, w, 16);
  REQUIRE(edgert_run(ctx) == EDGERT_OK);
  edgert_context_destroy(ctx);
  return std::vector<float>(w, w + 4);
}

// File offset of copy_bundle's weights (its only section, at data blob offset 0).
uint64_t weights_offset(const std::vector<uint8_t>& bytes) {
  BundleHeader h;
  std::memcpy(&h, bytes.data(), sizeof h);
  return h.data_offset;
}

}  // namespace

TEST_CASE("open: default is a private copy; writing into the file after open changes nothing") {
  const std::vector<uint8_t> bytes = serialize_bundle(copy_bundle());
  TempFile f(bytes);
  edgert_bundle* b = nullptr;
  REQUIRE(edgert_bundle_open(f.path, &b) == EDGERT_OK);
  const std::vector<float> before = weights_out(b);
  CHECK(before == weight_values());
  // Overwrite the weights in place, as a writer with access to the file would.
  const float evil[4] = {-1, -2, -3, -4};
  const int fd = open(f.path, O_WRONLY);
  REQUIRE(fd >= 0);
  REQUIRE(pwrite(fd, evil, sizeof evil, static_cast<off_t>(weights_offset(bytes))) == sizeof evil);
  close(fd);
  CHECK(weights_out(b) == before);
  edgert_bundle_close(b);
  // The changed file itself is refused by the content hash at the next open.
  CHECK(edgert_bundle_open(f.path, &b) == EDGERT_ERROR_INVALID_BUNDLE);
  CHECK(contains(edgert_last_error(), "content hash mismatch"));
}

TEST_CASE("open: default survives the file being truncated or replaced in place (cp over it)") {
  const std::vector<uint8_t> bytes = serialize_bundle(copy_bundle());
  TempFile f(bytes);
  edgert_bundle* b = nullptr;
  REQUIRE(edgert_bundle_open(f.path, &b) == EDGERT_OK);
  // cp truncates the destination and writes the new bytes: a mapping of it would fault
  // (SIGBUS) on any page past the new end.
  const int fd = open(f.path, O_WRONLY | O_TRUNC);
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, "short", 5) == 5);
  close(fd);
  CHECK(weights_out(b) == weight_values());
  edgert_bundle_close(b);
}

TEST_CASE("open: EDGERT_OPEN_MAP_IN_PLACE uses the file's pages (the opt-out's documented risk)") {
  const std::vector<uint8_t> bytes = serialize_bundle(copy_bundle());
  TempFile f(bytes);
  edgert_open_options options = {};
  options.flags = EDGERT_OPEN_MAP_IN_PLACE;
  edgert_bundle* b = nullptr;
  REQUIRE(edgert_bundle_open_with_options(f.path, &options, &b) == EDGERT_OK);
  CHECK(weights_out(b) == weight_values());
  const float changed[4] = {-1, -2, -3, -4};
  const int fd = open(f.path, O_WRONLY);
  REQUIRE(fd >= 0);
  REQUIRE(pwrite(fd, changed, sizeof changed, static_cast<off_t>(weights_offset(bytes))) == sizeof changed);
  close(fd);
  // What the default's test above guards against: the unverified bytes reach the run.
  CHECK(weights_out(b) == std::vector<float>(changed, changed + 4));
  edgert_bundle_close(b);
}

TEST_CASE("open: options are checked; null options are the defaults") {
  const std::vector<uint8_t> bytes = serialize_bundle(copy_bundle());
  TempFile f(bytes);
  edgert_bundle* b = nullptr;
  REQUIRE(edgert_bundle_open_with_options(f.path, nullptr, &b) == EDGERT_OK);
  edgert_bundle_close(b);
  edgert_open_options options = {};
  options.num_trusted_keys = 1;  // and no keys
  CHECK(edgert_bundle_open_with_options(f.path, &options, &b) == EDGERT_ERROR_INVALID_ARGUMENT);
  CHECK(contains(edgert_last_error(), "trusted_public_keys is null"));
  CHECK(b == nullptr);
  CHECK(edgert_bundle_open_with_options(nullptr, nullptr, &b) == EDGERT_ERROR_INVALID_ARGUMENT);
  edgert_open_options future = {};
  future.flags = 2;  // not a flag this runtime knows: refused, not ignored
  CHECK(edgert_bundle_open_with_options(f.path, &future, &b) == EDGERT_ERROR_INVALID_ARGUMENT);
  CHECK(contains(edgert_last_error(), "unknown flags 0x2"));
}

TEST_CASE("open: bytes after the data blob are refused unless they are one signature trailer") {
  std::vector<uint8_t> bytes = serialize_bundle(copy_bundle());
  bytes.push_back(0);
  {
    Opened o(bytes);
    CHECK(o.status == EDGERT_ERROR_INVALID_BUNDLE);
    CHECK(contains(edgert_last_error(), "does not match the header"));
  }
  // 104 bytes that are not a trailer (no magic): refused the same way.
  bytes.resize(bytes.size() - 1 + edge::bundle::kSignatureTrailerSize, 0);
  {
    Opened o(bytes);
    CHECK(o.status == EDGERT_ERROR_INVALID_BUNDLE);
    CHECK(contains(edgert_last_error(), "does not match the header"));
  }
}

#if EDGE_SIGNATURES
namespace {

struct KeyPair {
  uint8_t seed[edge::bundle::kSecretSeedSize];
  uint8_t pk[crypto_sign_PUBLICKEYBYTES];
  explicit KeyPair(uint8_t fill) {
    REQUIRE(sodium_init() >= 0);
    std::memset(seed, fill, sizeof seed);
    uint8_t sk[crypto_sign_SECRETKEYBYTES];
    crypto_sign_seed_keypair(pk, sk, seed);
  }
};

std::vector<uint8_t> signed_copy_bundle(const KeyPair& key) {
  std::vector<uint8_t> bytes = serialize_bundle(copy_bundle());
  REQUIRE(edge::bundle::append_signature(&bytes, key.seed));
  return bytes;
}

edgert_status open_signed(const std::vector<uint8_t>& bytes, const std::vector<const KeyPair*>& trusted) {
  std::vector<uint8_t> keys;
  for (const KeyPair* k : trusted) keys.insert(keys.end(), k->pk, k->pk + sizeof k->pk);
  edgert_open_options options = {};
  options.trusted_public_keys = keys.data();
  options.num_trusted_keys = trusted.size();
  AlignedCopy memory(bytes);
  edgert_bundle* b = nullptr;
  const edgert_status st = edgert_bundle_open_memory_with_options(memory.data(), memory.size(), &options, &b);
  edgert_bundle_close(b);
  return st;
}

}  // namespace

TEST_CASE("signed mode: accepts a bundle signed by a trusted key, refuses every other") {
  CHECK(edgert_signatures_supported() == 1);
  const KeyPair alice(1), bob(2);
  const std::vector<uint8_t> good = signed_copy_bundle(alice);
  CHECK(open_signed(good, {&alice}) == EDGERT_OK);
  CHECK(open_signed(good, {&bob, &alice}) == EDGERT_OK);
  {
    Opened o(good);  // unsigned mode accepts it too (the trailer is not checked)
    CHECK(o.status == EDGERT_OK);
  }

  const std::vector<uint8_t> unsigned_bytes = serialize_bundle(copy_bundle());
  CHECK(open_signed(unsigned_bytes, {&alice}) == EDGERT_ERROR_INVALID_BUNDLE);
  CHECK(contains(edgert_last_error(), "not signed"));

  CHECK(open_signed(good, {&bob}) == EDGERT_ERROR_INVALID_BUNDLE);
  CHECK(contains(edgert_last_error(), "not among the 1 trusted key"));

  // One byte changed after signing: in the header, the FlatBuffer, the data blob (the
  // weights), the trailer's key, the signature.
  const uint64_t data = weights_offset(good);
  const size_t trailer = good.size() - edge::bundle::kSignatureTrailerSize;
  const struct {
    const char* what;
    size_t offset;
  } flips[] = {{"header", 40}, {"FlatBuffer", 64 + 20}, {"data", data + 1}, {"signature", good.size() - 1},
               {"signature start", trailer + 40}};
  for (const auto& flip : flips) {
    CAPTURE(flip.what);
    std::vector<uint8_t> bad = good;
    bad[flip.offset] ^= 0x10;
    CHECK(open_signed(bad, {&alice}) == EDGERT_ERROR_INVALID_BUNDLE);
    CHECK(contains(edgert_last_error(), "does not verify"));
  }
  // The key in the trailer swapped for another trusted one: the signature is not by it.
  std::vector<uint8_t> swapped = good;
  std::memcpy(swapped.data() + trailer + 8, bob.pk, sizeof bob.pk);
  CHECK(open_signed(swapped, {&alice, &bob}) == EDGERT_ERROR_INVALID_BUNDLE);
  CHECK(contains(edgert_last_error(), "does not verify"));

  // A truncated signature: not a trailer any more, in either mode.
  std::vector<uint8_t> truncated(good.begin(), good.end() - 1);
  CHECK(open_signed(truncated, {&alice}) == EDGERT_ERROR_INVALID_BUNDLE);
  Opened o(truncated);
  CHECK(o.status == EDGERT_ERROR_INVALID_BUNDLE);
}

TEST_CASE("signed mode: a file is checked on the private copy, and runs") {
  const KeyPair alice(7);
  TempFile f(signed_copy_bundle(alice));
  edgert_open_options options = {};
  options.trusted_public_keys = alice.pk;
  options.num_trusted_keys = 1;
  edgert_bundle* b = nullptr;
  REQUIRE(edgert_bundle_open_with_options(f.path, &options, &b) == EDGERT_OK);
  CHECK(weights_out(b) == weight_values());
  edgert_bundle_close(b);
  options.flags = EDGERT_OPEN_MAP_IN_PLACE;
  REQUIRE(edgert_bundle_open_with_options(f.path, &options, &b) == EDGERT_OK);
  CHECK(weights_out(b) == weight_values());
  edgert_bundle_close(b);
}

#else

TEST_CASE("signed mode: a runtime built without EDGE_SIGNATURES refuses it") {
  CHECK(edgert_signatures_supported() == 0);
  const std::vector<uint8_t> bytes = serialize_bundle(copy_bundle());
  AlignedCopy memory(bytes);
  const uint8_t key[32] = {1};
  edgert_open_options options = {};
  options.trusted_public_keys = key;
  options.num_trusted_keys = 1;
  edgert_bundle* b = nullptr;
  CHECK(edgert_bundle_open_memory_with_options(memory.data(), memory.size(), &options, &b) ==
        EDGERT_ERROR_UNSUPPORTED);
  CHECK(contains(edgert_last_error(), "EDGE_SIGNATURES"));
  CHECK(b == nullptr);
}

#endif
