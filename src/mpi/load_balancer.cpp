// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cmath>
#include <limits>
#include <nanoflann.hpp>
#include <sstream>

#include <grain/core/common/error.hpp>
#include <grain/mpi/load_balancer.hpp>

namespace grain::mpi {

namespace {

constexpr Real kInf = std::numeric_limits<Real>::infinity();

/// nanoflann's view of a vector of points.
struct PointAdaptor {
  const std::vector<Vec3>* points = nullptr;
  std::size_t kdtree_get_point_count() const { return points->size(); }
  Real kdtree_get_pt(std::size_t i, std::size_t k) const {
    return (*points)[i][static_cast<Eigen::Index>(k)];
  }
  template <class Box>
  bool kdtree_get_bbox(Box& /*box*/) const {
    return false;
  }
};

using KnnTree = nanoflann::KDTreeSingleIndexAdaptor<
    nanoflann::L2_Simple_Adaptor<Real, PointAdaptor, Real, std::size_t>, PointAdaptor, 3,
    std::size_t>;

/// The grid over the points' box (Predefined: the given box), each cell at least minCellSize.
std::shared_ptr<const Topology> buildGrid(MPI_Comm comm, const LoadBalanceSettings& settings,
                                          const WeightedPoints& points) {
  int processes = 1;
  MPI_Comm_size(comm, &processes);
  Vec3 lo = settings.minPoint;
  Vec3 hi = settings.maxPoint;
  if (settings.buildMode != LoadBalanceSettings::BuildMode::Predefined) {
    double box[6] = {kInf, kInf, kInf, kInf, kInf, kInf};
    for (const Vec3& p : points.positions) {
      for (int k = 0; k < 3; ++k) {
        box[k] = std::min(box[k], p[k]);
        box[3 + k] = std::min(box[3 + k], -p[k]);
      }
    }
    MPI_Allreduce(MPI_IN_PLACE, box, 6, MPI_DOUBLE, MPI_MIN, comm);
    lo = Vec3(box[0], box[1], box[2]);
    hi = -Vec3(box[3], box[4], box[5]);
    GRAIN_REQUIRE(lo.allFinite() && hi.allFinite(),
                  "load balancer: no process has a body to build the grid on");
  }
  GRAIN_REQUIRE((hi - lo).minCoeff() >= 0, "load balancer: the grid box is empty");
  std::array<int, 3> dims{static_cast<int>(settings.gridDimension[0]),
                          static_cast<int>(settings.gridDimension[1]),
                          static_cast<int>(settings.gridDimension[2])};
  if (settings.matchProcessDimToExtent) {
    dims = GridTopology::dimensionsForExtent(processes, hi - lo);
  }
  GRAIN_REQUIRE(dims[0] * dims[1] * dims[2] == processes,
                "load balancer: the grid dimension must multiply to the process count");
  // Grow the box symmetrically so that every cell has at least the minimum extent.
  const Real minCell = std::max<Real>(settings.minCellSize, 1e-9);
  for (int k = 0; k < 3; ++k) {
    const Real need = minCell * dims[static_cast<std::size_t>(k)];
    const Real grow = std::max<Real>(need - (hi[k] - lo[k]), 0);
    lo[k] -= 0.5 * grow;
    hi[k] += 0.5 * grow;
  }
  return std::make_shared<GridTopology>(lo, hi, dims);
}

}  // namespace

bool shouldRebuild(MPI_Comm comm, const LoadBalanceSettings& settings, std::uint64_t step,
                   std::size_t localBodies) {
  const std::uint64_t every = std::max<std::uint32_t>(settings.policyCheckEveryXTimeStep, 1);
  if (settings.mode == LoadBalanceSettings::Mode::Static || step == 0 || step % every != 0) {
    return false;
  }
  if (settings.policy == LoadBalanceSettings::Policy::AlwaysRebuild) {
    return true;
  }
  int wants = localBodies >= settings.bodyLimit ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &wants, 1, MPI_INT, MPI_LOR, comm);
  return wants != 0;
}

void predictMassPoints(const std::vector<BalancedBody>& bodies, const Vec3& gravity,
                       const std::vector<StaticHalfspace>& halfspaces, std::uint32_t nPoints,
                       Real deltaT, WeightedPoints& out) {
  const Real share = 1.0 / (1.0 + nPoints);
  for (const BalancedBody& b : bodies) {
    const Real w = b.weight * share;
    out.add(b.position, w, b.id, 0);
    Vec3 p = b.position;
    Vec3 v = b.velocity;
    bool stopped = false;
    for (std::uint32_t i = 1; i <= nPoints; ++i) {
      if (!stopped) {
        p += deltaT * v + 0.5 * deltaT * deltaT * gravity;
        v += deltaT * gravity;
        for (const StaticHalfspace& h : halfspaces) {
          const Real depth = (p - h.point).dot(h.normal);
          if (depth < 0) {
            p -= depth * h.normal;  // onto the plane
            stopped = true;
          }
        }
      }
      out.add(p, w, b.id, i);
    }
  }
}

std::vector<char> findOutliers(MPI_Comm comm, const std::vector<Vec3>& points, std::uint32_t k,
                               Real stdDevMult, std::uint32_t leafSize) {
  const std::size_t n = points.size();
  std::vector<Real> meanDistance(n, 0);
  double stats[3] = {0, 0, 0};  // sum, sum of squares, count of mean distances
  if (n >= 2 && k >= 1) {
    PointAdaptor adaptor{&points};
    KnnTree tree(3, adaptor,
                 nanoflann::KDTreeSingleIndexAdaptorParams(std::max<std::size_t>(leafSize, 1)));
    const std::size_t want = std::min<std::size_t>(k, n - 1) + 1;  // the point itself first
    std::vector<std::size_t> index(want);
    std::vector<Real> distSq(want);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t found = tree.knnSearch(points[i].data(), want, index.data(), distSq.data());
      Real sum = 0;
      std::size_t used = 0;
      for (std::size_t j = 0; j < found; ++j) {
        if (index[j] != i) {
          sum += std::sqrt(distSq[j]);
          ++used;
        }
      }
      // Duplicated points may push the point itself out of its own list: drop the farthest.
      if (used == want) {
        sum -= std::sqrt(distSq[found - 1]);
        --used;
      }
      meanDistance[i] = used > 0 ? sum / static_cast<Real>(used) : 0;
      stats[0] += meanDistance[i];
      stats[1] += meanDistance[i] * meanDistance[i];
      stats[2] += 1;
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, stats, 3, MPI_DOUBLE, MPI_SUM, comm);
  std::vector<char> outlier(n, 0);
  if (stats[2] < 1 || n < 2 || k < 1) {
    return outlier;
  }
  const Real mu = stats[0] / stats[2];
  const Real sigma = std::sqrt(std::max<Real>(stats[1] / stats[2] - mu * mu, 0));
  if (!(sigma > 0)) {
    return outlier;
  }
  const Real limit = mu + stdDevMult * sigma;
  for (std::size_t i = 0; i < n; ++i) {
    outlier[i] = meanDistance[i] >= limit ? 1 : 0;
  }
  return outlier;
}

BuiltTopology buildTopology(MPI_Comm comm, const LoadBalanceSettings& settings,
                            const std::vector<BalancedBody>& bodies, const Vec3& gravity,
                            const std::vector<StaticHalfspace>& halfspaces, Real maxBodyExtent,
                            std::shared_ptr<const Topology> previous) {
  validate(settings);  // the same settings on every process: all throw or none
  std::vector<BalancedBody> kept;
  if (settings.outlierFilter) {
    std::vector<Vec3> centres;
    centres.reserve(bodies.size());
    for (const BalancedBody& b : bodies) {
      centres.push_back(b.position);
    }
    const std::vector<char> outlier =
        findOutliers(comm, centres, settings.outlierKnnMean, settings.outlierStdDeviationMult,
                     settings.outlierAllowSplitAbove);
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      if (outlier[i] == 0) {
        kept.push_back(bodies[i]);
      }
    }
  } else {
    kept = bodies;
  }

  // One build from the points of `nPoints` predicted positions per body (0: the centres).
  const auto build = [&](std::uint32_t nPoints) -> std::shared_ptr<const Topology> {
    WeightedPoints points;
    predictMassPoints(kept, gravity, halfspaces, nPoints, settings.massPointDeltaT, points);
    if (settings.type == LoadBalanceSettings::TopologyType::Grid) {
      return buildGrid(comm, settings, points);
    }
    KdTreeSettings kd;
    switch (settings.buildMode) {
      case LoadBalanceSettings::BuildMode::Aabb:
        kd.frame = KdTreeFrame::Aabb;
        break;
      case LoadBalanceSettings::BuildMode::Mvbb:
      case LoadBalanceSettings::BuildMode::BinetTensor:
        kd.frame = KdTreeFrame::Principal;
        break;
      case LoadBalanceSettings::BuildMode::Predefined:
        kd.frame = KdTreeFrame::Predefined;
        kd.boxMin = settings.minPoint;
        kd.boxMax = settings.maxPoint;
        break;
    }
    return KdTreeTopology::build(comm, points, kd,
                                 dynamic_cast<const KdTreeTopology*>(previous.get()));
  };

  // Every process computes the same minCellExtent() from the same cuts: the same branch is taken
  // everywhere, so the collective builds line up.
  double largest = maxBodyExtent;
  MPI_Allreduce(MPI_IN_PLACE, &largest, 1, MPI_DOUBLE, MPI_MAX, comm);
  const Real need = std::max<Real>(largest, settings.minCellSize);
  BuiltTopology built{build(settings.massPointCount), BuildOutcome::Predicted};
  if (built.topology->minCellExtent() < need && settings.massPointCount > 0) {
    built = {build(0), BuildOutcome::FromCentres};
  }
  if (built.topology->minCellExtent() < need && previous != nullptr &&
      previous->size() == built.topology->size() && previous->minCellExtent() >= largest) {
    built = {std::move(previous), BuildOutcome::KeptPrevious};
  }
  if (largest > built.topology->minCellExtent()) {
    std::ostringstream msg;
    msg << "load balancer: a body of extent " << largest
        << " m is larger than the smallest domain (" << built.topology->minCellExtent()
        << " m); use fewer processes or a larger minCellSize";
    throw Error(msg.str());
  }
  return built;
}

}  // namespace grain::mpi
