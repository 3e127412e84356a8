// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/unit/test_adjoint_fixed_point.cpp — reverse accumulation (FixedPointAdjoint) under
// the sequential executor: on converged problems the gradient equals the full tape's within
// 1e-10 relative (Poisson; the nonlinear fixed point with a prefix and a tail on the outer
// tape, whose adjoints read data the fixed point overwrites); its memory is the same for
// different iteration counts (the full tape's grows); a Taylor test of dJ/dq through
// prefix, fixed point and tail; the dot-product test of the affine map f -> u* (Poisson);
// the report (passes, change); not converged / not finite: Error or status; bad options
// and misuse: Errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "support/error_text.hpp"
#include "poisson_problem.hpp"
#include "unit/test_adjoint_fixed_point_cases.hpp"

using namespace stardiff;
using poisson::Problem;

namespace {
FixedPointOptions opts(double tol, int max_it = 100000) {
  FixedPointOptions o;
  o.tolerance = tol;
  o.max_iterations = max_it;
  return o;
}

std::vector<double> concat(const poisson::Gradient& g) {
  std::vector<double> v = g.dE_df.data;
  v.insert(v.end(), g.dE_du.data.begin(), g.dE_du.data.end());
  return v;
}

poisson::Gradient poisson_rev(int nx, int ny, int iters, int tiles, FixedPointOptions o,
                              SavePolicy pol = SavePolicy::Needed) {
  SequentialExecutor ex;
  Problem p(ex, nx, ny, tiles);
  p.setup();
  return poisson::rev_acc_gradient(p, iters, o, pol);
}
poisson::Gradient poisson_full(int nx, int ny, int iters, int tiles, SavePolicy pol = SavePolicy::Needed) {
  SequentialExecutor ex;
  Problem p(ex, nx, ny, tiles);
  p.setup();
  return poisson::record_and_reverse(p, iters, pol);
}
}  // namespace

TEST(AdjointFixedPoint, PoissonMatchesFullTapeWhenConverged) {
  const int nx = 10, ny = 8, iters = 900;
  auto full = poisson_full(nx, ny, iters, 3);
  auto rev = poisson_rev(nx, ny, iters, 3, opts(1e-13));
  EXPECT_EQ(rev.E, full.E);  // the same primal
  EXPECT_EQ(rev.fixed_point.status, FixedPointStatus::Converged);
  EXPECT_LE(rev.fixed_point.change, 1e-13);
  EXPECT_GT(rev.fixed_point.iterations, 100);
  EXPECT_LT(rev.fixed_point.iterations, iters);
  EXPECT_LE(fp_cases::rel_diff(concat(rev), concat(full)), 1e-10);
  // dE/du is O(1) on the boundary (u's halo is a parameter) and ~0 inside (initial guess).
  EXPECT_GT(std::fabs(rev.dE_du(-1, 3)), 1e-6);
  EXPECT_LT(std::fabs(rev.dE_du(4, 3)), 1e-12 * std::fabs(rev.dE_du(-1, 3)) + 1e-14);
  // A loose tolerance stops early and is visibly less accurate.
  auto loose = poisson_rev(nx, ny, iters, 3, opts(1e-3));
  EXPECT_LT(loose.fixed_point.iterations, rev.fixed_point.iterations);
  EXPECT_GT(fp_cases::rel_diff(concat(loose), concat(full)), 1e-8);
}

TEST(AdjointFixedPoint, PoissonMemoryIndependentOfIterationCount) {
  const int nx = 10, ny = 8;
  auto a = poisson_rev(nx, ny, 300, 2, opts(1e-12));
  auto b = poisson_rev(nx, ny, 900, 2, opts(1e-12));
  auto c = poisson_rev(nx, ny, 900, 2, opts(1e-6));
  EXPECT_EQ(a.tape_bytes, b.tape_bytes);
  EXPECT_EQ(b.tape_bytes, c.tape_bytes);  // fewer adjoint passes, same memory
  EXPECT_NE(b.fixed_point.iterations, c.fixed_point.iterations);
  // The state is u's interior (u2 is written before it is read): 12 B per point on the host,
  // nothing saved (linear stencils), the error reduction's 3 values on the outer tape.
  EXPECT_EQ(b.fixed_point.host_bytes, static_cast<std::size_t>(nx * ny) * 12u);
  EXPECT_EQ(b.fixed_point.tape_bytes, 0u);
  EXPECT_EQ(b.fixed_point.copy_bytes, 0u);
  EXPECT_EQ(b.tape_bytes, 24u + nx * ny * 12u);
  // Saving everything (OPS's policy): the full tape grows with the iterations, rev-acc not.
  auto fa = poisson_full(nx, ny, 300, 2, SavePolicy::All), fb = poisson_full(nx, ny, 900, 2, SavePolicy::All);
  EXPECT_GT(fb.tape_bytes, 2 * fa.tape_bytes);
  auto ra = poisson_rev(nx, ny, 300, 2, opts(1e-12), SavePolicy::All);
  auto rb = poisson_rev(nx, ny, 900, 2, opts(1e-12), SavePolicy::All);
  EXPECT_EQ(ra.tape_bytes, rb.tape_bytes);
  EXPECT_LT(rb.tape_bytes, fa.tape_bytes);
  EXPECT_LE(fp_cases::rel_diff(concat(rb), concat(poisson_full(nx, ny, 900, 2))), 1e-10);
}

TEST(AdjointFixedPoint, NonlinearWithPrefixAndTailMatchesFullTape) {
  SequentialExecutor ex;
  const int nx = 12, ny = 9, tiles = 3;
  auto full = fp_cases::full(ex, nx, ny, tiles, 160);
  auto rev = fp_cases::rev_acc(ex, nx, ny, tiles, 160, opts(1e-14));
  EXPECT_EQ(rev.J, full.J);
  EXPECT_EQ(rev.report.status, FixedPointStatus::Converged);
  EXPECT_LE(fp_cases::rel_diff(rev.dq, full.dq), 1e-10);
  // The step's adjoint reads u: the nested tape saves u once, the copies hold u at the end
  // of the iteration and (read by the prefix's adjoint) at the section's entry.
  EXPECT_GT(rev.report.tape_bytes, 0u);
  EXPECT_GT(rev.report.copy_bytes, 0u);
  auto rev2 = fp_cases::rev_acc(ex, nx, ny, tiles, 80, opts(1e-14));
  EXPECT_EQ(rev.bytes, rev2.bytes);
  auto full2 = fp_cases::full(ex, nx, ny, tiles, 80);
  EXPECT_GT(full.bytes, full2.bytes);
  EXPECT_LT(rev.bytes, full2.bytes);
}

TEST(AdjointFixedPoint, ScratchDatNeedsEndOfIterationCopies) {
  // Four steps u -> u2 -> w -> u2 -> u per iteration: the last step's adjoint reads u2's
  // second value; each pass restores u2 to its first, so later passes need the end copy.
  SequentialExecutor ex;
  const int nx = 10, ny = 11, tiles = 2;
  auto full = fp_cases::full(ex, nx, ny, tiles, 60, true);
  auto rev = fp_cases::rev_acc(ex, nx, ny, tiles, 60, opts(1e-14), true);
  EXPECT_EQ(rev.J, full.J);
  EXPECT_EQ(rev.report.status, FixedPointStatus::Converged);
  EXPECT_LE(fp_cases::rel_diff(rev.dq, full.dq), 1e-10);
  EXPECT_GT(rev.report.copy_bytes, 0u);
}

TEST(AdjointFixedPoint, NonlinearTaylorTest) {
  SequentialExecutor ex;
  const int nx = 12, ny = 9, tiles = 2, iters = 200;
  auto rev = fp_cases::rev_acc(ex, nx, ny, tiles, iters, opts(1e-14));
  ASSERT_EQ(rev.report.status, FixedPointStatus::Converged);
  std::mt19937 gen(3);
  std::uniform_real_distribution<double> dist(-1, 1);
  const int ex_ = nx + 2, ey = ny + 2;
  std::vector<double> v(static_cast<std::size_t>(ex_ * ey));
  for (auto& x : v) x = dist(gen);
  auto vf = [&](int i, int j) { return v[static_cast<std::size_t>((i + 1) + ex_ * (j + 1))]; };
  double dJ = 0;
  for (int j = -1; j <= ny; ++j)
    for (int i = -1; i <= nx; ++i) dJ += rev.dq[static_cast<std::size_t>((i + 1) + ex_ * (j + 1))] * vf(i, j);
  auto J = [&](double h) {
    fp_cases::Nonlinear p(ex, nx, ny, tiles);
    return p.primal(iters, h, vf);
  };
  auto r = check_gradient(J, dJ, {1e-3, 5e-4, 2.5e-4});
  EXPECT_TRUE(r.passed) << r.report();
  for (double c : r.central) EXPECT_NEAR(c, dJ, 1e-6 * std::fabs(dJ)) << r.report();
  auto bad = check_gradient(J, dJ * 1.01, {1e-3, 5e-4, 2.5e-4});
  EXPECT_FALSE(bad.passed) << bad.report();
}

TEST(AdjointFixedPoint, PoissonDotProductTest) {
  // The affine map f -> u* (converged): J v = u*(f + v) - u*(f) on the interior,
  // J^T w = the rev-acc adjoint of f seeded with u_bar = w (the section is the whole tape).
  const int nx = 9, ny = 7, iters = 1500, n = nx * ny;
  auto u_star = [&](const std::vector<double>& dv) {
    SequentialExecutor ex;
    Problem p(ex, nx, ny, 2);
    p.setup();
    auto f = p.f.values();
    p.f.set([&](int i, int j, int) {
      return f(i, j) + ((i >= 0 && i < nx && j >= 0 && j < ny) ? dv[i + nx * j] : 0.0);
    });
    p.iterate(iters);
    ex.wait_all();
    auto u = p.u.values();
    std::vector<double> out(n);
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) out[i + nx * j] = u(i, j);
    return out;
  };
  const std::vector<double> base = u_star(std::vector<double>(n, 0.0));
  auto Jv = [&](const std::vector<double>& dv) {
    auto y = u_star(dv);
    for (int k = 0; k < n; ++k) y[k] -= base[k];
    return y;
  };
  auto JTw = [&](const std::vector<double>& w) {
    SequentialExecutor ex;
    Problem p(ex, nx, ny, 2);
    p.setup();
    Tape tape("dot");
    tape.start();
    FixedPointAdjoint fp(tape, "jacobi", opts(1e-15));
    p.iterate(iters - 1);
    fp.record([&] { p.iterate(1); });
    tape.stop();
    tape.seed<double>(p.u, [&](int i, int j, int, int) {
      return (i >= 0 && i < nx && j >= 0 && j < ny) ? w[i + nx * j] : 0.0;
    });
    tape.reverse();
    ex.wait_all();
    EXPECT_EQ(fp.status(), FixedPointStatus::Converged);
    auto df = p.f.adjoint();
    std::vector<double> out(n);
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) out[i + nx * j] = df(i, j);
    return out;
  };
  auto r = dot_product_test(Jv, JTw, n, n, 11);
  EXPECT_LE(r.rel_diff, 1e-10) << r.jv_w << " vs " << r.v_jtw;
  EXPECT_NE(r.jv_w, 0.0);
}

TEST(AdjointFixedPoint, NotConvergedIsAnErrorOrAStatus) {
  SequentialExecutor ex;
  {
    Problem p(ex, 10, 8, 2);
    p.setup();
    EXPECT_ERROR_HAS(poisson::rev_acc_gradient(p, 50, opts(1e-12, 3)), "FixedPointAdjoint 'jacobi'",
                     "not converged after 3 passes", "tolerance 1e-12");
  }
  {
    Problem p(ex, 10, 8, 2);
    p.setup();
    FixedPointOptions o = opts(1e-12, 3);
    o.throw_on_failure = false;
    auto g = poisson::rev_acc_gradient(p, 50, o);
    EXPECT_EQ(g.fixed_point.status, FixedPointStatus::NotConverged);
    EXPECT_EQ(g.fixed_point.iterations, 3);
    EXPECT_GT(g.fixed_point.change, 1e-12);
  }
  {
    Problem p(ex, 10, 8, 2);
    p.setup();
    poisson::perturb(p.f, 3, 3, std::numeric_limits<double>::quiet_NaN());
    EXPECT_ERROR_HAS(poisson::rev_acc_gradient(p, 20, opts(1e-12)), "not finite after 1 passes");
  }
}

TEST(AdjointFixedPoint, BadOptions) {
  SequentialExecutor ex;
  Problem p(ex, 6, 5, 1);
  p.setup();
  Tape tape("bad");
  tape.start();
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (double tol : {0.0, -1e-8, nan, inf})
    EXPECT_ERROR_HAS(FixedPointAdjoint(tape, "x", opts(tol)), "FixedPointAdjoint 'x' (tape 'bad')",
                     "tolerance must be positive and finite");
  for (int m : {0, -4}) EXPECT_ERROR_HAS(FixedPointAdjoint(tape, "x", opts(1e-8, m)), "max_iterations must be positive");
  EXPECT_TRUE(tape.recording());  // a refused section leaves the tape recording
  tape.stop();
}

TEST(AdjointFixedPoint, Misuse) {
  SequentialExecutor ex;
  Problem p(ex, 6, 5, 1);
  p.setup();
  {
    Tape tape("t");
    EXPECT_ERROR_HAS(FixedPointAdjoint(tape, "x"), "the tape is not recording");
    tape.set_checkpointing(Checkpointing::revolve(4, 2));
    tape.start();
    EXPECT_ERROR_HAS(FixedPointAdjoint(tape, "x"), "checkpointed with revolve(4, 2)", "save-all");
    tape.stop();
  }
  {
    Tape tape("t");
    tape.start();
    FixedPointAdjoint fp(tape, "x");
    EXPECT_FALSE(tape.recording());  // the section records, the outer tape does not
    EXPECT_ERROR_HAS(FixedPointAdjoint(tape, "y"), "open fixed-point section 'x'");
    EXPECT_ERROR_HAS(tape.seed(p.err, 1.0), "has recorded nothing");  // seeding before recording
    Tape other("other");
    EXPECT_ERROR_HAS(other.start(), "another tape is recording");
    EXPECT_ERROR_HAS(fp.record([] {}), "recorded no loop on active data");
    EXPECT_ERROR_HAS(fp.record([&] { p.iterate(1); }), "called again");
    EXPECT_TRUE(tape.recording());  // closed (broken): the outer records again
    p.submit_error();
    tape.stop();
    EXPECT_ERROR_HAS(tape.seed(p.err, 1.0), "fixed-point section 'x'", "recorded no loop");
    EXPECT_ERROR_HAS(tape.reverse(), "fixed-point section 'x'");
    tape.clear();  // recovers
    tape.start();
    p.submit_error();
    tape.stop();
    tape.seed(p.err, 1.0);
    tape.reverse();
  }
  {
    Tape tape("t");
    tape.start();
    { FixedPointAdjoint fp(tape, "x"); p.iterate(2); }  // closed without record()
    EXPECT_TRUE(tape.recording());
    p.submit_error();
    tape.stop();
    EXPECT_ERROR_HAS(tape.seed(p.err, 1.0), "fixed-point section 'x' was closed without record()");
  }
  {
    Tape tape("t");
    tape.start();
    FixedPointAdjoint fp(tape, "x");
    p.iterate(1);
    fp.record([&] { p.iterate(1); });
    EXPECT_TRUE(tape.recording());
    p.submit_error();
    tape.stop();
    tape.seed(p.err, 1.0);
    EXPECT_ERROR_HAS(p.f.adjoint(), "tape");  // not reversed yet
    tape.reverse();
    EXPECT_ERROR_HAS(tape.reverse(), "already reversed");  // reversing twice
    EXPECT_ERROR_HAS(tape.seed(p.err, 1.0), "already reversed");
    EXPECT_GT(fp.iterations(), 0);
    EXPECT_NO_THROW(p.f.adjoint());
  }
  {
    // The outer tape goes first: the section is closed, nothing dangles.
    auto tape = std::make_unique<Tape>("t");
    tape->start();
    FixedPointAdjoint fp(*tape, "x");
    tape.reset();
    EXPECT_ERROR_HAS(fp.record([&] { p.iterate(1); }), "destroyed or cleared");
    p.iterate(1);  // no recorder is active
  }
}
