#!/usr/bin/python3
"""Work per step of each process from callgrind files (bench/work_per_process.sh).

usage: callgrind_work.py --ranks R --steps S SHORT_DIR LONG_DIR REFERENCE_FILE

SHORT_DIR and LONG_DIR hold callgrind.<rank> files of the same scene run for a few steps and
for S steps more. A process's work is its instructions outside the MPI library and the dynamic
loader (objects named below), summed from the file's cost lines; its work per step is
(long - short) / S. Prints
  ranks R  instructions/step max X  mean Y  ratio Z
with Z = X / X of the first rank count printed (kept in REFERENCE_FILE between calls).
"""
import argparse
import pathlib
import re
import sys

# Objects whose instructions are not the process's own work: the MPI stack (waits, progress
# polling, which grow when processes share cores) and the dynamic loader (start-up).
NOT_WORK = re.compile(r"libmpi|libopen-(pal|rte)|mca_|pmix|libevent|libhwloc|libucp|libucs|libuct|"
                      r"libfabric|libpsm|ld-linux")


def work(path):
    """Instructions of one callgrind file outside NOT_WORK objects, read from the file itself
    (callgrind_annotate names no object on lines of code inlined from another file)."""
    names, obj, total, after_call = {}, "", 0, False
    with open(path) as f:
        for line in f:
            m = re.match(r"(c?ob)=\((\d+)\)\s*(.*)", line.rstrip("\n"))
            if m:  # a name is given at the first use of its number only, in ob= or cob=
                name = names.setdefault(m[2], m[3])
                if m[1] == "ob":
                    obj = name
            elif line.startswith("calls="):
                after_call = True  # the next cost line is the call's inclusive cost
            elif line[:1].isdigit() or line[:1] in "+-*":
                if not after_call and not NOT_WORK.search(obj):
                    total += int(line.split()[-1])
                after_call = False
    return total


def per_rank(folder):
    files = {int(p.suffix[1:]): p for p in pathlib.Path(folder).glob("callgrind.*")
             if p.suffix[1:].isdigit()}
    if not files:
        sys.exit(f"callgrind_work: no callgrind.<rank> files in {folder}")
    return {rank: work(p) for rank, p in files.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("short")
    ap.add_argument("long")
    ap.add_argument("reference")
    a = ap.parse_args()
    short, long_ = per_rank(a.short), per_rank(a.long)
    if sorted(short) != list(range(a.ranks)) or sorted(long_) != list(range(a.ranks)):
        sys.exit(f"callgrind_work: processes {sorted(short)} in {a.short}, {sorted(long_)} in "
                 f"{a.long}; expected 0 to {a.ranks - 1}")
    step = [(long_[r] - short[r]) / a.steps for r in range(a.ranks)]
    top, mean = max(step), sum(step) / len(step)
    if top <= 0:
        sys.exit(f"callgrind_work: no work counted ({a.short}, {a.long})")
    ref = pathlib.Path(a.reference)
    if not ref.exists():
        ref.write_text(f"{top}\n")
    base = float(ref.read_text())
    print(f"ranks {a.ranks}  instructions/step max {top / 1e6:.2f} M  mean {mean / 1e6:.2f} M"
          f"  ratio {top / base:.3f}", flush=True)


if __name__ == "__main__":
    main()
