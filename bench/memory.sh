#!/usr/bin/env bash
# Peak memory per body of a step with contacts (docs/benchmarks.md, "Memory per body"): the
# face-centred cubic pile of grain-pile_benchmark (floor and walls included), run for a few steps
# at each size under /usr/bin/time. Prints per size the contacts of the last step and the most
# contacts of any step (the pile has about 5.8 per body at its first step, 4.4 once settled; the
# peak memory follows the most), the most contacts per body, the peak resident set (%M) in MiB
# and in bytes per body, and the wall time per body and step (the issue's target: <= 600 B per body at 10^6 bodies, the time per
# body-step within 1.3x from 10^4 to 10^6). Wall times are only meaningful on an idle machine;
# the load is printed with them.
#
#   bench/memory.sh [BODIES ...]        default: 10000 100000 1000000
#   SWEEPS=10 STEPS=2 THREADS=1 bench/memory.sh   sweeps per step, measured steps, threads
#                                                 (defaults 10, 2, 1)
#
# The peak includes the pile's construction (the bodies are added one by one) and the process
# itself (about 4 MiB for an empty run), which is why small sizes show more bytes per body.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$root/build/release/bench/grain-pile_benchmark"
sweeps="${SWEEPS:-10}"
steps="${STEPS:-2}"
threads="${THREADS:-1}"
if [[ ! -x "$bin" ]]; then
  echo "memory.sh: $bin not found (cmake --build --preset release)" >&2
  exit 1
fi
if [[ ! -x /usr/bin/time ]]; then
  echo "memory.sh: /usr/bin/time not found (apt-get install time)" >&2
  exit 1
fi
sizes=("$@")
if [[ ${#sizes[@]} -eq 0 ]]; then
  sizes=(10000 100000 1000000)
fi
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
echo "# grain-pile_benchmark, $sweeps sweeps, $steps measured steps, $threads thread(s); load:$(uptime | sed 's/.*load average://')"
printf '%10s %10s %10s %9s %10s %8s %14s\n' bodies contacts most "most/body" "peak MiB" \
  "B/body" "us/body-step"
for n in "${sizes[@]}"; do
  /usr/bin/time -f 'peakKiB %M' "$bin" "$n" --sweeps "$sweeps" --steps "$steps" --threads "$threads" > "$log" 2>&1
  awk -v n="$n" '
    /^bodies / { bodies = $2; contacts = $4; most = $11 }
    /^  step / { ms = $2 }
    /^peakKiB / { kib = $2 }
    END {
      printf "%10d %10d %10d %9.2f %10.1f %8.0f %14.4f\n", bodies, contacts, most, most / bodies,
             kib / 1024, kib * 1024 / bodies, 1e3 * ms / bodies
    }' "$log"
done
