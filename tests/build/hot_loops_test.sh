#!/usr/bin/env bash
# The compiled per-contact loops of the velocity solver call nothing but sqrt (the libm fallback
# that std::sqrt keeps for negative arguments): every per-contact helper, prox and Eigen
# expression they use is inlined, whatever GCC's inlining budget for their translation unit
# (src/core/solvers/contact_solver.cpp). An out-of-line call there costs about 9 % of a sweep.
#
#   hot_loops_test.sh OBJDUMP LIBRARY   (x86-64 objects; tests/CMakeLists.txt: Build.HotLoopsInlined)
set -euo pipefail
objdump="$1"
library="$2"
# Lines "function<TAB>callee" for every call in the sweep loops (callee from the call's
# relocation in an object file, from its target otherwise).
calls="$("$objdump" -dr --no-show-raw-insn -C "$library" | awk '
  /^[0-9a-f]+ <.*>:$/ { fn = $0; sub(/^[0-9a-f]+ </, "", fn); sub(/>:$/, "", fn); hot = fn ~ /::sweep(SorContact|SorFull|Normal|Tangential|Jor|Rolling)[<(]/
                        if (hot) { found[fn] = 1 }; pending = 0; next }
  !hot { next }
  pending && /R_X86_64_(PLT32|PC32)/ { callee = $0; sub(/^.*R_X86_64_[A-Z0-9]+[ \t]+/, "", callee)
                                        sub(/-0x4$/, "", callee); print fn "\t" callee; pending = 0
                                        next }
  pending { print fn "\t" target; pending = 0 }
  /\tcall/ { pending = 1; target = $0; sub(/^.*</, "", target); sub(/>.*$/, "", target) }
  END { for (f in found) print f "\tFOUND" }')"
found=$(grep -c $'\tFOUND$' <<< "$calls" || true)
if [ "$found" -lt 6 ]; then
  echo "expected the sweep loops (sweepSorContact x2, sweepSorFull, sweepNormal, sweepTangential," \
    "sweepJor x2, sweepRolling) in $library, found $found" >&2
  exit 1
fi
bad="$(grep -v $'\tFOUND$' <<< "$calls" | grep -v -E $'\t(sqrt|sqrt@plt)$' || true)"
if [ -n "$bad" ]; then
  echo "out-of-line calls in the sweep loops (inline them, see contact_solver.cpp):" >&2
  echo "$bad" | sort | uniq -c >&2
  exit 1
fi
echo "$found sweep loops, no calls but sqrt"
