// SPDX-License-Identifier: MIT
// Fixture of tools/test_check_layering.py: the MPI simulator may include every layer it links.
#include <mpi.h>

#include <grain/io/scene.hpp>
