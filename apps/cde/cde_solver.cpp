// SPDX-License-Identifier: LGPL-2.1-or-later
// apps/cde/cde_solver.cpp — the Heston / SLV Hundsdorfer-Verwer solver (contract in the header).
//
// Per-point coefficients live in two low-dimensional dats: cs (along s, 13 components: A1's
// v-weighted and constant 3-point weights p, q, the mixed weights rho sigma L s beta_s, the
// Neumann terms n1, n2, s, the Dirichlet flag) and cv (along v, 9 components: A2's weights w, the
// forward formula's third weight e at v = 0, v, beta_v, the Dirichlet flag). Every operator
// application reads them and the 10-point stencil of the state; Dirichlet nodes take their value
// by a select, so rows need no branches.
//
// One HV step from tau_{n-1} to tau_n (E = e^{-r_f tau}, A1h: A1 without its Neumann term b1):
//   predictor  H = U + dt/2 F(U), R1 = Y0 - th dt (A1h U + b1_old) + th dt b1_new, G = -th dt A2 U
//   solve s    (I - th dt A1) Y1 = R1                          (in place in R1)
//   mid        R2 = Y1 + G (row v = 0: minus f times row v_1)  (f = e / w_1(v_1), the elimination)
//   solve v    (I - th dt A2) Y2 = R2                          (in place in R2)
//   corrector  R1 = H + dt/2 F(Y2) - th dt A1h Y2, G = -th dt A2 Y2   (H + dt/2 F(Y2) = ~Y0)
//   solve s    in place in R1; mid into R2; solve v from R2 into U.
// A Douglas (theta = 1) damping step is predictor, solve s, mid, solve v into U.
#include "cde_solver.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "stardiff/adjoint/tridiag.hpp"
#include "stardiff/mesh.hpp"
#include "stardiff/runtime/error.hpp"

namespace stardiff::cde {

using mesh::Acc;
using mesh::Dat;
using mesh::Halo;

namespace {

// cs components
enum { P0 = 0, Q0 = 3, MB0 = 6, N1 = 9, N2 = 10, SS = 11, DS = 12, NCS = 13 };
// cv components
enum { W0 = 0, EE = 3, VV = 4, BV0 = 5, DV = 8, NCV = 9 };

struct CoefSArgs {
  double rho_sigma, rd_rf, w;
  int k0, k1, n;
};
// cs at one time: L = (1 - w) lev_k0 + w lev_k1.
struct CoefS {
  void operator()(Acc<const double> sg, Acc<const double> lev, Acc<double> cs, const CoefSArgs* a,
                  const int* idx) const {
    const int i = idx[0];
    const double s = sg(0, 0);
    const double L = (1.0 - a->w) * lev.c(a->k0) + a->w * lev.c(a->k1);
    for (int c = 0; c < NCS; ++c) cs.c(c) = 0.0;
    cs.c(SS) = s;
    if (i == 0) {
      cs.c(DS) = 1.0;
      return;
    }
    const double L2s2 = L * L * s * s;
    if (i == a->n - 1) {  // S_max: virtual node s + h, u_{N+1} = u_{N-1} + 2 h e^{-r_f tau}
      const double h = s - sg(-1, 0);
      cs.c(P0 + 0) = L2s2 / (h * h);
      cs.c(P0 + 1) = -L2s2 / (h * h);
      cs.c(N1) = L2s2 / h;
      cs.c(N2) = a->rd_rf * s;
      return;
    }
    const double hm = s - sg(-1, 0), hp = sg(1, 0) - s;
    const double bm = -hp / (hm * (hm + hp)), b0 = (hp - hm) / (hm * hp), bp = hm / (hp * (hm + hp));
    const double dm = 2.0 / (hm * (hm + hp)), d0 = -2.0 / (hm * hp), dp = 2.0 / (hp * (hm + hp));
    const double S2 = 0.5 * L2s2, D = a->rd_rf * s, M = a->rho_sigma * L * s;
    cs.c(P0 + 0) = S2 * dm, cs.c(P0 + 1) = S2 * d0, cs.c(P0 + 2) = S2 * dp;
    cs.c(Q0 + 0) = D * bm, cs.c(Q0 + 1) = D * b0, cs.c(Q0 + 2) = D * bp;
    cs.c(MB0 + 0) = M * bm, cs.c(MB0 + 1) = M * b0, cs.c(MB0 + 2) = M * bp;
  }
};

struct CoefVArgs {
  double kappa, theta, half_sigma2;
  int n;
};
struct CoefV {
  void operator()(Acc<const double> vg, Acc<double> cv, const CoefVArgs* a, const int* idx) const {
    const int j = idx[1];
    for (int c = 0; c < NCV; ++c) cv.c(c) = 0.0;
    if (j == a->n - 1) {
      cv.c(DV) = 1.0;
      return;
    }
    const double v = vg(0, 0);
    if (j == 0) {  // the PDE at v = 0: kappa theta u_v by the second-order forward formula
      const double h1 = vg(0, 1) - v, h2 = vg(0, 2) - vg(0, 1);
      const double kt = a->kappa * a->theta;
      cv.c(W0 + 1) = kt * (-2.0 * h1 - h2) / (h1 * (h1 + h2));
      cv.c(W0 + 2) = kt * (h1 + h2) / (h1 * h2);
      cv.c(EE) = kt * -h1 / (h2 * (h1 + h2));
      return;
    }
    const double hm = v - vg(0, -1), hp = vg(0, 1) - v;
    const double bm = -hp / (hm * (hm + hp)), b0 = (hp - hm) / (hm * hp), bp = hm / (hp * (hm + hp));
    const double dm = 2.0 / (hm * (hm + hp)), d0 = -2.0 / (hm * hp), dp = 2.0 / (hp * (hm + hp));
    const double S = a->half_sigma2 * v, D = a->kappa * (a->theta - v);
    cv.c(W0 + 0) = S * dm + D * bm, cv.c(W0 + 1) = S * d0 + D * b0, cv.c(W0 + 2) = S * dp + D * bp;
    cv.c(VV) = v;
    cv.c(BV0 + 0) = bm, cv.c(BV0 + 1) = b0, cv.c(BV0 + 2) = bp;
  }
};

struct MatArgs {
  double thdt, half_rd;
};
// I - th dt A1 (Dirichlet rows: identity).
struct Mat1 {
  void operator()(Acc<const double> cs, Acc<const double> cv, Acc<double> a, Acc<double> b, Acc<double> c,
                  const MatArgs* m) const {
    const double v = cv.c(VV);
    const bool dir = cs.c(DS) + cv.c(DV) > 0;
    a(0, 0) = dir ? 0.0 : -m->thdt * (v * cs.c(P0) + cs.c(Q0));
    b(0, 0) = dir ? 1.0 : 1.0 - m->thdt * (v * cs.c(P0 + 1) + cs.c(Q0 + 1) - m->half_rd);
    c(0, 0) = dir ? 0.0 : -m->thdt * (v * cs.c(P0 + 2) + cs.c(Q0 + 2));
  }
};
// I - th dt A2, row v = 0 with its third entry eliminated by row v_1 (Dirichlet rows: identity).
struct Mat2 {
  void operator()(Acc<const double> cs, Acc<const double> cv, Acc<double> a, Acc<double> b, Acc<double> c,
                  const MatArgs* m) const {
    const double t = m->thdt;
    const bool dir = cs.c(DS) + cv.c(DV) > 0;
    double aa = -t * cv.c(W0), bb = 1.0 - t * (cv.c(W0 + 1) - m->half_rd), cc = -t * cv.c(W0 + 2);
    const double e = cv.c(EE);
    if (e != 0.0) {
      const double f = e / cv.c(W0 + 2, 0, 1);
      const double m10 = -t * cv.c(W0, 0, 1), m11 = 1.0 - t * (cv.c(W0 + 1, 0, 1) - m->half_rd);
      bb -= f * m10;
      cc -= f * m11;
      aa = 0.0;
    }
    a(0, 0) = dir ? 0.0 : aa;
    b(0, 0) = dir ? 1.0 : bb;
    c(0, 0) = dir ? 0.0 : cc;
  }
};

// The three split operators at a point (A1 without the Neumann term).
struct Apply {
  double a0, a1h, a2;
  Apply(Acc<const double> u, Acc<const double> cs, Acc<const double> cv, double half_rd) {
    const double v = cv.c(VV);
    const double um = u(-1, 0), uc = u(0, 0), up = u(1, 0);
    a1h = (v * cs.c(P0) + cs.c(Q0)) * um + (v * cs.c(P0 + 1) + cs.c(Q0 + 1) - half_rd) * uc +
          (v * cs.c(P0 + 2) + cs.c(Q0 + 2)) * up;
    a2 = cv.c(W0) * u(0, -1) + (cv.c(W0 + 1) - half_rd) * uc + cv.c(W0 + 2) * u(0, 1) + cv.c(EE) * u(0, 2);
    const double bm = cv.c(BV0), b0 = cv.c(BV0 + 1), bp = cv.c(BV0 + 2);
    const double rm = bm * u(-1, -1) + b0 * um + bp * u(-1, 1);
    const double rc = bm * u(0, -1) + b0 * uc + bp * u(0, 1);
    const double rp = bm * u(1, -1) + b0 * up + bp * u(1, 1);
    a0 = v * (cs.c(MB0) * rm + cs.c(MB0 + 1) * rc + cs.c(MB0 + 2) * rp);
  }
};

struct PredArgs {
  double dt, thdt, half_rd, e_old, e_new;
};
struct Predictor {
  void operator()(Acc<const double> u, Acc<const double> csA, Acc<const double> csB, Acc<const double> cv,
                  Acc<double> r1, Acc<double> h, Acc<double> g, const PredArgs* p) const {
    const Apply o(u, csA, cv, p->half_rd);
    const double v = cv.c(VV);
    const double b_old = p->e_old * (v * csA.c(N1) + csA.c(N2)), b_new = p->e_new * (v * csB.c(N1) + csB.c(N2));
    const double F = o.a0 + o.a1h + b_old + o.a2;
    const double uc = u(0, 0);
    const bool dir = csB.c(DS) + cv.c(DV) > 0;
    r1(0, 0) = dir ? csB.c(SS) * p->e_new : uc + p->dt * F - p->thdt * (o.a1h + b_old) + p->thdt * b_new;
    h(0, 0) = uc + 0.5 * p->dt * F;
    g(0, 0) = -p->thdt * o.a2;
  }
};

struct MidArgs {
  double e_new;
};
struct Mid {
  void operator()(Acc<const double> y, Acc<const double> g, Acc<const double> cs, Acc<const double> cv,
                  Acc<double> r2, const MidArgs* p) const {
    const double e = cv.c(EE);
    const double f = e != 0.0 ? e / cv.c(W0 + 2, 0, 1) : 0.0;
    const bool dir = cs.c(DS) + cv.c(DV) > 0;
    r2(0, 0) = dir ? cs.c(SS) * p->e_new : (y(0, 0) + g(0, 0)) - f * (y(0, 1) + g(0, 1));
  }
};

struct CorrArgs {
  double half_dt, thdt, half_rd, e_new;
};
struct Corrector {
  void operator()(Acc<const double> y2, Acc<const double> h, Acc<const double> cs, Acc<const double> cv,
                  Acc<double> r1, Acc<double> g, const CorrArgs* p) const {
    const Apply o(y2, cs, cv, p->half_rd);
    const double v = cv.c(VV);
    const double b_new = p->e_new * (v * cs.c(N1) + cs.c(N2));
    const double F = o.a0 + o.a1h + b_new + o.a2;
    const bool dir = cs.c(DS) + cv.c(DV) > 0;
    r1(0, 0) = dir ? cs.c(SS) * p->e_new : h(0, 0) + p->half_dt * F - p->thdt * o.a1h;
    g(0, 0) = -p->thdt * o.a2;
  }
};

mesh::DatOptions opts(int dim, std::vector<int> axes) {
  mesh::DatOptions o;
  o.dim = dim;
  o.active = false;
  o.axes = std::move(axes);
  return o;
}
mesh::DatOptions passive() {
  mesh::DatOptions o;
  o.active = false;
  return o;
}

const mesh::Stencil& st10() {
  static const mesh::Stencil s(2, {0, 0, -1, 0, 1, 0, 0, -1, 0, 1, -1, -1, 1, -1, -1, 1, 1, 1, 0, 2}, "cde_10pt");
  return s;
}
const mesh::Stencil& st_up() {
  static const mesh::Stencil s(2, {0, 0, 0, 1}, "cde_up");
  return s;
}

void require(bool ok, const std::string& what) {
  if (!ok) throw Error("cde: " + what);
}

int pick_tiles(Executor& ex, int nv, int asked) {
  if (asked > 0) return std::max(1, std::min(asked, nv / 4));
  return ex.concurrency() <= 1 ? 1 : std::max(1, std::min(2 * ex.concurrency(), nv / 4));
}

}  // namespace

void check_leverage(const Leverage& lev) {
  require(!lev.t.empty() && !lev.s.empty(), "leverage: needs at least one time and one spot node");
  require(lev.L.size() == lev.t.size() * lev.s.size(),
          "leverage: " + std::to_string(lev.L.size()) + " values for " + std::to_string(lev.t.size()) + " times x " +
              std::to_string(lev.s.size()) + " spots (missing nodes)");
  for (std::size_t k = 0; k < lev.t.size(); ++k) {
    require(std::isfinite(lev.t[k]), "leverage: time node " + std::to_string(k) + " is not finite");
    require(k == 0 || lev.t[k] > lev.t[k - 1], "leverage: time axis is not strictly increasing at node " +
                                                   std::to_string(k));
  }
  for (std::size_t m = 0; m < lev.s.size(); ++m) {
    require(std::isfinite(lev.s[m]), "leverage: spot node " + std::to_string(m) + " is not finite");
    require(m == 0 || lev.s[m] > lev.s[m - 1], "leverage: spot axis is not strictly increasing at node " +
                                                   std::to_string(m));
  }
  for (std::size_t q = 0; q < lev.L.size(); ++q)
    require(std::isfinite(lev.L[q]) && lev.L[q] >= 0,
            "leverage: value at time node " + std::to_string(q / lev.s.size()) + ", spot node " +
                std::to_string(q % lev.s.size()) + " is negative or not finite");
}

struct CdeSolver::Impl {
  CdeConfig cfg;
  Executor& ex;
  int ns, nv, nt = 1;
  std::vector<double> sx, vy;
  std::vector<std::vector<double>> lev_s;  // per leverage time node: L on the s grid
  mesh::Block block;
  Dat<double> sgrid, vgrid, lev, csA, csB, cv;
  Dat<double> U, R1, R2, G, H;
  Dat<double> m1a, m1b, m1c, m2a, m2b, m2c;

  static Halo state_halo() { return Halo({1, 1, 0}, {1, 2, 0}); }

  Impl(Executor& e, const CdeConfig& c)
      : cfg(c), ex(e), ns(c.ns), nv(c.nv), nt(c.leverage ? static_cast<int>(c.leverage->t.size()) : 1),
        block(e, "cde", {c.ns, c.nv}, pick_tiles(e, c.nv, c.tiles)),
        sgrid(block, "cde_s", Halo({1, 0, 0}, {1, 0, 0}), opts(1, {0})),
        vgrid(block, "cde_v", Halo({0, 1, 0}, {0, 2, 0}), opts(1, {1})),
        lev(block, "cde_leverage", Halo{}, opts(nt, {0})), csA(block, "cde_cs_old", Halo{}, opts(NCS, {0})),
        csB(block, "cde_cs_new", Halo{}, opts(NCS, {0})), cv(block, "cde_cv", Halo({0, 0, 0}, {0, 1, 0}), opts(NCV, {1})),
        U(block, "cde_u", state_halo(), passive()), R1(block, "cde_r1", state_halo(), passive()),
        R2(block, "cde_r2", state_halo(), passive()), G(block, "cde_g", state_halo(), passive()),
        H(block, "cde_h", Halo{}, passive()), m1a(block, "cde_m1a", Halo{}, passive()),
        m1b(block, "cde_m1b", Halo{}, passive()), m1c(block, "cde_m1c", Halo{}, passive()),
        m2a(block, "cde_m2a", Halo{}, passive()), m2b(block, "cde_m2b", Halo{}, passive()),
        m2c(block, "cde_m2c", Halo{}, passive()) {
    // Grids.
    const HestonParams& p = cfg.p;
    const double K = p.K, cc = K / 5, smax = cfg.smax_factor * K, vmax = cfg.vmax, dd = vmax / 500;
    sx.resize(ns);
    vy.resize(nv);
    const double x0 = std::asinh(-K / cc), x1 = std::asinh((smax - K) / cc);
    for (int i = 0; i < ns; ++i) sx[i] = K + cc * std::sinh(x0 + (x1 - x0) * i / (ns - 1));
    sx[0] = 0.0, sx[ns - 1] = smax;
    const double e1 = std::asinh(vmax / dd);
    for (int j = 0; j < nv; ++j) vy[j] = dd * std::sinh(e1 * j / (nv - 1));
    vy[0] = 0.0, vy[nv - 1] = vmax;
    sgrid.set([&](int i, int, int) {
      return i < 0 ? -sx[1] : i >= ns ? 2 * sx[ns - 1] - sx[ns - 2] : sx[i];
    });
    vgrid.set([&](int, int j, int) {
      return j < 0 ? -vy[1] : j >= nv ? vy[nv - 1] + (j - nv + 1) * (vy[nv - 1] - vy[nv - 2]) : vy[j];
    });
    // Leverage on the s grid, per time node (linear in s, flat outside the nodes).
    lev_s.assign(nt, std::vector<double>(ns, 1.0));
    if (cfg.leverage) {
      const Leverage& L = *cfg.leverage;
      const int ms = static_cast<int>(L.s.size());
      for (int k = 0; k < nt; ++k)
        for (int i = 0; i < ns; ++i) {
          const double s = sx[i];
          const double* row = &L.L[static_cast<std::size_t>(k) * ms];
          if (s <= L.s.front()) lev_s[k][i] = row[0];
          else if (s >= L.s.back()) lev_s[k][i] = row[ms - 1];
          else {
            const int m = static_cast<int>(std::upper_bound(L.s.begin(), L.s.end(), s) - L.s.begin()) - 1;
            const double w = (s - L.s[m]) / (L.s[m + 1] - L.s[m]);
            lev_s[k][i] = (1 - w) * row[m] + w * row[m + 1];
          }
        }
    }
    lev.set_components([&](int i, int, int, int c) { return lev_s[c][std::clamp(i, 0, ns - 1)]; });
    for (Dat<double>* d : {&csA, &csB, &cv, &U, &R1, &R2, &G, &H}) d->set([](int, int, int) { return 0.0; });
    par_loop_passive("cde_coef_v", block, mesh::Range{0, 1, 0, nv},
                     CoefV{}, mesh::arg_dat(vgrid, mesh::Stencil(2, {0, 0, 0, -1, 0, 1, 0, 2}, "v3"), mesh::READ),
                     mesh::arg_dat(cv, mesh::WRITE), mesh::arg_gbl(CoefVArgs{p.kappa, p.theta, 0.5 * p.sigma * p.sigma, nv}),
                     mesh::arg_idx());
  }

  // Leverage interpolation weights at calendar time t.
  CoefSArgs coef_args(double t) const {
    CoefSArgs a{cfg.p.rho * cfg.p.sigma, cfg.p.rd - cfg.p.rf, 0.0, 0, 0, ns};
    if (cfg.leverage) {
      const auto& T = cfg.leverage->t;
      if (t <= T.front()) a.k0 = a.k1 = 0;
      else if (t >= T.back()) a.k0 = a.k1 = nt - 1;
      else {
        const int k = static_cast<int>(std::upper_bound(T.begin(), T.end(), t) - T.begin()) - 1;
        a.k0 = k, a.k1 = k + 1, a.w = (t - T[k]) / (T[k + 1] - T[k]);
      }
    }
    return a;
  }
  void coef_s(Dat<double>& cs, double tau) {
    par_loop_passive("cde_coef_s", block, mesh::Range{0, ns, 0, 1}, CoefS{},
                     mesh::arg_dat(sgrid, mesh::Stencil(2, {0, 0, -1, 0, 1, 0}, "s3"), mesh::READ),
                     mesh::arg_dat(lev, mesh::READ), mesh::arg_dat(cs, mesh::WRITE),
                     mesh::arg_gbl(coef_args(cfg.p.T - tau)), mesh::arg_idx());
  }
  void mat1(Dat<double>& cs, double thdt) {
    par_loop("cde_mat1", block, block.interior(), Mat1{}, mesh::arg_dat(cs, mesh::READ), mesh::arg_dat(cv, mesh::READ),
             mesh::arg_dat(m1a, mesh::WRITE), mesh::arg_dat(m1b, mesh::WRITE), mesh::arg_dat(m1c, mesh::WRITE),
             mesh::arg_gbl(MatArgs{thdt, 0.5 * cfg.p.rd}));
  }
  void mat2(double thdt) {
    par_loop("cde_mat2", block, block.interior(), Mat2{}, mesh::arg_dat(csB, mesh::READ),
             mesh::arg_dat(cv, st_up(), mesh::READ), mesh::arg_dat(m2a, mesh::WRITE), mesh::arg_dat(m2b, mesh::WRITE),
             mesh::arg_dat(m2c, mesh::WRITE), mesh::arg_gbl(MatArgs{thdt, 0.5 * cfg.p.rd}));
  }
  void mid(double e_new) {
    par_loop("cde_mid", block, block.interior(), Mid{}, mesh::arg_dat(R1, st_up(), mesh::READ),
             mesh::arg_dat(G, st_up(), mesh::READ), mesh::arg_dat(csB, mesh::READ), mesh::arg_dat(cv, st_up(), mesh::READ),
             mesh::arg_dat(R2, mesh::WRITE), mesh::arg_gbl(MidArgs{e_new}));
  }

  void run(Tape* tape) {
    const HestonParams& p = cfg.p;
    const int total = cfg.steps + cfg.damping;
    const double dt = p.T / total, th = 0.5 + std::sqrt(3.0) / 6.0;
    const bool marks = tape && tape->recording();
    // u(0) = max(s - K, 0); the v = V_max row holds its boundary value s.
    // The node whose cell [midpoints] holds K takes the cell average of the payoff (smoothing of
    // the kink; elsewhere the payoff is linear on the cell and the nodal value is kept).
    std::vector<double> u0(ns);
    for (int i = 0; i < ns; ++i) {
      u0[i] = std::max(sx[i] - p.K, 0.0);
      const double a = i > 0 ? 0.5 * (sx[i - 1] + sx[i]) : sx[0], b = i < ns - 1 ? 0.5 * (sx[i] + sx[i + 1]) : sx[i];
      if (cfg.smooth_payoff && a < p.K && p.K < b) u0[i] = (b - p.K) * (b - p.K) / (2 * (b - a));
    }
    U.set([&](int i, int j, int) {
      if (i < 0 || i >= ns || j < 0 || j >= nv) return 0.0;
      return j == nv - 1 ? sx[i] : u0[i];
    });
    const bool varying = static_cast<bool>(cfg.leverage);
    coef_s(csB, 0.0);
    double built = -1;  // th dt of the matrices built
    if (marks) tape->step({U});
    for (int n = 1; n <= total; ++n) {
      const bool damp = n <= cfg.damping;
      const double t_old = (n - 1) * dt, t_new = n * dt, thdt = (damp ? 1.0 : th) * dt;
      const double e_old = std::exp(-p.rf * t_old), e_new = std::exp(-p.rf * t_new);
      if (varying) {
        coef_s(csA, t_old);
        coef_s(csB, t_new);
      }
      Dat<double>& cs_old = varying ? csA : csB;
      if (varying || built != thdt) mat1(csB, thdt);
      if (built != thdt) mat2(thdt);
      built = thdt;
      par_loop("cde_predictor", block, block.interior(), Predictor{}, mesh::arg_dat(U, st10(), mesh::READ),
               mesh::arg_dat(cs_old, mesh::READ), mesh::arg_dat(csB, mesh::READ), mesh::arg_dat(cv, mesh::READ),
               mesh::arg_dat(R1, mesh::WRITE), mesh::arg_dat(H, mesh::WRITE), mesh::arg_dat(G, mesh::WRITE),
               mesh::arg_gbl(PredArgs{dt, thdt, 0.5 * p.rd, e_old, e_new}));
      tridiag_solve("cde_solve_s", 0, m1a, m1b, m1c, R1, R1);
      mid(e_new);
      if (damp) {
        tridiag_solve("cde_solve_v", 1, m2a, m2b, m2c, R2, U);
      } else {
        tridiag_solve("cde_solve_v", 1, m2a, m2b, m2c, R2, R2);
        par_loop("cde_corrector", block, block.interior(), Corrector{}, mesh::arg_dat(R2, st10(), mesh::READ),
                 mesh::arg_dat(H, mesh::READ), mesh::arg_dat(csB, mesh::READ), mesh::arg_dat(cv, mesh::READ),
                 mesh::arg_dat(R1, mesh::WRITE), mesh::arg_dat(G, mesh::WRITE),
                 mesh::arg_gbl(CorrArgs{0.5 * dt, thdt, 0.5 * p.rd, e_new}));
        tridiag_solve("cde_solve_s", 0, m1a, m1b, m1c, R1, R1);
        mid(e_new);
        tridiag_solve("cde_solve_v", 1, m2a, m2b, m2c, R2, U);
      }
      if (marks) tape->step();
    }
    ex.wait_all();
  }

  std::vector<double> solution() {
    const auto view = U.values();
    std::vector<double> out(static_cast<std::size_t>(ns) * nv);
    for (int j = 0; j < nv; ++j)
      for (int i = 0; i < ns; ++i) out[i + static_cast<std::size_t>(ns) * j] = view(i, j);
    return out;
  }
};

namespace {
void check_config(const CdeConfig& c) {
  require(std::isfinite(c.p.s0) && c.p.s0 > 0, "--s0 must be positive");
  require(std::isfinite(c.p.K) && c.p.K > 0, "--K must be positive");
  require(std::isfinite(c.p.T) && c.p.T > 0, "--T must be positive");
  require(std::isfinite(c.p.v0) && c.p.v0 >= 0, "--v0 must be >= 0");
  require(std::isfinite(c.p.kappa) && c.p.kappa >= 0, "--kappa must be >= 0");
  require(std::isfinite(c.p.theta) && c.p.theta >= 0, "--theta must be >= 0");
  require(std::isfinite(c.p.sigma) && c.p.sigma > 0, "--sigma must be positive");
  require(std::isfinite(c.p.rho) && std::abs(c.p.rho) <= 1, "|--rho| must be <= 1");
  require(std::isfinite(c.p.rd) && std::isfinite(c.p.rf), "--rd and --rf must be finite");
  require(c.ns >= 5 && c.nv >= 5, "--ns and --nv must be >= 5");
  require(c.steps >= 1 && c.damping >= 0, "--steps must be >= 1 and --damping >= 0");
  require(c.tiles >= 0, "--tiles must be >= 0");
  require(c.p.s0 < c.smax_factor * c.p.K, "--s0 must be below S_max = 8 K");
  require(c.p.v0 <= c.vmax, "--v0 must be at most V_max = 5");
  if (c.leverage) check_leverage(*c.leverage);
}
}  // namespace

CdeSolver::CdeSolver(Executor& ex, const CdeConfig& cfg) {
  check_config(cfg);
  m_ = std::make_unique<Impl>(ex, cfg);
}
CdeSolver::~CdeSolver() = default;
void CdeSolver::run(Tape* tape) { m_->run(tape); }
std::vector<double> CdeSolver::solution() { return m_->solution(); }
double CdeSolver::price() { return interp_bicubic(m_->sx, m_->vy, m_->solution(), m_->cfg.p.s0, m_->cfg.p.v0); }
const std::vector<double>& CdeSolver::s() const { return m_->sx; }
const std::vector<double>& CdeSolver::v() const { return m_->vy; }
int CdeSolver::tiles() const { return m_->block.tiles(); }

double interp_bicubic(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& f,
                      double x0, double y0) {
  auto first = [](const std::vector<double>& g, double z) {
    const int n = static_cast<int>(g.size());
    int i = static_cast<int>(std::upper_bound(g.begin(), g.end(), z) - g.begin()) - 1;
    return std::clamp(i - 1, 0, n - 4);
  };
  auto weights = [](const std::vector<double>& g, int i0, double z, double* w) {
    for (int a = 0; a < 4; ++a) {
      double l = 1;
      for (int b = 0; b < 4; ++b)
        if (b != a) l *= (z - g[i0 + b]) / (g[i0 + a] - g[i0 + b]);
      w[a] = l;
    }
  };
  const int i0 = first(x, x0), j0 = first(y, y0);
  double wx[4], wy[4];
  weights(x, i0, x0, wx);
  weights(y, j0, y0, wy);
  const std::size_t nx = x.size();
  double r = 0;
  for (int b = 0; b < 4; ++b)
    for (int a = 0; a < 4; ++a) r += wx[a] * wy[b] * f[(i0 + a) + nx * (j0 + b)];
  return r;
}

}  // namespace stardiff::cde
