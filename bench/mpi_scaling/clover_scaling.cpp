// SPDX-License-Identifier: LGPL-2.1-or-later
// bench/mpi_scaling/clover_scaling.cpp — what each rank of a StarPU-MPI CloverLeaf run sends and runs.
//
// Usage: mpirun -np R mpi_scaling_clover DECK [--steps K] [--tiles T]   (STARPU_COMM_STATS=1 for bytes)
// Runs K hydro steps (default 5) of the deck on the StarPU executor (row tiles distributed
// along y: T, default the mesh's 2 per worker per rank, at most y_cells / 2), then the same
// on the sequential executor on every rank, and prints on rank 0 one line per rank:
//   mpi_scaling_clover ranks=R rank=r tiles=T tiles_here=H tasks=S tasks_run=X messages=M bytes_sent=B
// (H: tiles owned by r; S: tasks every rank submitted; X: those r ran; M: data sends it
// posted; B: bytes StarPU-MPI sent from it, 0 without STARPU_COMM_STATS=1), then
//   mpi_scaling_clover ranks=R deck=D cells=NXxNY steps=K ke=... bitwise=yes|no bytes_total=B
// bitwise: the final field summary and density0, energy0, xvel0, yvel0 at every point equal
// to the sequential run's. Oversubscribed ranks: counts, not speed. Exit 0, 1 when not
// bitwise, 2 bad input.
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <stardiff/stardiff.hpp>

#include "cli.hpp"
#include "clover.hpp"
#include "deck.hpp"
#include "rank_stats.hpp"
#include "stardiff/runtime/mpi_stats.hpp"

using namespace stardiff;

namespace {
struct Run {
  cloverleaf::Summary s;
  std::vector<double> fields;
  int tiles = 0;
  std::vector<int> owners;
  std::size_t tasks = 0;
};

Run run(Executor& ex, const cloverleaf::Deck& deck, int steps, int tiles) {
  cloverleaf::Clover c(ex, deck, tiles);
  c.initialise();
  for (int k = 0; k < steps; ++k) c.step();
  Run r;
  r.s = c.summary();
  for (auto* d : {&c.density0(), &c.energy0(), &c.xvel0(), &c.yvel0()}) {
    const auto v = d->values();
    r.fields.insert(r.fields.end(), v.data.begin(), v.data.end());
  }
  r.tiles = c.tiles();
  for (int t = 0; t < r.tiles; ++t) r.owners.push_back(c.owner(t));
  r.tasks = ex.tasks_submitted();
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 5, tiles = 0;
  std::string deck_path;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    int* dst = arg == "--steps" ? &steps : arg == "--tiles" ? &tiles : nullptr;
    if (!dst && deck_path.empty() && !arg.empty() && arg[0] != '-') {
      deck_path = arg;
      continue;
    }
    if (!dst || a + 1 >= argc || !apps::parse_int(argv[++a], arg == "--tiles" ? 0 : 1, 1L << 16, *dst)) {
      std::fprintf(stderr, "usage: mpirun -np R mpi_scaling_clover DECK [--steps K] [--tiles T]\n");
      return 2;
    }
  }
  if (deck_path.empty()) {
    std::fprintf(stderr, "usage: mpirun -np R mpi_scaling_clover DECK [--steps K] [--tiles T]\n");
    return 2;
  }
  std::unique_ptr<Runtime> rt;
  try {
    const cloverleaf::Deck deck = cloverleaf::read_deck(deck_path);
    rt = std::make_unique<Runtime>();
    const int ranks = rt->size();
    Run got;
    std::vector<double> per_rank;
    {
      StarpuExecutor ex;
      got = run(ex, deck, steps, tiles);
      per_rank = bench::rank_stats(ex, ranks);
    }
    SequentialExecutor seq;
    const Run want = run(seq, deck, steps, got.tiles);
    const double a[] = {got.s.vol, got.s.mass, got.s.press, got.s.ie, got.s.ke};
    const double b[] = {want.s.vol, want.s.mass, want.s.press, want.s.ie, want.s.ke};
    const bool bitwise = std::memcmp(a, b, sizeof a) == 0 && got.fields.size() == want.fields.size() &&
                         std::memcmp(got.fields.data(), want.fields.data(), got.fields.size() * sizeof(double)) == 0;
    if (rt->rank() == 0) {
      double total = 0;
      for (int r = 0; r < ranks; ++r) {
        const double* p = &per_rank[4 * r];
        int here = 0;
        for (int o : got.owners) here += o == r;
        total += p[3];
        std::printf("mpi_scaling_clover ranks=%d rank=%d tiles=%d tiles_here=%d tasks=%zu tasks_run=%.0f messages=%.0f "
                    "bytes_sent=%.0f\n",
                    ranks, static_cast<int>(p[0]), got.tiles, here, got.tasks, p[1], p[2], p[3]);
      }
      std::printf("mpi_scaling_clover ranks=%d deck=%s cells=%dx%d steps=%d ke=%.17g bitwise=%s bytes_total=%.0f\n",
                  ranks, deck_path.c_str(), deck.x_cells, deck.y_cells, steps, got.s.ke, bitwise ? "yes" : "no",
                  total);
    }
    return bitwise ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mpi_scaling_clover: %s\n", e.what());
    if (rt && rt->size() > 1) rt->abort_job(2);
    return 2;
  }
}
