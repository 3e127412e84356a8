// SPDX-License-Identifier: LGPL-2.1-or-later
// bench/ldlt_vs_peers/peer_umfpack.cpp — UMFPACK (unsymmetric LU, default control) on the
// full pattern of the file's own matrix (Problem::fp).
#include <umfpack.h>

#include "solvers.hpp"

namespace ldlt_vs_peers {

RunResult run_umfpack(const Problem& p, int threads) {
  RunResult r;
  set_blas_threads(threads);
  const std::int32_t n = p.A.n_cols;
  double control[UMFPACK_CONTROL], info[UMFPACK_INFO];
  umfpack_di_defaults(control);
  void* sym = nullptr;
  void* num = nullptr;
  auto t0 = Clock::now();
  int st = umfpack_di_symbolic(n, n, p.fp.data(), p.fi.data(), p.fx.data(), &sym, control, info);
  r.analyze_s = since(t0);
  if (st != UMFPACK_OK) {
    r.reason = "umfpack_di_symbolic status " + std::to_string(st);
  } else {
    t0 = Clock::now();
    st = umfpack_di_numeric(p.fp.data(), p.fi.data(), p.fx.data(), sym, &num, control, info);
    r.factor_s = since(t0);
    r.flops = info[UMFPACK_FLOPS];
    if (st != UMFPACK_OK) {
      r.reason = st == UMFPACK_WARNING_singular_matrix ? "singular matrix"
                                                        : "umfpack_di_numeric status " + std::to_string(st);
    } else {
      std::vector<double> x(static_cast<std::size_t>(n));
      t0 = Clock::now();
      st = umfpack_di_solve(UMFPACK_A, p.fp.data(), p.fi.data(), p.fx.data(), x.data(), p.b.data(), num, control,
                            info);
      r.solve_s = since(t0);
      r.relres = relres_of(p, x);
      r.ok = st == UMFPACK_OK && r.relres <= 1e-6;
      if (!r.ok) r.reason = st != UMFPACK_OK ? "umfpack_di_solve status " + std::to_string(st) : "inaccurate";
    }
  }
  if (num) umfpack_di_free_numeric(&num);
  if (sym) umfpack_di_free_symbolic(&sym);
  return r;
}

}  // namespace ldlt_vs_peers
