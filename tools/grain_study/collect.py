"""grain-study collect: one table row per run, and a plot of a value against a parameter."""

import csv
import math
import os
import sys

from grainpy.simfile import SimFile, SimFileError, body_id

from .runner import RECORD, run_state

BUILTIN = ("final_time", "steps", "mean_iterations", "wall_time")


def read_run_log(path):
    """Summary of a SimData.dat: final time, steps, mean iterations, wall time (s).

    WallTime restarts at 0 when a run is continued with --restart; the wall time of the run
    is the sum of the last WallTime of every segment.
    """
    header = None
    final_time = steps = None
    iterations = []
    wall_total = 0.0
    wall_prev = None
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#"):
                # The column header is the first comment line ("# grain X.Y.Z" may follow).
                if header is None:
                    header = [c.split(" [")[0].strip() for c in line[1:].strip().split("\t")]
                continue
            fields = line.rstrip("\n").split("\t")
            if header is None or len(fields) != len(header):
                continue
            row = dict(zip(header, fields))
            wall = float(row["WallTime"])
            if wall_prev is not None and wall < wall_prev:
                wall_total += wall_prev
            wall_prev = wall
            final_time = float(row["SimulationTime"])
            steps = int(row["Step"])
            iterations.append(float(row["nIterations"]))
    if wall_prev is not None:
        wall_total += wall_prev
    return {
        "final_time": final_time,
        "steps": steps,
        "mean_iterations": sum(iterations) / len(iterations) if iterations else None,
        "wall_time": wall_total if wall_prev is not None else None,
    }


def read_table(path):
    """(comments {key: value}, header, rows) of a CSV or tab-separated file.

    `# key = value` lines are comments; a header line starting with '# ' (SimData.dat) names
    the columns, units in brackets dropped.
    """
    comments = {}
    header = None
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            if line.startswith("#"):
                body = line[1:].strip()
                if "=" in body and "\t" not in body:
                    k, v = body.split("=", 1)
                    comments[k.strip()] = v.strip()
                elif header is None and "\t" in body:
                    header = [c.split(" [")[0].strip() for c in body.split("\t")]
                continue
            sep = "\t" if "\t" in line else ","
            fields = [c.strip() for c in next(csv.reader([line], delimiter=sep))]
            if header is None:
                header = fields
            else:
                rows.append(fields)
    return comments, header or [], rows


def reduce_column(header, rows, column, how):
    if column not in header:
        raise KeyError(f"no column '{column}' (columns: {', '.join(header)})")
    i = header.index(column)
    values = []
    for r in rows:
        try:
            values.append(float(r[i]))
        except (IndexError, ValueError):
            pass
    if not values:
        return None
    if how == "first":
        return values[0]
    if how == "last":
        return values[-1]
    finite = [v for v in values if not math.isnan(v)]
    if not finite:
        return float("nan")
    if how == "min":
        return min(finite)
    if how == "max":
        return max(finite)
    return sum(finite) / len(finite)


def read_body(path, group, number):
    """(first, last) state of a body in a .sim file: each (position (3), velocity (3))."""
    wanted = body_id(group, number)
    with SimFile(path) as f:
        if len(f) < 1:
            raise SimFileError(f"{path} has no complete state")
        ends = []
        for state in f.states((0, len(f) - 1)):
            b = state.find(wanted)
            if b is None:
                raise SimFileError(f"body {group}:{number} is not in {path}")
            ends.append((b.r, b.v))
    return ends[0], ends[1]


def summary_value(spec, folder):
    """One user-defined summary value of a run folder, or None if not available."""
    if spec["kind"] == "body":
        (r0, _), (r1, v1) = read_body(os.path.join(folder, RECORD, "SimState.sim"),
                                      spec["group"], spec["number"])
        d = [b - a for a, b in zip(r0, r1)]
        q = spec["quantity"]
        table = {"x": r1[0], "y": r1[1], "z": r1[2], "dx": d[0], "dy": d[1], "dz": d[2],
                 "distance": math.sqrt(sum(c * c for c in d)), "speed": math.sqrt(sum(c * c for c in v1))}
        return table[q]
    path = os.path.join(folder, spec["file"].replace("{record}", RECORD))
    comments, header, rows = read_table(path)
    if spec["kind"] == "comment":
        if spec["key"] not in comments:
            raise KeyError(f"no '# {spec['key']} = ...' line in {spec['file']}")
        text = comments[spec["key"]]
        try:
            return float(text.split()[0])  # "0.1655 s": the number without its unit
        except (IndexError, ValueError):
            return text
    return reduce_column(header, rows, spec["column"], spec["reduce"])


def fmt(value):
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return str(value)


def collect(study_dir, meta, out_csv, err=sys.stderr):
    """Writes the table; returns (columns, rows as dicts)."""
    names = meta["parameters"]
    specs = meta["summary"]
    columns = ["run", *names, "status", *BUILTIN, *[s["name"] for s in specs], "folder"]
    rows = []
    for run in meta["runs"]:
        folder = os.path.join(study_dir, run["folder"])
        state, _ = run_state(folder)
        row = {"run": run["name"], "status": state, "folder": run["folder"], **run["values"]}
        log = os.path.join(folder, RECORD, "SimData.dat")
        if os.path.isfile(log):
            row.update(read_run_log(log))
        if state == "finished":
            for s in specs:
                try:
                    row[s["name"]] = summary_value(s, folder)
                except (OSError, KeyError, ValueError) as e:
                    err.write(f"{run['name']}: {s['name']}: {e}\n")
        rows.append(row)
    with open(out_csv, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(columns)
        for row in rows:
            w.writerow([fmt(row.get(c)) for c in columns])
    return columns, rows


def _float(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def plot(rows, x, y, series, png, title, logx=False, logy=False):
    """PNG of y against x, one line per value of `series`. Returns an error text or None."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return ("matplotlib is not installed, so no plot was drawn (the table is complete); "
                "on Debian: apt-get install python3-matplotlib")
    groups = {}
    numeric_x = all(_float(r.get(x)) is not None for r in rows)
    for r in rows:
        yv = _float(r.get(y))
        if yv is None or math.isnan(yv):
            continue
        key = r.get(series) if series else ""
        groups.setdefault(key, []).append((_float(r[x]) if numeric_x else r.get(x), yv))
    if not groups:
        return f"no finished run has a value of '{y}'; no plot drawn"
    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=100)
    for key in sorted(groups, key=str):
        points = sorted(groups[key], key=lambda p: p[0])
        label = f"{series} = {key}" if series else None
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=label)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    if series:
        ax.legend()
    fig.tight_layout()
    fig.savefig(png)
    plt.close(fig)
    return None
