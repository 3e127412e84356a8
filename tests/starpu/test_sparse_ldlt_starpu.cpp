// tests/starpu/test_sparse_ldlt_starpu.cpp — the LDL^T factorization as StarPU tasks equals
// the sequential executor's bitwise (factor hash, pivot statistics, solutions, condition
// estimate) on an SPD 3-D Laplacian, an indefinite KKT system with delayed pivots, and a
// singular Laplacian; the task graph is the analysed plan. Runs under eager, lws and dmda (ctest).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "stardiff/sparse/csc_matrix.hpp"
#include "stardiff/sparse/ldlt.hpp"
#include "stardiff/stardiff.hpp"
#include "runtime_environment.hpp"
#include "sparse_laplacian.hpp"

using namespace stardiff;
using namespace stardiff::sparse;
using stardiff::testing::laplacian3d;

namespace {
// [[H, B^T], [B, -delta I]] with H a 2-D Laplacian plus random coupling, zero (2,2) block.
CscMatrix32 kkt(int k, int m1) {
  std::mt19937 g(11);
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
    r.push_back(n1 + i), c.push_back(n1 + i), v.push_back(0.0);
    for (int t = 0; t < 3; ++t) r.push_back(n1 + i), c.push_back((i * 37 + t * 101) % n1), v.push_back(U(g));
  }
  return from_triplets(n, n, r, c, v, true);
}

struct Result {
  FactorInfo fi;
  std::uint64_t hash;
  std::vector<double> x, x1;
  SolveInfo si;
  double rcond;
};

Result run(const CscMatrix32& A, Executor& ex) {
  Ldlt l({.small_flops = 0, .subtree_flops = 2e5, .block_size = 16, .split_flops = 2e5});
  const auto& ai = l.analyze(A);
  EXPECT_EQ(ai.mode, FactorMode::Tree);
  Result r;
  r.fi = l.factorize(A, &ex);
  // a rejected unpivoted attempt runs the graph (not the preparation) a second time
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
  EXPECT_EQ(a.fi.inertia.pos, b.fi.inertia.pos);
  EXPECT_EQ(a.fi.inertia.neg, b.fi.inertia.neg);
  EXPECT_EQ(a.fi.inertia.zero, b.fi.inertia.zero);
  EXPECT_EQ(a.fi.two_by_two, b.fi.two_by_two);
  EXPECT_EQ(a.fi.delayed, b.fi.delayed);
  EXPECT_EQ(a.fi.static_pivots, b.fi.static_pivots);
  EXPECT_EQ(a.fi.tasks, b.fi.tasks);
  EXPECT_EQ(a.fi.pivoting, b.fi.pivoting);
  EXPECT_EQ(a.fi.attempts, b.fi.attempts);
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
  Result a = run(A, seq), b = run(A, par);
  EXPECT_EQ(a.fi.inertia.pos, 1600);
  EXPECT_EQ(a.fi.inertia.neg, 500);
  EXPECT_GT(a.fi.delayed + a.fi.two_by_two, 0);
  EXPECT_EQ(a.fi.pivoting, Pivoting::Threshold);  // zero diagonal: no unpivoted attempt
  EXPECT_EQ(a.fi.attempts, 1);
  EXPECT_LE(a.si.backward_error, 1e-14);
  expect_same(a, b);
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

TEST(SparseLdltStarpu, RecordedGraphIsThePlan) {
  auto A = laplacian3d(12, false);
  Ldlt l({.small_flops = 0, .subtree_flops = 2e5});
  const auto& ai = l.analyze(A);
  RecordingExecutor rec;  // record only: the factorization is not run
  SequentialExecutor seq;
  RecordingExecutor fwd(&seq);
  l.factorize(A, &fwd);
  auto counts = fwd.counts();
  EXPECT_EQ(counts["host_step"], 1u);  // the preparation (checks, scaling)
  EXPECT_EQ(std::int64_t(counts["ldlt_subtree"]) + 1, ai.tasks);
  EXPECT_FALSE(fwd.edges().empty());
  (void)rec;
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
