// SPDX-License-Identifier: MIT
// What a poll that finds nothing costs in a real MPI library (run with mpirun on real processes,
// not under SMPI): the constant that SMPI's smpi/iprobe and smpi/test stand for. Process 0 calls
// MPI_Iprobe(MPI_ANY_SOURCE) for a tag nobody sends, then MPI_Test on a receive nobody matches,
// `calls` times each (argument 1, default 10^6), and prints the mean time per call (MPI_Wtime):
//   poll iprobe T ns test T ns (C calls each, P processes)
// The other processes wait in a barrier meanwhile.
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const long calls = argc > 1 ? atol(argv[1]) : 1000000L;
  if (rank == 0) {
    int flag = 0;
    long found = 0;
    MPI_Status status;
    double t = MPI_Wtime();
    for (long k = 0; k < calls; ++k) {
      MPI_Iprobe(MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, &flag, &status);
      found += flag;
    }
    const double iprobe = (MPI_Wtime() - t) / (double)calls;
    int value = 0;
    MPI_Request request;
    MPI_Irecv(&value, 1, MPI_INT, MPI_ANY_SOURCE, 78, MPI_COMM_WORLD, &request);
    t = MPI_Wtime();
    for (long k = 0; k < calls; ++k) {
      MPI_Test(&request, &flag, &status);
      found += flag;
    }
    const double test = (MPI_Wtime() - t) / (double)calls;
    MPI_Cancel(&request);
    MPI_Wait(&request, &status);
    if (found != 0) {
      fprintf(stderr, "poll_cost: a poll found a message nobody sent\n");
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    printf("poll iprobe %.1f ns test %.1f ns (%ld calls each, %d processes)\n", iprobe * 1e9,
           test * 1e9, calls, size);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
