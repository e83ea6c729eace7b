#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Side-by-side benchmark of grain's local contact solvers and Siconos (Debian's
libsiconos-numerics-dev 4.4) on FCLIB / Siconos problem files.

For every problem: Siconos NSGS and PROX run at the tolerance (their own stopping tests), their
reactions are evaluated with grain's natural-map measure (the same formula and normalisation as
Siconos' fc3d error), then every grain solver runs at the same tolerance, and finally the fastest
grain solver is rerun with the tolerance set to the best error Siconos reached ("target").

    bench/fclib_compare/run.py --grain build/dev/apps/grain_fclib/grain-fclib \
        [--data ../shared/data/fclib] [--tol 1e-8] [--timeout 60] [--repeat 3] [FILE ...]

Prints Markdown tables. Times are wall-clock seconds of the solve only (reading excluded), timed
the same way on both sides: a first run; if it took less than --fast seconds (0.02), the solve is
repeated in-process (siconos_solve REPEAT, grain-fclib --repeat) about 0.1 s worth, at most 100000
times, and the minimum per-solve time is kept; otherwise the minimum over up to --repeat runs
shorter than one second. The last table counts the problems on which a grain solver reaches
Siconos' best error in less time than Siconos' fastest solver that converged (or, when none
converged, the Siconos solver with the best error).
"""
import csv
import io
import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GRAIN_SOLVERS = [("sor/ac", ["--solver", "sor", "--ucf", "ac"]),
                 ("sor/ds", ["--solver", "sor", "--ucf", "ds"]),
                 ("jor/ac", ["--solver", "jor", "--ucf", "ac"]),
                 ("apgd", ["--solver", "apgd"]),
                 ("pqn", ["--solver", "pqn"]),
                 ("pqn/lu", ["--solver", "pqn", "--pqn-direct"]),
                 ("nsn", ["--solver", "nsn"]),
                 ("prox", ["--solver", "prox"])]
SICONOS_SOLVERS = ["nsgs", "prox"]
SICONOS_MAX_ITER = {"nsgs": 100000, "prox": 1000}


def default_data():
    """The first shared/data/fclib found next to a parent of this folder."""
    d = HERE
    while os.path.dirname(d) != d:
        d = os.path.dirname(d)
        c = os.path.join(d, "shared", "data", "fclib")
        if os.path.isdir(c):
            return c
    return os.path.join(HERE, "..", "..", "..", "shared", "data", "fclib")


def build_siconos_solver(work):
    exe = os.path.join(work, "siconos_solve")
    src = os.path.join(HERE, "siconos_solve.c")
    subprocess.run(["gcc", "-O2", "-I/usr/include/siconos", "-I/usr/include/siconos/numerics",
                    src, "-lsiconos_numerics", "-o", exe], check=True)
    return exe


def timed(cmd, timeout):
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    if out.returncode != 0:
        sys.stderr.write(" ".join(cmd) + "\n" + out.stderr)
        return None
    return out.stdout.strip()


def inner_repeat(seconds, fast):
    """In-process repetitions for a solve that took `seconds` (1 if it is not fast)."""
    if seconds >= fast:
        return 1
    return max(5, min(100000, int(0.1 / max(seconds, 1e-7))))


def run_siconos(exe, grain, problem, dat, solver, tol, timeout, repeat, work, fast):
    rfile = os.path.join(work, "r.txt")
    best = None
    n = 1
    for k in range(repeat + 1):
        line = timed([exe, dat, solver, str(tol), str(SICONOS_MAX_ITER[solver]), rfile, str(n),
                      "min"], timeout)
        if line is None:
            return {"solver": "siconos " + solver, "iterations": "-", "seconds": float("inf"),
                    "error": float("inf"), "converged": False, "note": "timeout/failure"}
        its, seconds, _, info = line.split()
        if best is None or float(seconds) < best[1]:
            best = (int(its), float(seconds), int(info))
        if n > 1 or float(seconds) > 1.0:
            break
        n = inner_repeat(float(seconds), fast)
        if n == 1 and k + 1 >= repeat:
            break
    errors = timed([grain, "evaluate", problem, rfile], timeout).split()
    error = float(errors[0])
    return {"solver": "siconos " + solver, "iterations": best[0], "seconds": best[1],
            "error": error, "converged": error <= tol, "note": ""}


def parse_grain_csv(text):
    """The row of grain-fclib --csv (header line + one line), by column name."""
    rows = list(csv.DictReader(io.StringIO(text)))
    return rows[-1]


def run_grain(grain, problem, label, args, tol, timeout, repeat, fast):
    best = None
    n = 1
    for k in range(repeat + 1):
        line = timed([grain, "solve", problem, "--tol", repr(tol), "--csv", "--repeat", str(n),
                      "--repeat-stat", "min"] + args, timeout)
        if line is None:
            return {"solver": "grain " + label, "iterations": "-", "seconds": float("inf"),
                    "error": float("inf"), "converged": False, "note": "timeout/failure"}
        f = parse_grain_csv(line)
        row = {"solver": "grain " + label, "iterations": int(f["iterations"]),
               "seconds": float(f["seconds"]), "error": float(f["natural-map"]),
               "converged": f["converged"] == "1", "note": ""}
        if best is None or row["seconds"] < best["seconds"]:
            best = row
        if n > 1 or row["seconds"] > 1.0:
            break
        n = inner_repeat(row["seconds"], fast)
        if n == 1 and k + 1 >= repeat:
            break
    return best


def fmt_row(name, contacts, r):
    sec = "timeout" if r["seconds"] == float("inf") else "%.4g" % r["seconds"]
    err = "-" if r["error"] == float("inf") else "%.2e" % r["error"]
    return "| %s | %s | %s | %s | %s | %s | %s |" % (
        name, contacts, r["solver"], r["iterations"], sec, err, "yes" if r["converged"] else "no")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--grain", required=True, help="grain-fclib executable")
    ap.add_argument("--data", default=default_data())
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--repeat", type=int, default=3,
                    help="process runs of a solve slower than --fast (minimum kept)")
    ap.add_argument("--fast", type=float, default=0.02,
                    help="solves faster than this (s) are repeated in-process")
    ap.add_argument("--solvers", default=",".join(l for l, _ in GRAIN_SOLVERS),
                    help="comma-separated grain solver labels to run")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    solvers = [(l, g) for l, g in GRAIN_SOLVERS if l in a.solvers.split(",")]
    grain = os.path.abspath(a.grain)
    files = a.files or sorted(os.path.join(a.data, f) for f in os.listdir(a.data)
                              if not f.endswith(".md"))
    work = tempfile.mkdtemp(prefix="fclib_compare_")
    exe = build_siconos_solver(work)

    print("| problem | contacts | solver | iterations | seconds | error | converged |")
    print("|---|---|---|---|---|---|---|")
    summary = []
    for problem in files:
        name = os.path.basename(problem)
        info = timed([grain, "info", problem], a.timeout)
        contacts = info.split("contacts")[1].split()[0] if info else "?"
        dat = problem
        if not problem.endswith(".dat"):
            dat = os.path.join(work, name + ".dat")
            subprocess.run([grain, "convert", problem, dat], check=True)
        rows = []
        planar = info is not None and "(2-D)" in info
        # FC2D problems: Siconos' generic planar solver is its FC2D NSGS (run once).
        for s in (["nsgs"] if planar else SICONOS_SOLVERS):
            rows.append(run_siconos(exe, grain, problem, dat, s, a.tol, a.timeout, a.repeat, work,
                                    a.fast))
        sic = [r for r in rows if r["converged"]]
        for label, args in solvers:
            rows.append(run_grain(grain, problem, label, args, a.tol, a.timeout, a.repeat, a.fast))
        for r in rows:
            print(fmt_row(name, contacts, r))
        sys.stdout.flush()
        # Target: Siconos' best error, reached by the fastest grain solver. Siconos' reference
        # time is its fastest converged solver, or its solver with the best error if none
        # converged.
        n_sic = 1 if planar else len(SICONOS_SOLVERS)
        sic_err = min(r["error"] for r in rows[:n_sic])
        sic_best = min(sic, key=lambda r: r["seconds"]) if sic else None
        if sic_best is None and sic_err < float("inf"):
            sic_best = min(rows[:n_sic], key=lambda r: (r["error"], r["seconds"]))
        target = None
        if sic_err < float("inf"):
            # Every grain solver that converged at the tolerance (or reached Siconos' error),
            # rerun at Siconos' best error; the fastest one that reaches it is the target.
            goal = max(sic_err, 1e-15) if not sic else min(a.tol, max(sic_err, 1e-15))
            gr = [r for r in rows[n_sic:] if r["converged"] or r["error"] <= goal]
            for r in gr:
                label = r["solver"].split(" ", 1)[1]
                t = run_grain(grain, problem, label, dict(GRAIN_SOLVERS)[label], goal, a.timeout,
                              a.repeat, a.fast)
                if target is None:
                    target = t
                elif t["converged"]:
                    if not target["converged"] or t["seconds"] < target["seconds"]:
                        target = t
                elif not target["converged"] and t["error"] < target["error"]:
                    target = t
        summary.append((name, contacts, sic_best, sic_err, target))

    print()
    print("| problem | contacts | Siconos reference (s) | best Siconos error | "
          "grain solver | grain s to reach that error | grain error | grain faster |")
    print("|---|---|---|---|---|---|---|---|")
    wins = 0
    lost = []
    for name, contacts, sb, se, t in summary:
        sbs = "%s %.4g" % (sb["solver"].split()[1], sb["seconds"]) if sb else "none"
        if sb is not None and not sb["converged"]:
            sbs += " (not converged)"
        ses = "%.2e" % se if se < float("inf") else "-"
        win = (t is not None and t["converged"] and
               (sb is None or t["seconds"] < sb["seconds"]))
        wins += 1 if win else 0
        if not win:
            lost.append(name)
        if t is None:
            print("| %s | %s | %s | %s | - | - | - | %s |" % (name, contacts, sbs, ses,
                                                          "yes" if win else "no"))
        else:
            print("| %s | %s | %s | %s | %s | %s | %.2e%s | %s |" % (
                name, contacts, sbs, ses, t["solver"].split(" ", 1)[1],
                "%.4g" % t["seconds"] if t["seconds"] < float("inf") else "timeout", t["error"],
                "" if t["converged"] else " (not reached)", "yes" if win else "no"))
    print()
    print("grain reaches Siconos' best error faster on %d of %d problems; not on: %s" % (
        wins, len(summary), ", ".join(lost) if lost else "none"))


if __name__ == "__main__":
    main()
