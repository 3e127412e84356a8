// SPDX-License-Identifier: LGPL-2.1-or-later
// apps/common/five_point_pattern.hpp — the 5-point operator's pattern on an n x n grid as
// SparseSolve takes it (stardiff-heat and its tests).
//
// five_point_lower(n, where): the lower triangle (CSC, values zero) of the 5-point pattern,
// node p = i + n j; `where` gets, per stored entry, the point and component of a
// 3-component 2-D dat holding its value: (i, j) component 0 the diagonal of p, (i+1, j)
// component 1 the coupling of p and p+1, (i, j+1) component 2 the coupling of p and p+n.
#pragma once
#include <cstdint>
#include <vector>

#include "stardiff/adjoint/sparse_solve.hpp"
#include "stardiff/sparse/csc_matrix.hpp"

namespace stardiff::apps {

inline sparse::CscMatrix32 five_point_lower(int n, std::vector<SparseSolve::Entry>& where) {
  sparse::CscMatrix32 A;
  A.n_rows = A.n_cols = n * n;
  A.symmetric_lower = true;
  A.col_ptr.push_back(0);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const int p = i + n * j;
      A.row_idx.push_back(p);
      where.push_back({i, j, 0, 0});
      if (i + 1 < n) {
        A.row_idx.push_back(p + 1);
        where.push_back({i + 1, j, 0, 1});
      }
      if (j + 1 < n) {
        A.row_idx.push_back(p + n);
        where.push_back({i, j + 1, 0, 2});
      }
      A.col_ptr.push_back(static_cast<std::int32_t>(A.row_idx.size()));
    }
  A.values.assign(A.row_idx.size(), 0.0);
  return A;
}

}  // namespace stardiff::apps
