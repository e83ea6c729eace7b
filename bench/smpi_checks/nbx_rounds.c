// SPDX-License-Identifier: MIT
// 50 rounds of the NBX sparse exchange (synchronous sends to 1-3 random processes, probes on any
// source, then a non-blocking barrier), as grain's SparseExchange makes them. MODE (argument):
// "ibarrier" closes each round with MPI_Ibarrier, "iallreduce" with an MPI_Iallreduce of one
// integer, "dissemination" with a dissemination barrier of point-to-point messages (in round j
// of ceil(log2 P), a message to rank + 2^j and one from rank - 2^j, modulo P), as grain's
// SparseExchange closes it. Process 0 prints the number of integers received in all (the same
// for every correct run of a process count) and the simulated time of the 50 rounds; a run that
// hangs prints nothing.
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* mode = argc > 1 ? argv[1] : "ibarrier";
  const int allreduce = strcmp(mode, "iallreduce") == 0;
  const int dissemination = strcmp(mode, "dissemination") == 0;
  int levels = 0;
  while ((1 << levels) < size) {
    ++levels;
  }
  const double start = MPI_Wtime();
  unsigned seed = 12345u + 777u * (unsigned)rank;
  long received = 0;
  for (int round = 0; round < 50; ++round) {
    const int tag = 10 + round % 2;
    const int count = 1 + rand_r(&seed) % 3;
    int to[3];
    int data[3][64];
    MPI_Request sends[3];
    for (int k = 0; k < count; ++k) {
      to[k] = (rank + 1 + rand_r(&seed) % (size - 1)) % size;
      int repeated = 0;
      for (int j = 0; j < k; ++j) {
        repeated |= to[j] == to[k];
      }
      sends[k] = MPI_REQUEST_NULL;
      if (!repeated) {
        for (int i = 0; i < 64; ++i) {
          data[k][i] = rank;
        }
        MPI_Issend(data[k], 1 + rand_r(&seed) % 64, MPI_INT, to[k], tag, MPI_COMM_WORLD, &sends[k]);
      }
    }
    MPI_Request closing = MPI_REQUEST_NULL;
    MPI_Request level_sends[32];
    char token = 0;
    int level = 0;
    int entered = 0;
    int one = 1;
    int sum = 0;
    for (;;) {
      int arrived = 0;
      MPI_Status status;
      MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &arrived, &status);
      if (arrived) {
        int n = 0;
        int in[64];
        MPI_Get_count(&status, MPI_INT, &n);
        MPI_Recv(in, n, MPI_INT, status.MPI_SOURCE, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        received += n;
        continue;
      }
      int done = 0;
      if (!entered) {
        MPI_Testall(count, sends, &done, MPI_STATUSES_IGNORE);
        if (done) {
          if (dissemination) {
            if (levels == 0) {
              break;
            }
            MPI_Isend(&token, 0, MPI_BYTE, (rank + 1) % size, 20 + round % 2, MPI_COMM_WORLD,
                      &level_sends[0]);
            MPI_Irecv(&token, 0, MPI_BYTE, (rank - 1 + size) % size, 20 + round % 2,
                      MPI_COMM_WORLD, &closing);
          } else if (allreduce) {
            MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &closing);
          } else {
            MPI_Ibarrier(MPI_COMM_WORLD, &closing);
          }
          entered = 1;
        }
      } else {
        MPI_Test(&closing, &done, MPI_STATUS_IGNORE);
        if (done && dissemination && ++level < levels) {
          const int step = 1 << level;
          MPI_Isend(&token, 0, MPI_BYTE, (rank + step) % size, 20 + round % 2, MPI_COMM_WORLD,
                    &level_sends[level]);
          MPI_Irecv(&token, 0, MPI_BYTE, ((rank - step) % size + size) % size, 20 + round % 2,
                    MPI_COMM_WORLD, &closing);
        } else if (done) {
          if (dissemination) {
            MPI_Waitall(levels, level_sends, MPI_STATUSES_IGNORE);
          }
          break;
        }
      }
    }
  }
  const double seconds = MPI_Wtime() - start;
  long all = 0;
  MPI_Reduce(&received, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("nbx %s processes %d simulated %.6f s received %ld\n", mode, size, seconds, all);
  }
  MPI_Finalize();
  return 0;
}
