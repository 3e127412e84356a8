// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/unit/test_adjoint_checkpoint_schedule.cpp — checkpoint schedules run on an abstract state:
// offline revolve (valid, recomputations equal to the binomial formula), runs shorter than declared,
// the online strategy (valid, never below the optimum; ratio table printed), bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "stardiff/adjoint/checkpoint_schedule.hpp"
#include "stardiff/runtime/error.hpp"

using namespace stardiff;

namespace {

struct Sim {
  std::string error;  // empty when valid
  std::int64_t advanced = 0;
  std::int64_t turns = 0;
};

// Runs actions on snapshot slots holding step indices and a current position (-1: none, after a
// turn). Valid when steps l-1..0 are each taped from their own state and reversed once in that order,
// slots stay within s, Advance/TakeSnapshot start at the current position, Restore reads a held slot.
Sim simulate(const std::vector<Action>& acts, std::int64_t l, int s) {
  Sim r;
  std::vector<std::int64_t> slot(s, -1);
  std::int64_t pos = -1, next_rev = l - 1;
  bool restored = false, started = false;
  auto fail = [&](std::size_t i, const std::string& why) {
    r.error = "action " + std::to_string(i) + " " + to_string(acts[i]) + ": " + why;
    return r;
  };
  for (std::size_t i = 0; i < acts.size(); ++i) {
    const Action& a = acts[i];
    if (!started) {  // the run starts at x_0
      pos = 0;
      started = true;
    }
    switch (a.kind) {
      case ActionKind::TakeSnapshot:
        if (a.slot < 0 || a.slot >= s) return fail(i, "slot out of range");
        if (pos < 0 || a.step != pos) return fail(i, "not the current state");
        slot[a.slot] = a.step;
        break;
      case ActionKind::Advance:
        if (pos < 0 || a.step != pos) return fail(i, "not from the current position");
        if (a.to <= a.step || a.to > l) return fail(i, "bad range");
        r.advanced += a.to - a.step;
        pos = a.to;
        break;
      case ActionKind::RestoreSnapshot:
        if (a.slot < 0 || a.slot >= s || slot[a.slot] != a.step) return fail(i, "slot does not hold that step");
        pos = a.step;
        restored = true;
        break;
      case ActionKind::FirstTurn:
        if (r.turns != 0 || restored || a.step != l - 1) return fail(i, "firsturn must tape step l-1 first");
        [[fallthrough]];
      case ActionKind::YouTurn:
        if (a.step != next_rev) return fail(i, "reverses out of order (next is " + std::to_string(next_rev) + ")");
        if (pos != a.step) return fail(i, "taped from state " + std::to_string(pos));
        --next_rev;
        ++r.turns;
        pos = -1;
        break;
      case ActionKind::Terminate:
        if (i + 1 != acts.size()) return fail(i, "not last");
        if (next_rev != -1) return fail(i, "steps left unreversed");
        return r;
    }
  }
  r.error = "no Terminate";
  return r;
}

// Forward pass with next(), stopping after `actual` steps (truncating the Advance in flight), then
// finish(actual) and the rest. Returns the actions as executed.
std::vector<Action> run_stopping(CheckpointSchedule& c, std::int64_t actual) {
  std::vector<Action> done;
  for (;;) {
    Action a = c.next();
    if (a.kind == ActionKind::Advance && a.to >= actual) {
      a.to = actual;
      done.push_back(a);
      break;
    }
    done.push_back(a);
  }
  c.finish(actual);
  for (const Action& a : c.all()) done.push_back(a);
  return done;
}

// Forward pass through forward_boundary (the tape's way), `actual` steps, then the reversal.
std::vector<Action> run_boundaries(CheckpointSchedule& c, std::int64_t actual, std::int64_t declared) {
  std::vector<Action> done;
  std::int64_t run_from = 0;
  bool turned = false;
  for (std::int64_t k = 0; k < actual; ++k) {
    const auto acts = c.forward_boundary(k);
    for (const Action& a : acts) {
      if (a.kind == ActionKind::TakeSnapshot || a.kind == ActionKind::FirstTurn) {
        if (k > run_from) done.push_back(Action{ActionKind::Advance, run_from, k, -1});
        run_from = k;
      }
      if (a.kind == ActionKind::FirstTurn) turned = true;
      done.push_back(a);
    }
  }
  if (!turned) {
    if (actual > run_from) done.push_back(Action{ActionKind::Advance, run_from, actual, -1});
    c.finish(actual);
  } else {
    EXPECT_EQ(actual, declared);
    c.finish(actual);  // no-op after the firsturn
  }
  for (const Action& a : c.all()) done.push_back(a);
  return done;
}

// Independent optimum of the recursion the schedule follows.
std::vector<std::vector<std::int64_t>> brute_optimum(int lmax, int smax) {
  const std::int64_t inf = 1LL << 60;
  std::vector<std::vector<std::int64_t>> P(smax + 1, std::vector<std::int64_t>(lmax + 1, inf));
  for (int s = 0; s <= smax; ++s) P[s][1] = 0;
  for (int s = 1; s <= smax; ++s)
    for (int l = 2; l <= lmax; ++l)
      for (int m = 1; m < l; ++m) {
        const std::int64_t tail = P[s - 1][l - m];
        if (tail < inf) P[s][l] = std::min(P[s][l], m + P[s][m] + tail);
      }
  return P;
}

}  // namespace

TEST(CheckpointSchedule, FormulaSmallCases) {
  EXPECT_EQ(CheckpointSchedule::optimal_recomputations(2, 1), 1);
  EXPECT_EQ(CheckpointSchedule::optimal_recomputations(3, 1), 3);
  EXPECT_EQ(CheckpointSchedule::optimal_recomputations(1, 1), 0);
  EXPECT_EQ(CheckpointSchedule::optimal_recomputations(1, 7), 0);
  EXPECT_EQ(CheckpointSchedule::optimal_recomputations(10, 9), 9);   // s >= l-1: each step once
  EXPECT_EQ(CheckpointSchedule::optimal_recomputations(10, 50), 9);
  EXPECT_EQ(CheckpointSchedule::beta(3, 2), 10);
  EXPECT_EQ(CheckpointSchedule::repetition_number(10, 3), 2);
  const auto P = brute_optimum(120, 8);
  for (int s = 1; s <= 8; ++s)
    for (int l = 1; l <= 120; ++l)
      ASSERT_EQ(CheckpointSchedule::optimal_recomputations(l, s), P[s][l]) << "l=" << l << " s=" << s;
}

TEST(CheckpointSchedule, ExactSequences) {
  using K = ActionKind;
  auto c = CheckpointSchedule::offline(2, 1);
  const std::vector<Action> want2 = {{K::TakeSnapshot, 0, 0, 0}, {K::Advance, 0, 1, -1},
                                     {K::FirstTurn, 1, 0, -1},   {K::RestoreSnapshot, 0, 0, 0},
                                     {K::YouTurn, 0, 0, -1},     {K::Terminate, 0, 0, -1}};
  EXPECT_EQ(c.all(), want2);
  EXPECT_EQ(c.recomputed(), 1);
  auto c3 = CheckpointSchedule::offline(3, 1);
  EXPECT_EQ(simulate(c3.all(), 3, 1).advanced, 3);
  auto c1 = CheckpointSchedule::offline(1, 3);
  const std::vector<Action> want1 = {{K::TakeSnapshot, 0, 0, 0}, {K::FirstTurn, 0, 0, -1}, {K::Terminate, 0, 0, -1}};
  EXPECT_EQ(c1.all(), want1);
  EXPECT_EQ(c1.next().kind, K::Terminate);  // stays terminated
}

TEST(CheckpointSchedule, OfflineValidAndOptimal) {
  for (int s = 1; s <= 12; ++s)
    for (std::int64_t l = 1; l <= 200; ++l) {
      auto c = CheckpointSchedule::offline(l, s);
      const auto tot = c.totals();
      const auto acts = c.all();
      const Sim r = simulate(acts, l, s);
      ASSERT_EQ(r.error, "") << "l=" << l << " s=" << s;
      const std::int64_t opt = CheckpointSchedule::optimal_recomputations(l, s);
      ASSERT_EQ(r.advanced, opt) << "l=" << l << " s=" << s;
      ASSERT_EQ(c.recomputed(), opt);
      ASSERT_EQ(tot.recomputed, opt);
      ASSERT_EQ(tot.actions, static_cast<std::int64_t>(acts.size()));
      ASSERT_EQ(tot.peak_snapshots, c.peak_snapshots());
      ASSERT_LE(c.peak_snapshots(), s);
      ASSERT_LE(c.peak_snapshots(), std::max<std::int64_t>(1, l - 1));
      ASSERT_EQ(c.snapshots_held(), 0);
      // The boundary-driven forward pass gives the same run.
      auto d = CheckpointSchedule::offline(l, s);
      ASSERT_EQ(run_boundaries(d, l, l), acts) << "l=" << l << " s=" << s;
    }
}

TEST(CheckpointSchedule, OfflineLargeCases) {
  const std::vector<std::pair<std::int64_t, int>> cases = {{10000, 50}, {10000, 10}, {10000, 3}, {4000, 2},
                                                           {2000, 1},   {5000, 200}, {100000, 20}};
  for (auto [l, s] : cases) {
    auto c = CheckpointSchedule::offline(l, s);
    const Sim r = simulate(c.all(), l, s);
    ASSERT_EQ(r.error, "") << "l=" << l << " s=" << s;
    EXPECT_EQ(r.advanced, CheckpointSchedule::optimal_recomputations(l, s)) << "l=" << l << " s=" << s;
    EXPECT_LE(c.peak_snapshots(), s);
  }
}

TEST(CheckpointSchedule, FewerStepsThanDeclared) {
  for (int s = 1; s <= 12; ++s)
    for (std::int64_t l = 2; l <= 200; ++l) {
      std::vector<std::int64_t> stops;
      if (l <= 60) {
        for (std::int64_t k = 1; k < l; ++k) stops.push_back(k);
      } else {
        stops = {1, 2, l / 3, l / 2, l - 2, l - 1};
      }
      for (std::int64_t lp : stops) {
        auto c = CheckpointSchedule::offline(l, s);
        const auto acts = run_stopping(c, lp);
        const Sim r = simulate(acts, lp, s);
        ASSERT_EQ(r.error, "") << "l=" << l << " s=" << s << " l'=" << lp;
        ASSERT_EQ(r.advanced, c.recomputed());
        ASSERT_EQ(c.steps(), lp);
        ASSERT_GE(r.advanced, CheckpointSchedule::optimal_recomputations(lp, s));
        auto d = CheckpointSchedule::offline(l, s);
        const Sim rb = simulate(run_boundaries(d, lp, l), lp, s);
        ASSERT_EQ(rb.error, "") << "boundaries l=" << l << " s=" << s << " l'=" << lp;
        ASSERT_EQ(rb.advanced, d.recomputed());
      }
    }
}

TEST(CheckpointSchedule, OnlineValid) {
  for (int s = 1; s <= 12; ++s)
    for (std::int64_t l = 1; l <= 200; ++l) {
      auto c = CheckpointSchedule::online(s);
      const auto acts = run_boundaries(c, l, -1);
      const Sim r = simulate(acts, l, s);
      ASSERT_EQ(r.error, "") << "l=" << l << " s=" << s;
      ASSERT_EQ(r.advanced, c.recomputed());
      ASSERT_LE(c.peak_snapshots(), s);
      const std::int64_t opt = CheckpointSchedule::optimal_recomputations(l, s);
      ASSERT_GE(r.advanced, opt);
      const OnlineQuality q = online_vs_offline(l, s);
      ASSERT_EQ(q.online, r.advanced);
      ASSERT_EQ(q.offline, opt);
      // Also when stopped with next() mid-Advance.
      auto d = CheckpointSchedule::online(s);
      ASSERT_EQ(simulate(run_stopping(d, l), l, s).error, "");
    }
}

TEST(CheckpointSchedule, OnlineRatioTable) {
  const std::vector<std::pair<std::int64_t, int>> cases = {{200, 5},  {200, 10},  {200, 20},  {200, 50},
                                                           {1000, 10}, {1000, 50}, {10000, 50}};
  double worst = 0;
  std::printf("online vs offline revolve: l s online offline ratio\n");
  for (auto [l, s] : cases) {
    const OnlineQuality q = online_vs_offline(l, s);
    auto c = CheckpointSchedule::online(s);
    ASSERT_EQ(simulate(run_boundaries(c, l, -1), l, s).error, "") << "l=" << l << " s=" << s;
    EXPECT_GE(q.online, q.offline);
    std::printf("  %6lld %3d %9lld %9lld %.3f\n", static_cast<long long>(l), s, static_cast<long long>(q.online),
                static_cast<long long>(q.offline), q.ratio);
    worst = std::max(worst, q.ratio);
    ::testing::Test::RecordProperty("online_ratio_l" + std::to_string(l) + "_s" + std::to_string(s),
                                    std::to_string(q.ratio));
  }
  std::printf("  worst ratio %.3f\n", worst);
}

TEST(CheckpointSchedule, BadInput) {
  EXPECT_THROW(CheckpointSchedule::offline(0, 3), Error);
  EXPECT_THROW(CheckpointSchedule::offline(-5, 3), Error);
  EXPECT_THROW(CheckpointSchedule::offline(10, 0), Error);
  EXPECT_THROW(CheckpointSchedule::offline(10, -1), Error);
  EXPECT_THROW(CheckpointSchedule::online(0), Error);
  EXPECT_THROW(CheckpointSchedule::optimal_recomputations(0, 2), Error);
  EXPECT_THROW(CheckpointSchedule::optimal_recomputations(5, 0), Error);
  EXPECT_THROW(online_vs_offline(10, 0), Error);
  {  // more steps than declared: the boundary after the last declared step
    auto c = CheckpointSchedule::offline(5, 2);
    for (int k = 0; k < 5; ++k) c.forward_boundary(k);
    try {
      c.forward_boundary(5);
      FAIL() << "no Error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("beyond the 5 steps declared"), std::string::npos) << e.what();
    }
    EXPECT_THROW(c.finish(6), Error);
    EXPECT_NO_THROW(c.finish(5));
  }
  {
    auto c = CheckpointSchedule::offline(5, 2);
    c.forward_boundary(0);
    EXPECT_THROW(c.forward_boundary(2), Error);  // out of order
    EXPECT_THROW(c.finish(6), Error);            // more than declared
    EXPECT_THROW(c.finish(0), Error);
    c.finish(1);
    EXPECT_THROW(c.finish(1), Error);  // twice
    EXPECT_THROW(c.forward_boundary(1), Error);
  }
  {
    auto c = CheckpointSchedule::online(3);
    EXPECT_THROW(c.all(), Error);
    EXPECT_THROW(c.totals(), Error);
    EXPECT_THROW(c.finish(1), Error);  // nothing run yet
  }
}
