#!/usr/bin/env bash
# The sample, end to end: setup + build, build the sample classifier (samples/), compile it
# with edgec, run it with edgert-run, compare with onnxruntime, benchmark with edgert-bench.
#   EDGE_SKIP_BUILD=1  use the tools already in build/
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [[ ${EDGE_SKIP_BUILD:-0} != 1 ]]; then ./scripts/build.sh; fi
BUILD_DIR=${BUILD_DIR:-build}
PYTHON=${PYTHON:-python3}

# Tools: the usual build paths, else whatever the build put elsewhere.
tool() {
  local name=$1; shift
  local p
  for p in "$@"; do [[ -x $BUILD_DIR/$p ]] && { echo "$BUILD_DIR/$p"; return; }; done
  p=$(find "$BUILD_DIR" -type f -name "$name" -perm -u+x 2>/dev/null | sort | head -n1)
  [[ -n $p ]] || { echo "demo: $name not found under $BUILD_DIR" >&2; exit 1; }
  echo "$p"
}
EDGEC=$(tool edgec host_compiler/edgec)
EDGERT_RUN=$(tool edgert-run device_runtime/edgert-run device_runtime/tools/edgert-run)
EDGERT_BENCH=$(tool edgert-bench device_runtime/edgert-bench device_runtime/tools/edgert-bench)

GEN=samples/generated
step() { printf '\n== %s\n' "$*"; }

step "1. Build the sample model (small residual CNN, seeded random weights)"
"$PYTHON" samples/build_sample_model.py --out-dir "$GEN"

step "2. Compile: $EDGEC compile $GEN/classifier.onnx -o $GEN/classifier.bundle"
"$EDGEC" compile "$GEN/classifier.onnx" -o "$GEN/classifier.bundle"
ls -l "$GEN/classifier.bundle"
"$EDGEC" inspect "$GEN/classifier.bundle" > "$GEN/classifier.inspect.txt"
sed -n '1,12p' "$GEN/classifier.inspect.txt"
echo "  ... (full listing: $GEN/classifier.inspect.txt, or $EDGEC inspect $GEN/classifier.bundle [--json])"

step "3. Run: $EDGERT_RUN $GEN/classifier.bundle --input image=$GEN/image.npy --output-dir $GEN/out --print"
rm -rf "$GEN/out"
"$EDGERT_RUN" "$GEN/classifier.bundle" --input "image=$GEN/image.npy" --output-dir "$GEN/out" --print

step "4. Compare with onnxruntime (same model, same input)"
"$PYTHON" samples/compare_with_onnxruntime.py "$GEN/classifier.onnx" "$GEN/out" --input "image=$GEN/image.npy"

step "5. Benchmark: edgert-bench (1 thread) against onnxruntime (1 thread) in the same run"
"$EDGERT_BENCH" "$GEN/classifier.bundle" --threads 1 --warmup 10 --iters 200 --input "image=$GEN/image.npy"
"$PYTHON" samples/compare_with_onnxruntime.py "$GEN/classifier.onnx" "$GEN/out" --input "image=$GEN/image.npy" --time \
  | grep '^onnxruntime' 
if (( $(nproc) > 1 )); then
  echo "edgert-bench with --threads $(nproc):"
  "$EDGERT_BENCH" "$GEN/classifier.bundle" --threads "$(nproc)" --warmup 10 --iters 200 --input "image=$GEN/image.npy"
fi
echo
echo "demo: done (files in $GEN/)"
