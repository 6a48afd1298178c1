# What the mpirun test scripts share (sourced): failing with a message, the
# iterations of a --json report, and the processes a launcher started.

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# The iterations a --json report gives.
iterations() { grep -o '"iterations": *[0-9]*' "$1" | head -n 1 | grep -o '[0-9]*$'; }

# The hetstencil processes mpiexec started (children of $1), from /proc alone.
ranks_of() {
  local stat
  for stat in /proc/[0-9]*/stat; do
    read -r pid name _ ppid _ 2>/dev/null < "$stat" || continue
    [[ $ppid == "$1" && $name == "(hetstencil)" ]] && echo "$pid"
  done
  return 0
}
