#!/usr/bin/env bash
# Installs what is missing (Debian packages), builds, and then either runs the
# main job or the tests.
#
#   tools/setup.sh solve [solve options]   a solve on every device of this machine
#   tools/setup.sh test                    every test: the release preset's build (with
#                                          CUDA when a CUDA compiler is found) and the
#                                          cpu-only preset's, then an application built
#                                          against the CPU-only build three ways
#                                          (tools/check_consumer.sh), and against a
#                                          shared CPU-only build
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-solve}
[ $# -gt 0 ] && shift

packages=(cmake g++ make pkg-config libhwloc-dev libnuma-dev libspdlog-dev libcli11-dev nlohmann-json3-dev
          libgtest-dev python3-matplotlib libopenmpi-dev openmpi-bin)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The CUDA toolkit installs outside PATH; CMake finds nvcc through PATH.
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi

jobs=$(nproc)
build() {  # build PRESET: configure and build with one of CMakePresets.json's presets (in build/PRESET)
  local preset=$1 log=build/$1.configure.log
  mkdir -p build
  cmake --preset "$preset" >"$log" 2>&1 || { cat "$log"; exit 1; }
  grep -E "hetstencil: CUDA" "$log" || true
  cmake --build --preset "$preset" -j "$jobs"
}

case "$mode" in
  solve)
    build release
    exec ./build/release/hetstencil solve "$@"
    ;;
  test)
    build release
    ctest --preset release -j "$jobs"
    build cpu-only
    ctest --preset cpu-only -j "$jobs"
    tools/check_consumer.sh build/cpu-only
    build shared-cpu-only
    tools/check_consumer.sh build/shared-cpu-only
    ;;
  *)
    echo "usage: tools/setup.sh solve [solve options] | tools/setup.sh test" >&2
    exit 2
    ;;
esac
