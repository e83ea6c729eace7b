#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Plot a grain (or GRSF) run log SimData.dat: energy, solver iterations, accuracy and contacts.

usage: tools/plot_run_log.py RECORD_DIR/SimData.dat [-o run_log.png] [--title TEXT]

Needs python3-matplotlib (Debian). Columns are found by name, so grain's and GRSF's logs work.
The accuracy panel (NaturalMapError, KoziaraError, log scale) is drawn when the log has those
columns; steps without a value (nan: upgraded older logs) and exact steps (0) leave gaps.
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
    errors = [(first(d, name), label) for name, label in
              (("NaturalMapError", "natural map"), ("KoziaraError", "Koziara"))]
    errors = [(e, label) for e, label in errors if e is not None]
    rows = 4 if errors else 3
    fig, ax = plt.subplots(rows, 1, figsize=(7, 2.5 * rows), sharex=True)
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
    if errors:
        for e, label in errors:
            # Log scale: zeros (steps without contacts) and nan are not drawn.
            ax[2].plot(t, [x if x > 0 else float("nan") for x in e], label=label, lw=0.8)
        ax[2].set_yscale("log")
        ax[2].set_ylabel("solver error")
        ax[2].legend(loc="best", fontsize="small")
    nc = first(d, "nContacts")
    if nc is not None:
        ax[-1].plot(t, nc, color="tab:green")
    ax[-1].set_ylabel("contacts")
    ax[-1].set_xlabel("simulation time [s]")
    for a in ax:
        a.grid(alpha=0.3)
    fig.suptitle(args.title or args.log)
    fig.tight_layout()
    fig.savefig(args.output, dpi=80)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
