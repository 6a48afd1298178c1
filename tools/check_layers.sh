#!/usr/bin/env bash
# The include rule of the layers (DESIGN.md): an include never goes up a layer
# nor into another folder's private headers, front ends use the public API
# alone, and public headers stay free of project internals and third-party
# headers. Prints one line per refused include and exits 1; prints a summary
# and exits 0 on a clean tree. Bash, find, grep and POSIX awk only: it runs on
# a bare Debian (CI) without Python.
#   tools/check_layers.sh [ROOT]      (ROOT: the source tree, default this one)
set -euo pipefail

# ---- The rule's table: edit here ---------------------------------------------
# Layers from the bottom up; a file includes headers of its own layer and below.
# The front ends come last, above every layer.
layers="core devices model partition runtime"
front_ends="tools examples"
# The layer each public header (include/hetstencil/NAME.hpp) belongs to; a public
# header not named here belongs to $public_default.
public_layers="export:core error:core grid:core problem:core stencil:core plan:core npy:core reference:core
  report:core version:core logging:core variant:core progress:core statistics:core device_info:core topology:devices runtime:runtime projection:runtime hetstencil:runtime"
public_default=runtime
# Third-party headers no public header includes (how their include path starts).
third_party="spdlog nlohmann hwloc numa cuda cub/ thrust/ CLI/ mpi nccl"
# Headers in a layer's sub-folder that the rest of the tree may include (within
# the rule of layers): an interface whose implementations live beside it; every
# other sub-folder header is private to its sub-folder.
layer_interfaces="devices/transport/transport.hpp devices/transport/halo_rows.hpp devices/transport/processes.hpp"
# Files the build makes, included by their name alone: the list of backends
# (devices/CMakeLists.txt).
generated="backend_list.inc"
# -------------------------------------------------------------------------------

root=${1:-"$(dirname "$0")/.."}
if [[ ! -d $root ]]; then
  echo "check_layers: no such folder: $root" >&2
  exit 2
fi
cd "$root"

folders=()
for folder in $layers $front_ends include/hetstencil; do
  [[ -d $folder ]] && folders+=("$folder")
done
files=()
if ((${#folders[@]})); then
  while IFS= read -r file; do files+=("$file"); done < <(
    find "${folders[@]}" -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.cu' \
      -o -name '*.cuh' -o -name '*.hpp.in' \) | LC_ALL=C sort)
fi
if ((${#files[@]} == 0)); then
  echo "check_layers: no sources under $PWD (core/, devices/, ... tools/, examples/)" >&2
  exit 2
fi

# awk reads the list of files first (to resolve includes relative to the
# includer), then grep's "file:line:text" for every #include.
{
  printf '%s\n' "${files[@]}"
  echo '--'
  grep -nH -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]' "${files[@]}" || true
} | awk -v layers="$layers" -v front_ends="$front_ends" -v public_layers="$public_layers" \
  -v public_default="$public_default" -v third_party="$third_party" \
  -v layer_interfaces="$layer_interfaces" -v generated="$generated" -v nfiles="${#files[@]}" '
function dir_of(path) { return sub(/\/[^\/]*$/, "", path) ? path : "" }
function top_of(path) { sub(/\/.*$/, "", path); return path }
function public_name(path) { sub(/^.*\//, "", path); sub(/\.(hpp\.in|hpp|h)$/, "", path); return path }
function public_rank(path,   name) {
  name = public_name(path)
  return (name in public_layer) ? rank[public_layer[name]] : rank[public_default]
}
# path with "." and ".." folded away
function normal(path,   n, i, part, out, depth, k) {
  n = split(path, part, "/"); depth = 0
  for (i = 1; i <= n; i++) {
    if (part[i] == "." || part[i] == "") continue
    if (part[i] == "..") { if (depth > 0) depth--; continue }
    out[++depth] = part[i]
  }
  path = ""
  for (k = 1; k <= depth; k++) path = path (k > 1 ? "/" : "") out[k]
  return path
}
function refuse(why) { printf "%s:%s: includes %s: %s\n", file, line, shown, why; bad++ }
# The sub-folder that keeps `header` to itself when a file in folder `from`
# includes it, or "" when it may: a header at the top of a layer folder serves
# the whole layer (and those above); one in a sub-folder serves that sub-folder
# and the folders below it.
function private_to(header, from,   d) {
  d = dir_of(header)
  if (d == top_of(header) || (header in interface)) return ""
  if (from == d || index(from, d "/") == 1) return ""
  return d
}
BEGIN {
  n = split(layers, name, " ")
  for (i = 1; i <= n; i++) { rank[name[i]] = i; layer_name[i] = name[i] }
  n = split(front_ends, name, " ")
  for (i = 1; i <= n; i++) { rank[name[i]] = 100; front[name[i]] = 1 }
  n = split(public_layers, pair, /[ \n]+/)
  for (i = 1; i <= n; i++) if (split(pair[i], kv, ":") == 2) public_layer[kv[1]] = kv[2]
  n = split(layer_interfaces, name, " ")
  for (i = 1; i <= n; i++) interface[name[i]] = 1
  nthird = split(third_party, third, " ")
  n = split(generated, name, " ")
  for (i = 1; i <= n; i++) made_by_build[name[i]] = 1
  listing = 1
}
listing { if ($0 == "--") listing = 0; else known[$0] = 1; next }
{
  # file:line:text; the file names have no colon (they come from find above).
  file = $0; sub(/:.*$/, "", file)
  rest = substr($0, length(file) + 2)
  line = rest; sub(/:.*$/, "", line)
  text = substr(rest, length(line) + 2)
  quoted = (text ~ /^[[:space:]]*#[[:space:]]*include[[:space:]]*"/)
  target = text
  sub(/^[^<"]*[<"]/, "", target); sub(/[>"].*$/, "", target)
  shown = quoted ? "\"" target "\"" : "<" target ">"
  if (quoted && (target in made_by_build)) next

  from_dir = dir_of(file)
  from_top = top_of(file)
  in_public = (index(file, "include/hetstencil/") == 1)

  if (in_public) {
    for (i = 1; i <= nthird; i++)
      if (index(target, third[i]) == 1) { refuse("a public header includes no third-party header"); next }
  }
  # <...> names a system or third-party header unless it spells a project path.
  if (!quoted && !(top_of(target) in rank) && index(target, "hetstencil/") != 1) next

  # The header: a path from the tree root, else one relative to the includer;
  # public headers by their name under include/.
  header = target
  if (!(top_of(header) in rank) && (normal(from_dir "/" target) in known)) header = normal(from_dir "/" target)
  if (index(header, "include/hetstencil/") == 1) header = substr(header, length("include/") + 1)
  to_top = top_of(header)

  if (to_top == "hetstencil") {
    mine = in_public ? public_rank(file) : rank[from_top]
    if (public_rank(header) > mine) {
      r = public_rank(header)
      refuse("goes up a layer: " public_name(header) " is a public header of " layer_name[r] \
             ", above " (in_public ? "this header (" layer_name[mine] ")" : from_top "/"))
    }
    next
  }
  if (in_public) { refuse("a public header includes only public hetstencil/ headers"); next }
  if (!(to_top in rank)) {
    if (to_top == "tests") refuse("a test header, for tests only")
    else refuse("not a header of a layer or front end of this tree")
    next
  }
  if (from_top in front) {
    d = dir_of(header)
    if (to_top != from_top || (d != from_dir && index(from_dir, d "/") != 1))
      refuse(from_top "/ uses the public API alone: \"hetstencil/...\" headers and its own folder\047s")
    next
  }
  if (rank[to_top] > rank[from_top]) {
    refuse("goes up a layer: " from_top "/ is below " to_top "/"); next
  }
  owner = private_to(header, from_dir)
  if (owner != "") refuse("private to " owner "/: only files in " owner "/ include it")
}
END {
  if (bad) exit 1
  printf "layers: %d files checked, no include goes up\n", nfiles
}'
