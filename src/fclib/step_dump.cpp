// SPDX-License-Identifier: MIT
#include <cstdio>
#include <system_error>

#include <grain/core/common/error.hpp>
#include <grain/core/solvers/local_problem_assembly.hpp>
#include <grain/fclib/fclib_io.hpp>
#include <grain/fclib/step_dump.hpp>

namespace grain::fclib {

StepProblemDump::StepProblemDump(std::filesystem::path directory, std::uint64_t every,
                                 std::string name)
    : directory_(std::move(directory)), every_(every), name_(std::move(name)) {
  if (every_ == 0) {
    throw Error("--dump-fclib: EVERY must be >= 1");
  }
  std::error_code ec;
  std::filesystem::create_directories(directory_, ec);
  if (ec) {
    throw Error("cannot create " + directory_.string() + ": " + ec.message());
  }
}

void StepProblemDump::capture(const BodyStorage& bodies, const ContactProblem& problem,
                              const InclusionSolverSettings& settings, std::uint64_t step,
                              Real time) {
  pending_ = false;
  if (!wanted(step)) {
    return;
  }
  problem_ = assembleLocalProblem(bodies, problem, settings);
  char text[256];
  std::snprintf(text, sizeof text, "%s step %llu", name_.c_str(),
                static_cast<unsigned long long>(step));
  problem_.title = text;
  std::snprintf(text, sizeof text,
                "grain Moreau step %llu from t = %.17g s, dt = %.17g s, %zu contacts; "
                "solution: grain's percussions (N s) and u = W r + q",
                static_cast<unsigned long long>(step), time, problem.dt, problem_.contactCount());
  problem_.description = text;
  step_ = step;
  pending_ = true;
}

std::filesystem::path StepProblemDump::finish(const std::vector<Vec3>& percussions) {
  if (!pending_) {
    return {};
  }
  pending_ = false;
  const std::size_t n = problem_.contactCount();
  if (percussions.size() != n) {
    throw Error("--dump-fclib: " + std::to_string(percussions.size()) + " percussions for " +
                std::to_string(n) + " contacts");
  }
  VecX r(static_cast<Eigen::Index>(3 * n));
  for (std::size_t i = 0; i < n; ++i) {
    r.segment<3>(static_cast<Eigen::Index>(3 * i)) = percussions[i];
  }
  const VecX u = localVelocity(problem_, r);
  char file[64];
  std::snprintf(file, sizeof file, "-i%07llu-%zu.hdf5", static_cast<unsigned long long>(step_), n);
  const std::filesystem::path path = directory_ / (name_ + file);
  std::filesystem::path tmp = path;
  tmp += ".part";
  writeSolution(tmp.string(), problem_, r, u);
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    throw Error("cannot rename " + tmp.string() + " to " + path.string() + ": " + ec.message());
  }
  ++written_;
  return path;
}

}  // namespace grain::fclib
