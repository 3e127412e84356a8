// SPDX-License-Identifier: LGPL-2.1-or-later
// bench/ldlt_vs_peers/peer_cholmod.cpp — CHOLMOD: supernodal LL^T (final_ll) or simplicial
// LDL^T, on the lower triangle with the file's own pattern (stype -1), default ordering,
// silent Common.
#include <cholmod.h>

#include <cstring>

#include "solvers.hpp"

namespace ldlt_vs_peers {

namespace {

// A started Common, silent, for supernodal LL^T or simplicial LDL^T.
void start_cholmod(cholmod_common& c, bool supernodal) {
  cholmod_start(&c);
  c.print = 0;
  c.error_handler = nullptr;
  c.supernodal = supernodal ? CHOLMOD_SUPERNODAL : CHOLMOD_SIMPLICIAL;
  c.final_ll = supernodal ? 1 : 0;  // simplicial: keep LDL^T
}

}  // namespace

RunResult run_cholmod(const Problem& p, bool supernodal, int threads, int analyze_samples) {
  RunResult r;
  set_blas_threads(threads);
  cholmod_common c;
  start_cholmod(c, supernodal);
  const stardiff::sparse::CscMatrix32& M = p.peer_matrix();  // the file's own pattern
  const std::int32_t n = M.n_cols;
  cholmod_sparse* A = cholmod_allocate_sparse(n, n, std::size_t(M.nnz()), 1, 1, -1, CHOLMOD_REAL, &c);
  std::memcpy(A->p, M.col_ptr.data(), sizeof(std::int32_t) * (std::size_t(n) + 1));
  std::memcpy(A->i, M.row_idx.data(), sizeof(std::int32_t) * std::size_t(M.nnz()));
  std::memcpy(A->x, M.values.data(), sizeof(double) * std::size_t(M.nnz()));
  cholmod_dense* B = cholmod_allocate_dense(n, 1, n, CHOLMOD_REAL, &c);
  std::memcpy(B->x, p.b.data(), sizeof(double) * std::size_t(n));
  auto t0 = Clock::now();
  cholmod_factor* L = cholmod_analyze(A, &c);
  r.analyze_s = since(t0);
  if (!L || c.status < CHOLMOD_OK) {
    r.reason = "cholmod_analyze failed (status " + std::to_string(c.status) + ")";
  } else {
    r.flops = c.fl;
    t0 = Clock::now();
    int ok = cholmod_factorize(A, L, &c);
    r.factor_s = since(t0);
    if (!ok || c.status == CHOLMOD_NOT_POSDEF || c.status < CHOLMOD_OK) {
      r.reason = c.status == CHOLMOD_NOT_POSDEF
                     ? "not positive definite (breakdown at column " + std::to_string(L->minor) + ")"
                     : "cholmod_factorize failed (status " + std::to_string(c.status) + ")";
    } else {
      t0 = Clock::now();
      cholmod_dense* X = cholmod_solve(CHOLMOD_A, L, B, &c);
      r.solve_s = since(t0);
      if (X) {
        std::vector<double> x(static_cast<double*>(X->x), static_cast<double*>(X->x) + n);
        r.relres = relres_of(p, x);
        r.ok = r.relres <= 1e-6;
        if (!r.ok) r.reason = "inaccurate (no pivoting)";
        cholmod_free_dense(&X, &c);
      } else {
        r.reason = "cholmod_solve failed";
      }
    }
    cholmod_free_factor(&L, &c);
  }
  for (int k = 1; k < analyze_samples; ++k) {  // the analysis alone, each with a fresh Common
    cholmod_common c2;
    start_cholmod(c2, supernodal);
    t0 = Clock::now();
    cholmod_factor* L2 = cholmod_analyze(A, &c2);
    r.analyze_extra.push_back(since(t0));
    cholmod_free_factor(&L2, &c2);
    cholmod_finish(&c2);
  }
  cholmod_free_dense(&B, &c);
  cholmod_free_sparse(&A, &c);
  cholmod_finish(&c);
  return r;
}

}  // namespace ldlt_vs_peers
