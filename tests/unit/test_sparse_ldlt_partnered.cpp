// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/unit/test_sparse_ldlt_partnered.cpp — the partnered order (detail::partnered_order,
// kept by LdltOptions::pairing = Defer where the deferred order is over its fill limit) on
// small Q1-Q0 Stokes matrices (no runtime).
//
// A k x k grid of bilinear elements, two velocity components per node (a Q1 Laplacian
// plus a small mass term: SPD) and one pressure per element (8 divergence entries, values
// perturbed so that no checkerboard mode is left: nonsingular, inertia (2 (k+1)^2, k^2,
// 0)); every pressure diagonal entry an explicit zero. AMD puts most pressures before all
// their velocities (zero pivots: delayed columns under threshold pivoting). The partnered
// order gives every zero-diagonal column a nonzero-diagonal neighbour before it; factored in it with threshold pivoting (small fronts, and the
// defaults) no column is delayed (the AMD order delays hundreds), the inertia equals the
// signs of LAPACKE_dsyev's eigenvalues, relres <= 1e-12, and the factors are the same
// bitwise in a second factorization.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <vector>

#include "sparse/ldlt_internal.hpp"
#include "stardiff/sparse/csc_matrix.hpp"
#include "stardiff/sparse/ldlt.hpp"
#include "single_thread_blas.hpp"
#include "sparse_dense_inertia.hpp"
#include "sparse_residual.hpp"

using namespace stardiff;
using namespace stardiff::sparse;
using stardiff::testing::dense_inertia;
using stardiff::testing::relres;

namespace {
CscMatrix32 q1q0_stokes(int k, std::mt19937& g) {
  std::uniform_real_distribution<double> U(-1, 1);
  const int nn = (k + 1) * (k + 1), nv = 2 * nn, n = nv + k * k;
  const double h = 1.0 / k;
  // Q1 Laplacian element matrix (unit square, node order (0,0) (1,0) (0,1) (1,1))
  const double ke[4][4] = {{4, -1, -1, -2}, {-1, 4, -2, -1}, {-1, -2, 4, -1}, {-2, -1, -1, 4}};
  const double sx[4] = {-1, 1, -1, 1}, sy[4] = {-1, -1, 1, 1};
  std::vector<int> r, c;
  std::vector<double> v;
  for (int ey = 0; ey < k; ++ey)
    for (int ex = 0; ex < k; ++ex) {
      const int node[4] = {ex + (k + 1) * ey, ex + 1 + (k + 1) * ey, ex + (k + 1) * (ey + 1),
                           ex + 1 + (k + 1) * (ey + 1)};
      const int pr = nv + ex + k * ey;
      for (int comp = 0; comp < 2; ++comp)
        for (int a = 0; a < 4; ++a) {
          const int ia = node[a] + comp * nn;
          for (int b = 0; b <= a; ++b) {
            const int ib = node[b] + comp * nn;
            r.push_back(std::max(ia, ib)), c.push_back(std::min(ia, ib));
            v.push_back(ke[a][b] / 6.0 + (a == b ? 0.01 * h * h : 0.0));
          }
          const double s = comp == 0 ? sx[a] : sy[a];
          r.push_back(pr), c.push_back(ia), v.push_back(0.5 * h * s * (1.0 + 0.3 * U(g)));
        }
      r.push_back(pr), c.push_back(pr), v.push_back(0.0);
    }
  return from_triplets(n, n, r, c, v, true);  // duplicates (shared nodes) summed
}

// The full pattern without the diagonal (CSC), as analyze() orders it.
void graph_of(const CscMatrix32& A, std::vector<int>& p, std::vector<int>& idx) {
  const int n = A.n_cols;
  std::vector<std::set<int>> adj(n);
  for (int j = 0; j < n; ++j)
    for (int k = A.col_ptr[j]; k < A.col_ptr[j + 1]; ++k)
      if (A.row_idx[k] != j) adj[j].insert(A.row_idx[k]), adj[A.row_idx[k]].insert(j);
  p.assign(1, 0);
  idx.clear();
  for (int j = 0; j < n; ++j) {
    idx.insert(idx.end(), adj[j].begin(), adj[j].end());
    p.push_back(int(idx.size()));
  }
}
}  // namespace

TEST(SparseLdltPartnered, StokesQ1Q0NoDelayedColumnsAndDsyevInertia) {
  std::mt19937 g(41);
  for (int k : {6, 9, 12}) {
    SCOPED_TRACE(::testing::Message() << "k = " << k);
    const CscMatrix32 A = q1q0_stokes(k, g);
    const int n = A.n_cols, nv = 2 * (k + 1) * (k + 1);
    const Inertia want = dense_inertia(A);
    ASSERT_EQ(want.zero, 0);
    EXPECT_EQ(want.pos, nv);
    EXPECT_EQ(want.neg, k * k);
    std::vector<double> diag(n, 0.0);
    for (int j = 0; j < n; ++j)
      for (int q = A.col_ptr[j]; q < A.col_ptr[j + 1]; ++q)
        if (A.row_idx[q] == j) diag[j] = A.values[q];
    Ldlt base_an({.ordering = Ordering::Amd, .pairing = ZeroDiagonalPairing::None});
    base_an.analyze(A);
    const std::vector<int> base(base_an.permutation().begin(), base_an.permutation().end());
    std::vector<int> p, idx;
    graph_of(A, p, idx);
    const std::vector<int> mate = sparse::detail::zero_diagonal_matching(A);
    std::int64_t moved = 0;
    const std::vector<int> perm = sparse::detail::partnered_order(A, p, idx, mate, base, &moved);
    ASSERT_EQ(int(perm.size()), n);
    std::vector<int> pos(n, -1);
    for (int t = 0; t < n; ++t) {
      ASSERT_TRUE(perm[t] >= 0 && perm[t] < n && pos[perm[t]] < 0);
      pos[perm[t]] = t;
    }
    EXPECT_GT(moved, 0);
    // every pressure comes after some velocity neighbour (in the AMD order most do not)
    int first_in_base = 0;
    for (int j = nv; j < n; ++j) {
      bool after = false, after_base = false;
      for (int q = p[j]; q < p[j + 1]; ++q) {
        after |= pos[idx[q]] < pos[j] && diag[idx[q]] != 0.0;
        after_base |= std::find(base.begin(), base.end(), idx[q]) < std::find(base.begin(), base.end(), j);
      }
      EXPECT_TRUE(after) << "pressure " << j;
      first_in_base += !after_base;
    }
    EXPECT_EQ(moved >= first_in_base, true);
    EXPECT_GT(first_in_base, 0);
    std::vector<double> xt(n), b(n);
    for (int i = 0; i < n; ++i) xt[i] = 1.0 + 0.01 * i;
    multiply(A, xt.data(), b.data());
    const std::vector<std::int32_t> user(perm.begin(), perm.end()), plain(base.begin(), base.end());
    for (const LdltOptions& o0 : {LdltOptions{.nemin = 4, .small_flops = 0, .simplicial_switch = 0, .block_size = 8},
                                  LdltOptions{}}) {
      LdltOptions o = o0;
      o.try_unpivoted = false;
      o.ordering = Ordering::User;
      o.user_perm = plain;
      Ldlt lp(o);
      lp.analyze(A);
      const FactorInfo fp = lp.factorize(A);
      o.user_perm = user;
      Ldlt l(o);
      l.analyze(A);
      const FactorInfo fi = l.factorize(A);
      RecordProperty("delayed_amd_k" + std::to_string(k), int(fp.delayed));
      EXPECT_GT(fp.delayed, k * k / 4);  // the AMD order's zero pivots
      EXPECT_EQ(fi.delayed, 0);
      EXPECT_EQ(fi.inertia.pos, want.pos);
      EXPECT_EQ(fi.inertia.neg, want.neg);
      EXPECT_EQ(fi.inertia.zero, 0);
      EXPECT_FALSE(fi.singular);
      const auto x = l.solve(b);
      EXPECT_LE(relres(A, x, b), 1e-12);
      const auto h = l.factor_hash();
      l.factorize(A);
      EXPECT_EQ(l.factor_hash(), h);
    }
  }
}
