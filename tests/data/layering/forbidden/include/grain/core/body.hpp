// SPDX-License-Identifier: MIT
// Fixture of tools/test_check_layering.py: a core header including what the core must not.
#pragma once

#include <vector>
#include <zoltan.h>

#include <Eigen/Core>
#include <assimp/scene.h>
#include <hdf5.h>
#include <mpi.h>
#include <pugixml.hpp>

#include <grain/core/shape.hpp>
#include <grain/io/scene.hpp>

// #include <mpi.h> (a comment: not an include)
/*
#include <grain/mpi/communicator.hpp> (a block comment: not an include)
*/
