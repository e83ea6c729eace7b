// SPDX-License-Identifier: MIT
#pragma once

#include <string>

#include <mpi.h>

namespace grain::app {

/// The first process's `text` on every process of `comm`. Collective.
std::string broadcastText(MPI_Comm comm, std::string text);

/// MPI's description of the error code `code`.
std::string mpiErrorText(int code);

}  // namespace grain::app
