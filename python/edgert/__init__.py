"""edgert: run bundles compiled by edgec, from Python, with numpy arrays in and out.

    import numpy as np, edgert
    bundle = edgert.Bundle("model.bundle")            # or bytes; trusted_keys=[...] for signed mode
    ctx = bundle.context(threads=1)
    outputs = ctx.run({"image": image})                # {output name: numpy array}
    ctx.run({"image": image}, out=outputs)             # into your arrays: no allocation

A binding of the runtime's C API (edgert.h) and nothing else: it never imports onnx, protobuf
or LLVM. An input whose dtype, shape and C order match is bound in place (no copy); one that
does not is refused with an InvalidArgumentError naming it, unless run(..., copy=True). The
GIL is released while the bundle runs. Every runtime failure raises the EdgertError subclass
of its edgert_status, carrying the runtime's message.
"""
from __future__ import annotations

import os
import re
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from . import _edgert

__all__ = [
    "Bundle", "Context", "TensorInfo", "prepare", "runtime_ports", "signatures_supported",
    "EdgertError", "BundleIOError", "InvalidBundleError", "UnsupportedError",
    "InvalidArgumentError", "OutOfMemoryError", "NotBoundError", "ClosedError", "__version__",
]

__version__: str = _edgert.__version__


class EdgertError(RuntimeError):
    """A runtime call failed; .status is the edgert_status name, str(e) the runtime's message."""
    status = "EDGERT_ERROR"


class BundleIOError(EdgertError, OSError):
    """EDGERT_ERROR_IO: the file cannot be opened or mapped."""
    status = "EDGERT_ERROR_IO"


class InvalidBundleError(EdgertError):
    """EDGERT_ERROR_INVALID_BUNDLE: malformed, truncated, corrupted, or (signed mode) not signed
    by a trusted key."""
    status = "EDGERT_ERROR_INVALID_BUNDLE"


class UnsupportedError(EdgertError):
    """EDGERT_ERROR_UNSUPPORTED: the bundle needs a target, feature or version this runtime lacks."""
    status = "EDGERT_ERROR_UNSUPPORTED"


class InvalidArgumentError(EdgertError, ValueError):
    """EDGERT_ERROR_INVALID_ARGUMENT: e.g. an input of the wrong dtype, shape or order, an unknown
    input name."""
    status = "EDGERT_ERROR_INVALID_ARGUMENT"


class OutOfMemoryError(EdgertError, MemoryError):
    """EDGERT_ERROR_OUT_OF_MEMORY."""
    status = "EDGERT_ERROR_OUT_OF_MEMORY"


class NotBoundError(EdgertError, KeyError):
    """EDGERT_ERROR_NOT_BOUND: an input (or, with out=, an output) is missing."""
    status = "EDGERT_ERROR_NOT_BOUND"

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class ClosedError(ValueError):
    """The Bundle or Context was closed."""


_edgert._set_error_classes(
    [None, BundleIOError, InvalidBundleError, UnsupportedError, InvalidArgumentError,
     OutOfMemoryError, NotBoundError, None], ClosedError)

_DTYPES = ["float32", "float16", "int8", "uint8", "int16", "int32", "int64", "bool", "uint16",
           "uint32", "uint64", "float64", "bfloat16"]


def _np_dtype(code: int) -> np.dtype:
    name = _DTYPES[code]
    if name == "bfloat16":
        try:
            import ml_dtypes  # optional: bfloat16 arrays
            return np.dtype(ml_dtypes.bfloat16)
        except ImportError:
            return np.dtype("uint16")  # the bits
    return np.dtype(name)


class TensorInfo(NamedTuple):
    """An input or output of a bundle."""
    name: str
    dtype: np.dtype
    shape: Tuple[int, ...]
    size_bytes: int


def runtime_ports() -> List[str]:
    """The ports this runtime was built with, e.g. ['cpu', 'opencl']."""
    return [p.strip() for p in _edgert.runtime_ports().split(",") if p.strip()]


def signatures_supported() -> bool:
    """Whether this runtime checks Ed25519 bundle signatures (built with libsodium)."""
    return _edgert.signatures_supported()


def _key_bytes(key: Union[bytes, str, os.PathLike]) -> bytes:
    """A trusted key: 32 raw bytes, 64 hex digits, or the path of edgec keygen's KEYBASE.pub."""
    text = None
    if isinstance(key, (bytes, bytearray, memoryview)):
        raw = bytes(key)
        if len(raw) == 32:
            return raw
        text = raw.decode("ascii", "replace").strip()
    elif isinstance(key, (str, os.PathLike)):
        text = os.fspath(key)
        if not re.fullmatch(r"[0-9a-fA-F]{64}", text.strip()):
            try:
                with open(text, "r", encoding="ascii") as f:  # KEYBASE.pub: one line of hex
                    text = f.read()
            except (OSError, UnicodeDecodeError) as e:
                raise InvalidArgumentError(f"trusted key {key!r}: cannot read it: {e}") from None
    if text is None or not re.fullmatch(r"[0-9a-fA-F]{64}", text.strip()):
        raise InvalidArgumentError(f"trusted key {key!r}: expected 32 bytes, 64 hex digits or edgec keygen's .pub file")
    return bytes.fromhex(text.strip())


class Bundle(_edgert._Bundle):
    """An open, verified bundle.

    Bundle(source, trusted_keys=(), map_in_place=False)

    source: a path (str or os.PathLike) or the bundle's bytes (any bytes-like object; copied
    into aligned memory). trusted_keys: Ed25519 public keys (32 raw bytes, 64 hex digits or
    the path of edgec keygen's KEYBASE.pub); when given, the bundle must be signed by one of
    them (InvalidBundleError otherwise). map_in_place: use the file's pages in place (only for
    files nothing can change while open; see edgert.h).
    """

    def __init__(self, source: Union[str, os.PathLike, bytes, bytearray, memoryview],
                 trusted_keys: Sequence[Union[bytes, str, os.PathLike]] = (),
                 map_in_place: bool = False) -> None:
        keys = b"".join(_key_bytes(k) for k in trusted_keys)
        if isinstance(source, os.PathLike):
            source = os.fspath(source)
        super().__init__(source, keys, bool(map_in_place))
        self.inputs: List[TensorInfo] = [TensorInfo(n, _np_dtype(d), tuple(s), b) for n, d, s, b in self._tensors(False)]
        self.outputs: List[TensorInfo] = [TensorInfo(n, _np_dtype(d), tuple(s), b) for n, d, s, b in self._tensors(True)]

    @property
    def target(self) -> Dict[str, Any]:
        """The bundle's target: {'arch', 'cpu', 'features', 'port'}."""
        return self._target

    def context(self, threads: int = 1, allow_source_build: bool = False, device: int = 0) -> "Context":
        """A context (one arena; use it from one thread at a time). threads: split each kernel
        across this many cores (cpu port; 1: the calling thread). allow_source_build, device:
        OpenCL bundles (see edgert.h)."""
        return Context(self, threads, allow_source_build, device)

    def commands(self) -> List[Dict[str, Any]]:
        """The command queue: [{'name', 'is_launch', 'flops', 'bytes'}, ...]."""
        return [dict(name=n, is_launch=l, flops=f, bytes=b) for n, l, f, b in self._commands()]

    def reference(self) -> Optional[Tuple[Dict[str, np.ndarray], Dict[str, np.ndarray], float, float]]:
        """The reference data of `edgec compile --embed-reference`: (inputs, expected outputs,
        rtol, atol), or None when the bundle has none."""
        ins, outs, rtol, atol = {}, {}, 0.0, 0.0
        for is_out, infos, d in ((False, self.inputs, ins), (True, self.outputs, outs)):
            for i, t in enumerate(infos):
                r = self._reference(is_out, i)
                if r is None:
                    return None
                data, rtol, atol = r
                d[t.name] = np.frombuffer(data, dtype=t.dtype).reshape(t.shape).copy()
        return ins, outs, rtol, atol

    def __enter__(self) -> "Bundle":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        if self.closed:
            return "<edgert.Bundle (closed)>"
        return f"<edgert.Bundle port={self.port} inputs={[t.name for t in self.inputs]} outputs={[t.name for t in self.outputs]}>"


class Context(_edgert._Context):
    """A bundle's arena and command queue (Bundle.context()). One thread at a time: a second
    thread calling run() while one runs gets an InvalidArgumentError; use a context per thread.

    run(inputs, out=None, copy=False) -> dict
        inputs: {name: numpy array} with every input of the bundle and nothing else. An array
        of the input's dtype and shape in C order is bound in place (no copy: the runtime
        reads your memory); anything else raises InvalidArgumentError naming the input,
        unless copy=True (then it is converted with numpy.ascontiguousarray; the shape must
        still match). A missing input raises NotBoundError. The GIL is released during the run.
        out: {name: numpy array} for every output, writable, C-contiguous, of the output's
        dtype and shape: written in place and returned (no allocation). Without it, new arrays.
    """

    def __init__(self, bundle: Bundle, threads: int = 1, allow_source_build: bool = False, device: int = 0) -> None:
        super().__init__(bundle, int(threads), bool(allow_source_build), int(device))
        self.bundle = bundle

    def profile(self) -> List[Dict[str, Any]]:
        """Per-command times of the last run (set ctx.profiling = True first): one dict per
        command of the queue {'name', 'is_launch', 'ns', 'flops', 'bytes', 'gflops'}."""
        if not self.profiling:
            raise InvalidArgumentError("profile: set ctx.profiling = True and run first")
        times = self._command_times()
        cmds = self.bundle.commands()
        rows = []
        for c, ns in zip(cmds, times):
            c = dict(c, ns=ns)
            c["gflops"] = c["flops"] / ns if ns else 0.0
            rows.append(c)
        return rows

    def empty_outputs(self) -> Dict[str, np.ndarray]:
        """New arrays for every output, for run(..., out=...)."""
        return {t.name: np.empty(t.shape, t.dtype) for t in self.bundle.outputs}

    def self_test(self) -> Dict[str, Any]:
        """Runs the bundle on its embedded reference inputs (edgec compile --embed-reference) and
        compares with the expected outputs, as edgert-run --self-test does: an element passes
        when |got - expected| <= atol + rtol * |expected| (integers and bools: equal; NaN where
        NaN is expected). Returns {'ok': bool, 'rtol', 'atol', 'outputs': {name: {'ok',
        'max_abs', 'max_rel'}}}. A bundle without reference data: InvalidArgumentError."""
        ref = self.bundle.reference()
        if ref is None:
            raise InvalidArgumentError("self_test: the bundle has no reference data (edgec compile --embed-reference)")
        ins, expected, rtol, atol = ref
        got = self.run(ins)
        report: Dict[str, Any] = {"ok": True, "rtol": rtol, "atol": atol, "outputs": {}}
        for name, want in expected.items():
            g = got[name]
            if want.dtype.kind in "fV" or want.dtype.name == "bfloat16":
                w64, g64 = want.astype(np.float64), g.astype(np.float64)
                nan_w, nan_g = np.isnan(w64), np.isnan(g64)
                diff = np.abs(g64 - w64)
                diff[nan_w & nan_g] = 0.0
                ok_el = (diff <= atol + rtol * np.abs(w64)) | (nan_w & nan_g)
                ok_el &= ~(nan_w ^ nan_g)
                finite = np.isfinite(diff)
                max_abs = float(diff[finite].max()) if finite.any() and diff.size else 0.0
                with np.errstate(divide="ignore", invalid="ignore"):
                    rel = np.where(np.abs(w64) > 0, diff / np.abs(w64), 0.0)
                rel = rel[np.isfinite(rel)]
                max_rel = float(rel.max()) if rel.size else 0.0
                ok = bool(ok_el.all())
            else:
                ok = bool(np.array_equal(g, want))
                max_abs = float(np.abs(g.astype(np.float64) - want.astype(np.float64)).max()) if g.size else 0.0
                max_rel = 0.0
            report["outputs"][name] = {"ok": ok, "max_abs": max_abs, "max_rel": max_rel}
            report["ok"] &= ok
        return report

    def __enter__(self) -> "Context":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def prepare(bundle_path: Union[str, os.PathLike], out_path: Union[str, os.PathLike], device: int = 0,
            allow_source_build: bool = False) -> None:
    """OpenCL bundles, once on the device (edgert_prepare): build the bundle's programs with
    this device's driver and write out_path, the bundle plus the program binaries. A cpu
    bundle: InvalidArgumentError."""
    _edgert.prepare(os.fspath(bundle_path), os.fspath(out_path), int(device), bool(allow_source_build))
