#!/usr/bin/env bash
# Weak (or strong) scaling of grain-sim-mpi on a simulated cluster: SimGrid's SMPI runs every
# rank on this machine, executes its computation for real and simulates the network of the
# platform file. docs/benchmarks.md ("Simulated cluster") has the platform, the calibration and
# the measured tables.
#
#   bench/smpi_scaling.sh --bodies-per-rank N --ranks 'LIST' [--platform FILE] [--thesis]
#                         [--strong] [--network-only] [--steps S] [--keep] [--write-scene R FILE]
#                         [--method SOR|APGD|PQN|IPM] [--tolerance TOL] [--max-iter K]
#                         [--cold] [--settled] [--jitter D] [--rebuild-every K] [--trace]
#                         [--isolated] [--smpi-option OPTION]...
#   bench/smpi_scaling.sh --calibrate [--bodies-per-rank N] [--steps S] [--repeat K]
#
# Weak scaling (default): a settled lattice pile (spheres r = 5 mm on a touching simple cubic
# lattice resting on a floor, LAYERS = 15 layers high) of about N bodies per rank, growing in x
# and y with the ranks (one tile of a x b x 15 spheres per rank), 30 sweeps per step
# (minIter = maxIter = 30), warm start on. Each rank count runs S steps (default 6); the time per
# step is the maximum over the ranks of the simulated seconds per step (MPI_Wtime) of steps 2-S,
# from grain-sim-mpi's `profile` line. One line per rank count:
#   ranks R  s/step T  efficiency E        E = T(1) / T(R)
# (without 1 in LIST the first rank count is the reference). The scene has no MPISettings:
# grain's defaults (a kd-tree over the initial centres, static; splitNodeUpdateRatio =
# convergenceCheckRatio = 1 as long as those are grain's defaults); --thesis adds MPISettings
# with the thesis' splitNodeUpdateRatio = convergenceCheckRatio = 1 and a static grid.
# --strong: one scene of 10^6 bodies (250 x 250 x 16) on LIST (default 16 ... 1024 ranks), with
# --jitter 1e-9 unless --jitter is given (on the perfect lattice the first kd-tree build on 1024
# ranks stalls in SimGrid's linear MPI_Scan, docs/mpi.md "Under SMPI"):
#   ranks R  s/step T  efficiency E        E = T(R0) R0 / (T(R) R), R0 the first rank count
# --network-only: computation takes no simulated time (smpi/simulate-computation:no), so the
# simulated time per step is that of the messages and collectives alone, without waiting for
# other processes' computation: the network term at scale. One line per rank count:
#   ranks R  s/step T  exchange X  collectives Y     (maxima over the processes, s per step)
# The compute term is counted, per process and without this machine's shared caches, by
# bench/work_per_process.sh.
# --method APGD, PQN or IPM: the scene's solver is matrix-free APGD, PQN or IPM (method="APGD",
# "PQN" or "IPM", matrixFree="true"), which stops on the natural-map error <= TOL (--tolerance,
# default 1e-6; at most --max-iter K iterations, default 5000; PQN: at most 1000 Newton steps,
# then at most K sweeps of its fallback, the velocity SOR, whose sweeps count among its
# iterations; IPM: on its relaxed measure <= TOL, after at most 100 interior point iterations
# (ipmMaxIter, not K) and its polishing stages, which count among its iterations; it solves the
# convex relaxation and uses no warm start). --tolerance with the default --method SOR: the SOR sweeps stop on the
# same test (convergenceMethod="NaturalMap", relTol = TOL, minIter 1, maxIter K) instead of
# making 30 sweeps. With either, each rank count prints a second line, the means over steps 2-S:
#   solver M ranks R  iterations I  messages N  bytes B  reductions C  natural-map E  max-iter-steps F
#     not-converged U  fallbacks P
# (one line; I: iterations per step, the maximum over the processes; N, B: neighbour messages and
# bytes per step, summed over the processes; C: reductions (allreduces) per step of the process
# that made most; E: the largest natural-map error reached; F: steps that stopped at K
# iterations; U: steps whose solver did not report convergence; P: steps in which PQN fell back).
# --cold: no warm start (usePercussionCache="false"): every step solves from zero percussions.
# --settled: the simulated run starts warm. Each rank count's scene is first solved for one step
# for real by the serial grain-sim (build/release, built if missing; SOR with 2 threads to a
# natural-map error <= TOL, default 1e-6), which records the state and its warm-start data, and
# grain-sim-mpi continues from that record (--restart, with the scene's solver settings and no
# output), so the first simulated step starts from the settled pile's percussions instead of from
# zero: the warm rows of a solver without the cost of simulating a cold first step, which on 256
# and more processes takes most of a run's time. The simulated run makes steps 2-(S+1) and times
# steps 3-(S+1) (as many as without --settled; the first step of a run is never timed). Not with
# --cold or --calibrate.
# --jitter D: every sphere starts D (m) away from its lattice site, in a random direction (the
# scene's InitialPosition jitter; default 0, the perfect lattice; 1e-9 with --strong). On the
# perfect lattice a single process keeps every layer's velocities bitwise equal, and with them
# predictable branches in its sweeps, which runs on more processes lose to the round-off of the
# split bodies' averaging;
# D = 1e-9 gives every run that round-off (docs/benchmarks.md, "Two processes against one").
# --rebuild-every K: MPISettings with a kd-tree (Zoltan RCB, AABB) rebuilt every K steps
# (mode="dynamic", policy="alwaysRebuild"), so that the rebuilds' collectives and body migration
# run at scale; the `profile` line's rebuild term and the `rebuilds` line (bodies moved, messages)
# go to stderr with each rank count's profile. Not with --thesis.
# --trace: SimGrid traces every MPI call of every process (Paje format, kept as
# build/smpi_bench/MODE/trace_R.paje, as with --keep) and bench/smpi_trace_summary.py prints, after
# each rank count's profile on stderr, the simulated time and the calls per process of each MPI
# call over the whole run (start-up, first decomposition and rebuilds included): where the
# collectives' time goes, Zoltan's among them, which grain's own traffic counters do not see.
# SimGrid holds the whole trace in memory until the run ends (about 1 GB per minute of a
# 1024-rank run): use it on short rows or fewer ranks.
# --isolated: the weak-scaling tiles of R ranks lie 0.1 m apart (each its own RigidBodies group,
# the same jitter as the single tile's), so that the first decomposition gives every rank one
# tile that touches no other: the ranks share no body and exchange no body records (only the
# body exchange's empty messages), and each computes what the single tile computes. The time per
# step then has every cost of R simulated processes but the coupling (taking turns on this
# machine's caches, the timing of each compute burst here, the step's collectives); the
# efficiency T(1) / T(R) of these runs is what the simulation gives processes that share nothing,
# and the isolated time divided by the coupled one of the same rank count is what the coupling
# leaves of the speed (docs/benchmarks.md, "Tiles that touch no other"). Weak scaling only (not
# with --strong, --thesis or --settled).
# --smpi-option OPTION: one more option for smpirun after the script's own (e.g.
# --cfg=smpi/grow-injected-times:yes), which it overrides; repeatable.
#
# The platform (default bench/platforms/frontera.xml: TACC Frontera's nodes and fat tree) is
# read with its hostfile made here: the ranks fill one node's cores after the other. The
# simulated cores compute at this machine's speed (the platform's host speed equals
# --cfg=smpi/host-speed). Progress, the settings used and each run's profile go to stderr; run
# folders and logs stay in build/smpi_bench/MODE/ (removed unless --keep). --write-scene R FILE only
# writes the scene of R ranks to FILE (for real runs of the same scene, e.g. the calibration).
#
# --calibrate: the scenes of 1 and 2 ranks (N default 1500, S default 21 steps), K times each
# (default 3), simulated on bench/platforms/workstation.xml (one node with 2 cores) and run for real
# with OpenMPI's mpirun on this machine (build/release, built if missing); prints per run
#   calibration ranks R  simulated T_s  real T_r  simulated/real Q
# with the median over the K runs (s per step, steps 2-S). Run it on an idle machine.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

usage() {
  sed -n '7,12p' "$0" | sed 's/^# *//' >&2
  exit 2
}
perRank=""
ranks=""
platform="$root/bench/platforms/frontera.xml"
thesis=0
strong=0
networkOnly=0
steps=6
keep=0
writeScene=""
calibrate=0
method=SOR
tolerance=""
maxIter=5000
warm=true
settled=0
jitter=""
rebuildEvery=""
trace=0
isolated=0
repeat=3
extraSmpi=()
while [ $# -gt 0 ]; do
  case "$1" in
    --bodies-per-rank) perRank="$2"; shift 2 ;;
    --ranks) ranks="$2"; shift 2 ;;
    --platform) platform="$(realpath "$2")"; shift 2 ;;
    --thesis) thesis=1; shift ;;
    --strong) strong=1; shift ;;
    --network-only) networkOnly=1; shift ;;
    --steps) steps="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    --calibrate) calibrate=1; shift ;;
    --repeat) repeat="$2"; shift 2 ;;
    --write-scene) writeScene="$2"; sceneFile="$3"; shift 3 ;;
    --method) method="$2"; shift 2 ;;
    --tolerance) tolerance="$2"; shift 2 ;;
    --max-iter) maxIter="$2"; shift 2 ;;
    --cold) warm=false; shift ;;
    --settled) settled=1; shift ;;
    --jitter) jitter="$2"; shift 2 ;;
    --rebuild-every) rebuildEvery="$2"; shift 2 ;;
    --trace) trace=1; keep=1; shift ;;
    --isolated) isolated=1; shift ;;
    --smpi-option) extraSmpi+=("$2"); shift 2 ;;
    *) usage ;;
  esac
done
[ -z "$writeScene" ] || ranks="$writeScene"
if [ "$calibrate" = 1 ]; then
  perRank="${perRank:-1500}"
  ranks="1 2"
  platform="$root/bench/platforms/workstation.xml"
  [ "$steps" != 6 ] || steps=21
fi
if [ "$strong" = 1 ]; then
  ranks="${ranks:-16 32 64 128 256 512 1024}"
  jitter="${jitter:-1e-9}"
else
  [ -n "$perRank" ] && [ -n "$ranks" ] || usage
fi
jitter="${jitter:-0}"
if [ "$settled" = 1 ]; then
  [ "$warm" = true ] || { echo "smpi_scaling: --settled and --cold exclude each other" >&2; exit 2; }
  [ "$calibrate" = 0 ] || { echo "smpi_scaling: --settled and --calibrate exclude each other" >&2; exit 2; }
fi
[ -f "$platform" ] || { echo "smpi_scaling: no platform file $platform" >&2; exit 2; }
[ "$steps" -ge 2 ] || { echo "smpi_scaling: --steps must be at least 2" >&2; exit 2; }
if [ "$isolated" = 1 ]; then
  [ "$strong" = 0 ] && [ "$thesis" = 0 ] && [ "$settled" = 0 ] ||
    { echo "smpi_scaling: --isolated is weak scaling only (not with --strong, --thesis or --settled)" >&2; exit 2; }
fi
if [ -n "$rebuildEvery" ]; then
  [[ "$rebuildEvery" =~ ^[1-9][0-9]*$ ]] ||
    { echo "smpi_scaling: --rebuild-every must be a step count >= 1, got $rebuildEvery" >&2; exit 2; }
  [ "$thesis" = 0 ] || { echo "smpi_scaling: --rebuild-every and --thesis exclude each other" >&2; exit 2; }
fi
/usr/bin/python3 -c "import sys; sys.exit(0 if float('$jitter') >= 0 else 1)" 2> /dev/null ||
  { echo "smpi_scaling: --jitter must be a length >= 0 (m), got $jitter" >&2; exit 2; }
jitterOn=$(/usr/bin/python3 -c "print('true' if float('$jitter') > 0 else 'false')")
case "$method" in
  SOR) ;;
  APGD | PQN | IPM) tolerance="${tolerance:-1e-6}" ;;
  *) echo "smpi_scaling: --method must be SOR, APGD, PQN or IPM (got $method)" >&2; exit 2 ;;
esac
# The scene's solver: 30 SOR sweeps, or a natural-map stop at the tolerance.
solverName="$method, 30 sweeps per step"
[ "$warm" = true ] || solverName+=", no warm start"
solver='method="SORContact" convergenceMethod="InVelocity" minIter="30" maxIter="30" absTol="1e-7" relTol="1e-5"'
if [ -n "$tolerance" ]; then
  solverName="$method, natural-map error <= $tolerance (at most $maxIter iterations)$([ "$warm" = true ] || echo ", no warm start")"
  solver="convergenceMethod=\"NaturalMap\" minIter=\"1\" maxIter=\"$maxIter\" absTol=\"0\" relTol=\"$tolerance\""
  if [ "$method" != SOR ]; then
    solver="method=\"$method\" matrixFree=\"true\" $solver"
  else
    solver="method=\"SORContact\" $solver"
  fi
fi

# The smpi preset (tools/install-deps.sh smpi installs what it needs).
bin="$root/build/smpi/apps/grain_sim_mpi/grain-sim-mpi"
if [ ! -x "$bin" ] && [ -z "$writeScene" ]; then
  echo "smpi_scaling: building the smpi preset (build/smpi)" >&2
  (cd "$root" && cmake --preset smpi >/dev/null && cmake --build --preset smpi) >&2
fi

# Cores per node of the platform (the hostfile puts that many ranks on each node) and its node
# names: the first <cluster> with prefix, radical and core.
read -r prefix first last cores suffix < <(/usr/bin/python3 - "$platform" <<'EOF'
import sys, xml.etree.ElementTree as ET
c = next(ET.parse(sys.argv[1]).getroot().iter("cluster"))
lo, hi = c.get("radical").split("-")
print(c.get("prefix"), lo, hi, c.get("core", "1"), c.get("suffix", "") or "")
EOF
)
hostfile() {  # ranks -> hostfile on stdout
  local n="$1" node="$first"
  while [ "$n" -gt 0 ]; do
    [ "$node" -le "$last" ] || { echo "smpi_scaling: the platform has too few cores" >&2; exit 2; }
    for ((c = 0; c < cores && n > 0; ++c, --n)); do echo "$prefix$node$suffix"; done
    node=$((node + 1))
  done
}

# One pile's RigidBodies group: gx x gy x layers spheres centred at "x y z" (its lowest layer).
pile() {  # gx gy layers groupId "x y z" name
  cat <<EOF
    <RigidBodies name="$6" instances="$(($1 * $2 * $3))" groupId="$4">
      <Geometry><Sphere distribute="uniform" radius="0.005"/></Geometry>
      <DynamicProperties><DynamicState type="simulated"/><Mass distribute="homogen" density="2500"/>
        <InertiaTensor type="homogen"/><Material distribute="uniform" id="0"/>
        <InitialCondition type="posvel">
          <InitialPosition distribute="grid" gridSizeX="$1" gridSizeY="$2" distance="0.00995"
              translation="$5" jitter="$jitterOn" delta="$jitter" seed="1"/>
        </InitialCondition>
      </DynamicProperties>
    </RigidBodies>
EOF
}

# The lattice pile: gx x gy x layers spheres (r = 5 mm, spacing 9.95 mm: every neighbour
# touches), the lowest layer touching the floor z = 0. With tx x ty tiles (--isolated) it is
# that many piles of gx x gy x layers, their centres (gx d + 0.1 m, gy d + 0.1 m) apart.
scene() {  # gx gy layers file [tx ty]
  local gx="$1" gy="$2" layers="$3" file="$4" tx="${5:-1}" ty="${6:-1}" mpi="" piles="" k x y
  if [ "$tx" = 1 ] && [ "$ty" = 1 ]; then
    piles="$(pile "$gx" "$gy" "$layers" 10 "0 0 0.00499" pile)"
  else
    while read -r k x y; do  # tile k (x fastest) centred at x, y
      piles+="$(pile "$gx" "$gy" "$layers" $((10 + k)) "$x $y 0.00499" "pile$k")"$'\n'
    done < <(/usr/bin/python3 -c "
for j in range($ty):
    for i in range($tx):
        print(j * $tx + i, f'{i * ($gx * 0.00995 + 0.1):.6g}', f'{j * ($gy * 0.00995 + 0.1):.6g}')")
    piles="${piles%$'\n'}"
  fi
  if [ "$thesis" = 1 ]; then
    mpi='<MPISettings><ProcessTopology mode="static"><Topology type="grid" buildMode="AABB"'
    mpi+=' minCellSize="0.011" dimension="1 1 1" matchProcessDimToExtent="true"/></ProcessTopology>'
    mpi+='<InclusionSolverSettings splitNodeUpdateRatio="1" convergenceCheckRatio="1"/>'
    mpi+='</MPISettings>'
  elif [ -n "$rebuildEvery" ]; then
    mpi='<MPISettings><ProcessTopology mode="dynamic" policy="alwaysRebuild"'
    mpi+=" policyCheckEveryXTimeStep=\"$rebuildEvery\">"
    mpi+='<Topology type="kdTree" buildMode="AABB" minCellSize="0.011"/></ProcessTopology>'
    mpi+='<InclusionSolverSettings splitNodeUpdateRatio="1" convergenceCheckRatio="1"/>'
    mpi+='</MPISettings>'
  fi
  cat > "$file" <<EOF
<?xml version="1.0"?>
<DynamicsSystem xmlns="SceneFile">
  <SceneSettings>
    <RecorderSettings mode="noOutput"/>
    <TimeStepperSettings deltaT="0.0005" endTime="$(/usr/bin/python3 -c "print(0.0005 * $steps)")">
      <InclusionSolverSettings $solver useGPU="false" alphaJORProx="0.5"
          alphaSORProx="1.2" usePercussionCache="$warm"/>
    </TimeStepperSettings>
    <ContactParameterMap>
      <ContactParameterStandard type="UCF" mu="0.5" epsilonN="0" epsilonT="0"/>
    </ContactParameterMap>
    <ExternalForces><ForceField applyTo="all" type="gravity" value="9.81" direction="0 0 -1"/></ExternalForces>
    $mpi
  </SceneSettings>
  <SceneObjects>
    <RigidBodies name="floor" instances="1" groupId="0">
      <Geometry><Halfspace distribute="uniform" normal="0 0 1"/></Geometry>
      <DynamicProperties><DynamicState type="static"/><Material distribute="uniform" id="0"/>
        <InitialCondition type="posvel"><InitialPosition distribute="transforms"><Pos><Trafo trans="0 0 0" axis="1 0 0" deg="0"/></Pos></InitialPosition></InitialCondition>
      </DynamicProperties>
    </RigidBodies>
$piles
  </SceneObjects>
</DynamicsSystem>
EOF
}

# rx x ry = R with rx >= ry as close to square as possible.
factor() {
  local r="$1" ry
  ry=$(/usr/bin/python3 -c "import math; r=$r; print(max(d for d in range(1, math.isqrt(r) + 1) if r % d == 0))")
  echo $((r / ry)) "$ry"
}
# The scene of R ranks (ranks file): strong scaling's 10^6 spheres, else one tile per rank, in one
# pile or (--isolated) apart.
sceneOf() {
  local rx ry
  if [ "$strong" = 1 ]; then
    scene 250 250 16 "$2"
    return
  fi
  read -r rx ry < <(factor "$1")
  if [ "$isolated" = 1 ]; then
    scene "$ta" "$tb" "$layers" "$2" "$rx" "$ry"
  else
    scene $((rx * ta)) $((ry * tb)) "$layers" "$2"
  fi
}

layers=15
timed="steps 2-$steps timed"
[ "$settled" = 0 ] || timed="one step settled serially, steps 3-$((steps + 1)) timed"
if [ "$strong" = 0 ]; then
  # One tile of a x b x layers spheres per rank, as close to N bodies as the lattice allows.
  read -r ta tb < <(/usr/bin/python3 -c "
import math
n = $perRank / $layers
a = max(1, round(math.sqrt(n)))
b = max(1, round(n / a))
print(a, b)")
  echo "# weak scaling: ${ta} x ${tb} x ${layers} = $((ta * tb * layers)) bodies per rank$([ "$isolated" = 0 ] || echo ", tiles 0.1 m apart"),"  \
    "$solverName, $timed; $([ "$thesis" = 1 ] && echo "thesis MPISettings" || ([ -n "$rebuildEvery" ] && echo "kd-tree rebuilt every $rebuildEvery steps") || echo "no MPISettings (grain's defaults)")" >&2
else
  layers=16
  echo "# strong scaling: 250 x 250 x 16 = 10^6 bodies, $solverName, $timed" >&2
fi
if [ -n "$writeScene" ]; then
  sceneOf "$writeScene" "$sceneFile"
  exit 0
fi
mode=$([ "$strong" = 1 ] && echo strong || echo weak)$([ "$thesis" = 1 ] && echo -thesis || true)$([ -n "$rebuildEvery" ] && echo "-rebuild$rebuildEvery" || true)$([ "$networkOnly" = 1 ] && echo -network || true)$([ -n "$tolerance" ] && echo "-$method" || true)$([ "$warm" = true ] || echo -cold)$([ "$isolated" = 0 ] || echo -isolated)
[ "$calibrate" = 0 ] || mode=calibrate
out="$root/build/smpi_bench/$mode"
rm -rf "$out"
mkdir -p "$out"
[ "$keep" = 1 ] || trap 'rm -rf "$out"' EXIT
echo "# platform $platform ($cores cores per node); load: $(uptime | sed 's/.*load average: //')" >&2

# SMPI's options (docs/benchmarks.md): compute bursts are measured on this machine (thread CPU time)
# and replayed on cores of the same speed; collectives as OpenMPI implements them (much cheaper to
# simulate than the default selector); no privatisation (grain-sim-mpi has no mutable globals); the
# platform's bandwidths and latencies as written (no correction factors); an MPI_Iprobe or MPI_Test
# that finds nothing costs 1 us, every time (the default, 100 us, would make every probed receive of
# the neighbour exchanges wait that long; a real OpenMPI's takes 20-35 ns on this machine,
# bench/smpi_checks.sh check 5, and 1 us keeps the simulated polling loops short). SimGrid's default
# growth of that cost (smpi/grow-injected-times) is off: it multiplies the cost by a counter that
# every failed poll of any simulated process increments, so that polling grows dearer with the
# number of processes polling, which no real MPI library does (docs/mpi.md, "Under SMPI");
# `--smpi-option --cfg=smpi/grow-injected-times:yes` restores it, as the tables measured before it
# was turned off had it (docs/benchmarks.md). Broadcasts are binomial trees: the pipelined broadcast
# that OpenMPI's selector picks for the start-up's texts stops SimGrid 3.32 with a floating-point
# exception on 2 and 3 processes (in bcast__ompi_pipeline); grain-sim-mpi broadcasts only at
# start-up, rebuilds and output, not in the timed steps. maxmin/precision 1e-3 instead of 1e-5: with
# computation simulated, SimGrid 3.32's bandwidth-sharing solver stopped the strong-scaling run on
# 1024 processes in its start-up ("Cannot saturate more a constraint that has no active element", or
# a segmentation fault in MaxMin::do_solve, whichever came first); with 1e-3 it runs, and the
# network-only runs on 16, 64 and 256 processes give the same times to the printed digit with either
# precision (docs/benchmarks.md).
smpi=(--cfg=smpi/host-speed:1Gf --cfg=smpi/coll-selector:ompi --cfg=smpi/bcast:binomial_tree
      --cfg=smpi/privatization:0 --cfg=smpi/bw-factor:0:1 --cfg=smpi/lat-factor:0:1
      --cfg=smpi/iprobe:1e-6 --cfg=smpi/test:1e-6 --cfg=smpi/grow-injected-times:no
      --cfg=maxmin/precision:1e-3 --log=root.thres:warning)
[ "$networkOnly" = 0 ] || smpi+=(--cfg=smpi/simulate-computation:no)
smpi+=("${extraSmpi[@]}")

sceneFor() {  # ranks -> the scene file of that rank count
  local r="$1" file="$out/scene_$1.xml"
  if [ ! -f "$file" ]; then
    sceneOf "$r" "$file"
  fi
  echo "$file"
}
profileTime() {  # log -> max over processes of the s/step of the profile line
  awk '/^profile +s\/step .*\(max over processes\)/ { print $3; exit }' "$1"
}
simulate() {  # ranks name -> simulated s/step (run folder and log under $out/name)
  local r="$1" name="$2" start wall t tracing=()
  hostfile "$r" > "$out/hosts_$r"
  [ "$trace" = 0 ] ||
    tracing=(--cfg=tracing:yes --cfg=tracing/smpi:yes "--cfg=tracing/filename:$out/trace_$r.paje")
  local input=(-s "$(sceneFor "$r")" -g "$out/$name")
  if [ "$settled" = 1 ]; then
    local record
    record="$(settle "$r")"
    input=($(continueSettled "$record" "$name"))
  fi
  start=$(date +%s)
  if ! smpirun -np "$r" -platform "$platform" -hostfile "$out/hosts_$r" "${smpi[@]}" "${tracing[@]}" \
      "$bin" "${input[@]}" > "$out/$name.log" 2>&1; then
    echo "smpi_scaling: the run on $r ranks failed:" >&2
    tail -20 "$out/$name.log" >&2
    exit 1
  fi
  wall=$(( $(date +%s) - start ))
  t=$(profileTime "$out/$name.log")
  [ -n "$t" ] || { echo "smpi_scaling: no profile line in $out/$name.log" >&2; exit 1; }
  grep -E '^(processes|domains|profile|traffic|rebuilds)' "$out/$name.log" | sed "s/^/# $r ranks: /" >&2
  [ "$trace" = 0 ] ||
    /usr/bin/python3 "$root/bench/smpi_trace_summary.py" "$out/trace_$r.paje" "# $r ranks: " >&2
  echo "# $r ranks: $wall s wall time; load: $(uptime | sed 's/.*load average: //')" >&2
  echo "$t"
}
# --settled: the serial grain-sim solves the first step of the rank count's scene and records it,
# and each run continues from a copy of that record. The records are kept for later invocations
# in build/smpi_bench/settled/, one folder per settling scene (named by its checksum; the settled
# scene of 2048 ranks of 1500 spheres took 1.1 GB there).
serial="$root/build/release/apps/grain_sim/grain-sim"
settle() {  # ranks -> the record folder of the settled first step
  local r="$1" scene="$out/settle_$1.xml" dir start
  sed -e 's|<RecorderSettings mode="noOutput"/>|<RecorderSettings mode="everyTimeStep"/>|' \
    -e 's|endTime="[^"]*"|endTime="0.0005"|' \
    -e "s|<InclusionSolverSettings [^/]*useGPU=|<InclusionSolverSettings method=\"SORContact\" convergenceMethod=\"NaturalMap\" minIter=\"1\" maxIter=\"100000\" absTol=\"0\" relTol=\"${tolerance:-1e-6}\" useGPU=|" \
    "$(sceneFor "$r")" > "$scene"
  dir="$root/build/smpi_bench/settled/$(sha1sum < "$scene" | cut -c1-16)"
  if [ ! -f "$dir/settled" ]; then
    if [ ! -x "$serial" ]; then
      (cd "$root" && cmake --preset release >/dev/null &&
        cmake --build build/release --target grain-sim) >&2
    fi
    rm -rf "$dir"
    mkdir -p "$dir"
    cp "$scene" "$dir/scene.xml"
    start=$(date +%s)
    "$serial" -s "$scene" -g "$dir/run" --threads 2 > "$dir/settle.log" 2>&1 ||
      { echo "smpi_scaling: settling the scene of $r ranks failed:" >&2; tail -20 "$dir/settle.log" >&2; exit 1; }
    echo "$(( $(date +%s) - start )) s: $(grep -E '^progress' "$dir/settle.log" | tail -1 |
      sed 's/.*contacts/contacts/')" > "$dir/settled"
  fi
  echo "# $r ranks: first step settled serially in $(cat "$dir/settled") ($dir)" >&2
  echo "$dir/run/SimFiles/SimDataRECORD_0"
}
continueSettled() {  # record name -> grain-sim-mpi's options that continue a copy of the record
  local record="$1" name="$2" copy attr
  copy="$out/$name/SimFiles/SimDataRECORD_0"
  mkdir -p "$(dirname "$copy")"
  cp -al "$record" "$copy"  # links: the run writes only its log
  cp --remove-destination "$record/SimData.dat" "$copy/SimData.dat"
  echo "--restart $copy --set SceneSettings/RecorderSettings/@mode=noOutput"
  echo "--set SceneSettings/TimeStepperSettings/@endTime=$(/usr/bin/python3 -c "print(0.0005 * ($steps + 1))")"
  # The scene's own solver settings (the settled step used SOR to a natural-map error).
  for attr in $solver; do
    echo "--set SceneSettings/TimeStepperSettings/InclusionSolverSettings/@${attr//\"/}"
  done
}
solverLine() {  # ranks name -> the solver line of that run (--tolerance)
  /usr/bin/python3 - "$method" "$1" "$out/$2.log" "$out/$2" "$maxIter" "$((settled + 2))" <<'EOF'
import glob, re, sys
method, ranks, log, folder, max_iter, first_timed = sys.argv[1:]
text = open(log).read()
m = re.search(r"^traffic +per step: messages (\S+) bytes (\S+) .* reductions (\S+)", text, re.M)
if not m:
    sys.exit(f"smpi_scaling: no traffic line in {log}")
data = sorted(glob.glob(folder + "/SimFiles/*/SimData.dat"))
if not data:
    sys.exit(f"smpi_scaling: no SimData.dat under {folder}")
header, rows = None, []
for line in open(data[-1]):
    if line.startswith("# WallTime"):
        header = line[2:].rstrip("\n").split("\t")
    elif line.strip() and not line.startswith("#"):
        rows.append(line.split())
col = {name: k for k, name in enumerate(header)}
rows = [r for r in rows if int(float(r[col["Step"]])) >= int(first_timed)]
its = [float(r[col["nIterations"]]) for r in rows]
err = [float(r[col["NaturalMapError"]]) for r in rows]
unconverged = sum(int(float(r[col["Converged"]])) == 0 for r in rows)
fallbacks = sum(int(float(r[col["Fallbacks"]])) != 0 for r in rows)
print(f"solver {method} ranks {ranks}  iterations {sum(its) / len(its):.1f}  messages {m[1]}"
      f"  bytes {m[2]}  reductions {m[3]}  natural-map {max(err):.2e}"
      f"  max-iter-steps {sum(i >= int(max_iter) for i in its)}"
      f"  not-converged {unconverged}  fallbacks {fallbacks}")
EOF
}
median() { /usr/bin/python3 -c "import statistics, sys; print(statistics.median(float(x) for x in sys.argv[1:]))" "$@"; }

if [ "$calibrate" = 1 ]; then
  real="$root/build/release/apps/grain_sim_mpi/grain-sim-mpi"
  if [ ! -x "$real" ]; then
    (cd "$root" && cmake --preset release >/dev/null &&
      cmake --build build/release --target grain-sim-mpi) >&2
  fi
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  for r in 1 2; do
    sims=()
    reals=()
    for ((k = 1; k <= repeat; ++k)); do
      sims+=("$(simulate "$r" "sim_${r}_$k")")
      mpirun --oversubscribe --bind-to none -np "$r" "$real" -s "$(sceneFor "$r")" -g "$out/real_${r}_$k" \
        > "$out/real_${r}_$k.log" 2>&1
      reals+=("$(profileTime "$out/real_${r}_$k.log")")
      echo "# $r ranks, run $k: simulated ${sims[-1]} real ${reals[-1]} s/step;" \
        "load: $(uptime | sed 's/.*load average: //')" >&2
    done
    ts=$(median "${sims[@]}")
    tr=$(median "${reals[@]}")
    printf 'calibration ranks %s  simulated %.6f  real %.6f  simulated/real %.3f\n' "$r" "$ts" "$tr" \
      "$(/usr/bin/python3 -c "print($ts / $tr)")"
  done
  exit 0
fi

reference=""
referenceRanks=""
for r in $ranks; do
  t=$(simulate "$r" "run_$r")
  if [ "$networkOnly" = 1 ]; then
    awk -v r="$r" '/^profile +s\/step .*\(max over processes\)/ {
      printf "ranks %s  s/step %s  exchange %s  collectives %s\n", r, $3, $10, $12; exit }' \
      "$out/run_$r.log"
    [ -z "$tolerance" ] || solverLine "$r" "run_$r"
    continue
  fi
  if [ -z "$reference" ]; then
    reference="$t"
    referenceRanks="$r"
    [ "$r" = 1 ] || [ "$strong" = 1 ] ||
      echo "# efficiency relative to $r ranks (no 1 in the list)" >&2
  fi
  if [ "$strong" = 0 ]; then
    e=$(/usr/bin/python3 -c "print(f'{$reference / $t:.3f}')")
  else
    e=$(/usr/bin/python3 -c "print(f'{$reference * $referenceRanks / ($t * $r):.3f}')")
  fi
  printf 'ranks %s  s/step %s  efficiency %s\n' "$r" "$t" "$e"
  [ -z "$tolerance" ] || solverLine "$r" "run_$r"
done
