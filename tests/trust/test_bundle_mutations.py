#!/usr/bin/env python3
"""Every integer field of real bundles' FlatBuffers rewritten, the hash repaired: refused, or run
without a crash (docs/bundle-trust.md).

What someone who can edit a bundle file but not its code would try: each integer of the
FlatBuffer (entry points, section offsets / sizes / kinds / formats, buffer offsets, sizes,
dtypes, shapes, indices, command arguments, kernel functions and contracts, launch shapes,
counts, enums) set to boundary values (0, 1, the type's maximum) and shifted ones (+-1, +-16,
+64, x2, +4096), and the Target's feature list lowered, one edit per mutant. The FlatBuffer is
read and written with the FlatBuffers object API generated from schema/bundle.fbs (flatc
--python --gen-object-api; no byte offsets here), the file laid out again and its content hash
repaired (edge-bundle-lie), and each mutant run by $EDGERT_RUN on the original inputs.

The mutants are written as the stronger attacker would: with the code directory's digest of the
FlatBuffer rewritten too (edge-bundle-lie --redigest), so that every edit reaches every other
rule of the verifier and, when accepted, runs. Every mutant must end in one of:
  refused   exit 1 with a message (the verifier named what is wrong), or
  ran       exit 0, outputs of the original dtypes and shapes: the same values, or others when
            the edit fed a kernel another buffer of the same type and size (counted by field);
            such a mutant with only the content hash repaired (the attacker who leaves the code
            section alone) must then be refused by the digest.
A signal, a sanitizer report (ctest runs this with the ASan + guard-page edgert-run on x86-64,
so a kernel touching memory outside its buffers faults), a hang or any other exit fails.
The unmodified bundle, packed the same way, must run to the original outputs (so the packing
cannot make every mutant fail for the wrong reason), and some mutants must be refused and some
run.

  test_bundle_mutations.py [case-name substring ...]
  EDGE_MUTATIONS=N  mutants per bundle (default 400; 0: every one). The control-flow fields
                    (sections, functions, kernels, command kernels, the target) are always all
                    tried; the rest is a seeded sample.
  EDGE_MUTATION_MODELS=cnn,grouped,driving  which bundles (default: all three)"""
import concurrent.futures
import itertools
import os
import random
import re
import shutil
import struct
import subprocess
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import numpy as np  # noqa: E402
import edge_testlib as lib  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "samples" / "driving_model"))

suite = lib.Suite("test_bundle_mutations")
WORK = lib.work_dir("bundle_mutations")
HEADER = struct.Struct("<8sIIQQQQQQ")  # schema/bundle_header.h: BundleHeader
DATA_ALIGNMENT = 4096
# Fields whose edit could move control flow or the code: every edit of them is tried.
CONTROL_FIELDS = ("sections", "kernels", "target", "commands[*].kernel", "commands[*].kind")


def schema_module():
    """edge.bundle.Bundle from schema/bundle.fbs (flatc's Python object API), generated now."""
    out = WORK / "fbpy"
    if not (out / "edge" / "bundle" / "Bundle.py").exists():
        flatc = shutil.which(os.environ.get("FLATC", "flatc"))
        assert flatc, "flatc is not on PATH (scripts/setup.sh installs flatbuffers-compiler)"
        lib.run_cmd([flatc, "--python", "--gen-object-api", "-o", out, ROOT / "schema" / "bundle.fbs"])
    sys.path.insert(0, str(out))
    from edge.bundle import Bundle  # noqa: E402
    return Bundle


def lie_tool():
    path = os.environ.get("EDGE_BUNDLE_LIE")
    assert path and Path(path).exists(), "EDGE_BUNDLE_LIE is not set to the edge-bundle-lie tool"
    return path


class Original:
    """A compiled bundle split into header, FlatBuffer (as objects) and data blob, with its inputs
    and the outputs of an unmodified run."""

    def __init__(self, name, bundle: Path, inputs: dict, Bundle):
        raw = bundle.read_bytes()
        magic, version, header_size, fb_offset, fb_size, data_offset, data_size, _, _ = HEADER.unpack_from(raw)
        self.name, self.version = name, version
        self.data = raw[data_offset:data_offset + data_size]
        self.root = Bundle.BundleT.InitFromObj(Bundle.Bundle.GetRootAs(raw[fb_offset:fb_offset + fb_size], 0))
        self.Bundle = Bundle
        self.inputs = lib.write_inputs(inputs, WORK / name / "inputs")
        self.expected = self.run(bundle, WORK / name / "expected")
        assert self.expected["status"] == "ran", f"{name}: the compiled bundle does not run: {self.expected}"

    def file_bytes(self, root) -> bytes:
        """The bundle file for a (mutated) FlatBuffer root: header, FlatBuffer, padding, data.
        The content hash is left 0 (edge-bundle-lie --rehash fills it)."""
        import flatbuffers
        b = flatbuffers.Builder(1 << 16)
        b.Finish(root.Pack(b), file_identifier=b"EDGB")
        fb = bytes(b.Output())
        data_offset = (64 + len(fb) + DATA_ALIGNMENT - 1) // DATA_ALIGNMENT * DATA_ALIGNMENT
        header = HEADER.pack(b"EDGEBNDL", self.version, 64, 64, len(fb), data_offset, len(self.data), 0, 0)
        return header + fb + bytes(data_offset - 64 - len(fb)) + self.data

    def run(self, bundle: Path, out: Path) -> dict:
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        try:
            p = subprocess.run([str(lib.find_tool("edgert-run")), str(bundle), *map(str, self.inputs),
                                "--output-dir", str(out)], capture_output=True, text=True, errors="replace",
                               timeout=600)
        except subprocess.TimeoutExpired:
            return {"status": "hang"}
        err = p.stderr
        # A report, not ASan's warning that an allocation failed (allocator_may_return_null:
        # the runtime gets null and refuses, e.g. an arena of 2^63 bytes).
        if p.returncode < 0 or re.search(r"ERROR: \w*Sanitizer|runtime error:", err):
            return {"status": "crash", "rc": p.returncode, "stderr": err[-3000:]}
        if p.returncode == 1 and "edgert-run:" in err:
            return {"status": "refused", "message": err.strip().splitlines()[-1]}
        if p.returncode != 0:
            return {"status": "odd exit", "rc": p.returncode, "stderr": err[-3000:]}
        outputs = {f.stem: np.load(f) for f in sorted(out.glob("*.npy"))}
        shutil.rmtree(out, ignore_errors=True)
        return {"status": "ran", "outputs": outputs}


def integer_slots(obj, path=""):
    """(path, holder, attribute or None, index or None, value, numpy dtype or None) for every
    integer of the object tree: scalar fields, elements of integer vectors (numpy arrays in the
    object API, made writable copies here) and struct fields."""
    for attr, value in sorted(vars(obj).items()):
        p = f"{path}.{attr}" if path else attr
        if isinstance(value, bool) or value is None or isinstance(value, (str, bytes, float)):
            continue
        if isinstance(value, np.ndarray) and not value.flags.writeable:
            value = value.copy()
            setattr(obj, attr, value)
        if isinstance(value, int):
            yield (p, obj, attr, None, value, None)
        elif isinstance(value, np.ndarray) and np.issubdtype(value.dtype, np.integer):
            for i, v in enumerate(value.tolist()):
                yield (f"{p}[{i}]", value, None, i, v, value.dtype)
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, int) and not isinstance(item, bool):
                    yield (f"{p}[{i}]", value, None, i, item, None)
                elif hasattr(item, "__dict__"):
                    yield from integer_slots(item, f"{p}[{i}]")
        elif hasattr(value, "__dict__"):
            yield from integer_slots(value, p)


def candidates(v, dtype):
    """Boundary and shifted values for an integer v of numpy dtype (None: find the width by packing)."""
    want = [0, 1, v - 1, v + 1, v + 16, v - 16, v + 64, 2 * v, v + 4096, (1 << 31) - 1, (1 << 32) - 1, (1 << 63) - 1]
    if dtype is not None:
        info = np.iinfo(dtype)
        want.append(int(info.max))
        want = [w for w in want if info.min <= w <= info.max]
    else:
        want = [w for w in want if w >= -(1 << 63)]
    return sorted({w for w in want if w != v})


def field_kind(path):
    """The field a slot belongs to, without indices: 'buffers[*].offset'."""
    out, depth = [], 0
    for ch in path:
        if ch == "[":
            depth += 1
            out.append("[*")
        elif ch == "]":
            depth -= 1
            out.append("]")
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def mutants(orig: Original, budget: int, rng: random.Random):
    """(description, root) for one edit each, control fields all, the rest sampled."""
    slots = list(integer_slots(orig.root))
    edits = []
    for path, holder, attr, index, value, dtype in slots:
        for c in candidates(value, dtype):
            edits.append((path, holder, attr, index, value, c))
    control = [e for e in edits if field_kind(e[0]).startswith(CONTROL_FIELDS)]
    rest = [e for e in edits if not field_kind(e[0]).startswith(CONTROL_FIELDS)]
    if budget and len(control) + len(rest) > budget:  # two thirds for the control-flow fields
        control = rng.sample(control, min(len(control), budget * 2 // 3))
        rest = rng.sample(rest, min(len(rest), budget - len(control)))
    print(f"    {orig.name}: {len(slots)} integer fields, {len(edits)} edits; trying {len(control)} control-flow "
          f"edits and {len(rest)} others")
    for path, holder, attr, index, value, new in control + rest:
        def setter(x, holder=holder, attr=attr, index=index):
            if attr is not None:
                setattr(holder, attr, x)
            else:
                holder[index] = x
        setter(new)
        try:
            yield f"{path}: {value} -> {new}", field_kind(path), orig.file_bytes(orig.root)
        except (struct.error, OverflowError, ValueError, TypeError):
            pass  # the field is narrower than this value: not representable in the file
        finally:
            setter(value)
    # The target's feature list lowered: each feature dropped, and none at all.
    features = list(orig.root.target.features or [])
    for drop in range(len(features)):
        orig.root.target.features = features[:drop] + features[drop + 1:]
        yield f"target.features without {features[drop]!r}", "target.features", orig.file_bytes(orig.root)
    orig.root.target.features = []
    yield "target.features emptied", "target.features", orig.file_bytes(orig.root)
    orig.root.target.features = features


def same_outputs(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(a[k].dtype == b[k].dtype and a[k].shape == b[k].shape and
                                        a[k].tobytes() == b[k].tobytes() for k in a)


def same_types(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(a[k].dtype == b[k].dtype and a[k].shape == b[k].shape for k in a)


def mutate_and_run(orig: Original):
    budget = int(os.environ.get("EDGE_MUTATIONS", "400"))
    rng = random.Random(20261203)
    work = WORK / orig.name / "mutants"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    # The unmodified FlatBuffer through the same packing: must run to the same outputs.
    identity = work / "identity.bundle"
    identity.write_bytes(orig.file_bytes(orig.root))
    lib.run_cmd([lie_tool(), "--redigest", identity])
    res = orig.run(identity, work / "identity_out")
    assert res["status"] == "ran" and same_outputs(res["outputs"], orig.expected["outputs"]), \
        f"the repacked, unmodified bundle does not run as the original: {res}"

    def run_one(job):
        what, field, path, data = job
        res = orig.run(path, path.with_suffix(".out"))
        path.unlink()
        return what, field, res, data

    def refused_without_digest(data: bytes, path: Path) -> str:
        """The attacker of the issue (content hash repaired, the code section untouched): the
        code directory's digest must refuse what the digest-rewriting attacker ran."""
        path.write_bytes(data)
        lib.run_cmd([lie_tool(), "--rehash", path])
        res = orig.run(path, path.with_suffix(".out"))
        path.unlink()
        if res["status"] == "refused" and "compiled with another FlatBuffer" in res["message"]:
            return ""
        return f"{res['status']}: {res.get('message') or res.get('stderr', '')[-300:]}"

    # In batches: each mutant is a whole bundle file (weights included), written, hashed, run
    # and deleted before the next batch is written.
    workers = max(1, min(4, os.cpu_count() or 1))
    counts, differ, failures, examples = Counter(), Counter(), [], []
    total = 0
    edits = mutants(orig, budget, rng)
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        while True:
            batch = []
            for what, field, data in itertools.islice(edits, 4 * workers):
                path = work / f"m{total:05d}.bundle"
                path.write_bytes(data)
                batch.append((what, field, path, data))
                total += 1
            if not batch:
                break
            lib.run_cmd([lie_tool(), "--redigest", *[j[2] for j in batch]])
            for what, field, res, data in pool.map(run_one, batch):
                status = res["status"]
                if status == "ran":
                    if same_outputs(res["outputs"], orig.expected["outputs"]):
                        status = "ran, same outputs"
                    elif same_types(res["outputs"], orig.expected["outputs"]):
                        status = "ran, other values"
                        differ[field] += 1
                        examples.append(what)
                        why = refused_without_digest(data, work / f"nodigest{total:05d}.bundle")
                        if why:
                            failures.append(f"{what}: other outputs, and with only the content hash repaired: {why}")
                    else:
                        status = "ran, wrong output types"
                counts[status] += 1
                if status in ("crash", "hang", "odd exit", "ran, wrong output types"):
                    failures.append(f"{what}: {status} {res.get('rc', '')}\n{res.get('stderr', '')}")
    print(f"    {orig.name}: {total} mutants: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
    if differ:
        print(f"    {orig.name}: with the digest rewritten too, ran to other values after editing " +
              ", ".join(f"{f} ({n})" for f, n in differ.most_common()) + "; e.g. " + "; ".join(examples[:8]) +
              "; each refused by the code directory's digest with only the content hash repaired")
    assert not failures, f"{len(failures)} mutants of {orig.name} crashed, hung or misbehaved:\n" + \
        "\n".join(failures[:10])
    assert counts["refused"] > 0 and counts["ran, same outputs"] > 0, \
        f"{orig.name}: expected both refusals and runs among the mutants: {dict(counts)}"
    shutil.rmtree(work, ignore_errors=True)


def original(name, model, inputs, Bundle):
    bundle = WORK / name / f"{name}.bundle"
    lib.compile_model(model, bundle, timeout=900)
    return Original(name, bundle, inputs, Bundle)


def models():
    chosen = os.environ.get("EDGE_MUTATION_MODELS", "cnn,grouped,driving").split(",")
    return [m for m in ("cnn", "grouped", "driving") if m in chosen]


def cnn_case(name, variant):
    def case():
        if name not in models():
            raise lib.Skip(f"EDGE_MUTATION_MODELS leaves out {name}")
        Bundle = schema_module()
        model = lib.make_cnn(seed=7, variant=variant, size=16, classes=5)
        x = np.random.default_rng(7).standard_normal((1, 3, 16, 16)).astype(np.float32)
        mutate_and_run(original(name, model, {model.graph.input[0].name: x}, Bundle))
    case.__name__ = f"{name}_mutants_are_refused_or_run_safely"
    return case


suite.case(cnn_case("cnn", "basic"))
suite.case(cnn_case("grouped", "grouped"))


@suite.case
def driving_model_mutants_are_refused_or_run_safely():
    if "driving" not in models():
        raise lib.Skip("EDGE_MUTATION_MODELS leaves out driving")
    import build_model as bm
    Bundle = schema_module()
    model = bm.finish(bm.build("fp32"), "fp32")
    mutate_and_run(original("driving", model, bm.random_inputs("fp32", 1), Bundle))


if __name__ == "__main__":
    sys.exit(suite.main())
