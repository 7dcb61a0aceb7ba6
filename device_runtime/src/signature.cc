// signature.cc — signed mode: a bundle is accepted only with an Ed25519 signature by a
// trusted key (schema/bundle_signature.h). Runs before verify_bundle parses anything, so a
// hostile bundle from an untrusted source never reaches the parser, let alone executable
// memory. Built with libsodium only where the CMake option EDGE_SIGNATURES is on; without it
// signed mode is refused, never silently skipped.
#include "internal.h"

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
  bool trusted = false;
  for (size_t i = 0; i < num_keys && !trusted; ++i)
    trusted = sodium_memcmp(keys + i * kPublicKeySize, t.public_key, kPublicKeySize) == 0;
  char name[17];
  if (!trusted)
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

}  // namespace edgert

#else  // !EDGE_SIGNATURES

namespace edgert {

bool signatures_supported() { return false; }

edgert_status check_signature(const uint8_t*, size_t, const uint8_t*, size_t) {
  return set_error(EDGERT_ERROR_UNSUPPORTED,
                   "trusted keys given, but this runtime was built without signature checking "
                   "(CMake option EDGE_SIGNATURES=OFF; it needs libsodium)");
}

}  // namespace edgert

#endif
