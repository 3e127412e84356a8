// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/cuda/test_sparse_ldlt_cuda.cpp — the sparse LDL^T with device fronts (split fronts'
// updates by cublasDgemm on a CUDA worker, ldlt_tasks.hpp) against the same factorization
// on CPU workers only: same rows, pivots, inertia and pivot statistics (the pivoting stays on
// the host), factors and solutions within 1e-12 relative (not bitwise: cuBLAS sums in
// another order than OpenBLAS), on the 3-D Laplacian 24^3 and on the indefinite KKT matrix
// aug3dcqp (STARDIFF_SHARED_DATA/matrices; skipped where absent), and some updates ran on
// the device. Skips when StarPU has no CUDA codelets or no CUDA device is present.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "sparse/ldlt_internal.hpp"
#include "sparse/ldlt_tasks.hpp"
#include "sparse_factor_compare.hpp"
#include "sparse_laplacian.hpp"
#include "sparse_residual.hpp"
#include "stardiff/sparse/ldlt.hpp"
#include "stardiff/sparse/matrix_market.hpp"
#include "stardiff/stardiff.hpp"
#include "support/scoped_env.hpp"

using namespace stardiff;
using namespace stardiff::sparse;
namespace sd = stardiff::sparse::detail;

namespace {
bool have_device() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

// Split fronts from 2e6 flops, blocks of 4 x 32 columns; every split front of order >= 256
// a device front.
const LdltOptions kOpts{.small_flops = 0, .subtree_flops = 2e6, .block_size = 32, .split_flops = 2e6};

struct Run {
  FactorInfo fi;
  std::vector<double> x;
  SolveInfo si;
  std::vector<sd::NodeFactor> nodes;  // the graph's factors (threshold pivoting, unscaled)
};

// One runtime (ncuda CUDA workers, 2 CPU workers): Ldlt factorize + solve, then the graph's
// factors. With a CUDA worker the scheduler is eager: the CUDA worker takes update tasks
// whenever it is idle, whatever the perf models say, so the device path is exercised.
Run run(const CscMatrix32& A, int ncuda, std::int64_t* cuda_updates) {
  RuntimeOptions o;
  o.ncpu = 2;
  o.ncuda = ncuda;
  if (ncuda > 0) o.scheduler = "eager";
  Runtime rt(o);
  EXPECT_EQ(rt.cuda_workers(), ncuda);
  StarpuExecutor ex;
  const std::int64_t before = sd::ldlt_cuda_update_count();
  Run r;
  Ldlt l(kOpts);
  l.analyze(A, &ex);
  r.fi = l.factorize(A, &ex);
  std::vector<double> b(std::size_t(A.n_cols));
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = std::cos(0.37 * double(i));
  r.x = l.solve(b, 1, &ex);
  r.si = l.solve_info();
  sd::Symbolic S;
  sd::analyze_pattern(A, kOpts, S);
  r.nodes = stardiff::testing::graph_factors(A, S, kOpts.block_size, ex, sd::ForkJoinMode::Never);
  ex.wait_all();
  if (cuda_updates) *cuda_updates = sd::ldlt_cuda_update_count() - before;
  const double rr = stardiff::testing::relres(A, r.x, b);
  std::printf("ncuda %d: n %d, inertia (%lld, %lld, %lld), delayed %lld, 2x2 %lld, factor %.3f s, relres %.2e, "
              "backward error %.2e\n", ncuda, A.n_cols, (long long)r.fi.inertia.pos, (long long)r.fi.inertia.neg,
              (long long)r.fi.inertia.zero, (long long)r.fi.delayed, (long long)r.fi.two_by_two, r.fi.factor_s, rr,
              r.si.backward_error);
  EXPECT_LE(r.si.backward_error, 1e-14);
  EXPECT_LE(rr, 1e-8);  // (aug3dcqp: 2.3e-9 at backward error ~eps)
  return r;
}

void compare_cuda_with_cpu(const CscMatrix32& A) {
  stardiff::testing::ScopedEnv fj("STARDIFF_LDLT_FORK_JOIN", "0");
  stardiff::testing::ScopedEnv min("STARDIFF_LDLT_CUDA_MIN", "256");
  sd::Symbolic S;
  sd::analyze_pattern(A, kOpts, S);
  int ndev = 0;
  for (std::size_t t = 0; t < S.task_lo.size(); ++t) {
    const int s = S.task_lo[t];
    const int m0 = S.sn_first[s + 1] - S.sn_first[s] + int(S.row_ptr[s + 1] - S.row_ptr[s]);
    ndev += S.task_split[t] && m0 >= 256;
  }
  ASSERT_GT(ndev, 0) << "no split front of order >= 256: the device path would not run";
  const Run cpu = run(A, 0, nullptr);
  std::int64_t cuda_updates = 0;
  const Run gpu = run(A, 1, &cuda_updates);
  std::printf("%d device fronts, %lld update tasks on the CUDA worker\n", ndev, (long long)cuda_updates);
  EXPECT_GT(cuda_updates, 0);
  stardiff::testing::expect_same_pivots(gpu.fi, cpu.fi);
  EXPECT_EQ(gpu.fi.static_pivots, cpu.fi.static_pivots);
  EXPECT_EQ(gpu.fi.pivoting, cpu.fi.pivoting);
  ASSERT_EQ(gpu.x.size(), cpu.x.size());
  double mx = 0;
  const double dx = stardiff::testing::max_difference(gpu.x, cpu.x, &mx);
  EXPECT_GT(mx, 0.0);
  EXPECT_LE(dx, 1e-12 * mx);
  const double diff = stardiff::testing::factor_difference(cpu.nodes, gpu.nodes);
  std::printf("factors within %.2e, solutions within %.2e (relative)\n", diff, mx > 0 ? dx / mx : 0.0);
  EXPECT_GE(diff, 0.0);  // same rows and pivots
  EXPECT_LE(diff, 1e-12);
}
}  // namespace

TEST(SparseLdltCuda, LaplacianDeviceFrontsMatchCpu) {
  if (!stardiff_starpu_cuda()) GTEST_SKIP() << "StarPU built without CUDA: no CUDA codelets";
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  compare_cuda_with_cpu(stardiff::testing::laplacian3d(24, false));
}

TEST(SparseLdltCuda, IndefiniteKktDeviceFrontsMatchCpu) {
  if (!stardiff_starpu_cuda()) GTEST_SKIP() << "StarPU built without CUDA: no CUDA codelets";
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  const char* d = std::getenv("STARDIFF_SHARED_DATA");
  const std::filesystem::path f = d ? std::filesystem::path(d) / "matrices" / "aug3dcqp.mtx.gz" : "";
  if (!d || !std::filesystem::exists(f)) GTEST_SKIP() << "no aug3dcqp.mtx.gz under STARDIFF_SHARED_DATA/matrices";
  compare_cuda_with_cpu(read_matrix_market(f.string()));
}
