"""Command line of grain-study."""

import argparse
import os
import shutil
import subprocess
import sys

from grainpy import programs

from . import collect as collect_mod
from . import generate as generate_mod
from . import runner
from .study import StudyError, read_study

EXIT_OK, EXIT_FAILURE, EXIT_BAD_INPUT, EXIT_STOPPED = 0, 1, 2, 3

DESCRIPTION = """\
Parameter studies of grain scenes: one template scene, parameters as --set paths or ${name}
placeholders, one folder per run, run here or on a cluster, collected into one table.
See docs/studies.md."""


def cmd_generate(args):
    # Absolute paths (relative ones resolved here), written into the run scripts.
    paths = {"grain_sim": programs.find("grain-sim", args.grain_sim),
             "grain_convert": programs.find("grain-convert", args.grain_convert),
             "grain_sim_mpi": programs.find("grain-sim-mpi", args.grain_sim_mpi)}
    if not os.path.isfile(paths["grain_sim"]):
        print(f"grain-study: grain-sim not found ({paths['grain_sim']}); build grain, or give "
              "--grain-sim PATH or GRAIN_SIM", file=sys.stderr)
        return EXIT_BAD_INPUT
    study = read_study(args.study)
    runs, job_file = generate_mod.generate(study, args.output, paths, sys.argv, args.scheduler, args.jobs)
    out = os.path.abspath(args.output)
    print(f"{len(runs)} runs of study '{study.name}' in {out} (every scene loaded by the scene reader)")
    print(f"runs       {out}/runs.csv")
    print(f"job script {out}/{job_file} ({study.scheduler})")
    print(f"next       grain-study run {args.output} -j N   or   grain-study submit {args.output}")
    return EXIT_OK


def cmd_submit(args):
    meta = generate_mod.load(args.dir)
    scheduler = meta["scheduler"]
    job = os.path.join(os.path.abspath(args.dir), meta["job_script"])
    if scheduler == "shell":
        print(f"grain-study: the study's scheduler is 'shell': there is nothing to submit; run "
              f"'sh {job}' (one run after the other) or 'grain-study run {args.dir} -j N'",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    command = "sbatch" if scheduler == "slurm" else "qsub"
    exe = shutil.which(command)
    if exe is None:
        print(f"grain-study: {command} not found on PATH: this machine has no {scheduler.upper()} "
              f"client. On the cluster's login node run '{command} {job}' (the scripts use the absolute "
              f"paths of {os.path.abspath(args.dir)}), or run here with 'grain-study run {args.dir} -j N'",
              file=sys.stderr)
        return EXIT_FAILURE
    r = subprocess.run([exe, job], cwd=os.path.abspath(args.dir))
    return EXIT_OK if r.returncode == 0 else EXIT_FAILURE


def cmd_run(args):
    meta = generate_mod.load(args.dir)
    r = runner.Runner(os.path.abspath(args.dir), meta, args.jobs, args.retry_failed)
    return r.run()


def cmd_status(args):
    meta = generate_mod.load(args.dir)
    counts = runner.status(os.path.abspath(args.dir), meta)
    return EXIT_OK if counts.get("failed", 0) == 0 else EXIT_FAILURE


def cmd_collect(args):
    meta = generate_mod.load(args.dir)
    study_dir = os.path.abspath(args.dir)
    out_csv = args.output or os.path.join(study_dir, "results.csv")
    columns, rows = collect_mod.collect(study_dir, meta, out_csv)
    finished = sum(1 for r in rows if r["status"] == "finished")
    print(f"table      {out_csv}: {len(rows)} runs ({finished} finished), columns {', '.join(columns)}")
    plot = dict(meta.get("plot") or {})
    if args.y:
        plot = {"y": args.y, "x": args.x, "series": args.series, "logx": False, "logy": False,
                "file": f"{args.y}_vs_{args.x}.png"}
    if args.png:
        plot["file"] = args.png
    if plot and not args.no_plot:
        for key in ("x", "y", "series"):
            if plot.get(key) and plot[key] not in columns:
                print(f"grain-study: --{key} {plot[key]}: no such column", file=sys.stderr)
                return EXIT_BAD_INPUT
        png = plot["file"] if os.path.isabs(plot["file"]) else os.path.join(os.path.dirname(out_csv), plot["file"])
        error = collect_mod.plot(rows, plot["x"], plot["y"], plot.get("series"), png,
                                 f"{meta['name']}: {plot['y']} against {plot['x']}",
                                 plot.get("logx", False), plot.get("logy", False))
        if error:
            print(f"grain-study: {error}", file=sys.stderr)
        else:
            print(f"plot       {png}")
    return EXIT_OK


def parser():
    p = argparse.ArgumentParser(prog="grain-study", description=DESCRIPTION)
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    g = sub.add_parser("generate", help="expand a study file into one folder per run and a job script")
    g.add_argument("study", help="study file (XML, docs/studies.md)")
    g.add_argument("-o", "--output", required=True, help="new (or empty) folder for the study")
    g.add_argument("--scheduler", choices=("slurm", "pbs", "torque", "shell"),
                   help="job script for this scheduler instead of the study file's")
    g.add_argument("--grain-sim", help="grain-sim executable (default: GRAIN_SIM, install folder, "
                                       "build/release, PATH)")
    g.add_argument("--grain-convert", help="grain-convert executable for the post-processing")
    g.add_argument("--grain-sim-mpi", help="grain-sim-mpi executable for runs with ranks > 1")
    g.add_argument("-j", "--jobs", type=int, help="scenes validated at a time (default: CPUs, at most 8)")
    g.set_defaults(func=cmd_generate)

    s = sub.add_parser("submit", help="submit the job script with sbatch or qsub")
    s.add_argument("dir", help="study folder (from generate)")
    s.set_defaults(func=cmd_submit)

    r = sub.add_parser("run", help="run the study on this machine, N runs at a time; resumes")
    r.add_argument("dir", help="study folder (from generate)")
    r.add_argument("-j", "--jobs", type=int, default=1, help="runs at a time (default 1)")
    r.add_argument("--retry-failed", action="store_true", help="run failed runs again from the start")
    r.set_defaults(func=cmd_run)

    t = sub.add_parser("status", help="finished / running / stopped / failed / pending per run")
    t.add_argument("dir", help="study folder (from generate)")
    t.set_defaults(func=cmd_status)

    c = sub.add_parser("collect", help="one table row per run, and a PNG plot")
    c.add_argument("dir", help="study folder (from generate)")
    c.add_argument("-o", "--output", help="table (CSV; default DIR/results.csv)")
    c.add_argument("-y", help="value to plot (default: the study's <Plot>)")
    c.add_argument("-x", help="parameter on the x axis (with -y)")
    c.add_argument("--series", help="parameter with one line per value (with -y)")
    c.add_argument("--png", help="plot file (default: beside the table)")
    c.add_argument("--no-plot", action="store_true", help="write the table only")
    c.set_defaults(func=cmd_collect)
    return p


def main(argv=None):
    args = parser().parse_args(argv)
    if args.command == "collect" and args.y and not args.x:
        print("grain-study collect: -y needs -x", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.command == "run" and args.jobs < 1:
        print("grain-study run: -j must be >= 1", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        return args.func(args)
    except StudyError as e:
        print(f"grain-study: {e}" if e.line is None else str(e), file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        return EXIT_STOPPED
