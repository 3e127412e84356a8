// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/unit/test_adjoint_checkpointing.cpp — Tape::step with Revolve and online checkpointing:
// gradients bitwise equal to save-all (Poisson; the nonlinear stencil whose adjoint reads u, with
// reductions inside the steps and a recorded prefix), recomputation counts equal to the
// schedule's (revolve's optimum when all declared steps run), revolve_exact (no saves in
// untaped steps, Error on a short run), reports, and bad input.
#include <gtest/gtest.h>

#include "unit/test_adjoint_checkpointing_cases.hpp"

using namespace stardiff;
using ckpt_cases::Result;

using ckpt_cases::expect_same;

TEST(AdjointCheckpointing, PoissonRevolveBitwiseEqualsSaveAll) {
  SequentialExecutor ex;
  const Result all = ckpt_cases::poisson(ex, Checkpointing::save_all(), 10);
  EXPECT_EQ(all.recomputed, 0);
  EXPECT_EQ(all.steps, 10);
  for (int s : {1, 2, 3, 5}) {
    const Result r = ckpt_cases::poisson(ex, Checkpointing::revolve(10, s), 10);
    expect_same(all, r, "revolve(10, " + std::to_string(s) + ")");
    EXPECT_EQ(r.recomputed, CheckpointSchedule::optimal_recomputations(10, s)) << s;
    EXPECT_LE(r.snapshots_held, s);
    EXPECT_EQ(r.steps, 10);
  }
  const Result o = ckpt_cases::poisson(ex, Checkpointing::online(3), 10);
  expect_same(all, o, "online(3)");
  EXPECT_EQ(o.recomputed, online_vs_offline(10, 3).online);
}

TEST(AdjointCheckpointing, PoissonSavePolicyAllBitwise) {
  SequentialExecutor ex;
  const Result all = ckpt_cases::poisson(ex, Checkpointing::save_all(), 8, 24, 20, 3, SavePolicy::All);
  const Result r = ckpt_cases::poisson(ex, Checkpointing::revolve(8, 3), 8, 24, 20, 3, SavePolicy::All);
  expect_same(all, r, "revolve(8, 3), SavePolicy::All");
  EXPECT_LT(r.peak_bytes - r.peak_snapshot_bytes, all.peak_bytes);
}

TEST(AdjointCheckpointing, NonlinearRevolveBitwiseEqualsSaveAll) {
  SequentialExecutor ex;
  for (bool red : {false, true}) {
    const Result all = ckpt_cases::nonlinear(ex, Checkpointing::save_all(), 10, red);
    for (int s : {1, 2, 3, 5}) {
      const Result r = ckpt_cases::nonlinear(ex, Checkpointing::revolve(10, s), 10, red);
      expect_same(all, r, "revolve(10, " + std::to_string(s) + ") reductions " + std::to_string(red));
      EXPECT_EQ(r.recomputed, CheckpointSchedule::optimal_recomputations(10, s)) << s;
    }
    for (int s : {2, 4}) {
      const Result o = ckpt_cases::nonlinear(ex, Checkpointing::online(s), 10, red);
      expect_same(all, o, "online(" + std::to_string(s) + ")");
      EXPECT_EQ(o.recomputed, online_vs_offline(10, s).online);
    }
  }
}

TEST(AdjointCheckpointing, NonlinearSaveAllGradientIsNotTrivial) {
  SequentialExecutor ex;
  const Result a = ckpt_cases::nonlinear(ex, Checkpointing::save_all(), 6, true);
  const Result b = ckpt_cases::nonlinear(ex, Checkpointing::save_all(), 3, true);
  EXPECT_NE(a.du, b.du);
  double norm = 0;
  for (double v : a.du) norm += v * v;
  EXPECT_GT(norm, 0.0);
  EXPECT_GT(a.M, 0.0);
}

TEST(AdjointCheckpointing, FewerStepsThanDeclaredAdapts) {
  SequentialExecutor ex;
  for (bool red : {false, true}) {
    const Result all = ckpt_cases::nonlinear(ex, Checkpointing::save_all(), 5, red);
    const Result r = ckpt_cases::nonlinear(ex, Checkpointing::revolve(7, 2), 5, red);
    expect_same(all, r, "revolve(7, 2) stopped at 5");
    EXPECT_EQ(r.recomputed, ckpt_cases::schedule_count(Checkpointing::revolve(7, 2), 5));
    EXPECT_EQ(r.steps, 5);
    // One step short of the declared count: revolve's firsturn step becomes the tail.
    const Result all6 = ckpt_cases::nonlinear(ex, Checkpointing::save_all(), 6, red);
    const Result r6 = ckpt_cases::nonlinear(ex, Checkpointing::revolve(7, 2), 6, red);
    expect_same(all6, r6, "revolve(7, 2) stopped at 6");
    EXPECT_EQ(r6.recomputed, ckpt_cases::schedule_count(Checkpointing::revolve(7, 2), 6));
  }
  const Result p = ckpt_cases::poisson(ex, Checkpointing::revolve(7, 2), 5);
  expect_same(ckpt_cases::poisson(ex, Checkpointing::save_all(), 5), p, "poisson revolve(7, 2) stopped at 5");
}

TEST(AdjointCheckpointing, ManyShapesMatchTheSchedule) {
  SequentialExecutor ex;
  for (int l : {1, 2, 3, 4, 6}) {
    const Result all = ckpt_cases::nonlinear(ex, Checkpointing::save_all(), l, true, 12, 2);
    for (int s : {1, 2, 3, 8}) {
      const Result r = ckpt_cases::nonlinear(ex, Checkpointing::revolve(l, s), l, true, 12, 2);
      expect_same(all, r, "revolve(" + std::to_string(l) + ", " + std::to_string(s) + ")");
      EXPECT_EQ(r.recomputed, CheckpointSchedule::optimal_recomputations(l, s));
      const Result o = ckpt_cases::nonlinear(ex, Checkpointing::online(s), l, true, 12, 2);
      expect_same(all, o, "online(" + std::to_string(s) + ") steps " + std::to_string(l));
      EXPECT_EQ(o.recomputed, online_vs_offline(l, s).online);
    }
  }
}

TEST(AdjointCheckpointing, RevolveExactBitwiseAndUntapedStepsSaveNothing) {
  SequentialExecutor ex;
  for (bool red : {false, true}) {
    const Result all = ckpt_cases::nonlinear(ex, Checkpointing::save_all(), 10, red);
    for (int s : {1, 2, 3, 5}) {
      const Result r = ckpt_cases::nonlinear(ex, Checkpointing::revolve_exact(10, s), 10, red);
      expect_same(all, r, "revolve_exact(10, " + std::to_string(s) + ") reductions " + std::to_string(red));
      EXPECT_EQ(r.recomputed, CheckpointSchedule::optimal_recomputations(10, s)) << s;
    }
  }
  for (SavePolicy pol : {SavePolicy::Needed, SavePolicy::All}) {
    const Result all = ckpt_cases::poisson(ex, Checkpointing::save_all(), 8, 24, 20, 3, pol);
    const Result r = ckpt_cases::poisson(ex, Checkpointing::revolve_exact(8, 3), 8, 24, 20, 3, pol);
    expect_same(all, r, "poisson revolve_exact(8, 3)");
  }
  EXPECT_EQ(Checkpointing::revolve_exact(8, 3).describe(), "revolve(8, 3)");
  // During the forward pass an untaped step holds its saves under revolve, none under revolve_exact.
  for (bool exact : {false, true}) {
    stardiff::poisson::Problem p(ex, 16, 16, 2);
    p.setup();
    Tape t("exact_forward", SavePolicy::All);
    t.set_checkpointing(exact ? Checkpointing::revolve_exact(4, 2) : Checkpointing::revolve(4, 2));
    t.start();
    t.step({p.u});
    p.iterate(1);
    if (exact) EXPECT_EQ(t.bytes(), 0u);
    else EXPECT_GT(t.bytes(), 0u);
    t.stop();
    ex.wait_all();
  }
  // Fewer steps than revolve_exact declared: Error at reverse().
  stardiff::poisson::Problem p(ex, 12, 12, 2);
  p.setup();
  Tape t("exact_short");
  t.set_checkpointing(Checkpointing::revolve_exact(4, 2));
  t.start();
  t.step({p.u});
  for (int k = 0; k < 3; ++k) {
    p.iterate(1);
    t.step();
  }
  p.submit_error();
  t.stop();
  t.seed(p.err, 1.0);
  try {
    t.reverse();
    FAIL() << "revolve_exact(4, 2) reversed after 3 steps";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("revolve_exact(4, 2) but recorded 3 steps"), std::string::npos) << e.what();
  }
  ex.wait_all();
}

TEST(AdjointCheckpointing, ReportsSnapshotMemory) {
  SequentialExecutor ex;
  stardiff::poisson::Problem p(ex, 16, 16, 2);
  const std::size_t snap = p.u.bytes();
  const Result r = ckpt_cases::poisson(ex, Checkpointing::revolve(10, 3), 10, 16, 16, 2);
  EXPECT_EQ(r.peak_snapshot_bytes, 3 * snap);
  EXPECT_EQ(r.snapshots_held, 3);
  EXPECT_GE(r.peak_bytes, r.peak_snapshot_bytes);
  const Result o = ckpt_cases::poisson(ex, Checkpointing::online(3), 10, 16, 16, 2);
  EXPECT_LE(o.peak_snapshot_bytes, 4 * snap);  // one more while a boundary is tentative
  const Result a = ckpt_cases::poisson(ex, Checkpointing::save_all(), 10, 16, 16, 2);
  EXPECT_EQ(a.peak_snapshot_bytes, 0u);
  EXPECT_EQ(a.peak_bytes, a.bytes);
}

TEST(AdjointCheckpointing, BadInput) {
  EXPECT_THROW(Checkpointing::revolve(10, 0), Error);
  EXPECT_THROW(Checkpointing::revolve(10, -2), Error);
  EXPECT_THROW(Checkpointing::revolve(0, 3), Error);
  EXPECT_THROW(Checkpointing::online(0), Error);
  EXPECT_THROW(Checkpointing::online(-1), Error);
  Checkpointing bad;
  bad.kind = Checkpointing::Kind::Online;
  Tape t0;
  EXPECT_THROW(t0.set_checkpointing(bad), Error);

  SequentialExecutor ex;
  stardiff::poisson::Problem p(ex, 12, 12, 2), q(ex, 12, 12, 2);
  p.setup();
  q.setup();
  {
    Tape t("bad_block");
    t.set_checkpointing(Checkpointing::revolve(4, 2));
    EXPECT_THROW(t.step({p.u}), Error);  // not recording
    t.start();
    try {
      t.step({p.u, q.u});
      FAIL() << "dats of two blocks";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("the state lives on one block"), std::string::npos)
          << e.what();
    }
    t.step({p.u});
    EXPECT_THROW(t.step({q.u}), Error);  // another state
    t.stop();
  }
  {
    Tape t("beyond");
    t.set_checkpointing(Checkpointing::revolve(3, 2));
    t.start();
    t.step({p.u});
    for (int k = 0; k < 3; ++k) {
      p.iterate(1);
      t.step();
    }
    p.iterate(1);
    try {
      t.step();
      FAIL() << "a fourth step of three declared";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("beyond the 3 steps declared"), std::string::npos) << e.what();
    }
    EXPECT_THROW(t.set_checkpointing(Checkpointing::online(2)), Error);  // recorded already
    t.stop();
  }
  {
    Tape t("loop_on_other_block");
    t.set_checkpointing(Checkpointing::online(2));
    t.start();
    t.step({p.u});
    EXPECT_THROW(q.iterate(1), Error);
    t.stop();
  }
}
