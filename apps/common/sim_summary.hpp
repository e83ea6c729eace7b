// SPDX-License-Identifier: MIT
#pragma once

#include <grain/io/scene.hpp>

namespace grain::app {

/// Prints what a run will do: bodies, time step, solver, recorder, warnings and ignored input.
void printSummary(const io::SceneDescription& scene);

}  // namespace grain::app
