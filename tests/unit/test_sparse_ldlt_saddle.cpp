// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/unit/test_sparse_ldlt_saddle.cpp — Ldlt on saddle-point (KKT) matrices with many
// zero diagonal entries (no runtime).
//
// The unpivoted first attempt also runs where diagonal entries are zero (they take the
// sign their fill gives them; ZeroDiagonalAttempt::Always, or by default where the pairing
// deferred columns): on small random [H B^T; B -G] with G zero on most of its
// diagonal the inertia equals the signs of LAPACKE_dsyev's eigenvalues, whichever
// factorization was kept (some trials must keep the unpivoted one), in multifrontal and
// simplicial mode; a kept unpivoted factorization that solves badly (growth unbounded by
// options) is replaced by a threshold-pivoted one inside solve(), which then reaches eps;
// a structurally singular KKT matrix (a zero block of constraint columns) is reported
// singular with its inertia, and its solve returns.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "stardiff/sparse/csc_matrix.hpp"
#include "stardiff/sparse/ldlt.hpp"
#include "single_thread_blas.hpp"
#include "sparse_dense_inertia.hpp"
#include "sparse_residual.hpp"
#include "stardiff/runtime/error.hpp"

using namespace stardiff;
using namespace stardiff::sparse;
using stardiff::testing::dense_inertia;
using stardiff::testing::relres;

namespace {
// [H B^T; B -G] (n1 + m1): H tridiagonal, diagonally dominant (SPD) or, with indefinite_h,
// with a few negative diagonal entries; B m1 x n1 with `per_row` random entries per row
// (one of them on column 2i mod n1, so B has full rank in practice); G zero except on
// every `g_every`-th diagonal entry (a small negative regularization there). Every zero
// diagonal entry is stored as an explicit zero, as Matrix Market readers give them.
CscMatrix32 saddle(int n1, int m1, int per_row, int g_every, bool indefinite_h, std::mt19937& g,
                   int empty_rows = 0) {
  std::uniform_real_distribution<double> U(-1, 1);
  std::uniform_int_distribution<int> C(0, n1 - 1);
  std::vector<int> r, c;
  std::vector<double> v;
  for (int j = 0; j < n1; ++j) {
    const double sgn = indefinite_h && j % 7 == 3 ? -1.0 : 1.0;
    r.push_back(j), c.push_back(j), v.push_back(sgn * (3.0 + U(g)));
    if (j + 1 < n1) r.push_back(j + 1), c.push_back(j), v.push_back(0.5 * U(g));
  }
  for (int i = 0; i < m1; ++i) {
    const int row = n1 + i;
    r.push_back(row), c.push_back(row), v.push_back(g_every > 0 && i % g_every == 0 ? -1e-2 * (1.5 + U(g)) : 0.0);
    if (i < empty_rows) continue;  // a constraint without entries: structurally singular
    r.push_back(row), c.push_back((2 * i) % n1), v.push_back(1.0 + 0.2 * U(g));
    for (int t = 1; t < per_row; ++t) r.push_back(row), c.push_back(C(g)), v.push_back(U(g));
  }
  return from_triplets(n1 + m1, n1 + m1, r, c, v, true);
}

std::vector<double> rhs_of(const CscMatrix32& A) {
  std::vector<double> x(A.n_cols), b(A.n_cols);
  for (int i = 0; i < A.n_cols; ++i) x[i] = 1.0 + 0.01 * i;
  multiply(A, x.data(), b.data());
  return b;
}

void expect_inertia(const Inertia& got, const Inertia& want) {
  EXPECT_EQ(got.pos, want.pos);
  EXPECT_EQ(got.neg, want.neg);
  EXPECT_EQ(got.zero, want.zero);
}
}  // namespace

TEST(SparseLdltSaddle, InertiaMatchesDsyevWithManyZeroDiagonals) {
  std::mt19937 g(31);
  int kept_unpivoted = 0, pivoted = 0, trials = 0;
  for (int trial = 0; trial < 12; ++trial) {
    const int n1 = 60 + 10 * trial, m1 = 20 + 5 * trial;
    // rows of B with 2-4 or 6-8 entries: some constraints come before all their neighbours in the
    // fill-reducing order (zero pivot: threshold pivoting), others after (unpivoted kept)
    auto A = saddle(n1, m1, trial % 2 ? 6 + trial % 3 : 2 + trial % 3, trial % 4 == 0 ? 0 : 3 + trial % 5, trial % 3 == 2, g);
    const Inertia want = dense_inertia(A);
    if (want.zero) continue;
    ++trials;
    const auto b = rhs_of(A);
    // multifrontal (small fronts, several supernodes) and the default (simplicial here)
    for (const LdltOptions& o : {LdltOptions{.nemin = 4, .small_flops = 0, .simplicial_switch = 0, .block_size = 8,
                                             .zero_diagonal_attempt = ZeroDiagonalAttempt::Always},
                                 LdltOptions{.zero_diagonal_attempt = ZeroDiagonalAttempt::Always},
                                 LdltOptions{}}) {
      Ldlt l(o);
      l.analyze(A);
      const FactorInfo fi = l.factorize(A);
      SCOPED_TRACE(::testing::Message() << "trial " << trial << " mode " << to_string(fi.mode) << " pivoting "
                                        << to_string(fi.pivoting));
      expect_inertia(fi.inertia, want);
      EXPECT_FALSE(fi.singular);
      if (fi.pivoting == Pivoting::None) {
        ++kept_unpivoted;
        EXPECT_EQ(fi.delayed + fi.two_by_two + fi.static_pivots, 0);
        EXPECT_GT(fi.growth, 0.0);  // zero diagonal entries: growth is measured
        EXPECT_LE(fi.growth, LdltOptions{}.growth_limit);
      } else {
        ++pivoted;
      }
      const auto x = l.solve(b);
      EXPECT_LE(relres(A, x, b), 1e-12);
      EXPECT_LE(l.solve_info().backward_error, 1e-14);
      EXPECT_FALSE(l.solve_info().refactorized);
      // threshold pivoting alone gives the same inertia
      LdltOptions ot = o;
      ot.try_unpivoted = false;
      Ldlt t(ot);
      t.analyze(A);
      expect_inertia(t.factorize(A).inertia, want);
    }
  }
  EXPECT_GE(trials, 8);
  EXPECT_GT(kept_unpivoted, 0);  // the zero-diagonal unpivoted path ran and was kept
  RecordProperty("kept_unpivoted", kept_unpivoted);
  RecordProperty("pivoted", pivoted);
}

TEST(SparseLdltSaddle, ZeroDiagonalColumnFirstFallsBackToPivoting) {
  // Natural order puts the zero-diagonal constraint rows first: their pivots are exactly
  // zero, the unpivoted attempt stops, and threshold pivoting (2x2 pivots) gives the inertia.
  std::mt19937 g(32);
  auto A0 = saddle(80, 30, 3, 0, false, g);
  // reverse the order: constraints first
  const int n = A0.n_cols;
  std::vector<int> r, c;
  std::vector<double> v;
  for (int j = 0; j < n; ++j)
    for (int k = A0.col_ptr[j]; k < A0.col_ptr[j + 1]; ++k) {
      const int i = n - 1 - A0.row_idx[k], jj = n - 1 - j;
      r.push_back(std::max(i, jj)), c.push_back(std::min(i, jj)), v.push_back(A0.values[k]);
    }
  auto A = from_triplets(n, n, r, c, v, true);
  const Inertia want = dense_inertia(A);
  Ldlt l({.ordering = Ordering::Natural, .small_flops = 0, .simplicial_switch = 0,
          .zero_diagonal_attempt = ZeroDiagonalAttempt::Always});
  l.analyze(A);
  const FactorInfo fi = l.factorize(A);
  EXPECT_EQ(fi.attempts, 2);
  EXPECT_EQ(fi.pivoting, Pivoting::Threshold);
  EXPECT_GT(fi.two_by_two + fi.delayed, 0);
  expect_inertia(fi.inertia, want);
  const auto b = rhs_of(A);
  EXPECT_LE(relres(A, l.solve(b), b), 1e-12);
}

TEST(SparseLdltSaddle, BadUnpivotedFactorizationIsReplacedInSolve) {
  // [delta, e^T; e, K] with a tiny delta first (natural order), e dense and K zero on its
  // diagonal: the unpivoted Schur complement K - e e^T / delta drowns K in rounding. With
  // the growth and zero-pivot tests switched off the attempt is kept (pivoting none, every
  // diagonal entry after the first zero, so any sign goes); refinement with it cannot reach
  // unpivoted_berr (FGMRES off), so solve() refactorizes with threshold pivoting and solves
  // again to eps. With the default growth limit the attempt is rejected in factorize.
  const int m = 40, n = 1 + m;
  std::mt19937 g(33);
  std::uniform_real_distribution<double> U(-1, 1), P(0, 1);
  std::vector<int> r, c;
  std::vector<double> v;
  r.push_back(0), c.push_back(0), v.push_back(1e-15);
  for (int i = 1; i < n; ++i) r.push_back(i), c.push_back(0), v.push_back(0.5 + 0.5 * std::fabs(U(g)));
  for (int j = 1; j < n; ++j) {
    r.push_back(j), c.push_back(j), v.push_back(0.0);
    if (j % 2 == 1) r.push_back(j + 1), c.push_back(j), v.push_back(1.0 + U(g) * 0.2);  // pairs
    for (int i = j + 2; i < n; ++i)
      if (P(g) < 0.1) r.push_back(i), c.push_back(j), v.push_back(0.3 * U(g));
  }
  auto A = from_triplets(n, n, r, c, v, true);
  const Inertia want = dense_inertia(A, 1e-14);
  ASSERT_EQ(want.zero, 0);
  const auto b = rhs_of(A);
  for (double simplicial_switch : {0.0, 1e9}) {
    SCOPED_TRACE(simplicial_switch);
    Ldlt loose({.ordering = Ordering::Natural, .small_flops = 0, .simplicial_switch = simplicial_switch,
                .zero_pivot = 0, .zero_diagonal_attempt = ZeroDiagonalAttempt::Always, .growth_limit = 1e300,
                .max_fgmres = 0});
    loose.analyze(A);
    const FactorInfo f0 = loose.factorize(A);
    ASSERT_EQ(f0.pivoting, Pivoting::None);
    EXPECT_GT(f0.growth, 1e10);
    const auto x = loose.solve(b);
    EXPECT_TRUE(loose.solve_info().refactorized);
    EXPECT_EQ(loose.factor_info().pivoting, Pivoting::Threshold);
    EXPECT_EQ(loose.factor_info().attempts, f0.attempts + 1);
    expect_inertia(loose.factor_info().inertia, want);
    EXPECT_LE(loose.solve_info().backward_error, 1e-14);
    EXPECT_LE(relres(A, x, b), 1e-12);
    const auto x2 = loose.solve(b);  // the pivoted factors stay
    EXPECT_FALSE(loose.solve_info().refactorized);
    EXPECT_EQ(x2, x);

    Ldlt strict({.ordering = Ordering::Natural, .small_flops = 0, .simplicial_switch = simplicial_switch,
                 .zero_pivot = 0});
    strict.analyze(A);
    const FactorInfo fs = strict.factorize(A);
    EXPECT_EQ(fs.pivoting, Pivoting::Threshold);
    expect_inertia(fs.inertia, want);
    EXPECT_LE(relres(A, strict.solve(b), b), 1e-12);
    EXPECT_FALSE(strict.solve_info().refactorized);
  }
  EXPECT_THROW(Ldlt({.unpivoted_berr = -1}), Error);
}

TEST(SparseLdltSaddle, StructurallySingularKktIsReportedSingular) {
  // Four constraint rows without entries: four zero columns (a zero column block), so four
  // zero eigenvalues; factorize reports singular with that inertia and returns, under
  // every ordering and mode, and the solve returns (saying singular).
  std::mt19937 g(34);
  const int n1 = 120, m1 = 40, empty = 4;
  auto A = saddle(n1, m1, 3, 0, false, g, empty);
  const Inertia want = dense_inertia(A);
  ASSERT_EQ(want.zero, empty);
  for (auto ord : {Ordering::Amd, Ordering::Metis, Ordering::Natural})
    for (double sw : {0.0, 60.0}) {
      SCOPED_TRACE(::testing::Message() << to_string(ord) << " simplicial_switch " << sw);
      Ldlt l({.ordering = ord, .small_flops = 0, .simplicial_switch = sw});
      l.analyze(A);
      const FactorInfo fi = l.factorize(A);
      EXPECT_TRUE(fi.singular);
      EXPECT_EQ(fi.static_pivots, empty);
      expect_inertia(fi.inertia, want);
      auto b = rhs_of(A);  // consistent: the empty rows of b are zero
      const auto x = l.solve(b);
      EXPECT_TRUE(l.solve_info().singular);
      EXPECT_LE(l.solve_info().backward_error, 1e-12);
      EXPECT_EQ(x.size(), b.size());
    }
}
