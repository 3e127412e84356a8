// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/sparse/csc_matrix.hpp — compressed sparse column matrices.
//
// Contract: CscMatrix<I> holds an n_rows x n_cols matrix in CSC form: col_ptr (n_cols+1,
// non-decreasing, col_ptr[0] = 0), row_idx (sorted, unique within a column), values.
// `symmetric_lower` = true means only the lower triangle (row >= col) is stored and the
// matrix is symmetric. Explicit zeros are kept in the pattern. Index types: int32, int64.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace stardiff::sparse {

template <class I = std::int32_t>
struct CscMatrix {
  using Index = I;
  I n_rows = 0, n_cols = 0;
  std::vector<I> col_ptr;   // size n_cols + 1
  std::vector<I> row_idx;   // size nnz
  std::vector<double> values;  // size nnz
  bool symmetric_lower = false;
  std::string name;  // where it came from (file name), for messages

  I nnz() const { return col_ptr.empty() ? 0 : col_ptr.back(); }
};

using CscMatrix32 = CscMatrix<std::int32_t>;
using CscMatrix64 = CscMatrix<std::int64_t>;

// Builds a CSC matrix from 0-based triplets (duplicates summed in input order, rows
// sorted; O(nnz + n)). Throws Error on mismatched lengths, indices out of range or
// non-finite values. If `symmetric_lower` (square only), entries above the diagonal are
// mirrored into the lower triangle; an off-diagonal entry given in both triangles, (i,j)
// and (j,i), is an Error naming both triplets. Missing diagonal entries are not added
// (read_matrix_market adds them).
CscMatrix32 from_triplets(std::int32_t n_rows, std::int32_t n_cols, const std::vector<std::int32_t>& rows,
                          const std::vector<std::int32_t>& cols, const std::vector<double>& vals,
                          bool symmetric_lower);

// The same matrix with 32-bit indices (what the solver works on). Throws Error naming the
// matrix when its dimensions or nnz do not fit in int32, when col_ptr, row_idx and values
// disagree in size, or when a column pointer or row index is out of range; the entries
// are copied unchanged (other checks are the solver's).
CscMatrix32 to_csc32(const CscMatrix64& A);

// y = A x (A symmetric_lower expanded implicitly), and norms used by the solver.
void multiply(const CscMatrix32& A, const double* x, double* y);
double norm_inf(const CscMatrix32& A);  // max row sum of |a_ij| of the full matrix
// ||S A S||_inf with S = diag(scale) (scale.size() == n, A square; Error otherwise).
double norm_inf(const CscMatrix32& A, const std::vector<double>& scale);

}  // namespace stardiff::sparse
