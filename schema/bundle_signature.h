// bundle_signature.h — the optional Ed25519 signature of a bundle, shared by edgec (which
// signs) and edgert (which checks). The signature lives outside the FlatBuffer, in a
// fixed-size trailer appended after the data blob, so signing neither changes the schema nor
// any byte before the trailer (an unsigned bundle is a signed one with the trailer cut off):
//
//   [header | FlatBuffer | padding | data blob] [trailer: magic, public key, signature]
//
// The signature is over a short message: the trailer's magic and public key, then the
// BLAKE2b-512 digest of every byte before the trailer (header included). Signing a digest
// rather than the file keeps the expensive part the fastest hash libsodium has (BLAKE2b,
// vectorized) instead of Ed25519's own SHA-512 pass, and binds the key to the content.
// The digest functions need libsodium: include this header only where EDGE_SIGNATURES is on,
// or define EDGE_SIGNATURE_LAYOUT_ONLY for the layout alone.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace edge::bundle {

inline constexpr char kSignatureMagic[8] = {'E', 'D', 'G', 'E', 'S', 'I', 'G', '1'};
inline constexpr size_t kPublicKeySize = 32;   // Ed25519 public key
inline constexpr size_t kSecretSeedSize = 32;  // Ed25519 seed (the .key file)
inline constexpr size_t kSignatureSize = 64;   // Ed25519 signature
inline constexpr size_t kDigestSize = 64;      // BLAKE2b-512

struct SignatureTrailer {
  char magic[8];
  uint8_t public_key[kPublicKeySize];
  uint8_t signature[kSignatureSize];
};
inline constexpr size_t kSignatureTrailerSize = sizeof(SignatureTrailer);
static_assert(kSignatureTrailerSize == 104, "the trailer is 104 bytes, no padding");

// Whether the `size` bytes at `p` start like a trailer (its magic). Where a signature is not
// checked, this is all that separates a trailer from bytes appended to a bundle.
inline bool looks_like_trailer(const uint8_t* p, size_t size) {
  return size == kSignatureTrailerSize && std::memcmp(p, kSignatureMagic, sizeof(kSignatureMagic)) == 0;
}

// The message the signature signs: magic, public key, digest of the signed bytes.
inline constexpr size_t kSignedMessageSize = sizeof(kSignatureMagic) + kPublicKeySize + kDigestSize;
inline void signed_message(const uint8_t public_key[kPublicKeySize], const uint8_t digest[kDigestSize],
                           uint8_t out[kSignedMessageSize]) {
  std::memcpy(out, kSignatureMagic, sizeof(kSignatureMagic));
  std::memcpy(out + sizeof(kSignatureMagic), public_key, kPublicKeySize);
  std::memcpy(out + sizeof(kSignatureMagic) + kPublicKeySize, digest, kDigestSize);
}

}  // namespace edge::bundle

#ifndef EDGE_SIGNATURE_LAYOUT_ONLY
#include <sodium.h>

#include <vector>

namespace edge::bundle {

// BLAKE2b-512 of the signed bytes (the file up to the trailer). False only if libsodium fails.
inline bool signed_digest(const uint8_t* bytes, size_t size, uint8_t out[kDigestSize]) {
  return crypto_generichash(out, kDigestSize, bytes, size, nullptr, 0) == 0;
}

// Appends the trailer signing `*bundle` (an unsigned bundle: every byte is signed) with the
// key pair of `seed`. False if libsodium fails. Call sodium_init() first.
inline bool append_signature(std::vector<uint8_t>* bundle, const uint8_t seed[kSecretSeedSize]) {
  uint8_t sk[crypto_sign_SECRETKEYBYTES];
  SignatureTrailer t;
  std::memcpy(t.magic, kSignatureMagic, sizeof t.magic);
  crypto_sign_seed_keypair(t.public_key, sk, seed);
  uint8_t digest[kDigestSize], message[kSignedMessageSize];
  const bool ok = signed_digest(bundle->data(), bundle->size(), digest);
  signed_message(t.public_key, digest, message);
  const bool signed_ok = ok && crypto_sign_detached(t.signature, nullptr, message, sizeof message, sk) == 0;
  sodium_memzero(sk, sizeof sk);
  if (!signed_ok) return false;
  const uint8_t* p = reinterpret_cast<const uint8_t*>(&t);
  bundle->insert(bundle->end(), p, p + sizeof t);
  return true;
}

}  // namespace edge::bundle
#endif
