// SPDX-License-Identifier: LGPL-2.1-or-later
// src/sparse/ldlt_refine.cpp — the refined solve: triangular solves as tasks (one forward
// and one backward task per plan entry; simplicial: one task, on the caller when tiny;
// single-task mode: the whole refined solve one task, its solves run inside it),
// refinement (x += A^-1 r) while the backward error falls by at least half, then FGMRES
// preconditioned by the factorization while it is above 10 eps (a cycle ends where its
// residual estimate means an eps backward error). OpenBLAS runs single-threaded meanwhile.
// A kept unpivoted factorization whose backward error stays above opts.unpivoted_berr is
// replaced by a threshold-pivoted one and the solve repeated (LdltOptions::unpivoted_berr).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "runtime/run_on_caller.hpp"
#include "sparse/ldlt_state.hpp"
#include "sparse/ldlt_tasks.hpp"
#include "stardiff/runtime/error.hpp"

namespace stardiff::sparse {
namespace detail {

void Refiner::apply(const double* b, double* x, int nrhs) {
  const auto& S = st.sym;
  std::vector<double> y(std::size_t(n) * nrhs);
  for (int r = 0; r < nrhs; ++r)
    for (int i = 0; i < n; ++i) {
      const int o = S.perm[i];
      y[i + std::size_t(r) * n] = st.scale[o] * b[o + std::size_t(r) * n];
    }
  if (st.simp.ok) {
    auto solve = [&] { solve_simplicial(st, y.data(), nrhs); };
    if (st.tiny) solve();
    else run_on_worker(ex, "ldlt_solve_simplicial", solve);
  } else {
    std::vector<std::vector<double>> upd(S.ns), down;
    detail::SolveCtx sc{&S, st.nodes.data(), y.data(), nrhs, upd.data()};
    GraphRanks ranks = mpi_size() > 1 ? GraphRanks::Replicated : GraphRanks::Rank0;
    if (st.distributed) {  // each rank holds its nodes' factors: the solve's tasks go there too
      if (std::strcmp(ex.kind(), "starpu") != 0)
        throw Error(std::string("Ldlt: the factorization is distributed over the StarPU-MPI ranks: solve and rcond "
                                "need a StarPU executor (on every rank), not a ") + ex.kind() + " one");
      down.resize(S.ns);
      sc.down = down.data();
      sc.dist = &st.dist;
      ranks = GraphRanks::Distributed;
    }
    // StarPU-MPI, several ranks: replicated, every rank holds the whole factorization and
    // solves itself; distributed, every rank receives the whole solution.
    detail::insert_ldlt_solve(ex, &sc, ranks);
  }
  for (int r = 0; r < nrhs; ++r)
    for (int i = 0; i < n; ++i) {
      const int o = S.perm[i];
      x[o + std::size_t(r) * n] = st.scale[o] * y[i + std::size_t(r) * n];
    }
}
double Refiner::residual(const double* b, const double* x, double* r, double* den_out) {
  multiply(st.a, x, r);
  double rn = 0, xn = 0, bn = 0;
  for (int i = 0; i < n; ++i) {
    r[i] = b[i] - r[i];
    rn = std::max(rn, std::fabs(r[i]));
    xn = std::max(xn, std::fabs(x[i]));
    bn = std::max(bn, std::fabs(b[i]));
  }
  if (st.anorm < 0) st.anorm = n > 0 ? norm_inf(st.a) : 0.0;
  const double den = st.anorm * xn + bn;
  if (den_out) *den_out = den;
  if (!std::isfinite(rn)) return std::numeric_limits<double>::infinity();
  return den > 0 ? rn / den : (rn > 0 ? std::numeric_limits<double>::infinity() : 0.0);
}

int Refiner::fgmres(const double* b, double* x, double& berr, int restart, int maxit) {
  const double eps = std::numeric_limits<double>::epsilon();
  int its = 0;
  std::vector<double> r(n), w(n), best(n);
  std::copy(x, x + n, best.begin());
  double best_berr = berr;
  while (its < maxit && best_berr > 10 * eps) {
    const int m = std::max(1, std::min(restart, maxit - its));
    // The cycle stops once its residual estimate |g[k+1]| (the 2-norm, which bounds the
    // infinity norm) means a backward error of eps for this cycle's x: further
    // iterations would only chase rounding noise.
    double den = 0;
    residual(b, x, r.data(), &den);
    const double target = eps * den;
    double beta = std::sqrt(std::inner_product(r.begin(), r.end(), r.begin(), 0.0));
    if (!(beta > 0)) break;
    std::vector<std::vector<double>> V(m + 1, std::vector<double>(n)), Z(m, std::vector<double>(n));
    std::vector<double> H((m + 1) * m, 0.0), cs(m), sn(m), g(m + 1, 0.0);
    for (int i = 0; i < n; ++i) V[0][i] = r[i] / beta;
    g[0] = beta;
    int k = 0;
    for (; k < m; ++k) {
      apply(V[k].data(), Z[k].data(), 1);
      multiply(st.a, Z[k].data(), w.data());
      for (int j = 0; j <= k; ++j) {
        double h = std::inner_product(w.begin(), w.end(), V[j].begin(), 0.0);
        H[j + k * (m + 1)] = h;
        for (int i = 0; i < n; ++i) w[i] -= h * V[j][i];
      }
      double hn = std::sqrt(std::inner_product(w.begin(), w.end(), w.begin(), 0.0));
      H[k + 1 + k * (m + 1)] = hn;
      if (hn > 0)
        for (int i = 0; i < n; ++i) V[k + 1][i] = w[i] / hn;
      for (int j = 0; j < k; ++j) {
        double a = H[j + k * (m + 1)], c = H[j + 1 + k * (m + 1)];
        H[j + k * (m + 1)] = cs[j] * a + sn[j] * c;
        H[j + 1 + k * (m + 1)] = -sn[j] * a + cs[j] * c;
      }
      double a = H[k + k * (m + 1)], c = H[k + 1 + k * (m + 1)];
      double rr = std::hypot(a, c);
      cs[k] = rr > 0 ? a / rr : 1.0;
      sn[k] = rr > 0 ? c / rr : 0.0;
      H[k + k * (m + 1)] = rr;
      H[k + 1 + k * (m + 1)] = 0;
      g[k + 1] = -sn[k] * g[k];
      g[k] = cs[k] * g[k];
      ++its;
      if (std::fabs(g[k + 1]) <= std::max(eps * beta, target) || hn == 0) {
        ++k;
        break;
      }
    }
    for (int j = k - 1; j >= 0; --j) {  // back substitution, y stored in g[0..k)
      double sum = g[j];
      for (int l = j + 1; l < k; ++l) sum -= H[j + l * (m + 1)] * g[l];
      g[j] = H[j + j * (m + 1)] != 0 ? sum / H[j + j * (m + 1)] : 0.0;
    }
    for (int j = 0; j < k; ++j)
      for (int i = 0; i < n; ++i) x[i] += g[j] * Z[j][i];
    const double be = residual(b, x, r.data());
    if (be < best_berr) {
      const bool progress = be < 0.5 * best_berr;
      best_berr = be;
      std::copy(x, x + n, best.begin());
      if (!progress) break;
    } else {
      break;
    }
  }
  std::copy(best.begin(), best.end(), x);
  berr = best_berr;
  return its;
}

}  // namespace detail

std::vector<double> Ldlt::solve(const std::vector<double>& b, int nrhs, Executor* exec) {
  State& st = *s_;
  require(st.factored, "Ldlt::solve called before a successful factorize");
  require(nrhs >= 1, "Ldlt::solve: nrhs must be >= 1, got " + std::to_string(nrhs));
  const int n = st.sym.n;
  require(b.size() == std::size_t(n) * std::size_t(nrhs),
          "Ldlt::solve: b has " + std::to_string(b.size()) + " entries, expected n * nrhs = " +
              std::to_string(std::size_t(n) * std::size_t(nrhs)));
  for (std::size_t i = 0; i < b.size(); ++i)
    if (!std::isfinite(b[i])) throw Error("Ldlt::solve: b[" + std::to_string(i) + "] is not finite");
  detail::SingleThreadedBlas blas1;
  SequentialExecutor seq;
  Executor& ex = exec ? *exec : seq;
  std::vector<double> x(b.size());
  st.sinfo = SolveInfo{};
  st.sinfo.singular = st.finfo.singular;
  if (n == 0) return x;
  double be = 0;
  // The first solve, refinement and FGMRES, with the factors applied on rx.
  auto refined = [&](Executor& rx) {
    detail::Refiner R{st, rx, n};
    R.apply(b.data(), x.data(), nrhs);
    const double eps = std::numeric_limits<double>::epsilon();
    std::vector<double> r(std::size_t(n) * nrhs), dx(std::size_t(n) * nrhs), xold;
    std::vector<double> berr(nrhs);
    auto all_residuals = [&] {
      double mx = 0;
      for (int k = 0; k < nrhs; ++k) {
        berr[k] = R.residual(b.data() + std::size_t(k) * n, x.data() + std::size_t(k) * n, r.data() + std::size_t(k) * n);
        mx = std::max(mx, berr[k]);
      }
      return mx;
    };
    be = all_residuals();
    int it = 0;
    while (it < st.opts.max_refine && be > 2 * eps) {
      R.apply(r.data(), dx.data(), nrhs);
      xold = x;
      for (std::size_t i = 0; i < x.size(); ++i) x[i] += dx[i];
      ++it;
      const double nb = all_residuals();
      if (!(nb < be)) {  // worse: undo and stop
        x = xold;
        be = all_residuals();
        break;
      }
      const bool progress = nb < 0.5 * be;
      be = nb;
      if (!progress) break;
    }
    st.sinfo.refine_iters = it;
    if (be > 10 * eps && st.opts.max_fgmres > 0) {
      int fits = 0;
      for (int k = 0; k < nrhs; ++k) {
        if (berr[k] <= 10 * eps) continue;
        fits += R.fgmres(b.data() + std::size_t(k) * n, x.data() + std::size_t(k) * n, berr[k],
                         st.opts.fgmres_restart, st.opts.max_fgmres);
      }
      st.sinfo.fgmres_iters = fits;
      be = *std::max_element(berr.begin(), berr.end());
    }
  };
  // Single-task mode: the whole refined solve is one task (on the caller with StarPU's
  // workers paused where nothing else is in flight: run_on_caller), every application of
  // the factors inside it on a SequentialExecutor (the plan's one forward and one backward
  // task each, run in place: bitwise what they give as tasks). Tiny simplicial factors
  // solve on the caller.
  if (st.sym.single_task && !(st.simp.ok && st.tiny)) {
    stardiff::detail::run_on_caller(ex, "ldlt_solve", [&] {
      SequentialExecutor inner;
      refined(inner);
    });
  } else {
    refined(ex);
  }
  st.sinfo.backward_error = be;
  if (st.finfo.pivoting == Pivoting::None && st.opts.unpivoted_berr > 0 && !(be <= st.opts.unpivoted_berr)) {
    // The kept unpivoted factorization did not give an accurate solution: threshold
    // pivoting on the same values, then this solve again (at most once: that one pivots).
    const int attempts = st.finfo.attempts;
    const std::int64_t tasks = st.finfo.tasks;
    const CscMatrix32 a = st.a;
    st.force_threshold = true;
    try {
      factorize(a, exec);
    } catch (...) {
      st.force_threshold = false;
      throw;
    }
    st.force_threshold = false;
    st.finfo.attempts = attempts + 1;
    st.finfo.tasks += tasks;
    x = solve(b, nrhs, exec);
    st.sinfo.refactorized = true;
  }
  return x;
}

}  // namespace stardiff::sparse
