#!/usr/bin/env bash
# Installs what is missing (Debian packages), builds, and then either runs the
# main job or the tests.
#
#   tools/setup.sh solve [solve options]   a solve on every device of this machine
#   tools/setup.sh test                    every test: the default build (with CUDA
#                                          when a CUDA compiler is found) and a
#                                          CPU-only build (-DHETSTENCIL_CUDA=OFF), then
#                                          an application built against the CPU-only
#                                          build three ways (tools/check_consumer.sh)
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
build() {  # build DIR [cmake options]
  local dir=$1
  shift
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" >"$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; exit 1; }
  grep -E "hetstencil: CUDA" "$dir.configure.log" || true
  cmake --build "$dir" -j "$jobs"
}

case "$mode" in
  solve)
    build build
    exec ./build/hetstencil solve "$@"
    ;;
  test)
    build build
    ctest --test-dir build --output-on-failure -j "$jobs"
    build build-cpu -DHETSTENCIL_CUDA=OFF
    ctest --test-dir build-cpu --output-on-failure -j "$jobs"
    tools/check_consumer.sh build-cpu
    ;;
  *)
    echo "usage: tools/setup.sh solve [solve options] | tools/setup.sh test" >&2
    exit 2
    ;;
esac
