#!/usr/bin/env bash
set -uo pipefail
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DHETSTENCIL_NATIVE=ON -DCMAKE_CUDA_ARCHITECTURES=90 >/tmp/cfg.log 2>&1 || { tail -20 /tmp/cfg.log; exit 1; }
cmake --build build-gpu -j 16 --target hetstencil_cli >/tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
bin=./build-gpu/hetstencil
export XDG_CACHE_HOME=/tmp/c; mkdir -p $XDG_CACHE_HOME
$bin calibrate --devices cpu0 --precision double --nx 2048 2>&1 | tail -1
for i in $(seq 12); do
  $bin solve --no-learn --devices cpu0 --json > /tmp/s.json 2>/dev/null
  python3 -c "
import json;r=json.load(open('/tmp/s.json'));h=r['host']
print('pred %.4f meas %.4f (%+.1f%%) others %s idle %s canary %s cal %s | %s' % (r['predicted_iteration_s']*1e3, r['measured_iteration_s']*1e3, 100*(r['predicted_iteration_s']/r['measured_iteration_s']-1), h['others_cores'], h['idle_cores'], h['canary_bytes_per_s'], h['calibration_canary_bytes_per_s'], h['disturbance'][:200]))"
done
