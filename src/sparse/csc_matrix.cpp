// SPDX-License-Identifier: LGPL-2.1-or-later
// src/sparse/csc_matrix.cpp — CSC narrowing and construction from triplets, y = A x,
// ||A||_inf.
//
// Contract (see csc_matrix.hpp): to_csc32 narrows int64 indices with checks. from_triplets
// takes 0-based triplets, sums duplicates and sorts rows within each column by a two-pass
// counting sort (O(nnz + n), stable, so duplicates are summed in input order and the
// result is reproducible). With symmetric_lower the matrix must be square, entries
// above the diagonal are mirrored into the lower triangle, and an entry given in both
// triangles is an error (detail::triplets_to_csc reports it to its caller). multiply/norm_inf expand a
// symmetric_lower matrix implicitly; norm_inf with a scale is that of S A S.
#include "stardiff/sparse/csc_matrix.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "sparse/csc_internal.hpp"
#include "stardiff/runtime/error.hpp"

namespace stardiff::sparse {

CscMatrix32 to_csc32(const CscMatrix64& A) {
  const std::string who = "to_csc32: matrix" + (A.name.empty() ? std::string() : " '" + A.name + "'");
  constexpr std::int64_t kMax = std::numeric_limits<std::int32_t>::max();
  require(A.n_rows >= 0 && A.n_cols >= 0 && A.n_rows <= kMax && A.n_cols <= kMax,
          who + ": dimensions " + std::to_string(A.n_rows) + " x " + std::to_string(A.n_cols) +
              " do not fit in 32-bit indices");
  require(A.col_ptr.size() == std::size_t(A.n_cols) + 1,
          who + ": col_ptr has " + std::to_string(A.col_ptr.size()) + " entries, expected n_cols + 1 = " +
              std::to_string(A.n_cols + 1));
  const std::int64_t nnz = A.col_ptr.back();
  require(nnz <= kMax, who + ": " + std::to_string(nnz) + " stored entries do not fit in 32-bit indices");
  require(A.col_ptr.front() == 0 && nnz >= 0 && A.row_idx.size() == std::size_t(nnz) &&
              A.values.size() == std::size_t(nnz),
          who + ": col_ptr, row_idx and values disagree (col_ptr from " + std::to_string(A.col_ptr.front()) +
              " to " + std::to_string(nnz) + ", " + std::to_string(A.row_idx.size()) + " row indices, " +
              std::to_string(A.values.size()) + " values)");
  CscMatrix32 B;
  B.n_rows = std::int32_t(A.n_rows);
  B.n_cols = std::int32_t(A.n_cols);
  B.symmetric_lower = A.symmetric_lower;
  B.name = A.name;
  B.col_ptr.resize(A.col_ptr.size());
  for (std::size_t j = 0; j < A.col_ptr.size(); ++j) {
    const std::int64_t v = A.col_ptr[j];
    if (v < 0 || v > nnz || (j > 0 && v < A.col_ptr[j - 1]))
      throw Error(who + ": col_ptr[" + std::to_string(j) + "] = " + std::to_string(v) +
                  " is out of order or outside [0, nnz]");
    B.col_ptr[j] = std::int32_t(v);
  }
  B.row_idx.resize(A.row_idx.size());
  for (std::size_t k = 0; k < A.row_idx.size(); ++k) {
    const std::int64_t r = A.row_idx[k];
    if (r < 0 || r >= A.n_rows)
      throw Error(who + ": row index " + std::to_string(r) + " (entry " + std::to_string(k) +
                  ") is outside the " + std::to_string(A.n_rows) + " rows");
    B.row_idx[k] = std::int32_t(r);
  }
  B.values = A.values;
  return B;
}

namespace detail {

CscMatrix32 triplets_to_csc(std::int32_t n_rows, std::int32_t n_cols, const std::vector<std::int32_t>& rows,
                            const std::vector<std::int32_t>& cols, const std::vector<double>& vals,
                            bool symmetric_lower, const BothTriangles& both_triangles) {
  require(n_rows >= 0 && n_cols >= 0,
          "from_triplets: negative dimensions " + std::to_string(n_rows) + " x " + std::to_string(n_cols));
  require(rows.size() == cols.size() && rows.size() == vals.size(),
          "from_triplets: rows, cols and vals differ in length (" + std::to_string(rows.size()) + ", " +
              std::to_string(cols.size()) + ", " + std::to_string(vals.size()) + ")");
  require(!symmetric_lower || n_rows == n_cols,
          "from_triplets: a symmetric matrix must be square, got " + std::to_string(n_rows) + " x " +
              std::to_string(n_cols));
  const std::size_t nt = rows.size();
  for (std::size_t k = 0; k < nt; ++k) {
    if (rows[k] < 0 || rows[k] >= n_rows || cols[k] < 0 || cols[k] >= n_cols)
      throw Error("from_triplets: entry " + std::to_string(k) + " (" + std::to_string(rows[k]) + ", " +
                  std::to_string(cols[k]) + ") is outside the " + std::to_string(n_rows) + " x " +
                  std::to_string(n_cols) + " matrix");
    if (!std::isfinite(vals[k]))
      throw Error("from_triplets: entry " + std::to_string(k) + " (" + std::to_string(rows[k]) + ", " +
                  std::to_string(cols[k]) + ") is not finite");
  }
  auto row_of = [&](std::size_t k) {
    return symmetric_lower && rows[k] < cols[k] ? cols[k] : rows[k];
  };
  auto col_of = [&](std::size_t k) {
    return symmetric_lower && rows[k] < cols[k] ? rows[k] : cols[k];
  };
  // Pass 1: bucket by row (stable).
  std::vector<std::size_t> rp(std::size_t(n_rows) + 1, 0);
  for (std::size_t k = 0; k < nt; ++k) ++rp[std::size_t(row_of(k)) + 1];
  for (std::int32_t i = 0; i < n_rows; ++i) rp[i + 1] += rp[i];
  std::vector<std::size_t> by_row(nt);
  {
    std::vector<std::size_t> next(rp.begin(), rp.end() - 1);
    for (std::size_t k = 0; k < nt; ++k) by_row[next[row_of(k)]++] = k;
  }
  // Pass 2: bucket by column in increasing row order: rows end up sorted per column.
  std::vector<std::size_t> cp(std::size_t(n_cols) + 1, 0);
  for (std::size_t k = 0; k < nt; ++k) ++cp[std::size_t(col_of(k)) + 1];
  for (std::int32_t j = 0; j < n_cols; ++j) cp[j + 1] += cp[j];
  std::vector<std::size_t> order(nt);
  {
    std::vector<std::size_t> next(cp.begin(), cp.end() - 1);
    for (std::size_t k : by_row) order[next[col_of(k)]++] = k;
  }
  CscMatrix32 A;
  A.n_rows = n_rows;
  A.n_cols = n_cols;
  A.symmetric_lower = symmetric_lower;
  A.col_ptr.assign(std::size_t(n_cols) + 1, 0);
  A.row_idx.reserve(nt);
  A.values.reserve(nt);
  for (std::int32_t j = 0; j < n_cols; ++j) {
    std::size_t start = A.row_idx.size();
    std::size_t first = 0;  // the first triplet of the entry being summed
    for (std::size_t p = cp[j]; p < cp[j + 1]; ++p) {
      std::size_t k = order[p];
      std::int32_t i = row_of(k);
      if (A.row_idx.size() > start && A.row_idx.back() == i) {
        A.values.back() += vals[k];
        if (symmetric_lower && (rows[k] < cols[k]) != (rows[first] < cols[first])) {
          both_triangles(first, k);
          throw Error("from_triplets: internal error: a symmetric entry in both triangles was not reported");
        }
      } else {
        A.row_idx.push_back(i);
        A.values.push_back(vals[k]);
        first = k;
      }
    }
    if (A.row_idx.size() > std::size_t(std::numeric_limits<std::int32_t>::max()))  // (no message built per column)
      throw Error("from_triplets: more than 2^31-1 entries do not fit 32-bit indices");
    A.col_ptr[j + 1] = std::int32_t(A.row_idx.size());
  }
  return A;
}

}  // namespace detail

CscMatrix32 from_triplets(std::int32_t n_rows, std::int32_t n_cols, const std::vector<std::int32_t>& rows,
                          const std::vector<std::int32_t>& cols, const std::vector<double>& vals,
                          bool symmetric_lower) {
  return detail::triplets_to_csc(n_rows, n_cols, rows, cols, vals, symmetric_lower, [&](std::size_t a, std::size_t b) {
    auto entry = [&](std::size_t k) {
      return "entry " + std::to_string(k) + " (" + std::to_string(rows[k]) + ", " + std::to_string(cols[k]) + ")";
    };
    throw Error("from_triplets: " + entry(a) + " and " + entry(b) +
                " are the same entry of a symmetric matrix, given in both triangles (summing them would count it "
                "twice); with symmetric_lower give each off-diagonal entry once, in either triangle");
  });
}

void multiply(const CscMatrix32& A, const double* x, double* y) {
  for (std::int32_t i = 0; i < A.n_rows; ++i) y[i] = 0.0;
  for (std::int32_t j = 0; j < A.n_cols; ++j) {
    const double xj = x[j];
    double yj = 0.0;
    for (std::int32_t p = A.col_ptr[j]; p < A.col_ptr[j + 1]; ++p) {
      const std::int32_t i = A.row_idx[p];
      const double a = A.values[p];
      y[i] += a * xj;
      if (A.symmetric_lower && i != j) yj += a * x[i];
    }
    if (A.symmetric_lower) y[j] += yj;
  }
}

namespace {
// max_i sum_j |s_i a_ij s_j| over the full matrix (scale: null for s = 1).
double max_row_sum(const CscMatrix32& A, const double* scale) {
  std::vector<double> rs(std::size_t(A.n_rows), 0.0);
  const bool sym = A.symmetric_lower;
  for (std::int32_t j = 0; j < A.n_cols; ++j) {
    double cj = 0;  // column j's off-diagonal entries, which are row j's too (lower storage)
    for (std::int32_t p = A.col_ptr[j]; p < A.col_ptr[j + 1]; ++p) {
      const std::int32_t i = A.row_idx[p];
      const double a = scale ? std::abs(scale[i] * A.values[p] * scale[j]) : std::abs(A.values[p]);
      rs[i] += a;
      cj += sym && i != j ? a : 0.0;
    }
    if (sym) rs[j] += cj;
  }
  double m = 0.0;
  for (double r : rs) m = std::max(m, r);
  return m;
}
}  // namespace

double norm_inf(const CscMatrix32& A) { return max_row_sum(A, nullptr); }

double norm_inf(const CscMatrix32& A, const std::vector<double>& scale) {
  require(A.n_rows == A.n_cols && scale.size() == std::size_t(A.n_cols),
          "norm_inf: scale has " + std::to_string(scale.size()) + " entries for a " + std::to_string(A.n_rows) +
              " x " + std::to_string(A.n_cols) + " matrix (a square one of that size is needed)");
  return max_row_sum(A, scale.data());
}

}  // namespace stardiff::sparse
