# SPDX-License-Identifier: MIT
"""Shared helpers of the validation scripts (Python standard library only).

Finds grain's programs, runs grain-sim and grain-convert, reads `.sim` states and the CSV files
of `grain-convert analyze`, and fits straight lines.
"""
import math
import os
import shutil
import subprocess
import sys

# grain's Python package (tools/grainpy: .sim files, grain's executables), found from this file.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
from grainpy import programs as _programs  # noqa: E402
from grainpy import simfile  # noqa: E402

GRAIN_SIM = None
GRAIN_CONVERT = None


def find_program(name):
    """Absolute path of grain's executable NAME (grainpy.programs.find: $GRAIN_SIM or
    $GRAIN_CONVERT, build/release, build/minimal, build/debug-asan, PATH); exits if it is
    nowhere."""
    try:
        return _programs.find(name, required=True)
    except _programs.ProgramNotFound as e:
        sys.exit(str(e))


def programs():
    global GRAIN_SIM, GRAIN_CONVERT
    if GRAIN_SIM is None:
        GRAIN_SIM = find_program("grain-sim")
        GRAIN_CONVERT = find_program("grain-convert")
    return GRAIN_SIM, GRAIN_CONVERT


def run(cmd, log=None, cwd=None):
    """Runs cmd (a list); its output goes to the file log. Exits with the command's message on
    failure."""
    out = open(log, "w") if log else subprocess.DEVNULL
    try:
        r = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=cwd)
    finally:
        if log:
            out.close()
    if r.returncode != 0:
        tail = ""
        if log:
            with open(log) as f:
                tail = "".join(f.readlines()[-5:])
        sys.exit(f"command failed ({r.returncode}): {' '.join(cmd)}\n{tail}")


def simulate(scene, outdir, sets=(), cwd=None):
    """grain-sim -s scene -g outdir --set ...; returns the record folder."""
    sim, _ = programs()
    if os.path.exists(outdir):
        shutil.rmtree(outdir)
    os.makedirs(outdir)
    cmd = [sim, "-s", scene, "-g", outdir]
    for s in sets:
        cmd += ["--set", s]
    run(cmd, log=os.path.join(outdir, "sim.log"), cwd=cwd)
    return os.path.join(outdir, "SimFiles", "SimDataRECORD_0")


def analyze(measure, inputs, out, options=()):
    """grain-convert analyze MEASURE inputs -o out options; returns read_csv(out)."""
    _, conv = programs()
    run([conv, "analyze", measure] + list(inputs) + ["-q", "-o", out] + list(options))
    return read_csv(out)


def read_csv(path):
    """Returns ({comment key: text}, {column: list of floats}) of an analyze CSV."""
    comments, rows, columns = {}, [], None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            if line.startswith("#"):
                key, _, value = line[1:].partition("=")
                comments[key.strip()] = value.strip()
            elif columns is None:
                columns = line.split(",")
            else:
                rows.append([float(x) for x in line.split(",")])
    return comments, {c: [r[i] for r in rows] for i, c in enumerate(columns)}


def read_sim_states(path, which=(-1,)):
    """States of a .sim file (docs/sim-format.md) as [(time, [(id, x, y, z, speed), ...]), ...]
    for the state indices in which (negative: from the end). Exits with the reader's message
    if the file cannot be read."""
    try:
        return [(s.time, [(b.id, *b.r, b.speed) for b in s.bodies])
                for s in simfile.read_states(path, which)]
    except simfile.SimFileError as e:
        sys.exit(str(e))


def line_fit(x, y):
    """Least-squares line y = a + b x; returns (a, b, r²)."""
    n = len(x)
    mx, my = sum(x) / n, sum(y) / n
    sxx = sum((xi - mx) ** 2 for xi in x)
    sxy = sum((xi - mx) * (yi - my) for xi, yi in zip(x, y))
    syy = sum((yi - my) ** 2 for yi in y)
    b = sxy / sxx
    a = my - b * mx
    r2 = sxy * sxy / (sxx * syy) if syy > 0 else 1.0
    return a, b, r2


def check(ok, text):
    """Prints PASS/FAIL with text; returns ok."""
    print(("PASS  " if ok else "FAIL  ") + text)
    return ok


def pyplot():
    """matplotlib.pyplot (Agg), or None with a note when Debian's python3-matplotlib is
    missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        return plt
    except ImportError:
        print("no plot: needs python3-matplotlib (apt-get install python3-matplotlib)")
        return None


def fmt(x, digits=3):
    return "nan" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}g}"
