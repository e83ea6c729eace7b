# SPDX-License-Identifier: MIT
"""grainpy: the Python side of grain's files and programs (standard library only).

    grainpy.simfile    reads and writes `.sim` state files (docs/sim-format.md)
    grainpy.programs   finds grain-sim, grain-convert and grain-sim-mpi

Used by tools/grain-study and the scripts of validation/. Scripts import it without
installing anything by putting the folder that holds it (tools/) on sys.path, found from their
own file, e.g. in validation/vlib.py:

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
    from grainpy import programs, simfile
"""
