// SPDX-License-Identifier: MIT
// Fixture of tools/test_check_layering.py: quoted includes, resolved as the compiler would.
#include "../io/reader.hpp"
#include "detail.hpp"
#include "grain/app/progress.hpp"
