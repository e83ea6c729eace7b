// SPDX-License-Identifier: MIT
// Fixture of tools/test_check_layering.py: a core header within its layer.
#pragma once

#include <vector>

#include <Eigen/Core>

// #include <mpi.h> (a comment: not an include)
