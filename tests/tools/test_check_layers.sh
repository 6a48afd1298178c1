#!/usr/bin/env bash
# tools/check_layers.sh on a small fake tree: a clean tree passes, and each kind
# of refused include fails with the file, the line and the reason.
#   test_check_layers.sh CHECK_SCRIPT CASE
#   CASE: clean | upward | private | front_end | public_header | public_upward
set -euo pipefail
check=$1
case_name=$2

tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT

# put FILE LINE...: writes the file's lines under the fake tree.
put() {
  local file=$1
  shift
  mkdir -p "$tree/$(dirname "$file")"
  printf '%s\n' "$@" >"$tree/$file"
}

# A tree that follows the rule: each layer includes its own, lower and public
# headers, a backend its own folder and its layer's top, a front end the API;
# the transport's interface is open to the layers above.
put include/hetstencil/problem.hpp '#pragma once' '#include <string>'
put include/hetstencil/runtime.hpp '#pragma once' '#include "hetstencil/problem.hpp"'
put core/problem.cpp '#include "hetstencil/problem.hpp"' '#include "core/dispatch.hpp"'
put core/dispatch.hpp '#pragma once' '#include "hetstencil/problem.hpp"'
put devices/device.hpp '#pragma once' '#include "core/dispatch.hpp"'
put devices/cpu/cpu_device.hpp '#pragma once' '#include "devices/device.hpp"'
put devices/cpu/cpu_device.cpp '#include "devices/cpu/cpu_device.hpp"' '#include "kernels.hpp"'
put devices/cpu/kernels.hpp '#pragma once'
put model/calibrate.cpp '#include "devices/device.hpp"' '#include "core/dispatch.hpp"'
put runtime/runtime.cpp '#include "hetstencil/runtime.hpp"' '#include "model/calibrate.hpp"' \
  '#include "devices/transport/transport.hpp"'
put devices/transport/transport.hpp '#pragma once' '#include "devices/device.hpp"'
put model/calibrate.hpp '#pragma once'
put tools/cli/main.cpp '#include "hetstencil/runtime.hpp"' '#include "tools/cli/options.hpp"' '#include <spdlog/spdlog.h>'
put tools/cli/options.hpp '#pragma once'
put examples/solve.cpp '#include <vector>' '#include "hetstencil/runtime.hpp"'

# expect_refused LINE: the check fails and prints exactly LINE.
expect_refused() {
  local output status=0
  output=$(bash "$check" "$tree") || status=$?
  if [[ $status != 1 || $output != "$1" ]]; then
    printf 'expected exit 1 and:\n%s\ngot exit %s and:\n%s\n' "$1" "$status" "$output" >&2
    exit 1
  fi
}

case $case_name in
  clean)
    output=$(bash "$check" "$tree")
    [[ $output == "layers: 15 files checked, no include goes up" ]] || {
      echo "unexpected: $output" >&2
      exit 1
    }
    ;;
  upward)
    put devices/memory.cpp '#include "devices/device.hpp"' '' '#include "model/calibrate.hpp"'
    expect_refused 'devices/memory.cpp:3: includes "model/calibrate.hpp": goes up a layer: devices/ is below model/'
    ;;
  private)
    put model/predict.cpp '#include "devices/cpu/kernels.hpp"'
    expect_refused 'model/predict.cpp:1: includes "devices/cpu/kernels.hpp": private to devices/cpu/: only files in devices/cpu/ include it'
    ;;
  front_end)
    put examples/solve.cpp '#include "hetstencil/runtime.hpp"' '#include "devices/device.hpp"'
    expect_refused 'examples/solve.cpp:2: includes "devices/device.hpp": examples/ uses the public API alone: "hetstencil/..." headers and its own folder'"'"'s'
    ;;
  public_header)
    put include/hetstencil/grid.hpp '#pragma once' '#include <nlohmann/json.hpp>' '#include "core/dispatch.hpp"'
    expect_refused 'include/hetstencil/grid.hpp:2: includes <nlohmann/json.hpp>: a public header includes no third-party header
include/hetstencil/grid.hpp:3: includes "core/dispatch.hpp": a public header includes only public hetstencil/ headers'
    ;;
  public_upward)
    put include/hetstencil/plan.hpp '#pragma once' '#include "hetstencil/runtime.hpp"'
    put core/plan.cpp '#include "hetstencil/topology.hpp"'
    expect_refused 'core/plan.cpp:1: includes "hetstencil/topology.hpp": goes up a layer: topology is a public header of devices, above core/
include/hetstencil/plan.hpp:2: includes "hetstencil/runtime.hpp": goes up a layer: runtime is a public header of runtime, above this header (core)'
    ;;
  *)
    echo "unknown case: $case_name" >&2
    exit 2
    ;;
esac
