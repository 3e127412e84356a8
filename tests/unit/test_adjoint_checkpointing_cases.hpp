// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/unit/test_adjoint_checkpointing_cases.hpp — Poisson and the nonlinear stencil recorded
// as time steps under a checkpointing strategy (unit and StarPU checkpointing tests share them).
#pragma once
#include <gtest/gtest.h>

#include <array>
#include <functional>
#include <vector>

#include "nonlinear_diffusion.hpp"
#include "poisson_problem.hpp"

namespace stardiff::ckpt_cases {

struct Result {
  double E = 0, M = 0;
  std::array<int, 3> M_arg{0, 0, 0};  // the MAX reduction's arg-extremum after reverse()
  std::vector<double> du, df;  // adjoints of u (and f for Poisson), halo included
  std::int64_t recomputed = 0, steps = 0;
  int snapshots_held = 0;
  std::size_t peak_snapshot_bytes = 0, peak_bytes = 0, bytes = 0;
};

inline void report(Tape& t, Result& r) {
  r.recomputed = t.recomputed_steps();
  r.steps = t.steps();
  r.snapshots_held = t.snapshots_held();
  r.peak_snapshot_bytes = t.peak_snapshot_bytes();
  r.peak_bytes = t.peak_bytes();
  r.bytes = t.bytes();
}

// Poisson: `iters` Jacobi iterations as steps (state u), then the error loop.
inline Result poisson(Executor& ex, const Checkpointing& c, int iters, int nx = 24, int ny = 20, int tiles = 3,
                   SavePolicy pol = SavePolicy::Needed) {
  stardiff::poisson::Problem p(ex, nx, ny, tiles);
  p.setup();
  Tape tape("ckpt_poisson", pol);
  tape.set_checkpointing(c);
  tape.start();
  tape.step({p.u});
  for (int k = 0; k < iters; ++k) {
    p.iterate(1);
    tape.step();
  }
  p.submit_error();
  tape.stop();
  tape.seed(p.err, 1.0);
  tape.reverse();
  ex.wait_all();
  Result r;
  r.E = p.err.value();
  r.du = p.u.adjoint().data;
  r.df = p.f.adjoint().data;
  report(tape, r);
  return r;
}

// The nonlinear stencil: a recorded prefix loop, `steps` steps (state u), the error loop;
// with reductions, E and M are seeded (1 and 0.5). at_turn (if set) runs between the forward
// pass and reverse().
inline Result nonlinear(Executor& ex, const Checkpointing& c, int steps, bool reductions, int n = 20, int tiles = 3,
                     SavePolicy pol = SavePolicy::Needed, const std::function<void()>& at_turn = {}) {
  stardiff::nonlinear::Problem p(ex, n, tiles, reductions);
  p.setup();
  Tape tape("ckpt_nonlinear", pol);
  tape.set_checkpointing(c);
  tape.start();
  p.prefix();
  tape.step({p.u});
  for (int k = 0; k < steps; ++k) {
    p.step();
    tape.step({p.u});
  }
  p.submit_error();
  tape.stop();
  if (at_turn) at_turn();
  tape.seed(p.err, 1.0);
  if (reductions) tape.seed(p.max, 0.5);
  tape.reverse();
  ex.wait_all();
  Result r;
  r.E = p.err.value();
  r.M = p.max.value();
  if (reductions) r.M_arg = p.max.arg();
  r.du = p.u.adjoint().data;
  report(tape, r);
  return r;
}

// Recomputations the schedule counts when the run stops after `ran` of the declared steps.
inline std::int64_t schedule_count(const Checkpointing& c, std::int64_t ran) {
  CheckpointSchedule s = c.kind == Checkpointing::Kind::Revolve ? CheckpointSchedule::offline(c.steps, c.snapshots)
                                                                : CheckpointSchedule::online(c.snapshots);
  for (std::int64_t k = 0; k < ran; ++k) s.forward_boundary(k);
  s.finish(ran);
  return s.totals().recomputed;
}

// Gradients and values of two runs are bitwise equal (what names the pair in failures).
inline void expect_same(const Result& a, const Result& b, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(a.E, b.E);
  EXPECT_EQ(a.M, b.M);
  EXPECT_EQ(a.M_arg, b.M_arg);
  EXPECT_EQ(a.du, b.du);
  EXPECT_EQ(a.df, b.df);
}

}  // namespace stardiff::ckpt_cases
