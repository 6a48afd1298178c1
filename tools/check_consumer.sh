#!/usr/bin/env bash
# An application's view of hetstencil: examples/consumer built three ways and
# run, each a solve on two CPU devices checked bit for bit against the reference:
#   1. find_package(hetstencil) against an install into a temporary prefix, made
#      from BUILD (already built: nothing is compiled again) and built while
#      BUILD is out of sight, so nothing may point back into it;
#   2. add_subdirectory of this source tree (hetstencil as a subproject: the
#      library alone, no GoogleTest, no CLI11);
#   3. pkg-config: main.cpp compiled with `pkg-config --cflags --libs hetstencil`
#      (--static too when the install has a static library only).
# The consumer compiles with -Wall -Wextra -Wpedantic -Werror. A shared BUILD
# is checked for exported symbols beyond hetstencil's own.
#
#   tools/check_consumer.sh [BUILD]     (default: build/cpu-only)
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
build=$(cd "${1:-build/cpu-only}" && pwd)
jobs=$(nproc)
work=$(mktemp -d)
hidden="$build.hidden-by-check_consumer"
cleanup() {
  if [ -d "$hidden" ]; then mv "$hidden" "$build"; fi
  rm -rf "$work"
}
trap cleanup EXIT

say() { echo "check_consumer: $*"; }
quiet() {  # quiet LOG COMMAND...: the command's output only when it fails
  local log=$1
  shift
  "$@" >"$log" 2>&1 || { cat "$log"; say "FAILED: $*"; exit 1; }
}
cuda=$(sed -n 's/^HETSTENCIL_CUDA:BOOL=//p' "$build/CMakeCache.txt")

prefix=$work/prefix
quiet "$work/install.log" cmake --install "$build" --prefix "$prefix"
shared=$(find "$prefix" -name 'libhetstencil.so*' -print -quit)
if [ -n "$shared" ]; then
  # A defined dynamic symbol of spdlog, fmt, nlohmann-json, hwloc or libnuma
  # would clash with an application's own copy; so would any symbol outside
  # namespace hetstencil and the standard library's (told by its mangled name,
  # which no return type precedes).
  mangled=$(nm -D --defined-only "$shared" | awk '{ print $3 }')
  leaked=$( (c++filt <<<"$mangled" | grep -E 'spdlog|fmt::|nlohmann|hwloc|numa_'
             grep -v -E '^(_Z(T[VIS]|GV|Z)?N?K?(10hetstencil|St|9__gnu_cxx)|_init$|_fini$)' <<<"$mangled" | c++filt) |
           sort -u || true)
  if [ -n "$leaked" ]; then
    say "symbols exported beyond hetstencil's API ($(wc -l <<<"$leaked")):"
    head -20 <<<"$leaked"
    exit 1
  fi
  say "shared library exports hetstencil's API only"
fi

say "1/3 find_package against an install ($prefix), the build tree out of sight"
mv "$build" "$hidden"
quiet "$work/find.log" cmake -S examples/consumer -B "$work/find" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release
quiet "$work/find.log" cmake --build "$work/find" -j "$jobs"
"$work/find/consumer"

if [ -x "$prefix/bin/hetstencil" ]; then
  # The installed command draws its plots with the scripts installed beside it;
  # a stand-in python names the script it was given.
  printf '#!/bin/sh\necho "$1" > "%s/plot-script"\n' "$work" >"$work/python"
  chmod +x "$work/python"
  quiet "$work/plot.log" env -u HETSTENCIL_TOOLS_DIR XDG_CACHE_HOME="$work/cache" HETSTENCIL_PYTHON="$work/python" \
    "$prefix/bin/hetstencil" sweep --nx 32 --iters 2 --cpu-devices 2 --from 0.5 --to 0.5 \
    --csv "$work/sweep.csv" --plot "$work/sweep.png"
  script=$(realpath "$(cat "$work/plot-script")")
  [ "$script" = "$(realpath "$prefix")/share/hetstencil/plot/plot_sweep.py" ] ||
    { say "FAILED: the installed command plots with $script, not its installed script"; exit 1; }
  say "the installed command plots with its installed scripts"
fi

say "2/3 add_subdirectory of the source tree"
quiet "$work/sub.log" cmake -S examples/consumer -B "$work/sub" -DHETSTENCIL_SOURCE_DIR="$src" \
  -DHETSTENCIL_CUDA="${cuda:-OFF}" -DCMAKE_BUILD_TYPE=Release
quiet "$work/sub.log" cmake --build "$work/sub" -j "$jobs"
"$work/sub/consumer"

say "3/3 pkg-config"
pc=$(dirname "$(find "$prefix" -name hetstencil.pc -print -quit)")
static=()
[ -z "$shared" ] && static=(--static)
flags=$(PKG_CONFIG_PATH=$pc pkg-config --cflags --libs "${static[@]}" hetstencil)
quiet "$work/pc.log" c++ -std=c++17 -O2 -Wall -Wextra -Wpedantic -Werror examples/consumer/main.cpp $flags -o "$work/pc-consumer"
LD_LIBRARY_PATH=$(PKG_CONFIG_PATH=$pc pkg-config --variable=libdir hetstencil) "$work/pc-consumer"
say "all three consumers agree with the reference"
