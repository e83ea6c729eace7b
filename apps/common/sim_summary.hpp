// SPDX-License-Identifier: MIT
#pragma once

#include <string>

#include <grain/io/scene.hpp>

namespace grain::app {

/// Prints what a run will do: bodies, time step, solver, recorder, warnings and ignored input.
void printSummary(const io::SceneDescription& scene);

/// " (RigidBodies "NAME")" for the group element that made body `id`, "" if it has no name.
std::string groupElementOf(const io::SceneDescription& scene, BodyId id);

}  // namespace grain::app
