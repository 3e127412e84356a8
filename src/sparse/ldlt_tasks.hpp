// SPDX-License-Identifier: LGPL-2.1-or-later
// src/sparse/ldlt_tasks.hpp — the sparse LDL^T factorization and solve as tasks of the plan.
//
//   cl_ldlt_subtree: factorizes a postorder range of supernodes (a small subtree, or one
//     supernode). Buffers: 0 = the task's token (W: receives the number of eliminated
//     columns), 1.. = tokens of the tasks owning its children (R), in child order.
//   cl_ldlt_big_begin / _assemble / _panel / _update / _finish: a large supernode as
//     several tasks (lay out the front; assemble one column block; factor one pivot
//     window and update the rest of its column block; update one later column block with
//     that window; store L and the contribution block). Buffers are tokens ordering them:
//     begin W(all block tokens), R(children); assemble RW(its block); panel RW(its block)
//     W(window); update R(window) RW(block); finish R(all blocks) W(the task's token).
//   cl_ldlt_big_fork_join (Parallelism::ForkJoin): a split front as one task, its steps on the
//     task's threads (big_fork_join; bitwise the same for any thread count). Buffers: the task's
//     token (W), the tokens of the tasks owning its children (R). Used where
//     use_fork_join(ctx->fork_join, exec) holds and the run is not distributed.
//   cl_ldlt_solve_forward / _backward: the solve over one task of the plan (see SolveCtx).
//     Buffers: the task's token (W), then the tokens it waits for (R): forward, the forward
//     tasks holding its nodes' children; backward, the backward tasks holding its nodes'
//     parents (a task of roots only: its own forward task). Distributed (ldlt_dist.hpp's
//     ranks): only the tokens of tasks on the same rank, then the vectors it sends (W),
//     then those it receives (R): forward, the update vectors of its nodes whose parent's
//     task has another rank, then those of its children on other ranks; backward, the down
//     vectors of those children, then those of its nodes.
//   cl_ldlt_solve_gather (distributed): the solution entries of one rank's tasks (W), after
//     their backward tokens (R).
//   cl_ldlt_hash (distributed factor_hash): folds one plan task's nodes into the FNV state:
//     W(its state), R(the previous task's state; none for the first).
//   Device fronts: split fronts of order m0 >= ldlt_cuda_min() (STARDIFF_LDLT_CUDA_MIN,
//     default 2048) in a run whose executor has CUDA workers (cuda_workers(); not distributed,
//     not fork-join). Their column blocks are StarPU matrix handles over the front's buffer
//     (m0 x m0, allocated at submission: BigFront::pre) instead of tokens, so StarPU moves
//     them between host and device; each panel (cl_ldlt_big_panel_dev, CPU: the pivoting,
//     delayed columns and inertia stay on the host) also writes a copy of its window's L and
//     L D (a managed vector) that cl_ldlt_big_update_dev reads: one dgemm per window,
//     cblas_dgemm on a CPU worker, cublasDgemm on a CUDA worker (dmda picks by the history
//     models). Begin W(blocks), assemble RW(block), panel RW(block) W(copy), update RW(block)
//     R(the copies of its pivots), finish RW(blocks) W(token).
// The rest of the factor data, X and the update vectors live in host memory (NumericCtx,
// SolveCtx): those tasks run on CPU workers.
#pragma once
#include <cstdint>

#include "sparse/ldlt_internal.hpp"
#include "stardiff/runtime/executor.hpp"

namespace stardiff::sparse::detail {
extern const Codelet cl_ldlt_subtree;
extern const Codelet cl_ldlt_big_begin, cl_ldlt_big_assemble, cl_ldlt_big_panel, cl_ldlt_big_update,
    cl_ldlt_big_finish, cl_ldlt_big_fork_join;
extern const Codelet cl_ldlt_big_panel_dev, cl_ldlt_big_update_dev;
extern const Codelet cl_ldlt_solve_forward, cl_ldlt_solve_backward, cl_ldlt_solve_gather, cl_ldlt_hash;

// Where the graph's tasks run under StarPU-MPI: all on rank 0 (also: no MPI, one rank),
// every task on every rank (each computes the whole result), or each plan task on its rank
// of ctx->dist (ldlt_dist.hpp).
enum class GraphRanks { Rank0, Replicated, Distributed };

// STARDIFF_LDLT_CUDA_MIN (unset or empty: 2048): the least order of a device front; Error
// naming the variable for anything but a non-negative integer.
int ldlt_cuda_min();
// How many update tasks ran on a CUDA worker in this process (0 without StarPU CUDA codelets).
std::int64_t ldlt_cuda_update_count();
// Tests: device fronts also on an executor without CUDA workers (their CPU twins run).
void set_device_fronts_without_cuda(bool on);

// Whether split fronts run as fork-join tasks on exec (ForkJoinMode; not distributed).
bool use_fork_join(ForkJoinMode mode, const Executor& exec);

// The number of tasks one run of the factorization graph submits (the preparation not
// counted); fork_join: each split front one task.
std::int64_t count_factor_tasks(const Symbolic& S, int block_size, bool fork_join = false);

// Submits one run of the factorization graph over ctx->sym's plan (a task per plan entry,
// or the panel/update tasks of a split front, or its fork-join task; dependencies through
// one token per plan entry; each task's TaskOptions::cost its flops and assembled entries), waits for it and returns the number of tasks. Distributed: afterwards every rank
// holds every node's factors and statistics, or *ctx->failed / *ctx->abort is set.
std::int64_t insert_ldlt_factorization(Executor& exec, const NumericCtx* ctx, GraphRanks ranks = GraphRanks::Rank0);

// Submits the forward and backward tasks of the whole solve and waits for them; returns
// the number of tasks. Replicated: every task on every rank. Distributed (ctx->dist and
// ctx->down set; after a distributed factorization, every rank calling): each plan task's
// forward and backward on its rank, the update and down vectors of the cross-rank edges
// moved by StarPU-MPI, then one gather task per rank with tasks, whose vector every rank
// reads (collective acquires): afterwards every rank holds the whole of ctx->X, bitwise
// what one rank computes.
int insert_ldlt_solve(Executor& exec, const SolveCtx* ctx, GraphRanks ranks = GraphRanks::Rank0);

// Ldlt::factor_hash of a distributed factorization (each node's factors on its owner only):
// a chain of one task per plan task in node order, on its owner, folding its nodes into the
// FNV state from h0; collective (every rank calls it), returns the final state on every rank.
std::uint64_t distributed_factor_hash(Executor& exec, const Symbolic& S, const NodeFactor* nodes,
                                      const LdltDist& dist, std::uint64_t h0);
}  // namespace stardiff::sparse::detail
