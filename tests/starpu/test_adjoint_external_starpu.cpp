// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/starpu/test_adjoint_external_starpu.cpp — external functions as StarPU tasks give bitwise
// the sequential executor's results: tridiag_solve along every axis of 2-D/3-D dats (per-tile
// tasks and the all-tiles task, stored outputs and recomputation, in place) and SparseSolve
// chains with their adjoints, under whichever STARPU_SCHED ctest sets.
#include <gtest/gtest.h>

#include "runtime_environment.hpp"
#include "unit/test_adjoint_external_cases.hpp"

using namespace stardiff;
using namespace stardiff::ext_cases;

TEST(AdjointExternalStarpu, TridiagBitwiseEqualsSequential) {
  SequentialExecutor se;
  StarpuExecutor pe;
  struct Shape {
    std::vector<int> size;
    int axis;
  };
  for (const Shape& s : std::vector<Shape>{{{33, 20}, 0}, {{33, 20}, 1}, {{9, 8, 12}, 0}, {{9, 8, 12}, 1},
                                           {{9, 8, 12}, 2}})
    for (int variant = 0; variant < 3; ++variant) {
      SCOPED_TRACE(::testing::Message() << "dims " << s.size.size() << " axis " << s.axis << " variant " << variant);
      const bool inplace = variant == 2, recompute = variant == 1;
      TriResult a = run_tridiag(se, s.size, 4, s.axis, inplace, recompute);
      TriResult b = run_tridiag(pe, s.size, 4, s.axis, inplace, recompute);
      EXPECT_EQ(a.J, b.J);
      EXPECT_EQ(a.x.data, b.x.data);
      EXPECT_EQ(a.da.data, b.da.data);
      EXPECT_EQ(a.db.data, b.db.data);
      EXPECT_EQ(a.dc.data, b.dc.data);
      EXPECT_EQ(a.dd.data, b.dd.data);
    }
}

TEST(AdjointExternalStarpu, SparseSolveBitwiseEqualsSequential) {
  SequentialExecutor se;
  StarpuExecutor pe;
  for (bool inplace : {false, true})
    for (bool recompute : {false, true}) {
      SparseResult a = run_sparse(se, 12, 3, 4, inplace, recompute);
      SparseResult b = run_sparse(pe, 12, 3, 4, inplace, recompute);
      EXPECT_EQ(a.J, b.J);
      EXPECT_EQ(a.x.data, b.x.data);
      EXPECT_EQ(a.dvals.data, b.dvals.data);
      EXPECT_EQ(a.db.data, b.db.data);
      EXPECT_EQ(b.factorizations, 1);
    }
}
