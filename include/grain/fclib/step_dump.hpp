// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include <grain/core/bodies/body_storage.hpp>
#include <grain/core/solvers/contact_solver.hpp>
#include <grain/core/solvers/local_problem.hpp>
#include <grain/core/solvers/solver_settings.hpp>

namespace grain::fclib {

/// Writes the contact problems of a simulation as FCLIB local problems (`grain-sim
/// --dump-fclib EVERY`), so that the problems of real granular runs can be given to other
/// solvers.
///
/// Usage per step: capture() from MoreauStepper's contact-problem observer (before the solve),
/// then finish() with the step's percussions once the step is done. A step is dumped when its
/// number is a multiple of `every` and it has contacts. The file
///   DIR/<name>-i<step, 7 digits>-<contacts>.hdf5
/// holds /fclib_local (W, q, mu of assembleLocalProblem(), spacedim 3, info/title and
/// info/description naming the scene, step, time and time step) and /solution/{r, u} with
/// r = the percussions grain's solver found and u = W r + q. The file is written under a
/// temporary name and renamed when complete, so an interrupted run leaves only whole files.
class StepProblemDump {
 public:
  /// `directory` is created if missing; `every` >= 1; `name` prefixes the file names and the
  /// title (e.g. the scene file's stem). Throws grain::Error.
  StepProblemDump(std::filesystem::path directory, std::uint64_t every, std::string name);

  /// True if step `step` is dumped.
  bool wanted(std::uint64_t step) const { return step % every_ == 0; }

  /// Assembles and keeps the local problem of step `step` (at time `time` s, i.e. the step
  /// ends at time + dt) if wanted(step).
  void capture(const BodyStorage& bodies, const ContactProblem& problem,
               const InclusionSolverSettings& settings, std::uint64_t step, Real time);

  /// Writes the captured problem (if any) with `percussions` (per contact, N s, contact frame)
  /// as its solution. Returns the file written, or an empty path.
  std::filesystem::path finish(const std::vector<Vec3>& percussions);

  /// Number of files written so far.
  std::uint64_t filesWritten() const { return written_; }

 private:
  std::filesystem::path directory_;
  std::uint64_t every_;
  std::string name_;
  bool pending_ = false;
  std::uint64_t step_ = 0;
  LocalProblem problem_;
  std::uint64_t written_ = 0;
};

}  // namespace grain::fclib
