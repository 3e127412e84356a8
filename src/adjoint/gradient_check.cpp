// SPDX-License-Identifier: LGPL-2.1-or-later
// src/adjoint/gradient_check.cpp — Taylor remainder and dot-product tests.
#include "stardiff/adjoint/gradient_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "stardiff/runtime/error.hpp"

namespace stardiff {

TaylorTest check_gradient(const std::function<double(double)>& J, double dJ, std::vector<double> steps,
                          double min_rate, double roundoff) {
  require(steps.size() >= 2, "check_gradient: give at least two step sizes");
  for (std::size_t i = 0; i + 1 < steps.size(); ++i)
    require(steps[i] > steps[i + 1] && steps[i + 1] > 0, "check_gradient: steps must be positive and decreasing");
  TaylorTest r;
  r.steps = steps;
  r.dJ = dJ;
  r.J0 = J(0.0);
  bool all_round = true;
  for (double h : steps) {
    double jp = J(h), jm = J(-h);
    r.r1.push_back(std::fabs(jp - r.J0));
    double r2 = std::fabs(jp - r.J0 - h * dJ);
    r.r2.push_back(r2);
    r.central.push_back((jp - jm) / (2 * h));
    if (r2 > roundoff * (std::fabs(r.J0) + std::fabs(h * dJ))) all_round = false;
  }
  r.roundoff_only = all_round;
  r.min_rate = all_round ? 0.0 : 1e300;
  bool ok = true;
  if (!all_round) {
    for (std::size_t i = 0; i + 1 < steps.size(); ++i) {
      double rate = std::log(r.r2[i] / r.r2[i + 1]) / std::log(steps[i] / steps[i + 1]);
      if (!std::isfinite(rate)) rate = 0;
      r.rates.push_back(rate);
      r.min_rate = std::min(r.min_rate, rate);
      ok = ok && rate >= min_rate;
    }
  }
  r.passed = std::isfinite(dJ) && ok;
  return r;
}

std::string TaylorTest::report() const {
  std::string s;
  char buf[256];
  for (std::size_t i = 0; i < steps.size(); ++i) {
    std::snprintf(buf, sizeof buf, "h=%.3e r1=%.3e r2=%.3e central=%.17g%s\n", steps[i], r1[i], r2[i], central[i],
                  i < rates.size() ? (" rate=" + std::to_string(rates[i])).c_str() : "");
    s += buf;
  }
  std::snprintf(buf, sizeof buf, "dJ=%.17g %s\n", dJ,
                passed ? (roundoff_only ? "passed (remainder at round-off)" : "passed") : "FAILED");
  return s + buf;
}

DotProductTest dot_product_test(const std::function<std::vector<double>(const std::vector<double>&)>& Jv,
                                const std::function<std::vector<double>(const std::vector<double>&)>& JTw,
                                std::size_t n_in, std::size_t n_out, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> v(n_in), w(n_out);
  for (auto& x : v) x = dist(gen);
  for (auto& x : w) x = dist(gen);
  std::vector<double> jv = Jv(v), jtw = JTw(w);
  require(jv.size() == n_out, "dot_product_test: J v has " + std::to_string(jv.size()) + " entries, expected " +
                                  std::to_string(n_out));
  require(jtw.size() == n_in, "dot_product_test: J^T w has " + std::to_string(jtw.size()) + " entries, expected " +
                                  std::to_string(n_in));
  long double a = 0, b = 0;
  for (std::size_t i = 0; i < n_out; ++i) a += static_cast<long double>(jv[i]) * w[i];
  for (std::size_t i = 0; i < n_in; ++i) b += static_cast<long double>(v[i]) * jtw[i];
  DotProductTest r;
  r.jv_w = static_cast<double>(a);
  r.v_jtw = static_cast<double>(b);
  double scale = std::max(std::fabs(r.jv_w), std::fabs(r.v_jtw));
  r.rel_diff = scale > 0 ? std::fabs(r.jv_w - r.v_jtw) / scale : 0.0;
  return r;
}

}  // namespace stardiff
