// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/sparse_factor_compare.hpp — compares two sparse LDL^T factorizations in the tests:
// graph_factors(A, S, nb, ex, mode) is the factors of A under the plan S (threshold
// pivoting, unscaled, blocks of nb columns) straight from the task graph
// (insert_ldlt_factorization) with the given fork-join mode; factor_difference(a, b) is the
// largest difference of their L (strictly below the diagonal) and D, relative to the
// largest |entry| of each, -1 when their rows or pivots differ; expect_same_pivots(a, b)
// expects equal inertia, 2x2 pivots, delayed columns and attempts; max_difference(x, ref,
// &mx) is max |x - ref| (mx: max |ref|; the sizes must be equal).
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "sparse/ldlt_internal.hpp"
#include "sparse/ldlt_tasks.hpp"
#include "stardiff/runtime/executor.hpp"
#include "stardiff/sparse/csc_matrix.hpp"
#include "stardiff/sparse/ldlt.hpp"

namespace stardiff::testing {
inline std::vector<sparse::detail::NodeFactor> graph_factors(const sparse::CscMatrix32& A,
                                                             sparse::detail::Symbolic& S, int nb, Executor& ex,
                                                             sparse::detail::ForkJoinMode mode) {
  namespace d = sparse::detail;
  d::complete_row_structures(S);
  std::vector<double> sval(S.ai.size());
  for (std::size_t q = 0; q < sval.size(); ++q) sval[q] = A.values[S.asrc[q]];
  std::vector<d::NodeFactor> nodes(S.ns);
  std::vector<d::NodeCb> cbs(S.ns);
  std::vector<d::NodeStats> stats(S.ns);
  std::vector<d::BigFront> big(S.ns);
  bool failed = false, aborted = false;
  d::NumericCtx ctx;
  ctx.sym = &S;
  ctx.sval = sval.data();
  ctx.nodes = nodes.data();
  ctx.cbs = cbs.data();
  ctx.stats = stats.data();
  ctx.small = 1e-12;
  ctx.static_piv = 1e-8;
  ctx.nb = nb;
  ctx.big = big.data();
  ctx.failed = &failed;
  ctx.abort = &aborted;
  ctx.fork_join = mode;
  d::insert_ldlt_factorization(ex, &ctx);
  return nodes;
}

inline double factor_difference(const std::vector<sparse::detail::NodeFactor>& a,
                                const std::vector<sparse::detail::NodeFactor>& b) {
  if (a.size() != b.size()) return -1;
  double dl = 0, ml = 0, dd = 0, md = 0;
  for (std::size_t s = 0; s < a.size(); ++s) {
    const auto &x = a[s], &y = b[s];
    if (x.idx != y.idx || x.nelim != y.nelim || x.piv != y.piv) return -1;
    const std::size_t m = x.idx.size();
    for (int k = 0; k < x.nelim; ++k) {
      for (std::size_t t = std::size_t(k) + 1; t < m; ++t) {
        const double u = x.L.data()[std::size_t(k) * m + t], v = y.L.data()[std::size_t(k) * m + t];
        dl = std::max(dl, std::fabs(u - v));
        ml = std::max(ml, std::fabs(u));
      }
      dd = std::max({dd, std::fabs(x.d[k] - y.d[k]), std::fabs(x.e[k] - y.e[k])});
      md = std::max({md, std::fabs(x.d[k]), std::fabs(x.e[k])});
    }
  }
  return std::max(ml > 0 ? dl / ml : 0.0, md > 0 ? dd / md : 0.0);
}

inline void expect_same_pivots(const sparse::FactorInfo& a, const sparse::FactorInfo& b) {
  EXPECT_EQ(a.inertia.pos, b.inertia.pos);
  EXPECT_EQ(a.inertia.neg, b.inertia.neg);
  EXPECT_EQ(a.inertia.zero, b.inertia.zero);
  EXPECT_EQ(a.two_by_two, b.two_by_two);
  EXPECT_EQ(a.delayed, b.delayed);
  EXPECT_EQ(a.attempts, b.attempts);
}

inline double max_difference(const std::vector<double>& x, const std::vector<double>& ref, double* max_ref) {
  double dx = 0, mx = 0;
  for (std::size_t i = 0; i < ref.size(); ++i)
    dx = std::max(dx, std::fabs(x[i] - ref[i])), mx = std::max(mx, std::fabs(ref[i]));
  *max_ref = mx;
  return dx;
}
}  // namespace stardiff::testing
