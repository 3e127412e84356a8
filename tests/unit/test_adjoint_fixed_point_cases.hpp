// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/unit/test_adjoint_fixed_point_cases.hpp — the fixed-point problems the reverse
// accumulation tests share (sequential and StarPU runs).
//
// Nonlinear: interior nx x ny, halo 1, input q (active) set from a formula plus h v.
// Prefix: u = q / 2 on the whole range (the initial guess and the boundary), f = q u + 1 on
// the interior (its adjoint reads q and u, which the fixed point then overwrites). Iteration
// (a contraction, factor <= 0.8): u2 = (u_W + u_E + u_S + u_N) / 8 + 0.3 sin(u) + 0.1 f
// (adjoint reads u), then u = u2 on the interior (scratch: four steps u -> u2 -> w -> u2 -> u).
// Objective J = sum (u² + f u) over the
// interior. rev_acc(): K - 1 iterations untaped in a FixedPointAdjoint section, the K-th
// recorded; full(): every iteration taped. Both return dJ/dq (halo included), J, bytes.
#pragma once
#include <cmath>
#include <functional>
#include <memory>
#include <vector>

#include "poisson_problem.hpp"

namespace fp_cases {

using namespace stardiff;
using mesh::Acc;

struct HalfKernel {
  static constexpr unsigned adjoint_reads = 0;
  void operator()(Acc<const double> q, Acc<double> u) const { u(0, 0) = 0.5 * q(0, 0); }
  void adjoint(Acc<const double>, Acc<double> q_a1s, Acc<const double>, Acc<double> u_a1s) const {
    q_a1s(0, 0) += 0.5 * u_a1s(0, 0);
  }
};

struct ProductKernel {
  static constexpr unsigned adjoint_reads = 0b011;
  void operator()(Acc<const double> q, Acc<const double> u, Acc<double> f) const { f(0, 0) = q(0, 0) * u(0, 0) + 1.0; }
  void adjoint(Acc<const double> q, Acc<double> q_a1s, Acc<const double> u, Acc<double> u_a1s, Acc<const double>,
               Acc<double> f_a1s) const {
    q_a1s(0, 0) += u(0, 0) * f_a1s(0, 0);
    u_a1s(0, 0) += q(0, 0) * f_a1s(0, 0);
  }
};

struct StepKernel {
  static constexpr unsigned adjoint_reads = 0b001;  // u
  void operator()(Acc<const double> u, Acc<const double> f, Acc<double> u2) const {
    u2(0, 0) = 0.125 * (u(-1, 0) + u(1, 0) + u(0, -1) + u(0, 1)) + 0.3 * std::sin(u(0, 0)) + 0.1 * f(0, 0);
  }
  void adjoint(Acc<const double> u, Acc<double> u_a1s, Acc<const double>, Acc<double> f_a1s, Acc<const double>,
               Acc<double> u2_a1s) const {
    const double g = u2_a1s(0, 0);
    u_a1s(-1, 0) += 0.125 * g;
    u_a1s(1, 0) += 0.125 * g;
    u_a1s(0, -1) += 0.125 * g;
    u_a1s(0, 1) += 0.125 * g;
    u_a1s(0, 0) += 0.3 * std::cos(u(0, 0)) * g;
    f_a1s(0, 0) += 0.1 * g;
  }
};

struct ObjectiveKernel {
  static constexpr unsigned adjoint_reads = 0b011;
  void operator()(Acc<const double> u, Acc<const double> f, double* J) const {
    *J += u(0, 0) * u(0, 0) + f(0, 0) * u(0, 0);
  }
  void adjoint(Acc<const double> u, Acc<double> u_a1s, Acc<const double> f, Acc<double> f_a1s, const double*,
               const double* J_a1s) const {
    u_a1s(0, 0) += (2.0 * u(0, 0) + f(0, 0)) * *J_a1s;
    f_a1s(0, 0) += u(0, 0) * *J_a1s;
  }
};

struct Nonlinear {
  Nonlinear(Executor& ex, int nx, int ny, int tiles)
      : nx(nx), ny(ny), block(ex, "fp_nonlinear", {nx, ny}, tiles),
        five(2, {0, 0, -1, 0, 1, 0, 0, -1, 0, 1}, "five_point"), zero(mesh::Stencil::zero(2)),
        q(block, "q", mesh::Halo{1}), u(block, "u", mesh::Halo{1}), u2(block, "u2", mesh::Halo{1}),
        f(block, "f", mesh::Halo{1}), w(block, "w", mesh::Halo{1}), J(block, mesh::ReduceOp::SUM, "J") {}
  // q = 0.4 + 0.3 sin(i / 3) cos(j / 5) + h v(i, j) (halo included).
  void set_q(double h = 0, const std::function<double(int, int)>& v = {}) {
    q.set([&](int i, int j, int) { return 0.4 + 0.3 * std::sin(i / 3.0) * std::cos(j / 5.0) + (v ? h * v(i, j) : 0.0); });
    u2.set([](int, int, int) { return 0.0; });
    w.set([](int, int, int) { return 0.0; });
  }
  void prefix() {
    using namespace mesh;
    par_loop("half", block, Range{-1, nx + 1, -1, ny + 1}, HalfKernel{}, arg_dat(q, zero, READ), arg_dat(u, zero, WRITE));
    par_loop("product", block, block.interior(), ProductKernel{}, arg_dat(q, zero, READ), arg_dat(u, zero, READ),
             arg_dat(f, zero, WRITE));
  }
  void iterate(int n) {
    using namespace mesh;
    for (int k = 0; k < n; ++k) {
      par_loop("step", block, block.interior(), StepKernel{}, arg_dat(u, five, READ), arg_dat(f, zero, READ),
               arg_dat(u2, zero, WRITE));
      if (scratch) {
        par_loop("step_b", block, block.interior(), StepKernel{}, arg_dat(u2, five, READ), arg_dat(f, zero, READ),
                 arg_dat(w, zero, WRITE));
        par_loop("step_c", block, block.interior(), StepKernel{}, arg_dat(w, five, READ), arg_dat(f, zero, READ),
                 arg_dat(u2, zero, WRITE));
        par_loop("step_d", block, block.interior(), StepKernel{}, arg_dat(u2, five, READ), arg_dat(f, zero, READ),
                 arg_dat(u, zero, WRITE));
        continue;
      }
      par_loop("copy", block, block.interior(), poisson::CopyKernel{}, arg_dat(u2, zero, READ),
               arg_dat(u, zero, WRITE));
    }
  }
  void objective() {
    using namespace mesh;
    J.reset();
    par_loop("objective", block, block.interior(), ObjectiveKernel{}, arg_dat(u, zero, READ), arg_dat(f, zero, READ),
             arg_reduce(J));
  }
  double primal(int iters, double h = 0, const std::function<double(int, int)>& v = {}) {
    set_q(h, v);
    prefix();
    iterate(iters);
    objective();
    block.executor().wait_all();
    return J.value();
  }
  bool scratch = false;  // an iteration is four steps u -> u2 -> w -> u2 -> u (u2 holds two values)
  int nx, ny;
  mesh::Block block;
  mesh::Stencil five, zero;
  mesh::Dat<double> q, u, u2, f, w;
  mesh::Reduction<double> J;
};

struct Result {
  double J = 0;
  std::vector<double> dq;
  std::size_t bytes = 0;
  FixedPointReport report;
};

// The problem taped whole (rev null) or with its iterations as a FixedPointAdjoint section
// (rev: its options; the last iteration recorded on the nested tape); seeds dJ = 1, reverses.
// scratch: the last step's adjoint reads u2's second value, but a pass leaves u2 restored to
// its first: every pass after the first needs the end-of-iteration copy of u2.
inline Result run(Executor& ex, int nx, int ny, int tiles, int iters, const FixedPointOptions* rev,
                  bool scratch) {
  Nonlinear p(ex, nx, ny, tiles);
  p.scratch = scratch;
  p.set_q();
  Tape tape(rev ? "nonlinear" : "nonlinear_full");
  tape.start();
  p.prefix();
  std::unique_ptr<FixedPointAdjoint> fp;
  if (rev) {
    fp = std::make_unique<FixedPointAdjoint>(tape, "step", *rev);
    p.iterate(iters - 1);
    fp->record([&] { p.iterate(1); });
  } else {
    p.iterate(iters);
  }
  p.objective();
  tape.stop();
  tape.seed(p.J, 1.0);
  tape.reverse();
  ex.wait_all();
  Result r;
  r.J = p.J.value();
  r.dq = p.q.adjoint().data;
  r.bytes = tape.bytes() + (fp ? fp->bytes() : 0);
  if (fp) r.report = fp->report();
  return r;
}

inline Result rev_acc(Executor& ex, int nx, int ny, int tiles, int iters, FixedPointOptions opts,
                      bool scratch = false) {
  return run(ex, nx, ny, tiles, iters, &opts, scratch);
}

inline Result full(Executor& ex, int nx, int ny, int tiles, int iters, bool scratch = false) {
  return run(ex, nx, ny, tiles, iters, nullptr, scratch);
}

// max |a - b| / max |b|.
inline double rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0, m = 0;
  for (std::size_t k = 0; k < b.size() && k < a.size(); ++k) {
    d = std::max(d, std::fabs(a[k] - b[k]));
    m = std::max(m, std::fabs(b[k]));
  }
  return a.size() != b.size() ? HUGE_VAL : m > 0 ? d / m : d;
}

}  // namespace fp_cases
