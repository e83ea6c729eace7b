#!/usr/bin/env bash
# A/B speed of two revisions on the settled dense pile (bench/pile_benchmark.cpp): builds
# grain-pile_benchmark of each revision (release preset, that target only, through ccache when it
# is installed) in a temporary git worktree under build/compare/, then runs the two builds
# alternated, K pairs, the first of a pair A in odd pairs and B in even ones, so that a change of
# the machine's load falls on both.
#
#   bench/compare.sh [--repeat K] [--bodies N] [--sweeps S] [--steps T] [--keep] REV_A REV_B
#
# K pairs (default 6), N bodies (default 10000), S sweeps per step (default 50), T measured steps
# (default 5); REV_A and REV_B are anything git rev-parse takes (a commit, a branch, HEAD).
# --keep leaves the worktrees and their builds in build/compare/ (reused by the next run);
# otherwise they are removed at the end. Per run:
#   run PAIR BUILD  solve S ms/step  updates/s U  step T ms/step  cpu C s  contacts N  load L
# (S the wall time of the contact-solve stage, U = contacts x sweeps / S, T the whole step, C the
# user + system CPU time of the whole process, set-up and warm-up included, which other jobs on
# the machine disturb less than wall time, L the 1-minute load average after the run); per pair the
# ratios B/A of S, T and C (below 1: B is faster), and at the end their medians and the ratios of
# the fastest runs of each build (the least disturbed ones):
#   median B/A  solve X  step Y  cpu Z  (K pairs, load before L0, after L1)
#   fastest B/A  solve X  step Y  cpu Z
# Instruction counts, which the load does not change, come from callgrind (docs/benchmarks.md).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
repeat=6
bodies=10000
sweeps=50
steps=5
keep=0
revs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --repeat) repeat="$2"; shift 2 ;;
    --bodies) bodies="$2"; shift 2 ;;
    --sweeps) sweeps="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "compare.sh: unknown option $1" >&2; exit 2 ;;
    *) revs+=("$1"); shift ;;
  esac
done
if [ ${#revs[@]} -ne 2 ]; then
  echo "usage: bench/compare.sh [--repeat K] [--bodies N] [--sweeps S] [--steps T] [--keep] REV_A REV_B" >&2
  exit 2
fi
for n in "$repeat" "$bodies" "$sweeps" "$steps"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "compare.sh: $n is not a positive integer" >&2; exit 2; }
done

launcher=()
if command -v ccache > /dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # Paths relative to a common base directory, so that worktrees share cached objects.
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(dirname "$root")}"
fi
base="$root/build/compare"
mkdir -p "$base"
worktrees=()
cleanup() {
  if [ "$keep" = 0 ]; then
    for w in "${worktrees[@]}"; do
      git -C "$root" worktree remove --force "$w" 2> /dev/null || true
    done
  fi
}
trap cleanup EXIT

# Builds REV's benchmark in build/compare/<commit>; prints the binary's path.
build() {
  local commit dir
  commit="$(git -C "$root" rev-parse --verify --quiet "$1^{commit}")" ||
    { echo "compare.sh: no revision $1" >&2; exit 2; }
  dir="$base/$commit"
  if [ ! -d "$dir" ]; then
    git -C "$root" worktree add --detach "$dir" "$commit" > /dev/null 2>&1
  fi
  worktrees+=("$dir")
  echo "building $1 ($commit) in $dir" >&2
  (cd "$dir" && cmake --preset release "${launcher[@]}" -DGRAIN_BUILD_TESTS=OFF > build-configure.log &&
     cmake --build build/release --target grain-pile_benchmark -j2 > build.log) ||
    { echo "compare.sh: building $1 failed, see $dir/build.log" >&2; exit 1; }
  binary="$dir/build/release/bench/grain-pile_benchmark"
}
build "${revs[0]}"
binA="$binary"
build "${revs[1]}"
binB="$binary"

load0=$(cut -d' ' -f1 /proc/loadavg)
echo "A = ${revs[0]} ($(git -C "$root" rev-parse --short "${revs[0]}"))," \
  "B = ${revs[1]} ($(git -C "$root" rev-parse --short "${revs[1]}"));" \
  "$bodies bodies, $sweeps sweeps, $steps steps; load $load0"
scratch="$(mktemp -d)"
results="$scratch/results.tsv"
run() {  # run PAIR NAME BINARY: one benchmark run, its line, and a row of $results
  local out solve step contacts load cpu TIMEFORMAT='%U %S'
  { time "$3" "$bodies" --sweeps "$sweeps" --steps "$steps" > "$scratch/out"; } 2> "$scratch/time"
  out="$(cat "$scratch/out")"
  cpu=$(awk '{ printf "%.3f", $1 + $2 }' "$scratch/time")
  contacts=$(awk '/^bodies/ { print $4 }' <<< "$out")
  solve=$(awk '$1 == "ContactSolve" { print $2 }' <<< "$out")
  step=$(awk '$1 == "step" { print $2 }' <<< "$out")
  load=$(cut -d' ' -f1 /proc/loadavg)
  printf 'run %d %s  solve %s ms/step  updates/s %.4g  step %s ms/step  cpu %s s  contacts %s' \
    "$1" "$2" "$solve" "$(/usr/bin/python3 -c "print($contacts * $sweeps / ($solve * 1e-3))")" \
    "$step" "$cpu" "$contacts"
  printf '  load %s\n' "$load"
  printf '%d\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$solve" "$step" "$contacts" "$cpu" >> "$results"
}
for k in $(seq "$repeat"); do
  if [ $((k % 2)) = 1 ]; then
    run "$k" A "$binA"
    run "$k" B "$binB"
  else
    run "$k" B "$binB"
    run "$k" A "$binA"
  fi
  awk -F'\t' -v k="$k" '$1 == k { s[$2] = $3; t[$2] = $4; c[$2] = $6 }
    END { printf "pair %d  B/A solve %.4f  step %.4f  cpu %.4f\n", k, s["B"] / s["A"],
          t["B"] / t["A"], c["B"] / c["A"] }' "$results"
done
load1=$(cut -d' ' -f1 /proc/loadavg)
/usr/bin/python3 - "$results" "$load0" "$load1" <<'EOF'
import statistics, sys
rows = [line.split('\t') for line in open(sys.argv[1]).read().split('\n') if line]
pairs = sorted({r[0] for r in rows}, key=int)
def value(pair, name, col):
    return next(float(r[col]) for r in rows if r[0] == pair and r[1] == name)
solve = statistics.median(value(p, 'B', 2) / value(p, 'A', 2) for p in pairs)
step = statistics.median(value(p, 'B', 3) / value(p, 'A', 3) for p in pairs)
cpu = statistics.median(value(p, 'B', 5) / value(p, 'A', 5) for p in pairs)
def fastest(name, col):
    return min(float(r[col]) for r in rows if r[1] == name)
if len({r[4] for r in rows}) != 1:
    print("note: the two builds found different numbers of contacts")
print(f"median B/A  solve {solve:.4f}  step {step:.4f}  cpu {cpu:.4f}  ({len(pairs)} pairs, "
      f"load before {sys.argv[2]}, after {sys.argv[3]})")
print(f"fastest B/A  solve {fastest('B', 2) / fastest('A', 2):.4f}  step "
      f"{fastest('B', 3) / fastest('A', 3):.4f}  cpu {fastest('B', 5) / fastest('A', 5):.4f}")
EOF
rm -rf "$scratch"
