// SPDX-License-Identifier: MIT
// grain-sim-mpi: distributed simulation of a scene file on MPI processes.
//
//   mpirun -np P grain-sim-mpi -s scene.xml -g OUTDIR [-l LOCALDIR]... [-m MEDIADIR]
//                             [--set XPATH=VALUE]... [--print-scene] [--dump-fclib EVERY]
//   mpirun -np P grain-sim-mpi --restart OUTDIR/SimFiles/SimDataRECORD_<n> [--set ...]
//
// Every process reads the scene and builds a share of its simulated bodies (a contiguous block of
// about N/P of them); one exchange then moves each body to the process whose domain holds its
// centre (a kd-tree over the initial centres, then MPISettings' decomposition), which steps it
// with the others (grain_mpi). The run writes one OUTDIR/SimFiles/SimDataRECORD_<n>/ as grain-sim
// does (app::RunRecord): SimState.sim and the warm-start data written by all processes together
// (MPI-IO, CollectiveRecordWriters; extra bytes: rank, material, overlap, global geometry id),
// SceneFile.xml, EffectiveScene.xml, RunInfo.txt and SimData.dat (statistics of all processes,
// with the bytes and messages sent) by the first; ContactForces.dat and --dump-fclib [EVERY] on
// one process only (refused on more before anything is written); with -l, one
// ProcessLog_<rank>.dat per process. A run of any process count continues with --restart, from a
// serial or a distributed run.
//
// Exit codes as grain-sim: 0 finished, 1 runtime failure (on any process: all stop, with that
// process's message), 2 bad command line or scene, 3 stopped by a signal (on any process).
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include <mpi.h>

#include <grain/app/progress.hpp>
#include <grain/app/run_driver.hpp>
#include <grain/app/run_record.hpp>
#include <grain/app/signals.hpp>
#include <grain/core/common/error.hpp>
#include <grain/core/solvers/local_method_settings.hpp>
#include <grain/core/timestepping/invariants.hpp>
#include <grain/core/timestepping/moreau_stepper.hpp>
#include <grain/io/restart.hpp>
#include <grain/io/run_log.hpp>
#include <grain/io/scene.hpp>
#include <grain/io/scene_overrides.hpp>
#include <grain/io/sim_file.hpp>
#include <grain/io/simulated_share.hpp>
#include <grain/io/version.hpp>
#include <grain/mpi/distributed_exchange.hpp>
#include <grain/mpi/load_balancer.hpp>
#include <grain/mpi/topology.hpp>

#include "../common/fclib_dump.hpp"
#include "../common/sim_options.hpp"
#include "../common/sim_summary.hpp"
#include "collective_record_writers.hpp"
#include "collective_state_reader.hpp"
#include "mpi_text.hpp"
#include "step_profile.hpp"
#include "world_value.hpp"

namespace {

namespace fs = std::filesystem;
using namespace grain;
using app::kExitBadInput;
using app::kExitFailure;
using app::kExitOk;
using app::kExitStopped;

// Asked from MPI at every use, not stored: no mutable globals (world_value.hpp).
const app::WorldValue gRank(MPI_Comm_rank);
const app::WorldValue gSize(MPI_Comm_size);

/// A message of the first process (all processes reach the same conclusion in the setup).
void say(const std::string& text) {
  if (gRank == 0) {
    std::fputs(text.c_str(), stdout);
    std::fflush(stdout);
  }
}

/// Runs a step of the setup on every process. Returns false on an error (SceneError or
/// grain::Error) on any process, after every process's error has reached the user once: the
/// lowest failing process prints its message, and every other failing process whose message
/// differs prints its own, naming itself (a scene error is found alike by all; a body missing
/// from one process's share of a restart state is found by that process alone).
template <class Step>
bool checkedOnAll(Step&& step) {
  std::string message;
  try {
    step();
  } catch (const io::SceneError& e) {
    message = e.what();
  } catch (const Error& e) {
    message = "grain-sim-mpi: " + std::string(e.what());
  }
  // firstProblem tells errors by their text: a failure is never empty.
  int first = 0;
  const std::string firstMessage = app::firstProblem(MPI_COMM_WORLD, message, &first);
  if (firstMessage.empty()) {
    return true;
  }
  if (gRank == first) {
    std::fprintf(stderr, "%s\n", message.c_str());
  } else if (!message.empty() && message != firstMessage) {
    const std::string own = "grain-sim-mpi: ";
    const std::string text = message.rfind(own, 0) == 0 ? message.substr(own.size()) : message;
    std::fprintf(stderr, "grain-sim-mpi: process %d: %s\n", static_cast<int>(gRank), text.c_str());
  }
  std::fflush(stderr);
  MPI_Barrier(MPI_COMM_WORLD);  // every message is out before any process exits
  return false;
}

/// 1-based line of the first occurrence of `tag` in the scene text (0 if absent), for messages.
std::size_t lineOf(const std::string& text, const std::string& tag) {
  const std::size_t at = text.find(tag);
  return at == std::string::npos
             ? 0
             : 1 + static_cast<std::size_t>(std::count(
                       text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
}

/// The first domain decomposition of the run (collective), from the simulated bodies every process
/// built: a kd-tree by Zoltan's RCB of their centres, each body weighing 1, so every process starts
/// with about N/P bodies however unevenly they lie. A grid instead when the scene's MPISettings
/// fix its `dimension` (matchProcessDimToExtent="false": a decomposition that does not depend on
/// the state, so a restart continues bit for bit), on one process, or when a kd-tree cell would
/// be thinner than the largest body: the load balancer's grid over the box of the centres, cells
/// at least as wide as the largest body (the box grows rather than refuse a body), dimensions the
/// factorisation of the process count closest to cubes.
std::shared_ptr<const mpi::Topology> firstDecomposition(const io::SceneDescription& scene,
                                                        std::size_t simulatedInScene,
                                                        std::string& description) {
  mpi::LoadBalanceSettings first;
  first.type = mpi::LoadBalanceSettings::TopologyType::Grid;
  first.buildMode = mpi::LoadBalanceSettings::BuildMode::Aabb;
  first.matchProcessDimToExtent = true;
  first.massPointCount = 0;  // the initial centres
  std::string how = "chosen for the extent of the bodies";
  if (scene.mpi) {
    const mpi::LoadBalanceSettings& m = *scene.mpi;
    if (m.type == mpi::LoadBalanceSettings::TopologyType::Grid && !m.matchProcessDimToExtent) {
      const std::array<int, 3> given{static_cast<int>(m.gridDimension[0]),
                                     static_cast<int>(m.gridDimension[1]),
                                     static_cast<int>(m.gridDimension[2])};
      if (given[0] * given[1] * given[2] != gSize) {
        throw io::SceneError(scene.file.string(), lineOf(scene.text, "<Topology"),
                             "SceneSettings/MPISettings/ProcessTopology/Topology",
                             "dimension " + std::to_string(given[0]) + " " +
                                 std::to_string(given[1]) + " " + std::to_string(given[2]) +
                                 " has " + std::to_string(given[0] * given[1] * given[2]) +
                                 " cells for " + std::to_string(gSize) +
                                 " processes (or set matchProcessDimToExtent=\"true\")");
      }
      first.gridDimension = m.gridDimension;
      first.matchProcessDimToExtent = false;
      how = "from MPISettings dimension";
    }
  }
  const bool fixedGrid = !first.matchProcessDimToExtent;
  if (simulatedInScene == 0) {  // nothing to decompose: any box will do
    first.buildMode = mpi::LoadBalanceSettings::BuildMode::Predefined;
    first.minPoint = Vec3::Constant(-1.0);
    first.maxPoint = Vec3::Constant(1.0);
  }
  std::vector<mpi::BalancedBody> bodies;
  Real largest = 0.0;
  const BodyStorage& b = scene.system.bodies;
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (b.isSimulated(i)) {
      bodies.push_back({b.ids()[i], b.positions()[i], b.velocities()[i], 1.0});
      largest = std::max(largest, 2.0 * b.boundingRadii()[i]);
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, &largest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (!fixedGrid && gSize > 1 && simulatedInScene > 0) {
    mpi::LoadBalanceSettings kd;
    kd.type = mpi::LoadBalanceSettings::TopologyType::KdTree;
    kd.buildMode = mpi::LoadBalanceSettings::BuildMode::Aabb;
    kd.massPointCount = 0;  // the initial centres
    kd.minCellSize = 0.0;   // the cell thickness is checked here, with the grid as fallback
    mpi::BuiltTopology tree = mpi::buildTopology(MPI_COMM_WORLD, kd, bodies, Vec3::Zero(), {}, 0.0);
    // Every process has the same cuts, hence the same verdict.
    if (tree.topology->minCellExtent() >= largest) {
      description = "kd-tree (Zoltan RCB) over the initial centres";
      return tree.topology;
    }
    how = "chosen for the extent of the bodies (a kd-tree cell was thinner than a body)";
  }
  first.minCellSize = std::max<Real>(largest, 1e-6);  // the box grows rather than refuse a body
  mpi::BuiltTopology built =
      mpi::buildTopology(MPI_COMM_WORLD, first, bodies, Vec3::Zero(), {}, largest);
  const auto& dims = dynamic_cast<const mpi::GridTopology&>(*built.topology).dimensions();
  description = "grid " + std::to_string(dims[0]) + " x " + std::to_string(dims[1]) + " x " +
                std::to_string(dims[2]) + " " + how;
  return built.topology;
}

/// The load-balancing settings of the scene's MPISettings (a static grid without them: AABB, no
/// mass-point prediction).
mpi::LoadBalanceSettings balanceSettings(const io::SceneDescription& scene) {
  if (scene.mpi) {
    return *scene.mpi;
  }
  mpi::LoadBalanceSettings b;
  b.mode = mpi::LoadBalanceSettings::Mode::Static;
  b.buildMode = mpi::LoadBalanceSettings::BuildMode::Aabb;
  b.massPointCount = 0;
  return b;
}

/// A new decomposition from the bodies each process owns now (collective), and the switch to it.
/// Returns how it was reached (the same on every process).
/// `weight` is the weight of each body this process owns.
/// The stepper's warm-start cache moves with the bodies to their new owners.
mpi::BuildOutcome rebalance(const mpi::LoadBalanceSettings& settings, DynamicsSystem& system,
                            MoreauStepper& stepper, mpi::DistributedExchange& exchange,
                            Real weight = 1.0) {
  const BodyStorage& b = system.bodies;
  std::vector<mpi::BalancedBody> bodies;
  std::vector<mpi::StaticHalfspace> halfspaces;
  Real largest = 0.0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (b.isSimulated(i) && b.ownerships()[i] == BodyOwnership::Local) {
      bodies.push_back({b.ids()[i], b.positions()[i], b.velocities()[i], weight});
      largest = std::max(largest, 2.0 * b.boundingRadii()[i]);
    } else if (b.motions()[i] == BodyMotion::Static &&
               system.shapes.type(b.shapes()[i]) == ShapeType::Halfspace) {
      const auto& h = std::get<Halfspace>(system.shapes[b.shapes()[i]]);
      halfspaces.push_back({b.positions()[i], b.orientations()[i] * h.normal.normalized()});
    }
  }
  mpi::BuiltTopology built = mpi::buildTopology(MPI_COMM_WORLD, settings, bodies,
                                                system.externalForces.gravityAcceleration(),
                                                halfspaces, largest, exchange.sharedTopology());
  if (built.outcome != mpi::BuildOutcome::KeptPrevious) {
    std::vector<detail::PercussionCacheEntry> warmStart = stepper.takeWarmStartCache();
    exchange.setTopology(std::move(built.topology), system, warmStart);
  }
  return built.outcome;
}

/// " (largest share N bodies, R x the mean)": the simulated bodies of the largest share of the
/// decomposition against the mean share (collective).
std::string shareText(const BodyStorage& bodies) {
  std::array<double, 2> owned{0.0, 0.0};
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    owned[0] += bodies.isSimulated(i) && bodies.ownerships()[i] == BodyOwnership::Local;
  }
  owned[1] = owned[0];
  MPI_Allreduce(MPI_IN_PLACE, &owned[0], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &owned[1], 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  const double mean = owned[1] / gSize;
  char share[96];
  std::snprintf(share, sizeof(share), " (largest share %.0f bodies, %.3f x the mean)", owned[0],
                mean > 0.0 ? owned[0] / mean : 1.0);
  return share;
}

/// The scene's decomposition (MPISettings), built in parallel from the bodies the first
/// decomposition gave each process, and the switch to it (collective). `topologyText` (the first
/// decomposition) becomes the description of both.
void applySceneDecomposition(const mpi::LoadBalanceSettings& balance, DynamicsSystem& system,
                             MoreauStepper& stepper, mpi::DistributedExchange& exchange,
                             std::string& topologyText) {
  const mpi::BuildOutcome outcome = rebalance(balance, system, stepper, exchange);
  const bool kdTree = balance.type == mpi::LoadBalanceSettings::TopologyType::KdTree;
  std::string text = kdTree ? "kd-tree (Zoltan RCB)" : "grid over the bodies";
  if (outcome == mpi::BuildOutcome::FromCentres) {
    text += " from the centres (the prediction made a cell thinner than a body)";
  } else if (outcome == mpi::BuildOutcome::KeptPrevious) {
    text =
        "the first decomposition kept (every " + text + " build made a cell thinner than a body)";
  }
  topologyText = "first " + topologyText + ", then " + text;
  if (balance.mode == mpi::LoadBalanceSettings::Mode::Static) {
    topologyText += ", static";
  } else {
    topologyText +=
        ", rebuilt every " + std::to_string(balance.policyCheckEveryXTimeStep) + " steps";
    if (balance.policy == mpi::LoadBalanceSettings::Policy::BodyLimit) {
      topologyText += " if a process has >= " + std::to_string(balance.bodyLimit) + " bodies";
    }
    if (balance.bodyWeight == mpi::LoadBalanceSettings::BodyWeight::Time) {
      topologyText += ", bodies weighted by their process's compute time";
    }
  }
}

/// "grain-sim-mpi: process K: step S: body (g,n) ... has a non-finite ... (RigidBodies "name")"
/// for body i of this process.
std::string nonFiniteText(const io::SceneDescription& scene, const BodyStorage& bodies,
                          std::size_t i, std::uint64_t step) {
  return "grain-sim-mpi: process " + std::to_string(gRank) + ": " +
         nonFiniteBodyMessage(bodies, i, step) + app::groupElementOf(scene, bodies.ids()[i]);
}

/// The reducer a distributed step is given. Every reduction goes to the exchange's reducer over
/// all processes; the step's statistics (sumAndMax(), once per step, at its end) carry the
/// driver's own figures of the step with them: the bytes and messages sent (summed) and the stop
/// signal (the maximum), so that a step ends with a single reduction.
class StepReduction final : public Reducer {
 public:
  explicit StepReduction(mpi::DistributedExchange& exchange) : exchange_(exchange) {}
  bool distributed() const override { return exchange_.reducer().distributed(); }
  bool allTrue(bool local) override { return exchange_.reducer().allTrue(local); }
  void sum(std::span<Real> values) override { exchange_.reducer().sum(values); }
  void max(std::span<Real> values) override { exchange_.reducer().max(values); }
  void sumAndMax(std::span<Real> sums, std::span<Real> maxima) override {
    GRAIN_REQUIRE(sums.size() + 2 <= sums_.size() && maxima.size() + 1 <= maxima_.size(),
                  "StepReduction: too many statistics");
    const std::size_t ns = sums.size(), nm = maxima.size();
    std::copy(sums.begin(), sums.end(), sums_.begin());
    sums_[ns] = static_cast<Real>(exchange_.traffic().bytes);
    sums_[ns + 1] = static_cast<Real>(exchange_.traffic().messages);
    std::copy(maxima.begin(), maxima.end(), maxima_.begin());
    maxima_[nm] = localSignal();
    exchange_.reducer().sumAndMax(std::span<Real>(sums_.data(), ns + 2),
                                  std::span<Real>(maxima_.data(), nm + 1));
    std::copy_n(sums_.begin(), ns, sums.begin());
    std::copy_n(maxima_.begin(), nm, maxima.begin());
    bytes_ = static_cast<std::uint64_t>(sums_[ns]);
    messages_ = static_cast<std::uint64_t>(sums_[ns + 1]);
    signal_ = static_cast<int>(maxima_[nm]);
    reduced_ = true;
  }
  /// Before a step.
  void beginStep() { reduced_ = false; }
  /// After a step: the figures over all processes, or this process's own if the step made no
  /// reduction (a single process).
  std::uint64_t bytes() const { return reduced_ ? bytes_ : exchange_.traffic().bytes; }
  std::uint64_t messages() const { return reduced_ ? messages_ : exchange_.traffic().messages; }
  int signal() const { return reduced_ ? signal_ : static_cast<int>(localSignal()); }

 private:
  /// The stop signal that reached this process (0: none). It may reach one process only (a batch
  /// system's signal to one rank): the reduction tells the others.
  static Real localSignal() {
    return app::stopRequested() ? static_cast<Real>(std::max(1, app::stopSignal())) : 0.0;
  }

  mpi::DistributedExchange& exchange_;
  std::array<Real, mpi::MpiReducer::kMaxSums> sums_{};
  std::array<Real, mpi::MpiReducer::kMaxMaxima> maxima_{};
  std::uint64_t bytes_ = 0;
  std::uint64_t messages_ = 0;
  int signal_ = 0;
  bool reduced_ = false;
};

/// The step and the records of a distributed run.
class MpiHooks final : public app::RunHooks {
 public:
  MpiHooks(DynamicsSystem& system, MoreauStepper& stepper, mpi::DistributedExchange& exchange,
           const mpi::LoadBalanceSettings& balance, app::RunRecord& record, app::FclibDump& dump,
           std::ofstream* processLog)
      : system_(system),
        stepper_(stepper),
        exchange_(exchange),
        balance_(balance),
        record_(record),
        dump_(dump),
        processLog_(processLog) {}

  StepStats step() override {
    profile_.beginStep();
    exchange_.resetTraffic();
    // Load balancing before the step (GRSF checkAndRebuild).
    const auto ownedBodies = [&] {
      std::size_t n = 0;
      for (std::size_t i = 0; i < system_.bodies.size(); ++i) {
        n +=
            system_.bodies.isSimulated(i) && system_.bodies.ownerships()[i] == BodyOwnership::Local;
      }
      return n;
    };
    const bool bodyLimit = balance_.policy == mpi::LoadBalanceSettings::Policy::BodyLimit;
    const std::size_t local = bodyLimit ? ownedBodies() : 0;  // only the bodyLimit policy reads it
    profile_.beginRebuild(exchange_.traffic());
    bool rebuilt = false;
    if (mpi::shouldRebuild(MPI_COMM_WORLD, balance_, stepper_.stepCount(), local)) {
      // bodyWeight="time": this process's compute time per owned body since the last rebuild
      // (microseconds), averaged with the previous estimate so that timing noise does not make
      // the bodies swing between processes. A slower process gets fewer bodies.
      Real weight = 1.0;
      if (balance_.bodyWeight == mpi::LoadBalanceSettings::BodyWeight::Time &&
          computeSeconds_ > 0.0) {
        const std::size_t owned = bodyLimit ? local : ownedBodies();
        const Real measured =
            1e6 * computeSeconds_ / static_cast<Real>(std::max<std::size_t>(owned, 1));
        costPerBody_ = costPerBody_ > 0.0 ? 0.5 * (costPerBody_ + measured) : measured;
        weight = costPerBody_;
      }
      computeSeconds_ = 0.0;
      const mpi::BuildOutcome outcome = rebalance(balance_, system_, stepper_, exchange_, weight);
      ++rebuilds_;
      fromCentres_ += outcome == mpi::BuildOutcome::FromCentres ? 1 : 0;
      keptPrevious_ += outcome == mpi::BuildOutcome::KeptPrevious ? 1 : 0;
      rebuilt = outcome != mpi::BuildOutcome::KeptPrevious;
    }
    mostNeighbours_ = std::max(mostNeighbours_, exchange_.neighbours().size());
    profile_.endRebuild(exchange_.traffic(), rebuilt, rebuilt ? exchange_.migratedBodies() : 0);
    reduction_.beginStep();
    StepStats stats = stepper_.step(system_, StepExchanges{&exchange_, &exchange_, &reduction_});
    computeSeconds_ += std::max(0.0, stats.stepSeconds - exchange_.traffic().seconds);
    localBytes_ = exchange_.traffic().bytes;
    stats.bytesSent = reduction_.bytes();
    stats.messagesSent = reduction_.messages();
    profile_.endStep(exchange_.traffic());
    return stats;
  }

  void record(const StepStats& stats, std::uint64_t step) override {
    dump_.finish(stepper_);
    record_.recordStep(stats, step, system_, stepper_);
    if (processLog_ != nullptr) {
      const BodyStorage& b = system_.bodies;
      std::size_t local = 0, remote = 0;
      for (std::size_t i = 0; i < b.size(); ++i) {
        if (b.isSimulated(i)) {
          (b.ownerships()[i] == BodyOwnership::Local ? local : remote) += 1;
        }
      }
      *processLog_ << step << '\t' << stats.time << '\t' << local << '\t' << remote << '\t'
                   << exchange_.splitBodies() << '\t' << stepper_.contacts().size() << '\t'
                   << localBytes_ << '\t' << exchange_.neighbours().size();
      for (const double t : stats.stageSeconds) {
        *processLog_ << '\t' << t;
      }
      *processLog_ << '\n';
    }
  }

  bool stopRequested() override {
    // Sampled at the end of the step, in its statistics reduction (StepReduction): a signal that
    // arrives later, while the step's records are written, stops the run after the next step.
    signal_ = reduction_.signal();
    return signal_ != 0;
  }
  /// The stop signal that reached any process (0: none).
  int signal() const { return signal_; }
  /// Rebuilds of the decomposition so far.
  std::uint64_t rebuilds() const { return rebuilds_; }
  /// Most neighbours this process had in any step (the domains it exchanges bodies with).
  std::size_t mostNeighbours() const { return mostNeighbours_; }
  /// Rebuilds whose prediction made a cell thinner than a body: from the centres alone, or the
  /// previous decomposition kept.
  std::uint64_t fromCentres() const { return fromCentres_; }
  std::uint64_t keptPrevious() const { return keptPrevious_; }
  const app::StepProfile& profile() const { return profile_; }

 private:
  DynamicsSystem& system_;
  MoreauStepper& stepper_;
  mpi::DistributedExchange& exchange_;
  const mpi::LoadBalanceSettings& balance_;
  app::RunRecord& record_;
  app::FclibDump& dump_;
  std::ofstream* processLog_;
  StepReduction reduction_{exchange_};
  std::uint64_t localBytes_ = 0;
  std::size_t mostNeighbours_ = 0;
  int signal_ = 0;
  std::uint64_t rebuilds_ = 0;
  std::uint64_t fromCentres_ = 0;
  std::uint64_t keptPrevious_ = 0;
  double computeSeconds_ = 0.0;  ///< s: step time less communication time since the last rebuild
  double costPerBody_ = 0.0;     ///< us per owned body and window, smoothed (bodyWeight="time")
  app::StepProfile profile_;
};

/// The closing lines of a distributed run: neighbours per process, the step profile and the
/// rebuilds of the decomposition (collective); `stepsBefore`: the steps before the run's first
/// (those of the state a restart continues).
void sayRunSummary(const MpiHooks& hooks, const mpi::DistributedExchange& exchange,
                   std::uint64_t stepsBefore) {
  // Neighbours per process: they bound a process's messages per exchange; a large kd-tree
  // domain can border many small ones.
  std::array<double, 3> n{static_cast<double>(hooks.mostNeighbours()),
                          static_cast<double>(exchange.neighbours().size()),
                          static_cast<double>(exchange.neighbours().size())};
  MPI_Allreduce(MPI_IN_PLACE, n.data(), 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &n[2], 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  char line[160];
  std::snprintf(line, sizeof line,
                "neighbours per process: max %.0f during the run, now max %.0f and mean %.1f\n",
                n[0], n[1], n[2] / gSize);
  say("domains    " + std::string(line));
  say(hooks.profile().summary(MPI_COMM_WORLD, stepsBefore));
  if (hooks.rebuilds() > 0) {
    std::string fallbacks;
    if (hooks.fromCentres() + hooks.keptPrevious() > 0) {
      fallbacks = " (" + std::to_string(hooks.fromCentres()) + " from the centres alone and " +
                  std::to_string(hooks.keptPrevious()) +
                  " kept as it was: the prediction made a cell thinner than a body)";
    }
    say("balance    the decomposition was rebuilt " + std::to_string(hooks.rebuilds()) + " times" +
        fallbacks + "\n");
  }
}

/// Everything that can be wrong with the input, checked on every process before anything is
/// written. Returns the scene, or throws.
struct Setup {
  io::SceneDescription scene;
  std::unordered_map<BodyId, std::uint32_t> globalGeomId;  ///< of the bodies this process built
  std::size_t simulatedInScene = 0;                        ///< on all processes together
  io::SimulatedOrdinals ordinals;  ///< of the scene's simulated bodies: who built a body
  int processes = 1;               ///< of MPI_COMM_WORLD (asked once: builderOf runs per record)

  /// The process that built a simulated body of the scene (-1 for any other id).
  int builderOf(BodyId id) const { return ordinals.shareOfBody(id, processes); }
};

/// The scene's load options in a distributed run: each process builds a share of the simulated
/// bodies (`ordinals`, else the share k of P by ordinal), and reads no GlobalInitialCondition.
io::SceneLoadOptions loadOptions(const app::SimOptions& opt,
                                 std::optional<std::vector<io::OrdinalRange>> ordinals) {
  io::SceneLoadOptions o;
  o.mediaDirectory = opt.mediaDir;
  // A GlobalInitialCondition's states are read by all processes together (run()).
  o.readInitialState = false;
  if (gSize > 1) {
    if (ordinals) {
      o.simulatedOrdinals = std::move(ordinals);
    } else {
      // Process k builds the simulated bodies of ordinals [k N / P, (k + 1) N / P) (the builder
      // of a body follows from its id: io::SimulatedOrdinals), visiting only those.
      o.simulatedShare = std::pair{static_cast<int>(gRank), static_cast<int>(gSize)};
    }
    // Each process holds a share of the bodies: the scene may need the memory of all of them
    // (an upper bound, as if every process had a machine of its own).
    o.memoryBudget = io::machineMemoryBytes() * static_cast<std::uint64_t>(gSize);
  }
  return o;
}

/// The global geometry ids (.sim extra bytes) of the bodies the scene built.
std::unordered_map<BodyId, std::uint32_t> globalGeomIds(const io::SceneDescription& scene) {
  std::unordered_map<BodyId, std::uint32_t> ids;
  const BodyStorage& b = scene.system.bodies;
  for (std::size_t i = 0; i < b.size() && i < scene.globalGeomIdOfBody.size(); ++i) {
    if (scene.globalGeomIdOfBody[i] != 0) {
      ids[b.ids()[i]] = scene.globalGeomIdOfBody[i];
    }
  }
  return ids;
}

/// The scene again, with the simulated bodies of `ids` (increasing) in place of those built
/// first: a process builds the bodies whose records it read of a state to start from.
void rebuildWithBodies(const app::SimOptions& opt, Setup& setup, const std::vector<BodyId>& ids) {
  std::vector<io::OrdinalRange> ranges;
  std::vector<std::uint64_t> ordinals;
  ordinals.reserve(ids.size());
  for (const BodyId id : ids) {
    if (const std::optional<std::uint64_t> o = setup.ordinals.ordinalOf(id)) {
      ordinals.push_back(*o);
    }
  }
  std::sort(ordinals.begin(), ordinals.end());
  for (const std::uint64_t o : ordinals) {
    if (!ranges.empty() && ranges.back().end == o) {
      ++ranges.back().end;
    } else if (ranges.empty() || ranges.back().end < o) {
      ranges.push_back({o, o + 1});
    }
  }
  const std::string text = std::move(setup.scene.text);
  setup.scene = io::loadSceneFromString(text, opt.scene, loadOptions(opt, std::move(ranges)));
  setup.globalGeomId = globalGeomIds(setup.scene);
}

Setup loadScene(const app::SimOptions& opt) {
  std::vector<io::SceneOverride> overrides;
  for (const std::string& arg : opt.overrides) {
    overrides.push_back(io::parseSceneOverride(arg));
  }
  const std::string text =
      io::applySceneOverrides(io::readSceneText(opt.scene), opt.scene.string(), overrides);
  Setup s{
      io::loadSceneFromString(text, opt.scene, loadOptions(opt, std::nullopt)), {}, 0, {}, gSize};
  s.globalGeomId = globalGeomIds(s.scene);
  for (const io::BodyGroup& g : s.scene.groups) {
    if (g.motion == BodyMotion::Simulated) {
      s.simulatedInScene += g.loaded;
    }
  }
  s.ordinals = io::SimulatedOrdinals(s.scene.groups);
  // Of the local (Delassus) solvers only the matrix-free ones (APGD, PQN, IPM) run distributed.
  const InclusionSolverSettings& solver = s.scene.stepper.solver;
  const bool matrixFreeCapable = solver.localMethod && runsMatrixFree(*solver.localMethod);
  if (gSize > 1 && solver.localMethod && !(matrixFreeCapable && solver.matrixFree)) {
    const std::string method(sceneName(*solver.localMethod));
    throw io::SceneError(
        opt.scene.string(), lineOf(s.scene.text, "<InclusionSolverSettings"),
        "SceneSettings/TimeStepperSettings/InclusionSolverSettings",
        "method=\"" + method + "\"" + (matrixFreeCapable ? " without matrixFree=\"true\"" : "") +
            " is serial: with more than one process use one of " + matrixFreeMethodNames() +
            " with matrixFree=\"true\", or a velocity prox method (method=\"SORContact\" etc.)");
  }
  return s;
}

/// Opens this process's ProcessLog_<rank>.dat in its -l folder (continued by a restart).
void openProcessLog(const app::SimOptions& opt, std::ofstream& processLog) {
  const fs::path dir = opt.localDirs.size() == 1
                           ? opt.localDirs.front()
                           : opt.localDirs.at(static_cast<std::size_t>(gRank));
  fs::create_directories(dir);
  processLog.open(dir / ("ProcessLog_" + std::to_string(gRank) + ".dat"),
                  opt.restart.empty() ? std::ios::trunc : std::ios::app);
  if (opt.restart.empty()) {
    processLog << "# Step\tSimulationTime [s]\tLocalBodies\tRemoteBodies\tSplitBodies"
                  "\tContacts\tBytesSent\tNeighbours";
    for (std::size_t k = 0; k < static_cast<std::size_t>(Stage::Count); ++k) {
      processLog << '\t' << toString(static_cast<Stage>(k)) << "Time [s]";
    }
    processLog << '\n';
  }
}

/// --print-scene: the scene with the overrides applied, on standard output (collective).
int printScene(const app::SimOptions& opt) {
  const bool ok = checkedOnAll([&] {
    std::vector<io::SceneOverride> overrides;
    for (const std::string& arg : opt.overrides) {
      overrides.push_back(io::parseSceneOverride(arg));
    }
    say(io::applySceneOverrides(io::readSceneText(opt.scene), opt.scene.string(), overrides));
  });
  return ok ? kExitOk : kExitBadInput;
}

/// Every process built a share of the simulated bodies (see loadScene). A state to start from
/// (restart, GlobalInitialCondition) is read by all processes together, each a 1/P slice of it;
/// the builders check that it names each of their bodies once, and each process then builds the
/// bodies whose records it read in place of its share (rebuildWithBodies), so that a body travels
/// once, to its owner, when the first decomposition is set. Returns where a restart continues
/// (default: the scene's start). Throws on bad input.
io::ResumePoint readStartState(const app::SimOptions& opt, Setup& setup, MoreauStepper& stepper,
                               app::CollectiveReadBytes& readBytes) {
  const auto builderOf = [&](BodyId id) { return setup.builderOf(id); };
  const app::BuildBodies buildBodies = [&](const std::vector<BodyId>& ids) {
    rebuildWithBodies(opt, setup, ids);
  };
  io::ResumePoint resume;
  // (setup.scene is loaded again inside: take nothing of it by reference across the calls.)
  if (!opt.restart.empty()) {
    resume = app::loadResumeStateTogether(MPI_COMM_WORLD, opt.restart, setup.scene.system, stepper,
                                          setup.simulatedInScene, builderOf,
                                          gSize > 1 ? buildBodies : app::BuildBodies(), readBytes);
  } else if (setup.scene.initialCondition && !setup.scene.initialCondition->statesRead) {
    const io::InitialConditionSource source = *setup.scene.initialCondition;
    app::readInitialStateTogether(MPI_COMM_WORLD, setup.scene.file, source,
                                  setup.scene.system.bodies, builderOf,
                                  gSize > 1 ? buildBodies : app::BuildBodies(), readBytes);
    setup.scene.initialCondition->statesRead = true;
  }
  setup.scene.system.bodies.sortById();
  return resume;
}

/// The restart line: where the run continues and the most any process read of the record's files
/// (each reads about 1/P of the state; collective).
void sayRestart(const io::ResumePoint& resume, const app::CollectiveReadBytes& readBytes) {
  std::array<unsigned long long, 2> most{readBytes.sim, readBytes.cache};
  MPI_Allreduce(MPI_IN_PLACE, most.data(), 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  say("restart    from state " + std::to_string(resume.stateIndex) +
      " at t = " + std::to_string(resume.time) + " s (step " + std::to_string(resume.step) +
      "); each process read at most " + std::to_string(most[0]) + " bytes of SimState.sim (" +
      std::to_string(resume.simHeader.bytesPerState()) + " per state) and " +
      std::to_string(most[1]) + " of the warm-start data\n");
  for (const auto& m : resume.messages) {
    say("warning    " + m + "\n");
  }
}

/// The line of a GlobalInitialCondition: the state and the most any process read of its file
/// (each reads about 1/P of the state; collective).
void sayInitialState(const io::InitialConditionSource& source,
                     const app::CollectiveReadBytes& readBytes) {
  unsigned long long most = readBytes.sim;
  MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  say("initial    state " + std::to_string(source.stateIndex) + " of " + source.file.string() +
      " at t = " + std::to_string(source.stateTime) + " s; each process read at most " +
      std::to_string(most) + " bytes of it\n");
}

/// A step failed on this process while the others wait in a collective call: stops them all with
/// this message, naming a body of this process whose state is not finite if there is one (the
/// usual cause).
[[noreturn]] void abortStep(const std::exception& e, const io::SceneDescription& scene,
                            const BodyStorage& bodies, std::uint64_t step) {
  std::string body;
  if (const std::size_t bad = findNonFiniteBody(bodies); bad < bodies.size()) {
    body = "\n" + nonFiniteText(scene, bodies, bad, step);
  }
  std::fprintf(stderr, "\ngrain-sim-mpi: process %d: %s%s\n", static_cast<int>(gRank), e.what(),
               body.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, kExitFailure);
  std::abort();  // MPI_Abort does not return
}

/// The run stopped on non-finite velocities (every process agrees: the flag is reduced); the
/// lowest process with such a body names it (collective).
void sayNonFinite(const io::SceneDescription& scene, const BodyStorage& bodies,
                  const app::LoopResult& result) {
  const std::size_t bad = findNonFiniteBody(bodies);
  int speaker = bad < bodies.size() ? gRank : gSize;
  MPI_Allreduce(MPI_IN_PLACE, &speaker, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  say("\ngrain-sim-mpi: non-finite velocities at t = " + std::to_string(result.time) + " s (step " +
      std::to_string(result.step) + "); stopped\n");
  std::fflush(stdout);
  MPI_Barrier(MPI_COMM_WORLD);
  if (gRank == speaker) {
    std::fprintf(stderr, "%s\n", nonFiniteText(scene, bodies, bad, result.step).c_str());
    std::fflush(stderr);
  }
}

/// The bodies of a run in place on their processes (collective).
struct Placement {
  io::ResumePoint resume;  ///< where a restart continues (default: the scene's start)
  app::CollectiveReadBytes readBytes;
  mpi::LoadBalanceSettings balance;  ///< the scene's decomposition (balanceSettings)
  std::unique_ptr<mpi::DistributedExchange> exchange;
};

/// Reads the state to continue from (readStartState); the first decomposition gives each body its
/// owner and one exchange moves it there; then the scene's decomposition is built in parallel
/// from the bodies each process holds. Says the processes line. Null if the input is bad (every
/// process has said why; collective). Held by pointer: the exchange and the settings stay where
/// they were built.
std::unique_ptr<Placement> placeBodies(const app::SimOptions& opt, Setup& setup,
                                       MoreauStepper& stepper) {
  io::SceneDescription& scene = setup.scene;
  DynamicsSystem& system = scene.system;
  auto placement = std::make_unique<Placement>();
  Placement& p = *placement;
  std::shared_ptr<const mpi::Topology> topology;
  std::string topologyText;
  if (!checkedOnAll([&] { p.resume = readStartState(opt, setup, stepper, p.readBytes); })) {
    return nullptr;
  }
  if (!checkedOnAll(
          [&] { topology = firstDecomposition(scene, setup.simulatedInScene, topologyText); })) {
    return nullptr;
  }
  const unsigned splitRatio = scene.mpi ? scene.mpi->splitNodeUpdateRatio : 1;
  const unsigned checkRatio = scene.mpi ? scene.mpi->convergenceCheckRatio : 1;
  p.exchange =
      std::make_unique<mpi::DistributedExchange>(MPI_COMM_WORLD, topology, splitRatio, checkRatio);
  mpi::DistributedExchange& exchange = *p.exchange;
  // The global geometry ids (.sim extra bytes) of the bodies this process built travel with them.
  exchange.setOwnedBodyTags(std::move(setup.globalGeomId));
  if (!checkedOnAll([&] {
        std::vector<detail::PercussionCacheEntry> warmStart = stepper.takeWarmStartCache();
        exchange.setTopology(topology, system, warmStart);
      })) {
    return nullptr;
  }
  if (gSize > 1) {
    topologyText += shareText(system.bodies);
  }
  p.balance = balanceSettings(scene);
  if (scene.mpi && gSize > 1 && !checkedOnAll([&] {
        applySceneDecomposition(p.balance, system, stepper, exchange, topologyText);
      })) {
    return nullptr;
  }
  say("processes  " + std::to_string(gSize) + ", " + topologyText + "; splitNodeUpdateRatio " +
      std::to_string(splitRatio) + ", convergenceCheckRatio " + std::to_string(checkRatio) + "\n");
  return placement;
}

int run(const app::SimOptions& opt) {
  // 1. Input, on every process (all reach the same verdict).
  std::optional<Setup> setup;
  if (opt.printScene) {
    return printScene(opt);
  }
  if (!checkedOnAll([&] {
        setup.emplace(loadScene(opt));
        // What one process alone can write (ContactForces.dat, --dump-fclib), refused on more.
        app::RunRecord::checkWritable(gSize, setup->scene, opt.dumpFclibEvery > 0);
      })) {
    return kExitBadInput;
  }
  io::SceneDescription& scene = setup->scene;
  DynamicsSystem& system = scene.system;
  MoreauStepper stepper(scene.stepper);
  if (opt.check) {
    say("scene      " + opt.scene.string() + " loads: " + std::to_string(setup->simulatedInScene) +
        " simulated bodies\n");
    return kExitOk;
  }
  if (gRank == 0) {
    app::printSummary(scene);
  }

  // 2. State to continue from, decomposition, owned bodies.
  const std::unique_ptr<Placement> placed = placeBodies(opt, *setup, stepper);
  if (!placed) {
    return kExitBadInput;
  }
  const io::ResumePoint& resume = placed->resume;
  mpi::DistributedExchange& exchange = *placed->exchange;
  const auto simulated = static_cast<std::uint32_t>(setup->simulatedInScene);

  // 3. Output: the first process makes the record folder and writes its text files; the states
  // are written by all processes together.
  app::CollectiveRecordWriters writers(MPI_COMM_WORLD, exchange, simulated,
                                       scene.stepper.solver.usePercussionCache);
  app::RunRecord record(writers, scene,
                        {opt.outDir, opt.restart, opt.scene, opt.mediaDir, !opt.overrides.empty()});
  // From here on a stop signal ends the run after its first step, with the record complete.
  app::installStopHandlers();
  try {
    record.create();
    record.openFiles(resume);
  } catch (const std::exception& e) {
    say("grain-sim-mpi: " + std::string(e.what()) + "\n");
    return kExitFailure;
  }
  std::ofstream processLog;
  std::optional<app::FclibDump> dump;
  try {
    if (!opt.localDirs.empty()) {
      openProcessLog(opt, processLog);
    }
    record.openStates(resume, system, stepper);
    dump.emplace(opt, record.folder(), scene, stepper);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "grain-sim-mpi: process %d: %s\n", static_cast<int>(gRank), e.what());
    MPI_Abort(MPI_COMM_WORLD, kExitFailure);
  }
  if (!opt.restart.empty()) {
    sayRestart(resume, placed->readBytes);
  } else if (scene.initialCondition) {
    sayInitialState(*scene.initialCondition, placed->readBytes);
  }
  say(record.contactForcesNote() + dump->note() + "output     " + record.folder().string() + "\n");

  // 4. The steps.
  const double endTime = scene.stepper.endTime;
  std::optional<app::ProgressReporter> progress;
  if (gRank == 0) {
    progress.emplace(system.time, endTime, stdout);
  }
  const std::uint64_t firstStep = resume.step;
  const std::uint64_t lastStep =
      firstStep + app::stepsUntil(system.time, endTime, scene.stepper.deltaT);
  MpiHooks hooks(system, stepper, exchange, placed->balance, record, *dump,
                 processLog.is_open() ? &processLog : nullptr);
  app::LoopResult result;
  try {
    result =
        app::runSteps(hooks, firstStep, lastStep, system.time, progress ? &*progress : nullptr);
  } catch (const std::exception& e) {
    abortStep(e, scene, system.bodies, stepper.stepCount() + 1);
  }
  record.close();
  if (result.nonFinite) {
    sayNonFinite(scene, system.bodies, result);
    return kExitFailure;
  }
  say(record.compatibleForcesSummary());
  if (progress) {
    progress->finish(app::summaryLine(result, hooks.signal()));
  }
  sayRunSummary(hooks, exchange, firstStep);
  if (result.stopped) {
    say("output     " + record.folder().string() + " (complete up to the last written state)\n");
    say("continue   mpirun -np " + std::to_string(gSize) + " grain-sim-mpi --restart " +
        record.folder().string() + "\n");
    return kExitStopped;
  }
  say("output     " + record.folder().string() + "\n");
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  app::SimOptions opt;
  int code = kExitOk;
  app::SimProgram program;
  program.name = "grain-sim-mpi";
  program.distributed = true;
#ifdef GRAIN_SIM_WITH_FCLIB
  program.withFclib = true;
#endif
  if (app::parseSimOptions(program, argc, argv, opt, code, gRank == 0)) {
    app::ignoreFileSizeLimitSignal();  // a file-size limit is a write error, not a kill
    try {
      code = run(opt);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "grain-sim-mpi: process %d: %s\n", static_cast<int>(gRank), e.what());
      MPI_Abort(MPI_COMM_WORLD, kExitFailure);
    }
  }
  MPI_Finalize();
  return code;
}
