// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/support/core/blas1.hpp — level-1 vector kernels on plain pointers (no StarPU types).
//
//   axpy_cpu:  y[i] += alpha * x[i]          for i < n
//   scal_cpu:  x[i] *= alpha                 for i < n
//   sum_cpu:   returns sum of x[i] in index order (deterministic)
#pragma once
#include <cstddef>

namespace stardiff::cpu {
void axpy_cpu(std::size_t n, double alpha, const double* x, double* y);
void scal_cpu(std::size_t n, double alpha, double* x);
double sum_cpu(std::size_t n, const double* x);
}  // namespace stardiff::cpu
