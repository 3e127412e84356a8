// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/sparse_wide.hpp — the int64-indexed copy of a CSC matrix, for the tests of
// int64 input (to_csc32, Ldlt with CscMatrix64).
#pragma once
#include <string>

#include "stardiff/sparse/csc_matrix.hpp"

namespace stardiff::testing {
inline sparse::CscMatrix64 widen(const sparse::CscMatrix32& A, const std::string& name = "wide") {
  sparse::CscMatrix64 B;
  B.n_rows = A.n_rows;
  B.n_cols = A.n_cols;
  B.col_ptr.assign(A.col_ptr.begin(), A.col_ptr.end());
  B.row_idx.assign(A.row_idx.begin(), A.row_idx.end());
  B.values = A.values;
  B.symmetric_lower = A.symmetric_lower;
  B.name = name;
  return B;
}
}  // namespace stardiff::testing
