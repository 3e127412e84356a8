// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/starpu/test_adjoint_checkpointing_starpu.cpp — checkpointed tapes as StarPU tasks give
// bitwise the sequential save-all gradients (Revolve, online, fewer steps; Poisson and the
// nonlinear stencil with reductions in the steps), under whichever STARPU_SCHED ctest sets.
// DiskSwap runs only where ctest sets STARPU_DISK_SWAP (with STARPU_LIMIT_CPU_MEM below the
// snapshot total): it must complete with the save-all gradient.
#include <gtest/gtest.h>

#include <cstdlib>

#include "runtime_environment.hpp"
#include "unit/test_adjoint_checkpointing_cases.hpp"

using namespace stardiff;
using ckpt_cases::Result;

using ckpt_cases::expect_same;

TEST(AdjointCheckpointingStarpu, NonlinearBitwiseEqualsSequentialSaveAll) {
  SequentialExecutor se;
  StarpuExecutor pe;
  const Result ref = ckpt_cases::nonlinear(se, Checkpointing::save_all(), 10, true, 40, 4);
  expect_same(ref, ckpt_cases::nonlinear(pe, Checkpointing::save_all(), 10, true, 40, 4), "starpu save-all");
  for (int s : {1, 3, 5}) {
    const Result r = ckpt_cases::nonlinear(pe, Checkpointing::revolve(10, s), 10, true, 40, 4);
    expect_same(ref, r, "starpu revolve(10, " + std::to_string(s) + ")");
    EXPECT_EQ(r.recomputed, CheckpointSchedule::optimal_recomputations(10, s));
  }
  const Result o = ckpt_cases::nonlinear(pe, Checkpointing::online(3), 10, true, 40, 4);
  expect_same(ref, o, "starpu online(3)");
  EXPECT_EQ(o.recomputed, online_vs_offline(10, 3).online);
  const Result ref5 = ckpt_cases::nonlinear(se, Checkpointing::save_all(), 5, true, 40, 4);
  expect_same(ref5, ckpt_cases::nonlinear(pe, Checkpointing::revolve(7, 2), 5, true, 40, 4),
              "starpu revolve(7, 2) stopped at 5");
}

TEST(AdjointCheckpointingStarpu, PoissonBitwiseEqualsSequentialSaveAll) {
  SequentialExecutor se;
  StarpuExecutor pe;
  const Result ref = ckpt_cases::poisson(se, Checkpointing::save_all(), 12, 64, 48, 5);
  expect_same(ref, ckpt_cases::poisson(pe, Checkpointing::revolve(12, 2), 12, 64, 48, 5), "starpu revolve(12, 2)");
  expect_same(ref, ckpt_cases::poisson(pe, Checkpointing::online(2), 12, 64, 48, 5), "starpu online(2)");
}

TEST(AdjointCheckpointingStarpu, DiskSwap) {
  if (std::getenv("STARPU_DISK_SWAP") == nullptr) GTEST_SKIP() << "STARPU_DISK_SWAP is not set";
  StarpuExecutor pe;
  const Result ref = ckpt_cases::nonlinear(pe, Checkpointing::save_all(), 12, true, 384, 4);
  const Result r = ckpt_cases::nonlinear(pe, Checkpointing::revolve(12, 6), 12, true, 384, 4);
  expect_same(ref, r, "revolve(12, 6) with the disk node");
  EXPECT_GT(r.peak_snapshot_bytes, std::size_t{4} << 20);  // above STARPU_LIMIT_CPU_MEM=4 (MB)
}
