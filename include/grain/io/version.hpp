// SPDX-License-Identifier: MIT
#pragma once

#include <string_view>

namespace grain {

/// grain's version, "MAJOR.MINOR.PATCH": the VERSION of project() in the top CMakeLists.txt,
/// the one place where it is set.
std::string_view versionString();

}  // namespace grain
