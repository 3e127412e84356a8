// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/unit/test_adjoint_cases.hpp — 1-D and 3-D recorded computations shared by the
// unit tests (sequential executor, hand-derived gradients) and the StarPU tests
// (bitwise equality across schedulers). Each case exercises INC, reductions and an
// active scalar; the 1-D case forces a checkpoint (a RW loop overwrites x, which an
// earlier nonlinear adjoint reads).
#pragma once
#include <cmath>
#include <vector>

#include "stardiff/adjoint.hpp"
#include "stardiff/mesh.hpp"
#include "stardiff/runtime/executor.hpp"
#include "stardiff/runtime/runtime.hpp"

namespace cases {
using namespace stardiff;
using namespace stardiff::mesh;

// ---- 1-D: y += a x(-1) x(1) (INC, scalar a); x = x^2 (RW); J = sum y^2 + max x ----
struct IncProduct {
  static constexpr unsigned adjoint_reads = 0b101;  // x and a
  void operator()(Acc<const double> x, Acc<double> y, const double* a) const { y(0) += *a * x(-1) * x(1); }
  void adjoint(Acc<const double> x, Acc<double> x_a1s, Acc<const double>, Acc<double> y_a1s, const double* a,
               double* a_a1s) const {
    const double yb = y_a1s(0);
    x_a1s(-1) += *a * x(1) * yb;
    x_a1s(1) += *a * x(-1) * yb;
    *a_a1s += x(-1) * x(1) * yb;
  }
};
struct Square {
  static constexpr unsigned adjoint_reads = 0b1;
  void operator()(Acc<double> x) const { x(0) = x(0) * x(0); }
  void adjoint(Acc<const double> x, Acc<double> x_a1s) const { x_a1s(0) = 2.0 * x(0) * x_a1s(0); }
};
struct SumSq {
  static constexpr unsigned adjoint_reads = 0b1;
  void operator()(Acc<const double> y, double* s) const { *s += y(0) * y(0); }
  void adjoint(Acc<const double> y, Acc<double> y_a1s, const double*, const double* s_a1s) const {
    y_a1s(0) += 2.0 * y(0) * *s_a1s;
  }
};
struct MaxOf {
  static constexpr unsigned adjoint_reads = 0b1;
  void operator()(Acc<const double> x, double* m) const { *m = x(0) > *m ? x(0) : *m; }
  void adjoint(Acc<const double> x, Acc<double> x_a1s, const double* m, const double* m_a1s) const {
    if (x(0) == *m) x_a1s(0) += *m_a1s;
  }
};

inline double x0_1d(int i) { return 1.0 + 0.5 * std::sin(0.3 * i) + 0.01 * i; }
inline double y0_1d(int i) { return std::cos(0.2 * i); }

struct Result1D {
  double S = 0, M = 0, da = 0;
  DatView<double> dx, dy;
  std::size_t bytes = 0;
};

inline Result1D run_1d(Executor& ex, int n, int tiles, SavePolicy pol = SavePolicy::Needed) {
  Block b(ex, "line", {n}, tiles);
  Dat<double> x(b, "x", Halo{1}), y(b, "y", Halo{0});
  Scalar<double> a(b, "a", 0.7);
  Reduction<double> S(b, ReduceOp::SUM, "S"), M(b, ReduceOp::MAX, "M");
  x.set([](int i, int, int) { return x0_1d(i); });
  y.set([](int i, int, int) { return y0_1d(i); });
  Stencil s3(1, {-1, 0, 1}, "three"), z = Stencil::zero(1);
  Tape tape("1d", pol);
  tape.start();
  par_loop("inc_product", b, Range{0, n}, IncProduct{}, arg_dat(x, s3, READ), arg_dat(y, z, INC), arg_scalar(a));
  par_loop("square", b, Range{-1, n + 1}, Square{}, arg_dat(x, z, RW));
  par_loop("sumsq", b, Range{0, n}, SumSq{}, arg_dat(y, z, READ), arg_reduce(S));
  par_loop("max", b, Range{-1, n + 1}, MaxOf{}, arg_dat(x, z, READ), arg_reduce(M));
  tape.stop();
  tape.seed(S, 1.0);
  tape.seed(M, 1.0);
  tape.reverse();
  ex.wait_all();
  Result1D r;
  r.S = S.value();
  r.M = M.value();
  r.da = a.adjoint();
  r.dx = x.adjoint();
  r.dy = y.adjoint();
  r.bytes = tape.bytes();
  return r;
}

// ---- 3-D: c (2 components) += (a b(0,0,-1), sin(a(1,0,0)) + b(0,0,1)) (INC);
//      R = sum (g + s) c0 + c1^2 with g = 1 + i + 2j + 3k (idx) and active scalar s ----
struct Mix {
  static constexpr unsigned adjoint_reads = 0b011;
  void operator()(Acc<const double> a, Acc<const double> b, Acc<double> c) const {
    c.c(0) += a(0, 0, 0) * b(0, 0, -1);
    c.c(1) += std::sin(a(1, 0, 0)) + b(0, 0, 1);
  }
  void adjoint(Acc<const double> a, Acc<double> a_a1s, Acc<const double> b, Acc<double> b_a1s, Acc<const double>,
               Acc<double> c_a1s) const {
    a_a1s(0, 0, 0) += b(0, 0, -1) * c_a1s.c(0);
    b_a1s(0, 0, -1) += a(0, 0, 0) * c_a1s.c(0);
    a_a1s(1, 0, 0) += std::cos(a(1, 0, 0)) * c_a1s.c(1);
    b_a1s(0, 0, 1) += c_a1s.c(1);
  }
};
struct Objective {
  static constexpr unsigned adjoint_reads = 0b1011;
  void operator()(Acc<const double> c, const int* idx, const double* s, double* r) const {
    const double g = 1.0 + idx[0] + 2.0 * idx[1] + 3.0 * idx[2];
    *r += (g + *s) * c.c(0) + c.c(1) * c.c(1);
  }
  void adjoint(Acc<const double> c, Acc<double> c_a1s, const int* idx, const double* s, double* s_a1s,
               const double*, const double* r_a1s) const {
    const double g = 1.0 + idx[0] + 2.0 * idx[1] + 3.0 * idx[2];
    c_a1s.c(0) += (g + *s) * *r_a1s;
    c_a1s.c(1) += 2.0 * c.c(1) * *r_a1s;
    *s_a1s += c.c(0) * *r_a1s;
  }
};

inline double a0_3d(int i, int j, int k) { return 0.3 + 0.1 * std::sin(i + 2.0 * j + 3.0 * k); }
inline double b0_3d(int i, int j, int k) { return std::cos(0.5 * i - j + 0.25 * k); }
inline double c0_3d(int i, int j, int k, int comp) { return 0.1 * comp + 0.01 * (i - j + k); }

struct Result3D {
  double R = 0, ds = 0;
  DatView<double> da, db, dc;
  std::size_t bytes = 0;
};

// pa, pb: optional perturbations (h * direction) added to a and b before the loops.
inline Result3D run_3d(Executor& ex, int nx, int ny, int nz, int tiles, bool adjoint = true,
                       const std::function<double(int, int, int)>& pa = nullptr,
                       const std::function<double(int, int, int)>& pb = nullptr,
                       SavePolicy pol = SavePolicy::Needed) {
  Block blk(ex, "box", {nx, ny, nz}, tiles);
  Dat<double> a(blk, "a", Halo{1}), b(blk, "b", Halo{1}), c(blk, "c", Halo{0}, {.dim = 2});
  Scalar<double> s(blk, "s", 0.25);
  Reduction<double> R(blk, ReduceOp::SUM, "R");
  a.set([&](int i, int j, int k) { return a0_3d(i, j, k) + (pa ? pa(i, j, k) : 0.0); });
  b.set([&](int i, int j, int k) { return b0_3d(i, j, k) + (pb ? pb(i, j, k) : 0.0); });
  c.set_components([](int i, int j, int k, int comp) { return c0_3d(i, j, k, comp); });
  Stencil sa(3, {0, 0, 0, 1, 0, 0}, "a_pts"), sb(3, {0, 0, -1, 0, 0, 1}, "b_pts"), z = Stencil::zero(3);
  Tape tape("3d", pol);
  if (adjoint) tape.start();
  par_loop("mix", blk, blk.interior(), Mix{}, arg_dat(a, sa, READ), arg_dat(b, sb, READ), arg_dat(c, z, INC));
  par_loop("objective", blk, blk.interior(), Objective{}, arg_dat(c, z, READ), arg_idx(), arg_scalar(s),
           arg_reduce(R));
  Result3D r;
  if (adjoint) {
    tape.stop();
    tape.seed(R, 1.0);
    tape.reverse();
  }
  ex.wait_all();
  r.R = R.value();
  if (adjoint) {
    r.ds = s.adjoint();
    r.da = a.adjoint();
    r.db = b.adjoint();
    r.dc = c.adjoint();
    r.bytes = tape.bytes();
  }
  return r;
}

}  // namespace cases
