// SPDX-License-Identifier: LGPL-2.1-or-later
// src/sparse/ldlt_scaling.cpp — Ruiz equilibration, scaled values and diagonals (see ldlt_state.hpp).
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "sparse/ldlt_state.hpp"

namespace stardiff::sparse::detail {

std::vector<double> ruiz_scale(const CscMatrix32& A) {
  const int n = A.n_cols;
  std::vector<double> s(n, 1.0), r(n), a(A.values.size());
  for (std::size_t k = 0; k < a.size(); ++k) a[k] = std::fabs(A.values[k]);
  const std::int32_t* cp = A.col_ptr.data();
  const std::int32_t* ri = A.row_idx.data();
  const double* av = a.data();
  double* sp = s.data();
  double* rp = r.data();
  for (int it = 0; it < 20; ++it) {
    std::fill(r.begin(), r.end(), 0.0);
    for (int c = 0; c < n; ++c) {
      const double sc = sp[c];
      double rc = rp[c];
      for (std::int32_t k = cp[c]; k < cp[c + 1]; ++k) {
        const std::int32_t i = ri[k];
        const double v = av[k] * sp[i] * sc;
        rp[i] = std::max(rp[i], v);
        rc = std::max(rc, v);
      }
      rp[c] = std::max(rp[c], rc);  // later columns hold rows > c only: r[c] is final here
    }
    for (int i = 0; i < n; ++i) {  // vectorized: an empty row keeps its scale
      const double ri = rp[i] > 0 ? rp[i] : 1.0;
      sp[i] /= std::sqrt(ri);
      rp[i] = ri - 1.0;
    }
    const double dev = n > 0 ? std::fabs(rp[cblas_idamax(n, rp, 1)]) : 0.0;  // max |1 - r_i|
    if (dev < 1e-1) break;
  }
  return s;
}

std::vector<double> diagonal(const CscMatrix32& A) {
  std::vector<double> d(A.n_cols, 0.0);
  for (std::int32_t j = 0; j < A.n_cols; ++j)
    for (std::int32_t k = A.col_ptr[j]; k < A.col_ptr[j + 1]; ++k)
      if (A.row_idx[k] == j) d[j] += A.values[k];
  return d;
}

std::vector<double> scaled_diagonal(const std::vector<double>& adiag, const std::vector<int>& perm,
                                    const std::vector<double>& ps) {
  std::vector<double> d(perm.size());
  for (std::size_t j = 0; j < perm.size(); ++j) d[j] = adiag[perm[j]] * ps[j] * ps[j];
  return d;
}

DiagonalSigns diagonal_signs(const std::vector<double>& d, double small) {
  DiagonalSigns s;
  for (double x : d) {
    const bool nz = std::fabs(x) > small;
    s.nonzero = s.nonzero && nz;
    if (nz) (x > 0 ? s.pos : s.neg) = true;
  }
  return s;
}

template <class Ptr>
double scaled_values(const CscMatrix32& A, const std::vector<double>& ps, const std::vector<Ptr>& ptr,
                     const std::vector<int>& row, const std::vector<int>& src, std::vector<double>& out) {
  out.resize(row.size());
  double* o = out.data();
  for (std::size_t j = 0; j + 1 < ptr.size(); ++j) {
    const double sj = ps[j];
    for (Ptr q = ptr[j]; q < ptr[j + 1]; ++q) o[q] = A.values[src[q]] * ps[row[q]] * sj;
  }
  return out.empty() ? 0.0 : std::fabs(o[cblas_idamax(int(out.size()), o, 1)]);  // vectorized
}

template double scaled_values<int>(const CscMatrix32&, const std::vector<double>&, const std::vector<int>&,
                                   const std::vector<int>&, const std::vector<int>&, std::vector<double>&);
template double scaled_values<std::int64_t>(const CscMatrix32&, const std::vector<double>&,
                                            const std::vector<std::int64_t>&, const std::vector<int>&,
                                            const std::vector<int>&, std::vector<double>&);

}  // namespace stardiff::sparse::detail
