// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include <mpi.h>

#include <grain/core/bodies/body_id.hpp>
#include <grain/core/common/settings.hpp>
#include <grain/core/math/types.hpp>
#include <grain/mpi/topology.hpp>

struct Zoltan_Struct;

namespace grain::mpi {

/// The points one process contributes to a decomposition (I frame, m), with a weight each
/// (dimensionless workload, e.g. 1 per body). A point is named by the body it comes from and an
/// index among that body's points (0 = the centre of mass, 1.. = predicted positions), so every
/// (id, index) pair is unique over all processes.
struct WeightedPoints {
  std::vector<Vec3> positions;
  std::vector<Real> weights;
  std::vector<BodyId> ids;
  std::vector<std::uint32_t> indices;

  std::size_t size() const { return positions.size(); }
  void clear();
  void add(const Vec3& position, Real weight, BodyId id, std::uint32_t index);
};

/// How the frame K of a kd-tree is chosen. The tree's cuts are axis-aligned in K.
enum class KdTreeFrame : std::uint8_t {
  /// K = I: cuts along the inertial axes.
  Aabb,
  /// K = principal axes of the weighted second moment (Binet tensor) of all processes' points,
  /// computed with reductions. Also used for the "MVBB" build mode: the principal axes are the
  /// usual first estimate of a minimum-volume box and good cut directions for RCB.
  Principal,
  /// K = I, and only the points inside the given box take part in the build (the region where
  /// the bodies are expected); all other points still get an owner.
  Predefined,
};

/// Parameters of a kd-tree build.
struct KdTreeSettings {
  KdTreeFrame frame = KdTreeFrame::Aabb;
  Vec3 boxMin = Vec3::Zero();  ///< predefined box (I frame, m), KdTreeFrame::Predefined only
  Vec3 boxMax = Vec3::Zero();
  /// Zoltan IMBALANCE_TOL: largest allowed ratio of a domain's weight to the mean weight.
  Real imbalanceTolerance = 1.05;

  /// The description of the members (grain/core/common/settings.hpp): no scene attributes (the
  /// load balancer derives them from LoadBalanceSettings), the ranges build() checks.
  template <class V>
  static constexpr void describe(V&& v) {
    using S = KdTreeSettings;
    using settings::Bound;
    using settings::field;
    v(field<&S::frame>("frame").internal());
    v(field<&S::boxMin>("boxMin").internal().withUnit("m"));
    v(field<&S::boxMax>("boxMax").internal().withUnit("m"));
    v(field<&S::imbalanceTolerance>("imbalanceTolerance").internal().withBound(Bound::AtLeastOne));
  }
};

/// Kd-tree decomposition (thesis §10.3) built with Zoltan's recursive coordinate bisection
/// (RCB): the cut tree is computed in parallel from each process's own points (no process sees
/// all points), weighted, with the cuts kept (KEEP_CUTS) for the queries below. One leaf per
/// process; the leaf of process r is its domain. Cuts are axis-aligned in the frame K
/// (x_K = R_KI x_I), chosen once at build time (KdTreeFrame).
///
/// Domains are half-open along each cut: a point exactly on a cut belongs to the lower side
/// (Zoltan_LB_Point_Assign's rule), and the boundary domains extend to infinity, so every
/// finite point has exactly one owner, including points far outside the partitioned cloud.
///
/// After the build every query is local (no communication): ownerOf walks the cut tree
/// (Zoltan_LB_Point_Assign), ranksOverlapping descends it with a box (Zoltan_LB_Box_Assign) and
/// keeps the domains the box really overlaps under the half-open rule. A process holds only what
/// concerns its own domain: its neighbour list and the boxes of the domains it meets (its own,
/// its neighbours', those its queries return), fetched from the cut tree when first needed. It
/// never holds a table over all processes (the cut tree itself, kept by Zoltan, has one node per
/// process).
///
/// Neighbours: rank s is a neighbour of r if s's domain lies within `neighbourMargin()` of r's
/// domain (max norm in K), which includes every domain touching it (faces, edges, corners). The
/// margin is minCellExtent() (times sqrt 3 when K is rotated, for I-frame boxes), so a body whose
/// centre is in r and whose bounding box has no extent larger than minCellExtent() overlaps only
/// r and its neighbours.
///
/// Lifetime: build and destruction are collective over the communicator (Zoltan duplicates and
/// frees it); destroy every KdTreeTopology before MPI_Finalize. Zoltan keeps no state outside
/// its struct, so any number of topologies can exist; they are not thread-safe (use one thread).
class KdTreeTopology final : public Topology {
 public:
  /// Builds the tree from every process's `points` (collective over `comm`). With a
  /// `previous` kd-tree on the same communicator its cuts start the bisection (RCB_REUSE), so
  /// domains move little between rebuilds, and each new domain goes to the process that owns most
  /// of its bodies (`points` with index 0; a greedy matching every process computes alike from
  /// gathered counts), so a domain that stays keeps its process. Throws grain::Error (on every
  /// process) when no process has a point, a weight is negative or not finite, or Zoltan fails.
  static std::shared_ptr<KdTreeTopology> build(MPI_Comm comm, const WeightedPoints& points,
                                               const KdTreeSettings& settings,
                                               const KdTreeTopology* previous = nullptr);

  ~KdTreeTopology() override;
  KdTreeTopology(const KdTreeTopology&) = delete;
  KdTreeTopology& operator=(const KdTreeTopology&) = delete;

  int size() const override { return size_; }
  int ownerOf(const Vec3& point) const override;
  void ranksOverlapping(const Vec3& lo, const Vec3& hi, std::vector<int>& ranks) const override;
  std::vector<int> neighbours(int rank) const override;
  /// Compares the box (its K-aligned bounding box) with the domain box: no Zoltan call.
  bool insideDomain(int rank, const Vec3& lo, const Vec3& hi) const override;
  /// Smallest extent of a domain along a K axis, each domain clipped to the box of the
  /// partitioned points (m); axes along which a domain is unbounded on both sides do not count.
  /// Infinite with one process.
  Real minCellExtent() const override { return minCellExtent_; }

  /// Rotation R_KI from the inertial frame into the tree's frame K.
  const Mat3& rotationKI() const { return rotationKI_; }
  /// Domain of `rank` in the frame K (m): lower and upper corner, unbounded faces at +-infinity.
  std::array<Vec3, 2> domainBox(int rank) const;
  /// Domain boxes this process holds: after the build its own and its neighbours', then also
  /// those of the other domains it was asked about.
  std::size_t heldDomainBoxes() const { return boxCache_.size(); }
  /// Box of the partitioned points in the frame K (m).
  const std::array<Vec3, 2>& cloudBox() const { return cloudBox_; }
  /// Distance (max norm in K, m) within which domains count as neighbours.
  Real neighbourMargin() const { return neighbourMargin_; }

 private:
  KdTreeTopology() = default;
  /// This process's neighbours, the smallest cell extent and the margin (collective).
  void computeDomains(MPI_Comm comm);
  /// The neighbours of `rank`, from its domain box widened by the margin (no communication).
  std::vector<int> neighboursOf(int rank) const;
  /// The domain box of `rank` from the cut tree (not kept).
  std::array<Vec3, 2> fetchBox(int rank) const;
  /// Centre and half extents (K, m) of the K-aligned bounding box of the box [lo, hi] (I): the
  /// one arithmetic of every box query, so that queries of the same box agree to the bit.
  std::pair<Vec3, Vec3> boxInFrame(const Vec3& lo, const Vec3& hi) const;
  /// Owner of a point given in the frame K.
  int ownerInFrame(const Vec3& pointK) const;
  /// The tree's part (Zoltan's processor number, not remapped) of a point given in the frame K.
  int partInFrame(const Vec3& pointK) const;
  int processOfPart(int part) const {
    return processOfPart_.empty() ? part : processOfPart_[static_cast<std::size_t>(part)];
  }
  int partOfProcess(int process) const {
    return partOfProcess_.empty() ? process : partOfProcess_[static_cast<std::size_t>(process)];
  }

  Zoltan_Struct* zz_ = nullptr;
  int size_ = 1;
  bool rotated_ = false;
  Mat3 rotationKI_ = Mat3::Identity();
  std::array<Vec3, 2> cloudBox_{Vec3::Zero(), Vec3::Zero()};
  int rank_ = 0;
  std::vector<int> neighbours_;                             ///< of this process
  std::array<Vec3, 2> ownBox_{Vec3::Zero(), Vec3::Zero()};  ///< this process's domain (K, m)
  /// This process's domain and its neighbours' (K, m), by rank (sorted).
  std::vector<std::pair<int, std::array<Vec3, 2>>> nearBoxes_;
  /// Domain boxes met so far, by rank (sorted).
  mutable std::vector<std::pair<int, std::array<Vec3, 2>>> boxCache_;
  Real minCellExtent_ = 0;
  Real neighbourMargin_ = 0;
  mutable std::vector<int> scratch_;
  /// After a rebuild, the process of each part of the tree and its inverse (empty: the identity,
  /// as after a first build). One int per process each, as the cut tree itself has a node per
  /// process.
  std::vector<int> processOfPart_;
  std::vector<int> partOfProcess_;
};

}  // namespace grain::mpi
