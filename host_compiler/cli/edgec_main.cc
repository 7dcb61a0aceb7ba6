// edgec — the host compiler's command line.
//   edgec compile MODEL.onnx -o OUT.bundle [--target T] [...]
//   edgec inspect BUNDLE [--json]
//   edgec keygen -o KEYBASE;  edgec sign BUNDLE --key KEYBASE.key [-o OUT] [--fsverity]
//   edgec fsverity-digest FILE...
#include <algorithm>
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "bundle_generated.h"
#include "bundle_header.h"
#if !EDGE_SIGNATURES
#define EDGE_SIGNATURE_LAYOUT_ONLY
#endif
#include "bundle_signature.h"
#include "codegen/ir3_inspect.h"
#include "codegen/target.h"
#include "driver/compile.h"
#include "bundle/bundle_builder.h"
#include "edgert.h"
#include "npy.h"
#include "tool_common.h"

namespace {

const char* kUsage =
    "edgec " EDGEC_VERSION " - ahead-of-time compiler: ONNX model in, edgert bundle out\n"
    "\n"
    "usage:\n"
    "  edgec compile MODEL.onnx -o OUT.bundle [options]\n"
    "  edgec inspect BUNDLE [--json] [--disasm] [--a630-cost]\n"
    "  edgec compile-batch LIST [--target T]   (tests: one JSON line per model of LIST)\n"
    "  edgec keygen -o KEYBASE\n"
    "  edgec sign BUNDLE --key KEYBASE.key [-o OUT] [--fsverity]\n"
    "  edgec fsverity-digest FILE...\n"
    "  edgec --serve [--target T]   (tests: one command line per stdin line, see below)\n"
    "  edgec --help | --version\n"
    "\n"
    "compile options:\n"
    "  -o, --output FILE        bundle to write (written atomically)\n"
    "  --target NAME            code target (default x86_64; see --list-targets)\n"
    "  --list-targets           print the known targets\n"
    "  --input-shape NAME=D0,D1,...  fix the shape of an input with symbolic dims\n"
    "  --const-input NAME=FILE.npy   freeze an input to a value (e.g. a shape or axes\n"
    "                           tensor); it is no longer an input of the bundle\n"
    "  --embed-reference        store sample inputs and the expected outputs in the bundle\n"
    "                           for edgert-run --self-test: inputs seeded random (floats\n"
    "                           uniform in [-1, 1), integers 0..3, bools 0/1), outputs from\n"
    "                           onnxruntime (python3 or $EDGE_PYTHON must import it)\n"
    "  --reference-input NAME=FILE.npy   use this sample for input NAME instead\n"
    "  --reference-output NAME=FILE.npy  expected value of output NAME (no onnxruntime\n"
    "                           needed once every output has one)\n"
    "  --reference-rtol X / --reference-atol X  self-test tolerance: |got - expected| <=\n"
    "                           atol + rtol * |expected| (default 1e-3 / 1e-4; 1e-2 / 2e-2\n"
    "                           when the model has fp16 values or the target computes in half)\n"
    "  --winograd auto|2|4|0    stride-1 3x3 convolutions (float, constant weights, >= 16\n"
    "                           channels in and out) as Winograd F(2x2, 3x3) or F(4x4, 3x3):\n"
    "                           auto picks per conv (default on CPU targets), 2 or 4 forces\n"
    "                           that tile, 0 keeps direct sums (default on OpenCL targets)\n"
    "  --padded-grouped-convs 1|0  1: a padded stride-1 grouped conv (float, 1 < groups <\n"
    "                           channels), dense 1 x k / k x 1 conv (k >= 3) or dense\n"
    "                           strided conv reads a zero-bordered copy of its input made by a\n"
    "                           kernel of its own and runs without bounds tests; so does a\n"
    "                           float conv of channels-first data (a Conv1d; a dense, 5x5+\n"
    "                           depthwise or strided grouped conv of the model's NCHW input),\n"
    "                           its copy channels-last (default on CPU targets); 0: border\n"
    "                           tiles test the padding\n"
    "  --precision fp32|bf16    bf16: convolutions and matrix products with constant weights\n"
    "                           take bfloat16 operands (weights stored as bf16, activations\n"
    "                           rounded to bf16), products summed in float32 with AVX512_BF16\n"
    "                           dot products: about 2x the multiply-adds per cycle, relative\n"
    "                           error ~1e-2; target x86_64-avx512 only, the bundle then needs\n"
    "                           a CPU with avx512bf16 (default fp32)\n"
    "  --one-part-below WORK    CPU targets but Hexagon: a kernel launch with less work\n"
    "                           (ALU operations + elements read and written) runs whole on\n"
    "                           one thread, not split (default 131072; 0 splits every launch)\n"
    "  -O0 / -O1 / -O2 / -O3    LLVM optimization level (default -O3)\n"
    "  --dump-kernels FILE      write the kernel IR (loop nests, index math)\n"
    "  --dump-llvm-ir FILE      write the optimized LLVM IR (CPU targets)\n"
    "  --dump-source FILE       write the generated OpenCL C program (OpenCL targets)\n"
    "  --sign KEYBASE.key       sign the bundle (as edgec sign does)\n"
    "  --tune                   time register tiles of every conv / matrix product shape on\n"
    "                           this machine (x86_64 targets this CPU runs; one thread) and\n"
    "                           compile with the fastest: one trial compile per round, round\n"
    "                           i giving every shape its i-th candidate (the cost model's N\n"
    "                           best), kept when 3% faster than the model's choice, in the\n"
    "                           rounds and again when the winners are timed together\n"
    "  --tune-candidates N      tiles --tune times per shape (2..64, default 8)\n"
    "  --tune-cache FILE        tile decisions per kernel shape: read before compiling (no\n"
    "                           timing without --tune), written back after --tune\n"
    "                           (atomically; created if missing). A malformed file is an\n"
    "                           error; an entry a kernel cannot take, a warning (the model's\n"
    "                           tile is used). Text: 'edgec-tune-cache 1', then per shape\n"
    "                           KEY TARGET VECTORS UNROLL TUNED_US DEFAULT_US SHAPE\n"
    "                           (KEY: hash of the kernel's loop IR, argument shapes and\n"
    "                           target; '#' lines are comments; other targets' lines kept)\n"
    "  -q, --quiet              no progress output\n"
    "\n"
    "inspect prints kernels, buffers, the arena plan and sections of a bundle;\n"
    "--json prints the same as one JSON object. For adreno630 bundles each kernel shows\n"
    "its a630 footprint (instructions, full / half registers, the waves it allows);\n"
    "--disasm adds each program's disassembly and decode check, --a630-cost the static\n"
    "a630 cost: instruction issues per run (ALU / memory / control) and bytes moved\n"
    "(both load libtinymesa.so; compile-only: nothing has run on an a630).\n"
    "\n"
    "keygen writes a new Ed25519 key pair: KEYBASE.key (secret, mode 0600; never\n"
    "overwritten) and KEYBASE.pub (for edgert-run --trusted-key), each one line of hex.\n"
    "sign appends an Ed25519 signature to a verified bundle (replacing an old one), in\n"
    "place or into OUT, written atomically; edgert refuses it in signed mode once any byte\n"
    "changes. Needs a build with EDGE_SIGNATURES (libsodium).\n"
    "sign --fsverity also writes OUT.fsvsig (112 bytes, atomically): the Ed25519 signature\n"
    "of the signed bundle file's fs-verity digest (SHA-256, 4096-byte blocks, no salt). On a\n"
    "device where `fsverity enable --hash-alg=sha256 --block-size=4096 OUT` was run,\n"
    "edgert-run --trusted-key KEYBASE.pub --fsverity-signature OUT.fsvsig --map-in-place\n"
    "checks that signature against the digest the kernel measured instead of hashing the\n"
    "file. The bundle is not changed by it (the digest covers every byte of the file).\n"
    "fsverity-digest prints each file's fs-verity digest as `fsverity digest\n"
    "--hash-alg=sha256 --block-size=4096` does (sha256:HEX FILE), computed here.\n"
    "\n"
    "edgec --serve reads one command line per line of stdin, arguments separated by\n"
    "tabs (compile<TAB>MODEL.onnx<TAB>-o<TAB>OUT.bundle), runs each as edgec would and\n"
    "ends its output with a line of \\x1e and its exit code on stdout: one process for\n"
    "thousands of small compiles (a process spends ~45 ms loading LLVM). --target T is the\n"
    "target of each compile line that names none.\n";

int fail(const std::string& msg) {
  std::fprintf(stderr, "edgec: error: %s\n", msg.c_str());
  return 1;
}

edgec::Shape parse_dims(const std::string& s) {
  edgec::Shape dims;
  std::stringstream ss(s);
  std::string tok;
  while (std::getline(ss, tok, ',')) dims.push_back(std::stoll(tok));
  return dims;
}

edgec::HostTensor read_npy_tensor(const std::string& flag, const std::string& path) {
  edgert_tools::NpyArray a;
  std::string err;
  if (!edgert_tools::read_npy(path.c_str(), &a, &err)) throw edgec::CompileError(flag + ": " + err);  // err names the file
  edgec::HostTensor t;
  t.dtype = static_cast<edgec::DType>(a.dtype);  // the two enums share their values
  t.shape = a.shape;
  t.bytes.assign(a.data.data(), a.data.data() + edgert_dtype_size(a.dtype) * edgec::numel(a.shape));
  return t;
}

std::string hex(const uint8_t* p, size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) out += {digits[p[i] >> 4], digits[p[i] & 15]};
  return out;
}

// The public key of the bundle's signature trailer, "" when it has none. `bytes` passed the
// runtime's verifier (or its target check only), whose header check allows exactly that.
std::string signer_of(const uint8_t* bytes, size_t size) {
  namespace eb = edge::bundle;
  eb::BundleHeader h;
  std::memcpy(&h, bytes, sizeof h);
  const uint64_t end = h.data_offset + h.data_size;
  if (end == size || !eb::looks_like_trailer(bytes + end, size - end)) return "";
  return hex(bytes + end + sizeof(eb::kSignatureMagic), eb::kPublicKeySize);
}

#if EDGE_SIGNATURES
void init_sodium() {
  if (sodium_init() < 0) throw edgec::CompileError("libsodium failed to initialize");
}

// Writes `text` to a new file `path` (never over an existing one) with `mode`.
void write_new_file(const std::string& path, const std::string& text, mode_t mode) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0)
    throw edgec::CompileError("cannot create " + path + ": " + std::strerror(errno) +
                              (errno == EEXIST ? " (keygen never overwrites a key)" : ""));
  const bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (close(fd) != 0 || !ok) {
    unlink(path.c_str());
    throw edgec::CompileError("cannot write " + path);
  }
}

// The secret seed in `key_path` (edgec keygen's KEYBASE.key); the caller wipes it.
std::vector<uint8_t> read_seed(const std::string& key_path) {
  init_sodium();
  std::vector<uint8_t> seed;
  std::string error;
  if (!edgert_tools::read_hex_key_file(key_path, edge::bundle::kSecretSeedSize, &seed, &error))
    throw edgec::CompileError(error);
  return seed;
}

// The bundle with its signature trailer (an old one replaced) by the key in `key_path`.
std::vector<uint8_t> signed_bundle(std::vector<uint8_t> bytes, const std::string& key_path) {
  namespace eb = edge::bundle;
  std::vector<uint8_t> seed = read_seed(key_path);
  if (!signer_of(bytes.data(), bytes.size()).empty()) bytes.resize(bytes.size() - eb::kSignatureTrailerSize);
  const bool ok = eb::append_signature(&bytes, seed.data());
  sodium_memzero(seed.data(), seed.size());
  if (!ok) throw edgec::CompileError("libsodium failed to sign");
  return bytes;
}

std::string fsverity_digest_text(const uint8_t* bytes, size_t size) {
  uint8_t digest[edge::bundle::kFsverityDigestSize];
  edge::bundle::fsverity_digest(bytes, size, digest);
  return "sha256:" + hex(digest, sizeof digest);
}

// Writes `path` (atomically): the detached signature of the fs-verity digest of `bundle`,
// the bytes of the file as written, by the key in `key_path`. Returns the digest as text.
std::string write_fsverity_signature(const std::vector<uint8_t>& bundle, const std::string& key_path,
                                     const std::string& path) {
  namespace eb = edge::bundle;
  uint8_t digest[eb::kFsverityDigestSize];
  eb::fsverity_digest(bundle.data(), bundle.size(), digest);
  std::vector<uint8_t> seed = read_seed(key_path);
  eb::FsveritySignature sig;
  const bool ok = eb::fsverity_signature(digest, seed.data(), &sig);
  sodium_memzero(seed.data(), seed.size());
  if (!ok) throw edgec::CompileError("libsodium failed to sign");
  const uint8_t* p = reinterpret_cast<const uint8_t*>(&sig);
  edgec::write_file_atomically(path, std::vector<uint8_t>(p, p + sizeof sig));
  return "sha256:" + hex(digest, sizeof digest);
}
#else
[[noreturn]] void no_signatures() {
  throw edgec::CompileError("this edgec was built without signature support (CMake EDGE_SIGNATURES=OFF; needs libsodium)");
}
std::vector<uint8_t> signed_bundle(std::vector<uint8_t>, const std::string&) { no_signatures(); }
std::string fsverity_digest_text(const uint8_t*, size_t) { no_signatures(); }
std::string write_fsverity_signature(const std::vector<uint8_t>&, const std::string&, const std::string&) {
  no_signatures();
}
#endif

int cmd_keygen(const std::vector<std::string>& args) {
  std::string base;
  for (size_t i = 0; i < args.size(); ++i) {
    if ((args[i] == "-o" || args[i] == "--output") && i + 1 < args.size()) base = args[++i];
    else throw edgec::CompileError("keygen: unexpected argument " + args[i] + " (usage: edgec keygen -o KEYBASE)");
  }
  if (base.empty()) throw edgec::CompileError("keygen: no -o KEYBASE given");
#if EDGE_SIGNATURES
  init_sodium();
  uint8_t seed[edge::bundle::kSecretSeedSize], pk[crypto_sign_PUBLICKEYBYTES], sk[crypto_sign_SECRETKEYBYTES];
  randombytes_buf(seed, sizeof seed);
  crypto_sign_seed_keypair(pk, sk, seed);
  sodium_memzero(sk, sizeof sk);
  std::string secret = hex(seed, sizeof seed) + "\n";
  sodium_memzero(seed, sizeof seed);
  write_new_file(base + ".pub", hex(pk, sizeof pk) + "\n", 0644);
  write_new_file(base + ".key", secret, 0600);
  sodium_memzero(secret.data(), secret.size());
  std::printf("wrote %s.key (secret) and %s.pub (public key %s)\n", base.c_str(), base.c_str(),
              hex(pk, sizeof pk).c_str());
  return 0;
#else
  no_signatures();
#endif
}

int cmd_sign(const std::vector<std::string>& args) {
  const std::string usage = "usage: edgec sign BUNDLE --key KEYBASE.key [-o OUT] [--fsverity]";
  std::string path, key, output;
  bool fsverity = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if ((a == "--key" || a == "-o" || a == "--output") && i + 1 < args.size()) (a == "--key" ? key : output) = args[++i];
    else if (a == "--fsverity") fsverity = true;
    else if (!a.empty() && a[0] != '-' && path.empty()) path = a;
    else throw edgec::CompileError("sign: unexpected argument " + a + " (" + usage + ")");
  }
  if (path.empty() || key.empty()) throw edgec::CompileError("sign: " + usage);
  if (output.empty()) output = path;
  edgert_tools::AlignedBuffer file;
  std::string error;
  if (!edgert_tools::read_regular_file(path.c_str(), 4096, &file, &error)) throw edgec::CompileError(error);
  // Only what the runtime accepts gets signed (a bundle for another machine is accepted as
  // inspect accepts it: its target is not this one's business).
  edgert_bundle* verified = nullptr;
  const edgert_status status = edgert_bundle_open_memory(file.data(), file.size(), &verified);
  edgert_bundle_close(verified);
  if (status != EDGERT_OK && status != EDGERT_ERROR_UNSUPPORTED) throw edgec::CompileError(path + ": " + edgert_last_error());
  // UNSUPPORTED for the format version comes before the layout checks signer_of relies on.
  edge::bundle::BundleHeader h;
  std::memcpy(&h, file.data(), sizeof h);  // status OK or UNSUPPORTED: the header is there
  if (h.format_version != edge::bundle::kFormatVersion) throw edgec::CompileError(path + ": " + edgert_last_error());
  std::vector<uint8_t> bytes(file.data(), file.data() + file.size());
  bytes = signed_bundle(std::move(bytes), key);
  edgec::write_file_atomically(output, bytes);
  std::printf("signed %s -> %s (key %s)\n", path.c_str(), output.c_str(), signer_of(bytes.data(), bytes.size()).c_str());
  if (fsverity) {
    // Over the file as written, trailer included: the kernel measures the whole file.
    const std::string sig_path = output + ".fsvsig";
    const std::string digest = write_fsverity_signature(bytes, key, sig_path);
    std::printf("fs-verity digest %s signed -> %s\n", digest.c_str(), sig_path.c_str());
  }
  return 0;
}

int cmd_fsverity_digest(const std::vector<std::string>& args) {
  if (args.empty()) throw edgec::CompileError("fsverity-digest: usage: edgec fsverity-digest FILE...");
#if EDGE_SIGNATURES
  init_sodium();
#endif
  for (const std::string& path : args) {
    edgert_tools::AlignedBuffer file;
    std::string error;
    if (!edgert_tools::read_regular_file(path.c_str(), 8, &file, &error)) throw edgec::CompileError(error);
    std::printf("%s %s\n", fsverity_digest_text(file.data(), file.size()).c_str(), path.c_str());
  }
  return 0;
}

int cmd_compile(const std::vector<std::string>& args) {
  edgec::CompileOptions opt;
  std::string model, output, sign_key;
  bool quiet = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) throw edgec::CompileError("option " + a + " needs a value");
      return args[++i];
    };
    if (a == "-o" || a == "--output") output = value();
    else if (a == "--target") opt.target = value();
    else if (a == "--input-shape") {
      std::string v = value();
      auto eq = v.find('=');
      if (eq == std::string::npos) throw edgec::CompileError("--input-shape wants NAME=D0,D1,...");
      opt.input_shapes[v.substr(0, eq)] = parse_dims(v.substr(eq + 1));
    } else if (a.size() == 3 && a[0] == '-' && a[1] == 'O' && a[2] >= '0' && a[2] <= '3') opt.opt_level = a[2] - '0';
    else if (a == "--const-input" || a == "--reference-input" || a == "--reference-output") {
      std::string v = value();
      auto eq = v.find('=');
      if (eq == std::string::npos) throw edgec::CompileError(a + " wants NAME=FILE.npy");
      auto& values = a == "--const-input"       ? opt.constant_inputs
                     : a == "--reference-input" ? opt.reference.inputs
                                                : opt.reference.outputs;
      values[v.substr(0, eq)] = read_npy_tensor(a, v.substr(eq + 1));
    } else if (a == "--embed-reference") opt.reference.embed = true;
    else if (a == "--reference-rtol" || a == "--reference-atol") {
      std::string v = value();
      char* end = nullptr;
      double x = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || !(x >= 0 && x <= 1e30))
        throw edgec::CompileError(a + " wants a non-negative number, not '" + v + "'");
      (a == "--reference-rtol" ? opt.reference.rtol : opt.reference.atol) = x;
    } else if (a == "--winograd") {
      std::string v = value();
      using edgec::Winograd;
      if (v == "auto") opt.winograd = Winograd::Auto;
      else if (v == "0") opt.winograd = Winograd::Off;
      else if (v == "2") opt.winograd = Winograd::Tile2;
      else if (v == "4") opt.winograd = Winograd::Tile4;
      else throw edgec::CompileError("--winograd wants auto, 2, 4 or 0, not '" + v + "'");
    } else if (a == "--padded-grouped-convs") {
      std::string v = value();
      if (v != "0" && v != "1") throw edgec::CompileError("--padded-grouped-convs wants 1 or 0, not '" + v + "'");
      opt.padded_grouped_convs = v == "1";
    } else if (a == "--one-part-below") {
      std::string v = value();
      if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos || v.size() > 18)
        throw edgec::CompileError("--one-part-below wants a count of operations, not '" + v + "'");
      opt.one_part_below_work = std::stoll(v);
    } else if (a == "--precision") {
      std::string v = value();
      if (v == "fp32") opt.precision = edgec::DType::F32;
      else if (v == "bf16") opt.precision = edgec::DType::BF16;
      else throw edgec::CompileError("--precision wants fp32 or bf16, not '" + v + "'");
    } else if (a == "--dump-kernels") opt.dump_kernels = value();
    else if (a == "--dump-llvm-ir") opt.dump_llvm_ir = value();
    else if (a == "--dump-source") opt.dump_source = value();
    else if (a == "--sign") sign_key = value();
    else if (a == "--tune") opt.tune = true;
    else if (a == "--tune-cache") opt.tune_cache = value();
    else if (a == "--tune-candidates") {
      std::string v = value();
      char* end = nullptr;
      long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || n < 2 || n > 64)
        throw edgec::CompileError("--tune-candidates wants an integer in 2..64, not '" + v + "'");
      opt.tune_candidates = static_cast<size_t>(n);
    }
    else if (a == "-q" || a == "--quiet") quiet = true;
    else if (!a.empty() && a[0] == '-') throw edgec::CompileError("unknown option " + a + " (see edgec --help)");
    else if (model.empty()) model = a;
    else throw edgec::CompileError("unexpected argument " + a);
  }
  if (model.empty()) throw edgec::CompileError("compile: no model given (see edgec --help)");
  if (output.empty()) throw edgec::CompileError("compile: no output given (-o OUT.bundle)");
  if (!opt.reference.embed && (!opt.reference.inputs.empty() || !opt.reference.outputs.empty() ||
                               opt.reference.rtol >= 0 || opt.reference.atol >= 0))
    throw edgec::CompileError("--reference-input/-output/-rtol/-atol need --embed-reference");
  if (!quiet) opt.progress = [](const std::string& line) { std::fprintf(stderr, "edgec: %s\n", line.c_str()); };
  opt.warn = [](const std::string& line) { std::fprintf(stderr, "edgec: warning: %s\n", line.c_str()); };
  edgec::CompileResult r = edgec::compile_onnx_file(model, opt);
  if (!sign_key.empty()) r.bundle = signed_bundle(std::move(r.bundle), sign_key);
  edgec::write_file_atomically(output, r.bundle);
  std::printf("compiled %s -> %s (target %s)\n", model.c_str(), output.c_str(), opt.target.c_str());
  std::printf("  kernels: %zu\n", r.num_kernels);
  std::printf("  weights: %zu tensors, %llu bytes\n", r.num_weights, static_cast<unsigned long long>(r.weight_bytes));
  std::printf("  code:    %llu bytes\n", static_cast<unsigned long long>(r.code_bytes));
  std::printf("  arena: %llu bytes (lower bound %llu bytes)\n", static_cast<unsigned long long>(r.arena_size),
              static_cast<unsigned long long>(r.arena_lower_bound));
  std::printf("  bundle:  %zu bytes\n", r.bundle.size());
  return 0;
}

std::string json_text(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  return out + "\"";
}

// edgec compile-batch LIST --target T: compiles many models in one process (the target's
// code generator loaded once: adreno630's libtinymesa.so takes a while), writes no bundle
// and prints one JSON line per model: the error's first line, or the kernel count and, for
// adreno630, what the decode check found (decode errors, programs not ending with `end`)
// and the runtime verifier's verdict on the bundle (a630 limits). LIST: one model a line,
// `MODEL.onnx [NAME=FILE.npy ...]` (inputs frozen as with --const-input). A "begin" line
// precedes each compile, so a caller can tell which model took a crashed process down.
int cmd_compile_batch(const std::vector<std::string>& args) {
  std::string list, target = "x86_64";
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--target" && i + 1 < args.size()) target = args[++i];
    else if (list.empty() && !args[i].empty() && args[i][0] != '-') list = args[i];
    else throw edgec::CompileError("compile-batch: unexpected argument " + args[i]);
  }
  std::ifstream in(list);
  if (!in) throw edgec::CompileError("compile-batch: cannot read " + list);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string model, w;
    words >> model;
    if (model.empty() || model[0] == '#') continue;
    std::printf("{\"begin\":%s}\n", json_text(model).c_str());
    std::fflush(stdout);
    std::string result;
    try {
      edgec::CompileOptions opt;
      opt.target = target;
      while (words >> w) {
        const auto eq = w.find('=');
        if (eq == std::string::npos) throw edgec::CompileError("compile-batch: " + w + " is not NAME=FILE.npy");
        opt.constant_inputs[w.substr(0, eq)] = read_npy_tensor("--const-input", w.substr(eq + 1));
      }
      edgec::CompileResult r = edgec::compile_onnx_file(model, opt);
      result = "\"ok\":true,\"kernels\":" + std::to_string(r.num_kernels);
      // The runtime's verifier: UNSUPPORTED (no port here) is expected, anything else is not.
      edgert_bundle* verified = nullptr;
      // Sections are page-aligned in the file: the verifier wants them so in memory too.
      const size_t padded = (r.bundle.size() + 4095) / 4096 * 4096;
      std::unique_ptr<uint8_t, decltype(&std::free)> aligned(static_cast<uint8_t*>(std::aligned_alloc(4096, padded)),
                                                             &std::free);
      if (!aligned) throw edgec::CompileError("out of memory");
      std::memcpy(aligned.get(), r.bundle.data(), r.bundle.size());
      const edgert_status st = edgert_bundle_open_memory(aligned.get(), r.bundle.size(), &verified);
      if (st == EDGERT_OK) edgert_bundle_close(verified);
      result += ",\"verifier\":" + json_text(st == EDGERT_OK ? "ok" : edgert_last_error()) +
                ",\"verified\":" + (st == EDGERT_OK || st == EDGERT_ERROR_UNSUPPORTED ? "true" : "false");
      namespace eb = edge::bundle;
      eb::BundleHeader h;
      std::memcpy(&h, r.bundle.data(), sizeof h);
      const eb::Bundle* b = eb::GetBundle(r.bundle.data() + h.fb_offset);
      if (target == "adreno630") {
        unsigned errors = 0, unterminated = 0, max_full = 0, max_half = 0, max_const = 0;
        for (const edgec::A630KernelReport& k : edgec::a630_reports(b, r.bundle.data() + h.data_offset, h.data_size, true)) {
          if (!k.program) continue;
          errors += k.decode_errors;
          unterminated += !k.ends_with_end;
          max_full = std::max(max_full, k.program->full_regs());
          max_half = std::max(max_half, k.program->half_regs());
          max_const = std::max(max_const, k.program->constlen());
        }
        result += ",\"decode_errors\":" + std::to_string(errors) + ",\"unterminated\":" + std::to_string(unterminated) +
                  ",\"max_full_regs\":" + std::to_string(max_full) + ",\"max_half_regs\":" + std::to_string(max_half) +
                  ",\"max_constlen\":" + std::to_string(max_const);
      }
    } catch (const std::exception& e) {
      std::string first = e.what();
      first = first.substr(0, first.find('\n'));
      result = "\"ok\":false,\"error\":" + json_text(first);
    }
    std::printf("{\"model\":%s,%s}\n", json_text(model).c_str(), result.c_str());
    std::fflush(stdout);
  }
  return 0;
}

std::string json_str(const flatbuffers::String* s) {
  std::string out = "\"";
  if (s)
    for (char c : s->str()) {
      if (c == '"' || c == '\\') out += '\\';
      if (static_cast<unsigned char>(c) < 0x20) continue;
      out += c;
    }
  return out + "\"";
}
std::string json_strings(const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>* v) {
  std::string out = "[";
  for (unsigned i = 0; v && i < v->size(); ++i) out += (i ? "," : "") + json_str(v->Get(i));
  return out + "]";
}
template <typename V>
std::string json_list(const V* v) {
  std::string out = "[";
  if (v)
    for (unsigned i = 0; i < v->size(); ++i) out += (i ? "," : "") + std::to_string(v->Get(i));
  return out + "]";
}

// A MachineCode kernel's entry offset, from its section's function table; 0 where the table
// lacks it (inspect also shows bundles that the runtime here could not verify).
uint64_t kernel_entry(const edge::bundle::Bundle* b, const edge::bundle::Kernel* k) {
  if (!b->sections() || k->section() >= b->sections()->size()) return 0;
  const auto* fns = b->sections()->Get(k->section())->functions();
  return fns && k->function() < fns->size() ? fns->Get(k->function())->offset() : 0;
}

int cmd_inspect(const std::vector<std::string>& args) {
  std::string path;
  bool json = false, disasm = false, a630_cost = false;
  for (const std::string& a : args) {
    if (a == "--json") json = true;
    else if (a == "--disasm") disasm = true;
    else if (a == "--a630-cost") a630_cost = true;
    else if (!a.empty() && a[0] == '-') throw edgec::CompileError("unknown option " + a);
    else path = a;
  }
  if (path.empty()) throw edgec::CompileError("inspect: no bundle given");
  // Page-aligned like the runtime's mapping (code sections are page-aligned); only a regular
  // file (a FIFO would block).
  edgert_tools::AlignedBuffer file;
  std::string error;
  if (!edgert_tools::read_regular_file(path.c_str(), 4096, &file, &error)) throw edgec::CompileError(error);
  const uint8_t* const bytes = file.data();
  const size_t size = file.size();
  namespace eb = edge::bundle;
  // The runtime's own verifier: header, content hash, FlatBuffer, every offset and index.
  // It refuses a bundle for another machine or port (UNSUPPORTED) before checking sections,
  // buffers and commands; inspect still shows such a bundle, from the checks below.
  edgert_bundle* verified = nullptr;
  const edgert_status status = edgert_bundle_open_memory(bytes, size, &verified);
  if (status == EDGERT_OK) edgert_bundle_close(verified);
  else if (status != EDGERT_ERROR_UNSUPPORTED) throw edgec::CompileError(path + ": " + edgert_last_error());
  const std::string not_runnable = status == EDGERT_OK ? "" : edgert_last_error();
  // What inspect itself reads, checked here whatever the runtime's verifier does.
  eb::BundleHeader h;
  if (size < sizeof h) throw edgec::CompileError(path + ": too small for a bundle header");
  std::memcpy(&h, bytes, sizeof h);
  if (std::memcmp(h.magic, eb::kMagic, 8) != 0) throw edgec::CompileError(path + ": not a bundle (bad magic)");
  if (h.format_version != eb::kFormatVersion) throw edgec::CompileError(path + ": " + not_runnable);
  // Subtractions, not sums: offset + size can wrap around.
  if (h.fb_offset > size || h.fb_size > size - h.fb_offset || h.data_offset > size ||
      h.data_size > size - h.data_offset || h.fb_size >= FLATBUFFERS_MAX_BUFFER_SIZE)
    throw edgec::CompileError(path + ": truncated bundle (header ranges exceed the " + std::to_string(size) +
                              "-byte file)");
  flatbuffers::Verifier::Options verifier_options;
  verifier_options.max_tables = 1u << 26;  // as the runtime: large models have many tables
  flatbuffers::Verifier verifier(bytes + h.fb_offset, h.fb_size, verifier_options);
  if (!eb::VerifyBundleBuffer(verifier)) throw edgec::CompileError(path + ": FlatBuffer fails verification");
  const eb::Bundle* b = eb::GetBundle(bytes + h.fb_offset);
  if (!b->target()) throw edgec::CompileError(path + ": the bundle has no target table");
  if (!not_runnable.empty())
    std::fprintf(stderr, "edgec: note: %s (the runtime here cannot run this bundle; inspecting it anyway)\n",
                 not_runnable.c_str());
  auto n = [](auto* v) { return v ? v->size() : 0u; };
  bool any_a630 = false;
  for (unsigned i = 0; i < n(b->sections()); ++i) any_a630 = any_a630 || b->sections()->Get(i)->format() == eb::CodeFormat::Ir3A630;
  if ((disasm || a630_cost) && !any_a630)
    throw edgec::CompileError(path + ": --disasm / --a630-cost need an adreno630 bundle (an Ir3A630 code section)");
  const std::vector<edgec::A630KernelReport> a630 =
      edgec::a630_reports(b, bytes + h.data_offset, h.data_size, disasm || a630_cost);

  if (json) {
    std::ostringstream o;
    o << "{\"format_version\":" << b->format_version() << ",\"producer\":" << json_str(b->producer())
      << ",\"source_model\":" << json_str(b->source_model()) << ",\"target\":{\"arch\":\""
      << eb::EnumNameArch(b->target()->arch()) << "\",\"cpu\":" << json_str(b->target()->cpu())
      << ",\"port\":" << json_str(b->target()->port()) << ",\"features\":" << json_strings(b->target()->features()) << "}"
      << ",\"arena_size\":" << b->arena_size() << ",\"arena_lower_bound\":" << b->arena_lower_bound()
      << ",\"arena_alignment\":" << b->arena_alignment() << ",\"content_hash\":\"" << std::hex << h.content_hash
      << std::dec << "\"";
    const std::string signer = signer_of(bytes, size);
    o << ",\"signed_by\":" << (signer.empty() ? "null" : "\"" + signer + "\"");
    if (auto* p = b->prepared())
      o << ",\"prepared\":{\"platform\":" << json_str(p->platform()) << ",\"device\":" << json_str(p->device())
        << ",\"driver\":" << json_str(p->driver()) << "}";
    o << ",\"sections\":[";
    for (unsigned i = 0; i < n(b->sections()); ++i) {
      auto* s = b->sections()->Get(i);
      o << (i ? "," : "") << "{\"kind\":\"" << eb::EnumNameSectionKind(s->kind()) << "\",\"format\":\""
        << eb::EnumNameCodeFormat(s->format()) << "\",\"offset\":" << s->offset() << ",\"size\":" << s->size() << "}";
    }
    o << "],\"buffers\":[";
    for (unsigned i = 0; i < n(b->buffers()); ++i) {
      auto* x = b->buffers()->Get(i);
      o << (i ? "," : "") << "{\"name\":" << json_str(x->name()) << ",\"kind\":\"" << eb::EnumNameBufferKind(x->kind())
        << "\",\"dtype\":\"" << eb::EnumNameDType(x->dtype()) << "\",\"shape\":" << json_list(x->shape())
        << ",\"size\":" << x->size() << ",\"offset\":" << x->offset() << ",\"section\":" << x->section()
        << ",\"memory\":\""
        << eb::EnumNameMemorySpace(x->memory()) << "\"";
      if (x->memory() == eb::MemorySpace::Image2D)
        o << ",\"image_width\":" << x->image_width() << ",\"image_height\":" << x->image_height();
      o << "}";
    }
    o << "],\"kernels\":[";
    for (unsigned i = 0; i < n(b->kernels()); ++i) {
      auto* k = b->kernels()->Get(i);
      o << (i ? "," : "") << "{\"name\":" << json_str(k->name()) << ",\"function\":" << k->function()
        << ",\"entry\":" << kernel_entry(b, k) << ",\"entry_name\":" << json_str(k->entry_name())
        << ",\"global_size\":" << json_list(k->global_size()) << ",\"local_size\":" << json_list(k->local_size())
        << ",\"args\":[";
      for (unsigned a = 0; a < n(k->args()); ++a) {
        auto* c = k->args()->Get(a);
        o << (a ? "," : "") << "{\"access\":\"" << eb::EnumNameArgAccess(c->access()) << "\",\"dtype\":\""
          << eb::EnumNameDType(c->dtype()) << "\",\"extent\":" << c->extent() << "}";
      }
      o << "],\"parallel_extent\":" << k->parallel_extent() << ",\"flops\":" << k->flops()
        << ",\"bytes\":" << k->bytes();
      if (const eb::A630Program* p = a630[i].program) {
        o << ",\"a630\":{\"code_offset\":" << p->code_offset() << ",\"code_size\":" << p->code_size()
          << ",\"instructions\":" << p->instructions() << ",\"nops\":" << p->nops() << ",\"full_regs\":"
          << p->full_regs() << ",\"half_regs\":" << p->half_regs() << ",\"max_waves\":" << p->max_waves()
          << ",\"constlen\":" << p->constlen() << ",\"branchstack\":" << p->branchstack()
          << ",\"private_bytes\":" << p->private_bytes() << ",\"shared_bytes\":" << p->shared_bytes()
          << ",\"threadsize\":" << p->threadsize() << ",\"loop_trips\":" << json_list(p->loop_trips())
          << ",\"immediates_dword\":" << p->immediates_dword() << ",\"immediates\":" << json_list(p->immediates());
        if (disasm || a630_cost) {
          const edgec::A630Cost& c = a630[i].per_item;
          o << ",\"decoded\":" << a630[i].decoded << ",\"decode_errors\":" << a630[i].decode_errors
            << ",\"ends_with_end\":" << (a630[i].ends_with_end ? "true" : "false") << ",\"work_items\":"
            << a630[i].work_items << ",\"per_item\":{\"alu\":" << c.alu << ",\"global\":" << c.global
            << ",\"image\":" << c.image << ",\"shared\":" << c.shared << ",\"private\":" << c.private_mem
            << ",\"control\":" << c.control << ",\"nop\":" << c.nop << ",\"issues\":" << c.issues()
            << ",\"bytes\":" << c.bytes << "}";
        }
        if (disasm) {
          std::string text;
          for (char ch : a630[i].disassembly) {
            if (ch == '"' || ch == '\\') text += '\\';
            if (ch == '\n') { text += "\\n"; continue; }
            if (static_cast<unsigned char>(ch) < 0x20) continue;
            text += ch;
          }
          o << ",\"disasm\":\"" << text << "\"";
        }
        o << "}";
      }
      o << "}";
    }
    o << "],\"commands\":[";
    for (unsigned i = 0; i < n(b->commands()); ++i) {
      auto* c = b->commands()->Get(i);
      o << (i ? "," : "") << "{\"kind\":\"" << eb::EnumNameCommandKind(c->kind()) << "\",\"kernel\":" << c->kernel()
        << ",\"args\":" << json_list(c->args()) << "}";
    }
    o << "],\"inputs\":[";
    for (unsigned i = 0; i < n(b->inputs()); ++i) {
      auto* t = b->inputs()->Get(i);
      o << (i ? "," : "") << "{\"name\":" << json_str(t->name()) << ",\"dtype\":\"" << eb::EnumNameDType(t->dtype())
        << "\",\"shape\":" << json_list(t->shape()) << "}";
    }
    o << "],\"outputs\":[";
    for (unsigned i = 0; i < n(b->outputs()); ++i) {
      auto* t = b->outputs()->Get(i);
      o << (i ? "," : "") << "{\"name\":" << json_str(t->name()) << ",\"dtype\":\"" << eb::EnumNameDType(t->dtype())
        << "\",\"shape\":" << json_list(t->shape()) << "}";
    }
    o << "]";
    if (n(b->reference_inputs()) + n(b->reference_outputs()))
      o << ",\"reference\":{\"inputs\":" << json_list(b->reference_inputs())
        << ",\"outputs\":" << json_list(b->reference_outputs()) << ",\"rtol\":" << b->reference_rtol()
        << ",\"atol\":" << b->reference_atol() << "}";
    o << "}";
    std::printf("%s\n", o.str().c_str());
    return 0;
  }
  auto str = [](const flatbuffers::String* s) { return s ? s->str() : std::string(); };
  auto shape = [](const flatbuffers::Vector<int64_t>* v) {
    std::string s = "(";
    for (unsigned i = 0; v && i < v->size(); ++i) s += (i ? "," : "") + std::to_string(v->Get(i));
    return s + ")";
  };
  std::printf("bundle %s: format %u, produced by %s from %s, %zu bytes\n", path.c_str(), b->format_version(),
              str(b->producer()).c_str(), str(b->source_model()).c_str(), size);
  std::string features;
  for (unsigned i = 0; i < n(b->target()->features()); ++i)
    features += (i ? "," : "") + str(b->target()->features()->Get(i));
  std::printf("target: %s cpu=%s port=%s features=%s\n", eb::EnumNameArch(b->target()->arch()),
              str(b->target()->cpu()).c_str(), str(b->target()->port()).c_str(), features.c_str());
  const std::string signer = signer_of(bytes, size);
  std::printf("signature: %s\n", signer.empty() ? "none" : ("Ed25519 by key " + signer + " (edgert --trusted-key checks it)").c_str());
  if (auto* p = b->prepared())
    std::printf("prepared for: %s / %s / driver %s\n", str(p->platform()).c_str(), str(p->device()).c_str(),
                str(p->driver()).c_str());
  std::printf("arena: %llu bytes (lower bound %llu), alignment %u\n", (unsigned long long)b->arena_size(),
              (unsigned long long)b->arena_lower_bound(), b->arena_alignment());
  std::printf("sections:\n");
  for (unsigned i = 0; i < n(b->sections()); ++i) {
    auto* s = b->sections()->Get(i);
    std::printf("  #%u %-8s %-12s offset %10llu size %10llu\n", i, eb::EnumNameSectionKind(s->kind()),
                eb::EnumNameCodeFormat(s->format()), (unsigned long long)s->offset(), (unsigned long long)s->size());
  }
  std::printf("inputs:\n");
  for (unsigned i = 0; i < n(b->inputs()); ++i) {
    auto* t = b->inputs()->Get(i);
    std::printf("  %s %s%s\n", str(t->name()).c_str(), eb::EnumNameDType(t->dtype()), shape(t->shape()).c_str());
  }
  std::printf("outputs:\n");
  for (unsigned i = 0; i < n(b->outputs()); ++i) {
    auto* t = b->outputs()->Get(i);
    std::printf("  %s %s%s\n", str(t->name()).c_str(), eb::EnumNameDType(t->dtype()), shape(t->shape()).c_str());
  }
  if (n(b->reference_inputs()) + n(b->reference_outputs()))
    std::printf("reference data: %u inputs, %u expected outputs (rtol %g, atol %g; edgert-run --self-test)\n",
                n(b->reference_inputs()), n(b->reference_outputs()), b->reference_rtol(), b->reference_atol());
  std::printf("buffers:\n");
  for (unsigned i = 0; i < n(b->buffers()); ++i) {
    auto* x = b->buffers()->Get(i);
    std::string image = x->memory() == eb::MemorySpace::Image2D
                            ? " image " + std::to_string(x->image_width()) + "x" + std::to_string(x->image_height())
                            : "";
    std::printf("  #%-4u %-6s %-4s %-20s %10llu bytes @ %llu%s  %s\n", i, eb::EnumNameBufferKind(x->kind()),
                eb::EnumNameDType(x->dtype()), shape(x->shape()).c_str(), (unsigned long long)x->size(),
                (unsigned long long)x->offset(), image.c_str(), str(x->name()).c_str());
  }
  std::printf("kernels:\n");
  for (unsigned i = 0; i < n(b->kernels()); ++i) {
    auto* k = b->kernels()->Get(i);
    auto dims = [](const flatbuffers::Vector<uint64_t>* v) {
      std::string s;
      for (unsigned d = 0; v && d < v->size(); ++d) s += (d ? "x" : "") + std::to_string(v->Get(d));
      return s.empty() ? std::string("-") : s;
    };
    std::string launch = n(k->global_size()) ? "global " + dims(k->global_size()) + " local " + dims(k->local_size())
                                             : "parallel " + std::to_string(k->parallel_extent());
    std::printf("  #%-4u %-40s entry %8llu args %u %s flops %llu\n", i, str(k->name()).c_str(),
                (unsigned long long)kernel_entry(b, k), n(k->args()), launch.c_str(), (unsigned long long)k->flops());
    if (a630[i].program) std::printf("        %s\n", edgec::a630_summary(a630[i]).c_str());
    if (disasm && a630[i].program) std::printf("%s\n", a630[i].disassembly.c_str());
  }
  std::printf("commands: %u\n", n(b->commands()));
  if (a630_cost) std::printf("%s", edgec::a630_cost_table(a630).c_str());
  return 0;
}

}  // namespace

namespace {

int edgec_main(int argc, char** argv);

// edgec --serve [--target T] (see the usage text): T for each compile line naming none.
int serve(const std::vector<std::string>& args) {
  std::string target;
  if (args.size() == 3 && args[1] == "--target") target = args[2];
  else if (args.size() != 1) return fail("--serve takes only --target T");
  return edgert_tools::serve_command_lines("edgec", [&](std::vector<std::string>& words) {
    const bool names_target = std::any_of(words.begin(), words.end(), [](const std::string& w) {
      return w == "--target" || w.rfind("--target=", 0) == 0;
    });
    if (words.size() > 1 && words[1] == "compile" && !target.empty() && !names_target)
      words.insert(words.end(), {"--target", target});
    std::vector<char*> argv;
    for (std::string& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    return edgec_main(static_cast<int>(words.size()), argv.data());
  });
}

int edgec_main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "--serve") return serve(args);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::fputs(kUsage, args.empty() ? stderr : stdout);
    return args.empty() ? 1 : 0;
  }
  if (args[0] == "--version") {
    std::printf("edgec %s\n", EDGEC_VERSION);
    return 0;
  }
  // Also as a compile option, where its help lists it.
  if (args[0] == "--list-targets" || (args.size() > 1 && args[0] == "compile" &&
                                      std::find(args.begin(), args.end(), "--list-targets") != args.end())) {
    for (const std::string& name : edgec::known_targets())
      std::printf("%-18s %s\n", name.c_str(), edgec::target_summary(edgec::target_by_name(name)).c_str());
    return 0;
  }
  std::string cmd = args[0];
  args.erase(args.begin());
  for (const std::string& a : args)
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
  try {
    if (cmd == "compile") return cmd_compile(args);
    if (cmd == "inspect") return cmd_inspect(args);
    if (cmd == "compile-batch") return cmd_compile_batch(args);
    if (cmd == "keygen") return cmd_keygen(args);
    if (cmd == "sign") return cmd_sign(args);
    if (cmd == "fsverity-digest") return cmd_fsverity_digest(args);
    return fail("unknown command '" + cmd + "' (see edgec --help)");
  } catch (const edgec::CompileError& e) {
    return fail(e.what());
  } catch (const std::exception& e) {
    return fail(std::string("internal error: ") + e.what());
  }
}

// The compiler's graph passes recurse along chains of ops; a 1 GiB stack (reserved, touched
// only as deep as a model goes) carries them through the deepest graph the importer
// accepts (kMaxGraphDepth), where the 8 MB main thread overflowed at a few thousand ops.
struct MainArgs {
  int argc;
  char** argv;
  int rc;
};

void* run_main(void* p) {
  auto* a = static_cast<MainArgs*>(p);
  a->rc = edgec_main(a->argc, a->argv);
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  MainArgs a{argc, argv, 1};
  pthread_attr_t attr;
  pthread_t thread;
  if (pthread_attr_init(&attr) == 0 && pthread_attr_setstacksize(&attr, size_t{1} << 30) == 0 &&
      pthread_create(&thread, &attr, run_main, &a) == 0) {
    pthread_join(thread, nullptr);
    return a.rc;
  }
  return edgec_main(argc, argv);  // no big stack to be had: run on this one
}
