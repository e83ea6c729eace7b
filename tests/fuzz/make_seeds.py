#!/usr/bin/python3
"""Seed corpora of the fuzz harnesses (tools/fuzz.sh): make_seeds.py SOURCE_DIR OUT_DIR [SEEDER]

Writes OUT_DIR/<harness>/ from the repository's files:
  scene    the scenes of scenes/ and tests/data (plain, and with --set override lines)
  sim      small .sim files of every additional-bytes type (docs/sim-format.md), and any .sim
           files of tests/data
  siconos  the Siconos .dat problems of tests/data/fclib
  fclib    the FCLIB HDF5 problems of tests/data/fclib in fuzz_fclib's input format (SEEDER is
           the fclib_fuzz_seed program)
  fclib_raw the FCLIB HDF5 files themselves
and the regression inputs of tests/data/fuzz/<harness>/ (for both FCLIB harnesses the HDF5
files of tests/data/fuzz/fclib/). Also writes OUT_DIR/scene.dict, a
libFuzzer dictionary of the scene schema's element and attribute names.
"""
import pathlib
import re
import shutil
import struct
import subprocess
import sys

src = pathlib.Path(sys.argv[1])
out = pathlib.Path(sys.argv[2])
seeder = sys.argv[3] if len(sys.argv) > 3 else None


def fresh(name):
    d = out / name
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    return d


def copy_regressions(name, dest):
    for f in sorted((src / "tests/data/fuzz" / name).glob("*")):
        shutil.copy(f, dest / ("regression-" + f.name))


# Scenes, plain and with overrides.
d = fresh("scene")
scenes = sorted(src.glob("scenes/*.xml")) + sorted(src.glob("tests/data/scenes/*.xml")) + \
    sorted(src.glob("tests/data/grsf-scenes/*.xml"))
overrides = [
    "SceneSettings/TimeStepperSettings/@endTime=0.5",
    "SceneSettings/TimeStepperSettings/@deltaT=0.002",
    'SceneObjects/RigidBodies[@name="beads"]/@instances=10',
    'SceneObjects/RigidBodies[1]/@instances=3',
    "SceneSettings/InclusionSolverSettings/@method=JORProx",
    'SceneSettings/ContactParameterMap/ContactParameter[@materialId1="0" and @materialId2="0"]/@mu=0.9',
]
for s in scenes:
    text = s.read_bytes()
    (d / (s.parent.name + "-" + s.name)).write_bytes(text)
    (d / (s.parent.name + "-set-" + s.name)).write_bytes(
        ("\n".join(overrides) + "\n@@\n").encode() + text)
copy_regressions("scene", d)
names = set(re.findall(r'name="([A-Za-z]+)"', (src / "schemas/scene.xsd").read_text()))
with open(out / "scene.dict", "w") as f:
    for n in sorted(names):
        f.write('"%s"\n"<%s "\n"%s=\\""\n' % (n, n, n))
    for t in ["@@\\x0a", "/@", "[@", "]", "=", "\\x22", "<", "/>", ">", "</", "${", "}",
              "true", "false", "-1", "1e308", "nan", "inf", "4294967295", "18446744073709551616"]:
        f.write('"%s"\n' % t)

# .sim files.
d = fresh("sim")
extra = {0: b"", 1: struct.pack("<I", 1), 2: struct.pack("<II", 1, 2),
         3: struct.pack("<IId", 1, 2, 0.5), 4: struct.pack("<Id", 1, 0.5),
         5: struct.pack("<IIdI", 1, 2, 0.5, 7)}
for typ, add in extra.items():
    for nbodies, nstates in [(2, 3), (1, 1), (3, 2)]:
        b = bytearray(b"MBSF" + struct.pack("<6I", 2, nbodies, 7, 6, typ, len(add)))
        for s in range(nstates):
            b += struct.pack("<d", 0.01 * s)
            for k in range(nbodies):
                b += struct.pack("<Q", (1 << 32) | k)
                b += struct.pack("<3d", k, 0.1 * s, 1.0)
                b += struct.pack("<4d", 0.0, 0.0, 0.0, 1.0)
                b += struct.pack("<3d", 0.0, 0.0, -0.1 * s)
                b += struct.pack("<3d", 0.0, 0.0, 0.0)
                b += add
        (d / ("type%d-%db-%ds.sim" % (typ, nbodies, nstates))).write_bytes(bytes(b))
    # A partial last state.
    (d / ("type%d-partial.sim" % typ)).write_bytes(bytes(b[:-5]))
for f in sorted(src.glob("tests/data/**/*.sim")):
    shutil.copy(f, d / f.name)
copy_regressions("sim", d)

# Siconos text problems.
d = fresh("siconos")
for f in sorted(src.glob("tests/data/fclib/*.dat")):
    shutil.copy(f, d / f.name)
copy_regressions("siconos", d)

# FCLIB HDF5 problems: raw, and in fuzz_fclib's format.
# (The regression files of both FCLIB harnesses are HDF5 files, in tests/data/fuzz/fclib.)
hdf5 = sorted(src.glob("tests/data/fclib/*.hdf5")) + sorted(src.glob("tests/data/fuzz/fclib/*.hdf5"))
d = fresh("fclib_raw")
for f in hdf5:
    shutil.copy(f, d / f.name)
d = fresh("fclib")
if seeder:
    for f in hdf5:
        subprocess.run([seeder, str(f), str(d / (f.stem + ".fz"))], check=True)
