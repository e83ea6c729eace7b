// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <string>
#include <zoltan.h>

#include <Eigen/Eigenvalues>

#include <grain/core/common/error.hpp>
#include <grain/mpi/kd_tree_topology.hpp>

namespace grain::mpi {

namespace {

constexpr Real kInf = std::numeric_limits<Real>::infinity();

/// Global ids: the 64-bit body id as two 32-bit entries and the point's index among the body's
/// points as a third. Local id: the position in the arrays handed to Zoltan.
constexpr int kGidEntries = 3;

/// What the Zoltan callbacks read: the points of this process in the frame K.
struct CallbackData {
  const std::vector<Vec3>* coords = nullptr;
  const std::vector<Real>* weights = nullptr;
  const std::vector<BodyId>* ids = nullptr;
  const std::vector<std::uint32_t>* indices = nullptr;
};

int numObjects(void* data, int* ierr) {
  *ierr = ZOLTAN_OK;
  return static_cast<int>(static_cast<const CallbackData*>(data)->coords->size());
}

void objectList(void* data, int numGid, int numLid, ZOLTAN_ID_PTR gids, ZOLTAN_ID_PTR lids,
                int weightDim, float* weights, int* ierr) {
  const auto& d = *static_cast<const CallbackData*>(data);
  if (numGid != kGidEntries || numLid != 1 || weightDim != 1) {
    *ierr = ZOLTAN_FATAL;
    return;
  }
  for (std::size_t i = 0; i < d.coords->size(); ++i) {
    const BodyId id = (*d.ids)[i];
    gids[kGidEntries * i + 0] = static_cast<ZOLTAN_ID_TYPE>(id & 0xffffffffu);
    gids[kGidEntries * i + 1] = static_cast<ZOLTAN_ID_TYPE>(id >> 32);
    gids[kGidEntries * i + 2] = static_cast<ZOLTAN_ID_TYPE>((*d.indices)[i]);
    lids[i] = static_cast<ZOLTAN_ID_TYPE>(i);
    weights[i] = static_cast<float>((*d.weights)[i]);
  }
  *ierr = ZOLTAN_OK;
}

int numGeometry(void* /*data*/, int* ierr) {
  *ierr = ZOLTAN_OK;
  return 3;
}

void geometryMulti(void* data, int /*numGid*/, int numLid, int numObj, ZOLTAN_ID_PTR /*gids*/,
                   ZOLTAN_ID_PTR lids, int numDim, double* coords, int* ierr) {
  const auto& d = *static_cast<const CallbackData*>(data);
  if (numLid != 1 || numDim != 3) {
    *ierr = ZOLTAN_FATAL;
    return;
  }
  for (int i = 0; i < numObj; ++i) {
    const Vec3& p = (*d.coords)[lids[i]];
    for (int k = 0; k < 3; ++k) {
      coords[3 * i + k] = p[k];
    }
  }
  *ierr = ZOLTAN_OK;
}

void initializeZoltan() {
  static std::once_flag once;
  std::call_once(once, [] {
    float version = 0;
    GRAIN_REQUIRE(Zoltan_Initialize(0, nullptr, &version) == ZOLTAN_OK,
                  "kd-tree topology: Zoltan_Initialize failed");
  });
}

/// Throws grain::Error on every process if `failed` is true on any of them.
void throwIfAny(MPI_Comm comm, bool failed, const std::string& what) {
  int local = failed ? 1 : 0;
  int any = 0;
  MPI_Allreduce(&local, &any, 1, MPI_INT, MPI_MAX, comm);
  GRAIN_REQUIRE(any == 0, "kd-tree topology: " + what);
}

void setParam(Zoltan_Struct* zz, const char* name, const std::string& value) {
  GRAIN_REQUIRE(Zoltan_Set_Param(zz, name, value.c_str()) == ZOLTAN_OK,
                std::string("kd-tree topology: Zoltan rejected parameter ") + name);
}

/// Rotation R_KI onto the principal axes of the points (largest spread along x_K), the same on
/// every process (computed on process 0 from reduced moments and broadcast). Collective.
Mat3 principalFrame(MPI_Comm comm, const std::vector<Vec3>& points) {
  double sums[4] = {0, 0, 0, static_cast<double>(points.size())};
  for (const Vec3& p : points) {
    for (int k = 0; k < 3; ++k) {
      sums[k] += p[k];
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, sums, 4, MPI_DOUBLE, MPI_SUM, comm);
  const Vec3 centre =
      sums[3] > 0 ? Vec3(Vec3(sums[0], sums[1], sums[2]) / sums[3]) : Vec3(Vec3::Zero());
  // Second moment about the centre (the Binet tensor up to the trace term), upper triangle.
  double moments[6] = {0, 0, 0, 0, 0, 0};
  for (const Vec3& p : points) {
    const Vec3 r = p - centre;
    moments[0] += r.x() * r.x();
    moments[1] += r.x() * r.y();
    moments[2] += r.x() * r.z();
    moments[3] += r.y() * r.y();
    moments[4] += r.y() * r.z();
    moments[5] += r.z() * r.z();
  }
  MPI_Allreduce(MPI_IN_PLACE, moments, 6, MPI_DOUBLE, MPI_SUM, comm);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  Mat3 rotation = Mat3::Identity();
  if (rank == 0) {
    Mat3 m;
    m << moments[0], moments[1], moments[2], moments[1], moments[3], moments[4], moments[2],
        moments[4], moments[5];
    const Eigen::SelfAdjointEigenSolver<Mat3> solver(m);
    if (solver.info() == Eigen::Success) {
      // Eigenvalues ascend: rows of R_KI are the axes by decreasing spread.
      for (int k = 0; k < 3; ++k) {
        rotation.row(k) = solver.eigenvectors().col(2 - k).transpose();
      }
      if (rotation.determinant() < 0) {
        rotation.row(2) *= -1;
      }
    }
  }
  MPI_Bcast(rotation.data(), 9, MPI_DOUBLE, 0, comm);
  return rotation;
}

/// The process of every part of a rebuilt tree (index: the part, Zoltan's processor number
/// without remapping), chosen so that bodies stay where they are: `parts` holds the new part of
/// every body this process owns. The greedy matching: the (part, process, bodies) pairs by
/// decreasing body count (ties: lower part, then lower process) each give their part to their
/// process while both are free; the parts left then go to the processes left, both in increasing
/// order. A part whose bodies mostly sit on one process goes to it, as long as no heavier pair
/// claimed either. Collective.
///
/// `expected(r)` is the part that process r held before (its previous part under the previous
/// numbering). If on every process that part holds more of its bodies than any other part does
/// (strictly, and at least one), the matching gives every process that part: each process's
/// heaviest pair comes before every other pair of the process, so by induction over the sorted
/// pairs every heaviest pair finds its part and its process free (the parts are distinct) and
/// every other pair finds its process taken. Then one logical reduction decides, and nothing is
/// gathered: a rebuild whose domains stay, the usual one, costs no message that grows with the
/// processes. Otherwise every process gathers every process's pairs (a few per process) and makes
/// the matching itself.
template <class Expected>
std::vector<int> matchPartsToProcesses(MPI_Comm comm, int size, std::vector<int> parts,
                                       const Expected& expected) {
  std::sort(parts.begin(), parts.end());
  std::vector<int> local;  // (part, bodies) pairs
  for (std::size_t i = 0; i < parts.size();) {
    std::size_t j = i;
    while (j < parts.size() && parts[j] == parts[i]) {
      ++j;
    }
    local.push_back(parts[i]);
    local.push_back(static_cast<int>(j - i));
    i = j;
  }
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const int mine = expected(rank);
  int keeps = 0;  // bodies of this process in its previous part
  int other = 0;  // the most in any other part
  for (std::size_t k = 0; k < local.size(); k += 2) {
    if (local[k] == mine) {
      keeps = local[k + 1];
    } else {
      other = std::max(other, local[k + 1]);
    }
  }
  int stays = keeps > 0 && keeps > other ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &stays, 1, MPI_INT, MPI_LAND, comm);
  if (stays != 0) {
    std::vector<int> processOf(static_cast<std::size_t>(size));
    for (int r = 0; r < size; ++r) {
      processOf[static_cast<std::size_t>(expected(r))] = r;
    }
    return processOf;
  }
  std::vector<int> counts(static_cast<std::size_t>(size));
  const int entries = static_cast<int>(local.size());
  MPI_Allgather(&entries, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
  std::vector<int> offsets(static_cast<std::size_t>(size) + 1, 0);
  for (std::size_t r = 0; r < counts.size(); ++r) {
    offsets[r + 1] = offsets[r] + counts[r];
  }
  std::vector<int> all(static_cast<std::size_t>(offsets.back()));
  MPI_Allgatherv(local.data(), entries, MPI_INT, all.data(), counts.data(), offsets.data(), MPI_INT,
                 comm);
  struct Pair {
    int bodies;
    int part;
    int process;
  };
  std::vector<Pair> pairs;
  pairs.reserve(all.size() / 2);
  for (int r = 0; r < size; ++r) {
    for (int k = offsets[static_cast<std::size_t>(r)]; k < offsets[static_cast<std::size_t>(r) + 1];
         k += 2) {
      pairs.push_back({all[static_cast<std::size_t>(k) + 1], all[static_cast<std::size_t>(k)], r});
    }
  }
  std::sort(pairs.begin(), pairs.end(), [](const Pair& a, const Pair& b) {
    return a.bodies != b.bodies ? a.bodies > b.bodies
                                : (a.part != b.part ? a.part < b.part : a.process < b.process);
  });
  std::vector<int> processOf(static_cast<std::size_t>(size), -1);
  std::vector<char> taken(static_cast<std::size_t>(size), 0);
  for (const Pair& p : pairs) {
    if (processOf[static_cast<std::size_t>(p.part)] < 0 &&
        taken[static_cast<std::size_t>(p.process)] == 0) {
      processOf[static_cast<std::size_t>(p.part)] = p.process;
      taken[static_cast<std::size_t>(p.process)] = 1;
    }
  }
  int next = 0;
  for (int& process : processOf) {
    if (process < 0) {
      while (taken[static_cast<std::size_t>(next)] != 0) {
        ++next;
      }
      process = next;
      taken[static_cast<std::size_t>(next)] = 1;
    }
  }
  return processOf;
}

}  // namespace

void WeightedPoints::clear() {
  positions.clear();
  weights.clear();
  ids.clear();
  indices.clear();
}

void WeightedPoints::add(const Vec3& position, Real weight, BodyId id, std::uint32_t index) {
  positions.push_back(position);
  weights.push_back(weight);
  ids.push_back(id);
  indices.push_back(index);
}

std::shared_ptr<KdTreeTopology> KdTreeTopology::build(MPI_Comm comm, const WeightedPoints& points,
                                                      const KdTreeSettings& settings,
                                                      const KdTreeTopology* previous) {
  std::shared_ptr<KdTreeTopology> topo(new KdTreeTopology());
  MPI_Comm_size(comm, &topo->size_);

  bool invalid = points.weights.size() != points.size() || points.ids.size() != points.size() ||
                 points.indices.size() != points.size();
  for (std::size_t i = 0; !invalid && i < points.size(); ++i) {
    invalid = !std::isfinite(points.weights[i]) || points.weights[i] < 0 ||
              !points.positions[i].allFinite();
  }
  throwIfAny(comm, invalid, "every point needs a finite position, id and weight >= 0");
  settings::checkBounds(settings, "kd-tree topology: ");
  if (settings.frame == KdTreeFrame::Predefined) {
    GRAIN_REQUIRE((settings.boxMax - settings.boxMin).minCoeff() > 0,
                  "kd-tree topology: the predefined box must have a positive extent");
  }

  // Frame K and the points that take part (in K).
  if (settings.frame == KdTreeFrame::Principal) {
    topo->rotationKI_ = principalFrame(comm, points.positions);
    topo->rotated_ = !topo->rotationKI_.isIdentity(0);
  }
  std::vector<Vec3> coords;
  std::vector<Real> weights;
  std::vector<BodyId> ids;
  std::vector<std::uint32_t> indices;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const Vec3 p = topo->rotationKI_ * points.positions[i];
    if (settings.frame == KdTreeFrame::Predefined &&
        ((p - settings.boxMin).minCoeff() < 0 || (settings.boxMax - p).minCoeff() < 0)) {
      continue;
    }
    coords.push_back(p);
    weights.push_back(points.weights[i]);
    ids.push_back(points.ids[i]);
    indices.push_back(points.indices[i]);
  }

  // Box of the partitioned points: one MIN reduction over (lo, -hi); the count as a seventh entry.
  double box[7] = {kInf, kInf, kInf, kInf, kInf, kInf, -static_cast<double>(coords.size())};
  for (const Vec3& p : coords) {
    for (int k = 0; k < 3; ++k) {
      box[k] = std::min(box[k], p[k]);
      box[3 + k] = std::min(box[3 + k], -p[k]);
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, box, 7, MPI_DOUBLE, MPI_MIN, comm);
  int anyPoints = coords.empty() ? 0 : 1;
  MPI_Allreduce(MPI_IN_PLACE, &anyPoints, 1, MPI_INT, MPI_MAX, comm);
  GRAIN_REQUIRE(anyPoints != 0, "kd-tree topology: no process has a point to partition");
  topo->cloudBox_ = {Vec3(box[0], box[1], box[2]), Vec3(-box[3], -box[4], -box[5])};
  if (settings.frame == KdTreeFrame::Predefined) {
    topo->cloudBox_ = {settings.boxMin, settings.boxMax};
  }

  if (topo->size_ > 1) {
    initializeZoltan();
    CallbackData data{&coords, &weights, &ids, &indices};
    topo->zz_ = previous != nullptr && previous->zz_ != nullptr ? Zoltan_Copy(previous->zz_)
                                                                : Zoltan_Create(comm);
    throwIfAny(comm, topo->zz_ == nullptr, "Zoltan_Create failed");
    Zoltan_Struct* zz = topo->zz_;
    setParam(zz, "DEBUG_LEVEL", "0");
    setParam(zz, "LB_METHOD", "RCB");
    setParam(zz, "LB_APPROACH", "REPARTITION");
    setParam(zz, "NUM_GID_ENTRIES", std::to_string(kGidEntries));
    setParam(zz, "NUM_LID_ENTRIES", "1");
    setParam(zz, "OBJ_WEIGHT_DIM", "1");
    setParam(zz, "RETURN_LISTS", "NONE");
    setParam(zz, "KEEP_CUTS", "1");
    setParam(zz, "RCB_REUSE", previous != nullptr ? "1" : "0");
    setParam(zz, "AVERAGE_CUTS", "1");
    setParam(zz, "REDUCE_DIMENSIONS", "0");
    // A first build numbers the domains as the bisection made them, so that consecutive ranks
    // (which a cluster's scheduler puts on one node) hold neighbouring domains and most messages
    // stay inside a node. Remapping would instead give each process the domain holding most of
    // its current bodies, whose ranks follow the initial id ranges: on 256 simulated processes
    // (5 nodes of 56 cores) the messages of a step took 3.2 ms remapped and 0.9 ms not
    // (smpi_scaling.sh --network-only). A rebuild gives each new domain to the process that holds
    // most of its bodies (matchPartsToProcesses, below), which keeps the previous numbering, and
    // with it the locality, where the domains stay. Zoltan's own REMAP is off: its matching (a
    // path-growing heuristic) left a quarter of a settled lattice's bodies moving at every
    // rebuild on 16 processes, the domains unchanged but relabelled.
    setParam(zz, "REMAP", "0");
    setParam(zz, "IMBALANCE_TOL", std::to_string(settings.imbalanceTolerance));
    Zoltan_Set_Num_Obj_Fn(zz, &numObjects, &data);
    Zoltan_Set_Obj_List_Fn(zz, &objectList, &data);
    Zoltan_Set_Num_Geom_Fn(zz, &numGeometry, &data);
    Zoltan_Set_Geom_Multi_Fn(zz, &geometryMulti, &data);

    int changes = 0;
    int numGid = 0;
    int numLid = 0;
    int numImport = 0;
    int numExport = 0;
    ZOLTAN_ID_PTR importGids = nullptr;
    ZOLTAN_ID_PTR importLids = nullptr;
    ZOLTAN_ID_PTR exportGids = nullptr;
    ZOLTAN_ID_PTR exportLids = nullptr;
    int* importProcs = nullptr;
    int* importParts = nullptr;
    int* exportProcs = nullptr;
    int* exportParts = nullptr;
    const int rc = Zoltan_LB_Partition(zz, &changes, &numGid, &numLid, &numImport, &importGids,
                                       &importLids, &importProcs, &importParts, &numExport,
                                       &exportGids, &exportLids, &exportProcs, &exportParts);
    Zoltan_LB_Free_Part(&importGids, &importLids, &importProcs, &importParts);
    Zoltan_LB_Free_Part(&exportGids, &exportLids, &exportProcs, &exportParts);
    // The callbacks' data dies with this scope: no later Zoltan call may read it.
    Zoltan_Set_Num_Obj_Fn(zz, nullptr, nullptr);
    Zoltan_Set_Obj_List_Fn(zz, nullptr, nullptr);
    Zoltan_Set_Num_Geom_Fn(zz, nullptr, nullptr);
    Zoltan_Set_Geom_Multi_Fn(zz, nullptr, nullptr);
    throwIfAny(comm, rc != ZOLTAN_OK && rc != ZOLTAN_WARN,
               "Zoltan_LB_Partition (RCB) failed with code " + std::to_string(rc));
  }
  topo->scratch_.resize(static_cast<std::size_t>(topo->size_));
  if (topo->size_ > 1 && previous != nullptr && previous->zz_ != nullptr) {
    std::vector<int> parts;  // the new part of every body of this process (its centre, index 0)
    for (std::size_t i = 0; i < points.size(); ++i) {
      if (points.indices[i] == 0) {
        parts.push_back(topo->partInFrame(topo->rotationKI_ * points.positions[i]));
      }
    }
    std::vector<int> processOf = matchPartsToProcesses(
        comm, topo->size_, std::move(parts),
        [&previous](int process) { return previous->partOfProcess(process); });
    bool identity = true;
    for (std::size_t q = 0; q < processOf.size(); ++q) {
      identity = identity && processOf[q] == static_cast<int>(q);
    }
    if (!identity) {
      topo->partOfProcess_.assign(processOf.size(), 0);
      for (std::size_t q = 0; q < processOf.size(); ++q) {
        topo->partOfProcess_[static_cast<std::size_t>(processOf[q])] = static_cast<int>(q);
      }
      topo->processOfPart_ = std::move(processOf);
    }
  }
  topo->computeDomains(comm);
  return topo;
}

KdTreeTopology::~KdTreeTopology() {
  if (zz_ != nullptr) {
    Zoltan_Destroy(&zz_);
  }
}

void KdTreeTopology::computeDomains(MPI_Comm comm) {
  MPI_Comm_rank(comm, &rank_);
  boxCache_.clear();
  neighbours_.clear();
  // Smallest extent between two cuts, over every domain: each process measures its own, one
  // reduction. A domain open on one side of an axis cannot be crossed along it, however close
  // its cut lies to the edge of the cloud (many predicted points resting on a floor put a cut
  // right there).
  minCellExtent_ = kInf;
  const std::array<Vec3, 2> own = fetchBox(rank_);
  for (int k = 0; k < 3; ++k) {
    if (!std::isinf(own[0][k]) && !std::isinf(own[1][k])) {
      minCellExtent_ = std::min(minCellExtent_, own[1][k] - own[0][k]);
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, &minCellExtent_, 1, MPI_DOUBLE, MPI_MIN, comm);
  // Domains closer than the margin are neighbours. Without two cuts on any axis, every domain
  // touches the others anyway; the cloud's size then stands for "any body".
  neighbourMargin_ =
      std::isinf(minCellExtent_) ? (cloudBox_[1] - cloudBox_[0]).norm() : minCellExtent_;
  if (rotated_) {
    neighbourMargin_ *= std::sqrt(3.0);
  }
  neighbours_ = neighboursOf(rank_);
  // The boxes every step's queries need: this domain's and its neighbours'.
  ownBox_ = own;
  boxCache_.emplace_back(rank_, own);
  nearBoxes_.clear();
  nearBoxes_.emplace_back(rank_, own);
  for (const int s : neighbours_) {
    boxCache_.emplace_back(s, fetchBox(s));
    nearBoxes_.push_back(boxCache_.back());
  }
  std::sort(nearBoxes_.begin(), nearBoxes_.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::sort(boxCache_.begin(), boxCache_.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
}

std::vector<int> KdTreeTopology::neighboursOf(int rank) const {
  std::vector<int> result;
  if (size_ == 1) {
    return result;
  }
  // Candidates: the domains Zoltan finds in the domain's box widened a little more than the
  // margin; kept if their gap (max norm in K) is within the margin. The gap is computed by the
  // same expression whichever of the two domains asks, so the relation is symmetric to the bit.
  const std::array<Vec3, 2> box = fetchBox(rank);
  const Real widen = neighbourMargin_ * (1.0 + 1e-6);
  const Vec3 lo = box[0] - Vec3::Constant(widen);
  const Vec3 hi = box[1] + Vec3::Constant(widen);
  int count = 0;
  GRAIN_REQUIRE(Zoltan_LB_Box_Assign(zz_, lo.x(), lo.y(), lo.z(), hi.x(), hi.y(), hi.z(),
                                     scratch_.data(), &count) == ZOLTAN_OK,
                "kd-tree topology: Zoltan_LB_Box_Assign failed");
  std::vector<int> candidates(scratch_.begin(), scratch_.begin() + count);
  for (int& c : candidates) {
    c = processOfPart(c);
  }
  for (const int s : candidates) {
    if (s == rank) {
      continue;
    }
    const std::array<Vec3, 2> other = fetchBox(s);
    Real gap = -kInf;
    for (int k = 0; k < 3; ++k) {
      gap = std::max({gap, box[0][k] - other[1][k], other[0][k] - box[1][k]});
    }
    if (gap <= neighbourMargin_) {
      result.push_back(s);
    }
  }
  std::sort(result.begin(), result.end());
  result.erase(std::unique(result.begin(), result.end()), result.end());
  return result;
}

std::array<Vec3, 2> KdTreeTopology::domainBox(int rank) const {
  GRAIN_REQUIRE(rank >= 0 && rank < size_, "kd-tree topology: rank out of range");
  if (size_ == 1) {
    return {Vec3::Constant(-kInf), Vec3::Constant(kInf)};
  }
  const auto at = std::lower_bound(boxCache_.begin(), boxCache_.end(), rank,
                                   [](const auto& entry, int r) { return entry.first < r; });
  if (at != boxCache_.end() && at->first == rank) {
    return at->second;
  }
  const std::array<Vec3, 2> box = fetchBox(rank);
  // Kept for the domains this process meets (its own, its neighbours', those its bodies' copies
  // overlap): a few dozen, never all of them.
  boxCache_.insert(at, {rank, box});
  return box;
}

int KdTreeTopology::partInFrame(const Vec3& pointK) const {
  if (size_ == 1) {
    return 0;
  }
  double c[3] = {pointK.x(), pointK.y(), pointK.z()};
  int part = -1;
  GRAIN_REQUIRE(Zoltan_LB_Point_Assign(zz_, c, &part) == ZOLTAN_OK && part >= 0 && part < size_,
                "kd-tree topology: Zoltan_LB_Point_Assign failed");
  return part;
}

int KdTreeTopology::ownerInFrame(const Vec3& pointK) const {
  return processOfPart(partInFrame(pointK));
}

int KdTreeTopology::ownerOf(const Vec3& point) const {
  return ownerInFrame(rotationKI_ * point);
}

void KdTreeTopology::ranksOverlapping(const Vec3& lo, const Vec3& hi,
                                      std::vector<int>& ranks) const {
  if (size_ == 1) {
    ranks.push_back(0);
    return;
  }
  const auto [centre, half] = boxInFrame(lo, hi);
  const Vec3 a = centre - half;
  const Vec3 b = centre + half;
  // Zoltan's boxes are closed; a domain is (lo, hi] along each cut (a point on a cut belongs to
  // the lower side), so keep only the domains the closed query box meets under that rule.
  auto meets = [&](const std::array<Vec3, 2>& d) {
    bool m = true;
    for (int k = 0; k < 3; ++k) {
      m = m && a[k] <= d[1][k] && b[k] > d[0][k];
    }
    return m;
  };
  // A box within half the neighbour margin of this process's domain can only meet domains whose
  // gap to it is below the margin: this domain and its neighbours, whose boxes are at hand (the
  // bodies of this process and their copies ask so, every step). Same test, same result as the
  // tree's candidates below, without the descent.
  bool near = !nearBoxes_.empty();
  for (int k = 0; k < 3 && near; ++k) {
    near = a[k] >= ownBox_[0][k] - 0.5 * neighbourMargin_ &&
           b[k] <= ownBox_[1][k] + 0.5 * neighbourMargin_;
  }
  if (near) {
    for (const auto& [r, d] : nearBoxes_) {  // sorted by rank
      if (meets(d)) {
        ranks.push_back(r);
      }
    }
    return;
  }
  int count = 0;
  GRAIN_REQUIRE(Zoltan_LB_Box_Assign(zz_, a.x(), a.y(), a.z(), b.x(), b.y(), b.z(), scratch_.data(),
                                     &count) == ZOLTAN_OK,
                "kd-tree topology: Zoltan_LB_Box_Assign failed");
  // Zoltan lists the parts in tree order, and parts are not processes after a rebuild: sort.
  const std::size_t first = ranks.size();
  for (int i = 0; i < count; ++i) {
    const int r = processOfPart(scratch_[static_cast<std::size_t>(i)]);
    if (meets(domainBox(r))) {
      ranks.push_back(r);
    }
  }
  std::sort(ranks.begin() + static_cast<std::ptrdiff_t>(first), ranks.end());
}

std::array<Vec3, 2> KdTreeTopology::fetchBox(int rank) const {
  if (size_ == 1) {
    return {Vec3::Constant(-kInf), Vec3::Constant(kInf)};
  }
  int dim = 0;
  double lo[3];
  double hi[3];
  GRAIN_REQUIRE(Zoltan_RCB_Box(zz_, partOfProcess(rank), &dim, &lo[0], &lo[1], &lo[2], &hi[0],
                               &hi[1], &hi[2]) == ZOLTAN_OK,
                "kd-tree topology: Zoltan_RCB_Box failed");
  // Zoltan marks unbounded faces with +-DBL_MAX.
  std::array<Vec3, 2> box;
  for (int k = 0; k < 3; ++k) {
    box[0][k] = lo[k] <= -std::numeric_limits<double>::max() ? -kInf : lo[k];
    box[1][k] = hi[k] >= std::numeric_limits<double>::max() ? kInf : hi[k];
  }
  return box;
}

std::pair<Vec3, Vec3> KdTreeTopology::boxInFrame(const Vec3& lo, const Vec3& hi) const {
  if (!rotated_) {  // R_KI = I would change no bit
    return {0.5 * (lo + hi), 0.5 * (hi - lo)};
  }
  return {rotationKI_ * (0.5 * (lo + hi)), rotationKI_.cwiseAbs() * (0.5 * (hi - lo))};
}

bool KdTreeTopology::insideDomain(int rank, const Vec3& lo, const Vec3& hi) const {
  if (size_ == 1) {
    return true;
  }
  const auto [centre, half] = boxInFrame(lo, hi);  // as in ranksOverlapping
  // Every body of this process asks about its own domain, once or twice per step.
  const std::array<Vec3, 2> d = rank == rank_ ? ownBox_ : domainBox(rank);
  // Strictly inside the half-open domain (lo, hi] along every axis, with a margin against the
  // rounding of the rotation (queries of the same box go through the same arithmetic).
  const Vec3 slack = Vec3::Constant(1e-12) + 1e-12 * centre.cwiseAbs();
  return ((centre - half - slack) - d[0]).minCoeff() > 0 &&
         (d[1] - (centre + half + slack)).minCoeff() > 0;
}

std::vector<int> KdTreeTopology::neighbours(int rank) const {
  GRAIN_REQUIRE(rank >= 0 && rank < size_, "kd-tree topology: rank out of range");
  return rank == rank_ ? neighbours_ : neighboursOf(rank);
}

}  // namespace grain::mpi
