// codelets/starpu/sparse/cl_ldlt.hpp — codelets of the sparse LDL^T solver.
//
//   cl_ldlt_subtree: factorizes a postorder range of supernodes (a small subtree, or one
//     supernode). Buffers: 0 = the task's token (W: receives the number of eliminated
//     columns), 1.. = tokens of the tasks owning its children (R), in child order.
//     The factor data live in the solver's NumericCtx (host memory; CPU only).
//   cl_ldlt_big_begin / _assemble / _panel / _update / _finish: a large supernode as
//     several tasks (lay out the front; assemble one column block; factor one pivot
//     window and update the rest of its column block; update one later column block with
//     that window — a block of the contribution block alone with a group of windows at
//     once; store L and the contribution block). Buffers are tokens ordering them: begin
//     W(all block tokens), R(children); assemble RW(its block); panel RW(its block)
//     W(window); update R(window) RW(block); finish R(all blocks) W(the task's token).
//   cl_ldlt_solve_forward / _backward: the solve over one task of the plan (a postorder
//     range of supernodes; see SolveCtx). Buffers: the task's token (W), then the tokens
//     it waits for (R): forward, the forward tasks holding its nodes' children; backward,
//     the backward tasks holding its nodes' parents (a task of roots only: its own forward
//     task). X lives in the SolveCtx (host memory).
#pragma once
#include <cstdint>

#include "sparse/ldlt_internal.hpp"
#include "stardiff/runtime/executor.hpp"

namespace stardiff::codelets {
extern const Codelet cl_ldlt_subtree;
extern const Codelet cl_ldlt_solve_forward, cl_ldlt_solve_backward;

struct LdltSubtreeArgs {
  const sparse::detail::NumericCtx* ctx;
  int lo, hi;
};
struct LdltSolveArgs {
  const sparse::detail::SolveCtx* ctx;
  int lo, hi;
};

void insert_ldlt_subtree(Executor& exec, const sparse::detail::NumericCtx* ctx, int lo, int hi, Handle& token,
                         const std::vector<Handle*>& deps, int priority);
struct LdltBigArgs {
  const sparse::detail::NumericCtx* ctx;
  int s, k0, k1, c0, c1;  // pivots [k0, k1), columns [c0, c1)
};
extern const Codelet cl_ldlt_big_begin, cl_ldlt_big_assemble, cl_ldlt_big_panel, cl_ldlt_big_update,
    cl_ldlt_big_finish;
// Submits the tasks of split supernode s (front m0 x m0, p0 pivot columns, window nb,
// column blocks of bs): returns the number of tasks. Its internal tokens are moved into
// `keep`, which must outlive the tasks (destroying a handle waits for its tasks).
int insert_ldlt_big(Executor& exec, const sparse::detail::NumericCtx* ctx, int s, int m0, int p0, int nb, int bs,
                    Handle& token, const std::vector<Handle*>& deps,
                    std::vector<VariableHandle<std::int64_t>>& keep);
int count_ldlt_big_tasks(int m0, int p0, int nb, int bs);

// Submits the forward and backward tasks of the whole solve and waits for them; returns
// the number of tasks.
int insert_ldlt_solve(Executor& exec, const sparse::detail::SolveCtx* ctx);
}  // namespace stardiff::codelets
