// SPDX-License-Identifier: MIT
// The cost of making communicators, as Zoltan's RCB makes them for a build: one MPI_Comm_dup,
// then the working communicator halved by MPI_Comm_split until one process is left, with one
// allreduce per level on the new communicator (what a level of the bisection does first). Done
// three times: the first round is the program's first use of communicators, the later ones are
// what every further build pays. Process 0 prints the times of each round (MPI_Wtime).
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int round = 1; round <= 3; ++round) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    const double dup = MPI_Wtime() - t;
    double split = 0.0;
    double reduce = 0.0;
    int n = size;
    int levels = 0;
    while (n > 1) {
      int r = 0;
      MPI_Comm_rank(comm, &r);
      double x = 1.0;
      double y = 0.0;
      t = MPI_Wtime();
      MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, comm);
      reduce += MPI_Wtime() - t;
      MPI_Comm half;
      t = MPI_Wtime();
      MPI_Comm_split(comm, r >= n / 2, r, &half);
      split += MPI_Wtime() - t;
      MPI_Comm_free(&comm);
      comm = half;
      MPI_Comm_size(comm, &n);
      ++levels;
    }
    MPI_Comm_free(&comm);
    if (rank == 0) {
      printf("communicators processes %d round %d  dup %.1f us  %d splits %.1f us  %d allreduces "
             "%.1f us\n",
             size, round, dup * 1e6, levels, split * 1e6, levels, reduce * 1e6);
    }
  }
  MPI_Finalize();
  return 0;
}
