#!/usr/bin/python3
"""Plot of the distributed contact solvers' cost against the process count.

    bench/solver_comparison_plot.py OUT.svg LABEL=FILE [LABEL=FILE ...]

Each FILE is the standard output of one `bench/smpi_scaling.sh --network-only --tolerance TOL`
run (or `--method APGD`): per process count a line
    ranks R  s/step T  exchange X  collectives Y
followed by
    solver M ranks R  iterations I  messages N  bytes B  reductions C  natural-map E  ...
LABEL names its curves (dashed if it contains "cold"). Three log-log panels over the process count: iterations per step, neighbour
messages per step (all processes) and the simulated network time per step (max over the
processes). Uses matplotlib (Debian python3-matplotlib) with the SVG backend.
"""
import re
import sys

import matplotlib

matplotlib.use("svg")
import matplotlib.pyplot as plt  # noqa: E402

RANKS = re.compile(r"^ranks (\d+)\s+s/step (\S+)\s+exchange (\S+)\s+collectives (\S+)")
SOLVER = re.compile(
    r"^solver (\S+) ranks (\d+)\s+iterations (\S+)\s+messages (\S+)\s+bytes (\S+)\s+reductions (\S+)"
)


def read(path):
    """{ranks: {"time": s, "iterations": i, "messages": n, "bytes": b, "reductions": c}}"""
    runs = {}
    for line in open(path, encoding="utf-8"):
        if m := RANKS.match(line):
            runs.setdefault(int(m[1]), {})["time"] = float(m[2])
        elif m := SOLVER.match(line):
            r = runs.setdefault(int(m[2]), {})
            r["iterations"] = float(m[3])
            r["messages"] = float(m[4])
            r["bytes"] = float(m[5])
            r["reductions"] = float(m[6])
    return runs


def main(argv):
    if len(argv) < 3 or any("=" not in a for a in argv[2:]):
        sys.exit(__doc__)
    matplotlib.rcParams["svg.hashsalt"] = "grain"  # the same file for the same data
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.8))
    panels = [
        ("iterations", "iterations per step", 1.0),
        ("messages", "neighbour messages per step", 1.0),
        ("time", "simulated network time per step (ms)", 1e3),
    ]
    # Twenty colours: more curves than the default cycle's ten must not share one. tab20 holds
    # ten hues, each dark then light: the first ten curves take the dark ones, the next ten the
    # light ones.
    colours = plt.cm.tab20.colors
    for index, arg in enumerate(argv[2:]):
        label, path = arg.split("=", 1)
        runs = read(path)
        if not runs:
            sys.exit(f"solver_comparison_plot: no result lines in {path}")
        ranks = sorted(runs)
        style = "--" if "cold" in label else "-"
        for ax, (key, _, scale) in zip(axes, panels):
            # Log axes: one process has no messages and no network time.
            xs = [r for r in ranks if runs[r].get(key, 0.0) > 0.0]
            ax.plot(xs, [runs[r][key] * scale for r in xs], style, marker="o", label=label,
                    color=colours[(2 * index) % 20 + (index // 10) % 2])
    for ax, (_, title, _) in zip(axes, panels):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("processes")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
    # Below the panels: with a curve per solver and start the legend would hide data.
    handles, labels = axes[0].get_legend_handles_labels()
    rows = (len(labels) + 4) // 5
    fig.legend(handles, labels, loc="lower center", ncol=min(5, len(labels)), fontsize="small")
    fig.tight_layout(rect=(0, 0.06 * rows, 1, 1))
    fig.savefig(argv[1], metadata={"Date": None})


if __name__ == "__main__":
    main(sys.argv)
