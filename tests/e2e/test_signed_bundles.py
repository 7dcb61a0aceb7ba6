#!/usr/bin/env python3
"""Signed bundles and bundles whose file changes while they run.

- edgec keygen writes KEYBASE.key (mode 0600, never overwritten) and KEYBASE.pub; edgec sign
  and edgec compile --sign give the same bytes; edgec inspect names the signer
- edgert-run --trusted-key runs a bundle signed by a trusted key and matches onnxruntime; it
  refuses (exit code 1, never a signal, a message saying why) an unsigned bundle, one signed
  by another key, one changed by a byte after signing (header, FlatBuffer, data blob,
  signature) and a truncated signature (also refused without --trusted-key)
- the default open reads the bundle into private memory: writing bytes into the file and
  copying another file over it while `edgert-run --repeat` runs changes no output
- fs-verity: `edgec fsverity-digest` gives the digest Debian's `fsverity digest` prints (files
  of 0 to 64 MiB + 1 bytes, 1 to 3 tree levels, and real bundles); `edgec sign --fsverity`
  leaves the bundle as `sign` writes it and writes BUNDLE.fsvsig, whose signature the runtime
  accepts over the digest `fsverity digest` prints (through tests/tools/fsverity_open.cc,
  which stands in for the kernel) and refuses over any other; on this machine (no fs-verity)
  `edgert-run --fsverity-signature` is refused with exit 1 and "the file has no fs-verity"
In a build without signatures (EDGE_SIGNATURES=0 from ctest) only the last and the refusal of
keygen / --trusted-key ("built without") run: there is nothing else to test."""
import os
import re
import shutil
import stat
import struct
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import numpy as np  # noqa: E402
import edge_testlib as lib  # noqa: E402

suite = lib.Suite("test_signed_bundles")
WORK = None
MODEL = None
INPUTS = None
TRAILER = 104  # magic 8 + public key 32 + signature 64 (schema/bundle_signature.h)
SIGNATURES = os.environ.get("EDGE_SIGNATURES", "1") != "0"
signed_case = suite.case if SIGNATURES else (lambda fn: fn)


def setup():
    global MODEL, INPUTS
    MODEL = lib.make_cnn(seed=11, variant="basic", size=32)
    INPUTS = {"image": np.random.default_rng(11).standard_normal((1, 3, 32, 32)).astype(np.float32)}
    lib.save_model(MODEL, WORK / "model.onnx")
    edgec = lib.find_tool("edgec")
    lib.compile_model(WORK / "model.onnx", WORK / "unsigned.bundle")
    if not SIGNATURES:
        return
    for name in ("alice", "bob"):
        lib.run_cmd([edgec, "keygen", "-o", WORK / name])
    lib.run_cmd([edgec, "sign", WORK / "unsigned.bundle", "--key", WORK / "alice.key", "-o", WORK / "alice.bundle"])
    lib.run_cmd([edgec, "sign", WORK / "unsigned.bundle", "--key", WORK / "bob.key", "-o", WORK / "bob.bundle"])


def header(path):
    """(data_offset, data_size) from the 64-byte header (schema/bundle_header.h)."""
    raw = Path(path).read_bytes()[:64]
    _fb_off, _fb_size, data_offset, data_size = struct.unpack_from("<4Q", raw, 16)
    return data_offset, data_size


def refused(bundle, *args, must_mention=()):
    """edgert-run on `bundle` must exit 1 (not a signal) with a message naming each of must_mention."""
    out = WORK / "refused_out"
    res = lib.run_cmd([lib.find_tool("edgert-run"), bundle, *lib.write_inputs(INPUTS, WORK / "refused_in"),
                       "--output-dir", out, *args], check=False)
    assert res.returncode == 1, f"expected exit code 1, got {res.returncode}: {res.stderr}"
    for text in must_mention:
        assert text in res.stderr, f"stderr does not mention {text!r}: {res.stderr}"
    print(f"    refused: {res.stderr.strip().splitlines()[-1][:160]}")


def trusted(*names):
    args = []
    for n in names:
        args += ["--trusted-key", WORK / f"{n}.pub"]
    return args


def with_byte_flipped(src, offset, name):
    data = bytearray(Path(src).read_bytes())
    data[offset] ^= 0x01
    path = WORK / name
    path.write_bytes(bytes(data))
    return path


@signed_case
def keygen_writes_private_key_file():
    key, pub = WORK / "alice.key", WORK / "alice.pub"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600, oct(key.stat().st_mode)
    for f in (key, pub):
        text = f.read_text().strip()
        assert len(text) == 64 and all(c in "0123456789abcdef" for c in text), f"{f}: {text!r}"
    assert key.read_text() != pub.read_text()
    # Never overwrites a key.
    res = lib.run_cmd([lib.find_tool("edgec"), "keygen", "-o", WORK / "alice"], check=False)
    assert res.returncode == 1 and "exists" in res.stderr, res.stderr
    print(f"    alice.key 0600, alice.pub {pub.read_text().strip()[:16]}...")


@signed_case
def signing_appends_a_trailer_and_is_deterministic():
    unsigned, signed = WORK / "unsigned.bundle", WORK / "alice.bundle"
    assert signed.stat().st_size == unsigned.stat().st_size + TRAILER
    assert signed.read_bytes()[:unsigned.stat().st_size] == unsigned.read_bytes()
    # compile --sign gives the same bytes (Ed25519 signatures are deterministic).
    lib.compile_model(WORK / "model.onnx", WORK / "compiled_signed.bundle", ["--sign", WORK / "alice.key"])
    assert (WORK / "compiled_signed.bundle").read_bytes() == signed.read_bytes()
    # Re-signing in place with another key replaces the trailer.
    resigned = WORK / "resigned.bundle"
    shutil.copyfile(signed, resigned)
    lib.run_cmd([lib.find_tool("edgec"), "sign", resigned, "--key", WORK / "bob.key"])
    assert resigned.read_bytes() == (WORK / "bob.bundle").read_bytes()
    info = lib.run_cmd([lib.find_tool("edgec"), "inspect", signed]).stdout
    pub = (WORK / "alice.pub").read_text().strip()
    assert f"signature: Ed25519 by key {pub}" in info, info
    assert "signature: none" in lib.run_cmd([lib.find_tool("edgec"), "inspect", unsigned]).stdout


@signed_case
def signed_bundle_runs_with_trusted_key_and_matches_onnxruntime():
    expected = lib.ort_run(MODEL, INPUTS)
    for name, args in [("alice", trusted("alice")), ("alice_of_two", trusted("bob", "alice")),
                       ("alice_untrusted_mode", []), ("alice_in_place", trusted("alice") + ["--map-in-place"])]:
        got = lib.run_bundle(WORK / "alice.bundle", INPUTS, WORK / f"out_{name}", lib.output_names(MODEL),
                             extra_args=[str(a) for a in args])
        lib.assert_close(got, expected)
        print(f"    {name}: matches onnxruntime")


@signed_case
def refuses_unsigned_and_other_keys():
    refused(WORK / "unsigned.bundle", *trusted("alice"), must_mention=["not signed"])
    refused(WORK / "bob.bundle", *trusted("alice"), must_mention=["not among the 1 trusted key"])


@signed_case
def refuses_a_byte_changed_after_signing():
    signed = WORK / "alice.bundle"
    size = signed.stat().st_size
    data_offset, data_size = header(signed)
    places = {"header": (48, "does not verify"), "flatbuffer": (64 + 40, "does not verify"),
              "data": (data_offset + data_size // 2, "does not verify"),
              "trailer_magic": (size - TRAILER, "not signed"),
              "trailer_key": (size - 64 - 1, "not among the 1 trusted key"),
              "signature": (size - 1, "does not verify")}
    for what, (offset, message) in places.items():
        refused(with_byte_flipped(signed, offset, f"flipped_{what}.bundle"), *trusted("alice"), must_mention=[message])
    # Without --trusted-key a changed byte in the signed content is still caught by the
    # content hash (the data), but the signature bytes are not checked.
    refused(WORK / "flipped_data.bundle", must_mention=["content hash mismatch"])


@signed_case
def refuses_truncated_signatures():
    signed = (WORK / "alice.bundle").read_bytes()
    for cut in (1, 64, TRAILER - 1):
        path = WORK / f"truncated_{cut}.bundle"
        path.write_bytes(signed[:-cut])
        refused(path, *trusted("alice"), must_mention=["not signed"])
        refused(path, must_mention=["does not match the header"])
    # Bytes appended after a signature are not a trailer either.
    path = WORK / "appended.bundle"
    path.write_bytes(signed + b"\0")
    refused(path, must_mention=["does not match the header"])


@signed_case
def bad_key_files_are_named():
    garbage = WORK / "garbage.pub"
    garbage.write_text("not a key\n")
    refused(WORK / "alice.bundle", "--trusted-key", garbage, must_mention=["garbage.pub", "64 hex digits"])
    refused(WORK / "alice.bundle", "--trusted-key", WORK / "missing.pub", must_mention=["missing.pub"])
    res = lib.run_cmd([lib.find_tool("edgec"), "sign", WORK / "unsigned.bundle", "--key", garbage, "-o",
                       WORK / "never.bundle"], check=False)
    assert res.returncode == 1 and "garbage.pub" in res.stderr, res.stderr
    assert not (WORK / "never.bundle").exists()


@signed_case
def sign_refuses_a_corrupted_bundle_and_writes_nothing():
    bad = with_byte_flipped(WORK / "unsigned.bundle", header(WORK / "unsigned.bundle")[0] + 8, "corrupt.bundle")
    out = WORK / "corrupt_signed.bundle"
    res = lib.run_cmd([lib.find_tool("edgec"), "sign", bad, "--key", WORK / "alice.key", "-o", out], check=False)
    assert res.returncode == 1 and "content hash mismatch" in res.stderr, res.stderr
    assert not out.exists() and not Path(str(out) + ".tmp").exists()


FSVSIG = 112  # magic 8, hash algorithm 1, log block size 1, reserved 6, public key 32, signature 64


def fsverity_tool_digests(paths):
    """{path: digest} as Debian's fsverity tool computes them: the reference implementation."""
    tool = shutil.which("fsverity")
    assert tool, "the fsverity tool is missing (apt package fsverity; scripts/setup.sh installs it)"
    out = lib.run_cmd([tool, "digest", "--hash-alg=sha256", "--block-size=4096", *paths]).stdout
    return {Path(p): d for d, p in (line.split(" ", 1) for line in out.splitlines())}


@signed_case
def fsverity_digest_matches_the_fsverity_tool():
    files = []
    # 0 (root of zeros), one block (root = the block's hash), a partial second block, 1 MB + 7,
    # 128 blocks + 1 (two tree levels), 128 * 128 blocks + 1 (three levels).
    for size in (0, 1, 4095, 4096, 4097, 8192, 1_000_007, 1_048_583, 128 * 4096 + 1, 128 * 128 * 4096 + 1):
        path = WORK / f"fsv_{size}.bin"
        path.write_bytes(np.random.default_rng(size).integers(0, 256, size, dtype=np.uint8).tobytes())
        files.append(path)
    files += [WORK / "unsigned.bundle", WORK / "alice.bundle"]
    out = lib.run_cmd([lib.find_tool("edgec"), "fsverity-digest", *files]).stdout
    ours = {Path(p): d for d, p in (line.split(" ", 1) for line in out.splitlines())}
    theirs = fsverity_tool_digests(files)
    assert set(ours) == set(files), out
    for f in files:
        assert ours[f] == theirs[f], f"{f.name}: edgec {ours[f]}, fsverity {theirs[f]}"
    assert len(set(ours.values())) == len(files)
    print(f"    {len(files)} files (0 B to 64 MiB + 1, two bundles): the same digests as `fsverity digest`")


def sign_fsverity(name, key="alice"):
    """edgec sign --fsverity of unsigned.bundle into NAME.bundle; (bundle, .fsvsig, printed digest)."""
    bundle = WORK / f"{name}.bundle"
    res = lib.run_cmd([lib.find_tool("edgec"), "sign", WORK / "unsigned.bundle", "--key", WORK / f"{key}.key",
                       "-o", bundle, "--fsverity"])
    m = re.search(r"fs-verity digest (sha256:[0-9a-f]{64}) signed -> (\S+)", res.stdout)
    assert m, res.stdout
    sig = Path(str(bundle) + ".fsvsig")
    assert Path(m.group(2)) == sig, res.stdout
    return bundle, sig, m.group(1)


def fsverity_open(bundle, sig, digest, key="alice"):
    return lib.run_cmd([lib.find_tool("edge-fsverity-open"), bundle, "--trusted-key", WORK / f"{key}.pub",
                        "--fsverity-signature", sig, "--digest", digest], check=False)


@signed_case
def sign_fsverity_writes_a_detached_signature_of_the_file_digest():
    bundle, sig, digest = sign_fsverity("fsv_alice")
    # The bundle is what sign writes without --fsverity; the digest is the whole file's.
    assert bundle.read_bytes() == (WORK / "alice.bundle").read_bytes()
    assert fsverity_tool_digests([bundle])[bundle] == digest
    raw = sig.read_bytes()
    assert len(raw) == FSVSIG, len(raw)
    assert raw[:8] == b"EDGEFSV1" and raw[8] == 1 and raw[9] == 12 and raw[10:16] == bytes(6), raw[:16]
    assert raw[16:48].hex() == (WORK / "alice.pub").read_text().strip()
    # Deterministic, and written atomically (no temporary left); in place by default.
    again = WORK / "fsv_again.bundle"
    shutil.copyfile(WORK / "unsigned.bundle", again)
    lib.run_cmd([lib.find_tool("edgec"), "sign", again, "--key", WORK / "alice.key", "--fsverity"])
    assert Path(str(again) + ".fsvsig").read_bytes() == raw
    assert not list(WORK.glob("fsv_*.tmp")) and not list(WORK.glob("*.fsvsig.tmp"))
    # The runtime (kernel stood in for by the digest `fsverity digest` printed) accepts it...
    res = fsverity_open(bundle, sig, digest)
    assert res.returncode == 0 and "opened" in res.stdout, res.stdout + res.stderr
    # ...and refuses it over the digest of another file, and by a key it does not trust.
    other = fsverity_tool_digests([WORK / "bob.bundle"])[WORK / "bob.bundle"]
    res = fsverity_open(bundle, sig, other)
    assert res.returncode == 1 and "does not verify over the fs-verity digest" in res.stderr, res.stderr
    res = fsverity_open(bundle, sig, digest, key="bob")
    assert res.returncode == 1 and "not among the 1 trusted key" in res.stderr, res.stderr
    print(f"    {sig.name}: {FSVSIG} bytes, accepted over `fsverity digest`'s {digest[:23]}..., refused over another")


@signed_case
def fsverity_signature_is_refused_where_the_file_has_no_fsverity():
    bundle, sig, _ = sign_fsverity("fsv_run")
    # This machine's file systems have no fs-verity: the open must say so, not trust the file.
    for extra in (["--map-in-place"], []):
        refused(bundle, *trusted("alice"), "--fsverity-signature", sig, *extra,
                must_mention=["the file has no fs-verity", "FS_IOC_MEASURE_VERITY"])
    res = lib.run_cmd([lib.find_tool("edgert-bench"), bundle, *trusted("alice"), "--fsverity-signature", sig,
                       "--map-in-place", "--iters", "1", "--warmup", "0"], check=False)
    assert res.returncode == 1 and "the file has no fs-verity" in res.stderr, res.stderr
    # Other mistakes are named too.
    refused(bundle, "--fsverity-signature", sig, must_mention=["EDGERT_OPEN_FSVERITY is signed mode"])
    refused(bundle, *trusted("alice"), "--fsverity-signature", WORK / "missing.fsvsig",
            must_mention=["missing.fsvsig"])
    refused(bundle, *trusted("alice"), "--fsverity-signature", WORK / "alice.pub",
            must_mention=["fs-verity signature is 65 bytes, expected 112"])
    truncated = WORK / "truncated.fsvsig"
    truncated.write_bytes(sig.read_bytes()[:-1])
    refused(bundle, *trusted("alice"), "--fsverity-signature", truncated, must_mention=["is 111 bytes"])
    refused(bundle, *trusted("bob"), "--fsverity-signature", sig, must_mention=["not among the 1 trusted key"])


@suite.case
def help_lists_the_options():
    for tool in ("edgert-run", "edgert-bench"):
        text = lib.run_cmd([lib.find_tool(tool), "--help"]).stdout
        assert "--trusted-key" in text and "--map-in-place" in text and "--fsverity-signature" in text, \
            f"{tool} --help: {text}"
    text = lib.run_cmd([lib.find_tool("edgec"), "--help"]).stdout
    assert "edgec keygen" in text and "edgec sign" in text and "--sign" in text, text
    assert "--fsverity" in text and "edgec fsverity-digest" in text, text


@signed_case
def bench_reports_open_time_in_signed_mode():
    import json
    res = lib.run_cmd([lib.find_tool("edgert-bench"), WORK / "alice.bundle", *trusted("alice"), "--iters", "1",
                       "--warmup", "0", "--open-iters", "3", "--json"])
    report = json.loads(res.stdout)
    assert report["open_iters"] == 3 and report["open_median_ms"] > 0, report
    print(f"    open median {report['open_median_ms']:.3f} ms (signed mode)")


@suite.case
def built_without_signatures_refuses_them():
    if SIGNATURES:
        assert "EDGE_SIGNATURES" not in lib.run_cmd([lib.find_tool("edgec"), "keygen", "-o", WORK / "x"]).stderr
        return
    res = lib.run_cmd([lib.find_tool("edgec"), "keygen", "-o", WORK / "x"], check=False)
    assert res.returncode == 1 and "EDGE_SIGNATURES=OFF" in res.stderr, res.stderr
    key = WORK / "any.pub"
    key.write_text("00" * 32 + "\n")
    refused(WORK / "unsigned.bundle", "--trusted-key", key, must_mention=["built without signature checking"])
    sig = WORK / "any.fsvsig"
    sig.write_bytes(bytes(FSVSIG))
    refused(WORK / "unsigned.bundle", "--trusted-key", key, "--fsverity-signature", sig, "--map-in-place",
            must_mention=["built without signature checking"])


def read_bytes_of(pid):
    try:
        with open(f"/proc/{pid}/io") as f:
            for line in f:
                if line.startswith("rchar:"):
                    return int(line.split()[1])
    except OSError:  # ended
        pass
    return -1


def wait_until_running(proc, input_bytes):
    """Waits until `proc` has opened its bundle and read its inputs (they are read after the
    bundle), i.e. it has read at least input_bytes and then nothing more for 150 ms: it is in
    its runs, which read nothing. Works whether the bundle is read or mapped."""
    last, stable, deadline = -1, 0, time.time() + 60
    while proc.poll() is None and stable < 3 and time.time() < deadline:
        time.sleep(0.05)
        now = read_bytes_of(proc.pid)
        stable = stable + 1 if now == last and now >= input_bytes else 0
        last = now


@suite.case
def file_changed_during_a_run_changes_nothing():
    """Default open: bytes written into the file, then another file copied over it, while
    edgert-run --repeat runs; every run must stay bit-identical to the first (the tool checks)
    and the outputs must still match onnxruntime."""
    bundle = WORK / "live.bundle"
    shutil.copyfile(WORK / "unsigned.bundle", bundle)
    data_offset, data_size = header(bundle)
    out = WORK / "live_out"
    out.mkdir(exist_ok=True)
    cmd = [lib.find_tool("edgert-run"), bundle, *lib.write_inputs(INPUTS, WORK / "live_in"),
           "--output-dir", out, "--repeat", "200000"]
    input_bytes = sum(p.stat().st_size for p in (WORK / "live_in").glob("*.npy"))
    proc = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until_running(proc, input_bytes)
        assert proc.poll() is None, f"edgert-run ended before the file was changed: {proc.communicate()}"
        def still_running(after):
            time.sleep(0.2)
            if proc.poll() is not None:
                raise AssertionError(f"edgert-run ended after {after}: exit {proc.returncode} "
                                     f"(1: runs differ, -7: SIGBUS), {proc.communicate()}")
        with open(bundle, "r+b") as f:  # every weight byte changed, in place
            f.seek(data_offset)
            flipped = bytes(b ^ 0xff for b in f.read(data_size))
            f.seek(data_offset)
            f.write(flipped)
            f.flush()
            os.fsync(f.fileno())
        still_running("bytes were written into the file")
        shutil.copyfile(WORK / "model.onnx", bundle)  # cp over it: truncated, then other bytes
        still_running("another file was copied over it")
    finally:
        if proc.poll() is None:
            proc.terminate()
    stdout, stderr = proc.communicate(timeout=60)
    # Terminated by us (SIGTERM) is the expected end; a crash (SIGBUS) or a failed check is not.
    assert proc.returncode == -15, f"edgert-run: exit {proc.returncode}: {stderr}"
    # The same in one complete run: open, cp over the file, run 400 times, write the outputs.
    shutil.copyfile(WORK / "unsigned.bundle", bundle)
    proc = subprocess.Popen([str(c) for c in cmd[:-1]] + ["400"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    wait_until_running(proc, input_bytes)
    shutil.copyfile(WORK / "model.onnx", bundle)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, f"edgert-run: exit {proc.returncode}: {stderr}"
    assert "bit-identical" in stdout, stdout
    lib.assert_close(lib.read_outputs(out, lib.output_names(MODEL)), lib.ort_run(MODEL, INPUTS))
    print("    writes and cp over the file during the runs: no crash, outputs unchanged and correct")


if __name__ == "__main__":
    WORK = lib.work_dir("test_signed_bundles")
    setup()
    sys.exit(suite.main())
