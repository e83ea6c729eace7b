"""Where grain's executables are: options, environment, install folder, build tree, PATH."""

import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_ROOT = os.path.dirname(os.path.dirname(HERE))  # tools/grain_study -> repository root

# (key, executable name, environment variable, folder in a build tree)
TOOLS = (
    ("grain_sim", "grain-sim", "GRAIN_SIM", "apps/grain_sim"),
    ("grain_convert", "grain-convert", "GRAIN_CONVERT", "apps/grain_convert"),
    ("grain_sim_mpi", "grain-sim-mpi", "GRAIN_SIM_MPI", "apps/grain_sim_mpi"),
)


def _candidates(name, build_folder):
    # Installed beside grain-study (bin/grain-study, bin/grain-sim).
    yield os.path.join(os.path.dirname(HERE), name)
    yield os.path.join(os.path.dirname(HERE), "..", "bin", name)
    # A build tree of this source tree.
    for preset in ("release", "minimal", "debug-asan"):
        yield os.path.join(SOURCE_ROOT, "build", preset, build_folder, name)


def find(overrides=None):
    """{key: absolute path} of grain-sim, grain-convert and grain-sim-mpi.

    Order: `overrides` (command-line options), environment variable (GRAIN_SIM, ...), the
    folder grain-study is installed in, build/<preset>/apps/... of this source tree, PATH.
    A tool that is found nowhere keeps its bare name (grain-sim-mpi before it exists).
    """
    overrides = overrides or {}
    found = {}
    for key, name, env, build_folder in TOOLS:
        path = overrides.get(key) or os.environ.get(env)
        if not path:
            for c in _candidates(name, build_folder):
                if os.path.isfile(c) and os.access(c, os.X_OK):
                    path = c
                    break
        if not path:
            path = shutil.which(name) or name
        if os.sep in path:
            path = os.path.abspath(path)
        found[key] = path
    return found
