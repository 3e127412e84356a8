// SPDX-License-Identifier: LGPL-2.1-or-later
// apps/cde/quantlib_peer.hpp — QuantLib 1.29 as peer and oracle of stardiff-cde (only built
// when QuantLib is found; this header does not include QuantLib).
//
// Contract:
//  * ql_analytic_call(p): AnalyticHestonEngine (adaptive Gauss-Lobatto, relative tolerance
//    1e-14, 10^6 evaluations) on a European call with p's contract; T is rounded to whole
//    days (Actual/365 Fixed), so callers pass T = days / 365.
//  * ql_fd_call(p, ns, nv, steps, damping): FdHestonVanillaEngine(model, steps, ns, nv,
//    damping, FdmSchemeDesc::Hundsdorfer()) — QuantLib's own meshers, the call as a user makes it.
#pragma once
#include <cstddef>

#include "heston_analytic.hpp"

namespace stardiff::cde {

double ql_analytic_call(const HestonParams& p);
double ql_fd_call(const HestonParams& p, std::size_t ns, std::size_t nv, std::size_t steps, std::size_t damping);

}  // namespace stardiff::cde
