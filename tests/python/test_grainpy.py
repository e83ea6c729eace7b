#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Tests of tools/grainpy, the Python package of grain's .sim files and executables.

Run by ctest (label `python`) with GRAIN_SIM and GRAIN_CONVERT set to the built executables:

    GRAIN_SIM=build/release/apps/grain_sim/grain-sim \
    GRAIN_CONVERT=build/release/apps/grain_convert/grain-convert \
    /usr/bin/python3 tests/python/test_grainpy.py [TestClass]

SimFileFormat checks the reader and writer against docs/sim-format.md (its worked example byte
for byte, every additional-bytes type, truncated and broken files); SimFileOfGrainSim decodes a
file written by grain-sim and compares it with grain-convert's reading of the same file;
Programs checks how executables are found and that relative paths are made absolute.
"""

import math
import os
import re
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools"))

from grainpy import programs, simfile  # noqa: E402
from grainpy.simfile import Body, SimFile, SimFileError, State, body_id  # noqa: E402

# The folders programs searches, before Programs replaces them with a temporary tree.
PROGRAMS_SOURCE_ROOT = programs.SOURCE_ROOT
PROGRAMS_TOOLS_DIR = programs.TOOLS_DIR


class TempDirTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="grainpy_test_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.tmp, name)

    def write_bytes(self, name, data):
        with open(self.path(name), "wb") as f:
            f.write(data)
        return self.path(name)


def doc_worked_example():
    """The bytes of the hex dump in docs/sim-format.md, "Worked example"."""
    with open(os.path.join(ROOT, "docs", "sim-format.md"), encoding="utf-8") as f:
        text = f.read()
    section = text[text.index("## Worked example"):]
    dump = section[section.index("```") + 3:]
    dump = dump[:dump.index("```")]
    data = bytearray()
    for line in dump.strip().split("\n"):
        m = re.match(r"^[0-9a-f]{8}: ((?:[0-9a-f]{2} ?)+)", line)
        data += bytes.fromhex(m.group(1))
    return bytes(data)


def sample_states(additional_type=0, bodies=3, states=4):
    """States with distinct values in every field, bodies in an order that is not sorted."""
    extras = {
        0: lambda k, i: {},
        1: lambda k, i: {"rank": i + 1},
        2: lambda k, i: {"rank": i, "material": 7 + k},
        3: lambda k, i: {"rank": i, "material": 2, "overlap": 1e-5 * (k + 1)},
        4: lambda k, i: {"rank": 3, "overlap": 0.25 * i},
        5: lambda k, i: {"rank": i, "material": k, "overlap": 1.5e-6, "geometry": 40 + i},
    }[additional_type]
    out = []
    for k in range(states):
        bs = []
        for i in reversed(range(bodies)):
            c = math.cos(0.1 * (k + i)), math.sin(0.1 * (k + i))
            bs.append(Body(body_id(i % 2, 1000 + i), r=(i, -0.5 * k, 1e-3 * (i + k)),
                           q=(c[1], 0.0, 0.0, c[0]), v=(0.1 * k, -2.0, i), w=(0.0, 3.5, -k),
                           extra=extras(k, i)))
        out.append(State(0.001 * k, bs))
    return out


class SimFileFormat(TempDirTest):
    """The reader and writer against docs/sim-format.md."""

    def test_worked_example_of_the_docs(self):
        data = doc_worked_example()
        self.assertEqual(len(data), 148)
        path = self.write_bytes("example.sim", data)
        with SimFile(path) as f:
            self.assertEqual(f.header, simfile.Header(1))
            self.assertEqual(len(f), 1)
            self.assertFalse(f.truncated)
            s = f.read_state(0)
        self.assertEqual(s.time, 0.5)
        self.assertEqual(len(s.bodies), 1)
        b = s.bodies[0]
        self.assertEqual((b.group, b.number), (1, 2))
        self.assertEqual(simfile.format_id(b.id), "(1,2)")
        self.assertEqual(b.r, (1.0, 2.0, 3.0))
        self.assertEqual(b.q, (0.0, 0.0, 0.0, 1.0))
        self.assertEqual(b.v, (0.0, 0.0, -1.0))
        self.assertEqual(b.w, (0.0, 0.0, 0.25))
        self.assertEqual(b.extra, {})
        # The writer gives the same bytes.
        self.assertEqual(simfile.encode([State(0.5, [Body(body_id(1, 2), r=(1, 2, 3), v=(0, 0, -1),
                                                          w=(0, 0, 0.25))])]), data)

    def test_round_trip_of_every_additional_bytes_type(self):
        for kind, size in ((0, 0), (1, 4), (2, 8), (3, 16), (4, 12), (5, 20)):
            with self.subTest(additional_type=kind):
                states = sample_states(kind)
                path = self.path(f"type{kind}.sim")
                simfile.write(path, states, kind)
                self.assertEqual(os.path.getsize(path), 28 + 4 * (8 + 3 * (112 + size)))
                with SimFile(path) as f:
                    self.assertEqual(f.header, simfile.Header(3, kind, size))
                    self.assertEqual(len(f), 4)
                    self.assertEqual(f.read_times(), [0.0, 0.001, 0.002, 0.003])
                    self.assertEqual(list(f.states()), states)
                    # Negative indices count from the end; bodies are found by id.
                    self.assertEqual(f.read_state(-1), states[3])
                    self.assertEqual(f.read_state(-4), states[0])
                    last = f.read_state(3)
                    self.assertIs(last.find(body_id(0, 1000)), last.bodies[2])
                    self.assertIsNone(last.find(body_id(1, 1000)))

    def test_fields_are_at_the_documented_offsets(self):
        states = sample_states(5, bodies=2, states=2)
        data = simfile.encode(states, 5)
        self.assertEqual(data[:4], b"MBSF")
        self.assertEqual(struct.unpack_from("<6I", data, 4), (2, 2, 7, 6, 5, 20))
        b = states[1].bodies[1]
        state = 28 + 1 * (8 + 2 * 132)  # state 1
        body = state + 8 + 1 * 132  # its body 1
        self.assertEqual(struct.unpack_from("<d", data, state)[0], states[1].time)
        self.assertEqual(struct.unpack_from("<Q", data, body)[0], b.id)
        self.assertEqual(struct.unpack_from("<3d", data, body + 8), b.r)
        self.assertEqual(struct.unpack_from("<4d", data, body + 32), b.q)
        self.assertEqual(struct.unpack_from("<3d", data, body + 64), b.v)
        self.assertEqual(struct.unpack_from("<3d", data, body + 88), b.w)
        self.assertEqual(struct.unpack_from("<IIdI", data, body + 112),
                         tuple(b.extra[k] for k in ("rank", "material", "overlap", "geometry")))

    def test_unknown_additional_type_keeps_the_raw_bytes(self):
        header = struct.pack("<4s6I", b"MBSF", 2, 1, 7, 6, 9, 3)
        state = struct.pack("<dQ13d", 2.0, 5, *range(13)) + b"xyz"
        with SimFile(self.write_bytes("odd.sim", header + state)) as f:
            b = f.read_state(0).bodies[0]
        self.assertEqual(b.extra, b"xyz")
        self.assertEqual(b.w, (10.0, 11.0, 12.0))

    def test_partial_last_state_is_ignored_and_reported(self):
        data = simfile.encode(sample_states(0, bodies=3, states=3))
        path = self.write_bytes("cut.sim", data[:-50])
        with SimFile(path) as f:
            self.assertEqual(len(f), 2)
            self.assertTrue(f.truncated)
            self.assertEqual(f.trailing_bytes, 8 + 3 * 112 - 50)
            self.assertEqual(f.truncation_warning(),
                             f"{path}: ignoring a partial last state (294 bytes after state 2 of "
                             "344 bytes per state)")
            self.assertEqual(f.read_state(-1), sample_states(0, bodies=3, states=3)[1])
            with self.assertRaises(SimFileError) as e:
                f.read_state(2)
            self.assertEqual(str(e.exception), f"{path}: state 2 does not exist (the file has 2 "
                                               "complete states, and a partial state of 294 bytes)")

    def test_truncated_header_and_state_are_clear_errors(self):
        data = simfile.encode(sample_states(0, bodies=2, states=1))
        path = self.write_bytes("header.sim", data[:20])
        with self.assertRaises(SimFileError) as e:
            SimFile(path)
        self.assertEqual(str(e.exception), f"{path}: too short for a .sim header (20 bytes, need 28)")
        path = self.write_bytes("state.sim", data[:100])
        with self.assertRaises(SimFileError) as e:
            simfile.read_states(path, [-1])
        self.assertEqual(str(e.exception), f"{path}: state -1 does not exist (the file has 0 complete "
                                           "states, and a partial state of 72 bytes)")
        with self.assertRaises(SimFileError) as e:
            SimFile(self.path("missing.sim"))
        self.assertIn("missing.sim: cannot open the file: No such file or directory", str(e.exception))

    def test_broken_headers_are_refused(self):
        good = simfile.encode(sample_states(0, bodies=1, states=1))
        cases = {
            b"GRSF" + good[4:]: "not a .sim file (signature b'GRSF', expected 'MBSF')",
            good[:4] + struct.pack("<I", 3) + good[8:]: "unsupported .sim version 3 (grain reads version 2)",
            good[:12] + struct.pack("<I", 4) + good[16:]: "unsupported layout nDOFq=4, nDOFu=6 (grain reads 7 and 6)",
            good[:20] + struct.pack("<2I", 5, 12) + good[28:]:
                "additional-bytes type 5 has 20 bytes per body, header says 12",
        }
        for data, message in cases.items():
            with self.subTest(message=message):
                path = self.write_bytes("bad.sim", data)
                with self.assertRaises(SimFileError) as e:
                    SimFile(path)
                self.assertEqual(str(e.exception), f"{path}: {message}")

    def test_an_id_twice_in_a_state_is_an_error(self):
        state = State(0.0, [Body(body_id(0, 4)), Body(body_id(0, 4))])
        path = self.path("twice.sim")
        simfile.write(path, [state])
        with self.assertRaises(SimFileError) as e:
            simfile.read_states(path)
        self.assertEqual(str(e.exception), f"{path}: state 0: body id (0,4) occurs twice")

    def test_writer_refuses_inconsistent_states(self):
        with self.assertRaises(SimFileError):
            simfile.encode([State(0, [Body(1)]), State(1, [Body(1), Body(2)])])
        with self.assertRaises(SimFileError):
            simfile.encode([State(0, [Body(1, extra={"rank": 1})])], 2)


def program(name):
    return programs.find(name, required=True)


def vtk_arrays(path):
    """{name: list of value rows} of an ASCII .vtu file of grain-convert vtk."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    arrays = {}
    for m in re.finditer(r'<DataArray[^>]*Name="([^"]+)"[^>]*>([^<]*)</DataArray>', text):
        arrays[m.group(1)] = [tuple(float(x) for x in line.split())
                              for line in m.group(2).strip().split("\n")]
    return arrays


def rotate(q, x):
    """R(q) x for a unit quaternion q = (x, y, z, w)."""
    qv, w = q[:3], q[3]

    def cross(a, b):
        return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])

    t = tuple(2 * c for c in cross(qv, x))
    u = cross(qv, t)
    return tuple(x[i] + w * t[i] + u[i] for i in range(3))


class SimFileOfGrainSim(TempDirTest):
    """A file written by grain-sim: 40 beads of scenes/pile.xml, spinning, for 0.1 s."""

    BEADS = 40

    def setUp(self):
        super().setUp()
        beads = 'SceneObjects/RigidBodies[@name="beads"]'
        sets = [f"{beads}/@instances={self.BEADS}",
                "SceneSettings/TimeStepperSettings/@endTime=0.1",
                f"{beads}/DynamicProperties/InitialCondition/InitialVelocity/Vel/@absRotVel=3"]
        cmd = [program("grain-sim"), "-s", os.path.join(ROOT, "scenes", "pile.xml"), "-g", self.tmp]
        for s in sets:
            cmd += ["--set", s]
        r = subprocess.run(cmd, capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.record = os.path.join(self.tmp, "SimFiles", "SimDataRECORD_0")
        self.sim = os.path.join(self.record, "SimState.sim")

    def test_bodies_times_and_initial_state(self):
        with SimFile(self.sim) as f:
            self.assertEqual(f.header, simfile.Header(self.BEADS, 0, 0))
            # statesPerSecond="50": t = 0, 0.02, ..., 0.1.
            self.assertEqual(len(f), 6)
            self.assertFalse(f.truncated)
            for k, t in enumerate(f.read_times()):
                self.assertAlmostEqual(t, 0.02 * k, delta=1e-9)
            first = f.read_state(0)
            last = f.read_state(-1)
        # The serial writer sorts the simulated bodies by id; the floor (static) is not written.
        self.assertEqual([b.id for b in first.bodies], [body_id(0, k) for k in range(self.BEADS)])
        for b in first.bodies:
            # Initial velocity: 0.5 m/s down, 3 rad/s about x; identity orientation.
            self.assertEqual(b.v, (0.0, 0.0, -0.5))
            self.assertEqual(b.w, (3.0, 0.0, 0.0))
            self.assertEqual(b.q, (0.0, 0.0, 0.0, 1.0))
        # The grid of 20 x 20 at 11.5 mm (jitter 0.5 mm): two rows of 20 beads.
        xs = sorted(b.r[0] for b in first.bodies)
        self.assertLess(xs[-1] - xs[0], 19 * 0.0115 + 2 * 0.0005 + 1e-9)
        self.assertGreater(xs[-1] - xs[0], 19 * 0.0115 - 2 * 0.0005 - 1e-9)
        for b in last.bodies:
            self.assertAlmostEqual(math.sqrt(sum(c * c for c in b.q)), 1.0, delta=1e-12)
            self.assertNotEqual(b.q, (0.0, 0.0, 0.0, 1.0))  # they spin

    def test_agrees_with_grain_convert(self):
        """Every field of the last state equals grain-convert vtk's reading of the file."""
        out = self.path("vtk")
        r = subprocess.run([program("grain-convert"), "vtk", self.sim, "-s",
                            os.path.join(self.record, "SceneFile.xml"), "--ascii", "-q", "-o", out],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        vtk = vtk_arrays(os.path.join(out, "states", "states_00005.vtu"))
        last = simfile.read_states(self.sim, [-1])[0]
        self.assertEqual(len(vtk["Points"]), self.BEADS)
        for i, b in enumerate(last.bodies):
            self.assertEqual(vtk["id"][i], (float(b.id),))
            self.assertEqual(vtk["Points"][i], b.r)
            self.assertEqual(vtk["orientation"][i], b.q)
            self.assertEqual(vtk["velocity"][i], b.v)
            # grain-convert writes omega in I: R(q) times the file's body-frame omega.
            for a, e in zip(vtk["angular_velocity"][i], rotate(b.q, b.w)):
                self.assertAlmostEqual(a, e, delta=1e-12)

    def test_truncated_copy_agrees_with_grain_convert(self):
        with open(self.sim, "rb") as f:
            data = f.read()
        per_state = 8 + self.BEADS * 112
        cut = self.write_bytes("cut.sim", data[:28 + 2 * per_state + 100])
        with SimFile(cut) as f:
            self.assertEqual(len(f), 2)
            self.assertEqual(f.trailing_bytes, 100)
            self.assertEqual(f.read_state(1), simfile.read_states(self.sim, [1])[0])
            warning = f.truncation_warning()
        # grain-convert sim copies the complete states and prints grain's truncation warning.
        r = subprocess.run([program("grain-convert"), "sim", cut, "-q", "-o", self.path("copy.sim")],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"warning: {warning}", r.stderr)
        self.assertEqual(simfile.read_states(self.path("copy.sim")), simfile.read_states(cut))


class Programs(TempDirTest):
    """grainpy.programs.find: order of the places, and absolute results."""

    def setUp(self):
        super().setUp()
        self.saved = {v: os.environ.pop(v, None) for v, _ in programs.PROGRAMS.values()}
        self.saved_path = os.environ["PATH"]
        self.cwd = os.getcwd()
        # The search runs in a temporary source tree (tmp/tools, tmp/bin, tmp/build/<preset>),
        # so the executables of this tree's builds are not found.
        for name, value in (("SOURCE_ROOT", self.tmp), ("TOOLS_DIR", os.path.join(self.tmp, "tools"))):
            patcher = mock.patch.object(programs, name, value)
            patcher.start()
            self.addCleanup(patcher.stop)
        os.makedirs(os.path.join(self.tmp, "tools"))

    def tearDown(self):
        os.chdir(self.cwd)
        os.environ["PATH"] = self.saved_path
        for v, value in self.saved.items():
            if value is not None:
                os.environ[v] = value
        super().tearDown()

    def fake(self, folder, name):
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, name)
        with open(path, "w") as f:
            f.write("#!/bin/sh\n")
        os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
        return path

    def test_relative_paths_are_made_absolute(self):
        sim = self.fake(os.path.join(self.tmp, "build", "apps"), "grain-sim")
        os.chdir(self.tmp)
        os.environ["GRAIN_SIM"] = os.path.join("build", "apps", "grain-sim")
        self.assertEqual(programs.find("grain-sim"), sim)
        self.assertEqual(programs.find("grain-sim", os.path.join(".", "build", "apps", "grain-sim")), sim)
        # Once resolved, the path stays valid in another folder.
        os.chdir("/")
        self.assertTrue(os.path.isfile(programs.find("grain-sim", sim)))

    def test_option_before_environment_before_search(self):
        given = self.fake(os.path.join(self.tmp, "a"), "grain-convert")
        env = self.fake(os.path.join(self.tmp, "b"), "grain-convert")
        os.environ["GRAIN_CONVERT"] = env
        self.assertEqual(programs.find("grain-convert", given), given)
        self.assertEqual(programs.find("grain-convert"), env)

    def test_bare_name_goes_through_path(self):
        on_path = self.fake(os.path.join(self.tmp, "bin"), "grain-sim-mpi")
        os.environ["PATH"] = os.path.join(self.tmp, "bin") + os.pathsep + self.saved_path
        os.environ["GRAIN_SIM_MPI"] = "grain-sim-mpi"
        self.assertEqual(programs.find("grain-sim-mpi"), on_path)

    def test_build_tree_then_path_then_bare_name_or_error(self):
        os.environ["PATH"] = os.path.join(self.tmp, "empty")
        self.assertEqual(programs.find("grain-sim-mpi"), "grain-sim-mpi")
        with self.assertRaises(programs.ProgramNotFound) as e:
            programs.find("grain-sim-mpi", required=True)
        self.assertIn("grain-sim-mpi not found", str(e.exception))
        self.assertIn("set GRAIN_SIM_MPI", str(e.exception))
        on_path = self.fake(os.path.join(self.tmp, "empty"), "grain-sim-mpi")
        self.assertEqual(programs.find("grain-sim-mpi"), on_path)
        # A build tree comes before PATH, release before minimal, the scripts' folder first.
        minimal = self.fake(os.path.join(self.tmp, "build", "minimal", "apps", "grain_sim_mpi"), "grain-sim-mpi")
        self.assertEqual(programs.find("grain-sim-mpi"), minimal)
        release = self.fake(os.path.join(self.tmp, "build", "release", "apps", "grain_sim_mpi"), "grain-sim-mpi")
        self.assertEqual(programs.find("grain-sim-mpi"), release)
        installed = self.fake(os.path.join(self.tmp, "bin"), "grain-sim-mpi")
        self.assertEqual(programs.find("grain-sim-mpi"), installed)
        beside = self.fake(os.path.join(self.tmp, "tools"), "grain-sim-mpi")
        self.assertEqual(programs.find("grain-sim-mpi"), beside)

    def test_build_tree_of_the_source(self):
        self.assertEqual(os.path.normpath(PROGRAMS_SOURCE_ROOT), ROOT)
        self.assertEqual(os.path.normpath(PROGRAMS_TOOLS_DIR), os.path.join(ROOT, "tools"))
        expected = [os.path.join(self.tmp, "build", p, "apps", "grain_sim", "grain-sim") for p in programs.PRESETS]
        self.assertEqual([os.path.normpath(c) for c in programs.candidates("grain-sim")][2:], expected)


if __name__ == "__main__":
    unittest.main(verbosity=2)
