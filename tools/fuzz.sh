#!/usr/bin/env bash
# Runs grain's libFuzzer harnesses (tests/fuzz; results in docs/reliability.md):
#   tools/fuzz.sh [SECONDS] [HARNESS...]
# SECONDS per harness (default 60); HARNESS of scene, sim, siconos, fclib, fclib_raw (default
# all). Installs Debian's clang if it is missing, builds the `fuzz` preset (build/fuzz), makes
# the seed corpora from scenes/ and tests/data/ and runs the harnesses at the same time, each
# under `nice -n 10`. A harness that finds a crash is restarted with the time left, so every
# harness fuzzes for SECONDS. Everything it writes is under GRAIN_FUZZ_OUT (default
# build/fuzz/out): corpus/<h>/ (kept between runs), seeds/<h>/, artifacts/<h>/ (crash-*, oom-*,
# timeout-*, leak-* inputs), logs/<h>.<n>.log; at the end a table of executions, corpus size and
# artifacts per harness. GRAIN_FUZZ_BIN=DIR runs the harnesses of DIR (e.g. a copy of
# build/fuzz/tests/fuzz, to rebuild while they run) without building.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
seconds="${1:-60}"
shift || true
harnesses=("$@")
if [ ${#harnesses[@]} -eq 0 ]; then
  harnesses=(scene sim siconos fclib fclib_raw)
fi
out="${GRAIN_FUZZ_OUT:-$root/build/fuzz/out}"

build() {
  if ! command -v clang++ >/dev/null 2>&1; then
    local sudo=()
    if [ "$(id -u)" != 0 ]; then sudo=(sudo); fi
    "${sudo[@]}" apt-get update -qq
    "${sudo[@]}" apt-get install -y -qq clang
  fi
  local launcher=()
  if command -v ccache >/dev/null 2>&1; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  fi
  cmake --preset fuzz "${launcher[@]}" >/dev/null
  nice -n 10 cmake --build --preset fuzz -j 2
}

bin="${GRAIN_FUZZ_BIN:-}"
if [ -z "$bin" ]; then
  build
  bin="$root/build/fuzz/tests/fuzz"
fi
mkdir -p "$out"
/usr/bin/python3 "$root/tests/fuzz/make_seeds.py" "$root" "$out/seeds" "$bin/fclib_fuzz_seed"

# Input size limits: the seeds of each reader fit (longer seeds are cut).
declare -A maxlen=([scene]=65536 [sim]=16384 [siconos]=65536 [fclib]=131072 [fclib_raw]=524288)

run_harness() {
  local h="$1" end=$((SECONDS + seconds)) n=0 left
  mkdir -p "$out/corpus/$h" "$out/artifacts/$h" "$out/logs"
  rm -f "$out/logs/$h".*.log
  local extra=()
  if [ "$h" = scene ]; then extra=(-dict="$out/seeds/scene.dict"); fi
  # libhdf5 leaks its own buffers when it gives up closing a corrupt file (reported at exit):
  # leak checks only where the files are well-formed (fuzz_fclib).
  local asan="${ASAN_OPTIONS:-}"
  if [ "$h" = fclib_raw ]; then extra=(-detect_leaks=0); asan="detect_leaks=0:$asan"; fi
  while left=$((end - SECONDS)); [ "$left" -gt 0 ] && [ "$n" -lt 100 ]; do
    n=$((n + 1))
    ASAN_OPTIONS="$asan" nice -n 10 "$bin/fuzz_$h" -max_total_time="$left" -rss_limit_mb=2048 -timeout=30 \
      -max_len="${maxlen[$h]}" -print_final_stats=1 -artifact_prefix="$out/artifacts/$h/" \
      "${extra[@]}" "$out/corpus/$h" "$out/seeds/$h" >"$out/logs/$h.$n.log" 2>&1 || true
  done
}

# The harnesses' scratch files (one folder per process; a crashed process leaves its own).
export GRAIN_FUZZ_TMP="$out/tmp"
rm -rf "$GRAIN_FUZZ_TMP"
mkdir -p "$GRAIN_FUZZ_TMP"

pids=()
for h in "${harnesses[@]}"; do
  [ -x "$bin/fuzz_$h" ] || { echo "no harness fuzz_$h (HDF5 off?)" >&2; exit 2; }
  run_harness "$h" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
rm -rf "$GRAIN_FUZZ_TMP"

printf '%-10s %5s %14s %8s %10s\n' harness runs executions corpus artifacts
for h in "${harnesses[@]}"; do
  runs=$(ls "$out/logs/$h".*.log | wc -l)
  execs=0
  for log in "$out/logs/$h".*.log; do
    n=$(awk '/stat::number_of_executed_units/ {n = $2} END {print n + 0}' "$log")
    execs=$((execs + n))
  done
  corpus=$(ls "$out/corpus/$h" | wc -l)
  artifacts=$(ls "$out/artifacts/$h" | wc -l)
  printf '%-10s %5s %14s %8s %10s\n' "$h" "$runs" "$execs" "$corpus" "$artifacts"
done
