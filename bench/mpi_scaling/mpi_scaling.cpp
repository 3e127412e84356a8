// SPDX-License-Identifier: LGPL-2.1-or-later
// bench/mpi_scaling — what each rank of a StarPU-MPI run of the Poisson adjoint sends and runs.
//
// Usage: mpirun -np R mpi_scaling [--n N] [--iters K] [--tiles T]   (STARPU_COMM_STATS=1 for bytes)
// Runs the OPS Poisson problem (N x N, K Jacobi iterations, default 256 and 20) taped and
// reversed on the StarPU executor, then the same on the sequential executor on every rank,
// and prints on rank 0 one line per rank:
//   mpi_scaling ranks=R rank=r tiles=T tasks=S tasks_run=X messages=M bytes_sent=B
// (S: tasks every rank submitted; X: those this rank ran; M: data sends it posted; B: bytes
// StarPU-MPI sent from it, 0 without STARPU_COMM_STATS=1), then a summary line
//   mpi_scaling ranks=R n=N iters=K E=... bitwise=yes|no bytes_total=B halo_bytes_model=H
// bitwise: E and every point of dE/df and dE/du equal to the sequential run's. halo_bytes_model:
// the bytes the tile boundaries between ranks must carry at least (one halo row each way
// per boundary-crossing exchange of u, forward and reverse), for comparison with B. Loaded
// machines (oversubscribed ranks): counts, not speed. Exit 0, 1 when not bitwise, 2 bad input.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cli.hpp"
#include "poisson_problem.hpp"
#include "rank_stats.hpp"
#include "stardiff/runtime/mpi_stats.hpp"

using namespace stardiff;

namespace {
struct Run {
  double E = 0;
  std::vector<double> df, du;
  int tiles = 0;
  std::size_t tasks = 0;
};

Run run(Executor& ex, int n, int iters, int tiles) {
  poisson::Problem p(ex, n, n, tiles);
  p.setup();
  ex.wait_all();
  Tape tape("mpi_scaling");
  poisson::record_iterations(tape, p, iters, nullptr);
  ex.wait_all();
  Run r;
  r.E = p.err.value();
  tape.seed(p.err, 1.0);
  tape.reverse();
  ex.wait_all();
  r.df = p.f.adjoint().data;
  r.du = p.u.adjoint().data;
  r.tiles = p.block.tiles();
  r.tasks = ex.tasks_submitted();
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  int n = 256, iters = 20, tiles = 0;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    int* dst = arg == "--n" ? &n : arg == "--iters" ? &iters : arg == "--tiles" ? &tiles : nullptr;
    if (!dst || a + 1 >= argc || !apps::parse_int(argv[++a], arg == "--tiles" ? 0 : 1, 1L << 16, *dst)) {
      std::fprintf(stderr, "usage: mpirun -np R mpi_scaling [--n N] [--iters K] [--tiles T]\n");
      return 2;
    }
  }
  std::unique_ptr<Runtime> rt;
  try {
    rt = std::make_unique<Runtime>();
    const int ranks = rt->size();
    Run got;
    std::vector<double> per_rank;
    {
      StarpuExecutor ex;
      got = run(ex, n, iters, tiles);
      per_rank = bench::rank_stats(ex, ranks);
    }
    SequentialExecutor seq;
    const Run want = run(seq, n, iters, got.tiles);
    const bool bitwise = std::memcmp(&got.E, &want.E, sizeof(double)) == 0 && got.df.size() == want.df.size() &&
                         got.du.size() == want.du.size() &&
                         std::memcmp(got.df.data(), want.df.data(), got.df.size() * sizeof(double)) == 0 &&
                         std::memcmp(got.du.data(), want.du.data(), got.du.size() * sizeof(double)) == 0;
    if (rt->rank() == 0) {
      double total = 0;
      for (int r = 0; r < ranks; ++r) {
        const double* p = &per_rank[4 * r];
        total += p[3];
        std::printf("mpi_scaling ranks=%d rank=%d tiles=%d tasks=%zu tasks_run=%.0f messages=%.0f bytes_sent=%.0f\n",
                    ranks, static_cast<int>(p[0]), got.tiles, got.tasks, p[1], p[2], p[3]);
      }
      // Rank boundaries (block distribution): tiles t-1, t on different ranks. Each Jacobi
      // iteration exchanges u's halo rows (one row of n + 2 doubles each way) and its adjoint
      // the reverse (u_a1s ghost rows back): 4 rows per boundary per iteration at least.
      int boundaries = 0;
      for (int t = 1; t < got.tiles; ++t)
        boundaries += (t * ranks) / got.tiles != ((t - 1) * ranks) / got.tiles ? 1 : 0;
      const double model = 4.0 * boundaries * iters * (n + 2) * sizeof(double);
      std::printf("mpi_scaling ranks=%d n=%d iters=%d E=%.17g bitwise=%s bytes_total=%.0f halo_bytes_model=%.0f\n",
                  ranks, n, iters, got.E, bitwise ? "yes" : "no", total, model);
    }
    return bitwise ? 0 : 1;
  } catch (const Error& e) {
    std::fprintf(stderr, "mpi_scaling: %s\n", e.what());
    if (rt && rt->size() > 1) rt->abort_job(2);
    return 2;
  }
}
