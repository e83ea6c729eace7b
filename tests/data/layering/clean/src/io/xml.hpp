// SPDX-License-Identifier: MIT
// Fixture of tools/test_check_layering.py: a private io header, found under src/.
#pragma once
