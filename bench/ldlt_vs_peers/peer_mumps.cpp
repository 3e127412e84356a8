// SPDX-License-Identifier: LGPL-2.1-or-later
// bench/ldlt_vs_peers/peer_mumps.cpp — MUMPS sequential (Debian's libmumps-seq: fake MPI),
// SYM = 2 (general symmetric), the file's own lower triangle as 1-based triplets, no output.
#include <dmumps_c.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "solvers.hpp"

namespace ldlt_vs_peers {

RunResult run_mumps(const Problem& p, int threads, bool null_detection) {
  RunResult r;
  set_blas_threads(threads);
  const stardiff::sparse::CscMatrix32& M = p.peer_matrix();  // the file's own pattern
  const std::int32_t n = M.n_cols;
  std::vector<MUMPS_INT> irn, jcn;
  std::vector<double> a(M.values.begin(), M.values.end());
  irn.reserve(a.size());
  jcn.reserve(a.size());
  for (std::int32_t j = 0; j < n; ++j)
    for (std::int32_t q = M.col_ptr[j]; q < M.col_ptr[j + 1]; ++q) {
      irn.push_back(M.row_idx[q] + 1);
      jcn.push_back(j + 1);
    }
  std::vector<double> rhs(p.b);
  DMUMPS_STRUC_C id;
  std::memset(&id, 0, sizeof id);
  id.comm_fortran = -987654;  // USE_COMM_WORLD
  id.par = 1;
  id.sym = 2;
  id.job = -1;
  dmumps_c(&id);
  auto infog = [&](int k) { return id.infog[k - 1]; };
  if (infog(1) < 0) {
    r.reason = "MUMPS init INFOG(1)=" + std::to_string(infog(1));
    return r;
  }
  id.icntl[0] = -1;  // no error/diagnostic/global output
  id.icntl[1] = -1;
  id.icntl[2] = -1;
  id.icntl[3] = 0;
  id.n = n;
  id.nnz = static_cast<MUMPS_INT8>(a.size());
  id.irn = irn.data();
  id.jcn = jcn.data();
  id.a = a.data();
  id.rhs = rhs.data();
  auto step = [&](int job, double& t) {
    id.job = job;
    auto t0 = Clock::now();
    dmumps_c(&id);
    t = since(t0);
    if (infog(1) < 0) {
      r.reason = "MUMPS job " + std::to_string(job) + " INFOG(1)=" + std::to_string(infog(1)) +
                 " INFOG(2)=" + std::to_string(infog(2));
      return false;
    }
    return true;
  };
  // INFOG(1) = -8/-9: the workspace estimate was too small; as a MUMPS user would, raise
  // ICNTL(14) (memory relaxation, %) and factorize again (only the last attempt is timed).
  auto factor = [&]() {
    for (int attempt = 0;; ++attempt) {
      if (step(2, r.factor_s)) return true;
      if ((infog(1) != -8 && infog(1) != -9) || attempt == 4) return false;
      id.icntl[13] = std::max(2 * id.icntl[13], 40);
      r.reason.clear();
    }
  };
  if (step(1, r.analyze_s) && factor()) {
    r.negative = infog(12);
    r.delayed = infog(13);
    r.flops = id.rinfog[2];  // RINFOG(3): flops of the elimination
    char d[128];
    std::snprintf(d, sizeof d, "mumps_neg=%d mumps_null_pivots=%d mumps_delayed=%d mumps_ordering=%d mumps_icntl14=%d",
                  infog(12), infog(28), infog(13), infog(7), id.icntl[13]);
    r.detail = d;
    if (step(3, r.solve_s)) {
      r.relres = relres_of(p, rhs);
      r.ok = r.relres <= 1e-6;
      if (!r.ok) r.reason = "inaccurate";
    }
    // The inertia again with null-pivot detection (after the timed solve; untimed; once
    // per matrix): by default MUMPS gives a singular matrix's null pivots a sign. A pivot
    // is null below 1e-11 times the norm of MUMPS's preprocessed matrix: stardiff's
    // zero_pivot rule.
    if (null_detection) {
      id.icntl[23] = 1;
      id.cntl[2] = 1e-11;
      double untimed = 0;
      const std::string keep = r.reason;
      if (step(2, untimed)) {
        r.negative_nulldet = infog(12);
        r.null_pivots = infog(28);
      }
      r.reason = keep;
    }
  }
  id.job = -2;
  dmumps_c(&id);
  return r;
}

}  // namespace ldlt_vs_peers
