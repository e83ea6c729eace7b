// SPDX-License-Identifier: MIT
#include <grain/io/version.hpp>

namespace grain {

std::string_view versionString() {
  return "0.1.0";
}

}  // namespace grain
