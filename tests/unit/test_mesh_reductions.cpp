// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/unit/test_mesh_reductions.cpp — a reduction's value does not depend on the tiling:
// SUM, MIN and MAX over 1-, 2- and 3-D blocks (ranges reaching into halos) give bitwise
// the same value for tiles = 1, 2, 3, 7 (row partials folded in row order); so do the
// Poisson error E and the active-scalar adjoints of the shared adjoint cases.
#include <gtest/gtest.h>

#include <cmath>

#include "poisson_problem.hpp"
#include "unit/test_adjoint_cases.hpp"
#include "unit/test_mesh_reduction_cases.hpp"

using namespace stardiff;

TEST(MeshReductions, ValueIndependentOfTiles) {
  SequentialExecutor ex;
  const auto ref = reduction_cases::run(ex, 1);
  for (int tiles : {2, 3, 7}) {
    const auto r = reduction_cases::run(ex, tiles);
    EXPECT_EQ(r, ref) << "tiles=" << tiles;
  }
}

TEST(MeshReductions, PoissonErrorAndScalarAdjointsIndependentOfTiles) {
  SequentialExecutor ex;
  double E1 = 0;
  for (int tiles : {1, 2, 3, 7}) {
    poisson::Problem p(ex, 20, 20, tiles);
    const double E = p.run(10);
    if (tiles == 1) E1 = E;
    EXPECT_EQ(E, E1) << "tiles=" << tiles;
  }
  EXPECT_NEAR(E1, 16.5173570176708, 16.5173570176708 * 1e-14);
  const auto a1 = cases::run_1d(ex, 40, 1), a7 = cases::run_1d(ex, 40, 7);
  EXPECT_EQ(a7.S, a1.S);
  EXPECT_EQ(a7.M, a1.M);
  EXPECT_EQ(a7.da, a1.da);
  const auto c1 = cases::run_3d(ex, 6, 5, 9, 1), c4 = cases::run_3d(ex, 6, 5, 9, 4);
  EXPECT_EQ(c4.R, c1.R);
  EXPECT_EQ(c4.ds, c1.ds);
}
