#!/usr/bin/env bash
# Time per step and traffic of grain-sim-mpi on 1..N processes (default 1 2), against grain-sim.
#
#   bench/mpi_scaling.sh [SCENE] [MAX_PROCESSES] [STEPS]
#
# SCENE defaults to bench/scenes/chute_flow.xml (10^5 beads). Each run writes its folder below
# build/bench_mpi/; the table reports, from SimData.dat, the mean wall time per step (after the
# first 5 steps), the mean contacts, and the bytes and messages sent per step by all processes.
# Run it on an otherwise idle machine: the processes busy-wait in MPI calls.
#
# BALANCE=count or BALANCE=time (environment) adds MPISettings to a copy of the scene: a kd-tree
# rebuilt every REBUILD steps (default 10) with bodies weighing 1 or their process's measured
# compute time (bodyWeight), with one predicted point 1 ms ahead; unset, the scene runs as it is (without
# MPISettings: the first grid, never rebuilt).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
scene="${1:-$root/bench/scenes/chute_flow.xml}"
max="${2:-2}"
steps="${3:-40}"
bin="$root/build/release/apps"
out="$root/build/bench_mpi"
rm -rf "$out"
mkdir -p "$out"
if [ -n "${BALANCE:-}" ]; then
  settings="<MPISettings><ProcessTopology mode=\"dynamic\" policy=\"alwaysRebuild\""
  settings+=" policyCheckEveryXTimeStep=\"${REBUILD:-10}\" bodyWeight=\"${BALANCE}\">"
  settings+="<Topology type=\"kdTree\" buildMode=\"AABB\" minCellSize=\"0.001\"/>"
  settings+="<MassPointPrediction nPoints=\"1\" deltaT=\"0.001\"/></ProcessTopology>"
  settings+="<InclusionSolverSettings splitNodeUpdateRatio=\"1\" convergenceCheckRatio=\"1\"/>"
  settings+="</MPISettings>"
  sed "s|</SceneSettings>|${settings}</SceneSettings>|" "$scene" > "$out/scene.xml"
  scene="$out/scene.xml"
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
dt=$(grep -o 'deltaT="[^"]*"' "$scene" | head -1 | cut -d'"' -f2)
end=$(/usr/bin/python3 -c "print(${dt} * ${steps})")
set_end=(--set "SceneSettings/TimeStepperSettings/@endTime=${end}")

summary() {  # run folder -> "time/step contacts bytes messages"
  awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
              NR > 6 { n++; t += $(col["StepTime [s]"]); c += $(col["nContacts"]);
                       b += $(col["BytesSent"]); m += $(col["MessagesSent"]) }
              END { printf "%.4f %.0f %.0f %.1f", t / n, c / n, b / n, m / n }' \
    "$1/SimFiles/SimDataRECORD_0/SimData.dat"
}

printf "%-12s %12s %10s %14s %10s %8s\n" "run" "s/step" "contacts" "bytes/step" "msgs/step" "speedup"
"$bin/grain_sim/grain-sim" -s "$scene" -g "$out/serial" "${set_end[@]}" > "$out/serial.log"
read -r t1 c b m <<< "$(summary "$out/serial")"
printf "%-12s %12s %10s %14s %10s %8s\n" "grain-sim" "$t1" "$c" "$b" "$m" "1.00"
for np in $(seq 1 "$max"); do
  mpiexec --oversubscribe -np "$np" "$bin/grain_sim_mpi/grain-sim-mpi" -s "$scene" \
    -g "$out/np$np" -l "$out/np$np/logs" "${set_end[@]}" > "$out/np$np.log"
  read -r t c b m <<< "$(summary "$out/np$np")"
  printf "%-12s %12s %10s %14s %10s %8.2f\n" "np $np" "$t" "$c" "$b" "$m" \
    "$(/usr/bin/python3 -c "print($t1 / $t)")"
done
