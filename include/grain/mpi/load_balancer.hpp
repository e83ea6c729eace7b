// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include <mpi.h>

#include <grain/core/bodies/body_id.hpp>
#include <grain/core/math/types.hpp>
#include <grain/core/timestepping/load_balance_settings.hpp>
#include <grain/mpi/kd_tree_topology.hpp>
#include <grain/mpi/topology.hpp>

/// Dynamic load balancing of distributed runs (thesis ch. 11): when to rebuild the domain
/// decomposition, and how to build it from the bodies each process owns now. Every process keeps
/// its own bodies: the decomposition is computed in parallel (the kd-tree with Zoltan's RCB, the
/// grid from reduced bounds); no process gathers all bodies. Moving the bodies to their new
/// owners is the caller's business (DistributedExchange).
namespace grain::mpi {

/// MPISettings of a scene (GRSF names): the one settings type the scene reader fills and the
/// load balancer uses, declared in the core (grain/core/timestepping/load_balance_settings.hpp).
using LoadBalanceSettings = grain::LoadBalanceSettings;

/// One simulated body a process owns, as the load balancer sees it.
struct BalancedBody {
  BodyId id = 0;
  Vec3 position = Vec3::Zero();  ///< centre of mass (I frame, m)
  Vec3 velocity = Vec3::Zero();  ///< of the centre of mass (I frame, m/s)
  Real weight = 1;               ///< workload (dimensionless, >= 0)
};

/// A static half-space the prediction does not cross: the free side is (x - point) . normal >= 0
/// (I frame, m; normal of unit length, pointing into the free side).
struct StaticHalfspace {
  Vec3 point = Vec3::Zero();
  Vec3 normal = Vec3::UnitZ();
};

/// Whether to rebuild the decomposition before time step `step` (GRSF checkAndRebuild): never
/// in static mode and at step 0; otherwise at every multiple of policyCheckEveryXTimeStep, always
/// (AlwaysRebuild) or if some process owns >= bodyLimit bodies (BodyLimit). The same answer on
/// every process. Collective over `comm` (one MPI_Allreduce) only at the checks of BodyLimit,
/// which every process reaches at the same step.
bool shouldRebuild(MPI_Comm comm, const LoadBalanceSettings& settings, std::uint64_t step,
                   std::size_t localBodies);

/// Adds to `out` the point cloud of the mass-point prediction: each body's centre (index 0) and
/// `nPoints` positions integrated by explicit Euler under `gravity` (m/s^2) with step `deltaT`
/// (s), p += dt v + dt^2/2 g, v += dt g (indices 1..). A point that would leave the free side of
/// a half-space stops on its plane, and the body's later points stay there. The body's weight is
/// split evenly over its 1 + nPoints points. Local (no communication).
void predictMassPoints(const std::vector<BalancedBody>& bodies, const Vec3& gravity,
                       const std::vector<StaticHalfspace>& halfspaces, std::uint32_t nPoints,
                       Real deltaT, WeightedPoints& out);

/// Statistical outlier filter (thesis Algorithm 11.3): for each of this process's `points`
/// (I frame, m) the mean distance to its k nearest other local points (nanoflann kd-tree with
/// `leafSize` points per leaf); the mean mu and standard deviation sigma of these means over all
/// processes; a point is an outlier if its mean distance >= mu + stdDevMult sigma (none when
/// sigma = 0). Returns one flag per point (1 = outlier). Processes with fewer than two points
/// contribute nothing and flag nothing. Collective over `comm` (one MPI_Allreduce).
std::vector<char> findOutliers(MPI_Comm comm, const std::vector<Vec3>& points, std::uint32_t k,
                               Real stdDevMult, std::uint32_t leafSize);

/// How buildTopology reached its decomposition (the cut rule is the same on every process, so is
/// the outcome).
enum class BuildOutcome : std::uint8_t {
  Predicted,     ///< from the predicted mass points (or the centres, without a prediction)
  FromCentres,   ///< the prediction made a cell too thin; built again from the centres alone
  KeptPrevious,  ///< both builds made a cell too thin; the previous decomposition stays
};

/// A decomposition and how it was reached.
struct BuiltTopology {
  std::shared_ptr<const Topology> topology;
  BuildOutcome outcome = BuildOutcome::Predicted;
};

/// Builds a new decomposition from the bodies this process owns now (collective over `comm`):
///  1. outlier filter on the centres (if enabled): outliers take no part in the build, but, as
///     every point, still get an owner by point query;
///  2. mass-point prediction of the other bodies (if massPointCount > 0);
///  3. grid: the box of the points (Predefined: the given box), grown to the cell size
///     minCellSize, dimensions gridDimension or from the extent; kd-tree: KdTreeTopology::build
///     with the frame of the build mode and the previous kd-tree's cuts as a start.
/// Every cell must be at least as thick as the largest body (`maxBodyExtent`, m, this process's
/// largest bounding-box edge, reduced with MAX) and as minCellSize (GRSF: the kd-tree's smallest
/// cell). Predicted points pile up where the prediction stops (on a floor), and a kd-tree cut
/// among them can leave a slab thinner than that; then the build is repeated from the centres
/// alone, and if that is too thin as well the `previous` decomposition is kept when its cells are
/// thick enough. Otherwise a body larger than the smallest cell throws grain::Error on every
/// process, naming both sizes, as do settings out of range (validate(LoadBalanceSettings)).
BuiltTopology buildTopology(MPI_Comm comm, const LoadBalanceSettings& settings,
                            const std::vector<BalancedBody>& bodies, const Vec3& gravity,
                            const std::vector<StaticHalfspace>& halfspaces, Real maxBodyExtent,
                            std::shared_ptr<const Topology> previous = nullptr);

}  // namespace grain::mpi
