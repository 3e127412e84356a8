// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/unit/test_sparse_ldlt_dense.cpp — Ldlt against dense references (no runtime).
//
// Inertia is compared with the signs of LAPACKE_dsyev eigenvalues (exact counts) on
// random SPD, indefinite, KKT and singular matrices, dense and sparse, under every
// ordering; solutions with refinement must reach a backward error near eps and a
// relative residual <= 1e-10; refactorization reuses the analysis; misuse throws; the
// simplicial mode is kept exactly when threshold pivoting would take the diagonal pivots;
// rcond() agrees with the dense inverse's 1-norm condition number and flags a matrix
// singular to working precision whose pivots pass; METIS analyses in concurrent threads
// reproduce the serial ordering, equal a plain METIS_NodeND call's, and leave the
// caller's rand() sequence alone.
#include <gtest/gtest.h>
#include <lapacke.h>
#include <metis.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <thread>

#include "sparse/ldlt_internal.hpp"
#include "stardiff/sparse/csc_matrix.hpp"
#include "stardiff/sparse/ldlt.hpp"
#include "single_thread_blas.hpp"
#include "sparse_dense_inertia.hpp"
#include "sparse_laplacian.hpp"
#include "sparse_residual.hpp"
#include "sparse_wide.hpp"
#include "support/scoped_env.hpp"

using namespace stardiff;
using namespace stardiff::sparse;
using stardiff::testing::dense_inertia;
using stardiff::testing::laplacian3d;
using stardiff::testing::relres;

namespace {

// Dense symmetric n x n (column-major, full) to lower CSC keeping entries where keep().
CscMatrix32 to_csc(int n, const std::vector<double>& D, bool keep_zeros = false) {
  std::vector<int> r, c;
  std::vector<double> v;
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) {
      double a = D[i + std::size_t(j) * n];
      if (a != 0.0 || i == j || keep_zeros) {
        r.push_back(i);
        c.push_back(j);
        v.push_back(a);
      }
    }
  return from_triplets(n, n, r, c, v, true);
}

std::vector<double> to_dense(const CscMatrix32& A) {
  int n = A.n_cols;
  std::vector<double> D(std::size_t(n) * n, 0.0);
  for (int j = 0; j < n; ++j)
    for (int k = A.col_ptr[j]; k < A.col_ptr[j + 1]; ++k) {
      D[A.row_idx[k] + std::size_t(j) * n] = A.values[k];
      D[j + std::size_t(A.row_idx[k]) * n] = A.values[k];
    }
  return D;
}

// Q diag(lambda) Q^T with a random orthogonal Q (product of Householder reflections).
std::vector<double> spectral(const std::vector<double>& lambda, std::mt19937& g) {
  int n = int(lambda.size());
  std::normal_distribution<double> N;
  std::vector<double> M(std::size_t(n) * n, 0.0);
  for (int i = 0; i < n; ++i) M[i + std::size_t(i) * n] = lambda[i];
  for (int h = 0; h < 3; ++h) {
    std::vector<double> v(n);
    double nv = 0;
    for (auto& x : v) {
      x = N(g);
      nv += x * x;
    }
    for (auto& x : v) x /= std::sqrt(nv);
    // M = H M H, H = I - 2 v v^T
    std::vector<double> Mv(n, 0.0);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) Mv[i] += M[i + std::size_t(j) * n] * v[j];
    double vMv = 0;
    for (int i = 0; i < n; ++i) vMv += v[i] * Mv[i];
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i)
        M[i + std::size_t(j) * n] += -2 * v[i] * Mv[j] - 2 * Mv[i] * v[j] + 4 * vMv * v[i] * v[j];
  }
  return M;
}

// Random sparse symmetric: each off-diagonal (i>j) present with probability p.
CscMatrix32 random_sparse(int n, double p, double diag, std::mt19937& g, bool zero_diag_part = false, int nzero = 0) {
  std::uniform_real_distribution<double> U(-1, 1), P(0, 1);
  std::vector<int> r, c;
  std::vector<double> v;
  for (int j = 0; j < n; ++j) {
    r.push_back(j);
    c.push_back(j);
    v.push_back(zero_diag_part && j >= n - nzero ? 0.0 : diag + U(g));
    for (int i = j + 1; i < n; ++i)
      if (P(g) < p) {
        r.push_back(i);
        c.push_back(j);
        v.push_back(U(g));
      }
  }
  return from_triplets(n, n, r, c, v, true);
}

// n x n (n even): [[0, 1 + k], [1 + k, 0]] blocks at k = 0, 2, ..., coupled weakly (0.1)
// to the next block: no diagonal pivot anywhere, inertia n/2 positive, n/2 negative.
CscMatrix32 zero_diagonal_pairs(int n) {
  std::vector<double> D(std::size_t(n) * n, 0.0);
  for (int k = 0; k < n; k += 2) {
    D[k + 1 + std::size_t(k) * n] = D[k + std::size_t(k + 1) * n] = 1.0 + k;
    if (k + 2 < n) D[k + 2 + std::size_t(k) * n] = D[k + std::size_t(k + 2) * n] = 0.1;
  }
  return to_csc(n, D);
}

void expect_inertia(const Inertia& got, const Inertia& want) {
  EXPECT_EQ(got.pos, want.pos);
  EXPECT_EQ(got.neg, want.neg);
  EXPECT_EQ(got.zero, want.zero);
}

std::vector<double> ones_rhs(const CscMatrix32& A) {
  std::vector<double> x(A.n_cols), b(A.n_cols);
  for (int i = 0; i < A.n_cols; ++i) x[i] = 1.0 + 0.01 * i;
  multiply(A, x.data(), b.data());
  return b;
}

}  // namespace

TEST(SparseLdltDense, SpdDenseSolvesAndInertia) {
  std::mt19937 g(1);
  std::vector<double> lam(40);
  for (int i = 0; i < 40; ++i) lam[i] = 1.0 + i;
  auto A = to_csc(40, spectral(lam, g));
  Ldlt ldlt;
  ldlt.analyze(A);
  auto fi = ldlt.factorize(A);
  expect_inertia(fi.inertia, {40, 0, 0});
  EXPECT_FALSE(fi.singular);
  auto b = ones_rhs(A);
  auto x = ldlt.solve(b);
  EXPECT_LE(relres(A, x, b), 1e-12);
  EXPECT_LE(ldlt.solve_info().backward_error, 1e-14);
}

TEST(SparseLdltDense, IndefiniteDenseNeedsPivoting) {
  std::mt19937 g(2);
  std::vector<double> lam(60);
  for (int i = 0; i < 60; ++i) lam[i] = (i % 3 == 0 ? -1.0 : 1.0) * (0.5 + i);
  auto D = spectral(lam, g);
  // zero diagonal: unpivoted LDL^T would break down at once
  for (int i = 0; i < 60; i += 7) D[i + std::size_t(i) * 60] = 0.0;
  auto A = to_csc(60, D, true);
  Inertia want = dense_inertia(A);
  for (auto ord : {Ordering::Natural, Ordering::Amd, Ordering::Metis}) {
    Ldlt ldlt({.ordering = ord, .block_size = 8});
    ldlt.analyze(A);
    auto fi = ldlt.factorize(A);
    expect_inertia(fi.inertia, want);
    EXPECT_FALSE(fi.singular);
    auto b = ones_rhs(A);
    auto x = ldlt.solve(b);
    EXPECT_LE(relres(A, x, b), 1e-11) << to_string(ord);
  }
}

TEST(SparseLdltDense, ZeroDiagonal2x2Pivots) {
  // [[0, 1], [1, 0]] blocks coupled weakly: needs 2x2 pivots, inertia n/2 each.
  const int n = 40;
  auto A = zero_diagonal_pairs(n);
  Ldlt ldlt;
  ldlt.analyze(A);
  auto fi = ldlt.factorize(A);
  expect_inertia(fi.inertia, {n / 2, n / 2, 0});
  EXPECT_GT(fi.two_by_two, 0);
  auto b = ones_rhs(A);
  auto x = ldlt.solve(b);
  EXPECT_LE(relres(A, x, b), 1e-12);
}

TEST(SparseLdltDense, SingularReportsZeroEigenvalues) {
  std::mt19937 g(3);
  std::vector<double> lam(30);
  for (int i = 0; i < 30; ++i) lam[i] = (i % 2 ? -1.0 : 1.0) * (1.0 + i);
  lam[4] = lam[11] = lam[20] = 0.0;
  auto A = to_csc(30, spectral(lam, g));
  Ldlt ldlt;
  ldlt.analyze(A);
  auto fi = ldlt.factorize(A);
  EXPECT_TRUE(fi.singular);
  expect_inertia(fi.inertia, dense_inertia(A));
  EXPECT_EQ(fi.inertia.zero, 3);
  EXPECT_EQ(fi.static_pivots, 3);
  EXPECT_EQ(ldlt.rcond(), 0.0);  // static pivots: singular, no estimate needed
}

TEST(SparseLdltDense, SolveAfterSingularFactorizationSaysSingular) {
  // [[1, 1], [1, 1]]: a static pivot; the solve's small backward error does not vouch for x.
  auto A = from_triplets(2, 2, {0, 1, 1}, {0, 0, 1}, {1.0, 1.0, 1.0}, true);
  Ldlt ldlt;
  ldlt.analyze(A);
  ASSERT_TRUE(ldlt.factorize(A).singular);
  ldlt.solve({1.0, 2.0});
  EXPECT_TRUE(ldlt.solve_info().singular);
  auto B = from_triplets(2, 2, {0, 1, 1}, {0, 0, 1}, {2.0, 1.0, 2.0}, true);
  ldlt.factorize(B);
  ldlt.solve({1.0, 2.0});
  EXPECT_FALSE(ldlt.solve_info().singular);
}

TEST(SparseLdltDense, ZeroMatrixIsSingular) {
  std::vector<double> D(25, 0.0);
  auto A = to_csc(5, D);
  Ldlt ldlt;
  ldlt.analyze(A);
  auto fi = ldlt.factorize(A);
  EXPECT_TRUE(fi.singular);
  expect_inertia(fi.inertia, {0, 0, 5});
}

TEST(SparseLdltDense, RandomSparseAllOrderings) {
  std::mt19937 g(4);
  for (int trial = 0; trial < 6; ++trial) {
    int n = 150 + 40 * trial;
    double diag = trial % 2 ? 0.0 : 8.0;  // even: SPD-ish; odd: indefinite
    auto A = random_sparse(n, 4.0 / n, diag, g);
    Inertia want = dense_inertia(A, 1e-9);
    if (want.zero) continue;
    for (auto ord : {Ordering::Natural, Ordering::Amd, Ordering::Metis, Ordering::Auto}) {
      Ldlt ldlt({.ordering = ord, .nemin = 8, .small_flops = 0, .block_size = 16});
      ldlt.analyze(A);
      auto fi = ldlt.factorize(A);
      expect_inertia(fi.inertia, want);
      auto b = ones_rhs(A);
      auto x = ldlt.solve(b);
      EXPECT_LE(relres(A, x, b), 1e-10) << "trial " << trial << " " << to_string(ord);
      EXPECT_LE(ldlt.solve_info().backward_error, 1e-14);
    }
  }
}

TEST(SparseLdltDense, KktInertia) {
  // [[H, B^T], [B, 0]]: H SPD (n1), B (m1 x n1) full rank: inertia (n1, m1, 0).
  std::mt19937 g(5);
  std::uniform_real_distribution<double> U(-1, 1);
  int n1 = 200, m1 = 80, n = n1 + m1;
  std::vector<int> r, c;
  std::vector<double> v;
  for (int j = 0; j < n1; ++j) {
    r.push_back(j), c.push_back(j), v.push_back(4.0);
    if (j + 1 < n1) r.push_back(j + 1), c.push_back(j), v.push_back(-1.0);
  }
  for (int i = 0; i < m1; ++i) {
    r.push_back(n1 + i), c.push_back(2 * i), v.push_back(1.0 + 0.1 * U(g));
    r.push_back(n1 + i), c.push_back(2 * i + 1), v.push_back(U(g));
    r.push_back(n1 + i), c.push_back((7 * i + 3) % n1), v.push_back(0.5 * U(g));
  }
  auto A = from_triplets(n, n, r, c, v, true);
  Inertia want = dense_inertia(A);
  ASSERT_EQ(want.pos, n1);
  ASSERT_EQ(want.neg, m1);
  for (auto ord : {Ordering::Natural, Ordering::Amd, Ordering::Metis}) {
    Ldlt ldlt({.ordering = ord, .nemin = 4, .small_flops = 0, .block_size = 8});
    ldlt.analyze(A);
    auto fi = ldlt.factorize(A);
    expect_inertia(fi.inertia, want);
    auto b = ones_rhs(A);
    auto x = ldlt.solve(b);
    EXPECT_LE(relres(A, x, b), 1e-11) << to_string(ord);
  }
}

TEST(SparseLdltDense, SingularSparseLaplacian) {
  // Neumann graph Laplacian of a 12 x 12 grid: one zero eigenvalue.
  int k = 12, n = k * k;
  std::vector<int> r, c;
  std::vector<double> v;
  std::vector<double> deg(n, 0.0);
  for (int y = 0; y < k; ++y)
    for (int x = 0; x < k; ++x) {
      int i = x + k * y;
      if (x + 1 < k) r.push_back(i + 1), c.push_back(i), v.push_back(-1.0), deg[i] += 1, deg[i + 1] += 1;
      if (y + 1 < k) r.push_back(i + k), c.push_back(i), v.push_back(-1.0), deg[i] += 1, deg[i + k] += 1;
    }
  for (int i = 0; i < n; ++i) r.push_back(i), c.push_back(i), v.push_back(deg[i]);
  auto A = from_triplets(n, n, r, c, v, true);
  for (auto ord : {Ordering::Amd, Ordering::Metis}) {
    Ldlt ldlt({.ordering = ord, .small_flops = 0});
    ldlt.analyze(A);
    auto fi = ldlt.factorize(A);
    EXPECT_TRUE(fi.singular);
    expect_inertia(fi.inertia, {n - 1, 0, 1});
  }
}

TEST(SparseLdltDense, MetisAnalysesInConcurrentThreadsReproduceTheSerialOrdering) {
  // METIS draws from the C library's rand(): unserialized, two analyses at once
  // interleave one sequence and both orderings differ from the serial one.
  const auto A = laplacian3d(14);
  const LdltOptions o{.ordering = Ordering::Metis};
  Ldlt serial(o);
  serial.analyze(A);
  const std::vector<std::int32_t> expected = serial.permutation();
  int differing = 0;
  for (int round = 0; round < 6; ++round) {
    std::vector<std::int32_t> got[2];
    std::thread t0([&] {
      Ldlt l(o);
      l.analyze(A);
      got[0] = l.permutation();
    });
    std::thread t1([&] {
      Ldlt l(o);
      l.analyze(A);
      got[1] = l.permutation();
    });
    t0.join();
    t1.join();
    differing += (got[0] != expected) + (got[1] != expected);
  }
  EXPECT_EQ(differing, 0);
}

TEST(SparseLdltDense, MetisAnalysisLeavesTheCallersRandSequence) {
  const auto A = laplacian3d(10);
  std::srand(77);
  const int first = std::rand(), second = std::rand();
  std::srand(77);
  EXPECT_EQ(std::rand(), first);
  Ldlt ldlt({.ordering = Ordering::Metis});
  ldlt.analyze(A);  // METIS reseeds rand() and draws from it
  EXPECT_EQ(std::rand(), second);
}

TEST(SparseLdltDense, MetisOrderingIsThatOfAPlainMetisCall) {
  // The guard's private rand() state must be glibc's default generator: another one
  // seeded alike gives another sequence, hence another ordering than METIS gives in any
  // program that calls it directly.
  const auto A = laplacian3d(10);
  const int n = A.n_cols;
  std::vector<std::vector<idx_t>> adj(n);
  for (int j = 0; j < n; ++j)
    for (int k = A.col_ptr[j]; k < A.col_ptr[j + 1]; ++k)
      if (A.row_idx[k] != j) adj[j].push_back(A.row_idx[k]), adj[A.row_idx[k]].push_back(j);
  std::vector<idx_t> xadj(1, 0), adjncy;
  for (auto& a : adj) {
    std::sort(a.begin(), a.end());
    adjncy.insert(adjncy.end(), a.begin(), a.end());
    xadj.push_back(idx_t(adjncy.size()));
  }
  idx_t nv = n, options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_NUMBERING] = 0;
  std::vector<idx_t> perm(n), iperm(n);
  ASSERT_EQ(METIS_NodeND(&nv, xadj.data(), adjncy.data(), nullptr, options, perm.data(), iperm.data()), METIS_OK);
  Ldlt via_metis({.ordering = Ordering::Metis});
  via_metis.analyze(A);
  Ldlt via_user({.ordering = Ordering::User, .user_perm = std::vector<int>(perm.begin(), perm.end())});
  via_user.analyze(A);  // the same postorder of the same elimination tree
  EXPECT_EQ(via_metis.permutation(), via_user.permutation());
}

TEST(SparseLdltDense, MultipleRhsAndRefactorization) {
  std::mt19937 g(6);
  auto A = random_sparse(300, 0.02, 0.0, g);
  Ldlt ldlt({.small_flops = 0});
  const auto& ai = ldlt.analyze(A);
  EXPECT_GT(ai.nnz_l, A.nnz() - 1);
  EXPECT_GT(ai.supernodes, 0);
  EXPECT_EQ(ai.mode, FactorMode::Tree);
  int nrhs = 3;
  std::vector<double> b(300 * nrhs);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = std::sin(double(i));
  ldlt.factorize(A);
  auto x = ldlt.solve(b, nrhs);
  for (int k = 0; k < nrhs; ++k) {
    std::vector<double> xk(x.begin() + 300 * k, x.begin() + 300 * (k + 1));
    std::vector<double> bk(b.begin() + 300 * k, b.begin() + 300 * (k + 1));
    EXPECT_LE(relres(A, xk, bk), 1e-10);
  }
  // new values, same pattern: the analysis is reused (same permutation), solves stay exact
  auto perm = ldlt.permutation();
  auto A2 = A;
  for (auto& v : A2.values) v *= -2.0;
  auto fi2 = ldlt.factorize(A2);
  EXPECT_EQ(ldlt.permutation(), perm);
  auto fi1 = Ldlt().analyze(A);
  (void)fi1;
  Inertia want = dense_inertia(A2);
  expect_inertia(fi2.inertia, want);
  auto x2 = ldlt.solve(std::vector<double>(b.begin(), b.begin() + 300));
  EXPECT_LE(relres(A2, x2, std::vector<double>(b.begin(), b.begin() + 300)), 1e-10);
}

TEST(SparseLdltDense, PredictedNnzMatchesDenseCount) {
  // Arrow matrix, natural order: L is full (n(n+1)/2); reversed: L is the pattern itself.
  int n = 50;
  std::vector<int> r, c;
  std::vector<double> v;
  for (int j = 0; j < n; ++j) {
    r.push_back(j), c.push_back(j), v.push_back(n);
    if (j > 0) r.push_back(j), c.push_back(0), v.push_back(1.0);
  }
  auto A = from_triplets(n, n, r, c, v, true);
  Ldlt nat({.ordering = Ordering::Natural, .nemin = 1});
  EXPECT_EQ(nat.analyze(A).nnz_l, std::int64_t(n) * (n + 1) / 2);
  std::vector<std::int32_t> rev(n);
  for (int i = 0; i < n; ++i) rev[i] = n - 1 - i;
  Ldlt user({.ordering = Ordering::User, .user_perm = rev, .nemin = 1});
  EXPECT_EQ(user.analyze(A).nnz_l, 2 * n - 1);
  EXPECT_EQ(user.analyze_info().ordering, Ordering::User);
  EXPECT_EQ(sparse::detail::predicted_nnz_l(A, rev), 2 * n - 1);
}

TEST(SparseLdltDense, FactorInfoCountsTheLThatWasStored) {
  // Tridiagonal, natural order: exact nnz(L) is the pattern itself (2n - 1), flops
  // sum_j cnt_j^2 = 4(n - 1) + 1. Simplicial mode stores exactly that, below the analysis's
  // supernodal prediction (relaxed amalgamation merges the one-column supernodes and
  // stores explicit zeros); the multifrontal factorization stores the prediction.
  int n = 200;
  std::vector<int> r, c;
  std::vector<double> v;
  for (int j = 0; j < n; ++j) {
    r.push_back(j), c.push_back(j), v.push_back(4.0);
    if (j + 1 < n) r.push_back(j + 1), c.push_back(j), v.push_back(-1.0);
  }
  auto A = from_triplets(n, n, r, c, v, true);
  Ldlt simp({.ordering = Ordering::Natural});
  const std::int64_t predicted = simp.analyze(A).nnz_l;
  const FactorInfo fs = simp.factorize(A);
  ASSERT_EQ(fs.mode, FactorMode::Simplicial);
  EXPECT_EQ(fs.nnz_l, 2 * n - 1);
  EXPECT_EQ(fs.flops, 4.0 * (n - 1) + 1);
  EXPECT_GT(predicted, 2 * n - 1);
  Ldlt multi({.ordering = Ordering::Natural, .simplicial_switch = 0});
  EXPECT_EQ(multi.analyze(A).nnz_l, predicted);
  const FactorInfo fm = multi.factorize(A);
  EXPECT_NE(fm.mode, FactorMode::Simplicial);
  EXPECT_EQ(fm.delayed, 0);
  EXPECT_EQ(fm.nnz_l, predicted);
  EXPECT_GT(fm.flops, fs.flops);
}

TEST(SparseLdltDense, Int64IndicesGiveTheSameFactorization) {
  // An int64-indexed matrix is narrowed (to_csc32) and factorized like its int32 twin:
  // same factors bitwise, same solution; a pattern that changes between analyze and
  // factorize is still rejected.
  std::mt19937 g(17);
  auto A = random_sparse(120, 0.05, 0.0, g);  // indefinite
  const CscMatrix64 W = stardiff::testing::widen(A);
  Ldlt narrow, wide;
  EXPECT_EQ(narrow.analyze(A).nnz_l, wide.analyze(W).nnz_l);
  const auto fa = narrow.factorize(A);
  const auto fw = wide.factorize(W);
  EXPECT_EQ(narrow.factor_hash(), wide.factor_hash());
  expect_inertia(fa.inertia, fw.inertia);
  expect_inertia(fw.inertia, dense_inertia(A));
  auto b = ones_rhs(A);
  EXPECT_EQ(narrow.solve(b), wide.solve(b));
  EXPECT_LE(relres(A, wide.solve(b), b), 1e-12);
  CscMatrix64 V = W;
  V.row_idx.back() = W.n_rows;  // out of range
  EXPECT_THROW(wide.factorize(V), Error);
}

TEST(SparseLdltDense, MisuseThrows) {
  std::mt19937 g(7);
  auto A = random_sparse(20, 0.2, 5.0, g);
  Ldlt ldlt;
  EXPECT_THROW(ldlt.factorize(A), Error);
  EXPECT_THROW(ldlt.solve(std::vector<double>(20, 1.0)), Error);
  EXPECT_THROW(ldlt.rcond(), Error);
  ldlt.analyze(A);
  EXPECT_THROW(ldlt.rcond(), Error);
  EXPECT_THROW(ldlt.numerically_singular(), Error);
  auto B = random_sparse(21, 0.2, 5.0, g);
  EXPECT_THROW(ldlt.factorize(B), Error);
  auto C = A;
  C.values[3] = std::nan("");
  EXPECT_THROW(ldlt.factorize(C), Error);
  ldlt.factorize(A);
  EXPECT_THROW(ldlt.solve(std::vector<double>(19, 1.0)), Error);
  EXPECT_THROW(ldlt.solve(std::vector<double>(40, 1.0), 3), Error);
  auto U = A;
  U.symmetric_lower = false;
  EXPECT_THROW(Ldlt().analyze(U), Error);
  EXPECT_THROW(Ldlt({.ordering = Ordering::User, .user_perm = {0, 1}}).analyze(A), Error);
  EXPECT_THROW(ordering_from_string("rcm"), Error);
  EXPECT_EQ(ordering_from_string("metis"), Ordering::Metis);
  EXPECT_THROW(Ldlt({.pivot_threshold = 0.9}), Error);
  EXPECT_THROW(Ldlt({.growth_limit = 0}), Error);
  EXPECT_THROW(Ldlt({.growth_limit = std::nan("")}), Error);
}

TEST(SparseLdltDense, EmptyMatrix) {
  CscMatrix32 A;
  A.symmetric_lower = true;
  A.col_ptr = {0};
  Ldlt ldlt;
  ldlt.analyze(A);
  auto fi = ldlt.factorize(A);
  EXPECT_FALSE(fi.singular);
  EXPECT_TRUE(ldlt.solve({}).empty());
  EXPECT_EQ(ldlt.rcond(), 1.0);
}

namespace {
// 1 / (||A||_1 ||A^-1||_1) from the dense inverse (LU).
double dense_rcond(const CscMatrix32& A) {
  const int n = A.n_cols;
  auto D = to_dense(A);
  auto norm1 = [n](const std::vector<double>& M) {
    double mx = 0;
    for (int j = 0; j < n; ++j) {
      double c = 0;
      for (int i = 0; i < n; ++i) c += std::fabs(M[i + std::size_t(j) * n]);
      mx = std::max(mx, c);
    }
    return mx;
  };
  const double an = norm1(D);
  std::vector<lapack_int> ipiv(n);
  EXPECT_EQ(LAPACKE_dgetrf(LAPACK_COL_MAJOR, n, n, D.data(), n, ipiv.data()), 0);
  EXPECT_EQ(LAPACKE_dgetri(LAPACK_COL_MAJOR, n, D.data(), n, ipiv.data()), 0);
  return 1.0 / (an * norm1(D));
}
}  // namespace

// Ldlt::rcond against the exact 1-norm condition number (unscaled, so S = I): Hager-Higham
// gives a lower bound on ||A^-1||_1, so the estimate is never below the true rcond and, on
// these matrices, within a factor 3 above it; refactorization with new values re-estimates.
TEST(SparseLdltDense, RcondAgreesWithDenseInverse) {
  std::mt19937 g(21);
  struct Case {
    const char* what;
    CscMatrix32 A;
  };
  std::vector<Case> cases;
  for (double cond : {1e2, 1e6, 1e10}) {  // SPD and indefinite, eigenvalues spread to cond
    std::vector<double> lam(40), mixed(40);
    for (int i = 0; i < 40; ++i) {
      lam[i] = std::pow(cond, -double(i) / 39);
      mixed[i] = (i % 3 ? 1.0 : -1.0) * lam[i];
    }
    cases.push_back({"spd", to_csc(40, spectral(lam, g))});
    cases.push_back({"indefinite", to_csc(40, spectral(mixed, g))});
  }
  for (int t = 0; t < 3; ++t) cases.push_back({"sparse", random_sparse(120, 0.04, t == 1 ? 0.0 : 3.0, g)});
  cases.push_back({"kkt", zero_diagonal_pairs(30)});
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    Ldlt ldlt({.scale = false, .small_flops = 0});
    ldlt.analyze(c.A);
    const auto fi = ldlt.factorize(c.A);
    ASSERT_FALSE(fi.singular);
    const double want = dense_rcond(c.A), got = ldlt.rcond();
    EXPECT_GE(got, want * (1 - 1e-6));
    EXPECT_LE(got, 3 * want);
    EXPECT_EQ(ldlt.rcond(), got);  // cached
  }
  // New values, same pattern: the estimate follows them.
  auto A = cases[0].A;
  Ldlt ldlt({.scale = false});
  ldlt.analyze(A);
  ldlt.factorize(A);
  const double r0 = ldlt.rcond();
  for (int j = 0; j < A.n_cols; ++j) A.values[A.col_ptr[j]] += 10.0;  // diagonal first in each column
  ldlt.factorize(A);
  const double want = dense_rcond(A), got = ldlt.rcond();
  EXPECT_NE(got, r0);
  EXPECT_GE(got, want * (1 - 1e-6));
  EXPECT_LE(got, 3 * want);
}

// Bad scaling alone is not singularity: D B D with B a well-conditioned SPD tridiagonal
// and D spanning 1e-6..1e6 is factored unscaled (a definite simplicial candidate), yet
// rcond() measures the equilibrated matrix; with scale = false it is A's own (tiny).
TEST(SparseLdltDense, RcondIsOfTheEquilibratedMatrix) {
  const int n = 200;
  std::vector<int> r, c;
  std::vector<double> v;
  auto d = [n](int i) { return std::pow(10.0, -6.0 + 12.0 * i / (n - 1)); };
  for (int j = 0; j < n; ++j) {
    r.push_back(j), c.push_back(j), v.push_back(2.5 * d(j) * d(j));
    if (j + 1 < n) r.push_back(j + 1), c.push_back(j), v.push_back(-1.0 * d(j + 1) * d(j));
  }
  const auto A = from_triplets(n, n, r, c, v, true);
  Ldlt ldlt;
  ldlt.analyze(A);
  const auto fi = ldlt.factorize(A);
  EXPECT_EQ(fi.mode, FactorMode::Simplicial);
  EXPECT_GT(ldlt.rcond(), 0.05);  // B's own: eigenvalues in (0.5, 4.5)
  EXPECT_LE(ldlt.rcond(), 1.0);
  Ldlt raw({.scale = false});
  raw.analyze(A);
  raw.factorize(A);
  EXPECT_LT(raw.rcond(), 1e-20);
}

// A matrix singular to working precision whose last pivot is pure rounding, and kept as a
// pivot (zero_pivot = 0): [B, Bw; w^T B, w^T B w] with B SPD has rank n - 1 in exact
// arithmetic. FactorInfo::singular (which sees only static pivots) misses it; rcond() < eps.
TEST(SparseLdltDense, RcondFlagsSingularToWorkingPrecision) {
  std::mt19937 g(22);
  std::normal_distribution<double> N;
  const int m = 30, n = 31;
  std::vector<double> lam(m);
  for (int i = 0; i < m; ++i) lam[i] = 1.0 + i;
  const auto B = spectral(lam, g);
  std::vector<double> w(m), Bw(m, 0.0);
  for (auto& x : w) x = N(g);
  for (int j = 0; j < m; ++j)
    for (int i = 0; i < m; ++i) Bw[i] += B[i + std::size_t(j) * m] * w[j];
  double wBw = 0;
  for (int i = 0; i < m; ++i) wBw += w[i] * Bw[i];
  std::vector<double> E(std::size_t(n) * n);
  for (int j = 0; j < m; ++j)
    for (int i = 0; i < m; ++i) E[i + std::size_t(j) * n] = B[i + std::size_t(j) * m];
  for (int i = 0; i < m; ++i) E[i + std::size_t(m) * n] = E[m + std::size_t(i) * n] = Bw[i];
  E[m + std::size_t(m) * n] = wBw;
  const auto A = to_csc(n, E);
  Ldlt full({.ordering = Ordering::Natural, .scale = false});
  full.analyze(A);
  EXPECT_TRUE(full.factorize(A).singular);  // the default threshold sees the tiny pivot
  EXPECT_EQ(full.rcond(), 0.0);
  EXPECT_TRUE(full.numerically_singular());
  Ldlt ldlt({.ordering = Ordering::Natural, .scale = false, .zero_pivot = 0, .try_unpivoted = false});
  ldlt.analyze(A);
  const auto fi = ldlt.factorize(A);
  ASSERT_EQ(fi.static_pivots, 0);
  EXPECT_FALSE(fi.singular);
  EXPECT_LT(ldlt.rcond(), std::numeric_limits<double>::epsilon());
  EXPECT_TRUE(ldlt.numerically_singular());
  // the leading block alone is well conditioned: 1 / (||B||_1 ||B^-1||_1) >= 1 / (n cond_2)
  const auto Bc = to_csc(m, B);
  Ldlt lb({.scale = false});
  lb.analyze(Bc);
  lb.factorize(Bc);
  EXPECT_GT(lb.rcond(), 1.0 / (m * 30.0));
  EXPECT_FALSE(lb.numerically_singular());
}

TEST(SparseLdltDense, SplitFrontsMatchWholeFronts) {
  // Large fronts as panel/update tasks (forced by tiny split_flops) give the same inertia
  // and accurate solutions as whole-front tasks: SPD (no degradation) and indefinite
  // with delayed columns (degraded fronts fall back to the whole-front kernel).
  std::mt19937 g(8);
  auto spd = random_sparse(400, 0.03, 30.0, g);
  auto ind = random_sparse(400, 0.03, 0.0, g);
  for (const auto* A : {&spd, &ind}) {
    Inertia want = dense_inertia(*A);
    ASSERT_EQ(want.zero, 0);
    Ldlt whole({.small_flops = 0, .subtree_flops = 1e4, .block_size = 8, .split_flops = 0});
    Ldlt split({.small_flops = 0, .subtree_flops = 1e4, .block_size = 8, .split_flops = 1e4});
    whole.analyze(*A);
    const auto& ai = split.analyze(*A);
    EXPECT_GT(ai.tasks, whole.analyze_info().tasks);
    SequentialExecutor seq;
    RecordingExecutor rec(&seq);
    auto f1 = whole.factorize(*A);
    auto f2 = split.factorize(*A, &rec);
    EXPECT_GT(rec.counts()["ldlt_big_panel"], 0u);
    EXPECT_GT(rec.counts()["ldlt_big_update"], 0u);
    EXPECT_EQ(std::int64_t(rec.tasks_submitted()), f2.attempts * (ai.tasks - 1) + 1);
    EXPECT_EQ(std::int64_t(rec.tasks_submitted()), f2.tasks);
    expect_inertia(f1.inertia, want);
    expect_inertia(f2.inertia, want);
    auto b = ones_rhs(*A);
    EXPECT_LE(relres(*A, split.solve(b), b), 1e-11);
    if (A == &spd) EXPECT_EQ(f2.delayed, 0);
    // A split front is factorized in place (its buffer becomes its L; the parent reads
    // its contribution block there): refactorizing reuses those buffers, bitwise alike.
    const std::uint64_t h = split.factor_hash();
    split.factorize(*A);
    EXPECT_EQ(split.factor_hash(), h);
    auto A2 = *A;
    for (double& v : A2.values) v *= -3.0;  // new values, same pattern: inertia flips
    const auto f3 = split.factorize(A2);
    expect_inertia(f3.inertia, {want.neg, want.pos, 0});
    EXPECT_LE(relres(A2, split.solve(b), b), 1e-11);
    split.factorize(*A);
    EXPECT_EQ(split.factor_hash(), h);
  }
}

TEST(SparseLdltDense, ForkJoinFrontsOnOneThreadMatchSplitFronts) {
  // STARDIFF_LDLT_FORK_JOIN=force on the sequential executor: each split front one task
  // running its steps in order on one thread: factors bitwise the split tasks'; "0" and the
  // default (1: only with combined workers of >= 3 CPUs, never here) keep the split tasks.
  std::mt19937 g(8);
  auto spd = random_sparse(400, 0.03, 30.0, g);
  auto ind = random_sparse(400, 0.03, 0.0, g);
  const LdltOptions opts{.small_flops = 0, .subtree_flops = 1e4, .block_size = 8, .split_flops = 1e4};
  for (const auto* A : {&spd, &ind}) {
    std::uint64_t h[3];
    std::size_t fork_join[3], panels[3];
    const char* modes[3] = {"0", "1", "force"};
    for (int k = 0; k < 3; ++k) {
      stardiff::testing::ScopedEnv env("STARDIFF_LDLT_FORK_JOIN", modes[k]);
      Ldlt l(opts);
      l.analyze(*A);
      SequentialExecutor seq;
      RecordingExecutor rec(&seq);
      const auto fi = l.factorize(*A, &rec);
      h[k] = l.factor_hash();
      fork_join[k] = rec.counts()["ldlt_big_fork_join"];
      panels[k] = rec.counts()["ldlt_big_panel"];
      expect_inertia(fi.inertia, dense_inertia(*A));
      auto b = ones_rhs(*A);
      EXPECT_LE(relres(*A, l.solve(b), b), 1e-12);
    }
    EXPECT_EQ(h[0], h[2]);
    EXPECT_EQ(h[1], h[2]);
    EXPECT_EQ(fork_join[0] + fork_join[1], 0u);
    EXPECT_GT(panels[0], 0u);
    EXPECT_GT(fork_join[2], 0u);
    EXPECT_EQ(panels[2], 0u);
  }
}

TEST(SparseLdltDense, ForkJoinVariableBadValueIsAnError) {
  std::mt19937 g(8);
  auto A = random_sparse(200, 0.03, 30.0, g);
  Ldlt l({.small_flops = 0, .subtree_flops = 1e4, .block_size = 8, .split_flops = 1e4});
  l.analyze(A);
  {
    stardiff::testing::ScopedEnv env("STARDIFF_LDLT_FORK_JOIN", "yes");
    try {
      l.factorize(A);
      FAIL() << "expected an Error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("STARDIFF_LDLT_FORK_JOIN"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("'yes'"), std::string::npos) << e.what();
    }
  }
  const auto fi = l.factorize(A);  // unchanged solver, good value again
  EXPECT_EQ(fi.inertia.pos, A.n_cols);
}

TEST(SparseLdltDense, StaticPivotsRecoveredByRefinementAndFgmres) {
  // An aggressive zero-pivot tolerance turns genuine small pivots into static pivots
  // (sqrt(eps) in size): the factorization is then of a perturbed matrix, plain
  // refinement stalls, and FGMRES preconditioned by it still reaches eps backward error.
  std::mt19937 g(9);
  auto A = random_sparse(300, 0.02, 0.0, g);
  Ldlt l({.small_flops = 0, .zero_pivot = 0.2, .fgmres_restart = 20, .max_fgmres = 200});
  l.analyze(A);
  auto fi = l.factorize(A);
  EXPECT_GT(fi.static_pivots, 0);
  EXPECT_TRUE(fi.singular);
  auto b = ones_rhs(A);
  auto x = l.solve(b);
  const auto& si = l.solve_info();
  EXPECT_GT(si.fgmres_iters, 0) << "refine " << si.refine_iters << " static " << fi.static_pivots;
  EXPECT_LE(si.backward_error, 1e-14);
  EXPECT_LE(relres(A, x, b), 1e-10);
}

TEST(SparseLdltDense, SimplicialModeKeptOnlyWhenThresholdPivotingAgrees) {
  // A sparse SPD matrix with tiny supernodes: SuiteSparse LDL's factorization is kept
  // ("simplicial"), equals the multifrontal one's inertia and solves to eps. The same
  // matrix with zero diagonal 2x2 structure needs pivots: the simplicial attempt is
  // rejected (a zero pivot or a multiplier above 1/u) and the multifrontal path runs.
  std::mt19937 g(9);
  auto A = random_sparse(300, 0.004, 4.0, g);
  Ldlt simp;
  ASSERT_EQ(simp.analyze(A).mode, FactorMode::Simplicial);
  const auto fs = simp.factorize(A);
  EXPECT_EQ(fs.mode, FactorMode::Simplicial);
  EXPECT_EQ(fs.two_by_two + fs.delayed + fs.static_pivots, 0);
  Ldlt multi({.simplicial_switch = 0});
  ASSERT_NE(multi.analyze(A).mode, FactorMode::Simplicial);
  const auto fm = multi.factorize(A);
  EXPECT_NE(fm.mode, FactorMode::Simplicial);
  expect_inertia(fs.inertia, fm.inertia);
  expect_inertia(fs.inertia, dense_inertia(A));
  auto b = ones_rhs(A);
  auto x = simp.solve(b);
  EXPECT_LE(relres(A, x, b), 1e-14);
  EXPECT_NE(simp.factor_hash(), multi.factor_hash());

  const int n = 60;
  auto K = zero_diagonal_pairs(n);
  Ldlt kkt;
  ASSERT_EQ(kkt.analyze(K).mode, FactorMode::Simplicial);  // a candidate by its structure
  const auto fk = kkt.factorize(K);
  EXPECT_EQ(fk.mode, FactorMode::SingleTask);  // ... rejected: the pivoting path ran
  EXPECT_GT(fk.two_by_two, 0);
  expect_inertia(fk.inertia, {n / 2, n / 2, 0});
  auto bk = ones_rhs(K);
  EXPECT_LE(relres(K, kkt.solve(bk), bk), 1e-12);
  // A candidate's supernode row structures are filled only when the multifrontal path
  // first needs them: the result equals that of an analysis that filled them at once.
  Ldlt eager({.simplicial_switch = 0});
  ASSERT_EQ(eager.analyze(K).mode, FactorMode::SingleTask);
  const auto fe = eager.factorize(K);
  EXPECT_EQ(kkt.factor_hash(), eager.factor_hash());
  EXPECT_EQ(fk.two_by_two, fe.two_by_two);
  const auto fk2 = kkt.factorize(K);  // refactorization reuses them
  EXPECT_EQ(fk2.mode, FactorMode::SingleTask);
  EXPECT_EQ(kkt.factor_hash(), eager.factor_hash());
}

TEST(SparseLdltDense, SimplicialRejectsLargeMultipliers) {
  // [[eps, 1], [1, 1]] blocks: diagonal pivots exist, but the multiplier 1/eps exceeds
  // 1/u = 100, so threshold pivoting would swap: the simplicial result is not kept. With
  // u = 0 (no threshold) it is. Both give the exact inertia (one + and one - per block).
  const int n = 40;
  std::vector<double> D(std::size_t(n) * n, 0.0);
  for (int k = 0; k < n; k += 2) {
    D[k + std::size_t(k) * n] = 1e-4;
    D[k + 1 + std::size_t(k + 1) * n] = 1.0;
    D[k + 1 + std::size_t(k) * n] = D[k + std::size_t(k + 1) * n] = 1.0;
  }
  auto A = to_csc(n, D);
  Ldlt strict({.scale = false});
  ASSERT_EQ(strict.analyze(A).mode, FactorMode::Simplicial);
  const auto fs = strict.factorize(A);
  EXPECT_EQ(fs.mode, FactorMode::SingleTask);
  expect_inertia(fs.inertia, {n / 2, n / 2, 0});
  Ldlt loose({.pivot_threshold = 0, .scale = false});
  loose.analyze(A);
  const auto fl = loose.factorize(A);
  EXPECT_EQ(fl.mode, FactorMode::Simplicial);
  expect_inertia(fl.inertia, {n / 2, n / 2, 0});
}

namespace {
// Symmetric quasi-definite [H B^T; B -G]: H (n1) and G (n2) sparse diagonally dominant
// SPD, B sparse with entries up to `coupling` against G's diagonal ~ g: with a large
// coupling the unpivoted multipliers exceed 1/u, so threshold pivoting delays columns.
CscMatrix32 quasi_definite(int n1, int n2, double p, double coupling, double g, std::mt19937& rng) {
  std::uniform_real_distribution<double> U(-1, 1), P(0, 1);
  const int n = n1 + n2;
  std::vector<int> r, c;
  std::vector<double> v;
  for (int j = 0; j < n; ++j) {
    r.push_back(j), c.push_back(j), v.push_back(j < n1 ? 4.0 + U(rng) : -g * (2.0 + U(rng)));
    for (int i = j + 1; i < n; ++i) {
      if (!(P(rng) < p)) continue;
      const bool cross = j < n1 && i >= n1;
      const double a = cross ? coupling * U(rng) : (j < n1 ? 0.3 : 0.3 * g) * U(rng);
      r.push_back(i), c.push_back(j), v.push_back(a);
    }
  }
  return from_triplets(n, n, r, c, v, true);
}
}  // namespace

TEST(SparseLdltDense, QuasiDefiniteKeepsTheUnpivotedFactorization) {
  // Inertia (n1 +, n2 -) exactly, no delays or 2x2 pivots, growth measured and below the
  // limit, solutions to eps — in multifrontal and simplicial mode. Threshold pivoting
  // alone gives the same inertia with delays; a growth limit below the measured growth
  // rejects the attempt (two attempts, threshold kept).
  std::mt19937 g(21);
  const int n1 = 160, n2 = 90;
  auto A = quasi_definite(n1, n2, 0.04, 30.0, 1e-3, g);
  const Inertia want = dense_inertia(A);
  expect_inertia(want, {n1, n2, 0});
  auto b = ones_rhs(A);

  Ldlt multi({.small_flops = 0, .simplicial_switch = 0});
  multi.analyze(A);
  const auto fm = multi.factorize(A);
  EXPECT_EQ(fm.pivoting, Pivoting::None);
  EXPECT_EQ(fm.attempts, 1);
  EXPECT_GT(fm.growth, 0.0);
  EXPECT_LE(fm.growth, LdltOptions{}.growth_limit);
  EXPECT_EQ(fm.delayed + fm.two_by_two + fm.static_pivots, 0);
  expect_inertia(fm.inertia, want);
  EXPECT_LE(relres(A, multi.solve(b), b), 1e-13);

  Ldlt strict({.small_flops = 0, .simplicial_switch = 0, .try_unpivoted = false});
  strict.analyze(A);
  const auto ft = strict.factorize(A);
  EXPECT_EQ(ft.pivoting, Pivoting::Threshold);
  EXPECT_EQ(ft.growth, 0.0);
  EXPECT_GT(ft.delayed, 0);  // what the unpivoted attempt saves
  expect_inertia(ft.inertia, want);

  Ldlt capped({.small_flops = 0, .simplicial_switch = 0, .growth_limit = 0.5 * fm.growth});
  capped.analyze(A);
  const auto fc = capped.factorize(A);
  EXPECT_EQ(fc.pivoting, Pivoting::Threshold);
  EXPECT_EQ(fc.attempts, 2);
  expect_inertia(fc.inertia, want);
  EXPECT_EQ(capped.factor_hash(), strict.factor_hash());  // the threshold factorization, unchanged
  EXPECT_LE(relres(A, capped.solve(b), b), 1e-13);

  // sparser: tiny supernodes, simplicial mode under the same rule
  auto S = quasi_definite(400, 200, 0.003, 30.0, 1e-3, g);
  Ldlt simp;
  ASSERT_EQ(simp.analyze(S).mode, FactorMode::Simplicial);
  const auto fs = simp.factorize(S);
  EXPECT_EQ(fs.mode, FactorMode::Simplicial);
  EXPECT_EQ(fs.pivoting, Pivoting::None);
  EXPECT_GT(fs.growth, 0.0);
  expect_inertia(fs.inertia, dense_inertia(S));
  expect_inertia(fs.inertia, {400, 200, 0});
  auto bs = ones_rhs(S);
  EXPECT_LE(relres(S, simp.solve(bs), bs), 1e-13);
}

TEST(SparseLdltDense, SignMismatchFallsBackToThresholdPivoting) {
  // Positive diagonal but indefinite: some unpivoted pivot must be negative, against its
  // diagonal's sign, so the attempt is rejected and threshold pivoting gives the inertia.
  std::mt19937 g(22);
  auto A = random_sparse(200, 0.05, 1.0, g);
  const Inertia want = dense_inertia(A);
  ASSERT_GT(want.neg, 0);
  Ldlt l({.small_flops = 0, .simplicial_switch = 0});
  l.analyze(A);
  const auto fi = l.factorize(A);
  EXPECT_EQ(fi.pivoting, Pivoting::Threshold);
  EXPECT_EQ(fi.attempts, 2);
  expect_inertia(fi.inertia, want);
  auto b = ones_rhs(A);
  EXPECT_LE(relres(A, l.solve(b), b), 1e-12);
}

TEST(SparseLdltDense, SimplicialBadlyScaledDefiniteMatrices) {
  // A one-signed diagonal is first factored unscaled in simplicial mode: symmetric row and
  // column scalings over 8 orders of magnitude still give the exact inertia (SPD and
  // negative definite) and solutions to eps after refinement.
  std::mt19937 g(23);
  std::uniform_real_distribution<double> E(-4, 4);
  auto A = random_sparse(400, 0.004, 4.0, g);
  std::vector<double> s(A.n_cols);
  for (double& x : s) x = std::pow(10.0, E(g));
  for (int j = 0; j < A.n_cols; ++j)
    for (int k = A.col_ptr[j]; k < A.col_ptr[j + 1]; ++k) A.values[k] *= s[A.row_idx[k]] * s[j];
  for (const double sign : {1.0, -1.0}) {
    CscMatrix32 B = A;
    for (double& v : B.values) v *= sign;
    Ldlt l;
    ASSERT_EQ(l.analyze(B).mode, FactorMode::Simplicial);
    const auto fi = l.factorize(B);
    EXPECT_EQ(fi.mode, FactorMode::Simplicial);
    expect_inertia(fi.inertia, sign > 0 ? Inertia{400, 0, 0} : Inertia{0, 400, 0});
    auto b = ones_rhs(B);
    auto x = l.solve(b);
    EXPECT_LE(l.solve_info().backward_error, 1e-15);
    EXPECT_LE(relres(B, x, b), 1e-12);
  }
}
