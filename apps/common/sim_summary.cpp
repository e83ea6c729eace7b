// SPDX-License-Identifier: MIT
#include "sim_summary.hpp"

#include <cstdio>
#include <string>

#include <grain/core/solvers/local_method_settings.hpp>

namespace grain::app {

void printSummary(const grain::io::SceneDescription& scene) {
  const auto& st = scene.stepper;
  const auto& s = st.solver;
  std::printf("scene      %s\n", scene.file.string().c_str());
  // Counted from the groups: a process of a distributed run holds only a share of the bodies.
  std::size_t simulated = 0;
  for (const auto& g : scene.groups) {
    if (g.motion == grain::BodyMotion::Simulated) {
      simulated += g.loaded;
    }
  }
  const auto& b = scene.system.bodies;
  std::printf("bodies     %zu simulated, %zu total\n", simulated,
              simulated + b.size() - b.simulatedCount());
  std::printf("time       deltaT %g s, endTime %g s\n", st.deltaT, st.endTime);
  std::printf(
      "solver     %s alphaSOR %g alphaJOR %g R %s UCF %s convergence %s minIter %u maxIter %u "
      "absTol %g relTol %g percussionCache %d driftCorrection %d (alpha %g, slop %g m)\n",
      std::string(grain::methodSceneName(s)).c_str(), s.alphaSorProx, s.alphaJorProx,
      std::string(toString(s.rStrategy)).c_str(), std::string(toString(s.subMethodUcf)).c_str(),
      std::string(toString(s.convergenceMethod)).c_str(), s.minIter, s.maxIter, s.absTol, s.relTol,
      s.usePercussionCache, s.driftCorrectionGap, s.driftCorrectionGapAlpha,
      s.driftCorrectionGapSlop);
  if (s.localMethod) {
    const grain::LocalSolverSettings l = grain::localSolverSettings(s);
    // The interior point method solves the convex relaxation and stops on its relaxed error.
    const bool relaxed =
        grain::problemSolved(l.method) == grain::LocalProblemKind::ConvexRelaxation;
    std::printf(
        "local      %s (%s %s each step): stops on %s error <= %g, maxIter %u, alphaSOR %g "
        "alphaJOR %g, warm start %s\n",
        std::string(toString(l.method)).c_str(), s.matrixFree ? "matrix-free" : "assembled",
        relaxed ? "convex relaxation of the Delassus problem (sliding contacts dilate)"
                : "Delassus problem",
        std::string(toString(relaxed ? grain::LocalErrorMeasure::Relaxed : l.errorMeasure)).c_str(),
        l.tolerance, relaxed ? l.ipmMaxIter : l.maxIter, l.alphaSor, l.alphaJor,
        s.usePercussionCache && !relaxed ? "from the previous step" : "off");
  }
  const char* mode =
      scene.recorder.mode == grain::io::RecorderMode::NoOutput ? "noOutput" : "every X steps";
  std::printf("recorder   %s (X = %llu)\n", mode,
              static_cast<unsigned long long>(scene.recorder.everyXStep));
  for (const auto& w : scene.warnings) {
    std::printf("warning    %s\n", w.c_str());
  }
  if (!scene.ignored.empty()) {
    std::printf("ignored    %zu attribute(s)/element(s) without effect in grain:\n",
                scene.ignored.size());
    for (const auto& i : scene.ignored) {
      std::printf("             %s\n", i.c_str());
    }
  }
}

std::string groupElementOf(const io::SceneDescription& scene, BodyId id) {
  for (const io::BodyGroup& g : scene.groups) {
    const std::uint32_t number = bodyNumber(id);
    if (g.groupId == bodyGroup(id) && number >= g.firstNumber && number - g.firstNumber < g.count) {
      return g.name.empty() ? std::string() : " (RigidBodies \"" + g.name + "\")";
    }
  }
  return {};
}

}  // namespace grain::app
