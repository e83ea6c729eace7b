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
  std::uint64_t reductions = 0;    ///< MpiReducer calls on more than one process (allreduces)
};

/// Reducer over the processes of an MPI communicator (MPI_COMM_NULL: this process alone).
class MpiReducer final : public Reducer {
 public:
  /// Entries sumAndMax() takes at most: sums, maxima.
  static constexpr std::size_t kMaxSums = 16;
  static constexpr std::size_t kMaxMaxima = 8;

  explicit MpiReducer(MPI_Comm comm = MPI_COMM_NULL) { setCommunicator(comm); }
  ~MpiReducer() override;
  MpiReducer(const MpiReducer&) = delete;
  MpiReducer& operator=(const MpiReducer&) = delete;
  void setCommunicator(MPI_Comm comm);
  /// Adds the wall time of every reduction to `counters->seconds` (nullptr: not counted).
  void countTimeInto(TrafficCounters* counters) { counters_ = counters; }
  bool distributed() const override { return size_ > 1; }
  bool allTrue(bool local) override;
  void sum(std::span<Real> values) override;
  void max(std::span<Real> values) override;
  /// One MPI_Allreduce of a block of kMaxSums + kMaxMaxima doubles with an operation that adds
  /// the first part and takes the maximum of the second (made on first use, freed with this
  /// reducer). Up to kMaxSums sums and kMaxMaxima maxima.
  void sumAndMax(std::span<Real> sums, std::span<Real> maxima) override;

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int size_ = 1;
  TrafficCounters* counters_ = nullptr;
  MPI_Datatype blockType_ = MPI_DATATYPE_NULL;  // sumAndMax(): the block of doubles
  MPI_Op sumMaxOp_ = MPI_OP_NULL;               // sumAndMax(): its operation
};

/// Sends send[k] to partners[k] and receives recv[k] from partners[k], one message each way per
/// partner (possibly empty), with tag `tag`: non-blocking sends, probed receives, then a wait for
/// the sends. The partner sets of two processes must be symmetric.
void exchangeWithPartners(MPI_Comm comm, int tag, const std::vector<int>& partners,
                          std::span<const std::span<const char>> send,
                          std::vector<std::vector<char>>& recv, TrafficCounters& traffic);

/// Exchange with a fixed set of partners of messages whose lengths both sides know in advance
/// (the averaging of split bodies, every sweep): the receives are posted before the sends, so no
/// probe is needed and messages are taken in the order they arrive; request and status storage is
/// kept between calls.
class KnownSizeExchange {
 public:
  /// Sends send[k] to partners[k] and receives recv[k] from partners[k]; recv[k] must already
  /// have the length of partners[k]'s message, and a message of another length is an error. The
  /// partner sets of two processes must be symmetric. Counts into `traffic` like
  /// exchangeWithPartners.
  void exchange(MPI_Comm comm, int tag, const std::vector<int>& partners,
                const std::vector<std::vector<Real>>& send, std::vector<std::vector<Real>>& recv,
                TrafficCounters& traffic);
  /// exchange() in two halves: start() posts the receives and the sends and returns; finish()
  /// waits for them and checks the lengths. send and recv must stay untouched in between.
  void start(MPI_Comm comm, int tag, const std::vector<int>& partners,
             const std::vector<std::vector<Real>>& send, std::vector<std::vector<Real>>& recv,
             TrafficCounters& traffic);
  void finish(TrafficCounters& traffic);

 private:
  void post(MPI_Comm comm, int tag, const std::vector<int>& partners,
            const std::vector<std::vector<Real>>& send, std::vector<std::vector<Real>>& recv,
            TrafficCounters& traffic);
  void wait();

  std::vector<MPI_Request> requests_;
  std::vector<MPI_Status> statuses_;
  // Between start() and finish(): the partners and receive buffers of the exchange.
  const std::vector<int>* partners_ = nullptr;
  const std::vector<std::vector<Real>>* recv_ = nullptr;
};

/// A message received by SparseExchange.
struct ReceivedMessage {
  int source = 0;
  std::vector<char> bytes;
};

/// Sparse personalised exchange among the processes of a communicator when no process knows who
/// sends to it: the NBX algorithm of Hoefler, Siebert and Lumsdaine (2010). Each process sends
/// its messages with synchronous non-blocking sends and receives whatever arrives; once all its
/// sends have been received it enters a non-blocking barrier, and it stops when the barrier
/// completes (then every message of every process has been received). The cost per process grows
/// with the messages it sends and receives and with log P (the barrier), never with P: no
/// P-sized array, no all-to-all.
///
/// The barrier is a dissemination barrier of point-to-point messages (log P rounds), not
/// MPI_Ibarrier or MPI_Iallreduce, for the simulated cluster of bench/smpi_scaling.sh (SimGrid
/// 3.32), where it must behave as on a real one: SimGrid's MPI_Ibarrier completes on the other
/// processes while one that is not the root has still to enter (a process then left an exchange
/// with a message still addressed to it), and its MPI_Iallreduce sends every process's value to
/// every other process, P^2 messages in all (50 exchanges on 256 simulated processes did not
/// finish in 300 s of this machine's time; bench/smpi_checks.sh).
/// OpenMPI's own non-blocking barrier uses the same algorithm (docs/mpi.md, "Under SMPI").
///
/// A process can leave an exchange while another is still receiving in it, and start the next
/// one: consecutive exchanges on one object therefore alternate two tags (`tag`, `tag` + 1) for
/// their messages and two (`tag` + 2, `tag` + 3) for their barriers, so the next exchange's
/// messages are never taken for this one's. Two objects on one communicator need tags that
/// differ by at least 4. Collective: every process of the communicator calls exchange() the same
/// number of times.
class SparseExchange {
 public:
  SparseExchange(MPI_Comm comm, int tag) : comm_(comm), tag_(tag) {}
  /// Sends send[k] to destinations[k] (distinct processes, possibly this one; an empty message
  /// travels too) and returns in `received` one entry per message sent to this process, sorted by
  /// source. Counts bytes, messages and the time of the call into `traffic`.
  void exchange(const std::vector<int>& destinations, const std::vector<std::vector<char>>& send,
                std::vector<ReceivedMessage>& received, TrafficCounters& traffic);
  /// Exchanges done so far.
  std::uint64_t rounds() const { return round_; }

 private:
  MPI_Comm comm_;
  int tag_;
  std::uint64_t round_ = 0;
};

}  // namespace grain::mpi
