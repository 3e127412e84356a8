// SPDX-License-Identifier: LGPL-2.1-or-later
// apps/cloverleaf/kernels.hpp — the point kernels of CloverLeaf 1.3's hydro cycle as
// stardiff par_loop functors.
//
// Contract: each functor's operator() takes the accessors of its loop's arguments in
// argument order (R = READ, W = WRITE or RW) and computes one mesh point with the
// reference's arithmetic, in the reference's evaluation order (indices are 0-based
// offsets from the point: the reference's (j+1,k) is a(1,0)). Low-dimensional dats
// (celldx, vertexdy, ...) are read with an offset along their one axis only. The
// functors keep no state but their constants. Branches are written as selects where the
// reference branches on a sign, so the loops vectorise.
// Adjoints (par_loop.hpp's contract): each functor's `adjoint` takes the fields as active
// and the mesh geometry (volume, xarea, yarea, celldx, celldy, vertexdx, vertexdy: constants
// generate() sets, passive when Clover records) as passive, except the set-up kernels,
// whose adjoints take every dat as active (loop-index, gbl and reduction arguments as the
// contract says), and differentiates the branch the primal takes at
// that point: selects on a sign, min/max (std::min of a list picks the leftmost
// smallest), fabs (sign of its argument, + at 0 unless the primal's select says -),
// and sqrt at 0 (derivative taken as 0). `adjoint_reads` names the primal arguments the
// adjoint reads. apps/cloverleaf/test_kernel_adjoints.cpp checks each against central
// differences.
#pragma once
#include <algorithm>
#include <cmath>
#include <utility>

#include <stardiff/mesh/par_loop.hpp>

#include "deck.hpp"

namespace cloverleaf::kern {

using R = stardiff::mesh::Acc<const double>;
using W = stardiff::mesh::Acc<double>;

// CloverLeaf's g_small and g_big are default-real literals stored in REAL(8).
inline constexpr double g_small = static_cast<double>(1.0e-16f);
inline constexpr double g_big = static_cast<double>(1.0e+21f);

// d|x|/dx on the branch fabs takes (+1 at 0).
inline double sgn(double x) { return x < 0.0 ? -1.0 : 1.0; }

// ---- set-up -------------------------------------------------------------------------
// vertex coordinate and spacing along one axis: v(i) = min + d * i (i 0-based).
struct VertexAxis {
  double min, d;
  int axis;
  void operator()(const int* idx, W v, W dv) const {
    v(0, 0) = min + d * static_cast<double>(static_cast<float>(idx[axis]));
    dv(0, 0) = d;
  }
  // v and dv depend on the loop index and constants only.
  static constexpr unsigned adjoint_reads = 0;
  void adjoint(const int*, R, W, R, W) const {}
};
// cell centre and width along the axis of the vertex dat: c(i) = 0.5 (v(i) + v(i+1)).
struct CellAxis {
  double d;
  int axis;
  void operator()(R v, W c, W dc) const {
    c(0, 0) = 0.5 * (v(0, 0) + (axis == 0 ? v(1, 0) : v(0, 1)));
    dc(0, 0) = d;
  }
  static constexpr unsigned adjoint_reads = 0;
  void adjoint(R, W v_a1s, R, W c_a1s, R, W) const {
    const double cb = 0.5 * c_a1s(0, 0);
    v_a1s(0, 0) += cb;
    if (axis == 0) v_a1s(1, 0) += cb;
    else v_a1s(0, 1) += cb;
  }
};
struct Fill {
  double value;
  void operator()(W a) const { a(0, 0) = value; }
  static constexpr unsigned adjoint_reads = 0;
  void adjoint(R, W) const {}
};
struct CopyAxis {  // xarea = celldy(k), yarea = celldx(j)
  void operator()(R src, W a) const { a(0, 0) = src(0, 0); }
  static constexpr unsigned adjoint_reads = 0;
  void adjoint(R, W src_a1s, R, W a_a1s) const { src_a1s(0, 0) += a_a1s(0, 0); }
};

// The deck's states, trivially copyable (copied into each task).
struct StateTable {
  int n = 0;
  double xmin0 = 0, ymin0 = 0, dx = 0, dy = 0;  // grid origin and spacing
  double density[kMaxStates], energy[kMaxStates], xvel[kMaxStates], yvel[kMaxStates];
  double xmin[kMaxStates], xmax[kMaxStates], ymin[kMaxStates], ymax[kMaxStates], radius[kMaxStates];
  int geometry[kMaxStates];
  double vx(int j) const { return xmin0 + dx * static_cast<double>(static_cast<float>(j)); }
  double vy(int k) const { return ymin0 + dy * static_cast<double>(static_cast<float>(k)); }
  // Is cell (j, k) (0-based) inside state s (generate_chunk_kernel's tests)?
  bool inside(int s, int j, int k) const {
    switch (geometry[s]) {
      case 1:
        return vx(j + 1) >= xmin[s] && vx(j) < xmax[s] && vy(k + 1) >= ymin[s] && vy(k) < ymax[s];
      case 2: {
        const double cx = 0.5 * (vx(j) + vx(j + 1)), cy = 0.5 * (vy(k) + vy(k + 1));
        const double r = std::sqrt((cx - xmin[s]) * (cx - xmin[s]) + (cy - ymin[s]) * (cy - ymin[s]));
        return r <= radius[s];
      }
      case 3:
        return vx(j) == xmin[s] && vy(k) == ymin[s];
      default:
        return false;
    }
  }
};

// density0, energy0 of cell (j, k): the last state containing it, else the background.
struct GenerateCells {
  StateTable st;
  void operator()(const int* idx, W density0, W energy0) const {
    double d = st.density[0], e = st.energy[0];
    for (int s = 1; s < st.n; ++s)
      if (st.inside(s, idx[0], idx[1])) {
        d = st.density[s];
        e = st.energy[s];
      }
    density0(0, 0) = d;
    energy0(0, 0) = e;
  }
  // The fields come from the deck's constants (arg_gbl-like): nothing to propagate.
  static constexpr unsigned adjoint_reads = 0;
  void adjoint(const int*, R, W, R, W) const {}
};
// xvel0, yvel0 of node (j, k): the last state containing one of the node's cells
// (cells of index -2 .. n+1 only, as the reference's loop), else the background.
struct GenerateNodes {
  StateTable st;
  int nx, ny;  // cells
  void operator()(const int* idx, W xvel0, W yvel0) const {
    double u = st.xvel[0], v = st.yvel[0];
    for (int s = 1; s < st.n; ++s) {
      bool hit = false;
      for (int kc = idx[1] - 1; kc <= idx[1]; ++kc)
        for (int jc = idx[0] - 1; jc <= idx[0]; ++jc)
          if (jc >= -2 && jc < nx + 2 && kc >= -2 && kc < ny + 2 && st.inside(s, jc, kc)) hit = true;
      if (hit) {
        u = st.xvel[s];
        v = st.yvel[s];
      }
    }
    xvel0(0, 0) = u;
    yvel0(0, 0) = v;
  }
  static constexpr unsigned adjoint_reads = 0;
  void adjoint(const int*, R, W, R, W) const {}
};

// ---- equation of state, viscosity, time step --------------------------------------
struct IdealGas {
  void operator()(R density, R energy, W pressure, W soundspeed) const {
    const double rho = density(0, 0);
    const double v = 1.0 / rho;
    const double p = (1.4 - 1.0) * rho * energy(0, 0);
    const double pressurebyenergy = (1.4 - 1.0) * rho;
    const double pressurebyvolume = -rho * p;
    const double ss2 = v * v * (p * pressurebyenergy - pressurebyvolume);
    pressure(0, 0) = p;
    soundspeed(0, 0) = std::sqrt(ss2);
  }
  // The chain rule through the primal's expressions (d ss2 / d rho cancels to round-off).
  static constexpr unsigned adjoint_reads = 0b0011;
  void adjoint(R density, W density_a1s, R energy, W energy_a1s, R, W pressure_a1s, R, W soundspeed_a1s) const {
    constexpr double g = 1.4 - 1.0;
    const double rho = density(0, 0), e = energy(0, 0);
    const double v = 1.0 / rho;
    const double p = g * rho * e;
    const double pbe = g * rho;
    const double pbv = -rho * p;
    const double a = p * pbe - pbv;
    const double ss = std::sqrt(v * v * a);
    const double ss2b = ss > 0.0 ? 0.5 / ss * soundspeed_a1s(0, 0) : 0.0;
    const double vb = ss2b * 2.0 * v * a, ab = ss2b * v * v;
    double pb = pressure_a1s(0, 0) + ab * pbe;
    const double pbeb = ab * p, pbvb = -ab;
    double rhob = -p * pbvb;
    pb += -rho * pbvb;
    rhob += g * pbeb + g * e * pb - v * v * vb;
    density_a1s(0, 0) += rhob;
    energy_a1s(0, 0) += g * rho * pb;
  }
};

struct Viscosity {
  void operator()(R celldx, R celldy, R density0, R pressure, R xvel0, R yvel0, W viscosity) const {
    const double dx0 = celldx(0, 0), dx1 = celldx(1, 0), dy0 = celldy(0, 0), dy1 = celldy(0, 1);
    const double ugrad = (xvel0(1, 0) + xvel0(1, 1)) - (xvel0(0, 0) + xvel0(0, 1));
    const double vgrad = (yvel0(0, 1) + yvel0(1, 1)) - (yvel0(0, 0) + yvel0(1, 0));
    const double div = dx0 * ugrad + dy0 * vgrad;
    const double strain2 = 0.5 * (xvel0(0, 1) + xvel0(1, 1) - xvel0(0, 0) - xvel0(1, 0)) / dy0 +
                           0.5 * (yvel0(1, 0) + yvel0(1, 1) - yvel0(0, 0) - yvel0(0, 1)) / dx0;
    double pgradx = (pressure(1, 0) - pressure(-1, 0)) / (dx0 + dx1);
    double pgrady = (pressure(0, 1) - pressure(0, -1)) / (dy0 + dy1);
    const double pgradx2 = pgradx * pgradx, pgrady2 = pgrady * pgrady;
    const double limiter = ((0.5 * ugrad / dx0) * pgradx2 + (0.5 * vgrad / dy0) * pgrady2 + strain2 * pgradx * pgrady) /
                           std::max(pgradx2 + pgrady2, 1.0e-16);
    // The reference takes diry from the sign of the updated pgradx (sic).
    const double dirx = pgradx < 0.0 ? -1.0 : 1.0;
    pgradx = dirx * std::max(1.0e-16, std::fabs(pgradx));
    const double diry = pgradx < 0.0 ? -1.0 : 1.0;
    pgrady = diry * std::max(1.0e-16, std::fabs(pgrady));
    const double pgrad = std::sqrt(pgradx * pgradx + pgrady * pgrady);
    const double xgrad = std::fabs(dx0 * pgrad / pgradx);
    const double ygrad = std::fabs(dy0 * pgrad / pgrady);
    const double grad = std::min(xgrad, ygrad);
    const double grad2 = grad * grad;
    const double q = 2.0 * density0(0, 0) * grad2 * limiter * limiter;
    viscosity(0, 0) = (limiter > 0.0 || div >= 0.0) ? 0.0 : q;
  }
  static constexpr unsigned adjoint_reads = 0b0111111;
  void adjoint(R celldx, R celldy, R density0, W density0_a1s, R pressure, W pressure_a1s, R xvel0, W xvel0_a1s,
               R yvel0, W yvel0_a1s, R, W viscosity_a1s) const {
    const double dx0 = celldx(0, 0), dx1 = celldx(1, 0), dy0 = celldy(0, 0), dy1 = celldy(0, 1);
    const double ugrad = (xvel0(1, 0) + xvel0(1, 1)) - (xvel0(0, 0) + xvel0(0, 1));
    const double vgrad = (yvel0(0, 1) + yvel0(1, 1)) - (yvel0(0, 0) + yvel0(1, 0));
    const double div = dx0 * ugrad + dy0 * vgrad;
    const double sx = xvel0(0, 1) + xvel0(1, 1) - xvel0(0, 0) - xvel0(1, 0);
    const double sy = yvel0(1, 0) + yvel0(1, 1) - yvel0(0, 0) - yvel0(0, 1);
    const double strain2 = 0.5 * sx / dy0 + 0.5 * sy / dx0;
    const double pgx = (pressure(1, 0) - pressure(-1, 0)) / (dx0 + dx1);
    const double pgy = (pressure(0, 1) - pressure(0, -1)) / (dy0 + dy1);
    const double px2 = pgx * pgx, py2 = pgy * pgy;
    const double num = (0.5 * ugrad / dx0) * px2 + (0.5 * vgrad / dy0) * py2 + strain2 * pgx * pgy;
    const bool den_on = !(px2 + py2 < 1.0e-16);
    const double den = den_on ? px2 + py2 : 1.0e-16;
    const double limiter = num / den;
    if (limiter > 0.0 || div >= 0.0) return;  // viscosity = 0 on this branch
    const double dirx = pgx < 0.0 ? -1.0 : 1.0;
    const bool x_on = 1.0e-16 < std::fabs(pgx), y_on = 1.0e-16 < std::fabs(pgy);
    const double pgx2 = dirx * (x_on ? std::fabs(pgx) : 1.0e-16);
    const double diry = pgx2 < 0.0 ? -1.0 : 1.0;
    const double pgy2 = diry * (y_on ? std::fabs(pgy) : 1.0e-16);
    const double pgrad = std::sqrt(pgx2 * pgx2 + pgy2 * pgy2);
    const double tx = dx0 * pgrad / pgx2, ty = dy0 * pgrad / pgy2;
    const double xgrad = std::fabs(tx), ygrad = std::fabs(ty);
    const bool y_min = ygrad < xgrad;
    const double grad = y_min ? ygrad : xgrad;
    const double rho = density0(0, 0), qb = viscosity_a1s(0, 0);
    density0_a1s(0, 0) += 2.0 * grad * grad * limiter * limiter * qb;
    const double gradb = 4.0 * rho * grad * limiter * limiter * qb;
    const double limb = 4.0 * rho * grad * grad * limiter * qb;
    double pgradb = 0, pgx2b = 0, pgy2b = 0;
    if (y_min) {
      const double tb = sgn(ty) * gradb;
      pgradb += dy0 / pgy2 * tb;
      pgy2b += -ty / pgy2 * tb;
    } else {
      const double tb = sgn(tx) * gradb;
      pgradb += dx0 / pgx2 * tb;
      pgx2b += -tx / pgx2 * tb;
    }
    pgx2b += pgx2 / pgrad * pgradb;
    pgy2b += pgy2 / pgrad * pgradb;
    double pgxb = x_on ? dirx * sgn(pgx) * pgx2b : 0.0;
    double pgyb = y_on ? diry * sgn(pgy) * pgy2b : 0.0;
    const double numb = limb / den, denb = -limiter / den * limb;
    double px2b = den_on ? denb : 0.0, py2b = px2b;
    const double ugradb0 = 0.5 / dx0 * px2 * numb, vgradb0 = 0.5 / dy0 * py2 * numb;
    px2b += 0.5 * ugrad / dx0 * numb;
    py2b += 0.5 * vgrad / dy0 * numb;
    const double s2b = pgx * pgy * numb;
    pgxb += strain2 * pgy * numb + 2.0 * pgx * px2b;
    pgyb += strain2 * pgx * numb + 2.0 * pgy * py2b;
    const double ddx = dx0 + dx1, ddy = dy0 + dy1;
    pressure_a1s(1, 0) += pgxb / ddx;
    pressure_a1s(-1, 0) -= pgxb / ddx;
    pressure_a1s(0, 1) += pgyb / ddy;
    pressure_a1s(0, -1) -= pgyb / ddy;
    const double sxb = 0.5 / dy0 * s2b, syb = 0.5 / dx0 * s2b;
    // ugrad, vgrad and the strain's velocity differences
    xvel0_a1s(1, 0) += ugradb0 - sxb;
    xvel0_a1s(1, 1) += ugradb0 + sxb;
    xvel0_a1s(0, 0) += -ugradb0 - sxb;
    xvel0_a1s(0, 1) += -ugradb0 + sxb;
    yvel0_a1s(0, 1) += vgradb0 - syb;
    yvel0_a1s(1, 1) += vgradb0 + syb;
    yvel0_a1s(0, 0) += -vgradb0 - syb;
    yvel0_a1s(1, 0) += -vgradb0 + syb;
  }
};

// calc_dt, part 1: the sound-speed limit of a cell.
struct DtSound {
  double dtc_safe;
  void operator()(R celldx, R celldy, R soundspeed, R viscosity, R density0, W dtc) const {
    const double dsx = celldx(0, 0), dsy = celldy(0, 0);
    double cc = soundspeed(0, 0) * soundspeed(0, 0);
    cc = cc + 2.0 * viscosity(0, 0) / density0(0, 0);
    cc = std::max(std::sqrt(cc), g_small);
    dtc(0, 0) = dtc_safe * std::min(dsx, dsy) / cc;
  }
  static constexpr unsigned adjoint_reads = 0b11111;
  void adjoint(R celldx, R celldy, R soundspeed, W soundspeed_a1s, R viscosity, W viscosity_a1s, R density0,
               W density0_a1s, R, W dtc_a1s) const {
    const double g = dtc_a1s(0, 0);
    if (g == 0.0) return;
    const double dsx = celldx(0, 0), dsy = celldy(0, 0), ss = soundspeed(0, 0), rho = density0(0, 0);
    const double q = ss * ss + 2.0 * viscosity(0, 0) / rho;
    const double r = std::sqrt(q), cc = std::max(r, g_small);
    const double ds = std::min(dsx, dsy);
    if (r < g_small) return;
    const double dq = -g * dtc_safe * ds / (cc * cc) * (0.5 / r);
    soundspeed_a1s(0, 0) += dq * 2.0 * ss;
    viscosity_a1s(0, 0) += dq * 2.0 / rho;
    density0_a1s(0, 0) -= dq * 2.0 * viscosity(0, 0) / (rho * rho);
  }
};
// calc_dt, part 2: the velocity and divergence limits, folded with part 1 into a MIN.
struct DtTerms {
  double dtu_safe, dtv_safe, dtdiv_safe;
  // The four limits of the cell (sound, xvel, yvel, div).
  void terms(R dtc, R xvel0, R yvel0, R xarea, R yarea, R volume, double out[4]) const {
    const double vol = volume(0, 0);
    double div = 0.0;
    double dv1 = (xvel0(0, 0) + xvel0(0, 1)) * xarea(0, 0);
    double dv2 = (xvel0(1, 0) + xvel0(1, 1)) * xarea(1, 0);
    div = div + dv2 - dv1;
    const double dtut = dtu_safe * 2.0 * vol / std::max({std::fabs(dv1), std::fabs(dv2), g_small * vol});
    dv1 = (yvel0(0, 0) + yvel0(1, 0)) * yarea(0, 0);
    dv2 = (yvel0(0, 1) + yvel0(1, 1)) * yarea(0, 1);
    div = div + dv2 - dv1;
    const double dtvt = dtv_safe * 2.0 * vol / std::max({std::fabs(dv1), std::fabs(dv2), g_small * vol});
    div = div / (2.0 * vol);
    const double dtdivt = div < -g_small ? dtdiv_safe * (-1.0 / div) : g_big;
    out[0] = dtc(0, 0);
    out[1] = dtut;
    out[2] = dtvt;
    out[3] = dtdivt;
  }
  void operator()(R dtc, R xvel0, R yvel0, R xarea, R yarea, R volume, double* dt_min) const {
    double t[4];
    terms(dtc, xvel0, yvel0, xarea, yarea, volume, t);
    const double m = std::min(std::min(t[0], t[1]), std::min(t[2], t[3]));
    if (m < *dt_min) *dt_min = m;
  }
};
// calc_dt at the cell that set dt: which limit (1 sound, 2 xvel, 3 yvel, 4 div; the first
// on ties, as Fortran's MIN) and the cell centre, as SUM reductions over that one cell.
struct DtControl {
  DtTerms t;
  void operator()(R dtc, R xvel0, R yvel0, R xarea, R yarea, R volume, R cellx, R celly, double* control,
                  double* x, double* y) const {
    double v[4];
    t.terms(dtc, xvel0, yvel0, xarea, yarea, volume, v);
    int c = 0;
    for (int i = 1; i < 4; ++i)
      if (v[i] < v[c]) c = i;
    *control += c + 1;
    *x += cellx(0, 0);
    *y += celly(0, 0);
  }
};
// The time step as an active quantity (recording with dt active): a one-point loop at the
// cell that set dt re-evaluates its limits and updates dt (a dat lacking both axes) to
// min(that cell's limit, dt_old * dtrise, dtmax), the host's arithmetic, so its adjoint is
// the derivative of calc_dt's MIN and clamps: to the limit that won (the first on ties,
// as Fortran's MIN), to the previous dt through dtrise, or nothing (dtmax).
struct DtSet {
  DtTerms t;
  double dtrise, dtmax;
  static constexpr unsigned adjoint_reads = 0b1111111;
  void operator()(R dtc, R xvel0, R yvel0, R xarea, R yarea, R volume, W dt) const {
    double v[4];
    t.terms(dtc, xvel0, yvel0, xarea, yarea, volume, v);
    const double m = std::min(std::min(v[0], v[1]), std::min(v[2], v[3]));
    dt(0, 0) = std::min({m, dt(0, 0) * dtrise, dtmax});
  }
  void adjoint(R dtc, W dtc_a1s, R xvel0, W xvel0_a1s, R yvel0, W yvel0_a1s, R xarea, R yarea, R volume, R dt,
               W dt_a1s) const {
    const double g = dt_a1s(0, 0);
    double v[4];
    t.terms(dtc, xvel0, yvel0, xarea, yarea, volume, v);
    int c = 0;
    for (int i = 1; i < 4; ++i)
      if (v[i] < v[c]) c = i;
    const double m = v[c], rise = dt(0, 0) * dtrise;
    // std::min({m, rise, dtmax}) returns the first smallest.
    if (!(rise < m) && !(dtmax < m)) {
      dt_a1s(0, 0) = 0.0;
      limit_adjoint(c, g, dtc_a1s, xvel0, xvel0_a1s, yvel0, yvel0_a1s, xarea, yarea, volume);
    } else if (!(dtmax < rise)) {
      dt_a1s(0, 0) = g * dtrise;
    } else {
      dt_a1s(0, 0) = 0.0;
    }
  }
  // Adjoint of limit c of DtTerms::terms (0 sound, 1 xvel, 2 yvel, 3 div) seeded with g.
  void limit_adjoint(int c, double g, W dtc_a1s, R xvel0, W xvel0_a1s, R yvel0, W yvel0_a1s, R xarea, R yarea,
                     R volume) const {
    const double vol = volume(0, 0);
    if (c == 0) {
      dtc_a1s(0, 0) += g;
      return;
    }
    if (c == 1 || c == 2) {
      // dt = safe * 2 vol / max(|dv1|, |dv2|, g_small vol), the first largest on ties.
      const bool x = c == 1;
      const double safe = x ? t.dtu_safe : t.dtv_safe;
      R vel = x ? xvel0 : yvel0;
      W vel_a1s = x ? xvel0_a1s : yvel0_a1s;
      R area = x ? xarea : yarea;
      // dv1 = (v(a) + v(b)) area(0,0), dv2 = (v(c) + v(d)) area(e): x: a=(0,0) b=(0,1)
      // c=(1,0) d=(1,1) e=(1,0); y: a=(0,0) b=(1,0) c=(0,1) d=(1,1) e=(0,1).
      const int bi = x ? 0 : 1, bj = x ? 1 : 0, ci = x ? 1 : 0, cj = x ? 0 : 1;
      const double s1 = vel(0, 0) + vel(bi, bj), s2 = vel(ci, cj) + vel(1, 1);
      const double dv1 = s1 * area(0, 0), dv2 = s2 * area(ci, cj);
      const double a1 = std::fabs(dv1), a2 = std::fabs(dv2), a3 = g_small * vol;
      const double D = std::max({a1, a2, a3});
      const double num = safe * 2.0 * vol;
      const double gD = -g * num / (D * D);
      if (!(a1 < D)) {
        const double gd = gD * (dv1 < 0.0 ? -1.0 : 1.0);
        vel_a1s(0, 0) += gd * area(0, 0);
        vel_a1s(bi, bj) += gd * area(0, 0);
      } else if (!(a2 < D)) {
        const double gd = gD * (dv2 < 0.0 ? -1.0 : 1.0);
        vel_a1s(ci, cj) += gd * area(ci, cj);
        vel_a1s(1, 1) += gd * area(ci, cj);
      }
      return;
    }
    // div limit: dtdiv_safe * (-1 / div), div = (dvx2 - dvx1 + dvy2 - dvy1) / (2 vol) < -g_small.
    const double sx1 = xvel0(0, 0) + xvel0(0, 1), sx2 = xvel0(1, 0) + xvel0(1, 1);
    const double sy1 = yvel0(0, 0) + yvel0(1, 0), sy2 = yvel0(0, 1) + yvel0(1, 1);
    const double num = sx2 * xarea(1, 0) - sx1 * xarea(0, 0) + sy2 * yarea(0, 1) - sy1 * yarea(0, 0);
    const double div = num / (2.0 * vol);
    if (!(div < -g_small)) return;  // g_big: a constant
    const double gdiv = g * t.dtdiv_safe / (div * div);
    const double gn = gdiv / (2.0 * vol);
    xvel0_a1s(1, 0) += gn * xarea(1, 0);
    xvel0_a1s(1, 1) += gn * xarea(1, 0);
    xvel0_a1s(0, 0) -= gn * xarea(0, 0);
    xvel0_a1s(0, 1) -= gn * xarea(0, 0);
    yvel0_a1s(0, 1) += gn * yarea(0, 1);
    yvel0_a1s(1, 1) += gn * yarea(0, 1);
    yvel0_a1s(0, 0) -= gn * yarea(0, 0);
    yvel0_a1s(1, 0) -= gn * yarea(0, 0);
  }
};

// ---- PdV, revert, accelerate, fluxes ------------------------------------------------
// total volume flux of a cell; predictor: half a step of the old velocities, corrector:
// the step of the mean of old and new. The time step comes as a constant (dt, the primal
// and --passive-dt) or from a dat lacking both axes (the ...D variants: dt active).
struct PdvFluxPredict {
  double dt;
  static double flux(double dt, R xarea, R yarea, R xvel0, R yvel0) {
    const double left = (xarea(0, 0) * (xvel0(0, 0) + xvel0(0, 1) + xvel0(0, 0) + xvel0(0, 1))) * 0.25 * dt * 0.5;
    const double right = (xarea(1, 0) * (xvel0(1, 0) + xvel0(1, 1) + xvel0(1, 0) + xvel0(1, 1))) * 0.25 * dt * 0.5;
    const double bottom = (yarea(0, 0) * (yvel0(0, 0) + yvel0(1, 0) + yvel0(0, 0) + yvel0(1, 0))) * 0.25 * dt * 0.5;
    const double top = (yarea(0, 1) * (yvel0(0, 1) + yvel0(1, 1) + yvel0(0, 1) + yvel0(1, 1))) * 0.25 * dt * 0.5;
    return right - left + top - bottom;
  }
  // Adjoint of flux() seeded with g; returns d flux / d dt times g.
  static double flux_adjoint(double dt, double g, R xarea, R yarea, R xvel0, W xvel0_a1s, R yvel0, W yvel0_a1s) {
    const double c = 0.25 * 0.5 * 2.0;  // per unit dt: area * 2 (u_a + u_b) * 0.25 * 0.5
    const double sl = xvel0(0, 0) + xvel0(0, 1), sr = xvel0(1, 0) + xvel0(1, 1);
    const double sb = yvel0(0, 0) + yvel0(1, 0), st = yvel0(0, 1) + yvel0(1, 1);
    const double gc = g * c * dt;
    xvel0_a1s(0, 0) -= gc * xarea(0, 0);
    xvel0_a1s(0, 1) -= gc * xarea(0, 0);
    xvel0_a1s(1, 0) += gc * xarea(1, 0);
    xvel0_a1s(1, 1) += gc * xarea(1, 0);
    yvel0_a1s(0, 0) -= gc * yarea(0, 0);
    yvel0_a1s(1, 0) -= gc * yarea(0, 0);
    yvel0_a1s(0, 1) += gc * yarea(0, 1);
    yvel0_a1s(1, 1) += gc * yarea(0, 1);
    return g * c * (xarea(1, 0) * sr - xarea(0, 0) * sl + yarea(0, 1) * st - yarea(0, 0) * sb);
  }
  static constexpr unsigned adjoint_reads = 0b1111;
  void operator()(R xarea, R yarea, R xvel0, R yvel0, W total) const {
    total(0, 0) = flux(dt, xarea, yarea, xvel0, yvel0);
  }
  void adjoint(R xarea, R yarea, R xvel0, W xvel0_a1s, R yvel0, W yvel0_a1s, R, W total_a1s) const {
    flux_adjoint(dt, total_a1s(0, 0), xarea, yarea, xvel0, xvel0_a1s, yvel0, yvel0_a1s);
  }
};
struct PdvFluxPredictD {
  static constexpr unsigned adjoint_reads = 0b11111;
  void operator()(R xarea, R yarea, R xvel0, R yvel0, R dt, W total) const {
    total(0, 0) = PdvFluxPredict::flux(dt(0, 0), xarea, yarea, xvel0, yvel0);
  }
  void adjoint(R xarea, R yarea, R xvel0, W xvel0_a1s, R yvel0, W yvel0_a1s, R dt, W dt_a1s, R,
               W total_a1s) const {
    dt_a1s(0, 0) +=
        PdvFluxPredict::flux_adjoint(dt(0, 0), total_a1s(0, 0), xarea, yarea, xvel0, xvel0_a1s, yvel0, yvel0_a1s);
  }
};
struct PdvFluxCorrect {
  double dt;
  static double flux(double dt, R xarea, R yarea, R xvel0, R yvel0, R xvel1, R yvel1) {
    const double left = (xarea(0, 0) * (xvel0(0, 0) + xvel0(0, 1) + xvel1(0, 0) + xvel1(0, 1))) * 0.25 * dt;
    const double right = (xarea(1, 0) * (xvel0(1, 0) + xvel0(1, 1) + xvel1(1, 0) + xvel1(1, 1))) * 0.25 * dt;
    const double bottom = (yarea(0, 0) * (yvel0(0, 0) + yvel0(1, 0) + yvel1(0, 0) + yvel1(1, 0))) * 0.25 * dt;
    const double top = (yarea(0, 1) * (yvel0(0, 1) + yvel0(1, 1) + yvel1(0, 1) + yvel1(1, 1))) * 0.25 * dt;
    return right - left + top - bottom;
  }
  static double flux_adjoint(double dt, double g, R xarea, R yarea, R xvel0, W xvel0_a1s, R yvel0, W yvel0_a1s,
                             R xvel1, W xvel1_a1s, R yvel1, W yvel1_a1s) {
    const double sl = xvel0(0, 0) + xvel0(0, 1) + xvel1(0, 0) + xvel1(0, 1);
    const double sr = xvel0(1, 0) + xvel0(1, 1) + xvel1(1, 0) + xvel1(1, 1);
    const double sb = yvel0(0, 0) + yvel0(1, 0) + yvel1(0, 0) + yvel1(1, 0);
    const double st = yvel0(0, 1) + yvel0(1, 1) + yvel1(0, 1) + yvel1(1, 1);
    const double gc = g * 0.25 * dt;
    for (W a : {xvel0_a1s, xvel1_a1s}) {
      a(0, 0) -= gc * xarea(0, 0);
      a(0, 1) -= gc * xarea(0, 0);
      a(1, 0) += gc * xarea(1, 0);
      a(1, 1) += gc * xarea(1, 0);
    }
    for (W a : {yvel0_a1s, yvel1_a1s}) {
      a(0, 0) -= gc * yarea(0, 0);
      a(1, 0) -= gc * yarea(0, 0);
      a(0, 1) += gc * yarea(0, 1);
      a(1, 1) += gc * yarea(0, 1);
    }
    return g * 0.25 * (xarea(1, 0) * sr - xarea(0, 0) * sl + yarea(0, 1) * st - yarea(0, 0) * sb);
  }
  static constexpr unsigned adjoint_reads = 0b111111;
  void operator()(R xarea, R yarea, R xvel0, R yvel0, R xvel1, R yvel1, W total) const {
    total(0, 0) = flux(dt, xarea, yarea, xvel0, yvel0, xvel1, yvel1);
  }
  void adjoint(R xarea, R yarea, R xvel0, W xvel0_a1s, R yvel0, W yvel0_a1s, R xvel1, W xvel1_a1s, R yvel1,
               W yvel1_a1s, R, W total_a1s) const {
    flux_adjoint(dt, total_a1s(0, 0), xarea, yarea, xvel0, xvel0_a1s, yvel0, yvel0_a1s, xvel1, xvel1_a1s, yvel1,
                 yvel1_a1s);
  }
};
struct PdvFluxCorrectD {
  static constexpr unsigned adjoint_reads = 0b1111111;
  void operator()(R xarea, R yarea, R xvel0, R yvel0, R xvel1, R yvel1, R dt, W total) const {
    total(0, 0) = PdvFluxCorrect::flux(dt(0, 0), xarea, yarea, xvel0, yvel0, xvel1, yvel1);
  }
  void adjoint(R xarea, R yarea, R xvel0, W xvel0_a1s, R yvel0, W yvel0_a1s, R xvel1, W xvel1_a1s, R yvel1,
               W yvel1_a1s, R dt, W dt_a1s, R, W total_a1s) const {
    dt_a1s(0, 0) += PdvFluxCorrect::flux_adjoint(dt(0, 0), total_a1s(0, 0), xarea, yarea, xvel0, xvel0_a1s, yvel0,
                                                 yvel0_a1s, xvel1, xvel1_a1s, yvel1, yvel1_a1s);
  }
};
struct PdvUpdate {
  void operator()(R volume, R total, R density0, R energy0, R pressure, R viscosity, W density1, W energy1) const {
    const double vol = volume(0, 0), tf = total(0, 0), rho = density0(0, 0);
    const double volume_change_s = vol / (vol + tf);
    const double recip_volume = 1.0 / vol;
    const double energy_change = (pressure(0, 0) / rho + viscosity(0, 0) / rho) * tf * recip_volume;
    energy1(0, 0) = energy0(0, 0) - energy_change;
    density1(0, 0) = rho * volume_change_s;
  }
  static constexpr unsigned adjoint_reads = 0b110111;  // all inputs but energy0
  void adjoint(R volume, R total, W total_a1s, R density0, W density0_a1s, R, W energy0_a1s,
               R pressure, W pressure_a1s, R viscosity, W viscosity_a1s, R, W density1_a1s, R,
               W energy1_a1s) const {
    const double vol = volume(0, 0), tf = total(0, 0), rho = density0(0, 0);
    const double p = pressure(0, 0), q = viscosity(0, 0);
    const double rs = 1.0 / (vol + tf), vcs = vol * rs, rv = 1.0 / vol, rr = 1.0 / rho;
    const double a = (p + q) * rr;
    const double d1b = density1_a1s(0, 0), e1b = energy1_a1s(0, 0);
    energy0_a1s(0, 0) += e1b;
    const double ecb = -e1b, vcsb = rho * d1b;
    const double ab = tf * rv * ecb, abr = ab * rr;
    pressure_a1s(0, 0) += abr;
    viscosity_a1s(0, 0) += abr;
    density0_a1s(0, 0) += vcs * d1b - a * abr;
    total_a1s(0, 0) += a * rv * ecb - vcs * rs * vcsb;
  }
};
struct Copy2 {  // a1 = a0, b1 = b0 (revert, reset_field)
  void operator()(R a0, R b0, W a1, W b1) const {
    a1(0, 0) = a0(0, 0);
    b1(0, 0) = b0(0, 0);
  }
  static constexpr unsigned adjoint_reads = 0;
  void adjoint(R, W a0_a1s, R, W b0_a1s, R, W a1_a1s, R, W b1_a1s) const {
    a0_a1s(0, 0) += a1_a1s(0, 0);
    b0_a1s(0, 0) += b1_a1s(0, 0);
  }
};
// accelerate: half the step over the nodal mass (halfdt constant, or 0.5 dt from the dat).
struct StepByMass {
  double halfdt;
  static double mass4(R density0, R volume) {
    return (density0(-1, -1) * volume(-1, -1) + density0(0, -1) * volume(0, -1) + density0(0, 0) * volume(0, 0) +
            density0(-1, 0) * volume(-1, 0)) *
           0.25;
  }
  // Adjoint seeded with g; returns d sbm / d halfdt times g.
  static double sbm_adjoint(double halfdt, double g, R density0, W density0_a1s, R volume) {
    const double m = mass4(density0, volume);
    const double gm = -g * halfdt / (m * m) * 0.25;
    for (auto [i, j] : {std::pair{-1, -1}, std::pair{0, -1}, std::pair{0, 0}, std::pair{-1, 0}}) {
      density0_a1s(i, j) += gm * volume(i, j);
    }
    return g / m;
  }
  static constexpr unsigned adjoint_reads = 0b11;
  void operator()(R density0, R volume, W sbm) const { sbm(0, 0) = halfdt / mass4(density0, volume); }
  void adjoint(R density0, W density0_a1s, R volume, R, W sbm_a1s) const {
    sbm_adjoint(halfdt, sbm_a1s(0, 0), density0, density0_a1s, volume);
  }
};
struct StepByMassD {
  static constexpr unsigned adjoint_reads = 0b111;
  void operator()(R density0, R volume, R dt, W sbm) const {
    sbm(0, 0) = 0.5 * dt(0, 0) / StepByMass::mass4(density0, volume);
  }
  void adjoint(R density0, W density0_a1s, R volume, R dt, W dt_a1s, R, W sbm_a1s) const {
    dt_a1s(0, 0) += 0.5 * StepByMass::sbm_adjoint(0.5 * dt(0, 0), sbm_a1s(0, 0), density0, density0_a1s, volume);
  }
};
struct AccelerateX {
  void operator()(R sbm, R xarea, R pressure, R viscosity, R xvel0, W xvel1) const {
    const double s = sbm(0, 0);
    double u = xvel0(0, 0) - s * (xarea(0, 0) * (pressure(0, 0) - pressure(-1, 0)) +
                                  xarea(0, -1) * (pressure(0, -1) - pressure(-1, -1)));
    u = u - s * (xarea(0, 0) * (viscosity(0, 0) - viscosity(-1, 0)) +
                 xarea(0, -1) * (viscosity(0, -1) - viscosity(-1, -1)));
    xvel1(0, 0) = u;
  }
  static constexpr unsigned adjoint_reads = 0b1111;  // sbm, xarea, pressure, viscosity
  void adjoint(R sbm, W sbm_a1s, R xarea, R pressure, W pressure_a1s, R viscosity,
               W viscosity_a1s, R, W xvel0_a1s, R, W xvel1_a1s) const {
    const double s = sbm(0, 0), ub = xvel1_a1s(0, 0), a0 = xarea(0, 0), a1 = xarea(0, -1);
    const double dp0 = pressure(0, 0) - pressure(-1, 0), dp1 = pressure(0, -1) - pressure(-1, -1);
    const double dq0 = viscosity(0, 0) - viscosity(-1, 0), dq1 = viscosity(0, -1) - viscosity(-1, -1);
    xvel0_a1s(0, 0) += ub;
    sbm_a1s(0, 0) += -(a0 * dp0 + a1 * dp1 + a0 * dq0 + a1 * dq1) * ub;
    const double b0 = -s * a0 * ub, b1 = -s * a1 * ub;
    pressure_a1s(0, 0) += b0;
    pressure_a1s(-1, 0) -= b0;
    pressure_a1s(0, -1) += b1;
    pressure_a1s(-1, -1) -= b1;
    viscosity_a1s(0, 0) += b0;
    viscosity_a1s(-1, 0) -= b0;
    viscosity_a1s(0, -1) += b1;
    viscosity_a1s(-1, -1) -= b1;
  }
};
struct AccelerateY {
  void operator()(R sbm, R yarea, R pressure, R viscosity, R yvel0, W yvel1) const {
    const double s = sbm(0, 0);
    double v = yvel0(0, 0) - s * (yarea(0, 0) * (pressure(0, 0) - pressure(0, -1)) +
                                  yarea(-1, 0) * (pressure(-1, 0) - pressure(-1, -1)));
    v = v - s * (yarea(0, 0) * (viscosity(0, 0) - viscosity(0, -1)) +
                 yarea(-1, 0) * (viscosity(-1, 0) - viscosity(-1, -1)));
    yvel1(0, 0) = v;
  }
  static constexpr unsigned adjoint_reads = 0b1111;  // sbm, yarea, pressure, viscosity
  void adjoint(R sbm, W sbm_a1s, R yarea, R pressure, W pressure_a1s, R viscosity,
               W viscosity_a1s, R, W yvel0_a1s, R, W yvel1_a1s) const {
    const double s = sbm(0, 0), vb = yvel1_a1s(0, 0), a0 = yarea(0, 0), a1 = yarea(-1, 0);
    const double dp0 = pressure(0, 0) - pressure(0, -1), dp1 = pressure(-1, 0) - pressure(-1, -1);
    const double dq0 = viscosity(0, 0) - viscosity(0, -1), dq1 = viscosity(-1, 0) - viscosity(-1, -1);
    yvel0_a1s(0, 0) += vb;
    sbm_a1s(0, 0) += -(a0 * dp0 + a1 * dp1 + a0 * dq0 + a1 * dq1) * vb;
    const double b0 = -s * a0 * vb, b1 = -s * a1 * vb;
    pressure_a1s(0, 0) += b0;
    pressure_a1s(0, -1) -= b0;
    pressure_a1s(-1, 0) += b1;
    pressure_a1s(-1, -1) -= b1;
    viscosity_a1s(0, 0) += b0;
    viscosity_a1s(0, -1) -= b0;
    viscosity_a1s(-1, 0) += b1;
    viscosity_a1s(-1, -1) -= b1;
  }
};
struct FluxCalc {
  double dt;
  static void fluxes(double dt, R xarea, R yarea, R xvel0, R yvel0, R xvel1, R yvel1, W vol_flux_x, W vol_flux_y) {
    vol_flux_x(0, 0) = 0.25 * dt * xarea(0, 0) * (xvel0(0, 0) + xvel0(0, 1) + xvel1(0, 0) + xvel1(0, 1));
    vol_flux_y(0, 0) = 0.25 * dt * yarea(0, 0) * (yvel0(0, 0) + yvel0(1, 0) + yvel1(0, 0) + yvel1(1, 0));
  }
  // Adjoint seeded with vol_flux_x_a1s, vol_flux_y_a1s; returns the dt adjoint.
  static double fluxes_adjoint(double dt, R xarea, R yarea, R xvel0, W xvel0_a1s, R yvel0, W yvel0_a1s, R xvel1,
                               W xvel1_a1s, R yvel1, W yvel1_a1s, W vol_flux_x_a1s, W vol_flux_y_a1s) {
    const double gx = vol_flux_x_a1s(0, 0), gy = vol_flux_y_a1s(0, 0);
    const double sx = xvel0(0, 0) + xvel0(0, 1) + xvel1(0, 0) + xvel1(0, 1);
    const double sy = yvel0(0, 0) + yvel0(1, 0) + yvel1(0, 0) + yvel1(1, 0);
    const double cx = 0.25 * dt * xarea(0, 0) * gx, cy = 0.25 * dt * yarea(0, 0) * gy;
    xvel0_a1s(0, 0) += cx;
    xvel0_a1s(0, 1) += cx;
    xvel1_a1s(0, 0) += cx;
    xvel1_a1s(0, 1) += cx;
    yvel0_a1s(0, 0) += cy;
    yvel0_a1s(1, 0) += cy;
    yvel1_a1s(0, 0) += cy;
    yvel1_a1s(1, 0) += cy;
    return 0.25 * (xarea(0, 0) * sx * gx + yarea(0, 0) * sy * gy);
  }
  static constexpr unsigned adjoint_reads = 0b111111;
  void operator()(R xarea, R yarea, R xvel0, R yvel0, R xvel1, R yvel1, W vol_flux_x, W vol_flux_y) const {
    fluxes(dt, xarea, yarea, xvel0, yvel0, xvel1, yvel1, vol_flux_x, vol_flux_y);
  }
  void adjoint(R xarea, R yarea, R xvel0, W xvel0_a1s, R yvel0, W yvel0_a1s, R xvel1, W xvel1_a1s, R yvel1,
               W yvel1_a1s, R, W vol_flux_x_a1s, R, W vol_flux_y_a1s) const {
    fluxes_adjoint(dt, xarea, yarea, xvel0, xvel0_a1s, yvel0, yvel0_a1s, xvel1, xvel1_a1s, yvel1, yvel1_a1s,
                   vol_flux_x_a1s, vol_flux_y_a1s);
  }
};
// flux_calc with dt from the dat, one face direction per loop (D = 0: x faces from
// xarea, xvel0, xvel1 at (0,0) and (0,1); D = 1: y faces from yarea, yvel0, yvel1 at
// (0,0) and (1,0)): FluxCalc's arithmetic.
template <int D>
struct FluxCalcD {
  static constexpr unsigned adjoint_reads = 0b1111;
  static constexpr int oi = D == 0 ? 0 : 1, oj = D == 0 ? 1 : 0;
  void operator()(R area, R vel0, R vel1, R dt, W vol_flux) const {
    vol_flux(0, 0) = 0.25 * dt(0, 0) * area(0, 0) * (vel0(0, 0) + vel0(oi, oj) + vel1(0, 0) + vel1(oi, oj));
  }
  void adjoint(R area, R vel0, W vel0_a1s, R vel1, W vel1_a1s, R dt, W dt_a1s, R, W vol_flux_a1s) const {
    const double g = vol_flux_a1s(0, 0);
    const double sum = vel0(0, 0) + vel0(oi, oj) + vel1(0, 0) + vel1(oi, oj);
    const double c = 0.25 * dt(0, 0) * area(0, 0) * g;
    vel0_a1s(0, 0) += c;
    vel0_a1s(oi, oj) += c;
    vel1_a1s(0, 0) += c;
    vel1_a1s(oi, oj) += c;
    dt_a1s(0, 0) += 0.25 * area(0, 0) * sum * g;
  }
};

// ---- cell advection -----------------------------------------------------------------
// pre_vol of the sweep: dir 0 = x, 1 = y; sweep 1 first, 2 second.
struct AdvecCellPreVol {
  int dir, sweep;
  void operator()(R volume, R vol_flux_x, R vol_flux_y, W pre_vol) const {
    const double fx = vol_flux_x(1, 0) - vol_flux_x(0, 0), fy = vol_flux_y(0, 1) - vol_flux_y(0, 0);
    double p;
    if (sweep == 1) p = dir == 0 ? volume(0, 0) + (fx + vol_flux_y(0, 1) - vol_flux_y(0, 0))
                                 : volume(0, 0) + (fy + vol_flux_x(1, 0) - vol_flux_x(0, 0));
    else p = dir == 0 ? volume(0, 0) + vol_flux_x(1, 0) - vol_flux_x(0, 0)
                      : volume(0, 0) + vol_flux_y(0, 1) - vol_flux_y(0, 0);
    pre_vol(0, 0) = p;
  }
  static constexpr unsigned adjoint_reads = 0;
  void adjoint(R, R, W vol_flux_x_a1s, R, W vol_flux_y_a1s, R, W pre_vol_a1s) const {
    const double pb = pre_vol_a1s(0, 0);
    if (sweep == 1 || dir == 0) {
      vol_flux_x_a1s(1, 0) += pb;
      vol_flux_x_a1s(0, 0) -= pb;
    }
    if (sweep == 1 || dir == 1) {
      vol_flux_y_a1s(0, 1) += pb;
      vol_flux_y_a1s(0, 0) -= pb;
    }
  }
};

// The reference's van Leer-type limiter of the cell advection.
inline double cell_limiter(double sigma, double sigma3, double sigma4, double diffuw, double diffdw) {
  constexpr double one_by_six = 1.0 / 6.0;
  const double wind = diffdw <= 0.0 ? -1.0 : 1.0;
  const double l = (1.0 - sigma) * wind *
                   std::min({std::fabs(diffuw), std::fabs(diffdw), one_by_six * (sigma3 * std::fabs(diffuw) + sigma4 * std::fabs(diffdw))});
  return diffuw * diffdw > 0.0 ? l : 0.0;
}
// cell_limiter and its partial derivatives on the branch it takes.
// Which of a, b, c std::min({a, b, c}) returns: the leftmost smallest (0, 1 or 2).
inline int argmin3(double a, double b, double c) {
  int which = 0;
  double m = a;
  if (b < m) {
    which = 1;
    m = b;
  }
  if (c < m) which = 2;
  return which;
}
struct LimiterD {
  double l = 0, sigma = 0, sigma3 = 0, sigma4 = 0, diffuw = 0, diffdw = 0;
};
inline LimiterD cell_limiter_d(double sigma, double sigma3, double sigma4, double diffuw, double diffdw) {
  constexpr double one_by_six = 1.0 / 6.0;
  LimiterD d;
  if (!(diffuw * diffdw > 0.0)) return d;
  const double wind = diffdw <= 0.0 ? -1.0 : 1.0;
  const double au = std::fabs(diffuw), ad = std::fabs(diffdw);
  const double c = one_by_six * (sigma3 * au + sigma4 * ad);
  const double f = (1.0 - sigma) * wind;
  const int which = argmin3(au, ad, c);
  const double m = which == 0 ? au : which == 1 ? ad : c;
  if (which == 0) d.diffuw = f * sgn(diffuw);
  else if (which == 1) d.diffdw = f * sgn(diffdw);
  else {
    d.sigma3 = f * one_by_six * au;
    d.sigma4 = f * one_by_six * ad;
    d.diffuw = f * one_by_six * sigma3 * sgn(diffuw);
    d.diffdw = f * one_by_six * sigma4 * sgn(diffdw);
  }
  d.l = f * m;
  d.sigma = -wind * m;
  return d;
}
// Fluxes through the face at the lower side of the point along D (0 = x, 1 = y):
// vol_flux (face), pre_vol, vertexd (low-dimensional along D), density1, energy1 ->
// mass_flux, ener_flux.
template <int D>
struct AdvecCellFlux {
  static double at(R a, int o) { return D == 0 ? a(o, 0) : a(0, o); }
  void operator()(R vol_flux, R pre_vol, R vertexd, R density1, R energy1, W mass_flux, W ener_flux) const {
    const double vf = vol_flux(0, 0);
    const bool pos = vf > 0.0;
    // positive: upwind -2, donor -1, downwind 0, dif = donor; else upwind +1, donor 0, downwind -1, dif = upwind
    const double pre_d = pos ? at(pre_vol, -1) : at(pre_vol, 0);
    const double vd_dif = pos ? at(vertexd, -1) : at(vertexd, 1);
    const double rho_u = pos ? at(density1, -2) : at(density1, 1);
    const double rho_d = pos ? at(density1, -1) : at(density1, 0);
    const double rho_w = pos ? at(density1, 0) : at(density1, -1);
    const double e_u = pos ? at(energy1, -2) : at(energy1, 1);
    const double e_d = pos ? at(energy1, -1) : at(energy1, 0);
    const double e_w = pos ? at(energy1, 0) : at(energy1, -1);
    const double sigmat = std::fabs(vf) / pre_d;
    const double sigma3 = (1.0 + sigmat) * (vertexd(0, 0) / vd_dif);
    const double sigma4 = 2.0 - sigmat;
    double limiter = cell_limiter(sigmat, sigma3, sigma4, rho_d - rho_u, rho_w - rho_d);
    const double mf = vf * (rho_d + limiter);
    const double sigmam = std::fabs(mf) / (rho_d * pre_d);
    limiter = cell_limiter(sigmam, sigma3, sigma4, e_d - e_u, e_w - e_d);
    mass_flux(0, 0) = mf;
    ener_flux(0, 0) = mf * (e_d + limiter);
  }
  static double& at(W a, int o) { return D == 0 ? a(o, 0) : a(0, o); }
  static constexpr unsigned adjoint_reads = 0b11111;
  void adjoint(R vol_flux, W vol_flux_a1s, R pre_vol, W pre_vol_a1s, R vertexd, R density1,
               W density1_a1s, R energy1, W energy1_a1s, R, W mass_flux_a1s, R, W ener_flux_a1s) const {
    const double vf = vol_flux(0, 0);
    const bool pos = vf > 0.0;
    const int o_pre = pos ? -1 : 0, o_vd = pos ? -1 : 1, o_u = pos ? -2 : 1, o_d = pos ? -1 : 0, o_w = pos ? 0 : -1;
    const double pre_d = at(pre_vol, o_pre), vd_dif = at(vertexd, o_vd), vd0 = vertexd(0, 0);
    const double rho_u = at(density1, o_u), rho_d = at(density1, o_d), rho_w = at(density1, o_w);
    const double e_u = at(energy1, o_u), e_d = at(energy1, o_d), e_w = at(energy1, o_w);
    const double sigmat = std::fabs(vf) / pre_d;
    const double sigma3 = (1.0 + sigmat) * (vd0 / vd_dif);
    const double sigma4 = 2.0 - sigmat;
    const LimiterD l1 = cell_limiter_d(sigmat, sigma3, sigma4, rho_d - rho_u, rho_w - rho_d);
    const double mf = vf * (rho_d + l1.l);
    const double sigmam = std::fabs(mf) / (rho_d * pre_d);
    const LimiterD l2 = cell_limiter_d(sigmam, sigma3, sigma4, e_d - e_u, e_w - e_d);
    const double efb = ener_flux_a1s(0, 0);
    double mfb = mass_flux_a1s(0, 0) + (e_d + l2.l) * efb;
    const double l2b = mf * efb;
    double e_db = mf * efb;
    const double smb = l2b * l2.sigma;
    double s3b = l2b * l2.sigma3, s4b = l2b * l2.sigma4;
    e_db += l2b * (l2.diffuw - l2.diffdw);
    at(energy1_a1s, o_u) -= l2b * l2.diffuw;
    at(energy1_a1s, o_w) += l2b * l2.diffdw;
    at(energy1_a1s, o_d) += e_db;
    const double rrd = 1.0 / rho_d, rpd = 1.0 / pre_d;
    mfb += sgn(mf) * rrd * rpd * smb;
    double rho_db = -sigmam * rrd * smb, pre_db = -sigmam * rpd * smb;
    double vfb = (rho_d + l1.l) * mfb;
    rho_db += vf * mfb;
    const double l1b = vf * mfb;
    double stb = l1b * l1.sigma;
    s3b += l1b * l1.sigma3;
    s4b += l1b * l1.sigma4;
    rho_db += l1b * (l1.diffuw - l1.diffdw);
    at(density1_a1s, o_u) -= l1b * l1.diffuw;
    at(density1_a1s, o_w) += l1b * l1.diffdw;
    at(density1_a1s, o_d) += rho_db;
    stb += -s4b + (vd0 / vd_dif) * s3b;
    vfb += (pos ? rpd : -rpd) * stb;
    pre_db += -sigmat * rpd * stb;
    at(pre_vol_a1s, o_pre) += pre_db;
    vol_flux_a1s(0, 0) += vfb;
  }
};
template <int D>
struct AdvecCellUpdate {
  static double up(R a) { return D == 0 ? a(1, 0) : a(0, 1); }
  void operator()(R pre_vol, R mass_flux, R ener_flux, R vol_flux, W density1, W energy1) const {
    const double pre_mass_s = density1(0, 0) * pre_vol(0, 0);
    const double post_mass_s = pre_mass_s + mass_flux(0, 0) - up(mass_flux);
    const double post_ener_s = (energy1(0, 0) * pre_mass_s + ener_flux(0, 0) - up(ener_flux)) / post_mass_s;
    const double advec_vol_s = pre_vol(0, 0) + vol_flux(0, 0) - up(vol_flux);
    density1(0, 0) = post_mass_s / advec_vol_s;
    energy1(0, 0) = post_ener_s;
  }
  static double& up(W a) { return D == 0 ? a(1, 0) : a(0, 1); }
  static constexpr unsigned adjoint_reads = 0b111111;
  void adjoint(R pre_vol, W pre_vol_a1s, R mass_flux, W mass_flux_a1s, R ener_flux, W ener_flux_a1s, R vol_flux,
               W vol_flux_a1s, R density1, W density1_a1s, R energy1, W energy1_a1s) const {
    const double pv = pre_vol(0, 0), d1 = density1(0, 0), e1 = energy1(0, 0);
    const double pm = d1 * pv;
    const double post_m = pm + mass_flux(0, 0) - up(mass_flux);
    const double n = e1 * pm + ener_flux(0, 0) - up(ener_flux);
    const double rpm = 1.0 / post_m;
    const double post_e = n * rpm;
    const double rav = 1.0 / (pv + vol_flux(0, 0) - up(vol_flux));
    const double d1n = post_m * rav;
    const double d1nb = density1_a1s(0, 0), post_eb = energy1_a1s(0, 0);
    double post_mb = d1nb * rav;
    const double avb = -d1n * post_mb;
    const double nb = post_eb * rpm;
    post_mb += -post_e * nb;
    const double pmb = e1 * nb + post_mb;
    ener_flux_a1s(0, 0) += nb;
    up(ener_flux_a1s) -= nb;
    mass_flux_a1s(0, 0) += post_mb;
    up(mass_flux_a1s) -= post_mb;
    vol_flux_a1s(0, 0) += avb;
    up(vol_flux_a1s) -= avb;
    pre_vol_a1s(0, 0) += avb + d1 * pmb;
    energy1_a1s(0, 0) = pm * nb;
    density1_a1s(0, 0) = pv * pmb;
  }
};

// ---- momentum advection -------------------------------------------------------------
// post_vol of mom_sweep 1 (x first: volume + y flux) or 2 (y first: volume + x flux).
struct AdvecMomPostVol {
  int mom_sweep;
  void operator()(R volume, R vol_flux_x, R vol_flux_y, W post_vol) const {
    post_vol(0, 0) = mom_sweep == 1 ? volume(0, 0) + vol_flux_y(0, 1) - vol_flux_y(0, 0)
                                    : volume(0, 0) + vol_flux_x(1, 0) - vol_flux_x(0, 0);
  }
  static constexpr unsigned adjoint_reads = 0;
  void adjoint(R, R, W vol_flux_x_a1s, R, W vol_flux_y_a1s, R, W post_vol_a1s) const {
    const double pb = post_vol_a1s(0, 0);
    if (mom_sweep == 1) {
      vol_flux_y_a1s(0, 1) += pb;
      vol_flux_y_a1s(0, 0) -= pb;
    } else {
      vol_flux_x_a1s(1, 0) += pb;
      vol_flux_x_a1s(0, 0) -= pb;
    }
  }
};
template <int D>
struct NodeFlux {
  void operator()(R mass_flux, W node_flux) const {
    if constexpr (D == 0)
      node_flux(0, 0) = 0.25 * (mass_flux(0, -1) + mass_flux(0, 0) + mass_flux(1, -1) + mass_flux(1, 0));
    else
      node_flux(0, 0) = 0.25 * (mass_flux(-1, 0) + mass_flux(0, 0) + mass_flux(-1, 1) + mass_flux(0, 1));
  }
  static constexpr unsigned adjoint_reads = 0;
  void adjoint(R, W mass_flux_a1s, R, W node_flux_a1s) const {
    const double b = 0.25 * node_flux_a1s(0, 0);
    mass_flux_a1s(0, 0) += b;
    if constexpr (D == 0) {
      mass_flux_a1s(0, -1) += b;
      mass_flux_a1s(1, -1) += b;
      mass_flux_a1s(1, 0) += b;
    } else {
      mass_flux_a1s(-1, 0) += b;
      mass_flux_a1s(-1, 1) += b;
      mass_flux_a1s(0, 1) += b;
    }
  }
};
template <int D>
struct NodeMass {
  void operator()(R density1, R post_vol, R node_flux, W node_mass_post, W node_mass_pre) const {
    const double post = 0.25 * (density1(0, -1) * post_vol(0, -1) + density1(0, 0) * post_vol(0, 0) +
                                density1(-1, -1) * post_vol(-1, -1) + density1(-1, 0) * post_vol(-1, 0));
    node_mass_post(0, 0) = post;
    node_mass_pre(0, 0) = post - (D == 0 ? node_flux(-1, 0) : node_flux(0, -1)) + node_flux(0, 0);
  }
  static constexpr unsigned adjoint_reads = 0b011;  // density1, post_vol
  void adjoint(R density1, W density1_a1s, R post_vol, W post_vol_a1s, R, W node_flux_a1s, R,
               W node_mass_post_a1s, R, W node_mass_pre_a1s) const {
    adjoint_body(density1, density1_a1s, post_vol, &post_vol_a1s, node_flux_a1s, node_mass_post_a1s,
                 node_mass_pre_a1s);
  }
  // post_vol_a1s null: post_vol is passive (the volume, mom_sweep 3 and 4).
  static void adjoint_body(R density1, W density1_a1s, R post_vol, const W* post_vol_a1s, W node_flux_a1s,
                           W node_mass_post_a1s, W node_mass_pre_a1s) {
    const double preb = node_mass_pre_a1s(0, 0), postb = 0.25 * (node_mass_post_a1s(0, 0) + preb);
    node_flux_a1s(0, 0) += preb;
    if constexpr (D == 0) node_flux_a1s(-1, 0) -= preb;
    else node_flux_a1s(0, -1) -= preb;
    for (const auto& [i, j] : {std::pair{0, -1}, std::pair{0, 0}, std::pair{-1, -1}, std::pair{-1, 0}}) {
      density1_a1s(i, j) += post_vol(i, j) * postb;
      if (post_vol_a1s) (*post_vol_a1s)(i, j) += density1(i, j) * postb;
    }
  }
};
// NodeMass whose post_vol is the passive volume (mom_sweep 3 and 4).
template <int D>
struct NodeMassVolume : NodeMass<D> {
  void adjoint(R density1, W density1_a1s, R volume, R, W node_flux_a1s, R, W node_mass_post_a1s, R,
               W node_mass_pre_a1s) const {
    NodeMass<D>::adjoint_body(density1, density1_a1s, volume, nullptr, node_flux_a1s, node_mass_post_a1s,
                              node_mass_pre_a1s);
  }
};
template <int D>
struct MomFlux {
  static double at(R a, int o) { return D == 0 ? a(o, 0) : a(0, o); }
  void operator()(R node_flux, R node_mass_pre, R celld, R vel1, W mom_flux) const {
    const double nf = node_flux(0, 0);
    const bool neg = nf < 0.0;
    // negative: upwind +2, donor +1, downwind 0, dif = donor; else upwind -1, donor 0, downwind +1, dif = upwind
    const double v_u = neg ? at(vel1, 2) : at(vel1, -1);
    const double v_d = neg ? at(vel1, 1) : at(vel1, 0);
    const double v_w = neg ? at(vel1, 0) : at(vel1, 1);
    const double m_d = neg ? at(node_mass_pre, 1) : at(node_mass_pre, 0);
    const double c_dif = neg ? at(celld, 1) : at(celld, -1);
    const double sigma = std::fabs(nf) / m_d;
    const double width = celld(0, 0);
    const double vdiffuw = v_d - v_u, vdiffdw = v_w - v_d;
    const double auw = std::fabs(vdiffuw), adw = std::fabs(vdiffdw);
    const double wind = vdiffdw <= 0.0 ? -1.0 : 1.0;
    const double l = wind * std::min({width * ((2.0 - sigma) * adw / width + (1.0 + sigma) * auw / c_dif) / 6.0, auw, adw});
    const double limiter = vdiffuw * vdiffdw > 0.0 ? l : 0.0;
    const double advec_vel_s = v_d + (1.0 - sigma) * limiter;
    mom_flux(0, 0) = advec_vel_s * nf;
  }
  static double& at(W a, int o) { return D == 0 ? a(o, 0) : a(0, o); }
  static constexpr unsigned adjoint_reads = 0b1111;
  void adjoint(R node_flux, W node_flux_a1s, R node_mass_pre, W node_mass_pre_a1s, R celld, R vel1,
               W vel1_a1s, R, W mom_flux_a1s) const {
    const double nf = node_flux(0, 0);
    const bool neg = nf < 0.0;
    const int o_u = neg ? 2 : -1, o_d = neg ? 1 : 0, o_w = neg ? 0 : 1, o_m = neg ? 1 : 0, o_c = neg ? 1 : -1;
    const double v_u = at(vel1, o_u), v_d = at(vel1, o_d), v_w = at(vel1, o_w);
    const double m_d = at(node_mass_pre, o_m), c_dif = at(celld, o_c), width = celld(0, 0);
    const double sigma = std::fabs(nf) / m_d;
    const double vdiffuw = v_d - v_u, vdiffdw = v_w - v_d;
    const double auw = std::fabs(vdiffuw), adw = std::fabs(vdiffdw);
    const double wind = vdiffdw <= 0.0 ? -1.0 : 1.0;
    const double z = (2.0 - sigma) * adw / width + (1.0 + sigma) * auw / c_dif;
    const double t = width * z / 6.0;
    const int which = argmin3(t, auw, adw);
    const double m = which == 0 ? t : which == 1 ? auw : adw;
    const bool on = vdiffuw * vdiffdw > 0.0;
    const double limiter = on ? wind * m : 0.0;
    const double advec_vel_s = v_d + (1.0 - sigma) * limiter;
    const double mb = mom_flux_a1s(0, 0);
    const double advb = nf * mb;
    double nfb = advec_vel_s * mb;
    double v_db = advb, sigmab = -limiter * advb;
    if (on) {
      const double mmb = wind * (1.0 - sigma) * advb;
      double auwb = 0, adwb = 0;
      if (which == 0) {
        const double zb = width / 6.0 * mmb, rw = 1.0 / width, rc = 1.0 / c_dif;
        sigmab += (-adw * rw + auw * rc) * zb;
        adwb += (2.0 - sigma) * rw * zb;
        auwb += (1.0 + sigma) * rc * zb;
      } else if (which == 1) {
        auwb += mmb;
      } else {
        adwb += mmb;
      }
      const double uwb = sgn(vdiffuw) * auwb, dwb = sgn(vdiffdw) * adwb;
      v_db += uwb - dwb;
      at(vel1_a1s, o_u) -= uwb;
      at(vel1_a1s, o_w) += dwb;
    }
    at(vel1_a1s, o_d) += v_db;
    const double rm = 1.0 / m_d;
    nfb += (neg ? -rm : rm) * sigmab;
    at(node_mass_pre_a1s, o_m) += -sigma * rm * sigmab;
    node_flux_a1s(0, 0) += nfb;
  }
};
template <int D>
struct MomUpdate {
  void operator()(R node_mass_pre, R mom_flux, R node_mass_post, W vel1) const {
    const double low = D == 0 ? mom_flux(-1, 0) : mom_flux(0, -1);
    vel1(0, 0) = (vel1(0, 0) * node_mass_pre(0, 0) + low - mom_flux(0, 0)) / node_mass_post(0, 0);
  }
  static constexpr unsigned adjoint_reads = 0b1111;
  void adjoint(R node_mass_pre, W node_mass_pre_a1s, R mom_flux, W mom_flux_a1s, R node_mass_post,
               W node_mass_post_a1s, R vel1, W vel1_a1s) const {
    const double low = D == 0 ? mom_flux(-1, 0) : mom_flux(0, -1);
    const double v = vel1(0, 0), pre = node_mass_pre(0, 0), post = node_mass_post(0, 0);
    const double rp = 1.0 / post;
    const double vn = (v * pre + low - mom_flux(0, 0)) * rp;
    const double vb = vel1_a1s(0, 0), nb = vb * rp;
    node_mass_post_a1s(0, 0) += -vn * nb;
    node_mass_pre_a1s(0, 0) += v * nb;
    if constexpr (D == 0) mom_flux_a1s(-1, 0) += nb;
    else mom_flux_a1s(0, -1) += nb;
    mom_flux_a1s(0, 0) -= nb;
    vel1_a1s(0, 0) = pre * nb;
  }
};

// ---- field summary ------------------------------------------------------------------
struct FieldSummary {
  void operator()(R volume, R density0, R energy0, R pressure, R xvel0, R yvel0, double* vol, double* mass,
                  double* ie, double* ke, double* press) const {
    double vsqrd = 0.0;
    vsqrd = vsqrd + 0.25 * (xvel0(0, 0) * xvel0(0, 0) + yvel0(0, 0) * yvel0(0, 0));
    vsqrd = vsqrd + 0.25 * (xvel0(1, 0) * xvel0(1, 0) + yvel0(1, 0) * yvel0(1, 0));
    vsqrd = vsqrd + 0.25 * (xvel0(0, 1) * xvel0(0, 1) + yvel0(0, 1) * yvel0(0, 1));
    vsqrd = vsqrd + 0.25 * (xvel0(1, 1) * xvel0(1, 1) + yvel0(1, 1) * yvel0(1, 1));
    const double cell_vol = volume(0, 0);
    const double cell_mass = cell_vol * density0(0, 0);
    *vol += cell_vol;
    *mass += cell_mass;
    *ie += cell_mass * energy0(0, 0);
    *ke += cell_mass * 0.5 * vsqrd;
    *press += cell_vol * pressure(0, 0);
  }
  static constexpr unsigned adjoint_reads = 0b111111;
  void adjoint(R volume, R density0, W density0_a1s, R energy0, W energy0_a1s, R pressure,
               W pressure_a1s, R xvel0, W xvel0_a1s, R yvel0, W yvel0_a1s, const double*, const double* vol_a1s,
               const double*, const double* mass_a1s, const double*, const double* ie_a1s, const double*,
               const double* ke_a1s, const double*, const double* press_a1s) const {
    double vsqrd = 0.0;
    for (const auto& [i, j] : {std::pair{0, 0}, std::pair{1, 0}, std::pair{0, 1}, std::pair{1, 1}})
      vsqrd += 0.25 * (xvel0(i, j) * xvel0(i, j) + yvel0(i, j) * yvel0(i, j));
    const double cv = volume(0, 0), rho = density0(0, 0), cm = cv * rho;
    const double cmb = *mass_a1s + energy0(0, 0) * *ie_a1s + 0.5 * vsqrd * *ke_a1s;
    energy0_a1s(0, 0) += cm * *ie_a1s;
    pressure_a1s(0, 0) += cv * *press_a1s;
    density0_a1s(0, 0) += cv * cmb;
    const double vb = 0.5 * cm * 0.5 * *ke_a1s;  // d(vsqrd) -> d(v^2)/4 at each node
    for (const auto& [i, j] : {std::pair{0, 0}, std::pair{1, 0}, std::pair{0, 1}, std::pair{1, 1}}) {
      xvel0_a1s(i, j) += vb * xvel0(i, j);
      yvel0_a1s(i, j) += vb * yvel0(i, j);
    }
  }
};

// ---- reflective boundaries (update_halo) --------------------------------------------
// Mirror pass: m(p) = sign * f(p + o) with o = twoc - 2 p[axis] (the reflection about
// twoc / 2), for N fields of one shape; copy pass: f(p) = m(p). Two passes because a
// loop may not read the dat it writes at other points. One functor per N (an adjoint
// member may not be overloaded); ReflectSide holds the side's constants.
struct ReflectSide {
  int axis, twoc;
  double sign[3];
  int offset(const int* idx) const { return twoc - 2 * idx[axis]; }
  double get(const int* idx, R f) const {
    const int o = offset(idx);
    return axis == 0 ? f(o, 0) : f(0, o);
  }
  double& get(const int* idx, W f) const {
    const int o = offset(idx);
    return axis == 0 ? f(o, 0) : f(0, o);
  }
};
template <int N>
struct Reflect;
template <>
struct Reflect<1> : ReflectSide {
  static constexpr unsigned adjoint_reads = 0;
  void operator()(const int* idx, R f0, W m0) const { m0(0, 0) = sign[0] * get(idx, f0); }
  void adjoint(const int* idx, R, W f0_a1s, R, W m0_a1s) const { get(idx, f0_a1s) += sign[0] * m0_a1s(0, 0); }
};
template <>
struct Reflect<2> : ReflectSide {
  static constexpr unsigned adjoint_reads = 0;
  void operator()(const int* idx, R f0, R f1, W m0, W m1) const {
    m0(0, 0) = sign[0] * get(idx, f0);
    m1(0, 0) = sign[1] * get(idx, f1);
  }
  void adjoint(const int* idx, R, W f0_a1s, R, W f1_a1s, R, W m0_a1s, R, W m1_a1s) const {
    get(idx, f0_a1s) += sign[0] * m0_a1s(0, 0);
    get(idx, f1_a1s) += sign[1] * m1_a1s(0, 0);
  }
};
template <>
struct Reflect<3> : ReflectSide {
  static constexpr unsigned adjoint_reads = 0;
  void operator()(const int* idx, R f0, R f1, R f2, W m0, W m1, W m2) const {
    m0(0, 0) = sign[0] * get(idx, f0);
    m1(0, 0) = sign[1] * get(idx, f1);
    m2(0, 0) = sign[2] * get(idx, f2);
  }
  void adjoint(const int* idx, R, W f0_a1s, R, W f1_a1s, R, W f2_a1s, R, W m0_a1s, R, W m1_a1s, R,
               W m2_a1s) const {
    get(idx, f0_a1s) += sign[0] * m0_a1s(0, 0);
    get(idx, f1_a1s) += sign[1] * m1_a1s(0, 0);
    get(idx, f2_a1s) += sign[2] * m2_a1s(0, 0);
  }
};
template <int N>
struct CopyBack;
template <>
struct CopyBack<1> {
  static constexpr unsigned adjoint_reads = 0;
  void operator()(R m0, W f0) const { f0(0, 0) = m0(0, 0); }
  void adjoint(R, W m0_a1s, R, W f0_a1s) const { m0_a1s(0, 0) += f0_a1s(0, 0); }
};
template <>
struct CopyBack<2> {
  static constexpr unsigned adjoint_reads = 0;
  void operator()(R m0, R m1, W f0, W f1) const {
    f0(0, 0) = m0(0, 0);
    f1(0, 0) = m1(0, 0);
  }
  void adjoint(R, W m0_a1s, R, W m1_a1s, R, W f0_a1s, R, W f1_a1s) const {
    m0_a1s(0, 0) += f0_a1s(0, 0);
    m1_a1s(0, 0) += f1_a1s(0, 0);
  }
};
template <>
struct CopyBack<3> {
  static constexpr unsigned adjoint_reads = 0;
  void operator()(R m0, R m1, R m2, W f0, W f1, W f2) const {
    f0(0, 0) = m0(0, 0);
    f1(0, 0) = m1(0, 0);
    f2(0, 0) = m2(0, 0);
  }
  void adjoint(R, W m0_a1s, R, W m1_a1s, R, W m2_a1s, R, W f0_a1s, R, W f1_a1s, R, W f2_a1s) const {
    m0_a1s(0, 0) += f0_a1s(0, 0);
    m1_a1s(0, 0) += f1_a1s(0, 0);
    m2_a1s(0, 0) += f2_a1s(0, 0);
  }
};

}  // namespace cloverleaf::kern
