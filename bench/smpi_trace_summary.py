#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Time spent in each MPI call of a simulated run, from SimGrid's Paje trace.

    bench/smpi_trace_summary.py TRACE [PREFIX]

TRACE is the file written by smpirun with --cfg=tracing:yes --cfg=tracing/smpi:yes
(bench/smpi_scaling.sh --trace keeps one per rank count). Every MPI call of every process is a
state pushed and popped in the trace, with simulated times; this prints, per call, the simulated
time summed over the processes and divided by their number, and the calls per process, the
largest first, one line each:

    PREFIX mpi CALL  time/process T ms  calls/process N

Nested states (none in SMPI's traces of grain) would be counted in both calls.
"""
import collections
import sys


def main() -> int:
    if len(sys.argv) not in (2, 3):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    prefix = sys.argv[2] if len(sys.argv) == 3 else ""
    names = {}  # entity value id -> MPI call name
    open_states = collections.defaultdict(list)  # container -> stack of (start, value)
    time = collections.defaultdict(float)
    calls = collections.Counter()
    containers = set()
    with open(sys.argv[1], encoding="utf-8") as trace:
        for line in trace:
            code = line[:3]
            if code.startswith("5 "):  # PajeDefineEntityValue id type name colour
                fields = line.split()
                names[fields[1]] = fields[3].removeprefix("PMPI_")
            elif code == "12 ":  # PajePushState time type container value
                fields = line.split()
                open_states[fields[3]].append((float(fields[1]), fields[4]))
                containers.add(fields[3])
            elif code == "13 ":  # PajePopState time type container
                fields = line.split()
                stack = open_states[fields[3]]
                if stack:
                    start, value = stack.pop()
                    name = names.get(value, value)
                    time[name] += float(fields[1]) - start
                    calls[name] += 1
    if not containers:
        print(f"smpi_trace_summary: no MPI states in {sys.argv[1]}", file=sys.stderr)
        return 1
    n = len(containers)
    for name in sorted(time, key=lambda k: (-time[k], k)):
        print(f"{prefix}mpi {name:<12} time/process {time[name] / n * 1e3:.4f} ms"
              f"  calls/process {calls[name] / n:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
