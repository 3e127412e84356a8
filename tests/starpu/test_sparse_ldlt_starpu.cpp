// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/starpu/test_sparse_ldlt_starpu.cpp — the LDL^T factorization as StarPU tasks equals
// the sequential executor's bitwise (factor hash, pivot statistics, solutions, condition
// estimate) on an SPD 3-D Laplacian, indefinite KKT systems (one with delayed pivots, one
// whose unpivoted factorization is kept despite its zero diagonal entries), and a singular
// Laplacian; the recorded task graph follows the plan and the assembly tree; a single-task
// factorization and solve equal one task per front bitwise, and run on the caller (workers
// paused) where nothing else is in flight; a quasi-definite matrix keeps its unpivoted
// factorization (no delays), and a positive-diagonal indefinite one is rejected and pivoted;
// split fronts as fork-join tasks (STARDIFF_LDLT_FORK_JOIN=force) equal their panel/update
// tasks to 1e-14 relative and are bitwise reproducible; device fronts (forced on CPU
// workers) equal the split fronts' tasks to 1e-12 relative, and a malformed
// STARDIFF_LDLT_CUDA_MIN is an Error.
// Runs under eager, lws and dmda (ctest); the ForkJoin tests also under peager and pheft
// with 4 CPU workers (combined workers of up to 4 CPUs, OpenMP inside the fork-join task).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "stardiff/sparse/csc_matrix.hpp"
#include "stardiff/sparse/ldlt.hpp"
#include "stardiff/stardiff.hpp"
#include "runtime_environment.hpp"
#include "sparse/ldlt_internal.hpp"  // the plan, analysed again from the pattern
#include "sparse/ldlt_tasks.hpp"     // the fork-join decision and task counts
#include "sparse_factor_compare.hpp"
#include "sparse_laplacian.hpp"
#include "sparse_residual.hpp"
#include "support/scoped_env.hpp"

using namespace stardiff;
using namespace stardiff::sparse;
using stardiff::testing::expect_same_pivots;
using stardiff::testing::factor_difference;
using stardiff::testing::graph_factors;
using stardiff::testing::laplacian3d;
using stardiff::testing::max_difference;

namespace {
// [[H, B^T], [B, C]]: H a 2-D Laplacian (k x k grid, diagonal 4 + 0.1 U), B with `per`
// random entries U per row, C diagonal: explicit zeros (zero_block) or -1 - 0.5 U, i.e. in
// [-1.5, -0.5]. The values are drawn from mt19937(seed) in entry order.
CscMatrix32 saddle_point(int k, int m1, int per, unsigned seed, bool zero_block) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> U(-1, 1);
  int n1 = k * k, n = n1 + m1;
  std::vector<int> r, c;
  std::vector<double> v;
  for (int y = 0; y < k; ++y)
    for (int x = 0; x < k; ++x) {
      int i = x + k * y;
      r.push_back(i), c.push_back(i), v.push_back(4.0 + 0.1 * U(g));
      if (x + 1 < k) r.push_back(i + 1), c.push_back(i), v.push_back(-1.0);
      if (y + 1 < k) r.push_back(i + k), c.push_back(i), v.push_back(-1.0);
    }
  for (int i = 0; i < m1; ++i) {
    r.push_back(n1 + i), c.push_back(n1 + i), v.push_back(zero_block ? 0.0 : -1.0 - 0.5 * U(g));
    for (int t = 0; t < per; ++t) r.push_back(n1 + i), c.push_back((i * 37 + t * 101) % n1), v.push_back(U(g));
  }
  return from_triplets(n, n, r, c, v, true);
}

// A KKT matrix [[H, B^T], [B, 0]], the zero (2,2) block stored as explicit zeros.
CscMatrix32 kkt(int k, int m1, int per = 3) { return saddle_point(k, m1, per, 11, true); }

// [[H, B^T], [B, -G]], G diagonal in [0.5, 1.5]: quasi-definite, inertia (k^2, m1, 0).
CscMatrix32 sqd(int k, int m1, int per) { return saddle_point(k, m1, per, 23, false); }

// Pairs [[e, 1], [1, e]] (e = 0.1; eigenvalues 1.1 and -0.9) along a chain, each pair
// coupled to the next by two entries 0.05: every row's coupling sums to at most 0.1, so the
// inertia is exactly (npairs, npairs, 0). The diagonal is positive but the matrix is not
// definite: the unpivoted attempt meets a negative pivot on a positive diagonal entry.
CscMatrix32 pair_chain(int npairs) {
  const int n = 2 * npairs;
  std::vector<int> r, c;
  std::vector<double> v;
  for (int p = 0; p < npairs; ++p) {
    const int a = 2 * p, b = a + 1;
    r.push_back(a), c.push_back(a), v.push_back(0.1);
    r.push_back(b), c.push_back(b), v.push_back(0.1);
    r.push_back(b), c.push_back(a), v.push_back(1.0);
    if (p + 1 < npairs) {
      r.push_back(b + 1), c.push_back(b), v.push_back(0.05);
      r.push_back(a + 3), c.push_back(a), v.push_back(0.05);
    }
  }
  return from_triplets(n, n, r, c, v, true);
}

void gated_task(const TaskContext&) {}
const Codelet cl_gated("test_gated", gated_task, nullptr, {{HandleKind::Variable, sizeof(int)}});

struct Result {
  FactorInfo fi;
  std::uint64_t hash;
  std::vector<double> x, x1;
  SolveInfo si;
  double rcond;
};

Result run(const CscMatrix32& A, Executor& ex, ZeroDiagonalPairing pairing = LdltOptions{}.pairing,
           double fill_limit = LdltOptions{}.pairing_fill_limit,
           ZeroDiagonalAttempt attempt = LdltOptions{}.zero_diagonal_attempt) {
  Ldlt l({.small_flops = 0, .subtree_flops = 2e5, .block_size = 16, .split_flops = 2e5,
          .zero_diagonal_attempt = attempt, .pairing = pairing, .pairing_fill_limit = fill_limit});
  const auto& ai = l.analyze(A);
  EXPECT_EQ(ai.mode, FactorMode::Tree);
  Result r;
  r.fi = l.factorize(A, &ex);
  // a rejected unpivoted attempt runs the graph (not the preparation) a second time;
  // (analyze_info().tasks counts split fronts as their panel/update tasks)
  if (!sparse::detail::use_fork_join(sparse::detail::fork_join_mode(), ex))
    EXPECT_EQ(r.fi.tasks, r.fi.attempts * (ai.tasks - 1) + 1);
  r.hash = l.factor_hash();
  std::vector<double> b(std::size_t(A.n_cols) * 2);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = std::cos(0.37 * double(i));
  r.x = l.solve(b, 2, &ex);
  r.si = l.solve_info();
  r.x1 = l.solve(std::vector<double>(b.begin(), b.begin() + A.n_cols), 1, &ex);  // the level-2 path
  r.rcond = l.rcond(&ex);  // its solves as tasks too
  return r;
}

void expect_same(const Result& a, const Result& b) {
  EXPECT_EQ(a.hash, b.hash);
  expect_same_pivots(a.fi, b.fi);
  EXPECT_EQ(a.fi.static_pivots, b.fi.static_pivots);
  EXPECT_EQ(a.fi.tasks, b.fi.tasks);
  EXPECT_EQ(a.fi.pivoting, b.fi.pivoting);
  EXPECT_EQ(a.fi.growth, b.fi.growth);
  ASSERT_EQ(a.x.size(), b.x.size());
  EXPECT_EQ(std::memcmp(a.x.data(), b.x.data(), a.x.size() * sizeof(double)), 0);
  ASSERT_EQ(a.x1.size(), b.x1.size());
  EXPECT_EQ(std::memcmp(a.x1.data(), b.x1.data(), a.x1.size() * sizeof(double)), 0);
  // one right-hand side alone (level-2 kernels) solves as accurately as in a block
  if (!a.fi.singular)
    for (std::size_t i = 0; i < a.x1.size(); ++i) EXPECT_NEAR(a.x1[i], a.x[i], 1e-10 * (1 + std::fabs(a.x[i])));
  EXPECT_EQ(a.si.refine_iters, b.si.refine_iters);
  EXPECT_EQ(a.rcond, b.rcond);
  if (a.fi.singular) EXPECT_EQ(a.rcond, 0.0);
  else EXPECT_GT(a.rcond, 1e-8);
}

// The plan S of A under opts, analysed again from the pattern; returns its number of split
// fronts.
std::size_t split_plan(const CscMatrix32& A, const LdltOptions& opts, sparse::detail::Symbolic& S) {
  sparse::detail::analyze_pattern(A, opts, S);
  std::size_t nsplit = 0;
  for (char c : S.task_split) nsplit += c != 0;
  return nsplit;
}
}  // namespace

TEST(SparseLdltStarpu, LaplacianMatchesSequential) {
  auto A = laplacian3d(14, false);
  SequentialExecutor seq;
  StarpuExecutor par;
  Result a = run(A, seq), b = run(A, par);
  EXPECT_GT(a.fi.tasks, 10);
  EXPECT_EQ(a.fi.inertia.pos, A.n_cols);
  EXPECT_EQ(a.fi.pivoting, Pivoting::None);  // SPD: the unpivoted attempt is kept
  EXPECT_EQ(a.fi.attempts, 1);
  EXPECT_LE(a.si.backward_error, 1e-14);
  expect_same(a, b);
  Result c = run(A, par);  // run to run
  expect_same(b, c);
}

TEST(SparseLdltStarpu, KktWithDelaysMatchesSequential) {
  auto A = kkt(40, 500);
  SequentialExecutor seq;
  StarpuExecutor par;
  // without the zero-diagonal pairing (with it this matrix takes the unpivoted path: below)
  Result a = run(A, seq, ZeroDiagonalPairing::None, 1.5, ZeroDiagonalAttempt::Always),
         b = run(A, par, ZeroDiagonalPairing::None, 1.5, ZeroDiagonalAttempt::Always);
  EXPECT_EQ(a.fi.inertia.pos, 1600);
  EXPECT_EQ(a.fi.inertia.neg, 500);
  EXPECT_GT(a.fi.delayed + a.fi.two_by_two, 0);
  // zero diagonal entries, unpivoted attempt forced (Always): it meets a zero pivot (a
  // constraint ordered before all its neighbours), threshold pivoting runs
  EXPECT_EQ(a.fi.pivoting, Pivoting::Threshold);
  EXPECT_EQ(a.fi.attempts, 2);
  EXPECT_LE(a.si.backward_error, 1e-14);
  expect_same(a, b);
}

TEST(SparseLdltStarpu, KktPairedMatchesSequential) {
  // The same matrix with each zero-diagonal column deferred to right after its partner:
  // every pivot 1x1 and sign-consistent, the unpivoted factorization kept, bitwise equal
  // to the sequential one under each scheduler.
  auto A = kkt(40, 500);
  SequentialExecutor seq;
  StarpuExecutor par;
  // (fill limit off: with it, this deferred order is over the limit and the delays stay)
  Result a = run(A, seq, ZeroDiagonalPairing::Defer, 0), b = run(A, par, ZeroDiagonalPairing::Defer, 0);
  EXPECT_EQ(a.fi.inertia.pos, 1600);
  EXPECT_EQ(a.fi.inertia.neg, 500);
  EXPECT_EQ(a.fi.pivoting, Pivoting::None);
  EXPECT_EQ(a.fi.delayed + a.fi.two_by_two, 0);
  EXPECT_LE(a.si.backward_error, 1e-14);
  expect_same(a, b);
  Result c = run(A, seq, ZeroDiagonalPairing::Compress), d = run(A, par, ZeroDiagonalPairing::Compress);
  EXPECT_EQ(c.fi.inertia.neg, 500);
  expect_same(c, d);
}

TEST(SparseLdltStarpu, KktKeptUnpivotedMatchesSequential) {
  // Constraints with 16 entries come after their neighbours in the AMD order (no pairing
  // needed): every zero
  // diagonal entry gets a pivot from its fill, the unpivoted factorization is kept (no
  // delays, growth measured), its factors and solutions bitwise those of the sequential run.
  auto A = kkt(40, 200, 16);
  SequentialExecutor seq;
  StarpuExecutor par;
  Result a = run(A, seq, ZeroDiagonalPairing::None, 1.5, ZeroDiagonalAttempt::Always),
         b = run(A, par, ZeroDiagonalPairing::None, 1.5, ZeroDiagonalAttempt::Always);
  EXPECT_EQ(a.fi.inertia.pos, 1600);
  EXPECT_EQ(a.fi.inertia.neg, 200);
  EXPECT_EQ(a.fi.pivoting, Pivoting::None);
  EXPECT_EQ(a.fi.attempts, 1);
  EXPECT_EQ(a.fi.delayed + a.fi.two_by_two, 0);
  EXPECT_GT(a.fi.growth, 0.0);
  EXPECT_LE(a.si.backward_error, 1e-14);
  EXPECT_FALSE(a.si.refactorized);
  expect_same(a, b);
}

TEST(SparseLdltStarpu, ForkJoinFrontsMatchSplitFronts) {
  // Each split front as one fork-join task (STARDIFF_LDLT_FORK_JOIN=force; under peager and
  // pheft with 4 CPUs it may hold a combined worker and run its steps as OpenMP tasks): the
  // factors, pivot statistics, solutions and rcond are bitwise the same run to run, on StarPU
  // and on the sequential executor (one thread); against the split fronts' panel/update
  // tasks (=0) the inertia and pivot statistics are equal and the factors equal to 1e-14
  // relative (the fork-join updates run tile by tile: each entry gets the same updates in the
  // same order, from narrower BLAS calls). One task per split front; backward error <= 1e-14.
  // SPD (unpivoted), KKT with delayed columns and 2x2 pivots, KKT with denser coupling.
  const std::vector<CscMatrix32> mats = {laplacian3d(14, false), kkt(40, 500), kkt(40, 300, 16)};
  SequentialExecutor seq;
  StarpuExecutor par;
  std::printf("StarPU parallel_width %d\n", par.parallel_width());
  for (std::size_t m = 0; m < mats.size(); ++m) {
    SCOPED_TRACE("matrix " + std::to_string(m));
    const CscMatrix32& A = mats[m];
    Result split;
    {
      stardiff::testing::ScopedEnv env("STARDIFF_LDLT_FORK_JOIN", "0");
      split = run(A, par);
    }
    stardiff::testing::ScopedEnv env("STARDIFF_LDLT_FORK_JOIN", "force");
    const Result fj = run(A, par), fj_again = run(A, par), fj_seq = run(A, seq);
    // the graph: one ldlt_big_fork_join task per split front and attempt, nothing else of them
    const LdltOptions opts{.small_flops = 0, .subtree_flops = 2e5, .block_size = 16, .split_flops = 2e5};
    sparse::detail::Symbolic S;
    const std::size_t nsplit = split_plan(A, opts, S);
    ASSERT_GT(nsplit, 0u);
    Ldlt l(opts);
    l.analyze(A);
    RecordingExecutor rec(&par);
    const FactorInfo fi = l.factorize(A, &rec);
    EXPECT_EQ(rec.counts()["ldlt_big_fork_join"], nsplit * std::size_t(fi.attempts));
    EXPECT_EQ(rec.counts()["ldlt_big_panel"], 0u);
    EXPECT_EQ(rec.counts()["ldlt_big_update"], 0u);
    EXPECT_EQ(fi.tasks, fi.attempts * sparse::detail::count_factor_tasks(S, opts.block_size, true) + 1);
    EXPECT_EQ(std::int64_t(rec.tasks_submitted()), fi.tasks);
    EXPECT_EQ(l.factor_hash(), fj.hash);
    EXPECT_EQ(fj.fi.tasks, fi.tasks);
    EXPECT_LT(fj.fi.tasks, split.fi.tasks);
    // the fork-join graph's critical path is shorter than its work once its tasks are shared
    EXPECT_LT(rec.critical_path(4).length, rec.critical_path(1).length);
    expect_same(fj, fj_again);
    expect_same(fj, fj_seq);
    expect_same_pivots(fj.fi, split.fi);
    EXPECT_EQ(fj.fi.pivoting, split.fi.pivoting);
    double mx = 0;
    const double dx = max_difference(fj.x, split.x, &mx);
    EXPECT_LE(dx, 1e-12 * mx);
    // the factors themselves, from the graph, threshold pivoting on the unscaled matrix
    const auto f_split = graph_factors(A, S, opts.block_size, par, sparse::detail::ForkJoinMode::Never);
    const auto f_fj = graph_factors(A, S, opts.block_size, par, sparse::detail::ForkJoinMode::Force);
    const auto f_fj_seq = graph_factors(A, S, opts.block_size, seq, sparse::detail::ForkJoinMode::Force);
    const double diff = factor_difference(f_split, f_fj);
    EXPECT_GE(diff, 0.0);  // same rows and pivots
    EXPECT_LE(diff, 1e-14);
    EXPECT_EQ(factor_difference(f_fj, f_fj_seq), 0.0);  // bitwise on one thread or several
    std::vector<double> b(std::size_t(A.n_cols));
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = std::cos(0.37 * double(i));
    const double rr = stardiff::testing::relres(A, fj.x1, b);
    std::printf("matrix %zu: n %d, %zu split fronts, tasks %lld (split %lld), attempts %d, pivoting %s, delayed %lld, "
                "2x2 %lld, relres %.2e, backward error %.2e, hash %s the split tasks', factors within %.2e\n",
                m, A.n_cols, nsplit, (long long)fj.fi.tasks, (long long)split.fi.tasks, fj.fi.attempts,
                to_string(fj.fi.pivoting), (long long)fj.fi.delayed, (long long)fj.fi.two_by_two, rr,
                fj.si.backward_error, fj.hash == split.hash ? "equals" : "differs from", diff);
    EXPECT_LE(fj.si.backward_error, 1e-14);
    EXPECT_LE(rr, m == 0 ? 1e-12 : 1e-11);  // (the KKT matrices: relres 1.6e-12 at backward error ~eps)
    if (m == 1) EXPECT_GT(fj.fi.delayed, 0);
  }
}

TEST(SparseLdltStarpu, DeviceFrontTwinsMatchSplitFronts) {
  // Device fronts (ldlt_tasks.hpp: column blocks as StarPU matrix handles over the front,
  // window copies, cl_ldlt_big_update_dev) forced on CPU workers, every split front one
  // (STARDIFF_LDLT_CUDA_MIN=0): the CPU twin of the CUDA update (one dgemm per window)
  // against the split fronts' own tasks: same rows and pivots, inertia and pivot statistics,
  // factors and solutions within 1e-12 relative; the KKT matrix with delayed columns takes
  // the degraded path (its front buffer unused). Bitwise the same run to run.
  const std::vector<CscMatrix32> mats = {laplacian3d(14, false), kkt(40, 500), kkt(40, 300, 16)};
  StarpuExecutor par;
  for (std::size_t m = 0; m < mats.size(); ++m) {
    SCOPED_TRACE("matrix " + std::to_string(m));
    const CscMatrix32& A = mats[m];
    stardiff::testing::ScopedEnv fj("STARDIFF_LDLT_FORK_JOIN", "0");
    const LdltOptions opts{.small_flops = 0, .subtree_flops = 2e5, .block_size = 16, .split_flops = 2e5};
    sparse::detail::Symbolic S;
    const std::size_t nsplit = split_plan(A, opts, S);
    ASSERT_GT(nsplit, 0u);
    const Result host = run(A, par);
    const auto f_host = graph_factors(A, S, opts.block_size, par, sparse::detail::ForkJoinMode::Never);
    stardiff::testing::ScopedEnv min("STARDIFF_LDLT_CUDA_MIN", "0");
    sparse::detail::set_device_fronts_without_cuda(true);
    const Result dev = run(A, par), dev_again = run(A, par);
    const auto f_dev = graph_factors(A, S, opts.block_size, par, sparse::detail::ForkJoinMode::Never);
    RecordingExecutor rec(&par);
    Ldlt l(opts);
    l.analyze(A);
    l.factorize(A, &rec);
    sparse::detail::set_device_fronts_without_cuda(false);
    EXPECT_GT(rec.counts()["ldlt_big_update_dev"], 0u);  // every split front's updates
    EXPECT_EQ(rec.counts()["ldlt_big_update"], 0u);
    EXPECT_GT(rec.counts()["ldlt_big_panel_dev"], 0u);
    EXPECT_EQ(l.factor_hash(), dev.hash);
    expect_same(dev, dev_again);
    expect_same_pivots(dev.fi, host.fi);
    EXPECT_EQ(dev.fi.tasks, host.fi.tasks);
    double mx = 0;
    const double dx = max_difference(dev.x, host.x, &mx);
    EXPECT_LE(dx, 1e-12 * mx);
    const double diff = factor_difference(f_host, f_dev);
    std::printf("matrix %zu: %zu split fronts, delayed %lld, 2x2 %lld, factors within %.2e, solutions within %.2e, "
                "hash %s\n", m, nsplit, (long long)dev.fi.delayed, (long long)dev.fi.two_by_two, diff, mx > 0 ? dx / mx : 0.0,
                dev.hash == host.hash ? "equal" : "differs");
    EXPECT_GE(diff, 0.0);  // same rows and pivots
    EXPECT_LE(diff, 1e-12);
    EXPECT_LE(dev.si.backward_error, 1e-14);
    if (m == 1) EXPECT_GT(dev.fi.delayed, 0);
  }
}

TEST(SparseLdltStarpu, BadCudaMinIsAnError) {
  // STARDIFF_LDLT_CUDA_MIN is read where device fronts may run: anything but a non-negative
  // integer is an Error naming it (forced here: no CUDA worker on this executor).
  StarpuExecutor par;
  const CscMatrix32 A = laplacian3d(14, false);
  sparse::detail::set_device_fronts_without_cuda(true);
  for (const char* bad : {"big", "-1", "12x"}) {
    stardiff::testing::ScopedEnv env("STARDIFF_LDLT_CUDA_MIN", bad);
    Ldlt l({.small_flops = 0, .subtree_flops = 2e5, .block_size = 16, .split_flops = 2e5});
    l.analyze(A);
    try {
      l.factorize(A, &par);
      ADD_FAILURE() << "no error for STARDIFF_LDLT_CUDA_MIN=" << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("STARDIFF_LDLT_CUDA_MIN"), std::string::npos) << e.what();
    }
  }
  sparse::detail::set_device_fronts_without_cuda(false);
}

TEST(SparseLdltStarpu, SingularMatchesSequential) {
  auto A = laplacian3d(10, true);
  SequentialExecutor seq;
  StarpuExecutor par;
  Result a = run(A, seq), b = run(A, par);
  EXPECT_TRUE(a.fi.singular);
  EXPECT_EQ(a.fi.attempts, 2);  // the unpivoted attempt meets the zero pivot at the root
  EXPECT_EQ(a.fi.inertia.zero, 1);
  EXPECT_EQ(a.fi.inertia.pos, A.n_cols - 1);
  expect_same(a, b);
}

TEST(SparseLdltStarpu, RecordedGraphFollowsTheAssemblyTree) {
  // Factorized through a RecordingExecutor over StarPU. The plan, analysed again from the
  // pattern, predicts per entry the tasks recorded for it (one ldlt_subtree task, or for a
  // split front: begin, an assembly per column block, a panel per window, the updates,
  // finish, counted here in closed form); every recorded edge between entries runs from an
  // entry's last task to the first task of the entry holding the parent of one of its
  // supernodes, and every such child -> parent relation has its edge; the factors equal
  // unrecorded StarPU and sequential runs' bitwise.
  auto A = laplacian3d(12, false);
  const LdltOptions opts{.small_flops = 0, .subtree_flops = 2e5, .block_size = 16, .split_flops = 2e5};
  sparse::detail::Symbolic S;
  sparse::detail::analyze_pattern(A, opts, S);
  const int nt = int(S.task_lo.size()), nb = opts.block_size, bs = 4 * nb;
  std::vector<int> node2task(S.ns, -1);
  for (int t = 0; t < nt; ++t)
    for (int s = S.task_lo[t]; s <= S.task_hi[t]; ++s) node2task[s] = t;

  // Expected codelets of each plan entry, in submission order.
  std::vector<std::vector<std::string>> expected(nt);
  int split = 0, grouped = 0;
  for (int t = 0; t < nt; ++t) {
    if (!S.task_split[t]) {
      expected[t] = {"ldlt_subtree"};
      grouped += S.task_hi[t] > S.task_lo[t];
      continue;
    }
    ++split;
    const int s = S.task_lo[t], p0 = S.sn_first[s + 1] - S.sn_first[s];
    const int m0 = p0 + int(S.row_ptr[s + 1] - S.row_ptr[s]);
    const int nblk = (m0 + bs - 1) / bs, nwin = (p0 + nb - 1) / nb, first_cb = (p0 + bs - 1) / bs;
    const int group = std::max(1, 512 / nb), ngroups = (nwin + group - 1) / group;
    int updates = ngroups * (nblk - first_cb);  // the contribution block's columns, once per group
    for (int w = 0; w < nwin; ++w) updates += std::min(nblk, first_cb) - 1 - (w * nb) / bs;
    expected[t].push_back("ldlt_big_begin");
    expected[t].insert(expected[t].end(), nblk, "ldlt_big_assemble");
    expected[t].insert(expected[t].end(), nwin, "ldlt_big_panel");
    expected[t].insert(expected[t].end(), updates, "ldlt_big_update");
    expected[t].push_back("ldlt_big_finish");
  }
  ASSERT_GT(split, 0);    // the test covers split fronts ...
  ASSERT_GT(grouped, 0);  // ... and grouped subtrees

  Ldlt l(opts);
  l.analyze(A);
  StarpuExecutor spu;
  RecordingExecutor rec(&spu);
  const FactorInfo fi = l.factorize(A, &rec);
  ASSERT_EQ(fi.attempts, 1);  // SPD: the graph ran once
  const auto& tasks = rec.tasks();
  ASSERT_FALSE(tasks.empty());
  EXPECT_EQ(tasks[0].codelet, "host_step");  // the preparation
  EXPECT_EQ(std::int64_t(tasks.size()), fi.tasks);
  EXPECT_EQ(std::int64_t(tasks.size()), l.analyze_info().tasks);

  // Recorded tasks by plan entry: submitted entry by entry, in plan order.
  std::vector<int> owner(tasks.size(), -1);
  std::vector<std::size_t> first(nt), last(nt);
  std::size_t i = 1;
  for (int t = 0; t < nt; ++t) {
    first[t] = i;
    std::map<std::string, int> want, got;
    for (const auto& c : expected[t]) ++want[c];
    for (std::size_t k = 0; k < expected[t].size() && i < tasks.size(); ++k, ++i) {
      ++got[tasks[i].codelet];
      owner[i] = t;
    }
    last[t] = i - 1;
    EXPECT_EQ(got, want) << "plan entry " << t;
    EXPECT_EQ(tasks[first[t]].codelet, expected[t].front()) << "plan entry " << t;
    EXPECT_EQ(tasks[last[t]].codelet, expected[t].back()) << "plan entry " << t;
  }
  EXPECT_EQ(i, tasks.size());

  // Edges between entries: exactly the child -> parent relations of the assembly tree.
  std::set<std::pair<std::size_t, std::size_t>> cross, want_cross;
  // (The preparation has finished before the graph is submitted: an edge out of it only
  // means that a factorization token took the address of its released token.)
  for (auto [u, v] : rec.edges()) {
    if (u == 0) continue;
    ASSERT_GE(owner[u], 0);
    ASSERT_GE(owner[v], 0);
    if (owner[u] != owner[v]) cross.insert({u, v});
  }
  for (int c = 0; c < S.ns; ++c) {
    const int p = S.sn_parent[c];
    if (p != -1 && node2task[c] != node2task[p]) want_cross.insert({last[node2task[c]], first[node2task[p]]});
  }
  EXPECT_FALSE(want_cross.empty());
  EXPECT_EQ(cross, want_cross);

  Ldlt plain(opts), seq_l(opts);
  plain.analyze(A);
  plain.factorize(A, &spu);
  SequentialExecutor seq;
  seq_l.analyze(A);
  seq_l.factorize(A, &seq);
  EXPECT_EQ(l.factor_hash(), plain.factor_hash());
  EXPECT_EQ(l.factor_hash(), seq_l.factor_hash());
}

TEST(SparseLdltStarpu, SolveIsTwoTasksPerPlannedTask) {
  // One forward (L, D) and one backward (L^T) task per task of the plan; three right-hand
  // sides; StarPU's solutions equal the sequential executor's bitwise, and each column
  // solves A x = b to a small residual without refinement.
  auto A = laplacian3d(10, false);
  Ldlt l({.max_refine = 0, .small_flops = 0, .subtree_flops = 2e5, .max_fgmres = 0});
  l.analyze(A);
  SequentialExecutor seq;
  l.factorize(A, &seq);
  const std::size_t n = A.n_cols, planned = std::size_t(l.analyze_info().tasks) - 1;  // minus the preparation
  ASSERT_GT(planned, 4u);
  std::vector<double> b(3 * n);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = std::sin(0.37 * double(i) + 1.0);
  StarpuExecutor spu;
  RecordingExecutor rec(&spu);
  const auto xs = l.solve(b, 3, &rec);
  EXPECT_EQ(rec.counts()["ldlt_solve_forward"], planned);
  EXPECT_EQ(rec.counts()["ldlt_solve_backward"], planned);
  const auto xq = l.solve(b, 3, &seq);
  ASSERT_EQ(xs.size(), xq.size());
  EXPECT_EQ(std::memcmp(xs.data(), xq.data(), xs.size() * sizeof(double)), 0);
  std::vector<double> ax(n);
  for (int k = 0; k < 3; ++k) {
    multiply(A, xs.data() + k * n, ax.data());
    double rn = 0, bn = 0;
    for (std::size_t i = 0; i < n; ++i) rn = std::max(rn, std::abs(ax[i] - b[k * n + i])), bn = std::max(bn, std::abs(b[k * n + i]));
    EXPECT_LT(rn / bn, 1e-12) << "rhs " << k;
  }
}

TEST(SparseLdltStarpu, SingleTaskEqualsPerFrontTasks) {
  // Below small_flops the whole numeric factorization (preparation and every attempt) is
  // one task and each refined solve (and the rcond estimate) another, the fronts run in postorder inside it by the
  // per-front kernels: its factors, pivot statistics, solutions and rcond equal bitwise
  // those of one task per front (subtree_flops 1: no grouping), under StarPU and the
  // sequential executor. Matrices: SPD, KKT with delays and 2x2 pivots (pivoted after a
  // rejected unpivoted attempt), KKT kept unpivoted, singular (static pivot).
  const LdltOptions one{.simplicial_switch = 0, .zero_diagonal_attempt = ZeroDiagonalAttempt::Always,
                        .pairing = ZeroDiagonalPairing::None};
  LdltOptions fronts = one;
  fronts.small_flops = 0;
  fronts.subtree_flops = 1;
  const std::vector<CscMatrix32> mats = {laplacian3d(9, false), kkt(20, 120), kkt(20, 60, 16), laplacian3d(8, true)};
  SequentialExecutor seq;
  StarpuExecutor par;
  for (std::size_t m = 0; m < mats.size(); ++m) {
    SCOPED_TRACE("matrix " + std::to_string(m));
    const CscMatrix32& A = mats[m];
    std::vector<Result> res;
    for (Executor* ex : {static_cast<Executor*>(&seq), static_cast<Executor*>(&par)})
      for (const LdltOptions* o : std::vector<const LdltOptions*>{&one, &fronts}) {
        Ldlt l(*o);
        const auto& ai = l.analyze(A);
        Result r;
        RecordingExecutor rec(ex);
        r.fi = l.factorize(A, &rec);
        std::vector<double> b(std::size_t(A.n_cols) * 2);
        for (std::size_t i = 0; i < b.size(); ++i) b[i] = std::cos(0.37 * double(i));
        RecordingExecutor srec(ex);
        r.x = l.solve(b, 2, &srec);
        r.si = l.solve_info();
        r.x1 = l.solve(std::vector<double>(b.begin(), b.begin() + A.n_cols), 1, ex);
        RecordingExecutor rrec(ex);
        r.rcond = l.rcond(&rrec);
        r.hash = l.factor_hash();
        if (o == &one) {
          EXPECT_EQ(rrec.tasks_submitted(), r.fi.static_pivots > 0 ? 0u : 1u);  // the whole estimate (none: singular)
          EXPECT_EQ(ai.mode, FactorMode::SingleTask);
          EXPECT_EQ(ai.tasks, 1);
          EXPECT_EQ(r.fi.tasks, 1);  // every attempt inside the one task
          EXPECT_EQ(rec.tasks_submitted(), 1u);
          EXPECT_EQ(srec.tasks_submitted(), 1u);  // first solve, refinement and FGMRES
        } else {
          EXPECT_EQ(ai.mode, FactorMode::Tree);
          EXPECT_EQ(ai.tasks, 1 + ai.supernodes);  // the preparation, then a task per front
          EXPECT_GT(ai.supernodes, 10);
          EXPECT_EQ(std::int64_t(rec.tasks_submitted()), r.fi.tasks);
          EXPECT_GT(srec.tasks_submitted(), std::size_t(2 * ai.supernodes) - 1);
        }
        res.push_back(r);
      }
    for (std::size_t k = 1; k < res.size(); ++k) {
      SCOPED_TRACE("run " + std::to_string(k));
      res[k].fi.tasks = res[0].fi.tasks;  // (the one thing meant to differ)
      expect_same(res[0], res[k]);
    }
    if (m == 1) EXPECT_GT(res[0].fi.delayed + res[0].fi.two_by_two, 0);
    if (m == 1) EXPECT_EQ(res[0].fi.attempts, 2);
    if (m == 2) EXPECT_EQ(res[0].fi.pivoting, Pivoting::None);
    if (m == 3) EXPECT_TRUE(res[0].fi.singular);
  }
}

TEST(SparseLdltStarpu, QuasiDefiniteKeptUnpivotedMatchesSequential) {
  // A quasi-definite matrix has an LDL^T with 1x1 pivots in any symmetric order, each
  // pivot with its diagonal entry's sign: the unpivoted attempt is kept, no column delayed
  // and no 2x2 pivot, inertia (size of the (1,1) block, size of the (2,2) block, 0), and
  // the factors equal the sequential executor's bitwise.
  auto A = sqd(40, 300, 5);
  SequentialExecutor seq;
  StarpuExecutor par;
  Result a = run(A, seq), b = run(A, par);
  EXPECT_EQ(a.fi.inertia.pos, 1600);
  EXPECT_EQ(a.fi.inertia.neg, 300);
  EXPECT_EQ(a.fi.inertia.zero, 0);
  EXPECT_EQ(a.fi.pivoting, Pivoting::None);
  EXPECT_EQ(a.fi.attempts, 1);
  EXPECT_EQ(a.fi.delayed, 0);
  EXPECT_EQ(a.fi.two_by_two, 0);
  EXPECT_GT(a.fi.growth, 0.0);  // mixed signs: growth measured
  EXPECT_LE(a.si.backward_error, 1e-14);
  EXPECT_FALSE(a.si.refactorized);
  expect_same(a, b);
}

TEST(SparseLdltStarpu, RejectedUnpivotedAttemptStillSolves) {
  // Positive diagonal, indefinite matrix: the unpivoted attempt is rejected (a pivot's sign
  // differs from its diagonal entry's), threshold pivoting gives the exact
  // inertia and a solution to 1e-12, bitwise the same under StarPU.
  auto A = pair_chain(1500);
  SequentialExecutor seq;
  StarpuExecutor par;
  Result a = run(A, seq), b = run(A, par);
  EXPECT_EQ(a.fi.attempts, 2);
  EXPECT_EQ(a.fi.pivoting, Pivoting::Threshold);
  EXPECT_EQ(a.fi.inertia.pos, 1500);
  EXPECT_EQ(a.fi.inertia.neg, 1500);
  EXPECT_EQ(a.fi.inertia.zero, 0);
  EXPECT_LE(a.si.backward_error, 1e-12);
  std::vector<double> b1(A.n_cols), ax(A.n_cols);
  for (int i = 0; i < A.n_cols; ++i) b1[i] = std::cos(0.37 * double(i));  // r.x1's right-hand side
  multiply(A, a.x1.data(), ax.data());
  double rn = 0, bn = 0;
  for (int i = 0; i < A.n_cols; ++i) rn = std::max(rn, std::abs(ax[i] - b1[i])), bn = std::max(bn, std::abs(b1[i]));
  EXPECT_LE(rn / bn, 1e-12);
  expect_same(a, b);
}

TEST(SparseLdltStarpu, SingleTaskRunsOnTheCallerWhenNothingIsInFlight) {
  // Single-task and simplicial mode on a StarPU executor with no task in flight: the
  // factorization runs on the caller with the workers paused (FactorInfo::tasks 0), bitwise
  // what the sequential executor gives and what one task gives (through a recording
  // executor, or while another task is in flight); so do the solve and rcond.
  auto A = sqd(40, 300, 5);
  ASSERT_GE(A.nnz(), 4000);  // not tiny (tiny patterns always run on the caller)
  const LdltOptions single{.small_flops = 1e12, .simplicial_switch = 0};
  const LdltOptions simplicial{.small_flops = 1e12, .simplicial_switch = 1e9};
  std::vector<double> b(A.n_cols);
  for (int i = 0; i < A.n_cols; ++i) b[i] = std::cos(0.37 * double(i));
  for (const LdltOptions* o : {&single, &simplicial}) {
    SCOPED_TRACE(o == &single ? "single-task" : "simplicial");
    SequentialExecutor seq;
    StarpuExecutor par;
    RecordingExecutor rec(&par);
    Ldlt l0(*o), l1(*o), l2(*o), l3(*o);
    EXPECT_EQ(l0.analyze(A, &seq).mode, o == &single ? FactorMode::SingleTask : FactorMode::Simplicial);
    l1.analyze(A, &par);
    l2.analyze(A, &par);
    l3.analyze(A, &par);
    const FactorInfo f0 = l0.factorize(A, &seq), f1 = l1.factorize(A, &par), f2 = l2.factorize(A, &rec);
    EXPECT_EQ(f0.tasks, 1);  // the sequential executor's inline task
    EXPECT_EQ(f1.tasks, 0);
    EXPECT_EQ(f2.tasks, 1);
    EXPECT_EQ(rec.tasks_submitted(), 1u);
    EXPECT_EQ(f1.inertia.pos, 1600);
    EXPECT_EQ(f1.inertia.neg, 300);
    EXPECT_EQ(f1.delayed + f1.two_by_two, 0);
    EXPECT_EQ(f1.attempts, 1);
    EXPECT_EQ(l1.factor_hash(), l0.factor_hash());
    EXPECT_EQ(l2.factor_hash(), l0.factor_hash());
    {  // a task in flight (waiting for a handle the test holds): the factorization is a task
      VariableHandle<int> gate(0, "gate");
      par.submit(cl_gated, {in(gate)});  // registers gate with StarPU, so acquire() holds it
      par.wait_all();
      FactorInfo f3;
      {
        auto held = gate.acquire(Access::RW);
        par.submit(cl_gated, {in(gate)});
        f3 = l3.factorize(A, &par);
      }
      par.wait_all();
      EXPECT_EQ(f3.tasks, 1);
      EXPECT_EQ(l3.factor_hash(), l0.factor_hash());
    }
    const auto x0 = l0.solve(b, 1, &seq), x1 = l1.solve(b, 1, &par);
    ASSERT_EQ(x0.size(), x1.size());
    EXPECT_EQ(std::memcmp(x0.data(), x1.data(), x0.size() * sizeof(double)), 0);
    EXPECT_LE(l1.solve_info().backward_error, 1e-14);
    EXPECT_EQ(l0.rcond(&seq), l1.rcond(&par));
  }
}
