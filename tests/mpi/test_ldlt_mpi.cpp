// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/mpi/test_ldlt_mpi.cpp — the sparse LDL^T over StarPU-MPI ranks, run under
// `mpirun -np 2` (label mpi): the subtree-to-rank mapping (deterministic, every rank of a
// balanced tree used, all 0 on one rank), and on real matrices (STARDIFF_LDLT_MPI_MATRICES,
// ':'-separated paths) the distributed factorization's factors (factor_hash), inertia,
// solutions (one and two right-hand sides), refinement steps, backward error and rcond
// bitwise those of the sequential executor on every rank, with each rank running part of
// the factorization's and of the solve's tasks (a distributed run) — or, for a matrix whose
// fronts take delayed columns, all of them (the replicated rerun); a solve of distributed
// factors on the sequential executor is refused (Error). Tests skip unless the runtime runs on
// >= 2 ranks, and skip a matrix file that is absent.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "sparse/ldlt_dist.hpp"
#include "stardiff/runtime/mpi_stats.hpp"
#include "stardiff/runtime/runtime.hpp"
#include "stardiff/sparse.hpp"
#include "runtime_environment.hpp"

using namespace stardiff;
using namespace stardiff::sparse;

namespace {
#define REQUIRE_RANKS()                                                             \
  do {                                                                              \
    if (mpi_size() < 2) GTEST_SKIP() << "needs a StarPU-MPI runtime on >= 2 ranks"; \
  } while (0)

std::vector<std::string> matrices() {
  std::vector<std::string> out;
  const char* e = std::getenv("STARDIFF_LDLT_MPI_MATRICES");
  std::stringstream ss(e ? e : "");
  for (std::string p; std::getline(ss, p, ':');)
    if (!p.empty()) out.push_back(p);
  return out;
}
bool exists(const std::string& p) { return std::ifstream(p).good(); }
}  // namespace

TEST(LdltMpi, MappingIsProportionalAndDeterministic) {
  int checked = 0;
  for (const std::string& path : matrices()) {
    if (!exists(path)) continue;
    const CscMatrix32 A = read_matrix_market(path);
    sparse::detail::Symbolic S;
    sparse::detail::analyze_pattern(A, LdltOptions{}, S);
    if (S.single_task) continue;
    ++checked;
    const int nt = int(S.task_lo.size());
    EXPECT_EQ(sparse::detail::map_tasks_to_ranks(S, 1), std::vector<int>(nt, 0)) << path;
    for (int P : {2, 3, 4}) {
      const std::vector<int> r = sparse::detail::map_tasks_to_ranks(S, P);
      EXPECT_EQ(r, sparse::detail::map_tasks_to_ranks(S, P)) << path;
      std::set<int> used(r.begin(), r.end());
      for (int x : used) EXPECT_TRUE(x >= 0 && x < P) << path;
      EXPECT_TRUE(used.count(0)) << path;
      if (P == 2) EXPECT_EQ(used.size(), 2u) << path << ": both ranks own fronts";
      // a task's parent task (the task of its top node's parent) sits on a rank of the
      // same range: never on a higher rank than the first of its children's ranges
      std::vector<int> node_task(S.ns);
      for (int t = 0; t < nt; ++t)
        for (int s = S.task_lo[t]; s <= S.task_hi[t]; ++s) node_task[s] = t;
      for (int t = 0; t < nt; ++t) {
        const int q = S.sn_parent[S.task_hi[t]];
        if (q != -1) EXPECT_LE(r[node_task[q]], r[t]) << path << " task " << t;
      }
    }
  }
  if (checked == 0) GTEST_SKIP() << "no tree-mode matrix in STARDIFF_LDLT_MPI_MATRICES";
}

TEST(LdltMpi, DistributedFactorizationEqualsSequential) {
  REQUIRE_RANKS();
  int checked = 0;
  for (const std::string& path : matrices()) {
    if (!exists(path)) continue;
    ++checked;
    const CscMatrix32 A = read_matrix_market(path);
    std::vector<double> ones(A.n_cols, 1.0), b(A.n_cols);
    multiply(A, ones.data(), b.data());

    // two right-hand sides: b and b scaled by the row index (refined together)
    std::vector<double> b2(b);
    for (int i = 0; i < A.n_cols; ++i) b2.push_back(b[i] * (1.0 + i % 7));

    SequentialExecutor seq;  // every rank its own reference
    Ldlt ref;
    ref.analyze(A, &seq);
    const FactorInfo rfi = ref.factorize(A, &seq);
    const std::vector<double> rx = ref.solve(b, 1, &seq);
    const SolveInfo rsi = ref.solve_info();
    const std::vector<double> rx2 = ref.solve(b2, 2, &seq);
    const double rrc = ref.rcond(&seq);

    StarpuExecutor ex;
    Ldlt dist;
    const AnalyzeInfo ai = dist.analyze(A, &ex);
    const std::size_t before = mpi_comm_stats().tasks_run;
    const FactorInfo fi = dist.factorize(A, &ex);
    const std::size_t ran = mpi_comm_stats().tasks_run - before;
    const std::size_t solve_before = mpi_comm_stats().tasks_run, submitted_before = ex.tasks_submitted();
    const std::vector<double> x = dist.solve(b, 1, &ex);
    const std::size_t solve_ran = mpi_comm_stats().tasks_run - solve_before;
    const std::size_t solve_tasks = ex.tasks_submitted() - submitted_before;
    const SolveInfo si = dist.solve_info();
    const std::vector<double> x2 = dist.solve(b2, 2, &ex);
    const double rc = dist.rcond(&ex);

    EXPECT_EQ(dist.factor_hash(), ref.factor_hash()) << path;
    EXPECT_EQ(fi.inertia.pos, rfi.inertia.pos) << path;
    EXPECT_EQ(fi.inertia.neg, rfi.inertia.neg) << path;
    EXPECT_EQ(fi.inertia.zero, rfi.inertia.zero) << path;
    EXPECT_EQ(fi.pivoting, rfi.pivoting) << path;
    EXPECT_EQ(fi.nnz_l, rfi.nnz_l) << path;
    EXPECT_EQ(fi.min_pivot, rfi.min_pivot) << path;
    ASSERT_EQ(x.size(), rx.size());
    EXPECT_EQ(std::memcmp(x.data(), rx.data(), x.size() * sizeof(double)), 0) << path;
    EXPECT_EQ(si.refine_iters, rsi.refine_iters) << path;
    EXPECT_EQ(si.fgmres_iters, rsi.fgmres_iters) << path;
    EXPECT_EQ(si.backward_error, rsi.backward_error) << path;
    ASSERT_EQ(x2.size(), rx2.size());
    EXPECT_EQ(std::memcmp(x2.data(), rx2.data(), x2.size() * sizeof(double)), 0) << path << ": 2 right-hand sides";
    EXPECT_EQ(rc, rrc) << path << ": rcond";
    if (ai.mode == FactorMode::Tree) {
      // the solve: each forward/backward task on its front's rank (a share here), or all
      // of them where the factorization was repeated replicated
      if (fi.delayed == 0) {
        // the factors are spread over the ranks: a solve on another executor is refused
        try {
          dist.solve(b, 1, &seq);
          ADD_FAILURE() << path << ": a sequential solve of distributed factors was accepted";
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("need a StarPU executor"), std::string::npos) << e.what();
        }
        EXPECT_GT(solve_ran, 0u) << path << ": rank " << mpi_rank() << " ran no solve task";
        EXPECT_LT(solve_ran, solve_tasks) << path << ": rank " << mpi_rank() << " ran every solve task";
      } else {
        EXPECT_EQ(solve_ran, solve_tasks) << path;
      }
      std::fprintf(stderr, "rank %d: %s: %zu of %zu solve tasks here (%d refinement steps)\n", mpi_rank(),
                   path.c_str(), solve_ran, solve_tasks, si.refine_iters);
      // the preparation runs on every rank; of the graph, a share here (distributed) or
      // all of it twice over when the distributed run met delayed columns (then replicated)
      const std::size_t graph = std::size_t(ai.tasks - 1);
      if (fi.delayed == 0) {
        EXPECT_GT(ran, 1u) << path << ": rank " << mpi_rank() << " ran no front";
        EXPECT_LT(ran, std::size_t(fi.attempts) * graph + 1) << path << ": rank " << mpi_rank() << " ran every front";
      } else {
        EXPECT_GE(ran, graph + 1) << path;
      }
      std::fprintf(stderr, "rank %d: %s: %zu of %zu factorization tasks here\n", mpi_rank(), path.c_str(), ran,
                   std::size_t(fi.tasks));
    }
  }
  if (checked == 0) GTEST_SKIP() << "no matrix of STARDIFF_LDLT_MPI_MATRICES present";
}
