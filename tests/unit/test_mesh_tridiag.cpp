// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/unit/test_mesh_tridiag.cpp — batched tridiagonal kernels (codelets/cpu/mesh/tridiag):
// solves along each axis of 2-D/3-D boxes with halos and non-unit strides match LAPACKE_dgtsv per
// line (1e-13 relative) and leave halos alone; the adjoint passes a dot-product test (1e-12) and
// central finite differences, accumulates, and may run in place; bad pivots are reported with
// their line and row; results are bitwise reproducible and independent of the line grouping.
#include <gtest/gtest.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "cpu/mesh/tridiag.hpp"

using namespace stardiff::cpu;

namespace {

constexpr double kHalo = -777.0;  // sentinel outside the box

// One array over box extents n with `halo` ghost layers, `comp` interleaved components (this one
// is component 0) and storage order `order` (fastest axis first).
struct Buf {
  std::vector<double> mem;
  long long off = 0, s[3] = {0, 0, 0};
  Buf(const long long* n, int halo, int comp, const int* order) {
    long long N[3];
    for (int k = 0; k < 3; ++k) N[k] = n[k] + 2 * halo;
    s[order[0]] = comp;
    s[order[1]] = comp * N[order[0]];
    s[order[2]] = comp * N[order[0]] * N[order[1]];
    off = halo * (s[0] + s[1] + s[2]);
    mem.assign(static_cast<std::size_t>(comp * N[0] * N[1] * N[2]), kHalo);
  }
  double& at(long long i0, long long i1, long long i2) { return mem[off + i0 * s[0] + i1 * s[1] + i2 * s[2]]; }
  TridiagArray arr() { return {mem.data() + off, {s[0], s[1], s[2]}}; }
  TridiagConstArray carr() const { return {mem.data() + off, {s[0], s[1], s[2]}}; }
};

struct Case {
  long long n[3];
  int axis;
};

const int kOrders[6][3] = {{0, 1, 2}, {2, 1, 0}, {1, 0, 2}, {0, 2, 1}, {2, 0, 1}, {1, 2, 0}};

// Coefficients a, b, c, d and the solution x, each with its own layout.
struct System {
  Case cs;
  Buf a, b, c, d, x;
  System(const Case& k, unsigned seed)
      : cs(k), a(k.n, 1, 1, kOrders[0]), b(k.n, 2, 2, kOrders[1]), c(k.n, 1, 3, kOrders[2]),
        d(k.n, 1, 1, kOrders[3]), x(k.n, 2, 2, kOrders[(seed % 2) ? 4 : 5]) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    for_each([&](long long i, long long j, long long l) {
      a.at(i, j, l) = u(gen);
      b.at(i, j, l) = 3.0 + u(gen);
      c.at(i, j, l) = u(gen);
      d.at(i, j, l) = u(gen);
      x.at(i, j, l) = 0.0;
    });
  }
  template <class F>
  void for_each(F f) const {
    for (long long l = 0; l < cs.n[2]; ++l)
      for (long long j = 0; j < cs.n[1]; ++j)
        for (long long i = 0; i < cs.n[0]; ++i) f(i, j, l);
  }
  TridiagBox box() const { return {{cs.n[0], cs.n[1], cs.n[2]}, cs.axis}; }
  TridiagStatus solve(Buf& out, const Buf& rhs) {
    std::vector<double> work(tridiag_solve_work_size(box()), 1e300);
    return tridiag_solve_cpu(box(), a.carr(), b.carr(), c.carr(), rhs.carr(), out.arr(), work.data());
  }
};

// Index (i0, i1, i2) of row r on the line with other-axis indices (k_lo, k_hi).
void point(const Case& cs, long long klo, long long khi, long long r, long long* ix) {
  const int lo = cs.axis == 0 ? 1 : 0, hi = cs.axis == 2 ? 1 : 2;
  ix[cs.axis] = r;
  ix[lo] = klo;
  ix[hi] = khi;
}
long long other_extent(const Case& cs, bool hi) { return cs.n[hi ? (cs.axis == 2 ? 1 : 2) : (cs.axis == 0 ? 1 : 0)]; }

const std::vector<Case> kCases = {
    {{7, 5, 1}, 0},   {{7, 5, 1}, 1},   {{6, 5, 4}, 0},   {{6, 5, 4}, 1},  {{6, 5, 4}, 2},
    {{19, 11, 3}, 0}, {{19, 11, 3}, 1}, {{19, 11, 3}, 2}, {{1, 9, 2}, 0},  {{2, 17, 1}, 1},
};

double halo_sum_changed(const Buf& before, const Buf& after) {
  double changed = 0;
  for (std::size_t k = 0; k < before.mem.size(); ++k)
    if (before.mem[k] == kHalo && after.mem[k] != kHalo) changed += 1;
  return changed;
}

}  // namespace

TEST(MeshTridiag, MatchesLapackDgtsvAlongEachAxis) {
  unsigned seed = 1;
  for (const Case& cs : kCases) {
    SCOPED_TRACE(testing::Message() << "n = " << cs.n[0] << "x" << cs.n[1] << "x" << cs.n[2] << " axis " << cs.axis);
    System sys(cs, seed++);
    const Buf x0 = sys.x;
    ASSERT_TRUE(sys.solve(sys.x, sys.d).ok());
    EXPECT_EQ(halo_sum_changed(x0, sys.x), 0);
    const long long n = cs.n[cs.axis];
    for (long long khi = 0; khi < other_extent(cs, true); ++khi)
      for (long long klo = 0; klo < other_extent(cs, false); ++klo) {
        std::vector<double> dl(std::max<long long>(n - 1, 1)), dd(n), du(std::max<long long>(n - 1, 1)), rhs(n);
        long long ix[3];
        for (long long r = 0; r < n; ++r) {
          point(cs, klo, khi, r, ix);
          dd[r] = sys.b.at(ix[0], ix[1], ix[2]);
          rhs[r] = sys.d.at(ix[0], ix[1], ix[2]);
          if (r > 0) dl[r - 1] = sys.a.at(ix[0], ix[1], ix[2]);
          if (r < n - 1) du[r] = sys.c.at(ix[0], ix[1], ix[2]);
        }
        ASSERT_EQ(LAPACKE_dgtsv(LAPACK_COL_MAJOR, n, 1, dl.data(), dd.data(), du.data(), rhs.data(), n), 0);
        double scale = 0;
        for (double v : rhs) scale = std::max(scale, std::fabs(v));
        for (long long r = 0; r < n; ++r) {
          point(cs, klo, khi, r, ix);
          EXPECT_NEAR(sys.x.at(ix[0], ix[1], ix[2]), rhs[r], 1e-13 * scale) << "line " << klo << "," << khi << " row " << r;
        }
      }
  }
}

TEST(MeshTridiag, InPlaceSolveAndGroupingAreBitwiseEqual) {
  for (const Case& cs : kCases) {
    System sys(cs, 11);
    ASSERT_TRUE(sys.solve(sys.x, sys.d).ok());
    // In place: x aliases d (same pointer and strides).
    Buf inplace = sys.d;
    ASSERT_TRUE(sys.solve(inplace, inplace).ok());
    // Run to run, with the workspace filled differently.
    Buf again = sys.x;
    std::vector<double> work(tridiag_solve_work_size(sys.box()), -3.0);
    ASSERT_TRUE(tridiag_solve_cpu(sys.box(), sys.a.carr(), sys.b.carr(), sys.c.carr(), sys.d.carr(), again.arr(),
                                  work.data()).ok());
    sys.for_each([&](long long i, long long j, long long l) {
      ASSERT_EQ(std::memcmp(&sys.x.at(i, j, l), &inplace.at(i, j, l), sizeof(double)), 0);
      ASSERT_EQ(std::memcmp(&sys.x.at(i, j, l), &again.at(i, j, l), sizeof(double)), 0);
    });
    // One line alone (a 1-line box at that line's base) gives the same bits as inside its batch.
    const long long klo = other_extent(cs, false) - 1, khi = other_extent(cs, true) / 2;
    long long ix[3];
    point(cs, klo, khi, 0, ix);
    TridiagBox one{{1, 1, 1}, cs.axis};
    one.n[cs.axis] = cs.n[cs.axis];
    auto at = [&](const Buf& bf) {
      return TridiagConstArray{bf.mem.data() + bf.off + ix[0] * bf.s[0] + ix[1] * bf.s[1] + ix[2] * bf.s[2],
                               {bf.s[0], bf.s[1], bf.s[2]}};
    };
    Buf single = sys.x;
    const TridiagConstArray so = at(single);
    std::vector<double> w1(tridiag_solve_work_size(one));
    ASSERT_TRUE(tridiag_solve_cpu(one, at(sys.a), at(sys.b), at(sys.c), at(sys.d),
                                  TridiagArray{const_cast<double*>(so.p), {so.s[0], so.s[1], so.s[2]}}, w1.data())
                    .ok());
    EXPECT_EQ(std::memcmp(single.mem.data(), sys.x.mem.data(), single.mem.size() * sizeof(double)), 0);
  }
}

namespace {
// Tangent of x = A^{-1} d: xdot = A^{-1} (ddot - Adot x), by the forward kernel (independent of the adjoint).
Buf tangent(System& sys, const Buf& adot, const Buf& bdot, const Buf& cdot, const Buf& ddot) {
  const Case& cs = sys.cs;
  Buf rhs = sys.d;
  const int ax = cs.axis;
  sys.for_each([&](long long i, long long j, long long l) {
    long long ix[3] = {i, j, l};
    const long long r = ix[ax];
    Buf& x = sys.x;
    double v = ddot.mem[ddot.off + i * ddot.s[0] + j * ddot.s[1] + l * ddot.s[2]];
    auto get = [&](const Buf& bf) { return bf.mem[bf.off + i * bf.s[0] + j * bf.s[1] + l * bf.s[2]]; };
    v -= get(bdot) * x.at(i, j, l);
    long long jm[3] = {i, j, l}, jp[3] = {i, j, l};
    --jm[ax];
    ++jp[ax];
    if (r > 0) v -= get(adot) * x.at(jm[0], jm[1], jm[2]);
    if (r < cs.n[ax] - 1) v -= get(cdot) * x.at(jp[0], jp[1], jp[2]);
    rhs.at(i, j, l) = v;
  });
  Buf xdot = sys.x;
  EXPECT_TRUE(sys.solve(xdot, rhs).ok());
  return xdot;
}

void randomize(System& sys, Buf& bf, std::mt19937& gen) {
  std::uniform_real_distribution<double> u(-1, 1);
  sys.for_each([&](long long i, long long j, long long l) { bf.at(i, j, l) = u(gen); });
}
double dot(System& sys, Buf& p, Buf& q) {
  double s = 0;
  sys.for_each([&](long long i, long long j, long long l) { s += p.at(i, j, l) * q.at(i, j, l); });
  return s;
}
void zero(System& sys, Buf& bf) {
  sys.for_each([&](long long i, long long j, long long l) { bf.at(i, j, l) = 0.0; });
}

struct Adjoints {
  Buf xbar, abar, bbar, cbar, dbar;
  explicit Adjoints(const Case& cs)
      : xbar(cs.n, 1, 2, kOrders[2]), abar(cs.n, 0, 1, kOrders[5]), bbar(cs.n, 1, 1, kOrders[0]),
        cbar(cs.n, 2, 1, kOrders[1]), dbar(cs.n, 1, 3, kOrders[4]) {}
  TridiagStatus run(System& sys, bool consume) {
    std::vector<double> work(tridiag_adjoint_work_size(sys.box()), 1e300);
    return tridiag_adjoint_cpu(sys.box(), sys.a.carr(), sys.b.carr(), sys.c.carr(), sys.x.carr(), xbar.arr(), consume,
                               abar.arr(), bbar.arr(), cbar.arr(), dbar.arr(), work.data());
  }
};
}  // namespace

TEST(MeshTridiag, AdjointDotProductTest) {
  unsigned seed = 100;
  for (const Case& cs : kCases) {
    SCOPED_TRACE(testing::Message() << "n = " << cs.n[0] << "x" << cs.n[1] << "x" << cs.n[2] << " axis " << cs.axis);
    System sys(cs, seed);
    ASSERT_TRUE(sys.solve(sys.x, sys.d).ok());
    std::mt19937 gen(seed++);
    Buf adot = sys.a, bdot = sys.b, cdot = sys.c, ddot = sys.d;
    for (Buf* p : {&adot, &bdot, &cdot, &ddot}) randomize(sys, *p, gen);
    Buf xdot = tangent(sys, adot, bdot, cdot, ddot);
    Adjoints adj(cs);
    randomize(sys, adj.xbar, gen);
    for (Buf* p : {&adj.abar, &adj.bbar, &adj.cbar, &adj.dbar}) zero(sys, *p);
    const Buf xbar0 = adj.xbar, abar0 = adj.abar, cbar0 = adj.cbar;
    ASSERT_TRUE(adj.run(sys, false).ok());
    EXPECT_EQ(std::memcmp(xbar0.mem.data(), adj.xbar.mem.data(), xbar0.mem.size() * sizeof(double)), 0);
    const double lhs = dot(sys, adj.xbar, xdot);
    const double rhs = dot(sys, adj.abar, adot) + dot(sys, adj.bbar, bdot) + dot(sys, adj.cbar, cdot) +
                       dot(sys, adj.dbar, ddot);
    EXPECT_NEAR(lhs, rhs, 1e-12 * std::fabs(lhs)) << lhs << " vs " << rhs;
    // a[0] and c[n-1] get no adjoint; halos stay untouched.
    EXPECT_EQ(halo_sum_changed(abar0, adj.abar), 0);
    EXPECT_EQ(halo_sum_changed(cbar0, adj.cbar), 0);
    sys.for_each([&](long long i, long long j, long long l) {
      const long long ix[3] = {i, j, l};
      if (ix[cs.axis] == 0) {
        EXPECT_EQ(adj.abar.at(i, j, l), 0.0);
      }
      if (ix[cs.axis] == cs.n[cs.axis] - 1) {
        EXPECT_EQ(adj.cbar.at(i, j, l), 0.0);
      }
    });
  }
}

TEST(MeshTridiag, AdjointAccumulatesAndRunsInPlace) {
  for (const Case& cs : kCases) {
    System sys(cs, 7);
    ASSERT_TRUE(sys.solve(sys.x, sys.d).ok());
    std::mt19937 gen(8);
    Adjoints once(cs);
    randomize(sys, once.xbar, gen);
    for (Buf* p : {&once.abar, &once.bbar, &once.cbar, &once.dbar}) zero(sys, *p);
    Adjoints twice = once;
    ASSERT_TRUE(once.run(sys, false).ok());
    ASSERT_TRUE(twice.run(sys, false).ok());
    ASSERT_TRUE(twice.run(sys, false).ok());
    for (auto [p, q] : {std::pair{&once.abar, &twice.abar}, {&once.bbar, &twice.bbar}, {&once.cbar, &twice.cbar},
                        {&once.dbar, &twice.dbar}})
      sys.for_each([&](long long i, long long j, long long l) { ASSERT_EQ(2 * p->at(i, j, l), q->at(i, j, l)); });
    // consume_xbar zeroes xbar; with xbar aliasing dbar (in-place solve) dbar = A^{-T} xbar exactly.
    Adjoints consumed(cs), inplace(cs);
    consumed.xbar = once.xbar;
    for (Buf* p : {&consumed.abar, &consumed.bbar, &consumed.cbar, &consumed.dbar}) zero(sys, *p);
    inplace = consumed;
    ASSERT_TRUE(consumed.run(sys, true).ok());
    sys.for_each([&](long long i, long long j, long long l) {
      ASSERT_EQ(consumed.xbar.at(i, j, l), 0.0);
      ASSERT_EQ(consumed.dbar.at(i, j, l), once.dbar.at(i, j, l));
      ASSERT_EQ(consumed.bbar.at(i, j, l), once.bbar.at(i, j, l));
    });
    std::vector<double> work(tridiag_adjoint_work_size(sys.box()));
    ASSERT_TRUE(tridiag_adjoint_cpu(sys.box(), sys.a.carr(), sys.b.carr(), sys.c.carr(), sys.x.carr(),
                                    inplace.xbar.arr(), true, inplace.abar.arr(), inplace.bbar.arr(),
                                    TridiagArray{nullptr, {0, 0, 0}}, inplace.xbar.arr(), work.data())
                    .ok());
    sys.for_each([&](long long i, long long j, long long l) {
      ASSERT_EQ(inplace.xbar.at(i, j, l), once.dbar.at(i, j, l));
      ASSERT_EQ(inplace.abar.at(i, j, l), once.abar.at(i, j, l));
      ASSERT_EQ(inplace.cbar.at(i, j, l), 0.0);  // skipped (null)
    });
  }
}

TEST(MeshTridiag, AdjointMatchesCentralDifferences) {
  for (const Case& cs : {Case{{6, 5, 4}, 1}, Case{{7, 5, 1}, 0}, Case{{6, 5, 4}, 2}}) {
    System sys(cs, 21);
    ASSERT_TRUE(sys.solve(sys.x, sys.d).ok());
    std::mt19937 gen(22);
    Adjoints adj(cs);
    randomize(sys, adj.xbar, gen);
    for (Buf* p : {&adj.abar, &adj.bbar, &adj.cbar, &adj.dbar}) zero(sys, *p);
    ASSERT_TRUE(adj.run(sys, false).ok());
    auto J = [&]() {
      Buf x = sys.x;
      EXPECT_TRUE(sys.solve(x, sys.d).ok());
      return dot(sys, adj.xbar, x);
    };
    const long long m = cs.n[cs.axis] - 1;
    long long probes[3][3] = {{1, 2, 1}, {0, 0, 0}, {2, 4, 3}};
    for (auto& pr : probes) {
      for (int k = 0; k < 3; ++k) pr[k] = std::min(pr[k], cs.n[k] - 1);
      for (long long r : {1LL, m}) {  // row along the axis: an interior-ish one and the last
        long long ix[3] = {pr[0], pr[1], pr[2]};
        ix[cs.axis] = std::min(r, m);
        for (auto [p, g] : {std::pair{&sys.a, &adj.abar}, {&sys.b, &adj.bbar}, {&sys.c, &adj.cbar}, {&sys.d, &adj.dbar}}) {
          double& v = p->at(ix[0], ix[1], ix[2]);
          const double v0 = v, h = 1e-6;
          v = v0 + h;
          const double jp = J();
          v = v0 - h;
          const double jm = J();
          v = v0;
          const double fd = (jp - jm) / (2 * h);
          EXPECT_NEAR(g->at(ix[0], ix[1], ix[2]), fd, 1e-7 * (1 + std::fabs(fd)));
        }
      }
    }
  }
}

TEST(MeshTridiag, ZeroAndNonFinitePivotsAreReported) {
  const Case cs{{6, 5, 4}, 1};  // lines numbered k0 + 6 k2
  System sys(cs, 31);
  // Line (k0 = 3, k2 = 2): b_0 = c_0 = a_1 = b_1 = 1, so the pivot of row 1 is exactly zero.
  sys.b.at(3, 0, 2) = 1.0;
  sys.c.at(3, 0, 2) = 1.0;
  sys.a.at(3, 1, 2) = 1.0;
  sys.b.at(3, 1, 2) = 1.0;
  // Line (k0 = 1, k2 = 3): a NaN diagonal at row 4; line (k0 = 5, k2 = 3): zero b_0.
  sys.b.at(1, 4, 3) = std::numeric_limits<double>::quiet_NaN();
  sys.b.at(5, 0, 3) = 0.0;
  TridiagStatus st = sys.solve(sys.x, sys.d);
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.bad_lines, 3);
  EXPECT_EQ(st.first_line, 3 + 6 * 2);
  EXPECT_EQ(st.first_row, 1);
  // The adjoint's transposed pivots are the same: same report.
  Adjoints adj(cs);
  std::mt19937 gen(3);
  randomize(sys, adj.xbar, gen);
  for (Buf* p : {&adj.abar, &adj.bbar, &adj.cbar, &adj.dbar}) zero(sys, *p);
  st = adj.run(sys, false);
  EXPECT_EQ(st.bad_lines, 3);
  EXPECT_EQ(st.first_line, 3 + 6 * 2);
  EXPECT_EQ(st.first_row, 1);
  // Only the NaN line left: its first bad row is the NaN's.
  System sys2(cs, 31);
  sys2.b.at(1, 4, 3) = std::numeric_limits<double>::infinity();
  st = sys2.solve(sys2.x, sys2.d);
  EXPECT_EQ(st.bad_lines, 1);
  EXPECT_EQ(st.first_line, 1 + 6 * 3);
  EXPECT_EQ(st.first_row, 4);
  // An empty box is fine and touches nothing.
  TridiagBox empty{{0, 5, 4}, 1};
  EXPECT_TRUE(tridiag_solve_cpu(empty, sys.a.carr(), sys.b.carr(), sys.c.carr(), sys.d.carr(), sys.x.arr(), nullptr).ok());
}
