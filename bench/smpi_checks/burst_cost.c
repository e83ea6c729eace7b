// SPDX-License-Identifier: MIT
// What the simulation charges for a fixed amount of computation when it is cut into bursts
// between MPI calls. SMPI times every burst of every simulated process on the one machine that
// runs them all, one after another: between two bursts of a process, the bursts of every other
// process run on the same core and caches. Each process here does the same work per step, a
// gather-update over its own `bytes` of data in a random order with a data-dependent branch
// (argument 1, bytes; argument 3, passes over the data per step), cut into `bursts` equal pieces
// (argument 2) with a neighbour exchange (8 bytes to each side of a ring) after each piece. Every
// process makes the same number of updates, on its own random data in its own order. Prints
//   burst processes P bursts K bytes B: compute per step mean M ms, max X ms (process R)
// where the compute is the sum over a step's bursts of the simulated time each took (MPI_Wtime
// around it), the mean over processes and steps 2-S (argument 4, default 8), and X the largest
// process mean, that of process R.
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t nextRandom(uint64_t* state) {
  *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
  return *state >> 33;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const long bytes = argc > 1 ? atol(argv[1]) : 3000000L;
  const long bursts = argc > 2 ? atol(argv[2]) : 1;
  const long passes = argc > 3 ? atol(argv[3]) : 5;
  const long steps = argc > 4 ? atol(argv[4]) : 8;
  if (bytes < 1024 || bursts < 1 || passes < 1 || steps < 2) {
    if (rank == 0) {
      fprintf(stderr, "usage: burst_cost BYTES BURSTS PASSES STEPS\n");
    }
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const long n = bytes / (long)(sizeof(double) + sizeof(uint32_t));
  double* x = malloc((size_t)n * sizeof(double));
  uint32_t* order = malloc((size_t)n * sizeof(uint32_t));
  if (x == NULL || order == NULL) {
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  // Each process its own values and order (the same count of updates): processes with the same
  // data would take the same branches, and the predictor trained by one burst would serve the
  // next process's.
  uint64_t seed = 12345 + 1000003ULL * (uint64_t)rank;
  for (long i = 0; i < n; ++i) {
    x[i] = (double)(nextRandom(&seed) % 1000) / 1000.0;
    order[i] = (uint32_t)i;
  }
  for (long i = n - 1; i > 0; --i) {
    const long j = (long)(nextRandom(&seed) % (uint64_t)(i + 1));
    const uint32_t t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  const long total = n * passes;  // updates per step
  const int left = (rank + size - 1) % size;
  const int right = (rank + 1) % size;
  double out = 0.0;
  double in[2];
  double sum = 0.0;  // compute of steps 2..S
  for (long s = 0; s < steps; ++s) {
    double compute = 0.0;
    for (long b = 0; b < bursts; ++b) {
      const long from = total * b / bursts;
      const long to = total * (b + 1) / bursts;
      const double start = MPI_Wtime();
      for (long k = from; k < to; ++k) {
        const uint32_t j = order[k % n];
        const double v = x[j];
        x[j] = v > 0.5 ? v - 0.25 : v + 0.3;
      }
      compute += MPI_Wtime() - start;
      out = x[order[0]];
      MPI_Request requests[4];
      MPI_Irecv(&in[0], 1, MPI_DOUBLE, left, 7, MPI_COMM_WORLD, &requests[0]);
      MPI_Irecv(&in[1], 1, MPI_DOUBLE, right, 7, MPI_COMM_WORLD, &requests[1]);
      MPI_Isend(&out, 1, MPI_DOUBLE, left, 7, MPI_COMM_WORLD, &requests[2]);
      MPI_Isend(&out, 1, MPI_DOUBLE, right, 7, MPI_COMM_WORLD, &requests[3]);
      MPI_Waitall(4, requests, MPI_STATUSES_IGNORE);
    }
    if (s > 0) {
      sum += compute;
    }
  }
  const double mean = sum / (double)(steps - 1);
  // (MPI_Allreduce: SimGrid 3.32's MPI_Reduce with the ompi selector aborts on one process.)
  double meanSum = 0.0;
  MPI_Allreduce(&mean, &meanSum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  struct {
    double value;
    int rank;
  } mine = {mean, rank}, slowest;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("burst processes %d bursts %ld bytes %ld: compute per step mean %.3f ms, max %.3f ms "
           "(process %d)\n",
           size, bursts, bytes, meanSum / size * 1e3, slowest.value * 1e3, slowest.rank);
  }
  free(x);
  free(order);
  MPI_Finalize();
  return 0;
}
