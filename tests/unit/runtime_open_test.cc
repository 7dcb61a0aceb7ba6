// Opening bundles with options: the private copy (a later change to the file cannot reach an
// open bundle), the map-in-place opt-out, signed mode (trusted keys) and its fs-verity form
// (a detached signature of the digest the kernel measured; the kernel stood in for here).
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include <cstdio>
#include <string>

#include "runtime_test_util.h"
#if !EDGE_SIGNATURES
#define EDGE_SIGNATURE_LAYOUT_ONLY
#endif
#include "bundle_signature.h"
#include "internal.h"  // edgert::measure_verity, the test seam of EDGERT_OPEN_FSVERITY

using namespace rt_test;

namespace {

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
  future.flags = 4;  // not a flag this runtime knows: refused, not ignored
  CHECK(edgert_bundle_open_with_options(f.path, &future, &b) == EDGERT_ERROR_INVALID_ARGUMENT);
  CHECK(contains(edgert_last_error(), "unknown flags 0x4"));

  // EDGERT_OPEN_FSVERITY is signed mode, needs the signature bytes and a file.
  const uint8_t key[32] = {1}, signature[112] = {};
  edgert_open_options fsv = {};
  fsv.flags = EDGERT_OPEN_FSVERITY;
  fsv.fsverity_signature = signature;
  fsv.fsverity_signature_size = sizeof signature;
  CHECK(edgert_bundle_open_with_options(f.path, &fsv, &b) == EDGERT_ERROR_INVALID_ARGUMENT);
  CHECK(contains(edgert_last_error(), "EDGERT_OPEN_FSVERITY is signed mode"));
  fsv.trusted_public_keys = key;
  fsv.num_trusted_keys = 1;
  fsv.fsverity_signature = nullptr;
  CHECK(edgert_bundle_open_with_options(f.path, &fsv, &b) == EDGERT_ERROR_INVALID_ARGUMENT);
  CHECK(contains(edgert_last_error(), "fsverity_signature is null"));
  fsv.fsverity_signature = signature;
  AlignedCopy memory(bytes);
  CHECK(edgert_bundle_open_memory_with_options(memory.data(), memory.size(), &fsv, &b) ==
        EDGERT_ERROR_INVALID_ARGUMENT);
  CHECK(contains(edgert_last_error(), "not to memory"));
  CHECK(b == nullptr);
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

#if defined(__linux__)
namespace {

// Stands in for the kernel's FS_IOC_MEASURE_VERITY (this build machine's kernel has no
// fs-verity): answers with `digest`, or fails with `error`, and records what it was asked.
struct FakeVerity {
  static inline std::vector<uint8_t> digest;
  static inline uint16_t algorithm = edge::bundle::kFsverityHashSha256;
  static inline int error = 0;
  static inline int calls = 0;
  static inline ino_t inode = 0;  // of the fd it was last asked about

  static int measure(int fd, uint16_t* alg, uint8_t* out, size_t capacity, size_t* size) {
    ++calls;
    struct stat st;
    inode = fstat(fd, &st) == 0 ? st.st_ino : 0;
    if (error != 0) return error;
    if (digest.size() > capacity) return EOVERFLOW;  // no REQUIRE: this runs inside the runtime (no exceptions)
    *alg = algorithm;
    std::memcpy(out, digest.data(), digest.size());
    *size = digest.size();
    return 0;
  }

  // Installed for the scope, the real one restored after.
  edgert::MeasureVerityFn saved = edgert::measure_verity;
  explicit FakeVerity(const std::vector<uint8_t>& file) {
    digest.resize(edge::bundle::kFsverityDigestSize);
    edge::bundle::fsverity_digest(file.data(), file.size(), digest.data());
    algorithm = edge::bundle::kFsverityHashSha256;
    error = calls = 0;
    inode = 0;
    edgert::measure_verity = measure;
  }
  ~FakeVerity() { edgert::measure_verity = saved; }
};

std::vector<uint8_t> fsverity_signature_of(const std::vector<uint8_t>& file, const KeyPair& key) {
  uint8_t digest[edge::bundle::kFsverityDigestSize];
  edge::bundle::fsverity_digest(file.data(), file.size(), digest);
  edge::bundle::FsveritySignature sig;
  REQUIRE(edge::bundle::fsverity_signature(digest, key.seed, &sig));
  const uint8_t* p = reinterpret_cast<const uint8_t*>(&sig);
  return std::vector<uint8_t>(p, p + sizeof sig);
}

edgert_status open_fsverity(const char* path, const std::vector<uint8_t>& signature,
                            const std::vector<const KeyPair*>& trusted, uint32_t flags = EDGERT_OPEN_MAP_IN_PLACE,
                            std::vector<float>* weights = nullptr) {
  std::vector<uint8_t> keys;
  for (const KeyPair* k : trusted) keys.insert(keys.end(), k->pk, k->pk + sizeof k->pk);
  edgert_open_options options = {};
  options.flags = flags | EDGERT_OPEN_FSVERITY;
  options.trusted_public_keys = keys.data();
  options.num_trusted_keys = trusted.size();
  options.fsverity_signature = signature.data();
  options.fsverity_signature_size = signature.size();
  edgert_bundle* b = nullptr;
  const edgert_status st = edgert_bundle_open_with_options(path, &options, &b);
  if (st != EDGERT_OK) CHECK(b == nullptr);
  if (b && weights) *weights = weights_out(b);
  edgert_bundle_close(b);
  return st;
}

// copy_bundle unsigned, with a content hash that does not match: it opens only where
// nothing of the file is hashed (a content hash or a trailer would refuse it).
std::vector<uint8_t> unhashed_bundle() {
  std::vector<uint8_t> bytes = serialize_bundle(copy_bundle());
  BundleHeader h;
  std::memcpy(&h, bytes.data(), sizeof h);
  h.content_hash ^= 1;
  std::memcpy(bytes.data(), &h, sizeof h);
  return bytes;
}

}  // namespace

TEST_CASE("fs-verity: a signed measured digest stands in for hashing the file") {
  const KeyPair alice(3), bob(4);
  const std::vector<uint8_t> bytes = unhashed_bundle();
  TempFile f(bytes);
  struct stat st;
  REQUIRE(stat(f.path, &st) == 0);
  const std::vector<uint8_t> sig = fsverity_signature_of(bytes, alice);
  FakeVerity kernel(bytes);
  std::vector<float> weights;
  CHECK(open_fsverity(f.path, sig, {&alice}, EDGERT_OPEN_MAP_IN_PLACE, &weights) == EDGERT_OK);
  CHECK(weights == weight_values());
  CHECK(FakeVerity::calls == 1);
  CHECK(FakeVerity::inode == st.st_ino);  // asked about the file being opened
  // Private copy too (the kernel checks reads as well as page faults); several keys.
  CHECK(open_fsverity(f.path, sig, {&bob, &alice}, 0, &weights) == EDGERT_OK);
  CHECK(weights == weight_values());

  // The same file without the fs-verity path: the hash it skipped refuses it.
  edgert_bundle* b = nullptr;
  CHECK(edgert_bundle_open(f.path, &b) == EDGERT_ERROR_INVALID_BUNDLE);
  CHECK(contains(edgert_last_error(), "content hash mismatch"));
  edgert_open_options options = {};
  options.flags = EDGERT_OPEN_MAP_IN_PLACE;
  options.trusted_public_keys = alice.pk;
  options.num_trusted_keys = 1;
  CHECK(edgert_bundle_open_with_options(f.path, &options, &b) == EDGERT_ERROR_INVALID_BUNDLE);
  CHECK(contains(edgert_last_error(), "not signed"));

  // A bundle with a trailer (any signer's): the detached signature covers it with the rest.
  const std::vector<uint8_t> trailed = signed_copy_bundle(bob);
  TempFile g(trailed);
  FakeVerity kernel2(trailed);
  CHECK(open_fsverity(g.path, fsverity_signature_of(trailed, alice), {&alice}) == EDGERT_OK);
}

TEST_CASE("fs-verity: wrong key, another digest, a damaged signature, no fs-verity: refused") {
  const KeyPair alice(5), bob(6);
  const std::vector<uint8_t> bytes = serialize_bundle(copy_bundle());
  TempFile f(bytes);
  const std::vector<uint8_t> good = fsverity_signature_of(bytes, alice);
  FakeVerity kernel(bytes);
  REQUIRE(open_fsverity(f.path, good, {&alice}) == EDGERT_OK);

  CHECK(open_fsverity(f.path, fsverity_signature_of(bytes, bob), {&alice}) == EDGERT_ERROR_INVALID_BUNDLE);
  CHECK(contains(edgert_last_error(), "not among the 1 trusted key"));

  // The measured digest one bit off (the file is not the one signed).
  FakeVerity::digest[17] ^= 0x01;
  CHECK(open_fsverity(f.path, good, {&alice}) == EDGERT_ERROR_INVALID_BUNDLE);
  CHECK(contains(edgert_last_error(), "does not verify over the fs-verity digest"));
  FakeVerity::digest[17] ^= 0x01;
  // The digest of a file one byte longer (signature made for another file).
  std::vector<uint8_t> longer = bytes;
  longer.push_back(0);
  CHECK(open_fsverity(f.path, fsverity_signature_of(longer, alice), {&alice}) == EDGERT_ERROR_INVALID_BUNDLE);
  CHECK(contains(edgert_last_error(), "does not verify"));
  // The kernel's digest of another algorithm (SHA-512).
  FakeVerity::algorithm = 2;
  FakeVerity::digest.resize(64);
  CHECK(open_fsverity(f.path, good, {&alice}) == EDGERT_ERROR_INVALID_BUNDLE);
  CHECK(contains(edgert_last_error(), "hash algorithm 2 (64 bytes)"));
  FakeVerity restored(bytes);

  // The signature file truncated, empty, too long, or garbled field by field.
  const struct {
    const char* what;
    size_t offset;  // of the byte changed; SIZE_MAX: the size changes instead
    size_t size;
    const char* message;
  } damaged[] = {
      {"truncated", SIZE_MAX, 111, "is 111 bytes, expected 112"},
      {"empty", SIZE_MAX, 0, "is 0 bytes, expected 112"},
      {"longer", SIZE_MAX, 113, "is 113 bytes, expected 112"},
      {"magic", 3, 112, "magic is not EDGEFSV1"},
      {"hash_algorithm", 8, 112, "hash_algorithm 0"},
      {"log_block_size", 9, 112, "log_block_size 13"},
      {"reserved", 12, 112, "reserved bytes are not zero"},
      {"public key", 20, 112, "not among the 1 trusted key"},
      {"signature", 111, 112, "does not verify"},
      {"signature start", 48, 112, "does not verify"},
  };
  for (const auto& d : damaged) {
    CAPTURE(d.what);
    std::vector<uint8_t> bad = good;
    if (d.offset == SIZE_MAX) bad.resize(d.size, 0);
    else if (d.offset == 8) bad[8] = 0;
    else bad[d.offset] ^= 0x01;
    CHECK(open_fsverity(f.path, bad, {&alice}) == EDGERT_ERROR_INVALID_BUNDLE);
    CHECK(contains(edgert_last_error(), d.message));
  }
  // Bob's key in Alice's signature, both trusted: the signature is not by it.
  std::vector<uint8_t> swapped = good;
  std::memcpy(swapped.data() + 16, bob.pk, sizeof bob.pk);
  CHECK(open_fsverity(f.path, swapped, {&alice, &bob}) == EDGERT_ERROR_INVALID_BUNDLE);
  CHECK(contains(edgert_last_error(), "does not verify"));

  // No fs-verity on the file (ENODATA) or its file system (EOPNOTSUPP, ENOTTY): refused,
  // never a fallback to trusting the bytes; another error is an I/O error.
  for (int error : {ENODATA, EOPNOTSUPP, ENOTTY}) {
    CAPTURE(error);
    FakeVerity::error = error;
    CHECK(open_fsverity(f.path, good, {&alice}) == EDGERT_ERROR_INVALID_BUNDLE);
    CHECK(contains(edgert_last_error(), "the file has no fs-verity"));
    CHECK(contains(edgert_last_error(), std::strerror(error)));
  }
  FakeVerity::error = EIO;
  CHECK(open_fsverity(f.path, good, {&alice}) == EDGERT_ERROR_IO);
  CHECK(contains(edgert_last_error(), "cannot measure"));
}

TEST_CASE("fs-verity: the kernel's own answer for a file without fs-verity is a refusal") {
  const KeyPair alice(8);
  const std::vector<uint8_t> bytes = serialize_bundle(copy_bundle());
  TempFile f(bytes);  // /tmp: no file there has verity enabled (nor has this kernel fs-verity)
  CHECK(open_fsverity(f.path, fsverity_signature_of(bytes, alice), {&alice}) == EDGERT_ERROR_INVALID_BUNDLE);
  CHECK(contains(edgert_last_error(), "the file has no fs-verity (FS_IOC_MEASURE_VERITY: "));
}
#endif  // __linux__

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
  // Its fs-verity form as well.
  TempFile f(bytes);
  const uint8_t signature[112] = {};
  options.flags = EDGERT_OPEN_FSVERITY | EDGERT_OPEN_MAP_IN_PLACE;
  options.fsverity_signature = signature;
  options.fsverity_signature_size = sizeof signature;
  CHECK(edgert_bundle_open_with_options(f.path, &options, &b) == EDGERT_ERROR_UNSUPPORTED);
  CHECK(contains(edgert_last_error(), "EDGE_SIGNATURES"));
  CHECK(b == nullptr);
}

#endif
