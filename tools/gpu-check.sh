#!/usr/bin/env bash
# One call on the GPU machine: configure with CUDA for sm_90, build, then the
# chosen parts, and a short table last. The table (summary.txt) and an archive
# of the logs (logs.tgz) go to $OUT (the device tool's return folder) when set.
#   tools/gpu-check.sh [tests] [consumer] [sanitize] [bench] [tune] [solves] [scaling] [grids] [repeat] [stencils]
#                      [processes] [ranks] [model] [accuracy] [blocked] [variants] [throttled] [team]   (default: all)
#                      [shapes]   (only when named)
# consumer: an application built against the CUDA build three ways (tools/check_consumer.sh),
# and against a shared CUDA build (the shared preset), each solving and checking its bits.
# tune: hetstencil tune of each stencil on gpu0 (16384^2, 512^3) and cpu0 (4096^2, 256^3), float and
# double, 12 s each (TUNE_BUDGET), then bench stencils on each: the tuned sweep beside the default one
# (TUNE_DEVICES=gpu0: the GPU's alone).
# processes: CPU ranks over TCP loopback (mpirun --mca btl tcp,self --bind-to core, 2 and 4 ranks of one thread,
# rows of 256 and 65536 doubles): the per-iteration prediction beside the measurement; on 2+ GPUs the GPU ranks' bitwise tests (ctest MpiGpuSolve).
# ranks: on 2+ GPUs, float 16384^2, 1000 iterations, the residual at the end and every iteration: one
# process with 2 (and 4) GPUs beside as many processes of one GPU each (mpirun; between them each
# --gpu-transport of RANKS_TRANSPORTS, by default "ipc nccl"), three times in turn: the times, their
# ratios and whether the solutions are the same bits. RANKS_GPUS="4" leaves out the 2-GPU runs.
# solves: float 16384^2 on gpu0 (and 2, 4 GPUs), residual at the end and every iteration, and what
# the check every iteration costs; on 2+ GPUs, poisson7 float 1024^3 and 2048^3 on 1 and 2 GPUs (efficiency),
# star4 1024^3 likewise with each slab's sweeps and wait, and in float over 20 iterations and uneven splits.
# scaling: calibrate the GPUs (sync, blocked 8), then bench scaling (1..N GPUs, the NVIDIA sample's
# problem), predicted beside measured per row.
# grids: planned solves (calibrated first) on gpu0 and on cpu0 alone, double, 256^2 to 32768^2 (and
# 65536^2 on gpu0) and the default solve: the per-iteration prediction beside the measurement.
# repeat: the whole machine, double 2048^2 (the default solve's problem) and 8192^2: three fresh
# calibrations, each followed by the same solve (500 iterations): the rows, each device's compute (predicted/measured)
# and the iteration predicted beside measured.
# stencils: on gpu0 and on cpu0, after poisson5's calibration, each other built-in and a stencil from a
# file (2-D 4096^2, 3-D 256^3, double): what the model estimates before measuring it, then a solve that
# measures its curves first, its per-iteration prediction beside the measurement.
# model: for each device set of the machine (CPU socket + GPU, 2 GPUs, CPU + 2 GPUs)
# and each problem (float/double, 16384^2 and 1024^2): calibrate, a planned solve
# (predicted beside measured), and a sweep of one device's share (CSV + PNG).
# accuracy: for each device set, float 16384^2: calibrate, then six planned
# solves, each learning from the ones before (a CPU device's slowdown beside GPUs).
# blocked: for each device set, calibrate for blocked (K = 4, 8), then planned
# solves of float 16384^2, sync and blocked, predicted beside measured.
# throttled: gpu0 whole, then held to 4, 12 and 25% of its SMs by MPS (the regime where
# the CPU earns 10-40% of the rows): calibrate cpu0,gpu0 for double 8192^2, then a
# sweep of cpu0's share from 0 to 60%; the worst point's error and the planned
# split's, and the team the calibration kept where the hypervisor took cores
# from cpu0's workers. MPS percentages are skipped where nvidia-cuda-mps-control is missing;
# THROTTLED_PERCENTAGES="4 12" runs some of them (a call of the device tool lasts 10 minutes);
# THROTTLED_THREADS=32 gives cpu0 that many workers (--threads) instead of one a core;
# THROTTLED_BUDGET (default 30 s) is the calibration's budget: with the default 10 s, a 64-vCPU
# guest had no room left to time cpu0's teams (the summary says so where it happens).
# shapes: bench stencils on gpu0, 512^3, with each kernel parameter set of SHAPES (sets apart by spaces,
# e.g. SHAPES="warps=2,lines=4 shared=1,vector=1"), the stencils of SHAPES_STENCILS (default star4,box27) in
# both precisions: each set's sweep beside the defaults, side by side in one run.
# team: cpu0 alone with all its cores' workers, then 56, 48 and 32 (--threads), double 8192 x 2048,
# 200 iterations: the time an iteration and the cores' worth the hypervisor took (docs/model.md).
#
# Building takes about four of a device call's minutes. The parts that run the command alone can
# use one built elsewhere, on a machine with the CUDA toolkit:
#   tools/gpu-check.sh --prebuild DIR            (there: the command for sm_90 and the libraries it
#                                                 links, into DIR, a path git ignores, e.g. build-prebuilt)
#   GPU_CHECK_PREBUILT=DIR tools/gpu-check.sh PARTS   (on the GPU machine, the device tool carrying DIR)
# The GPU machine's own libraries are used where it has them, DIR/lib's where it lacks them. That
# command's CPU kernels are built for x86-64-v3, not for the GPU host's CPU: its CPU figures may differ
# from a build there. tests, consumer and sanitize need a build there.
set -uo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = --prebuild ]; then
  [ $# -ge 2 ] || { echo "usage: tools/gpu-check.sh --prebuild DIR"; exit 2; }
  dir=$2
  cmake -S . -B build-prebuild -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DHETSTENCIL_NATIVE=OFF \
    -DCMAKE_CXX_FLAGS=-march=x86-64-v3 -DHETSTENCIL_BUILD_TESTS=OFF -DHETSTENCIL_BUILD_EXAMPLES=OFF &&
    cmake --build build-prebuild -j "$(nproc)" --target hetstencil_cli || exit 1
  rm -rf "$dir" && mkdir -p "$dir/lib" && cp build-prebuild/hetstencil "$dir/" || exit 1
  # What it links beyond the C and C++ runtimes, and CUDA's runtime, which the GPU machine's toolkit has.
  ldd "$dir/hetstencil" | awk '$3 ~ /^\// {print $3}' |
    grep -vE '/(libc|libm|libstdc\+\+|libgcc_s|libdl|libpthread|librt|libcudart)\.so|/ld-linux' |
    xargs -r cp -L -t "$dir/lib" || exit 1
  echo "$dir: $(du -sh "$dir" | cut -f1); on the GPU machine: GPU_CHECK_PREBUILT=$dir tools/gpu-check.sh PARTS (carry $dir)"
  exit 0
fi
# The device tool returns at most 8 files: the logs are written to a folder of
# their own and archived into $OUT as the script exits (a failed build too), so
# that a run cut short by the tool's time limit still returns its summary.
returned=${OUT:-/tmp/hetstencil-gpu-check}
out=$(mktemp -d /tmp/hetstencil-gpu-check-logs.XXXXXX)
lacking=""
trap 'tar czf "$returned/logs.tgz" -C "$out" . 2>/dev/null; rm -rf "$out" ${lacking:+"$lacking"}' EXIT
prebuilt=${GPU_CHECK_PREBUILT:-}
command_parts="bench tune solves scaling grids repeat stencils processes ranks model accuracy blocked variants throttled team"
parts=${*:-$([ -n "$prebuilt" ] || echo "tests consumer sanitize ")$command_parts}
mkdir -p "$returned"
rm -f "$returned/summary.txt" "$returned/logs.tgz"
jobs=$(nproc)
bin=./build-gpu/hetstencil
if [ -n "$prebuilt" ]; then
  for part in tests consumer sanitize; do
    [[ " $parts " == *" $part "* ]] && { echo "gpu-check: $part needs a build here: leave GPU_CHECK_PREBUILT unset"; exit 2; }
  done
  bin=$prebuilt/hetstencil
  [ -x "$bin" ] || { echo "gpu-check: no $bin: make it with tools/gpu-check.sh --prebuild $prebuilt"; exit 2; }
  lacking=$(mktemp -d /tmp/hetstencil-gpu-check-lib.XXXXXX)
  paths=()
  for d in /usr/local/cuda/lib64 /usr/local/cuda/lib; do [ -d $d ] && paths+=("$d"); done
  [ -n "${LD_LIBRARY_PATH:-}" ] && paths+=("$LD_LIBRARY_PATH")
  paths+=("$lacking")
  LD_LIBRARY_PATH=$(IFS=:; echo "${paths[*]}")
  export LD_LIBRARY_PATH
  # Three rounds: a library taken from DIR may itself need one this machine lacks.
  own=$(cd "$prebuilt/lib" && pwd)
  for round in 1 2 3; do
    for lib in $(ldd "$bin" | awk '/not found/ {print $1}'); do [ -e "$own/$lib" ] && ln -sf "$own/$lib" "$lacking/$lib"; done
  done
  if ldd "$bin" | grep -q "not found"; then
    ldd "$bin" | grep "not found"
    echo "gpu-check: $bin needs libraries that neither this machine nor $prebuilt/lib has"
    exit 1
  fi
fi
gpus=$(nvidia-smi -L | wc -l)
want() { [[ " $parts " == *" $1 "* ]]; }

step() { echo; echo "=== $*"; }
summary=()
# Each line is also kept in $returned/summary.txt at once: a run cut short by the
# device tool's time limit still returns what it measured.
record() {
  summary+=("$(printf '%-34s %s' "$1" "$2")")
  printf '%-34s %s\n' "$1" "$2" >>"$returned/summary.txt"
}

step "machine"
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader || true
echo "cores: $(nproc)"
lscpu | grep -E '^(Model name|Thread\(s\) per core|Core\(s\) per socket|Socket\(s\)|L2 cache|L3 cache|Hypervisor)' || true

step "configure + build (CUDA, sm_90)"
# The parts that run the command line alone build it alone: the tests' CUDA
# objects take most of a build's minutes of device time.
targets=()
want tests || want sanitize || want consumer || targets=(--target hetstencil_cli)
if [ -n "$prebuilt" ]; then
  record build "prebuilt: $bin"
elif cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DHETSTENCIL_NATIVE=ON -DCMAKE_CUDA_ARCHITECTURES=90 >"$out/configure.log" 2>&1 &&
   cmake --build build-gpu -j "$jobs" "${targets[@]}" >"$out/build.log" 2>&1; then
  record build ok
else
  tail -40 "$out/configure.log" "$out/build.log"
  echo "build FAILED"
  exit 1
fi

if want tests; then
  step "tests"
  ctest --test-dir build-gpu -j 4 --output-on-failure >"$out/ctest.log" 2>&1
  record tests "$(grep -E 'tests passed|tests failed' "$out/ctest.log" | tail -1)"
  record "  of which skipped" "$(grep -c '(Skipped)' "$out/ctest.log" | head -1)"
  grep -E "\(Failed\)|\(Timeout\)|Failure" "$out/ctest.log" | head -20
fi

if want consumer; then
  step "consumer: static CUDA build, then shared CUDA build"
  for build in build-gpu shared; do
    if [ $build = shared ]; then
      build=build/shared
      cmake --preset shared -DCMAKE_CUDA_ARCHITECTURES=90 -DHETSTENCIL_BUILD_TESTS=OFF -DHETSTENCIL_BUILD_EXAMPLES=OFF >"$out/configure-shared.log" 2>&1 &&
        cmake --build --preset shared -j "$jobs" >"$out/build-shared.log" 2>&1 ||
        { tail -20 "$out/configure-shared.log" "$out/build-shared.log"; record "consumer $build" "build FAILED"; continue; }
    fi
    log="$out/consumer-${build//\//-}.log"
    tools/check_consumer.sh "$build" >"$log" 2>&1
    record "consumer $build" "exit $?, $(grep -c 'bitwise equal to the reference' "$log") of 3 bitwise equal"
    tail -3 "$log"
  done
fi

if want sanitize; then
  step "compute-sanitizer (memcheck, racecheck) on GPU tests"
  filter='*gpu0_3x7*:*gpu0_257x129*:GpuExactPlans.*:*BlockedExact*257x129*:GpuVariants.*'
  for tool in memcheck racecheck; do
    # async3 races by design (tiles read each other's cells as they land): racecheck leaves it out.
    [ $tool = racecheck ] && filter="$filter:-GpuVariants.Asynchronous*:GpuVariants.TheRuntimeRunsThemOnOneGpu"
    compute-sanitizer --tool $tool --error-exitcode 9 ./build-gpu/tests/test_gpu --gtest_filter="$filter" \
      >"$out/sanitizer-$tool.log" 2>&1
    rc=$?
    record "compute-sanitizer $tool" "exit $rc, $(grep -E 'ERROR SUMMARY' "$out/sanitizer-$tool.log" | tail -1)"
  done
fi

if want bench; then
  step "probe"
  $bin probe | tee "$out/probe.txt"
  step "bench gpu"
  $bin bench gpu --reps 20 --devices gpu0 | tee "$out/bench-gpu.txt"
  while read -r dev prec n sweep gcells gbs copy copygbs ratio res resratio; do
    record "bench gpu $dev $prec $n" "sweep ${sweep} ms, copy ${copy} ms, sweep/copy ${ratio}, +residual/copy ${resratio}"
  done < <(grep -E '^gpu[0-9]+ ' "$out/bench-gpu.txt" | grep -v skipped)
  step "bench stencils: every device, each stencil beside a copy of the same bytes"
  $bin bench stencils --stencils poisson5,box9,examples/stencils/cross9.json --nx 16384 --ny 16384 --reps 5 \
    --csv "$out/stencils-2d.csv" 2>"$out/stencils-2d.err" | tee "$out/stencils-2d.txt"
  $bin bench stencils --stencils poisson7,box27,star4,examples/stencils/star2_3d.json --nx 512 --ny 512 --nz 512 \
    --reps 5 --csv "$out/stencils-3d.csv" 2>"$out/stencils-3d.err" | tee "$out/stencils-3d.txt"
  while read -r dev stencil prec grid threads stores sweep copy gbs ratio rest; do
    record "stencil $dev $stencil $prec" "$grid sweep $sweep ms, $gbs GB/s, sweep/copy $ratio"
  done < <(grep -hE '^(cpu|gpu)[0-9]+ ' "$out/stencils-2d.txt" "$out/stencils-3d.txt")
  # star4's staged default beside the kernel a GPU that does not stage sweeps it with, at that GPU's
  # defaults (SweepShape::default_for without staging: registers in float, tiled in double); a GPU
  # before sm_90 says it takes no staged=0.
  for unstaged in "float staged=0,units=8,vector=2,ahead=2" "double staged=0,shared=1,units=32"; do
    read -r prec set <<<"$unstaged"
    $bin bench stencils --devices gpu0 --stencils star4 --precision "$prec" --nx 512 --ny 512 --nz 512 --reps 5 \
      --tuning "$set" 2>/dev/null
  done | tee "$out/stencils-staged.txt"
  while read -r dev stencil prec grid threads stores sweep copy gbs ratio pred predratio staged ratio_to_staged rest; do
    record "stencil $dev $stencil $prec unstaged" "sweep/copy $ratio, ${ratio_to_staged} of the staged default's $staged ms"
  done < <(grep -E '^gpu[0-9]+ ' "$out/stencils-staged.txt" | grep -v skipped)
  step "bench cpu (alone and beside the GPUs)"
  $bin bench cpu --nx 8192 --ny 8192 --reps 10 --beside-gpus | tee "$out/bench-cpu.txt"
  while read -r dev prec nx rows threads stores sweep copy gcells gbs ratio beside besideratio sweeps; do
    record "bench cpu $dev $prec" "sweep/copy ${ratio}, beside GPUs x${besideratio}"
  done < <(grep -E '^cpu' "$out/bench-cpu.txt")
fi

if want tune; then
  step "tune: each stencil's kernel parameters, then the tuned sweep beside the default"
  export XDG_CACHE_HOME=$out/cache-tune
  mkdir -p "$XDG_CACHE_HOME"
  stencils_2d=box9,examples/stencils/cross9.json
  stencils_3d=poisson7,box27,star4,examples/stencils/star2_3d.json
  for device in ${TUNE_DEVICES:-gpu0 cpu0}; do
    size_2d=(--nx 16384 --ny 16384)
    size_3d=(--nx 512 --ny 512 --nz 512)
    [[ $device == cpu* ]] && size_2d=(--nx 4096 --ny 4096) && size_3d=(--nx 256 --ny 256 --nz 256)
    for stencil in ${stencils_2d//,/ } ${stencils_3d//,/ }; do
      size=("${size_2d[@]}")
      [[ ,$stencils_3d, == *,$stencil,* ]] && size=("${size_3d[@]}")
      for precision in float double; do
        label="$device-$(basename "$stencil" .json)-$precision"
        $bin tune --devices $device --stencil "$stencil" --precision $precision --budget "${TUNE_BUDGET:-12}" "${size[@]}" \
          >"$out/tune-$label.txt" 2>&1 || record "tune $label" FAILED
        while read -r dev grid default tuned spread gain candidates parameters; do
          record "tune $label" "$candidates candidates, gain $gain: $parameters"
        done < <(grep -E "^$device " "$out/tune-$label.txt")
      done
    done
    $bin bench stencils --devices $device --stencils $stencils_2d "${size_2d[@]}" --reps 5 2>/dev/null >"$out/tuned-2d-$device.txt"
    $bin bench stencils --devices $device --stencils $stencils_3d "${size_3d[@]}" --reps 5 2>/dev/null >"$out/tuned-3d-$device.txt"
    while read -r dev stencil prec grid threads stores sweep copy gbs ratio pred predratio default tuned; do
      record "tuned $dev $stencil $prec" "sweep/copy $ratio, default $default ms, tuned/default $tuned"
    done < <(grep -hE '^(cpu|gpu)[0-9]+ ' "$out/tuned-2d-$device.txt" "$out/tuned-3d-$device.txt")
  done
fi

if want processes; then
  step "processes: CPU ranks over TCP loopback, predicted beside measured; GPU ranks where 2 GPUs are"
  export XDG_CACHE_HOME=$out/cache-processes
  mkdir -p "$XDG_CACHE_HOME"
  if command -v mpirun >/dev/null; then
    # Rows of 2 KB, where a trip is its latency, and of 512 KB, where it is
    # bandwidth (as in the projections' grids).
    for size in 256x64x5000 65536x8x500; do
      IFS=x read -r nx rows iters <<<"$size"
      for ranks in 2 4; do
        # Each rank bound to a core of its own, its CPU device there; the first
        # solve measures each rank's device, the three after it are timed.
        label=$ranks-$nx
        mpi=(mpirun --allow-run-as-root --oversubscribe --bind-to core --mca btl tcp,self -np $ranks)
        cpu_rank=(--threads 1 --no-learn --devices cpu --cpu-devices 1 --nx $nx --ny $((rows * ranks)) --iters $iters --json)
        "${mpi[@]}" $bin solve "${cpu_rank[@]}" >"$out/processes-$label-calibrate.json" 2>"$out/processes-$label-calibrate.err" ||
          { record "tcp $ranks ranks nx $nx" "calibrating FAILED"; continue; }
        for run in 1 2 3; do
          "${mpi[@]}" $bin solve --no-calibrate "${cpu_rank[@]}" \
            >"$out/processes-$label-$run.json" 2>"$out/processes-$label-$run.err" || { record "tcp $ranks ranks nx $nx" FAILED; continue; }
          record "tcp $ranks ranks nx $nx run $run" "$(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); p,m=r['predicted_iteration_s'],r['measured_iteration_s']; print('iteration %.4f ms predicted, %.4f measured (%+.1f%%)' % (p*1e3, m*1e3, 100*(p-m)/m) if p else 'iteration %.4f ms measured, no prediction' % (m*1e3))" "$out/processes-$label-$run.json")"
        done
      done
    done
    if [ "$gpus" -ge 2 ] && [ -n "$prebuilt" ]; then
      record "GPU ranks (MpiGpuSolve)" "skipped: its tests need a build here"
    elif [ "$gpus" -ge 2 ]; then
      ctest --test-dir build-gpu -R MpiGpuSolve --output-on-failure >"$out/mpi-gpu.log" 2>&1
      record "GPU ranks (MpiGpuSolve)" "$(grep -E 'tests passed|tests failed' "$out/mpi-gpu.log")"
    fi
  else
    record "processes" "skipped: no mpirun"
  fi
fi

if want ranks && [ "$gpus" -ge 2 ] && command -v mpirun >/dev/null; then
  step "ranks: one process with N GPUs beside N processes of one GPU each (each of RANKS_TRANSPORTS), three times in turn"
  export XDG_CACHE_HOME=$out/cache-ranks
  mkdir -p "$XDG_CACHE_HOME"
  seconds() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print('%.4f %d' % (r['solve_s'], r['iterations']))" "$1"; }
  ratio() { python3 -c "import sys; print('%+.1f%%' % (100 * (float(sys.argv[2]) / float(sys.argv[1]) - 1)))" "$1" "$2"; }
  transports=(${RANKS_TRANSPORTS:-ipc nccl})
  for k in ${RANKS_GPUS:-2 4}; do
    [ "$gpus" -ge $k ] || continue
    list=$(seq -s, -f 'gpu%g' 0 $((k - 1)))
    for check in end every; do
      stop=(--iters 1000)
      [ $check = every ] && stop=(--iters 1000 --tol 1e-30 --check-every 1)
      args=(solve --no-calibrate --no-learn --precision float --nx 16384 "${stop[@]}" --json)
      label="ranks-$k-$check"
      times_one=()
      declare -A times_many=() ratios=() bits=()
      for transport in "${transports[@]}"; do bits[$transport]=same; done
      for run in 1 2 3; do
        $bin "${args[@]}" --devices "$list" -o /tmp/$label-one.npy >"$out/$label-one-$run.json" 2>"$out/$label-one-$run.err" ||
          { tail -3 "$out/$label-one-$run.err"; bits[one]=FAILED; break; }
        read -r one iters_one < <(seconds "$out/$label-one-$run.json")
        times_one+=("$one")
        for transport in "${transports[@]}"; do
          name=$label-$transport-$run
          timeout 120 mpirun --allow-run-as-root --oversubscribe -np $k $bin "${args[@]}" --devices gpu --rank-devices local \
            --gpu-transport "$transport" -o /tmp/$label-ranks.npy >"$out/$name.json" 2>"$out/$name.err" ||
            { tail -3 "$out/$name.err"; bits[$transport]=FAILED; continue; }
          read -r many iters_many < <(seconds "$out/$name.json")
          cmp -s /tmp/$label-one.npy /tmp/$label-ranks.npy && [ "$iters_one" = "$iters_many" ] || bits[$transport]=differ
          times_many[$transport]+="$many "
          ratios[$transport]+="$(ratio "$one" "$many") "
        done
      done
      rm -f /tmp/$label-one.npy /tmp/$label-ranks.npy
      record "$k GPUs residual $check" "one process ${times_one[*]} s${bits[one]:+, FAILED}"
      for transport in "${transports[@]}"; do
        many=${times_many[$transport]:-} many_ratios=${ratios[$transport]:-}
        record "  $k processes, $transport" "${many}s (${many_ratios% }), bits ${bits[$transport]}"
      done
      unset times_many ratios bits
    done
  done
fi

if want solves; then
  step "solves (even split over the GPUs named)"
  solve() {  # label, args
    local label=$1
    shift
    $bin solve --no-calibrate --no-learn "$@" --json >"$out/solve-$label.json" 2>"$out/solve-$label.err" ||
      { cat "$out/solve-$label.err"; record "$label" FAILED; return; }
    record "$label" "$(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print('%.4f s, %d it, %.1f GCells/s, set-up %.3f s' % (r['solve_s'], r['iterations'], r['gcells_per_s'], r['setup_s']))" "$out/solve-$label.json")"
  }
  solve gpu-f16k-1000 --devices gpu0 --precision float --nx 16384 --iters 1000
  solve gpu-f16k-1000-res1 --devices gpu0 --precision float --nx 16384 --iters 1000 --tol 1e-30 --check-every 1
  record "  residual every iteration costs" "$(python3 -c "import json,sys; a,b=(json.load(open(f))['solve_s'] for f in sys.argv[1:]); print('%+.1f%% over the end only' % (100*(b/a-1)))" "$out/solve-gpu-f16k-1000.json" "$out/solve-gpu-f16k-1000-res1.json" 2>/dev/null)"
  solve gpu-f16k-1000-blocked4 --devices gpu0 --precision float --nx 16384 --iters 1000 --variant blocked --depth 4
  solve gpu-f16k-1000-async3-16 --devices gpu0 --precision float --nx 16384 --iters 1000 --variant async3 --alpha 16
  for k in 2 4; do
    [ "$gpus" -ge $k ] || continue
    list=$(seq -s, -f 'gpu%g' 0 $((k - 1)))
    solve ${k}gpu-f16k-1000 --devices "$list" --precision float --nx 16384 --iters 1000
    solve ${k}gpu-f16k-1000-res1 --devices "$list" --precision float --nx 16384 --iters 1000 --tol 1e-30 --check-every 1
  done
  efficiency() {  # label, the one-GPU solve's label, the two-GPU one's
    record "$1" "$(python3 -c "import json,sys; a,b=(json.load(open(f))['solve_s'] for f in sys.argv[1:]); print('%.1f%%' % (100*a/(2*b)))" "$out/solve-$2.json" "$out/solve-$3.json" 2>/dev/null)"
  }
  slabs() {  # label, a solve's label: each slab's sweeps and wait an iteration
    record "$1" "$(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(', '.join('%s %d planes %.3f + %.3f ms' % (d['name'], d['rows'], 1e3*d['measured_iteration_compute_s'], 1e3*d['measured_iteration_exposed_s']) for d in r['devices']))" "$out/solve-$2.json" 2>/dev/null)"
  }
  if [ "$gpus" -ge 2 ]; then
    for n in 1024 2048; do
      p7=(--stencil poisson7 --precision float --nx $n --ny $n --nz $n --iters $((n == 1024 ? 200 : 100)))
      solve gpu-poisson7-$n --devices gpu0 "${p7[@]}"
      solve 2gpu-poisson7-$n --devices gpu0,gpu1 "${p7[@]}"
      efficiency "  poisson7 $n^3 2-GPU efficiency" gpu-poisson7-$n 2gpu-poisson7-$n
    done
    # star4 (staged) in float: the front's small values take the quotient's slow path, in the
    # lower slab's last blocks (docs/stencils.md, "Two GPUs"); 20 iterations (few such values
    # yet) and uneven splits show what that path costs each slab.
    for p in float double; do
      s4=(--stencil star4 --precision $p --nx 1024 --ny 1024 --nz 1024 --iters 200)
      solve gpu-star4-$p --devices gpu0 "${s4[@]}"
      solve 2gpu-star4-$p --devices gpu0,gpu1 "${s4[@]}"
      efficiency "  star4 $p 1024^3 2-GPU efficiency" gpu-star4-$p 2gpu-star4-$p
      slabs "  star4 $p slabs" 2gpu-star4-$p
    done
    s4=(--stencil star4 --precision float --nx 1024 --ny 1024 --nz 1024)
    solve 2gpu-star4-float-20 --devices gpu0,gpu1 "${s4[@]}" --iters 20
    slabs "  star4 float slabs, 20 it" 2gpu-star4-float-20
    for rows in 640,384 384,640; do
      solve 2gpu-star4-float-${rows/,/-} --devices gpu0,gpu1 "${s4[@]}" --iters 200 --rows $rows
      slabs "  star4 float slabs $rows" 2gpu-star4-float-${rows/,/-}
    done
  fi
fi

if want scaling; then
  step "scaling: one solve over 1..N GPUs"
  export XDG_CACHE_HOME=$out/cache-scaling
  mkdir -p "$XDG_CACHE_HOME"
  $bin calibrate --devices gpu --precision float --nx 16384 >"$out/calibrate-scaling.txt" 2>&1
  $bin calibrate --devices gpu --precision float --nx 16384 --variant blocked --depth 8 >>"$out/calibrate-scaling.txt" 2>&1
  kinds=both
  [ "$gpus" -ge 2 ] || kinds=strong  # one GPU: weak is strong
  $bin bench scaling --scaling $kinds --csv "$out/scaling.csv" 2>"$out/scaling.err" | tee "$out/scaling.txt"
  while read -r kind checks n nx ny t speedup eff gcells pred meas err bits; do
    record "scaling $kind $checks $n GPU" "$t s, x$speedup, eff $eff, $gcells GCells/s, iteration $pred ms predicted, $meas measured ($err), bits $bits"
  done < <(grep -E '^(strong|weak) ' "$out/scaling.txt")
fi

if want grids; then
  step "grids: the per-iteration prediction from small to large grids"
  export XDG_CACHE_HOME=$out/cache-grids
  mkdir -p "$XDG_CACHE_HOME"
  per_iteration() {  # label, solve args
    local label=$1
    shift
    $bin solve --no-learn --json "$@" >"$out/grid-$label.json" 2>"$out/grid-$label.err" ||
      { tail -2 "$out/grid-$label.err"; record "grid $label" FAILED; return; }
    record "grid $label" "$(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); p,m=r['predicted_iteration_s'],r['measured_iteration_s']; print('iteration %.4f ms predicted, %.4f measured (%+.1f%%), %d it' % (p*1e3, m*1e3, 100*(p-m)/m, r['iterations']) if p else 'no prediction')" "$out/grid-$label.json")"
  }
  for device in gpu0 cpu0; do
    per_iteration "$device-default" --devices $device
    for n in 256 1024 4096 16384 32768; do
      iters=$(( 1000000000 / (n * n) ))
      iters=$(( iters < 20 ? 20 : (iters > 5000 ? 5000 : iters) ))
      per_iteration "$device-$n" --devices $device --nx $n --iters $iters
    done
  done
  # Two grids of 65536^2 doubles are 64 GiB: on the GPU, with the host's grid
  # and result beside; a CPU device's iterates would not fit a 128 GiB host beside them.
  per_iteration "gpu0-65536" --devices gpu0 --nx 65536 --iters 20
fi

if want repeat; then
  step "repeat: three calibrations in a row, each followed by the same solve"
  for n in 2048 8192; do
    for run in 1 2 3; do
      cache=$out/cache-repeat-$n-$run
      mkdir -p "$cache"
      XDG_CACHE_HOME=$cache $bin calibrate --precision double --nx $n >"$out/repeat-calibrate-$n-$run.txt" 2>&1 ||
        { record "repeat $n #$run" "calibration FAILED"; continue; }
      XDG_CACHE_HOME=$cache $bin solve --no-calibrate --no-learn --json --precision double --nx $n --iters 500 \
        >"$out/repeat-solve-$n-$run.json" 2>"$out/repeat-solve-$n-$run.err" ||
        { record "repeat $n #$run" "solve FAILED"; continue; }
      # Each device's compute an iteration beside the iteration: which device's pace the error comes from.
      record "repeat $n #$run" "$(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); p,m=r['predicted_iteration_s'],r['measured_iteration_s']; print(', '.join('%s %d (compute %.4f/%.4f ms)' % (d['name'], d['rows'], d['predicted_iteration_compute_s']*1e3, d['measured_iteration_compute_s']*1e3) for d in r['devices']) + ': iteration %.4f ms predicted, %.4f measured (%+.1f%%)' % (p*1e3, m*1e3, 100*(p-m)/m))" "$out/repeat-solve-$n-$run.json")"
    done
  done
fi

if want stencils; then
  step "stencils: the model of each stencil, estimated before its own curves and measured after"
  export XDG_CACHE_HOME=$out/cache-stencils
  mkdir -p "$XDG_CACHE_HOME"
  for device in gpu0 cpu0; do
    $bin calibrate --devices $device --precision double --nx 4096 >"$out/stencils-calibrate-$device.txt" 2>&1
    for stencil in box9 examples/stencils/cross9.json poisson7 box27 star4 examples/stencils/star2_3d.json; do
      size=(--nx 4096 --iters 200)
      case $stencil in poisson7 | box27 | star4 | *3d*) size=(--nx 256 --iters 100) ;; esac
      label="$device-$(basename "$stencil" .json)"
      estimate=$($bin predict --devices $device --stencil "$stencil" --precision double "${size[@]}" 2>&1 |
        grep -oE '[0-9.]+ ms an iteration' | grep -oE '^[0-9.]+')
      $bin solve --no-learn --json --devices $device --stencil "$stencil" --precision double "${size[@]}" \
        >"$out/stencil-$label.json" 2>"$out/stencil-$label.err" || { record "stencil $label" FAILED; continue; }
      record "stencil $label" "$(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); p,m=r['predicted_iteration_s'],r['measured_iteration_s']; e=sys.argv[2]; print('estimate %s ms (%s), own curve %.4f ms, measured %.4f ms (%+.1f%%)' % (e or '-', ('%+.1f%%' % (100*(float(e)*1e-3-m)/m)) if e else '-', p*1e3, m*1e3, 100*(p-m)/m) if p else 'no prediction')" "$out/stencil-$label.json" "$estimate")"
    done
  done
fi

if want model; then
  step "model: calibrate, plan, solve and sweep"
  export XDG_CACHE_HOME=$out/cache
  mkdir -p "$XDG_CACHE_HOME"
  sets=("cpu0,gpu0")
  [ "$gpus" -ge 2 ] && sets=("gpu0,gpu1" "cpu0,gpu0,gpu1")
  for devices in "${sets[@]}"; do
    for problem in "float 16384 500" "double 16384 300" "float 1024 3000" "double 1024 3000"; do
      read -r precision nx iters <<<"$problem"
      label="${devices//,/_}-$precision-$nx"
      common=(--devices "$devices" --precision "$precision" --nx "$nx" --iters "$iters")
      $bin calibrate --devices "$devices" --precision "$precision" --nx "$nx" >"$out/calibrate-$label.txt" 2>&1
      record "calibrate $label" "$(grep -oE 'calibrated in [0-9.]+ s' "$out/calibrate-$label.txt")"
      $bin solve "${common[@]}" --no-learn >"$out/solve-$label.txt" 2>&1
      record "planned $label" "$(grep -E '^predicted|^measured' "$out/solve-$label.txt" | sed 's/; the run.*//')"
      $bin sweep "${common[@]}" --repeats 3 --csv "$out/sweep-$label.csv" >"$out/sweep-$label.txt" 2>&1
      record "sweep $label" "$(grep -E '^measured best' "$out/sweep-$label.txt")"
      record "" "$(grep -E "^model's split" "$out/sweep-$label.txt")"
    done
  done
fi

if want accuracy; then
  step "accuracy: calibrate, then planned solves that learn from each other"
  export XDG_CACHE_HOME=$out/cache-accuracy
  mkdir -p "$XDG_CACHE_HOME"
  sets=("cpu0,gpu0")
  [ "$gpus" -ge 2 ] && sets=("gpu0,gpu1" "cpu0,gpu0,gpu1")
  for devices in "${sets[@]}"; do
    common=(--devices "$devices" --precision float --nx 16384)
    label="${devices//,/_}"
    $bin calibrate "${common[@]}" >"$out/calibrate-accuracy-$label.txt" 2>&1
    record "calibrate $label" "$(grep -oE 'calibrated in [0-9.]+ s' "$out/calibrate-accuracy-$label.txt")"
    for run in 1 2 3 4 5 6; do
      $bin solve "${common[@]}" --iters 1000 >"$out/solve-accuracy-$label-$run.txt" 2>&1
      record "solve $label #$run" "$(awk '/^(cpu|gpu)[0-9]+ /{printf "%s %s, ", $1, $2}' "$out/solve-accuracy-$label-$run.txt")$(grep -E '^predicted' "$out/solve-accuracy-$label-$run.txt" | sed 's/; the run.*//')"
      record "" "$(grep -oE 'sized for sweeps [0-9]+% slower|would save [0-9.]+%.*joins only to save [0-9]+%' "$out/solve-accuracy-$label-$run.txt")"
    done
    # CPU rows forced beside the GPUs, predicted by the curves.
    if [[ $devices == cpu0,* ]]; then
      for cpu_rows in 250 500 1000 250 500 1000; do
        gpu_rows=$(( (16384 - cpu_rows) / (${#devices} > 9 ? 2 : 1) ))
        rows=$cpu_rows,$gpu_rows
        [[ ${#devices} -gt 9 ]] && rows=$rows,$((16384 - cpu_rows - gpu_rows))
        $bin solve "${common[@]}" --iters 1000 --no-learn --rows "$rows" >"$out/solve-forced-$label-$cpu_rows.txt" 2>&1
        record "forced $label $rows" "$(awk '/^cpu0 /{printf "cpu0 compute %s predicted, %s measured; ", $5, $6}' "$out/solve-forced-$label-$cpu_rows.txt")$(grep -E '^predicted' "$out/solve-forced-$label-$cpu_rows.txt" | sed 's/; the run.*//')"
      done
    fi
  done
fi

if want blocked; then
  step "blocked across devices: planned from the model, beside sync"
  export XDG_CACHE_HOME=$out/cache-blocked
  mkdir -p "$XDG_CACHE_HOME"
  sets=("gpu0" "cpu0,gpu0")
  [ "$gpus" -ge 2 ] && sets=("gpu0,gpu1" "cpu0,gpu0,gpu1")
  rows() { awk '/^(cpu|gpu)[0-9]+ /{printf "%s %s, ", $1, $2}' "$1"; }
  for devices in "${sets[@]}"; do
    common=(--devices "$devices" --precision float --nx 16384 --iters 1000 --no-learn)
    for depth in 4 8; do
      label="${devices//,/_}-blocked$depth"
      $bin calibrate --devices "$devices" --precision float --nx 16384 --variant blocked --depth $depth \
        >"$out/calibrate-$label.txt" 2>&1
      record "calibrate $label" "$(grep -oE 'calibrated in [0-9.]+ s' "$out/calibrate-$label.txt")"
      $bin solve "${common[@]}" --variant blocked --depth $depth >"$out/solve-$label.txt" 2>&1
      record "solve $label" "$(rows "$out/solve-$label.txt")$(grep -E '^predicted' "$out/solve-$label.txt" | sed 's/; the run.*//')"
    done
    label="${devices//,/_}-sync"
    $bin solve "${common[@]}" >"$out/solve-$label.txt" 2>&1
    record "solve $label" "$(rows "$out/solve-$label.txt")$(grep -E '^predicted' "$out/solve-$label.txt" | sed 's/; the run.*//')"
  done
fi

if want variants; then
  step "GPU variants: time to sync's accuracy"
  $bin bench variants --csv "$out/variants.csv" | tee "$out/variants.txt"
  while read -r n variant param its ratio ms speedup rest; do
    record "variant $n $variant $param" "iterations $its (x$ratio of sync), $ms ms, speedup $speedup $rest"
  done < <(grep -E '^ +[0-9]+ (sync|async|blocked)' "$out/variants.txt")
  # Each variant's best parameter sweeps at least 1.2x as fast as sync per iteration (on an H100:
  # async2 3.6x, async3 1.3x, blocked 1.5-2.2x); less is a regression (async3 once fell to 0.64x).
  while read -r n variant best; do
    record "variant $n $variant best" "${best}x sync per iteration$(awk -v b="$best" 'BEGIN { if (b < 1.2) print ": REGRESSION" }')"
  done < <(awk '$2 ~ /^(async2|async3|blocked)$/ { k = $1 " " $2; if ($(NF-2) > best[k]) best[k] = $(NF-2) }
                END { for (k in best) print k, best[k] }' "$out/variants.txt" | sort)
fi

if want throttled; then
  step "throttled GPU (MPS): the CPU's share swept"
  command -v nvidia-cuda-mps-control >/dev/null || record "throttled" "no nvidia-cuda-mps-control: the whole GPU only"
  for pct in ${THROTTLED_PERCENTAGES:-100 4 12 25}; do  # 100: the whole GPU, before any MPS server
    label="throttled-$pct"
    if [ "$pct" -lt 100 ]; then
      command -v nvidia-cuda-mps-control >/dev/null || continue
    fi
    export XDG_CACHE_HOME=$out/cache-$label  # each percentage its own model
    if [ "$pct" -lt 100 ]; then
      export CUDA_MPS_PIPE_DIRECTORY=$out/mps-pipe CUDA_MPS_LOG_DIRECTORY=$out/mps-log
      mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
      export CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$pct
      if ! nvidia-cuda-mps-control -d >"$out/mps-$pct.log" 2>&1; then
        record "$label" "skipped: MPS did not start ($(tail -1 "$out/mps-$pct.log"))"
        unset CUDA_MPS_ACTIVE_THREAD_PERCENTAGE CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
        continue
      fi
    fi
    machine=(--devices cpu0,gpu0 ${THROTTLED_THREADS:+--threads $THROTTLED_THREADS})
    common=("${machine[@]}" --precision double --nx 8192 --iters 300)
    $bin calibrate "${machine[@]}" --precision double --nx 8192 --budget "${THROTTLED_BUDGET:-30}" \
      >"$out/calibrate-$label.txt" 2>&1
    $bin sweep "${common[@]}" --vary cpu0 --from 0 --to 0.6 --step 0.05 --repeats 3 \
      --csv "$out/sweep-$label.csv" --json "$out/sweep-$label.json" >"$out/sweep-$label.txt" 2>&1
    record "$label SMs $pct%" "$(grep -E '^worst point error' "$out/sweep-$label.txt")"
    cached=$(grep -oE '^[0-9]+ of [0-9]+ points give a CPU device rows.*' "$out/sweep-$label.txt" | sed -E 's/:.*;/;/')
    [ -z "$cached" ] || record "" "$cached"
    kept=$(grep -oE 'cpu0: [0-9]+ workers swept.*' "$out/calibrate-$label.txt" | tail -1)
    [ -z "$kept" ] || record "" "$kept"
    unsized=$(grep -oE "skipped \(budget\): CPU devices' team sizes.*" "$out/calibrate-$label.txt" | tail -1)
    [ -z "$unsized" ] || record "" "$unsized"
    record "" "$(grep -E "^model's split" "$out/sweep-$label.txt")"
    if [ "$pct" -lt 100 ]; then
      echo quit | nvidia-cuda-mps-control
      sleep 2  # the server leaves before the next percentage starts one
      unset CUDA_MPS_ACTIVE_THREAD_PERCENTAGE CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
    fi
  done
fi

if want shapes; then
  step "shapes: kernel parameter sets swept beside the defaults"
  export XDG_CACHE_HOME=$out/cache-shapes
  mkdir -p "$XDG_CACHE_HOME"
  sets=()
  for set in ${SHAPES:-}; do sets+=(--tuning "$set"); done
  if [ ${#sets[@]} -eq 0 ]; then
    record shapes "no SHAPES given"
  else
    $bin bench stencils --devices gpu0 --stencils "${SHAPES_STENCILS:-star4,box27}" --nx 512 --ny 512 --nz 512 --reps 5 \
      "${sets[@]}" >"$out/shapes.txt" 2>"$out/shapes.err" || { tail -2 "$out/shapes.err"; record shapes FAILED; }
    while read -r dev stencil prec grid threads stores rest; do
      if [ "$stores" = "skipped:" ]; then
        record "shape $stencil $prec" "skipped: $rest"
        continue
      fi
      read -r sweep copy gbs ratio pred predratio default ratio_default set <<<"$rest"
      record "shape $stencil $prec" "sweep/copy $ratio, $sweep ms, defaults $default ms, set/defaults $ratio_default: $set"
    done < <(grep -E '^gpu[0-9]+ ' "$out/shapes.txt")
  fi
fi

if want team; then
  step "team: cpu0's workers, and what the hypervisor took from them"
  export XDG_CACHE_HOME=$out/cache-team
  for threads in 0 56 48 32; do
    [ "$threads" -lt "$(nproc)" ] || continue  # a worker a core at most: a team is no bigger than cpu0's
    $bin solve --no-calibrate --no-learn --json --devices cpu0 --threads $threads --precision double --nx 8192 \
      --ny 2048 --iters 200 >"$out/team-$threads.json" 2>"$out/team-$threads.err" ||
      { tail -2 "$out/team-$threads.err"; record "team --threads $threads" FAILED; continue; }
    record "team --threads $threads" "$(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); d=r['devices'][0]; h=r['host']; c=lambda v: '-' if v is None else '%.2f' % v; print('%.3f ms an iteration (p90 of its rounds %.3f), the hypervisor took %s cores, others %s' % (r['measured_iteration_s']*1e3, d['compute_p90_s']*1e3, c(h['stolen_cores']), c(h['others_cores'])))" "$out/team-$threads.json")"
  done
fi

step "summary"
printf '%s\n' "${summary[@]}"
