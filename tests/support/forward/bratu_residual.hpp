// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/support/forward/bratu_residual.hpp — a test residual for SparseJacobian: the 2-D
// Bratu problem with a convection term on the unit square, nx x ny interior points,
// zero Dirichlet boundary, h = 1/(nx+1), hy = 1/(ny+1), unknown u(i, j) = x[i + nx·j]:
//   F(i,j) = (2u - uW - uE)/hx² + (2u - uS - uN)/hy² - lambda·exp(u) + c·u·(uE - uW)/(2hx)
// bratu_pattern gives the 5-point CSC pattern and bratu_jacobian the analytic values.
// Header-only, C++17, STARDIFF_HD so a CUDA translation unit can instantiate it.
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

#include "stardiff/forward/row_range.hpp"

namespace stardiff::forward::test_problems {

struct BratuResidual {
  std::int32_t nx = 0, ny = 0;
  double lambda = 1.0, conv = 0.0;

  template <class S>
  STARDIFF_HD void operator()(RowRange rows, const S* x, S* f) const {
    using std::exp;
    const double hx = 1.0 / (nx + 1), hy = 1.0 / (ny + 1);
    const double ihx2 = 1.0 / (hx * hx), ihy2 = 1.0 / (hy * hy), i2hx = 0.5 / hx;
    for (std::int32_t r = rows.begin; r < rows.end; ++r) {
      const std::int32_t i = r % nx, j = r / nx;
      const S& u = x[r];
      const S zero(0.0);
      const S& uw = i > 0 ? x[r - 1] : zero;
      const S& ue = i + 1 < nx ? x[r + 1] : zero;
      const S& us = j > 0 ? x[r - nx] : zero;
      const S& un = j + 1 < ny ? x[r + nx] : zero;
      f[r] = (2.0 * u - uw - ue) * ihx2 + (2.0 * u - us - un) * ihy2 - lambda * exp(u) +
             conv * u * (ue - uw) * i2hx;
    }
  }
};

}  // namespace stardiff::forward::test_problems
