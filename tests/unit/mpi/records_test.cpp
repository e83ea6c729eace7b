// SPDX-License-Identifier: MIT
// The records of the distributed runs' messages (include/grain/mpi/records.hpp): every record
// type is written with distinct values in every field, read back and compared field by field; the
// reader must end exactly at the end of the bytes, whose number must be the record's documented
// wire size (docs/mpi.md counts them) and the sum of its fields' sizes. No MPI needed.
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <grain/core/common/error.hpp>
#include <grain/mpi/messages.hpp>
#include <grain/mpi/records.hpp>

namespace grain::mpi {
namespace {

// ---- field by field comparison, written independently of the descriptions ----

bool same(const Vec3& a, const Vec3& b) {
  return a == b;
}
bool same(const Quat& a, const Quat& b) {
  return a.coeffs() == b.coeffs();
}
bool same(const BodyState& a, const BodyState& b) {
  return same(a.position, b.position) && same(a.orientation, b.orientation) &&
         same(a.velocity, b.velocity) && same(a.omegaBody, b.omegaBody) &&
         same(a.orientationStart, b.orientationStart);
}
bool same(const CopyState& a, const CopyState& b) {
  return same(a.position, b.position) && same(a.orientation, b.orientation) &&
         same(a.velocity, b.velocity) && same(a.omegaBody, b.omegaBody);
}
bool same(const Shape& a, const Shape& b) {
  if (a.index() != b.index()) {
    return false;
  }
  if (const auto* s = std::get_if<Sphere>(&a)) {
    return s->radius == std::get<Sphere>(b).radius;
  }
  if (const auto* x = std::get_if<Box>(&a)) {
    const Box& y = std::get<Box>(b);
    return same(x->halfExtent, y.halfExtent) && same(x->center, y.center);
  }
  if (const auto* x = std::get_if<Capsule>(&a)) {
    const Capsule& y = std::get<Capsule>(b);
    return same(x->axis, y.axis) && x->radius == y.radius && x->length == y.length;
  }
  return false;  // the other shapes never travel
}
bool same(const FullBody& a, const FullBody& b) {
  return same(a.shape, b.shape) && a.material == b.material && a.mass == b.mass &&
         same(a.inertiaBody, b.inertiaBody) && same(a.state, b.state);
}
bool same(const NotifyRecord& a, const NotifyRecord& b) {
  return a.id == b.id && a.owner == b.owner && same(a.body, b.body);
}
bool same(const UpdateRecord& a, const UpdateRecord& b) {
  return a.id == b.id && a.owner == b.owner && same(a.state, b.state);
}
bool same(const RemoveRecord& a, const RemoveRecord& b) {
  return a.id == b.id;
}
bool same(const HandoverRecord& a, const HandoverRecord& b) {
  return a.id == b.id && same(a.body, b.body) && a.tag == b.tag;
}
bool same(const TransferRecord& a, const TransferRecord& b) {
  return same(a.handover, b.handover) && a.holders == b.holders;
}
bool same(const RoutedEntry& a, const RoutedEntry& b) {
  return a.entry.lo == b.entry.lo && a.entry.hi == b.entry.hi &&
         a.entry.ordinal == b.entry.ordinal &&
         same(a.entry.percussionOnHi, b.entry.percussionOnHi) && a.homeIsHi == b.homeIsHi;
}
bool same(const std::vector<RoutedEntry>& a, const std::vector<RoutedEntry>& b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (std::size_t k = 0; k < a.size(); ++k) {
    if (!same(a[k], b[k])) {
      return false;
    }
  }
  return true;
}
bool same(const ContactReport& a, const ContactReport& b) {
  return a.id == b.id;
}
bool same(const SplitHolders& a, const SplitHolders& b) {
  return a.id == b.id && a.holders == b.holders;
}
bool same(const SplitVelocity& a, const SplitVelocity& b) {
  return same(a.velocity, b.velocity) && same(a.omega, b.omega);
}

// ---- the round trip ----

/// Writes `record`, reads it back as the same type and compares every field. Fails if the bytes
/// are not `wireBytes`, not the sum of the sizes of the fields its description lists (each
/// counted on its own), if the reader does not end exactly at the end, or if a field differs.
template <class R>
testing::AssertionResult roundTrips(const R& record, std::size_t wireBytes) {
  ByteWriter w;
  w.put(record);
  if (w.bytes().size() != wireBytes) {
    return testing::AssertionFailure()
           << "written in " << w.bytes().size() << " bytes, expected " << wireBytes;
  }
  if constexpr (Described<const R>) {  // a list's size is checked through its items
    std::size_t fieldBytes = 0;
    std::size_t fields = 0;
    describe(record,
             [&](const auto&... field) { ((fieldBytes += wireSize(field), ++fields), ...); });
    if (fieldBytes != wireBytes) {
      return testing::AssertionFailure()
             << "the " << fields << " described fields take " << fieldBytes << " bytes";
    }
  }
  ByteReader r(w.bytes());
  const auto back = r.get<R>();
  if (!r.done()) {
    return testing::AssertionFailure() << r.remaining() << " bytes left after reading";
  }
  if (!same(record, back)) {
    return testing::AssertionFailure() << "a field read back differs from the one written";
  }
  return testing::AssertionSuccess();
}

// Distinct values, none of them a default (0, identity, unit axes).
BodyState someState(Real base) {
  BodyState s;
  s.position = Vec3(base + 0.125, -base - 2.5, 3.75);
  s.orientation = Quat(0.5, -0.25 * base, 0.75, -0.125);  // w, x, y, z (raw bits, not unit)
  s.velocity = Vec3(-1.5, base * 0.5, 4.25);
  s.omegaBody = Vec3(7.0, -8.5, base + 9.25);
  s.orientationStart = Quat(-0.375, 0.625, -0.875, base);
  return s;
}
CopyState someCopyState(Real base) {
  const BodyState b = someState(base);
  return {b.position, b.orientation, b.velocity, b.omegaBody};
}

FullBody someBody(Shape shape, Real base) {
  FullBody b;
  b.shape = std::move(shape);
  b.material = 7;
  b.mass = 0.0312 * base;
  b.inertiaBody = Vec3(1e-3, 2e-3 * base, 3.5e-3);
  b.state = someState(base + 1.0);
  return b;
}

Box someBox() {
  Box b;
  b.halfExtent = Vec3(0.25, 0.5, 0.75);
  b.center = Vec3(-0.125, 0.0625, 0.03125);
  return b;
}

Capsule someCapsule() {
  Capsule c;
  c.axis = Vec3(0.6, 0.0, -0.8);
  c.radius = 0.04;
  c.length = 0.3;
  return c;
}

RoutedEntry someEntry(BodyId lo, bool homeIsHi) {
  RoutedEntry e;
  e.entry.lo = lo;
  e.entry.hi = lo + 0x100000003ULL;
  e.entry.ordinal = 5;
  e.entry.percussionOnHi = Vec3(1.5e-4, -2.25e-5, 3.125e-3);
  e.homeIsHi = homeIsHi;
  return e;
}

constexpr std::size_t kStateBytes = 3 * 24 + 2 * 32;         // r, v, Ω; p, p^S
constexpr std::size_t kBodyTail = 4 + 8 + 24 + kStateBytes;  // material, mass, inertia, state
constexpr std::size_t kSphereBody = 1 + 8 + kBodyTail;       // 181
constexpr std::size_t kBoxBody = 1 + 48 + kBodyTail;         // 221
constexpr std::size_t kCapsuleBody = 1 + 40 + kBodyTail;     // 213

TEST(Records, BodyStateRoundTrips) {
  EXPECT_EQ(kStateBytes, 136u);
  EXPECT_TRUE(roundTrips(someState(2.0), kStateBytes));
}

TEST(Records, FullBodyRoundTripsWithEachShapeThatTravels) {
  EXPECT_EQ(kSphereBody, 181u);
  EXPECT_TRUE(roundTrips(someBody(Sphere{0.0425}, 1.0), kSphereBody));
  EXPECT_TRUE(roundTrips(someBody(someBox(), 2.0), kBoxBody));
  EXPECT_TRUE(roundTrips(someBody(someCapsule(), 3.0), kCapsuleBody));
}

TEST(Records, NotifyRoundTrips) {
  EXPECT_TRUE(
      roundTrips(NotifyRecord{0x123456789ULL, 3, someBody(someBox(), 4.0)}, 8 + 4 + kBoxBody));
}

TEST(Records, UpdateRoundTrips) {
  // A copy's state has no p^S (only the owner's half steps read it): 104 bytes, not 136.
  EXPECT_TRUE(roundTrips(someCopyState(5.0), 104));
  EXPECT_TRUE(roundTrips(UpdateRecord{0xabcdef01ULL, 11, someCopyState(5.0)}, 116));
}

TEST(Records, RemoveRoundTrips) {
  EXPECT_TRUE(roundTrips(RemoveRecord{0xfedcba9876ULL}, 8));
}

TEST(Records, HandoverRoundTrips) {
  EXPECT_TRUE(roundTrips(HandoverRecord{42, someBody(someCapsule(), 6.0), 0xdeadbeefu},
                         8 + kCapsuleBody + 4));
}

TEST(Records, TransferRoundTrips) {
  const HandoverRecord handover{77, someBody(Sphere{0.01}, 7.0), 12345};
  EXPECT_TRUE(roundTrips(TransferRecord{handover, {0, 2, 5}}, 8 + kSphereBody + 4 + 4 + 3 * 4));
  // No holders: the count alone.
  EXPECT_TRUE(roundTrips(TransferRecord{handover, {}}, 8 + kSphereBody + 4 + 4));
}

TEST(Records, RoutedEntriesRoundTrip) {
  EXPECT_TRUE(roundTrips(someEntry(17, true), 45));
  EXPECT_TRUE(roundTrips(someEntry(18, false), 45));
  const std::vector<RoutedEntry> list{someEntry(1, false), someEntry(2, true), someEntry(3, true)};
  EXPECT_TRUE(roundTrips(list, 4 + 3 * 45));
  EXPECT_TRUE(roundTrips(std::vector<RoutedEntry>{}, 4));
}

TEST(Records, ContactReportRoundTrips) {
  EXPECT_TRUE(roundTrips(ContactReport{0x0102030405060708ULL}, 8));
}

TEST(Records, SplitHoldersRoundTrips) {
  EXPECT_TRUE(roundTrips(SplitHolders{99, {1, 4, 6, 9}}, 8 + 4 + 4 * 4));
}

TEST(Records, SplitVelocityRoundTrips) {
  const SplitVelocity record{Vec3(0.5, -1.25, 2.0), Vec3(-3.5, 4.75, -6.0)};
  std::array<Real, SplitVelocity::kReals + 1> buffer{};
  buffer.back() = 7.0;
  record.store(buffer.data());
  EXPECT_TRUE(same(SplitVelocity::load(buffer.data()), record));
  EXPECT_EQ(buffer.back(), 7.0);  // stores exactly kReals values
  EXPECT_EQ(SplitVelocity::kReals * sizeof(Real), 48u);
}

TEST(Records, ABodyMessageIsKindBytesAndRecords) {
  ByteWriter w;
  w.put(std::vector<RoutedEntry>{someEntry(3, false)});
  putBodyRecord(w, NotifyRecord{1, 2, someBody(Sphere{0.5}, 1.0)});
  putBodyRecord(w, UpdateRecord{3, 4, someCopyState(2.0)});
  putBodyRecord(w, RemoveRecord{5});
  TransferRecord transfer;
  transfer.handover = {6, someBody(someBox(), 3.0), 7};
  transfer.holders = {8};
  putBodyRecord(w, transfer);
  EXPECT_EQ(w.bytes().size(), (4 + 45) + (1 + 8 + 4 + kSphereBody) + (1 + 116) + (1 + 8) +
                                  (1 + 8 + kBoxBody + 4 + 4 + 4));
  ByteReader r(w.bytes());
  EXPECT_EQ(r.get<std::vector<RoutedEntry>>().size(), 1u);
  ASSERT_EQ(r.get<BodyRecordKind>(), BodyRecordKind::Notify);
  EXPECT_EQ(r.get<NotifyRecord>().id, 1u);
  ASSERT_EQ(r.get<BodyRecordKind>(), BodyRecordKind::Update);
  EXPECT_EQ(r.get<UpdateRecord>().owner, 4);
  ASSERT_EQ(r.get<BodyRecordKind>(), BodyRecordKind::Remove);
  EXPECT_EQ(r.get<RemoveRecord>().id, 5u);
  ASSERT_EQ(r.get<BodyRecordKind>(), BodyRecordKind::Transfer);
  EXPECT_EQ(r.get<TransferRecord>().holders, std::vector<std::int32_t>{8});
  EXPECT_TRUE(r.done());
}

TEST(Records, ShapesThatDoNotTravelAreRefused) {
  EXPECT_TRUE(shapeTravels(Sphere{1.0}));
  EXPECT_TRUE(shapeTravels(someBox()));
  EXPECT_TRUE(shapeTravels(someCapsule()));
  EXPECT_FALSE(shapeTravels(Halfspace{}));
  EXPECT_FALSE(shapeTravels(Mesh{std::make_shared<TriangleMesh>(), false}));
  ByteWriter w;
  EXPECT_THROW(w.put(someBody(Halfspace{}, 1.0)), Error);
  // A shape type byte of a static shape or past the last type.
  for (const std::uint8_t type : {std::uint8_t{3}, std::uint8_t{4}, std::uint8_t{200}}) {
    ByteWriter bad;
    bad.put(type);
    bad.put(Vec3(0.0, 0.0, 1.0));
    ByteReader r(bad.bytes());
    EXPECT_THROW(r.get<Shape>(), Error) << int{type};
  }
}

// ---- mismatches are caught ----

/// A state whose description leaves out a field (as a hand-written reader that forgot one would).
struct IncompleteState {
  Vec3 position = Vec3::Zero();
  Vec3 velocity = Vec3::Zero();
};
template <RecordOf<IncompleteState> S, class F>
void describe(S& s, F&& f) {
  f(s.position);
}
bool same(const IncompleteState& a, const IncompleteState& b) {
  return same(a.position, b.position) && same(a.velocity, b.velocity);
}

TEST(Records, MismatchesFailTheRoundTrip) {
  // A field missing from a description: the bytes are short and the field comes back default.
  const IncompleteState incomplete{Vec3(1.0, 2.0, 3.0), Vec3(4.0, 5.0, 6.0)};
  EXPECT_FALSE(roundTrips(incomplete, 48));
  // The bytes agree with the description but the field is lost: only the comparison sees it.
  const testing::AssertionResult lost = roundTrips(incomplete, 24);
  EXPECT_FALSE(lost);
  EXPECT_NE(std::string(lost.message()).find("differs"), std::string::npos) << lost.message();
  // A record whose size changed (say a field added) no longer matches its documented size.
  EXPECT_FALSE(roundTrips(UpdateRecord{1, 2, someCopyState(1.0)}, 108));

  // Reading a record as another kind ends mid-field or leaves bytes over; both are seen.
  ByteWriter w;
  w.put(UpdateRecord{1, 2, someCopyState(1.0)});
  ByteReader asNotify(w.bytes());
  EXPECT_THROW(asNotify.get<NotifyRecord>(), Error);  // shorter than any Notify record
  ByteReader asRemove(w.bytes());
  asRemove.get<RemoveRecord>();
  EXPECT_FALSE(asRemove.done());
  // A truncated message.
  w.bytes().pop_back();
  ByteReader truncated(w.bytes());
  try {
    truncated.get<UpdateRecord>();
    ADD_FAILURE() << "a truncated record was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("middle of a field"), std::string::npos) << e.what();
  }
  // A list count beyond the message is refused before anything is allocated.
  ByteWriter count;
  count.put(std::uint32_t{0xffffffffu});
  ByteReader hugeList(count.bytes());
  EXPECT_THROW(hugeList.get<std::vector<RoutedEntry>>(), Error);
}

TEST(Records, AWriterKeepsItsStorageAndLendsItsBytes) {
  // A long message, then a short one after clear(): only the short one's bytes are the message.
  ByteWriter w;
  for (std::uint32_t k = 0; k < 100; ++k) {
    w.put(k);
  }
  EXPECT_EQ(w.message().size(), 400u);
  w.clear();
  w.put(std::uint32_t{7});
  w.put(Vec3(1.0, 2.0, 3.0));
  ASSERT_EQ(w.message().size(), 28u);
  EXPECT_EQ(w.bytes().size(), 28u);
  ByteReader r(w.message().data(), w.message().size());
  EXPECT_EQ(r.get<std::uint32_t>(), 7u);
  EXPECT_EQ(r.get<Vec3>(), Vec3(1.0, 2.0, 3.0));
  EXPECT_TRUE(r.done());
  // The vector taken out (moved from): the writer goes on with what it then holds.
  const std::vector<char> taken = std::move(w.bytes());
  EXPECT_EQ(taken.size(), 28u);
  w.put(std::uint8_t{5});
  ASSERT_EQ(w.message().size(), 1u);
  EXPECT_EQ(w.message()[0], 5);
  // Bytes appended to the lent vector belong to the message.
  w.bytes().push_back(9);
  w.put(std::uint8_t{6});
  const std::vector<char> expected{5, 9, 6};
  EXPECT_EQ(w.bytes(), expected);
}

}  // namespace
}  // namespace grain::mpi
