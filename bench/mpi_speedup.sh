#!/usr/bin/env bash
# Speed-up of grain-sim-mpi on 2 processes over 1 on this machine, per step and for the whole run
# (mpirun's launch, the scene's loading and the output included), on the settled lattice pile of
# bench/smpi_scaling.sh (spheres touching on a simple cubic lattice, 30 fixed sweeps per step,
# warm start, no MPISettings: grain's default decomposition).
#
#   bench/mpi_speedup.sh [--bodies N] [--steps S] [--repeat K] [--jitter D] [BINARY [BINARY_B]]
#
# N bodies (default 40000), S steps (default 40), K repetitions (default 5); D (m, default 0)
# moves every sphere's start by D in a random direction (the scene's InitialPosition jitter): the
# perfect lattice (D = 0) lets one process keep exact symmetry, which 2 processes lose (see
# docs/benchmarks.md, "Two processes against one"); D = 1e-9 gives every run the round-off of a
# real pile. BINARY defaults to
# build/release/apps/grain_sim_mpi/grain-sim-mpi. With BINARY_B the two builds are alternated
# (A 1, A 2, B 1, B 2, then again), so that a change of the machine's load falls on both. Per run:
#   run BUILD processes P  s/step T  whole W  load L
# with T the mean StepTime of steps 6-S (SimData.dat: process 0's step, waits included), W the
# wall time of the mpirun command and L the 1-minute load average after the run; then per build
#   speedup BUILD  per step X  whole run Y
# with the ratios of the medians (1 process over 2). Run it on an otherwise idle machine: the
# processes busy-wait in MPI calls, so a third busy process takes a core from one of them.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bodies=40000
steps=40
repeat=5
jitter=0
builds=()
while [ $# -gt 0 ]; do
  case "$1" in
    --bodies) bodies="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    --repeat) repeat="$2"; shift 2 ;;
    --jitter) jitter="$2"; shift 2 ;;
    -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "mpi_speedup.sh: unknown option $1" >&2; exit 2 ;;
    *) builds+=("$(realpath "$1")"); shift ;;
  esac
done
if [ ${#builds[@]} -eq 0 ]; then
  builds=("$root/build/release/apps/grain_sim_mpi/grain-sim-mpi")
  [ -x "${builds[0]}" ] || cmake --build --preset release --target grain-sim-mpi >&2
fi
[ "$steps" -ge 7 ] || { echo "mpi_speedup.sh: --steps must be at least 7" >&2; exit 2; }
out="$root/build/bench_speedup"
rm -rf "$out"
mkdir -p "$out"
"$root/bench/smpi_scaling.sh" --bodies-per-rank "$bodies" --jitter "$jitter" --write-scene 1 \
  "$out/scene.xml" >&2
end=$(/usr/bin/python3 -c "print(0.0005 * $steps)")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

results="$out/results.tsv"
for k in $(seq "$repeat"); do
  for b in "${!builds[@]}"; do
    name=$([ "$b" = 0 ] && echo A || echo B)
    for np in 1 2; do
      dir="$out/$name-$np-$k"
      start=$(date +%s.%N)
      mpirun --oversubscribe -np "$np" "${builds[$b]}" -s "$out/scene.xml" -g "$dir" \
        --set "SceneSettings/TimeStepperSettings/@endTime=$end" > "$dir.log" 2>&1
      stop=$(date +%s.%N)
      step=$(awk -F'\t' '$1 == "# WallTime [s]" { for (i = 1; i <= NF; ++i) col[$i] = i; next }
                         !/^#/ && $(col["Step"]) > 5 { s += $(col["StepTime [s]"]); n++ }
                         END { printf "%.5f", s / n }' "$dir/SimFiles/SimDataRECORD_0/SimData.dat")
      whole=$(/usr/bin/python3 -c "print(f'{$stop - $start:.3f}')")
      load=$(cut -d' ' -f1 /proc/loadavg)
      printf 'run %s processes %d  s/step %s  whole %s  load %s\n' "$name" "$np" "$step" "$whole" "$load"
      printf '%s\t%d\t%s\t%s\n' "$name" "$np" "$step" "$whole" >> "$results"
      rm -rf "$dir"
    done
  done
done
/usr/bin/python3 - "$results" <<'EOF'
import statistics, sys
rows = [line.split('\t') for line in open(sys.argv[1]).read().split('\n') if line]
for name in sorted({r[0] for r in rows}):
    def median(np, col):
        return statistics.median(float(r[col]) for r in rows if r[0] == name and r[1] == np)
    print(f"speedup {name}  per step {median('1', 2) / median('2', 2):.3f}"
          f"  whole run {median('1', 3) / median('2', 3):.3f}")
EOF
