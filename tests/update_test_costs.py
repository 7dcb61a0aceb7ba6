#!/usr/bin/env python3
"""Rewrites tests/test_costs.json from a finished ctest run: the seconds each ctest test took
(tests/CMakeLists.txt sets each test's COST from them: ctest -j starts the longest first) and,
for the suites that ctest runs in shards (tests named NAME_KofN, EDGE_SUITE_SHARD), the seconds
each case took (edge_testlib.Suite divides the cases into shards by them).

    python3 tests/update_test_costs.py [BUILD_DIR] [--log LastTest.log] [--costs FILE]

Reads BUILD_DIR/ctest-last-run.log (the test command's copy of its run's log), else
BUILD_DIR/Testing/Temporary/LastTest.log (ctest rewrites it on every call; --log reads a copy)
and the tests BUILD_DIR registers (ctest --show-only). Only passed tests and cases count. Tests
and cases the run left out keep their figures; tests the build no longer registers are dropped; a
sharded suite whose every shard ran gets its case table replaced whole. Prints the shard split
of each sharded suite and the -j2 schedule by the new figures. A test or case missing from the
file counts its "defaults" seconds (DEFAULT_TEST_SECONDS, DEFAULT_CASE_SECONDS below)."""
from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import edge_testlib as lib  # noqa: E402

# What a test or case the file does not list counts: a new test should take seconds (README),
# and most of the ops suite's cases take about one.
DEFAULT_TEST_SECONDS = 10.0
DEFAULT_CASE_SECONDS = 1.0

TEST_HEADER = re.compile(r"^\d+/\d+ Testing: (\S+)$")
TEST_TIME = re.compile(r"^Test time =\s*([0-9.]+) sec$")
CASE_OK = re.compile(r"^\[  OK  \] [\w.-]+?\.(\w+) \(([0-9.]+)s\)$")
SHARD_NAME = re.compile(r"^(.+)_(\d+)of(\d+)$")


def parse_last_test_log(text: str) -> dict[str, dict]:
    """{test name: {"seconds": float, "passed": bool, "cases": {case: seconds}}} from the text
    of ctest's LastTest.log (each test's output, its time, then "Test Passed." or not)."""
    tests: dict[str, dict] = {}
    current = None
    for line in text.splitlines():
        header = TEST_HEADER.match(line)
        if header:
            current = tests.setdefault(header.group(1), {"seconds": None, "passed": False, "cases": {}})
            continue
        if current is None:
            continue
        case = CASE_OK.match(line)
        if case:
            current["cases"][case.group(1)] = float(case.group(2))
        elif TEST_TIME.match(line):
            current["seconds"] = float(TEST_TIME.match(line).group(1))
        elif line == "Test Passed.":
            current["passed"] = True
    return tests


def merge(old: dict, run: dict[str, dict], registered: set[str]) -> dict:
    """The new file contents: old's figures updated by the passed tests of run; tests and
    sharded suites that registered lacks dropped."""
    ctest = {name: secs for name, secs in old.get("ctest", {}).items() if name in registered}
    cases = {key: dict(table) for key, table in old.get("cases", {}).items()}
    shards_ran: dict[str, set[int]] = {}
    shard_count: dict[str, int] = {}
    for name, test in run.items():
        if not test["passed"] or test["seconds"] is None or name not in registered:
            continue
        ctest[name] = round(test["seconds"], 1)
        shard = SHARD_NAME.match(name)
        if shard:
            key = shard.group(1)
            shards_ran.setdefault(key, set()).add(int(shard.group(2)))
            shard_count[key] = int(shard.group(3))
    for key, ran in shards_ran.items():
        n = shard_count[key]
        table = {} if ran == set(range(1, n + 1)) else cases.get(key, {})
        for k in sorted(ran):
            table.update(run[f"{key}_{k}of{n}"]["cases"])
        cases[key] = table
    sharded = {m.group(1) for name in registered if (m := SHARD_NAME.match(name))}
    cases = {key: table for key, table in cases.items() if key in sharded}
    return {
        "about": "Written by tests/update_test_costs.py from a ctest run; do not edit by hand. ctest: "
                 "seconds per test (its COST). cases: seconds per case of each sharded suite "
                 "(EDGE_SUITE_SHARD), by the test's name less _KofN. A test or case not listed counts "
                 "its defaults seconds.",
        "defaults": {"ctest": DEFAULT_TEST_SECONDS, "case": DEFAULT_CASE_SECONDS},
        "ctest": dict(sorted(ctest.items())),
        "cases": {key: dict(sorted(table.items())) for key, table in sorted(cases.items())},
    }


def show_only(build_dir: Path) -> list[dict]:
    """The tests build_dir registers, as `ctest --show-only=json-v1` lists them, asked of a copy
    of its CTestTestfile.cmake tree: every ctest call rewrites the build's
    Testing/Temporary/LastTest.log, and this one runs during the test command's own ctest
    (test_costs_file), whose log it would replace."""
    with tempfile.TemporaryDirectory() as tmp:
        for f in Path(build_dir).rglob("CTestTestfile.cmake"):
            copy = Path(tmp) / f.relative_to(build_dir)
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, copy)
        out = subprocess.run(["ctest", "--test-dir", tmp, "--show-only=json-v1"], check=True,
                             capture_output=True, text=True).stdout
    return json.loads(out)["tests"]


def registered_tests(build_dir: Path) -> dict[str, int]:
    """{name: processors} of every test build_dir registers."""
    tests = {}
    for test in show_only(build_dir):
        props = {p["name"]: p["value"] for p in test.get("properties", [])}
        tests[test["name"]] = int(props.get("PROCESSORS", 1))
    return tests


def simulate_ctest(costs: dict[str, float], processors: dict[str, int], order: list[str], jobs: int) -> float:
    """Seconds until the last test ends when ctest -jJOBS starts tests as its 3.25 scheduler does:
    whenever slots free up it walks `order` and starts each test whose processors fit in the
    free slots (a PROCESSORS 2 test waits for an idle machine; 1-slot tests pass it)."""
    pending = list(order)
    running: list[tuple[float, str]] = []
    now, free = 0.0, jobs
    while pending or running:
        for name in list(pending):
            need = min(processors.get(name, 1), jobs)
            if need <= free:
                free -= need
                running.append((now + costs[name], name))
                pending.remove(name)
            elif free == 0:
                break
        running.sort()
        end, name = running.pop(0)
        now = end
        free += min(processors.get(name, 1), jobs)
    return now


def report(data: dict, processors: dict[str, int] | None, jobs: int = 2) -> None:
    for key, table in data["cases"].items():
        shards = sorted({int(m.group(3)) for r in data["ctest"] if (m := SHARD_NAME.match(r)) and m.group(1) == key})
        if not shards:
            continue
        n = shards[-1]
        split = lib.balance_shards(list(table), table, data["defaults"]["case"], n)
        loads = [sum(table[c] for c in share) for share in split]
        print(f"{key}: {n} shards of its {len(table)} cases by the file: "
              + " / ".join(f"{load:.1f} s" for load in loads))
    if processors:
        default = data["defaults"]["ctest"]
        costs = {name: data["ctest"].get(name, default) for name in processors}
        # ctest's order: COST descending, ties in registration order (a stable sort).
        order = sorted(processors, key=lambda name: -costs[name])
        work = sum(costs[name] * min(processors[name], jobs) for name in processors) / jobs
        print(f"ctest -j{jobs} by the file's costs: {simulate_ctest(costs, processors, order, jobs):.0f} s "
              f"(the work alone: {work:.0f} s)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build_dir", nargs="?", default="build", help="the build directory ctest ran in (default build)")
    ap.add_argument("--log", help="ctest's LastTest.log (default BUILD_DIR/ctest-last-run.log, else "
                                  "BUILD_DIR/Testing/Temporary/LastTest.log)")
    ap.add_argument("--costs", default=str(lib.TEST_COSTS_FILE),
                    help="the file to rewrite (default tests/test_costs.json)")
    args = ap.parse_args(argv)
    build = Path(args.build_dir)
    # The test command's copy of its run's log (scripts/test.sh), else ctest's own, which the
    # next ctest call (registered_tests' below too) overwrites: read first.
    kept = build / "ctest-last-run.log"
    log = Path(args.log) if args.log else kept if kept.exists() else build / "Testing" / "Temporary" / "LastTest.log"
    run = parse_last_test_log(log.read_text(errors="replace"))
    processors = registered_tests(build)
    costs_path = Path(args.costs)
    old = json.loads(costs_path.read_text()) if costs_path.exists() else {}
    data = merge(old, run, set(processors))
    costs_path.write_text(json.dumps(data, indent=1) + "\n")
    passed = sum(1 for t in run.values() if t["passed"])
    print(f"{costs_path}: {passed} of the run's {len(run)} tests passed and were recorded; "
          f"{len(data['ctest'])} tests listed")
    report(data, processors)
    return 0


if __name__ == "__main__":
    sys.exit(main())
