#!/usr/bin/env python3
"""Dynamic instruction count of one edgert-run of a Hexagon bundle under qemu-hexagon, its HVX
share, the share of each kernel, and the hottest kernel's HVX instructions with their counts.

    python3 tests/hexagon/qemu_insn_count/count.py BUNDLE --input NAME=FILE.npy ... [options]
    python3 tests/hexagon/qemu_insn_count/count.py --program ELF [ARG ...]   (any Hexagon program)

How: insn_count.c, a QEMU TCG plugin (built here with the host gcc), counts each executed guest
packet by (address, bytes). The bundle runs twice, `--repeat 1` and `--repeat 2`; the
difference is one run, without start-up, bundle loading and output writing. Every distinct
packet is disassembled with llvm-mc-19; an instruction is HVX when it names an HVX register
(v0-v31, v1:0 pairs, q0-q3, vtmp) or is vhist / vwhist. Counting: qemu-hexagon 7.2 hands a
plugin one *packet* per "instruction" (1-4 words); instructions are what llvm-mc prints inside
the packet (a constant extender immext is part of the instruction it extends; a duplex word is
two instructions; a nop the assembler put in a packet counts). Kernels: the runtime copies the
bundle's code section verbatim into fresh pages (ports/cpu/code_pages.cc), so the page-aligned
base where executed packets match the code section byte for byte is where it sits; kernel k
spans [entry_k, next entry) of `edgec inspect --json`. Everything else is edgert-run itself
(attributed to its functions with llvm-nm-19).

--threads N runs edgert-run with --threads N and the plugin in its per-vCPU mode (qemu-user
gives each guest thread its own vCPU: 0 is the main thread, 1.. the workers in the order they
started) and also prints the packets of one run on each thread and the longest of them. No
packet of the bundle's code may run fewer times in the longer run, on any thread (each thread
runs a fixed share of every launch); edgert-run's own may (its wait loops go round as often
as timing has them).

Environment defaults for the options: EDGE_QEMU_HEXAGON, EDGE_HEXAGON_BUILD_DIR (edgert-run
in device_runtime/), EDGE_HOST_EDGEC (edgec, for `inspect --json`). See README.md."""
import argparse
import bisect
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
PAGE = 4096
# An HVX instruction names a vector (v0-v31, pairs v1:0), vector-predicate (q0-q3) or the
# gather temporary (vtmp) register; vhist / vwhist name none of them.
HVX_RE = re.compile(r"\b(?:v\d+|q[0-3]|vtmp|vhist|vwhist\w*)\b")


def fail(msg):
    raise SystemExit(f"count.py: error: {msg}")


def tool(name):
    path = shutil.which(f"{name}-19") or shutil.which(name)
    if not path:
        fail(f"{name}-19 not found (apt-get install llvm-19)")
    return path


def run(cmd, **kw):
    res = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    if res.returncode != 0:
        fail(f"{' '.join(map(str, cmd))} exited with {res.returncode}:\n{res.stderr}{res.stdout}")
    return res


# ---------------------------------------------------------------- the plugin

def build_plugin(work):
    """Compiles insn_count.c with the host C compiler into work/ (rebuilt when the source changes)."""
    src = HERE / "insn_count.c"
    so = Path(work) / "insn_count.so"
    if so.exists() and so.stat().st_mtime >= max(src.stat().st_mtime, (HERE / "qemu_plugin_api.h").stat().st_mtime):
        return so
    cc = os.environ.get("CC") or shutil.which("gcc") or shutil.which("cc")
    if not cc:
        fail("no host C compiler (gcc) to build the qemu plugin")
    run([cc, "-shared", "-fPIC", "-O2", "-Wall", "-fvisibility=hidden", src, "-o", so])
    return so


def counted_run(qemu, plugin, program, args, out_file, per_vcpu=None):
    """Runs program under qemu with the plugin; {(vaddr, bytes): count}. With a list as
    per_vcpu, the plugin counts per vCPU and the list receives one such dict per vCPU."""
    out_file = Path(out_file)
    out_file.unlink(missing_ok=True)
    plugin_args = f"{plugin},out={out_file}" + (",vcpus=1" if per_vcpu is not None else "")
    res = subprocess.run([str(qemu), "-plugin", plugin_args, str(program), *map(str, args)],
                         capture_output=True, text=True)
    if res.returncode != 0:
        fail(f"{program} under {qemu} exited with {res.returncode}:\n{res.stderr}{res.stdout}")
    if not out_file.exists():
        fail(f"the plugin wrote no {out_file} (does {qemu} load TCG plugins?):\n{res.stderr}")
    counts = {}
    lines = out_file.read_text().splitlines()
    if not lines or not lines[0].startswith("# edge-insn-count v1"):
        fail(f"{out_file}: not the plugin's output")
    vcpus = re.search(r"\bvcpus=(\d+)", lines[0])
    if per_vcpu is not None:
        if not vcpus:
            fail(f"{out_file}: no per-vCPU counts (the plugin ignored vcpus=1?)")
        per_vcpu[:] = [{} for _ in range(int(vcpus.group(1)))]
    for line in lines[1:]:
        addr, size, data, count, *on_vcpu = line.split()
        raw = bytes.fromhex(data) if data != "-" else b""
        if len(raw) != int(size):
            fail(f"{out_file}: packet at {addr} has {len(raw)} of its {size} bytes")
        key = (int(addr, 16), raw)
        counts[key] = counts.get(key, 0) + int(count)
        if per_vcpu is not None:
            for v, n in enumerate(on_vcpu):
                if int(n):
                    per_vcpu[v][key] = per_vcpu[v].get(key, 0) + int(n)
    return counts


# ---------------------------------------------------------------- disassembly

def disassemble(packets, cpu="hexagonv65"):
    """{packet bytes: [instruction text, ...]} for each distinct packet (None: undecodable)."""
    packets = sorted(set(packets))
    hvx = "hvxv66" if cpu.endswith("66") else "hvxv65"
    text = "".join(" ".join(f"0x{b:02x}" for b in p) + "\n" for p in packets)
    def mc(text):
        res = subprocess.run([tool("llvm-mc"), "--disassemble", "-triple=hexagon", f"-mcpu={cpu}",
                              f"-mattr=+{hvx},+hvx-length128b"], input=text, capture_output=True, text=True)
        blocks, cur = [], None
        for line in res.stdout.splitlines():
            s = line.strip()
            if s == "{":
                cur = []
            elif s.startswith("}"):
                blocks.append(cur)
                cur = None
            elif cur is not None and s:
                cur.append(s)
        return res, blocks

    res, blocks = mc(text)
    bad = {int(m.group(1)) - 1 for m in re.finditer(r"<stdin>:(\d+):\d+: warning: invalid instruction encoding",
                                                    res.stderr)}
    # A line with an undecodable word may still print packets for the words after it (data
    # between functions read as a packet): count those per bad line and skip them.
    skip = {i: 0 for i in bad}
    if len(blocks) != len(packets) - len(bad):
        for i in bad:
            skip[i] = len(mc(" ".join(f"0x{b:02x}" for b in packets[i]) + "\n")[1])
    if len(blocks) != len(packets) - len(bad) + sum(skip.values()):
        fail(f"llvm-mc printed {len(blocks)} packets for {len(packets) - len(bad)} decodable ones:\n{res.stderr[:2000]}")
    out, at = {}, 0
    for i, p in enumerate(packets):
        if i in bad:
            out[p] = None
            at += skip[i]
        else:
            out[p] = blocks[at]
            at += 1
    return out


def split_packets(code, start=0):
    """[(offset, packet bytes)] of straight-line code: a packet ends with the word whose parse
    bits (15:14) are 11 (end of packet) or 00 (a duplex, always last)."""
    out, begin = [], start
    for off in range(start, len(code) - 3, 4):
        parse = (code[off + 1] >> 6) & 3
        if parse in (0, 3):
            out.append((begin, bytes(code[begin:off + 4])))
            begin = off + 4
    return out


def is_hvx(insn):
    return bool(HVX_RE.search(insn))


def packet_counts(insns, raw):
    """(instructions, HVX instructions) of one packet; undecodable: one per word, none HVX."""
    if insns is None:
        return max(1, len(raw) // 4), 0
    return len(insns), sum(is_hvx(i) for i in insns)


# ---------------------------------------------------------------- where code sits

def bundle_code(bundle, edgec):
    """(code section bytes, [(kernel name, start, end)], cpu) from `edgec inspect --json`."""
    info = json.loads(run([edgec, "inspect", bundle, "--json"]).stdout)
    raw = Path(bundle).read_bytes()
    data_offset = struct.unpack_from("<Q", raw, 32)[0]  # BundleHeader.data_offset
    code = [s for s in info["sections"] if s["kind"] == "Code"]
    if len(code) != 1:
        fail(f"{bundle}: expected one Code section, found {len(code)}")
    start = data_offset + code[0]["offset"]
    blob = raw[start:start + code[0]["size"]]
    entries = sorted({k["entry"] for k in info["kernels"]})
    kernels = []
    for k in info["kernels"]:
        i = entries.index(k["entry"])
        end = entries[i + 1] if i + 1 < len(entries) else len(blob)
        kernels.append((k["name"], k["entry"], end))
    return blob, kernels, info["target"].get("cpu") or "hexagonv65"


def locate_code(counts, blob):
    """Page-aligned address where the executed packets match blob; None if none do."""
    if not blob:
        return None
    # The bundle's packets by their first two words, at every word-aligned offset: one
    # dictionary lookup per executed packet instead of a search through the whole section
    # (minutes for MobileNetV2's tens of thousands of packets).
    where = defaultdict(list)
    for off in range(0, len(blob) - 7, 4):
        where[blob[off:off + 8]].append(off)
    votes = defaultdict(int)
    for (addr, raw), n in counts.items():
        if len(raw) < 8:  # one-word packets match too many places
            continue
        hits = 0
        for off in where.get(raw[:8], ()):
            if blob[off:off + len(raw)] != raw:
                continue
            if (addr - off) % PAGE == 0:
                votes[addr - off] += 1
            hits += 1
            if hits == 4:
                break
    if not votes:
        return None
    base = max(votes, key=votes.get)
    mismatched = [a for (a, raw) in counts if base <= a < base + len(blob) and blob[a - base:a - base + len(raw)] != raw]
    if mismatched:
        fail(f"packets at {', '.join(hex(a) for a in mismatched[:5])} lie in the code mapped at {base:#x} "
             "but differ from the bundle's code section")
    return base


class Symbols:
    """Function of an address in an ELF program (llvm-nm-19 -n -C)."""

    def __init__(self, elf):
        self.addrs, self.names = [], []
        for line in run([tool("llvm-nm"), "-n", "-C", "--defined-only", elf]).stdout.splitlines():
            parts = line.split(None, 2)
            if len(parts) == 3 and parts[1] in "tTwW":
                self.addrs.append(int(parts[0], 16))
                self.names.append(parts[2])
        self.text = []
        for line in run([tool("llvm-readelf"), "-lW", elf]).stdout.splitlines():
            f = line.split()
            if f and f[0] == "LOAD" and "E" in f[6:-1]:
                self.text.append((int(f[2], 16), int(f[2], 16) + int(f[5], 16)))

    def name(self, addr):
        if not any(lo <= addr < hi for lo, hi in self.text):
            return None
        i = bisect.bisect_right(self.addrs, addr) - 1
        return self.names[i] if i >= 0 else "?"


# ---------------------------------------------------------------- tallies

def normalize(counts, base, blob):
    """{(where, address or code offset, bytes): count}: where is 'code' for the bundle's code
    (keyed by offset, so two runs that map it at different addresses still line up)."""
    out = defaultdict(int)
    for (addr, raw), n in counts.items():
        if base is not None and base <= addr < base + len(blob):
            out[("code", addr - base, raw)] += n
        else:
            out[("prog", addr, raw)] += n
    return out


def outside_kernels(key):
    """Whether a normalized packet is edgert-run's own rather than the bundle's code."""
    return key[0] != "code"


def difference(big, small, may_drop=lambda key: False, who=""):
    """big - small per packet. A packet the longer run executed fewer times is an error, unless
    may_drop(key): then it stays as a negative count. With threads, edgert-run's own packets
    may (whether a thread waits for another, and how often its futex loop goes round, depends
    on timing); the kernels' never may, on any thread: each thread runs the same fixed share of
    every launch (ports/hexagon/fixed_pool.h), so they are held to it per thread too."""
    diff = {}
    for key in set(big) | set(small):
        d = big.get(key, 0) - small.get(key, 0)
        if d < 0 and not may_drop(key):
            fail(f"the longer run executed the packet at {key[1]:#x}{who} fewer times ({big.get(key, 0)} < {small.get(key, 0)})")
        if d:
            diff[key] = d
    return diff


def tally(counts, disasm):
    """{'packets', 'instructions', 'hvx'} over normalized counts."""
    t = {"packets": 0, "instructions": 0, "hvx": 0}
    for (_, _, raw), n in counts.items():
        insns, hvx = packet_counts(disasm.get(raw), raw)
        t["packets"] += n
        t["instructions"] += n * insns
        t["hvx"] += n * hvx
    return t


def share(part, whole):
    return f"{100.0 * part / whole:6.2f} %" if whole else "     - "


def analyse_bundle(args):
    work = Path(args.work or tempfile.mkdtemp(prefix="edge-insn-count-"))
    work.mkdir(parents=True, exist_ok=True)
    plugin = build_plugin(work)
    blob, kernels, cpu = bundle_code(args.bundle, args.edgec)
    runner_args = [args.bundle]
    for spec in args.input:
        runner_args += ["--input", spec]
    if args.threads > 1:
        runner_args += ["--threads", args.threads]
    threaded = args.threads > 1
    runs, thread_runs = {}, {}
    for repeat in (args.repeat, args.repeat + 1):
        out_dir = work / f"out_{repeat}"
        shutil.rmtree(out_dir, ignore_errors=True)
        vcpus = [] if threaded else None
        raw = counted_run(args.qemu, plugin, args.runner, [*runner_args, "--output-dir", out_dir, "--repeat", repeat],
                          work / f"counts_{repeat}.txt", per_vcpu=vcpus)
        base = locate_code(raw, blob)
        if base is None:
            fail("no executed packet matches the bundle's code section: did the bundle run?")
        runs[repeat] = (normalize(raw, base, blob), base)
        if threaded:
            thread_runs[repeat] = [normalize(c, base, blob) for c in vcpus]
    (big, base), (small, _) = runs[args.repeat + 1], runs[args.repeat]
    one = difference(big, small, outside_kernels if threaded else lambda key: False)
    disasm = disassemble({raw for c in (big, small) for (_, _, raw) in c}, cpu)
    total, whole = tally(one, disasm), tally(small, disasm)
    per_thread = []
    if threaded:
        big_t, small_t = thread_runs[args.repeat + 1], thread_runs[args.repeat]
        if len(big_t) != len(small_t):
            fail(f"--repeat {args.repeat} ran {len(small_t)} threads, --repeat {args.repeat + 1} {len(big_t)}")
        per_thread = [tally(difference(b, s, outside_kernels, f" on thread {v}"), disasm)
                      for v, (b, s) in enumerate(zip(big_t, small_t))]

    static = split_packets(blob)
    static_disasm = disassemble({raw for _, raw in static}, cpu)
    # Executed and static packets sorted into the kernels' spans once (kernels that share an
    # entry share a span), not each kernel scanning them all.
    starts = sorted({lo for _, lo, _ in kernels})
    executed_in, hvx_in_code = defaultdict(dict), defaultdict(int)
    for key, n in one.items():
        i = bisect.bisect_right(starts, key[1]) - 1
        if key[0] == "code" and i >= 0:
            executed_in[starts[i]][key] = n
    for off, raw in static:
        i = bisect.bisect_right(starts, off) - 1
        if i >= 0:
            hvx_in_code[starts[i]] += packet_counts(static_disasm[raw], raw)[1]
    per_kernel = []
    for name, lo, hi in kernels:
        part = executed_in[lo]
        t = tally(part, disasm)
        t["hvx_in_code"] = hvx_in_code[lo]
        per_kernel.append((name, lo, hi, t, part))
    sym = Symbols(args.runner)
    runtime = defaultdict(lambda: {"packets": 0, "instructions": 0, "hvx": 0})
    for key, n in one.items():
        if key[0] == "prog":
            t = tally({key: n}, disasm)
            fn = sym.name(key[1]) or f"outside edgert-run ({key[1]:#x})"
            for f in t:
                runtime[fn][f] += t[f]
    runtime_total = sum(v["instructions"] for v in runtime.values())

    p = print
    p(f"{args.bundle}: one run = (--repeat {args.repeat + 1}) - (--repeat {args.repeat}) under {args.qemu}")
    p(f"  packets       {total['packets']:>14,}")
    p(f"  instructions  {total['instructions']:>14,}   ({total['instructions'] / max(1, total['packets']):.2f} per packet)")
    p(f"  HVX           {total['hvx']:>14,}   {share(total['hvx'], total['instructions'])} of the instructions")
    p(f"  (the --repeat {args.repeat} process as a whole, start-up and loading included: "
      f"{whole['instructions']:,} instructions)")
    longest = max(per_thread, key=lambda t: t["packets"]) if per_thread else None
    if per_thread:
        p(f"threads (--threads {args.threads}; qemu vCPU 0 is the calling thread), packets of one run:")
        for v, t in enumerate(per_thread):
            p(f"  thread {v}  {t['packets']:>14,}   {share(t['packets'], total['packets'])} of all packets, "
              f"{t['instructions']:,} instructions, HVX {share(t['hvx'], t['instructions']).strip()}")
        p(f"  longest   {longest['packets']:>14,}")
    p(f"kernels (code section mapped at {base:#x}, {len(blob)} bytes):")
    w = max(28, *(len(k[0]) for k in kernels))
    p(f"  {'kernel':<{w}} {'code bytes':>10} {'HVX in code':>11} {'instructions':>14} {'share':>9} {'HVX':>12} {'HVX share':>9}")
    for name, lo, hi, t, _ in sorted(per_kernel, key=lambda k: -k[3]["instructions"]):
        p(f"  {name:<{w}} {hi - lo:>10} {t['hvx_in_code']:>11} {t['instructions']:>14,} "
          f"{share(t['instructions'], total['instructions'])} {t['hvx']:>12,} {share(t['hvx'], t['instructions'])}")
    p(f"  {'edgert-run (outside kernels)':<{w}} {'':>10} {'':>11} {runtime_total:>14,} "
      f"{share(runtime_total, total['instructions'])}")
    for fn, t in sorted(runtime.items(), key=lambda kv: -kv[1]["instructions"])[:args.top]:
        p(f"    {fn[:60]:<60} {t['instructions']:>12,}")
    name, lo, hi, t, part = max(per_kernel, key=lambda k: k[3]["instructions"])
    p(f"hottest kernel: {name} ({share(t['instructions'], total['instructions']).strip()} of the instructions; "
      f"{t['hvx']:,} HVX = {share(t['hvx'], t['instructions']).strip()} of its own)")
    rows = []
    for (_, off, raw), n in part.items():
        for insn in disasm.get(raw) or []:
            if is_hvx(insn):
                rows.append((n, off, insn))
    if not rows:
        p("  no HVX instruction executed in it")
    else:
        p(f"  {'count':>12}  {'offset':>8}  HVX instruction")
        for n, off, insn in sorted(rows, key=lambda r: (-r[0], r[1]))[:args.hvx_lines]:
            p(f"  {n:>12,}  {off:>#8x}  {insn}")
        if len(rows) > args.hvx_lines:
            p(f"  ... {len(rows) - args.hvx_lines} more (--hvx-lines)")
    if args.json:
        Path(args.json).write_text(json.dumps({
            "bundle": str(args.bundle), "one_run": total, "whole_process": whole, "code_base": base,
            "threads": args.threads, "per_thread": per_thread, "longest_thread": longest,
            "kernels": [{"name": n, "start": lo, "end": hi, **t} for n, lo, hi, t, _ in per_kernel],
            "edgert_run": {"instructions": runtime_total},
            "hottest_kernel": name,
            "hottest_kernel_hvx": [{"count": n, "offset": off, "insn": i} for n, off, i in sorted(rows)]}, indent=1))
    return 0


def count_program(program, program_args, qemu, work, cpu="hexagonv65", per_vcpu=False):
    """Counts of one run of any Hexagon program: (tally, {address: (count, [insns])});
    per_vcpu: counted by the plugin's per-vCPU mode (the totals over all vCPUs)."""
    Path(work).mkdir(parents=True, exist_ok=True)
    plugin = build_plugin(work)
    raw = counted_run(qemu, plugin, program, program_args, Path(work) / "counts_program.txt",
                      per_vcpu=[] if per_vcpu else None)
    counts = normalize(raw, None, b"")
    disasm = disassemble({r for (_, _, r) in counts}, cpu)
    packets = {addr: (n, disasm.get(r)) for (_, addr, r), n in counts.items()}
    return tally(counts, disasm), packets


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bundle", nargs="?", help="a bundle compiled with --target hexagon-v65 / -v66")
    ap.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy")
    ap.add_argument("--program", nargs=argparse.REMAINDER,
                    help="count a whole run of this Hexagon program (and its arguments) instead")
    ap.add_argument("--repeat", type=int, default=1,
                    help="one run = the counts of --repeat R+1 minus those of --repeat R (default R = 1)")
    ap.add_argument("--threads", type=int, default=1,
                    help="run edgert-run with --threads N and report the packets of each thread (default 1)")
    ap.add_argument("--qemu", default=os.environ.get("EDGE_QEMU_HEXAGON") or shutil.which("qemu-hexagon"))
    build = os.environ.get("EDGE_HEXAGON_BUILD_DIR", "build/hexagon")
    ap.add_argument("--runner", default=str(Path(build) / "device_runtime" / "edgert-run"),
                    help="the Hexagon edgert-run (default $EDGE_HEXAGON_BUILD_DIR/device_runtime/edgert-run)")
    ap.add_argument("--edgec", default=os.environ.get("EDGE_HOST_EDGEC") or shutil.which("edgec") or "build/host_compiler/edgec")
    ap.add_argument("--work", help="folder for the plugin, counts and outputs (default: a new temporary one)")
    ap.add_argument("--top", type=int, default=5, help="edgert-run functions to list (default 5)")
    ap.add_argument("--hvx-lines", type=int, default=40, help="HVX instructions of the hottest kernel to list")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args(argv)
    if not args.qemu:
        fail("qemu-hexagon not found (--qemu or EDGE_QEMU_HEXAGON)")
    if args.program:
        work = Path(args.work or tempfile.mkdtemp(prefix="edge-insn-count-"))
        t, _ = count_program(args.program[0], args.program[1:], args.qemu, work)
        print(f"{args.program[0]}: {t['packets']:,} packets, {t['instructions']:,} instructions, "
              f"{t['hvx']:,} HVX ({share(t['hvx'], t['instructions']).strip()})")
        return 0
    if not args.bundle:
        ap.error("a BUNDLE or --program is needed")
    if args.repeat < 1:
        ap.error("--repeat must be 1 or more")
    if args.threads < 1:
        ap.error("--threads must be 1 or more")
    for what, path in (("edgert-run", args.runner), ("edgec", args.edgec), ("bundle", args.bundle)):
        if not Path(path).is_file():
            fail(f"{what} not found at {path}")
    return analyse_bundle(args)


if __name__ == "__main__":
    sys.exit(main())
