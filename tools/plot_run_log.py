#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Plot a grain (or GRSF) run log SimData.dat: energy, solver iterations and contacts over time.

usage: tools/plot_run_log.py RECORD_DIR/SimData.dat [-o run_log.png] [--title TEXT]

Needs python3-matplotlib (Debian). Columns are found by name, so grain's and GRSF's logs work.
"""
import argparse
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_log(path):
    """Returns (column names without units, {name: list of floats})."""
    columns = None
    data = None
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            if line.startswith("#"):
                if columns is None:
                    columns = [c.split(" [")[0].strip() for c in line.lstrip("# ").split("\t")]
                    data = {c: [] for c in columns}
                continue
            values = line.split("\t")
            if columns is None or len(values) != len(columns):
                continue  # partial last line of a killed run
            for c, v in zip(columns, values):
                data[c].append(float(v))
    if columns is None:
        sys.exit(f"{path}: no '# ' header line")
    return columns, data


def first(data, *names):
    for n in names:
        if n in data:
            return data[n]
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log")
    ap.add_argument("-o", "--output", default="run_log.png")
    ap.add_argument("--title", default=None)
    args = ap.parse_args()
    _, d = read_log(args.log)
    t = first(d, "SimulationTime")
    if t is None:
        sys.exit(f"{args.log}: no SimulationTime column")
    fig, ax = plt.subplots(3, 1, figsize=(7, 7.5), sharex=True)
    kin = first(d, "KinEnergy", "TotalKinEnergy")
    pot = first(d, "PotEnergy", "TotalPotEnergy")
    tot = first(d, "TotalEnergy", "TotalStateEnergy")
    rot = first(d, "RotKinEnergy", "TotalRotKinEnergy")
    for series, label in ((kin, "kinetic"), (rot, "rotational"), (pot, "potential"),
                          (tot, "total")):
        if series is not None:
            ax[0].plot(t, series, label=label)
    ax[0].set_ylabel("energy [J]")
    ax[0].legend(loc="best", fontsize="small")
    it = first(d, "nIterations", "nGlobalIterations")
    if it is not None:
        ax[1].plot(t, it, color="tab:purple")
    ax[1].set_ylabel("solver iterations")
    nc = first(d, "nContacts")
    if nc is not None:
        ax[2].plot(t, nc, color="tab:green")
    ax[2].set_ylabel("contacts")
    ax[2].set_xlabel("simulation time [s]")
    for a in ax:
        a.grid(alpha=0.3)
    fig.suptitle(args.title or args.log)
    fig.tight_layout()
    fig.savefig(args.output, dpi=80)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
