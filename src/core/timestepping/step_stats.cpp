// SPDX-License-Identifier: MIT
#include <grain/core/timestepping/step_stats.hpp>

namespace grain {

std::string_view toString(Stage s) {
  switch (s) {
    case Stage::FirstHalfStep:
      return "FirstHalfStep";
    case Stage::Exchange:
      return "Exchange";
    case Stage::CollisionDetection:
      return "CollisionDetection";
    case Stage::ContactGraph:
      return "ContactGraph";
    case Stage::Forces:
      return "Forces";
    case Stage::ContactSolve:
      return "ContactSolve";
    case Stage::SecondHalfStep:
      return "SecondHalfStep";
    case Stage::Count:
      break;
  }
  return "?";
}

}  // namespace grain
