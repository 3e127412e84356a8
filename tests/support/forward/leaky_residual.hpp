// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/support/forward/leaky_residual.hpp — a tridiagonal residual that may read x outside
// its tridiagonal pattern: f_i = x_i^2 + 0.5 x_{i-1} - 0.25 x_{i+1} + sum of w·x_j over the
// extra reads (row i, column j, weight w) it is given. With no extra read it keeps to
// tridiagonal_pattern(n); tridiagonal_jacobian gives its exact values on that pattern.
#pragma once
#include <cstdint>
#include <vector>

#include "stardiff/forward/coloring.hpp"
#include "stardiff/forward/row_range.hpp"

namespace stardiff::forward::test_problems {

struct LeakyTridiag {
  struct Read {
    std::int32_t row, col;
    double weight;
  };
  std::int32_t n = 0;
  Read extra[4] = {};
  int n_extra = 0;

  template <class S>
  void operator()(RowRange rows, const S* x, S* f) const {
    for (std::int32_t i = rows.begin; i < rows.end; ++i) {
      S v = x[i] * x[i];
      if (i > 0) v += 0.5 * x[i - 1];
      if (i + 1 < n) v -= 0.25 * x[i + 1];
      for (int k = 0; k < n_extra; ++k)
        if (extra[k].row == i) v += extra[k].weight * x[extra[k].col];
      f[i] = v;
    }
  }
};

inline SparsityPattern tridiagonal_pattern(std::int32_t n) {
  std::vector<std::int32_t> r, c;
  for (std::int32_t i = 0; i < n; ++i)
    for (std::int32_t j = i - 1; j <= i + 1; ++j)
      if (j >= 0 && j < n) r.push_back(i), c.push_back(j);
  return pattern_from_coo(n, n, r, c);
}

// CSC values of the tridiagonal part of LeakyTridiag's Jacobian at x.
inline std::vector<double> tridiagonal_jacobian(const SparsityPattern& p, const std::vector<double>& x) {
  std::vector<double> v(p.nnz());
  for (std::int32_t j = 0; j < p.n_cols; ++j)
    for (std::int32_t e = p.col_ptr[j]; e < p.col_ptr[j + 1]; ++e) {
      const std::int32_t i = p.row_idx[e];
      v[e] = i == j ? 2 * x[j] : (j == i - 1 ? 0.5 : -0.25);
    }
  return v;
}

}  // namespace stardiff::forward::test_problems
