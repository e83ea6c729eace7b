// SPDX-License-Identifier: MIT
#include <algorithm>
#include <array>
#include <climits>
#include <limits>

#include <grain/core/common/error.hpp>
#include <grain/mpi/communicator.hpp>

namespace grain::mpi {

void MpiReducer::setCommunicator(MPI_Comm comm) {
  comm_ = comm;
  size_ = 1;
  if (comm != MPI_COMM_NULL) {
    MPI_Comm_size(comm, &size_);
  }
}

namespace {

/// Adds the wall time of its scope to `counters->seconds` (if not null), and for a collective
/// call to `counters->collectiveSeconds` too and one to `counters->reductions`.
class CommTimer {
 public:
  explicit CommTimer(TrafficCounters* counters, bool collective = false)
      : counters_(counters),
        collective_(collective),
        start_(counters != nullptr ? MPI_Wtime() : 0.0) {}
  ~CommTimer() {
    if (counters_ != nullptr) {
      const double seconds = MPI_Wtime() - start_;
      counters_->seconds += seconds;
      counters_->collectiveSeconds += collective_ ? seconds : 0.0;
      counters_->reductions += collective_ ? 1 : 0;
    }
  }
  CommTimer(const CommTimer&) = delete;
  CommTimer& operator=(const CommTimer&) = delete;

 private:
  TrafficCounters* counters_;
  bool collective_;
  double start_;
};

}  // namespace

bool MpiReducer::allTrue(bool local) {
  if (size_ <= 1) {
    return local;
  }
  const CommTimer timer(counters_, true);
  int value = local ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT, MPI_LAND, comm_);
  return value != 0;
}

void MpiReducer::sum(std::span<Real> values) {
  if (size_ > 1 && !values.empty()) {
    const CommTimer timer(counters_, true);
    MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_SUM,
                  comm_);
  }
}

void MpiReducer::max(std::span<Real> values) {
  if (size_ > 1 && !values.empty()) {
    const CommTimer timer(counters_, true);
    MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_MAX,
                  comm_);
  }
}

namespace {

constexpr std::size_t kBlock = MpiReducer::kMaxSums + MpiReducer::kMaxMaxima;

/// MPI_User_function of sumAndMax(): per block, inout = in + inout for the sums and
/// max(in, inout) for the maxima.
void addSumsMaxMaxima(void* in, void* inout, int* count, MPI_Datatype*) {
  const auto* a = static_cast<const double*>(in);
  auto* b = static_cast<double*>(inout);
  for (int block = 0; block < *count; ++block, a += kBlock, b += kBlock) {
    for (std::size_t i = 0; i < MpiReducer::kMaxSums; ++i) {
      b[i] = a[i] + b[i];
    }
    for (std::size_t i = MpiReducer::kMaxSums; i < kBlock; ++i) {
      b[i] = std::max(a[i], b[i]);
    }
  }
}

}  // namespace

void MpiReducer::sumAndMax(std::span<Real> sums, std::span<Real> maxima) {
  GRAIN_REQUIRE(sums.size() <= kMaxSums && maxima.size() <= kMaxMaxima,
                "MpiReducer::sumAndMax: too many entries");
  if (size_ <= 1) {
    return;
  }
  const CommTimer timer(counters_, true);
  if (sumMaxOp_ == MPI_OP_NULL) {
    MPI_Type_contiguous(static_cast<int>(kBlock), MPI_DOUBLE, &blockType_);
    MPI_Type_commit(&blockType_);
    MPI_Op_create(&addSumsMaxMaxima, 1, &sumMaxOp_);
  }
  std::array<double, kBlock> block{};
  std::fill(block.begin() + kMaxSums, block.end(), -std::numeric_limits<double>::infinity());
  std::copy(sums.begin(), sums.end(), block.begin());
  std::copy(maxima.begin(), maxima.end(), block.begin() + kMaxSums);
  MPI_Allreduce(MPI_IN_PLACE, block.data(), 1, blockType_, sumMaxOp_, comm_);
  std::copy_n(block.begin(), sums.size(), sums.begin());
  std::copy_n(block.begin() + kMaxSums, maxima.size(), maxima.begin());
}

MpiReducer::~MpiReducer() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized == 0) {
    if (sumMaxOp_ != MPI_OP_NULL) {
      MPI_Op_free(&sumMaxOp_);
    }
    if (blockType_ != MPI_DATATYPE_NULL) {
      MPI_Type_free(&blockType_);
    }
  }
}

void exchangeWithPartners(MPI_Comm comm, int tag, const std::vector<int>& partners,
                          std::span<const std::span<const char>> send,
                          std::vector<std::vector<char>>& recv, TrafficCounters& traffic) {
  GRAIN_REQUIRE(send.size() == partners.size(), "exchangeWithPartners: one message per partner");
  const CommTimer timer(&traffic);
  std::vector<MPI_Request> requests(partners.size(), MPI_REQUEST_NULL);
  for (std::size_t k = 0; k < partners.size(); ++k) {
    GRAIN_REQUIRE(send[k].size() <= static_cast<std::size_t>(INT_MAX),
                  "message to process " + std::to_string(partners[k]) + " exceeds 2 GiB");
    MPI_Isend(send[k].data(), static_cast<int>(send[k].size()), MPI_BYTE, partners[k], tag, comm,
              &requests[k]);
    traffic.bytes += send[k].size();
    ++traffic.messages;
  }
  recv.resize(partners.size());
  for (std::size_t k = 0; k < partners.size(); ++k) {
    MPI_Status status;
    MPI_Probe(partners[k], tag, comm, &status);
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    recv[k].resize(static_cast<std::size_t>(count));
    MPI_Recv(recv[k].data(), count, MPI_BYTE, partners[k], tag, comm, MPI_STATUS_IGNORE);
  }
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
}

void KnownSizeExchange::post(MPI_Comm comm, int tag, const std::vector<int>& partners,
                             const std::vector<std::vector<Real>>& send,
                             std::vector<std::vector<Real>>& recv, TrafficCounters& traffic) {
  GRAIN_REQUIRE(send.size() == partners.size() && recv.size() == partners.size(),
                "KnownSizeExchange: one message each way per partner");
  const std::size_t n = partners.size();
  requests_.assign(2 * n, MPI_REQUEST_NULL);
  statuses_.resize(2 * n);
  for (std::size_t k = 0; k < n; ++k) {
    GRAIN_REQUIRE(
        recv[k].size() <= static_cast<std::size_t>(INT_MAX) &&
            send[k].size() <= static_cast<std::size_t>(INT_MAX),
        "message to or from process " + std::to_string(partners[k]) + " exceeds 2^31 values");
    MPI_Irecv(recv[k].data(), static_cast<int>(recv[k].size()), MPI_DOUBLE, partners[k], tag, comm,
              &requests_[k]);
  }
  for (std::size_t k = 0; k < n; ++k) {
    MPI_Isend(send[k].data(), static_cast<int>(send[k].size()), MPI_DOUBLE, partners[k], tag, comm,
              &requests_[n + k]);
    traffic.bytes += send[k].size() * sizeof(Real);
    ++traffic.messages;
  }
  partners_ = &partners;
  recv_ = &recv;
}

void KnownSizeExchange::wait() {
  GRAIN_REQUIRE(partners_ != nullptr, "KnownSizeExchange: finish() without start()");
  MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), statuses_.data());
  for (std::size_t k = 0; k < partners_->size(); ++k) {
    int count = 0;
    MPI_Get_count(&statuses_[k], MPI_DOUBLE, &count);
    GRAIN_REQUIRE(static_cast<std::size_t>(count) == (*recv_)[k].size(),
                  "process " + std::to_string((*partners_)[k]) + " sent " + std::to_string(count) +
                      " values where " + std::to_string((*recv_)[k].size()) + " were expected");
  }
  partners_ = nullptr;
  recv_ = nullptr;
}

void KnownSizeExchange::exchange(MPI_Comm comm, int tag, const std::vector<int>& partners,
                                 const std::vector<std::vector<Real>>& send,
                                 std::vector<std::vector<Real>>& recv, TrafficCounters& traffic) {
  const CommTimer timer(&traffic);
  post(comm, tag, partners, send, recv, traffic);
  wait();
}

void KnownSizeExchange::start(MPI_Comm comm, int tag, const std::vector<int>& partners,
                              const std::vector<std::vector<Real>>& send,
                              std::vector<std::vector<Real>>& recv, TrafficCounters& traffic) {
  const CommTimer timer(&traffic);
  post(comm, tag, partners, send, recv, traffic);
}

void KnownSizeExchange::finish(TrafficCounters& traffic) {
  const CommTimer timer(&traffic);
  wait();
}

namespace {

/// A non-blocking dissemination barrier (Hensgen, Finkel and Manber 1988) of empty messages: in
/// round j of ceil(log2 P) a process sends to rank + 2^j and receives from rank - 2^j (modulo P),
/// and starts round j + 1 once round j's message has arrived. After the last round every process
/// has entered the barrier. Each process sends and receives ceil(log2 P) messages, as in MPI's own
/// non-blocking barriers; unlike SimGrid's (SparseExchange says why) it cannot complete early,
/// and it costs the simulated cluster log P messages per process, not P.
class DisseminationBarrier {
 public:
  DisseminationBarrier(MPI_Comm comm, int tag) : comm_(comm), tag_(tag) {
    MPI_Comm_rank(comm, &rank_);
    MPI_Comm_size(comm, &size_);
    while ((1 << rounds_) < size_) {
      ++rounds_;
    }
    sends_.assign(static_cast<std::size_t>(rounds_), MPI_REQUEST_NULL);
  }
  DisseminationBarrier(const DisseminationBarrier&) = delete;
  DisseminationBarrier& operator=(const DisseminationBarrier&) = delete;

  /// Sends the first round's message.
  void enter() {
    if (rounds_ > 0) {
      post(0);
    }
  }

  /// Moves on through the rounds whose messages have arrived; true once the last one has.
  bool test() {
    while (round_ < rounds_) {
      int arrived = 0;
      MPI_Test(&receive_, &arrived, MPI_STATUS_IGNORE);
      if (arrived == 0) {
        return false;
      }
      if (++round_ < rounds_) {
        post(round_);
      }
    }
    // Empty standard-mode sends: complete once handed to MPI.
    MPI_Waitall(rounds_, sends_.data(), MPI_STATUSES_IGNORE);
    return true;
  }

 private:
  void post(int round) {
    const int step = 1 << round;  // < size_
    MPI_Irecv(&in_, 0, MPI_BYTE, (rank_ - step + size_) % size_, tag_, comm_, &receive_);
    MPI_Isend(&out_, 0, MPI_BYTE, (rank_ + step) % size_, tag_, comm_,
              &sends_[static_cast<std::size_t>(round)]);
  }

  MPI_Comm comm_;
  int tag_;
  int rank_ = 0;
  int size_ = 1;
  int rounds_ = 0;
  int round_ = 0;
  MPI_Request receive_ = MPI_REQUEST_NULL;
  std::vector<MPI_Request> sends_;
  char in_ = 0;
  char out_ = 0;
};

}  // namespace

void SparseExchange::exchange(const std::vector<int>& destinations,
                              const std::vector<std::vector<char>>& send,
                              std::vector<ReceivedMessage>& received, TrafficCounters& traffic) {
  GRAIN_REQUIRE(send.size() == destinations.size(), "SparseExchange: one message per destination");
  const CommTimer timer(&traffic);
  const int parity = static_cast<int>(round_ % 2);
  const int tag = tag_ + parity;
  ++round_;
  received.clear();
  std::vector<MPI_Request> sends(destinations.size(), MPI_REQUEST_NULL);
  for (std::size_t k = 0; k < destinations.size(); ++k) {
    GRAIN_REQUIRE(send[k].size() <= static_cast<std::size_t>(INT_MAX),
                  "message to process " + std::to_string(destinations[k]) + " exceeds 2 GiB");
    MPI_Issend(send[k].data(), static_cast<int>(send[k].size()), MPI_BYTE, destinations[k], tag,
               comm_, &sends[k]);
    traffic.bytes += send[k].size();
    ++traffic.messages;
  }
  DisseminationBarrier barrier(comm_, tag_ + 2 + parity);
  bool inBarrier = false;
  for (;;) {
    int arrived = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, tag, comm_, &arrived, &status);
    if (arrived != 0) {
      int count = 0;
      MPI_Get_count(&status, MPI_BYTE, &count);
      ReceivedMessage& m = received.emplace_back();
      m.source = status.MPI_SOURCE;
      m.bytes.resize(static_cast<std::size_t>(count));
      MPI_Recv(m.bytes.data(), count, MPI_BYTE, m.source, tag, comm_, MPI_STATUS_IGNORE);
      continue;
    }
    if (!inBarrier) {
      // Synchronous sends complete once received: then this process has nothing in flight.
      int done = 0;
      MPI_Testall(static_cast<int>(sends.size()), sends.data(), &done, MPI_STATUSES_IGNORE);
      if (done != 0) {
        barrier.enter();
        inBarrier = true;
      }
    } else if (barrier.test()) {
      break;
    }
  }
  std::sort(received.begin(), received.end(),
            [](const ReceivedMessage& a, const ReceivedMessage& b) { return a.source < b.source; });
}

}  // namespace grain::mpi
