// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/starpu/test_mesh_lowdim_starpu.cpp — low-dimensional dats and MIN/MAX adjoints
// as StarPU tasks give bitwise the sequential executor's results (primal, adjoints of
// celldx/celldy summed per tile then in tile order, arg-extremum seeds), run to run,
// under whichever STARPU_SCHED ctest sets.
#include <gtest/gtest.h>

#include "runtime_environment.hpp"
#include "unit/test_mesh_lowdim_cases.hpp"

using namespace stardiff;

TEST(MeshLowdimStarpu, LowDimensionalBitwiseEqualsSequential) {
  SequentialExecutor se;
  StarpuExecutor pe;
  for (int tiles : {1, 3, 7}) {
    const auto a = lowdim::run(se, 21, 28, tiles, false), b = lowdim::run(pe, 21, 28, tiles, false);
    EXPECT_EQ(a.J, b.J) << "tiles=" << tiles;
    EXPECT_EQ(a.w.data, b.w.data) << "tiles=" << tiles;
    EXPECT_EQ(a.du.data, b.du.data) << "tiles=" << tiles;
    EXPECT_EQ(a.dcx.data, b.dcx.data) << "tiles=" << tiles;
    EXPECT_EQ(a.dcy.data, b.dcy.data) << "tiles=" << tiles;
    const auto c = lowdim::run(pe, 21, 28, tiles, false);
    EXPECT_EQ(c.dcx.data, b.dcx.data) << "run to run, tiles=" << tiles;
  }
  const auto full = lowdim::run(pe, 21, 28, 7, true, false), low = lowdim::run(pe, 21, 28, 7, false, false);
  EXPECT_EQ(full.w.data, low.w.data);
}

TEST(MeshLowdimStarpu, MinMaxAdjointsBitwiseAcrossExecutorsAndTiles) {
  SequentialExecutor se;
  StarpuExecutor pe;
  const std::vector<int> lo{9 * 9 + 3, 9 * 2 + 7, 9 * 2 + 1, 9 * 13 + 8}, hi{9 * 4 + 5, 9 * 11 + 2, 9 * 4 + 8};
  const auto ref = lowdim::run_minmax(se, {9, 14}, 1, lo, hi);
  for (int tiles : {1, 2, 3, 7})
    for (bool split : {false, true}) {
      const auto r = lowdim::run_minmax(pe, {9, 14}, tiles, lo, hi, split);
      EXPECT_EQ(r.du.data, ref.du.data) << "tiles=" << tiles << " split=" << split;
      EXPECT_EQ(r.arg_lo, ref.arg_lo);
      EXPECT_EQ(r.arg_hi, ref.arg_hi);
    }
}
