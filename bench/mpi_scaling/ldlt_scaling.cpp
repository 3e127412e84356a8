// SPDX-License-Identifier: LGPL-2.1-or-later
// bench/mpi_scaling/ldlt_scaling.cpp — what each rank of a StarPU-MPI run of the sparse
// LDL^T sends and runs.
//
// Usage: mpirun -np R mpi_scaling_ldlt MATRIX.mtx[.gz]   (STARPU_COMM_STATS=1 for bytes)
// Analyses, factorizes and solves (b = A*1) on the StarPU executor — the factorization's
// and the solve's task graphs distributed by subtree-to-rank mapping
// (src/sparse/ldlt_dist.hpp) — then the same on the sequential executor on every rank, and
// prints on rank 0 one line per rank:
//   mpi_scaling_ldlt ranks=R rank=r tasks=S tasks_run=X flops_here=F messages=M bytes_sent=B
// (S: the factorization's tasks, submitted by every rank; X: the tasks this rank ran, the
// preparation, the solve's and factor_hash's included; F: the flops of the fronts mapped
// here; M, B: StarPU-MPI's data sends from this rank and their bytes, B 0 without
// STARPU_COMM_STATS=1), then a summary line
//   mpi_scaling_ldlt ranks=R n=N tasks=S bitwise=yes|no bytes_total=B cb_bytes=C gather_bytes=G
//     solves=K solve_bytes=V
// bitwise: factors (factor_hash) and solution equal to the sequential run's. The model:
// cb_bytes, the contribution blocks that cross ranks (their xfer vectors); gather_bytes, the
// pivot statistics every rank receives from the others afterwards ((R-1) copies of each
// plan task's gather vector); solve_bytes, K applications of the factors (the first solve,
// each refinement step and FGMRES iteration), each moving an update and a down vector per
// cross-rank edge and copies of the solution.
// Oversubscribed ranks: counts, not speed. Exit 0, 1 when not bitwise, 2 bad input.
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "sparse/ldlt_dist.hpp"
#include "rank_stats.hpp"
#include "stardiff/runtime/mpi_stats.hpp"
#include "stardiff/stardiff.hpp"

using namespace stardiff;
using namespace stardiff::sparse;

int main(int argc, char** argv) {
  if (argc != 2 || argv[1][0] == '-') {
    std::fprintf(stderr, "usage: mpirun -np R mpi_scaling_ldlt MATRIX.mtx[.gz]\n");
    return 2;
  }
  std::unique_ptr<Runtime> rt;
  try {
    const CscMatrix32 A = read_matrix_market(argv[1]);
    rt = std::make_unique<Runtime>();
    const int ranks = rt->size();
    std::vector<double> ones(A.n_cols, 1.0), b(A.n_cols);
    multiply(A, ones.data(), b.data());
    std::vector<double> per_rank, x;
    std::uint64_t hash = 0;
    std::int64_t tasks = 0;
    int solves = 0;
    {
      StarpuExecutor ex;
      Ldlt ldlt;
      ldlt.analyze(A, &ex);
      tasks = ldlt.factorize(A, &ex).tasks;
      x = ldlt.solve(b, 1, &ex);
      solves = 1 + ldlt.solve_info().refine_iters + ldlt.solve_info().fgmres_iters;
      hash = ldlt.factor_hash();
      per_rank = bench::rank_stats(ex, ranks);
    }
    SequentialExecutor seq;
    Ldlt ref;
    ref.analyze(A, &seq);
    ref.factorize(A, &seq);
    const std::vector<double> rx = ref.solve(b, 1, &seq);
    const bool bitwise = hash == ref.factor_hash() && rx.size() == x.size() &&
                         std::memcmp(rx.data(), x.data(), x.size() * sizeof(double)) == 0;
    if (rt->rank() == 0) {
      // The model: the mapping's cross-rank contribution blocks and gather vectors.
      sparse::detail::Symbolic S;
      sparse::detail::analyze_pattern(A, LdltOptions{}, S);
      std::vector<double> flops_here(ranks, 0.0);
      double cb_bytes = 0, gather_bytes = 0, solve_bytes = 0;
      if (!S.single_task && !S.simplicial) {
        sparse::detail::LdltDist d;
        sparse::detail::plan_distribution(S, ranks, d);
        for (std::size_t t = 0; t < d.owner.size(); ++t) {
          for (int s = S.task_lo[t]; s <= S.task_hi[t]; ++s) flops_here[d.owner[t]] += S.sn_flops[s];
          for (int s : d.sends[t]) {
            cb_bytes += 8.0 * double(sparse::detail::xfer_size(S, s));
            solve_bytes += 2 * 8.0 * double(S.row_ptr[s + 1] - S.row_ptr[s]);  // update + down vector
          }
          gather_bytes += 8.0 * double(ranks - 1) * double(sparse::detail::gather_size(S, int(t), false));
        }
        if (ranks > 1) solve_bytes = solves * (solve_bytes + 8.0 * double(ranks - 1) * double(A.n_cols));
      } else {
        flops_here.assign(ranks, S.flops);  // one task, replicated
      }
      double total = 0;
      for (int r = 0; r < ranks; ++r) {
        const double* p = &per_rank[4 * r];
        total += p[3];
        std::printf("mpi_scaling_ldlt ranks=%d rank=%d tasks=%lld tasks_run=%.0f flops_here=%.4g messages=%.0f "
                    "bytes_sent=%.0f\n",
                    ranks, static_cast<int>(p[0]), static_cast<long long>(tasks), p[1], flops_here[r], p[2], p[3]);
      }
      std::printf("mpi_scaling_ldlt ranks=%d n=%d tasks=%lld bitwise=%s bytes_total=%.0f cb_bytes=%.0f "
                  "gather_bytes=%.0f solves=%d solve_bytes=%.0f\n",
                  ranks, A.n_cols, static_cast<long long>(tasks), bitwise ? "yes" : "no", total, cb_bytes,
                  gather_bytes, solves, solve_bytes);
    }
    return bitwise ? 0 : 1;
  } catch (const Error& e) {
    std::fprintf(stderr, "mpi_scaling_ldlt: %s\n", e.what());
    if (rt && rt->size() > 1) rt->abort_job(2);
    return 2;
  }
}
