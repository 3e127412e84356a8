// SPDX-License-Identifier: LGPL-2.1-or-later
// bench/ldlt_vs_peers/dgemm_rate.cpp — the machine's yardstick: OpenBLAS's thread count,
// the kernel it runs (which sets the rate), and cblas_dgemm's rate on n x n operands.
#include <cblas.h>

#include <algorithm>
#include <cmath>

#include "solvers.hpp"

namespace ldlt_vs_peers {

void set_blas_threads(int t) { openblas_set_num_threads(t); }

const char* blas_core_name() { return openblas_get_corename(); }

double dgemm_gflops(int n, int threads) {
  set_blas_threads(threads);
  std::vector<double> A(std::size_t(n) * n), B(A.size()), C(A.size(), 0.0);
  for (std::size_t i = 0; i < A.size(); ++i) {
    A[i] = std::sin(double(i));
    B[i] = std::cos(double(i));
  }
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    auto t0 = Clock::now();
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, A.data(), n, B.data(), n, 0.0, C.data(), n);
    double s = since(t0);
    best = std::max(best, 2.0 * n * double(n) * n / s * 1e-9);
  }
  return best;
}

}  // namespace ldlt_vs_peers
