#!/usr/bin/env bash
# Work per process of grain-sim-mpi, counted in instructions: the weak-scaling lattice of
# bench/smpi_scaling.sh (N bodies per process, 30 sweeps per step) run for real with OpenMPI
# (oversubscribed: every process on this machine) under valgrind's callgrind, which counts each
# process's executed instructions whatever else the machine does. The MPI library's own
# instructions (its waits and polling, which grow with oversubscription) and the dynamic loader's
# are left out; everything else (grain, libstdc++, libc, Zoltan) is the process's work. Each rank
# count runs twice, 2 and 2 + S steps; the difference over S steps gives the work per step.
#
#   bench/work_per_process.sh [--bodies-per-rank N | --strong B] [--ranks 'LIST'] [--steps S] [--jitter D] [--keep]
#
# With --strong B every rank count runs the same lattice of B bodies (strong scaling): then
# 1 / Z of the busiest process bounds the speed-up over the first rank count from the compute
# alone (for example B 40000, LIST '1 2': the scene of bench/mpi_speedup.sh). --jitter D starts
# every sphere D (m) away from its lattice site, as bench/smpi_scaling.sh --jitter does.
#
# One line per rank count (default LIST '1 4 16', N 1500, S 4):
#   ranks R  instructions/step max X  mean Y  ratio Z      Z = X / X(first count of LIST)
# On a cluster each process has its own core and caches, so its compute time follows its work:
# 1 / Z bounds the weak-scaling efficiency from the compute alone (docs/benchmarks.md). The
# release build (build/release) is built if missing; run folders stay in build/work_bench
# (removed unless --keep).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
perRank=1500
strong=0
ranks="1 4 16"
steps=4
keep=0
jitter=0
usage() {
  sed -n '/^#   bench/p' "${BASH_SOURCE[0]}" | sed 's/^# *//' >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case "$1" in
    --bodies-per-rank) perRank="$2"; shift 2 ;;
    --strong) strong="$2"; shift 2 ;;
    --ranks) ranks="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    --jitter) jitter="$2"; shift 2 ;;
    *) usage ;;
  esac
done
[ "$steps" -ge 1 ] || { echo "work_per_process: --steps must be at least 1" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "work_per_process: valgrind is missing (tools/install-deps.sh smpi installs it)" >&2; exit 2; }
bin="$root/build/release/apps/grain_sim_mpi/grain-sim-mpi"
if [ ! -x "$bin" ]; then
  echo "work_per_process: building grain-sim-mpi (build/release)" >&2
  (cd "$root" && cmake --preset release >/dev/null && cmake --build build/release --target grain-sim-mpi) >&2
fi
work="$root/build/work_bench"
rm -rf "$work"
mkdir -p "$work"
if [ "$(id -u)" = 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
dt=0.0005
for r in $ranks; do
  if [ "$strong" -gt 0 ]; then
    "$root/bench/smpi_scaling.sh" --bodies-per-rank "$strong" --jitter "$jitter" --write-scene 1 "$work/scene_$r.xml" >&2
  else
    "$root/bench/smpi_scaling.sh" --bodies-per-rank "$perRank" --jitter "$jitter" --write-scene "$r" "$work/scene_$r.xml" >&2
  fi
  for n in 2 $((2 + steps)); do
    dir="$work/r$r-s$n"
    mkdir -p "$dir"
    end=$(/usr/bin/python3 -c "print($dt * $n)")
    echo "work_per_process: $r processes, $n steps (load $(cut -d' ' -f1 /proc/loadavg))" >&2
    mpirun --oversubscribe -np "$r" valgrind --tool=callgrind \
      "--callgrind-out-file=$dir/callgrind.%q{OMPI_COMM_WORLD_RANK}" \
      "$bin" -s "$work/scene_$r.xml" -g "$dir/run" \
      --set "SceneSettings/TimeStepperSettings/@endTime=$end" >"$dir/log" 2>&1 ||
      { echo "work_per_process: the run failed, see $dir/log" >&2; exit 1; }
  done
  /usr/bin/python3 "$root/bench/callgrind_work.py" --ranks "$r" --steps "$steps" \
    "$work/r$r-s2" "$work/r$r-s$((2 + steps))" "$work/reference"
done
[ "$keep" = 1 ] || rm -rf "$work"
