// SPDX-License-Identifier: MIT
// Fixture of tools/test_check_layering.py: io may include pugixml and the core, not mpi.
#pragma once

#include <pugixml.hpp>

#include <grain/core/body.hpp>
#include <grain/mpi/records.hpp>
