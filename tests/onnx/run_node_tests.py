#!/usr/bin/env python3
"""ONNX backend conformance runner: the node tests shipped in the onnx wheel
(onnx/backend/test/data/node/<test>/model.onnx + test_data_set_*/{input,output}_N.pb),
each compiled with `edgec compile` and run with `edgert-run`, outputs compared with the
expected TensorProtos (floats: rtol 1e-3, atol 1e-5; ints/bools: exact; NaN positions match).

    python3 tests/onnx/run_node_tests.py [--filter REGEX] [--jobs 2] [--timeout 120]
        [--report docs/conformance.md] [--expect tests/onnx/passing_tests.txt] [--update-expect]

Tests are classified as in scope or excluded (see EXCLUSION_RULES): a test is excluded
if its model uses string, sequence, optional or map values, a training op, a random-number
op, control flow, or a float8 / float4 / int4 / uint4 / complex element type. Excluded
tests still run; the report gives the pass count over all tests and over the tests in
scope.

Exit status: with --expect, 1 only if a listed test no longer passes (or is gone); newly
passing tests are printed so the list can be updated (--update-expect rewrites it). Without
--expect, 1 if any selected test fails. Tools come from EDGEC / EDGERT_RUN or build/."""
from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import numpy as np  # noqa: E402
import edge_testlib as lib  # noqa: E402

RTOL, ATOL = 1e-3, 1e-5

# What takes a test out of scope for the conformance percentage (the project's issue 3:
# "every test except those whose model uses string, sequence, optional or map values,
# training ops, random-number ops, control flow, or the element types float8, float4,
# int4, uint4 and complex"). bfloat16 is not excluded.
EXCLUSION_RULES = [
    ("string", "a string tensor (input, output, intermediate value, initializer, constant or Cast target)"),
    ("sequence", "a sequence value (sequence_type, or a Sequence*/SplitToSequence/ConcatFromSequence op)"),
    ("optional", "an optional value (optional_type, or an Optional/OptionalHasElement/OptionalGetElement op)"),
    ("map", "a map value"),
    ("training", "a training op (Adam, Adagrad, Momentum, Gradient)"),
    ("random", "a random-number op (RandomUniform, RandomNormal, RandomUniformLike, RandomNormalLike, "
               "Bernoulli, Multinomial)"),
    ("control flow", "control flow (If, Loop, Scan)"),
    ("float8", "a float8 element type (FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ)"),
    ("float4", "a float4 element type (FLOAT4E2M1)"),
    ("int4", "an int4 element type"),
    ("uint4", "a uint4 element type"),
    ("complex", "a complex element type (COMPLEX64, COMPLEX128)"),
]
# Why the remaining failures in scope are expected (shown in the report next to the test).
KNOWN_FAILURES = [
    (r"^test_qlinearmatmul_.*int8", "the reference data wraps int8 overflow; the spec and onnxruntime saturate, as edgec does"),
    (r"^test_averagepool_3d_dilations_large_count_include_pad_is_1_ceil_mode_is_True$",
     "the reference counts the ceil_mode overhang in the divisor; onnxruntime and PyTorch do not, nor does edgec"),
    (r"^test_training_dropout(_default)?(_mask)?$", "training-mode Dropout with ratio > 0 draws a random mask"),
    (r"^test_(nonmaxsuppression|nonzero|unique)_", "the output shape depends on the input values (no static shape)"),
    (r"^test_image_decoder_", "decodes JPEG/PNG/... byte streams (not tensor math)"),
    (r"BFLOAT16", "bfloat16 needs a dtype (or a bitcast primitive) in the graph and the code generator"),
]
_TRAINING_OPS = {"Adam", "Adagrad", "Momentum", "Gradient"}
_RANDOM_OPS = {"RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike", "Bernoulli", "Multinomial"}
_CONTROL_FLOW_OPS = {"If", "Loop", "Scan"}
_SEQUENCE_OPS = {"SequenceConstruct", "SequenceAt", "SequenceEmpty", "SequenceInsert", "SequenceErase",
                 "SequenceLength", "SequenceMap", "SplitToSequence", "ConcatFromSequence"}
_OPTIONAL_OPS = {"Optional", "OptionalHasElement", "OptionalGetElement"}


def _excluded_elem_types():
    from onnx import TensorProto as TP
    kinds = {"STRING": "string", "FLOAT8E4M3FN": "float8", "FLOAT8E4M3FNUZ": "float8", "FLOAT8E5M2": "float8",
             "FLOAT8E5M2FNUZ": "float8", "FLOAT4E2M1": "float4", "INT4": "int4", "UINT4": "uint4",
             "COMPLEX64": "complex", "COMPLEX128": "complex"}
    return {getattr(TP, name): kind for name, kind in kinds.items() if hasattr(TP, name)}


def exclusion_reasons(model) -> list[str]:
    """The EXCLUSION_RULES keys that apply to an onnx ModelProto (empty: in scope). Looks at
    every value's type after shape inference (graph inputs, outputs, intermediates, also in
    subgraphs and model-local functions), initializers, tensor attributes, Cast targets and
    the op types."""
    import onnx
    bad_types = _excluded_elem_types()
    why = set()
    try:
        model = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 - classify what the model declares
        pass

    def check_type(tp):
        kind = tp.WhichOneof("value")
        if kind == "tensor_type":
            if tp.tensor_type.elem_type in bad_types:
                why.add(bad_types[tp.tensor_type.elem_type])
        elif kind in ("sequence_type", "optional_type", "map_type"):
            why.add(kind.split("_")[0])
            inner = {"sequence_type": lambda: tp.sequence_type.elem_type,
                     "optional_type": lambda: tp.optional_type.elem_type,
                     "map_type": lambda: tp.map_type.value_type}[kind]()
            check_type(inner)

    def check_nodes(nodes):
        for n in nodes:
            if n.op_type in _TRAINING_OPS:
                why.add("training")
            if n.op_type in _RANDOM_OPS:
                why.add("random")
            if n.op_type in _CONTROL_FLOW_OPS:
                why.add("control flow")
            if n.op_type in _SEQUENCE_OPS:
                why.add("sequence")
            if n.op_type in _OPTIONAL_OPS:
                why.add("optional")
            for a in n.attribute:
                if a.type == onnx.AttributeProto.TENSOR and a.t.data_type in bad_types:
                    why.add(bad_types[a.t.data_type])
                if a.type == onnx.AttributeProto.STRINGS and n.op_type == "Constant":
                    why.add("string")
                if a.name == "to" and a.type == onnx.AttributeProto.INT and a.i in bad_types:
                    why.add(bad_types[a.i])
                if a.type == onnx.AttributeProto.GRAPH:
                    check_graph(a.g)
                for sub in a.graphs:
                    check_graph(sub)

    def check_graph(g):
        for vi in list(g.input) + list(g.output) + list(g.value_info):
            check_type(vi.type)
        for t in g.initializer:
            if t.data_type in bad_types:
                why.add(bad_types[t.data_type])
        check_nodes(g.node)

    check_graph(model.graph)
    for f in model.functions:
        check_nodes(f.node)
    order = [k for k, _ in EXCLUSION_RULES]
    return sorted(why, key=order.index)


def node_test_root() -> Path:
    import onnx
    return Path(onnx.__file__).resolve().parent / "backend" / "test" / "data" / "node"


def discover(root: Path, pattern: str | None):
    rx = re.compile(pattern) if pattern else None
    tests = sorted(p.name for p in root.iterdir() if (p / "model.onnx").is_file())
    return [t for t in tests if rx is None or rx.search(t)]


def _pb_index(p: Path) -> int:
    return int(p.stem.split("_")[-1])


def load_test_case(test_dir: Path):
    """Returns (model, input_names, output_names, datasets) where each dataset is
    (name, {input: ndarray}, {output: ndarray}). Raises NotImplementedError for
    non-tensor (sequence / optional / map) inputs or outputs."""
    import onnx
    from onnx import numpy_helper
    model = onnx.load(str(test_dir / "model.onnx"))
    inits = {i.name for i in model.graph.initializer}
    graph_inputs = [i for i in model.graph.input if i.name not in inits]
    graph_outputs = list(model.graph.output)
    for vi in graph_inputs + graph_outputs:
        kind = vi.type.WhichOneof("value")
        if kind != "tensor_type":
            raise NotImplementedError(f"runner: {vi.name!r} has {kind}, not a tensor (not supported by the runner)")
    datasets = []
    for ds in sorted(test_dir.glob("test_data_set_*"), key=lambda p: _pb_index(p)):
        def read(prefix, infos):
            files = sorted(ds.glob(f"{prefix}_*.pb"), key=_pb_index)
            if len(files) > len(infos):
                raise NotImplementedError(f"runner: {ds.name} has {len(files)} {prefix}s, model has {len(infos)}")
            values = {}
            for f, vi in zip(files, infos):
                t = onnx.TensorProto()
                t.ParseFromString(f.read_bytes())
                values[vi.name] = numpy_helper.to_array(t)
            return values
        datasets.append((ds.name, read("input", graph_inputs), read("output", graph_outputs)))
    return model, [i.name for i in graph_inputs], [o.name for o in graph_outputs], datasets


def first_line(text: str) -> str:
    for line in (text or "").splitlines():
        line = line.strip()
        if line:
            return line[:300]
    return ""


def classify(test: str, root: str) -> list[str]:
    import onnx
    try:
        return exclusion_reasons(onnx.load(str(Path(root) / test / "model.onnx")))
    except Exception as e:  # noqa: BLE001 - an unreadable model is in scope (and fails)
        print(f"warning: {test}: cannot classify: {e}", file=sys.stderr)
        return []


def run_one(test: str, root: str, work: str, timeout: float, edgec: str, edgert_run: str):
    """Worker: returns (test, status, reason, seconds, exclusion reasons). status: pass | fail."""
    test, status, reason, secs = _run_one(test, root, work, timeout, edgec, edgert_run)
    # Keep reasons short and machine-independent: no absolute paths.
    for prefix in (str(Path(root) / test) + "/", str(Path(work) / test) + "/"):
        reason = reason.replace(prefix, "")
    return test, status, reason, secs, classify(test, root)


def _run_one(test: str, root: str, work: str, timeout: float, edgec: str, edgert_run: str):
    t0 = time.time()
    test_dir = Path(root) / test
    wdir = Path(work) / test
    if wdir.exists():
        shutil.rmtree(wdir)
    wdir.mkdir(parents=True)
    try:
        try:
            _, in_names, out_names, datasets = load_test_case(test_dir)
        except NotImplementedError as e:
            return test, "fail", str(e), time.time() - t0
        if not datasets:
            return test, "fail", "runner: no test_data_set_*", time.time() - t0
        bundle = wdir / "model.bundle"
        frozen = []  # inputs edgec needs as constants (shapes, axes, pads, counts)
        notes = set()

        def compile_for(inputs):
            cmd = [edgec, "compile", test_dir / "model.onnx", "-o", bundle, "-q"]
            for name in frozen:
                path = wdir / f"const_{len(cmd)}.npy"
                np.save(path, inputs[name])
                cmd += ["--const-input", f"{name}={path}"]
            lib.run_tool(cmd, timeout=timeout)

        def failure(stage, e):
            where = "timeout" if e.returncode is None else ("crash" if e.returncode < 0 else stage)
            detail = e.first_line() if e.returncode is not None else str(e).splitlines()[0]
            return test, "fail", f"{where}: {detail}", time.time() - t0

        # A model that takes its shapes, axes or counts as inputs compiles once they are
        # fixed: edgec --const-input, as a user with such a model would do. Freeze the
        # graph inputs edgec names as needing to be constant, one at a time.
        while True:
            try:
                compile_for(datasets[0][1])
                break
            except lib.ToolError as e:
                m = re.search(r"\('([^']*)'\) must be a constant", e.first_line())
                if not m:
                    return failure("compile", e)
                if m.group(1) in in_names and m.group(1) not in frozen:
                    frozen.append(m.group(1))
                    continue
                # A value computed from inputs: freeze the integer inputs it may come from.
                more = [n for n in in_names if n not in frozen and np.asarray(datasets[0][1][n]).dtype.kind in "iu"]
                if not more:
                    return failure("compile", e)
                frozen += more
        for ds_name, inputs, expected in datasets:
            out_dir = wdir / f"{ds_name}_out"
            out_dir.mkdir()
            if frozen:
                try:
                    compile_for(inputs)
                except lib.ToolError as e:
                    return failure("compile", e)
            args = lib.write_inputs({k: v for k, v in inputs.items() if k not in frozen}, wdir / f"{ds_name}_in")
            try:
                fallback = lib.run_edgert([edgert_run, bundle, *args, "--output-dir", out_dir], timeout=timeout)
            except lib.ToolError as e:
                return failure("run", e)
            if fallback:
                notes.add(f"ran on OpenCL platform {fallback} (an extension the first platform lacks)")
            for name in out_names:
                if name not in expected:
                    continue
                path = lib.output_file(out_dir, name)
                if not path.exists():
                    return test, "fail", f"run: no output file {path.name}", time.time() - t0
                try:
                    actual = np.load(path, allow_pickle=False)
                except Exception as e:  # noqa: BLE001
                    return test, "fail", f"run: unreadable {path.name}: {e}", time.time() - t0
                ok, msg = lib.compare(actual, expected[name], RTOL, ATOL, name)
                if not ok:
                    return test, "fail", f"mismatch ({ds_name}): {msg}", time.time() - t0
        shutil.rmtree(wdir, ignore_errors=True)
        if frozen:
            notes.add(f"inputs frozen with --const-input: {', '.join(frozen)}")
        return test, "pass", "; ".join(sorted(notes)), time.time() - t0
    except Exception as e:  # noqa: BLE001 - a runner bug must not take down the pool
        return test, "fail", f"runner error: {type(e).__name__}: {first_line(str(e))}", time.time() - t0


def read_expect(path: Path):
    if not path.exists():
        return []
    names = []
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.append(line)
    return names


def write_expect(path: Path, names):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{n}\n" for n in sorted(set(names))))


def md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ").replace("`", "'")


def pct(n: int, total: int) -> str:
    return f"{100.0 * n / total:.1f}%" if total else "n/a"


def summary(results):
    """(passed, total, passed in scope, total in scope)."""
    in_scope = [t for t, r in results.items() if not r[3]]
    passed = [t for t, r in results.items() if r[0] == "pass"]
    return len(passed), len(results), sum(1 for t in in_scope if results[t][0] == "pass"), len(in_scope)


def write_report(path: Path, results, root: Path, pattern):
    import onnx
    failed = sorted(t for t, r in results.items() if r[0] != "pass")
    excluded = sorted(t for t, r in results.items() if r[3])
    n_pass, total, n_pass_in, total_in = summary(results)
    lines = [
        "# ONNX node conformance",
        "",
        f"Generated by `tests/onnx/run_node_tests.py{' --filter ' + repr(pattern) if pattern else ''}` "
        f"from the node tests of onnx {onnx.__version__} "
        f"(`onnx/backend/test/data/node`), target {os.environ.get('EDGE_TARGET', 'x86_64')}, rtol {RTOL:g} / atol {ATOL:g} for floats, exact for integers.",
        "",
        f"- **In scope: {n_pass_in} of {total_in} pass ({pct(n_pass_in, total_in)})** — every test except the "
        f"{len(excluded)} excluded below",
        f"- **All tests: {n_pass} of {total} pass ({pct(n_pass, total)})**, {total - n_pass} fail",
        "",
        "A test is excluded (it still runs and is listed) when its model uses:",
        "",
    ]
    counts = {k: sum(1 for t in excluded if k in results[t][3]) for k, _ in EXCLUSION_RULES}
    lines += [f"- **{k}**: {text} — {counts[k]} tests" for k, text in EXCLUSION_RULES]
    lines += ["", "(A test can match several rules.) Element types, including those of intermediate values, "
              "come from ONNX shape inference.", ""]
    if excluded:
        lines += [f"Excluded tests ({len(excluded)}): "
                  + ", ".join(f"{t} ({', '.join(results[t][3])})" for t in excluded), ""]
    # Failure reasons grouped by their kind, most common first (tests in scope only).
    kinds = {}
    for t in failed:
        if not results[t][3]:
            kinds.setdefault(results[t][1].split(":", 1)[0], []).append(t)
    if kinds:
        lines += ["| failure kind (tests in scope) | tests |", "| --- | --- |"]
        for k, ts in sorted(kinds.items(), key=lambda kv: -len(kv[1])):
            lines.append(f"| {md_escape(k)} | {len(ts)} |")
        lines.append("")
    # Which unsupported operators cost the most tests in scope.
    ops = {}
    for t in failed:
        m = re.search(r"\((\w+)\): unsupported operator", results[t][1])
        if m and not results[t][3]:
            ops.setdefault(m.group(1), []).append(t)
    if ops:
        lines += ["Unsupported operators (by tests in scope failing on them): "
                  + ", ".join(f"{op} ({len(ts)})" for op, ts in sorted(ops.items(), key=lambda kv: (-len(kv[1]), kv[0]))),
                  ""]
    lines += ["Inputs that set shapes, axes, counts or pad values are frozen (`edgec --const-input`) where "
              "edgec asks for them to be constant; the note of a passing test names them.", "",
              "| test | result | reason / note | excluded because it uses |", "| --- | --- | --- | --- |"]
    for t in sorted(results):
        status, reason, _, why = results[t]
        if status != "pass":
            known = [text for rx, text in KNOWN_FAILURES if re.search(rx, t)]
            if known:
                reason = f"{reason} (expected: {known[0]})"
        lines.append(f"| {t} | {status} | {md_escape(reason)} | {', '.join(why)} |")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--filter", help="regex on test directory names (re.search)")
    ap.add_argument("--jobs", "-j", type=int, default=2, help="parallel workers (default 2)")
    ap.add_argument("--timeout", type=float, default=120, help="seconds per compile / per run (default 120)")
    ap.add_argument("--report", help="write a markdown report (e.g. docs/conformance.md)")
    ap.add_argument("--expect", help="file of tests that must pass (one name a line, # comments)")
    ap.add_argument("--update-expect", action="store_true", help="rewrite the --expect file with the passing tests")
    ap.add_argument("--root", help="node test directory (default: the installed onnx wheel's)")
    ap.add_argument("--work-dir", help="scratch directory (default $EDGE_WORK_DIR/onnx_node_tests)")
    ap.add_argument("--list", action="store_true", help="list the selected tests and exit")
    ap.add_argument("--verbose", "-v", action="store_true", help="print every test, not just failures")
    args = ap.parse_args(argv)
    if args.update_expect and not args.expect:
        ap.error("--update-expect needs --expect FILE")

    root = Path(args.root) if args.root else node_test_root()
    tests = discover(root, args.filter)
    if args.list:
        print("\n".join(tests))
        return 0
    if not tests:
        print(f"no node tests match {args.filter!r} under {root}")
        print("0 passed, 0 failed")
        return 1

    edgec, edgert_run = lib.find_tool("edgec"), lib.find_tool("edgert-run")
    if args.work_dir:
        work = Path(args.work_dir)
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
    else:
        work = lib.work_dir("onnx_node_tests")
    print(f"{len(tests)} node tests from {root}\nedgec {edgec}\nedgert-run {edgert_run}\n"
          f"{args.jobs} workers, {args.timeout:g}s timeout per step", flush=True)

    results = {}
    t0 = time.time()
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(run_one, t, str(root), str(work), args.timeout, str(edgec), str(edgert_run))
                   for t in tests]
        for i, fut in enumerate(as_completed(futures), 1):
            test, status, reason, secs, why = fut.result()
            results[test] = (status, reason, secs, why)
            if args.verbose:
                print(f"[{i}/{len(tests)}] {status.upper():4} {test} ({secs:.1f}s) {reason}", flush=True)
            elif i % 100 == 0:
                print(f"  ... {i}/{len(tests)} done ({time.time() - t0:.0f}s)", flush=True)

    passed = sorted(t for t, r in results.items() if r[0] == "pass")
    failed = sorted(t for t, r in results.items() if r[0] != "pass")
    print(f"ran {len(tests)} node tests in {time.time() - t0:.0f}s")

    if args.report:
        write_report(Path(args.report), results, root, args.filter)
        print(f"wrote {args.report}")

    rc = 0
    if args.expect:
        expect_path = Path(args.expect)
        expected = read_expect(expect_path)
        rx = re.compile(args.filter) if args.filter else None
        in_scope = [t for t in expected if rx is None or rx.search(t)]
        missing = [t for t in in_scope if t not in results]
        regressed = [t for t in in_scope if t in results and results[t][0] != "pass"]
        newly = [t for t in passed if t not in set(expected)]
        if missing:
            print(f"\n{len(missing)} expected tests do not exist in {root}:")
            for t in missing:
                print(f"  {t}")
        if regressed:
            print(f"\nREGRESSIONS: {len(regressed)} tests listed in {expect_path} no longer pass:")
            for t in regressed:
                print(f"  {t}: {results[t][1]}")
        if newly:
            print(f"\n{len(newly)} tests pass that are not in {expect_path} "
                  f"(add them, or rerun with --update-expect):")
            for t in newly:
                print(f"  {t}")
        if args.update_expect:
            keep = [t for t in expected if rx is not None and not rx.search(t)]
            write_expect(expect_path, keep + passed)
            print(f"\nupdated {expect_path}: {len(set(keep + passed))} tests")
        elif missing or regressed:
            rc = 1
        print(f"\nexpected to pass: {len(in_scope)}, still passing: {len(in_scope) - len(regressed) - len(missing)}")
    else:
        if failed and not args.verbose:
            print(f"\nfailed ({len(failed)}):")
            for t in failed:
                print(f"  {t}: {results[t][1]}")
        rc = 1 if failed else 0
    n_pass, total, n_pass_in, total_in = summary(results)
    print(f"in scope (not excluded): {n_pass_in} of {total_in} pass ({pct(n_pass_in, total_in)}); "
          f"all tests: {n_pass} of {total} pass ({pct(n_pass, total)})")
    print(f"{len(passed)} passed, {len(failed)} failed", flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
