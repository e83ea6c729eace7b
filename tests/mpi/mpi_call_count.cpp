// SPDX-License-Identifier: MIT
// A library preloaded into grain-sim-mpi's processes by the MPI end-to-end tests
// (LD_PRELOAD, through the MPI profiling interface): it counts the calls of the collectives whose
// cost or buffers grow with the number of processes (all-to-all, all-gather, gather, scatter,
// reduce-scatter), separately for calls made by Zoltan's library and by the rest of the program,
// the program's MPI_Comm_size calls and the bytes it sends point to point (MPI_Send, MPI_Ssend,
// MPI_Isend, MPI_Issend; both outside Zoltan), and at MPI_Finalize writes them to the file named
// by GRAIN_MPI_CALL_COUNT followed by "." and the process's rank:
//   program N
//   zoltan M
//   size S
//   sent B
// (nothing is written when the variable is not set).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <string>

#include <mpi.h>

namespace {

// A shared library preloaded into a program of the tests: counters of the process it runs in.
// NOLINTBEGIN(cppcoreguidelines-avoid-non-const-global-variables)
unsigned long long gProgramCalls = 0;
unsigned long long gZoltanCalls = 0;
unsigned long long gSizeCalls = 0;
unsigned long long gSentBytes = 0;
// NOLINTEND(cppcoreguidelines-avoid-non-const-global-variables)

/// Whether the code at `caller` is Zoltan's library.
bool inZoltan(void* caller) {
  Dl_info info{};
  return dladdr(caller, &info) != 0 && info.dli_fname != nullptr &&
         std::strstr(info.dli_fname, "zoltan") != nullptr;
}

/// Counts a call made from code at `caller`.
void count(void* caller) {
  ++(inZoltan(caller) ? gZoltanCalls : gProgramCalls);
}

}  // namespace

#define GRAIN_COUNTED(name, params, args) \
  extern "C" int name params {            \
    count(__builtin_return_address(0));   \
    return P##name args;                  \
  }

GRAIN_COUNTED(MPI_Alltoall,
              (const void* s, int sc, MPI_Datatype st, void* r, int rc, MPI_Datatype rt,
               MPI_Comm c),
              (s, sc, st, r, rc, rt, c))
GRAIN_COUNTED(MPI_Alltoallv,
              (const void* s, const int sc[], const int sd[], MPI_Datatype st, void* r,
               const int rc[], const int rd[], MPI_Datatype rt, MPI_Comm c),
              (s, sc, sd, st, r, rc, rd, rt, c))
GRAIN_COUNTED(MPI_Alltoallw,
              (const void* s, const int sc[], const int sd[], const MPI_Datatype st[], void* r,
               const int rc[], const int rd[], const MPI_Datatype rt[], MPI_Comm c),
              (s, sc, sd, st, r, rc, rd, rt, c))
GRAIN_COUNTED(MPI_Ialltoall,
              (const void* s, int sc, MPI_Datatype st, void* r, int rc, MPI_Datatype rt, MPI_Comm c,
               MPI_Request* q),
              (s, sc, st, r, rc, rt, c, q))
GRAIN_COUNTED(MPI_Ialltoallv,
              (const void* s, const int sc[], const int sd[], MPI_Datatype st, void* r,
               const int rc[], const int rd[], MPI_Datatype rt, MPI_Comm c, MPI_Request* q),
              (s, sc, sd, st, r, rc, rd, rt, c, q))
GRAIN_COUNTED(MPI_Allgather,
              (const void* s, int sc, MPI_Datatype st, void* r, int rc, MPI_Datatype rt,
               MPI_Comm c),
              (s, sc, st, r, rc, rt, c))
GRAIN_COUNTED(MPI_Allgatherv,
              (const void* s, int sc, MPI_Datatype st, void* r, const int rc[], const int rd[],
               MPI_Datatype rt, MPI_Comm c),
              (s, sc, st, r, rc, rd, rt, c))
GRAIN_COUNTED(MPI_Iallgather,
              (const void* s, int sc, MPI_Datatype st, void* r, int rc, MPI_Datatype rt, MPI_Comm c,
               MPI_Request* q),
              (s, sc, st, r, rc, rt, c, q))
GRAIN_COUNTED(MPI_Gather,
              (const void* s, int sc, MPI_Datatype st, void* r, int rc, MPI_Datatype rt, int root,
               MPI_Comm c),
              (s, sc, st, r, rc, rt, root, c))
GRAIN_COUNTED(MPI_Gatherv,
              (const void* s, int sc, MPI_Datatype st, void* r, const int rc[], const int rd[],
               MPI_Datatype rt, int root, MPI_Comm c),
              (s, sc, st, r, rc, rd, rt, root, c))
GRAIN_COUNTED(MPI_Scatter,
              (const void* s, int sc, MPI_Datatype st, void* r, int rc, MPI_Datatype rt, int root,
               MPI_Comm c),
              (s, sc, st, r, rc, rt, root, c))
GRAIN_COUNTED(MPI_Scatterv,
              (const void* s, const int sc[], const int sd[], MPI_Datatype st, void* r, int rc,
               MPI_Datatype rt, int root, MPI_Comm c),
              (s, sc, sd, st, r, rc, rt, root, c))
GRAIN_COUNTED(MPI_Reduce_scatter,
              (const void* s, void* r, const int rc[], MPI_Datatype t, MPI_Op op, MPI_Comm c),
              (s, r, rc, t, op, c))
GRAIN_COUNTED(MPI_Reduce_scatter_block,
              (const void* s, void* r, int rc, MPI_Datatype t, MPI_Op op, MPI_Comm c),
              (s, r, rc, t, op, c))

extern "C" int MPI_Comm_size(MPI_Comm c, int* size) {
  if (!inZoltan(__builtin_return_address(0))) {
    ++gSizeCalls;
  }
  return PMPI_Comm_size(c, size);
}

namespace {

/// Counts the bytes of a point-to-point send made from code at `caller` (outside Zoltan).
void countSent(void* caller, int count, MPI_Datatype type) {
  if (!inZoltan(caller)) {
    int size = 0;
    PMPI_Type_size(type, &size);
    gSentBytes += static_cast<unsigned long long>(count) * static_cast<unsigned long long>(size);
  }
}

}  // namespace

#define GRAIN_SENT(name, params, args)               \
  extern "C" int name params {                       \
    countSent(__builtin_return_address(0), n, type); \
    return P##name args;                             \
  }

GRAIN_SENT(MPI_Send, (const void* b, int n, MPI_Datatype type, int to, int tag, MPI_Comm c),
           (b, n, type, to, tag, c))
GRAIN_SENT(MPI_Ssend, (const void* b, int n, MPI_Datatype type, int to, int tag, MPI_Comm c),
           (b, n, type, to, tag, c))
GRAIN_SENT(MPI_Isend,
           (const void* b, int n, MPI_Datatype type, int to, int tag, MPI_Comm c, MPI_Request* q),
           (b, n, type, to, tag, c, q))
GRAIN_SENT(MPI_Issend,
           (const void* b, int n, MPI_Datatype type, int to, int tag, MPI_Comm c, MPI_Request* q),
           (b, n, type, to, tag, c, q))

extern "C" int MPI_Finalize() {
  if (const char* prefix = std::getenv("GRAIN_MPI_CALL_COUNT")) {
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const std::string path = std::string(prefix) + "." + std::to_string(rank);
    if (std::FILE* f = std::fopen(path.c_str(), "w")) {
      std::fprintf(f, "program %llu\nzoltan %llu\nsize %llu\nsent %llu\n", gProgramCalls,
                   gZoltanCalls, gSizeCalls, gSentBytes);
      std::fclose(f);
    }
  }
  return PMPI_Finalize();
}
