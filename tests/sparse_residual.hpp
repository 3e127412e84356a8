// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/sparse_residual.hpp — ||A x - b||_inf / ||b||_inf for the sparse solver tests.
#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

#include "stardiff/sparse/csc_matrix.hpp"

namespace stardiff::testing {
inline double relres(const sparse::CscMatrix32& A, const std::vector<double>& x, const std::vector<double>& b) {
  std::vector<double> y(x.size());
  sparse::multiply(A, x.data(), y.data());
  double rn = 0, bn = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    rn = std::max(rn, std::fabs(y[i] - b[i]));
    bn = std::max(bn, std::fabs(b[i]));
  }
  return rn / bn;
}
}  // namespace stardiff::testing
