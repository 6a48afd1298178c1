# What the mpirun test scripts share (sourced first, with the script's
# arguments HETSTENCIL MPIEXEC CASE): cli, mpiexec and case set, a skip (77) in
# a build without MPI, a scratch folder for the profile; failing with a message,
# the iterations of a --json report, and the processes a launcher started.
cli=$1
mpiexec=$2
case=$3
if [[ $mpiexec == none ]]; then
  echo "skipped: this build has no MPI (HETSTENCIL_MPI=OFF)"
  exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export XDG_CACHE_HOME=$dir/cache
# CI runs as root on 2 cores: OpenMPI needs both flags there. Containers often
# forbid the cross-memory copies of OpenMPI's shared-memory transport.
export OMPI_MCA_btl_vader_single_copy_mechanism=none
launcher=("$mpiexec" --allow-run-as-root --oversubscribe)

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
