"""grain-study generate: one folder per run, validated with the scene reader, and job scripts.

Nothing is written before every run's scene has been loaded by `grain-sim --check`.
"""

import concurrent.futures
import csv
import datetime
import hashlib
import io
import json
import os
import re
import shlex
import socket
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from xml.sax.saxutils import escape

from .study import PLACEHOLDER_RE, StudyError
from . import scripts

RECORD = "out/SimFiles/SimDataRECORD_0"
COMMAND_FIELDS = ("sim", "record", "scene", "simdata", "run", "study")


def sha256_text(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sha256_file(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def run_name(index):
    return f"run_{index:04d}"


def template_placeholders(text):
    """{name: first line} of the ${name} placeholders of a template."""
    found = {}
    for m in PLACEHOLDER_RE.finditer(text):
        found.setdefault(m.group(1), text.count("\n", 0, m.start()) + 1)
    return found


def substitute(text, values):
    """The template with each ${name} replaced by its value (escaped for XML)."""
    return PLACEHOLDER_RE.sub(lambda m: escape(values[m.group(1)], {'"': "&quot;"}), text)


def end_time_of(scene_text):
    """endTime of <TimeStepperSettings>, or None."""
    try:
        root = ET.fromstring(scene_text.encode("utf-8"))
    except ET.ParseError:
        return None
    for el in root.iter():
        if el.tag.split("}")[-1] == "TimeStepperSettings" and "endTime" in el.attrib:
            try:
                return float(el.attrib["endTime"])
            except ValueError:
                return None
    return None


def post_process_argv(study, line, command, values):
    """The argv (list of shell words) of one post-processing command of a run.

    {sim}, {record}, {scene}, {simdata}, {run}, {study} and {<parameter>} are replaced; a
    leading grain-convert / grain-sim becomes "$GRAIN_CONVERT" / "$GRAIN_SIM".
    """
    try:
        words = shlex.split(command)
    except ValueError as e:
        raise StudyError(study.file, line, f"<Command>: {e}")
    fields = {
        "sim": f"{RECORD}/SimState.sim",
        "record": RECORD,
        "scene": "scene.xml",
        "simdata": f"{RECORD}/SimData.dat",
        "run": values.get("run", ""),
        "study": "../../study",
    }
    fields.update({k: v for k, v in values.items()})

    def field(m):
        key = m.group(1)
        if key not in fields:
            raise StudyError(study.file, line, f"<Command>: unknown field {{{key}}} (known: "
                                               f"{', '.join('{' + k + '}' for k in COMMAND_FIELDS)} and the parameters)")
        return fields[key]

    out = []
    for i, w in enumerate(words):
        w = re.sub(r"\{([A-Za-z_][A-Za-z0-9_:.-]*)\}", field, w)
        if i == 0 and w in ("grain-convert", "grain-sim"):
            out.append('"$GRAIN_CONVERT"' if w == "grain-convert" else '"$GRAIN_SIM"')
        else:
            out.append(shlex.quote(w))
    return out


class Validator:
    """Runs grain-sim on scene texts in a temporary folder; nothing lands in the output."""

    def __init__(self, study, grain_sim, tmp):
        self.study = study
        self.grain_sim = grain_sim
        self.tmp = tmp
        self.name = os.path.basename(study.template)

    def _scene_file(self, key, text):
        folder = os.path.join(self.tmp, key)
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, self.name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def _run(self, args, scene_path):
        r = subprocess.run([self.grain_sim, *args], capture_output=True, text=True)
        # Messages name the temporary copy; its lines are those of the template.
        err = r.stderr.replace(scene_path, self.study.template).strip()
        return r.returncode, r.stdout, err

    def expand(self, key, text, overrides):
        """(exit code, expanded scene text or message): --set applied with --print-scene."""
        path = self._scene_file(key, text)
        args = ["-s", path, "-m", self.study.media_dir, "--print-scene"]
        for path_value in overrides:
            args += ["--set", path_value]
        rc, out, err = self._run(args, path)
        return rc, out if rc == 0 else err

    def check(self, key, text):
        """(exit code, message) of loading the scene text with the scene reader."""
        path = self._scene_file(key, text)
        rc, _, err = self._run(["-s", path, "-m", self.study.media_dir, "--check"], path)
        return rc, err


def blame(study, values, message, template_text, expanded_text):
    """The study-file line and parameters a scene-reader message is most likely about."""
    m = re.match(r"^.*?:(\d+):", message)
    if m:
        line = int(m.group(1))
        tlines = template_text.split("\n")
        elines = expanded_text.split("\n")
        hits = []
        for p in study.parameters:
            if p.placeholder:
                if line <= len(tlines) and "${" + p.name + "}" in tlines[line - 1]:
                    hits.append(p)
            else:
                attr = p.set_path.rsplit("@", 1)[-1]
                v = escape(values[p.name], {'"': "&quot;"})
                if line <= len(elines) and re.search(rf'\b{re.escape(attr)}\s*=\s*["\']{re.escape(v)}["\']',
                                                     elines[line - 1]):
                    hits.append(p)
        if hits:
            return hits[0].line, hits
    return study.parameters[0].line, study.parameters


def plan(study, grain_sim, jobs=None):
    """Checks the study and returns the list of runs with their expanded scenes.

    Raises StudyError (file:line) on any problem; writes nothing outside a temporary folder.
    """
    with open(study.template, encoding="utf-8") as f:
        template = f.read()
    placeholders = template_placeholders(template)
    names = {p.name: p for p in study.parameters}
    for name, line in placeholders.items():
        p = names.get(name)
        if p is None:
            raise StudyError(study.template, line, f"placeholder ${{{name}}} has no value: the study "
                                                   f"{study.file} has no <Parameter name=\"{name}\">")
        if not p.placeholder:
            raise StudyError(study.file, p.line, f"parameter '{name}' has set= but the template also has "
                                                 f"${{{name}}} (line {line}); use one of them")
    for p in study.parameters:
        if p.placeholder and p.name not in placeholders:
            raise StudyError(study.file, p.line, f"parameter '{p.name}' has no set= path and the template "
                                                 f"{study.template} has no ${{{p.name}}} placeholder")
        for v in p.values:
            if "\n" in v:
                raise StudyError(study.file, p.line, f"parameter '{p.name}': values may not span lines")
    for line, command in study.post_process:
        post_process_argv(study, line, command, {p.name: p.values[0] for p in study.parameters})
    runs = study.expand()
    with tempfile.TemporaryDirectory(prefix="grain-study-") as tmp:
        v = Validator(study, grain_sim, tmp)
        first = substitute(template, runs[0])
        # Every --set path on its own, so an XPath that matches nothing names its parameter.
        for p in study.parameters:
            if p.placeholder:
                continue
            rc, msg = v.expand(f"path_{p.name}", first, [f"{p.set_path}={p.values[0]}"])
            if rc != 0:
                raise StudyError(study.file, p.line, f"parameter '{p.name}' set='{p.set_path}': {msg}")

        def one(index):
            values = runs[index]
            text = substitute(template, values)
            overrides = [f"{p.set_path}={values[p.name]}" for p in study.parameters if not p.placeholder]
            rc, expanded = v.expand(run_name(index), text, overrides)
            if rc != 0:
                return index, None, expanded, text
            rc, msg = v.check(run_name(index), expanded)
            if rc != 0:
                return index, None, msg, expanded
            return index, expanded, None, None

        workers = jobs or min(8, os.cpu_count() or 1)
        with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
            results = sorted(pool.map(one, range(len(runs))))
    for index, expanded, message, text in results:
        if expanded is None:
            values = runs[index]
            line, params = blame(study, values, message, template, text)
            shown = " ".join(f"{p.name}={values[p.name]}" for p in params)
            raise StudyError(study.file, line, f"{run_name(index)} ({shown}): the scene reader refuses "
                                               f"the scene: {message}")
    planned = []
    for index, expanded, _, _ in results:
        planned.append({"id": index, "name": run_name(index), "folder": f"runs/{run_name(index)}",
                        "values": runs[index], "scene": expanded, "end_time": end_time_of(expanded)})
    return planned


def grain_version(grain_sim):
    try:
        r = subprocess.run([grain_sim, "--version"], capture_output=True, text=True)
        return r.stdout.strip() or r.stderr.strip()
    except OSError as e:
        return f"unknown ({e})"


def generate(study, out_dir, tool_paths, argv, scheduler=None, jobs=None):
    """Writes the study folder; returns (runs, job script name). Raises StudyError before writing."""
    if scheduler:
        study.scheduler = scheduler
    out_dir = os.path.abspath(out_dir)
    if os.path.exists(out_dir) and (not os.path.isdir(out_dir) or os.listdir(out_dir)):
        raise StudyError(out_dir, None, "exists and is not empty; choose a new folder with -o")
    runs = plan(study, tool_paths["grain_sim"], jobs)
    version = grain_version(tool_paths["grain_sim"])
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    generate_command = " ".join(shlex.quote(a) for a in argv)
    files = {}  # relative path -> (text, executable)

    # The study file and template as given, for reference.
    with open(study.file, encoding="utf-8") as f:
        files["study/" + os.path.basename(study.file)] = (f.read(), False)
    with open(study.template, encoding="utf-8") as f:
        files["study/" + os.path.basename(study.template)] = (f.read(), False)

    for run in runs:
        folder = run["folder"]
        scene_hash = sha256_text(run["scene"])
        sim_argv = scripts.sim_argv(study, tool_paths)
        post = [post_process_argv(study, line, cmd, {**run["values"], "run": run["name"]})
                for line, cmd in study.post_process]
        run["commands"] = {"sim": " ".join(sim_argv), "post": [" ".join(p) for p in post]}
        files[f"{folder}/scene.xml"] = (run["scene"], False)
        files[f"{folder}/run.sh"] = (scripts.run_script(study, run, sim_argv, post, tool_paths), True)
        params = "\n".join(f"  {k} = {v}" for k, v in run["values"].items())
        files[f"{folder}/provenance.txt"] = (
            f"study        {study.name}, {run['name']}\n"
            f"parameters\n{params}\n"
            f"scene        scene.xml sha256 {scene_hash}\n"
            f"template     {study.template} sha256 {sha256_file(study.template)}\n"
            f"study file   {study.file} sha256 {sha256_file(study.file)}\n"
            f"grain        {version} ({tool_paths['grain_sim']})\n"
            f"generated    {now} on {socket.gethostname()} by: {generate_command}\n"
            f"command      {run['commands']['sim']}\n"
            + "".join(f"post-process {c}\n" for c in run["commands"]["post"])
            + "Each call of run.sh adds the grain version and the exact commands to commands.log.\n",
            False)
        run["scene_sha256"] = scene_hash
        del run["scene"]

    # runs.csv: run id, every parameter value, folder.
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    names = [p.name for p in study.parameters]
    w.writerow(["run", *names, "folder"])
    for run in runs:
        w.writerow([run["name"], *[run["values"][n] for n in names], run["folder"]])
    files["runs.csv"] = (buf.getvalue(), False)

    job_file, job_text = scripts.job_script(study, out_dir, len(runs))
    files[job_file] = (job_text, True)

    meta = {
        "name": study.name,
        "study_file": study.file,
        "template": study.template,
        "scheduler": study.scheduler,
        "job_script": job_file,
        "ranks": study.ranks,
        "parameters": names,
        "summary": [{"name": s.name, "kind": s.kind, **s.spec} for s in study.summary],
        "plot": {k: v for k, v in study.plot.items() if k != "line"} if study.plot else None,
        "tools": tool_paths,
        "grain_version": version,
        "generated": now,
        "command": generate_command,
        "runs": runs,
    }
    files["study.json"] = (json.dumps(meta, indent=1) + "\n", False)

    # Write everything (the folder is new or empty).
    for rel, (text, executable) in files.items():
        path = os.path.join(out_dir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        if executable:
            os.chmod(path, 0o755)
    os.makedirs(os.path.join(out_dir, "logs"), exist_ok=True)
    return runs, job_file


def load(study_dir):
    """The study.json of a generated folder."""
    path = os.path.join(study_dir, "study.json")
    if not os.path.isfile(path):
        raise StudyError(study_dir, None, "is not a generated study folder (no study.json); "
                                          "create one with grain-study generate")
    with open(path, encoding="utf-8") as f:
        return json.load(f)





