"""Shell text: the run.sh of every run and the job script of the scheduler."""

import shlex

RECORD = "out/SimFiles/SimDataRECORD_0"


def sim_argv(study, tool_paths):
    """Shell words of a fresh simulation: grain-sim, or mpirun -np N grain-sim-mpi."""
    args = ["-s", "scene.xml", "-g", "out", "-m", shlex.quote(study.media_dir)]
    if study.ranks > 1:
        return ["mpirun", "-np", str(study.ranks), '"$GRAIN_SIM_MPI"', *args]
    return ['"$GRAIN_SIM"', *args]


def restart_argv(study):
    if study.ranks > 1:
        return ["mpirun", "-np", str(study.ranks), '"$GRAIN_SIM_MPI"', "--restart", '"$record"']
    return ['"$GRAIN_SIM"', "--restart", '"$record"']


def run_script(study, run, sim, post, tool_paths):
    """POSIX sh script of one run: simulation (resumed with --restart), then post-processing.

    The script keeps its state in the run folder: `state` (running HOST PID / stopped /
    failed ... / finished), `sim.done` once the simulation has finished, and `commands.log`
    with every command it ran. Exit codes: 0 finished, 3 stopped by a signal, else failed.
    """
    values = " ".join(f"{k}={v}" for k, v in run["values"].items())
    sim_exe = "$GRAIN_SIM_MPI" if study.ranks > 1 else "$GRAIN_SIM"
    lines = [
        "#!/bin/sh",
        f"# {run['name']} of study '{study.name}': {values}",
        "# Written by grain-study generate; run by the job script, by grain-study run or by hand.",
        "# Runs the simulation (an interrupted one continues with --restart), then the",
        "# post-processing. Exit codes: 0 finished, 3 stopped by a signal (run again to",
        "# continue), anything else failed (see state, sim.err, post.err).",
        "# GRAIN_SIM, GRAIN_CONVERT and GRAIN_SIM_MPI override the paths found by generate; a",
        "# relative override is taken from the folder this script is started in.",
        'absolute() { case "$1" in /*) printf \'%s\' "$1" ;; */*) printf \'%s/%s\' "$PWD" "$1" ;; '
        '*) printf \'%s\' "$1" ;; esac; }',
        f'GRAIN_SIM="$(absolute "${{GRAIN_SIM:-{tool_paths["grain_sim"]}}}")"',
        f'GRAIN_CONVERT="$(absolute "${{GRAIN_CONVERT:-{tool_paths["grain_convert"]}}}")"',
        f'GRAIN_SIM_MPI="$(absolute "${{GRAIN_SIM_MPI:-{tool_paths["grain_sim_mpi"]}}}")"',
        'cd "$(dirname "$0")" || exit 1',
        f"record={RECORD}",
        "interrupted=0",
        "trap 'interrupted=1' INT TERM",
        'log() { printf \'%s %s %s\\n\' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(hostname)" "$*" >> commands.log; }',
        'stop() { echo stopped > state; log "stopped by a signal"; exit 3; }',
        'fail() { echo "failed $1" > state; log "failed: $1"; exit 1; }',
        'if [ -f state ] && [ "$(cat state)" = finished ]; then exit 0; fi',
        'echo "running $(hostname) $$" > state',
        f'log "version $("{sim_exe}" --version 2>&1 | head -n 1)"',
        "if [ ! -f sim.done ]; then",
        "  # Continue only from a record with a complete state (a run killed during its start-up",
        "  # may leave none); otherwise start again.",
        '  if [ -s "$record/SimState.sim" ] && "$GRAIN_CONVERT" info "$record/SimState.sim" 2>/dev/null |',
        "     grep -q '^states  *[1-9]'; then",
        f"    set -- {' '.join(restart_argv(study))}",
        "  else",
        "    rm -rf out",
        f"    set -- {' '.join(sim)}",
        "  fi",
        '  log "$*"',
        '  echo "### $(date -u +%Y-%m-%dT%H:%M:%SZ) $*" >> sim.err',
        '  "$@" >> sim.out 2>> sim.err',
        "  rc=$?",
        '  if [ "$interrupted" = 1 ] || [ "$rc" = 3 ]; then stop; fi',
        '  if [ "$rc" != 0 ]; then fail "simulation: exit code $rc"; fi',
        "  : > sim.done",
        "fi",
    ]
    for i, words in enumerate(post, 1):
        command = " ".join(words)
        lines += [
            f"# post-processing step {i}",
            f"log {shlex.quote(command)}",
            f'echo "### $(date -u +%Y-%m-%dT%H:%M:%SZ) post-processing step {i}" >> post.err',
            f"{command} >> post.out 2>> post.err",
            "rc=$?",
            'if [ "$interrupted" = 1 ]; then stop; fi',
            f'if [ "$rc" != 0 ]; then fail "post-processing step {i}: exit code $rc"; fi',
        ]
    lines += ["echo finished > state", "log finished", ""]
    return "\n".join(lines)


def _runs_line(out_dir, index_var):
    return [
        f'run=$(printf \'run_%04d\' "{index_var}")',
        f'exec /bin/sh {shlex.quote(out_dir)}/runs/"$run"/run.sh',
    ]


def job_script(study, out_dir, count):
    """(file name, text) of the scheduler's job script for `count` runs in `out_dir`."""
    name = study.name
    last = count - 1
    header = [f"# Study '{name}': {count} runs (runs.csv). Written by grain-study generate.",
              "# Each task runs one run folder's run.sh: the simulation (continued with --restart",
              "# if it was stopped, e.g. at the wall-time limit) and its post-processing;",
              "# submitting again runs what is not finished."]
    if study.scheduler == "slurm":
        lines = ["#!/bin/sh", *header, f"#SBATCH --job-name={name}"]
        array = f"0-{last}" + (f"%{study.max_concurrent}" if study.max_concurrent else "")
        lines.append(f"#SBATCH --array={array}")
        lines.append(f"#SBATCH --ntasks={study.ranks}")
        if study.wall_time:
            lines.append(f"#SBATCH --time={study.wall_time}")
        if study.memory:
            lines.append(f"#SBATCH --mem={study.memory}")
        if study.partition:
            lines.append(f"#SBATCH --partition={study.partition}")
        if study.account:
            lines.append(f"#SBATCH --account={study.account}")
        lines.append(f"#SBATCH --output={out_dir}/logs/slurm-%A_%a.out")
        lines += _runs_line(out_dir, "$SLURM_ARRAY_TASK_ID")
        return "job.slurm", "\n".join(lines) + "\n"
    if study.scheduler in ("pbs", "torque"):
        torque = study.scheduler == "torque"
        lines = ["#!/bin/sh", *header, f"#PBS -N {name}"]
        if count > 1:
            # Torque: -t with $PBS_ARRAYID; PBS Pro: -J with $PBS_ARRAY_INDEX.
            if torque:
                lines.append(f"#PBS -t 0-{last}" + (f"%{study.max_concurrent}" if study.max_concurrent else ""))
            else:
                lines.append(f"#PBS -J 0-{last}")
        if torque:
            resources = f"nodes=1:ppn={study.ranks}"
            if study.memory:
                resources += f",mem={study.memory.lower().rstrip('b')}b"
        else:
            resources = f"select=1:ncpus={study.ranks}:mpiprocs={study.ranks}"
            if study.memory:
                resources += f":mem={study.memory.lower().rstrip('b')}b"
        lines.append(f"#PBS -l {resources}")
        if study.wall_time:
            lines.append(f"#PBS -l walltime={study.wall_time}")
        if study.partition:
            lines.append(f"#PBS -q {study.partition}")
        if study.account:
            lines.append(f"#PBS -A {study.account}")
        lines.append(f"#PBS -o {out_dir}/logs")
        lines.append("#PBS -j oe")
        index = "${PBS_ARRAYID:-0}" if torque else "${PBS_ARRAY_INDEX:-0}"
        lines += _runs_line(out_dir, index)
        return "job.pbs", "\n".join(lines) + "\n"
    # Plain shell: the runs one after the other (grain-study run -j N runs them in parallel).
    lines = ["#!/bin/sh", *header,
             "# Plain shell: the runs one after the other; grain-study run DIR -j N runs N at a time.",
             "status=0",
             f"for i in $(seq 0 {last}); do",
             "  run=$(printf 'run_%04d' \"$i\")",
             f"  /bin/sh {shlex.quote(out_dir)}/runs/\"$run\"/run.sh",
             "  rc=$?",
             '  if [ "$rc" = 3 ]; then echo "stopped in $run; run again to continue"; exit 3; fi',
             '  if [ "$rc" != 0 ]; then echo "$run failed (exit code $rc)"; status=1; fi',
             "done",
             "exit $status"]
    return "job.sh", "\n".join(lines) + "\n"
