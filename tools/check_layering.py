#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Checks grain's layers: every C++ file of a library or program includes only headers of the
grain libraries and third-party packages its layer may use (the table LAYERS below, the one
statement of grain's dependency graph; docs/architecture.md#layers).

usage: tools/check_layering.py [--root DIR] [--links FILE] [--docs]

--root   the source tree to check (default: the repository holding this script); the test of the
         checker runs it on the fixture tree tests/data/layering.
--links  the link graph of the build, one line per target:
         NAME<TAB>KIND<TAB>LINK_LIBRARIES<TAB>INTERFACE_LINK_LIBRARIES (';'-separated lists),
         written by tests/CMakeLists.txt from the targets' target_link_libraries. With it the
         table is also checked against the build: every executable or library target the build
         defines has a row, and the grain libraries a row may include are the ones its target
         links (directly or through PUBLIC dependencies), no more and no fewer ('?': optional).
--docs   also check that the table of targets in docs/architecture.md states the same layers.

Each finding is one line "FILE:LINE: message" (or "table: message"); the exit status is 1 when
there is one, 0 when the tree keeps its layers, 2 on bad usage.

Includes are read from lines starting with '#include' (block comments removed, conditional
branches all counted). A quoted include is resolved as the compiler would (next to the file, then
under include/ and src/) and belongs to the row whose folder holds it; <grain/X/...> belongs to
row X; other angle includes are third-party when they match a family of THIRD_PARTY, else standard
or system headers, which every row may use.
"""
import argparse
import fnmatch
import os
import re
import sys

# The layers: row name -> (CMake target, folders, grain rows it may include, third-party families
# it may include). Rows with a target are checked against that target's links; a row without one
# (apps/common, compiled into both simulators) against every target named in its 'in' list. A use
# ending in '?' is linked only in some configurations (grain-sim links grain_fclib with HDF5).
LAYERS = {
    "core": {
        "target": "grain_core",
        "dirs": ["include/grain/core", "src/core"],
        "uses": [],
        "third": ["eigen"],
    },
    "io": {
        "target": "grain_io",
        "dirs": ["include/grain/io", "src/io"],
        "uses": ["core"],
        "third": ["eigen", "pugixml", "assimp", "boost"],
    },
    "app": {
        "target": "grain_app",
        "dirs": ["include/grain/app", "src/app"],
        "uses": ["core", "io"],
        "third": ["eigen"],
    },
    "mpi": {
        "target": "grain_mpi",
        "dirs": ["include/grain/mpi", "src/mpi"],
        "uses": ["core"],
        "third": ["eigen", "mpi", "zoltan", "nanoflann"],
    },
    "fclib": {
        "target": "grain_fclib",
        "dirs": ["include/grain/fclib", "src/fclib"],
        "uses": ["core"],
        "third": ["eigen", "hdf5"],
    },
    "convert": {
        "target": "grain_convert",
        "dirs": ["include/grain/convert", "src/convert"],
        "uses": ["core", "io"],
        "third": ["eigen", "hdf5", "png"],
    },
    # The command line and summary both simulators compile (apps/common).
    "sim_common": {
        "in": ["grain-sim", "grain-sim-mpi"],
        "dirs": ["apps/common"],
        "uses": ["core", "io", "app", "fclib?"],
        "third": ["eigen", "boost"],
    },
    "grain-sim": {
        "target": "grain-sim",
        "dirs": ["apps/grain_sim"],
        "uses": ["core", "io", "app", "fclib?", "sim_common"],
        "third": ["eigen", "boost"],
    },
    "grain-sim-mpi": {
        "target": "grain-sim-mpi",
        "dirs": ["apps/grain_sim_mpi"],
        "uses": ["core", "io", "app", "mpi", "fclib?", "sim_common"],
        "third": ["eigen", "boost", "mpi"],
    },
    "grain-convert": {
        "target": "grain-convert",
        "dirs": ["apps/grain_convert"],
        "uses": ["core", "io", "app", "convert"],
        "third": ["eigen", "boost"],
    },
    "grain-fclib": {
        "target": "grain-fclib",
        "dirs": ["apps/grain_fclib"],
        "uses": ["core", "io", "fclib"],
        "third": ["eigen", "boost"],
    },
    "grain-scene-schema": {
        "target": "grain-scene-schema",
        "dirs": ["apps/grain_scene_schema"],
        "uses": ["core", "io"],
        "third": ["eigen"],
    },
}

# Third-party header families: name -> patterns of the include path (fnmatch, '/' included).
THIRD_PARTY = {
    "eigen": ["Eigen/*", "unsupported/Eigen/*"],
    "pugixml": ["pugixml.hpp", "pugiconfig.hpp"],
    "assimp": ["assimp/*"],
    "boost": ["boost/*"],
    "mpi": ["mpi.h", "mpio.h", "mpi-ext.h", "mpi_portable_platform.h"],
    "zoltan": ["zoltan*.h", "zz_*.h", "lbi_const.h"],
    "nanoflann": ["nanoflann.hpp"],
    "hdf5": ["hdf5.h", "hdf5_hl.h", "H5*.h"],
    "png": ["png.h", "pngconf.h"],
    "gtest": ["gtest/*", "gmock/*"],
}

# How docs/architecture.md names the families.
DISPLAY = {
    "eigen": "Eigen",
    "pugixml": "pugixml",
    "assimp": "Assimp",
    "boost": "Boost",
    "mpi": "MPI",
    "zoltan": "Zoltan",
    "nanoflann": "nanoflann",
    "hdf5": "HDF5",
    "png": "libpng",
    "gtest": "GoogleTest",
}

SOURCE_SUFFIXES = (".cpp", ".hpp", ".h", ".cc", ".hh", ".ipp", ".inl")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
GRAIN_HEADER = re.compile(r"^grain/([A-Za-z0-9_]+)/")


def strip_block_comments(text):
    """The text with /* ... */ replaced by as many newlines as it held (line numbers kept)."""
    return re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)


def third_party_family(path):
    for family, patterns in THIRD_PARTY.items():
        if any(fnmatch.fnmatchcase(path, p) for p in patterns):
            return family
    return None


class Tree:
    def __init__(self, root):
        self.root = root
        # folder (relative, '/'-separated) -> row, longest folders first
        self.folders = sorted(
            ((d, name) for name, row in LAYERS.items() for d in row["dirs"]),
            key=lambda item: -len(item[0]),
        )

    def row_of(self, relative):
        for folder, name in self.folders:
            if relative == folder or relative.startswith(folder + "/"):
                return name
        return None

    def files(self):
        """(relative path, row) of every C++ file under a folder of the table, sorted."""
        out = []
        for folder, name in self.folders:
            top = os.path.join(self.root, folder)
            for base, _, names in os.walk(top):
                for n in names:
                    if n.endswith(SOURCE_SUFFIXES):
                        rel = os.path.relpath(os.path.join(base, n), self.root).replace(os.sep, "/")
                        if self.row_of(rel) == name:
                            out.append((rel, name))
        return sorted(out)

    def resolve_quoted(self, relative, path):
        """The repository-relative file a quoted include names, or None."""
        here = os.path.dirname(relative)
        for base in (here, "include", "src"):
            candidate = os.path.normpath(os.path.join(base, path)).replace(os.sep, "/")
            if os.path.isfile(os.path.join(self.root, candidate)):
                return candidate
        return None


def allowed_rows(name):
    """The rows `name` may include: itself and its 'uses' (the '?' dropped)."""
    return {name} | {u.rstrip("?") for u in LAYERS[name]["uses"]}


def check_includes(tree):
    findings = []
    for relative, name in tree.files():
        rows = allowed_rows(name)
        families = set(LAYERS[name]["third"])
        with open(os.path.join(tree.root, relative), encoding="utf-8", errors="replace") as f:
            text = strip_block_comments(f.read())
        for number, line in enumerate(text.split("\n"), start=1):
            m = INCLUDE.match(line)
            if not m:
                continue
            quote, path = m.groups()
            shown = f"{quote}{path}{'>' if quote == '<' else quote}"
            target_row = None
            if quote == '"':
                resolved = tree.resolve_quoted(relative, path)
                if resolved is not None:
                    target_row = tree.row_of(resolved)
                    if target_row is None:
                        findings.append(
                            f"{relative}:{number}: {name} includes {shown} ({resolved}), which "
                            "belongs to no layer of tools/check_layering.py"
                        )
                        continue
            if target_row is None:
                g = GRAIN_HEADER.match(path)
                if g:
                    target_row = g.group(1)
                    if target_row not in LAYERS:
                        findings.append(
                            f"{relative}:{number}: {name} includes {shown}: "
                            f"grain/{target_row} is no layer of tools/check_layering.py"
                        )
                        continue
            if target_row is not None:
                if target_row not in rows:
                    findings.append(
                        f"{relative}:{number}: {name} must not include {shown}: layer "
                        f"{target_row} is not among those {name} may use "
                        f"({', '.join(sorted(rows))})"
                    )
                continue
            if quote == '"':
                findings.append(
                    f"{relative}:{number}: {name} includes {shown}, which is found neither next to "
                    "the file nor under include/ or src/"
                )
                continue
            family = third_party_family(path)
            if family is not None and family not in families:
                allowed = ", ".join(sorted(families)) or "none"
                findings.append(
                    f"{relative}:{number}: {name} must not include {shown}: {family} is not "
                    f"among the third-party packages {name} may use ({allowed})"
                )
    return findings


def read_links(path):
    """target -> (kind, [linked], [linked for users]) from the file tests/CMakeLists.txt writes."""
    links = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            line = line.rstrip("\n")
            if not line:
                continue
            parts = line.split("\t")
            if len(parts) != 4:
                print(
                    f"{path}:{number}: expected NAME<TAB>KIND<TAB>LINK_LIBRARIES<TAB>"
                    "INTERFACE_LINK_LIBRARIES",
                    file=sys.stderr,
                )
                sys.exit(2)
            split = [[x for x in p.split(";") if x] for p in parts[2:]]
            links[parts[0]] = (parts[1], split[0], split[1])
    return links


def linked_grain_rows(target, links, by_target):
    """The rows whose targets `target` links itself or receives through their PUBLIC links
    ($<LINK_ONLY:...> entries, PRIVATE links of static libraries, give no headers)."""
    seen = set()
    todo = list(links[target][1])
    while todo:
        item = todo.pop()
        if item in by_target and by_target[item] not in seen:
            seen.add(by_target[item])
            todo.extend(links.get(item, ("", [], []))[2])
    return seen


def check_table(links):
    findings = []
    by_target = {row["target"]: name for name, row in LAYERS.items() if "target" in row}
    with_target = set(by_target.values())
    for target, (kind, _, _) in sorted(links.items()):
        if target not in by_target:
            findings.append(
                f"table: the build defines {kind} {target}, which has no row in "
                "tools/check_layering.py LAYERS (say what it may include)"
            )
    for name, row in LAYERS.items():
        if "target" in row:
            targets = [row["target"]]
        else:
            targets = row["in"]
        present = [t for t in targets if t in links]
        if not present:
            continue  # not built in this configuration (no MPI, no HDF5)
        linked = set.intersection(*(linked_grain_rows(t, links, by_target) for t in present))
        uses = {u.rstrip("?") for u in row["uses"] if u.rstrip("?") in with_target}
        required = {u for u in row["uses"] if not u.endswith("?") and u in with_target}
        label = row.get("target", name)
        for extra in sorted(linked - uses - {name}):
            findings.append(
                f"table: {label} links {LAYERS[extra]['target']}, but the row {name} of "
                "tools/check_layering.py does not allow it: change the table with the build"
            )
        for missing in sorted(required - linked):
            findings.append(
                f"table: the row {name} allows {missing}, but {label} does not link "
                f"{LAYERS[missing]['target']}: remove it from the table or link it"
            )
    return findings


def check_docs(path, relative):
    """docs/architecture.md's table of targets (header '| target | folder | ...') states, per row
    of LAYERS (found by its folders), the same grain rows and third-party families."""
    findings = []
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    try:
        start = next(i for i, x in enumerate(lines) if x.startswith("| target | folder |"))
    except StopIteration:
        return [f"{relative}: no table with the header '| target | folder | ...'"]
    header = [c.strip() for c in lines[start].strip("|").split("|")]
    grain_col = header.index("may include (grain)")
    third_col = header.index("may include (third-party)")
    by_dirs = {frozenset(row["dirs"]): name for name, row in LAYERS.items()}
    shown = {
        name: (name if "target" in row else row["dirs"][0]) for name, row in LAYERS.items()
    }
    seen = set()
    for number in range(start + 2, len(lines)):
        line = lines[number]
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        dirs = frozenset(re.findall(r"`([^`]+)`", cells[1]))
        name = by_dirs.get(dirs)
        where = f"{relative}:{number + 1}"
        if name is None:
            findings.append(f"{where}: the folders {cells[1]} are no row of LAYERS")
            continue
        seen.add(name)

        def listed(cell):
            return set() if cell in ("—", "-", "") else {x.strip() for x in cell.split(",")}

        row = LAYERS[name]
        grain = {shown[u.rstrip("?")] for u in row["uses"]}
        third = {DISPLAY[t] for t in row["third"]}
        if listed(cells[grain_col]) != grain:
            findings.append(
                f"{where}: {shown[name]} may include (grain) '{cells[grain_col]}', but LAYERS "
                f"says '{', '.join(sorted(grain)) or '—'}'"
            )
        if listed(cells[third_col]) != third:
            findings.append(
                f"{where}: {shown[name]} may include (third-party) '{cells[third_col]}', but "
                f"LAYERS says '{', '.join(sorted(third)) or '—'}'"
            )
    for name in LAYERS:
        if name not in seen:
            findings.append(f"{relative}: the table of targets has no row for {shown[name]}")
    return findings


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    )
    parser.add_argument("--links")
    parser.add_argument("--docs", action="store_true")
    args = parser.parse_args()
    tree = Tree(args.root)
    files = tree.files()
    if not files:
        print(f"{args.root}: no C++ files under the folders of the layer table", file=sys.stderr)
        return 2
    findings = check_includes(tree)
    if args.links:
        findings += check_table(read_links(args.links))
    if args.docs:
        docs = "docs/architecture.md"
        findings += check_docs(os.path.join(args.root, docs), docs)
    for f in findings:
        print(f)
    if findings:
        print(
            f"check_layering: {len(findings)} finding(s) in {len(files)} files; the layers are "
            "the table LAYERS of tools/check_layering.py (docs/architecture.md#layers)"
        )
        return 1
    print(f"check_layering: {len(files)} files keep their layers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
