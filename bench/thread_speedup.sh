#!/usr/bin/env bash
# Speed-up of 2 threads over 1 in one process on this machine, per step and for the whole run
# (the scene's loading included), on the settled lattice pile of bench/smpi_scaling.sh (spheres
# touching on a simple cubic lattice, 30 fixed sweeps per step, warm start), and the same scene on
# 2 processes x 1 thread (grain-sim-mpi) for comparison.
#
#   bench/thread_speedup.sh [--bodies N] [--steps S] [--repeat K] [--jitter D] [--no-mpi]
#
# N bodies (default 40000), S steps (default 40), K repetitions (default 5), D the start jitter
# (m, default 0; as bench/mpi_speedup.sh: 1e-9 gives the perfect lattice a real pile's
# round-off, which the coloured sweeps of 2 threads have anyway), with the builds of
# build/release (grain-sim, grain-sim-mpi). Each repetition runs grain-sim --threads 1, grain-sim
# --threads 2 and mpirun -np 2 grain-sim-mpi (unless --no-mpi), in turn. Per run:
#   run CONFIG  s/step T  graph G  solve V  whole W  load L
# with T the mean StepTime, G the mean ContactGraphTime (the colouring with 2 threads) and V the
# mean ContactSolveTime of steps 6-S (SimData.dat), W the wall time of the command and L the
# 1-minute load average after the run; at the end, per configuration, the ratios of the medians
#   speedup CONFIG  per step X  solve Y  whole run Z       (threads-1 over CONFIG)
# Run it on an otherwise idle machine: a third busy process takes a core from one of the threads.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bodies=40000
steps=40
repeat=5
mpi=1
jitter=0
while [ $# -gt 0 ]; do
  case "$1" in
    --bodies) bodies="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    --repeat) repeat="$2"; shift 2 ;;
    --no-mpi) mpi=0; shift ;;
    --jitter) jitter="$2"; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "thread_speedup.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ "$steps" -ge 7 ] || { echo "thread_speedup.sh: --steps must be at least 7" >&2; exit 2; }
sim="$root/build/release/apps/grain_sim/grain-sim"
simMpi="$root/build/release/apps/grain_sim_mpi/grain-sim-mpi"
out="$root/build/bench_threads"
rm -rf "$out"
mkdir -p "$out"
"$root/bench/smpi_scaling.sh" --bodies-per-rank "$bodies" --jitter "$jitter" --write-scene 1 \
  "$out/scene.xml" >&2
end=$(/usr/bin/python3 -c "print(0.0005 * $steps)")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
configs=(threads-1 threads-2)
[ "$mpi" = 0 ] || configs+=(ranks-2)

results="$out/results.tsv"
for k in $(seq "$repeat"); do
  for config in "${configs[@]}"; do
    dir="$out/$config-$k"
    set -- -s "$out/scene.xml" -g "$dir" --set "SceneSettings/TimeStepperSettings/@endTime=$end"
    start=$(date +%s.%N)
    case "$config" in
      threads-1) "$sim" "$@" --threads 1 > "$dir.log" 2>&1 ;;
      threads-2) "$sim" "$@" --threads 2 > "$dir.log" 2>&1 ;;
      ranks-2) mpirun --oversubscribe -np 2 "$simMpi" "$@" > "$dir.log" 2>&1 ;;
    esac
    stop=$(date +%s.%N)
    read -r step graph solve < <(awk -F'\t' '
        $1 == "# WallTime [s]" { for (i = 1; i <= NF; ++i) col[$i] = i; next }
        !/^#/ && $(col["Step"]) > 5 { s += $(col["StepTime [s]"]); g += $(col["ContactGraphTime [s]"])
                                      v += $(col["ContactSolveTime [s]"]); n++ }
        END { printf "%.5f %.6f %.5f\n", s / n, g / n, v / n }' \
        "$dir/SimFiles/SimDataRECORD_0/SimData.dat")
    whole=$(/usr/bin/python3 -c "print(f'{$stop - $start:.3f}')")
    load=$(cut -d' ' -f1 /proc/loadavg)
    printf 'run %-9s  s/step %s  graph %s  solve %s  whole %s  load %s\n' "$config" "$step" \
      "$graph" "$solve" "$whole" "$load"
    printf '%s\t%s\t%s\t%s\t%s\n' "$config" "$step" "$graph" "$solve" "$whole" >> "$results"
    rm -rf "$dir"
  done
done
/usr/bin/python3 - "$results" <<'PY'
import statistics, sys
rows = [line.split('\t') for line in open(sys.argv[1]).read().split('\n') if line]
def median(config, col):
    return statistics.median(float(r[col]) for r in rows if r[0] == config)
for config in sorted({r[0] for r in rows} - {'threads-1'}):
    print(f"speedup {config}  per step {median('threads-1', 1) / median(config, 1):.3f}"
          f"  solve {median('threads-1', 3) / median(config, 3):.3f}"
          f"  whole run {median('threads-1', 4) / median(config, 4):.3f}")
PY
