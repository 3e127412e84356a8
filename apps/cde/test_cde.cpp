// SPDX-License-Identifier: LGPL-2.1-or-later
// apps/cde/test_cde.cpp — the stardiff-cde model (cde_solver.hpp) on the sequential executor:
// L = 1 prices within 1e-4 relative of the little-trap price on four parameter sets (in 't Hout-
// Foulon cases A-D; B and D with r_f > 0) on the coarsest grid tried that meets it (300 x 150,
// 60 steps), with damping steps too; spatial order ~2 on three grids; constant leverage c
// equals Heston with (c^2 v0, c^2 theta, c sigma); a unit leverage file is bitwise the plain
// model; step marks on a tape; bad input and leverage files raise Error.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>

#include "cde_solver.hpp"
#include "heston_analytic.hpp"
#include "leverage_csv.hpp"
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
}

}  // namespace
