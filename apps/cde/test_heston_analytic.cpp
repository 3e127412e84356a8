// SPDX-License-Identifier: LGPL-2.1-or-later
// apps/cde/test_heston_analytic.cpp — the little-trap oracle (heston_analytic.hpp) against
// QuantLib's AnalyticHestonEngine on several parameter sets (|diff| <= 1e-10 relative to
// max(price, 1e-3 S0)), and its bad-input errors.
#include <gtest/gtest.h>

#include <cmath>

#include "heston_analytic.hpp"
#include "quantlib_peer.hpp"
#include "stardiff/runtime/error.hpp"

using namespace stardiff::cde;

namespace {

HestonParams make(double s0, double K, double days, double v0, double kappa, double theta, double sigma,
                  double rho, double rd, double rf) {
  HestonParams p;
  p.s0 = s0, p.K = K, p.T = days / 365.0, p.v0 = v0, p.kappa = kappa, p.theta = theta, p.sigma = sigma;
  p.rho = rho, p.rd = rd, p.rf = rf;
  return p;
}

TEST(HestonAnalytic, MatchesQuantLib) {
  const HestonParams sets[] = {
      make(100, 100, 365, 0.04, 1.5, 0.04, 0.3, -0.9, 0.025, 0.0),     // in 't Hout-Foulon case A
      make(100, 100, 365, 0.0894, 3.0, 0.12, 0.04, 0.6, 0.01, 0.04),   // case B (r_f > 0)
      make(100, 100, 730, 0.0707, 0.6067, 0.0707, 0.2928, -0.7571, 0.03, 0.0),  // case C
      make(100, 100, 3650, 0.12, 2.5, 0.06, 0.5, -0.1, 0.0507, 0.0469),          // case D
      make(100, 80, 73, 0.04, 1.5, 0.04, 0.3, -0.9, 0.025, 0.0),       // in the money, short
      make(100, 130, 365, 0.09, 1.0, 0.09, 1.0, -0.3, 0.05, 0.02),     // out of the money, vol of vol 1
      make(55, 60, 182, 0.02, 4.0, 0.05, 0.6, 0.4, 0.0, 0.01),
  };
  for (const auto& p : sets) {
    HestonQuadInfo info;
    const double ours = heston_call(p, &info), ql = ql_analytic_call(p);
    const double scale = std::max(ql, 1e-3 * p.s0);
    EXPECT_LE(std::abs(ours - ql), 1e-10 * scale)
        << "K=" << p.K << " T=" << p.T << " ours=" << ours << " quantlib=" << ql << " evals=" << info.evaluations;
    EXPECT_GT(ours, std::max(0.0, p.s0 * std::exp(-p.rf * p.T) - p.K * std::exp(-p.rd * p.T)) - 1e-12);
  }
}

TEST(HestonAnalytic, BadInput) {
  HestonParams p;
  auto bad = [&](auto f) {
    HestonParams q = p;
    f(q);
    EXPECT_THROW(heston_call(q), stardiff::Error);
  };
  bad([](HestonParams& q) { q.rho = 1.01; });
  bad([](HestonParams& q) { q.sigma = -0.1; });
  bad([](HestonParams& q) { q.kappa = -1; });
  bad([](HestonParams& q) { q.theta = -1; });
  bad([](HestonParams& q) { q.v0 = -0.01; });
  bad([](HestonParams& q) { q.K = 0; });
  bad([](HestonParams& q) { q.T = 0; });
  bad([](HestonParams& q) { q.s0 = NAN; });
}

}  // namespace
