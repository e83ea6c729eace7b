// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include <grain/core/bodies/body_id.hpp>
#include <grain/core/bodies/body_storage.hpp>
#include <grain/core/contact/compatible_forces.hpp>
#include <grain/core/contact/contact_storage.hpp>
#include <grain/core/math/types.hpp>

namespace grain::io {

/// One contact of an output step (docs/contact-output.md). Forces are percussions divided by
/// the time step (N), vectors in the inertial frame.
struct ContactForceRow {
  BodyId bodyA = 0;
  BodyId bodyB = 0;
  Vec3 point = Vec3::Zero();   ///< contact point on B at the step's midpoint q^M (m)
  Vec3 normal = Vec3::Zero();  ///< unit normal from A to B
  Real solverNormal = 0.0;     ///< the solver's normal force on B (N)
  /// Compatible normal force on B (N); NaN when the block has no compatible forces.
  Real compatibleNormal = 0.0;
  Vec3 tangential = Vec3::Zero();  ///< the solver's tangential force on B (N)
};

/// The contacts of one output step.
struct ContactForceBlock {
  std::uint64_t step = 0;                ///< steps done (the forces act during step number `step`)
  double time = 0.0;                     ///< time at the end of that step (s)
  bool compatible = false;               ///< compatibleNormal holds compatible forces
  CompatibleForceStats compatibleStats;  ///< Newton statistics (if compatible)
  std::vector<ContactForceRow> rows;
};

/// Fills `block.rows` from the contacts and percussions of the last step. `bodies` are at the
/// end of the step (q^E, velocities u^E); the contact point is r_B^E - dt/2 v_B^E + r_B = r_B^M
/// + r_B, the point where the contact was detected. `compatiblePercussions` (N s, per contact)
/// may be empty (no compatible forces).
void fillContactForceRows(const BodyStorage& bodies, const ContactStorage& contacts,
                          std::span<const Vec3> percussions,
                          std::span<const Real> compatiblePercussions, Real dt,
                          ContactForceBlock& block);

/// Writes ContactForces.dat: text, "#" header lines, then per output step a block line
///   step STEP time T contacts N compatible 0|1 iterations K converged 0|1 residual R
/// followed by N rows of 15 tab-separated columns
///   groupA numberA groupB numberB px py pz nx ny nz solverN compatibleN tx ty tz.
/// Numbers are the shortest text that reads back to the same double; a missing compatible force
/// is "nan". The file is flushed after every block.
class ContactForceFileWriter {
 public:
  ContactForceFileWriter() = default;
  ContactForceFileWriter(const ContactForceFileWriter&) = delete;
  ContactForceFileWriter& operator=(const ContactForceFileWriter&) = delete;
  ~ContactForceFileWriter();

  /// Creates or truncates `file` and writes the header. Throws grain::Error.
  void open(const std::filesystem::path& file);
  /// Continues an existing file (restarts): keeps the header and the complete blocks of steps
  /// up to `lastStep`, drops the rest (later blocks, a partial block) and appends after them.
  /// A missing file is created with the header. Throws grain::Error.
  void openAppend(const std::filesystem::path& file, std::uint64_t lastStep);
  void write(const ContactForceBlock& block);
  void close();
  bool isOpen() const { return out_.is_open(); }

  static std::string headerText();

 private:
  std::filesystem::path path_;
  std::ofstream out_;
  std::string buffer_;
};

/// What grain-sim does at an output step: the block of the step's contacts, with compatible
/// normal forces if asked for (stiffness from ContactParameter::relativeStiffness), written to
/// the file. Keeps its buffers between steps.
class ContactForceRecorder {
 public:
  ContactForceRecorder(bool compatibleForces, const CompatibleForceSettings& settings)
      : compatibleForces_(compatibleForces), settings_(settings) {}

  /// Computes and writes the block of step `step` ending at `time` (s). `bodies` at the end of
  /// the step, `contacts` and `percussions` (N s) of the step, `dt` its length (s).
  void record(ContactForceFileWriter& file, const BodyStorage& bodies,
              const ContactStorage& contacts, std::span<const Vec3> percussions,
              const ContactParameterMap& parameters, Real dt, std::uint64_t step, double time);

  /// Wall time spent on compatible forces so far (s), and the number of blocks written.
  double compatibleSeconds() const { return compatibleSeconds_; }
  std::uint64_t blocks() const { return blocks_; }
  /// Blocks whose compatible forces did not converge.
  std::uint64_t notConverged() const { return notConverged_; }

 private:
  bool compatibleForces_;
  CompatibleForceSettings settings_;
  CompatibleForceSolver solver_;
  std::vector<Real> stiffness_, solverNormal_, compatibleNormal_;
  ContactForceBlock block_;
  double compatibleSeconds_ = 0.0;
  std::uint64_t blocks_ = 0;
  std::uint64_t notConverged_ = 0;
};

/// Reads a ContactForces.dat (complete blocks only; a partial last block is ignored). Throws
/// grain::Error on a malformed file.
std::vector<ContactForceBlock> readContactForceFile(const std::filesystem::path& file);

}  // namespace grain::io
