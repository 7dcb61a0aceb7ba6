// signature.cc — signed mode: a bundle is accepted only with an Ed25519 signature by a
// trusted key (schema/bundle_signature.h). Runs before verify_bundle parses anything, so a
// hostile bundle from an untrusted source never reaches the parser, let alone executable
// memory. Built with libsodium only where the CMake option EDGE_SIGNATURES is on; without it
// signed mode is refused, never silently skipped.
//
// EDGERT_OPEN_FSVERITY: instead of the trailer, a detached signature over the file's fs-verity
// digest, which the kernel measured when verity was enabled and checks every read against.
#include "internal.h"

#include <cerrno>
#include <cstddef>
#include <cstring>

#if defined(__linux__) && __has_include(<linux/fsverity.h>)
#include <linux/fsverity.h>
#include <sys/ioctl.h>
#define EDGE_HAVE_FSVERITY 1
#else
#define EDGE_HAVE_FSVERITY 0
#endif

namespace edgert {
namespace {

int kernel_measure_verity(int fd, uint16_t* algorithm, uint8_t* digest, size_t capacity, size_t* size) {
#if EDGE_HAVE_FSVERITY
  // struct fsverity_digest with room for the largest digest (SHA-512) after its header.
  struct {
    uint16_t algorithm, size;
    uint8_t digest[64];
  } m = {0, 64, {}};
  static_assert(offsetof(decltype(m), digest) == sizeof(fsverity_digest), "the kernel's layout");
  if (ioctl(fd, FS_IOC_MEASURE_VERITY, &m) != 0) return errno;
  if (m.size > capacity || m.size > sizeof m.digest) return EOVERFLOW;
  *algorithm = m.algorithm;
  std::memcpy(digest, m.digest, m.size);
  *size = m.size;
  return 0;
#else
  return EOPNOTSUPP;
#endif
}

}  // namespace

MeasureVerityFn measure_verity = kernel_measure_verity;

}  // namespace edgert

#if EDGE_SIGNATURES
#include <cstdio>

#include "bundle_signature.h"

namespace edgert {
namespace {

using namespace edge::bundle;

// First 8 bytes of a key in hex, to name it in messages.
const char* key_prefix(const uint8_t* key, char (&buf)[17]) {
  for (int i = 0; i < 8; ++i) std::snprintf(buf + 2 * i, 3, "%02x", key[i]);
  return buf;
}

// Whether `key` is one of the num_keys trusted public keys (compared in constant time).
bool is_trusted(const uint8_t* key, const uint8_t* keys, size_t num_keys) {
  for (size_t i = 0; i < num_keys; ++i)
    if (sodium_memcmp(keys + i * kPublicKeySize, key, kPublicKeySize) == 0) return true;
  return false;
}

}  // namespace

bool signatures_supported() { return true; }

edgert_status check_signature(const uint8_t* file, size_t file_size, const uint8_t* keys, size_t num_keys) {
  // Once per process; thread-safe and idempotent (libsodium picks its CPU-specific code here).
  if (sodium_init() < 0)
    return set_error(EDGERT_ERROR_UNSUPPORTED, "signed mode: libsodium failed to initialize");
  if (file_size < kSignatureTrailerSize ||
      !looks_like_trailer(file + file_size - kSignatureTrailerSize, kSignatureTrailerSize))
    return set_error(EDGERT_ERROR_INVALID_BUNDLE,
                     "bundle is not signed (no signature trailer at its end), and this runtime only "
                     "accepts bundles signed by a trusted key (edgec sign)");
  SignatureTrailer t;
  const size_t signed_size = file_size - kSignatureTrailerSize;
  std::memcpy(&t, file + signed_size, sizeof(t));
  char name[17];
  if (!is_trusted(t.public_key, keys, num_keys))
    return set_error(EDGERT_ERROR_INVALID_BUNDLE,
                     "bundle is signed by key %s..., which is not among the %zu trusted key(s)",
                     key_prefix(t.public_key, name), num_keys);
  uint8_t digest[kDigestSize], message[kSignedMessageSize];
  if (!signed_digest(file, signed_size, digest))
    return set_error(EDGERT_ERROR_UNSUPPORTED, "signed mode: libsodium failed to hash the bundle");
  signed_message(t.public_key, digest, message);
  if (crypto_sign_verify_detached(t.signature, message, sizeof(message), t.public_key) != 0)
    return set_error(EDGERT_ERROR_INVALID_BUNDLE,
                     "bundle signature by key %s... does not verify: the bundle was changed after "
                     "signing, or the signature is damaged",
                     key_prefix(t.public_key, name));
  return EDGERT_OK;
}

edgert_status check_fsverity_signature(int fd, const char* path, const uint8_t* signature, size_t signature_size,
                                       const uint8_t* keys, size_t num_keys) {
#if !EDGE_HAVE_FSVERITY
  return set_error(EDGERT_ERROR_UNSUPPORTED,
                   "EDGERT_OPEN_FSVERITY: fs-verity is Linux's, and this runtime was built for another system "
                   "(or without linux/fsverity.h)");
#else
  if (sodium_init() < 0)
    return set_error(EDGERT_ERROR_UNSUPPORTED, "signed mode: libsodium failed to initialize");
  // The signature's fields first: a wrong file is named before the kernel is asked anything.
  if (signature_size != kFsveritySignatureSize)
    return set_error(EDGERT_ERROR_INVALID_BUNDLE,
                     "fs-verity signature is %zu bytes, expected %zu (edgec sign --fsverity writes it to "
                     "BUNDLE.fsvsig): truncated, or not such a file",
                     signature_size, kFsveritySignatureSize);
  FsveritySignature s;
  std::memcpy(&s, signature, sizeof s);
  if (std::memcmp(s.magic, kFsveritySignatureMagic, sizeof s.magic) != 0)
    return set_error(EDGERT_ERROR_INVALID_BUNDLE,
                     "fs-verity signature: magic is not EDGEFSV1 (not a .fsvsig file of edgec sign --fsverity)");
  if (s.hash_algorithm != kFsverityHashSha256)
    return set_error(EDGERT_ERROR_INVALID_BUNDLE,
                     "fs-verity signature: hash_algorithm %u, this runtime knows only %u (SHA-256)",
                     s.hash_algorithm, kFsverityHashSha256);
  if (s.log_block_size != kFsverityLogBlockSize)
    return set_error(EDGERT_ERROR_INVALID_BUNDLE,
                     "fs-verity signature: log_block_size %u, this runtime knows only %u (4096-byte blocks)",
                     s.log_block_size, kFsverityLogBlockSize);
  for (uint8_t r : s.reserved)
    if (r != 0) return set_error(EDGERT_ERROR_INVALID_BUNDLE, "fs-verity signature: reserved bytes are not zero");
  char name[17];
  if (!is_trusted(s.public_key, keys, num_keys))
    return set_error(EDGERT_ERROR_INVALID_BUNDLE,
                     "fs-verity signature is by key %s..., which is not among the %zu trusted key(s)",
                     key_prefix(s.public_key, name), num_keys);

  uint16_t algorithm = 0;
  uint8_t digest[64];
  size_t digest_size = 0;
  const int err = measure_verity(fd, &algorithm, digest, sizeof digest, &digest_size);
  // No verity on this file (ENODATA), or none on its file system (EOPNOTSUPP, ENOTTY): then
  // nothing vouches for the bytes, and trusting them anyway is exactly what must not happen.
  if (err == ENODATA || err == EOPNOTSUPP || err == ENOTTY)
    return set_error(EDGERT_ERROR_INVALID_BUNDLE,
                     "%s: the file has no fs-verity (FS_IOC_MEASURE_VERITY: %s), and EDGERT_OPEN_FSVERITY "
                     "needs it (fsverity enable --hash-alg=sha256 --block-size=4096 on a file system with "
                     "fs-verity); open it without, to have the runtime check the bundle's own signature",
                     path, std::strerror(err));
  if (err != 0)
    return set_error(EDGERT_ERROR_IO, "%s: cannot measure its fs-verity digest (FS_IOC_MEASURE_VERITY): %s", path,
                     std::strerror(err));
  if (algorithm != kFsverityHashSha256 || digest_size != kFsverityDigestSize)
    return set_error(EDGERT_ERROR_INVALID_BUNDLE,
                     "%s: fs-verity digest has hash algorithm %u (%zu bytes), the signature is over a "
                     "SHA-256 one (fsverity enable --hash-alg=sha256)",
                     path, algorithm, digest_size);
  uint8_t message[kFsverityMessageSize];
  fsverity_signed_message(s.public_key, digest, message);
  if (crypto_sign_verify_detached(s.signature, message, sizeof message, s.public_key) != 0)
    return set_error(EDGERT_ERROR_INVALID_BUNDLE,
                     "fs-verity signature by key %s... does not verify over the fs-verity digest of %s: the "
                     "file is not the one signed, verity was enabled on it with another block size or a salt "
                     "(sign for --block-size=4096, no salt), or the signature is damaged",
                     key_prefix(s.public_key, name), path);
  return EDGERT_OK;
#endif
}

}  // namespace edgert

#else  // !EDGE_SIGNATURES

namespace edgert {

bool signatures_supported() { return false; }

edgert_status check_signature(const uint8_t*, size_t, const uint8_t*, size_t) {
  return set_error(EDGERT_ERROR_UNSUPPORTED,
                   "trusted keys given, but this runtime was built without signature checking "
                   "(CMake option EDGE_SIGNATURES=OFF; it needs libsodium)");
}

edgert_status check_fsverity_signature(int, const char*, const uint8_t*, size_t, const uint8_t*, size_t) {
  return check_signature(nullptr, 0, nullptr, 0);  // the same refusal
}

}  // namespace edgert

#endif
