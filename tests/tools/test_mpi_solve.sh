#!/usr/bin/env bash
# `mpirun -np 3 hetstencil solve`: one solve over three processes, bitwise the
# same solution as one process, for a fixed number of iterations and for a
# tolerance stop (the same iteration count); a process that fails or dies ends
# every process with our message, within seconds; other commands are refused.
#   test_mpi_solve.sh HETSTENCIL MPIEXEC CASE     (MPIEXEC "none": a build without MPI; skipped)
# CASE: fixed | tolerance | blocked | modelled | local | fails | killed. Exits 77 (skipped) without MPI.
set -euo pipefail
# cli, mpiexec, case, dir, launcher; fail, iterations, ranks_of
source "$(dirname "${BASH_SOURCE[0]}")/mpi_common.sh"
launch=("${launcher[@]}" -np 3)
# CPU devices alone, so that the device counts hold on a machine with GPUs too.
solve=(solve --devices cpu --threads 1 --no-learn --no-calibrate)
one=(--cpu-devices 1)

case $case in
  fixed | tolerance)
    stop=(--nx 40 --ny 30 --iters 300)
    [[ $case == tolerance ]] && stop=(--nx 40 --ny 30 --iters 100000 --tol 1e-4 --check-every 7)
    "$cli" "${solve[@]}" "${one[@]}" "${stop[@]}" --json -o "$dir/one.npy" > "$dir/one.json"
    "${launch[@]}" "$cli" "${solve[@]}" "${one[@]}" "${stop[@]}" --json -o "$dir/three.npy" > "$dir/three.json"
    cmp "$dir/one.npy" "$dir/three.npy" || fail "three processes' solution differs from one process's"
    [[ $(iterations "$dir/one.json") == $(iterations "$dir/three.json") ]] ||
      fail "iterations $(iterations "$dir/one.json") alone, $(iterations "$dir/three.json") over three processes"
    [[ $case == fixed || $(iterations "$dir/one.json") -lt 100000 ]] || fail "the tolerance did not stop the solve"
    # Rank 0 alone prints: one report, naming every process's device.
    [[ $(grep -c '"iterations"' "$dir/three.json") == 1 ]] || fail "more than one process printed a report"
    for r in 0 1 2; do grep -q "\"r$r.cpu0\"" "$dir/three.json" || fail "the report lacks rank $r's device"; done
    grep -q 'ghost rows between processes: r0-r1 host staging, r1-r2 host staging' "$dir/three.json" ||
      fail "the report does not name host staging as the path between CPU devices of different processes"
    # No profile was made first: the cache folder is made for the links measured.
    compgen -G "$XDG_CACHE_HOME/hetstencil/*.links.json" > /dev/null ||
      fail "the links measured are not kept where no profile was made before"
    ;;
  blocked)
    # Two devices a process (the shared-memory transport between them), three
    # rows of ghosts a side: the same bits as one device alone.
    deep=(--nx 50 --ny 37 --iters 101 --variant blocked --depth 3)
    "$cli" "${solve[@]}" "${one[@]}" "${deep[@]}" -o "$dir/one.npy" > /dev/null
    "${launch[@]}" "$cli" "${solve[@]}" --cpu-devices 2 "${deep[@]}" --json -o "$dir/six.npy" > "$dir/six.json"
    cmp "$dir/one.npy" "$dir/six.npy" || fail "six devices over three processes differ from one device"
    [[ $(grep -c '"name"' "$dir/six.json") == 6 ]] || fail "the report does not list six devices"
    ;;
  stencil)
    # A 3-D radius-4 stencil: planes and ghosts four deep cross the processes;
    # the sequential reference's bits.
    star=(--stencil star4 --nx 9 --ny 7 --nz 30 --iters 40)
    "$cli" "${solve[@]}" --reference "${star[@]}" -o "$dir/reference.npy" > /dev/null
    "${launch[@]}" "$cli" "${solve[@]}" --cpu-devices 2 "${star[@]}" -o "$dir/six.npy" > /dev/null
    cmp "$dir/reference.npy" "$dir/six.npy" || fail "star4 over three processes differs from the reference"
    ;;
  modelled)
    # The node's profile (one calibration, which every process reads), rank 0
    # plans over every process's devices and the report puts the prediction
    # beside the measurement; the bits stay one process's.
    grid=(--nx 64 --ny 90 --iters 100)
    "$cli" calibrate --devices cpu "${one[@]}" --threads 1 --nx 64 --precision double --budget 3 > /dev/null
    "$cli" "${solve[@]}" "${one[@]}" "${grid[@]}" -o "$dir/one.npy" > /dev/null
    "${launch[@]}" "$cli" solve --devices cpu --threads 1 --no-learn --no-calibrate "${one[@]}" "${grid[@]}" --json \
      -o "$dir/three.npy" > "$dir/three.json"
    cmp "$dir/one.npy" "$dir/three.npy" || fail "three processes' solution differs from one process's"
    [[ $(grep -c '"predicted_iteration_compute_s"' "$dir/three.json") == 3 ]] ||
      fail "no prediction beside the measurement of each device"
    grep -q 'over 3 processes' "$dir/three.json" || fail "the split does not say it spans three processes"
    # The links between neighbouring processes, measured under the launcher, price their ghost rows.
    # "even over ... (...; links between them measured now: r0->r1 ..." or "planned over ... measured now (r0->r1 ...".
    grep -qE 'links between them measured now(: | \()r0->r1 [0-9.]+ us \+ bytes at [0-9.]+ GB/s, r1->r0 ' "$dir/three.json" ||
      fail "the split does not give the links it measured between the processes: $(grep -o '"split": "[^"]*"' "$dir/three.json")"
    links=$(ls "$XDG_CACHE_HOME"/hetstencil/*.links.json)
    grep -q '"schema": "hetstencil-process-links"' "$links" || fail "the links measured are not kept beside the profile"
    [[ $(grep -c '"bytes_per_s"' "$links") == 4 ]] || fail "the kept links are not both ways between each neighbouring pair"
    ;;
  local)
    # One process a device: rank r takes cpu r of the node's three.
    "$cli" "${solve[@]}" "${one[@]}" --nx 40 --ny 30 --iters 200 -o "$dir/one.npy" > /dev/null
    "${launch[@]}" "$cli" "${solve[@]}" --cpu-devices 3 --rank-devices local --nx 40 --ny 30 --iters 200 --json \
      -o "$dir/three.npy" > "$dir/three.json"
    cmp "$dir/one.npy" "$dir/three.npy" || fail "three processes' solution differs from one process's"
    for r in 0 1 2; do grep -q "\"r$r.cpu$r\"" "$dir/three.json" || fail "rank $r did not take cpu$r"; done
    # A process with no device of its own is refused, naming it; every process ends.
    if timeout 60 "${launch[@]}" "$cli" "${solve[@]}" --cpu-devices 2 --rank-devices local --nx 40 --ny 30 \
        --iters 200 > /dev/null 2> "$dir/err"; then
      fail "three processes ran on two devices, one a process"
    fi
    grep -q "hetstencil: error: rank 2 of 3: .*offers 2 device(s)" "$dir/err" || { cat "$dir/err"; fail "no message naming rank 2"; }
    ;;
  fails)
    # Rank 0 alone writes --output: its failure must end the others.
    start=$SECONDS
    if timeout 60 "${launch[@]}" "$cli" "${solve[@]}" "${one[@]}" --nx 40 --ny 30 --iters 100000000 -o "$dir/no/such/folder/u.npy" \
        > "$dir/out" 2> "$dir/err"; then
      fail "the job succeeded"
    fi
    ((SECONDS - start < 30)) || fail "the job took $((SECONDS - start)) s to end"
    grep -q "hetstencil: error: rank 0 of 3: " "$dir/err" || { cat "$dir/err"; fail "no message naming rank 0"; }
    # Only solve spans processes: another command under the launcher is refused.
    if timeout 60 "${launch[@]}" "$cli" probe > /dev/null 2> "$dir/err"; then fail "probe ran under mpiexec -np 3"; fi
    grep -q "only 'hetstencil solve' runs over several processes" "$dir/err" || { cat "$dir/err"; fail "probe not refused"; }
    ;;
  killed)
    "${launch[@]}" "$cli" "${solve[@]}" "${one[@]}" --nx 200 --ny 200 --iters 100000000 > "$dir/out" 2> "$dir/err" &
    job=$!
    for _ in $(seq 200); do
      [[ $(ranks_of "$job" | wc -l) == 3 ]] && break
      sleep 0.1
    done
    [[ $(ranks_of "$job" | wc -l) == 3 ]] || { kill "$job"; fail "three processes did not start"; }
    sleep 2  # into the solve
    end_by_killing_a_rank "$job"
    # The launcher ends the two processes left; the first to go ends the job, and
    # OpenMPI may stop forwarding the other's output then: one message at least.
    grep -q -E "hetstencil: (error: )?rank [01] of 3: " "$dir/err" ||
      { cat "$dir/err"; fail "no process left said why it ended"; }
    ;;
  *)
    echo "test_mpi_solve.sh: unknown case $case" >&2
    exit 2
    ;;
esac
echo "ok: $case"
