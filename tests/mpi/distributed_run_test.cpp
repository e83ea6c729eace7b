// SPDX-License-Identifier: MIT
// Distributed runs against the serial run, on any number of processes (registered per rank count
// under the ctest label "mpi"):
//   - free flight across domain boundaries: every body keeps its serial trajectory bit for bit;
//   - a settling pile with contacts (bodies migrate, are split over processes, contacts are
//     solved once): every state has every id exactly once, the sum of contacts over processes is
//     the serial count, and positions and velocities follow the serial run to solver tolerance.
// Every process runs the serial reference itself; process 0 compares. Prints "N passed, N failed".
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <mpi.h>

#include <grain/core/solvers/percussion_cache.hpp>
#include <grain/core/timestepping/moreau_stepper.hpp>
#include <grain/mpi/communicator.hpp>
#include <grain/mpi/distributed_exchange.hpp>
#include <grain/mpi/topology.hpp>

#include "../common/settled_pile.hpp"

namespace {

using namespace grain;

int gPassed = 0;
int gFailed = 0;
int gRank = 0;

void check(bool ok, const std::string& what) {
  if (gRank != 0) {
    return;
  }
  if (ok) {
    ++gPassed;
  } else {
    ++gFailed;
    std::printf("FAILED: %s\n", what.c_str());
  }
}

struct BodyRecord {
  BodyId id;
  Vec3 position;
  Quat orientation;
  Vec3 velocity;
  Vec3 omegaBody;
};

/// The local simulated bodies of every process, on process 0 (keyed by id; `duplicates` counts
/// ids seen more than once).
std::map<BodyId, BodyRecord> gather(const BodyStorage& bodies, MPI_Comm comm, int& duplicates) {
  std::vector<BodyRecord> mine;
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    if (bodies.isSimulated(i) && bodies.ownerships()[i] == BodyOwnership::Local) {
      mine.push_back({bodies.ids()[i], bodies.positions()[i], bodies.orientations()[i],
                      bodies.velocities()[i], bodies.omegasBody()[i]});
    }
  }
  int size = 0;
  MPI_Comm_size(comm, &size);
  const int bytes = static_cast<int>(mine.size() * sizeof(BodyRecord));
  std::vector<int> counts(static_cast<std::size_t>(size)), offsets(static_cast<std::size_t>(size));
  MPI_Gather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
  int total = 0;
  for (int r = 0; r < size; ++r) {
    offsets[static_cast<std::size_t>(r)] = total;
    total += counts[static_cast<std::size_t>(r)];
  }
  std::vector<char> all(static_cast<std::size_t>(gRank == 0 ? total : 0));
  MPI_Gatherv(mine.data(), bytes, MPI_BYTE, all.data(), counts.data(), offsets.data(), MPI_BYTE, 0,
              comm);
  std::map<BodyId, BodyRecord> out;
  duplicates = 0;
  for (std::size_t k = 0; k + sizeof(BodyRecord) <= all.size(); k += sizeof(BodyRecord)) {
    BodyRecord b;
    std::memcpy(static_cast<void*>(&b), all.data() + k, sizeof(BodyRecord));
    duplicates += out.contains(b.id) ? 1 : 0;
    out[b.id] = b;
  }
  return out;
}

std::map<BodyId, BodyRecord> snapshot(const BodyStorage& bodies) {
  std::map<BodyId, BodyRecord> out;
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    if (bodies.isSimulated(i)) {
      out[bodies.ids()[i]] = {bodies.ids()[i], bodies.positions()[i], bodies.orientations()[i],
                              bodies.velocities()[i], bodies.omegasBody()[i]};
    }
  }
  return out;
}

void addSphere(DynamicsSystem& s, BodyId id, Real r, const Vec3& position, const Vec3& velocity,
               const Vec3& omega) {
  BodyDef d;
  d.id = id;
  d.shape = s.shapes.add(Sphere{r});
  d.mass = 1000.0 * 4.0 / 3.0 * M_PI * r * r * r;
  d.inertiaBody = Vec3::Constant(0.4 * d.mass * r * r);
  d.position = position;
  d.velocity = velocity;
  d.omegaBody = omega;
  s.addBody(d);
}

void addWall(DynamicsSystem& s, BodyId id, const Vec3& normal, const Vec3& position) {
  BodyDef d;
  d.id = id;
  d.motion = BodyMotion::Static;
  d.shape = s.shapes.add(Halfspace{normal});
  d.position = position;
  s.addBody(d);
}

/// Spheres in separate lanes (y), flying along x across all domains, spinning; no contacts.
DynamicsSystem freeFlight() {
  DynamicsSystem s;
  s.externalForces.addGravity(GravityField{});
  for (int k = 0; k < 40; ++k) {
    const Real x = -0.4 + 0.02 * k;
    const Real vx = (k % 2 == 0 ? 1.0 : -1.0) * (0.5 + 0.05 * k);
    addSphere(s, makeBodyId(1, static_cast<std::uint32_t>(k)), 0.004,
              Vec3(x, -0.4 + 0.02 * k, 0.1 * std::sin(k)), Vec3(vx, 0.3 * std::cos(k), 0.5),
              Vec3(3.0 * std::sin(k), 2.0, -1.0 + 0.1 * k));
  }
  return s;
}

/// A sphere resting on four others, one in each quadrant around the corner where four domains of
/// a 2 x 2 grid meet: its four loaded contacts are solved on four processes, so it is split into
/// four copies while the pyramid slowly spreads.
DynamicsSystem corner() {
  DynamicsSystem s;
  s.externalForces.addGravity(GravityField{});
  const Real r = 0.01;
  const Real a = 1.05 * r;  // the lower spheres lie inside their quadrant and do not touch
  addWall(s, makeBodyId(0, 0), Vec3(0, 0, 1), Vec3(0, 0, 0));
  std::uint32_t n = 0;
  for (const Real sx : {-1.0, 1.0}) {
    for (const Real sy : {-1.0, 1.0}) {
      addSphere(s, makeBodyId(1, n), r, Vec3(sx * a, sy * a, r), Vec3::Zero(), Vec3::Zero());
      ++n;
    }
  }
  const Real h = r + std::sqrt(4.0 * r * r - 2.0 * a * a) - 1e-7;  // touching all four
  addSphere(s, makeBodyId(1, n++), r, Vec3(0.0, 0.0, h), Vec3::Zero(), Vec3(0.0, 0.0, 2.0));
  // Two more spheres far out in two corners, so the box of the centres is symmetric about 0.
  addSphere(s, makeBodyId(1, n++), r, Vec3(-0.1, -0.1, r), Vec3::Zero(), Vec3::Zero());
  addSphere(s, makeBodyId(1, n++), r, Vec3(0.1, 0.1, r), Vec3::Zero(), Vec3::Zero());
  ContactParameter p;
  p.mu = 0.4;
  s.contactParameters.setStandard(p);
  return s;
}

StepperSettings settings(Real dt, bool warmStart = false) {
  StepperSettings st;
  st.solver.usePercussionCache = warmStart;
  st.deltaT = dt;
  st.solver.convergenceMethod = ConvergenceMethod::InVelocity;
  st.solver.relTol = 1e-12;
  st.solver.absTol = 1e-14;
  st.solver.maxIter = 20000;
  return st;
}

/// Box over the simulated bodies, for the grid.
void bodyBox(const BodyStorage& b, Vec3& lo, Vec3& hi) {
  lo = Vec3::Constant(1e300);
  hi = Vec3::Constant(-1e300);
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (b.isSimulated(i)) {
      lo = lo.cwiseMin(b.positions()[i]);
      hi = hi.cwiseMax(b.positions()[i]);
    }
  }
}

struct Outcome {
  std::map<BodyId, BodyRecord> serial;
  std::map<BodyId, BodyRecord> distributed;
  bool conserved = true;
  bool contactsMatch = true;
  std::size_t maxSplit = 0;
  std::uint32_t maxMultiplicity = 1;
  std::uint64_t coupledBuilds = 0;  ///< communicator splits of the coupled processes (process 0)
  std::string error;
  std::size_t warmStartedSerial = 0;  ///< contacts that started from a cached percussion, all steps
  bool warmStartMatches = true;       ///< summed over processes as in the serial run, every step
};

/// The contacts of `contacts` whose key is in the warm-start cache `cache`.
std::size_t warmStarted(const BodyStorage& bodies, const ContactStorage& contacts,
                        const std::vector<detail::PercussionCacheEntry>& cache) {
  std::vector<detail::PercussionCacheKey> keys;
  std::vector<std::uint32_t> ordinal;
  detail::makePercussionCacheKeys(bodies, contacts, keys, ordinal);
  std::size_t n = 0;
  detail::forEachCachedPercussion(bodies, contacts, keys, ordinal, cache,
                                  [&](std::uint32_t, const Vec3&) { ++n; });
  return n;
}

/// A grid over the current box of all processes' bodies, with the dimensions `dims` permuted by
/// `turn` (so that a rebuild moves most bodies to another process).
std::shared_ptr<mpi::Topology> rebuiltGrid(const BodyStorage& bodies, MPI_Comm comm, int size,
                                           int turn) {
  Vec3 lo, hi;
  bodyBox(bodies, lo, hi);
  MPI_Allreduce(MPI_IN_PLACE, lo.data(), 3, MPI_DOUBLE, MPI_MIN, comm);
  MPI_Allreduce(MPI_IN_PLACE, hi.data(), 3, MPI_DOUBLE, MPI_MAX, comm);
  std::array<int, 3> dims = mpi::GridTopology::dimensionsForExtent(size, hi - lo);
  std::rotate(dims.begin(), dims.begin() + turn % 3, dims.end());
  return std::make_shared<mpi::GridTopology>(lo - Vec3::Constant(0.05), hi + Vec3::Constant(0.05),
                                             dims);
}

Outcome run(DynamicsSystem (*make)(), Real dt, int steps, MPI_Comm comm, int size,
            int rebuildEvery = 0, bool forceSquare = false, bool warmStart = false) {
  Outcome o;
  DynamicsSystem serial = make();
  MoreauStepper serialStepper(settings(dt, warmStart));
  DynamicsSystem dist = make();
  MoreauStepper distStepper(settings(dt, warmStart));
  // Contacts that start from a cached percussion, counted just before each solve.
  std::size_t serialHits = 0;
  std::size_t distHits = 0;
  serialStepper.setContactProblemObserver(
      [&](const BodyStorage& b, const ContactProblem& p, std::uint64_t) {
        serialHits += warmStarted(b, p.contacts, serialStepper.warmStartCache());
      });
  distStepper.setContactProblemObserver(
      [&](const BodyStorage& b, const ContactProblem& p, std::uint64_t) {
        distHits += warmStarted(b, p.contacts, distStepper.warmStartCache());
      });
  Vec3 lo, hi;
  bodyBox(dist.bodies, lo, hi);
  lo -= Vec3::Constant(0.01);  // a flat layer of bodies still gets cells of positive extent
  hi += Vec3::Constant(0.01);
  std::array<int, 3> dims = mpi::GridTopology::dimensionsForExtent(size, hi - lo);
  if (size == 4 && forceSquare) {
    dims = {2, 2, 1};
  }
  auto topology = std::make_shared<mpi::GridTopology>(lo, hi, dims);
  mpi::DistributedExchange exchange(comm, topology, 1, 1);
  exchange.keepOwnedBodies(dist.bodies);
  const StepExchanges ex{&exchange, &exchange, &exchange.reducer()};
  const std::size_t total = serial.bodies.simulatedCount();
  for (int k = 0; k < steps; ++k) {
    if (rebuildEvery > 0 && k > 0 && k % rebuildEvery == 0) {
      std::vector<detail::PercussionCacheEntry> cache = distStepper.takeWarmStartCache();
      exchange.setTopology(rebuiltGrid(dist.bodies, comm, size, k / rebuildEvery), dist, cache);
    }
    serialHits = 0;
    distHits = 0;
    const StepStats s = serialStepper.step(serial);
    StepStats d;
    try {
      d = distStepper.step(dist, ex);
    } catch (const std::exception& e) {
      o.error = e.what();
      std::fprintf(stderr, "process %d: %s\n", gRank, e.what());
      MPI_Abort(comm, 1);
    }
    o.contactsMatch = o.contactsMatch && s.contacts == d.contacts;
    Real hits = static_cast<Real>(distHits);
    exchange.reducer().sum(std::span<Real>(&hits, 1));
    o.warmStartedSerial += serialHits;
    o.warmStartMatches = o.warmStartMatches && static_cast<std::size_t>(hits) == serialHits;
    Real split = static_cast<Real>(exchange.splitBodies());
    exchange.reducer().max(std::span<Real>(&split, 1));
    o.maxSplit = std::max(o.maxSplit, static_cast<std::size_t>(split));
    Real multiplicity = exchange.maxMultiplicity();
    exchange.reducer().max(std::span<Real>(&multiplicity, 1));
    o.maxMultiplicity = std::max(o.maxMultiplicity, static_cast<std::uint32_t>(multiplicity));
    int duplicates = 0;
    const auto all = gather(dist.bodies, comm, duplicates);
    if (gRank == 0 && (duplicates != 0 || all.size() != total)) {
      o.conserved = false;
    }
  }
  int duplicates = 0;
  o.distributed = gather(dist.bodies, comm, duplicates);
  o.serial = snapshot(serial.bodies);
  o.coupledBuilds = exchange.coupledCommunicatorBuilds();
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &gRank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::string np = " (" + std::to_string(size) + " processes)";

  {
    const Outcome o = run(freeFlight, 1e-3, 400, MPI_COMM_WORLD, size);
    check(o.conserved, "free flight: every id exactly once in every state" + np);
    bool identical = o.serial.size() == o.distributed.size();
    for (const auto& [id, s] : o.serial) {
      const auto it = o.distributed.find(id);
      identical = identical && it != o.distributed.end() && it->second.position == s.position &&
                  it->second.velocity == s.velocity && it->second.omegaBody == s.omegaBody &&
                  it->second.orientation.coeffs() == s.orientation.coeffs();
    }
    check(identical, "free flight: trajectories bit for bit equal to the serial run" + np);
  }
  {
    const Outcome o = run(test::pile, 1e-3, 150, MPI_COMM_WORLD, size);
    check(o.conserved, "pile: every id exactly once in every state" + np);
    check(o.contactsMatch, "pile: contacts summed over processes equal the serial count" + np);
    check(size == 1 || o.maxSplit > 0, "pile: bodies were split over processes" + np);
    // The coupled processes' communicator is split off again only when the coupling changes, not
    // in every one of the 150 steps (MPI_Comm_split gathers a colour from every process).
    if (gRank == 0) {
      std::printf("pile%s: coupled communicator built %llu times in 150 steps\n", np.c_str(),
                  static_cast<unsigned long long>(o.coupledBuilds));
    }
    check(
        o.coupledBuilds >= 1 && o.coupledBuilds <= 15,
        "pile: the coupled processes' communicator is rebuilt only when the coupling changes" + np);
    Real dr = 0.0, dv = 0.0;
    for (const auto& [id, s] : o.serial) {
      const auto it = o.distributed.find(id);
      if (it == o.distributed.end()) {
        dr = dv = 1e300;
        break;
      }
      dr = std::max(dr, (it->second.position - s.position).norm());
      dv = std::max(dv, (it->second.velocity - s.velocity).norm());
    }
    if (gRank == 0) {
      std::printf("pile%s: max |dr| %.3g m, max |dv| %.3g m/s, max split bodies per step %zu\n",
                  np.c_str(), dr, dv, o.maxSplit);
    }
    check(dr < 1e-7, "pile: positions follow the serial run to solver tolerance" + np);
    check(dv < 1e-5, "pile: velocities follow the serial run to solver tolerance" + np);
  }

  {
    // Sparse exchange (NBX): every process sends to the next two processes (itself on one or two
    // processes) messages of its own sizes, the empty one included, in three rounds back to
    // back; every message arrives once, whole, in the round it was sent in, sorted by source.
    mpi::SparseExchange sparse(MPI_COMM_WORLD, 90);
    bool delivered = true;
    for (int round = 0; round < 3; ++round) {
      std::vector<int> to;
      std::vector<std::vector<char>> send;
      for (int d = 1; d <= 2 && d <= size; ++d) {
        const int dest = (gRank + d) % size;
        if (std::find(to.begin(), to.end(), dest) != to.end()) {
          continue;
        }
        to.push_back(dest);
        send.emplace_back(static_cast<std::size_t>((gRank * 7 + round * 3 + d) % 5),
                          static_cast<char>('a' + gRank % 26));
      }
      std::vector<mpi::ReceivedMessage> got;
      mpi::TrafficCounters traffic;
      sparse.exchange(to, send, got, traffic);
      std::vector<int> expected;
      for (int d = 1; d <= 2 && d <= size; ++d) {
        const int source = ((gRank - d) % size + size) % size;
        if (std::find(expected.begin(), expected.end(), source) == expected.end()) {
          expected.push_back(source);
        }
      }
      std::sort(expected.begin(), expected.end());
      delivered = delivered && got.size() == expected.size() && traffic.messages == to.size();
      for (std::size_t k = 0; delivered && k < got.size(); ++k) {
        const int source = got[k].source;
        const int d = ((gRank - source) % size + size) % size;
        const int step = d == 0 ? (size == 1 ? 1 : 2) : d;
        const auto length = static_cast<std::size_t>((source * 7 + round * 3 + step) % 5);
        delivered = delivered && source == expected[k] &&
                    got[k].bytes == std::vector<char>(length, static_cast<char>('a' + source % 26));
      }
    }
    check(
        delivered && sparse.rounds() == 3,
        "sparse exchange: every message arrives once, whole, in its round, sorted by source" + np);

    // The closing barrier waits for every process: the last one enters 0.2 s late and only then
    // sends its one message, to process 0, which must still get it in this exchange (a barrier
    // that completed without the late process, as SimGrid's MPI_Ibarrier does, would not).
    std::vector<int> to;
    std::vector<std::vector<char>> send;
    if (gRank == size - 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      to.push_back(0);
      send.emplace_back(3, 'z');
    }
    std::vector<mpi::ReceivedMessage> got;
    mpi::TrafficCounters traffic;
    sparse.exchange(to, send, got, traffic);
    const bool late = gRank == 0 ? got.size() == 1 && got[0].source == size - 1 &&
                                       got[0].bytes == std::vector<char>(3, 'z')
                                 : got.empty();
    check(late, "sparse exchange: the message of a process entering late arrives" + np);
  }

  if (size > 1) {
    // The time in communication calls counts the wait for a late partner (bodyWeight="time"
    // subtracts it from the step time): process 0 sends 0.2 s late to every other process.
    std::vector<int> partners;
    if (gRank == 0) {
      for (int r = 1; r < size; ++r) {
        partners.push_back(r);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    } else {
      partners.push_back(0);
    }
    const std::vector<char> bytes(8, 'x');
    const std::vector<std::span<const char>> send(partners.size(), bytes);
    std::vector<std::vector<char>> recv;
    mpi::TrafficCounters traffic;
    mpi::exchangeWithPartners(MPI_COMM_WORLD, 77, partners, send, recv, traffic);
    check(gRank == 0 || traffic.seconds >= 0.15,
          "communication time: a process waiting 0.2 s for its partner counts the wait" + np);
    check(traffic.bytes == 8 * partners.size() && traffic.messages == partners.size(),
          "communication time: bytes and messages counted" + np);
    mpi::TrafficCounters reduced;
    mpi::MpiReducer reducer(MPI_COMM_WORLD);
    reducer.countTimeInto(&reduced);
    if (gRank == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    std::array<Real, 1> one{1.0};
    reducer.sum(one);
    check(one[0] == size && (gRank == 0 || reduced.seconds >= 0.15),
          "communication time: a reduction counts its wait" + np);
    // sumAndMax: one reduction that sums the first entries and takes the maximum of the others,
    // as many as the reducer allows.
    std::vector<Real> sums(mpi::MpiReducer::kMaxSums), maxima(mpi::MpiReducer::kMaxMaxima);
    for (std::size_t i = 0; i < sums.size(); ++i) {
      sums[i] = static_cast<Real>((gRank + 1) * (i + 1));
    }
    for (std::size_t i = 0; i < maxima.size(); ++i) {
      maxima[i] = gRank == static_cast<int>(i) % size ? 100.0 + static_cast<Real>(i)
                                                      : -static_cast<Real>(gRank);
    }
    reducer.sumAndMax(sums, maxima);
    bool summed = true, maximal = true;
    for (std::size_t i = 0; i < sums.size(); ++i) {
      summed = summed && sums[i] == static_cast<Real>(size * (size + 1) / 2 * (i + 1));
    }
    for (std::size_t i = 0; i < maxima.size(); ++i) {
      maximal = maximal && maxima[i] == 100.0 + static_cast<Real>(i);
    }
    check(summed && maximal, "sumAndMax: the sums and the maxima of every process" + np);
    std::array<Real, 2> fewSums{1.0, 2.0};
    std::array<Real, 1> fewMaxima{static_cast<Real>(gRank)};
    reducer.sumAndMax(fewSums, fewMaxima);
    check(fewSums[0] == size && fewSums[1] == 2.0 * size && fewMaxima[0] == size - 1,
          "sumAndMax: fewer entries than the block holds" + np);
  }
  {
    // A body shared by four processes (on 4 processes: a 2 x 2 grid around it).
    const Outcome o = run(corner, 1e-3, 60, MPI_COMM_WORLD, size, 0, true);
    check(o.conserved, "corner: every id exactly once in every state" + np);
    check(o.contactsMatch, "corner: contacts summed over processes equal the serial count" + np);
    check(size != 4 || o.maxMultiplicity == 4,
          "corner: the centre sphere is split into 4 copies (got " +
              std::to_string(o.maxMultiplicity) + ")" + np);
    Real dr = 0.0, dv = 0.0;
    for (const auto& [id, s] : o.serial) {
      const auto it = o.distributed.find(id);
      dr = it == o.distributed.end() ? 1e300
                                     : std::max(dr, (it->second.position - s.position).norm());
      dv = it == o.distributed.end() ? 1e300
                                     : std::max(dv, (it->second.velocity - s.velocity).norm());
    }
    check(dr < 1e-9 && dv < 1e-7,
          "corner: the serial motion to solver tolerance (|dr| " + std::to_string(dr) + ")" + np);
  }
  {
    // Rebuilds of the decomposition every 25 steps (the grid turns, most bodies change process).
    const Outcome o = run(test::pile, 1e-3, 150, MPI_COMM_WORLD, size, 25);
    check(o.conserved, "rebuilds: every id exactly once in every state" + np);
    check(o.contactsMatch, "rebuilds: contacts summed over processes equal the serial count" + np);
    Real dr = 0.0;
    for (const auto& [id, s] : o.serial) {
      const auto it = o.distributed.find(id);
      dr = it == o.distributed.end() ? 1e300
                                     : std::max(dr, (it->second.position - s.position).norm());
    }
    check(dr < 1e-7, "rebuilds: positions follow the serial run to solver tolerance" + np);
  }

  {
    // Warm start (usePercussionCache) across migrations and rebuilds every 25 steps: the cached
    // percussions travel with the bodies, so in every step as many contacts start from their
    // last percussion, summed over the processes, as in the serial run.
    const Outcome o = run(test::pile, 1e-3, 150, MPI_COMM_WORLD, size, 25, false, true);
    check(o.conserved, "warm start: every id exactly once in every state" + np);
    check(o.contactsMatch,
          "warm start: contacts summed over processes equal the serial count" + np);
    check(o.warmStartedSerial > 1000,
          "warm start: the serial run starts contacts from the cache (" +
              std::to_string(o.warmStartedSerial) + ")" + np);
    check(o.warmStartMatches,
          "warm start: every step as many contacts warm-started as in the serial run" + np);
    Real dr = 0.0;
    for (const auto& [id, s] : o.serial) {
      const auto it = o.distributed.find(id);
      dr = it == o.distributed.end() ? 1e300
                                     : std::max(dr, (it->second.position - s.position).norm());
    }
    check(dr < 1e-7, "warm start: positions follow the serial run to solver tolerance" + np);
  }

  if (gRank == 0) {
    std::printf("%d passed, %d failed\n", gPassed, gFailed);
  }
  MPI_Finalize();
  return gFailed == 0 ? 0 : 1;
}
