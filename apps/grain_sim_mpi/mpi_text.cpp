// SPDX-License-Identifier: MIT
#include "mpi_text.hpp"

namespace grain::app {

std::string broadcastText(MPI_Comm comm, std::string text, int root) {
  unsigned long long n = text.size();
  MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, root, comm);
  text.resize(n);
  MPI_Bcast(text.data(), static_cast<int>(n), MPI_CHAR, root, comm);
  return text;
}

std::string firstProblem(MPI_Comm comm, const std::string& local, int* from) {
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int speaker = local.empty() ? size : rank;
  MPI_Allreduce(MPI_IN_PLACE, &speaker, 1, MPI_INT, MPI_MIN, comm);
  if (from != nullptr) {
    *from = speaker;
  }
  return speaker == size ? std::string() : broadcastText(comm, local, speaker);
}

std::string mpiErrorText(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, static_cast<std::size_t>(length));
}

}  // namespace grain::app
