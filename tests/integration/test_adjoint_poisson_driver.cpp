// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/integration/test_adjoint_poisson_driver.cpp — stardiff-poisson end to end: its
// --probe adjoints equal central differences of its own --perturb runs (h = 1, exact
// for the quadratic E: rel. err <= 1e-8), and StarPU and sequential executors print
// identical numbers.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "support/driver_run.hpp"

namespace {
std::string run(const std::string& args, int* rc = nullptr) {
  return stardiff::testing::run_command(stardiff::testing::driver_path("apps/poisson/stardiff-poisson") + " " + args, rc);
}
double field(const std::string& json, const std::string& key, int n = 0) {
  return stardiff::testing::json_field(json, key, n);
}
}  // namespace

TEST(PoissonDriver, ProbesMatchCentralDifferences) {
  const std::string grid = "--nx 24 --ny 18 --iters 12 --tiles 3";
  int rc = -1;
  std::string adj = run(grid + " --adjoint --probe 2,3 --probe 17,11 --json", &rc);
  ASSERT_EQ(rc, 0) << adj;
  const int pts[2][2] = {{2, 3}, {17, 11}};
  for (int k = 0; k < 2; ++k) {
    for (const char* what : {"f", "u"}) {
      auto pert = [&](double h) {
        std::string a = grid + " --json --perturb " + what + "," + std::to_string(pts[k][0]) + "," +
                        std::to_string(pts[k][1]) + "," + std::to_string(h);
        return field(run(a), "total_error");
      };
      double fd = (pert(1.0) - pert(-1.0)) / 2.0;
      double ad = field(adj, std::string("dE_d") + what, k);
      EXPECT_NEAR(ad, fd, 1e-8 * std::fabs(fd)) << what << " at probe " << k << "\n" << adj;
      EXPECT_NE(fd, 0.0);
    }
  }
  EXPECT_GT(field(adj, "adjoint_factor"), 0.0);
  EXPECT_GT(field(adj, "tasks"), 0.0);
}

TEST(PoissonDriver, ExecutorsAgreeBitwise) {
  const std::string a = "--nx 40 --ny 30 --iters 8 --tiles 5 --adjoint --probe 5,6 --probe 39,0 --json";
  std::string s = run(a + " --executor starpu"), q = run(a + " --executor sequential");
  for (const char* key : {"total_error", "dE_df", "dE_du"})
    for (int n = 0; n < (std::string(key) == "total_error" ? 1 : 2); ++n) {
      double x = field(s, key, n), y = field(q, key, n);
      EXPECT_TRUE(std::isfinite(x)) << s;
      EXPECT_EQ(x, y) << key << " #" << n;
    }
}
