#!/usr/bin/env bash
# 4 GPUs: one process beside 4 ranks, residual every iteration, several launch settings; per-rank totals.
cd "$(dirname "$0")/.."
bash tools/gpu-check.sh build-only >/dev/null 2>&1 || { echo build failed; exit 1; }
bin=./build-gpu/hetstencil
export XDG_CACHE_HOME=/tmp/cache34; mkdir -p $XDG_CACHE_HOME/hetstencil
args=(solve --no-calibrate --no-learn --precision float --nx 16384 --iters 1000 --json)
every=(--tol 1e-30 --check-every 1)
show() { python3 -c "
import json,sys
r=json.load(open(sys.argv[1])); print('%-28s solve %.4f  totals %s  checks %s' % (sys.argv[2], r['solve_s'], ' '.join('%.4f'%d['total_s'] for d in r['devices']), ' '.join('%.4f'%d['check_s'] for d in r['devices'])))" "$1" "$2"; }
for rep in 1 2 3; do
  $bin "${args[@]}" --devices gpu0,gpu1,gpu2,gpu3 > /tmp/one-end.json 2>/dev/null && show /tmp/one-end.json "one end"
  $bin "${args[@]}" "${every[@]}" --devices gpu0,gpu1,gpu2,gpu3 > /tmp/one.json 2>/dev/null && show /tmp/one.json "one every"
  for bind in default none core; do
    b=(); [ $bind != default ] && b=(--bind-to $bind)
    mpirun --allow-run-as-root --oversubscribe "${b[@]}" -np 4 $bin "${args[@]}" "${every[@]}" --devices gpu --rank-devices local --gpu-transport nccl > /tmp/r.json 2>/tmp/r.err && show /tmp/r.json "4 ranks every bind $bind" || tail -2 /tmp/r.err
  done
  mpirun --allow-run-as-root --oversubscribe -np 4 $bin "${args[@]}" --tol 1e-30 --check-every 2 --devices gpu --rank-devices local --gpu-transport nccl > /tmp/r.json 2>/dev/null && show /tmp/r.json "4 ranks every 2nd"
  $bin "${args[@]}" --tol 1e-30 --check-every 2 --devices gpu0,gpu1,gpu2,gpu3 > /tmp/one.json 2>/dev/null && show /tmp/one.json "one every 2nd"
  mpirun --allow-run-as-root --oversubscribe -np 4 $bin "${args[@]}" --devices gpu --rank-devices local --gpu-transport nccl > /tmp/r.json 2>/dev/null && show /tmp/r.json "4 ranks end"
done
mpicxx -O2 probe34/coll.cpp -o /tmp/coll && for np in 2 4; do mpirun --allow-run-as-root --oversubscribe -np $np /tmp/coll; mpirun --allow-run-as-root --oversubscribe --bind-to core -np $np /tmp/coll | sed 's/^/bound core: /'; done
