#!/usr/bin/env bash
# Checks of the simulated MPI (SimGrid's SMPI) that grain's simulated-cluster figures rest on
# (docs/mpi.md, "Under SMPI"; docs/benchmarks.md, "Rebuilds at scale"). Small MPI programs in
# bench/smpi_checks/, compiled with smpicc and run on the platform of bench/smpi_scaling.sh, and
# grain-sim-mpi itself (check 6):
#
#   bench/smpi_checks.sh [--platform FILE] [--runs K] [--check N]
#
# --check N runs check N alone.
#
# 1. ibarrier_late.c on 4 processes, process 3 (then process 0) entering MPI_Ibarrier 10 ms late:
#    one line per round and process with the time it left. With a correct barrier nobody leaves
#    before about 0.01 s.
# 2. nbx_rounds.c, 50 rounds of grain's sparse exchange, closed by MPI_Ibarrier, by a one-integer
#    MPI_Iallreduce and by a dissemination barrier of point-to-point messages (grain's), K runs
#    each (default 10) on 8 and 16 processes, each stopped after 60 s:
#      nbx MODE processes P finished F of K (received R)
# 3. communicator_cost.c on 16, 64 and 256 processes, network only: one MPI_Comm_dup and the
#    halving MPI_Comm_splits of an RCB-like recursion, as Zoltan's RCB makes them per build,
#    three times (the first round is the program's first use of communicators).
# 4. nbx_rounds.c closed by MPI_Iallreduce and by the dissemination barrier on 64 and 256
#    processes, network only, once each (stopped after 300 s): this machine's time for the
#    simulation and the simulated time of the 50 rounds:
#      cost MODE processes P wall W s (nbx MODE processes P simulated T s received R)
# 5. poll_cost.c, compiled with mpicc and run on 2 real OpenMPI processes on this machine (not
#    simulated): the time of an MPI_Iprobe and of an MPI_Test that find nothing, the constant
#    that smpi/iprobe and smpi/test stand for, three times:
#      poll iprobe T ns test T ns (C calls each, 2 processes)
# 6. A restart reads its record under SMPI too (grain-sim-mpi of the smpi preset reads with pread:
#    SMPI's MPI-IO stops on a diskless host and does not write a read's buffer; apps/grain_sim_mpi/
#    shared_read_file.hpp): the serial grain-sim (build/release) records one step of the 4-tile
#    lattice pile of bench/smpi_scaling.sh (SOR to a natural-map error of 1e-6, warm start on),
#    and grain-sim-mpi continues it for three steps on 2 real OpenMPI processes and on 2
#    simulated ones; their run logs (SimData.dat) must agree in every column but the times:
#      restart simulated against real: identical in C columns of S steps   (or: differ ...)
# 7. bench/smpi_scaling.sh --isolated gives every process a tile that touches no other: its scene
#    of 4 processes (1500 spheres each, 1 nm jitter) on 4 simulated processes and the single tile
#    on one, 3 steps each, network only, with process logs (-l); every process of the 4 must hold
#    1500 bodies, no remote copy and no split body, and have the single tile's contacts in every
#    step, and the messages per step must be empty (4 bytes each: a count):
#      isolated: 4 processes like the single tile (C contacts each), M empty messages per step
# 8. burst_cost.c: the same work per process and step (about 5 ms of random-order updates over
#    its own data, 0.2 MB or 3 MB) in 1 or 31 bursts between neighbour exchanges, on 1, 16, 64
#    and 256 simulated processes with computation simulated; what the simulation charges for it:
#      burst processes P bursts K bytes B: compute per step mean M ms, max X ms (process R)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
platform="$root/bench/platforms/frontera.xml"
runs=10
only=""
usage() { sed -n '2,45p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --platform) platform="$(realpath "$2")"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --check) only="$2"; shift 2 ;;
    *) usage ;;
  esac
done
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "smpi_checks: --runs must be a count >= 1" >&2; exit 2; }
[ -f "$platform" ] || { echo "smpi_checks: no platform file $platform" >&2; exit 2; }
command -v smpicc > /dev/null ||
  { echo "smpi_checks: smpicc not found; run tools/install-deps.sh smpi" >&2; exit 2; }

want() { [ -z "$only" ] || [ "$only" = "$1" ]; }
out="$root/build/smpi_checks"
mkdir -p "$out"
for program in ibarrier_late nbx_rounds communicator_cost burst_cost; do
  smpicc -O2 -o "$out/$program" "$root/bench/smpi_checks/$program.c" 2> "$out/$program.build.log" ||
    { cat "$out/$program.build.log" >&2; exit 1; }
done

# The first <cluster> of the platform: node names and cores per node; ranks fill one node's cores
# after the other (as in bench/smpi_scaling.sh).
read -r prefix first last cores suffix < <(/usr/bin/python3 - "$platform" <<'PY'
import sys, xml.etree.ElementTree as ET
c = next(ET.parse(sys.argv[1]).getroot().iter("cluster"))
lo, hi = c.get("radical").split("-")
print(c.get("prefix"), lo, hi, c.get("core", "1"), c.get("suffix", "") or "")
PY
)
hostfile() {  # ranks -> file
  local n="$1" node="$first"
  while [ "$n" -gt 0 ]; do
    [ "$node" -le "$last" ] || { echo "smpi_checks: the platform has too few cores" >&2; exit 2; }
    for ((c = 0; c < cores && n > 0; ++c, --n)); do echo "$prefix$node$suffix"; done
    node=$((node + 1))
  done > "$out/hosts_$1"
}
# The options of bench/smpi_scaling.sh, its binomial broadcast included (a simulated MPI_Comm_dup
# costs what the broadcast costs: 80 us on 64 processes with the selector's own, under 0.1 us on
# process 0 with the binomial tree), except that the checks keep SimGrid's growing poll times
# (smpi/grow-injected-times, on by default), whose effect checks 2 and 4 show.
options=(--cfg=smpi/host-speed:1Gf --cfg=smpi/coll-selector:ompi --cfg=smpi/bcast:binomial_tree
         --cfg=smpi/privatization:0
         --cfg=smpi/bw-factor:0:1 --cfg=smpi/lat-factor:0:1 --cfg=smpi/iprobe:1e-6
         --cfg=smpi/test:1e-6 --cfg=maxmin/precision:1e-3 --log=root.thres:critical)
simulate() {  # seconds ranks extra-options program args... (0 seconds: no limit)
  local limit="$1" ranks="$2" extra="$3"
  shift 3
  hostfile "$ranks"
  local run=(smpirun -np "$ranks" -platform "$platform" -hostfile "$out/hosts_$ranks" "${options[@]}")
  [ -z "$extra" ] || run+=("$extra")
  if [ "$limit" -gt 0 ]; then
    timeout "$limit" "${run[@]}" "$@" 2> /dev/null
  else
    "${run[@]}" "$@" 2> /dev/null
  fi
}

if want 1; then
  for late in 3 0; do
    echo "# MPI_Ibarrier, process $late late by 0.01 s"
    simulate 0 4 "" "$out/ibarrier_late" "$late" | sort -k3,3n -k5,5n
  done
fi
if want 2; then
  for mode in ibarrier iallreduce dissemination; do
    for ranks in 8 16; do
      finished=0
      received="-"
      for ((k = 0; k < runs; ++k)); do
        if result=$(simulate 60 "$ranks" "" "$out/nbx_rounds" "$mode") && [[ "$result" == nbx* ]]; then
          finished=$((finished + 1))
          received="${result##* }"
        fi
      done
      echo "nbx $mode processes $ranks finished $finished of $runs (received $received)"
    done
  done
fi
if want 3; then
  for ranks in 16 64 256; do
    simulate 0 "$ranks" --cfg=smpi/simulate-computation:no "$out/communicator_cost"
  done
fi
if want 4; then
  for ranks in 64 256; do
    for mode in iallreduce dissemination; do
      start=$(date +%s.%N)
      result=$(simulate 300 "$ranks" --cfg=smpi/simulate-computation:no "$out/nbx_rounds" "$mode") ||
        result="stopped after 300 s"
      wall=$(/usr/bin/python3 -c "import sys; print('%.1f' % (float(sys.argv[2]) - float(sys.argv[1])))" \
        "$start" "$(date +%s.%N)")
      echo "cost $mode processes $ranks wall $wall s ($result)"
    done
  done
fi
if want 5; then
  mpicc -O2 -o "$out/poll_cost" "$root/bench/smpi_checks/poll_cost.c" 2> "$out/poll_cost.build.log" ||
    { cat "$out/poll_cost.build.log" >&2; exit 1; }
  for ((k = 0; k < 3; ++k)); do
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe -np 2 \
      "$out/poll_cost"
  done
fi

if want 6; then
  # 6. The record of one settled step, continued for real and simulated.
  restart="$out/restart"
  rm -rf "$restart"
  mkdir -p "$restart"
  for b in release/apps/grain_sim/grain-sim release/apps/grain_sim_mpi/grain-sim-mpi \
      smpi/apps/grain_sim_mpi/grain-sim-mpi; do
    [ -x "$root/build/$b" ] || { echo "smpi_checks: build/$b missing (build the release and smpi presets)" >&2; exit 2; }
  done
  "$root/bench/smpi_scaling.sh" --bodies-per-rank 1500 --tolerance 1e-6 --write-scene 4 "$restart/scene.xml" 2> /dev/null
  sed -e 's|<RecorderSettings mode="noOutput"/>|<RecorderSettings mode="everyTimeStep"/>|' \
    -e 's|endTime="[^"]*"|endTime="0.0005"|' "$restart/scene.xml" > "$restart/settle.xml"
  "$root/build/release/apps/grain_sim/grain-sim" -s "$restart/settle.xml" -g "$restart/settled" > "$restart/settle.log"
  continued=(--set SceneSettings/RecorderSettings/@mode=noOutput
             --set SceneSettings/TimeStepperSettings/@endTime=0.002)
  for run in real simulated; do
    cp -r "$restart/settled/SimFiles/SimDataRECORD_0" "$restart/$run"
  done
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe -np 2 \
    "$root/build/release/apps/grain_sim_mpi/grain-sim-mpi" --restart "$restart/real" "${continued[@]}" \
    > "$restart/real.log" 2>&1
  simulate 0 2 --cfg=smpi/simulate-computation:no "$root/build/smpi/apps/grain_sim_mpi/grain-sim-mpi" \
    --restart "$restart/simulated" "${continued[@]}" > "$restart/simulated.log"
  /usr/bin/python3 - "$restart/real/SimData.dat" "$restart/simulated/SimData.dat" <<'PY'
import sys
def rows(path):
    header, out = None, []
    for line in open(path):
        if line.startswith("# WallTime"):
            header = line[2:].rstrip("\n").split("\t")
        elif line.strip() and not line.startswith("#"):
            out.append(line.split())
    keep = [k for k, name in enumerate(header) if "Time [s]" not in name or name.startswith("Simulation")]
    return [[r[k] for k in keep] for r in out], len(keep)
real, columns = rows(sys.argv[1])
simulated, _ = rows(sys.argv[2])
steps = len(real) - 1  # the recorded step, then the continued ones
if real == simulated and steps == 3:
    print(f"restart simulated against real: identical in {columns} columns of {steps} steps")
else:
    print(f"restart simulated against real: differ ({len(real) - 1} and {len(simulated) - 1} steps)")
    sys.exit(1)
PY
fi

if want 7; then
  # 7. Isolated tiles: nothing shared, each process the single tile's work.
  iso="$out/isolated"
  rm -rf "$iso"
  mkdir -p "$iso"
  [ -x "$root/build/smpi/apps/grain_sim_mpi/grain-sim-mpi" ] ||
    { echo "smpi_checks: build/smpi/apps/grain_sim_mpi/grain-sim-mpi missing (build the smpi preset)" >&2; exit 2; }
  for r in 1 4; do
    "$root/bench/smpi_scaling.sh" --bodies-per-rank 1500 --jitter 1e-9 --steps 3 --isolated \
      --write-scene "$r" "$iso/scene_$r.xml" 2> /dev/null
    simulate 0 "$r" --cfg=smpi/simulate-computation:no "$root/build/smpi/apps/grain_sim_mpi/grain-sim-mpi" \
      -s "$iso/scene_$r.xml" -g "$iso/run_$r" -l "$iso/log_$r" > "$iso/run_$r.log"
  done
  /usr/bin/python3 - "$iso" <<'PY'
import glob, re, sys
iso = sys.argv[1]
def logs(r):
    out = {}
    for path in glob.glob(f"{iso}/log_{r}/ProcessLog_*.dat"):
        rows = [l.split("\t") for l in open(path) if l.strip() and not l.startswith("#")]
        out[path] = {int(row[0]): row for row in rows}
    return out
single = next(iter(logs(1).values()))
contacts = {step: row[5] for step, row in single.items()}
bad = []
four = logs(4)
if len(four) != 4:
    bad.append(f"{len(four)} process logs")
for path, rows in four.items():
    for step, row in rows.items():
        if row[2:5] != ["1500", "0", "0"] or row[5] != contacts.get(step):
            bad.append(f"{path} step {step}: bodies/remote/split {row[2:5]}, contacts {row[5]} (single tile {contacts.get(step)})")
m = re.search(r"^traffic +per step: messages (\S+) bytes (\S+)", open(f"{iso}/run_4.log").read(), re.M)
if not m or float(m[2]) != 4 * float(m[1]):
    bad.append(f"traffic line {m[0] if m else 'missing'}")
if bad:
    print("isolated: differ from the single tile:", *bad[:5], sep="\n  ")
    sys.exit(1)
print(f"isolated: 4 processes like the single tile ({contacts[max(contacts)]} contacts each), {m[1]} empty messages per step")
PY
fi

if want 8; then
  # 8. One process's fixed work, in one burst or in 31, beside 0-255 others.
  # About 5 ms of work per step either way, as a 1500-sphere tile's step: 30 passes over 0.2 MB
  # (fits a core's 1 MB second-level cache), 2 passes over 3 MB (about a tile's data).
  for size in "200000 30" "3000000 2"; do
    for ranks in 1 16 64 256; do
      for bursts in 1 31; do
        simulate 0 "$ranks" "" "$out/burst_cost" ${size% *} "$bursts" ${size#* } 8
      done
    done
  done
fi
