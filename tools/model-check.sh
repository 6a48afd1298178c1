#!/usr/bin/env bash
# Calibrates this machine, then compares the model's time per iteration with a
# measured solve for a few device sets and splits; prints a table.
#   tools/model-check.sh BIN NX PRECISION ITERS "DEVICES ROWS" ...
# e.g. tools/model-check.sh build/hetstencil 2048 double 200 "cpu 1024,1024" "cpu 512,1536"
# Extra options for every command (e.g. --cpu-devices 2) go in $MODEL_CHECK_OPTS.
set -euo pipefail
bin=$1 nx=$2 precision=$3 iters=$4
shift 4
opts=${MODEL_CHECK_OPTS:-}
# shellcheck disable=SC2086
"$bin" calibrate --nx "$nx" --precision "$precision" $opts | grep -E "^calibrated|^skipped"
printf '%-22s %-16s %12s %12s %8s\n' devices rows predicted_ms measured_ms error
for config in "$@"; do
  read -r devices rows <<<"$config"
  # shellcheck disable=SC2086
  predicted=$("$bin" predict --nx "$nx" --precision "$precision" --iters "$iters" --devices "$devices" --rows "$rows" $opts |
              grep -oE '[0-9.]+ ms an iteration' | cut -d' ' -f1)
  # shellcheck disable=SC2086
  measured=$("$bin" solve --nx "$nx" --precision "$precision" --iters "$iters" --devices "$devices" --rows "$rows" $opts --json |
             python3 -c "import json,sys; r=json.load(sys.stdin); print(r['solve_s'] / r['iterations'] * 1e3)")
  printf '%-22s %-16s %12.4f %12.4f %7.1f%%\n' "$devices" "$rows" "$predicted" "$measured" \
    "$(python3 -c "print(100 * ($predicted - $measured) / $measured)")"
done
