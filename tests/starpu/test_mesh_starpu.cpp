// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/starpu/test_mesh_starpu.cpp — mesh loops and their adjoints as StarPU tasks give
// bitwise the sequential executor's results (Poisson, the 1-D and 3-D cases), under
// whichever STARPU_SCHED ctest sets (eager, lws, dmda); the known answer E holds;
// reductions are bitwise equal across executors and tile counts.
#include <gtest/gtest.h>

#include "poisson_problem.hpp"
#include "unit/test_adjoint_cases.hpp"
#include "unit/test_mesh_reduction_cases.hpp"
#include "runtime_environment.hpp"

using namespace stardiff;

namespace {
poisson::Gradient poisson_gradient(Executor& ex, int nx, int ny, int tiles, int iters) {
  poisson::Problem p(ex, nx, ny, tiles);
  p.setup();
  return poisson::record_and_reverse(p, iters);
}
}  // namespace

TEST(MeshStarpu, PoissonKnownAnswer) {
  StarpuExecutor ex;
  poisson::Problem p(ex, 20, 20, 4);
  EXPECT_NEAR(p.run(10), 16.5173570176708, 16.5173570176708 * 1e-12);
}

TEST(MeshStarpu, PoissonAdjointBitwiseEqualsSequential) {
  SequentialExecutor se;
  StarpuExecutor pe;
  auto a = poisson_gradient(se, 64, 48, 5, 12);
  auto b = poisson_gradient(pe, 64, 48, 5, 12);
  EXPECT_EQ(a.E, b.E);
  EXPECT_EQ(a.dE_df.data, b.dE_df.data);
  EXPECT_EQ(a.dE_du.data, b.dE_du.data);
  // And a second StarPU run: reproducible run to run.
  auto c = poisson_gradient(pe, 64, 48, 5, 12);
  EXPECT_EQ(c.dE_df.data, b.dE_df.data);
}

TEST(MeshStarpu, OneAndThreeDimensionalBitwise) {
  SequentialExecutor se;
  StarpuExecutor pe;
  auto a = cases::run_1d(se, 60, 4), b = cases::run_1d(pe, 60, 4);
  EXPECT_EQ(a.S, b.S);
  EXPECT_EQ(a.M, b.M);
  EXPECT_EQ(a.da, b.da);
  EXPECT_EQ(a.dx.data, b.dx.data);
  EXPECT_EQ(a.dy.data, b.dy.data);
  auto c = cases::run_3d(se, 7, 5, 12, 4), d = cases::run_3d(pe, 7, 5, 12, 4);
  EXPECT_EQ(c.R, d.R);
  EXPECT_EQ(c.ds, d.ds);
  EXPECT_EQ(c.da.data, d.da.data);
  EXPECT_EQ(c.db.data, d.db.data);
  EXPECT_EQ(c.dc.data, d.dc.data);
}

TEST(MeshStarpu, ReductionsBitwiseAcrossExecutorsAndTiles) {
  SequentialExecutor se;
  StarpuExecutor pe;
  const auto ref = reduction_cases::run(se, 1);
  for (int tiles : {1, 2, 3, 7}) {
    EXPECT_EQ(reduction_cases::run(se, tiles), ref) << "sequential, tiles=" << tiles;
    EXPECT_EQ(reduction_cases::run(pe, tiles), ref) << "StarPU, tiles=" << tiles;
  }
  // Default tiling: one tile under the sequential executor, 2 per worker under StarPU.
  poisson::Problem a(se, 20, 20), b(pe, 20, 20);
  EXPECT_EQ(a.run(10), b.run(10));
}
