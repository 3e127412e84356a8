// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/unit/test_mesh_lowdim_cases.hpp — recorded computations on low-dimensional dats
// (celldx(x), celldy(y) on a 2-D block, CloverLeaf style) and MIN/MAX reductions with
// ties, shared by the unit tests (sequential executor) and the StarPU tests (bitwise
// equality across executors and schedulers).
#pragma once
#include <array>
#include <cmath>
#include <functional>
#include <vector>

#include "stardiff/adjoint.hpp"
#include "stardiff/mesh.hpp"
#include "stardiff/runtime/executor.hpp"

namespace lowdim {
using namespace stardiff;
using namespace stardiff::mesh;

// w = u (cx(0,0) + cx(1,0)) cy(0,0) + u(0,1) cx(0,-1) cy(0,1): cx, cy read at offsets
// along both axes (along a missing axis every offset reads the same element).
struct Flux {
  static constexpr unsigned adjoint_reads = 0b111;
  void operator()(Acc<const double> u, Acc<const double> cx, Acc<const double> cy, Acc<double> w) const {
    w(0, 0) = u(0, 0) * (cx(0, 0) + cx(1, 0)) * cy(0, 0) + u(0, 1) * cx(0, -1) * cy(0, 1);
  }
  void adjoint(Acc<const double> u, Acc<double> u_a1s, Acc<const double> cx, Acc<double> cx_a1s,
               Acc<const double> cy, Acc<double> cy_a1s, Acc<const double>, Acc<double> w_a1s) const {
    const double wb = w_a1s(0, 0);
    u_a1s(0, 0) += (cx(0, 0) + cx(1, 0)) * cy(0, 0) * wb;
    cx_a1s(0, 0) += u(0, 0) * cy(0, 0) * wb;
    cx_a1s(1, 0) += u(0, 0) * cy(0, 0) * wb;
    cy_a1s(0, 0) += u(0, 0) * (cx(0, 0) + cx(1, 0)) * wb;
    u_a1s(0, 1) += cx(0, -1) * cy(0, 1) * wb;
    cx_a1s(0, -1) += u(0, 1) * cy(0, 1) * wb;
    cy_a1s(0, 1) += u(0, 1) * cx(0, -1) * wb;
  }
};
// cx = cx^2 + 0.5 (RW; on a range of height 1: the only writes a dat lacking y allows).
struct Reshape {
  static constexpr unsigned adjoint_reads = 0b1;
  void operator()(Acc<double> cx) const { cx(0, 0) = cx(0, 0) * cx(0, 0) + 0.5; }
  void adjoint(Acc<const double> cx, Acc<double> cx_a1s) const { cx_a1s(0, 0) = 2.0 * cx(0, 0) * cx_a1s(0, 0); }
};
struct SumSq {
  static constexpr unsigned adjoint_reads = 0b1;
  void operator()(Acc<const double> w, double* s) const { *s += w(0, 0) * w(0, 0); }
  void adjoint(Acc<const double> w, Acc<double> w_a1s, const double*, const double* s_a1s) const {
    w_a1s(0, 0) += 2.0 * w(0, 0) * *s_a1s;
  }
};

inline double u0(int i, int j) { return 1.0 + 0.3 * std::sin(0.7 * i + 1.3 * j) + 0.01 * i * j; }
inline double dx0(int i) { return 0.1 + 0.02 * std::cos(0.9 * i); }
inline double dy0(int j) { return 0.2 + 0.03 * std::sin(0.4 * j); }

struct Result {
  double J = 0;
  DatView<double> w, du, dcx, dcy;
};

// full: celldx and celldy as full 2-D dats (the reference). reshape: record Reshape on cx first.
// pdx, pdy, pu: optional perturbations added to the initial values.
inline Result run(Executor& ex, int nx, int ny, int tiles, bool full, bool adjoint = true, bool reshape = true,
                  const std::function<double(int)>& pdx = nullptr, const std::function<double(int)>& pdy = nullptr,
                  const std::function<double(int, int)>& pu = nullptr) {
  Block b(ex, "grid", {nx, ny}, tiles);
  Dat<double> u(b, "u", Halo{1}), w(b, "w", Halo{0});
  Dat<double> cx(b, "celldx", Halo({1, 1, 0}, {1, 0, 0}), full ? DatOptions{} : DatOptions{.axes = {0}});
  Dat<double> cy(b, "celldy", Halo({0, 0, 0}, {0, 1, 0}), full ? DatOptions{} : DatOptions{.axes = {1}});
  Reduction<double> J(b, ReduceOp::SUM, "J");
  u.set([&](int i, int j, int) { return u0(i, j) + (pu ? pu(i, j) : 0.0); });
  cx.set([&](int i, int, int) { return dx0(i) + (pdx ? pdx(i) : 0.0); });
  cy.set([&](int, int j, int) { return dy0(j) + (pdy ? pdy(j) : 0.0); });
  Stencil su(2, {0, 0, 0, 1}, "u_pts"), sx(2, {0, 0, 1, 0, 0, -1}, "cx_pts"), sy(2, {0, 0, 0, 1}, "cy_pts"),
      z = Stencil::zero(2);
  Tape tape("lowdim");
  if (adjoint) tape.start();
  if (reshape) {
    // Full reference: the same update at every row; low-dimensional: on its one row.
    const Range r = full ? Range{-1, nx + 1, -1, ny} : Range{-1, nx + 1, 0, 1};
    par_loop("reshape", b, r, Reshape{}, arg_dat(cx, z, RW));
  }
  par_loop("flux", b, b.interior(), Flux{}, arg_dat(u, su, READ), arg_dat(cx, sx, READ), arg_dat(cy, sy, READ),
           arg_dat(w, z, WRITE));
  par_loop("sumsq", b, b.interior(), SumSq{}, arg_dat(w, z, READ), arg_reduce(J));
  if (adjoint) {
    tape.stop();
    tape.seed(J, 1.0);
    tape.reverse();
  }
  ex.wait_all();
  Result r;
  r.J = J.value();
  r.w = w.values();
  if (adjoint) {
    r.du = u.adjoint();
    r.dcx = cx.adjoint();
    r.dcy = cy.adjoint();
  }
  return r;
}

// ---- MIN / MAX with ties: lo = min f, hi = max f over the block, f = u^2 ----
// Seed flows only to the arg-extremum: the adjoint adds value_a1s unconditionally
// (Uncond) or only where its point attains the result (Compare); both are correct.
struct MinSq {
  static constexpr unsigned adjoint_reads = 0b1;
  void operator()(Acc<const double> u, double* m) const {
    const double f = u(0) * u(0);
    *m = f < *m ? f : *m;
  }
  void adjoint(Acc<const double> u, Acc<double> u_a1s, const double*, const double* m_a1s) const {
    u_a1s(0) += 2.0 * u(0) * *m_a1s;
  }
};
struct MaxSqCompare {
  static constexpr unsigned adjoint_reads = 0b1;
  void operator()(Acc<const double> u, double* m) const {
    const double f = u(0) * u(0);
    *m = f > *m ? f : *m;
  }
  void adjoint(Acc<const double> u, Acc<double> u_a1s, const double* m, const double* m_a1s) const {
    if (u(0) * u(0) == *m) u_a1s(0) += 2.0 * u(0) * *m_a1s;
  }
};

// Values with ties: the minimum 0.25 (u = +-0.5) and the maximum 9 (u = +-3) each at
// several points, some in different rows / tiles, some in one row.
inline double tie_value(int n, const std::vector<int>& lo_pts, const std::vector<int>& hi_pts, int p) {
  for (int q : lo_pts)
    if (q == p) return (p % 2) ? -0.5 : 0.5;
  for (int q : hi_pts)
    if (q == p) return (p % 2) ? -3.0 : 3.0;
  return 1.7 + std::sin(0.37 * p + 0.1 * n);  // squares in (0.49, 7.29): strictly inside
}

struct MinMaxResult {
  double lo = 0, hi = 0;
  std::array<int, 3> arg_lo{}, arg_hi{};
  DatView<double> du;
};

// Block of sizes `size` (1-, 2- or 3-D); points are numbered in (k, j, i) order over the
// interior; lo_pts / hi_pts: points (numbers) given the tied minimum / maximum. split: the
// min is folded by two loops (outer rows [0, half) then [half, n)). J = lo + 2 hi.
inline MinMaxResult run_minmax(Executor& ex, std::vector<int> size, int tiles, const std::vector<int>& lo_pts,
                               const std::vector<int>& hi_pts, bool split = false,
                               const std::function<double(int)>& pu = nullptr) {
  Block b(ex, "mm", size, tiles);
  const int dims = b.dims(), nx = b.size(0), ny = dims > 1 ? b.size(1) : 1, nz = dims > 2 ? b.size(2) : 1;
  const int n = nx * ny * nz;
  auto number = [=](int i, int j, int k) { return i + nx * (j + ny * k); };
  Dat<double> u(b, "u", Halo{0});
  u.set([&](int i, int j, int k) {
    const int p = number(i, j, k);
    return tie_value(n, lo_pts, hi_pts, p) + (pu ? pu(p) : 0.0);
  });
  Reduction<double> lo(b, ReduceOp::MIN, "lo"), hi(b, ReduceOp::MAX, "hi");
  Stencil z = Stencil::zero(dims);
  Tape tape("minmax");
  tape.start();
  if (split) {
    const int o = dims - 1, half = b.size(o) / 2;
    Range r1 = b.interior(), r2 = b.interior();
    r1.hi[o] = half;
    r2.lo[o] = half;
    par_loop("min_a", b, r1, MinSq{}, arg_dat(u, z, READ), arg_reduce(lo));
    par_loop("min_b", b, r2, MinSq{}, arg_dat(u, z, READ), arg_reduce(lo));
  } else {
    par_loop("min", b, b.interior(), MinSq{}, arg_dat(u, z, READ), arg_reduce(lo));
  }
  par_loop("max", b, b.interior(), MaxSqCompare{}, arg_dat(u, z, READ), arg_reduce(hi));
  tape.stop();
  tape.seed(lo, 1.0);
  tape.seed(hi, 2.0);
  tape.reverse();
  ex.wait_all();
  MinMaxResult r;
  r.lo = lo.value();
  r.hi = hi.value();
  r.arg_lo = lo.arg();
  r.arg_hi = hi.arg();
  r.du = u.adjoint();
  return r;
}

}  // namespace lowdim
