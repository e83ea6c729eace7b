// SPDX-License-Identifier: MIT
#pragma once

#include <mpi.h>

namespace grain::app {

/// A value of MPI_COMM_WORLD (this process's rank with MPI_Comm_rank, the process count with
/// MPI_Comm_size) asked from MPI at every use instead of stored in a global. grain-sim-mpi keeps
/// no mutable globals, so SimGrid's SMPI can run all simulated processes in one program image
/// without privatising globals (smpirun --cfg=smpi/privatization:0), where a stored rank would
/// be overwritten by every process.
class WorldValue {
 public:
  explicit WorldValue(int (*query)(MPI_Comm, int*)) : query_(query) {}
  /// The value now (MPI must be initialised).
  operator int() const {
    int value = 0;
    query_(MPI_COMM_WORLD, &value);
    return value;
  }

 private:
  int (*query_)(MPI_Comm, int*);
};

}  // namespace grain::app
