// SPDX-License-Identifier: MIT
// Fixture of tools/test_check_layering.py: the simulators' common code may not use mpi; a
// quoted include that names no file is reported.
#include <grain/app/progress.hpp>
#include <grain/mpi/communicator.hpp>
#include <grain/render/picture.hpp>

#include "missing.hpp"
