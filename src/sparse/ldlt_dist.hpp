// SPDX-License-Identifier: LGPL-2.1-or-later
// src/sparse/ldlt_dist.hpp — the LDL^T task graph over StarPU-MPI ranks (private).
//
// Contract:
//  * map_tasks_to_ranks(S, P): proportional mapping of the assembly tree by subtree flops
//    (Pothen-Sun): the roots share ranks [0, P); a node's rank range is split over its
//    children in proportion to their subtree flops (heaviest child first, so its range
//    starts where the parent's does; each share's ends rounded to the nearest rank, a child
//    keeping at least one: children below half a rank's share share a rank with their
//    neighbour); a node takes the first rank of its range (the heaviest child's: its
//    largest contribution block stays local). A plan task takes the rank of its last (topmost)
//    supernode. Pure arithmetic on the analysis: the same on every rank; all 0 for P = 1.
//  * LdltDist: one distributed run of the factorization graph. Every rank submits every
//    task; a task runs on its plan task's rank. A node whose parent's task has another rank
//    sends its contribution block through a vector handle (xfer) that its task writes and
//    the parent's task reads (StarPU-MPI moves it); each plan task also writes its nodes'
//    pivot statistics (the task's, and each node's flops; when growth is measured, the
//    nodes' rows and growth) into a gather
//    vector that every rank reads once the graph has run (unpack_gather). A node's factors
//    (L, D, pivots) stay on its owner's rank; the other ranks keep only its structure
//    (nelim, idx: for the distributed solve, whose tasks run on the same ranks and pass
//    update and down vectors along the same cross-rank edges, ldlt_tasks.hpp). Both are
//    sized from the analysis: a run whose fronts take delayed columns (sizes beyond the
//    analysis) marks itself aborted and the caller reruns the graph replicated (every task
//    on every rank; the whole factorization then on every rank, the solve replicated).
//  * Status codes in the first entry of an xfer or gather: 0 complete, 1 the unpivoted
//    attempt failed, 2 aborted (delayed columns somewhere).
#pragma once
#include <cstddef>
#include <vector>

#include "sparse/ldlt_internal.hpp"

namespace stardiff::sparse::detail {

std::vector<int> map_tasks_to_ranks(const Symbolic& S, int nranks);

struct LdltDist {
  std::vector<int> owner;                    // per plan task: its rank
  std::vector<std::vector<int>> sends, recvs;  // per plan task: nodes whose block it sends / receives
  std::vector<int> xfer;                     // per node: its xfer handle's index, or -1
  bool growth = false;                       // the gather carries NodeFactor::growth
};

// Fills owner, sends, recvs and xfer for S's plan over nranks ranks.
void plan_distribution(const Symbolic& S, int nranks, LdltDist& d);
std::size_t xfer_size(const Symbolic& S, int s);
std::size_t gather_size(const Symbolic& S, int t, bool growth);

// Inside the tasks (on the owner's rank). recv: installs a child's contribution block
// (ctx.cbs[s]) from its xfer; send: writes node s's block into its xfer and frees it;
// gather: writes plan task t's nodes' statistics into g. check_sizes: aborts the run (*ctx.abort)
// when a node of lo..hi took or passed on delayed columns.
void recv_block(const NumericCtx& ctx, int s, const double* x);
void send_block(const NumericCtx& ctx, int s, double* x);
void pack_gather(const NumericCtx& ctx, int t, double* g);
void check_sizes(const NumericCtx& ctx, int lo, int hi);
// After the run, on every rank: unless `local`, fills the stats of task t's nodes from g
// (the task's counts, smallest and largest pivot on its first node; each node's flops:
// their sums and extremes over all nodes are those of one rank) and leaves of each node
// only its structure (nelim; idx: with growth, and its growth, from
// g, else its columns then its analysed rows); returns g's status.
int unpack_gather(const NumericCtx& ctx, int t, const double* g, bool local);

}  // namespace stardiff::sparse::detail
