// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/unit/test_adjoint_loops.cpp — 1-D and 3-D recorded loops (INC, SUM/MAX
// reductions, active scalars, multi-component dats, stencils across tiles) against
// hand-derived gradients, across tile counts, save policies, and a Taylor test (3-D);
// column-run saves (2-D/3-D loops writing part of each row): bytes and exact restores.
#include <gtest/gtest.h>

#include <random>

#include "unit/test_adjoint_cases.hpp"

using namespace stardiff;

TEST(AdjointLoops, OneDimensionalHandDerived) {
  const int n = 40;
  SequentialExecutor ex;
  auto r = cases::run_1d(ex, n, 3);
  const double a = 0.7;
  auto X = [](int i) { return cases::x0_1d(i); };
  std::vector<double> y1(n);
  double S = 0, da = 0;
  for (int i = 0; i < n; ++i) {
    y1[i] = cases::y0_1d(i) + a * X(i - 1) * X(i + 1);
    S += y1[i] * y1[i];
    da += 2 * y1[i] * X(i - 1) * X(i + 1);
  }
  int imax = -1;
  for (int i = -1; i <= n; ++i)
    if (i == -1 || X(i) * X(i) > X(imax) * X(imax)) imax = i;
  EXPECT_NEAR(r.S, S, 1e-13 * S);
  EXPECT_DOUBLE_EQ(r.M, X(imax) * X(imax));
  EXPECT_NEAR(r.da, da, 1e-13 * std::fabs(da));
  for (int k = -1; k <= n; ++k) {
    double g = 0;
    if (k + 1 < n && k + 1 >= 0) g += 2 * y1[k + 1] * a * X(k + 2);
    if (k - 1 >= 0 && k - 1 < n) g += 2 * y1[k - 1] * a * X(k - 2);
    if (k == imax) g += 2 * X(k);
    EXPECT_NEAR(r.dx(k), g, 1e-13 * (1 + std::fabs(g))) << "dJ/dx at " << k;
  }
  for (int i = 0; i < n; ++i) EXPECT_NEAR(r.dy(i), 2 * y1[i], 1e-13) << "dJ/dy at " << i;
  // x is overwritten (square) after a nonlinear adjoint reads it: saved, once per tile; each
  // reduction keeps 3 records (before, after, the adjoint's): S a double, M (MAX) with its arg.
  EXPECT_EQ(r.bytes, (n + 2) * sizeof(double) + 3 * sizeof(double) + 3 * sizeof(mesh::ArgRec<double>));
}

TEST(AdjointLoops, OneDimensionalTilesAndPolicies) {
  SequentialExecutor ex;
  auto r1 = cases::run_1d(ex, 40, 1), r7 = cases::run_1d(ex, 40, 7), ra = cases::run_1d(ex, 40, 7, SavePolicy::All);
  EXPECT_EQ(r7.S, r1.S);  // reductions and scalar adjoints: independent of the tiling
  EXPECT_EQ(r7.da, r1.da);
  for (std::size_t k = 0; k < r1.dx.data.size(); ++k) EXPECT_NEAR(r7.dx.data[k], r1.dx.data[k], 1e-14 * 50);
  EXPECT_EQ(ra.dx.data, r7.dx.data);
  EXPECT_GT(ra.bytes, r7.bytes);
}

TEST(AdjointLoops, ThreeDimensionalHandDerived) {
  const int nx = 6, ny = 5, nz = 9;
  SequentialExecutor ex;
  auto r = cases::run_3d(ex, nx, ny, nz, 3);
  const double s = 0.25;
  auto A = cases::a0_3d;
  auto B = cases::b0_3d;
  double R = 0, ds = 0;
  // Expected gradients on the padded index space [-1, n] per dimension.
  auto at = [&](std::vector<double>& v, int i, int j, int k) -> double& {
    return v[(i + 1) + (nx + 2) * ((j + 1) + (ny + 2) * (k + 1))];
  };
  std::vector<double> ga((nx + 2) * (ny + 2) * (nz + 2)), gb(ga.size());
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) {
        const double g = 1.0 + i + 2.0 * j + 3.0 * k;
        const double c0 = cases::c0_3d(i, j, k, 0) + A(i, j, k) * B(i, j, k - 1);
        const double c1 = cases::c0_3d(i, j, k, 1) + std::sin(A(i + 1, j, k)) + B(i, j, k + 1);
        R += (g + s) * c0 + c1 * c1;
        ds += c0;
        at(ga, i, j, k) += (g + s) * B(i, j, k - 1);
        at(gb, i, j, k - 1) += (g + s) * A(i, j, k);
        at(ga, i + 1, j, k) += 2 * c1 * std::cos(A(i + 1, j, k));
        at(gb, i, j, k + 1) += 2 * c1;
        EXPECT_NEAR(r.dc(i, j, k, 0), g + s, 1e-13 * (g + s));
        EXPECT_NEAR(r.dc(i, j, k, 1), 2 * c1, 1e-13 * (1 + std::fabs(c1)));
      }
  EXPECT_NEAR(r.R, R, 1e-13 * std::fabs(R));
  EXPECT_NEAR(r.ds, ds, 1e-13 * std::fabs(ds));
  for (int k = -1; k <= nz; ++k)
    for (int j = -1; j <= ny; ++j)
      for (int i = -1; i <= nx; ++i) {
        EXPECT_NEAR(r.da(i, j, k), at(ga, i, j, k), 1e-12 * (1 + std::fabs(at(ga, i, j, k)))) << i << "," << j << "," << k;
        EXPECT_NEAR(r.db(i, j, k), at(gb, i, j, k), 1e-12 * (1 + std::fabs(at(gb, i, j, k)))) << i << "," << j << "," << k;
      }
  EXPECT_EQ(r.bytes, 3 * sizeof(double));  // c (INC) is not read by its adjoint: R pre/post/adjoint only
}

TEST(AdjointLoops, ThreeDimensionalTilesAgreeAndTaylor) {
  const int nx = 6, ny = 5, nz = 9;
  SequentialExecutor ex;
  auto r1 = cases::run_3d(ex, nx, ny, nz, 1), r4 = cases::run_3d(ex, nx, ny, nz, 4);
  EXPECT_EQ(r4.R, r1.R);
  EXPECT_EQ(r4.ds, r1.ds);
  for (std::size_t k = 0; k < r1.da.data.size(); ++k) {
    EXPECT_NEAR(r4.da.data[k], r1.da.data[k], 1e-14 * 300);
    EXPECT_NEAR(r4.db.data[k], r1.db.data[k], 1e-14 * 300);
  }
  std::mt19937 gen(11);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<double> va(r1.da.data.size()), vb(va.size());
  for (auto& v : va) v = dist(gen);
  for (auto& v : vb) v = dist(gen);
  double dJ = 0;
  for (std::size_t k = 0; k < va.size(); ++k) dJ += r1.da.data[k] * va[k] + r1.db.data[k] * vb[k];
  auto idx = [&](int i, int j, int k) { return r1.da.index(i, j, k); };
  auto J = [&](double h) {
    SequentialExecutor e;
    return cases::run_3d(e, nx, ny, nz, 2, false, [&](int i, int j, int k) { return h * va[idx(i, j, k)]; },
                         [&](int i, int j, int k) { return h * vb[idx(i, j, k)]; })
        .R;
  };
  auto t = check_gradient(J, dJ, {1e-3, 5e-4, 2.5e-4, 1.25e-4});
  EXPECT_TRUE(t.passed) << t.report();
  EXPECT_FALSE(t.roundoff_only) << t.report();
  EXPECT_GT(t.min_rate, 1.9) << t.report();
  auto bad = check_gradient(J, dJ * (1 + 1e-2), {1e-3, 5e-4, 2.5e-4, 1.25e-4});
  EXPECT_FALSE(bad.passed) << bad.report();
}

namespace {
using namespace stardiff::mesh;
struct Average {  // z = c (x(-1) + x(0)) / 2 with a global constant c
  static constexpr unsigned adjoint_reads = 0;
  void operator()(Acc<const double> x, Acc<double> z, const double* c) const { z(0) = *c * 0.5 * (x(-1) + x(0)); }
  void adjoint(Acc<const double>, Acc<double> x_a1s, Acc<const double>, Acc<double> z_a1s, const double* c) const {
    x_a1s(-1) += *c * 0.5 * z_a1s(0);
    x_a1s(0) += *c * 0.5 * z_a1s(0);
  }
};
struct Sum {
  static constexpr unsigned adjoint_reads = 0;
  void operator()(Acc<const double> z, double* s) const { *s += z(0); }
  void adjoint(Acc<const double>, Acc<double> z_a1s, const double*, const double* s_a1s) const { z_a1s(0) += *s_a1s; }
};
struct Index {
  void operator()(Acc<double> w, const int* idx) const { w(0) = idx[0]; }
};
}  // namespace

TEST(AdjointLoops, GblSizesAndBase) {
  // Node-centred z (11 points on a 10-point block), a dat with base 1, and arg_gbl.
  for (int tiles : {1, 2, 3}) {
    SequentialExecutor ex;
    Block b(ex, "line", {10}, tiles);
    Dat<double> x(b, "x", Halo{1}), z(b, "z", Halo{0}, {.size = {11}});
    Dat<double> w(b, "w", Halo{0}, {.active = false, .size = {9}, .base = {1}});
    Reduction<double> s(b, ReduceOp::SUM, "s");
    x.set([](int i, int, int) { return 1.0 + i * i; });
    Tape tape;
    tape.start();
    par_loop("avg", b, Range{0, 11}, Average{}, arg_dat(x, Stencil(1, {-1, 0}), READ), arg_dat(z, WRITE),
             arg_gbl(3.0));
    par_loop("sum", b, Range{1, 10}, Sum{}, arg_dat(z, READ), arg_reduce(s));
    tape.stop();
    par_loop_passive("index", b, Range{1, 10}, Index{}, arg_dat(w, WRITE), arg_idx());
    tape.seed(s, 1.0);
    tape.reverse();
    ex.wait_all();
    double want = 0;
    for (int i = 1; i < 10; ++i) want += 1.5 * (2.0 + (i - 1) * (i - 1) + i * i);
    EXPECT_DOUBLE_EQ(s.value(), want) << tiles;
    auto dx = x.adjoint();
    for (int k = -1; k <= 10; ++k) {
      double g = 1.5 * ((k + 1 >= 1 && k + 1 <= 9) + (k >= 1 && k <= 9));
      EXPECT_EQ(dx(k), g) << "k=" << k << " tiles=" << tiles;
    }
    auto wv = w.values();
    for (int i = 1; i < 10; ++i) EXPECT_EQ(wv(i), double(i));
    EXPECT_THROW(par_loop_passive("index", b, Range{0, 10}, Index{}, arg_dat(w, WRITE), arg_idx()), Error);
  }
}

namespace {
struct SumU {  // J = sum of the first and last components (twice the value for one)
  static constexpr unsigned adjoint_reads = 0;
  int n = 1;  // components
  void operator()(Acc<const double> u, double* s) const { *s += u.c(0) + u.c(n - 1); }
  void adjoint(Acc<const double>, Acc<double> u_a1s, const double*, const double* s_a1s) const {
    u_a1s.c(0) += *s_a1s;
    u_a1s.c(n - 1) += *s_a1s;
  }
};
struct SquareC {
  static constexpr unsigned adjoint_reads = 0b1;
  int n = 1;
  void operator()(Acc<double> x) const {
    for (int c = 0; c < n; ++c) x.c(c) = x.c(c) * x.c(c);
  }
  void adjoint(Acc<const double> x, Acc<double> x_a1s) const {
    for (int c = 0; c < n; ++c) x_a1s.c(c) = 2.0 * x.c(c) * x_a1s.c(c);
  }
};
}  // namespace

// Loops writing part of each row save the written column runs only: their bytes, and exact
// restores (bitwise the hand-derived gradient; dyadic values keep every product exact).
TEST(AdjointLoops, ColumnRunSavesRestoreExactly) {
  for (int dims : {2, 3})
    for (int dim : {1, 2})
      for (int tiles : {1, 3}) {
        SCOPED_TRACE("dims " + std::to_string(dims) + " dim " + std::to_string(dim) + " tiles " + std::to_string(tiles));
        const int nx = 10, ny = 7, nz = 7, h = 2;
        SequentialExecutor ex;
        std::vector<int> size = {nx, ny};
        if (dims == 3) size.push_back(nz);
        Block blk(ex, "cols", size, tiles);
        Dat<double> u(blk, "u", Halo{h}, {.dim = dim});
        auto u0 = [](int i, int j, int k, int c) { return 0.5 + 0.125 * ((i + 3 * j + 5 * k + c) % 7); };
        u.set_components(u0);
        Reduction<double> S(blk, ReduceOp::SUM, "S");
        Stencil z = Stencil::zero(dims);
        const int o = dims - 1, no = dims == 2 ? ny : nz;
        // a: x in [2, 5), every inner index, all outer rows; b: x in [3, 4), (3-D: y in [1, 3)),
        // outer rows [1, no - 1); c (3-D only): x whole with halo, y in [2, 4): runs of whole x rows.
        Range a = blk.interior(), b = blk.interior(), c = blk.interior();
        a.lo[0] = 2, a.hi[0] = 5;
        b.lo[0] = 3, b.hi[0] = 4, b.lo[o] = 1, b.hi[o] = no - 1;
        if (dims == 3) {
          b.lo[1] = 1, b.hi[1] = 3;
          c.lo[0] = -h, c.hi[0] = nx + h, c.lo[1] = 2, c.hi[1] = 4;
        }
        Tape tape("cols");
        tape.start();
        par_loop("sq_a", blk, a, SquareC{dim}, arg_dat(u, z, RW));
        par_loop("sq_b", blk, b, SquareC{dim}, arg_dat(u, z, RW));
        if (dims == 3) par_loop("sq_c", blk, c, SquareC{dim}, arg_dat(u, z, RW));
        par_loop("sum", blk, blk.interior(), SumU{dim}, arg_dat(u, z, READ), arg_reduce(S));
        tape.stop();
        tape.seed(S, 1.0);
        tape.reverse();
        ex.wait_all();
        auto pts = [&](const Range& r) {
          std::size_t n = 1;
          for (int d = 0; d < dims; ++d) n *= static_cast<std::size_t>(r.hi[d] - r.lo[d]);
          return n * dim * sizeof(double);
        };
        EXPECT_EQ(tape.bytes(), pts(a) + pts(b) + (dims == 3 ? pts(c) : 0) + 3 * sizeof(double));
        const auto g = u.adjoint();
        auto in = [&](const Range& r, int i, int j, int k) {
          return i >= r.lo[0] && i < r.hi[0] && j >= r.lo[1] && j < r.hi[1] && (dims == 2 || (k >= r.lo[2] && k < r.hi[2]));
        };
        const int kz = dims == 3 ? nz : 1;
        for (int k = dims == 3 ? -h : 0; k < (dims == 3 ? nz + h : 1); ++k)
          for (int j = -h; j < ny + h; ++j)
            for (int i = -h; i < nx + h; ++i)
              for (int cc = 0; cc < dim; ++cc) {
                const bool interior = i >= 0 && i < nx && j >= 0 && j < ny && k >= 0 && k < kz;
                // Forward values after each loop and the adjoint, in the kernels' order.
                double x = u0(i, j, k, cc);
                std::vector<double> before;
                for (const Range* r : {&a, &b, &c}) {
                  if ((r == &c && dims == 2) || !in(*r, i, j, k)) continue;
                  before.push_back(x);
                  x = x * x;
                }
                const bool counted = dim == 1 ? true : (cc == 0 || cc == dim - 1);
                double ad = interior && counted ? (dim == 1 ? 1.0 + 1.0 : 1.0) : 0.0;
                for (auto it = before.rbegin(); it != before.rend(); ++it) ad = 2.0 * *it * ad;
                ASSERT_EQ(g(i, j, k, cc), ad) << i << "," << j << "," << k << " c" << cc;
              }
      }
}
