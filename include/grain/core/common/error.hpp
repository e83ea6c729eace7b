// SPDX-License-Identifier: MIT
#pragma once

#include <stdexcept>
#include <string>

namespace grain {

/// Error raised for invalid input to the core library (a definition with an impossible
/// value, an unknown body id, ...). The message names the offending field.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace grain

/// Always-on check for conditions that depend on user input.
#define GRAIN_REQUIRE(cond, msg) \
  do {                           \
    if (!(cond)) {               \
      throw ::grain::Error(msg); \
    }                            \
  } while (false)
