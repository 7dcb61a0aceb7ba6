#!/usr/bin/env python3
"""The runtime's size budget: `size`'s text of a runtime library (all its read-only loadable
bytes: code, constant data, the dynamic symbol and relocation tables) must not exceed the
budget. Prints the text of every object that went into it and the biggest functions and
constants of the library, so a failure says where the bytes are.

    check_size.py --library LIB --size SIZE_TOOL --budget BYTES [--objects LIST.txt ...]
                  [--nm NM_TOOL] [--top N]

LIST.txt: object files, one a line (device_runtime/CMakeLists.txt writes edgert_objects.txt,
and edgert_skel_objects.txt in the Hexagon build). ctest registers it for the x86-64 host
build, the aarch64 cross build and the Hexagon skel (tests/CMakeLists.txt, size_budget_*)."""
import argparse
import subprocess
import sys
from pathlib import Path


def text_of(size_tool, path):
    """`size`'s text (Berkeley format: every allocated section that is not writable)."""
    out = subprocess.run([size_tool, str(path)], check=True, capture_output=True, text=True).stdout
    return int(out.splitlines()[1].split()[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--library", required=True)
    ap.add_argument("--size", required=True, help="the size tool for the library's architecture")
    ap.add_argument("--nm", help="the nm for the library's architecture (default: nm next to --size)")
    ap.add_argument("--budget", type=int, required=True)
    ap.add_argument("--objects", action="append", default=[])
    ap.add_argument("--top", type=int, default=12)
    args = ap.parse_args()
    lib = Path(args.library)
    if not lib.is_file():
        print(f"check_size: {lib} does not exist (build it first)")
        return 1
    text = text_of(args.size, lib)
    verdict = "within" if text <= args.budget else "OVER"
    print(f"{lib}: text {text} bytes, budget {args.budget} ({verdict}; {args.budget - text:+d} bytes left)")
    print(f"  measured with: {args.size} {lib}")

    objects = []
    for listing in args.objects:
        objects += [Path(line) for line in Path(listing).read_text().split("\n") if line.strip()]
    if objects:
        rows = sorted(((text_of(args.size, o), o.name) for o in objects if o.is_file()), reverse=True)
        print(f"  objects ({len(rows)}; text before the linker drops unused sections):")
        for size, name in rows:
            print(f"    {size:8d}  {name}")

    nm = args.nm or str(Path(args.size).with_name(Path(args.size).name.replace("size", "nm")))
    res = subprocess.run([nm, "-S", "--size-sort", "--reverse-sort", "-C", str(lib)], capture_output=True, text=True)
    if res.returncode == 0:
        rows = [ln.split(maxsplit=3) for ln in res.stdout.splitlines()]
        rows = [r for r in rows if len(r) == 4 and r[2].lower() in "trw"][: args.top]
        print(f"  biggest functions and constants of {lib.name}:")
        for addr, size, kind, name in rows:
            print(f"    {int(size, 16):8d}  {name[:110]}")
    if text > args.budget:
        print(f"check_size: {lib.name} is {text - args.budget} bytes over its budget of {args.budget} bytes of text "
              "(README: 'Runtime size and what a car links')")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
