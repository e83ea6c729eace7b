#!/usr/bin/env bash
# grain against Bullet and LAMMPS on the same pile: N equal spheres (radius 0.01 m, density
# 2500 kg/m^3, Coulomb friction 0.5, no restitution) start at rest on a jittered grid above the
# floor of a square box and fall for 0.5 s (S steps of 1 ms) under gravity. The pile is generated
# once (seeded) and written in the three programs' forms; each program simulates it its own way:
#   grain   grain-sim, time step 1 ms, SORContact with 50 sweeps per step (minIter = maxIter),
#           S steps, no output (RecorderSettings noOutput; the run log SimData.dat only)
#   Bullet  grain-bullet_pile (bench/peers/bullet_pile.cpp): btDiscreteDynamicsWorld, sequential
#           impulse solver with 50 iterations, the same 1 ms steps, no sleeping
#   LAMMPS  lmp (bench/peers/lammps_pile.in): granular DEM, Hooke springs stiff enough for
#           resting overlaps of about F times the radius (default 0.01), its own time step (a
#           fiftieth of the contact time, some 60 us for the default pile) for the same S ms
# docs/benchmarks.md ("Against Bullet and LAMMPS") has the settings and why, and measured figures.
#
#   bench/peer_ratio.sh [--repeat K] [--spheres N] [--steps S] [--overlap F] [--keep]
#
# K runs of each program (default 3), alternated (the order turns by one program every run, so
# that a change of the machine's load falls on all three); N spheres (default 1000); S grain and
# Bullet steps of 1 ms (default 500; LAMMPS simulates the same S ms); F the resting overlap that
# sets LAMMPS's stiffness, as a fraction of the radius (default 0.01; its steps grow as
# 1/sqrt(F)). One process and one thread
# each. Builds grain's release preset (grain-sim and grain-bullet_pile only) if they are missing;
# needs Bullet and LAMMPS (tools/install-deps.sh peers). Prints the settings and the 1-minute
# load average ("load before L0"), then per run:
#   run K PROGRAM  wall W s  step-loop L s  mean-height Z m  kinetic-energy E J  load X
# (W the wall time of the whole process, start-up and reading of the pile included; L the program's
# own time of its stepping loop: for grain the sum of StepTime in SimData.dat, for Bullet its
# printed loop time, for LAMMPS its "Loop time"; Z and E of the final state, Z the mean height of
# the sphere centres, the check that the three simulate the same pile; X the 1-minute load
# average after the run), and at the end "load after L1" and
#   mean-height grain Z1  bullet Z2  lammps Z3  (m, medians)
#   step-loop ratios  bullet/grain X  lammps/grain Y  (medians of K runs)
#   ratios  bullet/grain X  lammps/grain Y  (medians of K runs)
# (the last line: medians of the ratios of whole-process wall times of each run; above 1 grain is
# faster). --keep leaves the pile files and the run logs in build/peer_ratio/.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
repeat=3
spheres=1000
steps=500
overlap=0.01
keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --repeat) repeat="$2"; shift 2 ;;
    --spheres) spheres="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    --overlap) overlap="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,35p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "usage: bench/peer_ratio.sh [--repeat K] [--spheres N] [--steps S] [--overlap F]" \
         "[--keep]" >&2
       exit 2 ;;
  esac
done
for n in "$repeat" "$spheres" "$steps"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "peer_ratio.sh: $n is not a positive integer" >&2; exit 2; }
done
/usr/bin/python3 -c "import sys; f = float(sys.argv[1]); sys.exit(0 if 0 < f < 0.5 else 1)" \
  "$overlap" 2> /dev/null ||
  { echo "peer_ratio.sh: --overlap $overlap is not a number between 0 and 0.5" >&2; exit 2; }
command -v lmp > /dev/null ||
  { echo "peer_ratio.sh: no lmp (LAMMPS): run tools/install-deps.sh peers" >&2; exit 1; }

build="$root/build/release"
grainSim="$build/apps/grain_sim/grain-sim"
bulletPile="$build/bench/grain-bullet_pile"
if [ ! -x "$grainSim" ] || [ ! -x "$bulletPile" ]; then
  launcher=()
  if command -v ccache > /dev/null; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(dirname "$root")}"
  fi
  echo "building grain-sim and grain-bullet_pile (release preset)" >&2
  (cd "$root" && cmake --preset release "${launcher[@]}" > /dev/null) ||
    { echo "peer_ratio.sh: configuring the release preset failed" >&2; exit 1; }
  grep -q '^GRAIN_BULLET_FOUND:INTERNAL=1' "$build/CMakeCache.txt" ||
    { echo "peer_ratio.sh: CMake found no Bullet: run tools/install-deps.sh peers" >&2; exit 1; }
  cmake --build "$build" --target grain-sim grain-bullet_pile > "$build/peer_ratio_build.log" ||
    { echo "peer_ratio.sh: building failed, see $build/peer_ratio_build.log" >&2; exit 1; }
fi

work="$root/build/peer_ratio"
rm -rf "$work"
mkdir -p "$work"
if [ "$keep" = 0 ]; then
  trap 'rm -rf "$work"' EXIT
fi

# The pile, in the three forms: pile.xml (grain), pile.txt (Bullet), pile.data and lammps.vars
# (LAMMPS: read_data file and the -var arguments).
/usr/bin/python3 - "$work" "$spheres" "$steps" "$overlap" <<'PY'
import math, random, sys

work, n, steps, overlap = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
r, rho, mu, g = 0.01, 2500.0, 0.5, 9.81
dt = 1e-3
iterations = 50
# Spheres on a square grid of spacing d = 2.5 r, side = ceil(cbrt(n)) spheres, layer above layer
# from z = 2 r, each moved by up to 0.1 r along every axis (seed 21); the walls are d/2 outside
# the outermost grid sites.
side = math.ceil(round(n ** (1.0 / 3.0), 9))
d = 2.5 * r
hw = side * d / 2
rng = random.Random(21)
pos = []
for k in range(n):
    i, j, layer = k % side, (k // side) % side, k // (side * side)
    pos.append(((i - (side - 1) / 2) * d + rng.uniform(-0.1, 0.1) * r,
                (j - (side - 1) / 2) * d + rng.uniform(-0.1, 0.1) * r,
                2 * r + layer * d + rng.uniform(-0.1, 0.1) * r))
top = max(p[2] for p in pos)

# LAMMPS's stiffness, damping and time step (bench/peers/lammps_pile.in has the reasoning).
m = rho * 4.0 / 3.0 * math.pi * r ** 3
height = n * (4.0 / 3.0 * math.pi * r ** 3) / (0.6 * (2 * hw) ** 2)
layers = height / (2 * r)
kn = layers * m * g / (overlap * r)
meff = m / 2
gamman = 2 * math.sqrt(kn / meff)
tc = math.pi * math.sqrt(meff / kn)
lmpSteps = math.ceil(steps * dt / (tc / 50))
lmpDt = steps * dt / lmpSteps

xyz = lambda p: "%.9g %.9g %.9g" % p
with open(work + "/pile.txt", "w") as f:
    f.write("# bench/peer_ratio.sh pile for grain-bullet_pile\n")
    for key, value in (("radius", r), ("density", rho), ("friction", mu), ("restitution", 0),
                       ("gravity", g), ("dt", dt), ("steps", steps), ("iterations", iterations),
                       ("halfwidth", hw)):
        f.write("%s %.17g\n" % (key, value))
    f.write("positions %d\n" % n)
    f.writelines(xyz(p) + "\n" for p in pos)

with open(work + "/pile.data", "w") as f:
    f.write("bench/peer_ratio.sh pile (atom_style sphere)\n\n%d atoms\n1 atom types\n\n" % n)
    f.write("%.9g %.9g xlo xhi\n%.9g %.9g ylo yhi\n0 %.9g zlo zhi\n\nAtoms # sphere\n\n"
            % (-hw, hw, -hw, hw, top + 2 * r))
    f.writelines("%d 1 %.9g %.9g %s\n" % (k + 1, 2 * r, rho, xyz(p)) for k, p in enumerate(pos))
with open(work + "/lammps.vars", "w") as f:
    f.write("-var data %s/pile.data -var kn %.6g -var gamman %.6g -var mu %g -var g %g -var hw %.9g"
            " -var dt %.6g -var steps %d -var skin %g\n"
            % (work, kn, gamman, mu, g, hw, lmpDt, lmpSteps, 0.2 * r))

wall = ('<Pos><Trafo trans="%s" axis="%s" deg="%d"/></Pos>')
walls = "\n".join("            " + wall % t for t in (
    ("0 0 0", "1 0 0", 0),
    ("%.9g 0 0" % hw, "0 1 0", -90), ("%.9g 0 0" % -hw, "0 1 0", 90),
    ("0 %.9g 0" % hw, "1 0 0", 90), ("0 %.9g 0" % -hw, "1 0 0", -90)))
spheresXml = "\n".join('            <Pos><Trafo trans="%s" axis="0 0 1" deg="0"/></Pos>' % xyz(p)
                       for p in pos)
with open(work + "/pile.xml", "w") as f:
    f.write("""<?xml version="1.0" encoding="UTF-8"?>
<!-- bench/peer_ratio.sh pile: %(n)d spheres falling into a box, %(steps)d steps of 1 ms. -->
<DynamicsSystem xmlns="SceneFile">
  <SceneSettings>
    <RecorderSettings mode="noOutput"/>
    <TimeStepperSettings deltaT="%(dt)g" endTime="%(end)g">
      <InclusionSolverSettings method="SORContact" useGPU="false" alphaJORProx="0.5"
                               alphaSORProx="1.5" matrixRStrategy="max" convergenceMethod="InVelocity"
                               minIter="%(it)d" maxIter="%(it)d" absTol="1e-5" relTol="1e-6"
                               usePercussionCache="true" driftCorrectionGap="true"
                               driftCorrectionGapAlpha="0.1" driftCorrectionGapSlop="1e-4"/>
    </TimeStepperSettings>
    <ContactParameterMap>
      <ContactParameterStandard type="UCF" mu="%(mu)g" epsilonN="0.0" epsilonT="0.0"/>
    </ContactParameterMap>
    <ExternalForces>
      <ForceField applyTo="all" type="gravity" value="%(g)g" direction="0 0 -1"/>
    </ExternalForces>
  </SceneSettings>
  <SceneObjects>
    <RigidBodies name="spheres" instances="%(n)d" groupId="0">
      <Geometry>
        <Sphere distribute="uniform" radius="%(r)g"/>
      </Geometry>
      <DynamicProperties>
        <DynamicState type="simulated"/>
        <Mass distribute="homogen" density="%(rho)g"/>
        <InertiaTensor type="homogen"/>
        <Material distribute="uniform" id="0"/>
        <InitialCondition type="posvel">
          <InitialPosition distribute="transforms">
%(spheres)s
          </InitialPosition>
          <InitialVelocity distribute="none"/>
        </InitialCondition>
      </DynamicProperties>
    </RigidBodies>
    <RigidBodies name="floor and walls" instances="5" groupId="1">
      <Geometry>
        <Halfspace distribute="uniform" normal="0 0 1"/>
      </Geometry>
      <DynamicProperties>
        <DynamicState type="static"/>
        <Material distribute="uniform" id="0"/>
        <InitialCondition type="posvel">
          <InitialPosition distribute="transforms">
%(walls)s
          </InitialPosition>
        </InitialCondition>
      </DynamicProperties>
    </RigidBodies>
  </SceneObjects>
</DynamicsSystem>
""" % dict(n=n, steps=steps, dt=dt, end=steps * dt, it=iterations, mu=mu, g=g, r=r, rho=rho,
           spheres=spheresXml, walls=walls))

print("pile  %d spheres r %g m  box %.4g m x %.4g m  grid %d x %d, %d layers from z = %g m"
      " to %.4g m" % (n, r, 2 * hw, 2 * hw, side, side, math.ceil(n / side ** 2), 2 * r, top))
print("grain  dt %g s  %d steps  SORContact %d sweeps" % (dt, steps, iterations))
print("bullet  dt %g s  %d steps  %d solver iterations" % (dt, steps, iterations))
print("lammps  resting overlap %g r  kn %.4g N/m  gamman %.4g 1/s  contact time %.4g s  dt %.4g s"
      "  %d steps" % (overlap, kn, gamman, tc, lmpDt, lmpSteps))
PY

export OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
read -r -a lammpsVars < "$work/lammps.vars"
sphereMass=$(/usr/bin/python3 -c "import math; print(2500 * 4 / 3 * math.pi * 0.01 ** 3)")
results="$work/results.tsv"
: > "$results"
load0=$(cut -d' ' -f1 /proc/loadavg)
echo "load before $load0"

# run K PROGRAM: one run, its line, and a row "K PROGRAM wall loop height energy" of $results.
run() {
  local k="$1" program="$2" log="$work/$2_$1.log" start end wall loop height energy
  start=$(date +%s.%N)
  case "$program" in
    grain)
      rm -rf "$work/grain_out"
      "$grainSim" -s "$work/pile.xml" -g "$work/grain_out" > "$log" 2>&1 ;;
    bullet) "$bulletPile" "$work/pile.txt" > "$log" 2>&1 ;;
    lammps) (cd "$work" && lmp -in "$root/bench/peers/lammps_pile.in" -log none -nocite \
               "${lammpsVars[@]}") > "$log" 2>&1 ;;
  esac || { echo "peer_ratio.sh: $program failed, see $log" >&2; tail -5 "$log" >&2; exit 1; }
  end=$(date +%s.%N)
  wall=$(/usr/bin/python3 -c "print('%.4f' % ($end - $start))")
  case "$program" in
    grain)
      # Sum of StepTime; mean height from the potential energy sum(m g z) of the last step.
      read -r loop height energy < <(awk -F'\t' -v m="$sphereMass" -v n="$spheres" -v g=9.81 '
        /^# / && !header { header = 1; for (i = 1; i <= NF; i++) col[$i] = i; next }
        /^#/ { next }
        { loop += $col["StepTime [s]"]; pot = $col["PotEnergy [J]"]; kin = $col["KinEnergy [J]"] }
        END { printf "%.4f %.5f %.4g\n", loop, pot / (n * m * g), kin }' \
        "$(ls -d "$work"/grain_out/SimFiles/SimDataRECORD_*/SimData.dat | head -1)") ;;
    bullet)
      read -r loop height energy < <(awk '$1 == "bullet" {
        for (i = 1; i < NF; i++) v[$i] = $(i + 1)
        print v["step-loop"], v["mean-height"], v["kinetic-energy"] }' "$log") ;;
    lammps)
      read -r loop height energy < <(awk '/^Loop time of/ { loop = $4 }
        $1 == "lammps" { for (i = 1; i < NF; i++) v[$i] = $(i + 1)
                         print loop, v["mean-height"], v["kinetic-energy"] }' "$log") ;;
  esac
  printf 'run %d %-6s  wall %s s  step-loop %s s  mean-height %s m  kinetic-energy %s J' \
    "$k" "$program" "$wall" "$loop" "$height" "$energy"
  printf '  load %s\n' "$(cut -d' ' -f1 /proc/loadavg)"
  printf '%d\t%s\t%s\t%s\t%s\t%s\n' "$k" "$program" "$wall" "$loop" "$height" "$energy" \
    >> "$results"
}
programs=(grain bullet lammps)
for k in $(seq "$repeat"); do
  for i in 0 1 2; do
    run "$k" "${programs[$(((k - 1 + i) % 3))]}"
  done
done

load1=$(cut -d' ' -f1 /proc/loadavg)
echo "load after $load1"
/usr/bin/python3 - "$results" <<'PY'
import statistics, sys
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1])]
runs = {}
for k, program, wall, loop, height, energy in rows:
    runs.setdefault(int(k), {})[program] = (float(wall), float(loop), float(height))
med = statistics.median
height = {p: med(r[p][2] for r in runs.values()) for p in ("grain", "bullet", "lammps")}
print("mean-height grain %.5f  bullet %.5f  lammps %.5f  (m, medians)"
      % (height["grain"], height["bullet"], height["lammps"]))
for label, i in (("step-loop ratios", 1), ("ratios", 0)):
    print("%s  bullet/grain %.2f  lammps/grain %.2f  (medians of %d runs)"
          % (label, med(r["bullet"][i] / r["grain"][i] for r in runs.values()),
             med(r["lammps"][i] / r["grain"][i] for r in runs.values()), len(runs)))
PY
