// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <grain/core/bodies/body_id.hpp>
#include <grain/core/geometry/shapes.hpp>
#include <grain/core/math/types.hpp>
#include <grain/core/solvers/solver_data.hpp>
#include <grain/mpi/messages.hpp>

/// The records of a distributed run's messages (DistributedExchange), each with the one
/// description (messages.hpp) that both writes and reads it. Sizes are for Real = double;
/// "full body" is 181 bytes for a sphere, 221 for a box, 213 for a capsule.
namespace grain::mpi {

// Shapes travel by value (processes do not share shape numbering; see ShapeStore::intern): a
// Shape field is its type (ShapeType as one byte) and then the values below. Halfspaces and meshes
// have no description: they are static and never travel (writing one throws grain::Error).

/// Sphere: radius (8 bytes).
template <RecordOf<Sphere> S, class F>
void describe(S& s, F&& f) {
  f(s.radius);
}
/// Box: half extents, centre (48 bytes).
template <RecordOf<Box> S, class F>
void describe(S& s, F&& f) {
  f(s.halfExtent, s.center);
}
/// Capsule: axis, radius, length (40 bytes).
template <RecordOf<Capsule> S, class F>
void describe(S& s, F&& f) {
  f(s.axis, s.radius, s.length);
}

/// True if a body with this shape can move between processes (the type has a description).
inline bool shapeTravels(const Shape& shape) {
  return std::visit([](const auto& s) { return Described<const std::remove_cvref_t<decltype(s)>>; },
                    shape);
}

/// A simulated body's state (BodyStorage): 136 bytes.
struct BodyState {
  Vec3 position = Vec3::Zero();              ///< r (world frame, m)
  Quat orientation = Quat::Identity();       ///< p (body to world)
  Vec3 velocity = Vec3::Zero();              ///< v (world frame, m/s)
  Vec3 omegaBody = Vec3::Zero();             ///< Ω (body frame, rad/s)
  Quat orientationStart = Quat::Identity();  ///< p^S, the orientation at the step start
};
template <RecordOf<BodyState> S, class F>
void describe(S& s, F&& f) {
  f(s.position, s.orientation, s.velocity, s.omegaBody, s.orientationStart);
}

/// Everything a process needs to add a simulated body but its id: shape, material, mass (kg),
/// inertia (body frame, kg m^2), state.
struct FullBody {
  Shape shape = Sphere{};
  MaterialId material = 0;
  Real mass = 0.0;
  Vec3 inertiaBody = Vec3::Zero();
  BodyState state;
};
template <RecordOf<FullBody> S, class F>
void describe(S& b, F&& f) {
  f(b.shape, b.material, b.mass, b.inertiaBody, b.state);
}

/// The kind byte ahead of each record of a body message (exchangeBodies).
enum class BodyRecordKind : std::uint8_t { Notify = 1, Update = 2, Remove = 3, Transfer = 4 };

/// Notify: the body starts overlapping the receiver, which adds a remote copy. id, owner (rank),
/// full body.
struct NotifyRecord {
  static constexpr BodyRecordKind kKind = BodyRecordKind::Notify;
  BodyId id = 0;
  std::int32_t owner = 0;
  FullBody body;
};
template <RecordOf<NotifyRecord> S, class F>
void describe(S& r, F&& f) {
  f(r.id, r.owner, r.body);
}

/// A remote copy's state: the body's state without p^S, which only the owner's half steps read
/// (a copy that becomes the owner's gets it with the whole body, in a Transfer): 104 bytes.
struct CopyState {
  Vec3 position = Vec3::Zero();         ///< r (world frame, m)
  Quat orientation = Quat::Identity();  ///< p (body to world)
  Vec3 velocity = Vec3::Zero();         ///< v (world frame, m/s)
  Vec3 omegaBody = Vec3::Zero();        ///< Ω (body frame, rad/s)
};
template <RecordOf<CopyState> S, class F>
void describe(S& s, F&& f) {
  f(s.position, s.orientation, s.velocity, s.omegaBody);
}

/// Update: the receiver holds a copy already. id, owner (rank), the copy's state: 116 bytes.
struct UpdateRecord {
  static constexpr BodyRecordKind kKind = BodyRecordKind::Update;
  BodyId id = 0;
  std::int32_t owner = 0;
  CopyState state;
};
template <RecordOf<UpdateRecord> S, class F>
void describe(S& r, F&& f) {
  f(r.id, r.owner, r.state);
}

/// Remove: the body stopped overlapping the receiver. id: 8 bytes.
struct RemoveRecord {
  static constexpr BodyRecordKind kKind = BodyRecordKind::Remove;
  BodyId id = 0;
};
template <RecordOf<RemoveRecord> S, class F>
void describe(S& r, F&& f) {
  f(r.id);
}

/// A body handed to a new owner: id, full body, tag (DistributedExchange::setOwnedBodyTags).
/// The records of a rebuild's sparse exchange (setTopology) and the start of a Transfer.
struct HandoverRecord {
  BodyId id = 0;
  FullBody body;
  std::uint32_t tag = 0;
};
template <RecordOf<HandoverRecord> S, class F>
void describe(S& r, F&& f) {
  f(r.id, r.body, r.tag);
}

/// Transfer: the body's centre crossed into the receiver's domain, which becomes its owner. The
/// handover, then the ranks holding copies (a count, then the ranks).
struct TransferRecord {
  static constexpr BodyRecordKind kKind = BodyRecordKind::Transfer;
  HandoverRecord handover;
  std::vector<std::int32_t> holders;
};
template <RecordOf<TransferRecord> S, class F>
void describe(S& r, F&& f) {
  f(r.handover, r.holders);
}

/// Writes a record of a body message: its kind byte, then the record.
template <class R>
void putBodyRecord(ByteWriter& w, const R& record) {
  w.put(R::kKind);
  w.put(record);
}

/// A warm-start entry (pair ids, ordinal, percussion on the larger id): 44 bytes.
template <RecordOf<detail::PercussionCacheEntry> S, class F>
void describe(S& e, F&& f) {
  f(e.lo, e.hi, e.ordinal, e.percussionOnHi);
}

/// A warm-start entry on its way to the processes holding its home body: the entry, then one
/// byte saying which id is home (45 bytes). The messages of exchangeBodies() and planSplits() and
/// a rebuild's sparse exchange start with a list of them (a count, then the entries).
struct RoutedEntry {
  detail::PercussionCacheEntry entry;
  bool homeIsHi = false;  ///< the pair's smaller id is a static or animated body
  BodyId home() const { return homeIsHi ? entry.hi : entry.lo; }
};
template <RecordOf<RoutedEntry> S, class F>
void describe(S& r, F&& f) {
  f(r.entry, r.homeIsHi);
}

/// First planning message (planSplits): a remote body with contacts on the sender, sent to its
/// owner. id: 8 bytes.
struct ContactReport {
  BodyId id = 0;
};
template <RecordOf<ContactReport> S, class F>
void describe(S& r, F&& f) {
  f(r.id);
}

/// Second planning message: a split body and every process holding a copy of it, in increasing
/// rank order (their number is the body's multiplicity), sent by the owner to the other holders.
/// id, count, ranks.
struct SplitHolders {
  BodyId id = 0;
  std::vector<std::int32_t> holders;
};
template <RecordOf<SplitHolders> S, class F>
void describe(S& r, F&& f) {
  f(r.id, r.holders);
}

/// Averaging (average()): the velocities of a copy of a split body. The averaging sends them as
/// plain doubles, kReals per split body shared with the receiver, in id order (48 bytes), into
/// receive buffers posted in advance: both sides know the count from the split plan.
struct SplitVelocity {
  static constexpr std::size_t kReals = 6;
  Vec3 velocity = Vec3::Zero();  ///< world frame, m/s
  Vec3 omega = Vec3::Zero();     ///< world frame, rad/s
  /// Writes the record to to[0, kReals).
  void store(Real* to) const {
    for (int k = 0; k < 3; ++k) {
      to[k] = velocity[k];
      to[3 + k] = omega[k];
    }
  }
  /// The record stored at from[0, kReals).
  static SplitVelocity load(const Real* from) {
    return {Vec3(from[0], from[1], from[2]), Vec3(from[3], from[4], from[5])};
  }
};

}  // namespace grain::mpi
