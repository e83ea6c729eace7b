// SPDX-License-Identifier: MIT
// Fixture of tools/test_check_layering.py: mpi may include MPI and Zoltan, not io or HDF5.
#include <zoltan.h>

#include <hdf5.h>
#include <mpi.h>

#include <grain/core/body.hpp>
#include <grain/io/sim_file.hpp>
