// bundle_signature.h — the optional Ed25519 signature of a bundle (and, at the end, the
// detached signature of its fs-verity digest), shared by edgec (which
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

// ---- fs-verity: a detached signature of the bundle file's fs-verity digest ----
// Where the kernel verifies the file itself (fs-verity: every page read from it is checked
// against a Merkle tree whose root the kernel measured when verity was enabled), the runtime
// need not hash the file: it asks the kernel for the file digest (FS_IOC_MEASURE_VERITY) and
// checks a signature over that, so a signed open stays O(1). The digest covers every byte
// of the file, trailer included, so this signature cannot live in the bundle: it is a small
// file of its own (`edgec sign --fsverity` writes BUNDLE.fsvsig), the bundle is unchanged.
//
// The digest is fs-verity's file digest with SHA-256, 4096-byte blocks and no salt (as
// `fsverity enable --hash-alg=sha256 --block-size=4096` sets up and `fsverity digest` prints):
// SHA-256 of the 256-byte fsverity_descriptor {version 1, hash_algorithm 1, log_blocksize 12,
// salt_size 0, reserved u32 0, data_size le64, root_hash zero-padded to 64 bytes, salt 32
// zero bytes, 144 reserved zero bytes}. The root hash is that of the Merkle tree: SHA-256 of
// each data block (the last zero-padded), those hashes packed into blocks (the last
// zero-padded) and hashed again until one block remains; its hash is the root. A file of one
// block has that block's hash as root, an empty file a root of zeros.
//
// The detached signature is over (magic, public key, fs-verity digest); the digest already
// binds the algorithm, block size and file size (they are in the descriptor), so a file
// enabled with other parameters simply has another digest and fails the signature.
inline constexpr char kFsveritySignatureMagic[8] = {'E', 'D', 'G', 'E', 'F', 'S', 'V', '1'};
inline constexpr uint8_t kFsverityHashSha256 = 1;     // FS_VERITY_HASH_ALG_SHA256
inline constexpr uint8_t kFsverityLogBlockSize = 12;  // 4096-byte Merkle tree blocks
inline constexpr size_t kFsverityDigestSize = 32;     // SHA-256

struct FsveritySignature {
  char magic[8];               // kFsveritySignatureMagic
  uint8_t hash_algorithm;      // kFsverityHashSha256
  uint8_t log_block_size;      // kFsverityLogBlockSize
  uint8_t reserved[6];         // zero
  uint8_t public_key[kPublicKeySize];
  uint8_t signature[kSignatureSize];
};
inline constexpr size_t kFsveritySignatureSize = sizeof(FsveritySignature);
static_assert(kFsveritySignatureSize == 112, "the detached signature is 112 bytes, no padding");

inline constexpr size_t kFsverityMessageSize = sizeof(kFsveritySignatureMagic) + kPublicKeySize + kFsverityDigestSize;
inline void fsverity_signed_message(const uint8_t public_key[kPublicKeySize],
                                    const uint8_t digest[kFsverityDigestSize], uint8_t out[kFsverityMessageSize]) {
  std::memcpy(out, kFsveritySignatureMagic, sizeof(kFsveritySignatureMagic));
  std::memcpy(out + sizeof(kFsveritySignatureMagic), public_key, kPublicKeySize);
  std::memcpy(out + sizeof(kFsveritySignatureMagic) + kPublicKeySize, digest, kFsverityDigestSize);
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

// The fs-verity file digest of `size` bytes (see above). Host side: the runtime gets the
// digest from the kernel, which computed it when verity was enabled on the file.
inline void fsverity_digest(const uint8_t* bytes, size_t size, uint8_t out[kFsverityDigestSize]) {
  constexpr size_t kBlock = size_t{1} << kFsverityLogBlockSize;
  constexpr size_t kHash = crypto_hash_sha256_BYTES;
  static_assert(kHash == kFsverityDigestSize, "SHA-256");
  // Hashes of the `n` bytes at `p` split into blocks, the last zero-padded.
  auto hash_blocks = [](const uint8_t* p, size_t n) {
    std::vector<uint8_t> hashes((n + kBlock - 1) / kBlock * kHash);
    for (size_t at = 0, i = 0; at < n; at += kBlock, ++i) {
      uint8_t last[kBlock];
      const uint8_t* block = p + at;
      if (n - at < kBlock) {
        std::memset(last, 0, sizeof last);
        std::memcpy(last, p + at, n - at);
        block = last;
      }
      crypto_hash_sha256(hashes.data() + i * kHash, block, kBlock);
    }
    return hashes;
  };
  uint8_t descriptor[256] = {};
  descriptor[0] = 1;  // version
  descriptor[1] = kFsverityHashSha256;
  descriptor[2] = kFsverityLogBlockSize;
  for (int i = 0; i < 8; ++i) descriptor[8 + i] = static_cast<uint8_t>(static_cast<uint64_t>(size) >> (8 * i));
  if (size > 0) {  // an empty file keeps a root hash of zeros
    std::vector<uint8_t> level = hash_blocks(bytes, size);
    while (level.size() > kHash) level = hash_blocks(level.data(), level.size());
    std::memcpy(descriptor + 16, level.data(), kHash);
  }
  crypto_hash_sha256(out, descriptor, sizeof descriptor);
}

// The detached signature of an fs-verity `digest` with the key pair of `seed`. False if
// libsodium fails. Call sodium_init() first.
inline bool fsverity_signature(const uint8_t digest[kFsverityDigestSize], const uint8_t seed[kSecretSeedSize],
                               FsveritySignature* out) {
  uint8_t sk[crypto_sign_SECRETKEYBYTES];
  std::memset(out, 0, sizeof *out);
  std::memcpy(out->magic, kFsveritySignatureMagic, sizeof out->magic);
  out->hash_algorithm = kFsverityHashSha256;
  out->log_block_size = kFsverityLogBlockSize;
  crypto_sign_seed_keypair(out->public_key, sk, seed);
  uint8_t message[kFsverityMessageSize];
  fsverity_signed_message(out->public_key, digest, message);
  const bool ok = crypto_sign_detached(out->signature, nullptr, message, sizeof message, sk) == 0;
  sodium_memzero(sk, sizeof sk);
  return ok;
}

}  // namespace edge::bundle
#endif
