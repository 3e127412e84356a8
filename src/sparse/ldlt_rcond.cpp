// SPDX-License-Identifier: LGPL-2.1-or-later
// src/sparse/ldlt_rcond.cpp — Ldlt::rcond: LAPACK's dlacn2 (Hager-Higham) driven with
// unrefined solves on the equilibrated matrix (see ldlt.hpp); in single-task mode the
// whole estimate is one task.
#include <lapacke.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <new>
#include <vector>

#include "runtime/run_on_caller.hpp"
#include "sparse/ldlt_state.hpp"
#include "stardiff/runtime/error.hpp"

namespace stardiff::sparse {

double Ldlt::rcond(Executor* exec) {
  State& st = *s_;
  require(st.factored, "Ldlt::rcond called before a successful factorize");
  if (st.rcond >= 0) return st.rcond;
  const int n = st.sym.n;
  if (n == 0) return st.rcond = 1.0;  // LAPACK's convention for an empty matrix
  if (st.finfo.static_pivots > 0) return st.rcond = 0.0;
  // M = S A S with Ruiz's S (computed here when a definite matrix was factorized unscaled:
  // its conditioning, not its scaling, decides singularity); ||M||_1 = ||M||_inf.
  const CscMatrix32& A = st.a;
  const std::vector<double> s = st.opts.scale && !st.ruiz ? detail::ruiz_scale(A) : st.scale;
  const double mnorm = norm_inf(A, s);
  if (!(mnorm > 0)) return st.rcond = 0.0;
  detail::SingleThreadedBlas blas1;
  SequentialExecutor seq;
  Executor& ex = exec ? *exec : seq;
  detail::Refiner R{st, ex, n};
  // Reverse communication: dlacn2 asks for M^-1 x or M^-T x; M is symmetric, so both are
  // M^-1 x = S^-1 A^-1 S^-1 x, one solve with the factors (unrefined: an estimate needs
  // no more).
  // v and x 64-byte aligned: OpenBLAS's dasum inside dlacn2 rounds differently at other
  // alignments, and the estimate must not depend on where the heap put them.
  const std::size_t stride = (std::size_t(n) + 7) / 8 * 8;
  std::unique_ptr<double, decltype(&std::free)> vx(
      static_cast<double*>(std::aligned_alloc(64, 2 * stride * sizeof(double))), &std::free);
  if (!vx) throw std::bad_alloc();
  double* v = vx.get();
  double* x = vx.get() + stride;
  std::vector<double> y(n);
  std::vector<lapack_int> isgn(n);
  lapack_int kase = 0, isave[3] = {0, 0, 0};
  double est = 0;
  auto estimate = [&](detail::Refiner& Rx) {
    for (int calls = 0; calls < 20; ++calls) {  // dlacn2 stops after at most 5 iterations
      LAPACKE_dlacn2_work(n, v, x, isgn.data(), &est, &kase, isave);
      if (kase == 0) break;
      for (int i = 0; i < n; ++i) x[i] /= s[i];
      Rx.apply(x, y.data(), 1);
      for (int i = 0; i < n; ++i) x[i] = y[i] / s[i];
    }
  };
  // Single-task mode: the whole estimate is one task (run_on_caller), its solves run
  // inside it (as in Ldlt::solve).
  if (st.sym.single_task && !(st.simp.ok && st.tiny)) {
    stardiff::detail::run_on_caller(ex, "ldlt_rcond", [&] {
      SequentialExecutor inner;
      detail::Refiner Ri{st, inner, n};
      estimate(Ri);
    });
  } else {
    estimate(R);
  }
  // A non-finite or overflowing estimate of ||M^-1||_1: singular to working precision.
  const double r = std::isfinite(est) && est > 0 ? 1.0 / (mnorm * est) : 0.0;
  st.rcond = std::isfinite(r) ? r : 0.0;
  return st.rcond;
}

bool Ldlt::numerically_singular(Executor* exec) {
  return factor_info().singular || rcond(exec) < std::numeric_limits<double>::epsilon();
}

}  // namespace stardiff::sparse
