#!/usr/bin/env bash
# The compiled per-contact loops of the velocity solver call (or tail-call) nothing but sqrt (the
# libm fallback that std::sqrt keeps for negative arguments) and one another: every per-contact
# helper, prox and Eigen expression they use is inlined, whatever the compiler's inlining budget
# for their translation unit (src/core/solvers/contact_solver.cpp). An out-of-line call there
# costs about 9 % of a sweep (docs/benchmarks.md).
#
#   hot_loops_test.sh OBJDUMP LIBRARY   (x86-64 objects; tests/CMakeLists.txt: Build.HotLoopsInlined)
#
# The loops are ContactSolver::sweep and the sweep* functions it calls (GCC keeps them apart,
# Clang inlines them into sweep), and the coloured sweeps of threaded solves (sweepColours and the
# parallel regions OpenMP outlines from it, which may call the OpenMP runtime: GOMP_*, omp_*).
set -euo pipefail
objdump="$1"
library="$2"
loops='ContactSolver::sweep\(bool\)|::sweep(SorContact|SorFull|Normal|Tangential|Jor|Rolling|Colours|Range)[<(]'
# Lines "function<TAB>callee" for every call in the loops (callee from the call's relocation in an
# object file, from its target otherwise) and for every out-of-line tail call (a jump, plain or
# conditional, followed by a relocation to another function; a jump inside the function has no
# relocation), and "function<TAB>FOUND" for every loop.
calls="$("$objdump" -dr --no-show-raw-insn -C "$library" | awk -v loops="$loops" '
  /^[0-9a-f]+ <.*>:$/ { fn = $0; sub(/^[0-9a-f]+ </, "", fn); sub(/>:$/, "", fn)
                        hot = fn ~ loops; if (hot) { print fn "\tFOUND" }; pending = 0; next }
  !hot { next }
  pending && /R_X86_64_(PLT32|PC32)/ { callee = $0; sub(/^.*R_X86_64_[A-Z0-9]+[ \t]+/, "", callee)
                                        sub(/-0x4$/, "", callee); print fn "\t" callee; pending = 0
                                        next }
  pending == 1 { print fn "\t" target }
  { pending = 0 }
  /\tcall/ { pending = 1; target = $0; sub(/^[^<]*</, "", target); sub(/>$/, "", target) }
  /^ *[0-9a-f]+:\tj[a-z]*[ \t]/ { pending = 2 }')"
if ! grep -q $'ContactSolver::sweep(bool)\tFOUND$' <<< "$calls"; then
  echo "no ContactSolver::sweep(bool) in $library" >&2
  exit 1
fi
bad="$(grep -v $'\tFOUND$' <<< "$calls" |
       grep -v -E $'\t(sqrt|GOMP_[a-z_]+|omp_get_[a-z_]+)(@plt)?$' |
       awk -F'\t' -v loops="$loops" '$2 !~ loops' || true)"
if [ -n "$bad" ]; then
  echo "out-of-line calls in the sweep loops (inline them, see contact_solver.cpp):" >&2
  echo "$bad" | sort | uniq -c >&2
  exit 1
fi
echo "$(grep -c $'\tFOUND$' <<< "$calls") sweep loops, no calls but sqrt, OpenMP and one another"
