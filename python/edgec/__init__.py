"""edgec: compile ONNX models into edgert bundles, from Python.

    import edgec
    bundle_bytes = edgec.compile("model.onnx", target="x86_64")
    edgec.compile(model_proto, target="x86_64", output="model.bundle", input_shape={"x": [1, 3, 224, 224]})

This module runs the edgec compiler executable shipped in the package (bin/edgec) as a
subprocess: the compiler (LLVM, protobuf, its global state and any crash) stays out of the
Python process, and what runs is exactly the tested command line. A compile error raises
CompileError with edgec's message, which names the ONNX node and its op type.
"""
from __future__ import annotations

import os
import subprocess
import tempfile
from typing import Any, Dict, List, Optional, Union

from ._version import __version__

__all__ = ["compile", "targets", "CompileError", "CompileWarning", "executable", "__version__"]


class CompileError(RuntimeError):
    """edgec refused or failed to compile the model. str(e): edgec's error message (naming the
    ONNX node where one is at fault); .node, .op_type: that node's name and op type when the
    message names one; .stderr: everything edgec wrote to stderr; .returncode."""

    def __init__(self, message: str, stderr: str = "", returncode: int = 1, node: Optional[str] = None,
                 op_type: Optional[str] = None) -> None:
        super().__init__(message)
        self.stderr = stderr
        self.returncode = returncode
        self.node = node
        self.op_type = op_type


class CompileWarning(UserWarning):
    """A `warning:` line of edgec (the model compiled)."""


def executable() -> str:
    """The path of the edgec compiler executable ($EDGEC_BINARY overrides it)."""
    env = os.environ.get("EDGEC_BINARY")
    if env:
        return env
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "edgec")
    if not os.access(path, os.X_OK):
        raise CompileError(f"edgec executable not found at {path} (a broken install of the edgec package)")
    return path


def targets() -> Dict[str, str]:
    """The targets edgec compiles for: {name: description} (edgec --list-targets)."""
    out = subprocess.run([executable(), "--list-targets"], capture_output=True, text=True, check=True).stdout
    result = {}
    for line in out.splitlines():
        if line.strip():
            name, _, desc = line.partition(" ")
            result[name] = desc.strip()
    return result


def _flag(key: str) -> str:
    return "--" + key.replace("_", "-")


def _save_npy(value: Any, tmp: str, stem: str) -> str:
    if isinstance(value, (str, os.PathLike)):
        return os.fspath(value)
    import numpy as np  # only when arrays are given
    path = os.path.join(tmp, f"{stem}.npy")
    np.save(path, np.asarray(value))
    return path


def _options(options: Dict[str, Any], tmp: str) -> List[str]:
    args: List[str] = []
    for key, value in options.items():
        if value is None or value is False:
            continue
        if key in ("opt_level", "O"):
            args.append(f"-O{int(value)}")
        elif isinstance(value, dict):  # input_shape={"x": [1, 3]}, const_input={"axes": array}, reference_*
            for name, v in value.items():
                if key == "input_shape":
                    v = ",".join(str(int(d)) for d in v)
                elif key in ("const_input", "reference_input", "reference_output"):
                    v = _save_npy(v, tmp, f"{key}_{len(args)}")
                args += [_flag(key), f"{name}={v}"]
        elif value is True:
            args.append(_flag(key))
        elif isinstance(value, (list, tuple)):
            for v in value:
                args += [_flag(key), os.fspath(v) if isinstance(v, os.PathLike) else str(v)]
        else:
            args += [_flag(key), os.fspath(value) if isinstance(value, os.PathLike) else str(value)]
    return args


def _error(stderr: str, returncode: int, temp_model: Optional[str] = None) -> CompileError:
    lines = [l for l in stderr.splitlines() if l.strip()]
    errs = [l for l in lines if "error" in l.lower()]
    message = (errs[-1] if errs else (lines[-1] if lines else f"edgec failed with exit code {returncode}")).strip()
    for prefix in ("edgec: ", "error: "):
        if message.startswith(prefix):
            message = message[len(prefix):]
    if temp_model:  # the model was given as bytes or a ModelProto: no path of the caller's to name
        message = message.replace(temp_model, "<model>")
    import re
    m = re.search(r"node '([^']*)' \(([^)]*)\)", message)
    node, op_type = (m.group(1), m.group(2)) if m else (None, None)
    return CompileError(message, stderr=stderr, returncode=returncode, node=node, op_type=op_type)


def _refuse_unloaded_external_data(model: Any) -> None:
    """A ModelProto loaded with load_external_data=False names weight files relative to a folder
    it does not carry: written to a temporary file, edgec could not find them. Say so up front."""
    graphs = [model.graph]
    while graphs:
        g = graphs.pop()
        tensors = list(g.initializer)
        for node in g.node:
            for a in node.attribute:
                tensors += ([a.t] if a.HasField("t") else []) + list(a.tensors)
                graphs += ([a.g] if a.HasField("g") else []) + list(a.graphs)
        for t in tensors:
            if t.data_location == 1:  # TensorProto.EXTERNAL
                where = next((e.value for e in t.external_data if e.key == "location"), "?")
                raise ValueError(
                    f"compile: tensor '{t.name}' keeps its data in the external file '{where}', which an "
                    "onnx.ModelProto does not carry: pass the model's path instead, or load it with "
                    "onnx.load(path) (load_external_data=True)")


def compile(model: Any, target: str = "x86_64", output: Optional[Union[str, os.PathLike]] = None,
            **options: Any) -> Union[bytes, str]:
    """Compiles an ONNX model for `target` (see targets()).

    model: a path (str or os.PathLike), the model's bytes, or an onnx.ModelProto.
    output: where to write the bundle; returns that path. Without it, returns the bundle's bytes.
    options: edgec compile's flags, by name with '_' for '-': opt_level=2 (-O2),
      input_shape={"x": [1, 3, 224, 224]}, const_input={"axes": array_or_npy_path},
      winograd="auto", precision="bf16", tune=True, tune_cache=path, embed_reference=True,
      reference_input={...}, reference_rtol=1e-3, sign=KEYBASE.key, dump_kernels=path, ...
      (True: the flag alone; a list: the flag repeated).
    Raises CompileError (edgec's message, naming the ONNX node at fault); ValueError for a ModelProto
    loaded without its external data (load_external_data=False).
    """
    with tempfile.TemporaryDirectory(prefix="edgec-") as tmp:
        model_path_given = isinstance(model, (str, os.PathLike))
        if model_path_given:
            model_path = os.fspath(model)
        else:
            if hasattr(model, "SerializeToString"):  # onnx.ModelProto (onnx is not imported here)
                _refuse_unloaded_external_data(model)
                data = model.SerializeToString()
            elif isinstance(model, (bytes, bytearray, memoryview)):
                data = bytes(model)
            else:
                raise TypeError(f"compile: model must be a path, bytes or onnx.ModelProto, not {type(model).__name__}")
            model_path = os.path.join(tmp, "model.onnx")
            with open(model_path, "wb") as f:
                f.write(data)
        out_path = os.fspath(output) if output is not None else os.path.join(tmp, "model.bundle")
        cmd = [executable(), "compile", model_path, "-o", out_path, "--target", target] + _options(options, tmp)
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise _error(proc.stderr, proc.returncode, None if model_path_given else model_path)
        for line in proc.stderr.splitlines():  # e.g. an output compiled with its computed shape
            if "warning:" in line:
                import warnings
                warnings.warn(line.strip(), CompileWarning, stacklevel=2)
        if output is not None:
            return out_path
        with open(out_path, "rb") as f:
            return f.read()


def main() -> None:
    """The edgec console script: the compiler executable with these arguments."""
    import sys
    path = executable()
    os.execv(path, ["edgec"] + sys.argv[1:])
