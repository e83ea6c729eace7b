// SPDX-License-Identifier: MIT
// Fixture of tools/test_check_layering.py: a private core header (allowed next to its source).
#pragma once
