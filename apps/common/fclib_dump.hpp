// SPDX-License-Identifier: MIT
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include <grain/core/timestepping/moreau_stepper.hpp>
#include <grain/io/scene.hpp>

#include "sim_options.hpp"

namespace grain::app {

/// --dump-fclib EVERY of both simulators: the contact problem of every EVERY-th step with contacts
/// as an FCLIB local problem with the solver's solution, in RECORD_DIR/fclib/
/// (fclib::StepProblemDump). Only builds with HDF5 (GRAIN_SIM_WITH_FCLIB) accept the option
/// (parseSimOptions); a distributed run only on one process (RunRecord::checkWritable).
class FclibDump {
 public:
  /// Does nothing if opt.dumpFclibEvery is 0; else creates RECORD/fclib and installs the
  /// stepper's contact-problem observer, which keeps the problem of each dumped step. `scene`
  /// and `stepper` must outlive this object.
  FclibDump(const SimOptions& opt, const std::filesystem::path& record,
            const io::SceneDescription& scene, MoreauStepper& stepper);
  ~FclibDump();
  FclibDump(const FclibDump&) = delete;
  FclibDump& operator=(const FclibDump&) = delete;

  /// After every step: writes the problem kept for it (if any) with the step's percussions.
  void finish(const MoreauStepper& stepper);
  /// "fclib      contact problems of every N-th step to DIR\n", or "" without the option.
  std::string note() const;

 private:
  struct Dump;
  std::unique_ptr<Dump> dump_;
};

}  // namespace grain::app
