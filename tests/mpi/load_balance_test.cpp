// SPDX-License-Identifier: MIT
// Kd-tree topology (Zoltan RCB) and load balancing on any number of processes (registered per
// rank count under the ctest label "mpi"):
//   - every point has exactly one owner, the same on every process, inside the owner's domain
//     box, including points on the cuts and far outside the cloud; a point-sized box overlaps
//     exactly its owner; box queries match a brute-force test against the domain boxes;
//     neighbours are symmetric, include every touching domain and lie within the margin;
//   - weighted balance of a uniform cloud, rebuilds from a previous tree, the predefined box;
//   - the principal frame of an elongated tilted cloud cuts across its long axis only;
//   - the rebuild policies, the mass-point prediction against a half-space, the outlier filter,
//     and the checks of buildTopology (grid and kd-tree, too-large bodies, the fallbacks when
//     the prediction makes a cell thinner than a bead).
// Every process checks; a check fails if it fails on any process. Prints "N passed, N failed".
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <mpi.h>

#include <grain/core/common/error.hpp>
#include <grain/mpi/kd_tree_topology.hpp>
#include <grain/mpi/load_balancer.hpp>

namespace {

using namespace grain;
using namespace grain::mpi;

int gPassed = 0;
int gFailed = 0;
int gRank = 0;
int gSize = 1;

/// Collective: passes if `ok` on every process.
void check(bool ok, const std::string& what) {
  int all = ok ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  if (gRank != 0) {
    return;
  }
  if (all != 0) {
    ++gPassed;
  } else {
    ++gFailed;
    std::printf("FAILED: %s (%d processes)\n", what.c_str(), gSize);
  }
}

/// Uniform points in the box [lo, hi], different on every process.
WeightedPoints uniformCloud(std::size_t n, const Vec3& lo, const Vec3& hi, unsigned seed) {
  std::mt19937_64 gen(seed + 7919u * static_cast<unsigned>(gRank));
  std::uniform_real_distribution<Real> u(0, 1);
  WeightedPoints pts;
  for (std::size_t i = 0; i < n; ++i) {
    const Vec3 p = lo + Vec3(u(gen), u(gen), u(gen)).cwiseProduct(hi - lo);
    pts.add(p, 1.0, (static_cast<BodyId>(gRank) << 32) | i, 0);
  }
  return pts;
}

/// `point` lies in the domain box under the half-open rule (lo, hi] (an infinite lo is closed).
bool inDomain(const std::array<Vec3, 2>& box, const Vec3& pointK) {
  for (int k = 0; k < 3; ++k) {
    const bool aboveLo = std::isinf(box[0][k]) ? true : pointK[k] > box[0][k];
    if (!aboveLo || pointK[k] > box[1][k]) {
      return false;
    }
  }
  return true;
}

/// Max-norm distance between two closed boxes (0 if they touch or overlap).
Real boxDistance(const std::array<Vec3, 2>& a, const std::array<Vec3, 2>& b) {
  Real d = 0;
  for (int k = 0; k < 3; ++k) {
    d = std::max({d, b[0][k] - a[1][k], a[0][k] - b[1][k]});
  }
  return d;
}

/// Query points, the same on every process: inside the unit cube, far outside it, and on the
/// faces of every domain (the cuts).
std::vector<Vec3> queryPoints(const KdTreeTopology& topo) {
  std::mt19937_64 gen(12345);
  std::uniform_real_distribution<Real> u(-0.2, 1.2);
  std::vector<Vec3> q;
  for (int i = 0; i < 400; ++i) {
    q.emplace_back(u(gen), u(gen), u(gen));
  }
  for (const Real far : {10.0, 1e6, 1e12}) {
    q.emplace_back(far, 0.5, 0.5);
    q.emplace_back(-far, -far, far);
    q.emplace_back(0.3, far, -far);
    q.emplace_back(-far, 0.5, -far);
  }
  const Mat3 back = topo.rotationKI().transpose();
  for (int r = 0; r < topo.size(); ++r) {
    const auto& box = topo.domainBox(r);
    for (int side = 0; side < 2; ++side) {
      for (int k = 0; k < 3; ++k) {
        if (std::isinf(box[static_cast<std::size_t>(side)][k])) {
          continue;
        }
        Vec3 pK = topo.rotationKI() * Vec3(u(gen), u(gen), u(gen));
        pK[k] = box[static_cast<std::size_t>(side)][k];
        q.push_back(back * pK);
      }
    }
  }
  return q;
}

/// The invariants every kd-tree topology must satisfy.
void checkInvariants(const KdTreeTopology& topo, const std::string& name) {
  const int p = topo.size();
  check(p == gSize, name + ": one domain per process");
  const std::vector<Vec3> q = queryPoints(topo);
  std::vector<int> owner(q.size());
  bool valid = true;
  bool inBox = true;
  bool unique = true;
  bool pointBox = true;
  for (std::size_t i = 0; i < q.size(); ++i) {
    owner[i] = topo.ownerOf(q[i]);
    valid = valid && owner[i] >= 0 && owner[i] < p;
    if (!valid) {
      break;
    }
    const Vec3 pK = topo.rotationKI() * q[i];
    inBox = inBox && inDomain(topo.domainBox(owner[i]), pK);
    int containing = 0;
    for (int r = 0; r < p; ++r) {
      containing += inDomain(topo.domainBox(r), pK) ? 1 : 0;
    }
    unique = unique && containing == 1;
    std::vector<int> ranks;
    topo.ranksOverlapping(q[i], q[i], ranks);
    pointBox = pointBox && ranks == std::vector<int>{owner[i]};
  }
  check(valid, name + ": every point gets an owner in [0, P)");
  check(inBox, name + ": the owner's domain box contains the point (also on cuts, far away)");
  check(unique, name + ": exactly one domain box contains each point");
  check(pointBox, name + ": ranksOverlapping of a point-sized box is exactly the owner");
  std::vector<int> lo = owner;
  std::vector<int> hi = owner;
  MPI_Allreduce(MPI_IN_PLACE, lo.data(), static_cast<int>(lo.size()), MPI_INT, MPI_MIN,
                MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, hi.data(), static_cast<int>(hi.size()), MPI_INT, MPI_MAX,
                MPI_COMM_WORLD);
  check(lo == owner && hi == owner, name + ": every process names the same owner");

  // Box queries against brute force over the domain boxes (axis-aligned frame only: in a
  // rotated frame the query uses the box's K-aligned bounding box).
  bool boxes = true;
  std::mt19937_64 gen(777);
  std::uniform_real_distribution<Real> u(-0.3, 1.3);
  std::uniform_real_distribution<Real> s(0, 0.4);
  for (int i = 0; i < 300; ++i) {
    const Vec3 a(u(gen), u(gen), u(gen));
    const Vec3 b = a + Vec3(s(gen), s(gen), s(gen));
    std::vector<int> ranks{-7};  // appended after existing entries
    topo.ranksOverlapping(a, b, ranks);
    const Vec3 aK =
        topo.rotationKI() * (0.5 * (a + b)) - topo.rotationKI().cwiseAbs() * (0.5 * (b - a));
    const Vec3 bK =
        topo.rotationKI() * (0.5 * (a + b)) + topo.rotationKI().cwiseAbs() * (0.5 * (b - a));
    std::vector<int> expected{-7};
    for (int r = 0; r < p; ++r) {
      const auto& d = topo.domainBox(r);
      bool meets = true;
      for (int k = 0; k < 3; ++k) {
        meets = meets && aK[k] <= d[1][k] && bK[k] > d[0][k];
      }
      if (meets) {
        expected.push_back(r);
      }
    }
    boxes = boxes && ranks == expected && ranks.size() >= 2 &&
            std::find(ranks.begin(), ranks.end(), topo.ownerOf(a)) != ranks.end();
  }
  check(boxes, name + ": ranksOverlapping appends exactly the domains a box meets, increasing");

  // insideDomain is a shortcut for boxes deep inside a domain: when it says so, the box overlaps
  // that domain alone and its centre belongs to it; it says so for some small boxes.
  bool inside = true;
  int found = 0;
  std::uniform_real_distribution<Real> small(0, 0.02);
  for (int i = 0; i < 2000; ++i) {
    const Vec3 a(u(gen), u(gen), u(gen));
    const Vec3 b = a + Vec3(small(gen), small(gen), small(gen));
    std::vector<int> ranks;
    topo.ranksOverlapping(a, b, ranks);
    const int o = topo.ownerOf(0.5 * (a + b));
    for (int r = 0; r < p; ++r) {
      if (topo.insideDomain(r, a, b)) {
        inside = inside && r == o && ranks == std::vector<int>{r};
        ++found;
      }
    }
  }
  check(inside && found > 0,
        name + ": a box insideDomain overlaps that domain alone and its centre belongs to it");

  bool symmetric = true;
  bool touching = true;
  bool withinMargin = true;
  for (int r = 0; r < p; ++r) {
    const std::vector<int> n = topo.neighbours(r);
    symmetric = symmetric && std::is_sorted(n.begin(), n.end()) &&
                std::find(n.begin(), n.end(), r) == n.end();
    for (int t = 0; t < p; ++t) {
      const std::vector<int> m = topo.neighbours(t);
      const bool rt = std::find(n.begin(), n.end(), t) != n.end();
      const bool tr = std::find(m.begin(), m.end(), r) != m.end();
      symmetric = symmetric && rt == tr;
      const Real dist = boxDistance(topo.domainBox(r), topo.domainBox(t));
      if (t != r && dist <= 0) {
        touching = touching && rt;
      }
      if (rt) {
        withinMargin = withinMargin && dist <= topo.neighbourMargin() * (1 + 1e-9);
      }
    }
  }
  check(symmetric, name + ": neighbours are symmetric, sorted, without the rank itself");
  check(touching, name + ": every touching domain is a neighbour");
  check(withinMargin, name + ": every neighbour lies within the neighbour margin");
  check(p == 1 ? std::isinf(topo.minCellExtent()) : topo.minCellExtent() > 0,
        name + ": minCellExtent is positive (infinite with one process)");
}

/// Total weight of every process's points in each domain (only the points inside `settings`'
/// predefined box with that frame). A reduction over all processes: fine in a test, which is
/// why the topology itself keeps no such table.
std::vector<Real> domainWeights(const KdTreeTopology& topo, const WeightedPoints& pts,
                                const KdTreeSettings& settings = {}) {
  std::vector<Real> w(static_cast<std::size_t>(gSize), 0);
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const Vec3& p = pts.positions[i];
    if (settings.frame == KdTreeFrame::Predefined &&
        ((p - settings.boxMin).minCoeff() < 0 || (settings.boxMax - p).minCoeff() < 0)) {
      continue;
    }
    w[static_cast<std::size_t>(topo.ownerOf(p))] += pts.weights[i];
  }
  MPI_Allreduce(MPI_IN_PLACE, w.data(), gSize, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return w;
}

/// Max over min of the domain weights.
Real imbalance(const KdTreeTopology& topo, const WeightedPoints& pts,
               const KdTreeSettings& settings = {}) {
  const std::vector<Real> w = domainWeights(topo, pts, settings);
  return *std::max_element(w.begin(), w.end()) / *std::min_element(w.begin(), w.end());
}

void testUniformCloud() {
  const WeightedPoints pts = uniformCloud(3000, Vec3::Zero(), Vec3::Ones(), 1);
  auto topo = KdTreeTopology::build(MPI_COMM_WORLD, pts, KdTreeSettings{});
  // A process keeps only its own domain's box and its neighbours' (no table over all processes).
  check(topo->heldDomainBoxes() == 1 + topo->neighbours(gRank).size(),
        "uniform cloud: a process holds the boxes of its domain and its neighbours only");
  checkInvariants(*topo, "uniform cloud");
  check(imbalance(*topo, pts) <= 1.2, "uniform cloud: domain weights within max/min <= 1.2");

  // A 4 x 1 x 1 bar whose half x < 2 weighs 5 per point: the bar is cut along x, the weights
  // balance and the counts do not (for P > 1).
  WeightedPoints heavy = uniformCloud(3000, Vec3::Zero(), Vec3(4, 1, 1), 2);
  for (std::size_t i = 0; i < heavy.size(); ++i) {
    heavy.weights[i] = heavy.positions[i].x() < 2 ? 5.0 : 1.0;
  }
  auto weighted = KdTreeTopology::build(MPI_COMM_WORLD, heavy, KdTreeSettings{}, topo.get());
  // Cut into slabs along the bar: with 4 or more processes the end slabs are not neighbours of
  // every other, and their processes hold fewer boxes than there are processes.
  {
    int fewest = static_cast<int>(weighted->heldDomainBoxes());
    MPI_Allreduce(MPI_IN_PLACE, &fewest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    check(weighted->heldDomainBoxes() == 1 + weighted->neighbours(gRank).size() &&
              (gSize < 4 || fewest < gSize),
          "weighted bar: the boxes held follow the neighbours, not the process count");
  }
  checkInvariants(*weighted, "weighted cloud (rebuilt from the previous cuts)");
  check(imbalance(*weighted, heavy) <= 1.2, "weighted cloud: domain weights within max/min <= 1.2");
  std::vector<double> n(static_cast<std::size_t>(gSize), 0);
  for (const Vec3& p : heavy.positions) {
    n[static_cast<std::size_t>(weighted->ownerOf(p))] += 1;
  }
  MPI_Allreduce(MPI_IN_PLACE, n.data(), gSize, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  const Real countRatio =
      *std::max_element(n.begin(), n.end()) / *std::min_element(n.begin(), n.end());
  check(gSize == 1 || countRatio > 2, "weighted cloud: heavy domains hold fewer points");

  // Repeated rebuilds of a moving cloud, each from the previous tree (the old one destroyed).
  std::shared_ptr<KdTreeTopology> current = weighted;
  bool ok = true;
  for (int step = 1; step <= 5; ++step) {
    WeightedPoints moved = pts;
    for (Vec3& p : moved.positions) {
      p += Vec3(0.3 * step, 0, -0.1 * step);
    }
    current = KdTreeTopology::build(MPI_COMM_WORLD, moved, KdTreeSettings{}, current.get());
    ok = ok && imbalance(*current, moved) <= 1.2 && current->ownerOf(moved.positions[0]) >= 0;
  }
  check(ok, "repeated rebuilds from the previous tree stay balanced");
  checkInvariants(*current, "after five rebuilds");
}

void testPrincipalFrame() {
  // A 10 x 1 x 1 bar along d, tilted against every inertial axis.
  const Vec3 d = Vec3(1, 2, 2).normalized();
  const Vec3 e1 = d.unitOrthogonal();
  const Vec3 e2 = d.cross(e1);
  std::mt19937_64 gen(99 + static_cast<unsigned>(gRank));
  std::uniform_real_distribution<Real> along(-5, 5);
  std::uniform_real_distribution<Real> across(-0.5, 0.5);
  WeightedPoints pts;
  for (std::uint32_t i = 0; i < 4000; ++i) {
    pts.add(along(gen) * d + across(gen) * e1 + across(gen) * e2, 1.0,
            static_cast<BodyId>(gRank) * 100000 + i, 0);
  }
  KdTreeSettings settings;
  settings.frame = KdTreeFrame::Principal;
  auto topo = KdTreeTopology::build(MPI_COMM_WORLD, pts, settings);
  check(std::abs(topo->rotationKI().row(0).dot(d.transpose())) > 0.999,
        "principal frame: the first axis of K is the bar's long axis");
  check(std::abs(topo->rotationKI().determinant() - 1) < 1e-9,
        "principal frame: R_KI is a rotation");
  bool acrossOnly = true;
  for (int r = 0; r < gSize; ++r) {
    const auto& box = topo->domainBox(r);
    for (int k = 1; k < 3; ++k) {
      acrossOnly = acrossOnly && std::isinf(box[0][k]) && std::isinf(box[1][k]);
    }
  }
  check(acrossOnly, "principal frame: every cut is across the long axis");
  // The owner depends only on the position along the bar (away from the cuts).
  bool alongOnly = true;
  int owners = 0;
  int last = -1;
  for (int i = 0; i <= 80; ++i) {
    const Real t = -5 + 10.0 * i / 80;
    const int o = topo->ownerOf(t * d);
    bool nearCut = false;
    const Real x = topo->rotationKI().row(0).dot((t * d).transpose());
    for (int r = 0; r < gSize; ++r) {
      for (int side = 0; side < 2; ++side) {
        nearCut =
            nearCut || std::abs(topo->domainBox(r)[static_cast<std::size_t>(side)][0] - x) < 0.05;
      }
    }
    for (const Real a : {-0.45, 0.45}) {
      for (const Real b : {-0.45, 0.45}) {
        alongOnly = alongOnly && (nearCut || topo->ownerOf(t * d + a * e1 + b * e2) == o);
      }
    }
    owners += o != last ? 1 : 0;
    last = o;
  }
  check(alongOnly, "principal frame: the owner depends only on the position along the bar");
  check(owners == gSize, "principal frame: the bar passes through every domain once");
  check(imbalance(*topo, pts) <= 1.2, "principal frame: balanced");
  checkInvariants(*topo, "principal frame");
}

void testPredefinedBox() {
  const WeightedPoints pts = uniformCloud(2000, Vec3::Zero(), Vec3::Ones(), 5);
  KdTreeSettings settings;
  settings.frame = KdTreeFrame::Predefined;
  settings.boxMin = Vec3::Zero();
  settings.boxMax = Vec3(0.5, 1, 1);
  auto topo = KdTreeTopology::build(MPI_COMM_WORLD, pts, settings);
  check(topo->cloudBox()[1].isApprox(Vec3(0.5, 1, 1)), "predefined box: the clip box is given");
  // Only the points in the box were partitioned: about a half of all of them, balanced.
  const std::vector<Real> w = domainWeights(*topo, pts, settings);
  Real total = 0;
  for (const Real x : w) {
    total += x;
  }
  check(std::abs(total / (2000.0 * gSize) - 0.5) < 0.05,
        "predefined box: only the points inside the box take part");
  check(imbalance(*topo, pts, settings) <= 1.2, "predefined box: balanced inside the box");
  bool owned = true;
  for (const Vec3& p : pts.positions) {
    const int o = topo->ownerOf(p);
    owned = owned && o >= 0 && o < gSize;
  }
  check(owned, "predefined box: points outside the box still get an owner");
}

void testPolicies() {
  LoadBalanceSettings s;
  s.mode = LoadBalanceSettings::Mode::Static;
  s.policyCheckEveryXTimeStep = 5;
  bool ok = true;
  for (std::uint64_t step = 0; step <= 20; ++step) {
    ok = ok && !shouldRebuild(MPI_COMM_WORLD, s, step, 1000000);
  }
  check(ok, "policy: static mode never rebuilds");

  s.mode = LoadBalanceSettings::Mode::Dynamic;
  s.policy = LoadBalanceSettings::Policy::AlwaysRebuild;
  ok = true;
  for (std::uint64_t step = 0; step <= 20; ++step) {
    ok = ok && shouldRebuild(MPI_COMM_WORLD, s, step, 0) == (step != 0 && step % 5 == 0);
  }
  check(ok, "policy: alwaysRebuild every policyCheckEveryXTimeStep steps, not at step 0");

  s.policy = LoadBalanceSettings::Policy::BodyLimit;
  s.bodyLimit = 100;
  // Only the last process reaches the limit: every process rebuilds, at check steps only.
  const std::size_t local = gRank == gSize - 1 ? 100 : 99;
  ok = true;
  for (std::uint64_t step = 0; step <= 20; ++step) {
    ok = ok && shouldRebuild(MPI_COMM_WORLD, s, step, local) == (step != 0 && step % 5 == 0);
  }
  check(ok, "policy: bodyLimit rebuilds everywhere when one process reaches the limit");
  ok = true;
  for (std::uint64_t step = 0; step <= 20; ++step) {
    ok = ok && !shouldRebuild(MPI_COMM_WORLD, s, step, 99);
  }
  check(ok, "policy: bodyLimit does not rebuild below the limit");
}

void testMassPointPrediction() {
  const Vec3 g(0, 0, -9.81);
  std::vector<BalancedBody> bodies(2);
  bodies[0].id = 11;
  bodies[0].position = Vec3(0, 0, 1);
  bodies[0].velocity = Vec3(1, 0, -2);
  bodies[0].weight = 6;
  bodies[1].id = 12;
  bodies[1].position = Vec3(0, 0, 1);
  bodies[1].velocity = Vec3(1, 0, -2);
  bodies[1].weight = 3;
  const std::vector<StaticHalfspace> floor{{Vec3(0, 0, 0), Vec3::UnitZ()}};
  WeightedPoints out;
  predictMassPoints({bodies[0]}, g, floor, 5, 0.1, out);
  bool ok = out.size() == 6;
  // Free flight: p(t) = p0 + v t + g t^2 / 2 until the floor at t in (0.2, 0.3); then on it.
  for (std::uint32_t i = 0; ok && i < 6; ++i) {
    const Real t = 0.1 * std::min<std::uint32_t>(i, 3);
    Vec3 expected = bodies[0].position + t * bodies[0].velocity + 0.5 * t * t * g;
    if (i >= 3) {
      expected.z() = 0;
    }
    ok = ok && (out.positions[i] - expected).norm() < 1e-12 && out.weights[i] == 1.0 &&
         out.ids[i] == 11 && out.indices[i] == i;
  }
  check(ok, "mass points: Euler steps, stop on the half-space, weight split over the points");

  // A tilted half-space (normal (1, 0, 1)/sqrt 2 through the origin): points stay on its free side.
  WeightedPoints tilted;
  const std::vector<StaticHalfspace> slope{{Vec3::Zero(), Vec3(1, 0, 1).normalized()}};
  predictMassPoints({bodies[1]}, g, slope, 8, 0.1, tilted);
  bool free = tilted.size() == 9;
  bool reached = false;
  for (std::size_t i = 0; i < tilted.size(); ++i) {
    const Real side = tilted.positions[i].dot(slope[0].normal);
    free = free && side >= -1e-12 && tilted.weights[i] == 3.0 / 9;
    reached = reached || std::abs(side) < 1e-12;
  }
  check(free && reached, "mass points: a tilted half-space stops the prediction on its plane");

  WeightedPoints none;
  predictMassPoints(bodies, g, floor, 0, 0.1, none);
  check(none.size() == 2 && none.weights[0] == 6 && none.positions[0] == bodies[0].position,
        "mass points: no prediction keeps the centres with their weights");
}

void testOutlierFilter() {
  std::vector<Vec3> pts;
  std::mt19937_64 gen(3 + static_cast<unsigned>(gRank));
  std::uniform_real_distribution<Real> u(0, 1);
  for (int i = 0; i < 300; ++i) {
    pts.emplace_back(gRank + u(gen), u(gen), u(gen));
  }
  if (gRank == 0) {
    pts.emplace_back(100, 100, 100);
  }
  const std::vector<char> out = findOutliers(MPI_COMM_WORLD, pts, 10, 3.0, 10);
  int flagged = 0;
  for (const char f : out) {
    flagged += f != 0 ? 1 : 0;
  }
  MPI_Allreduce(MPI_IN_PLACE, &flagged, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  check(out.size() == pts.size(), "outliers: one flag per point");
  check(flagged == 1, "outliers: exactly one point removed");
  check(gRank != 0 || out.back() != 0, "outliers: the far point is the one removed");

  // buildTopology leaves the outlier out of the tree, and it still has an owner.
  LoadBalanceSettings s;
  s.type = LoadBalanceSettings::TopologyType::KdTree;
  s.buildMode = LoadBalanceSettings::BuildMode::Aabb;
  s.massPointCount = 0;  // the centres
  s.outlierFilter = true;
  s.outlierKnnMean = 10;
  s.outlierStdDeviationMult = 3;
  std::vector<BalancedBody> bodies;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    BalancedBody b;
    b.id = static_cast<BodyId>(gRank) * 1000 + i;
    b.position = pts[i];
    bodies.push_back(b);
  }
  auto topo = buildTopology(MPI_COMM_WORLD, s, bodies, Vec3::Zero(), {}, 0.01).topology;
  const auto* kd = dynamic_cast<const KdTreeTopology*>(topo.get());
  check(kd != nullptr && kd->cloudBox()[1].maxCoeff() < gSize + 1e-9,
        "outliers: the tree is built without the far point");
  const int o = topo->ownerOf(Vec3(100, 100, 100));
  check(o >= 0 && o < gSize, "outliers: the far point still gets an owner");
}

void testBuildTopology() {
  std::vector<BalancedBody> bodies;
  std::mt19937_64 gen(17 + static_cast<unsigned>(gRank));
  std::uniform_real_distribution<Real> u(0, 1);
  for (int i = 0; i < 500; ++i) {
    BalancedBody b;
    b.id = static_cast<BodyId>(gRank) * 1000 + static_cast<BodyId>(i);
    b.position = Vec3(2 * u(gen), u(gen), u(gen) + 0.5);
    b.velocity = Vec3(0, 0, -1);
    bodies.push_back(b);
  }
  const std::vector<StaticHalfspace> floor{{Vec3::Zero(), Vec3::UnitZ()}};
  const Vec3 g(0, 0, -9.81);

  LoadBalanceSettings s;
  s.type = LoadBalanceSettings::TopologyType::Grid;
  s.buildMode = LoadBalanceSettings::BuildMode::Aabb;
  s.massPointCount = 3;
  s.massPointDeltaT = 0.1;
  auto grid = buildTopology(MPI_COMM_WORLD, s, bodies, g, floor, 0.01).topology;
  check(dynamic_cast<const GridTopology*>(grid.get()) != nullptr && grid->size() == gSize,
        "buildTopology: a grid for type grid");
  check(grid->minCellExtent() > 0.1, "buildTopology: grid cells span the predicted cloud");

  s.type = LoadBalanceSettings::TopologyType::KdTree;
  s.buildMode = LoadBalanceSettings::BuildMode::BinetTensor;
  auto tree = buildTopology(MPI_COMM_WORLD, s, bodies, g, floor, 0.01).topology;
  const auto* kd = dynamic_cast<const KdTreeTopology*>(tree.get());
  check(kd != nullptr && kd->size() == gSize, "buildTopology: a kd-tree for type kdTree");
  s.buildMode = LoadBalanceSettings::BuildMode::Aabb;
  auto aabb = buildTopology(MPI_COMM_WORLD, s, bodies, g, floor, 0.01, tree).topology;
  const auto* kdAabb = dynamic_cast<const KdTreeTopology*>(aabb.get());
  check(kdAabb != nullptr && kdAabb->rotationKI().isIdentity() &&
            std::abs(kdAabb->cloudBox()[0].z()) < 1e-12,
        "buildTopology: AABB frame, predicted points stop on the floor at z = 0");
  if (kdAabb != nullptr) {
    checkInvariants(*kdAabb, "buildTopology kd-tree");
  }

  // A body larger than the smallest cell is an error on every process.
  for (const auto type :
       {LoadBalanceSettings::TopologyType::Grid, LoadBalanceSettings::TopologyType::KdTree}) {
    s.type = type;
    // Only a domain bounded on both sides of an axis can be crossed by a body; the same build
    // with small bodies says whether this process count makes one.
    const Real smallest =
        buildTopology(MPI_COMM_WORLD, s, bodies, g, floor, 0.01).topology->minCellExtent();
    bool threw = false;
    try {
      buildTopology(MPI_COMM_WORLD, s, bodies, g, floor, gRank == 0 ? 1e3 : 0.01);
    } catch (const Error&) {
      threw = true;
    }
    const bool expectThrow = smallest < 1e3;
    check(threw == expectThrow,
          std::string("buildTopology: a too-large body is an error (") +
              (type == LoadBalanceSettings::TopologyType::Grid ? "grid" : "kd-tree") + ")");
  }
}

void testThinCellFallback() {
  // Beads of 0.02 m settling on a floor: 60 % rest on it (centres at z = 0.01 m), the others
  // fall from up to 0.4 m higher. The predicted points stop on the floor plane (z = 0), and a
  // kd-tree cut between the two crowded planes leaves a slab thinner than a bead. The build then
  // falls back to the centres, or keeps the previous decomposition.
  std::vector<BalancedBody> bodies;
  std::mt19937_64 gen(29 + static_cast<unsigned>(gRank));
  std::uniform_real_distribution<Real> u(0, 1);
  for (int i = 0; i < 400; ++i) {
    BalancedBody b;
    b.id = static_cast<BodyId>(gRank) * 1000 + static_cast<BodyId>(i);
    const bool resting = u(gen) < 0.6;
    b.position = Vec3(0.3 * u(gen), 0.3 * u(gen), resting ? 0.01 : 0.01 + 0.4 * u(gen));
    bodies.push_back(b);
  }
  const std::vector<StaticHalfspace> floor{{Vec3::Zero(), Vec3::UnitZ()}};
  const Vec3 g(0, 0, -9.81);
  const Real bead = 0.02;
  LoadBalanceSettings s;
  s.type = LoadBalanceSettings::TopologyType::KdTree;
  s.buildMode = LoadBalanceSettings::BuildMode::Aabb;
  s.massPointCount = 5;  // GRSF's default prediction: 5 points 0.1 s apart
  s.massPointDeltaT = 0.1;
  s.minCellSize = 1e-3;

  WeightedPoints predicted;
  predictMassPoints(bodies, g, floor, s.massPointCount, s.massPointDeltaT, predicted);
  KdTreeSettings aabb;
  aabb.frame = KdTreeFrame::Aabb;
  const Real predictedCell =
      KdTreeTopology::build(MPI_COMM_WORLD, predicted, aabb)->minCellExtent();
  WeightedPoints centres;
  predictMassPoints(bodies, g, floor, 0, s.massPointDeltaT, centres);
  const Real centresCell = KdTreeTopology::build(MPI_COMM_WORLD, centres, aabb)->minCellExtent();
  const bool thin = predictedCell < bead;
  if (gSize == 4) {
    check(thin, "thin cell: on 4 processes the prediction alone cuts a slab thinner than a bead");
  }
  const BuiltTopology built = buildTopology(MPI_COMM_WORLD, s, bodies, g, floor, bead);
  check(built.topology->minCellExtent() >= bead, "thin cell: every cell is at least a bead thick");
  check(thin == (built.outcome != BuildOutcome::Predicted),
        "thin cell: a fallback exactly when the prediction made a cell too thin");

  // No kd-tree over this column has cells of 1 km: the previous decomposition stays.
  s.minCellSize = 1e3;
  const std::shared_ptr<const Topology> previous = std::make_shared<GridTopology>(
      Vec3::Zero(), Vec3(1e4 * gSize, 1, 1), std::array<int, 3>{gSize, 1, 1});
  const BuiltTopology kept = buildTopology(MPI_COMM_WORLD, s, bodies, g, floor, bead, previous);
  check(kept.outcome == BuildOutcome::KeptPrevious ? kept.topology == previous
                                                   : kept.topology->minCellExtent() >= 1e3,
        "thin cell: the previous decomposition is kept when no build is thick enough");
  if (gSize == 4) {
    check(kept.outcome == BuildOutcome::KeptPrevious, "thin cell: 4 processes keep the previous");
  }
  // Without a previous decomposition thick enough, a too-thin cell that a body cannot fit in is
  // still an error.
  bool threw = false;
  try {
    buildTopology(MPI_COMM_WORLD, s, bodies, g, floor, 2.0);
  } catch (const Error&) {
    threw = true;
  }
  check(threw == (std::max(predictedCell, centresCell) < 2.0),
        "thin cell: a body thicker than every build's smallest cell is an error");
}

void testGridCellExtent() {
  // Only inner cells (3 or more along an axis) can be crossed by a body.
  const GridTopology line(Vec3::Zero(), Vec3(3, 1, 1), {3, 1, 1});
  check(std::abs(line.minCellExtent() - 1.0) < 1e-12, "grid 3x1x1: the inner cell's 1 m");
  const GridTopology square(Vec3::Zero(), Vec3(2, 2, 1), {2, 2, 1});
  check(std::isinf(square.minCellExtent()), "grid 2x2x1: no cell between two boundaries");
  const GridTopology mixed(Vec3::Zero(), Vec3(8, 0.5, 1), {4, 2, 1});
  check(std::abs(mixed.minCellExtent() - 2.0) < 1e-12,
        "grid 4x2x1: the x cells' 2 m, not the y cells' 0.25 m");
}

void testSingleOwnerWithoutPoints() {
  // Every point on one process (the others have none): still a valid, balanced tree.
  WeightedPoints pts;
  if (gRank == 0) {
    pts = uniformCloud(2000, Vec3(-1, -1, -1), Vec3(1, 1, 1), 11);
  }
  auto topo = KdTreeTopology::build(MPI_COMM_WORLD, pts, KdTreeSettings{});
  checkInvariants(*topo, "points on one process");
  check(imbalance(*topo, pts) <= 1.2, "points on one process: balanced");
  bool threw = false;
  try {
    KdTreeTopology::build(MPI_COMM_WORLD, WeightedPoints{}, KdTreeSettings{});
  } catch (const Error&) {
    threw = true;
  }
  check(threw, "no points anywhere: an error on every process");
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &gRank);
  MPI_Comm_size(MPI_COMM_WORLD, &gSize);
  try {
    testUniformCloud();
    testPrincipalFrame();
    testPredefinedBox();
    testPolicies();
    testMassPointPrediction();
    testOutlierFilter();
    testBuildTopology();
    testSingleOwnerWithoutPoints();
    testGridCellExtent();
    testThinCellFallback();
  } catch (const std::exception& e) {
    std::printf("FAILED on process %d: %s\n", gRank, e.what());
    std::fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (gRank == 0) {
    std::printf("%d passed, %d failed\n", gPassed, gFailed);
  }
  MPI_Bcast(&gFailed, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return gFailed == 0 ? 0 : 1;
}
