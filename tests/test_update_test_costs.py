#!/usr/bin/env python3
"""tests/test_costs.json and what reads it: the shard balancer of edge_testlib.Suite divides
a suite's cases by the file's seconds (balanced, the same shares for any registration order,
a case the file lacks counting the file's default), tests/update_test_costs.py rewrites the
file from ctest's LastTest.log, and (with EDGE_CTEST_BUILD_DIR, as ctest runs it) every
registered test's COST is the file's figure. Under a second.

    python3 tests/test_update_test_costs.py"""
from __future__ import annotations

import json
import os
import random
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import edge_testlib as lib  # noqa: E402
import update_test_costs as update  # noqa: E402

KEY = "opencl_x_suite"


def cost_file(directory: str, cases: dict, default_case: float = 1.0) -> Path:
    path = Path(directory) / "test_costs.json"
    path.write_text(json.dumps({"defaults": {"ctest": 10.0, "case": default_case}, "ctest": {},
                                "cases": {KEY: cases}}))
    return path


def suite_of(names, costs_file: Path) -> lib.Suite:
    suite = lib.Suite("s")
    for name in names:
        def case():
            pass
        case.__name__ = name
        suite.case(case)
    suite.costs_file = costs_file
    return suite


def shares(suite: lib.Suite, n: int) -> list[list[str]]:
    os.environ["EDGE_SUITE_COSTS_KEY"] = KEY
    return [[c.__name__ for c in suite.shard(suite.cases, k, n)] for k in range(1, n + 1)]


class ShardBalance(unittest.TestCase):
    def test_shards_follow_the_file_and_are_balanced(self):
        costs = {"big": 30.0, "m1": 10.0, "m2": 10.0, "m3": 10.0}
        with tempfile.TemporaryDirectory() as d:
            path = cost_file(d, costs)
            got = shares(suite_of(list(costs), path), 2)
            # By name alone (every case the default) the split would be [big, m2] / [m1, m3].
            self.assertEqual(got, [["big"], ["m1", "m2", "m3"]])
            loads = [sum(costs[c] for c in share) for share in got]
            self.assertLessEqual(max(loads), 1.15 * min(loads))

    def test_shards_are_deterministic(self):
        rng = random.Random(7)
        costs = {f"case_{i:02d}": round(rng.uniform(0.0, 25.0), 1) for i in range(50)}
        with tempfile.TemporaryDirectory() as d:
            path = cost_file(d, costs)
            first = [sorted(s) for s in shares(suite_of(list(costs), path), 2)]
            names = list(costs)
            rng.shuffle(names)
            self.assertEqual([sorted(s) for s in shares(suite_of(names, path), 2)], first)
            self.assertEqual(sorted(sum(first, [])), sorted(costs))
            loads = [sum(costs[c] for c in share) for share in first]
            self.assertLessEqual(max(loads), 1.15 * min(loads))

    def test_a_case_missing_from_the_file_counts_the_default(self):
        with tempfile.TemporaryDirectory() as d:
            path = cost_file(d, {"a": 20.0, "b": 10.0}, default_case=30.0)
            # x at 30 s has a shard to itself; counted as 1 s (or 0) it would join b.
            self.assertEqual(shares(suite_of(["a", "b", "x"], path), 2), [["x"], ["a", "b"]])


LOG = """Start testing: Dec 07 05:59 UTC
----------------------------------------------------------
2/4 Testing: opencl_x_suite_2of2
2/4 Test: opencl_x_suite_2of2
Output:
----------------------------------------------------------
[ RUN  ] test_ops.c3
[  OK  ] test_ops.c3 (3.0s)
1 passed, 0 failed
<end of output>
Test time =  3.52 sec
----------------------------------------------------------
Test Passed.
1/4 Testing: opencl_x_suite_1of2
Output:
----------------------------------------------------------
[  OK  ] test_ops.c1 (1.5s)
[ SKIP ] test_ops.c0: no device
[  OK  ] test_ops.c2 (0.3s)
<end of output>
Test time =  2.04 sec
----------------------------------------------------------
Test Passed.
3/4 Testing: plain
Output:
----------------------------------------------------------
<end of output>
Test time =  12.36 sec
----------------------------------------------------------
Test Passed.
4/4 Testing: broken
Output:
----------------------------------------------------------
<end of output>
Test time =  99.00 sec
----------------------------------------------------------
Test Failed.
End testing: Dec 07 06:13 UTC
"""


class UpdateFromLog(unittest.TestCase):
    def test_a_run_updates_what_passed(self):
        old = {"ctest": {"broken": 5.0, "not_run": 7.0, "removed": 3.0, "plain": 1.0},
               "cases": {KEY: {"c1": 9.0, "gone": 4.0}}}
        registered = {"plain", "broken", "not_run", "opencl_x_suite_1of2", "opencl_x_suite_2of2"}
        data = update.merge(old, update.parse_last_test_log(LOG), registered)
        self.assertEqual(data["ctest"], {"broken": 5.0, "not_run": 7.0, "opencl_x_suite_1of2": 2.0,
                                         "opencl_x_suite_2of2": 3.5, "plain": 12.4})
        # every shard ran: the case table is the run's, the case no longer there gone
        self.assertEqual(data["cases"], {KEY: {"c1": 1.5, "c2": 0.3, "c3": 3.0}})
        self.assertEqual(data["defaults"], {"ctest": update.DEFAULT_TEST_SECONDS, "case": update.DEFAULT_CASE_SECONDS})
        # one shard alone updates its cases and keeps the others
        one_shard = LOG.split("1/4 Testing")[0]
        data = update.merge(old, update.parse_last_test_log(one_shard), registered)
        self.assertEqual(data["cases"], {KEY: {"c1": 9.0, "c3": 3.0, "gone": 4.0}})

    def test_the_schedule_of_ctest_j2(self):
        # a (1 slot) and c start; b (both slots) waits until a and c are done.
        costs, processors = {"a": 10.0, "b": 10.0, "c": 5.0}, {"b": 2}
        self.assertEqual(update.simulate_ctest(costs, processors, ["a", "b", "c"], 2), 20.0)
        self.assertEqual(update.simulate_ctest(costs, processors, ["b", "a", "c"], 2), 20.0)
        self.assertEqual(update.simulate_ctest({"a": 10.0, "c": 5.0, "d": 5.0}, {}, ["a", "c", "d"], 2), 10.0)


@unittest.skipUnless(os.environ.get("EDGE_CTEST_BUILD_DIR"), "EDGE_CTEST_BUILD_DIR: the build whose tests to check")
class CMakeCosts(unittest.TestCase):
    def test_every_test_costs_the_file_figure(self):
        data = json.loads(lib.TEST_COSTS_FILE.read_text())
        build = Path(os.environ["EDGE_CTEST_BUILD_DIR"])
        log = build / "Testing" / "Temporary" / "LastTest.log"
        before = log.read_bytes() if log.exists() else None
        tests = update.show_only(build)
        after = log.read_bytes() if log.exists() else None
        self.assertEqual(before, after, "listing the tests rewrote the build's LastTest.log")
        self.assertTrue(tests)
        for test in tests:
            props = {p["name"]: p["value"] for p in test.get("properties", [])}
            want = data["ctest"].get(test["name"], data["defaults"]["ctest"])
            self.assertAlmostEqual(props.get("COST", 0.0), want, places=3, msg=test["name"])


if __name__ == "__main__":
    unittest.main()
