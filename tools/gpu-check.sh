#!/usr/bin/env bash
# One call on the GPU machine: configure with CUDA for sm_90, build, run every
# test (GPU tests included), the probe and the benchmarks, and print a short
# table last. Logs go to $OUT (the device tool's return folder) when set.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/hetstencil-gpu-check}
mkdir -p "$out"
jobs=$(nproc)

step() { echo; echo "=== $*"; }
summary=()
record() { summary+=("$(printf '%-28s %s' "$1" "$2")"); }

step "machine"
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader || true
nproc

step "configure + build (CUDA, sm_90)"
if cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >"$out/configure.log" 2>&1 &&
   cmake --build build-gpu -j "$jobs" >"$out/build.log" 2>&1; then
  record build ok
else
  tail -40 "$out/configure.log" "$out/build.log"
  record build FAILED
  printf '%s\n' "${summary[@]}"
  exit 1
fi

step "tests"
ctest --test-dir build-gpu -j "$jobs" --output-on-failure >"$out/ctest.log" 2>&1
record tests "$(grep -E 'tests passed|tests failed' "$out/ctest.log" | tail -1)"
grep -E "Failed|\*\*\*" "$out/ctest.log" | head -20
ctest --test-dir build-gpu -R ProbeGpu -V 2>&1 | grep -E "gpu[0-9]|Skipped|Passed|Failed" | tee "$out/gpu-tests.log"

step "probe"
./build-gpu/hetstencil probe | tee "$out/probe.txt"
./build-gpu/hetstencil probe --json >"$out/probe.json"

step "bench cpu"
./build-gpu/hetstencil bench cpu --nx 8192 --ny 8192 --reps 10 | tee "$out/bench-cpu.txt"
while read -r dev prec nx rows threads sweep copy gcells gbs ratio; do
  record "bench cpu $dev $prec" "sweep ${sweep} ms, copy ${copy} ms, sweep/copy ${ratio}"
done < <(grep -E '^cpu' "$out/bench-cpu.txt")

step "solve (the README's main job)"
./build-gpu/hetstencil solve | tee "$out/solve.txt"
record "solve 2048^2 x500" "$(grep -oE '[0-9.]+ GCells/s' "$out/solve.txt")"

step "summary"
printf '%s\n' "${summary[@]}"
