#!/usr/bin/env bash
# The thesis chute scene (GRSF's avalanche1M-study.xml) with 10^5 beads on P processes.
#
#   bench/avalanche_mpi.sh [PROCESSES] [STEPS] [BEADS]     (defaults 2, 100, 100000)
#
# The study starts from a settled initial state (GlobalInitialCondition, a .sim file made by an
# earlier run); without one the beads start on the scene's grid above the chute, as here, and
# fall freely for the first steps. The scene keeps its MPISettings (kd-tree, alwaysRebuild every
# 250 steps, splitNodeUpdateRatio 1, convergenceCheckRatio 1). Prints the mean wall time per
# step (after the first 5 steps), contacts, sweeps, and bytes and messages sent per step, from
# SimData.dat. Run it on an otherwise idle machine: the processes busy-wait in MPI calls.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
np="${1:-2}"
steps="${2:-100}"
beads="${3:-100000}"
media="$root/tests/data/grsf-scenes"
out="$root/build/bench_avalanche"
rm -rf "$out"
mkdir -p "$out"
grep -v 'GlobalInitialCondition file=' "$media/avalanche1M-study.xml" > "$out/avalanche.xml"
end=$(/usr/bin/python3 -c "print(0.0002 * ${steps})")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpiexec --oversubscribe -np "$np" "$root/build/release/apps/grain_sim_mpi/grain-sim-mpi" \
  -s "$out/avalanche.xml" -m "$media" -g "$out/run" \
  --set "SceneObjects/RigidBodies[@name=\"beads\"]/@instances=${beads}" \
  --set "SceneSettings/TimeStepperSettings/@endTime=${end}" > "$out/run.log" 2>&1
awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
            NR > 6 { n++; t += $(col["StepTime [s]"]); c += $(col["nContacts"]);
                     it += $(col["nIterations"]); b += $(col["BytesSent"]);
                     m += $(col["MessagesSent"]) }
            END { printf "processes %d  beads %d  steps %d\n", '"$np"', '"$beads"', n + 5;
                  printf "s/step %.4f  contacts %.0f  sweeps %.1f  bytes/step %.0f  msgs/step %.1f\n",
                         t / n, c / n, it / n, b / n, m / n }' \
  "$out/run/SimFiles/SimDataRECORD_0/SimData.dat"
