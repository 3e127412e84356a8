// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/unit/test_adjoint_poisson.cpp — the Poisson problem under the sequential executor:
// known answer E; dE/df and dE/du0 against central differences with h = 1 (E is
// quadratic, so exact up to round-off: rel. err <= 1e-8); 1, 2, 7 tiles give bitwise the
// same E and gradients within 1e-14 (adjoint increments across tile edges add in another order);
// the Taylor test of check_gradient; the dot-product test of the affine map f -> u;
// nothing is checkpointed (linear stencils) while save-everything stores every sweep.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "poisson_problem.hpp"

using namespace stardiff;
using poisson::Problem;

namespace {
constexpr double kE = 16.5173570176708;

double primal_E(int nx, int ny, int iters, int tiles, const char* which = nullptr, int i = 0, int j = 0,
                double h = 0) {
  SequentialExecutor ex;
  Problem p(ex, nx, ny, tiles);
  p.setup();
  if (which) poisson::perturb(std::string(which) == "f" ? p.f : p.u, i, j, h);
  p.iterate(iters);
  p.submit_error();
  ex.wait_all();
  return p.err.value();
}

poisson::Gradient gradient(int nx, int ny, int iters, int tiles, SavePolicy pol = SavePolicy::Needed) {
  SequentialExecutor ex;
  Problem p(ex, nx, ny, tiles);
  p.setup();
  return poisson::record_and_reverse(p, iters, pol);
}
}  // namespace

TEST(AdjointPoisson, KnownAnswer) {
  SequentialExecutor ex;
  Problem p(ex, 20, 20, 1);
  EXPECT_NEAR(p.run(10), kE, kE * 1e-12);
  Problem q(ex, 20, 20, 3);
  EXPECT_NEAR(q.run(10), kE, kE * 1e-12);
}

TEST(AdjointPoisson, GradientMatchesCentralDifferences) {
  const int nx = 20, ny = 20, iters = 10;
  auto g = gradient(nx, ny, iters, 3);
  EXPECT_NEAR(g.E, kE, kE * 1e-12);
  const int pts[][2] = {{3, 4}, {10, 10}, {0, 0}, {19, 19}, {0, 17}, {12, 1}};
  for (auto& pt : pts) {
    const int i = pt[0], j = pt[1];
    double fd_f = (primal_E(nx, ny, iters, 1, "f", i, j, 1.0) - primal_E(nx, ny, iters, 1, "f", i, j, -1.0)) / 2.0;
    double fd_u = (primal_E(nx, ny, iters, 1, "u", i, j, 1.0) - primal_E(nx, ny, iters, 1, "u", i, j, -1.0)) / 2.0;
    EXPECT_NEAR(g.dE_df(i, j), fd_f, 1e-8 * std::fabs(fd_f)) << "dE/df at " << i << "," << j;
    EXPECT_NEAR(g.dE_du(i, j), fd_u, 1e-8 * std::fabs(fd_u)) << "dE/du at " << i << "," << j;
    EXPECT_NE(fd_f, 0.0);
  }
  // dE/df is zero in the halo (f is read on the interior only).
  EXPECT_EQ(g.dE_df(-1, 5), 0.0);
  // Linear stencils: the to-be-recorded analysis saves nothing but the reduction values.
  EXPECT_EQ(g.tape_nodes, 21u);
  EXPECT_LE(g.tape_bytes, 64u);
}

TEST(AdjointPoisson, TilesAgree) {
  auto g1 = gradient(20, 20, 10, 1), g2 = gradient(20, 20, 10, 2), g7 = gradient(20, 20, 10, 7);
  EXPECT_EQ(g2.E, g1.E);  // row partials folded in row order: E independent of the tiling
  EXPECT_EQ(g7.E, g1.E);
  double mf = 0, mu = 0;
  for (double v : g1.dE_df.data) mf = std::max(mf, std::fabs(v));
  for (double v : g1.dE_du.data) mu = std::max(mu, std::fabs(v));
  ASSERT_GT(mf, 0);
  for (std::size_t k = 0; k < g1.dE_df.data.size(); ++k) {
    EXPECT_NEAR(g2.dE_df.data[k], g1.dE_df.data[k], 1e-14 * mf);
    EXPECT_NEAR(g7.dE_df.data[k], g1.dE_df.data[k], 1e-14 * mf);
    EXPECT_NEAR(g2.dE_du.data[k], g1.dE_du.data[k], 1e-14 * mu);
    EXPECT_NEAR(g7.dE_du.data[k], g1.dE_du.data[k], 1e-14 * mu);
  }
}

TEST(AdjointPoisson, SaveEverythingGivesTheSameGradient) {
  auto a = gradient(20, 20, 10, 2, SavePolicy::Needed);
  auto b = gradient(20, 20, 10, 2, SavePolicy::All);
  EXPECT_EQ(a.dE_df.data, b.dE_df.data);
  EXPECT_EQ(a.dE_du.data, b.dE_du.data);
  // 10 x (u2 and u: the written interior points only, column runs of 20 of each padded row's
  // 22 points: 20 rows x 20 points x 8 B each).
  EXPECT_EQ(b.tape_bytes - a.tape_bytes, 10u * 2u * 20u * 20u * 8u);
}

TEST(AdjointPoisson, TaylorTest) {
  const int nx = 16, ny = 12, iters = 6;
  std::mt19937 gen(7);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<double> v(nx * ny);
  for (auto& x : v) x = dist(gen);
  auto g = gradient(nx, ny, iters, 2);
  double dJ = 0;
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) dJ += g.dE_df(i, j) * v[i + nx * j];
  auto J = [&](double h) {
    SequentialExecutor ex;
    Problem p(ex, nx, ny, 2);
    p.setup();
    auto f = p.f.values();
    p.f.set([&](int i, int j, int) {
      bool in = i >= 0 && i < nx && j >= 0 && j < ny;
      return f(i, j) + (in ? h * v[i + nx * j] : 0.0);
    });
    p.iterate(iters);
    p.submit_error();
    ex.wait_all();
    return p.err.value();
  };
  auto r = check_gradient(J, dJ, {1.0, 0.5, 0.25});
  EXPECT_TRUE(r.passed) << r.report();
  ASSERT_EQ(r.rates.size(), 2u) << r.report();
  EXPECT_NEAR(r.rates[0], 2.0, 1e-3) << r.report();  // E quadratic in f: remainder exactly c h^2
  // A wrong gradient fails the test.
  auto bad = check_gradient(J, dJ * 1.01, {1.0, 0.5, 0.25});
  EXPECT_FALSE(bad.passed) << bad.report();
  for (std::size_t k = 0; k < r.central.size(); ++k) EXPECT_NEAR(r.central[k], dJ, 1e-8 * std::fabs(dJ));
}

TEST(AdjointPoisson, DotProductTest) {
  const int nx = 12, ny = 10, iters = 5, n = nx * ny;
  auto u_of = [&](const std::vector<double>& fv) {
    // The linear part of f -> u: zero data and boundary, f = fv on the interior.
    SequentialExecutor ex;
    Problem p(ex, nx, ny, 3);
    p.setup();
    p.u.set([](int, int, int) { return 0.0; });
    p.u2.set([](int, int, int) { return 0.0; });
    p.f.set([&](int i, int j, int) { return (i >= 0 && i < nx && j >= 0 && j < ny) ? fv[i + nx * j] : 0.0; });
    p.iterate(iters);
    ex.wait_all();
    auto u = p.u.values();
    std::vector<double> out(n);
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) out[i + nx * j] = u(i, j);
    return out;
  };
  auto Jv = [&](const std::vector<double>& v) {
    auto a = u_of(v), b = u_of(std::vector<double>(n, 0.0));
    for (int k = 0; k < n; ++k) a[k] -= b[k];
    return a;
  };
  auto JTw = [&](const std::vector<double>& w) {
    SequentialExecutor ex;
    Problem p(ex, nx, ny, 3);
    p.setup();
    Tape tape;
    tape.start();
    p.iterate(iters);
    tape.stop();
    tape.seed<double>(p.u, [&](int i, int j, int, int) {
      return (i >= 0 && i < nx && j >= 0 && j < ny) ? w[i + nx * j] : 0.0;
    });
    tape.reverse();
    ex.wait_all();
    auto fa = p.f.adjoint();
    std::vector<double> out(n);
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) out[i + nx * j] = fa(i, j);
    return out;
  };
  auto r = dot_product_test(Jv, JTw, n, n, 3);
  EXPECT_LE(r.rel_diff, 1e-12) << r.jv_w << " vs " << r.v_jtw;
  EXPECT_GT(std::fabs(r.jv_w), 0.0);
}

TEST(AdjointPoisson, TaskGraphShape) {
  // One task per tile per loop, halo exchanges only between neighbouring tiles of u.
  SequentialExecutor inner;
  RecordingExecutor rec(&inner);
  const int tiles = 4, iters = 3;
  Problem p(rec, 24, 24, tiles);
  p.setup();
  auto g = poisson::record_and_reverse(p, iters);
  auto c = rec.counts();
  EXPECT_EQ(c["loop_jacobi"], std::size_t(iters * tiles));
  EXPECT_EQ(c["loop_copy"], std::size_t(iters * tiles));
  EXPECT_EQ(c["halo_exchange"], std::size_t(iters * (tiles - 1)));
  EXPECT_EQ(c["loop_jacobi_adjoint"], std::size_t(iters * tiles));
  EXPECT_EQ(c["halo_reverse"], std::size_t(iters * (tiles - 1)));
  EXPECT_EQ(c["rows_copy"], 2u);  // the reduction's value before and after the error loop
  EXPECT_GT(std::fabs(g.dE_df(5, 5)), 0.0);
}
