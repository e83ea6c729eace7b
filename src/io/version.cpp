// SPDX-License-Identifier: MIT
#include <grain/io/version.hpp>

#ifndef GRAIN_VERSION
#error "GRAIN_VERSION must be defined (from project(... VERSION) of the top CMakeLists.txt)"
#endif

namespace grain {

std::string_view versionString() {
  return GRAIN_VERSION;
}

}  // namespace grain
