#!/usr/bin/env bash
# One call on the GPU machine: configure with CUDA for sm_90, build, run every
# test (GPU tests included, a subset under compute-sanitizer), the probe and the
# benchmarks, and print a short table last. Logs go to $OUT (the device tool's
# return folder) when set. Usage: tools/gpu-check.sh [quick]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/hetstencil-gpu-check}
mode=${1:-full}
mkdir -p "$out"
jobs=$(nproc)
bin=./build-gpu/hetstencil

step() { echo; echo "=== $*"; }
summary=()
record() { summary+=("$(printf '%-34s %s' "$1" "$2")"); }

step "machine"
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader || true
echo "cores: $(nproc)"

step "configure + build (CUDA, sm_90)"
if cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >"$out/configure.log" 2>&1 &&
   cmake --build build-gpu -j "$jobs" >"$out/build.log" 2>&1; then
  record build ok
else
  tail -40 "$out/configure.log" "$out/build.log"
  echo "build FAILED"
  exit 1
fi

step "tests"
ctest --test-dir build-gpu -j 4 --output-on-failure >"$out/ctest.log" 2>&1
record tests "$(grep -E 'tests passed|tests failed' "$out/ctest.log" | tail -1)"
record "  of which skipped" "$(grep -c '(Skipped)' "$out/ctest.log" | head -1)"
grep -E "\(Failed\)|\(Timeout\)|Failure" "$out/ctest.log" | head -20

if [ "$mode" = full ]; then
  step "compute-sanitizer (memcheck, racecheck) on GPU tests"
  filter='*gpu0_3x7*:*gpu0_257x129*:GpuExactPlans.*'
  for tool in memcheck racecheck; do
    compute-sanitizer --tool $tool --error-exitcode 9 ./build-gpu/tests/test_gpu --gtest_filter="$filter" \
      >"$out/sanitizer-$tool.log" 2>&1
    rc=$?
    record "compute-sanitizer $tool" "exit $rc, $(grep -E 'ERROR SUMMARY' "$out/sanitizer-$tool.log" | tail -1)"
  done
fi

step "probe"
$bin probe | tee "$out/probe.txt"

step "bench gpu"
$bin bench gpu --reps 20 --devices gpu0 | tee "$out/bench-gpu.txt"
while read -r dev prec n sweep gcells gbs copy copygbs ratio res resratio; do
  record "bench gpu $dev $prec $n" "sweep ${sweep} ms, copy ${copy} ms, sweep/copy ${ratio}, +residual/copy ${resratio}"
done < <(grep -E '^gpu[0-9]+ ' "$out/bench-gpu.txt" | grep -v skipped)

step "bench cpu (alone and beside the GPUs)"
$bin bench cpu --nx 8192 --ny 8192 --reps 10 --beside-gpus | tee "$out/bench-cpu.txt"
while read -r dev prec nx rows threads stores sweep copy gcells gbs ratio beside besideratio sweeps; do
  record "bench cpu $dev $prec" "sweep/copy ${ratio}, beside GPUs x${besideratio}"
done < <(grep -E '^cpu' "$out/bench-cpu.txt")

step "solves"
solve() {  # label, args
  local label=$1
  shift
  $bin solve "$@" --json >"$out/solve-$label.json" 2>"$out/solve-$label.err" || { cat "$out/solve-$label.err"; record "$label" FAILED; return; }
  record "$label" "$(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print('%.4f s, %d it, %.1f GCells/s, set-up %.3f s' % (r['solve_s'], r['iterations'], r['gcells_per_s'], r['setup_s']))" "$out/solve-$label.json")"
}
solve default
solve gpu-f16k-1000 --devices gpu0 --precision float --nx 16384 --iters 1000
solve gpu-f16k-1000-res1 --devices gpu0 --precision float --nx 16384 --iters 1000 --tol 1e-30 --check-every 1
solve gpu-f16k-1000-res100 --devices gpu0 --precision float --nx 16384 --iters 1000 --tol 1e-30 --check-every 100
gpus=$(nvidia-smi -L | wc -l)
for k in 2 4; do
  [ "$gpus" -ge $k ] || continue
  list=$(seq -s, -f 'gpu%g' 0 $((k - 1)))
  solve ${k}gpu-f16k-1000 --devices "$list" --precision float --nx 16384 --iters 1000
  solve ${k}gpu-f16k-1000-res1 --devices "$list" --precision float --nx 16384 --iters 1000 --tol 1e-30 --check-every 1
  solve ${k}gpu-f16k-1000-res100 --devices "$list" --precision float --nx 16384 --iters 1000 --tol 1e-30 --check-every 100
done

step "model: calibration, predicted vs measured time per iteration"
export XDG_CACHE_HOME=$out/cache
mkdir -p "$XDG_CACHE_HOME"
tools/model-check.sh $bin 16384 float 200 "gpu0 16384" "cpu0,gpu0 8192,8192" "cpu0,gpu0 512,15872" \
  | tee "$out/model-16384.txt"
tools/model-check.sh $bin 1024 float 2000 "gpu0 1024" "cpu0,gpu0 512,512" "cpu0,gpu0 64,960" \
  | tee "$out/model-1024.txt"
while read -r devices rows predicted measured error; do
  record "model $devices $rows" "predicted ${predicted} ms, measured ${measured} ms, ${error}"
done < <(grep -hE '^(cpu|gpu)' "$out/model-16384.txt" "$out/model-1024.txt")
record "calibration" "$(grep -h '^calibrated' "$out"/model-*.txt | sed 's/; saved.*//' | tr '\n' ' ')"

step "summary"
printf '%s\n' "${summary[@]}"
