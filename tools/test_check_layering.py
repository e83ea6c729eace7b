#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Tests of tools/check_layering.py on the fixture trees of tests/data/layering: every forbidden
include of `forbidden/` is reported with its file and line (and nothing in comments), `clean/`
passes, a link graph or a table in docs/architecture.md that contradicts the table fails, and the
table keeps grain's rules (the core uses no other layer and no MPI, XML, HDF5, Zoltan or Assimp
headers; mpi does not use io).

usage: tools/test_check_layering.py [-v]   (ctest: layering.CheckerFindsForbiddenIncludes)
"""
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKER = os.path.join(HERE, "check_layering.py")
FIXTURES = os.path.join(os.path.dirname(HERE), "tests", "data", "layering")

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)
import check_layering  # noqa: E402


def run(*args):
    p = subprocess.run(
        ["/usr/bin/python3", CHECKER, *args], capture_output=True, text=True, check=False
    )
    return p.returncode, p.stdout.splitlines(), p.stderr


class ForbiddenIncludes(unittest.TestCase):
    def test_every_forbidden_include_is_reported_with_file_and_line(self):
        code, lines, err = run("--root", os.path.join(FIXTURES, "forbidden"))
        self.assertEqual(code, 1, err)
        self.assertEqual(
            lines[:-1],
            [
                "apps/common/options.cpp:5: sim_common must not include "
                "<grain/mpi/communicator.hpp>: layer mpi is not among those sim_common may use "
                "(app, core, fclib, io, sim_common)",
                "apps/common/options.cpp:6: sim_common includes <grain/render/picture.hpp>: "
                "grain/render is no layer of tools/check_layering.py",
                'apps/common/options.cpp:8: sim_common includes "missing.hpp", which is found '
                "neither next to the file nor under include/ or src/",
                "include/grain/core/body.hpp:6: core must not include <zoltan.h>: zoltan is not "
                "among the third-party packages core may use (eigen)",
                "include/grain/core/body.hpp:9: core must not include <assimp/scene.h>: assimp is "
                "not among the third-party packages core may use (eigen)",
                "include/grain/core/body.hpp:10: core must not include <hdf5.h>: hdf5 is not "
                "among the third-party packages core may use (eigen)",
                "include/grain/core/body.hpp:11: core must not include <mpi.h>: mpi is not among "
                "the third-party packages core may use (eigen)",
                "include/grain/core/body.hpp:12: core must not include <pugixml.hpp>: pugixml is "
                "not among the third-party packages core may use (eigen)",
                "include/grain/core/body.hpp:15: core must not include <grain/io/scene.hpp>: "
                "layer io is not among those core may use (core)",
                'src/core/solver.cpp:3: core must not include "../io/reader.hpp": layer io is not '
                "among those core may use (core)",
                'src/core/solver.cpp:5: core must not include "grain/app/progress.hpp": layer app '
                "is not among those core may use (core)",
                "src/io/reader.hpp:8: io must not include <grain/mpi/records.hpp>: layer mpi is "
                "not among those io may use (core, io)",
                "src/mpi/exchange.cpp:5: mpi must not include <hdf5.h>: hdf5 is not among the "
                "third-party packages mpi may use (eigen, mpi, nanoflann, zoltan)",
                "src/mpi/exchange.cpp:9: mpi must not include <grain/io/sim_file.hpp>: layer io "
                "is not among those mpi may use (core, mpi)",
            ],
        )
        self.assertTrue(lines[-1].startswith("check_layering: 14 finding(s) in 6 files"), lines[-1])

    def test_a_tree_within_its_layers_passes(self):
        code, lines, err = run("--root", os.path.join(FIXTURES, "clean"))
        self.assertEqual((code, lines), (0, ["check_layering: 6 files keep their layers"]), err)


class TableAgainstTheBuild(unittest.TestCase):
    def test_links_that_match_the_table_pass(self):
        code, lines, err = run(
            "--root",
            os.path.join(FIXTURES, "clean"),
            "--links",
            os.path.join(FIXTURES, "links_good.tsv"),
        )
        self.assertEqual(code, 0, "\n".join(lines) + err)

    def test_links_the_table_does_not_allow_fail(self):
        code, lines, err = run(
            "--root",
            os.path.join(FIXTURES, "clean"),
            "--links",
            os.path.join(FIXTURES, "links_bad.tsv"),
        )
        self.assertEqual(code, 1, err)
        self.assertEqual(
            lines[:-1],
            [
                "table: the build defines STATIC_LIBRARY grain_extra, which has no row in "
                "tools/check_layering.py LAYERS (say what it may include)",
                "table: grain_core links grain_io, but the row core of tools/check_layering.py "
                "does not allow it: change the table with the build",
                "table: the row app allows core, but grain_app does not link grain_core: remove "
                "it from the table or link it",
                "table: the row app allows io, but grain_app does not link grain_io: remove "
                "it from the table or link it",
                "table: grain_mpi links grain_io, but the row mpi of tools/check_layering.py "
                "does not allow it: change the table with the build",
                "table: the row grain-sim-mpi allows mpi, but grain-sim-mpi does not link "
                "grain_mpi: remove it from the table or link it",
            ],
        )


class TableInTheDocs(unittest.TestCase):
    def test_the_docs_table_must_say_what_the_layer_table_says(self):
        code, lines, err = run("--root", os.path.join(FIXTURES, "forbidden"), "--docs")
        self.assertEqual(code, 1, err)
        docs = [x for x in lines if x.startswith("docs/")]
        self.assertEqual(
            docs[:2],
            [
                "docs/architecture.md:6: mpi may include (grain) 'core, io', but LAYERS says "
                "'core'",
                "docs/architecture.md:7: the folders `src/render` are no row of LAYERS",
            ],
        )
        missing = sorted(x.rsplit(" ", 1)[1] for x in docs[2:])
        self.assertEqual(
            missing,
            sorted(
                ["io", "app", "fclib", "convert", "apps/common", "grain-sim", "grain-sim-mpi"]
                + ["grain-convert", "grain-fclib", "grain-scene-schema"]
            ),
        )


class GrainsRules(unittest.TestCase):
    """The rules of docs/architecture.md#layers, as the table states them."""

    def test_core_uses_no_other_layer_and_only_eigen(self):
        core = check_layering.LAYERS["core"]
        self.assertEqual(core["uses"], [])
        self.assertEqual(core["third"], ["eigen"])

    def test_mpi_does_not_use_io_and_app(self):
        uses = {u.rstrip("?") for u in check_layering.LAYERS["mpi"]["uses"]}
        self.assertNotIn("io", uses)
        self.assertNotIn("app", uses)

    def test_only_mpi_and_its_simulator_include_mpi_headers(self):
        rows = sorted(n for n, r in check_layering.LAYERS.items() if "mpi" in r["third"])
        self.assertEqual(rows, ["grain-sim-mpi", "mpi"])


if __name__ == "__main__":
    unittest.main()
