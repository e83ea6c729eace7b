// SPDX-License-Identifier: MIT
#pragma once

#include <string_view>

namespace grain {

/// grain's version, "MAJOR.MINOR.PATCH".
std::string_view versionString();

}  // namespace grain
