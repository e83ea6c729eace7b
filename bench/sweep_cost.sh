#!/usr/bin/env bash
# The two serial costs per sweep and bead (docs/benchmarks.md), measured with grain-sim on the
# chute-flow scene (bench/scenes/chute_flow.xml) cut to BEADS beads (default 2600, the thesis's
# production load per process: 10^6 beads on 384 processes):
#   t_s  contact-solve time per sweep and bead (ContactSolveTime / nIterations / beads)
#   t_0  the rest of the step per bead ((StepTime - ContactSolveTime) / beads)
# means over steps 6..STEPS from SimData.dat. Run it on an otherwise idle machine.
#
#   bench/sweep_cost.sh [BEADS] [STEPS]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
beads="${1:-2600}"
steps="${2:-40}"
out="$root/build/bench_sweep_cost"
rm -rf "$out"
mkdir -p "$out"
# 20 beads across the chute, as in the scene; as many along it as fill one layer of 20 x 26 per
# 520 beads (a block 5 layers high for 2600 beads).
per_x=$(( (beads + 20 * 5 - 1) / (20 * 5) ))
b='SceneObjects/RigidBodies[@name="beads"]'
ic="$b/DynamicProperties/InitialCondition/InitialPosition"
end=$(/usr/bin/python3 -c "print(0.0005 * ${steps})")
"$root/build/release/apps/grain_sim/grain-sim" -s "$root/bench/scenes/chute_flow.xml" -g "$out" \
  --set "$b/@instances=$beads" --set "$ic/@gridSizeX=$per_x" \
  --set "SceneSettings/TimeStepperSettings/@endTime=$end" > "$out/run.log"
awk -F'\t' -v beads="$beads" '
  /^# WallTime/ { for (i = 1; i <= NF; ++i) { name = $i; sub(/^# /, "", name); col[name] = i }; next }
  /^#/ { next }
  { ++k; if (k <= 5) next
    n++; step += $(col["StepTime [s]"]); solve += $(col["ContactSolveTime [s]"])
    sweeps += $(col["nIterations"]); contacts += $(col["nContacts"]) }
  END {
    printf "beads %d, steps %d..%d: %.1f contacts, %.1f sweeps per step\n", beads, 6, 5 + n, contacts / n, sweeps / n
    printf "step %.3f ms, contact solve %.3f ms per step\n", 1e3 * step / n, 1e3 * solve / n
    printf "t_s = %.4f us per sweep and bead\n", 1e6 * solve / sweeps / beads
    printf "t_0 = %.3f us per step and bead\n", 1e6 * (step - solve) / n / beads
  }' "$out/SimFiles/SimDataRECORD_0/SimData.dat"
