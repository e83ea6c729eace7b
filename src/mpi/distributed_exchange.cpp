// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>

#include <grain/core/common/error.hpp>
#include <grain/core/solvers/percussion_cache.hpp>
#include <grain/mpi/distributed_exchange.hpp>
#include <grain/mpi/messages.hpp>
#include <grain/mpi/records.hpp>

namespace grain::mpi {

namespace {

enum Tag : int { kTagBodies = 101, kTagPlanContacts, kTagPlanMultiplicity, kTagAverage, kTagSum };
/// Tags of the rebuild's sparse exchange (it alternates this tag and the next).
constexpr int kTagRebuild = 110;

/// Bounding box of a body for the overlap queries: its bounding sphere, enlarged so that rounding
/// never drops a process that holds a point of the body (contact points lie on the surface).
void bodyBox(const BodyStorage& bodies, std::size_t i, Vec3& lo, Vec3& hi) {
  const Real r = bodies.boundingRadii()[i] * (1.0 + 1e-9) + 1e-12;
  lo = bodies.positions()[i] - Vec3::Constant(r);
  hi = bodies.positions()[i] + Vec3::Constant(r);
}

BodyState stateOf(const BodyStorage& b, std::size_t i) {
  return {b.positions()[i], b.orientations()[i], b.velocities()[i], b.omegasBody()[i],
          b.orientationsStart()[i]};
}

CopyState copyStateOf(const BodyStorage& b, std::size_t i) {
  return {b.positions()[i], b.orientations()[i], b.velocities()[i], b.omegasBody()[i]};
}

void applyCopyState(BodyStorage& b, std::size_t i, const CopyState& s) {
  b.positions()[i] = s.position;
  b.orientations()[i] = s.orientation;
  b.velocities()[i] = s.velocity;
  b.omegasBody()[i] = s.omegaBody;
}

void applyState(BodyStorage& b, std::size_t i, const BodyState& s) {
  b.positions()[i] = s.position;
  b.orientations()[i] = s.orientation;
  b.velocities()[i] = s.velocity;
  b.omegasBody()[i] = s.omegaBody;
  b.orientationsStart()[i] = s.orientationStart;
}

/// A simulated body with its shape by value (processes do not share shape numbering; see
/// ShapeStore::intern).
FullBody fullBodyOf(const DynamicsSystem& system, std::size_t i) {
  const BodyStorage& b = system.bodies;
  const Shape& shape = system.shapes[b.shapes()[i]];
  if (!shapeTravels(shape)) {
    throw Error("body " + formatBodyId(b.ids()[i]) +
                ": only spheres, boxes and capsules can move between processes");
  }
  return {shape, b.materials()[i], b.masses()[i], b.inertiasBody()[i], stateOf(b, i)};
}

/// Adds (or overwrites) a body received with its full data; returns its index.
std::size_t receiveFull(DynamicsSystem& system, BodyId id, const FullBody& full,
                        BodyOwnership ownership) {
  BodyStorage& b = system.bodies;
  std::optional<std::size_t> i = b.indexOf(id);
  if (!i) {
    BodyDef d;
    d.id = id;
    d.material = full.material;
    d.mass = full.mass;
    d.inertiaBody = full.inertiaBody;
    d.shape = system.shapes.intern(full.shape);
    d.position = full.state.position;
    d.orientation = full.state.orientation;
    d.velocity = full.state.velocity;
    d.omegaBody = full.state.omegaBody;
    d.ownership = ownership;
    i = system.addBody(d);
  }
  applyState(b, *i, full.state);
  b.ownerships()[*i] = ownership;
  return *i;
}

/// Bodies that left a process leave their shapes behind (one per body for random radii): the
/// store is compacted when it holds more than twice the shapes in use, so its size stays
/// proportional to the bodies a process holds.
void compactShapesIfSparse(DynamicsSystem& system) {
  if (system.shapes.size() > 2 * system.bodies.size() + 64) {
    system.compactShapes();
  }
}

bool contains(const std::vector<int>& sorted, int value) {
  return std::binary_search(sorted.begin(), sorted.end(), value);
}

/// A well-mixed number of a body pair (splitmix64 finaliser), the same on every process.
std::uint64_t pairHash(BodyId lo, BodyId hi) {
  std::uint64_t x = lo * 0x9e3779b97f4a7c15ull + hi;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

bool holdsWarmStartHome(const BodyStorage& bodies, const detail::PercussionCacheEntry& e) {
  // Static and animated bodies are everywhere: without the smaller id the pair's simulated body
  // is held elsewhere.
  const auto routed = DistributedExchange::withHome(bodies, e);
  return routed && bodies.isSimulated(routed->second) &&
         bodies.ownerships()[routed->second] == BodyOwnership::Local;
}

std::optional<std::pair<RoutedEntry, std::size_t>> DistributedExchange::withHome(
    const BodyStorage& bodies, const detail::PercussionCacheEntry& e) {
  const std::optional<std::size_t> lo = bodies.indexOf(e.lo);
  if (!lo) {
    return std::nullopt;
  }
  const RoutedEntry r{e, !bodies.isSimulated(*lo)};
  const std::optional<std::size_t> home = r.homeIsHi ? bodies.indexOf(e.hi) : lo;
  if (!home) {
    return std::nullopt;
  }
  return std::pair{r, *home};
}

void DistributedExchange::putEntries(ByteWriter& w, const std::vector<RoutedEntry>& entries) {
  w.put(entries);
}

void DistributedExchange::getEntries(ByteReader& r, std::vector<RoutedEntry>& to) {
  const auto entries = r.get<std::vector<RoutedEntry>>();  // no allocation when empty
  to.insert(to.end(), entries.begin(), entries.end());
}

std::vector<std::vector<RoutedEntry>>& DistributedExchange::freshEntryLists(std::size_t count) {
  entriesOut_.resize(count);
  for (auto& list : entriesOut_) {
    list.clear();
  }
  return entriesOut_;
}

DistributedExchange::DistributedExchange(MPI_Comm comm, std::shared_ptr<const Topology> topology,
                                         unsigned splitNodeUpdateRatio,
                                         unsigned convergenceCheckRatio)
    : comm_(comm),
      topology_(std::move(topology)),
      period_(std::max(1u, splitNodeUpdateRatio)),
      checkRatio_(std::max(1u, convergenceCheckRatio)),
      allReducer_(comm),
      rebuildExchange_(comm, kTagRebuild) {
  allReducer_.countTimeInto(&traffic_);
  coupledReducer_.countTimeInto(&traffic_);
  int size = 0;
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size);
  GRAIN_REQUIRE(topology_ != nullptr && topology_->size() == size,
                "the domain decomposition has " +
                    std::to_string(topology_ ? topology_->size() : 0) + " domains for " +
                    std::to_string(size) + " processes");
  neighbours_ = topology_->neighbours(rank_);
}

DistributedExchange::~DistributedExchange() {
  if (coupledComm_ != MPI_COMM_NULL) {
    MPI_Comm_free(&coupledComm_);
  }
}

std::size_t DistributedExchange::partnerIndex(int rank) const {
  const auto it = std::lower_bound(neighbours_.begin(), neighbours_.end(), rank);
  return static_cast<std::size_t>(it - neighbours_.begin());
}

void DistributedExchange::requireNeighbour(int rank, BodyId id, const char* what) const {
  if (rank != rank_ && !contains(neighbours_, rank)) {
    throw Error("body " + formatBodyId(id) + " " + what + " process " + std::to_string(rank) +
                ", which is not a neighbour of process " + std::to_string(rank_) +
                ": the body is larger than a domain cell or moved farther than one cell in a "
                "step (smallest cell extent " +
                std::to_string(topology_->minCellExtent()) + " m)");
  }
}

void DistributedExchange::keepOwnedBodies(BodyStorage& bodies) {
  std::vector<BodyId> others;
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    if (bodies.isSimulated(i) && topology_->ownerOf(bodies.positions()[i]) != rank_) {
      others.push_back(bodies.ids()[i]);
    }
  }
  for (const BodyId id : others) {
    bodies.remove(id);
    tags_.erase(id);
  }
  holders_.clear();
  ownerOfRemote_.clear();
}

void DistributedExchange::setTopology(std::shared_ptr<const Topology> topology,
                                      DynamicsSystem& system,
                                      std::vector<detail::PercussionCacheEntry>& warmStart) {
  GRAIN_REQUIRE(topology != nullptr && topology->size() == size(),
                "the new domain decomposition has the wrong number of domains");
  BodyStorage& bodies = system.bodies;
  // The largest body must fit the smallest cell (checked by every process on the same data).
  Real largest = 0.0;
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    if (bodies.isSimulated(i) && bodies.ownerships()[i] == BodyOwnership::Local) {
      largest = std::max(largest, 2.0 * bodies.boundingRadii()[i]);
    }
  }
  allReducer_.max(std::span<Real>(&largest, 1));
  if (size() > 1 && largest > topology->minCellExtent()) {
    throw Error("the new domain decomposition has a cell of " +
                std::to_string(topology->minCellExtent()) +
                " m, smaller than the largest simulated body (" + std::to_string(largest) + " m)");
  }
  // What goes to each new owner: warm-start entries and body records, kept only for the
  // processes that get something (a map, not an array over all processes).
  struct Outgoing {
    std::vector<RoutedEntry> entries;
    ByteWriter bodies;
  };
  std::map<int, Outgoing> outgoing;
  // Warm start: every entry goes to the new owner of its home body (while remote copies still
  // give the home body's position).
  std::vector<RoutedEntry> kept;
  auto route = [&](const RoutedEntry& r) {
    const std::optional<std::size_t> h = bodies.indexOf(r.home());
    if (!h) {
      return;
    }
    const int owner = topology->ownerOf(bodies.positions()[*h]);
    (owner == rank_ ? kept : outgoing[owner].entries).push_back(r);
  };
  for (const detail::PercussionCacheEntry& e : warmStart) {
    if (const auto routed = withHome(bodies, e)) {
      route(routed->first);
    }
  }
  for (const RoutedEntry& r : homeEntries_) {
    route(r);
  }
  warmStart.clear();
  homeEntries_.swap(kept);

  std::vector<BodyId> remote;
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    if (bodies.ownerships()[i] == BodyOwnership::Remote) {
      remote.push_back(bodies.ids()[i]);
    }
  }
  for (const BodyId id : remote) {
    bodies.remove(id);
  }
  topology_ = std::move(topology);
  neighbours_ = topology_->neighbours(rank_);
  holders_.clear();
  ownerOfRemote_.clear();
  split_.clear();
  splitPartners_.clear();

  std::vector<BodyId> leaving;
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    if (!bodies.isSimulated(i)) {
      continue;
    }
    const int owner = topology_->ownerOf(bodies.positions()[i]);
    if (owner != rank_) {
      outgoing[owner].bodies.put(
          HandoverRecord{bodies.ids()[i], fullBodyOf(system, i), takeTag(bodies.ids()[i])});
      leaving.push_back(bodies.ids()[i]);
    }
  }
  migrated_ = leaving.size();
  for (const BodyId id : leaving) {
    bodies.remove(id);
  }
  // One message per new owner (the warm-start entries, a count first, then the bodies), in a
  // sparse exchange: the cost grows with the processes that trade bodies, not with all of them.
  std::vector<int> destinations;
  std::vector<std::vector<char>> send;
  for (auto& [rank, o] : outgoing) {
    ByteWriter w;
    putEntries(w, o.entries);
    w.bytes().insert(w.bytes().end(), o.bodies.bytes().begin(), o.bodies.bytes().end());
    destinations.push_back(rank);
    send.push_back(std::move(w.bytes()));
  }
  outgoing.clear();
  std::vector<ReceivedMessage> received;
  rebuildExchange_.exchange(destinations, send, received, traffic_);
  send.clear();
  for (const ReceivedMessage& m : received) {
    ByteReader r(m.bytes);
    getEntries(r, homeEntries_);
    while (!r.done()) {
      const auto handover = r.get<HandoverRecord>();
      receiveFull(system, handover.id, handover.body, BodyOwnership::Local);
      giveTag(handover.id, handover.tag);
    }
  }
  bodies.sortById();
  compactShapesIfSparse(system);
}

void DistributedExchange::exchangeBodies(DynamicsSystem& system,
                                         std::vector<detail::PercussionCacheEntry>& warmStart) {
  BodyStorage& bodies = system.bodies;
  std::vector<ByteWriter>& out = freshWriters(neighbours_.size());
  auto to = [&](int rank) -> ByteWriter& { return out[partnerIndex(rank)]; };
  // Warm start, first leg: the entries of the contacts solved here go to the owner of their home
  // body, ahead of the body records.
  std::vector<std::vector<RoutedEntry>>& entries = freshEntryLists(neighbours_.size());
  for (const detail::PercussionCacheEntry& e : warmStart) {
    const auto routed = withHome(bodies, e);
    if (!routed) {
      continue;
    }
    const auto& [r, h] = *routed;
    if (bodies.ownerships()[h] == BodyOwnership::Local) {
      homeEntries_.push_back(r);
    } else {
      entries[partnerIndex(ownerOfRemote_.at(r.home()))].push_back(r);
    }
  }
  warmStart.clear();
  for (std::size_t k = 0; k < neighbours_.size(); ++k) {
    putEntries(out[k], entries[k]);
  }
  transferredTo_.clear();
  std::vector<BodyId> turnRemote;
  std::vector<int> turnRemoteOwner;
  std::vector<BodyId> drop;
  std::vector<int>& overlapped = scratchRanks_;
  std::vector<int> targets;
  const std::vector<int> none;
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    if (!bodies.isSimulated(i) || bodies.ownerships()[i] != BodyOwnership::Local) {
      continue;
    }
    const BodyId id = bodies.ids()[i];
    const Vec3& position = bodies.positions()[i];
    if (!position.allFinite()) {
      throw Error("body " + formatBodyId(id) + " has a non-finite position on process " +
                  std::to_string(rank_));
    }
    Vec3 lo, hi;
    bodyBox(bodies, i, lo, hi);
    overlapped.clear();
    int owner = rank_;
    if (topology_->insideDomain(rank_, lo, hi)) {  // deep inside: stays, no copies
      overlapped.push_back(rank_);
    } else {
      owner = topology_->ownerOf(position);
      requireNeighbour(owner, id, "moved into the domain of");
      topology_->ranksOverlapping(lo, hi, overlapped);
    }
    targets.clear();
    for (const int r : overlapped) {
      if (r != owner) {
        requireNeighbour(r, id, "overlaps");
        targets.push_back(r);
      }
    }
    const auto found = holders_.find(id);
    const std::vector<int>& old = found == holders_.end() ? none : found->second;
    for (const int r : targets) {
      if (r == rank_) {
        continue;
      }
      if (contains(old, r)) {
        putBodyRecord(to(r), UpdateRecord{id, owner, copyStateOf(bodies, i)});
      } else {
        putBodyRecord(to(r), NotifyRecord{id, owner, fullBodyOf(system, i)});
      }
    }
    for (const int r : old) {
      if (!contains(targets, r) && r != owner) {
        putBodyRecord(to(r), RemoveRecord{id});
      }
    }
    if (owner == rank_) {
      if (targets.empty()) {
        if (found != holders_.end()) {
          holders_.erase(found);
        }
      } else {
        holders_[id] = targets;
      }
      continue;
    }
    // Ownership moves to the neighbour `owner`, with the list of processes holding copies.
    transferredTo_[id] = owner;
    putBodyRecord(to(owner), TransferRecord{{id, fullBodyOf(system, i), takeTag(id)}, targets});
    if (found != holders_.end()) {
      holders_.erase(found);
    }
    if (contains(targets, rank_)) {
      turnRemote.push_back(id);
      turnRemoteOwner.push_back(owner);
    } else {
      drop.push_back(id);
    }
  }
  for (std::size_t k = 0; k < turnRemote.size(); ++k) {
    bodies.ownerships()[*bodies.indexOf(turnRemote[k])] = BodyOwnership::Remote;
    ownerOfRemote_[turnRemote[k]] = turnRemoteOwner[k];
  }
  for (const BodyId id : drop) {
    bodies.remove(id);
  }

  sendWriters(kTagBodies, neighbours_);

  std::vector<BodyId>& refreshed = refreshedScratch_;  // remote copies updated by their owners
  refreshed.clear();
  for (std::size_t k = 0; k < in_.size(); ++k) {
    ByteReader& r = in_[k];
    getEntries(r, homeEntries_);
    while (!r.done()) {
      const auto kind = r.get<BodyRecordKind>();
      switch (kind) {
        case BodyRecordKind::Notify: {
          const auto notify = r.get<NotifyRecord>();
          receiveFull(system, notify.id, notify.body, BodyOwnership::Remote);
          ownerOfRemote_[notify.id] = notify.owner;
          refreshed.push_back(notify.id);
          break;
        }
        case BodyRecordKind::Update: {
          const auto update = r.get<UpdateRecord>();
          const auto i = bodies.indexOf(update.id);
          if (!i || bodies.ownerships()[*i] != BodyOwnership::Remote) {
            throw Error("process " + std::to_string(rank_) + " received an update for body " +
                        formatBodyId(update.id) + ", of which it holds no copy");
          }
          applyCopyState(bodies, *i, update.state);
          ownerOfRemote_[update.id] = update.owner;
          refreshed.push_back(update.id);
          break;
        }
        case BodyRecordKind::Remove: {
          const BodyId id = r.get<RemoveRecord>().id;
          const auto i = bodies.indexOf(id);
          if (i && bodies.ownerships()[*i] == BodyOwnership::Remote) {
            bodies.remove(id);
            ownerOfRemote_.erase(id);
          }
          break;
        }
        case BodyRecordKind::Transfer: {
          auto transfer = r.get<TransferRecord>();
          const HandoverRecord& handover = transfer.handover;
          receiveFull(system, handover.id, handover.body, BodyOwnership::Local);
          ownerOfRemote_.erase(handover.id);
          std::vector<int>& holders = transfer.holders;
          holders.erase(std::remove(holders.begin(), holders.end(), rank_), holders.end());
          if (!holders.empty()) {
            holders_[handover.id] = std::move(holders);
          }
          giveTag(handover.id, handover.tag);
          break;
        }
        default:
          throw Error("process " + std::to_string(rank_) + " received a message of unknown kind " +
                      std::to_string(static_cast<int>(kind)) + " from process " +
                      std::to_string(neighbours_[k]));
      }
    }
  }
  // Every remote copy this process keeps must have been refreshed by its owner (or have been
  // local here until this exchange).
  std::sort(turnRemote.begin(), turnRemote.end());
  std::sort(refreshed.begin(), refreshed.end());
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    if (bodies.ownerships()[i] == BodyOwnership::Remote && bodies.isSimulated(i) &&
        !std::binary_search(refreshed.begin(), refreshed.end(), bodies.ids()[i]) &&
        !std::binary_search(turnRemote.begin(), turnRemote.end(), bodies.ids()[i])) {
      throw Error("process " + std::to_string(rank_) + ": remote copy of body " +
                  formatBodyId(bodies.ids()[i]) + " was not updated by its owner");
    }
  }
  compactShapesIfSparse(system);
}

void DistributedExchange::selectContacts(const BodyStorage& bodies, ContactStorage& contacts) {
  // Every contact is solved by exactly one process that holds both bodies, chosen by a rule that
  // every such process evaluates alike (same bits, same owners):
  //   - with a static or animated body (held everywhere): the simulated body's owner;
  //   - two bodies with one owner: that owner (it holds both; nothing is split);
  //   - two owners: one that holds the other body too, by a hash of the pair if both do, so
  //     that the contacts across a domain boundary divide evenly between its two sides;
  //   - else the lowest process holding both (their boxes touch, so one exists).
  // A simulated body is held by exactly the processes its box overlaps, its owner among them.
  // planSplits' last warm-start leg relies on the first two rules (such contacts stay with their
  // owner, which keeps their entries); mpi.distributed_run's warm-start count checks it.
  std::vector<std::vector<int>>& held = heldBy_;
  held.resize(bodies.size());
  std::vector<char>& known = knownScratch_;
  known.assign(bodies.size(), 0);
  auto holders = [&](std::uint32_t i) -> const std::vector<int>& {
    if (known[i] == 0) {
      known[i] = 1;
      held[i].clear();
      Vec3 lo, hi;
      bodyBox(bodies, i, lo, hi);
      if (topology_->insideDomain(rank_, lo, hi)) {
        held[i].push_back(rank_);
      } else {
        topology_->ranksOverlapping(lo, hi, held[i]);
      }
    }
    return held[i];
  };
  auto owner = [&](std::uint32_t i) {
    return bodies.ownerships()[i] == BodyOwnership::Local ? rank_
                                                          : ownerOfRemote_.at(bodies.ids()[i]);
  };
  std::vector<char>& keep = keepScratch_;
  keep.assign(contacts.size(), 0);
  for (std::size_t c = 0; c < contacts.size(); ++c) {
    const std::uint32_t a = contacts.bodyA()[c];
    const std::uint32_t b = contacts.bodyB()[c];
    int handler = -1;
    if (!bodies.isSimulated(a) || !bodies.isSimulated(b)) {
      handler = owner(bodies.isSimulated(a) ? a : b);
    } else if (const int oa = owner(a), ob = owner(b); oa == ob) {
      handler = oa;
    } else {
      const bool aSide = contains(holders(b), oa);
      const bool bSide = contains(holders(a), ob);
      if (aSide && bSide) {
        const BodyId lo = std::min(bodies.ids()[a], bodies.ids()[b]);
        const BodyId hi = std::max(bodies.ids()[a], bodies.ids()[b]);
        const bool loSide = (pairHash(lo, hi) & 1u) == 0;
        handler = loSide == (bodies.ids()[a] == lo) ? oa : ob;
      } else if (aSide || bSide) {
        handler = aSide ? oa : ob;
      } else {
        const std::vector<int>& ha = holders(a);
        const std::vector<int>& hb = holders(b);
        for (auto x = ha.begin(), y = hb.begin(); x != ha.end() && y != hb.end();) {
          if (*x == *y) {
            handler = *x;
            break;
          }
          (*x < *y) ? ++x : ++y;
        }
      }
    }
    keep[c] = handler == rank_ ? 1 : 0;
  }
  contacts.keepOnly(keep);
}

void DistributedExchange::planSplits(const BodyStorage& bodies, const ContactStorage& contacts,
                                     std::vector<std::uint32_t>& multiplicity,
                                     std::vector<detail::PercussionCacheEntry>& warmStart) {
  multiplicity.assign(bodies.size(), 1);
  // Remote bodies with contacts here, reported to their owners.
  std::vector<char>& inContact = knownScratch_;
  inContact.assign(bodies.size(), 0);
  for (std::size_t c = 0; c < contacts.size(); ++c) {
    inContact[contacts.bodyA()[c]] = 1;
    inContact[contacts.bodyB()[c]] = 1;
  }
  std::vector<ByteWriter>& out = freshWriters(neighbours_.size());
  // Warm start, second leg: entries whose home body this process gave away in the exchange go to
  // its new owner; those of bodies that left every domain are dropped. Without a handover in the
  // exchange (most steps) every home body is still owned here, and nothing is routed.
  {
    std::vector<std::vector<RoutedEntry>>& entries = freshEntryLists(neighbours_.size());
    if (!transferredTo_.empty()) {
      std::size_t kept = 0;  // the kept entries move to the front, in their order
      for (std::size_t e = 0; e < homeEntries_.size(); ++e) {
        const RoutedEntry r = homeEntries_[e];
        if (const auto moved = transferredTo_.find(r.home()); moved != transferredTo_.end()) {
          entries[partnerIndex(moved->second)].push_back(r);
        } else if (const std::optional<std::size_t> h = bodies.indexOf(r.home());
                   h && bodies.ownerships()[*h] == BodyOwnership::Local) {
          homeEntries_[kept++] = r;
        }
      }
      homeEntries_.resize(kept);
    }
    for (std::size_t k = 0; k < neighbours_.size(); ++k) {
      putEntries(out[k], entries[k]);
    }
  }
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    if (inContact[i] != 0 && bodies.isSimulated(i) &&
        bodies.ownerships()[i] == BodyOwnership::Remote) {
      out[partnerIndex(ownerOfRemote_.at(bodies.ids()[i]))].put(ContactReport{bodies.ids()[i]});
    }
  }
  sendWriters(kTagPlanContacts, neighbours_);

  // Owner: the processes holding each split local body (itself included, increasing rank order),
  // sent to every other holder with the body's id.
  std::vector<std::pair<BodyId, int>>& reports = reportScratch_;  // (body, process with contacts)
  reports.clear();
  for (std::size_t k = 0; k < in_.size(); ++k) {
    ByteReader& r = in_[k];
    getEntries(r, homeEntries_);
    while (!r.done()) {
      reports.emplace_back(r.get<ContactReport>().id, neighbours_[k]);
    }
  }
  std::sort(reports.begin(), reports.end());
  split_.clear();
  for (std::size_t at = 0; at < reports.size();) {
    const BodyId id = reports[at].first;
    SplitBody& body = split_.emplace_back(SplitBody{id, true, {rank_}});
    for (; at < reports.size() && reports[at].first == id; ++at) {
      body.holders.push_back(reports[at].second);
    }
    std::sort(body.holders.begin(), body.holders.end());
  }
  freshWriters(neighbours_.size());
  // Warm start, last leg: the owner sends the entries of its bodies to every process holding a
  // copy, but only those another process may solve. By selectContacts' rule, a contact with a
  // static or animated body, or between two bodies owned by one process, is solved by that
  // owner, here; only a contact whose other body is owned elsewhere (or not held here) may be
  // solved by another holder.
  {
    std::vector<std::vector<RoutedEntry>>& entries = freshEntryLists(neighbours_.size());
    for (const RoutedEntry& r : homeEntries_) {
      const auto copies = holders_.find(r.home());
      if (copies == holders_.end() || r.homeIsHi) {  // homeIsHi: the other body is static
        continue;
      }
      if (const std::optional<std::size_t> other = bodies.indexOf(r.entry.hi);
          other &&
          (!bodies.isSimulated(*other) || bodies.ownerships()[*other] == BodyOwnership::Local)) {
        continue;
      }
      for (const int rank : copies->second) {
        entries[partnerIndex(rank)].push_back(r);
      }
    }
    for (std::size_t k = 0; k < neighbours_.size(); ++k) {
      putEntries(out[k], entries[k]);
    }
  }
  for (const SplitBody& s : split_) {
    const auto i = bodies.indexOf(s.id);
    GRAIN_REQUIRE(i.has_value() && bodies.ownerships()[*i] == BodyOwnership::Local,
                  "process " + std::to_string(rank_) + " was told of contacts on body " +
                      formatBodyId(s.id) + ", which it does not own");
    multiplicity[*i] = static_cast<std::uint32_t>(s.holders.size());
    const SplitHolders record{s.id, s.holders};
    for (const int r : s.holders) {
      if (r != rank_) {
        out[partnerIndex(r)].put(record);
      }
    }
  }
  sendWriters(kTagPlanMultiplicity, neighbours_);
  std::vector<RoutedEntry> received;
  for (std::size_t k = 0; k < in_.size(); ++k) {
    ByteReader& r = in_[k];
    getEntries(r, received);
    while (!r.done()) {
      auto record = r.get<SplitHolders>();
      const auto i = bodies.indexOf(record.id);
      GRAIN_REQUIRE(i.has_value(), "process " + std::to_string(rank_) +
                                       " received the multiplicity of unknown body " +
                                       formatBodyId(record.id));
      multiplicity[*i] = static_cast<std::uint32_t>(record.holders.size());
      split_.push_back({record.id, false, std::move(record.holders)});
    }
  }
  warmStart.clear();
  for (const std::vector<RoutedEntry>* list : {&homeEntries_, &received}) {
    for (const RoutedEntry& r : *list) {
      warmStart.push_back(r.entry);
    }
  }
  homeEntries_.clear();
  // The solver merges the cache with its sorted contact keys, so the cache must be sorted. It is
  // made of ordered runs: this process's own entries, most of them, in the order of its last
  // (sorted) cache, then each sender's, which it sent in the same order. The short runs after the
  // first are merged pairwise among themselves (O(m log runs) for their m entries), then once with
  // the first, instead of a sort. (A lambda, not the function's address, so that the merges inline
  // the comparison.)
  const auto less = [](const detail::PercussionCacheEntry& a,
                       const detail::PercussionCacheEntry& b) {
    return detail::cacheEntryLess(a, b);
  };
  const auto first = warmStart.begin();
  const auto at = [&](std::size_t offset) { return first + static_cast<std::ptrdiff_t>(offset); };
  std::vector<std::size_t>& runs = runScratch_;  // the start of every ordered run after the first
  runs.clear();
  for (auto run = std::is_sorted_until(first, warmStart.end(), less); run != warmStart.end();
       run = std::is_sorted_until(run, warmStart.end(), less)) {
    runs.push_back(static_cast<std::size_t>(run - first));
  }
  if (!runs.empty()) {
    const std::size_t tail = runs.front();
    while (runs.size() > 1) {
      std::size_t kept = 0;
      for (std::size_t r = 0; r < runs.size(); r += 2) {
        if (r + 1 < runs.size()) {
          const std::size_t end = r + 2 < runs.size() ? runs[r + 2] : warmStart.size();
          std::inplace_merge(at(runs[r]), at(runs[r + 1]), at(end), less);
        }
        runs[kept++] = runs[r];
      }
      runs.resize(kept);
    }
    std::inplace_merge(first, at(tail), warmStart.end(), less);
  }
  std::sort(split_.begin(), split_.end(),
            [](const SplitBody& a, const SplitBody& b) { return a.id < b.id; });
  splitPartners_.clear();
  for (const SplitBody& s : split_) {
    for (const int r : s.holders) {
      if (r != rank_) {
        splitPartners_.push_back(r);
      }
    }
  }
  std::sort(splitPartners_.begin(), splitPartners_.end());
  splitPartners_.erase(std::unique(splitPartners_.begin(), splitPartners_.end()),
                       splitPartners_.end());
  // Positions in splitPartners_ and in the averaging messages, once per plan (the averaging uses
  // them every sweep). split_ is in id order on every holder, so a partner lists the bodies it
  // shares with this process in the same order.
  averageShared_.resize(splitPartners_.size());
  for (std::vector<std::uint32_t>& shared : averageShared_) {
    shared.clear();  // keeps its storage for the next plan
  }
  combineBegin_.assign(1, 0);
  combineCopies_.clear();
  for (std::size_t k = 0; k < split_.size(); ++k) {
    for (const int r : split_[k].holders) {
      if (r == rank_) {
        combineCopies_.push_back({kSelf, 0});
        continue;
      }
      const auto p = static_cast<std::uint32_t>(
          std::lower_bound(splitPartners_.begin(), splitPartners_.end(), r) -
          splitPartners_.begin());
      combineCopies_.push_back(
          {p, static_cast<std::uint32_t>(averageShared_[p].size() * SplitVelocity::kReals)});
      averageShared_[p].push_back(static_cast<std::uint32_t>(k));
    }
    combineBegin_.push_back(static_cast<std::uint32_t>(combineCopies_.size()));
  }
  averageSend_.resize(splitPartners_.size());
  averageRecv_.resize(splitPartners_.size());
  for (std::size_t p = 0; p < splitPartners_.size(); ++p) {
    averageSend_[p].resize(averageShared_[p].size() * SplitVelocity::kReals);
    averageRecv_[p].resize(averageShared_[p].size() * SplitVelocity::kReals);
  }
  // The coupled processes decide convergence together; the others iterate on their own. Their
  // communicator is split off again only when a process's coupling changed: one allreduce of a
  // flag per step (log P), where MPI_Comm_split gathers every process's colour (P entries).
  // The flag goes through allReducer_, which counts it and its time like every reduction.
  const bool coupled = !splitPartners_.empty();
  const bool unchanged = allReducer_.allTrue(coupledCommBuilds_ > 0 && coupled == coupled_);
  coupled_ = coupled;
  if (unchanged) {
    return;
  }
  const double start = MPI_Wtime();
  if (coupledComm_ != MPI_COMM_NULL) {
    MPI_Comm_free(&coupledComm_);
  }
  MPI_Comm_split(comm_, coupled ? 0 : MPI_UNDEFINED, rank_, &coupledComm_);
  coupledReducer_.setCommunicator(coupledComm_);
  ++coupledCommBuilds_;
  const double splitSeconds = MPI_Wtime() - start;
  traffic_.seconds += splitSeconds;
  traffic_.collectiveSeconds += splitSeconds;
}

bool DistributedExchange::beginSolve(const BodyStorage& bodies,
                                     std::span<const std::uint32_t> storageIndex) {
  std::vector<std::uint32_t> slotOf(bodies.size(), UINT32_MAX);
  for (std::size_t k = 0; k < storageIndex.size(); ++k) {
    slotOf[storageIndex[k]] = static_cast<std::uint32_t>(k);
  }
  auto slot = [&](BodyId id) {
    const auto i = bodies.indexOf(id);
    GRAIN_REQUIRE(i.has_value() && slotOf[*i] != UINT32_MAX,
                  "split body " + formatBodyId(id) + " is not in the solve");
    return slotOf[*i];
  };
  splitSlot_.clear();
  for (const SplitBody& s : split_) {
    splitSlot_.push_back(slot(s.id));
  }
  return !splitPartners_.empty();
}

void DistributedExchange::average(std::span<Vec3> velocity, std::span<Vec3> omega) {
  startCombine(velocity, omega, kTagAverage);
  finishCombine(velocity, omega, true);
}

void DistributedExchange::startAverage(std::span<const Vec3> velocity,
                                       std::span<const Vec3> omega) {
  startCombine(velocity, omega, kTagAverage);
}

void DistributedExchange::finishAverage(std::span<Vec3> velocity, std::span<Vec3> omega) {
  finishCombine(velocity, omega, true);
}

void DistributedExchange::sum(std::span<Vec3> linear, std::span<Vec3> angular) {
  startCombine(linear, angular, kTagSum);
  finishCombine(linear, angular, false);
}

void DistributedExchange::startCombine(std::span<const Vec3> velocity, std::span<const Vec3> omega,
                                       int tag) {
  // One round: every holder sends its copy to the other holders, in id order, and every holder
  // takes the sum (or the mean) over the holders in rank order, so all copies end with the same
  // bits.
  for (std::size_t p = 0; p < averageShared_.size(); ++p) {
    Real* to = averageSend_[p].data();
    for (const std::uint32_t k : averageShared_[p]) {
      const std::uint32_t slot = splitSlot_[k];
      SplitVelocity{velocity[slot], omega[slot]}.store(to);
      to += SplitVelocity::kReals;
    }
  }
  averageExchange_.start(comm_, tag, splitPartners_, averageSend_, averageRecv_, traffic_);
}

void DistributedExchange::finishCombine(std::span<Vec3> velocity, std::span<Vec3> omega,
                                        bool mean) {
  averageExchange_.finish(traffic_);
  const CopySource* copies = combineCopies_.data();
  for (std::size_t k = 0; k < split_.size(); ++k) {
    const std::uint32_t slot = splitSlot_[k];
    Vec3 v = Vec3::Zero();
    Vec3 w = Vec3::Zero();
    const std::uint32_t begin = combineBegin_[k];
    const std::uint32_t end = combineBegin_[k + 1];
    if (end - begin == 2) {
      // Two holders, most split bodies: (0 + x) + y equals (0 + y) + x to the bit, so this
      // process's copy may come first whatever the ranks' order.
      const CopySource& other = copies[begin].partner == kSelf ? copies[begin + 1] : copies[begin];
      const SplitVelocity copy =
          SplitVelocity::load(averageRecv_[other.partner].data() + other.offset);
      v = (v + velocity[slot]) + copy.velocity;
      w = (w + omega[slot]) + copy.omega;
      if (mean) {
        v *= 0.5;
        w *= 0.5;
      }
      velocity[slot] = v;
      omega[slot] = w;
      continue;
    }
    for (std::uint32_t h = begin; h < end; ++h) {
      if (copies[h].partner == kSelf) {
        v += velocity[slot];
        w += omega[slot];
      } else {
        const SplitVelocity copy =
            SplitVelocity::load(averageRecv_[copies[h].partner].data() + copies[h].offset);
        v += copy.velocity;
        w += copy.omega;
      }
    }
    if (mean) {
      const Real inv = 1.0 / static_cast<Real>(end - begin);
      v *= inv;
      w *= inv;
    }
    velocity[slot] = v;
    omega[slot] = w;
  }
}

std::vector<ByteWriter>& DistributedExchange::freshWriters(std::size_t count) {
  out_.resize(count);
  for (ByteWriter& w : out_) {
    w.clear();
  }
  return out_;
}

void DistributedExchange::sendWriters(int tag, const std::vector<int>& partners) {
  // Sent from the writers' own storage, which stays with them for the next message.
  send_.resize(partners.size());
  for (std::size_t k = 0; k < partners.size(); ++k) {
    send_[k] = out_[k].message();
  }
  exchangeWithPartners(comm_, tag, partners, send_, recv_, traffic_);
  in_.clear();
  for (const std::vector<char>& bytes : recv_) {
    in_.emplace_back(bytes);
  }
}

}  // namespace grain::mpi
