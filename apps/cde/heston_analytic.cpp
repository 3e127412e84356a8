// SPDX-License-Identifier: LGPL-2.1-or-later
// apps/cde/heston_analytic.cpp — the little-trap Heston call price (contract in the header).
#include "heston_analytic.hpp"

#include <cmath>
#include <complex>
#include <string>

#include "stardiff/runtime/error.hpp"

namespace stardiff::cde {
namespace {

using cd = std::complex<double>;
constexpr double kPi = 3.14159265358979323846;

// ln phi(u) for complex u (phi: characteristic function of ln S_T), little-trap form.
cd log_phi(const HestonParams& p, cd u) {
  const cd i(0, 1);
  const double s2 = p.sigma * p.sigma;
  const cd b = p.kappa - p.rho * p.sigma * i * u;
  const cd d = std::sqrt(b * b + s2 * (i * u + u * u));
  const cd g = (b - d) / (b + d);
  const cd e = std::exp(-d * p.T);
  const cd C = p.kappa * p.theta / s2 * ((b - d) * p.T - 2.0 * std::log((1.0 - g * e) / (1.0 - g)));
  const cd D = (b - d) / s2 * (1.0 - e) / (1.0 - g * e);
  return i * u * (std::log(p.s0) + (p.rd - p.rf) * p.T) + C + D * p.v0;
}

// Re[e^{-iu lnK} (phi(u - i) - K phi(u)) / (iu)] at real u > 0.
double integrand(const HestonParams& p, double u) {
  const cd i(0, 1);
  const double lk = std::log(p.K);
  const cd a = std::exp(log_phi(p, cd(u, -1.0)) - i * u * lk);
  const cd b = std::exp(log_phi(p, cd(u, 0.0)) - i * u * lk) * p.K;
  return ((a - b) / (i * u)).real();
}

// 7-point Gauss / 15-point Kronrod nodes and weights on [-1, 1].
const double kXk[8] = {0.991455371120812639206854697526329, 0.949107912342758524526189684047851,
                       0.864864423359769072789712788640926, 0.741531185599394439863864773280788,
                       0.586087235467691130294144845693013, 0.405845151377397166906606412076961,
                       0.207784955007898467600689403773245, 0.000000000000000000000000000000000};
const double kWk[8] = {0.022935322010529224963732008058970, 0.063092092629978553290700663189204,
                       0.104790010322250183839876322541518, 0.140653259715525918745189590510238,
                       0.169004726639267902826583426598550, 0.190350578064785409913256402421014,
                       0.204432940075298892414161999234649, 0.209482141084727828012999174891714};
const double kWg[4] = {0.129484966168869693270611432679082, 0.279705391489276667901467771423780,
                       0.381830050505118944950369775488975, 0.417959183673469387755102040816327};

struct Quad {
  const HestonParams& p;
  double tol;
  HestonQuadInfo info;
  // f on x in [0,1): integrand(u(x)) u'(x), u = x / (1 - x).
  double f(double x) {
    ++info.evaluations;
    const double om = 1.0 - x;
    const double u = x / om;
    if (!(u > 0) || !std::isfinite(u)) return 0.0;
    const double v = integrand(p, u) / (om * om);
    return std::isfinite(v) ? v : 0.0;
  }
  void gk(double a, double b, double& kron, double& err) {
    const double c = 0.5 * (a + b), h = 0.5 * (b - a);
    double fc = f(c);
    double k = fc * kWk[7], g = fc * kWg[3];
    for (int j = 0; j < 7; ++j) {
      const double x = h * kXk[j];
      const double s = f(c - x) + f(c + x);
      k += kWk[j] * s;
      if (j % 2 == 1) g += kWg[j / 2] * s;
    }
    kron = k * h;
    err = std::abs((k - g) * h);
  }
  double adapt(double a, double b, double t, int depth) {
    double k, e;
    gk(a, b, k, e);
    if (e <= t || depth >= 40 || b - a < 1e-15) {
      ++info.panels;
      return k;
    }
    const double c = 0.5 * (a + b);
    return adapt(a, c, 0.5 * t, depth + 1) + adapt(c, b, 0.5 * t, depth + 1);
  }
};

void need(bool ok, const std::string& what) {
  if (!ok) throw Error("heston_call: " + what);
}

}  // namespace

double heston_call(const HestonParams& p, HestonQuadInfo* info) {
  auto fin = [](double x) { return std::isfinite(x); };
  need(fin(p.s0) && p.s0 > 0, "S0 must be positive");
  need(fin(p.K) && p.K > 0, "K must be positive");
  need(fin(p.T) && p.T > 0, "T must be positive");
  need(fin(p.v0) && p.v0 >= 0, "v0 must be >= 0");
  need(fin(p.kappa) && p.kappa >= 0, "kappa must be >= 0");
  need(fin(p.theta) && p.theta >= 0, "theta must be >= 0");
  need(fin(p.sigma) && p.sigma > 0, "sigma must be positive");
  need(fin(p.rho) && std::abs(p.rho) <= 1, "|rho| must be <= 1");
  need(fin(p.rd) && fin(p.rf), "rates must be finite");
  Quad q{p, 1e-13 * std::max(1.0, p.s0), {}};
  // Split [0,1) so that the oscillating head is resolved before adaptivity decides.
  double integral = 0;
  const double cuts[] = {0.0, 0.25, 0.5, 0.75, 0.9, 0.97, 1.0};
  for (int k = 0; k + 1 < 7; ++k) integral += q.adapt(cuts[k], cuts[k + 1], q.tol / 6, 0);
  if (info) *info = q.info;
  const double dr = std::exp(-p.rd * p.T), df = std::exp(-p.rf * p.T);
  return 0.5 * (p.s0 * df - p.K * dr) + dr / kPi * integral;
}

}  // namespace stardiff::cde
