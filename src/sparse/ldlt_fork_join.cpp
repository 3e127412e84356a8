// SPDX-License-Identifier: LGPL-2.1-or-later
// src/sparse/ldlt_fork_join.cpp — a split front as one fork-join task, OpenMP inside.
//
// Contract (ldlt_internal.hpp): big_fork_join(ctx, s, threads) runs begin, then the steps
// of for_each_fork_join_step (tile assemblies, windows, tile updates) as OpenMP tasks on
// `threads` threads (one team started by the calling thread: the master of a StarPU combined
// worker), then finish. The OpenMP tasks depend on one token per tile of nb columns (inout:
// its steps run in submission order) and one per window (its window step out, its updates
// in): the split front's task dependencies refined from column blocks to tiles, so the
// tiles of a block are updated in parallel and a window's panel no longer waits for the rest
// of its block. Each column receives the same kernel calls (same pivot ranges, same order)
// as in the split path; only the column ranges of the update calls are narrower. With
// threads == 1 (or without OpenMP) the steps run in submission order on the calling thread.
// The first exception a step throws is rethrown after the team has finished; a window that
// fails its pivots degrades the front exactly as in the split path (later steps return).
#include <exception>
#include <vector>

#include "sparse/ldlt_internal.hpp"

namespace stardiff::sparse::detail {
namespace {
struct Step {
  int kind, w, tile, k0, k1, c0, c1;
};

void run_step(const NumericCtx& ctx, int s, const Step& t) {
  switch (t.kind) {
    case 0: big_begin(ctx, s); break;
    case 2: big_update(ctx, s, t.k0, t.k1, t.c0, t.c1); break;
    case 3: big_finish(ctx, s); break;
    case 4: big_assemble(ctx, s, t.c0, t.c1); break;
    default: big_window(ctx, s, t.k0, t.k1); break;
  }
}
}  // namespace

void big_fork_join(const NumericCtx& ctx, int s, int threads) {
  const Symbolic& S = *ctx.sym;
  const int p0 = S.sn_first[s + 1] - S.sn_first[s];
  const int m0 = p0 + int(S.row_ptr[s + 1] - S.row_ptr[s]);
  const int nb = ctx.nb;
  std::vector<Step> steps;
  for_each_fork_join_step(m0, p0, nb, [&](int kind, int w, int tile, int k0, int k1, int c0, int c1) {
    steps.push_back({kind, w, tile, k0, k1, c0, c1});
  });
#ifdef _OPENMP
  if (threads > 1) {
    run_step(ctx, s, steps.front());  // begin
    std::vector<char> tile_token((m0 + nb - 1) / nb), win_token((p0 + nb - 1) / nb);
    // (used in depend clauses only, which GCC 12's -Wunused-variable does not see)
    [[maybe_unused]] char* tile = tile_token.data();
    [[maybe_unused]] char* win = win_token.data();
    const Step* step = steps.data();
    const std::size_t last = steps.size() - 1;
    std::exception_ptr error;
    auto guarded = [&](const Step& t) {
      try {
        run_step(ctx, s, t);
      } catch (...) {
#pragma omp critical(stardiff_ldlt_fork_join)
        if (!error) error = std::current_exception();
      }
    };
#pragma omp parallel num_threads(threads)
#pragma omp single
    for (std::size_t i = 1; i < last; ++i) {
      const Step* t = step + i;
      if (t->kind == 5) {
#pragma omp task depend(inout : tile[t->tile]) depend(out : win[t->w])
        guarded(*t);
      } else if (t->kind == 2) {
#pragma omp task depend(in : win[t->w]) depend(inout : tile[t->tile])
        guarded(*t);
      } else {
#pragma omp task depend(inout : tile[t->tile])
        guarded(*t);
      }
    }
    if (error) std::rethrow_exception(error);
    run_step(ctx, s, steps.back());  // finish
    return;
  }
#else
  (void)threads;
#endif
  for (const Step& t : steps) run_step(ctx, s, t);
}

}  // namespace stardiff::sparse::detail
