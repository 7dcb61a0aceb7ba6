#!/usr/bin/env python3
"""Prints the slowest ctest tests of a run and every test that did not pass, from the JUnit
file that `ctest --output-junit FILE` writes (scripts/test.sh does).

    python3 tests/ctest_times.py JUNIT.xml [--top 10]

Exit status 0 (reporting only: ctest's own exit status is the verdict)."""
from __future__ import annotations

import argparse
import sys
import xml.etree.ElementTree as ET


def read_cases(path: str) -> list[tuple[str, float, str]]:
    """(name, seconds, status) for every test case in the JUnit file."""
    cases = []
    for case in ET.parse(path).getroot().iter("testcase"):
        status = case.get("status") or "run"
        if case.find("failure") is not None:
            status = "failed"
        elif case.find("skipped") is not None:
            status = "skipped"
        cases.append((case.get("name", "?"), float(case.get("time") or 0.0), status))
    return cases


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("junit", help="the file ctest --output-junit wrote")
    ap.add_argument("--top", type=int, default=10, help="how many of the slowest tests to list (default 10)")
    args = ap.parse_args(argv)
    try:
        cases = read_cases(args.junit)
    except (OSError, ET.ParseError) as e:
        print(f"ctest_times: cannot read {args.junit}: {e}", file=sys.stderr)
        return 0
    total = sum(t for _, t, _ in cases)
    print(f"\nslowest {min(args.top, len(cases))} of {len(cases)} tests (sum of test times {total:.0f} s):")
    for name, secs, status in sorted(cases, key=lambda c: -c[1])[:args.top]:
        print(f"  {secs:8.1f} s  {name}" + ("" if status in ("run", "passed") else f"  [{status}]"))
    not_passed = [(n, s) for n, _, s in cases if s not in ("run", "passed")]
    if not_passed:
        print("not passed: " + ", ".join(f"{n} [{s}]" for n, s in not_passed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
