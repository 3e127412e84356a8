// SPDX-License-Identifier: LGPL-2.1-or-later
// apps/cde/heston_analytic.hpp — semi-analytic European call under Heston (the oracle of
// stardiff-cde).
//
// Contract:
//  * heston_call(p) = S0 e^{-r_f T} P1 - K e^{-r_d T} P2 for dS = (r_d - r_f) S dt + sqrt(v) S dW1,
//    dv = kappa (theta - v) dt + sigma sqrt(v) dW2, d<W1,W2> = rho dt, written as one integral
//      C = (S0 e^{-r_f T} - K e^{-r_d T}) / 2
//          + e^{-r_d T} / pi * int_0^inf Re[ e^{-iu ln K} (phi(u - i) - K phi(u)) / (iu) ] du
//    with phi the characteristic function of ln S_T in the "little trap" form of Albrecher,
//    Mayer, Schoutens and Tistaert (2007): d = sqrt((rho sigma iu - kappa)^2 + sigma^2 (iu + u^2)),
//    g = (kappa - rho sigma iu - d) / (kappa - rho sigma iu + d), e^{-dT} in both places.
//  * Quadrature: adaptive Gauss-Kronrod (7/15) on u = x / (1 - x), x in [0, 1), to an absolute
//    tolerance of 1e-13 * max(1, S0) per panel sum; HestonQuadInfo reports panels and evaluations.
//  * Preconditions (Error otherwise): S0, K, T > 0, v0, kappa, theta >= 0, sigma > 0, |rho| <= 1,
//    all finite.
#pragma once

namespace stardiff::cde {

struct HestonParams {
  double s0 = 100, K = 100, T = 1, v0 = 0.04, kappa = 1.5, theta = 0.04, sigma = 0.3, rho = -0.9;
  double rd = 0.025, rf = 0.0;
};

struct HestonQuadInfo {
  int panels = 0, evaluations = 0;
};

double heston_call(const HestonParams& p, HestonQuadInfo* info = nullptr);

}  // namespace stardiff::cde
