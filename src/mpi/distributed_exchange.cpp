// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>

#include <grain/core/common/error.hpp>
#include <grain/core/solvers/percussion_cache.hpp>
#include <grain/mpi/distributed_exchange.hpp>
#include <grain/mpi/messages.hpp>

namespace grain::mpi {

namespace {

enum Tag : int { kTagBodies = 101, kTagPlanContacts, kTagPlanMultiplicity, kTagAverage };
/// Tags of the rebuild's sparse exchange (it alternates this tag and the next).
constexpr int kTagRebuild = 110;

enum class Record : std::uint8_t { Notify = 1, Update = 2, Remove = 3, Transfer = 4 };

/// Bounding box of a body for the overlap queries: its bounding sphere, enlarged so that rounding
/// never drops a process that holds a point of the body (contact points lie on the surface).
void bodyBox(const BodyStorage& bodies, std::size_t i, Vec3& lo, Vec3& hi) {
  const Real r = bodies.boundingRadii()[i] * (1.0 + 1e-9) + 1e-12;
  lo = bodies.positions()[i] - Vec3::Constant(r);
  hi = bodies.positions()[i] + Vec3::Constant(r);
}

void putState(ByteWriter& w, const BodyStorage& b, std::size_t i) {
  w.put(b.positions()[i]);
  w.put(b.orientations()[i]);
  w.put(b.velocities()[i]);
  w.put(b.omegasBody()[i]);
  w.put(b.orientationsStart()[i]);
}

/// A simulated body's shape by value: its type, then its values (processes do not share shape
/// numbering; see ShapeStore::intern).
void putShape(ByteWriter& w, const Shape& shape, BodyId id) {
  w.put(static_cast<std::uint8_t>(shape.index()));
  if (const auto* s = std::get_if<Sphere>(&shape)) {
    w.put(s->radius);
  } else if (const auto* b = std::get_if<Box>(&shape)) {
    w.put(b->halfExtent);
    w.put(b->center);
  } else if (const auto* c = std::get_if<Capsule>(&shape)) {
    w.put(c->axis);
    w.put(c->radius);
    w.put(c->length);
  } else {
    throw Error("body " + formatBodyId(id) +
                ": only spheres, boxes and capsules can move between processes");
  }
}

Shape getShape(ByteReader& r, BodyId id) {
  const auto type = static_cast<ShapeType>(r.get<std::uint8_t>());
  switch (type) {
    case ShapeType::Sphere:
      return Sphere{r.get<Real>()};
    case ShapeType::Box: {
      Box b;
      b.halfExtent = r.get<Vec3>();
      b.center = r.get<Vec3>();
      return b;
    }
    case ShapeType::Capsule: {
      Capsule c;
      c.axis = r.get<Vec3>();
      c.radius = r.get<Real>();
      c.length = r.get<Real>();
      return c;
    }
    default:
      throw Error("body " + formatBodyId(id) + " arrived with an unknown shape type");
  }
}

void putFull(ByteWriter& w, const DynamicsSystem& system, std::size_t i) {
  const BodyStorage& b = system.bodies;
  putShape(w, system.shapes[b.shapes()[i]], b.ids()[i]);
  w.put(b.materials()[i]);
  w.put(b.masses()[i]);
  w.put(b.inertiasBody()[i]);
  putState(w, b, i);
}

struct State {
  Vec3 position, velocity, omegaBody;
  Quat orientation, orientationStart;
};

State getState(ByteReader& r) {
  State s;
  s.position = r.get<Vec3>();
  s.orientation = r.get<Quat>();
  s.velocity = r.get<Vec3>();
  s.omegaBody = r.get<Vec3>();
  s.orientationStart = r.get<Quat>();
  return s;
}

void applyState(BodyStorage& b, std::size_t i, const State& s) {
  b.positions()[i] = s.position;
  b.orientations()[i] = s.orientation;
  b.velocities()[i] = s.velocity;
  b.omegasBody()[i] = s.omegaBody;
  b.orientationsStart()[i] = s.orientationStart;
}

/// Adds (or overwrites) a body received with its full data; returns its index.
std::size_t receiveFull(DynamicsSystem& system, ByteReader& r, BodyId id, BodyOwnership ownership) {
  BodyDef d;
  d.id = id;
  const Shape shape = getShape(r, id);
  d.material = r.get<MaterialId>();
  d.mass = r.get<Real>();
  d.inertiaBody = r.get<Vec3>();
  const State s = getState(r);
  BodyStorage& b = system.bodies;
  std::optional<std::size_t> i = b.indexOf(id);
  if (!i) {
    d.shape = system.shapes.intern(shape);
    d.position = s.position;
    d.orientation = s.orientation;
    d.velocity = s.velocity;
    d.omegaBody = s.omegaBody;
    d.ownership = ownership;
    i = system.addBody(d);
  }
  applyState(b, *i, s);
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

}  // namespace

bool holdsWarmStartHome(const BodyStorage& bodies, const detail::PercussionCacheEntry& e) {
  // Static and animated bodies are everywhere: without the smaller id the pair's simulated body
  // is held elsewhere.
  const auto routed = DistributedExchange::withHome(bodies, e);
  return routed && bodies.isSimulated(routed->second) &&
         bodies.ownerships()[routed->second] == BodyOwnership::Local;
}

std::optional<std::pair<DistributedExchange::RoutedEntry, std::size_t>>
DistributedExchange::withHome(const BodyStorage& bodies, const detail::PercussionCacheEntry& e) {
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
  w.put(static_cast<std::uint32_t>(entries.size()));
  for (const RoutedEntry& r : entries) {
    w.put(r.entry.lo);
    w.put(r.entry.hi);
    w.put(r.entry.ordinal);
    w.put(r.entry.percussionOnHi);
    w.put(static_cast<std::uint8_t>(r.homeIsHi ? 1 : 0));
  }
}

void DistributedExchange::getEntries(ByteReader& r, std::vector<RoutedEntry>& to) {
  const auto n = r.get<std::uint32_t>();
  for (std::uint32_t k = 0; k < n; ++k) {
    RoutedEntry e;
    e.entry.lo = r.get<BodyId>();
    e.entry.hi = r.get<BodyId>();
    e.entry.ordinal = r.get<std::uint32_t>();
    e.entry.percussionOnHi = r.get<Vec3>();
    e.homeIsHi = r.get<std::uint8_t>() != 0;
    to.push_back(e);
  }
}

std::vector<std::vector<DistributedExchange::RoutedEntry>>& DistributedExchange::freshEntryLists(
    std::size_t count) {
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
      ByteWriter& w = outgoing[owner].bodies;
      w.put(bodies.ids()[i]);
      putFull(w, system, i);
      w.put(takeTag(bodies.ids()[i]));
      leaving.push_back(bodies.ids()[i]);
    }
  }
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
      const auto id = r.get<BodyId>();
      receiveFull(system, r, id, BodyOwnership::Local);
      giveTag(id, r.get<std::uint32_t>());
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
    const int owner = topology_->ownerOf(position);
    requireNeighbour(owner, id, "moved into the domain of");
    Vec3 lo, hi;
    bodyBox(bodies, i, lo, hi);
    overlapped.clear();
    topology_->ranksOverlapping(lo, hi, overlapped);
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
      ByteWriter& w = to(r);
      const bool update = contains(old, r);
      w.put(update ? Record::Update : Record::Notify);
      w.put(id);
      w.put(owner);
      if (update) {
        putState(w, bodies, i);
      } else {
        putFull(w, system, i);
      }
    }
    for (const int r : old) {
      if (!contains(targets, r) && r != owner) {
        ByteWriter& w = to(r);
        w.put(Record::Remove);
        w.put(id);
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
    ByteWriter& w = to(owner);
    w.put(Record::Transfer);
    w.put(id);
    putFull(w, system, i);
    w.put(static_cast<std::uint32_t>(targets.size()));
    for (const int r : targets) {
      w.put(r);
    }
    w.put(takeTag(id));
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

  std::unordered_map<BodyId, int> updatedRemote;
  for (std::size_t k = 0; k < in_.size(); ++k) {
    ByteReader& r = in_[k];
    getEntries(r, homeEntries_);
    while (!r.done()) {
      const auto kind = r.get<Record>();
      const auto id = r.get<BodyId>();
      switch (kind) {
        case Record::Notify: {
          const int owner = r.get<int>();
          receiveFull(system, r, id, BodyOwnership::Remote);
          ownerOfRemote_[id] = owner;
          updatedRemote[id] = owner;
          break;
        }
        case Record::Update: {
          const int owner = r.get<int>();
          const State s = getState(r);
          const auto i = bodies.indexOf(id);
          if (!i || bodies.ownerships()[*i] != BodyOwnership::Remote) {
            throw Error("process " + std::to_string(rank_) + " received an update for body " +
                        formatBodyId(id) + ", of which it holds no copy");
          }
          applyState(bodies, *i, s);
          ownerOfRemote_[id] = owner;
          updatedRemote[id] = owner;
          break;
        }
        case Record::Remove: {
          const auto i = bodies.indexOf(id);
          if (i && bodies.ownerships()[*i] == BodyOwnership::Remote) {
            bodies.remove(id);
            ownerOfRemote_.erase(id);
          }
          break;
        }
        case Record::Transfer: {
          receiveFull(system, r, id, BodyOwnership::Local);
          ownerOfRemote_.erase(id);
          const auto n = r.get<std::uint32_t>();
          std::vector<int> holders;
          for (std::uint32_t h = 0; h < n; ++h) {
            const int rank = r.get<int>();
            if (rank != rank_) {
              holders.push_back(rank);
            }
          }
          if (!holders.empty()) {
            holders_[id] = std::move(holders);
          }
          giveTag(id, r.get<std::uint32_t>());
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
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    if (bodies.ownerships()[i] == BodyOwnership::Remote && bodies.isSimulated(i) &&
        !updatedRemote.contains(bodies.ids()[i]) &&
        !std::binary_search(turnRemote.begin(), turnRemote.end(), bodies.ids()[i])) {
      throw Error("process " + std::to_string(rank_) + ": remote copy of body " +
                  formatBodyId(bodies.ids()[i]) + " was not updated by its owner");
    }
  }
  compactShapesIfSparse(system);
}

void DistributedExchange::selectContacts(const BodyStorage& bodies, ContactStorage& contacts) {
  // A simulated body is held by exactly the processes its box overlaps (its owner among them);
  // static and animated bodies by all. Both bodies of a contact touch, so their boxes share a
  // point, whose process holds both: the contact goes to the lowest process holding both. Every
  // process that holds both computes the same sets from the same bits.
  std::vector<std::vector<int>>& held = heldBy_;
  held.resize(bodies.size());
  std::vector<char> known(bodies.size(), 0);
  auto holders = [&](std::uint32_t i) -> const std::vector<int>& {
    if (known[i] == 0) {
      known[i] = 1;
      held[i].clear();
      Vec3 lo, hi;
      bodyBox(bodies, i, lo, hi);
      topology_->ranksOverlapping(lo, hi, held[i]);
    }
    return held[i];
  };
  std::vector<char> keep(contacts.size(), 0);
  for (std::size_t c = 0; c < contacts.size(); ++c) {
    const std::uint32_t a = contacts.bodyA()[c];
    const std::uint32_t b = contacts.bodyB()[c];
    int handler = -1;
    if (!bodies.isSimulated(a) || !bodies.isSimulated(b)) {
      const std::vector<int>& h = holders(bodies.isSimulated(a) ? a : b);
      handler = h.empty() ? -1 : h.front();
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
    keep[c] = handler == rank_ ? 1 : 0;
  }
  contacts.keepOnly(keep);
}

void DistributedExchange::planSplits(const BodyStorage& bodies, const ContactStorage& contacts,
                                     std::vector<std::uint32_t>& multiplicity,
                                     std::vector<detail::PercussionCacheEntry>& warmStart) {
  multiplicity.assign(bodies.size(), 1);
  // Remote bodies with contacts here, reported to their owners.
  std::vector<char> inContact(bodies.size(), 0);
  for (std::size_t c = 0; c < contacts.size(); ++c) {
    inContact[contacts.bodyA()[c]] = 1;
    inContact[contacts.bodyB()[c]] = 1;
  }
  std::vector<ByteWriter>& out = freshWriters(neighbours_.size());
  // Warm start, second leg: entries whose home body this process gave away in the exchange go to
  // its new owner; those of bodies that left every domain are dropped.
  {
    std::vector<std::vector<RoutedEntry>>& entries = freshEntryLists(neighbours_.size());
    std::vector<RoutedEntry> kept;
    for (const RoutedEntry& r : homeEntries_) {
      if (const auto moved = transferredTo_.find(r.home()); moved != transferredTo_.end()) {
        entries[partnerIndex(moved->second)].push_back(r);
      } else if (const std::optional<std::size_t> h = bodies.indexOf(r.home());
                 h && bodies.ownerships()[*h] == BodyOwnership::Local) {
        kept.push_back(r);
      }
    }
    homeEntries_.swap(kept);
    for (std::size_t k = 0; k < neighbours_.size(); ++k) {
      putEntries(out[k], entries[k]);
    }
  }
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    if (inContact[i] != 0 && bodies.isSimulated(i) &&
        bodies.ownerships()[i] == BodyOwnership::Remote) {
      out[partnerIndex(ownerOfRemote_.at(bodies.ids()[i]))].put(bodies.ids()[i]);
    }
  }
  sendWriters(kTagPlanContacts, neighbours_);

  // Owner: the processes holding each split local body (itself included, increasing rank order),
  // sent to every other holder with the body's id.
  std::unordered_map<BodyId, std::vector<int>> holders;
  for (std::size_t k = 0; k < in_.size(); ++k) {
    ByteReader& r = in_[k];
    getEntries(r, homeEntries_);
    while (!r.done()) {
      holders[r.get<BodyId>()].push_back(neighbours_[k]);
    }
  }
  split_.clear();
  for (auto& [id, ranks] : holders) {
    ranks.push_back(rank_);
    std::sort(ranks.begin(), ranks.end());
    split_.push_back({id, true, std::move(ranks), {}});
  }
  freshWriters(neighbours_.size());
  // Warm start, last leg: the owner sends the entries of its bodies to every process holding a
  // copy.
  {
    std::vector<std::vector<RoutedEntry>>& entries = freshEntryLists(neighbours_.size());
    for (const RoutedEntry& r : homeEntries_) {
      if (const auto copies = holders_.find(r.home()); copies != holders_.end()) {
        for (const int rank : copies->second) {
          entries[partnerIndex(rank)].push_back(r);
        }
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
    const auto p = static_cast<std::uint32_t>(s.holders.size());
    multiplicity[*i] = p;
    for (const int r : s.holders) {
      if (r == rank_) {
        continue;
      }
      ByteWriter& w = out[partnerIndex(r)];
      w.put(s.id);
      w.put(p);
      for (const int h : s.holders) {
        w.put(static_cast<std::int32_t>(h));
      }
    }
  }
  sendWriters(kTagPlanMultiplicity, neighbours_);
  std::vector<RoutedEntry> received;
  for (std::size_t k = 0; k < in_.size(); ++k) {
    ByteReader& r = in_[k];
    getEntries(r, received);
    while (!r.done()) {
      const auto id = r.get<BodyId>();
      const auto p = r.get<std::uint32_t>();
      const auto i = bodies.indexOf(id);
      GRAIN_REQUIRE(i.has_value(), "process " + std::to_string(rank_) +
                                       " received the multiplicity of unknown body " +
                                       formatBodyId(id));
      multiplicity[*i] = p;
      SplitBody s{id, false, {}, {}};
      for (std::uint32_t h = 0; h < p; ++h) {
        s.holders.push_back(r.get<std::int32_t>());
      }
      split_.push_back(std::move(s));
    }
  }
  warmStart.clear();
  for (const std::vector<RoutedEntry>* list : {&homeEntries_, &received}) {
    for (const RoutedEntry& r : *list) {
      warmStart.push_back(r.entry);
    }
  }
  homeEntries_.clear();
  std::sort(warmStart.begin(), warmStart.end(), detail::cacheEntryLess);
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
  // Positions in splitPartners_, once per plan (the averaging uses them every sweep).
  for (SplitBody& s : split_) {
    s.partnerIndex.clear();
    for (const int r : s.holders) {
      s.partnerIndex.push_back(
          r == rank_ ? kSelf
                     : static_cast<std::uint32_t>(
                           std::lower_bound(splitPartners_.begin(), splitPartners_.end(), r) -
                           splitPartners_.begin()));
    }
  }
  // The coupled processes decide convergence together; the others iterate on their own. Their
  // communicator is split off again only when a process's coupling changed: one allreduce of a
  // flag per step (log P), where MPI_Comm_split gathers every process's colour (P entries).
  const bool coupled = !splitPartners_.empty();
  const double start = MPI_Wtime();
  int changed = coupledCommBuilds_ == 0 || coupled != coupled_ ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &changed, 1, MPI_INT, MPI_MAX, comm_);
  if (changed != 0) {
    if (coupledComm_ != MPI_COMM_NULL) {
      MPI_Comm_free(&coupledComm_);
    }
    MPI_Comm_split(comm_, coupled ? 0 : MPI_UNDEFINED, rank_, &coupledComm_);
    coupledReducer_.setCommunicator(coupledComm_);
    ++coupledCommBuilds_;
  }
  coupled_ = coupled;
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
  // One round: every holder sends its copy to the other holders, in id order, and every holder
  // takes the mean over the holders in rank order, so all copies end with the same bits.
  std::vector<ByteWriter>& out = freshWriters(splitPartners_.size());
  for (std::size_t k = 0; k < split_.size(); ++k) {
    const std::uint32_t slot = splitSlot_[k];
    for (const std::uint32_t p : split_[k].partnerIndex) {
      if (p != kSelf) {
        out[p].put(velocity[slot]);
        out[p].put(omega[slot]);
      }
    }
  }
  sendWriters(kTagAverage, splitPartners_);
  for (std::size_t k = 0; k < split_.size(); ++k) {
    const std::uint32_t slot = splitSlot_[k];
    Vec3 v = Vec3::Zero();
    Vec3 w = Vec3::Zero();
    for (const std::uint32_t p : split_[k].partnerIndex) {
      if (p == kSelf) {
        v += velocity[slot];
        w += omega[slot];
      } else {
        v += in_[p].get<Vec3>();
        w += in_[p].get<Vec3>();
      }
    }
    const Real inv = 1.0 / static_cast<Real>(split_[k].holders.size());
    velocity[slot] = v * inv;
    omega[slot] = w * inv;
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
  send_.resize(partners.size());
  for (std::size_t k = 0; k < partners.size(); ++k) {
    send_[k].swap(out_[k].bytes());  // out_ keeps the old buffer's storage for the next message
  }
  exchangeWithPartners(comm_, tag, partners, send_, recv_, traffic_);
  in_.clear();
  for (const std::vector<char>& bytes : recv_) {
    in_.emplace_back(bytes);
  }
}

}  // namespace grain::mpi
