// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/support/forward/bratu_pattern.hpp — pattern and analytic Jacobian of BratuResidual,
// and a reproducible random state to evaluate them at (host only; see bratu_residual.hpp).
#pragma once
#include <cmath>
#include <random>
#include <vector>

#include "support/forward/bratu_residual.hpp"
#include "stardiff/forward/coloring.hpp"

namespace stardiff::forward::test_problems {

// x in [-0.5, 1.5)^n from std::mt19937(seed): the same values on every platform.
inline std::vector<double> bratu_state(std::int32_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-0.5, 1.5);
  std::vector<double> x(n);
  for (auto& v : x) v = u(rng);
  return x;
}

inline SparsityPattern bratu_pattern(std::int32_t nx, std::int32_t ny) {
  SparsityPattern p;
  p.n_rows = p.n_cols = nx * ny;
  p.col_ptr.push_back(0);
  for (std::int32_t c = 0; c < nx * ny; ++c) {  // column c: rows that read x[c], sorted
    const std::int32_t i = c % nx, j = c / nx;
    if (j > 0) p.row_idx.push_back(c - nx);
    if (i > 0) p.row_idx.push_back(c - 1);
    p.row_idx.push_back(c);
    if (i + 1 < nx) p.row_idx.push_back(c + 1);
    if (j + 1 < ny) p.row_idx.push_back(c + nx);
    p.col_ptr.push_back(static_cast<std::int32_t>(p.row_idx.size()));
  }
  return p;
}

// Analytic dF(r)/dx(c) for every pattern entry, CSC layout of bratu_pattern.
inline std::vector<double> bratu_jacobian(const BratuResidual& b, const SparsityPattern& p, const double* x) {
  const std::int32_t nx = b.nx, ny = b.ny;
  const double hx = 1.0 / (nx + 1), hy = 1.0 / (ny + 1);
  const double ihx2 = 1.0 / (hx * hx), ihy2 = 1.0 / (hy * hy), i2hx = 0.5 / hx;
  std::vector<double> v(p.nnz());
  for (std::int32_t c = 0; c < p.n_cols; ++c) {
    for (std::int32_t e = p.col_ptr[c]; e < p.col_ptr[c + 1]; ++e) {
      const std::int32_t r = p.row_idx[e], i = r % nx;
      const double u = x[r];
      const double uw = i > 0 ? x[r - 1] : 0.0, ue = i + 1 < nx ? x[r + 1] : 0.0;
      if (c == r) v[e] = 2.0 * ihx2 + 2.0 * ihy2 - b.lambda * std::exp(u) + b.conv * (ue - uw) * i2hx;
      else if (c == r + 1) v[e] = -ihx2 + b.conv * u * i2hx;
      else if (c == r - 1) v[e] = -ihx2 - b.conv * u * i2hx;
      else v[e] = -ihy2;
      (void)ny;
    }
  }
  return v;
}

}  // namespace stardiff::forward::test_problems
