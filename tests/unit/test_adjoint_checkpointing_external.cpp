// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/unit/test_adjoint_checkpointing_external.cpp — checkpointed steps holding external
// functions (tridiag_solve along alternating axes, SparseSolve; both the output-saving and the
// recomputing variants) give bitwise the save-all gradients, hold fewer bytes than save-all
// (outputs of untaped steps are dropped) and reuse the LDL^T factors; SavePolicy::Verify over
// them gives Needed's results; MIN/MAX reductions whose extremum moves keep, after reverse()
// with recomputed steps, the value and the arg-extremum of the forward pass.
#include <gtest/gtest.h>

#include "unit/test_adjoint_checkpointing_external_cases.hpp"

using namespace stardiff;
namespace cx = stardiff::ckpt_ext_cases;

TEST(AdjointCheckpointingExternal, TridiagStepsRevolveAndOnlineBitwiseEqualSaveAll) {
  SequentialExecutor ex;
  for (bool recompute : {false, true}) {
    const std::string v = recompute ? " (recompute)" : " (outputs saved)";
    const cx::Result all = cx::tridiag_steps(ex, Checkpointing::save_all(), 9, recompute);
    EXPECT_GT(all.E, 0.0);
    double s = 0;
    for (double g : all.da) s += std::abs(g);
    EXPECT_GT(s, 0.0) << "the coefficients get a gradient" << v;
    for (int snaps : {1, 2, 4}) {
      const cx::Result r = cx::tridiag_steps(ex, Checkpointing::revolve(9, snaps), 9, recompute);
      cx::expect_same(all, r, "revolve(9, " + std::to_string(snaps) + ")" + v);
      EXPECT_EQ(r.recomputed, CheckpointSchedule::optimal_recomputations(9, snaps));
      // Checkpoints and external outputs of untaped steps are gone: fewer bytes than save-all.
      EXPECT_LT(r.peak_bytes - r.peak_snapshot_bytes, all.peak_bytes) << snaps << v;
    }
    cx::expect_same(all, cx::tridiag_steps(ex, Checkpointing::online(2), 9, recompute), "online(2)" + v);
    cx::expect_same(all, cx::tridiag_steps(ex, Checkpointing::revolve(12, 3), 9, recompute),
                    "revolve(12, 3) stopped at 9" + v);
  }
}

TEST(AdjointCheckpointingExternal, SparseSolveStepsRevolveBitwiseEqualsSaveAllWithOneFactorization) {
  SequentialExecutor ex;
  for (bool recompute : {false, true}) {
    const std::string v = recompute ? " (recompute)" : " (outputs saved)";
    const cx::Result all = cx::sparse_steps(ex, Checkpointing::save_all(), 7, recompute);
    EXPECT_EQ(all.factorizations, 1) << v;
    for (int snaps : {1, 3}) {
      const cx::Result r = cx::sparse_steps(ex, Checkpointing::revolve(7, snaps), 7, recompute);
      cx::expect_same(all, r, "revolve(7, " + std::to_string(snaps) + ")" + v);
      EXPECT_EQ(r.recomputed, CheckpointSchedule::optimal_recomputations(7, snaps));
      EXPECT_EQ(r.factorizations, 1) << "recomputed solves reuse the factors" << v;
    }
    cx::expect_same(all, cx::sparse_steps(ex, Checkpointing::online(2), 7, recompute), "online(2)" + v);
  }
}

TEST(AdjointCheckpointingExternal, OutputsOfUntapedStepsAreNotHeld) {
  SequentialExecutor ex;
  // Save-all keeps one output per tile per step: bytes() grows with the steps; Revolve with one
  // snapshot holds, after the reverse, only the tail (no step's outputs).
  const cx::Result a3 = cx::tridiag_steps(ex, Checkpointing::save_all(), 3, false);
  const cx::Result a6 = cx::tridiag_steps(ex, Checkpointing::save_all(), 6, false);
  EXPECT_GT(a6.bytes, a3.bytes);
  const cx::Result r = cx::tridiag_steps(ex, Checkpointing::revolve(6, 1), 6, false);
  EXPECT_LT(r.bytes, a3.bytes);
}

TEST(AdjointCheckpointingExternal, VerifyPolicyOverExternalsGivesNeededResults) {
  SequentialExecutor ex;
  for (bool recompute : {false, true}) {
    const cx::Result n = cx::tridiag_steps(ex, Checkpointing::save_all(), 5, recompute);
    cx::expect_same(n, cx::tridiag_steps(ex, Checkpointing::save_all(), 5, recompute, 16, 12, 3, SavePolicy::Verify),
                    "tridiag, save-all, Verify");
    cx::expect_same(n,
                    cx::tridiag_steps(ex, Checkpointing::revolve(5, 2), 5, recompute, 16, 12, 3, SavePolicy::Verify),
                    "tridiag, revolve(5, 2), Verify");
    const cx::Result s = cx::sparse_steps(ex, Checkpointing::save_all(), 4, recompute);
    cx::expect_same(s, cx::sparse_steps(ex, Checkpointing::revolve(4, 1), 4, recompute, 10, 3, SavePolicy::Verify),
                    "sparse, revolve(4, 1), Verify");
  }
}

TEST(AdjointCheckpointingExternal, MinMaxArgAfterRecomputedStepsIsTheForwardOne) {
  SequentialExecutor ex;
  const int n = 12, steps = 8;
  const cx::Result all = cx::moving_peak(ex, Checkpointing::save_all(), steps, n);
  // The peak moves: the last step's bump (height 4) wins, at (2 + 3*7) % 12, (5 + 7*7) % 12.
  EXPECT_EQ(all.fwd_arg_hi, (std::array<int, 3>{11, 6, 0}));
  EXPECT_EQ(all.arg_hi, all.fwd_arg_hi);
  EXPECT_EQ(all.arg_lo, all.fwd_arg_lo);
  EXPECT_EQ(all.lo, -all.hi);
  // dhi/du + 0.5 dlo/du = 1 - 0.5 at the arg-extremum, 0 elsewhere.
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i)
      EXPECT_EQ(all.du[static_cast<std::size_t>(i + n * j)], i == 11 && j == 6 ? 0.5 : 0.0) << i << "," << j;
  for (int snaps : {1, 2, 3}) {
    const cx::Result r = cx::moving_peak(ex, Checkpointing::revolve(steps, snaps), steps, n);
    cx::expect_same(all, r, "revolve(8, " + std::to_string(snaps) + ")");
    EXPECT_EQ(r.fwd_arg_hi, all.fwd_arg_hi);
  }
  cx::expect_same(all, cx::moving_peak(ex, Checkpointing::online(2), steps, n), "online(2)");
}
