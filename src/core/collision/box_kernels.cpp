// SPDX-License-Identifier: MIT
#include <algorithm>
#include <cmath>
#include <limits>

#include <grain/core/collision/distance_queries.hpp>

#include "kernels.hpp"

namespace grain::collision::detail {

namespace {

constexpr Real kInf = std::numeric_limits<Real>::infinity();
constexpr int kMaxPolygon = 16;

/// Sutherland-Hodgman step: keeps the part of the polygon `in` (n vertices) with
/// s . x <= offset. Returns the number of vertices written to `out`.
int clipPolygon(const Vec3* in, int n, const Vec3& s, Real offset, Vec3* out) {
  int m = 0;
  for (int k = 0; k < n; ++k) {
    const Vec3& p = in[k];
    const Vec3& q = in[(k + 1) % n];
    const Real dp = s.dot(p) - offset;
    const Real dq = s.dot(q) - offset;
    if (dp <= 0.0 && m < kMaxPolygon) {
      out[m++] = p;
    }
    if (((dp < 0.0 && dq > 0.0) || (dp > 0.0 && dq < 0.0)) && m < kMaxPolygon) {
      out[m++] = p + (dp / (dp - dq)) * (q - p);
    }
  }
  return m;
}

void project(const Polytope& p, const Vec3& axis, Real& lo, Real& hi) {
  lo = kInf;
  hi = -kInf;
  for (int k = 0; k < p.numVerts; ++k) {
    const Real x = axis.dot(p.verts[k]);
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
}

enum class AxisKind { None, FaceA, FaceB, Edge };

struct AxisChoice {
  AxisKind kind = AxisKind::None;
  int i = 0;
  int j = 0;
  Real depth = kInf;         ///< overlap of the projections (m), >= 0
  Vec3 dir = Vec3::UnitZ();  ///< axis oriented from A towards B
};

/// Contact points of a face contact: reference face of `ref` with outward normal closest to
/// `n` (pointing from ref towards inc), incident face of `inc` clipped against its side planes.
void faceContact(const Polytope& ref, const Polytope& inc, const Vec3& n, bool refIsA,
                 ContactManifold& out) {
  const std::size_t first = out.size();
  int rf = 0;
  Real best = -kInf;
  for (int f = 0; f < ref.numFaces; ++f) {
    const Real d = ref.faceNormals[f].dot(n);
    if (d > best) {
      best = d;
      rf = f;
    }
  }
  const Vec3 nRef = ref.faceNormals[rf];
  int inf = 0;
  best = kInf;
  for (int f = 0; f < inc.numFaces; ++f) {
    const Real d = inc.faceNormals[f].dot(nRef);
    if (d < best) {
      best = d;
      inf = f;
    }
  }
  std::array<Vec3, kMaxPolygon> poly;
  std::array<Vec3, kMaxPolygon> tmp;
  int m = inc.faceSize[inf];
  for (int k = 0; k < m; ++k) {
    poly[k] = inc.verts[inc.faceVerts[inf][k]];
  }
  const int rs = ref.faceSize[rf];
  Vec3 centroid = Vec3::Zero();
  for (int k = 0; k < rs; ++k) {
    centroid += ref.verts[ref.faceVerts[rf][k]];
  }
  centroid /= rs;
  for (int k = 0; k < rs && m > 0; ++k) {
    const Vec3& u = ref.verts[ref.faceVerts[rf][k]];
    const Vec3& w = ref.verts[ref.faceVerts[rf][(k + 1) % rs]];
    Vec3 s = (w - u).cross(nRef);
    if (s.dot(centroid - u) > 0.0) {
      s = -s;
    }
    m = clipPolygon(poly.data(), m, s, s.dot(u), tmp.data());
    std::swap(poly, tmp);
  }
  const Vec3& r0 = ref.verts[ref.faceVerts[rf][0]];
  auto add = [&](const Vec3& p) {
    const Real sep = nRef.dot(p - r0);
    if (sep > 0.0) {
      return false;
    }
    const Vec3 onRef = p - sep * nRef;
    if (refIsA) {
      emit(out, nRef, sep, onRef, p);
    } else {
      emit(out, -nRef, sep, p, onRef);
    }
    return true;
  };
  bool any = false;
  for (int k = 0; k < m; ++k) {
    any = add(poly[k]) || any;
  }
  if (!any) {
    // Rounding left nothing inside the side planes: fall back to the deepest incident vertex.
    int v = 0;
    Real lo = kInf;
    for (int k = 0; k < inc.numVerts; ++k) {
      const Real d = nRef.dot(inc.verts[k]);
      if (d < lo) {
        lo = d;
        v = k;
      }
    }
    add(inc.verts[v]);
  }
  reduceManifold(out, first, refIsA ? nRef : Vec3(-nRef));
}

void edgeContact(const Polytope& a, const Polytope& b, const AxisChoice& c, ContactManifold& out) {
  const Vec3& n = c.dir;
  int ea = -1;
  int eb = -1;
  Real best = -kInf;
  for (int e = 0; e < a.numEdges; ++e) {
    if (a.edgeDir[e] != c.i) {
      continue;
    }
    const Real s = n.dot(a.verts[a.edges[e][0]] + a.verts[a.edges[e][1]]);
    if (s > best) {
      best = s;
      ea = e;
    }
  }
  best = kInf;
  for (int e = 0; e < b.numEdges; ++e) {
    if (b.edgeDir[e] != c.j) {
      continue;
    }
    const Real s = n.dot(b.verts[b.edges[e][0]] + b.verts[b.edges[e][1]]);
    if (s < best) {
      best = s;
      eb = e;
    }
  }
  const SegmentClosest cp = closestPointsSegments(a.verts[a.edges[ea][0]], a.verts[a.edges[ea][1]],
                                                  b.verts[b.edges[eb][0]], b.verts[b.edges[eb][1]]);
  const Real gap = n.dot(cp.onSecond - cp.onFirst);
  if (gap <= 0.0) {
    emit(out, n, gap, cp.onFirst, cp.onSecond);
  }
}

/// Box centre in I and the rotation of a box pose.
inline Vec3 boxCenter(const ShapePose& p, const Box& b) {
  return p.position + p.rotation * b.center;
}

/// Parameter interval [t0, t1] of the part of segment s0 + t (s1 - s0), t in [0, 1], inside the
/// slabs |x_j| <= half_j for the axes j != skipAxis (box frame). Returns false if empty.
bool clipSegmentToSlabs(const Vec3& s0, const Vec3& s1, const Vec3& half, int skipAxis, Real& t0,
                        Real& t1) {
  t0 = 0.0;
  t1 = 1.0;
  const Vec3 d = s1 - s0;
  for (int j = 0; j < 3; ++j) {
    if (j == skipAxis) {
      continue;
    }
    if (d[j] == 0.0) {
      if (std::abs(s0[j]) > half[j]) {
        return false;
      }
      continue;
    }
    Real ta = (-half[j] - s0[j]) / d[j];
    Real tb = (half[j] - s0[j]) / d[j];
    if (ta > tb) {
      std::swap(ta, tb);
    }
    t0 = std::max(t0, ta);
    t1 = std::min(t1, tb);
    if (t0 > t1) {
      return false;
    }
  }
  return true;
}

/// Contacts of a capsule core segment (box frame, radius r) against box face `axis` with
/// outward sign `sign`: the segment part above the face rectangle, both ends. Returns the number
/// of contacts added. Output in the box frame (A = box).
int capsuleFaceContacts(const Vec3& s0, const Vec3& s1, Real r, const Vec3& half, int axis,
                        Real sign, ContactManifold& out) {
  Real t0 = 0.0;
  Real t1 = 1.0;
  if (!clipSegmentToSlabs(s0, s1, half, axis, t0, t1)) {
    return 0;
  }
  Vec3 n = Vec3::Zero();
  n[axis] = sign;
  int added = 0;
  const int count = (t1 - t0 > 1e-12) ? 2 : 1;
  for (int k = 0; k < count; ++k) {
    const Real t = k == 0 ? t0 : t1;
    const Vec3 x = s0 + t * (s1 - s0);
    const Real height = sign * x[axis] - half[axis];
    const Real gap = height - r;
    if (gap <= 0.0) {
      emit(out, n, gap, x - height * n, x - r * n);
      ++added;
    }
  }
  return added;
}

/// Contacts of a capsule core segment (box frame, radius r) lying along a box edge: if the
/// closest pair (box point `onBox`, unit normal `nLocal` from the box to the segment) is beside
/// an edge (nLocal has no component along the edge, onBox sits at +-half in the two other
/// coordinates) and the segment is parallel to that edge within kParallelSin, the two ends of the
/// part of the segment beside the edge each give a contact with the edge (normal from the edge
/// point to the segment point). Returns the number of contacts added (0 if the case does not
/// apply). Output in the box frame.
int capsuleEdgeContacts(const Vec3& s0, const Vec3& s1, Real r, const Vec3& half, const Vec3& onBox,
                        const Vec3& nLocal, ContactManifold& out) {
  constexpr Real kParallelSin = 1e-2;  // as for two capsules lying side by side
  const Real tolerance = 1e-9 * half.maxCoeff();
  int k = 0;  // the edge direction
  nLocal.cwiseAbs().minCoeff(&k);
  if (std::abs(nLocal[k]) > kParallelSin) {
    return 0;
  }
  for (int j = 0; j < 3; ++j) {
    if (j != k && std::abs(std::abs(onBox[j]) - half[j]) > tolerance) {
      return 0;  // beside a face, not an edge
    }
  }
  const Vec3 d = s1 - s0;
  const Real len = d.norm();
  if (len == 0.0 || d.cross(Vec3::Unit(k)).norm() > kParallelSin * len) {
    return 0;
  }
  // Part of the segment with |x_k| <= half_k.
  Real t0 = (-half[k] - s0[k]) / d[k];
  Real t1 = (half[k] - s0[k]) / d[k];
  if (t0 > t1) {
    std::swap(t0, t1);
  }
  t0 = std::max(t0, Real(0));
  t1 = std::min(t1, Real(1));
  if (t1 - t0 <= 1e-9) {
    return 0;
  }
  int added = 0;
  for (const Real t : {t0, t1}) {
    const Vec3 x = s0 + t * d;
    Vec3 p = onBox;
    p[k] = std::clamp(x[k], -half[k], half[k]);
    const Vec3 diff = x - p;
    const Real dist = diff.norm();
    if (dist == 0.0 || dist - r > 0.0) {
      continue;
    }
    const Vec3 n = diff / dist;
    emit(out, n, dist - r, p, x - r * n);
    ++added;
  }
  return added;
}

}  // namespace

void reduceManifold(ContactManifold& out, std::size_t first, const Vec3& n) {
  const std::size_t count = out.size() - first;
  if (count <= kMaxManifoldPoints) {
    return;
  }
  // Patch positions: the middle of the two surface points, projected on the plane normal to n.
  std::array<Vec3, 2 * kMaxPolygon> x;
  const std::size_t m = std::min(count, x.size());
  for (std::size_t k = 0; k < m; ++k) {
    const Vec3 mid = 0.5 * (out[first + k].pointA + out[first + k].pointB);
    x[k] = mid - n.dot(mid) * n;
  }
  std::size_t i0 = 0;
  for (std::size_t k = 1; k < m; ++k) {
    if (out[first + k].gap < out[first + i0].gap) {
      i0 = k;
    }
  }
  std::size_t i1 = i0;
  Real best = 0.0;
  for (std::size_t k = 0; k < m; ++k) {
    const Real d2 = (x[k] - x[i0]).squaredNorm();
    if (d2 > best) {
      best = d2;
      i1 = k;
    }
  }
  // Signed double area of the triangle (a, b, c) seen along n.
  auto area = [&](std::size_t a, std::size_t b, std::size_t c) {
    return (x[b] - x[a]).cross(x[c] - x[a]).dot(n);
  };
  std::size_t i2 = i0;
  best = 0.0;
  for (std::size_t k = 0; k < m; ++k) {
    const Real a = std::abs(area(i0, i1, k));
    if (a > best) {
      best = a;
      i2 = k;
    }
  }
  std::array<std::size_t, kMaxManifoldPoints> keep{};
  std::size_t kept = 0;
  keep[kept++] = i0;
  if (i1 != i0) {
    keep[kept++] = i1;
  }
  if (i2 != i0 && i2 != i1) {
    keep[kept++] = i2;
    // Orient the triangle counter-clockwise about n, then find the point that adds the largest
    // triangle outside one of its edges.
    if (area(i0, i1, i2) < 0.0) {
      std::swap(i1, i2);
    }
    const std::size_t tri[3] = {i0, i1, i2};
    std::size_t i3 = i0;
    best = 0.0;
    for (std::size_t k = 0; k < m; ++k) {
      for (int e = 0; e < 3; ++e) {
        const Real outside = -area(tri[e], tri[(e + 1) % 3], k);
        if (outside > best) {
          best = outside;
          i3 = k;
        }
      }
    }
    if (i3 != i0) {
      keep[kept++] = i3;
    }
  }
  std::sort(keep.begin(), keep.begin() + static_cast<std::ptrdiff_t>(kept));
  for (std::size_t k = 0; k < kept; ++k) {
    out[first + k] = out[first + keep[k]];
  }
  out.resize(first + kept);
}

Polytope makeBoxPolytope(const Vec3& center, const Mat3& rotation, const Vec3& half) {
  Polytope p;
  const Vec3 ax = half.x() * rotation.col(0);
  const Vec3 ay = half.y() * rotation.col(1);
  const Vec3 az = half.z() * rotation.col(2);
  p.numVerts = 8;
  for (int i = 0; i < 8; ++i) {
    p.verts[i] = center + ((i & 1) ? ax : Vec3(-ax)) + ((i & 2) ? ay : Vec3(-ay)) +
                 ((i & 4) ? az : Vec3(-az));
  }
  p.numFaceAxes = 3;
  p.numEdgeDirs = 3;
  for (int k = 0; k < 3; ++k) {
    p.faceAxes[k] = rotation.col(k);
    p.edgeDirs[k] = rotation.col(k);
  }
  p.numFaces = 6;
  constexpr std::uint8_t faces[6][4] = {{0, 2, 6, 4}, {1, 3, 7, 5}, {0, 1, 5, 4},
                                        {2, 3, 7, 6}, {0, 1, 3, 2}, {4, 5, 7, 6}};
  for (int f = 0; f < 6; ++f) {
    p.faceNormals[f] = (f % 2 == 0 ? -1.0 : 1.0) * rotation.col(f / 2);
    p.faceSize[f] = 4;
    for (int k = 0; k < 4; ++k) {
      p.faceVerts[f][k] = faces[f][k];
    }
  }
  p.numEdges = 12;
  constexpr std::uint8_t edges[12][2] = {{0, 1}, {2, 3}, {4, 5}, {6, 7}, {0, 2}, {1, 3},
                                         {4, 6}, {5, 7}, {0, 4}, {1, 5}, {2, 6}, {3, 7}};
  for (int e = 0; e < 12; ++e) {
    p.edges[e] = {edges[e][0], edges[e][1]};
    p.edgeDir[e] = static_cast<std::uint8_t>(e / 4);
  }
  p.size = half.sum();
  return p;
}

Polytope makeTrianglePolytope(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& n) {
  Polytope p;
  p.numVerts = 3;
  p.verts[0] = a;
  p.verts[1] = b;
  p.verts[2] = c;
  p.numFaceAxes = 1;
  p.faceAxes[0] = n;
  p.numFaces = 2;
  p.faceNormals[0] = n;
  p.faceNormals[1] = -n;
  for (int f = 0; f < 2; ++f) {
    p.faceSize[f] = 3;
    p.faceVerts[f] = {0, 1, 2, 0};
  }
  p.numEdgeDirs = 3;
  p.numEdges = 3;
  for (int e = 0; e < 3; ++e) {
    const Vec3 d = p.verts[(e + 1) % 3] - p.verts[e];
    p.size = std::max(p.size, d.norm());
    p.edgeDirs[e] = d.normalized();
    p.edges[e] = {static_cast<std::uint8_t>(e), static_cast<std::uint8_t>((e + 1) % 3)};
    p.edgeDir[e] = static_cast<std::uint8_t>(e);
  }
  return p;
}

void collidePolytopes(const Polytope& a, const Polytope& b, ContactManifold& out) {
  AxisChoice faceA;
  AxisChoice faceB;
  AxisChoice edge;
  // Returns false if `axis` separates the polytopes; otherwise records it if it is the axis of
  // least overlap of its kind.
  auto test = [&](const Vec3& axis, AxisChoice& best, AxisKind kind, int i, int j) {
    Real a0;
    Real a1;
    Real b0;
    Real b1;
    project(a, axis, a0, a1);
    project(b, axis, b0, b1);
    const Real overlapPos = a1 - b0;  // B lies on the +axis side of A
    const Real overlapNeg = b1 - a0;  // B lies on the -axis side of A
    if (overlapPos < 0.0 || overlapNeg < 0.0) {
      return false;
    }
    const Real depth = std::min(overlapPos, overlapNeg);
    if (depth < best.depth) {
      best = AxisChoice{kind, i, j, depth, overlapPos <= overlapNeg ? axis : Vec3(-axis)};
    }
    return true;
  };
  for (int i = 0; i < a.numFaceAxes; ++i) {
    if (!test(a.faceAxes[i], faceA, AxisKind::FaceA, i, 0)) {
      return;
    }
  }
  for (int i = 0; i < b.numFaceAxes; ++i) {
    if (!test(b.faceAxes[i], faceB, AxisKind::FaceB, i, 0)) {
      return;
    }
  }
  for (int i = 0; i < a.numEdgeDirs; ++i) {
    for (int j = 0; j < b.numEdgeDirs; ++j) {
      Vec3 axis = a.edgeDirs[i].cross(b.edgeDirs[j]);
      const Real len2 = axis.squaredNorm();
      if (len2 < 1e-12) {
        continue;  // (nearly) parallel edges: the face axes cover this direction
      }
      axis /= std::sqrt(len2);
      if (!test(axis, edge, AxisKind::Edge, i, j)) {
        return;
      }
    }
  }
  // Prefer face axes (stable manifolds) and A's face over B's unless clearly worse.
  const Real slop = 1e-9 * (a.size + b.size);
  const AxisChoice& face = (faceB.depth < 0.98 * faceA.depth - slop) ? faceB : faceA;
  if (edge.kind == AxisKind::Edge && edge.depth < 0.95 * face.depth - slop) {
    edgeContact(a, b, edge, out);
  } else if (face.kind == AxisKind::FaceA) {
    faceContact(a, b, face.dir, true, out);
  } else {
    faceContact(b, a, -face.dir, false, out);
  }
}

void boxBox(const ShapePose& a, const ShapePose& b, ContactManifold& out, NarrowPhaseScratch&) {
  const Box& ba = *std::get_if<Box>(a.shape);
  const Box& bb = *std::get_if<Box>(b.shape);
  const Polytope pa = makeBoxPolytope(boxCenter(a, ba), a.rotation, ba.halfExtent);
  const Polytope pb = makeBoxPolytope(boxCenter(b, bb), b.rotation, bb.halfExtent);
  collidePolytopes(pa, pb, out);
}

void boxSphere(const ShapePose& a, const ShapePose& b, ContactManifold& out, NarrowPhaseScratch&) {
  const Box& box = *std::get_if<Box>(a.shape);
  const Real r = std::get_if<Sphere>(b.shape)->radius;
  const Vec3 c = boxCenter(a, box);
  const Vec3& e = box.halfExtent;
  const Vec3 q = a.rotation.transpose() * (b.position - c);  // sphere centre, box frame
  const Vec3 clamped = q.cwiseMax(-e).cwiseMin(e);
  Vec3 nLocal;
  Vec3 onBox;
  Real gap;
  if (clamped == q) {
    // Centre inside (or on) the box: leave through the nearest face.
    int k = 0;
    Real depth = kInf;
    for (int j = 0; j < 3; ++j) {
      const Real dj = e[j] - std::abs(q[j]);
      if (dj < depth) {
        depth = dj;
        k = j;
      }
    }
    const Real sign = q[k] >= 0.0 ? 1.0 : -1.0;
    nLocal = Vec3::Zero();
    nLocal[k] = sign;
    onBox = q;
    onBox[k] = sign * e[k];
    gap = -depth - r;
  } else {
    const Vec3 diff = q - clamped;
    const Real d = diff.norm();
    gap = d - r;
    if (gap > 0.0) {
      return;
    }
    nLocal = diff / d;
    onBox = clamped;
  }
  const Vec3 n = a.rotation * nLocal;
  emit(out, n, gap, c + a.rotation * onBox, b.position - r * n);
}

void halfspaceBox(const ShapePose& a, const ShapePose& b, ContactManifold& out,
                  NarrowPhaseScratch&) {
  const Vec3 n = a.rotation * std::get_if<Halfspace>(a.shape)->normal;
  const Box& box = *std::get_if<Box>(b.shape);
  const Vec3 c = boxCenter(b, box);
  const Vec3 ax = box.halfExtent.x() * b.rotation.col(0);
  const Vec3 ay = box.halfExtent.y() * b.rotation.col(1);
  const Vec3 az = box.halfExtent.z() * b.rotation.col(2);
  // Quick reject: the lowest corner is above the plane.
  const Real hc = n.dot(c - a.position);
  const Real support = std::abs(n.dot(ax)) + std::abs(n.dot(ay)) + std::abs(n.dot(az));
  if (hc - support > 0.0) {
    return;
  }
  const std::size_t first = out.size();
  for (int i = 0; i < 8; ++i) {
    const Vec3 corner =
        c + ((i & 1) ? ax : Vec3(-ax)) + ((i & 2) ? ay : Vec3(-ay)) + ((i & 4) ? az : Vec3(-az));
    const Real h = n.dot(corner - a.position);
    if (h <= 0.0) {
      emit(out, n, h, corner - h * n, corner);
    }
  }
  reduceManifold(out, first, n);
}

void boxCapsule(const ShapePose& a, const ShapePose& b, ContactManifold& out, NarrowPhaseScratch&) {
  const Box& box = *std::get_if<Box>(a.shape);
  const Capsule& cap = *std::get_if<Capsule>(b.shape);
  const Vec3 c = boxCenter(a, box);
  const Mat3& R = a.rotation;
  const Vec3& e = box.halfExtent;
  const Real r = cap.radius;
  // Everything below in the box frame (origin at the box centre).
  const Vec3 hw = (0.5 * cap.length) * (b.rotation * cap.axis);
  const Vec3 s0 = R.transpose() * (b.position - hw - c);
  const Vec3 s1 = R.transpose() * (b.position + hw - c);
  const std::size_t first = out.size();

  Real t0 = 0.0;
  Real t1 = 1.0;
  bool crosses = clipSegmentToSlabs(s0, s1, e, -1, t0, t1);
  if (!crosses) {
    // Disjoint core: the closest pair is an end point against the box or the segment against
    // one of the 12 box edges.
    Vec3 bestSeg = s0;
    Vec3 bestBox = s0.cwiseMax(-e).cwiseMin(e);
    Real best = (bestSeg - bestBox).squaredNorm();
    {
      const Vec3 q = s1.cwiseMax(-e).cwiseMin(e);
      const Real d = (s1 - q).squaredNorm();
      if (d < best) {
        best = d;
        bestSeg = s1;
        bestBox = q;
      }
    }
    for (int k = 0; k < 3; ++k) {
      const int u = (k + 1) % 3;
      const int w = (k + 2) % 3;
      for (int su = -1; su <= 1; su += 2) {
        for (int sw = -1; sw <= 1; sw += 2) {
          Vec3 p0 = Vec3::Zero();
          p0[u] = su * e[u];
          p0[w] = sw * e[w];
          Vec3 p1 = p0;
          p0[k] = -e[k];
          p1[k] = e[k];
          const SegmentClosest cp = closestPointsSegments(s0, s1, p0, p1);
          const Real d = (cp.onFirst - cp.onSecond).squaredNorm();
          if (d < best) {
            best = d;
            bestSeg = cp.onFirst;
            bestBox = cp.onSecond;
          }
        }
      }
    }
    const Real dist = std::sqrt(best);
    if (dist - r > 0.0) {
      return;
    }
    if (dist > 0.0) {
      const Vec3 nLocal = (bestSeg - bestBox) / dist;
      int k = 0;
      const Real m = nLocal.cwiseAbs().maxCoeff(&k);
      // Closest box point inside a face: rest on the part of the segment above that face.
      if (m >= 1.0 - 1e-9) {
        if (capsuleFaceContacts(s0, s1, r, e, k, nLocal[k] > 0.0 ? 1.0 : -1.0, out) == 0) {
          emit(out, nLocal, dist - r, bestBox, bestSeg - r * nLocal);
        }
      } else if (capsuleEdgeContacts(s0, s1, r, e, bestBox, nLocal, out) == 0) {
        emit(out, nLocal, dist - r, bestBox, bestSeg - r * nLocal);
      }
    } else {
      crosses = true;  // touching at rounding level: treat as crossing
    }
  }
  if (crosses) {
    // Core segment meets the box: separating-axis choice among the box faces and the
    // directions perpendicular to the segment and a box axis.
    const Vec3 d = s1 - s0;
    Real bestDepth = kInf;
    Vec3 bestAxis = Vec3::UnitZ();
    int bestFace = -1;
    auto test = [&](const Vec3& axis, int face) {
      const Real boxHalf = e.dot(axis.cwiseAbs());
      const Real p0 = axis.dot(s0);
      const Real p1 = axis.dot(s1);
      const Real lo = std::min(p0, p1) - r;
      const Real hi = std::max(p0, p1) + r;
      const Real overlapPos = boxHalf - lo;
      const Real overlapNeg = hi + boxHalf;
      const Real depth = std::min(overlapPos, overlapNeg);
      if (depth < bestDepth) {
        bestDepth = depth;
        bestAxis = overlapPos <= overlapNeg ? axis : Vec3(-axis);
        bestFace = face;
      }
    };
    for (int k = 0; k < 3; ++k) {
      test(Vec3::Unit(k), k);
    }
    const Real faceDepth = bestDepth;
    const Real slop = 1e-9 * (e.sum() + r + cap.length);
    const Vec3 faceAxis = bestAxis;
    const int face = bestFace;
    bestDepth = kInf;
    bestFace = -1;
    for (int k = 0; k < 3; ++k) {
      Vec3 axis = Vec3::Unit(k).cross(d);
      const Real len2 = axis.squaredNorm();
      if (len2 <= 1e-12 * d.squaredNorm() || len2 == 0.0) {
        continue;
      }
      axis /= std::sqrt(len2);
      test(axis, -1 - k);
    }
    if (bestFace != -1 && bestDepth < 0.95 * faceDepth - slop) {
      // Edge of the box parallel to axis k, on the side of bestAxis.
      const int k = -1 - bestFace;
      Vec3 p0;
      for (int j = 0; j < 3; ++j) {
        p0[j] = bestAxis[j] >= 0.0 ? e[j] : -e[j];
      }
      Vec3 p1 = p0;
      p0[k] = -e[k];
      p1[k] = e[k];
      const SegmentClosest cp = closestPointsSegments(s0, s1, p0, p1);
      const Real gap = bestAxis.dot(cp.onFirst - cp.onSecond) - r;
      if (gap <= 0.0) {
        emit(out, bestAxis, gap, cp.onSecond, cp.onFirst - r * bestAxis);
      }
    } else {
      capsuleFaceContacts(s0, s1, r, e, face, faceAxis[face] > 0.0 ? 1.0 : -1.0, out);
    }
  }
  // Back to the inertial frame.
  for (std::size_t k = first; k < out.size(); ++k) {
    out[k].normal = R * out[k].normal;
    out[k].pointA = c + R * out[k].pointA;
    out[k].pointB = c + R * out[k].pointB;
  }
}

}  // namespace grain::collision::detail
