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

std::string mpiErrorText(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, static_cast<std::size_t>(length));
}

}  // namespace grain::app
