#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The thesis' chute study: flow duration Q(0.95) - Q(0.05) against the bead-bead friction.

Runs chute_thesis.study.xml (or chute_thesis_small.study.xml with --small) with
tools/grain-study (generate, run -j N, collect; the plot is collect's), then prints the flow
durations and their ratio to the frictionless run.

usage: validation/chute/chute.py [--small] [-o DIR] [-j N] [--check]

  --check    exit 1 unless every bead crossed the end of the chute and the flow duration grows
             with mu, by at least MIN_RATIO from mu = 0 to mu = 3 (the thesis: about 2)
"""
import argparse
import csv
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
STUDY = os.path.join(ROOT, "tools", "grain-study")
MIN_RATIO = {"full": 1.5, "small": 1.3}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true")
    ap.add_argument("-o", "--out", default=None)
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    name = "chute_thesis_small" if args.small else "chute_thesis"
    outdir = os.path.abspath(args.out or os.path.join("out", name))
    if os.path.exists(outdir):
        shutil.rmtree(outdir)
    py = sys.executable
    for cmd in (["generate", os.path.join(HERE, name + ".study.xml"), "-o", outdir],
                ["run", outdir, "-j", str(args.jobs)],
                ["collect", outdir, "--png", os.path.join(outdir, name + ".png")]):
        r = subprocess.run([py, STUDY] + cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            print(r.stdout[-3000:])
            sys.exit(f"grain-study {cmd[0]} failed ({r.returncode})")
    with open(os.path.join(outdir, "results.csv")) as f:
        rows = list(csv.DictReader(f))
    rows.sort(key=lambda r: float(r["mu"]))
    base = float(rows[0]["flow_duration"])
    for r in rows:
        fd = float(r["flow_duration"])
        print(f"mu = {r['mu']}: flow duration {fd:.3f} s ({fd / base:.2f} x mu = 0), front Q(0.05) "
              f"{float(r['front_arrival']):.3f} s, crossed {float(r['crossed']):.3f}, "
              f"not converged {r['not_converged']} of {r['steps']} steps, wall time {float(r['wall_time']):.0f} s")
    print(f"table {os.path.join(outdir, 'results.csv')}, plot {os.path.join(outdir, name + '.png')}")
    if not args.check:
        return 0
    ok = True
    durations = [float(r["flow_duration"]) for r in rows]
    ratio = durations[-1] / durations[0]
    need = MIN_RATIO["small" if args.small else "full"]

    def report(cond, text):
        print(("PASS  " if cond else "FAIL  ") + text)
        return cond

    ok &= report(all(float(r["crossed"]) >= 0.95 for r in rows), "95 % of the beads crossed in every run")
    ok &= report(all(b > a for a, b in zip(durations, durations[1:])),
                 "flow duration grows with mu: " + ", ".join(f"{d:.3f}" for d in durations))
    ok &= report(ratio >= need, f"duration(mu = {rows[-1]['mu']}) / duration(mu = 0) = {ratio:.2f} >= {need}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
