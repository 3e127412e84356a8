// SPDX-License-Identifier: LGPL-2.1-or-later
// codelets/cpu/sparse/front_solve.cpp — see front_solve.hpp.
#include "cpu/sparse/front_solve.hpp"

#include <cblas.h>

#include <cstddef>

namespace stardiff::cpu {
namespace {
// x := L^-1 x and x := L^-T x for the unit lower triangle of the n x n block L (ld):
// what dtrsv does, without OpenBLAS's locked work-buffer allocation on every call.
void lower_unit_solve(int n, const double* L, int ld, double* x) {
  for (int j = 0; j < n; ++j) {
    const double xj = x[j];
    if (xj == 0.0) continue;
    const double* l = L + std::size_t(j) * ld;
    for (int i = j + 1; i < n; ++i) x[i] -= l[i] * xj;
  }
}
void lower_unit_solve_trans(int n, const double* L, int ld, double* x) {
  for (int j = n - 1; j >= 0; --j) {
    const double* l = L + std::size_t(j) * ld;
    double s = x[j];
    for (int i = j + 1; i < n; ++i) s -= l[i] * x[i];
    x[j] = s;
  }
}
}  // namespace

void front_solve_forward_cpu(const double* L, int m, int ne, const double* d, const double* e,
                             const signed char* piv, double* G, int nrhs) {
  if (ne <= 0) return;
  if (nrhs == 1) {  // level 2 without work buffers (OpenBLAS takes a global lock for those)
    lower_unit_solve(ne, L, m, G);
    if (m > ne) cblas_dgemv(CblasColMajor, CblasNoTrans, m - ne, ne, -1.0, L + ne, m, G, 1, 1.0, G + ne, 1);
  } else {
    cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, ne, nrhs, 1.0, L, m, G, m);
    if (m > ne)
      cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m - ne, nrhs, ne, -1.0, L + ne, m, G, m, 1.0, G + ne, m);
  }
  for (int t = 0; t < ne; ++t) {  // D: 1x1 and 2x2 blocks
    if (piv[t] == 2) {
      const double a = d[t], b = e[t], dd = d[t + 1], det = a * dd - b * b;
      for (int r = 0; r < nrhs; ++r) {
        double& x0 = G[t + std::size_t(r) * m];
        double& x1 = G[t + 1 + std::size_t(r) * m];
        const double y0 = (dd * x0 - b * x1) / det, y1 = (a * x1 - b * x0) / det;
        x0 = y0;
        x1 = y1;
      }
      ++t;
    } else {
      for (int r = 0; r < nrhs; ++r) G[t + std::size_t(r) * m] /= d[t];
    }
  }
}

void front_solve_backward_cpu(const double* L, int m, int ne, double* G, int nrhs) {
  if (ne <= 0) return;
  if (nrhs == 1) {
    if (m > ne) cblas_dgemv(CblasColMajor, CblasTrans, m - ne, ne, -1.0, L + ne, m, G + ne, 1, 1.0, G, 1);
    lower_unit_solve_trans(ne, L, m, G);
  } else {
    if (m > ne)
      cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, ne, nrhs, m - ne, -1.0, L + ne, m, G + ne, m, 1.0, G, m);
    cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasTrans, CblasUnit, ne, nrhs, 1.0, L, m, G, m);
  }
}

}  // namespace stardiff::cpu
