// SPDX-License-Identifier: MIT
#pragma once

#include <string>

#include <mpi.h>

namespace grain::app {

/// The `root` process's `text` (default: the first process's) on every process of `comm`.
/// Collective.
std::string broadcastText(MPI_Comm comm, std::string text, int root = 0);

/// The message of the lowest process whose `local` is not empty, on every process ("" if every
/// `local` is empty); `from` (if given) gets that process (the process count if none). Collective:
/// lets an error found by some processes stop all of them at the same point, before the next
/// collective call.
std::string firstProblem(MPI_Comm comm, const std::string& local, int* from = nullptr);

/// MPI's description of the error code `code`.
std::string mpiErrorText(int code);

}  // namespace grain::app
