// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/starpu/test_adjoint_fixed_point_starpu.cpp — reverse accumulation as StarPU tasks gives
// bitwise the sequential executor's gradients, pass counts and bytes (Poisson; the nonlinear
// fixed point with prefix and tail; the scratch-dat variant), under whichever STARPU_SCHED
// ctest sets.
#include <gtest/gtest.h>

#include "poisson_problem.hpp"
#include "runtime_environment.hpp"
#include "unit/test_adjoint_fixed_point_cases.hpp"

using namespace stardiff;

namespace {
FixedPointOptions opts(double tol) {
  FixedPointOptions o;
  o.tolerance = tol;
  o.max_iterations = 100000;
  return o;
}
void expect_same(const fp_cases::Result& a, const fp_cases::Result& b) {
  EXPECT_EQ(a.J, b.J);
  EXPECT_EQ(a.dq, b.dq);
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_EQ(a.report.iterations, b.report.iterations);
  EXPECT_EQ(a.report.change, b.report.change);
  EXPECT_EQ(a.report.status, FixedPointStatus::Converged);
}
}  // namespace

TEST(AdjointFixedPointStarpu, PoissonBitwiseEqualsSequential) {
  SequentialExecutor se;
  StarpuExecutor pe;
  poisson::Problem a(se, 14, 12, 4), b(pe, 14, 12, 4);
  a.setup();
  b.setup();
  auto ga = poisson::rev_acc_gradient(a, 300, opts(1e-8));
  auto gb = poisson::rev_acc_gradient(b, 300, opts(1e-8));
  EXPECT_EQ(ga.E, gb.E);
  EXPECT_EQ(ga.dE_df.data, gb.dE_df.data);
  EXPECT_EQ(ga.dE_du.data, gb.dE_du.data);
  EXPECT_EQ(ga.tape_bytes, gb.tape_bytes);
  EXPECT_EQ(ga.fixed_point.iterations, gb.fixed_point.iterations);
  EXPECT_EQ(gb.fixed_point.status, FixedPointStatus::Converged);
}

TEST(AdjointFixedPointStarpu, NonlinearBitwiseEqualsSequential) {
  SequentialExecutor se;
  StarpuExecutor pe;
  expect_same(fp_cases::rev_acc(se, 20, 16, 4, 80, opts(1e-12)), fp_cases::rev_acc(pe, 20, 16, 4, 80, opts(1e-12)));
  expect_same(fp_cases::rev_acc(se, 20, 16, 4, 40, opts(1e-12), true),
              fp_cases::rev_acc(pe, 20, 16, 4, 40, opts(1e-12), true));
}
