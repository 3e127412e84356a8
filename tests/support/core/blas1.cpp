// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/support/core/blas1.cpp — see blas1.hpp.
#include "support/core/blas1.hpp"

namespace stardiff::cpu {
void axpy_cpu(std::size_t n, double alpha, const double* x, double* y) {
  for (std::size_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}
void scal_cpu(std::size_t n, double alpha, double* x) {
  for (std::size_t i = 0; i < n; ++i) x[i] *= alpha;
}
double sum_cpu(std::size_t n, const double* x) {
  double s = 0.0;
  for (std::size_t i = 0; i < n; ++i) s += x[i];
  return s;
}
}  // namespace stardiff::cpu
