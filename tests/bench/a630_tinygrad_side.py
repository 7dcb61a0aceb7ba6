#!/usr/bin/env python3
"""The tinygrad half of a630_vs_tinygrad.py; runs inside the virtual environment that script
creates (tinygrad is never a dependency of edgec / edgert).

  python a630_tinygrad_side.py consts MODEL.onnx CONSTS.pkl   (DEV=CPU)
  python a630_tinygrad_side.py kernels MODEL.onnx CONSTS.pkl OUT.json
      (DEV=NULL:IR3:a630,IMAGE_PITCH_ALIGNMENT=64 FLOAT16=1 IMAGE=2 NOLOCALS=1 JIT=2)

tinygrad's ONNX runner turns some tensors into Python values on the host (Reshape shapes,
Slice bounds, Gather indices). On the NULL device kernels never run, so those values are first
computed on the CPU device and handed to the NULL run. The NULL run is openpilot's way of
compiling (TinyJit with prune: weight-only kernels run once at capture and are not part of a
run); the kernels of the third call, each with its a630 machine code from tinygrad's IR3
renderer (Mesa's ir3 through the tinymesa wheel), launch dims and Mesa's disassembly, go to
OUT.json."""
import contextlib, io, json, os, pickle, re, sys

import numpy as np


def make_inputs(runner):
  from tinygrad import Tensor, Device
  from tinygrad.dtype import _to_np_dtype
  rng = np.random.default_rng(0)
  inputs = {}
  for name, spec in runner.graph_inputs.items():
    shape = tuple(s if isinstance(s, int) else 1 for s in spec.shape)
    # Random values: an all-zero input can be folded into a constant.
    inputs[name] = Tensor((rng.random(shape) * 8).astype(_to_np_dtype(spec.dtype)), device=Device.DEFAULT).realize()
  return inputs


def consts(model, out):
  from tinygrad.nn.onnx import OnnxRunner
  runner = OnnxRunner(model)
  inputs = make_inputs(runner)
  runner(inputs)  # builds the lazy graph; host values are computed on demand
  pickle.dump(dict(runner._python_const_cache), open(out, "wb"))


def kernels(model, consts_file, out):
  from tinygrad import Device, TinyJit, Context
  from tinygrad.runtime import ops_null
  from tinygrad.runtime.support.compiler_mesa import IR3Compiler, disas_adreno
  from tinygrad.nn.onnx import OnnxRunner

  # The NULL device keeps what is copied in (host reads of constants), runs no kernel.
  alloc = ops_null.NullAllocator
  alloc._alloc = lambda self, size, options: memoryview(bytearray(size))
  alloc._copyin = lambda self, dest, src: dest.__setitem__(slice(0, src.nbytes), src.cast("B"))
  alloc._copyout = lambda self, dest, src: dest.__setitem__(slice(None), src[:dest.nbytes])
  alloc._offset = lambda self, buf, size, offset: buf[offset:offset + size]
  calls, recording = [], [False]
  init, call = ops_null.NullProgram.__init__, ops_null.NullProgram.__call__

  def new_init(self, dev, obj):
    init(self, dev, obj)
    self._edge_lib = obj.lib

  def new_call(self, *bufs, global_size=(1, 1, 1), local_size=(1, 1, 1), **kw):
    if recording[0]: calls.append((self.name, self._edge_lib, tuple(global_size), tuple(local_size or (1, 1, 1))))
    return call(self, *bufs, global_size=global_size, local_size=local_size, **kw)

  ops_null.NullProgram.__init__, ops_null.NullProgram.__call__ = new_init, new_call
  # Parsed on the CPU device: the parser turns scalar initializers into Python numbers with a
  # kernel (a float16 one is cast first), which would read back nothing on NULL.
  with Context(DEV="CPU"):
    runner = OnnxRunner(model)
  runner.to(Device.DEFAULT)
  runner._python_const_cache.update(pickle.load(open(consts_file, "rb")))
  inputs = make_inputs(runner)

  @TinyJit(prune=True)
  def run(**kw):
    return next(iter(runner({k: v.to(Device.DEFAULT) for k, v in kw.items()}).values()))

  for i in range(3):
    recording[0] = i == 2
    with Context(OPENPILOT_HACKS=1):
      run(**inputs).realize()
  result = []
  for name, lib, gs, ls in calls:
    v, cs, imm, code = IR3Compiler.unpack_lib(lib)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
      disas_adreno(code)
    # "0007 [4210000b_000b1007] add.u r2.w, ..." -> "add.u r2.w, ..."
    text = "\n".join(re.sub(r"^\d+ \[[0-9a-f_]+\] ", "", line) for line in buf.getvalue().splitlines() if line.strip())
    result.append({"name": name, "global_size": list(gs), "local_size": list(ls), "code_bytes": len(code),
                   "full_regs": v.info.max_reg + 1, "half_regs": v.info.max_half_reg + 1,
                   "instructions": v.info.instrs_count, "disasm": text,
                   # where ir3 put the immediates in the constant file (dwords): loop bounds
                   "immediates_dword": cs.allocs.max_const_offset_vec4 * 4,
                   "immediates": [int.from_bytes(imm[i:i + 4], "little") for i in range(0, len(imm), 4)]})
  json.dump({"kernels": result}, open(out, "w"))
  print(f"tinygrad: {len(result)} kernels per run")


if __name__ == "__main__":
  if sys.argv[1] == "consts": consts(sys.argv[2], sys.argv[3])
  else: kernels(sys.argv[2], sys.argv[3], sys.argv[4])
