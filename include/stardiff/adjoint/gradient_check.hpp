// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/adjoint/gradient_check.hpp — Taylor and dot-product tests of recorded adjoints.
//
// Contract:
//  * check_gradient(J, dJ, steps): J(h) evaluates the objective at x + h v (J(0) = the
//    recorded point), dJ = <grad J, v> from the adjoint. For each step h (>= 2, distinct,
//    decreasing) it computes the Taylor remainders r1(h) = |J(h) - J(0)| and
//    r2(h) = |J(h) - J(0) - h dJ| and the central difference (J(h) - J(-h)) / (2h).
//    r2 must fall with order 2 between successive steps (rate = log(r2 ratio)/log(h
//    ratio) >= min_rate), unless r2 is at round-off level (<= roundoff * (|J(0)| +
//    |h dJ|)) at every step, which happens when J is quadratic along v and the steps
//    are large. passed is the verdict; numbers are kept for reports.
//  * dot_product_test(Jv, JTw, n_in, n_out, seed): for an affine map x -> y with Jacobian
//    J, Jv(v) = J v (e.g. y(x + v) - y(x)) and JTw(w) = J^T w (a reverse sweep seeded
//    with w); checks <J v, w> = <v, J^T w> for random v, w in [-1, 1] (sums in long double).
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace stardiff {

struct TaylorTest {
  std::vector<double> steps, r1, r2, central, rates;
  double dJ = 0, J0 = 0;
  double min_rate = 0;       // smallest observed r2 rate (0 when only round-off was seen)
  bool roundoff_only = false;
  bool passed = false;
  std::string report() const;
};

TaylorTest check_gradient(const std::function<double(double)>& J, double dJ, std::vector<double> steps,
                          double min_rate = 1.8, double roundoff = 1e-12);

struct DotProductTest {
  double jv_w = 0, v_jtw = 0, rel_diff = 0;
};

DotProductTest dot_product_test(const std::function<std::vector<double>(const std::vector<double>&)>& Jv,
                                const std::function<std::vector<double>(const std::vector<double>&)>& JTw,
                                std::size_t n_in, std::size_t n_out, unsigned seed = 1);

}  // namespace stardiff
