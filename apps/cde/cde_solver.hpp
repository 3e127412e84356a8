// SPDX-License-Identifier: LGPL-2.1-or-later
// apps/cde/cde_solver.hpp — European call under Heston with an optional leverage function
// L(t, s), by Hundsdorfer-Verwer ADI on stardiff's structured-mesh DSL (the stardiff-cde model).
//
// Contract (tau = time to maturity, u(0, s, v) = max(s - K, 0)):
//   u_tau = 1/2 L^2 s^2 v u_ss + rho sigma L s v u_sv + 1/2 sigma^2 v u_vv + (r_d - r_f) s u_s
//           + kappa (theta - v) u_v - r_d u
//  * Grids (in 't Hout & Foulon 2010): s_i = K + c sinh(xi_i), c = K/5, xi uniform on
//    [asinh(-K/c), asinh((S_max - K)/c)], S_max = 8K; v_j = d sinh(eta_j), d = V_max/500,
//    eta uniform on [0, asinh(V_max/d)], V_max = 5; ns x nv points, boundaries included.
//  * Space: second-order central differences on the non-uniform grids for u_s, u_ss, u_v, u_vv;
//    u_sv by the 9-point product of the central first-derivative stencils; at v = 0 the PDE itself
//    (all v-weighted terms vanish) with u_v by the second-order forward (upwind, kappa theta >= 0)
//    3-point formula. Boundaries: u = 0 at s = 0; u = s e^{-r_f tau} at v = V_max (Dirichlet
//    nodes); u_s = e^{-r_f tau} at S_max (a virtual node s_N + h for u_ss, u_sv = 0 there).
//  * Splitting F = F0 + F1 + F2: F0 the mixed term, F1 the s-terms and -r_d u / 2 (with the
//    Neumann inhomogeneity), F2 the v-terms and -r_d u / 2. A2's third entry at v = 0 (forward
//    formula) is eliminated with the row v_1 (exact), so both implicit systems are tridiagonal
//    and are solved by stardiff::tridiag_solve along s and along v.
//  * Time: `damping` Douglas steps (theta = 1) then `steps` Hundsdorfer-Verwer steps with
//    theta = 1/2 + sqrt(3)/6, all of size T / (steps + damping) (as QuantLib's dampingSteps);
//    F0 explicit, F1 and F2 implicit. With a tape recording, Tape::step({u}) marks every step
//    boundary (steps + damping + 1 marks). The model's dats are passive unless cfg.adjoint.
//  * r_d enters the drift (r_d - r_f) s u_s (the Neumann inhomogeneity at S_max included) and the
//    reaction -r_d u, split as -r_d/2 into A1's and A2's diagonals; the boundary values
//    (s e^{-r_f tau}, slope e^{-r_f tau}) do not depend on it.
//  * Greeks (cfg.adjoint: every model dat active, the coefficient loops recorded with kappa,
//    theta, sigma, rho, r_d as active Scalars and the leverage-on-grid dat active): greeks()
//    runs the model once on a tape (each step one external function with a hand-written adjoint,
//    or with recorded_adjoint the stages' loops; each step marked; save-all or Revolve), seeds
//    u(T) with the interpolation weights of price() and reverses once, giving d price / d
//    (kappa, theta, sigma, rho, r_d) and / d L(t_k, s_m) (the leverage nodes, through the linear
//    maps onto the grid). delta, gamma and d price / d v0 are derivatives of the interpolant
//    price() in s0 and v0 (the grid depends on K only, so u(T) depends on neither); vega =
//    d price / d sqrt(v0) = 2 sqrt(v0) d price / d v0. Each is the exact derivative of the
//    discrete model's price (up to round-off).
//  * Payoff: max(s - K, 0) at the nodes, except (smooth_payoff) the node whose cell
//    [(s_{i-1}+s_i)/2, (s_i+s_{i+1})/2] holds K, which takes the payoff's cell average.
//  * Leverage (optional): L(t_k, s_m) on nodes (t increasing calendar times, s increasing spots),
//    linear in s onto the grid (flat outside the nodes), linear in t (flat outside); L(t, s) is
//    evaluated at t = T - tau of each stage. Without one, L = 1.
//  * price(): u(T) at (s0, v0) by tensor-product cubic Lagrange interpolation on the 4 x 4
//    nearest nodes (clamped at the grid's ends).
//  * Preconditions (Error): HestonParams as heston_call checks them (sigma > 0), ns, nv >= 5,
//    steps >= 1, damping >= 0, s0 in (0, S_max), v0 in [0, V_max]; leverage nodes >= 1 x 1,
//    finite, >= 0, axes strictly increasing, values a full t x s table.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "heston_analytic.hpp"
#include "stardiff/adjoint/tape.hpp"
#include "stardiff/runtime/executor.hpp"

namespace stardiff::cde {

struct Leverage {
  std::vector<double> t, s;
  std::vector<double> L;  // L[k * s.size() + m] = L(t_k, s_m)
};

struct CdeConfig {
  HestonParams p;
  int ns = 200, nv = 100, steps = 100, damping = 0;
  double smax_factor = 8.0, vmax = 5.0;
  bool smooth_payoff = true;
  int tiles = 0;  // block tiles along v; 0: 1 on a one-worker executor, else 2 per worker (<= nv / 4)
  std::shared_ptr<const Leverage> leverage;  // null: L = 1
  bool adjoint = false;  // active dats and recorded coefficient loops (for greeks())
  // Adjoint mode's step: false (default) one external function per step with a hand-written
  // adjoint (cde_hv_step); true the recorded stage loops and solves, each with its own adjoint
  // (the loop-level reference: the same primal bits, Greeks equal up to round-off).
  bool recorded_adjoint = false;
  // cde_hv_step with a save-all tape: the forward keeps each step's stages (three full-grid arrays
  // of (ns + 2)(nv + 3) doubles, one for a damping step; U after each step is the next step's
  // input, handed from one step's adjoint to the next) for the reverse sweep, which then does
  // not recompute them, for as many steps (from the first) as fit in stage_bytes; the other steps,
  // and every step under checkpointing (Revolve, online), recompute them. 0: always recompute.
  // Either way the same arithmetic, so the same Greeks bit for bit.
  std::size_t stage_bytes = std::size_t{2} << 30;
};

struct Greeks {
  double price = 0;
  double delta = 0, gamma = 0, v0 = 0, vega = 0;  // of the interpolant (s0, v0)
  double kappa = 0, theta = 0, sigma = 0, rho = 0, rd = 0;
  std::vector<double> leverage;  // d price / d L(t_k, s_m) at k * s.size() + m (empty: no leverage)
  double forward_s = 0, reverse_s = 0;  // the taped run; the reverse sweep (seed to gradients)
  std::int64_t steps = 0, recomputed_steps = 0;
  std::size_t peak_bytes = 0, snapshots = 0;  // tape peak (checkpoints, pools, snapshots); snapshots held
  std::int64_t kept_steps = 0;  // steps whose stages the forward kept (CdeConfig::stage_bytes)
  std::size_t kept_bytes = 0;   // their size
  std::int64_t kept_used = 0;   // of those, steps whose adjoint used them (the others recomputed)
};

// Checks a leverage table (Error naming what is wrong).
void check_leverage(const Leverage& lev);

class CdeSolver {
 public:
  CdeSolver(Executor& ex, const CdeConfig& cfg);
  ~CdeSolver();
  CdeSolver(const CdeSolver&) = delete;
  CdeSolver& operator=(const CdeSolver&) = delete;
  // Sets the payoff and runs every step (submits; waits at the end). tape: step marks if recording.
  void run(Tape* tape = nullptr);
  double price();                        // after run()
  // cfg.adjoint only (Error otherwise): one taped run and one reverse sweep (contract above).
  Greeks greeks(const Checkpointing& ck = Checkpointing::save_all());
  // Adjoint tests: run() from u0 (every node, index i + ns j) instead of the payoff; and
  // (cfg.adjoint only) one taped run from u0, u(T)'s adjoint seeded with ubar, one reverse sweep:
  // the adjoints of u0 and of (kappa, theta, sigma, rho, r_d).
  struct Adjoints {
    std::vector<double> u0;
    double kappa = 0, theta = 0, sigma = 0, rho = 0, rd = 0;
  };
  void run_from(const std::vector<double>& u0);
  Adjoints adjoint_from(const std::vector<double>& u0, const std::vector<double>& ubar);
  std::vector<double> solution();        // u(T) at node (i, j), index i + ns j
  const std::vector<double>& s() const;  // grids
  const std::vector<double>& v() const;
  int tiles() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> m_;
};

// Cubic Lagrange interpolation of nodal values f (index i + nx j) on grids x, y at (x0, y0).
double interp_bicubic(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& f,
                      double x0, double y0);
// The 4 cubic Lagrange weights of interp_bicubic along grid g at z (first node *i0) and their
// first and second derivatives in z.
void interp_weights(const std::vector<double>& g, double z, int* i0, double w[4], double dw[4], double d2w[4]);

}  // namespace stardiff::cde
