#!/bin/bash
# Same-run comparison of bundles (e.g. one model compiled by two edgec builds):
#   tests/bench/alternate_bundles.sh ROUNDS THREADS A.bundle B.bundle ...
# Each round runs `edgert-bench --iters 20 --warmup 3` on every bundle in turn (pinned to
# one core at 1 thread); prints each bundle's median over the rounds of its round medians.
# EDGERT_BENCH overrides the edgert-bench used (default build/device_runtime/edgert-bench).
set -euo pipefail
if [[ $# -lt 3 || $1 == --help ]]; then sed -n 2,6p "$0"; exit 1; fi
rounds=$1 threads=$2
shift 2
bench=${EDGERT_BENCH:-$(dirname "$0")/../../build/device_runtime/edgert-bench}
pin=()
if [[ $threads == 1 ]] && command -v taskset >/dev/null; then pin=(taskset -c 1); fi
declare -A medians
for ((r = 0; r < rounds; ++r)); do
  for b in "$@"; do
    m=$("${pin[@]}" "$bench" "$b" --iters 20 --warmup 3 --threads "$threads" --json |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["median_ms"])')
    medians[$b]+="$m "
  done
done
for b in "$@"; do
  echo "$b $(echo ${medians[$b]} | tr ' ' '\n' | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}') ms"
done
