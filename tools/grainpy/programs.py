# SPDX-License-Identifier: MIT
"""Where grain's executables are.

find("grain-sim") looks in this order:
  1. the path given by the caller (a command-line option), if any;
  2. the environment variable (GRAIN_SIM, GRAIN_CONVERT, GRAIN_SIM_MPI);
  3. the folder of the scripts (tools/, where an install would put grain-study), and ../bin;
  4. build/release, build/minimal, build/debug-asan of this source tree;
  5. PATH.
A path with a '/' (given or from the environment) is made absolute against the current
folder, and a bare name is looked up on PATH, so the result stays valid when a script changes
folder or writes it into a job script.
"""

import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS_DIR = os.path.dirname(HERE)  # tools/grainpy -> tools
SOURCE_ROOT = os.path.dirname(TOOLS_DIR)
PRESETS = ("release", "minimal", "debug-asan")

# executable name -> (environment variable, folder in a build tree)
PROGRAMS = {
    "grain-sim": ("GRAIN_SIM", "apps/grain_sim"),
    "grain-convert": ("GRAIN_CONVERT", "apps/grain_convert"),
    "grain-sim-mpi": ("GRAIN_SIM_MPI", "apps/grain_sim_mpi"),
}


class ProgramNotFound(LookupError):
    pass


def resolve(path):
    """`path` made absolute: a relative path (with a '/') against the current folder, a bare
    name through PATH (unchanged if it is not there)."""
    if not path:
        return path
    if os.sep in path:
        return os.path.abspath(path)
    return shutil.which(path) or path


def candidates(name):
    """The places searched after the option and the environment variable, in order."""
    _, build_folder = PROGRAMS[name]
    yield os.path.join(TOOLS_DIR, name)
    yield os.path.join(TOOLS_DIR, "..", "bin", name)
    for preset in PRESETS:
        yield os.path.join(SOURCE_ROOT, "build", preset, build_folder, name)


def _executable(path):
    return os.path.isfile(path) and os.access(path, os.X_OK)


def find(name, given=None, required=False):
    """Absolute path of grain's program `name` (grain-sim, grain-convert, grain-sim-mpi).

    A program found nowhere is returned as its bare name, or raises ProgramNotFound (with a
    message saying how to fix it) if `required`.
    """
    env, _ = PROGRAMS[name]
    path = given or os.environ.get(env)
    if path:
        return resolve(path)
    for c in candidates(name):
        if _executable(c):
            return os.path.abspath(c)
    path = shutil.which(name)
    if path:
        return os.path.abspath(path)
    if required:
        raise ProgramNotFound(f"{name} not found: build grain (cmake --preset release && "
                              f"cmake --build --preset release) or set {env}")
    return name

