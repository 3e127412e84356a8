// SPDX-License-Identifier: LGPL-2.1-or-later
// apps/cloverleaf/kernels.hpp — the point kernels of CloverLeaf 1.3's hydro cycle as
// stardiff par_loop functors.
//
// Contract: each functor's operator() takes the accessors of its loop's arguments in
// argument order (R = READ, W = WRITE or RW) and computes one mesh point with the
// reference's arithmetic, in the reference's evaluation order (indices are 0-based
// offsets from the point: the reference's (j+1,k) is a(1,0)). Low-dimensional dats
// (celldx, vertexdy, ...) are read with an offset along their one axis only. A later
// adjoint adds `void adjoint(...) const` to each functor (par_loop.hpp's contract);
// the functors keep no state but their constants. Branches are written as selects
// where the reference branches on a sign, so the loops vectorise.
#pragma once
#include <algorithm>
#include <cmath>

#include <stardiff/mesh/par_loop.hpp>

#include "deck.hpp"

namespace cloverleaf::kern {

using R = stardiff::mesh::Acc<const double>;
using W = stardiff::mesh::Acc<double>;

// CloverLeaf's g_small and g_big are default-real literals stored in REAL(8).
inline constexpr double g_small = static_cast<double>(1.0e-16f);
inline constexpr double g_big = static_cast<double>(1.0e+21f);

// ---- set-up -------------------------------------------------------------------------
// vertex coordinate and spacing along one axis: v(i) = min + d * i (i 0-based).
struct VertexAxis {
  double min, d;
  int axis;
  void operator()(const int* idx, W v, W dv) const {
    v(0, 0) = min + d * static_cast<double>(static_cast<float>(idx[axis]));
    dv(0, 0) = d;
  }
};
// cell centre and width along the axis of the vertex dat: c(i) = 0.5 (v(i) + v(i+1)).
struct CellAxis {
  double d;
  int axis;
  void operator()(R v, W c, W dc) const {
    c(0, 0) = 0.5 * (v(0, 0) + (axis == 0 ? v(1, 0) : v(0, 1)));
    dc(0, 0) = d;
  }
};
struct Fill {
  double value;
  void operator()(W a) const { a(0, 0) = value; }
};
struct CopyAxis {  // xarea = celldy(k), yarea = celldx(j)
  void operator()(R src, W a) const { a(0, 0) = src(0, 0); }
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

// ---- PdV, revert, accelerate, fluxes ------------------------------------------------
// total volume flux of a cell; predictor: half a step of the old velocities.
struct PdvFluxPredict {
  double dt;
  void operator()(R xarea, R yarea, R xvel0, R yvel0, W total) const {
    const double left = (xarea(0, 0) * (xvel0(0, 0) + xvel0(0, 1) + xvel0(0, 0) + xvel0(0, 1))) * 0.25 * dt * 0.5;
    const double right = (xarea(1, 0) * (xvel0(1, 0) + xvel0(1, 1) + xvel0(1, 0) + xvel0(1, 1))) * 0.25 * dt * 0.5;
    const double bottom = (yarea(0, 0) * (yvel0(0, 0) + yvel0(1, 0) + yvel0(0, 0) + yvel0(1, 0))) * 0.25 * dt * 0.5;
    const double top = (yarea(0, 1) * (yvel0(0, 1) + yvel0(1, 1) + yvel0(0, 1) + yvel0(1, 1))) * 0.25 * dt * 0.5;
    total(0, 0) = right - left + top - bottom;
  }
};
struct PdvFluxCorrect {
  double dt;
  void operator()(R xarea, R yarea, R xvel0, R yvel0, R xvel1, R yvel1, W total) const {
    const double left = (xarea(0, 0) * (xvel0(0, 0) + xvel0(0, 1) + xvel1(0, 0) + xvel1(0, 1))) * 0.25 * dt;
    const double right = (xarea(1, 0) * (xvel0(1, 0) + xvel0(1, 1) + xvel1(1, 0) + xvel1(1, 1))) * 0.25 * dt;
    const double bottom = (yarea(0, 0) * (yvel0(0, 0) + yvel0(1, 0) + yvel1(0, 0) + yvel1(1, 0))) * 0.25 * dt;
    const double top = (yarea(0, 1) * (yvel0(0, 1) + yvel0(1, 1) + yvel1(0, 1) + yvel1(1, 1))) * 0.25 * dt;
    total(0, 0) = right - left + top - bottom;
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
};
struct Copy2 {  // a1 = a0, b1 = b0 (revert, reset_field)
  void operator()(R a0, R b0, W a1, W b1) const {
    a1(0, 0) = a0(0, 0);
    b1(0, 0) = b0(0, 0);
  }
};
// accelerate: half the step over the nodal mass.
struct StepByMass {
  double halfdt;
  void operator()(R density0, R volume, W sbm) const {
    sbm(0, 0) = halfdt / ((density0(-1, -1) * volume(-1, -1) + density0(0, -1) * volume(0, -1) +
                           density0(0, 0) * volume(0, 0) + density0(-1, 0) * volume(-1, 0)) *
                          0.25);
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
};
struct FluxCalc {
  double dt;
  void operator()(R xarea, R yarea, R xvel0, R yvel0, R xvel1, R yvel1, W vol_flux_x, W vol_flux_y) const {
    vol_flux_x(0, 0) = 0.25 * dt * xarea(0, 0) * (xvel0(0, 0) + xvel0(0, 1) + xvel1(0, 0) + xvel1(0, 1));
    vol_flux_y(0, 0) = 0.25 * dt * yarea(0, 0) * (yvel0(0, 0) + yvel0(1, 0) + yvel1(0, 0) + yvel1(1, 0));
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
};

// The reference's van Leer-type limiter of the cell advection.
inline double cell_limiter(double sigma, double sigma3, double sigma4, double diffuw, double diffdw) {
  constexpr double one_by_six = 1.0 / 6.0;
  const double wind = diffdw <= 0.0 ? -1.0 : 1.0;
  const double l = (1.0 - sigma) * wind *
                   std::min({std::fabs(diffuw), std::fabs(diffdw), one_by_six * (sigma3 * std::fabs(diffuw) + sigma4 * std::fabs(diffdw))});
  return diffuw * diffdw > 0.0 ? l : 0.0;
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
};

// ---- momentum advection -------------------------------------------------------------
// post_vol of mom_sweep 1 (x first: volume + y flux) or 2 (y first: volume + x flux).
struct AdvecMomPostVol {
  int mom_sweep;
  void operator()(R volume, R vol_flux_x, R vol_flux_y, W post_vol) const {
    post_vol(0, 0) = mom_sweep == 1 ? volume(0, 0) + vol_flux_y(0, 1) - vol_flux_y(0, 0)
                                    : volume(0, 0) + vol_flux_x(1, 0) - vol_flux_x(0, 0);
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
};
template <int D>
struct NodeMass {
  void operator()(R density1, R post_vol, R node_flux, W node_mass_post, W node_mass_pre) const {
    const double post = 0.25 * (density1(0, -1) * post_vol(0, -1) + density1(0, 0) * post_vol(0, 0) +
                                density1(-1, -1) * post_vol(-1, -1) + density1(-1, 0) * post_vol(-1, 0));
    node_mass_post(0, 0) = post;
    node_mass_pre(0, 0) = post - (D == 0 ? node_flux(-1, 0) : node_flux(0, -1)) + node_flux(0, 0);
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
};
template <int D>
struct MomUpdate {
  void operator()(R node_mass_pre, R mom_flux, R node_mass_post, W vel1) const {
    const double low = D == 0 ? mom_flux(-1, 0) : mom_flux(0, -1);
    vel1(0, 0) = (vel1(0, 0) * node_mass_pre(0, 0) + low - mom_flux(0, 0)) / node_mass_post(0, 0);
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
};

// ---- reflective boundaries (update_halo) --------------------------------------------
// Mirror pass: m(p) = sign * f(p + o) with o = twoc - 2 p[axis] (the reflection about
// twoc / 2), for N fields of one shape; copy pass: f(p) = m(p). Two passes because a
// loop may not read the dat it writes at other points.
struct Reflect {
  int axis, twoc;
  double sign[3];
  double get(const int* idx, R f) const {
    const int o = twoc - 2 * idx[axis];
    return axis == 0 ? f(o, 0) : f(0, o);
  }
  void operator()(const int* idx, R f0, W m0) const { m0(0, 0) = sign[0] * get(idx, f0); }
  void operator()(const int* idx, R f0, R f1, W m0, W m1) const {
    m0(0, 0) = sign[0] * get(idx, f0);
    m1(0, 0) = sign[1] * get(idx, f1);
  }
  void operator()(const int* idx, R f0, R f1, R f2, W m0, W m1, W m2) const {
    m0(0, 0) = sign[0] * get(idx, f0);
    m1(0, 0) = sign[1] * get(idx, f1);
    m2(0, 0) = sign[2] * get(idx, f2);
  }
};
struct CopyBack {
  void operator()(R m0, W f0) const { f0(0, 0) = m0(0, 0); }
  void operator()(R m0, R m1, W f0, W f1) const {
    f0(0, 0) = m0(0, 0);
    f1(0, 0) = m1(0, 0);
  }
  void operator()(R m0, R m1, R m2, W f0, W f1, W f2) const {
    f0(0, 0) = m0(0, 0);
    f1(0, 0) = m1(0, 0);
    f2(0, 0) = m2(0, 0);
  }
};

}  // namespace cloverleaf::kern
