#!/usr/bin/env bash
# The demo, end to end: setup + build, then the driving-model demo (samples/driving_model/):
# build a stand-in for openpilot's driving model (fp16, seeded random weights), compile it
# with edgec, check it once against onnxruntime, and run it in modeld's 20 Hz loop with the
# demo app (hidden_state fed back each frame), printing per-frame latency, median, p99 and
# the 20 ms budget; then the same loop in Python (drive.py, the edgert package). Then a quick
# check of the small sample classifier.
#   EDGE_SKIP_BUILD=1    use the tools already in build/
#   DEMO_FRAMES=N        timed frames of the driving loop (default 10)
#   DEMO_ARGS="..."      extra options of driving_demo and drive.py (both take --no-sleep,
#                        --threads N, --warmup N, --budget-ms MS, --seed N)
#   DEMO_TARGET=T        edgec target for the driving model (default: the widest this
#                        machine runs: x86_64-avx512, x86_64 or aarch64). An OpenCL target
#                        (opencl, opencl-image) runs through the opencl port on the first
#                        OpenCL device (EDGERT_OPENCL_PLATFORM / EDGERT_OPENCL_DEVICE pick
#                        another): the bundle is prepared on the device first (edgert-prepare),
#                        as it would be at install time in the car
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
DRIVING_DEMO=$(tool driving_demo samples/driving_demo)
EDGERT_PREPARE=$(tool edgert-prepare device_runtime/edgert-prepare device_runtime/tools/edgert-prepare)

GEN=samples/generated
step() { printf '\n== %s\n' "$*"; }

# The bundle is for this machine: on a car it would be --target aarch64.
if [[ -z ${DEMO_TARGET:-} ]]; then
  case "$(uname -m)" in
    aarch64) DEMO_TARGET=aarch64 ;;
    *) if grep -qw avx512f /proc/cpuinfo 2>/dev/null; then DEMO_TARGET=x86_64-avx512; else DEMO_TARGET=x86_64; fi ;;
  esac
fi

# ---- the driving model
DM=$GEN/driving_model_fp16
step "1. Build the driving model: stand-in for openpilot's, fp16, FastViT-style vision encoder + transformer policy"
"$PYTHON" samples/driving_model/build_model.py --dtype fp16 --out "$DM.onnx" --inputs-dir "$DM.inputs"

step "2. Compile: $EDGEC compile $DM.onnx -o $DM.bundle --target $DEMO_TARGET"
"$EDGEC" compile "$DM.onnx" -o "$DM.bundle" --target "$DEMO_TARGET"
if [[ $DEMO_TARGET == opencl* ]]; then
  step "2b. Prepare on this OpenCL device (once, like an install step): $EDGERT_PREPARE $DM.bundle -o $DM.prepared.bundle"
  "$EDGERT_PREPARE" "$DM.bundle" -o "$DM.prepared.bundle"
  mv "$DM.prepared.bundle" "$DM.bundle"
fi

step "3. Check once against onnxruntime (random inputs; fp16 tolerance rtol 1e-2 / atol 2e-2, see tests/e2e/test_driving_model.py)"
INPUTS=()
for f in "$DM.inputs"/*.npy; do n=$(basename "$f" .npy); INPUTS+=(--input "$n=$f"); done
rm -rf "$DM.out"
"$EDGERT_RUN" "$DM.bundle" "${INPUTS[@]}" --output-dir "$DM.out"
"$PYTHON" samples/compare_with_onnxruntime.py "$DM.onnx" "$DM.out" "${INPUTS[@]}" --rtol 1e-2 --atol 2e-2 --time \
  | sed 's/; argmax.*//'

step "4. Drive: $DRIVING_DEMO $DM.bundle --frames ${DEMO_FRAMES:-10} ${DEMO_ARGS:-}"
# shellcheck disable=SC2086
"$DRIVING_DEMO" "$DM.bundle" --frames "${DEMO_FRAMES:-10}" ${DEMO_ARGS:-}

step "4b. The same loop in Python: samples/driving_model/drive.py $DM.bundle (the edgert package, ctx.run(..., out=...))"
if [[ -d $BUILD_DIR/python/edgert ]]; then
  # shellcheck disable=SC2086
  PYTHONPATH=$BUILD_DIR/python${PYTHONPATH:+:$PYTHONPATH} "$PYTHON" samples/driving_model/drive.py "$DM.bundle" \
    --frames "${DEMO_FRAMES:-10}" ${DEMO_ARGS:-}
else
  echo "  (skipped: this build has no Python package, $BUILD_DIR/python/edgert: EDGE_BUILD_PYTHON=OFF or no nanobind)"
fi

# ---- the small classifier: a quick second check (build, compile, run, compare, benchmark)
step "5. Sample classifier (small residual CNN): build, compile, run, compare with onnxruntime"
"$PYTHON" samples/build_sample_model.py --out-dir "$GEN"
"$EDGEC" compile "$GEN/classifier.onnx" -o "$GEN/classifier.bundle" | sed -n '1p'
"$EDGEC" inspect "$GEN/classifier.bundle" > "$GEN/classifier.inspect.txt"
echo "  (kernel listing: $GEN/classifier.inspect.txt, or $EDGEC inspect $GEN/classifier.bundle [--json])"
rm -rf "$GEN/out"
"$EDGERT_RUN" "$GEN/classifier.bundle" --input "image=$GEN/image.npy" --output-dir "$GEN/out" --print
"$PYTHON" samples/compare_with_onnxruntime.py "$GEN/classifier.onnx" "$GEN/out" --input "image=$GEN/image.npy"

step "6. Benchmark the classifier: edgert-bench (1 thread) against onnxruntime (1 thread) in the same run"
"$EDGERT_BENCH" "$GEN/classifier.bundle" --threads 1 --warmup 10 --iters 200 --input "image=$GEN/image.npy"
"$PYTHON" samples/compare_with_onnxruntime.py "$GEN/classifier.onnx" "$GEN/out" --input "image=$GEN/image.npy" --time \
  | grep '^onnxruntime'
echo
echo "demo: done (files in $GEN/)"
