// SPDX-License-Identifier: LGPL-2.1-or-later
// apps/common/nonlinear_diffusion.hpp — a nonlinear explicit diffusion u <- u + c ∇·(u²∇u) on
// the mesh DSL, whose adjoint reads u (checkpointing tests and bench/checkpointing).
//
// Interior n x n, halo 1, h = 1/(n+1); on i, j in [-1, n]: x = (i+1)h, y = (j+1)h,
// u = 0.5 + 0.4 sin(pi x) sin(2 pi y) + 0.1 x (the ring stays fixed), ref = 0.5 (passive).
// prefix(): u <- u + 0.1 u² on the interior (a recorded loop before the steps). Each step:
// face fluxes 0.5 (u_p² + u_q²)(u_q - u_p), un = u + c Σ fluxes on the interior, then u <- un.
// With reductions (per step): S = h² Σ u² (reset each step, read on the host: the step's
// c = c0 / (1 + S), as CloverLeaf's dt), and M = max u² (never reset: its value carries
// across steps). E = Σ (u - ref)² over the interior.
#pragma once
#include <cmath>

#include "poisson_problem.hpp"

namespace stardiff::nonlinear {

using mesh::Acc;

struct InitKernel {
  double h;
  void operator()(Acc<double> u, Acc<double> un, Acc<double> ref, const int* idx) const {
    const double pi = 3.14159265358979323846;
    const double x = (idx[0] + 1) * h, y = (idx[1] + 1) * h;
    u(0, 0) = 0.5 + 0.4 * std::sin(pi * x) * std::sin(2.0 * pi * y) + 0.1 * x;
    un(0, 0) = u(0, 0);
    ref(0, 0) = 0.5;
  }
};

struct WarpKernel {
  static constexpr unsigned adjoint_reads = 0b1;
  void operator()(Acc<double> u) const { u(0, 0) = u(0, 0) + 0.1 * u(0, 0) * u(0, 0); }
  void adjoint(Acc<const double> u, Acc<double> u_a1s) const { u_a1s(0, 0) *= 1.0 + 0.2 * u(0, 0); }
};

struct DiffusionKernel {
  double c;
  static constexpr unsigned adjoint_reads = 0b01;  // u
  static double flux(double v, double n) { return 0.5 * (v * v + n * n) * (n - v); }
  void operator()(Acc<const double> u, Acc<double> un) const {
    const double v = u(0, 0);
    un(0, 0) = v + c * (flux(v, u(-1, 0)) + flux(v, u(1, 0)) + flux(v, u(0, -1)) + flux(v, u(0, 1)));
  }
  void adjoint(Acc<const double> u, Acc<double> u_a1s, Acc<const double>, Acc<double> un_a1s) const {
    const double g = un_a1s(0, 0), v = u(0, 0), d = c * g;
    double dv = g;
    auto nb = [&](int i, int j) {
      const double n = u(i, j), m = 0.5 * (v * v + n * n);
      dv += d * (v * (n - v) - m);
      u_a1s(i, j) += d * (n * (n - v) + m);
    };
    nb(-1, 0);
    nb(1, 0);
    nb(0, -1);
    nb(0, 1);
    u_a1s(0, 0) += dv;
  }
};

struct SumSqKernel {
  double h2;
  static constexpr unsigned adjoint_reads = 0b1;
  void operator()(Acc<const double> u, double* s) const { *s += h2 * u(0, 0) * u(0, 0); }
  void adjoint(Acc<const double> u, Acc<double> u_a1s, const double*, const double* s_a1s) const {
    u_a1s(0, 0) += 2.0 * h2 * u(0, 0) * *s_a1s;
  }
};

struct MaxSqKernel {
  static constexpr unsigned adjoint_reads = 0b1;
  void operator()(Acc<const double> u, double* m) const {
    const double q = u(0, 0) * u(0, 0);
    if (q > *m) *m = q;
  }
  void adjoint(Acc<const double> u, Acc<double> u_a1s, const double* m, const double* m_a1s) const {
    if (u(0, 0) * u(0, 0) == *m) u_a1s(0, 0) += 2.0 * u(0, 0) * *m_a1s;
  }
};

class Problem {
 public:
  Problem(Executor& ex, int n, int tiles = 0, bool reductions = false, double c0 = 0.1)
      : n(n), h(1.0 / (n + 1)), c0(c0), reductions(reductions), block(ex, "nonlinear", {n, n}, tiles),
        five(2, {0, 0, -1, 0, 1, 0, 0, -1, 0, 1}, "five_point"), zero(mesh::Stencil::zero(2)),
        u(block, "u", mesh::Halo{1}), un(block, "un", mesh::Halo{1}),
        ref(block, "ref", mesh::Halo{1}, {.active = false}), err(block, mesh::ReduceOp::SUM, "E"),
        sum(block, mesh::ReduceOp::SUM, "S"), max(block, mesh::ReduceOp::MAX, "M") {}

  void setup() {
    using namespace mesh;
    par_loop_passive("nl_init", block, Range{-1, n + 1, -1, n + 1}, InitKernel{h}, arg_dat(u, zero, WRITE),
                     arg_dat(un, zero, WRITE), arg_dat(ref, zero, WRITE), arg_idx());
    max.reset();
  }
  void prefix() {
    using namespace mesh;
    par_loop("nl_warp", block, block.interior(), WarpKernel{}, arg_dat(u, zero, RW));
  }
  void step() {
    using namespace mesh;
    double c = c0;
    if (reductions) {
      sum.reset();
      par_loop("nl_sum", block, block.interior(), SumSqKernel{h * h}, arg_dat(u, zero, READ), arg_reduce(sum));
      c = c0 / (1.0 + sum.value());
      par_loop("nl_max", block, block.interior(), MaxSqKernel{}, arg_dat(u, zero, READ), arg_reduce(max));
    }
    par_loop("nl_diffuse", block, block.interior(), DiffusionKernel{c}, arg_dat(u, five, READ),
             arg_dat(un, zero, WRITE));
    par_loop("nl_copy", block, block.interior(), poisson::CopyKernel{}, arg_dat(un, zero, READ),
             arg_dat(u, zero, WRITE));
  }
  void submit_error() {
    using namespace mesh;
    err.reset();
    par_loop("nl_error", block, block.interior(), poisson::ErrorKernel{}, arg_dat(u, zero, READ),
             arg_dat(ref, zero, READ), arg_reduce(err));
  }

  int n;
  double h, c0;
  bool reductions;
  mesh::Block block;
  mesh::Stencil five, zero;
  mesh::Dat<double> u, un, ref;
  mesh::Reduction<double> err, sum, max;
};

}  // namespace stardiff::nonlinear
