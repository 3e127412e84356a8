// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/unit/test_adjoint_checkpointing_external_cases.hpp — time steps holding external
// functions, and MIN/MAX reductions whose extremum moves, recorded under a checkpointing
// strategy (unit and StarPU checkpointing tests share them).
//
//  * tridiag_steps: state u (n x m, halo 1, ring fixed). Step k: d = u + 0.05 u (Δu) on the
//    interior (its adjoint reads u), then u = A⁻¹ d by tridiag_solve along axis k % 2 (axis 1
//    is the tiled one: one task over all tiles); coefficients a, b, c are active. E = Σ (u-ref)².
//  * sparse_steps: state T (n x n). Step k: r = T + 0.1 T², then T = M⁻¹ r by SparseSolve
//    (5-point M, values a 3-component active dat). E = Σ (T-ref)².
//  * moving_peak: state u (n x n). Step k adds a bump of height 0.5 (k+1) centred at a point
//    that moves with k, then one loop folds MAX of u into hi and MIN of -u into lo (neither is
//    ever reset, so both extrema and their arg move from step to step). Seeds hi 1, lo 0.5.
#pragma once
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "five_point_pattern.hpp"
#include "poisson_problem.hpp"
#include "stardiff/adjoint.hpp"
#include "stardiff/adjoint/sparse_solve.hpp"
#include "stardiff/adjoint/tridiag.hpp"
#include "stardiff/mesh.hpp"

namespace stardiff::ckpt_ext_cases {

using mesh::Acc;
using mesh::Dat;

struct Result {
  double E = 0;
  std::vector<double> du, da, db, dc;  // state and parameter adjoints (halo included)
  std::int64_t recomputed = 0;
  std::size_t peak_bytes = 0, peak_snapshot_bytes = 0, bytes = 0;
  int factorizations = 0;  // sparse_steps: numeric factorizations in the whole run
  // moving_peak: values and arg-extrema after reverse(), and before it (the forward's).
  double hi = 0, lo = 0;
  std::array<int, 3> arg_hi{}, arg_lo{}, fwd_arg_hi{}, fwd_arg_lo{};
};

inline void report(Tape& t, Result& r) {
  r.recomputed = t.recomputed_steps();
  r.peak_bytes = t.peak_bytes();
  r.peak_snapshot_bytes = t.peak_snapshot_bytes();
  r.bytes = t.bytes();
}

inline void expect_same(const Result& a, const Result& b, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(a.E, b.E);
  EXPECT_EQ(a.du, b.du);
  EXPECT_EQ(a.da, b.da);
  EXPECT_EQ(a.db, b.db);
  EXPECT_EQ(a.dc, b.dc);
  EXPECT_EQ(a.hi, b.hi);
  EXPECT_EQ(a.lo, b.lo);
  EXPECT_EQ(a.arg_hi, b.arg_hi);
  EXPECT_EQ(a.arg_lo, b.arg_lo);
}

struct InitKernel {  // u on the interior and the ring, ref
  double h;
  void operator()(Acc<double> u, Acc<double> ref, const int* idx) const {
    const double x = (idx[0] + 1) * h, y = (idx[1] + 1) * h;
    u(0, 0) = 0.6 + 0.3 * std::sin(3.0 * x) * std::cos(2.0 * y) + 0.1 * y;
    ref(0, 0) = 0.5 + 0.1 * x;
  }
};

struct RhsKernel {  // d = u + 0.05 u (Δu)
  static constexpr unsigned adjoint_reads = 0b01;
  void operator()(Acc<const double> u, Acc<double> d) const {
    const double v = u(0, 0), l = u(-1, 0) + u(1, 0) + u(0, -1) + u(0, 1) - 4.0 * v;
    d(0, 0) = v + 0.05 * v * l;
  }
  void adjoint(Acc<const double> u, Acc<double> u_a1s, Acc<const double>, Acc<double> d_a1s) const {
    const double g = d_a1s(0, 0), v = u(0, 0), l = u(-1, 0) + u(1, 0) + u(0, -1) + u(0, 1) - 4.0 * v;
    u_a1s(0, 0) += g * (1.0 + 0.05 * l - 0.2 * v);
    const double n = 0.05 * g * v;
    u_a1s(-1, 0) += n;
    u_a1s(1, 0) += n;
    u_a1s(0, -1) += n;
    u_a1s(0, 1) += n;
  }
};

struct SquareKernel {  // r = T + 0.1 T²
  static constexpr unsigned adjoint_reads = 0b01;
  void operator()(Acc<const double> t, Acc<double> r) const { r(0, 0) = t(0, 0) + 0.1 * t(0, 0) * t(0, 0); }
  void adjoint(Acc<const double> t, Acc<double> t_a1s, Acc<const double>, Acc<double> r_a1s) const {
    t_a1s(0, 0) += r_a1s(0, 0) * (1.0 + 0.2 * t(0, 0));
  }
};

inline Result tridiag_steps(Executor& ex, const Checkpointing& c, int steps, bool recompute, int nx = 16, int ny = 12,
                            int tiles = 3, SavePolicy pol = SavePolicy::Needed) {
  using namespace mesh;
  Block block(ex, "tri_steps", {nx, ny}, tiles);
  const Stencil five(2, {0, 0, -1, 0, 1, 0, 0, -1, 0, 1}, "five_point"), zero = Stencil::zero(2);
  Dat<double> u(block, "u", Halo{1}), d(block, "d", Halo{1}), a(block, "a", Halo{1}), b(block, "b", Halo{1}),
      cc(block, "c", Halo{1}), ref(block, "ref", Halo{1}, {.active = false});
  par_loop_passive("tri_init", block, Range{-1, nx + 1, -1, ny + 1}, InitKernel{1.0 / (nx + 1)},
                   arg_dat(u, zero, WRITE), arg_dat(ref, zero, WRITE), arg_idx());
  a.set([](int i, int j, int) { return -0.3 + 0.05 * std::sin(i + 2.0 * j); });
  b.set([](int i, int j, int) { return 2.0 + 0.2 * std::cos(0.5 * i - j); });
  cc.set([](int i, int j, int) { return -0.4 + 0.05 * std::cos(i * j + 0.3); });
  Reduction<double> err(block, ReduceOp::SUM, "E");
  Tape tape("tri_steps", pol);
  tape.set_checkpointing(c);
  tape.start();
  tape.step({u});
  for (int k = 0; k < steps; ++k) {
    par_loop("tri_rhs", block, block.interior(), RhsKernel{}, arg_dat(u, five, READ), arg_dat(d, zero, WRITE));
    tridiag_solve("tri_solve", k % 2, a, b, cc, d, u, recompute);
    tape.step();
  }
  err.reset();
  par_loop("tri_error", block, block.interior(), poisson::ErrorKernel{}, arg_dat(u, zero, READ),
           arg_dat(ref, zero, READ), arg_reduce(err));
  tape.stop();
  tape.seed(err, 1.0);
  tape.reverse();
  ex.wait_all();
  Result r;
  r.E = err.value();
  r.du = u.adjoint().data;
  r.da = a.adjoint().data;
  r.db = b.adjoint().data;
  r.dc = cc.adjoint().data;
  report(tape, r);
  return r;
}

inline Result sparse_steps(Executor& ex, const Checkpointing& c, int steps, bool recompute, int n = 10, int tiles = 3,
                           SavePolicy pol = SavePolicy::Needed) {
  using namespace mesh;
  Block block(ex, "sparse_steps", {n, n}, tiles);
  const Stencil zero = Stencil::zero(2);
  DatOptions vo;
  vo.dim = 3;
  Dat<double> vals(block, "M", Halo{}, vo), t(block, "T"), rhs(block, "r"),
      ref(block, "ref", Halo{}, {.active = false});
  vals.set_components([&](int i, int j, int, int comp) {
    return comp == 0 ? 4.5 + 0.1 * std::sin(i + j) : comp == 1 ? (i > 0 ? -1.0 - 0.05 * j : 0.0)
                                                               : (j > 0 ? -1.0 + 0.03 * i : 0.0);
  });
  t.set([](int i, int j, int) { return std::sin(0.4 * i + 0.9 * j) + 0.5; });
  ref.set([](int i, int, int) { return 0.1 + 0.02 * i; });
  std::vector<SparseSolve::Entry> where;
  sparse::CscMatrix32 pattern = apps::five_point_lower(n, where);
  SparseSolve solver("ldlt_steps", std::move(pattern), where);
  Reduction<double> err(block, ReduceOp::SUM, "E");
  Tape tape("sparse_steps", pol);
  tape.set_checkpointing(c);
  tape.start();
  tape.step({t});
  for (int k = 0; k < steps; ++k) {
    par_loop("sq_rhs", block, block.interior(), SquareKernel{}, arg_dat(t, zero, READ), arg_dat(rhs, zero, WRITE));
    solver.solve(vals, rhs, t, recompute);
    tape.step();
  }
  err.reset();
  par_loop("sq_error", block, block.interior(), poisson::ErrorKernel{}, arg_dat(t, zero, READ),
           arg_dat(ref, zero, READ), arg_reduce(err));
  tape.stop();
  tape.seed(err, 1.0);
  tape.reverse();
  ex.wait_all();
  Result r;
  r.E = err.value();
  r.du = t.adjoint().data;
  r.da = vals.adjoint().data;
  r.factorizations = solver.factorizations();
  report(tape, r);
  return r;
}

struct BumpKernel {  // u += height exp(-|x - centre|² / 2)
  double height;
  int ci, cj;
  static constexpr unsigned adjoint_reads = 0;
  void operator()(Acc<double> u, const int* idx) const {
    const double di = idx[0] - ci, dj = idx[1] - cj;
    u(0, 0) += height * std::exp(-0.5 * (di * di + dj * dj));
  }
  void adjoint(Acc<const double>, Acc<double>, const int*) const {}  // u_a1s unchanged
};

struct PeakKernel {  // hi = max u, lo = min (-u)
  static constexpr unsigned adjoint_reads = 0;
  void operator()(Acc<const double> u, double* hi, double* lo) const {
    if (u(0, 0) > *hi) *hi = u(0, 0);
    if (-u(0, 0) < *lo) *lo = -u(0, 0);
  }
  void adjoint(Acc<const double>, Acc<double> u_a1s, const double*, const double* hi_a1s, const double*,
               const double* lo_a1s) const {
    u_a1s(0, 0) += *hi_a1s - *lo_a1s;
  }
};

inline Result moving_peak(Executor& ex, const Checkpointing& c, int steps, int n = 12, int tiles = 3) {
  using namespace mesh;
  Block block(ex, "peak", {n, n}, tiles);
  const Stencil zero = Stencil::zero(2);
  Dat<double> u(block, "u");
  u.set([](int i, int j, int) { return 0.1 * std::sin(i + 2.0 * j); });
  Reduction<double> hi(block, ReduceOp::MAX, "hi"), lo(block, ReduceOp::MIN, "lo");
  hi.reset();
  lo.reset();
  Tape tape("peak");
  tape.set_checkpointing(c);
  tape.start();
  tape.step({u});
  for (int k = 0; k < steps; ++k) {
    par_loop("peak_bump", block, block.interior(), BumpKernel{0.5 * (k + 1), (2 + 3 * k) % n, (5 + 7 * k) % n},
             arg_dat(u, zero, RW), arg_idx());
    par_loop("peak_fold", block, block.interior(), PeakKernel{}, arg_dat(u, zero, READ), arg_reduce(hi),
             arg_reduce(lo));
    tape.step();
  }
  tape.stop();
  Result r;
  r.fwd_arg_hi = hi.arg();
  r.fwd_arg_lo = lo.arg();
  tape.seed(hi, 1.0);
  tape.seed(lo, 0.5);
  tape.reverse();
  ex.wait_all();
  r.hi = hi.value();
  r.lo = lo.value();
  r.arg_hi = hi.arg();
  r.arg_lo = lo.arg();
  r.du = u.adjoint().data;
  report(tape, r);
  return r;
}

}  // namespace stardiff::ckpt_ext_cases
