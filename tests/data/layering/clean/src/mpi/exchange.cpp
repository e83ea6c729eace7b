// SPDX-License-Identifier: MIT
// Fixture of tools/test_check_layering.py: mpi may include MPI and Zoltan.
#include <zoltan.h>

#include <mpi.h>

#include <grain/core/body.hpp>
