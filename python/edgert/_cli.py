"""Console scripts edgert-run and edgert-bench: the runtime's C tools shipped in the package."""
import os
import sys


def _exec(tool: str) -> None:
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", tool)
    if not os.access(path, os.X_OK):
        sys.exit(f"{tool}: not found at {path} (a broken install of the edgert package)")
    os.execv(path, [tool] + sys.argv[1:])


def run_main() -> None:
    _exec("edgert-run")


def bench_main() -> None:
    _exec("edgert-bench")
