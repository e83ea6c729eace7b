#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Plot a CSV written by `grain-convert analyze` (crossing, energy, profile, packing, contacts).

usage: tools/plot_analysis.py FILE.csv [-o FILE.png] [--title TEXT]

The kind of table is recognised from its columns. Needs python3-matplotlib (Debian).
"""
import argparse
import csv
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_csv(path):
    """Returns (comments as {key: text}, columns, {column: list of floats})."""
    comments = {}
    rows = []
    with open(path) as f:
        lines = []
        for line in f:
            if line.startswith("#"):
                key, _, value = line[1:].strip().partition("=")
                comments[key.strip()] = value.strip()
            else:
                lines.append(line)
    reader = csv.reader(lines)
    columns = next(reader)
    for r in reader:
        if r:
            rows.append([float(x) for x in r])
    data = {c: [r[i] for r in rows] for i, c in enumerate(columns)}
    return comments, columns, data


def number(text):
    try:
        return float(text.split()[0])
    except (ValueError, IndexError):
        return math.nan


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("-o", "--output", default=None)
    ap.add_argument("--title", default=None)
    args = ap.parse_args()
    comments, columns, d = read_csv(args.csv)
    out = args.output or args.csv.rsplit(".", 1)[0] + ".png"
    fig, ax = plt.subplots(figsize=(7, 4.2))
    if "fraction_crossed" in d:
        ax.plot(d["time"], d["fraction_crossed"], label="crossed (cumulative)")
        n = number(comments.get("bodies", "nan"))
        if n and n == n:
            ax.plot(d["time"], [x / n for x in d["inside"]], "--", label="past the plane now")
        for q in ("Q(0.05)", "Q(0.95)"):
            tq = number(comments.get(q, "nan"))
            if tq == tq:
                ax.axvline(tq, color="gray", lw=0.8)
                ax.text(tq, 0.5, " " + q, rotation=90, va="center", fontsize="small")
        dur = comments.get("flow_duration", "nan")
        ax.set_title(f"flow duration Q(0.95) - Q(0.05) = {dur}")
        ax.set_xlabel("time [s]")
        ax.set_ylabel("fraction of bodies")
    elif "kinetic_translational" in d:
        for c in ("kinetic_translational", "kinetic_rotational", "potential", "total"):
            ax.plot(d["time"], d[c], label=c.replace("_", " "))
        ax.set_xlabel("time [s]")
        ax.set_ylabel("energy [J]")
    elif "bin" in d and "speed" in d:
        times = sorted(set(d["time"]))
        pick = times if len(times) <= 6 else [times[int(i * (len(times) - 1) / 5)] for i in range(6)]
        for t in pick:
            rows = [(s, v) for s, v, tt, n in zip(d["s"], d["speed"], d["time"], d["count"])
                    if tt == t and n > 0]  # empty bins have no mean
            s = [r[0] for r in rows]
            v = [r[1] for r in rows]
            ax.plot(v, s, marker="o", ms=3, label=f"t = {t:g} s")
        ax.set_xlabel("mean speed [m/s]")
        ax.set_ylabel("position along the axis [m]")
    elif "packing_fraction" in d:
        ax.plot(d["time"], d["packing_fraction"], label="packing fraction")
        ax.set_xlabel("time [s]")
        ax.set_ylabel("solid volume / box volume")
    elif "contacts_mean" in d:
        ax.plot(d["time"], d["contacts_mean"], label="contacts (mean)")
        ax.plot(d["time"], d["contacts_max"], label="contacts (max)")
        ax2 = ax.twinx()
        ax2.plot(d["time"], d["iterations_mean"], color="tab:purple", label="iterations (mean)")
        ax2.set_ylabel("iterations")
        ax.set_xlabel("time [s]")
        ax.set_ylabel("contacts")
    else:
        sys.exit(f"{args.csv}: unknown table (columns {', '.join(columns)})")
    ax.grid(alpha=0.3)
    ax.legend(loc="best", fontsize="small")
    if args.title:
        fig.suptitle(args.title)
    fig.tight_layout()
    fig.savefig(out, dpi=80)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
