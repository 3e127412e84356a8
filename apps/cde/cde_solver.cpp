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
// The implicit operators I - th dt A1 and I - th dt A2 are factored once (Thomas factors kept as
// dats, built straight from cs and cv: cde_factor_s, cde_factor_v; A1 again per step only when
// the leverage depends on t), so every implicit solve is a substitution.
// One HV step from tau_{n-1} to tau_n (E = e^{-r_f tau}, A1h: A1 without its Neumann term b1):
//   predictor  H = U + dt/2 F(U), R1 = Y0 - th dt (A1h U + b1_old) + th dt b1_new, G = -th dt A2 U
//   solve s    (I - th dt A1) Y1 = R1              (cde_solve_s: in place in R1, per tile)
//   solve v    R2 = Y1 + G (row v = 0: minus f times row v_1, f = e / w_2(v_1), the elimination),
//              (I - th dt A2) Y2 = R2             (cde_solve_v: the mid stage fused, into R2)
//   corrector  R1 = H + dt/2 F(Y2) - th dt A1h Y2, G = -th dt A2 Y2   (H + dt/2 F(Y2) = ~Y0)
//   solve s    in place in R1; solve v from R1, G into U.
// A Douglas (theta = 1) damping step is predictor, solve s, solve v into U (its own factors).
// Primal mode (passive dats) fuses predictor + solve s and corrector + solve s into one
// vectorised external each (cde_predictor_s / cde_corrector_s, bitwise the par_loop path's
// results) and splits solve v into its forward sweep per tile (cde_solve_v_fwd, chained tile to
// tile) and its back substitution (cde_solve_v_bwd); adjoint mode runs the recorded par_loops
// and cde_solve_s.
//
// Adjoint mode: every factorization is built before the first step mark (the damping steps' in
// their own dats) and the coefficient loops are recorded. Each step is one external function,
// cde_hv_step (below: the tape keeps U before the step; with a save-all tape the step's primal
// also keeps its stages for the adjoint, up to CdeConfig::stage_bytes, else the adjoint recomputes
// them from U; then it runs the transposed step). CdeConfig::recorded_adjoint instead records the stage par_loops
// and solves one by one, each kernel's adjoint written by hand below (adjoint_reads declares the
// primals it reads, so the tape saves U, R2 and the solves' outputs, never R1 or G).
#include "cde_solver.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include <sys/mman.h>

#include "stardiff/adjoint/external.hpp"
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

// Adjoint convention of every kernel below (par_loop.hpp): components that are grid constants
// (SS, DS, VV, BV, DV) receive no adjoint — nothing active flows into them — so only the
// parameter-dependent components P, Q, MB, N1, N2 (cs) and W, EE (cv) carry one.

struct CoefSArgs {
  double rf, w;
  int k0, k1, n;
};
// cs at one time: L = (1 - w) lev_k0 + w lev_k1. Q1 holds -r_d / 2 (A1's share of -r_d u).
struct CoefS {
  static constexpr unsigned adjoint_reads = 0b111011;  // sgrid, lev and the scalars (not cs)
  void operator()(Acc<const double> sg, Acc<const double> lev, Acc<double> cs, const double* rho, const double* sigma,
                  const double* rd, const CoefSArgs* a, const int* idx) const {
    const int i = idx[0];
    const double s = sg(0, 0);
    const double L = (1.0 - a->w) * lev.c(a->k0) + a->w * lev.c(a->k1);
    for (int c = 0; c < NCS; ++c) cs.c(c) = 0.0;
    cs.c(SS) = s;
    if (i == 0) {
      cs.c(DS) = 1.0;
      return;
    }
    const double L2s2 = L * L * s * s, rd_rf = *rd - a->rf;
    if (i == a->n - 1) {  // S_max: virtual node s + h, u_{N+1} = u_{N-1} + 2 h e^{-r_f tau}
      const double h = s - sg(-1, 0);
      cs.c(P0 + 0) = L2s2 / (h * h);
      cs.c(P0 + 1) = -L2s2 / (h * h);
      cs.c(Q0 + 1) = -0.5 * *rd;
      cs.c(N1) = L2s2 / h;
      cs.c(N2) = rd_rf * s;
      return;
    }
    const double hm = s - sg(-1, 0), hp = sg(1, 0) - s;
    const double bm = -hp / (hm * (hm + hp)), b0 = (hp - hm) / (hm * hp), bp = hm / (hp * (hm + hp));
    const double dm = 2.0 / (hm * (hm + hp)), d0 = -2.0 / (hm * hp), dp = 2.0 / (hp * (hm + hp));
    const double S2 = 0.5 * L2s2, D = rd_rf * s, M = *rho * *sigma * L * s;
    cs.c(P0 + 0) = S2 * dm, cs.c(P0 + 1) = S2 * d0, cs.c(P0 + 2) = S2 * dp;
    cs.c(Q0 + 0) = D * bm, cs.c(Q0 + 1) = D * b0 - 0.5 * *rd, cs.c(Q0 + 2) = D * bp;
    cs.c(MB0 + 0) = M * bm, cs.c(MB0 + 1) = M * b0, cs.c(MB0 + 2) = M * bp;
  }
  void adjoint(Acc<const double> sg, Acc<const double> lev, Acc<double> lev_a1s, Acc<const double>,
               Acc<double> cs_a1s, const double* rho, double* rho_a1s, const double* sigma, double* sigma_a1s,
               const double*, double* rd_a1s, const CoefSArgs* a, const int* idx) const {
    const int i = idx[0];
    if (i == 0) return;
    const double s = sg(0, 0);
    const double L = (1.0 - a->w) * lev.c(a->k0) + a->w * lev.c(a->k1);
    double X_b = 0, L_b = 0;  // X = L^2 s^2
    if (i == a->n - 1) {
      const double h = s - sg(-1, 0);
      X_b = (cs_a1s.c(P0) - cs_a1s.c(P0 + 1)) / (h * h) + cs_a1s.c(N1) / h;
      *rd_a1s += cs_a1s.c(N2) * s - 0.5 * cs_a1s.c(Q0 + 1);
    } else {
      const double hm = s - sg(-1, 0), hp = sg(1, 0) - s;
      const double bm = -hp / (hm * (hm + hp)), b0 = (hp - hm) / (hm * hp), bp = hm / (hp * (hm + hp));
      const double dm = 2.0 / (hm * (hm + hp)), d0 = -2.0 / (hm * hp), dp = 2.0 / (hp * (hm + hp));
      const double S2_b = dm * cs_a1s.c(P0) + d0 * cs_a1s.c(P0 + 1) + dp * cs_a1s.c(P0 + 2);
      const double D_b = bm * cs_a1s.c(Q0) + b0 * cs_a1s.c(Q0 + 1) + bp * cs_a1s.c(Q0 + 2);
      const double M_b = bm * cs_a1s.c(MB0) + b0 * cs_a1s.c(MB0 + 1) + bp * cs_a1s.c(MB0 + 2);
      X_b = 0.5 * S2_b;
      *rd_a1s += D_b * s - 0.5 * cs_a1s.c(Q0 + 1);
      *rho_a1s += M_b * *sigma * L * s;
      *sigma_a1s += M_b * *rho * L * s;
      L_b += M_b * *rho * *sigma * s;
    }
    L_b += X_b * 2.0 * L * s * s;
    lev_a1s.c(a->k0) += (1.0 - a->w) * L_b;
    lev_a1s.c(a->k1) += a->w * L_b;
  }
};

struct CoefVArgs {
  int n;
};
// W1 holds -r_d / 2 (A2's share of -r_d u).
struct CoefV {
  static constexpr unsigned adjoint_reads = 0b111101;  // vgrid and the scalars (not cv)
  void operator()(Acc<const double> vg, Acc<double> cv, const double* kappa, const double* theta, const double* sigma,
                  const double* rd, const CoefVArgs* a, const int* idx) const {
    const int j = idx[1];
    for (int c = 0; c < NCV; ++c) cv.c(c) = 0.0;
    if (j == a->n - 1) {
      cv.c(DV) = 1.0;
      return;
    }
    const double v = vg(0, 0);
    if (j == 0) {  // the PDE at v = 0: kappa theta u_v by the second-order forward formula
      const double h1 = vg(0, 1) - v, h2 = vg(0, 2) - vg(0, 1);
      const double kt = *kappa * *theta;
      cv.c(W0 + 1) = kt * (-2.0 * h1 - h2) / (h1 * (h1 + h2)) - 0.5 * *rd;
      cv.c(W0 + 2) = kt * (h1 + h2) / (h1 * h2);
      cv.c(EE) = kt * -h1 / (h2 * (h1 + h2));
      return;
    }
    const double hm = v - vg(0, -1), hp = vg(0, 1) - v;
    const double bm = -hp / (hm * (hm + hp)), b0 = (hp - hm) / (hm * hp), bp = hm / (hp * (hm + hp));
    const double dm = 2.0 / (hm * (hm + hp)), d0 = -2.0 / (hm * hp), dp = 2.0 / (hp * (hm + hp));
    const double S = 0.5 * *sigma * *sigma * v, D = *kappa * (*theta - v);
    cv.c(W0 + 0) = S * dm + D * bm, cv.c(W0 + 1) = S * d0 + D * b0 - 0.5 * *rd, cv.c(W0 + 2) = S * dp + D * bp;
    cv.c(VV) = v;
    cv.c(BV0 + 0) = bm, cv.c(BV0 + 1) = b0, cv.c(BV0 + 2) = bp;
  }
  void adjoint(Acc<const double> vg, Acc<const double>, Acc<double> cv_a1s, const double* kappa, double* kappa_a1s,
               const double* theta, double* theta_a1s, const double* sigma, double* sigma_a1s, const double*,
               double* rd_a1s, const CoefVArgs* a, const int* idx) const {
    const int j = idx[1];
    if (j == a->n - 1) return;
    const double v = vg(0, 0);
    *rd_a1s -= 0.5 * cv_a1s.c(W0 + 1);
    if (j == 0) {
      const double h1 = vg(0, 1) - v, h2 = vg(0, 2) - vg(0, 1);
      const double kt_b = cv_a1s.c(W0 + 1) * (-2.0 * h1 - h2) / (h1 * (h1 + h2)) +
                          cv_a1s.c(W0 + 2) * (h1 + h2) / (h1 * h2) + cv_a1s.c(EE) * -h1 / (h2 * (h1 + h2));
      *kappa_a1s += kt_b * *theta;
      *theta_a1s += kt_b * *kappa;
      return;
    }
    const double hm = v - vg(0, -1), hp = vg(0, 1) - v;
    const double bm = -hp / (hm * (hm + hp)), b0 = (hp - hm) / (hm * hp), bp = hm / (hp * (hm + hp));
    const double dm = 2.0 / (hm * (hm + hp)), d0 = -2.0 / (hm * hp), dp = 2.0 / (hp * (hm + hp));
    const double S_b = dm * cv_a1s.c(W0) + d0 * cv_a1s.c(W0 + 1) + dp * cv_a1s.c(W0 + 2);
    const double D_b = bm * cv_a1s.c(W0) + b0 * cv_a1s.c(W0 + 1) + bp * cv_a1s.c(W0 + 2);
    *sigma_a1s += S_b * *sigma * v;
    *kappa_a1s += D_b * (*theta - v);
    *theta_a1s += D_b * *kappa;
  }
};

// The three split operators at a point (A1 without the Neumann term), and their adjoint.
struct Apply {
  double a0, a1h, a2;
  Apply(Acc<const double> u, Acc<const double> cs, Acc<const double> cv) {
    const double v = cv.c(VV);
    const double um = u(-1, 0), uc = u(0, 0), up = u(1, 0);
    a1h = (v * cs.c(P0) + cs.c(Q0)) * um + (v * cs.c(P0 + 1) + cs.c(Q0 + 1)) * uc +
          (v * cs.c(P0 + 2) + cs.c(Q0 + 2)) * up;
    a2 = cv.c(W0) * u(0, -1) + cv.c(W0 + 1) * uc + cv.c(W0 + 2) * u(0, 1) + cv.c(EE) * u(0, 2);
    const double bm = cv.c(BV0), b0 = cv.c(BV0 + 1), bp = cv.c(BV0 + 2);
    const double rm = bm * u(-1, -1) + b0 * um + bp * u(-1, 1);
    const double rc = bm * u(0, -1) + b0 * uc + bp * u(0, 1);
    const double rp = bm * u(1, -1) + b0 * up + bp * u(1, 1);
    a0 = v * (cs.c(MB0) * rm + cs.c(MB0 + 1) * rc + cs.c(MB0 + 2) * rp);
  }
};
// Adds the adjoint of (a0, a1h, a2) with seeds (a0_b, a1_b, a2_b), and uc_b at the centre, into
// u_a1s (each of the 10 stencil points incremented once), cs_a1s and cv_a1s.
inline void apply_adjoint(Acc<const double> u, Acc<double> u_a1s, Acc<const double> cs, Acc<double> cs_a1s,
                          Acc<const double> cv, Acc<double> cv_a1s, double a0_b, double a1_b, double a2_b,
                          double uc_b) {
  const double v = cv.c(VV);
  const double um = u(-1, 0), uc = u(0, 0), up = u(1, 0), ud = u(0, -1), uu = u(0, 1), uu2 = u(0, 2);
  const double a1v = a1_b * v;
  cs_a1s.c(P0) += a1v * um, cs_a1s.c(Q0) += a1_b * um;
  cs_a1s.c(P0 + 1) += a1v * uc, cs_a1s.c(Q0 + 1) += a1_b * uc;
  cs_a1s.c(P0 + 2) += a1v * up, cs_a1s.c(Q0 + 2) += a1_b * up;
  cv_a1s.c(W0) += a2_b * ud, cv_a1s.c(W0 + 1) += a2_b * uc;
  cv_a1s.c(W0 + 2) += a2_b * uu, cv_a1s.c(EE) += a2_b * uu2;
  double cm = a1_b * (v * cs.c(P0) + cs.c(Q0)), cc = uc_b + a1_b * (v * cs.c(P0 + 1) + cs.c(Q0 + 1)) +
                                                         a2_b * cv.c(W0 + 1);
  double cp = a1_b * (v * cs.c(P0 + 2) + cs.c(Q0 + 2)), cd = a2_b * cv.c(W0), cu = a2_b * cv.c(W0 + 2);
  u_a1s(0, 2) += a2_b * cv.c(EE);
  // a0 (the 9-point mixed stencil)
  const double t = a0_b * v;
  if (t != 0.0) {
    const double bm = cv.c(BV0), b0 = cv.c(BV0 + 1), bp = cv.c(BV0 + 2);
    const double umd = u(-1, -1), umu = u(-1, 1), upd = u(1, -1), upu = u(1, 1);
    const double rm = bm * umd + b0 * um + bp * umu;
    const double rc = bm * ud + b0 * uc + bp * uu;
    const double rp = bm * upd + b0 * up + bp * upu;
    cs_a1s.c(MB0) += t * rm, cs_a1s.c(MB0 + 1) += t * rc, cs_a1s.c(MB0 + 2) += t * rp;
    const double rm_b = t * cs.c(MB0), rc_b = t * cs.c(MB0 + 1), rp_b = t * cs.c(MB0 + 2);
    u_a1s(-1, -1) += rm_b * bm, u_a1s(-1, 1) += rm_b * bp, u_a1s(1, -1) += rp_b * bm, u_a1s(1, 1) += rp_b * bp;
    cm += rm_b * b0, cp += rp_b * b0, cc += rc_b * b0, cd += rc_b * bm, cu += rc_b * bp;
  }
  u_a1s(-1, 0) += cm, u_a1s(0, 0) += cc, u_a1s(1, 0) += cp, u_a1s(0, -1) += cd, u_a1s(0, 1) += cu;
}

struct PredArgs {
  double dt, thdt, e_old, e_new;
};
// The predictor with csA = cs(tau_{n-1}) and csB = cs(tau_n) (Predictor2), or one cs (Predictor1).
inline void predictor(Acc<const double> u, Acc<const double> csA, Acc<const double> csB, Acc<const double> cv,
                      Acc<double> r1, Acc<double> h, Acc<double> g, const PredArgs* p) {
  const Apply o(u, csA, cv);
  const double v = cv.c(VV);
  const double b_old = p->e_old * (v * csA.c(N1) + csA.c(N2)), b_new = p->e_new * (v * csB.c(N1) + csB.c(N2));
  const double F = o.a0 + o.a1h + b_old + o.a2;
  const double uc = u(0, 0);
  const bool dir = csB.c(DS) + cv.c(DV) > 0;
  r1(0, 0) = dir ? csB.c(SS) * p->e_new : uc + p->dt * F - p->thdt * (o.a1h + b_old) + p->thdt * b_new;
  h(0, 0) = uc + 0.5 * p->dt * F;
  g(0, 0) = -p->thdt * o.a2;
}
template <bool Same>  // csA and csB are one dat
inline void predictor_adjoint(Acc<const double> u, Acc<double> u_a1s, Acc<const double> csA, Acc<double> csA_a1s,
                              Acc<const double> csB, Acc<double> csB_a1s, Acc<const double> cv, Acc<double> cv_a1s,
                              double r1_a1s, double h_a1s, double g_a1s, const PredArgs* p) {
  const double v = cv.c(VV);
  const bool dir = csB.c(DS) + cv.c(DV) > 0;
  const double r1b = dir ? 0.0 : r1_a1s;
  const double Fb = p->dt * r1b + 0.5 * p->dt * h_a1s;
  const double a1b = Fb - p->thdt * r1b, boldb = a1b, bnewb = p->thdt * r1b;
  const double a2b = Fb - p->thdt * g_a1s;
  if (Same) {
    const double nb = p->e_old * boldb + p->e_new * bnewb;
    csA_a1s.c(N1) += v * nb, csA_a1s.c(N2) += nb;
  } else {
    csA_a1s.c(N1) += p->e_old * v * boldb, csA_a1s.c(N2) += p->e_old * boldb;
    csB_a1s.c(N1) += p->e_new * v * bnewb, csB_a1s.c(N2) += p->e_new * bnewb;
  }
  apply_adjoint(u, u_a1s, csA, csA_a1s, cv, cv_a1s, Fb, a1b, a2b, r1b + h_a1s);
}
struct Predictor1 {
  static constexpr unsigned adjoint_reads = 0b111;  // u, cs, cv
  void operator()(Acc<const double> u, Acc<const double> cs, Acc<const double> cv, Acc<double> r1, Acc<double> h,
                  Acc<double> g, const PredArgs* p) const {
    predictor(u, cs, cs, cv, r1, h, g, p);
  }
  void adjoint(Acc<const double> u, Acc<double> u_a1s, Acc<const double> cs, Acc<double> cs_a1s,
               Acc<const double> cv, Acc<double> cv_a1s, Acc<const double>, Acc<double> r1_a1s, Acc<const double>,
               Acc<double> h_a1s, Acc<const double>, Acc<double> g_a1s, const PredArgs* p) const {
    predictor_adjoint<true>(u, u_a1s, cs, cs_a1s, cs, cs_a1s, cv, cv_a1s, r1_a1s(0, 0), h_a1s(0, 0), g_a1s(0, 0), p);
  }
};
struct Predictor2 {
  static constexpr unsigned adjoint_reads = 0b1111;  // u, csA, csB, cv
  void operator()(Acc<const double> u, Acc<const double> csA, Acc<const double> csB, Acc<const double> cv,
                  Acc<double> r1, Acc<double> h, Acc<double> g, const PredArgs* p) const {
    predictor(u, csA, csB, cv, r1, h, g, p);
  }
  void adjoint(Acc<const double> u, Acc<double> u_a1s, Acc<const double> csA, Acc<double> csA_a1s,
               Acc<const double> csB, Acc<double> csB_a1s, Acc<const double> cv, Acc<double> cv_a1s,
               Acc<const double>, Acc<double> r1_a1s, Acc<const double>, Acc<double> h_a1s, Acc<const double>,
               Acc<double> g_a1s, const PredArgs* p) const {
    predictor_adjoint<false>(u, u_a1s, csA, csA_a1s, csB, csB_a1s, cv, cv_a1s, r1_a1s(0, 0), h_a1s(0, 0), g_a1s(0, 0), p);
  }
};

// ---- Pre-factored implicit solves (external functions) --------------------------------------
// A tridiagonal system (sub a, diagonal b, super c along a line) is stored by its Thomas factors
// A = L U: m = 1 / pivot, am = a m (L: diagonal 1/m, sub-diagonal a), u = c m (U: unit upper).
// Forward y_k = d_k m_k - am_k y_{k-1}, back x_k = y_k - u_k x_{k+1} (a and c are cheap functions
// of cs and cv, so a substitution may rebuild am and u from m bitwise). The factor dats are passive
// caches of functions of cs and cv: each solve declares cs and cv and its adjoint adds the
// matrix entries' adjoints (abar_k = -g_k x_{k-1}, bbar_k = -g_k x_k, cbar_k = -g_k x_{k+1})
// straight into those of cs and cv (the linear maps of mat1_entries / mat2_entries), so the
// factorizations have no adjoint work and nothing full-sized accumulates across steps.
// The adjoint of a solve is the transposed substitution with the same factors:
//   ybar_k = xbar_k - u_{k-1} ybar_{k-1};  p_k = am_k (ybar_k - p_{k+1}), g_k = m_k (ybar_k - p_{k+1})
// then dbar = g.

using CD = ExtDat<const double>;
using DD = ExtDat<double>;

// x86-64: AVX2 and (GCC) x86-64-v4 (AVX-512) clones besides the baseline one, picked at load time
// (ifunc). No FMA in any (AVX2 has none; for v4, which has, GCC's contraction is turned off), and
// no reassociation, so all give the same bits (and those of the scalar par_loops).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define CDE_SIMD_CLONES \
  __attribute__((noinline, target_clones("arch=x86-64-v4", "avx2", "default"), optimize("fp-contract=off")))
#elif defined(__x86_64__) && defined(__clang__)
#define CDE_SIMD_CLONES __attribute__((noinline, target_clones("avx2", "default")))
#else
#define CDE_SIMD_CLONES __attribute__((noinline))
#endif

// Element (0, j) component c of the tile holding row j (all tiles of the task; missing axes
// have stride 0). Untiled dats (no outer axis): their one buffer.
template <class T>
T* row_ptr(const ExtDat<T>& e, int j, int c = 0) {
  int t = e.tile_lo();
  if (e.dat().tiled())
    for (; t < e.tile_hi(); ++t)
      if (j >= e.row_lo(t) && j < e.row_hi(t)) break;
  if (t == e.tile_hi()) throw Error("cde: row " + std::to_string(j) + " of '" + e.name() + "' not held");
  const mesh::TileGeom& g = e.geom(t);
  return e.data(t) + g.origin + c + j * g.s[1];
}
long long stride0(const CD& e) { return e.geom(e.tile_lo()).s[0]; }
// Element (0, j) of tile t's buffer (any row it holds, ghosts included).
template <class T>
T* tile_row(const ExtDat<T>& e, int t, int j) {
  const mesh::TileGeom& g = e.geom(t);
  return e.data(t) + g.origin + j * g.s[1];
}

[[noreturn]] void bad_pivot(const ExternalContext& ctx, int i, int j) {
  throw Error(std::string("cde: '") + ctx.name + "': zero or non-finite pivot at (" + std::to_string(i) + ", " +
              std::to_string(j) + ")");
}

struct FacArgs {
  double thdt;
  int ns, nv;
};

// I - th dt A1 at (i, j) (Dirichlet rows: identity; a = 0 at i = 0, c = 0 at i = ns - 1).
inline void mat1_entries(const double* csi, double v, bool dir, double t, double& a, double& b, double& c) {
  a = dir ? 0.0 : -t * (v * csi[P0] + csi[Q0]);
  b = dir ? 1.0 : 1.0 - t * (v * csi[P0 + 1] + csi[Q0 + 1]);
  c = dir ? 0.0 : -t * (v * csi[P0 + 2] + csi[Q0 + 2]);
}

// cde_factor_s: factors of I - th dt A1 along s for every v row (one task, all tiles).
// fa, fu null (primal mode): m only; the substitutions rebuild am = a m and u = c m.
void factor_s_rows(const ExternalContext& ctx, const FacArgs& A, const CD& cs, const CD& cv, const DD& fm,
                   const DD* fa, const DD* fu) {
  const double* c0 = row_ptr(cs, 0);
  const long long sc = stride0(cs);
  for (int j = 0; j < A.nv; ++j) {
    const double v = *row_ptr(cv, j, VV), dv = *row_ptr(cv, j, DV);
    double *m = row_ptr(fm, j), *am = fa ? row_ptr(*fa, j) : nullptr, *u = fu ? row_ptr(*fu, j) : nullptr;
    double up = 0;
    for (int i = 0; i < A.ns; ++i) {
      const double* ci = c0 + i * sc;
      double a, b, c;
      mat1_entries(ci, v, ci[DS] + dv > 0, A.thdt, a, b, c);
      const double piv = b - a * up;
      if (piv == 0.0 || !std::isfinite(piv)) bad_pivot(ctx, i, j);
      const double r = 1.0 / piv;
      m[i] = r, up = c * r;
      if (am) am[i] = a * r, u[i] = up;
    }
  }
}
struct FactorS {
  FacArgs A;
  void operator()(const ExternalContext& ctx, CD cs, CD cv, DD fm, DD fa, DD fu) const {
    factor_s_rows(ctx, A, cs, cv, fm, &fa, &fu);
  }
};
struct FactorSM {
  FacArgs A;
  void operator()(const ExternalContext& ctx, CD cs, CD cv, DD fm) const { factor_s_rows(ctx, A, cs, cv, fm, nullptr, nullptr); }
};
// The factors are passive (see above): the factorizations' adjoints have nothing to do.
struct FactorAdjoint {
  FacArgs A;
  void operator()(const ExternalContext&, CD, DD, CD, DD, CD, DD, CD, DD, CD, DD) const {}
};

// I - th dt A2 at (i, j), row v = 0 with its third entry eliminated by row v_1 (Dirichlet rows:
// identity). cvj, cv1: cv at row j and j + 1.
// Its entries depend on the row only, but for the Dirichlet selection: mat2_row gives them.
inline void mat2_row(const double* cvj, const double* cv1, double t, int j, double& aa, double& bb, double& cc) {
  aa = -t * cvj[W0], bb = 1.0 - t * cvj[W0 + 1], cc = -t * cvj[W0 + 2];
  const double e = cvj[EE];
  if (e != 0.0) {
    const double f = e / cv1[W0 + 2];
    const double m10 = -t * cv1[W0], m11 = 1.0 - t * cv1[W0 + 1];
    bb -= f * m10;
    cc -= f * m11;
    aa = 0.0;
  }
  if (j == 0) aa = 0.0;
}
inline void mat2_entries(const double* cvj, const double* cv1, bool dir, double t, int j, double& a, double& b,
                         double& c) {
  double aa, bb, cc;
  mat2_row(cvj, cv1, t, j, aa, bb, cc);
  a = dir ? 0.0 : aa;
  b = dir ? 1.0 : bb;
  c = dir ? 0.0 : cc;
}

// cde_factor_v: factors of I - th dt A2 along v for every s column (one task, all tiles).
void factor_v_rows(const ExternalContext& ctx, const FacArgs& A, const CD& cs, const CD& cv, const DD& fm,
                   const DD* fa, const DD* fu) {
  const double* c0 = row_ptr(cs, 0);
  const long long sc = stride0(cs);
  thread_local std::vector<double> ubuf;
  ubuf.assign(2 * static_cast<std::size_t>(A.ns), 0.0);
  double *up = ubuf.data(), *ucur = up + A.ns;
  for (int j = 0; j < A.nv; ++j) {
    const double *cvj = row_ptr(cv, j), *cv1 = j + 1 < A.nv ? row_ptr(cv, j + 1) : cvj;
    double *m = row_ptr(fm, j), *am = fa ? row_ptr(*fa, j) : nullptr, *u = fu ? row_ptr(*fu, j) : nullptr;
    for (int i = 0; i < A.ns; ++i) {
      double a, b, c;
      mat2_entries(cvj, cv1, c0[i * sc + DS] + cvj[DV] > 0, A.thdt, j, a, b, c);
      const double piv = j == 0 ? b : b - a * up[i];
      if (piv == 0.0 || !std::isfinite(piv)) bad_pivot(ctx, i, j);
      const double r = 1.0 / piv;
      m[i] = r, ucur[i] = c * r;
      if (am) am[i] = a * r, u[i] = ucur[i];
    }
    std::swap(up, ucur);
  }
}
struct FactorV {
  FacArgs A;
  void operator()(const ExternalContext& ctx, CD cs, CD cv, DD fm, DD fa, DD fu) const {
    factor_v_rows(ctx, A, cs, cv, fm, &fa, &fu);
  }
};
struct FactorVM {
  FacArgs A;
  void operator()(const ExternalContext& ctx, CD cs, CD cv, DD fm) const { factor_v_rows(ctx, A, cs, cv, fm, nullptr, nullptr); }
};
// cde_solve_s: x = (I - th dt A1)^{-1} x along s, in place, one task per tile; lines (v rows)
// four at a time (independent recurrences side by side).
struct SolveS {
  double thdt;
  int ns, nv;
  void operator()(const ExternalContext& ctx, CD, CD, CD fm, CD fa, CD fu, DD x) const {
    for (int t = ctx.tile_lo; t < ctx.tile_hi; ++t) {
      const int j0 = std::max(x.row_lo(t), 0), j1 = std::min(x.row_hi(t), nv);
      for (int j = j0; j < j1; j += 4) {
        const int L = std::min(4, j1 - j);
        const double *m[4], *am[4], *u[4];
        double* d[4];
        for (int q = 0; q < 4; ++q) {
          const int r = j + std::min(q, L - 1);
          m[q] = row_ptr(fm, r), am[q] = row_ptr(fa, r), u[q] = row_ptr(fu, r), d[q] = row_ptr(x, r);
        }
        double y[4];
        for (int q = 0; q < 4; ++q) y[q] = d[q][0] * m[q][0];
        for (int q = 0; q < 4; ++q) d[q][0] = y[q];
        for (int i = 1; i < ns; ++i) {
          for (int q = 0; q < 4; ++q) y[q] = d[q][i] * m[q][i] - am[q][i] * y[q];
          for (int q = 0; q < 4; ++q) d[q][i] = y[q];
        }
        for (int i = ns - 2; i >= 0; --i) {
          for (int q = 0; q < 4; ++q) y[q] = d[q][i] - u[q][i] * y[q];
          for (int q = 0; q < 4; ++q) d[q][i] = y[q];
        }
      }
    }
  }
};
// The transposed substitution of four lines side by side (a repeated last line computes the same
// values): g[q] holds x's adjoint on entry and the right-hand side's on return,
//   ybar_i = g_i - u_{i-1} ybar_{i-1} (forward), g_i = m_i (ybar_i - p_{i+1}), p_i = am_i (ybar_i - p_{i+1})
// (backward); row(i, gi) is called at each i of the backward loop with the four lines' g_i (stored).
// am(q, i), u(q, i): the factors' am and u of line q at i (stored, or rebuilt from m: the same bits).
// gin (may be g): x's adjoint read from there instead, g then only written.
template <class Am, class U, class RowHook>
inline void transposed_sweep4(int ns, const double* const* m, Am am, U u, double* const* g, RowHook row,
                              const double* const* gin = nullptr) {
  if (!gin) gin = g;
  double y[4], p[4] = {0, 0, 0, 0};
  for (int q = 0; q < 4; ++q) y[q] = gin[q][0];
  for (int q = 0; q < 4; ++q) g[q][0] = y[q];
  for (int i = 1; i < ns; ++i) {
    for (int q = 0; q < 4; ++q) y[q] = gin[q][i] - u(q, i - 1) * y[q];
    for (int q = 0; q < 4; ++q) g[q][i] = y[q];
  }
  for (int i = ns - 1; i >= 0; --i) {
    double gi[4];
    for (int q = 0; q < 4; ++q) {
      const double w = g[q][i] - p[q];
      p[q] = am(q, i) * w;
      gi[q] = m[q][i] * w;
    }
    for (int q = 0; q < 4; ++q) g[q][i] = gi[q];
    row(i, gi);
  }
}
// The adjoint: g per line, four lines side by side; cs's adjoint from A1's entries (the
// Dirichlet rows are constant).
struct SolveSAdjoint {
  double thdt;
  int ns, nv;
  void operator()(const ExternalContext& ctx, CD cs, DD cs_b, CD cv, DD, CD fm, DD, CD fa, DD, CD fu, DD, CD x,
                  DD xb) const {
    const double* c0 = row_ptr(cs, 0);
    const long long sc = stride0(cs);
    double* cb0 = cs_b.valid() ? row_ptr(cs_b, 0) : nullptr;
    for (int t = ctx.tile_lo; t < ctx.tile_hi; ++t) {
      const int j0 = std::max(xb.row_lo(t), 0), j1 = std::min(xb.row_hi(t), nv);
      for (int j = j0; j < j1; j += 4) {  // a repeated last line computes the same values
        const int L = std::min(4, j1 - j);
        const double *m[4], *am[4], *u[4], *xs[4];
        double* g[4];
        double v[4], dv[4];
        for (int q = 0; q < 4; ++q) {
          const int r = j + std::min(q, L - 1);
          m[q] = row_ptr(fm, r), am[q] = row_ptr(fa, r), u[q] = row_ptr(fu, r), xs[q] = row_ptr(x, r);
          g[q] = row_ptr(xb, r);
          v[q] = *row_ptr(cv, r, VV), dv[q] = *row_ptr(cv, r, DV);
        }
        auto amf = [&](int q, int i) { return am[q][i]; };
        auto uf = [&](int q, int i) { return u[q][i]; };
        if (!cb0) {
          transposed_sweep4(ns, m, amf, uf, g, [](int, const double*) {});
          continue;
        }
        transposed_sweep4(ns, m, amf, uf, g, [&](int i, const double* gi) {
          const double* ci = c0 + i * sc;
          double* b = cb0 + i * sc;
          for (int q = 0; q < L; ++q) {  // each line once: -th dt times (abar, bbar, cbar) into P, Q
            if (ci[DS] + dv[q] > 0) continue;
            const double tg = thdt * gi[q];
            const double A = i > 0 ? tg * xs[q][i - 1] : 0.0, B = tg * xs[q][i], C = i + 1 < ns ? tg * xs[q][i + 1] : 0.0;
            b[P0] += v[q] * A, b[Q0] += A;
            b[P0 + 1] += v[q] * B, b[Q0 + 1] += B;
            b[P0 + 2] += v[q] * C, b[Q0 + 2] += C;
          }
        });
      }
    }
  }
};

struct SolveVArgs {
  double e_new, thdt;
  int ns, nv;
};
// cde_solve_v: the HV "mid" stage and the v-direction implicit solve, rows of s side by side
// (contiguous, vectorisable):
//   row = (Y + G)(s, v_1);  R = Y + G, row v = 0 minus f row (f = e / w_2(v_1), the elimination
//   of A2's third entry at v = 0), Dirichlet nodes s e_new;  x = (I - th dt A2)^{-1} R.
// The factors' am and u are rebuilt from m and A2's row constants (am = a m, u = c m: the
// products FactorV stored, so the same bits), which saves two of the sweeps' memory streams.
// Y, G, CV, M, X: row j -> element (0, j) of y, g, cv, the factors' m and x (rows of s).
// solve_v_fwd: the mid stage and the forward sweep of rows [j0, j1) into x (row 1 of Y and G
// also read when j0 = 0); xprev: x's row j0 - 1 (j0 > 0); carry (may be null): x's row j1 - 1
// copied there. solve_v_bwd: the back substitution of every row, in place on x. In primal mode
// the forward sweep runs per tile in tile order (cde_solve_v_fwd, the carry handed from tile to
// tile), so a tile's sweep overlaps the next tiles' predictor; solve_v_core is both, one task.
template <class YRow, class GRow, class CvRow, class MRow, class XRow>
CDE_SIMD_CLONES void solve_v_fwd(const SolveVArgs& A, int j0, int j1, YRow yrow, GRow grow, const double* c0,
                                 long long sc, CvRow cvrow, MRow mrow, XRow xrow, const double* xprev,
                                 double* carry) {
  const int ns = A.ns, nv = A.nv;
  thread_local std::vector<double> rbuf;
  rbuf.resize(3 * static_cast<std::size_t>(ns));
  double *rw = rbuf.data(), *ds = rw + ns, *ss = ds + ns;
  for (int i = 0; i < ns; ++i) ds[i] = c0[i * sc + DS], ss[i] = c0[i * sc + SS];
  double f = 0.0;  // rows 0 and 1 (cv, Y, G) are read by the sweep holding row 0 only
  if (j0 == 0) {
    const double e0 = cvrow(0)[EE];
    f = e0 != 0.0 ? e0 / cvrow(1)[W0 + 2] : 0.0;
    const double *y1 = yrow(1), *g1 = grow(1);
    for (int i = 0; i < ns; ++i) rw[i] = y1[i] + g1[i];
  }
  const double* xp = j0 > 0 ? xprev : nullptr;
  for (int j = j0; j < j1; ++j) {
    const double *yj = yrow(j), *gj = grow(j), *m = mrow(j);
    const bool dv = cvrow(j)[DV] > 0;
    const double fj = j == 0 ? f : 0.0;
    double aa, bb, cc;
    const double* cvj = cvrow(j);
    mat2_row(cvj, j + 1 < nv ? cvrow(j + 1) : cvj, A.thdt, j, aa, bb, cc);
    double* xj = xrow(j);
    for (int i = 0; i < ns; ++i) {
      const bool dir = dv || ds[i] > 0;
      const double r = dir ? ss[i] * A.e_new : (yj[i] + gj[i]) - fj * rw[i];
      const double am = (dir ? 0.0 : aa) * m[i];
      xj[i] = j == 0 ? r * m[i] : r * m[i] - am * xp[i];
    }
    xp = xj;
  }
  if (carry && j1 > j0) std::copy_n(xp, ns, carry);
}
template <class CvRow, class MRow, class XRow>
CDE_SIMD_CLONES void solve_v_bwd(const SolveVArgs& A, const double* c0, long long sc, CvRow cvrow, MRow mrow,
                                 XRow xrow) {
  const int ns = A.ns, nv = A.nv;
  thread_local std::vector<double> dbuf;
  dbuf.resize(static_cast<std::size_t>(ns));
  double* ds = dbuf.data();
  for (int i = 0; i < ns; ++i) ds[i] = c0[i * sc + DS];
  const double* xp = xrow(nv - 1);
  for (int j = nv - 2; j >= 0; --j) {
    const double* m = mrow(j);
    const bool dv = cvrow(j)[DV] > 0;
    double aa, bb, cc;
    const double* cvj = cvrow(j);
    mat2_row(cvj, cvrow(j + 1), A.thdt, j, aa, bb, cc);
    double* xj = xrow(j);
    for (int i = 0; i < ns; ++i) {
      const bool dir = dv || ds[i] > 0;
      xj[i] -= ((dir ? 0.0 : cc) * m[i]) * xp[i];
    }
    xp = xj;
  }
}
template <class YRow, class GRow, class CvRow, class MRow, class XRow>
void solve_v_core(const SolveVArgs& A, YRow yrow, GRow grow, const double* c0, long long sc, CvRow cvrow, MRow mrow,
                  XRow xrow) {
  solve_v_fwd(A, 0, A.nv, yrow, grow, c0, sc, cvrow, mrow, xrow, nullptr, nullptr);
  solve_v_bwd(A, c0, sc, cvrow, mrow, xrow);
}
void solve_v_rows(const SolveVArgs& A, const CD& y, const CD& g, const CD& cs, const CD& cv, const CD& fm,
                  const DD& x) {
  solve_v_core(A, [&](int j) { return row_ptr(y, j); }, [&](int j) { return row_ptr(g, j); }, row_ptr(cs, 0),
               stride0(cs), [&](int j) { return row_ptr(cv, j); }, [&](int j) { return row_ptr(fm, j); },
               [&](int j) { return row_ptr(x, j); });
}
struct SolveV {
  SolveVArgs A;
  void operator()(const ExternalContext&, CD y, CD g, CD cs, CD cv, CD fm, CD, CD, DD x) const {
    solve_v_rows(A, y, g, cs, cv, fm, x);
  }
};
// Primal mode (the factors' m only): cde_solve_v_fwd, one task per tile (its rows; carry: x's
// last row so far, read and written, which chains the tiles' tasks in order), then
// cde_solve_v_bwd, one task holding every tile. The same arithmetic as solve_v_core.
struct SolveVFwd {
  SolveVArgs A;
  void operator()(const ExternalContext& ctx, CD y, CD g, CD cs, CD cv, CD fm, DD carry, DD x) const {
    const int t = ctx.tile_lo;
    const int j0 = std::max(x.row_lo(t), 0), j1 = std::min(x.row_hi(t), A.nv);
    double* c = row_ptr(carry, 0);
    solve_v_fwd(A, j0, j1, [&](int j) { return row_ptr(y, j); }, [&](int j) { return row_ptr(g, j); },
                row_ptr(cs, 0), stride0(cs), [&](int j) { return tile_row(cv, t, j); },  // + its ghost row j1
                [&](int j) { return row_ptr(fm, j); }, [&](int j) { return row_ptr(x, j); }, c, c);
  }
};
struct SolveVBwd {
  SolveVArgs A;
  void operator()(const ExternalContext&, CD cs, CD cv, CD fm, DD x) const {
    solve_v_bwd(A, row_ptr(cs, 0), stride0(cs), [&](int j) { return row_ptr(cv, j); },
                [&](int j) { return row_ptr(fm, j); }, [&](int j) { return row_ptr(x, j); });
  }
};

// The adjoint of cde_solve_v (rows as in solve_v_core; has_*: that adjoint is held; assign: the
// right-hand side's adjoints yb, gb are set, as 0 + value (the bits of adding into zeros), rows
// 0 .. nv - 1, instead of added to; zero_xb false: x's adjoint rows are left holding scratch, not
// zeroed, for a caller that overwrites them).
template <class CvRow, class CvbRow, class MRow, class AmRow, class URow, class XRow, class XbRow, class YbRow,
          class GbRow>
CDE_SIMD_CLONES void solve_v_adjoint_core(const SolveVArgs& A, const double* c0, long long sc, CvRow cvrow, CvbRow cvbrow, bool has_cvb,
                          MRow mrow, AmRow amrow, URow urow, XRow xrow, XbRow xbrow, YbRow ybrow, bool has_yb,
                          GbRow gbrow, bool has_gb, bool assign = false, bool zero_xb = true) {
    const int ns = A.ns, nv = A.nv;
    thread_local std::vector<double> buf;
    buf.assign(5 * static_cast<std::size_t>(ns), 0.0);
    double *p = buf.data(), *rb = p + ns, *rw = rb + ns, *ds = rw + ns, *rr = ds + ns;
    for (int i = 0; i < ns; ++i) ds[i] = c0[i * sc + DS];
    // In the sweeps the factors' am and u are rebuilt from m and A2's row constants (as
    // solve_v_core: the products FactorV stored, the same bits), saving two memory streams.
    auto row_consts = [&](int j, double& aa, double& cc) {
      double bb;
      const double* cvj = cvrow(j);
      mat2_row(cvj, j + 1 < nv ? cvrow(j + 1) : cvj, A.thdt, j, aa, bb, cc);
    };
    // ybar (forward, in x_b), then g (backward, in x_b) with the matrix entries' adjoints.
    for (int j = 1; j < nv; ++j) {
      const double* m = mrow(j - 1);
      const bool dvp = cvrow(j - 1)[DV] > 0;
      double aa, cc;
      row_consts(j - 1, aa, cc);
      const double* gp = xbrow(j - 1);
      double* gj = xbrow(j);
      for (int i = 0; i < ns; ++i) {
        const bool dir = dvp || ds[i] > 0;
        gj[i] -= ((dir ? 0.0 : cc) * m[i]) * gp[i];
      }
    }
    // The mid stage (R = Y + G - f row at v = 0, Dirichlet nodes constant) row by row as g is
    // known. row = R at v_1 (where (s, v_0) is not a Dirichlet node, neither is (s, v_1)), rebuilt
    // from x and the factors: R_1 = (y_1 + am_1 y_0) / m_1, y_k = x_k + u_k x_{k+1}.
    const double e0 = cvrow(0)[EE];
    const double w2 = cvrow(1)[W0 + 2], f = e0 != 0.0 ? e0 / w2 : 0.0;
    if (e0 != 0.0) {
      const double *x0 = xrow(0), *x1 = xrow(1), *x2 = xrow(2), *u0 = urow(0),
                   *u1 = urow(1), *m1 = mrow(1), *am1 = amrow(1);
      for (int i = 0; i < ns; ++i) {
        const double y0 = x0[i] + u0[i] * x1[i], y1 = x1[i] + u1[i] * x2[i];
        rw[i] = (y1 + am1[i] * y0) / m1[i];
      }
    }
    double f_b = 0;
    for (int j = nv - 1; j >= 0; --j) {
      const double* m = mrow(j);
      double* gj = xbrow(j);
      const bool dv = cvrow(j)[DV] > 0;
      double aa, cc;
      row_consts(j, aa, cc);
      // g of row j; r = g at non-Dirichlet nodes (the right-hand side's adjoint), 0 elsewhere
      for (int i = 0; i < ns; ++i) {
        const double w = gj[i] - p[i];
        p[i] = ((dv || ds[i] > 0 ? 0.0 : aa) * m[i]) * w;
        const double g = m[i] * w;
        rr[i] = dv || ds[i] > 0 ? 0.0 : g;
      }
      if (zero_xb) std::fill_n(gj, ns, 0.0);  // x is written: its adjoint before the call is zero
      if (has_cvb && !dv) {  // A2's entries of row j (non-Dirichlet nodes): sums over s, 4 lanes
        const double *xj = xrow(j), *xm = j > 0 ? xrow(j - 1) : xj, *xq = j + 1 < nv ? xrow(j + 1) : xj;
        double la[4] = {0, 0, 0, 0}, lb[4] = {0, 0, 0, 0}, lc[4] = {0, 0, 0, 0};
        int i = 0;
        for (; i + 4 <= ns; i += 4)
          for (int l = 0; l < 4; ++l) {
            const double gd = rr[i + l];
            la[l] -= gd * xm[i + l], lb[l] -= gd * xj[i + l], lc[l] -= gd * xq[i + l];
          }
        double sa = (la[0] + la[1]) + (la[2] + la[3]), sb = (lb[0] + lb[1]) + (lb[2] + lb[3]),
               sc2 = (lc[0] + lc[1]) + (lc[2] + lc[3]);  // sums of abar, bbar, cbar
        for (; i < ns; ++i) sa -= rr[i] * xm[i], sb -= rr[i] * xj[i], sc2 -= rr[i] * xq[i];
        if (j == 0) sa = 0;
        if (j + 1 == nv) sc2 = 0;
        const double t = A.thdt, *cvj = cvrow(j);
        double* bj = cvbrow(j);
        bj[W0 + 1] -= t * sb;
        bj[W0 + 2] -= t * sc2;
        if (cvj[EE] == 0.0) {
          if (j > 0) bj[W0] -= t * sa;
        } else {  // row v = 0 with the elimination by row v_1
          const double* cv1 = cvrow(j + 1);
          double* b1 = cvbrow(j + 1);
          const double w21 = cv1[W0 + 2], f1 = cvj[EE] / w21;
          const double m10 = -t * cv1[W0], m11 = 1.0 - t * cv1[W0 + 1];
          const double fb1 = -(m10 * sb + m11 * sc2);
          b1[W0] += t * f1 * sb;
          b1[W0 + 1] += t * f1 * sc2;
          bj[EE] += fb1 / w21;
          b1[W0 + 2] -= fb1 * f1 / w21;
        }
      }
      double *yb = has_yb ? ybrow(j) : nullptr, *gb = has_gb ? gbrow(j) : nullptr;
      if (yb) {
        if (assign)
          for (int i = 0; i < ns; ++i) yb[i] = 0.0 + rr[i];
        else
          for (int i = 0; i < ns; ++i) yb[i] += rr[i];
      }
      if (gb) {
        if (assign)
          for (int i = 0; i < ns; ++i) gb[i] = 0.0 + rr[i];
        else
          for (int i = 0; i < ns; ++i) gb[i] += rr[i];
      }
      if (j == 0 && e0 != 0.0)
        for (int i = 0; i < ns; ++i) {
          rb[i] -= f * rr[i];
          f_b -= rw[i] * rr[i];
        }
    }
    {
      double *yb = has_yb ? ybrow(1) : nullptr, *gb = has_gb ? gbrow(1) : nullptr;
      for (int i = 0; i < ns; ++i) {
        if (yb) yb[i] += rb[i];
        if (gb) gb[i] += rb[i];
      }
    }
    if (e0 != 0.0 && has_cvb) {
      cvbrow(0)[EE] += f_b / w2;
      cvbrow(1)[W0 + 2] -= f_b * f / w2;
    }
}
struct SolveVAdjoint {
  SolveVArgs A;
  void operator()(const ExternalContext&, CD, DD y_b, CD, DD g_b, CD cs, DD, CD cv, DD cv_b, CD fm, DD, CD fa,
                  DD, CD fu, DD, CD x, DD x_b) const {
    auto rows = [](const auto& e) { return [&e](int j) { return row_ptr(e, j); }; };
    solve_v_adjoint_core(A, row_ptr(cs, 0), stride0(cs), rows(cv), rows(cv_b), cv_b.valid(), rows(fm), rows(fa),
                         rows(fu), rows(x), rows(x_b), rows(y_b), y_b.valid(), rows(g_b), g_b.valid());
  }
};

// ---- Primal mode (no adjoint): the explicit stages fused with the s solve ------------------
// cde_predictor_s / cde_corrector_s, one task per tile: rows of s four at a time, each row's
// right-hand side by the predictor's / corrector's arithmetic (the same expressions, in the same
// order, as Apply / predictor / Corrector: results bitwise those of the par_loops and
// cde_solve_s), then the four rows' substitutions side by side while they are in cache. Loops
// run along s over contiguous rows (cs transposed once per call). Adjoint mode keeps the
// recorded par_loops; these externals have no adjoint (never recorded: passive dats).


// cs as structure of arrays: component c of node i at soa[c * ns + i].
const double* cs_soa(const CD& cs, int ns, std::vector<double>& buf) {
  buf.resize(static_cast<std::size_t>(NCS) * ns);
  const double* c0 = row_ptr(cs, 0);
  const long long sc = stride0(cs);
  for (int i = 0; i < ns; ++i)
    for (int c = 0; c < NCS; ++c) buf[static_cast<std::size_t>(c) * ns + i] = c0[i * sc + c];
  return buf.data();
}
// The four rows' substitutions (rows d[q]; a repeated last row computes the same values), am and
// u rebuilt from m and A1's entries (cs of the factorization as arrays sB, v and the Dirichlet
// flag of each row): the products cde_factor_s stores, so the same bits.
inline void subst4(int ns, const double* const* m, const double* sB, const double* v, const double* dv, double t,
                   double* const* d) {
  const double *P0r = sB + P0 * ns, *Q0r = sB + Q0 * ns, *P2r = sB + (P0 + 2) * ns, *Q2r = sB + (Q0 + 2) * ns,
               *DSr = sB + DS * ns;
  double y[4];
  for (int q = 0; q < 4; ++q) y[q] = d[q][0] * m[q][0];
  for (int q = 0; q < 4; ++q) d[q][0] = y[q];
  for (int i = 1; i < ns; ++i) {
    for (int q = 0; q < 4; ++q) {
      const double a = DSr[i] + dv[q] > 0 ? 0.0 : -t * (v[q] * P0r[i] + Q0r[i]);
      y[q] = d[q][i] * m[q][i] - (a * m[q][i]) * y[q];
    }
    for (int q = 0; q < 4; ++q) d[q][i] = y[q];
  }
  for (int i = ns - 2; i >= 0; --i) {
    for (int q = 0; q < 4; ++q) {
      const double c = DSr[i] + dv[q] > 0 ? 0.0 : -t * (v[q] * P2r[i] + Q2r[i]);
      y[q] = d[q][i] - (c * m[q][i]) * y[q];
    }
    for (int q = 0; q < 4; ++q) d[q][i] = y[q];
  }
}

// One row j of (a0, a1h, a2) at every s node, the predictor's or corrector's outputs (Pred:
// r1, h, g from csA (old) and csB (new); else the corrector: r1, g from csB and hin).
template <bool Pred>
CDE_SIMD_CLONES void explicit_row(int ns, const double* __restrict sA, const double* __restrict sB, const double* __restrict cvj,
                  const double* __restrict um1, const double* __restrict u0, const double* __restrict up1,
                  const double* __restrict up2, const double* __restrict hin, double* __restrict r1,
                  double* __restrict h, double* __restrict g, double dt, double thdt, double e_old, double e_new) {
  const double v = cvj[VV], W0v = cvj[W0], W1v = cvj[W0 + 1], W2v = cvj[W0 + 2], Ev = cvj[EE];
  const double bm = cvj[BV0], b0 = cvj[BV0 + 1], bp = cvj[BV0 + 2], dv = cvj[DV];
  const double *P0a = sA + P0 * ns, *P1a = sA + (P0 + 1) * ns, *P2a = sA + (P0 + 2) * ns;
  const double *Q0a = sA + Q0 * ns, *Q1a = sA + (Q0 + 1) * ns, *Q2a = sA + (Q0 + 2) * ns;
  const double *M0a = sA + MB0 * ns, *M1a = sA + (MB0 + 1) * ns, *M2a = sA + (MB0 + 2) * ns;
  const double *N1a = sA + N1 * ns, *N2a = sA + N2 * ns, *N1b = sB + N1 * ns, *N2b = sB + N2 * ns;
  const double *DSb = sB + DS * ns, *SSb = sB + SS * ns;
  for (int i = 0; i < ns; ++i) {
    const double um = u0[i - 1], uc = u0[i], up = u0[i + 1];
    const double a1h = (v * P0a[i] + Q0a[i]) * um + (v * P1a[i] + Q1a[i]) * uc + (v * P2a[i] + Q2a[i]) * up;
    const double a2 = W0v * um1[i] + W1v * uc + W2v * up1[i] + Ev * up2[i];
    const double rm = bm * um1[i - 1] + b0 * um + bp * up1[i - 1];
    const double rc = bm * um1[i] + b0 * uc + bp * up1[i];
    const double rp = bm * um1[i + 1] + b0 * up + bp * up1[i + 1];
    const double a0 = v * (M0a[i] * rm + M1a[i] * rc + M2a[i] * rp);
    if (Pred) {
      const double b_old = e_old * (v * N1a[i] + N2a[i]), b_new = e_new * (v * N1b[i] + N2b[i]);
      const double F = a0 + a1h + b_old + a2;
      r1[i] = uc + dt * F - thdt * (a1h + b_old) + thdt * b_new;
      h[i] = uc + 0.5 * dt * F;
    } else {
      const double b_new = e_new * (v * N1b[i] + N2b[i]);
      const double F = a0 + a1h + b_new + a2;
      r1[i] = hin[i] + dt * F - thdt * a1h;  // dt: half_dt here
    }
    g[i] = -thdt * a2;
  }
  for (int i = 0; i < ns; ++i)  // Dirichlet nodes (a branch here keeps the loop above vectorisable)
    if (DSb[i] + dv > 0) r1[i] = SSb[i] * e_new;
}

struct FusedArgs {
  double dt, thdt, e_old, e_new;  // corrector: dt = half_dt
  int ns, nv;
  bool same;  // csA and csB are one dat
};
template <bool Pred>
void fused_tile(const ExternalContext& ctx, const FusedArgs& A, const CD& u, const CD* hin, const CD& csA,
                const CD& csB, const CD& cv, const CD& fm, const DD& r1, const DD* h, const DD& g) {
  thread_local std::vector<double> bufA, bufB;
  const double* sB = cs_soa(csB, A.ns, bufB);
  const double* sA = A.same ? sB : cs_soa(csA, A.ns, bufA);
  for (int t = ctx.tile_lo; t < ctx.tile_hi; ++t) {
    const int j0 = std::max(r1.row_lo(t), 0), j1 = std::min(r1.row_hi(t), A.nv);
    for (int j = j0; j < j1; j += 4) {
      const int L = std::min(4, j1 - j);
      const double* m[4];
      double* d[4];
      double v[4], dv[4];
      for (int q = 0; q < 4; ++q) {
        const int r = j + std::min(q, L - 1);
        d[q] = tile_row(r1, t, r);
        m[q] = tile_row(fm, t, r);
        v[q] = *row_ptr(cv, r, VV), dv[q] = *row_ptr(cv, r, DV);
        if (q >= L) continue;
        explicit_row<Pred>(A.ns, sA, sB, row_ptr(cv, r), tile_row(u, t, r - 1), tile_row(u, t, r),
                           tile_row(u, t, r + 1), tile_row(u, t, r + 2), Pred ? nullptr : tile_row(*hin, t, r), d[q],
                           Pred ? tile_row(*h, t, r) : nullptr, tile_row(g, t, r), A.dt, A.thdt, A.e_old, A.e_new);
      }
      subst4(A.ns, m, sB, v, dv, A.thdt, d);
    }
  }
}
struct PredS {
  FusedArgs A;
  void operator()(const ExternalContext& ctx, CD u, CD csA, CD csB, CD cv, CD fm, DD r1, DD h, DD g) const {
    fused_tile<true>(ctx, A, u, nullptr, csA, csB, cv, fm, r1, &h, g);
  }
};
struct CorrS {
  FusedArgs A;
  void operator()(const ExternalContext& ctx, CD y2, CD hin, CD cs, CD cv, CD fm, DD r1, DD g) const {
    fused_tile<false>(ctx, A, y2, &hin, cs, cs, cv, fm, r1, nullptr, g);
  }
};
struct NoAdjoint {  // never called: the fused externals run on passive dats only
  template <class... X>
  void operator()(const ExternalContext& ctx, X&&...) const {
    throw Error(std::string("cde: '") + ctx.name + "' has no adjoint (primal mode only)");
  }
};

// ---- Adjoint mode: one HV (or Douglas) step as one external function (cde_hv_step) ---------
// U RW, the coefficients and both directions' factors READ, one task holding every tile;
// recorded by execute_external_recompute with adjoint_gets_inputs: the tape keeps U before the
// step (one array per step) and nothing else; the step's intermediates are kept by its primal
// (StepStages, when the solver hands it a slot; U after the step is handed over by the next
// step's adjoint, StepOutput) or recomputed by the adjoint from U (the same
// arithmetic as the primal either way: explicit_row, subst4, solve_v_core, so the same bits as
// primal mode); the adjoint then runs the transposed step: the transposed v solve
// (solve_v_adjoint_core), the transposed s solve (solve_s_adjoint_rows), the transposed
// explicit stencils (explicit_adjoint_row), twice for HV, once for Douglas. Adjoints of cs
// (P, Q, MB, N1, N2) and cv (W, EE) accumulate in the task and are added to the dats' adjoints
// at its end, where the recorded coefficient loops carry them to the parameters.

// Full-grid local arrays: rows -1 .. nv + 1, columns -1 .. ns (ghosts zero unless written).
// Owned (init) or in memory held elsewhere (attach: size() zeros there).
struct Grid {
  std::vector<double> buf;  // owned storage (empty when attached)
  double* base = nullptr;   // element (-1, -1)
  long long ls = 0;
  static std::size_t size(int ns, int nv) { return static_cast<std::size_t>(ns + 2) * (nv + 3); }
  void init(int ns, int nv) {
    ls = ns + 2;
    buf.assign(size(ns, nv), 0.0);
    base = buf.data();
  }
  void attach(double* p, int ns) {
    buf = {};
    ls = ns + 2;
    base = p;
  }
  void zero() { std::fill(buf.begin(), buf.end(), 0.0); }  // owned grids only
  void zero_row(int j) { std::fill_n(base + (j + 1) * ls, ls, 0.0); }  // row j, ghost columns included
  double* row(int j) { return base + (j + 1) * ls + 1; }
  auto rows() {
    return [this](int j) { return row(j); };
  }
};

struct StepArgs {
  double dt, thdt, e_old, e_new;
  int ns, nv;
  bool damp;  // a Douglas step (predictor, s solve, v solve)
};

// One step's stages kept by its primal for its adjoint (CdeConfig::stage_bytes): the solves'
// solutions y1 (first s solve), y2 (v solve), y1c (second s solve; y2, y1c: HV only), the arrays
// the adjoint would otherwise recompute, from the same kernels (so the same bits); attached to
// zeroed memory of the solver's (ghosts stay zero). held: written by the step's primal and not yet
// used by its adjoint. U after the step, which the adjoint also needs, is not kept here: it is the
// next step's input (StepOutput).
struct StepStages {
  Grid y1, y2, y1c;
  bool damp = false, held = false;
  bool used = false;  // the adjoint took them (else it recomputed them)
  static std::size_t grids(bool damp) { return damp ? 1 : 3; }
  static std::size_t bytes(int ns, int nv, bool damp) { return grids(damp) * sizeof(double) * Grid::size(ns, nv); }
  // Attaches the grids to p (bytes(ns, nv, damp) of zeros); returns the end.
  double* attach(double* p, int ns, int nv, bool damp_) {
    damp = damp_;
    for (Grid* q : {&y1, &y2, &y1c}) {
      if (damp && (q == &y2 || q == &y1c)) continue;
      q->attach(p, ns);
      p += Grid::size(ns, nv);
    }
    return p;
  }
};
// U after step `step` (interior rows; ghosts zero), handed from one step's adjoint to the next
// (save-all reverses step n + 1, then n): the adjoint of step n + 1 copies its input, restored by
// the tape, here for step n; the last step's primal copies its output. An adjoint whose step does
// not match recomputes its stages.
struct StepOutput {
  Grid u;
  int step = -1;
  void copy_from(const CD& src, int ns, int nv, int n) {
    if (!u.base) u.init(ns, nv);
    for (int j = 0; j < nv; ++j) std::copy_n(row_ptr(src, j), ns, u.row(j));
    step = n;
  }
};
// Zeroed memory of n bytes from an anonymous mapping, its pages mapped at once, unmapped on
// destruction. With mesh::huge_pages() (STARDIFF_HUGE_PAGES, default on) the mapping starts on
// a 2 MiB boundary, is advised for transparent huge pages and populated by one
// MADV_POPULATE_WRITE (about 0.03 s for 261 MB here against 0.07 s for 4 KiB pages); else, or
// where that advice fails, MAP_POPULATE (one call instead of a fault per page).
class StageMemory {
 public:
  StageMemory() = default;
  explicit StageMemory(std::size_t n) {
    constexpr std::size_t kHuge = std::size_t{2} << 20;
#if defined(MADV_HUGEPAGE) && defined(MADV_POPULATE_WRITE)
    if (mesh::huge_pages()) {
      const std::size_t whole = (n + kHuge - 1) / kHuge * kHuge, len = whole + kHuge;
      void* q = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (q != MAP_FAILED) {
        const auto a = (reinterpret_cast<std::uintptr_t>(q) + kHuge - 1) & ~(kHuge - 1);
        char* p = reinterpret_cast<char*>(a);
        madvise(p, whole, MADV_HUGEPAGE);  // advisory (p + whole is inside the mapping)
        if (madvise(p, n, MADV_POPULATE_WRITE) == 0) {
          map_ = q, map_n_ = len, p_ = reinterpret_cast<double*>(p), n_ = n;
          return;
        }
        munmap(q, len);
      }
    }
#endif
    void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (p == MAP_FAILED) throw Error("cde: cannot map " + std::to_string(n >> 20) + " MiB for the kept stages");
    map_ = p, map_n_ = n, p_ = static_cast<double*>(p), n_ = n;
  }
  StageMemory(StageMemory&& o) noexcept
      : map_(std::exchange(o.map_, nullptr)), map_n_(std::exchange(o.map_n_, 0)), p_(std::exchange(o.p_, nullptr)),
        n_(std::exchange(o.n_, 0)) {}
  StageMemory& operator=(StageMemory&& o) noexcept {
    if (this != &o) {
      release();
      map_ = std::exchange(o.map_, nullptr), map_n_ = std::exchange(o.map_n_, 0);
      p_ = std::exchange(o.p_, nullptr), n_ = std::exchange(o.n_, 0);
    }
    return *this;
  }
  ~StageMemory() { release(); }
  double* data() const { return p_; }
  std::size_t size() const { return n_; }

 private:
  void release() {
    if (map_) munmap(map_, map_n_);
    map_ = nullptr, map_n_ = 0, p_ = nullptr, n_ = 0;
  }
  void* map_ = nullptr;  // the mapping (p_: its first 2 MiB boundary with huge pages)
  std::size_t map_n_ = 0;
  double* p_ = nullptr;
  std::size_t n_ = 0;
};

// The transposed explicit stage of row j: seeds r1b (Pred: also hb; corrector: hb
// receives the adjoint of H, the masked r1b) and gb; the adjoints of the stencil's u values added
// into rows j - 1 .. j + 2 of ub (columns 0 .. ns - 1; the ghosts are constants), those of cs
// into cbA (SoA; Pred and not Same: the new N1, N2 into cbB), of cv row j into the returned
// sums (W0, W1, W2, EE). sA: cs of A1 (old), sB: cs of the Dirichlet flags and new N terms.
// tmp: 9 (ns + 2) doubles.
template <bool Pred, bool Same>
CDE_SIMD_CLONES void explicit_adjoint_row(int ns, const double* __restrict sA, const double* __restrict sB,
                                          double* __restrict cbA, double* __restrict cbB, const double* __restrict cvj,
                                          const double* __restrict um1, const double* __restrict u0,
                                          const double* __restrict up1, const double* __restrict up2,
                                          const double* __restrict r1b_in, double* __restrict hb,
                                          const double* __restrict gb, double* __restrict ubm1, double* __restrict ub0,
                                          double* __restrict ubp1, double* __restrict ubp2, double dt, double thdt,
                                          double e_old, double e_new, double* __restrict tmp, double* __restrict cvsum) {
  const double v = cvj[VV], W0v = cvj[W0], W1v = cvj[W0 + 1], W2v = cvj[W0 + 2], Ev = cvj[EE];
  const double bm = cvj[BV0], b0 = cvj[BV0 + 1], bp = cvj[BV0 + 2], dv = cvj[DV];
  const double *P0a = sA + P0 * ns, *P1a = sA + (P0 + 1) * ns, *P2a = sA + (P0 + 2) * ns;
  const double *Q0a = sA + Q0 * ns, *Q1a = sA + (Q0 + 1) * ns, *Q2a = sA + (Q0 + 2) * ns;
  const double *M0a = sA + MB0 * ns, *M1a = sA + (MB0 + 1) * ns, *M2a = sA + (MB0 + 2) * ns;
  const double* DSb = sB + DS * ns;
  double *bP0 = cbA + P0 * ns, *bP1 = cbA + (P0 + 1) * ns, *bP2 = cbA + (P0 + 2) * ns;
  double *bQ0 = cbA + Q0 * ns, *bQ1 = cbA + (Q0 + 1) * ns, *bQ2 = cbA + (Q0 + 2) * ns;
  double *bM0 = cbA + MB0 * ns, *bM1 = cbA + (MB0 + 1) * ns, *bM2 = cbA + (MB0 + 2) * ns;
  double *bN1 = cbA + N1 * ns, *bN2 = cbA + N2 * ns;
  double *cN1 = cbB + N1 * ns, *cN2 = cbB + N2 * ns;
  // Contributions to columns i - 1 and i + 1, at index i + 1 (zero at 0 and ns + 1).
  const std::size_t w = ns + 2;
  double *cm = tmp, *cp = cm + w, *kmm = cp + w, *kmp = kmm + w, *kpm = kmp + w, *kpp = kpm + w;
  cm[0] = cp[0] = kmm[0] = kmp[0] = kpm[0] = kpp[0] = 0.0;
  cm[ns + 1] = cp[ns + 1] = kmm[ns + 1] = kmp[ns + 1] = kpm[ns + 1] = kpp[ns + 1] = 0.0;
  double* a2s = cvsum + 4;  // a2b per node (ns doubles after the 4 sums)
  double *a1s = kpp + w, *ucs = a1s + w, *ts = ucs + w;  // a1b, the centre's seed, a0's seed times v
  for (int i = 0; i < ns; ++i) {  // the seeds (and the Neumann terms' adjoints)
    const double r1v = r1b_in[i], gv = gb[i];
    const double r1b = DSb[i] + dv > 0 ? 0.0 : r1v;
    double Fb, a1b, a2b, ucb;
    if (Pred) {
      const double hbi = hb[i];
      Fb = dt * r1b + 0.5 * dt * hbi;
      a1b = Fb - thdt * r1b;
      const double bnewb = thdt * r1b;
      a2b = Fb - thdt * gv;
      ucb = r1b + hbi;
      if (Same) {
        const double nb = e_old * a1b + e_new * bnewb;
        bN1[i] += v * nb, bN2[i] += nb;
      } else {
        bN1[i] += e_old * v * a1b, bN2[i] += e_old * a1b;
        cN1[i] += e_new * v * bnewb, cN2[i] += e_new * bnewb;
      }
    } else {
      hb[i] = r1b;
      Fb = dt * r1b;  // dt: half_dt here
      bN1[i] += e_new * v * Fb, bN2[i] += e_new * Fb;
      a1b = Fb - thdt * r1b;
      a2b = Fb - thdt * gv;
      ucb = 0.0;
    }
    a1s[i] = a1b, a2s[i] = a2b, ucs[i] = ucb, ts[i] = Fb * v;
  }
  for (int i = 0; i < ns; ++i) {  // A1's entries (three streams a loop: vectorised)
    const double a1v = a1s[i] * v;
    bP0[i] += a1v * u0[i - 1], bP1[i] += a1v * u0[i], bP2[i] += a1v * u0[i + 1];
  }
  for (int i = 0; i < ns; ++i) {
    const double a1b = a1s[i];
    bQ0[i] += a1b * u0[i - 1], bQ1[i] += a1b * u0[i], bQ2[i] += a1b * u0[i + 1];
  }
  for (int i = 0; i < ns; ++i) {  // the mixed term's entries
    const double t = ts[i];
    const double rm = bm * um1[i - 1] + b0 * u0[i - 1] + bp * up1[i - 1];
    const double rc = bm * um1[i] + b0 * u0[i] + bp * up1[i];
    const double rp = bm * um1[i + 1] + b0 * u0[i + 1] + bp * up1[i + 1];
    bM0[i] += t * rm, bM1[i] += t * rc, bM2[i] += t * rp;
  }
  for (int i = 0; i < ns; ++i) {  // the corners' adjoints
    const double rm_b = ts[i] * M0a[i], rp_b = ts[i] * M2a[i];
    kmm[i + 1] = rm_b * bm, kmp[i + 1] = rm_b * bp, kpm[i + 1] = rp_b * bm, kpp[i + 1] = rp_b * bp;
  }
  for (int i = 0; i < ns; ++i) {  // the other stencil values' adjoints
    const double t = ts[i], a1b = a1s[i], a2b = a2s[i];
    const double rm_b = t * M0a[i], rc_b = t * M1a[i], rp_b = t * M2a[i];
    cm[i + 1] = a1b * (v * P0a[i] + Q0a[i]) + rm_b * b0;
    cp[i + 1] = a1b * (v * P2a[i] + Q2a[i]) + rp_b * b0;
    ub0[i] += ucs[i] + a1b * (v * P1a[i] + Q1a[i]) + a2b * W1v + rc_b * b0;
    ubm1[i] += a2b * W0v + rc_b * bm;
    ubp1[i] += a2b * W2v + rc_b * bp;
    ubp2[i] += a2b * Ev;
  }
  for (int k = 0; k < ns; ++k) {
    ub0[k] += cm[k + 2] + cp[k];
    ubm1[k] += kmm[k + 2] + kpm[k];
    ubp1[k] += kmp[k + 2] + kpp[k];
  }
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (int i = 0; i < ns; ++i) {
    const double a = a2s[i];
    s0 += a * um1[i], s1 += a * u0[i], s2 += a * up1[i], s3 += a * up2[i];
  }
  cvsum[0] = s0, cvsum[1] = s1, cvsum[2] = s2, cvsum[3] = s3;
}

// A1's entries' adjoints of four lines at once (solve_s_adjoint_rows, none a Dirichlet row): per
// node, line 0's terms then line 1's ... added into the six arrays, the order (and so the bits) of
// four one-line passes, with one pass over them instead of four.
CDE_SIMD_CLONES void accumulate_s4(int ns, double thdt, const double* __restrict DSr, const double* __restrict g0,
                                   const double* __restrict g1, const double* __restrict g2,
                                   const double* __restrict g3, const double* __restrict x0,
                                   const double* __restrict x1, const double* __restrict x2,
                                   const double* __restrict x3, const double* v, double* __restrict bP0,
                                   double* __restrict bP1, double* __restrict bP2, double* __restrict bQ0,
                                   double* __restrict bQ1, double* __restrict bQ2) {
  const double v0 = v[0], v1 = v[1], v2 = v[2], v3 = v[3];
  for (int i = 0; i < ns; ++i) {
    // Dirichlet nodes (ds > 0): th dt g times 0 (+-0) where the one-line passes take +0; either
    // adds a zero to sums that are never -0, so the same bits (g finite). A product, not a select
    // of th dt g: GCC does not if-convert a select whose arm may trap (-ftrapping-math).
    const double mk = DSr[i] > 0 ? 0.0 : 1.0;
    const double t0 = thdt * g0[i] * mk, t1 = thdt * g1[i] * mk, t2 = thdt * g2[i] * mk, t3 = thdt * g3[i] * mk;
    const double a0 = t0 * x0[i - 1], a1 = t1 * x1[i - 1], a2 = t2 * x2[i - 1], a3 = t3 * x3[i - 1];
    const double b0 = t0 * x0[i], b1 = t1 * x1[i], b2 = t2 * x2[i], b3 = t3 * x3[i];
    const double c0 = t0 * x0[i + 1], c1 = t1 * x1[i + 1], c2 = t2 * x2[i + 1], c3 = t3 * x3[i + 1];
    bP0[i] = (((bP0[i] + v0 * a0) + v1 * a1) + v2 * a2) + v3 * a3;
    bP1[i] = (((bP1[i] + v0 * b0) + v1 * b1) + v2 * b2) + v3 * b3;
    bP2[i] = (((bP2[i] + v0 * c0) + v1 * c1) + v2 * c2) + v3 * c3;
    bQ0[i] = (((bQ0[i] + a0) + a1) + a2) + a3;
    bQ1[i] = (((bQ1[i] + b0) + b1) + b2) + b3;
    bQ2[i] = (((bQ2[i] + c0) + c1) + c2) + c3;
  }
}

// The transposed s solve of every row, from gin (the adjoint of x) into g (that of the right-hand
// side; gin may be g: in place), four lines side by side; the entries' adjoints of A1 (from cs of the
// factorization, x its solution, rows with zero ghost columns) into cb (SoA). The factors' am and
// u are rebuilt from m and A1's entries (as subst4: the products cde_factor_s stores, the same
// bits), which saves two of the sweeps' memory streams.
template <class MRow, class XRow, class GRow, class CvRow, class GinRow>
CDE_SIMD_CLONES void solve_s_adjoint_rows(int ns, int nv, double thdt, const double* sB, double* cb, MRow mrow,
                                          XRow xrow, GRow grow, CvRow cvrow, double* tgbuf, GinRow ginrow) {
  const double* DSr = sB + DS * ns;
  const double *P0r = sB + P0 * ns, *Q0r = sB + Q0 * ns, *P2r = sB + (P0 + 2) * ns, *Q2r = sB + (Q0 + 2) * ns;
  double *bP0 = cb + P0 * ns, *bP1 = cb + (P0 + 1) * ns, *bP2 = cb + (P0 + 2) * ns;
  double *bQ0 = cb + Q0 * ns, *bQ1 = cb + (Q0 + 1) * ns, *bQ2 = cb + (Q0 + 2) * ns;
  for (int j = 0; j < nv; j += 4) {
    const int L = std::min(4, nv - j);
    const double *m[4], *xs[4], *gin[4];
    double* g[4];
    double v[4], dv[4];
    for (int q = 0; q < 4; ++q) {
      const int r = j + std::min(q, L - 1);
      m[q] = mrow(r), xs[q] = xrow(r), g[q] = grow(r), gin[q] = ginrow(r);
      v[q] = cvrow(r)[VV], dv[q] = cvrow(r)[DV];
    }
    const double t = thdt;
    auto amf = [&](int q, int i) {
      const double a = DSr[i] + dv[q] > 0 ? 0.0 : -t * (v[q] * P0r[i] + Q0r[i]);
      return a * m[q][i];
    };
    auto uf = [&](int q, int i) {
      const double c = DSr[i] + dv[q] > 0 ? 0.0 : -t * (v[q] * P2r[i] + Q2r[i]);
      return c * m[q][i];
    };
    transposed_sweep4(ns, m, amf, uf, g, [](int, const double*) {}, gin);
    if (L == 4 && dv[0] <= 0 && dv[1] <= 0 && dv[2] <= 0 && dv[3] <= 0) {
      accumulate_s4(ns, thdt, DSr, g[0], g[1], g[2], g[3], xs[0], xs[1], xs[2], xs[3], v, bP0, bP1, bP2, bQ0, bQ1,
                    bQ2);
      continue;
    }
    for (int q = 0; q < L; ++q) {  // each line once: -th dt times (abar, bbar, cbar) into P, Q
      if (dv[q] > 0) continue;       // a Dirichlet row (identity)
      const double* x = xs[q];       // (x's ghost columns are zero: abar at i = 0, cbar at ns - 1 vanish)
      const double* gq = g[q];
      const double vq = v[q];
      double* tg = tgbuf;
      for (int i = 0; i < ns; ++i) {
        const double tv = thdt * gq[i];
        tg[i] = DSr[i] > 0 ? 0.0 : tv;
      }
      for (int i = 0; i < ns; ++i) bP0[i] += vq * (tg[i] * x[i - 1]), bP1[i] += vq * (tg[i] * x[i]), bP2[i] += vq * (tg[i] * x[i + 1]);
      for (int i = 0; i < ns; ++i) bQ0[i] += tg[i] * x[i - 1], bQ1[i] += tg[i] * x[i], bQ2[i] += tg[i] * x[i + 1];
    }
  }
}

// Work arrays of one step (thread-local: one task at a time per worker).
struct StepWork {
  Grid y1, g, h, y2, y1c, un, a1, a2, a3, a4;
  std::vector<double> soaA, soaB, cbA, cbB, tmp, cvsum, zeros;
  int ns = -1, nv = -1;
  void init(int ns_, int nv_) {
    if (ns_ == ns && nv_ == nv) return;
    ns = ns_, nv = nv_;
    for (Grid* q : {&y1, &g, &h, &y2, &y1c, &un, &a1, &a2, &a3, &a4}) q->init(ns, nv);
    tmp.assign(9 * static_cast<std::size_t>(ns + 2), 0.0);
    cvsum.assign(4 + static_cast<std::size_t>(ns), 0.0);
    zeros.assign(2 * static_cast<std::size_t>(ns), 0.0);  // ns zeros, then scratch
  }
};
StepWork& step_work(int ns, int nv) {
  thread_local StepWork w;
  w.init(ns, nv);
  return w;
}

// The step forward from rows urow (U before) into xrow (U after); intermediates into w (y1: the
// first s solve's solution, y2: the v solve's, y1c: the second s solve's; g, h scratch).
template <class URow, class XRow>
void hv_forward(const StepArgs& A, URow urow, const double* sA, const double* sB, const CD& cv, const CD& f1m,
                const CD& f2m, const double* c0, long long sc, StepWork& w, XRow xrow) {
  const int ns = A.ns, nv = A.nv;
  auto cvrow = [&](int j) { return row_ptr(cv, j); };
  auto mrow2 = [&](int j) { return row_ptr(f2m, j); };
  // explicit stage and s solve, rows four at a time (as fused_tile)
  auto stage_s = [&](bool pred, auto in_row, Grid& r1) {
    for (int j = 0; j < nv; j += 4) {
      const int L = std::min(4, nv - j);
      const double* m[4];
      double* d[4];
      double v[4], dv[4];
      for (int q = 0; q < 4; ++q) {
        const int r = j + std::min(q, L - 1);
        d[q] = r1.row(r), m[q] = row_ptr(f1m, r);
        v[q] = cvrow(r)[VV], dv[q] = cvrow(r)[DV];
        if (q >= L) continue;
        if (pred)
          explicit_row<true>(ns, sA, sB, cvrow(r), in_row(r - 1), in_row(r), in_row(r + 1), in_row(r + 2), nullptr,
                             d[q], w.h.row(r), w.g.row(r), A.dt, A.thdt, A.e_old, A.e_new);
        else
          explicit_row<false>(ns, sB, sB, cvrow(r), in_row(r - 1), in_row(r), in_row(r + 1), in_row(r + 2),
                              w.h.row(r), d[q], nullptr, w.g.row(r), 0.5 * A.dt, A.thdt, A.e_old, A.e_new);
      }
      subst4(ns, m, sB, v, dv, A.thdt, d);
    }
  };
  const SolveVArgs va{A.e_new, A.thdt, ns, nv};
  stage_s(true, urow, w.y1);
  if (A.damp) {
    solve_v_core(va, w.y1.rows(), w.g.rows(), c0, sc, cvrow, mrow2, xrow);
    return;
  }
  solve_v_core(va, w.y1.rows(), w.g.rows(), c0, sc, cvrow, mrow2, w.y2.rows());
  stage_s(false, w.y2.rows(), w.y1c);
  solve_v_core(va, w.y1c.rows(), w.g.rows(), c0, sc, cvrow, mrow2, xrow);
}

// cde_hv_step's primal: U <- step(U). Two: cs at the step's start and end are distinct dats.
// keep (may be null): the stages are written there (the work arrays swapped in), for the
// adjoint; out (may be null; the last step's): U's new value copied there as step n's output.
struct HvStep {
  StepArgs A;
  StepStages* keep = nullptr;
  StepOutput* out = nullptr;
  int n = 0;
  void run(const CD& csA, const CD& csB, const CD& cv, const CD& f1m, const CD& f2m, const DD& u, bool two) const {
    StepWork& w = step_work(A.ns, A.nv);
    const double* sB = cs_soa(csB, A.ns, w.soaB);
    const double* sA = two ? cs_soa(csA, A.ns, w.soaA) : sB;
    const CD uc = u;
    if (keep && (keep->damp != A.damp || !keep->y1.base))
      throw Error("cde_hv_step: a stage slot of another step kind");
    struct Swap {  // keep's grids as the work arrays while in scope (swapped back on any exit)
      StepWork& w;
      StepStages* k;
      bool hv;
      void swap() const {
        if (!k) return;
        std::swap(w.y1, k->y1);
        if (hv) std::swap(w.y2, k->y2), std::swap(w.y1c, k->y1c);
      }
      ~Swap() { swap(); }
    };
    if (keep) keep->held = false, keep->used = false;
    {
      const Swap sw{w, keep, !A.damp};
      sw.swap();
      hv_forward(A, [&](int j) { return row_ptr(uc, j); }, sA, sB, cv, f1m, f2m, row_ptr(csB, 0), stride0(csB), w,
                 [&](int j) { return row_ptr(u, j); });
    }
    if (out) out->copy_from(uc, A.ns, A.nv, n);
    if (keep) keep->held = true;
  }
  void operator()(const ExternalContext&, DD u, CD cs, CD cv, CD f1m, CD f2m, CD, CD) const {
    run(cs, cs, cv, f1m, f2m, u, false);
  }
  void operator()(const ExternalContext&, DD u, CD csA, CD csB, CD cv, CD f1m, CD f2m, CD, CD) const {
    run(csA, csB, cv, f1m, f2m, u, true);
  }
};
// Adds the SoA cs adjoint cb into the dat's (the parameter-dependent components).
void add_cs_adjoint(const double* cb, const DD& csb, int ns) {
  if (!csb.valid()) return;
  double* b0 = row_ptr(csb, 0);
  const long long sc = stride0(csb);
  for (int c : {int{P0}, P0 + 1, P0 + 2, int{Q0}, Q0 + 1, Q0 + 2, int{MB0}, MB0 + 1, MB0 + 2, int{N1}, int{N2}})
    for (int i = 0; i < ns; ++i) b0[i * sc + c] += cb[static_cast<std::size_t>(c) * ns + i];
}
// cde_hv_step's adjoint (U: the step's input, restored by the tape; ub: U's adjoint after the
// step on entry, before it on return). The stages from keep when its primal left them there
// (then released) and out holds U after this step n, else recomputed from U; out (may be null)
// then receives U (before the step) as step n - 1's output.
struct HvStepAdjoint {
  StepArgs A;
  StepStages* keep = nullptr;
  StepOutput* out = nullptr;
  int n = 0;
  void run(const CD& csA, const DD& csA_b, const CD& csB, const DD& csB_b, const CD& cv, const DD& cv_b,
           const CD& f1m, const CD& f2m, const CD& f2a, const CD& f2u, const CD& u,
           const DD& ub, bool two) const {
    const int ns = A.ns, nv = A.nv;
    StepWork& w = step_work(ns, nv);
    const double* sB = cs_soa(csB, ns, w.soaB);
    const double* sA = two ? cs_soa(csA, ns, w.soaA) : sB;
    w.cbA.assign(static_cast<std::size_t>(NCS) * ns, 0.0);
    if (two) w.cbB.assign(static_cast<std::size_t>(NCS) * ns, 0.0);
    double* cbB = two ? w.cbB.data() : w.cbA.data();  // cs of the step's end (solves, Dirichlet, new N)
    double* cbA = w.cbA.data();                        // cs of A1 in the predictor
    const double* c0 = row_ptr(csB, 0);
    const long long sc = stride0(csB);
    auto urow = [&](int j) { return row_ptr(u, j); };
    auto cvrow = [&](int j) { return row_ptr(cv, j); };
    auto cvbrow = [&](int j) { return row_ptr(cv_b, j); };
    auto rows = [](const CD& e) { return [&e](int j) { return row_ptr(e, j); }; };
    const bool kept = keep && keep->held && out && out->step == n;
    Grid &y1 = kept ? keep->y1 : w.y1, &y2 = kept ? keep->y2 : w.y2, &y1c = kept ? keep->y1c : w.y1c,
         &un = kept ? out->u : w.un;
    if (!kept) hv_forward(A, urow, sA, sB, cv, f1m, f2m, c0, sc, w, w.un.rows());
    // The last v solve's adjoint takes ub's rows (the adjoint of U after the step) in place; the
    // predictor's transposed stencils then set them to the adjoint of U before the step (ub_out).
    auto ubrow = [&](int j) { return row_ptr(ub, j); };
    const SolveVArgs va{A.e_new, A.thdt, ns, nv};
    const bool has_cvb = cv_b.valid();
    // The adjoint of U before the step goes straight into ub's interior rows (columns 0 .. ns - 1,
    // those the transposed stencils write; its ghost rows -1, nv, nv + 1 into a1's): no copy.
    auto ub_out = [&](int j) { return j >= 0 && j < nv ? row_ptr(ub, j) : w.a1.row(j); };
    auto ub_zero = [&](int j) {
      if (j >= 0 && j < nv) std::fill_n(row_ptr(ub, j), ns, 0.0);
      else w.a1.zero_row(j);
    };
    // out (rows out_row(j), zeroed by out_zero(j)): set (not added to); each row zeroed just
    // before the stencil first reaches it (row j + 2 at row j: in cache, and the sums' order
    // unchanged).
    auto explicit_adjoint = [&](bool pred, auto in_row, Grid& r1b, Grid* hb, Grid& gb, auto out_row, auto out_zero) {
      out_zero(-1), out_zero(0), out_zero(1);
      for (int j = 0; j < nv; ++j) {
        out_zero(j + 2);
        double *om = out_row(j - 1), *o0 = out_row(j), *op = out_row(j + 1), *op2 = out_row(j + 2);
        double* cvs = w.cvsum.data();
        double* hbr = hb ? hb->row(j) : w.zeros.data();
        if (pred) {
          if (two)
            explicit_adjoint_row<true, false>(ns, sA, sB, cbA, w.cbB.data(), cvrow(j), in_row(j - 1), in_row(j),
                                              in_row(j + 1), in_row(j + 2), r1b.row(j), hbr, gb.row(j), om, o0,
                                              op, op2, A.dt, A.thdt, A.e_old,
                                              A.e_new, w.tmp.data(), cvs);
          else
            explicit_adjoint_row<true, true>(ns, sA, sB, cbA, cbA, cvrow(j), in_row(j - 1), in_row(j), in_row(j + 1),
                                             in_row(j + 2), r1b.row(j), hbr, gb.row(j), om, o0, op, op2, A.dt, A.thdt, A.e_old, A.e_new,
                                             w.tmp.data(), cvs);
        } else {
          explicit_adjoint_row<false, true>(ns, sB, sB, cbB, cbB, cvrow(j), in_row(j - 1), in_row(j), in_row(j + 1),
                                            in_row(j + 2), r1b.row(j), hbr, gb.row(j), om, o0, op, op2, 0.5 * A.dt, A.thdt, A.e_old, A.e_new,
                                            w.tmp.data(), cvs);
        }
        if (has_cvb) {
          double* b = cvbrow(j);
          b[W0] += cvs[0], b[W0 + 1] += cvs[1], b[W0 + 2] += cvs[2], b[EE] += cvs[3];
        }
      }
    };
    // The v solve into U (x = un): its right-hand side's adjoint (that of Y and of G: R = Y + G) set
    // into a2, rows 0 .. nv - 1 (the ghosts, never written, stay zero); the s solve's adjoint reads
    // it there (Y's) and writes R1's into a3, so a2 stays G's. The v solves' x-adjoint rows (ub's,
    // a4's) are left as scratch: ub_out and a4_zero set them before they are read again.
    if (A.damp) {
      solve_v_adjoint_core(va, c0, sc, cvrow, cvbrow, has_cvb, rows(f2m), rows(f2a), rows(f2u), un.rows(), ubrow,
                           w.a3.rows(), false, w.a2.rows(), true, true, false);
      solve_s_adjoint_rows(ns, nv, A.thdt, sB, cbB, rows(f1m), y1.rows(), w.a3.rows(), cvrow, w.zeros.data() + ns,
                           w.a2.rows());
      explicit_adjoint(true, urow, w.a3, nullptr, w.a2, ub_out, ub_zero);
    } else {
      auto a4_zero = [&](int j) { w.a4.zero_row(j); };
      // second half: v solve (x = un), s solve (x = y1c), corrector (seeds a3: R1, a2: G)
      solve_v_adjoint_core(va, c0, sc, cvrow, cvbrow, has_cvb, rows(f2m), rows(f2a), rows(f2u), un.rows(), ubrow,
                           w.a3.rows(), false, w.a2.rows(), true, true, false);
      solve_s_adjoint_rows(ns, nv, A.thdt, sB, cbB, rows(f1m), y1c.rows(), w.a3.rows(), cvrow, w.zeros.data() + ns,
                           w.a2.rows());
      explicit_adjoint(false, y2.rows(), w.a3, &w.h, w.a2, w.a4.rows(), a4_zero);  // a4: Y2's adjoint; h: H's
      // first half: v solve (x = y2): seeds into a2 (Y1's and G's); s solve (x = y1) into a3; predictor
      solve_v_adjoint_core(va, c0, sc, cvrow, cvbrow, has_cvb, rows(f2m), rows(f2a), rows(f2u), y2.rows(),
                           w.a4.rows(), w.a3.rows(), false, w.a2.rows(), true, true, false);
      solve_s_adjoint_rows(ns, nv, A.thdt, sB, cbB, rows(f1m), y1.rows(), w.a3.rows(), cvrow, w.zeros.data() + ns,
                           w.a2.rows());
      explicit_adjoint(true, urow, w.a3, &w.h, w.a2, ub_out, ub_zero);
    }
    if (keep) keep->held = false, keep->used = kept;
    if (out) out->copy_from(u, ns, nv, n - 1);
    add_cs_adjoint(cbA, csA_b, ns);
    if (two) add_cs_adjoint(w.cbB.data(), csB_b, ns);
  }
  void operator()(const ExternalContext&, CD u, DD ub, CD cs, DD cs_b, CD cv, DD cv_b, CD f1m, DD, CD f2m, DD, CD f2a,
                  DD, CD f2u, DD) const {
    run(cs, cs_b, cs, cs_b, cv, cv_b, f1m, f2m, f2a, f2u, u, ub, false);
  }
  void operator()(const ExternalContext&, CD u, DD ub, CD csA, DD csA_b, CD csB, DD csB_b, CD cv, DD cv_b, CD f1m, DD,
                  CD f2m, DD, CD f2a, DD, CD f2u, DD) const {
    run(csA, csA_b, csB, csB_b, cv, cv_b, f1m, f2m, f2a, f2u, u, ub, true);
  }
};

struct CorrArgs {
  double half_dt, thdt, e_new;
};
struct Corrector {
  static constexpr unsigned adjoint_reads = 0b1101;  // y2, cs, cv (not h: linear)
  void operator()(Acc<const double> y2, Acc<const double> h, Acc<const double> cs, Acc<const double> cv,
                  Acc<double> r1, Acc<double> g, const CorrArgs* p) const {
    const Apply o(y2, cs, cv);
    const double v = cv.c(VV);
    const double b_new = p->e_new * (v * cs.c(N1) + cs.c(N2));
    const double F = o.a0 + o.a1h + b_new + o.a2;
    const bool dir = cs.c(DS) + cv.c(DV) > 0;
    r1(0, 0) = dir ? cs.c(SS) * p->e_new : h(0, 0) + p->half_dt * F - p->thdt * o.a1h;
    g(0, 0) = -p->thdt * o.a2;
  }
  void adjoint(Acc<const double> y2, Acc<double> y2_a1s, Acc<const double>, Acc<double> h_a1s, Acc<const double> cs,
               Acc<double> cs_a1s, Acc<const double> cv, Acc<double> cv_a1s, Acc<const double>, Acc<double> r1_a1s,
               Acc<const double>, Acc<double> g_a1s, const CorrArgs* p) const {
    const double v = cv.c(VV);
    const bool dir = cs.c(DS) + cv.c(DV) > 0;
    const double r1b = dir ? 0.0 : r1_a1s(0, 0);
    h_a1s(0, 0) += r1b;
    const double Fb = p->half_dt * r1b;
    cs_a1s.c(N1) += p->e_new * v * Fb, cs_a1s.c(N2) += p->e_new * Fb;
    apply_adjoint(y2, y2_a1s, cs, cs_a1s, cv, cv_a1s, Fb, Fb - p->thdt * r1b, Fb - p->thdt * g_a1s(0, 0), 0.0);
  }
};

mesh::DatOptions opts(int dim, std::vector<int> axes, bool active) {
  mesh::DatOptions o;
  o.dim = dim;
  o.active = active;
  o.axes = std::move(axes);
  return o;
}
mesh::DatOptions full(bool active) {
  mesh::DatOptions o;
  o.active = active;
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

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
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
  bool adj;  // active dats, recorded coefficient loops
  int ns, nv, nt = 1;
  std::vector<double> sx, vy;
  std::vector<std::vector<double>> lev_s;  // per leverage time node: L on the s grid
  mesh::Block block;
  Dat<double> sgrid, vgrid, lev, csA, csB, cv;
  Dat<double> U, R1, R2, G, H;
  Dat<double> vcarry;  // primal cde_solve_v_fwd: x's last row so far (one row of s, scratch)
  // Thomas factors (m, am, u) of I - th dt A1 (fs) and I - th dt A2 (fv); with damping steps,
  // those of theta = 1 (fsd, fvd). Built before the first step mark (fs per step when the
  // leverage depends on t), so that no step writes data a later step reads. Primal mode keeps m
  // only (a and u are null): its substitutions rebuild am and u from the coefficient dats.
  struct Factors {
    std::unique_ptr<Dat<double>> m, a, u;
  };
  Factors fs, fv, fsd, fvd;
  mesh::Scalar<double> kappa, theta, sigma, rho, rd;
  // The steps' kept stages (cde_hv_step with a save-all tape, CdeConfig::stage_bytes): slot n - 1
  // for step n, the first steps that fit; sized before the first step is submitted (the tasks
  // hold pointers into it). The memory stays for the next taped run of the same layout (its pages
  // already mapped; the ghosts, never written, still zero) and goes with a run that keeps none.
  std::vector<StepStages> stages;
  StageMemory stage_mem;     // their memory
  StepOutput step_out;       // U after a step, for the kept steps' adjoints (StepOutput)
  bool keep_stages = false;  // set by greeks() / adjoint_from() around the taped run
  void drop_stages() { stages = {}, stage_mem = StageMemory(), step_out = StepOutput(); }

  static Halo state_halo() { return Halo({1, 1, 0}, {1, 2, 0}); }

  Impl(Executor& e, const CdeConfig& c)
      : cfg(c), ex(e), adj(c.adjoint), ns(c.ns), nv(c.nv), nt(c.leverage ? static_cast<int>(c.leverage->t.size()) : 1),
        block(e, "cde", {c.ns, c.nv}, pick_tiles(e, c.nv, c.tiles)),
        sgrid(block, "cde_s", Halo({1, 0, 0}, {1, 0, 0}), opts(1, {0}, false)),
        vgrid(block, "cde_v", Halo({0, 1, 0}, {0, 2, 0}), opts(1, {1}, false)),
        lev(block, "cde_leverage", Halo{}, opts(nt, {0}, adj)), csA(block, "cde_cs_old", Halo{}, opts(NCS, {0}, adj)),
        csB(block, "cde_cs_new", Halo{}, opts(NCS, {0}, adj)),
        cv(block, "cde_cv", Halo({0, 0, 0}, {0, 1, 0}), opts(NCV, {1}, adj)),
        U(block, "cde_u", state_halo(), full(adj)), R1(block, "cde_r1", state_halo(), full(adj)),
        R2(block, "cde_r2", state_halo(), full(adj)), G(block, "cde_g", state_halo(), full(adj)),
        H(block, "cde_h", Halo{}, full(adj)), vcarry(block, "cde_vcarry", Halo{}, opts(1, {0}, false)),
        kappa(block, "kappa", c.p.kappa), theta(block, "theta", c.p.theta),
        sigma(block, "sigma", c.p.sigma), rho(block, "rho", c.p.rho), rd(block, "rd", c.p.rd) {
    auto mk = [&](Factors& f, const std::string& n) {
      f.m = std::make_unique<Dat<double>>(block, n + "_m", Halo{}, full(false));  // passive (see the solves)
      if (!adj) return;  // primal mode: m only (the substitutions rebuild am and u)
      f.a = std::make_unique<Dat<double>>(block, n + "_am", Halo{}, full(false));
      f.u = std::make_unique<Dat<double>>(block, n + "_u", Halo{}, full(false));
    };
    mk(fs, "cde_fs"), mk(fv, "cde_fv");
    if (cfg.damping > 0) mk(fsd, "cde_fsd"), mk(fvd, "cde_fvd");
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
      for (int k = 0; k < nt; ++k)
        for (int i = 0; i < ns; ++i) {
          const auto [m, w] = lev_weight(sx[i]);
          const double* row = &L.L[static_cast<std::size_t>(k) * L.s.size()];
          lev_s[k][i] = w == 0.0 ? row[m] : (1 - w) * row[m] + w * row[m + 1];
        }
    }
    lev.set_components([&](int i, int, int, int c) { return lev_s[c][std::clamp(i, 0, ns - 1)]; });
    // U is set by run(); R1, R2, G, H are zero from their allocation (their halos stay so).
    for (Dat<double>* d : {&csA, &csB, &cv}) d->set([](int, int, int) { return 0.0; });
  }

  // Spot s on the leverage s nodes: node m and weight w of node m + 1 (w = 0 outside the nodes).
  std::pair<int, double> lev_weight(double s) const {
    const auto& S = cfg.leverage->s;
    const int ms = static_cast<int>(S.size());
    if (s <= S.front()) return {0, 0.0};
    if (s >= S.back()) return {ms - 1, 0.0};
    const int m = static_cast<int>(std::upper_bound(S.begin(), S.end(), s) - S.begin()) - 1;
    return {m, (s - S[m]) / (S[m + 1] - S[m])};
  }

  // Coefficient loops: recorded in adjoint mode (they carry the parameters' adjoints).
  template <class K, class... A>
  void coef_loop(const std::string& name, const mesh::Range& r, const K& k, const A&... a) {
    if (adj) mesh::par_loop(name, block, r, k, a...);
    else mesh::par_loop_passive(name, block, r, k, a...);
  }
  void coef_v() {
    coef_loop("cde_coef_v", mesh::Range{0, 1, 0, nv}, CoefV{},
              mesh::arg_dat(vgrid, mesh::Stencil(2, {0, 0, 0, -1, 0, 1, 0, 2}, "v3"), mesh::READ),
              mesh::arg_dat(cv, mesh::WRITE), mesh::arg_scalar(kappa), mesh::arg_scalar(theta), mesh::arg_scalar(sigma),
              mesh::arg_scalar(rd), mesh::arg_gbl(CoefVArgs{nv}), mesh::arg_idx());
  }

  // Leverage interpolation weights at calendar time t.
  CoefSArgs coef_args(double t) const {
    CoefSArgs a{cfg.p.rf, 0.0, 0, 0, ns};
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
    coef_loop("cde_coef_s", mesh::Range{0, ns, 0, 1}, CoefS{},
              mesh::arg_dat(sgrid, mesh::Stencil(2, {0, 0, -1, 0, 1, 0}, "s3"), mesh::READ),
              mesh::arg_dat(lev, mesh::READ), mesh::arg_dat(cs, mesh::WRITE), mesh::arg_scalar(rho),
              mesh::arg_scalar(sigma), mesh::arg_scalar(rd), mesh::arg_gbl(coef_args(cfg.p.T - tau)), mesh::arg_idx());
  }
  // Factors of I - thdt A1 from cs (and cv), of I - thdt A2 from cv (and cs's Dirichlet flags).
  void factor_s(Dat<double>& cs, double thdt, Factors& f) {
    ExternalOptions o;
    o.adjoint_reads = 0b11u;  // cs, cv
    if (!f.a)  // primal mode: m only
      execute_external("cde_factor_s", o, FactorSM{{thdt, ns, nv}}, NoAdjoint{}, mesh::arg_dat(cs, mesh::READ),
                       mesh::arg_dat(cv, mesh::READ), mesh::arg_dat(*f.m, mesh::WRITE));
    else
      execute_external("cde_factor_s", o, FactorS{{thdt, ns, nv}}, FactorAdjoint{{thdt, ns, nv}},
                       mesh::arg_dat(cs, mesh::READ), mesh::arg_dat(cv, mesh::READ), mesh::arg_dat(*f.m, mesh::WRITE),
                       mesh::arg_dat(*f.a, mesh::WRITE), mesh::arg_dat(*f.u, mesh::WRITE));
  }
  void factor_v(double thdt, Factors& f) {
    ExternalOptions o;
    o.adjoint_reads = 0b11u;
    if (!f.a)
      execute_external("cde_factor_v", o, FactorVM{{thdt, ns, nv}}, NoAdjoint{}, mesh::arg_dat(csB, mesh::READ),
                       mesh::arg_dat(cv, mesh::READ), mesh::arg_dat(*f.m, mesh::WRITE));
    else
      execute_external("cde_factor_v", o, FactorV{{thdt, ns, nv}}, FactorAdjoint{{thdt, ns, nv}},
                       mesh::arg_dat(csB, mesh::READ), mesh::arg_dat(cv, mesh::READ), mesh::arg_dat(*f.m, mesh::WRITE),
                       mesh::arg_dat(*f.a, mesh::WRITE), mesh::arg_dat(*f.u, mesh::WRITE));
  }
  // x = (I - th dt A1)^{-1} x, by substitution with the factors f.
  // cs: the coefficients the factors f were built from (their adjoint takes A1's).
  void solve_s(Dat<double>& cs, double thdt, Factors& f, Dat<double>& x) {
    ExternalOptions o;
    o.per_tile = true;
    o.adjoint_reads = 0b11111u;  // cs, cv, the factors (and the saved x)
    execute_external("cde_solve_s", o, SolveS{thdt, ns, nv}, SolveSAdjoint{thdt, ns, nv}, mesh::arg_dat(cs, mesh::READ),
                     mesh::arg_dat(cv, mesh::READ), mesh::arg_dat(*f.m, mesh::READ), mesh::arg_dat(*f.a, mesh::READ),
                     mesh::arg_dat(*f.u, mesh::READ), mesh::arg_dat(x, mesh::RW));
  }
  // The mid stage from Y = R1 and G, and x = (I - th dt A2)^{-1} R2 (cde_solve_v above).
  void solve_v(Factors& f, double thdt, double e_new, Dat<double>& x) {
    ExternalOptions o;
    if (!f.a) {  // primal mode: the forward sweep per tile (chained by vcarry), the back one whole
      const SolveVArgs va{e_new, thdt, ns, nv};
      ExternalOptions pt;
      pt.per_tile = true;
      execute_external("cde_solve_v_fwd", pt, SolveVFwd{va}, NoAdjoint{}, mesh::arg_dat(R1, mesh::READ),
                       mesh::arg_dat(G, mesh::READ), mesh::arg_dat(csB, mesh::READ), mesh::arg_dat(cv, mesh::READ),
                       mesh::arg_dat(*f.m, mesh::READ), mesh::arg_dat(vcarry, mesh::RW), mesh::arg_dat(x, mesh::WRITE));
      execute_external("cde_solve_v_bwd", o, SolveVBwd{va}, NoAdjoint{}, mesh::arg_dat(csB, mesh::READ),
                       mesh::arg_dat(cv, mesh::READ), mesh::arg_dat(*f.m, mesh::READ), mesh::arg_dat(x, mesh::RW));
      return;
    }
    o.adjoint_reads = 0b1111100u;  // cs, cv, the factors (not R1, G: linear)
    execute_external("cde_solve_v", o, SolveV{{e_new, thdt, ns, nv}}, SolveVAdjoint{{e_new, thdt, ns, nv}},
                     mesh::arg_dat(R1, mesh::READ), mesh::arg_dat(G, mesh::READ), mesh::arg_dat(csB, mesh::READ),
                     mesh::arg_dat(cv, mesh::READ), mesh::arg_dat(*f.m, mesh::READ), mesh::arg_dat(*f.a, mesh::READ),
                     mesh::arg_dat(*f.u, mesh::READ), mesh::arg_dat(x, mesh::WRITE));
  }

  void run(Tape* tape, const std::vector<double>* start = nullptr) {
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
      if (start) return (*start)[i + static_cast<std::size_t>(ns) * j];
      return j == nv - 1 ? sx[i] : u0[i];
    });
    // L depends on t only with several leverage time nodes: then cs (and A1's factors) per step.
    const bool varying = cfg.leverage && nt > 1;
    coef_v();
    coef_s(csB, 0.0);
    if (!varying) factor_s(csB, th * dt, fs);
    factor_v(th * dt, fv);
    if (cfg.damping > 0) {
      if (!varying) factor_s(csB, dt, fsd);
      factor_v(dt, fvd);
    }
    stages.clear();
    step_out.step = -1;
    if (!(marks && keep_stages && !cfg.recorded_adjoint)) {
      drop_stages();
    } else {
      std::size_t used = 0;
      int kept = 0;
      for (int n = 1; n <= total; ++n, ++kept) {
        const std::size_t b = StepStages::bytes(ns, nv, n <= cfg.damping);
        if (used + b > cfg.stage_bytes) break;
        used += b;
      }
      if (kept == 0) drop_stages();
      else {
        if (stage_mem.size() != used) stage_mem = StageMemory(used);  // else the last taped run's (same layout)
        stages.resize(kept);
        double* q = stage_mem.data();
        for (int n = 1; n <= kept; ++n) q = stages[n - 1].attach(q, ns, nv, n <= cfg.damping);
      }
    }
    if (marks) tape->step({U});
    for (int n = 1; n <= total; ++n) {
      const bool damp = n <= cfg.damping;
      const double t_old = (n - 1) * dt, t_new = n * dt, thdt = (damp ? 1.0 : th) * dt;
      const double e_old = std::exp(-p.rf * t_old), e_new = std::exp(-p.rf * t_new);
      if (varying) {
        coef_s(csA, t_old);
        coef_s(csB, t_new);
        factor_s(csB, thdt, fs);
      }
      Factors& F1 = damp && !varying ? fsd : fs;
      Factors& F2 = damp ? fvd : fv;
      const PredArgs pa{dt, thdt, e_old, e_new};
      if (!adj) {  // primal mode: the explicit stages fused with the s solves
        ExternalOptions o;
        o.per_tile = true;
        Dat<double>& cA = varying ? csA : csB;
        execute_external("cde_predictor_s", o, PredS{{dt, thdt, e_old, e_new, ns, nv, !varying}}, NoAdjoint{},
                         mesh::arg_dat(U, mesh::READ), mesh::arg_dat(cA, mesh::READ),
                         mesh::arg_dat(csB, mesh::READ), mesh::arg_dat(cv, mesh::READ), mesh::arg_dat(*F1.m, mesh::READ),
                         mesh::arg_dat(R1, mesh::WRITE), mesh::arg_dat(H, mesh::WRITE), mesh::arg_dat(G, mesh::WRITE));
        if (damp) {
          solve_v(F2, thdt, e_new, U);
        } else {
          solve_v(F2, thdt, e_new, R2);
          execute_external("cde_corrector_s", o, CorrS{{0.5 * dt, thdt, e_old, e_new, ns, nv, true}}, NoAdjoint{},
                           mesh::arg_dat(R2, mesh::READ), mesh::arg_dat(H, mesh::READ),
                           mesh::arg_dat(csB, mesh::READ), mesh::arg_dat(cv, mesh::READ),
                           mesh::arg_dat(*F1.m, mesh::READ), mesh::arg_dat(R1, mesh::WRITE),
                           mesh::arg_dat(G, mesh::WRITE));
          solve_v(F2, thdt, e_new, U);
        }
        if (marks) tape->step();
        continue;
      }
      if (!cfg.recorded_adjoint) {  // one external function per step (cde_hv_step)
        ExternalOptions o;
        o.adjoint_gets_inputs = true;
        const StepArgs sa{dt, thdt, e_old, e_new, ns, nv, damp};
        StepStages* kp = n <= static_cast<int>(stages.size()) ? &stages[n - 1] : nullptr;
        StepOutput* so = stages.empty() ? nullptr : &step_out;  // the U hand-over (kept stages only)
        const HvStep fw{sa, kp, n == total ? so : nullptr, n};
        const HvStepAdjoint bw{sa, kp, so, n};
        auto rd_ = [](Dat<double>& d) { return mesh::arg_dat(d, mesh::READ); };
        if (varying)
          execute_external_recompute("cde_hv_step", o, fw, bw, mesh::arg_dat(U, mesh::RW),
                                     rd_(csA), rd_(csB), rd_(cv), rd_(*F1.m), rd_(*F2.m), rd_(*F2.a), rd_(*F2.u));
        else
          execute_external_recompute("cde_hv_step", o, fw, bw, mesh::arg_dat(U, mesh::RW),
                                     rd_(csB), rd_(cv), rd_(*F1.m), rd_(*F2.m), rd_(*F2.a), rd_(*F2.u));
        if (marks) tape->step();
        continue;
      }
      if (varying)
        par_loop("cde_predictor", block, block.interior(), Predictor2{}, mesh::arg_dat(U, st10(), mesh::READ),
                 mesh::arg_dat(csA, mesh::READ), mesh::arg_dat(csB, mesh::READ), mesh::arg_dat(cv, mesh::READ),
                 mesh::arg_dat(R1, mesh::WRITE), mesh::arg_dat(H, mesh::WRITE), mesh::arg_dat(G, mesh::WRITE),
                 mesh::arg_gbl(pa));
      else
        par_loop("cde_predictor", block, block.interior(), Predictor1{}, mesh::arg_dat(U, st10(), mesh::READ),
                 mesh::arg_dat(csB, mesh::READ), mesh::arg_dat(cv, mesh::READ), mesh::arg_dat(R1, mesh::WRITE),
                 mesh::arg_dat(H, mesh::WRITE), mesh::arg_dat(G, mesh::WRITE), mesh::arg_gbl(pa));
      solve_s(csB, thdt, F1, R1);
      if (damp) {
        solve_v(F2, thdt, e_new, U);
      } else {
        solve_v(F2, thdt, e_new, R2);
        par_loop("cde_corrector", block, block.interior(), Corrector{}, mesh::arg_dat(R2, st10(), mesh::READ),
                 mesh::arg_dat(H, mesh::READ), mesh::arg_dat(csB, mesh::READ), mesh::arg_dat(cv, mesh::READ),
                 mesh::arg_dat(R1, mesh::WRITE), mesh::arg_dat(G, mesh::WRITE),
                 mesh::arg_gbl(CorrArgs{0.5 * dt, thdt, e_new}));
        solve_s(csB, thdt, F1, R1);
        solve_v(F2, thdt, e_new, U);
      }
      if (marks) tape->step();
    }
    ex.wait_all();
  }

  Greeks greeks(const Checkpointing& ck) {
    require(adj, "greeks() needs CdeConfig::adjoint");
    const HestonParams& p = cfg.p;
    Greeks gr;
    Tape tape("cde");
    tape.set_checkpointing(ck);
    auto t0 = std::chrono::steady_clock::now();
    tape.start();
    keep_stages = ck.kind == Checkpointing::Kind::SaveAll;
    run(&tape);
    keep_stages = false;
    tape.stop();
    const std::vector<double> u = solution();
    gr.forward_s = seconds_since(t0);
    for (const StepStages& k : stages)
      if (k.held) ++gr.kept_steps, gr.kept_bytes += StepStages::bytes(ns, nv, k.damp);
    // The interpolant and its derivatives in s0, v0.
    int i0, j0;
    double wx[4], dwx[4], d2wx[4], wy[4], dwy[4], d2wy[4];
    interp_weights(sx, p.s0, &i0, wx, dwx, d2wx);
    interp_weights(vy, p.v0, &j0, wy, dwy, d2wy);
    gr.price = interp_bicubic(sx, vy, u, p.s0, p.v0);
    for (int b = 0; b < 4; ++b)
      for (int a = 0; a < 4; ++a) {
        const double f = u[(i0 + a) + static_cast<std::size_t>(ns) * (j0 + b)];
        gr.delta += dwx[a] * wy[b] * f;
        gr.gamma += d2wx[a] * wy[b] * f;
        gr.v0 += wx[a] * dwy[b] * f;
      }
    gr.vega = 2.0 * std::sqrt(p.v0) * gr.v0;
    t0 = std::chrono::steady_clock::now();
    tape.seed(U, [&](int i, int j, int, int) {
      const int a = i - i0, b = j - j0;
      return a >= 0 && a < 4 && b >= 0 && b < 4 ? wx[a] * wy[b] : 0.0;
    });
    tape.reverse();
    ex.wait_all();
    gr.kappa = kappa.adjoint(), gr.theta = theta.adjoint(), gr.sigma = sigma.adjoint();
    gr.rho = rho.adjoint(), gr.rd = rd.adjoint();
    if (cfg.leverage) {
      const auto la = lev.adjoint();
      const std::size_t ms = cfg.leverage->s.size();
      gr.leverage.assign(static_cast<std::size_t>(nt) * ms, 0.0);
      for (int k = 0; k < nt; ++k)
        for (int i = 0; i < ns; ++i) {
          const auto [m, w] = lev_weight(sx[i]);
          const double b = la(i, 0, 0, k);
          gr.leverage[k * ms + m] += (1 - w) * b;
          if (w != 0.0) gr.leverage[k * ms + m + 1] += w * b;
        }
    }
    gr.reverse_s = seconds_since(t0);
    for (const StepStages& k : stages) gr.kept_used += k.used;
    gr.steps = tape.steps();
    gr.recomputed_steps = tape.recomputed_steps();
    gr.peak_bytes = tape.peak_bytes();
    gr.snapshots = static_cast<std::size_t>(std::max(0, tape.snapshots_held()));
    return gr;
  }

  CdeSolver::Adjoints adjoint_from(const std::vector<double>& u0, const std::vector<double>& ubar) {
    require(adj, "adjoint_from() needs CdeConfig::adjoint");
    const std::size_t n = static_cast<std::size_t>(ns) * nv;
    require(u0.size() == n && ubar.size() == n, "adjoint_from(): u0 and ubar need ns * nv values");
    Tape tape("cde");
    tape.start();
    keep_stages = true;
    run(&tape, &u0);
    keep_stages = false;
    tape.stop();
    tape.seed(U, [&](int i, int j, int, int) {
      return i >= 0 && i < ns && j >= 0 && j < nv ? ubar[i + static_cast<std::size_t>(ns) * j] : 0.0;
    });
    tape.reverse();
    ex.wait_all();
    CdeSolver::Adjoints a;
    const auto ua = U.adjoint();
    a.u0.resize(n);
    for (int j = 0; j < nv; ++j)
      for (int i = 0; i < ns; ++i) a.u0[i + static_cast<std::size_t>(ns) * j] = ua(i, j);
    a.kappa = kappa.adjoint(), a.theta = theta.adjoint(), a.sigma = sigma.adjoint();
    a.rho = rho.adjoint(), a.rd = rd.adjoint();
    return a;
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
void CdeSolver::run_from(const std::vector<double>& u0) {
  require(u0.size() == m_->sx.size() * m_->vy.size(), "run_from(): u0 needs ns * nv values");
  m_->run(nullptr, &u0);
}
CdeSolver::Adjoints CdeSolver::adjoint_from(const std::vector<double>& u0, const std::vector<double>& ubar) {
  return m_->adjoint_from(u0, ubar);
}
std::vector<double> CdeSolver::solution() { return m_->solution(); }
Greeks CdeSolver::greeks(const Checkpointing& ck) { return m_->greeks(ck); }
double CdeSolver::price() { return interp_bicubic(m_->sx, m_->vy, m_->solution(), m_->cfg.p.s0, m_->cfg.p.v0); }
const std::vector<double>& CdeSolver::s() const { return m_->sx; }
const std::vector<double>& CdeSolver::v() const { return m_->vy; }
int CdeSolver::tiles() const { return m_->block.tiles(); }

void interp_weights(const std::vector<double>& g, double z, int* i0, double w[4], double dw[4], double d2w[4]) {
  const int n = static_cast<int>(g.size());
  const int i = static_cast<int>(std::upper_bound(g.begin(), g.end(), z) - g.begin()) - 1;
  const int s = std::clamp(i - 1, 0, n - 4);
  *i0 = s;
  // l_a(z) = prod_{b != a} (z - g_b) / (g_a - g_b); derivatives by the product rule.
  for (int a = 0; a < 4; ++a) {
    double den = 1, t[4];
    for (int b = 0; b < 4; ++b) {
      t[b] = z - g[s + b];
      if (b != a) den *= g[s + a] - g[s + b];
    }
    double l = 1, d1 = 0, d2 = 0;
    for (int b = 0; b < 4; ++b) {
      if (b == a) continue;
      l *= t[b];
      double p1 = 1;
      for (int c = 0; c < 4; ++c) {
        if (c == a || c == b) continue;
        p1 *= t[c];
        double p2 = 1;
        for (int d = 0; d < 4; ++d)
          if (d != a && d != b && d != c) p2 *= t[d];
        d2 += p2;
      }
      d1 += p1;
    }
    w[a] = l / den, dw[a] = d1 / den, d2w[a] = d2 / den;
  }
}

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
