// SPDX-License-Identifier: MIT
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include <mpi.h>

#include <grain/core/timestepping/dynamics_system.hpp>
#include <grain/core/timestepping/exchange.hpp>
#include <grain/mpi/communicator.hpp>
#include <grain/mpi/messages.hpp>
#include <grain/mpi/records.hpp>
#include <grain/mpi/topology.hpp>

namespace grain::mpi {

/// Body communication and mass splitting of a distributed run (thesis ch. 12, 13) over a
/// Topology, implementing the core's BodyExchange and SplitBodyExchange.
///
/// Every process holds every static and animated body (they never travel) and the simulated
/// bodies it owns ("local": centre of mass in its domain) plus remote copies of the neighbours'
/// bodies whose bounding box overlaps its domain. Once per step, after the first half step, each
/// process sends one message to each neighbour with one record per relevant local body:
///   - Notify (full body): the body starts overlapping the neighbour;
///   - Update (state): the neighbour holds a copy already;
///   - Remove (id): the body stopped overlapping the neighbour;
///   - Transfer (full body and the ranks holding copies): the body's centre crossed into the
///     neighbour's domain, which becomes its owner; the old owner keeps a remote copy if the body
///     still overlaps its domain.
/// Copies are bit-identical to their owner. Every remote copy must be updated every step (else
/// grain::Error), and a body that would need a process that is not a neighbour (too large or too
/// fast for the cells) is an error naming the body.
///
/// Contacts: a contact is solved by one process that holds both bodies (the processes a simulated
/// body's box overlaps hold it; static and animated bodies are everywhere), preferably an owner of
/// one of them, so that contacts among one process's bodies are never split off and those across
/// a boundary divide evenly (selectContacts); every process computes the same choice. Mass
/// splitting: a simulated body with contacts on several processes is split among its owner and
/// those processes (multiplicity p = number of them, thesis §13.3): remote processes tell the
/// owner, the owner answers with p. Averaging: every holder sends its copy's velocities to the
/// other holders, and each takes the mean in rank order (sum(), for the matrix-free solvers, the
/// same with impulses and the sum); convergence decisions are taken among the
/// coupled processes only (a communicator split off again when the set of coupled processes
/// changes).
///
/// Warm start: each warm-start entry has a home body, the pair's body with the smaller id if it is
/// simulated, else the other one (warmStartHome). The entries travel with their home body, so that
/// a contact whose bodies change process still starts from its last percussion: the process that
/// solved a contact sends its entry to the home body's owner with the body messages; an owner that
/// gave the body away forwards it to the new owner with the first planning message; the owner sends
/// it to every process holding a copy with the second planning message. Every process then has the
/// entries of all pairs whose home body it holds, among them those of every contact it solves.
class DistributedExchange final : public BodyExchange, public SplitBodyExchange {
 public:
  /// `comm` must have topology->size() processes. Throws grain::Error otherwise.
  DistributedExchange(MPI_Comm comm, std::shared_ptr<const Topology> topology,
                      unsigned splitNodeUpdateRatio, unsigned convergenceCheckRatio);
  ~DistributedExchange() override;
  DistributedExchange(const DistributedExchange&) = delete;
  DistributedExchange& operator=(const DistributedExchange&) = delete;

  /// Start of a run on a system every process loaded whole: removes the simulated bodies this
  /// process does not own.
  void keepOwnedBodies(BodyStorage& bodies);

  /// Tags: a number per simulated body that travels with its ownership (grain-sim-mpi: the global
  /// geometry id of the scene's GlobalGeomId, for the .sim extra bytes), so no process needs the
  /// tags of the whole scene. Sets the tags of bodies this process owns (absent: 0).
  void setOwnedBodyTags(std::unordered_map<BodyId, std::uint32_t> tags) { tags_ = std::move(tags); }
  /// The non-zero tags of the bodies this process owns.
  const std::unordered_map<BodyId, std::uint32_t>& ownedBodyTags() const { return tags_; }

  /// Switches to a new decomposition (a rebuild for load balancing), between steps: remote copies
  /// are dropped and every local body moves to its owner under `topology` (one sparse exchange,
  /// as owners may be any process: its cost grows with the processes a process trades bodies
  /// with, not with the process count). The next exchangeBodies() creates the remote copies
  /// anew. Collective. Throws grain::Error (on every process) if a simulated body is larger than
  /// the smallest cell of the new decomposition.
  /// `warmStart`: warm-start entries of pairs whose home body this process holds (its solver's
  /// cache, or entries read for a restart; see holdsWarmStartHome), taken over (the vector is left
  /// empty) and moved with the bodies to the new owners; the next exchangeBodies()/planSplits()
  /// hand them on.
  void setTopology(std::shared_ptr<const Topology> topology, DynamicsSystem& system,
                   std::vector<detail::PercussionCacheEntry>& warmStart);
  void setTopology(std::shared_ptr<const Topology> topology, DynamicsSystem& system) {
    std::vector<detail::PercussionCacheEntry> none;
    setTopology(std::move(topology), system, none);
  }
  const Topology& topology() const { return *topology_; }
  std::shared_ptr<const Topology> sharedTopology() const { return topology_; }

  // BodyExchange
  void exchangeBodies(DynamicsSystem& system,
                      std::vector<detail::PercussionCacheEntry>& warmStart) override;
  void selectContacts(const BodyStorage& bodies, ContactStorage& contacts) override;

  // SplitBodyExchange
  void planSplits(const BodyStorage& bodies, const ContactStorage& contacts,
                  std::vector<std::uint32_t>& multiplicity,
                  std::vector<detail::PercussionCacheEntry>& warmStart) override;
  bool beginSolve(const BodyStorage& bodies, std::span<const std::uint32_t> storageIndex) override;
  unsigned period() const override { return period_; }
  unsigned checkRatio() const override { return checkRatio_; }
  void average(std::span<Vec3> velocity, std::span<Vec3> omega) override;
  void sum(std::span<Vec3> linear, std::span<Vec3> angular) override;
  void startAverage(std::span<const Vec3> velocity, std::span<const Vec3> omega) override;
  void finishAverage(std::span<Vec3> velocity, std::span<Vec3> omega) override;
  Reducer& coupledReducer() override { return coupledReducer_; }

  /// Reductions over all processes of the run.
  Reducer& reducer() { return allReducer_; }
  int rank() const { return rank_; }
  int size() const { return topology_->size(); }
  const std::vector<int>& neighbours() const { return neighbours_; }
  /// Bytes and messages this process sent since the last resetTraffic().
  const TrafficCounters& traffic() const { return traffic_; }
  void resetTraffic() { traffic_ = {}; }
  /// How often the communicator of the coupled processes was split off (at the first plan and
  /// whenever a process's coupling changed since the last plan).
  std::uint64_t coupledCommunicatorBuilds() const { return coupledCommBuilds_; }
  /// Split bodies of the last plan (this process's own ones and remote copies).
  std::size_t splitBodies() const { return split_.size(); }
  /// Bodies this process handed to other processes in the last setTopology.
  std::size_t migratedBodies() const { return migrated_; }
  /// Largest multiplicity of this process's own split bodies in the last plan (1: none split).
  std::uint32_t maxMultiplicity() const {
    std::size_t m = 1;
    for (const SplitBody& s : split_) {
      if (s.owned) {
        m = std::max(m, s.holders.size());
      }
    }
    return static_cast<std::uint32_t>(m);
  }

 private:
  friend bool holdsWarmStartHome(const BodyStorage& bodies, const detail::PercussionCacheEntry& e);
  /// A body with contacts on several processes. Every holder keeps the same `holders` list and
  /// averages the copies in that order, so all copies get the same bits.
  struct SplitBody {
    BodyId id;
    bool owned;                ///< this process owns the body
    std::vector<int> holders;  ///< every process with a copy (this one too), increasing
  };
  /// Where one copy of a split body is found when the copies are combined: this process's own
  /// (partner kSelf) or a partner's record at `offset` in averageRecv_[partner].
  struct CopySource {
    std::uint32_t partner;
    std::uint32_t offset;
  };
  static constexpr std::uint32_t kSelf = UINT32_MAX;
  /// Removes and returns the tag of a body this process hands over (0: none).
  std::uint32_t takeTag(BodyId id) {
    const auto it = tags_.find(id);
    if (it == tags_.end()) {
      return 0;
    }
    const std::uint32_t tag = it->second;
    tags_.erase(it);
    return tag;
  }
  /// Records the tag of a body this process received as its owner.
  void giveTag(BodyId id, std::uint32_t tag) {
    if (tag != 0) {
      tags_[id] = tag;
    }
  }
  /// Entry `e` with its home body (both bodies' ids looked up in `bodies`), and the home body's
  /// storage index; nothing if the pair's bodies are not held here.
  static std::optional<std::pair<RoutedEntry, std::size_t>> withHome(
      const BodyStorage& bodies, const detail::PercussionCacheEntry& e);
  /// Per partner k, the entries to send (storage kept between calls).
  std::vector<std::vector<RoutedEntry>>& freshEntryLists(std::size_t count);
  /// Writes entry list k ahead of writer k's records: a count, then the entries (RoutedEntry,
  /// records.hpp).
  static void putEntries(ByteWriter& w, const std::vector<RoutedEntry>& entries);
  /// Reads the entries ahead of a message's records and appends them to `to`.
  static void getEntries(ByteReader& r, std::vector<RoutedEntry>& to);
  std::size_t partnerIndex(int rank) const;
  void requireNeighbour(int rank, BodyId id, const char* what) const;
  /// The per-partner message writers, emptied, for `count` partners (storage kept between calls).
  std::vector<ByteWriter>& freshWriters(std::size_t count);
  /// average() (mean) and sum() (not), in two halves: startCombine() sends one message per
  /// split partner with this process's copies of the bodies it shares (receives posted first);
  /// finishCombine() waits and takes per split body the sum over its holders in rank order.
  void startCombine(std::span<const Vec3> velocity, std::span<const Vec3> omega, int tag);
  void finishCombine(std::span<Vec3> velocity, std::span<Vec3> omega, bool mean);
  /// Sends writer k's bytes to partners[k], receives one message from each; in_[k] reads it.
  void sendWriters(int tag, const std::vector<int>& partners);

  MPI_Comm comm_;
  MPI_Comm coupledComm_ = MPI_COMM_NULL;
  bool coupled_ = false;  ///< this process shared split bodies in the last plan
  std::uint64_t coupledCommBuilds_ = 0;
  int rank_ = 0;
  std::shared_ptr<const Topology> topology_;
  std::vector<int> neighbours_;
  unsigned period_;
  unsigned checkRatio_;
  std::unordered_map<BodyId, std::vector<int>> holders_;  ///< local body -> ranks with a copy
  std::unordered_map<BodyId, int> ownerOfRemote_;         ///< remote copy -> its owner
  // Split plan of the current step.
  std::vector<SplitBody> split_;    ///< sorted by id
  std::vector<int> splitPartners_;  ///< processes sharing split bodies with this one, increasing
  std::vector<std::uint32_t> splitSlot_;  ///< solver slot of each split body (beginSolve)
  /// Averaging: per partner (as in splitPartners_), the split bodies it shares with this process
  /// (indices into split_, in id order, the order of the records both ways), and the message
  /// buffers, sized once per plan.
  std::vector<std::vector<std::uint32_t>> averageShared_;
  std::vector<std::vector<Real>> averageSend_;
  std::vector<std::vector<Real>> averageRecv_;
  /// The copies of split body k, in holder rank order: combineCopies_[combineBegin_[k],
  /// combineBegin_[k + 1]). One flat list per plan, read at every averaging.
  std::vector<std::uint32_t> combineBegin_;
  std::vector<CopySource> combineCopies_;
  KnownSizeExchange averageExchange_;
  MpiReducer allReducer_;
  MpiReducer coupledReducer_;
  SparseExchange rebuildExchange_;  ///< setTopology: bodies to their new owners
  TrafficCounters traffic_;
  std::size_t migrated_ = 0;  ///< bodies handed over by the last setTopology
  std::vector<int> scratchRanks_;
  std::vector<std::vector<int>> heldBy_;  ///< selectContacts: processes holding each body
  // Per-step scratch kept for its storage: selectContacts' and planSplits' flags per body,
  // selectContacts' flags per contact, exchangeBodies' refreshed copies, planSplits' reports.
  std::vector<char> knownScratch_;
  std::vector<char> keepScratch_;
  std::vector<BodyId> refreshedScratch_;
  std::vector<std::pair<BodyId, int>> reportScratch_;
  std::vector<std::size_t> runScratch_;  ///< planSplits: the ordered runs of the warm-start entries
  /// Warm-start entries whose home body this process owns, from exchangeBodies() or setTopology()
  /// until planSplits() hands them on.
  std::vector<RoutedEntry> homeEntries_;
  std::unordered_map<BodyId, int> transferredTo_;  ///< last exchangeBodies(): body -> new owner
  std::vector<std::vector<RoutedEntry>> entriesOut_;
  std::unordered_map<BodyId, std::uint32_t> tags_;  ///< owned bodies' non-zero tags
  // Message buffers, reused by every exchange (no allocation per sweep in steady state).
  std::vector<ByteWriter> out_;
  std::vector<std::span<const char>> send_;
  std::vector<std::vector<char>> recv_;
  std::vector<ByteReader> in_;
};

/// True if the home body of warm-start entry `e` (the pair's smaller id if simulated, else the
/// other) is a simulated body this process owns: the entries a process keeps of a restart file.
bool holdsWarmStartHome(const BodyStorage& bodies, const detail::PercussionCacheEntry& e);

}  // namespace grain::mpi
