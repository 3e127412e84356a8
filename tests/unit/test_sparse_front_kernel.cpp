// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/unit/test_sparse_front_kernel.cpp — the dense front kernel (front_ldlt_cpu) alone.
//
// On random SPD, indefinite and KKT fronts (m rows, p fully summed, several block sizes
// so that the unpivoted, inner-window and pivoted paths and the retry rounds all run):
// P F P^T = L D L^T + [0 0; 0 S] entry by entry (S: the returned contribution block,
// delayed columns first), |L| <= 1/u outside forced roots, inertia(D) + inertia(S) =
// inertia(F) from LAPACKE_dsyev, and the window/update entry points used by split fronts
// give the same factors as the whole-front call on a front that needs no pivoting; a
// diagonal block whose L^-1 is huge keeps a small backward error.
#include <gtest/gtest.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "cpu/sparse/front_ldlt.hpp"
#include "single_thread_blas.hpp"

using namespace stardiff::cpu;

namespace {

// Delay: every fourth fully-summed column has a zero diagonal and no coupling to the
// other fully-summed columns but a 1e-5 one to its left neighbour, so no 1x1 or 2x2
// pivot can take it: it must be delayed (left in the contribution block).
enum class Kind { Spd, Indefinite, Kkt, Delay };

// Full symmetric m x m (column-major).
std::vector<double> make_front(int m, int p, Kind kind, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> U(-1, 1);
  std::vector<double> A(std::size_t(m) * m, 0.0);
  for (int j = 0; j < m; ++j)
    for (int i = j; i < m; ++i) {
      double v = U(g);
      if (i == j) {
        if (kind == Kind::Spd) v = m + std::fabs(v);
        if (kind == Kind::Kkt) v = j % 3 == 2 ? 0.0 : 2 + v;  // every third diagonal zero
      }
      if (kind == Kind::Delay && i < p && (i % 4 == 3 || j % 4 == 3)) v = i == j + 1 ? 1e-5 : 0.0;
      A[i + std::size_t(j) * m] = A[j + std::size_t(i) * m] = v;
    }
  return A;
}

struct Inertia {
  int pos = 0, neg = 0, zero = 0;
};

Inertia eig_inertia(std::vector<double> A, int n) {
  Inertia in;
  if (n == 0) return in;
  std::vector<double> w(n);
  EXPECT_EQ(LAPACKE_dsyev(LAPACK_COL_MAJOR, 'N', 'L', n, A.data(), n, w.data()), 0);
  double scale = 0;
  for (double x : w) scale = std::max(scale, std::fabs(x));
  for (double x : w) {
    if (std::fabs(x) <= 1e-12 * scale) in.zero++;
    else if (x > 0) in.pos++;
    else in.neg++;
  }
  return in;
}

struct Result {
  int nelim = 0;
  std::vector<double> F, d, e;
  std::vector<int> perm;
  std::vector<signed char> piv;
  FrontCounts counts;
};

Result factor(const std::vector<double>& A, int m, int p, FrontOptions o) {
  Result r;
  r.F = A;  // the kernel reads the lower triangle only
  for (int j = 0; j < m; ++j)
    for (int i = 0; i < j; ++i) r.F[i + std::size_t(j) * m] = std::nan("");  // upper: never read
  r.perm.resize(m);
  r.d.assign(std::max(p, 1), 0.0);
  r.e.assign(std::max(p, 1), 0.0);
  r.piv.assign(std::max(p, 1), 1);
  r.nelim = front_ldlt_cpu(r.F.data(), m, p, o, r.perm.data(), r.d.data(), r.e.data(), r.piv.data(), r.counts);
  return r;
}

// max |P A P^T - (L D L^T + [0 0; 0 S])| / max |A| over the lower triangle.
double reconstruction_error(const std::vector<double>& A, int m, const Result& r) {
  const int ne = r.nelim;
  auto L = [&](int i, int k) { return i == k ? 1.0 : (i < k ? 0.0 : r.F[i + std::size_t(k) * m]); };
  // W = L D (m x ne)
  std::vector<double> W(std::size_t(m) * ne, 0.0);
  for (int k = 0; k < ne; ++k) {
    if (r.piv[k] == 2) {
      for (int i = 0; i < m; ++i) {
        W[i + std::size_t(k) * m] = L(i, k) * r.d[k] + L(i, k + 1) * r.e[k];
        W[i + std::size_t(k + 1) * m] = L(i, k) * r.e[k] + L(i, k + 1) * r.d[k + 1];
      }
      ++k;
    } else {
      for (int i = 0; i < m; ++i) W[i + std::size_t(k) * m] = L(i, k) * r.d[k];
    }
  }
  double amax = 0, err = 0;
  for (double x : A) amax = std::max(amax, std::fabs(x));
  for (int j = 0; j < m; ++j)
    for (int i = j; i < m; ++i) {
      double v = 0;
      for (int k = 0; k < ne; ++k) v += L(i, k) * W[j + std::size_t(k) * m];
      if (i >= ne && j >= ne) v += r.F[i + std::size_t(j) * m];
      const double a = A[r.perm[i] + std::size_t(r.perm[j]) * m];
      err = std::max(err, std::fabs(a - v));
    }
  return err / amax;
}

Inertia d_inertia(const Result& r) {
  Inertia in;
  for (int k = 0; k < r.nelim; ++k) {
    if (r.piv[k] == 2) {
      const double det = r.d[k] * r.d[k + 1] - r.e[k] * r.e[k];
      if (det < 0) in.pos++, in.neg++;
      else if (r.d[k] + r.d[k + 1] > 0) in.pos += 2;
      else in.neg += 2;
      ++k;
    } else if (r.piv[k] == 0) {
      in.zero++;
    } else if (r.d[k] > 0) {
      in.pos++;
    } else {
      in.neg++;
    }
  }
  return in;
}

struct Case {
  int m, p, nb;
  Kind kind;
};

class FrontKernel : public ::testing::TestWithParam<Case> {};

TEST_P(FrontKernel, ReconstructsWithBoundedMultipliersAndExactInertia) {
  const Case c = GetParam();
  for (unsigned seed = 1; seed <= 3; ++seed) {
    const std::vector<double> A = make_front(c.m, c.p, c.kind, seed);
    FrontOptions o;
    o.nb = c.nb;
    const Result r = factor(A, c.m, c.p, o);
    ASSERT_GE(r.nelim, 0);
    ASSERT_LE(r.nelim, c.p);
    if (c.kind == Kind::Spd) EXPECT_EQ(r.nelim, c.p);
    if (c.kind == Kind::Delay) EXPECT_LE(r.nelim, c.p - c.p / 4);
    // small KKT fronts meet zero diagonals before fill-in hides them: 2x2 pivots
    if (c.kind == Kind::Kkt && c.m <= 120) EXPECT_GT(r.counts.two_by_two, 0);
    // multipliers up to 1/u let rounding errors grow beyond the SPD case's
    EXPECT_LT(reconstruction_error(A, c.m, r), c.kind == Kind::Spd ? 1e-13 : 1e-10) << "seed " << seed;
    // threshold: every multiplier bounded by 1/u (1x1 and 2x2 pivots)
    double lmax = 0;
    for (int k = 0; k < r.nelim; ++k)
      for (int i = k + 1; i < c.m; ++i) lmax = std::max(lmax, std::fabs(r.F[i + std::size_t(k) * c.m]));
    EXPECT_LE(lmax, 1.0 / o.u) << "seed " << seed;
    // inertia(F) = inertia(D) + inertia(S), S the contribution block (delayed rows first)
    const int ns = c.m - r.nelim;
    std::vector<double> S(std::size_t(ns) * ns);
    for (int j = 0; j < ns; ++j)
      for (int i = j; i < ns; ++i)
        S[i + std::size_t(j) * ns] = S[j + std::size_t(i) * ns] =
            r.F[(r.nelim + i) + std::size_t(r.nelim + j) * c.m];
    const Inertia full = eig_inertia(A, c.m), id = d_inertia(r), is = eig_inertia(S, ns);
    EXPECT_EQ(id.pos + is.pos, full.pos) << "seed " << seed;
    EXPECT_EQ(id.neg + is.neg, full.neg) << "seed " << seed;
    EXPECT_EQ(r.counts.pos, id.pos);
    EXPECT_EQ(r.counts.neg, id.neg);
    // bitwise reproducible
    const Result again = factor(A, c.m, c.p, o);
    bool same = true;  // lower triangle (the upper one is scratch)
    for (int j = 0; j < c.m; ++j)
      for (int i = j; i < c.m; ++i)
        same = same && again.F[i + std::size_t(j) * c.m] == r.F[i + std::size_t(j) * c.m];
    EXPECT_TRUE(same);
    EXPECT_EQ(again.perm, r.perm);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, FrontKernel,
    ::testing::Values(Case{40, 40, 8, Kind::Spd}, Case{300, 120, 32, Kind::Spd}, Case{300, 300, 128, Kind::Spd},
                      Case{260, 200, 64, Kind::Spd}, Case{90, 60, 16, Kind::Indefinite},
                      Case{300, 150, 64, Kind::Indefinite}, Case{300, 300, 128, Kind::Indefinite},
                      Case{120, 90, 8, Kind::Kkt}, Case{300, 200, 128, Kind::Kkt}, Case{300, 300, 64, Kind::Kkt}, Case{200, 120, 32, Kind::Delay},
                      Case{400, 300, 128, Kind::Delay}, Case{150, 100, 8, Kind::Delay}));

TEST(FrontKernel, ForcedRootEliminatesEveryColumnAndCountsStaticPivots) {
  // a singular KKT root: [I B; B^T 0] with B rank deficient leaves zero pivots
  const int n1 = 40, n2 = 30, m = n1 + n2;
  std::mt19937 g(7);
  std::uniform_real_distribution<double> U(-1, 1);
  std::vector<double> A(std::size_t(m) * m, 0.0);
  for (int i = 0; i < n1; ++i) A[i + std::size_t(i) * m] = 1.0;
  for (int j = 0; j < n2; ++j)
    for (int i = 0; i < n1; ++i) {
      const double v = j < 20 ? U(g) : A[i + std::size_t(n1 + j - 20) * m];  // columns 20..29 repeat 0..9
      A[i + std::size_t(n1 + j) * m] = A[(n1 + j) + std::size_t(i) * m] = v;
    }
  FrontOptions o;
  o.nb = 16;
  o.force = true;
  o.small = 1e-10;
  o.static_piv = 1e-8;
  const Result r = factor(A, m, m, o);
  EXPECT_EQ(r.nelim, m);
  const Inertia full = eig_inertia(A, m), id = d_inertia(r);
  EXPECT_EQ(full.zero, 10);
  EXPECT_EQ(r.counts.static_pivots, 10);
  EXPECT_EQ(id.zero, 10);
  EXPECT_EQ(id.pos, full.pos);
  EXPECT_EQ(id.neg, full.neg);
}

TEST(FrontKernel, UnpivotedFrontStopsAtTheFirstBadPivot) {
  // SPD: every column eliminated, the same inertia as threshold pivoting. A zero pivot
  // (column 70 of a front whose fully-summed block is diagonal) ends the front there.
  const int m = 220, p = 150;
  const std::vector<double> A = make_front(m, p, Kind::Spd, 5);
  FrontOptions o;
  o.nb = 32;
  o.unpivoted = true;
  const Result r = factor(A, m, p, o);
  EXPECT_EQ(r.nelim, p);
  EXPECT_EQ(r.counts.pos, p);
  EXPECT_LT(reconstruction_error(A, m, r), 1e-13);
  std::vector<double> B(std::size_t(m) * m, 0.0);
  for (int j = 0; j < m; ++j) B[j + std::size_t(j) * m] = j == 70 ? 0.0 : 1.0 + j;
  for (int j = 0; j < p; ++j) B[p + std::size_t(j) * m] = B[j + std::size_t(p) * m] = 0.5;  // couple to row p
  const Result z = factor(B, m, p, o);
  EXPECT_EQ(z.nelim, 64);  // windows [0, 32), [32, 64) pass; [64, 96) holds the zero pivot
}

TEST(FrontKernel, DiagonalBlockWithALargeInverseKeepsTheBackwardErrorSmall) {
  // F = L D L^T, D = I, with L11 (the 128 fully-summed columns) unit lower bidiagonal with
  // -1.2 below the diagonal: a well-conditioned SPD front whose L11^-1 has entries up to
  // 1.2^127 ~ 1e10. Rows below solved through that inverse (dtrmm) would carry errors of
  // eps |L11^-1| ~ 1e-6; the kernel must fall back to substitution there.
  const int m = 200, p = 128;
  std::mt19937 g(3);
  std::uniform_real_distribution<double> U(-1, 1);
  std::vector<double> L(std::size_t(m) * m, 0.0);
  for (int j = 0; j < m; ++j) {
    L[j + std::size_t(j) * m] = 1.0;
    if (j + 1 < p) L[(j + 1) + std::size_t(j) * m] = -1.2;
    if (j < p)
      for (int i = p; i < m; ++i) L[i + std::size_t(j) * m] = U(g);
  }
  std::vector<double> A(std::size_t(m) * m, 0.0);
  for (int j = 0; j < m; ++j)
    for (int i = 0; i < m; ++i) {
      double v = 0;
      for (int k = 0; k <= std::min(i, j); ++k) v += L[i + std::size_t(k) * m] * L[j + std::size_t(k) * m];
      A[i + std::size_t(j) * m] = v;
    }
  FrontOptions o;
  o.nb = 128;
  const Result r = factor(A, m, p, o);
  EXPECT_EQ(r.nelim, p);
  EXPECT_EQ(r.counts.pos, p);
  EXPECT_LT(reconstruction_error(A, m, r), 1e-13);
}

TEST(FrontKernel, WindowAndUpdateStepsMatchTheWholeFront) {
  // what split fronts run: per window front_window_cpu, then front_update_cols_cpu on the
  // rest — equal to the whole-front factors within rounding (different update order)
  const int m = 280, p = 200, nb = 64;
  const std::vector<double> A = make_front(m, p, Kind::Spd, 11);
  FrontOptions o;
  o.nb = nb;
  const Result whole = factor(A, m, p, o);
  std::vector<double> F = A;
  std::vector<int> perm(m);
  for (int i = 0; i < m; ++i) perm[i] = i;
  std::vector<double> d(p), e(p);
  std::vector<signed char> piv(p);
  FrontCounts cnt;
  for (int k = 0; k < p; k += nb) {
    const int k1 = std::min(k + nb, p);
    ASSERT_EQ(front_window_cpu(F.data(), m, k, k1, o, perm.data(), d.data(), e.data(), piv.data(), cnt), k1 - k);
    front_update_cols_cpu(F.data(), m, k, k1 - k, d.data(), e.data(), piv.data(), k1, m);
  }
  EXPECT_EQ(cnt.pos, p);
  double diff = 0, amax = 0;
  for (int j = 0; j < m; ++j)
    for (int i = j; i < m; ++i) {
      diff = std::max(diff, std::fabs(F[i + std::size_t(j) * m] - whole.F[i + std::size_t(j) * m]));
      amax = std::max(amax, std::fabs(whole.F[i + std::size_t(j) * m]));
    }
  EXPECT_LT(diff, 1e-12 * amax);
  for (int k = 0; k < p; ++k) EXPECT_NEAR(d[k], whole.d[k], 1e-12 * std::fabs(whole.d[k]));
}

}  // namespace
