"""grain-study run and status: the runs of a generated study on this machine."""

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

RECORD = "out/SimFiles/SimDataRECORD_0"


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# A message of grain's programs: "grain-sim: ...", "grain-convert analyze: ..." or "file:line: ...".
ERROR_LINE_RE = re.compile(r"^(grain-[a-z-]+( [a-z]+)?: |\S+:\d+: )")


def last_error_line(folder, reason=""):
    """The error line of a failed run: the first message of grain's programs in the error output
    of the failed stage's last command (post.err or sim.err), else its last non-empty line."""
    names = ("post.err", "sim.err") if reason.startswith("post") else ("sim.err", "post.err")
    for name in names:
        path = os.path.join(folder, name)
        if os.path.isfile(path) and os.path.getsize(path) > 0:
            with open(path, encoding="utf-8", errors="replace") as f:
                lines = [line.strip() for line in f if line.strip()]
            # run.sh starts the output of every command with a "### date command" line.
            starts = [i for i, line in enumerate(lines) if line.startswith("### ")]
            lines = lines[starts[-1] + 1:] if starts else lines
            messages = [line for line in lines if ERROR_LINE_RE.match(line)]
            if messages:
                return messages[0]
            if lines:
                return lines[-1]
    return ""


def run_state(folder):
    """(state, detail): pending, running, stopped, failed (detail: the error line), finished.

    A `running` mark of this host whose process is gone (killed) counts as stopped.
    """
    path = os.path.join(folder, "state")
    if not os.path.isfile(path):
        return "pending", ""
    with open(path, encoding="utf-8") as f:
        text = f.read().strip()
    word = text.split(" ", 1)[0]
    if word == "finished":
        return "finished", ""
    if word == "failed":
        reason = text.split(" ", 1)[1] if " " in text else ""
        line = last_error_line(folder, reason)
        return "failed", f"{reason}: {line}" if line else reason
    if word == "running":
        parts = text.split()
        if len(parts) == 3 and parts[1] == socket.gethostname():
            try:
                pid = int(parts[2])
            except ValueError:
                pid = 0
            if not _alive(pid):
                return "stopped", "process gone"
        return "running", ""
    if word == "stopped":
        return "stopped", ""
    return "pending", ""


def sim_progress(folder, end_time):
    """Fraction of the simulated time done (0..1), from the last line of SimData.dat."""
    if not end_time:
        return 0.0
    path = os.path.join(folder, RECORD, "SimData.dat")
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - 4096))
            tail = f.read().decode("utf-8", errors="replace").strip().split("\n")
    except OSError:
        return 0.0
    for line in reversed(tail):
        if line and not line.startswith("#"):
            fields = line.split("\t")
            try:
                return min(1.0, float(fields[1]) / end_time)
            except (IndexError, ValueError):
                return 0.0
    return 0.0


def format_duration(seconds):
    seconds = int(round(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def status(study_dir, meta, out=sys.stdout):
    """Prints one line per run and the counts; returns {state: count}."""
    counts = {}
    names = meta["parameters"]
    for run in meta["runs"]:
        folder = os.path.join(study_dir, run["folder"])
        state, detail = run_state(folder)
        counts[state] = counts.get(state, 0) + 1
        values = " ".join(f"{n}={run['values'][n]}" for n in names)
        extra = ""
        if state in ("running", "stopped"):
            extra = f" ({100 * sim_progress(folder, run['end_time']):.0f} %)"
        if detail:
            extra += f": {detail}"
        out.write(f"{run['name']}  {state:8s} {values}{extra}\n")
    order = ("finished", "running", "stopped", "failed", "pending")
    out.write(", ".join(f"{counts.get(s, 0)} {s}" for s in order) + f" of {len(meta['runs'])} runs\n")
    return counts


class Runner:
    """Runs the run.sh of pending and stopped runs, N at a time, with a progress line."""

    def __init__(self, study_dir, meta, jobs, retry_failed=False, out=sys.stdout):
        self.dir = study_dir
        self.meta = meta
        self.jobs = max(1, jobs)
        self.retry_failed = retry_failed
        self.out = out
        self.stop_signal = 0
        self.tty = out.isatty()

    def _on_signal(self, sig, _frame):
        first = self.stop_signal == 0
        self.stop_signal = sig
        for proc, _ in self.active:
            try:
                os.killpg(proc.pid, signal.SIGINT if sig == signal.SIGINT else signal.SIGTERM)
            except ProcessLookupError:
                pass
        if first:
            self._print("stopping: waiting for the running simulations to finish their step...")

    def _print(self, text):
        if self.tty:
            self.out.write("\r\033[K")
        self.out.write(text + "\n")
        self.out.flush()

    def run(self):
        """Returns 0 if every run finished, 3 if stopped by a signal, 1 if some failed."""
        queue = []
        skipped = 0
        for run in self.meta["runs"]:
            folder = os.path.join(self.dir, run["folder"])
            state, _ = run_state(folder)
            if state == "finished":
                skipped += 1
            elif state == "running":
                self._print(f"{run['name']} is marked running (by another process or host); skipped")
            elif state == "failed" and not self.retry_failed:
                self._print(f"{run['name']} failed before; skipped (--retry-failed runs it again)")
            else:
                if state == "failed":
                    for name in ("out", "sim.done", "state", "sim.err", "post.err"):
                        path = os.path.join(folder, name)
                        if os.path.isdir(path):
                            shutil.rmtree(path)
                        elif os.path.exists(path):
                            os.remove(path)
                queue.append(run)
        total = len(queue)
        resumed = sum(1 for r in queue if run_state(os.path.join(self.dir, r["folder"]))[0] == "stopped")
        self._print(f"{len(self.meta['runs'])} runs: {skipped} finished before, {total} to run"
                    f" ({resumed} continued with --restart), {self.jobs} at a time")
        failed_before = sum(1 for r in self.meta["runs"]
                            if run_state(os.path.join(self.dir, r["folder"]))[0] == "failed")
        if not queue:
            return 1 if failed_before else 0
        start_fraction = {r["name"]: sim_progress(os.path.join(self.dir, r["folder"]), r["end_time"])
                          for r in queue}
        self.active = []
        done = {"finished": 0, "failed": 0, "stopped": 0}
        old_int = signal.signal(signal.SIGINT, self._on_signal)
        old_term = signal.signal(signal.SIGTERM, self._on_signal)
        started = time.monotonic()
        last_print = 0.0
        finished_fraction = {}
        try:
            pending = list(queue)
            while pending or self.active:
                while pending and len(self.active) < self.jobs and not self.stop_signal:
                    run = pending.pop(0)
                    folder = os.path.join(self.dir, run["folder"])
                    proc = subprocess.Popen(["/bin/sh", os.path.join(folder, "run.sh")],
                                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                            stderr=subprocess.DEVNULL, start_new_session=True)
                    self.active.append((proc, run))
                if self.stop_signal and pending:
                    pending = []
                still = []
                for proc, run in self.active:
                    rc = proc.poll()
                    if rc is None:
                        still.append((proc, run))
                        continue
                    folder = os.path.join(self.dir, run["folder"])
                    state, detail = run_state(folder)
                    if rc == 0:
                        done["finished"] += 1
                        finished_fraction[run["name"]] = 1.0
                        self._print(f"{run['name']} finished")
                    elif rc == 3 or self.stop_signal:
                        done["stopped"] += 1
                        self._print(f"{run['name']} stopped at {100 * sim_progress(folder, run['end_time']):.0f} %")
                    else:
                        done["failed"] += 1
                        finished_fraction[run["name"]] = 1.0
                        self._print(f"{run['name']} failed: {detail}")
                self.active = still
                now = time.monotonic()
                if now - last_print >= (1.0 if self.tty else 10.0):
                    last_print = now
                    self._progress(queue, start_fraction, finished_fraction, done, now - started)
                time.sleep(0.1)
        finally:
            signal.signal(signal.SIGINT, old_int)
            signal.signal(signal.SIGTERM, old_term)
        self._progress(queue, start_fraction, finished_fraction, done, time.monotonic() - started)
        if self.tty:
            self.out.write("\n")
        if self.stop_signal:
            left = total - done["finished"] - done["failed"]
            self._print(f"stopped by signal {self.stop_signal}: {left} runs not finished; "
                        f"run again to continue (stopped runs continue with --restart)")
            return 3
        if done["failed"] or failed_before:
            self._print(f"{done['failed'] + failed_before} runs failed (grain-study status {self.dir} "
                        "shows why)")
            return 1
        self._print(f"all {len(self.meta['runs'])} runs finished")
        return 0

    def _progress(self, queue, start_fraction, finished_fraction, done, elapsed):
        total = len(queue)
        now_sum = 0.0
        start_sum = 0.0
        for r in queue:
            start_sum += start_fraction[r["name"]]
            if r["name"] in finished_fraction:
                now_sum += finished_fraction[r["name"]]
            else:
                now_sum += sim_progress(os.path.join(self.dir, r["folder"]), r["end_time"])
        work = now_sum - start_sum
        eta = "?"
        if work > 1e-9 and elapsed > 0:
            eta = format_duration((total - now_sum) / (work / elapsed))
        text = (f"[{done['finished']}/{total} finished, {len(self.active)} running, {done['failed']} failed] "
                f"{100 * now_sum / total:5.1f} %  elapsed {format_duration(elapsed)}  ETA {eta}")
        if self.tty:
            self.out.write("\r\033[K" + text)
            self.out.flush()
        else:
            self.out.write(text + "\n")
            self.out.flush()
