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
//   cl_ldlt_solve_forward / _backward: the solve over one task of the plan (see SolveCtx).
//     Buffers: the task's token (W), then the tokens it waits for (R): forward, the forward
//     tasks holding its nodes' children; backward, the backward tasks holding its nodes'
//     parents (a task of roots only: its own forward task).
// The factor data, X and the update vectors live in host memory (NumericCtx, SolveCtx):
// the tasks run on CPU workers.
#pragma once
#include <cstdint>

#include "sparse/ldlt_internal.hpp"
#include "stardiff/runtime/executor.hpp"

namespace stardiff::sparse::detail {
extern const Codelet cl_ldlt_subtree;
extern const Codelet cl_ldlt_big_begin, cl_ldlt_big_assemble, cl_ldlt_big_panel, cl_ldlt_big_update,
    cl_ldlt_big_finish;
extern const Codelet cl_ldlt_solve_forward, cl_ldlt_solve_backward;

// Where the graph's tasks run under StarPU-MPI: all on rank 0 (also: no MPI, one rank),
// every task on every rank (each computes the whole result), or each plan task on its rank
// of ctx->dist (ldlt_dist.hpp: the factorization only).
enum class GraphRanks { Rank0, Replicated, Distributed };

// The number of tasks one run of the factorization graph submits (the preparation not counted).
std::int64_t count_factor_tasks(const Symbolic& S, int block_size);

// Submits one run of the factorization graph over ctx->sym's plan (a task per plan entry,
// or the panel/update tasks of a split front; dependencies through one token per plan
// entry), waits for it and returns the number of tasks. Distributed: afterwards every rank
// holds every node's factors and statistics, or *ctx->failed / *ctx->abort is set.
std::int64_t insert_ldlt_factorization(Executor& exec, const NumericCtx* ctx, GraphRanks ranks = GraphRanks::Rank0);

// Submits the forward and backward tasks of the whole solve and waits for them; returns
// the number of tasks. Not Rank0: every task on every rank (Distributed is Replicated here).
int insert_ldlt_solve(Executor& exec, const SolveCtx* ctx, GraphRanks ranks = GraphRanks::Rank0);
}  // namespace stardiff::sparse::detail
