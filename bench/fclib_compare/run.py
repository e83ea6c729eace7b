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

Prints Markdown tables. Times are wall-clock seconds of the solve only (reading excluded), the
minimum over --repeat runs for runs shorter than one second.
"""
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
                 ("pqn/lu", ["--solver", "pqn", "--pqn-direct"])]
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


def run_siconos(exe, grain, problem, dat, solver, tol, timeout, repeat, work):
    rfile = os.path.join(work, "r.txt")
    best = None
    for _ in range(repeat):
        line = timed([exe, dat, solver, str(tol), str(SICONOS_MAX_ITER[solver]), rfile], timeout)
        if line is None:
            return {"solver": "siconos " + solver, "iterations": "-", "seconds": float("inf"),
                    "error": float("inf"), "converged": False, "note": "timeout/failure"}
        its, seconds, _, info = line.split()
        if best is None or float(seconds) < best[1]:
            best = (int(its), float(seconds), int(info))
        if float(seconds) > 1.0:
            break
    errors = timed([grain, "evaluate", problem, rfile], timeout).split()
    error = float(errors[0])
    return {"solver": "siconos " + solver, "iterations": best[0], "seconds": best[1],
            "error": error, "converged": error <= tol, "note": ""}


def run_grain(grain, problem, label, args, tol, timeout, repeat):
    best = None
    for _ in range(repeat):
        line = timed([grain, "solve", problem, "--tol", repr(tol), "--csv"] + args, timeout)
        if line is None:
            return {"solver": "grain " + label, "iterations": "-", "seconds": float("inf"),
                    "error": float("inf"), "converged": False, "note": "timeout/failure"}
        f = line.split(",")
        row = {"solver": "grain " + label, "iterations": int(f[5]), "seconds": float(f[6]),
               "error": float(f[8]), "converged": f[10] == "1", "note": ""}
        if best is None or row["seconds"] < best["seconds"]:
            best = row
        if row["seconds"] > 1.0:
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
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
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
            rows.append(run_siconos(exe, grain, problem, dat, s, a.tol, a.timeout, a.repeat, work))
        sic = [r for r in rows if r["converged"]]
        for label, args in GRAIN_SOLVERS:
            rows.append(run_grain(grain, problem, label, args, a.tol, a.timeout, a.repeat))
        for r in rows:
            print(fmt_row(name, contacts, r))
        sys.stdout.flush()
        # Target: Siconos' best error, reached by the fastest converged grain solver.
        n_sic = 1 if planar else len(SICONOS_SOLVERS)
        gr = [r for r in rows[n_sic:] if r["converged"]]
        sic_best = min(sic, key=lambda r: r["seconds"]) if sic else None
        sic_err = min(r["error"] for r in rows[:n_sic])
        target = None
        if gr and sic_err < float("inf"):
            # Every grain solver that converged at the tolerance, rerun at Siconos' best error;
            # the fastest one that reaches it is the target.
            goal = min(a.tol, max(sic_err, 1e-15))
            for r in gr:
                label = r["solver"].split(" ", 1)[1]
                t = run_grain(grain, problem, label, dict(GRAIN_SOLVERS)[label], goal, a.timeout,
                              a.repeat)
                if target is None:
                    target = t
                elif t["converged"]:
                    if not target["converged"] or t["seconds"] < target["seconds"]:
                        target = t
                elif not target["converged"] and t["error"] < target["error"]:
                    target = t
        summary.append((name, contacts, sic_best, sic_err, target))

    print()
    print("| problem | contacts | fastest converged Siconos (s) | best Siconos error | "
          "grain solver | grain s to reach that error | grain error |")
    print("|---|---|---|---|---|---|---|")
    for name, contacts, sb, se, t in summary:
        sbs = "%s %.4g" % (sb["solver"].split()[1], sb["seconds"]) if sb else "none"
        ses = "%.2e" % se if se < float("inf") else "-"
        if t is None:
            print("| %s | %s | %s | %s | - | - | - |" % (name, contacts, sbs, ses))
        else:
            print("| %s | %s | %s | %s | %s | %s | %.2e%s |" % (
                name, contacts, sbs, ses, t["solver"].split(" ", 1)[1],
                "%.4g" % t["seconds"] if t["seconds"] < float("inf") else "timeout", t["error"],
                "" if t["converged"] else " (not reached)"))


if __name__ == "__main__":
    main()
