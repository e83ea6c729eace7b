// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <mpi.h>

#include <grain/core/timestepping/exchange.hpp>

/// Thin MPI helpers of grain_mpi: reductions and the neighbour exchange (thesis Algorithm 12.2).
namespace grain::mpi {

/// Bytes and messages a process sent, and the wall time it spent in communication calls (reset
/// by the caller).
struct TrafficCounters {
  std::uint64_t bytes = 0;
  std::uint64_t messages = 0;
  double seconds = 0.0;  ///< s: in exchanges and reductions, waiting for other processes included
  double collectiveSeconds = 0.0;  ///< s: the part of `seconds` in reductions and comm splits
};

/// Reducer over the processes of an MPI communicator (MPI_COMM_NULL: this process alone).
class MpiReducer final : public Reducer {
 public:
  explicit MpiReducer(MPI_Comm comm = MPI_COMM_NULL) { setCommunicator(comm); }
  void setCommunicator(MPI_Comm comm);
  /// Adds the wall time of every reduction to `counters->seconds` (nullptr: not counted).
  void countTimeInto(TrafficCounters* counters) { counters_ = counters; }
  bool distributed() const override { return size_ > 1; }
  bool allTrue(bool local) override;
  void sum(std::span<Real> values) override;
  void max(std::span<Real> values) override;

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int size_ = 1;
  TrafficCounters* counters_ = nullptr;
};

/// Sends send[k] to partners[k] and receives recv[k] from partners[k], one message each way per
/// partner (possibly empty), with tag `tag`: non-blocking sends, probed receives, then a wait for
/// the sends. The partner sets of two processes must be symmetric.
void exchangeWithPartners(MPI_Comm comm, int tag, const std::vector<int>& partners,
                          const std::vector<std::vector<char>>& send,
                          std::vector<std::vector<char>>& recv, TrafficCounters& traffic);

}  // namespace grain::mpi
