// SPDX-License-Identifier: LGPL-2.1-or-later
// apps/cde/quantlib_peer.cpp — QuantLib Heston engines (contract in the header).
#include "quantlib_peer.hpp"

#include <cmath>
#include <ql/exercise.hpp>
#include <ql/instruments/payoffs.hpp>
#include <ql/instruments/vanillaoption.hpp>
#include <ql/models/equity/hestonmodel.hpp>
#include <ql/pricingengines/vanilla/analytichestonengine.hpp>
#include <ql/pricingengines/vanilla/fdhestonvanillaengine.hpp>
#include <ql/processes/hestonprocess.hpp>
#include <ql/quotes/simplequote.hpp>
#include <ql/settings.hpp>
#include <ql/termstructures/yield/flatforward.hpp>
#include <ql/time/daycounters/actual365fixed.hpp>

namespace stardiff::cde {
namespace {
namespace Q = QuantLib;

struct Setup {
  Q::Date today{2, Q::December, 2026};
  Q::DayCounter dc = Q::Actual365Fixed();
  Q::ext::shared_ptr<Q::HestonModel> model;
  Q::ext::shared_ptr<Q::VanillaOption> option;
  explicit Setup(const HestonParams& p) {
    Q::Settings::instance().evaluationDate() = today;
    const Q::Date maturity = today + static_cast<Q::Integer>(std::lround(p.T * 365.0));
    Q::Handle<Q::YieldTermStructure> r(Q::ext::make_shared<Q::FlatForward>(today, p.rd, dc));
    Q::Handle<Q::YieldTermStructure> q(Q::ext::make_shared<Q::FlatForward>(today, p.rf, dc));
    Q::Handle<Q::Quote> s(Q::ext::make_shared<Q::SimpleQuote>(p.s0));
    auto process = Q::ext::make_shared<Q::HestonProcess>(r, q, s, p.v0, p.kappa, p.theta, p.sigma, p.rho);
    model = Q::ext::make_shared<Q::HestonModel>(process);
    option = Q::ext::make_shared<Q::VanillaOption>(Q::ext::make_shared<Q::PlainVanillaPayoff>(Q::Option::Call, p.K),
                                                   Q::ext::make_shared<Q::EuropeanExercise>(maturity));
  }
};

}  // namespace

double ql_analytic_call(const HestonParams& p) {
  Setup s(p);
  s.option->setPricingEngine(Q::ext::make_shared<Q::AnalyticHestonEngine>(s.model, 1e-14, 1000000));
  return s.option->NPV();
}

double ql_fd_call(const HestonParams& p, std::size_t ns, std::size_t nv, std::size_t steps, std::size_t damping) {
  Setup s(p);
  s.option->setPricingEngine(Q::ext::make_shared<Q::FdHestonVanillaEngine>(s.model, steps, ns, nv, damping,
                                                                           Q::FdmSchemeDesc::Hundsdorfer()));
  return s.option->NPV();
}

}  // namespace stardiff::cde
