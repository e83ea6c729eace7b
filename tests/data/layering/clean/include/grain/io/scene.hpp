// SPDX-License-Identifier: MIT
// Fixture of tools/test_check_layering.py: an io header within its layer.
#pragma once

#include <grain/core/body.hpp>
