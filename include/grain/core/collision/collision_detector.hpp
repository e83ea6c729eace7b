// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include <grain/core/bodies/body_storage.hpp>
#include <grain/core/collision/cell_list.hpp>
#include <grain/core/collision/mesh_bvh.hpp>
#include <grain/core/collision/narrow_phase.hpp>
#include <grain/core/common/settings.hpp>
#include <grain/core/contact/contact_storage.hpp>
#include <grain/core/geometry/aabb.hpp>
#include <grain/core/geometry/shapes.hpp>

/// Collision detection of grain: design note
/// =========================================
///
/// Output. CollisionDetector::detect() fills a ContactStorage with every contact of g_N <= 0
/// (penetrating or exactly touching) between two bodies of which at least one is simulated.
/// Pairs of two non-simulated (static or animated) bodies are never tested; remote bodies are
/// treated like local ones. Per contact (all in the inertial frame I):
///  - body A / body B: A is the smaller index if both are simulated; a static or animated
///    partner is always A;
///  - e_n: unit normal from A towards B;
///  - g_N = e_n . (C_B - C_A), with C_A, C_B the contact points on the surfaces of A and B;
///    negative when penetrating (then -g_N is the depth along e_n);
///  - rA = C_A - r_SA, rB = C_B - r_SB (from each body position / centre of mass).
/// Contacts are emitted in the canonical order of ContactStorage::sortCanonical() (by A, B,
/// gap, rA), so the result does not depend on the broad phase; sortCanonical() is still called.
///
/// Broad phase (BroadPhase::Grid, default), O(N) per step:
///  - Every sphere/box/capsule body gets a bounding sphere (centre of the shape, radius of the
///    smallest sphere about it: r for spheres, |halfExtent| for boxes, length/2 + r for
///    capsules) and a tight world AABB; both are enlarged by a relative 1e-12 so that contacts
///    with g_N = 0 computed with rounding are never culled.
///  - Cell list (collision::CellList) over the "grid bodies": each body is binned once, by the
///    centre of its bounding sphere, into a uniform grid whose cell edge is the largest bounding
///    diameter among the grid bodies (times cellSizeFactor). Overlapping bodies are then in the
///    same or adjacent cells, and each pair is found exactly once by visiting the cell itself and
///    13 neighbour cells (a half shell); the test is bounding sphere against bounding sphere
///    (exact for two spheres). Items are counting-sorted by cell into compact arrays, so the
///    pair loop streams through memory instead of jumping around by body index (bodies of a
///    mixed pile are in random index order). The grid is dense over the occupied box, or hashed
///    when that box is mostly empty (far-away outliers).
///  - Cell size rule and polydispersity: sizing cells from the largest body is what keeps each
///    pair within one cell of each other; it costs ~(r_max/r_mean)^3 bodies per cell, which for
///    radii varying by a factor 2-3 is still a small constant (~1-3 bodies per cell in a dense
///    packing), so the work stays O(N). To keep a few big bodies from inflating the cells, bodies
///    whose bounding radius exceeds largeBodyRatio x the mean bounding radius of the simulated
///    bodies are "large": they are not binned; each is tested against the grid by walking the
///    cells under its AABB (or scanning all grid bodies when that is cheaper), and large bodies
///    are tested against each other pairwise (or with their own cell list when there are many).
///    Static boxes/capsules/spheres go through the same rule (small ones are binned; static-static
///    pairs are skipped).
///  - Static/animated halfspaces are tested against every simulated body (plane against AABB,
///    O(N) per halfspace). Static meshes: AABB test against the mesh's world box (O(N) per mesh),
///    then the narrow phase queries a static BVH of the mesh triangles, built once per mesh shape
///    and cached by shape index (rebuilt if the shape's mesh data changes).
///  - Candidate pairs (A, B) are packed into integer keys and radix-sorted (O(N)), so the narrow
///    phase runs in canonical order and pairs cannot repeat. All buffers are members reused
///    between steps (no heap traffic in steady state).
/// BroadPhase::BruteForce tests all O(N^2) pairs with the narrow phase; it is the reference for
/// tests.
///
/// Narrow phase: a [ShapeType][ShapeType] table of plain function pointers (collision::pairKernel);
/// each kernel is written for one order and a template wrapper serves the swapped order by
/// flipping the normal and exchanging the points. Sphere-sphere pairs, the bulk of a packing, are
/// evaluated inline from compact per-body data with the same function as their table kernel
/// (identical results). Every kernel reports only points with g_N <= 0; exact touching (g_N = 0)
/// is a contact. Manifold rules:
///  - sphere-sphere, sphere-box, sphere-capsule, sphere-halfspace: 1 point. A sphere centre inside
///    a box leaves through the nearest face (g_N = -(face distance + r)); a sphere centre below a
///    halfspace plane at height h < 0 gives g_N = h - r with the plane normal.
///  - box-halfspace: the box corners with g_N <= 0, reduced to at most 4 that keep the support
///    polygon (4 for a box resting on a face; collision::detail::reduceManifold).
///  - box-box: separating-axis test over 15 axes (face axes preferred unless an edge axis has
///    clearly less overlap); face case: incident face clipped against the side planes of the
///    reference face, the clipped points with g_N <= 0 reduced to at most 4; edge case: 1 point.
///  - capsule-halfspace: both cap centres (up to 2). capsule-capsule: closest points; nearly
///    parallel axes (< ~0.6 deg) add the two ends of the overlap (2 points when lying side by
///    side).
///  - box-capsule: closest points of the core segment and the box; if the closest box feature
///    is a face, the segment part above that face gives up to 2 points; if it is an edge and the
///    segment is parallel to it (< ~0.6 deg), the segment part beside the edge gives up to 2
///    points (a capsule lying in a groove or along an edge); if the segment enters
///    the box, a separating-axis choice over the box faces and axis x segment directions.
///  - meshes (static; two-sided thin shells, or one-sided, Mesh::oneSided): sphere/capsule ends
///    vs triangles (closest point on triangle), capsule segment interior vs triangle edges,
///    capsule piercing a triangle; box vs triangle by the separating-axis test and clipping
///    above (corners against faces, triangle vertices against box faces, edge-edge; at most 4
///    points per triangle, and a box on a flat patch keeps at most 4 in all). Normals point from
///    the triangle towards the shape (two-sided) or along the face normal (one-sided).
///    Internal-edge contacts (mesh point on an edge/vertex) are dropped when a triangle that
///    contains that point gives a strictly closer point for the same shape feature; contacts
///    from several triangles at one mesh point are merged into one.
namespace grain {

/// Broad-phase algorithm.
enum class BroadPhase : std::uint8_t {
  Grid,        ///< cell list (uniform grid), O(N) (default)
  BruteForce,  ///< all pairs, O(N^2); reference for testing
};

/// Options of the collision detector.
struct CollisionSettings {
  BroadPhase broadPhase = BroadPhase::Grid;
  /// Cell edge in units of the largest bounding diameter of the grid bodies. Values >= 1 keep
  /// the neighbour search to adjacent cells; smaller values search a wider block of cells.
  Real cellSizeFactor = 1.0;
  /// Bodies with a bounding radius above largeBodyRatio x the mean bounding radius of the
  /// simulated bodies are handled outside the grid.
  Real largeBodyRatio = 2.0;

  /// The description of the members (grain/core/common/settings.hpp): no scene attributes, the
  /// ranges CollisionDetector checks ("collision: cellSizeFactor must be > 0").
  template <class V>
  static constexpr void describe(V&& v) {
    using S = CollisionSettings;
    using settings::Bound;
    using settings::field;
    v(field<&S::broadPhase>("broadPhase").internal());
    v(field<&S::cellSizeFactor>("cellSizeFactor").internal().withBound(Bound::Positive));
    v(field<&S::largeBodyRatio>("largeBodyRatio").internal().withBound(Bound::AtLeastOne));
  }
};

/// Counters of one detection pass.
struct CollisionStats {
  std::size_t candidatePairs = 0;  ///< pairs handed from the broad to the narrow phase
  std::size_t contacts = 0;        ///< contacts produced
  std::size_t gridBodies = 0;      ///< bodies binned into the cell list
  std::size_t largeBodies = 0;     ///< sphere/box/capsule bodies handled outside the cell list
  Real cellSize = 0.0;             ///< cell edge (m)
  bool denseGrid = true;           ///< cells indexed densely (false: hashed)
};

/// A candidate pair (A, B) following the A/B rule of ContactStorage.
struct BodyPair {
  std::uint32_t a = 0;
  std::uint32_t b = 0;
  friend bool operator==(const BodyPair&, const BodyPair&) = default;
};

/// Finds all contacts with g_N <= 0 between pairs of bodies of which at least one is
/// simulated. See the design note above for algorithms and conventions.
class CollisionDetector {
 public:
  /// Detector with default settings (grid broad phase).
  CollisionDetector() = default;
  /// Detector with the given settings; throws grain::Error for invalid values.
  explicit CollisionDetector(const CollisionSettings& settings);

  /// Clears `contacts` and fills it with the contacts of the current configuration, in
  /// canonical order. Throws grain::Error if a simulated body has a halfspace or mesh shape.
  /// With threads > 1 the grid's build and pairs, the plane pairs, the pairs' sort and the
  /// narrow phase are shared out among that many threads (from kMinItemsPerThread bodies or
  /// pairs per thread): the same contacts, in the same order, as on one thread.
  void detect(const BodyStorage& bodies, const ShapeStore& shapes, ContactStorage& contacts,
              std::uint32_t threads = 1);

  /// Grid bodies or candidate pairs per thread below which a phase stays on one thread.
  static constexpr std::size_t kMinItemsPerThread = 2048;

  /// Counters of the last detect() call.
  const CollisionStats& stats() const { return stats_; }
  /// The options this detector was built with.
  const CollisionSettings& settings() const { return settings_; }
  /// Candidate pairs of the last detect() call, sorted by (a, b), without duplicates.
  /// (Formed from the sorted pair keys on each call, for tests and diagnostics.)
  std::vector<BodyPair> candidatePairs() const;

 private:
  void prepare(const BodyStorage& bodies, const ShapeStore& shapes);
  void gridBroadPhase();
  /// The grid's pairs into keys_ (gridBroadPhase), on threads_ threads when the grid is large.
  void gridPairs();
  void bruteForceBroadPhase(std::size_t bodyCount);
  void planeAndMeshPairs();
  void sortPairs();
  void narrowPhase(const BodyStorage& bodies, const ShapeStore& shapes, ContactStorage& contacts);
  /// The narrow phase of the candidate pairs keys_[begin, end), appended to `contacts`.
  void narrowRange(const BodyStorage& bodies, const ShapeStore& shapes, std::size_t begin,
                   std::size_t end, ContactStorage& contacts, collision::ContactManifold& manifold,
                   collision::NarrowPhaseScratch& scratch) const;
  const collision::MeshBvh* meshBvh(const ShapeStore& shapes, ShapeIndex shape);
  /// Records the pair (i, j) following the A/B rule (caller guarantees one is simulated).
  void addPair(std::uint32_t i, std::uint32_t j) {
    addPair(i, j, simulated_[i] != 0, simulated_[j] != 0);
  }
  void addPair(std::uint32_t i, std::uint32_t j, bool si, bool sj) { addPair(keys_, i, j, si, sj); }
  void addPair(std::vector<std::uint64_t>& keys, std::uint32_t i, std::uint32_t j, bool si,
               bool sj) const {
    const bool iIsA = (si && sj) ? i < j : !si;
    const std::uint64_t a = iIsA ? i : j;
    const std::uint64_t b = iIsA ? j : i;
    keys.push_back((a << keyShift_) | b);
  }
  /// The pair packed in a key of keys_ (see addPair()).
  BodyPair pairOf(std::uint64_t key) const {
    const std::uint64_t maskB = (std::uint64_t{1} << keyShift_) - 1;
    return BodyPair{static_cast<std::uint32_t>(key >> keyShift_),
                    static_cast<std::uint32_t>(key & maskB)};
  }

  CollisionSettings settings_;
  CollisionStats stats_;

  /// Compact data of the inlined sphere-sphere path; radius < 0 for other shapes.
  struct SphereData {
    Vec3 position;
    Real radius;
  };

  /// slot_ entry of a sphere body.
  static constexpr std::uint32_t kSphereSlot = 0xffffffffu;

  /// Bounding sphere of a sphere, box or capsule body i (I, m), its radius enlarged by the
  /// margin of the broad phase. A sphere's is formed from spheres_ each time it is read (the
  /// same bits every time): the detector keeps no per-body copy of the bounding spheres, the
  /// cell list keeps the grid bodies' in cell order.
  /// Always inlined: GCC's inliner works to a budget for the whole translation unit
  /// (--param inline-unit-growth) and left it out of line once collision_detector.cpp had grown
  /// (10.9 million more instructions in `grain-pile_benchmark 10000 --sweeps 50 --steps 5`).
  [[gnu::always_inline]] collision::CellList::Sphere bound(std::uint32_t i) const {
    if (slot_[i] == kSphereSlot) {
      const SphereData& s = spheres_[i];
      return {s.position, inflateRadius(s.radius, s.position)};
    }
    return bounds_[slot_[i]];
  }
  /// Bounding radius enlarged by a relative margin (see collision::aabbMargin), so that
  /// contacts with g_N = 0 computed with rounding are never culled.
  static Real inflateRadius(Real r, const Vec3& center) {
    return r + 1e-12 * (r + center.cwiseAbs().maxCoeff()) + 1e-300;
  }
  /// World AABB of body i (not for halfspaces). A sphere's is formed from its bounding sphere.
  Aabb box(std::uint32_t i) const {
    if (slot_[i] == kSphereSlot) {
      const collision::CellList::Sphere s = bound(i);
      return Aabb{s.center.array() - s.radius, s.center.array() + s.radius};
    }
    return boxes_[slot_[i]];
  }
  /// Shape and pose of body i for the narrow-phase kernels (a sphere's rotation is unused and
  /// left at the identity).
  collision::ShapePose pose(const BodyStorage& bodies, const ShapeStore& shapes,
                            std::uint32_t i) const {
    if (slot_[i] == kSphereSlot) {
      return collision::ShapePose{&shapes[bodies.shapes()[i]], bodies.positions()[i],
                                  Mat3::Identity(), nullptr};
    }
    return poses_[slot_[i]];
  }

  // Per body (indexed by body index), rebuilt every call. Spheres, the bulk of a granular
  // scene, keep only these; poses and boxes are stored for the other bodies alone (slot_).
  std::vector<SphereData> spheres_;
  std::vector<std::uint8_t> simulated_;
  std::vector<std::uint32_t> slot_;  ///< index into poses_/boxes_/bounds_, kSphereSlot for spheres
  // Per body that is not a sphere, in body order.
  std::vector<collision::ShapePose> poses_;
  std::vector<Aabb> boxes_;                          ///< world AABB (not used for halfspaces)
  std::vector<collision::CellList::Sphere> bounds_;  ///< bounding sphere (boxes and capsules)

  // Body lists.
  std::vector<std::uint32_t> simulatedBodies_;
  std::vector<std::uint32_t> candidates_;  ///< sphere/box/capsule bodies
  std::vector<std::uint32_t> gridBodies_;
  std::vector<std::uint32_t> largeBodies_;
  std::vector<std::uint32_t> halfspaces_;
  /// A halfspace body as planeAndMeshPairs() tests it: unit normal n (I), |n| per component,
  /// a point of the plane (I, m).
  struct Plane {
    Vec3 normal;
    Vec3 absNormal;
    Vec3 position;
    std::uint32_t body;
  };
  std::vector<Plane> planes_;
  std::vector<std::uint32_t> meshes_;

  collision::CellList grid_;
  collision::CellList largeGrid_;

  // Pairs.
  int keyShift_ = 32;
  std::vector<std::uint64_t> keys_;
  std::vector<std::uint64_t> keysTmp_;
  std::vector<std::uint32_t> radixCounts_;  ///< the threaded sort's digit counts per thread

  // Narrow phase.
  collision::ContactManifold manifold_;
  collision::NarrowPhaseScratch scratch_;

  // Threads of the current detect() call, and each extra thread's pairs and contacts (thread 0
  // uses keys_, the output and the members above).
  std::uint32_t threads_ = 1;
  struct ThreadPart {
    std::vector<std::uint64_t> keys;
    ContactStorage contacts;
    collision::ContactManifold manifold;
    collision::NarrowPhaseScratch scratch;
  };
  std::vector<ThreadPart> parts_;
  std::vector<std::shared_ptr<const collision::MeshBvh>> bvhCache_;  ///< by shape index
};

}  // namespace grain
