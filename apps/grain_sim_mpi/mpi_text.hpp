// SPDX-License-Identifier: MIT
#pragma once

#include <string>

#include <mpi.h>

namespace grain::app {

/// The `root` process's `text` (default: the first process's) on every process of `comm`.
/// Collective.
std::string broadcastText(MPI_Comm comm, std::string text, int root = 0);

/// MPI's description of the error code `code`.
std::string mpiErrorText(int code);

}  // namespace grain::app
