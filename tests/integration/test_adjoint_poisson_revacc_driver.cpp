// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/integration/test_adjoint_poisson_revacc_driver.cpp — stardiff-poisson --mode rev-acc
// end to end: on a converged problem its probes equal the full tape's (--mode full, a
// separate run) within 1e-10 relative (dE/df; dE/du at interior probes is ~0 in both, so
// compared against the largest dE/df) and its own gradient_rel_diff is <= 1e-10; tape_bytes
// is the same for two iteration counts; StarPU and sequential print identical numbers;
// dE/df at a probe equals the central difference of --perturb runs (E quadratic in f: exact
// up to round-off and convergence).
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
const std::string kGrid = "--nx 12 --ny 10 --tiles 3 --probe 2,3 --probe 11,9 --probe 6,0 --json";
const std::string kSeq = " --executor sequential";
}  // namespace

TEST(PoissonRevAccDriver, AgreesWithFullTapeWhenConverged) {
  int rc = -1;
  const std::string rev = run(kGrid + kSeq + " --iters 1200 --mode rev-acc", &rc);
  ASSERT_EQ(rc, 0) << rev;
  const std::string full = run(kGrid + kSeq + " --iters 1200 --mode full", &rc);
  ASSERT_EQ(rc, 0) << full;
  EXPECT_LE(field(rev, "gradient_rel_diff"), 1e-10) << rev;
  EXPECT_EQ(field(rev, "total_error"), field(full, "total_error"));
  EXPECT_GT(field(rev, "adjoint_iterations"), 10.0);
  EXPECT_LE(field(rev, "adjoint_change"), 1e-12);
  EXPECT_EQ(field(rev, "full_tape_bytes"), field(full, "tape_bytes"));
  double scale = 0;
  for (int k = 0; k < 3; ++k) scale = std::max(scale, std::fabs(field(full, "dE_df", k)));
  ASSERT_GT(scale, 0);
  for (int k = 0; k < 3; ++k) {
    EXPECT_NEAR(field(rev, "dE_df", k), field(full, "dE_df", k), 1e-10 * std::fabs(field(full, "dE_df", k))) << k;
    // dE/du0 inside: the initial guess no longer matters (both ~0 against dE/df).
    EXPECT_LE(std::fabs(field(rev, "dE_du", k)), 1e-6 * scale) << k;
    EXPECT_LE(std::fabs(field(full, "dE_du", k)), 1e-6 * scale) << k;
  }
  // Unconverged (20 iterations): the fixed-point gradient is another quantity.
  const std::string early = run(kGrid + kSeq + " --iters 20 --mode rev-acc", &rc);
  EXPECT_GT(field(early, "gradient_rel_diff"), 1e-3) << early;
}

TEST(PoissonRevAccDriver, MemoryIndependentOfIterationCount) {
  const std::string a = run(kGrid + kSeq + " --iters 300 --mode rev-acc"),
                    b = run(kGrid + kSeq + " --iters 1200 --mode rev-acc");
  EXPECT_EQ(field(a, "tape_bytes"), field(b, "tape_bytes"));
  EXPECT_EQ(field(a, "tape_bytes"), 24.0 + 12 * 10 * 12.0);  // error reduction + u's interior on the host
  EXPECT_NE(field(a, "adjoint_iterations"), 0.0);
}

TEST(PoissonRevAccDriver, ExecutorsAgreeBitwise) {
  const std::string a = kGrid + " --iters 500 --mode rev-acc";
  const std::string s = run(a + " --executor starpu"), q = run(a + " --executor sequential");
  for (const char* key : {"total_error", "adjoint_iterations", "adjoint_change", "tape_bytes", "gradient_rel_diff"})
    EXPECT_EQ(field(s, key), field(q, key)) << key;
  for (const char* key : {"dE_df", "dE_du"})
    for (int n = 0; n < 3; ++n) {
      EXPECT_TRUE(std::isfinite(field(s, key, n))) << s;
      EXPECT_EQ(field(s, key, n), field(q, key, n)) << key << " #" << n;
    }
}

TEST(PoissonRevAccDriver, ProbeMatchesCentralDifference) {
  const std::string grid = "--nx 12 --ny 10 --tiles 3 --iters 1200" + kSeq;
  int rc = -1;
  const std::string rev = run(grid + " --mode rev-acc --probe 4,5 --json", &rc);
  ASSERT_EQ(rc, 0) << rev;
  auto pert = [&](double h) { return field(run(grid + " --json --perturb f,4,5," + std::to_string(h)), "total_error"); };
  const double fd = (pert(1.0) - pert(-1.0)) / 2.0;
  EXPECT_NE(fd, 0.0);
  EXPECT_NEAR(field(rev, "dE_df"), fd, 1e-7 * std::fabs(fd)) << rev;
}

TEST(PoissonRevAccDriver, NotConvergedExitsOne) {
  int rc = -1;
  const std::string out = run(kGrid + kSeq + " --iters 300 --mode rev-acc --max-adjoint-iters 4", &rc);
  EXPECT_EQ(rc, 1);
  EXPECT_NE(out.find("\"adjoint_status\":\"not converged\""), std::string::npos) << out;
  EXPECT_EQ(field(out, "adjoint_iterations"), 4.0);
}
