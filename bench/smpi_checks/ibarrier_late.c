// SPDX-License-Identifier: MIT
// Does MPI_Ibarrier wait for a late process? Process LATE (argument, default 3) enters 10 ms
// after the others (probing meanwhile); every process prints how long after the start it left.
// A correct barrier lets nobody leave before about 10 ms. Three rounds.
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int late = argc > 1 ? atoi(argv[1]) : 3;
  for (int round = 0; round < 3; ++round) {
    const double start = MPI_Wtime();
    if (rank == late) {
      while (MPI_Wtime() - start < 0.01) {
        int flag = 0;
        MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
      }
    }
    MPI_Request request;
    MPI_Ibarrier(MPI_COMM_WORLD, &request);
    int done = 0;
    while (!done) {
      MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    }
    printf("ibarrier round %d process %d left after %.4f s\n", round, rank, MPI_Wtime() - start);
  }
  MPI_Finalize();
  return 0;
}
