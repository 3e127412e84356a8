// SPDX-License-Identifier: LGPL-2.1-or-later
// apps/cde/test_cde.cpp — the stardiff-cde model (cde_solver.hpp) on the sequential executor:
// L = 1 prices within 1e-4 relative of the little-trap price on four parameter sets (in 't Hout-
// Foulon cases A-D; B and D with r_f > 0) on the coarsest grid tried that meets it (300 x 150,
// 60 steps), with damping steps too; spatial order ~2 on three grids; constant leverage c
// equals Heston with (c^2 v0, c^2 theta, c sigma); a unit leverage file is bitwise the plain
// model; step marks on a tape; bad input and leverage files raise Error. Adjoint Greeks (40 x 20
// nodes, 20 steps, damping, r_f > 0): every Greek against Richardson-extrapolated central
// differences of the same discrete model to 1e-6 relative, a Taylor test of the parameter
// gradient, the leverage gradient against central differences at nodes, Revolve bitwise equal to
// save-all, the adjoint solver's price bitwise the primal's. The adjoint step external
// (cde_hv_step): a dot-product test of its adjoint in u (HV, Douglas, t-dependent leverage) and
// in the parameters (central differences), and its Greeks against the recorded loop-level
// path's (CdeConfig::recorded_adjoint) to 1e-11 relative (not bitwise: other summation orders);
// the stages kept by the forward (CdeConfig::stage_bytes: all, none, some steps; Revolve) give
// the recomputing reverse's Greeks bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <string>

#include "cde_solver.hpp"
#include "heston_analytic.hpp"
#include "leverage_csv.hpp"
#include "stardiff/adjoint/gradient_check.hpp"
#include "stardiff/adjoint/tape.hpp"
#include "stardiff/runtime/error.hpp"
#include "stardiff/runtime/executor.hpp"

using namespace stardiff;
using namespace stardiff::cde;

namespace {

HestonParams params(double T, double v0, double kappa, double theta, double sigma, double rho, double rd, double rf) {
  HestonParams p;
  p.s0 = 100, p.K = 100, p.T = T, p.v0 = v0, p.kappa = kappa, p.theta = theta, p.sigma = sigma, p.rho = rho;
  p.rd = rd, p.rf = rf;
  return p;
}
const HestonParams kCaseA = params(1, 0.04, 1.5, 0.04, 0.3, -0.9, 0.025, 0.0);
const HestonParams kCaseB = params(1, 0.12, 3.0, 0.12, 0.04, 0.6, 0.01, 0.04);
const HestonParams kCaseC = params(3, 0.0707, 0.6067, 0.0707, 0.2928, -0.7571, 0.03, 0.0);
const HestonParams kCaseD = params(0.25, 0.06, 2.5, 0.06, 0.5, -0.1, 0.0507, 0.0469);

double solve(const CdeConfig& c, std::vector<double>* u = nullptr) {
  SequentialExecutor ex;
  CdeSolver s(ex, c);
  s.run();
  if (u) *u = s.solution();
  return s.price();
}
CdeConfig config(const HestonParams& p, int ns, int nv, int steps, int damping = 0) {
  CdeConfig c;
  c.p = p, c.ns = ns, c.nv = nv, c.steps = steps, c.damping = damping;
  return c;
}

TEST(Cde, MatchesSemiAnalytic) {
  for (const HestonParams& p : {kCaseA, kCaseB, kCaseC, kCaseD}) {
    const double exact = heston_call(p), fd = solve(config(p, 300, 150, 60));
    EXPECT_LE(std::abs(fd - exact), 1e-4 * exact) << "T=" << p.T << " kappa=" << p.kappa << " fd=" << fd
                                                  << " exact=" << exact;
  }
  const double exact = heston_call(kCaseA), damped = solve(config(kCaseA, 300, 150, 58, 2));
  EXPECT_LE(std::abs(damped - exact), 1e-4 * exact) << damped;
}

TEST(Cde, SpatialOrderTwo) {
  const double exact = heston_call(kCaseA);
  double e[3];
  for (int k = 0; k < 3; ++k) e[k] = std::abs(solve(config(kCaseA, 40 << k, 20 << k, 200)) - exact);
  for (int k = 0; k < 2; ++k) {
    const double order = std::log2(e[k] / e[k + 1]);
    EXPECT_GT(order, 1.8) << "grids " << (40 << k) << " -> " << (80 << k) << ": " << e[k] << " -> " << e[k + 1];
    EXPECT_LT(order, 2.3) << "grids " << (40 << k) << " -> " << (80 << k) << ": " << e[k] << " -> " << e[k + 1];
  }
}

TEST(Cde, ConstantLeverageIsScaledHeston) {
  CdeConfig c = config(kCaseA, 300, 150, 60);
  auto lev = std::make_shared<Leverage>();
  lev->t = {0.0, 1.0};
  lev->s = {50.0, 150.0};
  lev->L = {1.2, 1.2, 1.2, 1.2};
  c.leverage = lev;
  HestonParams q = kCaseA;
  q.v0 *= 1.44, q.theta *= 1.44, q.sigma *= 1.2;
  const double exact = heston_call(q), fd = solve(c);
  EXPECT_LE(std::abs(fd - exact), 2e-4 * exact) << fd << " vs " << exact;
  EXPECT_GT(std::abs(fd - heston_call(kCaseA)), 100 * 2e-4 * exact);  // the leverage matters
}

TEST(Cde, UnitLeverageFileIsBitwisePlain) {
  CdeConfig c = config(kCaseB, 60, 30, 10, 1);
  std::vector<double> plain, lev;
  solve(c, &plain);
  c.leverage = std::make_shared<Leverage>(read_leverage_csv(STARDIFF_CDE_TESTDATA "/leverage_one.csv"));
  solve(c, &lev);
  ASSERT_EQ(plain.size(), lev.size());
  for (std::size_t q = 0; q < plain.size(); ++q) ASSERT_EQ(plain[q], lev[q]) << q;
}

// Primal mode runs the explicit stages fused with the s solves (cde_predictor_s / _corrector_s,
// which read ghost rows on several tiles), adjoint mode the recorded par_loops and cde_solve_s:
// the same arithmetic, so the same bits (plain, with damping, and a leverage that depends on t;
// 1 and 3 tiles).
TEST(Cde, PrimalFusedIsBitwiseAdjointMode) {
  const auto skew = std::make_shared<Leverage>(read_leverage_csv(STARDIFF_CDE_TESTDATA "/leverage_skew.csv"));
  for (int variant = 0; variant < 6; ++variant) {
    SCOPED_TRACE(variant);
    CdeConfig c = config(kCaseD, 48, 24, 8, variant % 3 == 1 ? 2 : 0);
    if (variant % 3 == 2) c.leverage = skew;
    c.tiles = variant < 3 ? 3 : 1;
    std::vector<double> fused, recorded;
    solve(c, &fused);
    c.adjoint = true;
    for (bool loops : {false, true}) {  // the step external, the recorded loops
      c.recorded_adjoint = loops;
      solve(c, &recorded);
      ASSERT_EQ(fused.size(), recorded.size());
      for (std::size_t q = 0; q < fused.size(); ++q) ASSERT_EQ(fused[q], recorded[q]) << q << " loops " << loops;
    }
  }
}

TEST(Cde, StepMarks) {
  SequentialExecutor ex;
  CdeSolver s(ex, config(kCaseA, 20, 10, 7, 2));
  Tape tape("cde");
  tape.start();
  s.run(&tape);
  tape.stop();
  EXPECT_EQ(tape.steps(), 9);
  EXPECT_TRUE(std::isfinite(s.price()));
}

// Small adjoint contract: 40 x 20 nodes, 18 HV + 2 damping steps, r_f > 0, s0 and v0 off the nodes.
CdeConfig small(std::shared_ptr<const Leverage> lev = nullptr) {
  HestonParams p = kCaseA;
  p.rf = 0.01, p.s0 = 97.0, p.v0 = 0.05;
  CdeConfig c = config(p, 40, 20, 18, 2);
  c.leverage = std::move(lev);
  return c;
}
Greeks greeks(CdeConfig c, const Checkpointing& ck = Checkpointing::save_all(), double* primal = nullptr) {
  SequentialExecutor ex;
  if (primal) *primal = solve(c);
  c.adjoint = true;
  CdeSolver s(ex, c);
  return s.greeks(ck);
}
// Richardson extrapolation of central differences with steps h and h/2 (error O(h^4)).
double richardson(const std::function<double(double)>& f, double h) {
  const double d1 = (f(h) - f(-h)) / (2 * h), d2 = (f(h / 2) - f(-h / 2)) / h;
  return (4 * d2 - d1) / 3;
}
// The parameters (kappa, theta, sigma, rho, r_d) moved by h along dir, and a gradient's
// (Greeks or Adjoints: fields kappa .. rd) derivative along dir.
constexpr double kDir[5] = {0.3, 0.01, 0.05, 0.1, 0.005};
void shift_params(HestonParams& p, double h, const double (&dir)[5] = kDir) {
  p.kappa += h * dir[0], p.theta += h * dir[1], p.sigma += h * dir[2], p.rho += h * dir[3], p.rd += h * dir[4];
}
template <class G>
double along(const G& g, const double (&dir)[5] = kDir) {
  return g.kappa * dir[0] + g.theta * dir[1] + g.sigma * dir[2] + g.rho * dir[3] + g.rd * dir[4];
}
std::shared_ptr<Leverage> skew() {
  return std::make_shared<Leverage>(read_leverage_csv(STARDIFF_CDE_TESTDATA "/leverage_skew.csv"));
}

TEST(CdeGreeks, MatchCentralDifferences) {
  double primal = 0;
  const CdeConfig c0 = small();
  const Greeks g = greeks(c0, Checkpointing::save_all(), &primal);
  EXPECT_EQ(g.price, primal);  // the adjoint solver runs the same arithmetic
  struct P {
    const char* name;
    double HestonParams::*field;
    double grad;
  } ps[] = {{"kappa", &HestonParams::kappa, g.kappa}, {"theta", &HestonParams::theta, g.theta},
            {"sigma", &HestonParams::sigma, g.sigma}, {"rho", &HestonParams::rho, g.rho},
            {"rd", &HestonParams::rd, g.rd}};
  for (const P& q : ps) {
    const double x = c0.p.*q.field, h = 1e-3 * std::abs(x);
    const double fd = richardson([&](double d) {
      CdeConfig c = c0;
      c.p.*q.field = x + d;
      return solve(c);
    }, h);
    EXPECT_NEAR(q.grad, fd, 1e-6 * std::abs(fd)) << q.name;
  }
  // delta, gamma, d/d v0: the interpolant of the same u(T) (bumps keep the 4 x 4 window).
  std::vector<double> u;
  SequentialExecutor ex;
  CdeSolver s(ex, c0);
  s.run();
  u = s.solution();
  auto at = [&](double ds, double dv) { return interp_bicubic(s.s(), s.v(), u, c0.p.s0 + ds, c0.p.v0 + dv); };
  const double delta = richardson([&](double d) { return at(d, 0); }, 1e-2);
  const double gamma = (at(1e-2, 0) - 2 * at(0, 0) + at(-1e-2, 0)) / 1e-4;
  const double dv0 = richardson([&](double d) { return at(0, d); }, 1e-4);
  EXPECT_NEAR(g.delta, delta, 1e-6 * std::abs(delta));
  EXPECT_NEAR(g.gamma, gamma, 1e-6 * std::abs(gamma));
  EXPECT_NEAR(g.v0, dv0, 1e-6 * std::abs(dv0));
  EXPECT_NEAR(g.vega, 2 * std::sqrt(c0.p.v0) * dv0, 1e-6 * std::abs(g.vega));
  // Sanity: a call's delta in (0, 1), gamma > 0, vega > 0, rho (r_d) > 0.
  EXPECT_GT(g.delta, 0);
  EXPECT_LT(g.delta, 1);
  EXPECT_GT(g.gamma, 0);
  EXPECT_GT(g.v0, 0);
  EXPECT_GT(g.rd, 0);
}

TEST(CdeGreeks, TaylorTest) {
  const CdeConfig c0 = small();
  const Greeks g = greeks(c0);
  const TaylorTest t = check_gradient([&](double h) {
    CdeConfig c = c0;
    shift_params(c.p, h);
    return solve(c);
  }, along(g), {0.4, 0.2, 0.1, 0.05});
  EXPECT_TRUE(t.passed) << t.report();
  EXPECT_FALSE(t.roundoff_only) << t.report();
}

TEST(CdeGreeks, LeverageGradient) {
  const auto lev = skew();
  const CdeConfig c0 = small(lev);
  double primal = 0;
  const Greeks g = greeks(c0, Checkpointing::save_all(), &primal);
  EXPECT_EQ(g.price, primal);
  ASSERT_EQ(g.leverage.size(), lev->L.size());
  // Parameters with leverage too, and every leverage node with a visible gradient.
  const double fdk = richardson([&](double d) {
    CdeConfig c = c0;
    c.p.rho += d;
    return solve(c);
  }, 1e-3);
  EXPECT_NEAR(g.rho, fdk, 1e-6 * std::abs(fdk));
  double big = 0;
  for (double x : g.leverage) big = std::max(big, std::abs(x));
  ASSERT_GT(big, 0);
  int checked = 0;
  for (std::size_t q : {std::size_t{2}, std::size_t{6}, std::size_t{7}, std::size_t{13}, std::size_t{14}}) {
    const double fd = richardson([&](double d) {
      auto l = std::make_shared<Leverage>(*lev);
      l->L[q] += d;
      CdeConfig c = c0;
      c.leverage = l;
      return solve(c);
    }, 1e-3);
    EXPECT_NEAR(g.leverage[q], fd, 1e-6 * std::max(std::abs(fd), 1e-3 * big)) << "node " << q;
    checked += std::abs(fd) > 1e-3 * big;
  }
  EXPECT_GE(checked, 3);
}

TEST(CdeGreeks, RevolveBitwiseSaveAll) {
  for (int variant = 0; variant < 4; ++variant) {
    CdeConfig c = small(variant % 2 ? skew() : nullptr);
    c.recorded_adjoint = variant >= 2;
    const Greeks a = greeks(c), r = greeks(c, Checkpointing::revolve(20, 3));
    EXPECT_EQ(a.recomputed_steps, 0);
    EXPECT_GT(r.recomputed_steps, 20);
    EXPECT_LT(r.peak_bytes, a.peak_bytes);
    for (auto f : {&Greeks::price, &Greeks::delta, &Greeks::gamma, &Greeks::v0, &Greeks::kappa, &Greeks::theta,
                   &Greeks::sigma, &Greeks::rho, &Greeks::rd})
      EXPECT_EQ(a.*f, r.*f);
    EXPECT_EQ(a.leverage, r.leverage);
  }
}

// The stages kept by the forward (CdeConfig::stage_bytes) against recomputed ones: the same
// kernels on the same inputs, so the same Greeks bit for bit; all steps kept (default), none (0),
// the first few (a budget between), none under Revolve; one solver's repeated taped runs; every
// kept step's adjoint takes its stages (U after the step handed over from the next one). HV with
// damping steps, with and without a t-dependent leverage.
TEST(CdeGreeks, KeptStagesBitwiseRecomputed) {
  for (auto lev : {std::shared_ptr<Leverage>{}, skew()}) {
    CdeConfig c = small(lev);
    const int total = c.steps + c.damping;
    const std::size_t grid = sizeof(double) * static_cast<std::size_t>(c.ns + 2) * (c.nv + 3);
    ASSERT_GE(c.damping, 1);
    const Greeks all = greeks(c);
    EXPECT_EQ(all.kept_steps, total);
    EXPECT_EQ(all.kept_bytes, grid * (c.damping + 3 * c.steps));
    EXPECT_EQ(all.kept_used, total);  // every step's adjoint took its stages (U handed over)
    c.stage_bytes = 0;
    const Greeks none = greeks(c);
    EXPECT_EQ(none.kept_steps, 0);
    c.stage_bytes = grid * (c.damping + 3 * 3) + grid;  // the damping steps and three HV steps
    const Greeks some = greeks(c);
    EXPECT_EQ(some.kept_steps, c.damping + 3);
    EXPECT_EQ(some.kept_used, c.damping + 3);
    c.stage_bytes = std::size_t{2} << 30;
    const Greeks rev = greeks(c, Checkpointing::revolve(total, 3));
    EXPECT_EQ(rev.kept_steps, 0);
    EXPECT_EQ(none.peak_bytes, all.peak_bytes);  // the kept stages are not the tape's
    // One solver, taped thrice: the second run reuses the first's stage memory; Revolve drops it.
    SequentialExecutor ex;
    CdeConfig ca = small(lev);
    ca.adjoint = true;
    CdeSolver solver(ex, ca);
    const Greeks again1 = solver.greeks(), again2 = solver.greeks(),
                 again3 = solver.greeks(Checkpointing::revolve(total, 3));
    EXPECT_EQ(again2.kept_steps, total);
    EXPECT_EQ(again2.kept_used, total);
    EXPECT_EQ(again3.kept_steps, 0);
    for (const Greeks* g : {&none, &some, &rev, &again1, &again2, &again3}) {
      for (auto f : {&Greeks::price, &Greeks::delta, &Greeks::gamma, &Greeks::v0, &Greeks::vega, &Greeks::kappa,
                     &Greeks::theta, &Greeks::sigma, &Greeks::rho, &Greeks::rd})
        EXPECT_EQ(all.*f, g->*f);
      EXPECT_EQ(all.leverage, g->leverage);
    }
  }
}

// The step external's adjoint against the recorded loops' (same discrete model, other summation
// orders): every Greek to 1e-11 relative, the same primal bits, a smaller tape.
TEST(CdeGreeks, StepExternalMatchesRecordedLoops) {
  for (auto lev : {std::shared_ptr<Leverage>{}, skew()}) {
    CdeConfig c = small(lev);
    const Greeks a = greeks(c);
    c.recorded_adjoint = true;
    const Greeks r = greeks(c);
    EXPECT_EQ(a.price, r.price);
    EXPECT_LT(a.peak_bytes, r.peak_bytes);
    struct F {
      const char* name;
      double Greeks::*f;
    } fs[] = {{"delta", &Greeks::delta}, {"gamma", &Greeks::gamma}, {"v0", &Greeks::v0},   {"kappa", &Greeks::kappa},
              {"theta", &Greeks::theta}, {"sigma", &Greeks::sigma}, {"rho", &Greeks::rho}, {"rd", &Greeks::rd}};
    for (const F& f : fs) EXPECT_NEAR(a.*f.f, r.*f.f, 1e-11 * std::abs(r.*f.f)) << f.name;
    ASSERT_EQ(a.leverage.size(), r.leverage.size());
    double big = 0;
    for (double x : r.leverage) big = std::max(big, std::abs(x));
    for (std::size_t q = 0; q < a.leverage.size(); ++q) EXPECT_NEAR(a.leverage[q], r.leverage[q], 1e-11 * big) << q;
  }
}

// Dot-product test of cde_hv_step's adjoint: the model is affine in u0, so
// <u(T; u0 + du) - u(T; u0), w> = <du, adjoint of u0 for the seed w>; and in the parameters
// (kappa, theta, sigma, rho, r_d along one direction) against Richardson central differences of
// <u(T), w>. One HV step; a Douglas step and an HV step; two steps with a t-dependent leverage.
TEST(CdeAdjoint, StepDotProduct) {
  std::mt19937_64 rng(19);
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  for (int variant = 0; variant < 3; ++variant) {
    SCOPED_TRACE(variant);
    HestonParams p = kCaseA;
    p.rf = 0.01;
    CdeConfig c = config(p, 24, 13, variant == 2 ? 2 : 1, variant == 1 ? 1 : 0);
    if (variant == 2) c.leverage = skew();
    const std::size_t n = static_cast<std::size_t>(c.ns) * c.nv;
    std::vector<double> u0(n), du(n), w(n);
    for (std::size_t q = 0; q < n; ++q) u0[q] = 10 * U(rng), du[q] = U(rng), w[q] = U(rng);
    auto primal = [&](const CdeConfig& cc, const std::vector<double>& start) {
      SequentialExecutor ex;
      CdeSolver s(ex, cc);
      s.run_from(start);
      return s.solution();
    };
    auto dot = [&](const std::vector<double>& a, const std::vector<double>& b) {
      double r = 0;
      for (std::size_t q = 0; q < n; ++q) r += a[q] * b[q];
      return r;
    };
    std::vector<double> up = u0;
    for (std::size_t q = 0; q < n; ++q) up[q] += du[q];
    const std::vector<double> s0 = primal(c, u0), s1 = primal(c, up);
    std::vector<double> jdu(n);
    for (std::size_t q = 0; q < n; ++q) jdu[q] = s1[q] - s0[q];
    CdeConfig ca = c;
    ca.adjoint = true;
    SequentialExecutor ex;
    CdeSolver as(ex, ca);
    const CdeSolver::Adjoints a = as.adjoint_from(u0, w);
    const double lhs = dot(jdu, w), rhs = dot(du, a.u0);
    EXPECT_NEAR(lhs, rhs, 1e-12 * std::abs(lhs)) << lhs << " vs " << rhs;
    const double dp = along(a);
    const double fd = richardson([&](double h) {
      CdeConfig cc = c;
      shift_params(cc.p, h);
      return dot(primal(cc, u0), w);
    }, 1e-3);
    EXPECT_NEAR(dp, fd, 1e-8 * std::abs(fd)) << dp << " vs " << fd;
  }
}

TEST(Cde, BadInput) {
  SequentialExecutor ex;
  auto bad = [&](auto f) {
    CdeConfig c = config(kCaseA, 20, 10, 5);
    f(c);
    EXPECT_THROW(CdeSolver(ex, c), Error);
  };
  bad([](CdeConfig& c) { c.p.rho = -1.5; });
  bad([](CdeConfig& c) { c.p.sigma = -0.3; });
  bad([](CdeConfig& c) { c.p.kappa = -1; });
  bad([](CdeConfig& c) { c.p.theta = -0.04; });
  bad([](CdeConfig& c) { c.p.v0 = -0.04; });
  bad([](CdeConfig& c) { c.p.K = 0; });
  bad([](CdeConfig& c) { c.p.T = 0; });
  bad([](CdeConfig& c) { c.ns = 4; });
  bad([](CdeConfig& c) { c.nv = 4; });
  bad([](CdeConfig& c) { c.steps = 0; });
  bad([](CdeConfig& c) { c.p.s0 = 900; });
  for (const char* f : {"leverage_negative.csv", "leverage_missing.csv", "leverage_nonincreasing.csv",
                        "leverage_nonincreasing_t.csv", "leverage_bad_cell.csv", "no_such_file.csv"}) {
    const std::string path = std::string(STARDIFF_CDE_TESTDATA "/") + f;
    EXPECT_THROW(check_leverage(read_leverage_csv(path)), Error) << f;
  }
  Leverage l;
  l.t = {0, 1};
  l.s = {100};
  l.L = {1};
  EXPECT_THROW(check_leverage(l), Error);  // missing node
  CdeSolver primal(ex, config(kCaseA, 20, 10, 5));
  EXPECT_THROW(primal.greeks(), Error);  // not built with CdeConfig::adjoint
}

}  // namespace
