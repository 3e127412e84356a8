// SPDX-License-Identifier: LGPL-2.1-or-later
// src/sparse/ldlt_simplicial.cpp — simplicial mode: SuiteSparse LDL (up-looking, diagonal
// pivots) on P S A S P^T, its acceptance test (see LdltOptions::simplicial_switch and
// try_unpivoted) and its solves.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

extern "C" {
#include <ldl.h>  // SuiteSparse LDL has no C++ guards
}

#include "sparse/ldlt_state.hpp"

namespace stardiff::sparse::detail {

bool factor_simplicial(Ldlt::State& st, const CscMatrix32& A, const std::vector<double>& adiag,
                       const std::vector<double>& ps, FactorInfo& fi) {
  const auto& S = st.sym;
  const int n = S.n;
  // Work arrays live as long as the thread: a fresh solver would otherwise take fresh
  // pages from the kernel for them on every factorization (LDL needs no initial values).
  thread_local std::vector<double> ux, y;
  thread_local std::vector<int> pattern, flag, lnz;
  const double amax = scaled_values(A, ps, S.up, S.ui, S.usrc, ux);
  const double small = std::max(st.opts.zero_pivot * (amax > 0 ? amax : 1.0), std::numeric_limits<double>::min());
  auto& f = st.simp;
  f.li.resize(S.lp[n]);
  f.lx.resize(S.lp[n]);
  f.d.resize(n);
  y.resize(n);
  pattern.resize(n);
  flag.resize(n);
  lnz.resize(n);
  const int done = ldl_numeric(n, const_cast<int*>(S.up.data()), const_cast<int*>(S.ui.data()), ux.data(),
                               const_cast<int*>(S.lp.data()), const_cast<int*>(S.lparent.data()), lnz.data(),
                               f.li.data(), f.lx.data(), f.d.data(), y.data(), pattern.data(), flag.data(), nullptr,
                               nullptr);
  if (done != n) return false;
  fi = FactorInfo{};
  {  // accumulated in locals, not through fi's fields (no store-to-load chain)
    std::int64_t pos = 0;
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    bool ok = true;
    for (int k = 0; k < n; ++k) {
      const double a = std::fabs(f.d[k]);
      ok &= a > small && a <= std::numeric_limits<double>::max();  // false for NaN too
      pos += f.d[k] > 0;
      lo = std::min(lo, a);
      hi = std::max(hi, a);
    }
    if (!ok) return false;
    fi.inertia.pos = pos;
    fi.inertia.neg = n - pos;
    fi.min_pivot = lo;
    fi.max_pivot = hi;
  }
  // Kept if threshold pivoting would take these diagonal pivots (|l| <= 1/u), or under
  // the unpivoted rule (see ldlt.hpp): pivot signs = diagonal signs, bounded growth.
  // ldl_numeric completed every column, so L's columns fill lx[0, lp[n]) exactly.
  const double u = st.opts.pivot_threshold;
  bool threshold_ok = true;
  if (u > 0) {
    const double bound = 1.0 / u;
    const double* lx = f.lx.data();
    const std::size_t nl = std::size_t(S.lp[n]);
    for (std::size_t q0 = 0; q0 < nl && threshold_ok; q0 += 4096) {  // branch-free blocks
      bool bad = false;
      for (std::size_t q = q0; q < std::min(nl, q0 + 4096); ++q) bad |= !(std::fabs(lx[q]) <= bound);
      threshold_ok = !bad;
    }
  }
  fi.pivoting = Pivoting::Threshold;
  if (!threshold_ok) {
    if (!st.opts.try_unpivoted) return false;
    const std::vector<double> diag = scaled_diagonal(adiag, S.perm, ps);
    const DiagonalSigns signs = diagonal_signs(diag, small);
    if (!signs.nonzero && !(st.opts.zero_diagonal_attempt == ZeroDiagonalAttempt::Always ||
                            (st.opts.zero_diagonal_attempt == ZeroDiagonalAttempt::Paired && S.paired_order)))
      return false;
    for (int j = 0; j < n; ++j)  // a zero diagonal entry takes either sign
      if (std::fabs(diag[j]) > small && (diag[j] > 0) != (f.d[j] > 0)) return false;
    if ((signs.pos && signs.neg) || !signs.nonzero) {
      std::vector<double> acc(n);
      for (int k = 0; k < n; ++k) acc[k] += std::fabs(f.d[k]);
      for (int k = 0; k < n; ++k)
        for (int q = S.lp[k]; q < S.lp[k] + lnz[k]; ++q) acc[f.li[q]] += f.lx[q] * f.lx[q] * std::fabs(f.d[k]);
      const double norm = amax > 0 ? amax : 1.0;
      for (double g : acc) fi.growth = std::max(fi.growth, g / norm);
      if (!(fi.growth <= st.opts.growth_limit)) return false;
    }
    fi.pivoting = Pivoting::None;
  }
  fi.flops = S.exact_flops;
  fi.nnz_l = S.exact_lnz;
  fi.tasks = 1;
  fi.mode = FactorMode::Simplicial;
  f.ok = true;
  return true;
}

void solve_simplicial(const Ldlt::State& st, double* y, int nrhs) {
  const auto& S = st.sym;
  const int n = S.n;
  const auto& f = st.simp;
  for (int r = 0; r < nrhs; ++r) {
    double* yr = y + std::size_t(r) * n;
    ldl_lsolve(n, yr, const_cast<int*>(S.lp.data()), const_cast<int*>(f.li.data()), const_cast<double*>(f.lx.data()));
    ldl_dsolve(n, yr, const_cast<double*>(f.d.data()));
    ldl_ltsolve(n, yr, const_cast<int*>(S.lp.data()), const_cast<int*>(f.li.data()), const_cast<double*>(f.lx.data()));
  }
}

}  // namespace stardiff::sparse::detail
