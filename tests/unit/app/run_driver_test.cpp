// SPDX-License-Identifier: MIT
// app::summaryLine: the closing line of a run, with the count of steps whose PQN fell back to SOR.
#include <gtest/gtest.h>

#include <grain/app/run_driver.hpp>

namespace grain {
namespace {

TEST(RunSummary, CountsThePqnFallbacks) {
  app::LoopResult r;
  r.step = 30;
  EXPECT_EQ(app::summaryLine(r, 0), "finished 30 steps");
  r.fallbackSteps = 7;
  EXPECT_EQ(app::summaryLine(r, 0),
            "finished 30 steps, 7 of them with PQN fallen back to SOR prox");
  r.allConverged = false;
  EXPECT_EQ(app::summaryLine(r, 0),
            "finished 30 steps, 7 of them with PQN fallen back to SOR prox (some steps reached "
            "maxIter without converging)");
}

}  // namespace
}  // namespace grain
