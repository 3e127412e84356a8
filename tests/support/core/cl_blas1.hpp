// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/support/core/cl_blas1.hpp — codelets and insertion functions for level-1 kernels.
//
//   insert_axpy(exec, alpha, x, y): y += alpha x      (x: R, y: RW), vectors of double
//   insert_scal(exec, alpha, x):    x *= alpha        (x: RW)
//   cl_sum_init / cl_sum_reduce:    REDUX methods for a double variable (0, a += b)
#pragma once
#include "stardiff/runtime/executor.hpp"

namespace stardiff::codelets {
extern const Codelet cl_axpy;
extern const Codelet cl_scal;
extern const Codelet cl_sum_init;
extern const Codelet cl_sum_reduce;
void insert_axpy(Executor& exec, double alpha, Handle& x, Handle& y, int priority = 0);
void insert_scal(Executor& exec, double alpha, Handle& x, int priority = 0);
}  // namespace stardiff::codelets
