#!/usr/bin/env bash
# `mpirun -np 2 hetstencil solve --devices gpu --rank-devices local`: one GPU a
# process, ghost rows between them GPU to GPU (NCCL, or CUDA IPC: each GPU
# copying from the other's memory) or through host memory, bitwise the same
# solution and iterations as one process with both GPUs, and the report names
# the path the link took; a process killed during a solve ends the job within
# seconds, the other saying why.
#   test_mpi_gpu.sh HETSTENCIL MPIEXEC CASE     (MPIEXEC "none": a build without MPI)
# CASE: nccl | tolerance | blocked | host | planes | planes_host | killed, and ipc,
# ipc_tolerance, ipc_blocked, ipc_planes, ipc_killed: the same over CUDA IPC (planes: a
# 3-D stencil (radius 4), whose lines the GPUs keep a pitch apart and send as
# one span a plane). Exits 77 (skipped) without MPI,
# without 2 GPUs, or (nccl cases) in a build without NCCL.
set -euo pipefail
# cli, mpiexec, case, dir, launcher; fail, iterations, ranks_of
source "$(dirname "${BASH_SOURCE[0]}")/mpi_common.sh"
gpus=$("$cli" probe --json | grep -c '"kind": "gpu"' || true)
if ((gpus < 2)); then
  echo "skipped: needs 2 GPUs, this machine has $gpus"
  exit 77
fi
launch=("${launcher[@]}" -np 2)
solve=(solve --no-learn --no-calibrate)
transport=nccl
path=nccl
if [[ $case == ipc* ]]; then
  transport=ipc path="cuda ipc"
  case=${case#ipc}
  case=${case#_}
fi
grid=(--nx 300 --ny 257 --iters 200)
case $case in
  nccl | "") ;;
  tolerance) grid=(--nx 64 --ny 50 --iters 100000 --tol 1e-4 --check-every 7) ;;
  blocked) grid=(--nx 300 --ny 257 --iters 101 --variant blocked --depth 3) ;;
  host) transport=host path="host staging" ;;
  planes) grid=(--stencil star4 --nx 45 --ny 23 --nz 40 --iters 60) ;;
  planes_host) grid=(--stencil star4 --nx 45 --ny 23 --nz 40 --iters 60) transport=host path="host staging" ;;
  killed) ;;
  *)
    echo "unknown case $case" >&2
    exit 2
    ;;
esac

if [[ $case == killed ]]; then
  "${launch[@]}" "$cli" "${solve[@]}" --devices gpu --rank-devices local --gpu-transport "$transport" --nx 4096 --ny 4096 \
    --iters 100000000 > "$dir/out" 2> "$dir/err" &
  job=$!
  for _ in $(seq 300); do
    [[ $(ranks_of "$job" | wc -l) == 2 ]] && break
    sleep 0.1
  done
  [[ $(ranks_of "$job" | wc -l) == 2 ]] || { kill "$job"; fail "two processes did not start"; }
  sleep 10  # through the link's set-up, into the solve
  if grep -q "built without NCCL" "$dir/err"; then
    wait "$job" || true
    echo "skipped: this build has no NCCL (HETSTENCIL_NCCL=OFF)"
    exit 77
  fi
  end_by_killing_a_rank "$job"
  grep -q -E "hetstencil: (error: )?rank [01] of 2: " "$dir/err" || { cat "$dir/err"; fail "no process left said why it ended"; }
  echo "ok: $transport killed"
  exit 0
fi

"$cli" "${solve[@]}" --devices gpu0,gpu1 "${grid[@]}" --json -o "$dir/one.npy" > "$dir/one.json"
if ! "${launch[@]}" "$cli" "${solve[@]}" --devices gpu --rank-devices local --gpu-transport "$transport" "${grid[@]}" \
  --json -o "$dir/two.npy" > "$dir/two.json" 2> "$dir/two.err"; then
  if grep -q "built without NCCL" "$dir/two.err"; then
    echo "skipped: this build has no NCCL (HETSTENCIL_NCCL=OFF)"
    exit 77
  fi
  cat "$dir/two.err" >&2
  fail "two processes with a GPU each failed"
fi
cmp "$dir/one.npy" "$dir/two.npy" || fail "two processes' solution differs from one process with both GPUs"
[[ $(iterations "$dir/one.json") == $(iterations "$dir/two.json") ]] ||
  fail "iterations $(iterations "$dir/one.json") in one process, $(iterations "$dir/two.json") over two"
[[ $case != tolerance || $(iterations "$dir/one.json") -lt 100000 ]] || fail "the tolerance did not stop the solve"
grep -q "ghost rows between processes: r0-r1 $path" "$dir/two.json" || fail "the report does not name $path as the link's path"
for r in 0 1; do grep -q "\"r$r.gpu$r\"" "$dir/two.json" || fail "rank $r did not take gpu$r"; done
echo "ok: $transport $case"
