#!/usr/bin/env bash
# One command for a sanitizer run: configure, build and test with a preset of
# CMakePresets.json (CPU only; build/asan or build/tsan).
#
#   tools/sanitize.sh asan [ctest options]   AddressSanitizer + UndefinedBehaviorSanitizer
#   tools/sanitize.sh tsan [ctest options]   ThreadSanitizer
#
# (With CMake 3.25+, presets could chain these steps in a workflow preset; this
# script keeps to CMake 3.22.)
set -euo pipefail
cd "$(dirname "$0")/.."

preset=${1:-}
case "$preset" in
  asan | tsan) shift ;;
  *)
    echo "usage: tools/sanitize.sh asan|tsan [ctest options]" >&2
    exit 2
    ;;
esac

cmake --preset "$preset"
cmake --build --preset "$preset" -j "$(nproc)"
run=()
if [ "$preset" = tsan ] && command -v setarch >/dev/null; then
  # ThreadSanitizer's fixed memory layout clashes with the wide address
  # randomization of recent kernels ("unexpected memory mapping"); run without it.
  run=(setarch "$(uname -m)" -R)
fi
"${run[@]}" ctest --preset "$preset" -j "$(nproc)" "$@"
