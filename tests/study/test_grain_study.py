#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Tests of tools/grain-study (docs/studies.md).

Run by ctest (label `study`) with GRAIN_SIM and GRAIN_CONVERT set to the built executables:

    GRAIN_SIM=build/release/apps/grain_sim/grain-sim \
    GRAIN_CONVERT=build/release/apps/grain_convert/grain-convert \
    /usr/bin/python3 tests/study/test_grain_study.py [TestClass]

The study is tests/study/incline_study.xml: a block on a 30 degree incline (incline.xml) for
mu = 0.1, 0.3, 0.5 and the solvers SORContact and JOR.
"""

import csv
import hashlib
import importlib.util
import math
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TOOL = os.path.join(ROOT, "tools", "grain-study")
GRAIN_SIM = os.environ.get("GRAIN_SIM", os.path.join(ROOT, "build/release/apps/grain_sim/grain-sim"))
GRAIN_CONVERT = os.environ.get("GRAIN_CONVERT",
                               os.path.join(ROOT, "build/release/apps/grain_convert/grain-convert"))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from grainpy.simfile import SimFile  # noqa: E402

GRAIN_SIM_MPI = os.environ.get("GRAIN_SIM_MPI",
                               os.path.join(ROOT, "build/release/apps/grain_sim_mpi/grain-sim-mpi"))
STUDY = os.path.join(HERE, "incline_study.xml")
TEMPLATE = os.path.join(HERE, "incline.xml")


def study_tool(*args, **kwargs):
    """Runs grain-study with the executables under test; returns the CompletedProcess."""
    env = dict(os.environ, GRAIN_SIM=GRAIN_SIM, GRAIN_CONVERT=GRAIN_CONVERT)
    return subprocess.run(["/usr/bin/python3", TOOL, *args], capture_output=True, text=True,
                          env=env, **kwargs)


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def line_of(text, marker):
    """1-based line of the first occurrence of marker."""
    index = text.index(marker)
    return text.count("\n", 0, index) + 1


class TempDirTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="grain_study_test_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def study_copy(self, *replacements, template=None):
        """Writes the test study to study.xml in the temporary folder, each (old, new) of
        `replacements` replaced (old must occur), beside its scene template (`template`: that text
        instead of the template file's); returns the study's path."""
        with open(TEMPLATE) as f:
            scene = f.read() if template is None else template
        with open(os.path.join(self.tmp, os.path.basename(TEMPLATE)), "w") as f:
            f.write(scene)
        with open(STUDY) as f:
            text = f.read()
        for old, new in replacements:
            self.assertIn(old, text)
            text = text.replace(old, new)
        study = os.path.join(self.tmp, "study.xml")
        with open(study, "w") as f:
            f.write(text)
        return study

    def wait_until_running(self, out, proc):
        """Waits until a run has simulated at least one step (not a time limit: a condition)."""
        log = os.path.join(out, "runs", "run_0000", "out", "SimFiles", "SimDataRECORD_0", "SimData.dat")
        while proc.poll() is None:
            if os.path.isfile(log):
                with open(log) as f:
                    # Two header lines (# columns, # version), then one line per step.
                    if any(line and not line.startswith("#") for line in f.read().split("\n")):
                        return
            time.sleep(0.02)
        self.fail("grain-study run ended before a run was going")


class BadStudyFiles(TempDirTest):
    """Every problem is reported as file:line before anything is written."""

    def write_study(self, old=None, new=None, drop=None):
        shutil.copy(TEMPLATE, self.tmp)
        with open(STUDY) as f:
            text = f.read()
        if old is not None:
            self.assertIn(old, text)
            text = text.replace(old, new)
        if drop is not None:
            text = "\n".join(line for line in text.split("\n") if drop not in line)
        path = os.path.join(self.tmp, "study.xml")
        with open(path, "w") as f:
            f.write(text)
        return path, text

    def assert_error(self, study, file, line, *parts):
        out = os.path.join(self.tmp, "out")
        r = study_tool("generate", study, "-o", out)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertTrue(r.stderr.startswith(f"{file}:{line}: "), r.stderr)
        for part in parts:
            self.assertIn(part, r.stderr)
        self.assertFalse(os.path.exists(out), "nothing may be written on error")
        return r.stderr

    def test_unknown_parameter_path(self):
        study, text = self.write_study("ContactParameterStandard/@mu", "ContactParameter/@mu")
        self.assert_error(study, study, line_of(text, '<Parameter name="mu"'),
                          "parameter 'mu'", "the XPath matches nothing")

    def test_empty_range(self):
        study, text = self.write_study('values="0.1 0.3 0.5"', 'linspace="0.1 0.5 0"')
        self.assert_error(study, study, line_of(text, '<Parameter name="mu"'), "range is empty")

    def test_empty_list(self):
        study, text = self.write_study('values="0.1 0.3 0.5"', 'values=""')
        self.assert_error(study, study, line_of(text, '<Parameter name="mu"'), "list is empty")

    def test_placeholder_without_value(self):
        study, _ = self.write_study(drop='name="dt"')
        template = os.path.join(self.tmp, "incline.xml")
        with open(template) as f:
            line = line_of(f.read(), "${dt}")
        self.assert_error(study, template, line, "placeholder ${dt} has no value")

    def test_value_the_scene_reader_refuses(self):
        study, text = self.write_study('values="0.1 0.3 0.5"', 'values="0.1 -1"')
        template = os.path.join(self.tmp, "incline.xml")
        with open(template) as f:
            scene_line = line_of(f.read(), "<ContactParameterStandard")
        err = self.assert_error(study, study, line_of(text, '<Parameter name="mu"'), "(mu=-1)",
                                "the scene reader refuses")
        self.assertIn(f"{template}:{scene_line}: ", err)
        self.assertIn("'mu' must be >= 0 (got -1)", err)

    def test_unknown_solver_names_the_solver_parameter(self):
        study, text = self.write_study('values="SORContact JOR"', 'values="SORContact Foo"')
        self.assert_error(study, study, line_of(text, '<Parameter name="solver"'), "(solver=Foo)",
                          "unknown value 'Foo'")

    def test_zip_of_different_lengths(self):
        old = '<Parameter name="iterations" values="6000"/>'
        study, text = self.write_study(
            old, '<Zip><Parameter name="iterations" values="6000 7000"/>\n'
                 '<Parameter name="n" values="1 2 3"/></Zip>')
        self.assert_error(study, study, line_of(text, 'name="n"'), "'n' has 3 values, 'iterations' has 2")

    def test_unknown_element_and_malformed_xml(self):
        study, text = self.write_study("<Scheduler", "<Schedule")
        self.assert_error(study, study, line_of(text, "<Schedule "), "unknown element <Schedule>")
        study, text = self.write_study("<Scheduler type=\"slurm\"/>", "<Scheduler type=\"slurm\">")
        r = study_tool("generate", study, "-o", os.path.join(self.tmp, "out"))
        self.assertEqual(r.returncode, 2)
        self.assertRegex(r.stderr, rf"^{study}:\d+: not well-formed XML")

    def test_parameter_without_path_or_placeholder(self):
        study, text = self.write_study('<Parameter name="dt" values="0.001"/>',
                                       '<Parameter name="dt" values="0.001"/><Parameter name="zz" values="1"/>')
        self.assert_error(study, study, line_of(text, 'name="zz"'), "no ${zz} placeholder")


class JobScripts(TempDirTest):
    """Generated SLURM, PBS, Torque and shell scripts, checked as text and run with fakes."""

    def generate(self, scheduler, ranks=None, post=True):
        shutil.copy(TEMPLATE, self.tmp)
        with open(STUDY) as f:
            text = f.read()
        if ranks:
            text = text.replace('<Resources ranks="1"', f'<Resources ranks="{ranks}"')
        if not post:
            start, end = text.index("<PostProcess>"), text.index("</PostProcess>") + len("</PostProcess>")
            text = text[:start] + text[end:]
        study = os.path.join(self.tmp, "study.xml")
        with open(study, "w") as f:
            f.write(text)
        out = os.path.join(self.tmp, f"out_{scheduler}")
        r = study_tool("generate", study, "-o", out, "--scheduler", scheduler)
        self.assertEqual(r.returncode, 0, r.stderr)
        return out

    def read(self, *parts):
        with open(os.path.join(*parts)) as f:
            return f.read()

    def test_slurm_array_job(self):
        out = self.generate("slurm", ranks=4)
        job = self.read(out, "job.slurm")
        self.assertTrue(job.startswith("#!/bin/sh\n"))
        for line in ("#SBATCH --job-name=incline_mu", "#SBATCH --array=0-5", "#SBATCH --ntasks=4",
                     "#SBATCH --time=00:10:00", "#SBATCH --mem=1G", "#SBATCH --partition=short",
                     f"#SBATCH --output={out}/logs/slurm-%A_%a.out",
                     "run=$(printf 'run_%04d' \"$SLURM_ARRAY_TASK_ID\")",
                     f'exec /bin/sh {out}/runs/"$run"/run.sh'):
            self.assertIn(line + "\n", job)
        run = self.read(out, "runs", "run_0004", "run.sh")
        self.assertIn('set -- mpirun -np 4 "$GRAIN_SIM_MPI" -s scene.xml -g out -m ' + self.tmp + "\n", run)
        self.assertIn('set -- mpirun -np 4 "$GRAIN_SIM_MPI" --restart "$record"\n', run)
        self.assertIn('"$GRAIN_CONVERT" analyze contacts out/SimFiles/SimDataRECORD_0/SimData.dat '
                      "--window 100 -o contacts.csv >> post.out 2>> post.err\n", run)
        self.assertIn("# run_0004 of study 'incline_mu': mu=0.5 solver=SORContact", run)

    def test_slurm_task_runs_its_folder_with_mpirun(self):
        # A fake mpirun records its arguments: the array task 4 runs run_0004's scene.
        out = self.generate("slurm", ranks=4, post=False)
        bin_dir = os.path.join(self.tmp, "bin")
        os.makedirs(bin_dir)
        with open(os.path.join(bin_dir, "mpirun"), "w") as f:
            f.write('#!/bin/sh\necho "$@" > "$PWD/mpirun.args"\n')
        os.chmod(os.path.join(bin_dir, "mpirun"), 0o755)
        env = dict(os.environ, PATH=bin_dir + ":" + os.environ["PATH"], SLURM_ARRAY_TASK_ID="4")
        env.pop("GRAIN_SIM_MPI", None)
        r = subprocess.run(["/bin/sh", os.path.join(out, "job.slurm")], env=env, capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        folder = os.path.join(out, "runs", "run_0004")
        # grain-sim-mpi as found when the study was generated (a path, or the bare name).
        self.assertRegex(self.read(folder, "mpirun.args"),
                         rf"^-np 4 (\S*/)?grain-sim-mpi -s scene.xml -g out -m {re.escape(self.tmp)}\n$")
        self.assertEqual(self.read(folder, "state"), "finished\n")
        self.assertFalse(os.path.exists(os.path.join(out, "runs", "run_0003", "state")))
        status = study_tool("status", out)
        self.assertIn("1 finished, 0 running, 0 stopped, 0 failed, 5 pending of 6 runs", status.stdout)

    def test_pbs_pro_and_torque(self):
        out = self.generate("pbs", ranks=4)
        job = self.read(out, "job.pbs")
        for line in ("#PBS -N incline_mu", "#PBS -J 0-5", "#PBS -l select=1:ncpus=4:mpiprocs=4:mem=1gb",
                     "#PBS -l walltime=00:10:00", "#PBS -q short", f"#PBS -o {out}/logs",
                     "run=$(printf 'run_%04d' \"${PBS_ARRAY_INDEX:-0}\")"):
            self.assertIn(line + "\n", job)
        out = self.generate("torque")
        job = self.read(out, "job.pbs")
        for line in ("#PBS -t 0-5", "#PBS -l nodes=1:ppn=1,mem=1gb", "#PBS -l walltime=00:10:00",
                     "run=$(printf 'run_%04d' \"${PBS_ARRAYID:-0}\")"):
            self.assertIn(line + "\n", job)
        run = self.read(out, "runs", "run_0000", "run.sh")
        self.assertIn('set -- "$GRAIN_SIM" -s scene.xml -g out -m ' + self.tmp + "\n", run)
        self.assertIn('set -- "$GRAIN_SIM" --restart "$record"\n', run)

    def test_shell_script_and_submit_without_scheduler(self):
        out = self.generate("shell")
        job = self.read(out, "job.sh")
        self.assertIn("for i in $(seq 0 5); do\n", job)
        self.assertIn(f'/bin/sh {out}/runs/"$run"/run.sh\n', job)
        r = study_tool("submit", out)
        self.assertEqual(r.returncode, 2)
        self.assertIn("nothing to submit", r.stderr)
        if shutil.which("sbatch") is None:
            out = self.generate("slurm")
            r = study_tool("submit", out)
            self.assertEqual(r.returncode, 1)
            self.assertIn("sbatch not found on PATH", r.stderr)


class ExampleStudies(TempDirTest):
    """scenes/studies/*.study.xml generate (every scene loads) with the documented runs."""

    def test_chute_mu(self):
        out = os.path.join(self.tmp, "chute_mu")
        r = study_tool("generate", os.path.join(ROOT, "scenes", "studies", "chute_mu.study.xml"), "-o", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        runs = read_csv(os.path.join(out, "runs.csv"))
        self.assertEqual([row["mu"] for row in runs], ["0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7",
                                                       "0.8", "0.9", "1", "1.1", "1.2", "1.3", "1.4"])
        with open(os.path.join(out, "runs", "run_0003", "scene.xml")) as f:
            scene = f.read()
        self.assertIn('<ContactParameter materialId1="0" materialId2="0" type="UCF" mu="0.3"', scene)
        self.assertIn('<RigidBodies name="beads" instances="2000"', scene)
        with open(os.path.join(out, "runs", "run_0003", "run.sh")) as f:
            self.assertIn('"$GRAIN_CONVERT" analyze crossing out/SimFiles/SimDataRECORD_0/SimState.sim '
                          "--point -0.296,0,0 --normal -1,0,0 -g 0 -q -o crossing.csv", f.read())
        with open(os.path.join(out, "job.slurm")) as f:
            self.assertIn("#SBATCH --array=0-14\n", f.read())


class Expansion(TempDirTest):
    """logspace, Zip and Repeats expand into the documented runs (the chute template)."""

    def test_zip_logspace_and_repeats(self):
        study = os.path.join(self.tmp, "zip.study.xml")
        with open(study, "w") as f:
            f.write(f"""<Study>
  <Scene file="{ROOT}/scenes/chute.xml"/>
  <Parameters>
    <Zip>
      <Parameter name="mu" set='SceneSettings/ContactParameterMap/ContactParameter[1]/@mu'
                 logspace="0.01 1 3"/>
      <Parameter name="maxIter" set="SceneSettings/TimeStepperSettings/InclusionSolverSettings/@maxIter"
                 values="100 200 5000"/>
    </Zip>
    <Repeats count="2" firstSeed="7" set='SceneObjects/RigidBodies[@name="beads"]/Geometry/Sphere/@seed'/>
  </Parameters>
</Study>
""")
        out = os.path.join(self.tmp, "out")
        r = study_tool("generate", study, "-o", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("job script " + os.path.join(out, "job.sh") + " (shell)", r.stdout)
        runs = read_csv(os.path.join(out, "runs.csv"))
        self.assertEqual([(row["mu"], row["maxIter"], row["seed"]) for row in runs],
                         [("0.01", "100", "7"), ("0.01", "100", "8"), ("0.1", "200", "7"),
                          ("0.1", "200", "8"), ("1", "5000", "7"), ("1", "5000", "8")])
        with open(os.path.join(out, "runs", "run_0003", "scene.xml")) as f:
            scene = f.read()
        self.assertIn('materialId1="0" materialId2="0" type="UCF" mu="0.1"', scene)
        self.assertIn('maxIter="200"', scene)
        self.assertIn('generator="piecewise-const" intervals="1.5e-3 2e-3 2.5e-3"\n'
                      '                densities="1 0.5" seed="8"', scene)
        with open(os.path.join(out, "job.sh")) as f:
            self.assertIn("for i in $(seq 0 5); do", f.read())


class Workflow(TempDirTest):
    """3 friction values x 2 solvers: generate, run -j 2, interrupt, resume, collect."""

    def test_failed_runs_show_their_error_line(self):
        # Two short runs whose post-processing asks grain-convert for an unknown measure.
        study = self.study_copy(('values="0.1 0.3 0.5"', 'values="0.1"'),
                                ('name="iterations" values="6000"', 'name="iterations" values="20"'),
                                ("analyze contacts {simdata} --window 100", "analyze nosuch {sim}"))
        out = os.path.join(self.tmp, "out")
        self.assertEqual(study_tool("generate", study, "-o", out).returncode, 0)
        r = study_tool("run", out, "-j", "2")
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("run_0000 failed: post-processing step 1: exit code 2: "
                      "grain-convert analyze: unknown measure 'nosuch'", r.stdout)
        status = study_tool("status", out)
        self.assertEqual(status.returncode, 1)
        self.assertIn("0 finished, 0 running, 0 stopped, 2 failed, 0 pending of 2 runs", status.stdout)
        # Failed runs stay failed until --retry-failed; a failing simulation (a stand-in for
        # grain-sim that fails like it) shows grain-sim's message.
        r = study_tool("run", out)
        self.assertEqual(r.returncode, 1)
        self.assertIn("run_0001 failed before; skipped (--retry-failed runs it again)", r.stdout)
        fake = os.path.join(self.tmp, "fake-grain-sim")
        with open(fake, "w") as f:
            f.write("#!/bin/sh\n[ \"$1\" = --version ] && { echo 'grain-sim 0.0.0'; exit 0; }\n"
                    "echo 'grain-sim: non-finite velocities at t = 0.5 s (step 500); stopped' >&2\nexit 1\n")
        os.chmod(fake, 0o755)
        env = dict(os.environ, GRAIN_SIM=fake, GRAIN_CONVERT=GRAIN_CONVERT)
        r = subprocess.run(["/usr/bin/python3", TOOL, "run", out, "--retry-failed"], env=env,
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 1)
        status = study_tool("status", out)
        self.assertIn("run_0000  failed   mu=0.1 solver=SORContact iterations=20 dt=0.001: simulation: "
                      "exit code 1: grain-sim: non-finite velocities at t = 0.5 s (step 500); stopped",
                      status.stdout)

    def test_record_without_a_complete_state_starts_again(self):
        # A run killed during its start-up leaves SimState.sim with its header and no state;
        # run.sh starts that run again instead of failing on --restart.
        study = self.study_copy(('values="0.1 0.3 0.5"', 'values="0.1"'),
                                ('values="SORContact JOR"', 'values="SORContact"'),
                                ('name="iterations" values="6000"', 'name="iterations" values="20"'))
        out = os.path.join(self.tmp, "out")
        self.assertEqual(study_tool("generate", study, "-o", out).returncode, 0)
        run = os.path.join(out, "runs", "run_0000")
        record = os.path.join(run, "out", "SimFiles", "SimDataRECORD_0")
        os.makedirs(record)
        # A valid header (28 bytes: "MBSF", version 2, 1 body, 7 and 6 coordinates, no extra
        # bytes) and no state.
        with open(os.path.join(record, "SimState.sim"), "wb") as f:
            f.write(b"MBSF" + struct.pack("<6I", 2, 1, 7, 6, 0, 0))
        with open(os.path.join(run, "state"), "w") as f:
            f.write("stopped\n")
        r = study_tool("run", out)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("all 1 runs finished", r.stdout)
        with open(os.path.join(run, "commands.log")) as f:
            log = f.read()
        self.assertIn("-s scene.xml -g out", log)
        self.assertNotIn("--restart", log)
        self.assertGreater(os.path.getsize(os.path.join(record, "SimState.sim")), 28)

    def test_relative_program_paths(self):
        # GRAIN_SIM and GRAIN_CONVERT relative to the folder grain-study is started in, for
        # generate and for run: generate writes absolute paths into run.sh, and run.sh makes a
        # relative override absolute against the folder it is started in, before it changes
        # into its run folder.
        study = self.study_copy(('values="0.1 0.3 0.5"', 'values="0.1"'),
                                ('name="iterations" values="6000"', 'name="iterations" values="20"'))
        cwd = os.path.join(self.tmp, "here")
        os.makedirs(cwd)
        env = dict(os.environ, GRAIN_SIM=os.path.relpath(GRAIN_SIM, cwd),
                   GRAIN_CONVERT=os.path.relpath(GRAIN_CONVERT, cwd))

        def tool(*args):
            return subprocess.run(["/usr/bin/python3", TOOL, *args], capture_output=True, text=True,
                                  env=env, cwd=cwd)

        r = tool("generate", study, "-o", "out")
        self.assertEqual(r.returncode, 0, r.stderr)
        r = tool("run", "out", "-j", "2")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("all 2 runs finished", r.stdout)
        version = subprocess.check_output([GRAIN_SIM, "--version"], text=True).split("\n")[0]
        for name in ("run_0000", "run_0001"):
            with open(os.path.join(cwd, "out", "runs", name, "commands.log")) as f:
                self.assertIn(f"version {version}\n", f.read())
            self.assertTrue(os.path.isfile(os.path.join(cwd, "out", "runs", name, "contacts.csv")))
        with open(os.path.join(cwd, "out", "runs", "run_0000", "run.sh")) as f:
            run = f.read()
        self.assertIn(f'GRAIN_SIM="$(absolute "${{GRAIN_SIM:-{os.path.abspath(GRAIN_SIM)}}}")"\n', run)
        self.assertIn(f'GRAIN_CONVERT="$(absolute "${{GRAIN_CONVERT:-{os.path.abspath(GRAIN_CONVERT)}}}")"\n',
                      run)

    def test_generate_run_interrupt_resume_collect(self):
        out = os.path.join(self.tmp, "study")
        r = study_tool("generate", STUDY, "-o", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("6 runs of study 'incline_mu'", r.stdout)

        runs = read_csv(os.path.join(out, "runs.csv"))
        self.assertEqual([row["run"] for row in runs], [f"run_{i:04d}" for i in range(6)])
        self.assertEqual(list(runs[0]), ["run", "mu", "solver", "iterations", "dt", "folder"])
        self.assertEqual([(row["mu"], row["solver"]) for row in runs],
                         [(mu, s) for mu in ("0.1", "0.3", "0.5") for s in ("SORContact", "JOR")])

        # Each folder: the expanded scene (overrides and placeholders applied) and provenance.
        version = subprocess.run([GRAIN_SIM, "--version"], capture_output=True, text=True).stdout.strip()
        for row in runs:
            folder = os.path.join(out, row["folder"])
            with open(os.path.join(folder, "scene.xml"), "rb") as f:
                scene = f.read()
            text = scene.decode()
            self.assertIn(f'<ContactParameterStandard type="UCF" mu="{row["mu"]}"', text)
            self.assertIn(f'method="{row["solver"]}"', text)
            self.assertIn('deltaT="0.001"', text)
            self.assertNotIn("${", text)
            with open(os.path.join(folder, "provenance.txt")) as f:
                provenance = f.read()
            self.assertIn(f"scene.xml sha256 {hashlib.sha256(scene).hexdigest()}\n", provenance)
            self.assertIn(f"grain        {version} ", provenance)
            self.assertIn('command      "$GRAIN_SIM" -s scene.xml -g out -m ', provenance)

        # Run two at a time and stop with SIGINT once the first run is going.
        env = dict(os.environ, GRAIN_SIM=GRAIN_SIM, GRAIN_CONVERT=GRAIN_CONVERT)
        proc = subprocess.Popen(["/usr/bin/python3", TOOL, "run", out, "-j", "2"], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.wait_until_running(out, proc)
        proc.send_signal(signal.SIGINT)
        output, _ = proc.communicate()
        self.assertEqual(proc.returncode, 3, output)
        self.assertIn("stopped by signal 2", output)
        self.assertRegex(output, r"\[\d/6 finished, \d running, 0 failed\] +[\d.]+ %  elapsed \d+:\d\d  ETA ")

        status = study_tool("status", out)
        self.assertEqual(status.returncode, 0, status.stdout)
        stopped = [line.split()[0] for line in status.stdout.split("\n") if "  stopped " in line]
        self.assertIn("run_0000", stopped)
        self.assertRegex(status.stdout, r"0 finished, 0 running, [12] stopped, 0 failed, [45] pending of 6 runs")
        sim = os.path.join(out, "runs", "run_0000", "out", "SimFiles", "SimDataRECORD_0", "SimState.sim")
        self.assertGreater(os.path.getsize(sim), 28)

        # The second call continues the stopped runs with --restart and runs the others.
        r = study_tool("run", out, "-j", "2")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("all 6 runs finished", r.stdout)
        with open(os.path.join(out, "runs", "run_0000", "commands.log")) as f:
            log = f.read()
        self.assertIn("-s scene.xml -g out", log)
        self.assertIn("--restart out/SimFiles/SimDataRECORD_0", log)
        self.assertIn("stopped by a signal", log)
        status = study_tool("status", out)
        self.assertIn("6 finished, 0 running, 0 stopped, 0 failed, 0 pending of 6 runs", status.stdout)
        # A third call has nothing to do.
        r = study_tool("run", out)
        self.assertIn("6 finished before, 0 to run", r.stdout)

        table = os.path.join(self.tmp, "table.csv")
        r = study_tool("collect", out, "-o", table)
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = read_csv(table)
        self.assertEqual(len(rows), 6)
        for row, run in zip(rows, runs):
            self.assertEqual((row["run"], row["mu"], row["solver"], row["dt"]),
                             (run["run"], run["mu"], run["solver"], run["dt"]))
            self.assertEqual(row["status"], "finished")
            self.assertEqual(row["steps"], "1500")
            self.assertAlmostEqual(float(row["final_time"]), 1.5, places=9)
            self.assertEqual(float(row["mean_iterations"]), 6000.0)  # minIter = maxIter
            self.assertGreater(float(row["wall_time"]), 0.0)
            self.assertEqual(float(row["contacts"]), 4.0)  # four corners on the incline
            # The closed form: d = 1/2 g (sin 30 - mu cos 30) T^2, down the slope (-x).
            mu = float(row["mu"])
            expected = 0.5 * 9.81 * (0.5 - mu * math.cos(math.radians(30))) * 1.5 ** 2
            self.assertAlmostEqual(float(row["distance"]) / expected, 1.0, delta=2e-3)
            self.assertAlmostEqual(float(row["dx"]), -float(row["distance"]), places=9)
        # The physical trend: the block slides farther at lower mu, with either solver.
        for solver in ("SORContact", "JOR"):
            d = [float(row["distance"]) for row in rows if row["solver"] == solver]
            self.assertEqual(len(d), 3)
            self.assertGreater(d[0], d[1])
            self.assertGreater(d[1], d[2])
        if importlib.util.find_spec("matplotlib") is None:
            self.assertIn("matplotlib is not installed", r.stderr)
        else:
            png = os.path.join(self.tmp, "distance_vs_mu.png")
            with open(png, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")



class WorkflowMpi(TempDirTest):
    """A study with ranks="2": run.sh runs mpirun -np 2 grain-sim-mpi, is interrupted, continues
    with --restart on 2 processes, and ends where the serial grain-sim ends, bit for bit (one
    block, which one process owns: distributed runs of bodies that share no contact with another
    process follow the serial trajectory exactly)."""

    def test_two_processes_interrupt_resume_like_serial(self):
        if shutil.which("mpirun") is None or not os.path.isfile(GRAIN_SIM_MPI):
            self.skipTest("mpirun or grain-sim-mpi not available")
        with open(TEMPLATE) as f:
            template = f.read()
        self.assertIn('endTime="1.5"', template)
        study = self.study_copy(('<Resources ranks="1"', '<Resources ranks="2"'),
                                ('values="0.1 0.3 0.5"', 'values="0.1"'),
                                ('values="SORContact JOR"', 'values="SORContact"'),
                                ('name="iterations" values="6000"', 'name="iterations" values="100"'),
                                template=template.replace('endTime="1.5"', 'endTime="4"'))
        out = os.path.join(self.tmp, "out")
        env = dict(os.environ, GRAIN_SIM=GRAIN_SIM, GRAIN_CONVERT=GRAIN_CONVERT, GRAIN_SIM_MPI=GRAIN_SIM_MPI,
                   OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   OMPI_MCA_rmaps_base_oversubscribe="1")
        r = subprocess.run(["/usr/bin/python3", TOOL, "generate", study, "-o", out], env=env,
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        proc = subprocess.Popen(["/usr/bin/python3", TOOL, "run", out], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.wait_until_running(out, proc)
        proc.send_signal(signal.SIGINT)
        output, _ = proc.communicate()
        self.assertEqual(proc.returncode, 3, output)
        run = os.path.join(out, "runs", "run_0000")
        record = os.path.join(run, "out", "SimFiles", "SimDataRECORD_0")
        r = subprocess.run(["/usr/bin/python3", TOOL, "run", out], env=env, capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(os.path.join(run, "commands.log")) as f:
            log = f.read()
        self.assertIn('mpirun -np 2 ' + GRAIN_SIM_MPI + ' -s scene.xml -g out', log)
        self.assertIn("stopped by a signal", log)
        self.assertIn('mpirun -np 2 ' + GRAIN_SIM_MPI + ' --restart out/SimFiles/SimDataRECORD_0', log)

        serial = os.path.join(self.tmp, "serial")
        r = subprocess.run([GRAIN_SIM, "-s", os.path.join(run, "scene.xml"), "-g", serial, "-m", self.tmp],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        with SimFile(os.path.join(record, "SimState.sim")) as f:
            mpi = [f.read_state(k) for k in range(len(f))]
        with SimFile(os.path.join(serial, "SimFiles", "SimDataRECORD_0", "SimState.sim")) as f:
            alone = [f.read_state(k) for k in range(len(f))]
        self.assertEqual(len(mpi), 41)  # t = 0, 0.1, ..., 4
        self.assertEqual([s.time for s in mpi], [s.time for s in alone])
        for a, b in zip(mpi, alone):
            self.assertEqual([(x.r, x.q, x.v, x.w) for x in a.bodies],
                             [(x.r, x.q, x.v, x.w) for x in b.bodies], a.time)
        self.assertLess(mpi[-1].bodies[0].r[0], -1.0)  # it slid

if __name__ == "__main__":
    unittest.main(verbosity=2)
