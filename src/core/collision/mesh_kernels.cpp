// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cmath>
#include <limits>

#include <grain/core/collision/distance_queries.hpp>
#include <grain/core/collision/mesh_bvh.hpp>

#include "kernels.hpp"

/// Mesh kernels. The mesh is always body A (it is static). Work happens in the mesh's body frame:
/// the moving shape is mapped into it, every candidate triangle produces candidate contacts, the
/// candidates are filtered across triangles and the survivors are mapped back to I.
///
/// Triangles of a two-sided mesh (a thin shell): the normal points from the closest triangle
/// point towards the moving shape. One-sided meshes (Mesh::oneSided): the normal is the face
/// normal; a sphere centre (capsule end) behind the face plane by at most the radius and inside
/// the triangle is pushed out to the front, deeper ones are ignored. Cross-triangle filtering:
///  - a candidate whose mesh point lies on an edge or vertex is dropped if another triangle that
///    contains that point gives a strictly closer point for the same feature of the moving shape
///    (removes the spurious "internal edge" contacts of flat or gently curved surfaces);
///  - candidates with coinciding mesh points are merged into one (for a box, the one of least
///    penetration among the triangles' separating-axis proposals; for round shapes the deepest).
namespace grain::collision::detail {

namespace {

using Candidate = NarrowPhaseScratch::MeshCandidate;

struct MeshFrame {
  const TriangleMesh& mesh;
  const MeshBvh& bvh;
  Vec3 position;  ///< moving body origin in the mesh frame
  Mat3 rotation;  ///< moving body K -> mesh frame
};

MeshFrame toMeshFrame(const ShapePose& meshPose, const ShapePose& other) {
  const MeshBvh& bvh = *meshPose.meshBvh;
  const Mat3 rt = meshPose.rotation.transpose();
  return MeshFrame{bvh.mesh(), bvh, rt * (other.position - meshPose.position), rt * other.rotation};
}

void queryTriangles(const MeshFrame& f, const Shape& shape, NarrowPhaseScratch& scratch) {
  Aabb box = shapeAabb(shape, f.position, f.rotation);
  box.inflate(aabbMargin(box));
  scratch.triangles.clear();
  f.bvh.query(box, scratch.triangles);
}

inline void triangleVerts(const TriangleMesh& m, std::uint32_t t, Vec3& a, Vec3& b, Vec3& c) {
  const auto& tri = m.triangles[t];
  a = m.vertices[tri[0]];
  b = m.vertices[tri[1]];
  c = m.vertices[tri[2]];
}

/// Applies the cross-triangle filtering rules and writes the survivors, mapped to I, to `out`.
/// Of candidates sharing one mesh point, the shallowest (box) or deepest (round shapes) is kept.
void filterAndEmit(const ShapePose& meshPose, const TriangleMesh& m, Real tol, bool keepShallowest,
                   std::vector<Candidate>& cands, ContactManifold& out) {
  const std::size_t n = cands.size();
  for (std::size_t i = 0; i < n; ++i) {
    Candidate& ci = cands[i];
    if (ci.onFace) {
      continue;
    }
    for (std::size_t j = 0; j < n && ci.keep; ++j) {
      const Candidate& cj = cands[j];
      if (j == i || cj.feature != ci.feature || cj.triangle == ci.triangle ||
          !(cj.distance < ci.distance - tol)) {
        continue;
      }
      Vec3 a;
      Vec3 b;
      Vec3 c;
      triangleVerts(m, cj.triangle, a, b, c);
      const Vec3 q = closestPointOnTriangle(ci.point.pointA, a, b, c).point;
      if ((q - ci.point.pointA).norm() <= tol) {
        ci.keep = false;
      }
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!cands[i].keep) {
      continue;
    }
    for (std::size_t j = i + 1; j < n; ++j) {
      Candidate& cj = cands[j];
      if (!cj.keep || (cj.point.pointA - cands[i].point.pointA).norm() > tol) {
        continue;
      }
      const bool replace =
          keepShallowest ? cj.point.gap > cands[i].point.gap : cj.point.gap < cands[i].point.gap;
      if (replace) {
        cands[i].point = cj.point;
      }
      cj.keep = false;
    }
  }
  const Mat3& R = meshPose.rotation;
  const Vec3& p = meshPose.position;
  for (const Candidate& c : cands) {
    if (c.keep) {
      emit(out, R * c.point.normal, c.point.gap, p + R * c.point.pointA, p + R * c.point.pointB);
    }
  }
}

/// Candidate contact of a sphere (centre x, radius r, mesh frame) with triangle t, if any.
/// `fallback` is the normal used when the centre lies on the triangle. One-sided: a centre
/// behind the face plane (height h < 0 along the face normal) gives the face contact with the
/// face normal and g_N = h - r if h >= -r and it projects into the triangle, else nothing.
bool sphereTriangle(const TriangleMesh& m, std::uint32_t t, const Vec3& x, Real r,
                    const Vec3& fallback, std::uint8_t feature, bool oneSided, Candidate& out) {
  Vec3 a;
  Vec3 b;
  Vec3 c;
  triangleVerts(m, t, a, b, c);
  const TriangleClosest cl = closestPointOnTriangle(x, a, b, c);
  if (oneSided) {
    const Vec3& n = m.faceNormals[t];
    const Real h = n.dot(x - a);
    if (h < 0.0) {
      if (h < -r || cl.feature != TriangleFeature::Face) {
        return false;
      }
      out = Candidate{ContactPoint{n, h - r, x - h * n, x - r * n}, -h, t, feature, true, true};
      return true;
    }
  }
  const Vec3 diff = x - cl.point;
  const Real d = diff.norm();
  if (d - r > 0.0) {
    return false;
  }
  Vec3 n = fallback;
  if (d > 1e-12 * r) {
    n = diff / d;
  }
  out = Candidate{ContactPoint{n, d - r, cl.point, x - r * n}, d,   t, feature,
                  cl.feature == TriangleFeature::Face,         true};
  return true;
}

}  // namespace

void meshSphere(const ShapePose& a, const ShapePose& b, ContactManifold& out,
                NarrowPhaseScratch& scratch) {
  const Real r = std::get_if<Sphere>(b.shape)->radius;
  const bool oneSided = std::get_if<Mesh>(a.shape)->oneSided;
  const MeshFrame f = toMeshFrame(a, b);
  queryTriangles(f, *b.shape, scratch);
  auto& cands = scratch.meshCandidates;
  cands.clear();
  Candidate cand;
  for (const std::uint32_t t : scratch.triangles) {
    Vec3 n = f.mesh.faceNormals[t];
    if (!oneSided && n.dot(f.position - f.mesh.vertices[f.mesh.triangles[t][0]]) < 0.0) {
      n = -n;
    }
    if (sphereTriangle(f.mesh, t, f.position, r, n, 0, oneSided, cand)) {
      cands.push_back(cand);
    }
  }
  const Real tol = 1e-9 * r + 1e-12 * f.position.cwiseAbs().maxCoeff();
  filterAndEmit(a, f.mesh, tol, false, cands, out);
}

void meshCapsule(const ShapePose& a, const ShapePose& b, ContactManifold& out,
                 NarrowPhaseScratch& scratch) {
  const Capsule& cap = *std::get_if<Capsule>(b.shape);
  const Real r = cap.radius;
  const bool oneSided = std::get_if<Mesh>(a.shape)->oneSided;
  const MeshFrame f = toMeshFrame(a, b);
  queryTriangles(f, *b.shape, scratch);
  const Vec3 hw = (0.5 * cap.length) * (f.rotation * cap.axis);
  const Vec3 e[2] = {f.position - hw, f.position + hw};
  const Vec3& mid = f.position;
  auto& cands = scratch.meshCandidates;
  cands.clear();
  const Real tol = 1e-9 * (r + cap.length) + 1e-12 * f.position.cwiseAbs().maxCoeff();
  Candidate cand;
  for (const std::uint32_t t : scratch.triangles) {
    Vec3 va;
    Vec3 vb;
    Vec3 vc;
    triangleVerts(f.mesh, t, va, vb, vc);
    Vec3 n = f.mesh.faceNormals[t];
    if (!oneSided && n.dot(mid - va) < 0.0) {
      n = -n;  // oriented towards the capsule centre (two-sided)
    }
    Vec3 crossing;
    if (cap.length > 0.0 && segmentIntersectsTriangle(e[0], e[1], va, vb, vc, crossing)) {
      // Core segment pierces the triangle: push out along the face normal towards the centre
      // by the depth of the end point behind the plane.
      const Real h0 = n.dot(e[0] - va);
      const Real h1 = n.dot(e[1] - va);
      const int k = h0 <= h1 ? 0 : 1;
      const Real h = std::min(h0, h1);
      const Real depth = std::max(Real(0), -h);
      cands.push_back(Candidate{ContactPoint{n, -depth - r, e[k] - h * n, e[k] - r * n}, 0.0, t, 2,
                                true, true});
      // The end in front of the plane may rest on the face as well.
      const int other = 1 - k;
      if (n.dot(e[other] - va) > 0.0 &&
          sphereTriangle(f.mesh, t, e[other], r, n, static_cast<std::uint8_t>(other), oneSided,
                         cand)) {
        cands.push_back(cand);
      }
      continue;
    }
    Real endDist[2] = {std::numeric_limits<Real>::infinity(),
                       std::numeric_limits<Real>::infinity()};
    const int ends = cap.length > 0.0 ? 2 : 1;
    for (int k = 0; k < ends; ++k) {
      if (sphereTriangle(f.mesh, t, e[k], r, n, static_cast<std::uint8_t>(k), oneSided, cand)) {
        endDist[k] = cand.distance;
        cands.push_back(cand);
      } else {
        endDist[k] = (e[k] - closestPointOnTriangle(e[k], va, vb, vc).point).norm();
      }
    }
    if (ends < 2) {
      continue;
    }
    // Interior of the segment against the triangle edges (capsule across a ridge or edge).
    const Vec3* tv[3] = {&va, &vb, &vc};
    SegmentClosest best;
    Real bestDist = std::numeric_limits<Real>::infinity();
    for (int k = 0; k < 3; ++k) {
      const SegmentClosest cp = closestPointsSegments(e[0], e[1], *tv[k], *tv[(k + 1) % 3]);
      const Real d = (cp.onFirst - cp.onSecond).norm();
      if (d < bestDist) {
        bestDist = d;
        best = cp;
      }
    }
    constexpr Real kInterior = 1e-9;
    if (best.s > kInterior && best.s < 1.0 - kInterior && bestDist - r <= 0.0 &&
        bestDist < std::min(endDist[0], endDist[1]) - tol) {
      Vec3 nc = n;
      if (bestDist > 1e-12 * r) {
        nc = (best.onFirst - best.onSecond) / bestDist;
      }
      if (oneSided && nc.dot(n) < 0.0) {
        continue;  // the segment is behind the edge: the back of a one-sided mesh
      }
      cands.push_back(
          Candidate{ContactPoint{nc, bestDist - r, best.onSecond, best.onFirst - r * nc}, bestDist,
                    t, 2, false, true});
    }
  }
  filterAndEmit(a, f.mesh, tol, false, cands, out);
}

void meshBox(const ShapePose& a, const ShapePose& b, ContactManifold& out,
             NarrowPhaseScratch& scratch) {
  const Box& box = *std::get_if<Box>(b.shape);
  const bool oneSided = std::get_if<Mesh>(a.shape)->oneSided;
  const MeshFrame f = toMeshFrame(a, b);
  queryTriangles(f, *b.shape, scratch);
  const Polytope pb =
      makeBoxPolytope(f.position + f.rotation * box.center, f.rotation, box.halfExtent);
  auto& cands = scratch.meshCandidates;
  cands.clear();
  ContactManifold& tmp = out;  // triangle contacts are staged at the end of `out`
  const std::size_t first = out.size();
  for (const std::uint32_t t : scratch.triangles) {
    Vec3 va;
    Vec3 vb;
    Vec3 vc;
    triangleVerts(f.mesh, t, va, vb, vc);
    const Polytope pt = makeTrianglePolytope(va, vb, vc, f.mesh.faceNormals[t]);
    collidePolytopes(pt, pb, tmp);
    for (std::size_t k = first; k < tmp.size(); ++k) {
      if (oneSided && tmp[k].normal.dot(f.mesh.faceNormals[t]) < 0.0) {
        continue;  // would push the box to the back of a one-sided mesh
      }
      cands.push_back(Candidate{tmp[k], -tmp[k].gap, t, 0, true, true});
    }
    tmp.resize(first);
  }
  const Real tol = 1e-9 * box.halfExtent.sum() + 1e-12 * f.position.cwiseAbs().maxCoeff();
  filterAndEmit(a, f.mesh, tol, true, cands, out);
  // A box on a flat part of the mesh (every normal the same, e.g. a face across two or more
  // triangles): keep at most four points of the support polygon, as for box-box.
  if (out.size() - first > kMaxManifoldPoints) {
    bool flat = true;
    for (std::size_t k = first + 1; k < out.size() && flat; ++k) {
      flat = out[k].normal.dot(out[first].normal) >= 1.0 - 1e-9;
    }
    if (flat) {
      reduceManifold(out, first, out[first].normal);
    }
  }
}

}  // namespace grain::collision::detail
