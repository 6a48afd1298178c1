# What the mpirun test scripts share (sourced first, with the script's
# arguments HETSTENCIL MPIEXEC CASE): cli, mpiexec and case set, a skip (77) in
# a build without MPI, a scratch folder for the profile; failing with a message,
# the iterations of a --json report, the processes a launcher started, and a
# job ended by killing one of them.
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

# Whether process $1 is alive (not gone, not a zombie).
alive() { [[ -r /proc/$1/stat ]] && ! grep -q '^[0-9]* ([^)]*) Z' "/proc/$1/stat" 2>/dev/null; }

# Kills the last process the launcher $1 started and waits for the job to end:
# fails if it succeeds, or if it has not ended 30 s later (then says what the
# processes left were waiting in, and kills them).
end_by_killing_a_rank() {
  local job=$1 start=$SECONDS pid
  kill -KILL "$(ranks_of "$job" | tail -n 1)"
  while alive "$job" && ((SECONDS - start < 30)); do sleep 0.2; done
  if alive "$job"; then
    for pid in "$job" $(ranks_of "$job"); do
      echo "left: $(cat "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1-3), waiting in $(cat "/proc/$pid/wchan" 2>/dev/null)" >&2
      kill -KILL "$pid" 2>/dev/null || true
    done
    wait "$job" 2>/dev/null || true
    fail "the job had not ended $((SECONDS - start)) s after a process was killed"
  fi
  if wait "$job"; then fail "the job succeeded with a process killed"; fi
  return 0
}
