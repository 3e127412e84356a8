// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/sparse_dense_inertia.hpp — the exact inertia of a small symmetric CSC matrix (lower
// triangle) from the signs of LAPACKE_dsyev's eigenvalues: an eigenvalue within
// rel_zero * max |eigenvalue| of zero counts as zero. A failing dsyev is a test failure.
#pragma once
#include <gtest/gtest.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "stardiff/sparse/csc_matrix.hpp"
#include "stardiff/sparse/ldlt.hpp"

namespace stardiff::testing {
inline sparse::Inertia dense_inertia(const sparse::CscMatrix32& A, double rel_zero = 1e-10) {
  const int n = A.n_cols;
  std::vector<double> D(std::size_t(n) * n, 0.0), w(n);
  for (int j = 0; j < n; ++j)
    for (int k = A.col_ptr[j]; k < A.col_ptr[j + 1]; ++k)
      D[A.row_idx[k] + std::size_t(j) * n] = D[j + std::size_t(A.row_idx[k]) * n] = A.values[k];
  EXPECT_EQ(LAPACKE_dsyev(LAPACK_COL_MAJOR, 'N', 'L', n, D.data(), n, w.data()), 0);
  double mx = 0;
  for (double x : w) mx = std::max(mx, std::fabs(x));
  sparse::Inertia in;
  for (double x : w) {
    if (std::fabs(x) <= rel_zero * mx) in.zero++;
    else if (x > 0) in.pos++;
    else in.neg++;
  }
  return in;
}
}  // namespace stardiff::testing
