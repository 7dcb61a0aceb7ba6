"""Shared helpers for the Python end-to-end suites (tests/e2e, tests/onnx, tests/models).

- tools():        locate edgec / edgert-run / edgert-bench (env vars EDGEC, EDGERT_RUN,
                  EDGERT_BENCH as set by ctest; otherwise searched under build/);
                  find_tool("driving_demo") the sample app (DRIVING_DEMO or build/samples/)
- run_cmd():      run a command with a timeout (process group killed on expiry); raises
                  ToolError showing the command line, exit status and stderr on failure
- compile_model(), run_bundle(), compile_and_run(): drive the CLI tools, return numpy arrays
- ort_run():      onnxruntime reference outputs
- compare():      rtol/atol comparison that reports the worst element
- Suite:          a tiny test runner: register cases, run them, print "N passed, N failed",
                  exit non-zero on any failure

Only numpy is needed at import time; onnx / onnxruntime are imported where used.
"""
from __future__ import annotations

import atexit
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TIMEOUT = 300

# The shared libraries every glibc Linux with a C++ runtime has: what a runtime binary
# (e2e/test_runtime_links.py) and a Python package (python/check_self_contained.py) may need
# without shipping it. One list for both, so they cannot drift apart.
SYSTEM_LIBRARIES = re.compile(r"^(libc|libm|libpthread|libdl|librt|libstdc\+\+|libgcc_s)\.so\.\d+$"
                              r"|^ld-linux-x86-64\.so\.2$|^ld-linux-aarch64\.so\.1$")

_TOOL_ENV = {
    "edgec": ("EDGEC", ["host_compiler/edgec"]),
    "edgert-run": ("EDGERT_RUN", ["device_runtime/edgert-run", "device_runtime/tools/edgert-run"]),
    "edgert-bench": ("EDGERT_BENCH", ["device_runtime/edgert-bench", "device_runtime/tools/edgert-bench"]),
    "driving_demo": ("DRIVING_DEMO", ["samples/driving_demo"]),
    "edgert-prepare": ("EDGERT_PREPARE", ["device_runtime/edgert-prepare"]),
    # tests/tools/fsverity_open.cc: the fs-verity open with an injected digest (test only)
    "edge-fsverity-open": ("EDGE_FSVERITY_OPEN", ["tests/edge-fsverity-open"]),
}


def target_family(prefix: str) -> bool:
    """Whether the suites compile for a target whose name starts with prefix (EDGE_TARGET;
    x86_64 where it is unset): "opencl", "hexagon", "aarch64", "x86_64"."""
    return os.environ.get("EDGE_TARGET", "x86_64").startswith(prefix)


def opencl_target() -> bool:
    """Whether the suites compile for an OpenCL target (tests/opencl/bin/edgec, EDGE_TARGET)."""
    return target_family("opencl")


def prepare_bundle(bundle: Path) -> Path:
    """edgert-prepare BUNDLE on this machine's OpenCL device: the bundle a car would run."""
    prepared = Path(bundle).with_suffix(".prepared.bundle")
    run_cmd([find_tool("edgert-prepare"), bundle, "-o", prepared])
    return prepared


class ToolError(RuntimeError):
    """A command failed (non-zero exit, signal or timeout)."""

    def __init__(self, message, returncode=None, stdout="", stderr=""):
        super().__init__(message)
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr

    def first_line(self) -> str:
        """The first meaningful line of the tool's stderr (or the message)."""
        for text in (self.stderr, self.stdout):
            for line in (text or "").splitlines():
                line = line.strip()
                if line:
                    return line
        return str(self).splitlines()[0]


def build_dir() -> Path:
    env = os.environ.get("EDGE_BUILD_DIR")
    if env:
        return Path(env)
    # When run by ctest, the tools' location tells us the build dir.
    for var in ("EDGEC", "EDGERT_RUN"):
        if os.environ.get(var):
            p = Path(os.environ[var]).resolve().parent
            while p != p.parent:
                if (p / "CMakeCache.txt").exists():
                    return p
                p = p.parent
    return REPO_ROOT / "build"


def env_path(name: str) -> Path:
    """The path in environment variable `name`, which ctest sets (tests/CMakeLists.txt)."""
    value = os.environ.get(name)
    if not value:
        raise AssertionError(f"{name} is not set (run through ctest, see tests/CMakeLists.txt)")
    return Path(value)


def find_tool(name: str, required: bool = True) -> Path | None:
    env_var, candidates = _TOOL_ENV[name]
    if os.environ.get(env_var):
        p = Path(os.environ[env_var])
        if p.is_file():
            return p
        if required:
            raise FileNotFoundError(f"{env_var}={p} does not exist")
        return None
    bdir = build_dir()
    for rel in candidates:
        if (bdir / rel).is_file():
            return bdir / rel
    if bdir.is_dir():
        for p in sorted(bdir.rglob(name)):
            if p.is_file() and os.access(p, os.X_OK):
                return p
    if required:
        raise FileNotFoundError(f"cannot find {name}: set {env_var} or build into {bdir}")
    return None


def tools():
    """(edgec, edgert-run, edgert-bench) paths; edgert-bench may be None."""
    return find_tool("edgec"), find_tool("edgert-run"), find_tool("edgert-bench", required=False)


def work_dir(suite: str, clean: bool = True) -> Path:
    base = Path(os.environ.get("EDGE_WORK_DIR") or (build_dir() / "test-work"))
    d = base / suite
    if clean and d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True, exist_ok=True)
    return d


def _fmt_cmd(cmd) -> str:
    return " ".join(str(c) for c in cmd)


def run_cmd(cmd, timeout=DEFAULT_TIMEOUT, check=True, cwd=None, env=None):
    """Runs cmd; returns CompletedProcess (text). Kills the whole process group on timeout.

    With check=True a non-zero exit raises ToolError with the stderr tail."""
    cmd = [str(c) for c in cmd]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=env,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = proc.communicate()
        raise ToolError(f"timed out after {timeout}s: {_fmt_cmd(cmd)}", None,
                        out.decode(errors="replace"), err.decode(errors="replace"))
    res = subprocess.CompletedProcess(cmd, proc.returncode, out.decode(errors="replace"),
                                      err.decode(errors="replace"))
    if check and res.returncode != 0:
        raise ToolError(f"{_describe_rc(res.returncode)}: {_fmt_cmd(cmd)}\n"
                        f"--- stderr ---\n{_tail(res.stderr)}\n--- stdout ---\n{_tail(res.stdout)}",
                        res.returncode, res.stdout, res.stderr)
    return res


def _describe_rc(rc):
    if rc is None:
        return "timed out"
    if rc < 0:
        try:
            return f"killed by signal {signal.Signals(-rc).name}"
        except ValueError:
            return f"killed by signal {-rc}"
    return f"exit code {rc}"


def _tail(text, lines=40):
    text = (text or "").rstrip()
    parts = text.splitlines()
    if len(parts) > lines:
        return "\n".join(["..."] + parts[-lines:])
    return text


# ---------------------------------------------------------------- compile / run

def save_model(model, path: Path) -> Path:
    import onnx
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))
    return path


def compile_model(model, bundle: Path, extra_args=(), timeout=DEFAULT_TIMEOUT):
    """Compiles an ONNX model (ModelProto or path) into bundle; returns the CompletedProcess.
    Through the compile cache where EDGE_COMPILE_CACHE names one (see _compile_cached)."""
    edgec = find_tool("edgec")
    bundle = Path(bundle)
    bundle.parent.mkdir(parents=True, exist_ok=True)
    if not isinstance(model, (str, Path)):
        model = save_model(model, bundle.with_suffix(".onnx"))
    cmd = [edgec, "compile", model, "-o", bundle, *extra_args]
    # A compile that writes more than the bundle (a dump, a tune cache) runs: the cache keeps
    # only the bundle, and a hit would leave the dump unwritten (or stale from a run before).
    writes_more = any(str(a) in _COMPILE_FILE_OUTPUTS for a in extra_args)
    if os.environ.get("EDGE_COMPILE_CACHE") and not writes_more:
        return _compile_cached(cmd, bundle, Path(os.environ["EDGE_COMPILE_CACHE"]), timeout)
    return run_tool(cmd, timeout=timeout)


# edgec compile options that write a file besides the bundle.
_COMPILE_FILE_OUTPUTS = {"--dump-kernels", "--dump-llvm-ir", "--dump-source", "--tune-cache"}


def _compile_key(cmd, bundle: Path) -> str:
    """What a compile's result depends on: the tools (path, size, time), the target the
    wrappers add (EDGE_TARGET), and every argument but the output, a file argument (or the
    FILE of NAME=FILE) by its contents, not its path."""
    import hashlib
    h = hashlib.sha256()
    tools = [cmd[0], os.environ.get("EDGE_HOST_EDGEC", "")]
    for tool in filter(None, tools):
        st = os.stat(tool)
        h.update(f"{os.path.realpath(tool)} {st.st_size} {st.st_mtime_ns}\0".encode())
    h.update(f"EDGE_TARGET={os.environ.get('EDGE_TARGET', '')}\0".encode())
    for arg in map(str, cmd[1:]):
        if arg == str(bundle):
            continue
        name, _, path = arg.rpartition("=")
        if os.path.isfile(path):  # by contents: the same model in another suite's folder
            data = Path(path).read_bytes()
            h.update(f"{name}=file:".encode() + hashlib.sha256(data).digest())
            for extra in _external_data_files(Path(path), data):  # a model's weights beside it
                h.update(f"{extra.name}=data:".encode() + hashlib.sha256(extra.read_bytes()).digest())
        else:
            h.update(arg.encode())
        h.update(b"\0")
    return h.hexdigest()


def _external_data_files(path: Path, data: bytes):
    """The files an ONNX model at path keeps tensors in (external data: 'location' entries,
    relative to its folder), sorted; none for a file that is not a model with external data.
    The compile key hashes them too: the same .onnx with other weights is another model."""
    if path.suffix != ".onnx" or b"location" not in data:
        return []
    import onnx
    try:
        model = onnx.load_model_from_string(data)
    except Exception:  # not a model: its bytes alone are the key
        return []
    from onnx.external_data_helper import _get_all_tensors  # every graph's, subgraphs' included (onnx is pinned)
    locations = {e.value for t in _get_all_tensors(model) for e in t.external_data if e.key == "location"}
    files = [path.parent / loc for loc in sorted(locations)]
    return [f for f in files if f.is_file()]


def _compile_cached(cmd, bundle: Path, cache: Path, timeout):
    """Suites that compile the same models with the same edgec for the same target (the x86
    suites and their guard-page / ASan runs, which test the runtime, not the compiler) share
    one compile: the bundle and edgec's output are kept under the key of everything they
    depend on. Failed compiles are not kept. Entries appear whole (rename) or not at all."""
    entry = cache / _compile_key(cmd, bundle)
    if (entry / "bundle").is_file():
        shutil.copyfile(entry / "bundle", bundle)
        return subprocess.CompletedProcess([str(c) for c in cmd], 0, (entry / "stdout").read_text(),
                                           (entry / "stderr").read_text())
    res = run_tool(cmd, timeout=timeout)
    cache.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=cache, prefix="staging-"))
    shutil.copyfile(bundle, staging / "bundle")
    (staging / "stdout").write_text(res.stdout)
    (staging / "stderr").write_text(res.stderr)
    try:
        staging.rename(entry)
    except OSError:  # another suite stored the same compile first
        shutil.rmtree(staging, ignore_errors=True)
    return res


def write_inputs(inputs: dict, directory: Path):
    """Saves each input as DIR/<index>_<safe name>.npy; returns ['--input', 'name=path', ...]."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    args = []
    for i, (name, value) in enumerate(inputs.items()):
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
        path = directory / f"{i}_{safe}.npy"
        np.save(path, np.asarray(value))
        args += ["--input", f"{name}={path}"]
    return args


def output_file(out_dir: Path, name: str) -> Path:
    """Where edgert-run writes output `name` ('/' in names becomes '_')."""
    return Path(out_dir) / (name.replace("/", "_") + ".npy")


def read_outputs(out_dir: Path, names=None):
    out_dir = Path(out_dir)
    if names is None:
        names = sorted(p.stem for p in out_dir.glob("*.npy"))
    result = {}
    for name in names:
        path = output_file(out_dir, name)
        if not path.exists():
            raise ToolError(f"edgert-run wrote no {path.name} (have: "
                            f"{sorted(p.name for p in out_dir.glob('*.npy'))})")
        result[name] = np.load(path, allow_pickle=False)
    return result


def run_bundle(bundle: Path, inputs: dict, out_dir: Path, output_names=None, threads=None,
               repeat=None, extra_args=(), timeout=DEFAULT_TIMEOUT):
    """Runs edgert-run; returns {output name: ndarray}."""
    run = find_tool("edgert-run")
    out_dir = Path(out_dir)
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    cmd = [run, bundle, *write_inputs(inputs, out_dir.parent / (out_dir.name + "_inputs")),
           "--output-dir", out_dir]
    if threads is not None:
        cmd += ["--threads", str(threads)]
    if repeat is not None:
        cmd += ["--repeat", str(repeat)]
    cmd += list(extra_args)
    run_edgert(cmd, timeout=timeout)
    return read_outputs(out_dir, output_names)


class _ToolServer:
    """One `TOOL --serve` process (edgec, edgert-run: see their --help) that runs command
    lines one after another. A process costs edgec ~45 ms (loading LLVM) and edgert-run on
    OpenCL ~0.2 s (loading the driver), more than a small model's compile or run: suites of
    thousands of them run them here, for the tools EDGE_SERVE names ("edgec edgert-run").
    Results read as run_cmd's do; after a crash or a timeout the next command line starts a
    new server."""

    _END = re.compile(rb"(?:^|\n)\x1e(-?\d+)\n")
    _by_tool: dict = {}

    def __init__(self, tool: str):
        self.proc = subprocess.Popen([tool, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, start_new_session=True)

    @staticmethod
    def serves(cmd) -> bool:
        return Path(str(cmd[0])).name in os.environ.get("EDGE_SERVE", "").split()

    @classmethod
    def run(cls, cmd, timeout):
        cmd = [str(c) for c in cmd]
        server = cls._by_tool.get(cmd[0])
        if server is None or server.proc.poll() is not None:
            server = cls._by_tool[cmd[0]] = cls(cmd[0])
        rc, text = server._request(cmd[1:], timeout)
        if rc is None or rc < 0:
            del cls._by_tool[cmd[0]]
        if rc != 0:
            raise ToolError(f"{_describe_rc(rc)}: {_fmt_cmd(cmd)} (through {cmd[0]} --serve)\n"
                            f"--- output ---\n{_tail(text)}", rc, "", text)
        return subprocess.CompletedProcess(cmd, 0, text, "")

    def _request(self, args, timeout):
        if any("\t" in a or "\n" in a for a in args):
            raise ValueError(f"--serve takes no tab or newline in an argument: {args}")
        proc, out = self.proc, b""
        try:
            proc.stdin.write(("\t".join(args) + "\n").encode())
            proc.stdin.flush()
        except BrokenPipeError:
            pass  # it died: read what it said, and its status
        deadline = time.monotonic() + timeout
        while not (end := self._END.search(out)):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([proc.stdout], [], [], left)[0]:
                self._kill()
                return None, out.decode(errors="replace")
            chunk = os.read(proc.stdout.fileno(), 1 << 16)
            if not chunk:  # ended inside a command line: a crash
                proc.stdin.close()
                return proc.wait(), out.decode(errors="replace")
            out += chunk
        return int(end.group(1)), out[:end.start()].decode(errors="replace")

    @classmethod
    def stop_all(cls):
        """Closes every server's stdin (it exits at the end of its input) and waits for it. A
        process that ends without this (a pool worker) closes the pipe all the same."""
        for server in cls._by_tool.values():
            server.proc.stdin.close()
            try:
                server.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server._kill()
        cls._by_tool.clear()

    def _kill(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()


atexit.register(_ToolServer.stop_all)


def run_tool(cmd, timeout=DEFAULT_TIMEOUT):
    """run_cmd for an edgec or edgert-run command line: through one `TOOL --serve` process
    where EDGE_SERVE names the tool (_ToolServer)."""
    if _ToolServer.serves(cmd):
        return _ToolServer.run(cmd, timeout)
    return run_cmd(cmd, timeout=timeout)


def run_edgert(cmd, timeout=DEFAULT_TIMEOUT) -> str:
    """run_tool for an edgert-run command line. An OpenCL bundle that needs an extension the
    device lacks (rusticl on llvmpipe has no cl_khr_fp64) runs on the platform named by
    EDGE_OPENCL_FALLBACK_PLATFORM instead, where that is set: the suites run on the faster
    implementation and still cover every kernel. Returns the fallback platform used, or ""."""
    fallback = os.environ.get("EDGE_OPENCL_FALLBACK_PLATFORM", "")
    try:
        run_tool(cmd, timeout=timeout)
        return ""
    except ToolError as e:
        if not fallback or "needs OpenCL extension" not in e.first_line():
            raise
    run_cmd(cmd, timeout=timeout, env={**os.environ, "EDGERT_OPENCL_PLATFORM": fallback})
    return fallback


def output_names(model):
    return [o.name for o in model.graph.output]


def compile_and_run(model, inputs: dict, workdir: Path, name="model", threads=None,
                    compile_args=(), timeout=DEFAULT_TIMEOUT):
    """Compiles model into workdir/name.bundle and runs it; returns {output name: ndarray}."""
    workdir = Path(workdir)
    bundle = workdir / f"{name}.bundle"
    compile_model(model, bundle, compile_args, timeout=timeout)
    return run_bundle(bundle, inputs, workdir / f"{name}_out", output_names(model), threads=threads,
                      timeout=timeout)


# The int8 weight operand (input index, zero-point index) of onnxruntime's integer products.
INT8_WEIGHT_INPUTS = {("", "DequantizeLinear"): (0, 2), ("", "QLinearConv"): (3, 5), ("", "QLinearMatMul"): (3, 5),
                      ("", "MatMulInteger"): (1, 3), ("", "ConvInteger"): (1, 3),
                      ("com.microsoft", "QGemm"): (3, 5)}


def exact_weights(model):
    """The same model with every int8 weight initializer of an integer product stored as
    uint8 (w + 128, zero point + 128): the same values (w - zp is unchanged), but onnxruntime
    then takes its u8u8 kernels, which sum exactly. Its u8s8 kernels on x86 CPUs without VNNI
    add pairs of products in saturating 16-bit lanes (vpmaddubsw): 255 * 127 * 2 > 32767, so
    there they are not the integer products they stand for (84% of the elements of
    test_int8's QGemm case on an AVX2-only EPYC). A weight any other node reads is left alone."""
    import onnx
    from onnx import numpy_helper as nh
    m = onnx.ModelProto()
    m.CopyFrom(model if isinstance(model, onnx.ModelProto) else onnx.load(str(model)))
    g = m.graph
    inits = {t.name: t for t in g.initializer}
    zero_point_names = set()  # replaced ones, dropped at the end where nothing else reads them
    consumers = {}
    for n in g.node:
        for i, name in enumerate(n.input):
            consumers.setdefault(name, []).append((n, i))
    for name, uses in consumers.items():
        t = inits.get(name)
        if t is None or t.data_type != onnx.TensorProto.INT8:
            continue
        slots = [INT8_WEIGHT_INPUTS.get((n.domain, n.op_type)) for n, _ in uses]
        if any(s is None or s[0] != i for s, (_, i) in zip(slots, uses)):
            continue
        zps = []
        for (n, _), (_, zi) in zip(uses, slots):
            zp = n.input[zi] if len(n.input) > zi and n.input[zi] else None
            if zp is not None and (zp not in inits or inits[zp].data_type != onnx.TensorProto.INT8):
                break
            zps.append(zp)
        else:
            t.CopyFrom(nh.from_array((nh.to_array(t).astype(np.int16) + 128).astype(np.uint8), name))
            zero_point_names.update(zp for zp in zps if zp)
            for k, ((n, _), (_, zi), zp) in enumerate(zip(uses, slots, zps)):
                # A missing zero point: one per scale (per channel or one), or one for
                # MatMulInteger / ConvInteger, whose weight has no scale.
                has_scale = not n.op_type.endswith("Integer") and n.input[zi - 1] in inits
                scale_shape = nh.to_array(inits[n.input[zi - 1]]).shape if has_scale else ()
                zp_value = nh.to_array(inits[zp]).astype(np.int16) if zp else np.zeros(scale_shape, np.int16)
                new_zp = f"{name}__u8_zero_point_{k}"
                g.initializer.append(nh.from_array((zp_value + 128).astype(np.uint8), new_zp))
                while len(n.input) <= zi:
                    n.input.append("")
                n.input[zi] = new_zp
    used = {name for n in g.node for name in n.input}
    kept = [t for t in g.initializer if t.name in used or t.name not in zero_point_names]
    del g.initializer[:]
    g.initializer.extend(kept)
    return m


def ort_run(model, inputs: dict):
    """onnxruntime reference (CPU, graph optimizations off, 1 thread, integer products fed
    exact weights: exact_weights); {output name: ndarray}."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(exact_weights(model).SerializeToString(), so, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, inputs)))


# ---------------------------------------------------------------- comparison

def compare(actual, expected, rtol=1e-4, atol=1e-5, name="output"):
    """Returns (ok, message). Floats: |a-e| <= atol + rtol*|e|, NaN positions must match,
    infinities must match exactly. Integers and bools: exact. The message names the
    worst element (index, values, abs and rel error)."""
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    if actual.shape != expected.shape:
        return False, f"{name}: shape {actual.shape} != expected {expected.shape}"
    if actual.dtype != expected.dtype:
        return False, f"{name}: dtype {actual.dtype} != expected {expected.dtype}"
    if actual.size == 0:
        return True, f"{name}: empty, ok"
    if expected.dtype.kind in "fc":
        a = actual.astype(np.float64) if expected.dtype.kind == "f" else actual.astype(np.complex128)
        e = expected.astype(a.dtype)
        a_nan, e_nan = np.isnan(a), np.isnan(e)
        if not np.array_equal(a_nan, e_nan):
            idx = np.unravel_index(int(np.argmax(a_nan != e_nan)), a.shape)
            return False, (f"{name}: NaN positions differ ({int((a_nan != e_nan).sum())} elements), "
                           f"first at {tuple(int(i) for i in idx)}: got {a[idx].item()!r}, expected {e[idx].item()!r}")
        a_inf, e_inf = np.isinf(a), np.isinf(e)
        inf_bad = (a_inf | e_inf) & ~(a == e)
        if inf_bad.any():
            idx = np.unravel_index(int(np.argmax(inf_bad)), a.shape)
            return False, (f"{name}: infinities differ ({int(inf_bad.sum())} elements), "
                           f"first at {tuple(int(i) for i in idx)}: got {a[idx].item()!r}, expected {e[idx].item()!r}")
        finite = ~(a_nan | a_inf | e_inf)
        with np.errstate(invalid="ignore", over="ignore"):
            diff = np.where(finite, np.abs(a - e), 0.0)
        allowed = atol + rtol * np.abs(np.where(finite, e, 0.0))
        excess = diff - allowed
        bad = int((excess > 0).sum())
        # Failing: the element furthest beyond its tolerance; passing: the largest abs error.
        worst = np.unravel_index(int(np.argmax(excess if bad else diff)), a.shape)
        max_abs = float(diff.max())
        rel = float(diff[worst] / max(abs(e[worst]), 1e-30))
        msg = (f"{name}: max abs err {max_abs:.3g}; worst at {tuple(int(i) for i in worst)}: "
               f"got {a[worst].item()!r}, expected {e[worst].item()!r} (abs {float(diff[worst]):.3g}, rel {rel:.3g}, "
               f"rtol {rtol:g}, atol {atol:g})")
        if bad:
            return False, f"{bad}/{a.size} elements out of tolerance; {msg}"
        return True, msg
    neq = actual != expected
    if neq.any():
        idx = np.unravel_index(int(np.argmax(neq)), actual.shape)
        return False, (f"{name}: {int(neq.sum())}/{actual.size} elements differ (exact compare), "
                       f"first at {tuple(int(i) for i in idx)}: got {actual[idx].item()!r}, expected {expected[idx].item()!r}")
    return True, f"{name}: exact match"


def compare_all(actual: dict, expected: dict, rtol=1e-4, atol=1e-5):
    """Compares every expected output; returns (ok, [messages])."""
    ok, msgs = True, []
    for name, exp in expected.items():
        if name not in actual:
            ok = False
            msgs.append(f"{name}: missing from outputs (have {sorted(actual)})")
            continue
        good, msg = compare(actual[name], exp, rtol, atol, name)
        ok &= good
        msgs.append(msg)
    return ok, msgs


def assert_close(actual: dict, expected: dict, rtol=1e-4, atol=1e-5):
    ok, msgs = compare_all(actual, expected, rtol, atol)
    for m in msgs:
        print("    " + m)
    if not ok:
        raise AssertionError("; ".join(msgs))


# ---------------------------------------------------------------- test runner

# Seconds per ctest test and per case of the sharded suites, measured by a run of the test
# command and written by tests/update_test_costs.py (README: Tests).
TEST_COSTS_FILE = REPO_ROOT / "tests" / "test_costs.json"


def case_costs(key: str, path=TEST_COSTS_FILE) -> tuple[dict, float]:
    """({case: seconds}, seconds of a case not listed) of ctest test `key`'s cases in the file."""
    data = json.loads(Path(path).read_text())
    return data["cases"].get(key, {}), data["defaults"]["case"]


def balance_shards(names, costs: dict, default: float, n: int) -> list[list[str]]:
    """names divided into n shares of about equal seconds (costs, else default): the longest
    first, each to the lightest share so far (ties by name, then the lowest share), so the same
    costs give the same shares on every machine, whatever order the names come in."""
    loads = [0.0] * n
    shares = [[] for _ in range(n)]
    for name in sorted(names, key=lambda c: (-costs.get(c, default), c)):
        i = loads.index(min(loads))
        shares[i].append(name)
        loads[i] += costs.get(name, default)
    return shares


class Skip(Exception):
    pass


class Suite:
    """Minimal runner: @suite.case registers a function; suite.main() runs them all
    (or those whose name contains one of argv[1:]), prints a closing
    'N passed, N failed' and exits 1 on any failure. EDGE_SUITE_SHARD=K/N runs the Kth of N
    (1-based) shares of the selected cases, so ctest can run one long suite as N tests: the
    shares are balanced by the seconds tests/test_costs.json records for the cases of the ctest
    test EDGE_SUITE_COSTS_KEY names (balance_shards)."""

    def __init__(self, name: str):
        self.name = name
        self.cases = []
        self.costs_file = TEST_COSTS_FILE

    def shard(self, selected, k, n):
        costs, default = case_costs(os.environ.get("EDGE_SUITE_COSTS_KEY", ""), self.costs_file)
        shares = balance_shards([c.__name__ for c in selected], costs, default, n)
        return [c for c in selected if c.__name__ in shares[k - 1]]

    def case(self, fn):
        self.cases.append(fn)
        return fn

    def main(self, argv=None):
        argv = sys.argv[1:] if argv is None else argv
        selected = [c for c in self.cases if not argv or any(a in c.__name__ for a in argv)]
        shard = os.environ.get("EDGE_SUITE_SHARD")
        if shard:
            k, n = (int(v) for v in shard.split("/"))
            selected = self.shard(selected, k, n)
        passed = failed = skipped = 0
        for case in selected:
            t0 = time.time()
            print(f"[ RUN  ] {self.name}.{case.__name__}", flush=True)
            try:
                case()
            except Skip as e:
                skipped += 1
                print(f"[ SKIP ] {self.name}.{case.__name__}: {e}", flush=True)
                continue
            except Exception as e:  # noqa: BLE001 - report every failure, keep going
                failed += 1
                if isinstance(e, (AssertionError, ToolError)):
                    print(f"  {type(e).__name__}: {e}")
                else:
                    traceback.print_exc(file=sys.stdout)
                print(f"[ FAIL ] {self.name}.{case.__name__} ({time.time() - t0:.1f}s)", flush=True)
                continue
            passed += 1
            print(f"[  OK  ] {self.name}.{case.__name__} ({time.time() - t0:.1f}s)", flush=True)
        if skipped:
            print(f"{skipped} skipped")
        print(f"{passed} passed, {failed} failed", flush=True)
        return 1 if failed or not (passed or skipped) else 0


# ---------------------------------------------------------------- model builders

def make_cnn(seed=0, variant="basic", batch=1, size=32, channels=3, classes=10, opset=13):
    """A small end-to-end CNN built with onnx.helper and seeded numpy weights.

    variant "basic":  conv(+bias) -> BN -> relu -> maxpool -> residual block
                      (conv/BN/relu/conv/BN + skip, add, relu) -> conv stride 2 -> relu
                      -> global average pool -> flatten -> gemm -> softmax
    variant "grouped": the same skeleton with a grouped conv, a dilated conv and an
                      average pool (count_include_pad=0, padded) instead of maxpool."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    nodes, inits = [], []

    def weight(name, shape, scale=None):
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else int(shape[0])
        scale = np.sqrt(2.0 / fan_in) if scale is None else scale
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def conv(x, name, cin, cout, k, stride=1, pad=None, group=1, dilation=1, bias=True):
        pad = (k // 2) * dilation if pad is None else pad
        ins = [x, weight(f"{name}.w", (cout, cin // group, k, k))]
        if bias:
            ins.append(weight(f"{name}.b", (cout,), 0.1))
        nodes.append(helper.make_node("Conv", ins, [f"{name}.y"], name=name, kernel_shape=[k, k],
                                      strides=[stride, stride], pads=[pad] * 4, group=group,
                                      dilations=[dilation, dilation]))
        return f"{name}.y"

    def bn(x, name, c):
        inits.append(numpy_helper.from_array((1.0 + 0.1 * rng.standard_normal(c)).astype(np.float32), f"{name}.scale"))
        inits.append(numpy_helper.from_array((0.1 * rng.standard_normal(c)).astype(np.float32), f"{name}.bias"))
        inits.append(numpy_helper.from_array((0.1 * rng.standard_normal(c)).astype(np.float32), f"{name}.mean"))
        inits.append(numpy_helper.from_array(rng.uniform(0.5, 1.5, c).astype(np.float32), f"{name}.var"))
        nodes.append(helper.make_node("BatchNormalization",
                                      [x, f"{name}.scale", f"{name}.bias", f"{name}.mean", f"{name}.var"],
                                      [f"{name}.y"], name=name, epsilon=1e-5))
        return f"{name}.y"

    def relu(x, name):
        nodes.append(helper.make_node("Relu", [x], [f"{name}.y"], name=name))
        return f"{name}.y"

    c1, c2 = 16, 32
    x = "image"
    if variant == "basic":
        h = relu(bn(conv(x, "conv1", channels, c1, 3), "bn1", c1), "relu1")
        nodes.append(helper.make_node("MaxPool", [h], ["pool1.y"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]))
        h = "pool1.y"
        r = relu(bn(conv(h, "res.conv1", c1, c1, 3, bias=False), "res.bn1", c1), "res.relu1")
        r = bn(conv(r, "res.conv2", c1, c1, 3, bias=False), "res.bn2", c1)
        nodes.append(helper.make_node("Add", [r, h], ["res.add.y"], name="res.add"))
        h = relu("res.add.y", "res.relu2")
        h = relu(conv(h, "down", c1, c2, 3, stride=2), "down.relu")
    elif variant == "grouped":
        h = relu(bn(conv(x, "conv1", channels, c1, 3), "bn1", c1), "relu1")
        nodes.append(helper.make_node("AveragePool", [h], ["pool1.y"], name="pool1", kernel_shape=[3, 3],
                                      strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=0))
        h = "pool1.y"
        r = relu(conv(h, "gconv", c1, c1, 3, group=4), "gconv.relu")         # grouped
        r = conv(r, "dconv", c1, c1, 3, dilation=2)                           # dilated, pad 2
        nodes.append(helper.make_node("Add", [r, h], ["res.add.y"], name="res.add"))
        h = relu("res.add.y", "res.relu2")
        h = conv(h, "dw", c1, c1, 3, stride=2, group=c1)                      # depthwise, stride 2
        h = relu(conv(h, "pw", c1, c2, 1), "pw.relu")                         # pointwise
    else:
        raise ValueError(variant)
    nodes.append(helper.make_node("GlobalAveragePool", [h], ["gap.y"], name="gap"))
    nodes.append(helper.make_node("Flatten", ["gap.y"], ["flat.y"], name="flatten", axis=1))
    weight("fc.w", (classes, c2))
    weight("fc.b", (classes,), 0.1)
    nodes.append(helper.make_node("Gemm", ["flat.y", "fc.w", "fc.b"], ["logits"], name="fc", transB=1))
    nodes.append(helper.make_node("Softmax", ["logits"], ["probabilities"], name="softmax", axis=-1))
    graph = helper.make_graph(
        nodes, f"edge_test_cnn_{variant}",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [batch, channels, size, size])],
        [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, [batch, classes])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="edge_testlib")
    model.ir_version = 8
    import onnx
    onnx.checker.check_model(model, full_check=True)
    return model


def make_simple_model(inputs, node_op="Add", opset=13, name="simple"):
    """A one-node model: inputs is [(name, shape)] of float32 tensors; output "y"."""
    from onnx import TensorProto, helper
    import onnx
    node = helper.make_node(node_op, [n for n, _ in inputs], ["y"], name=f"{name}_node")
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(s)) for n, s in inputs],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(inputs[0][1]))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model
