// codelets/starpu/sparse/cl_ldlt.hpp — codelets of the sparse LDL^T solver.
//
//   cl_ldlt_subtree: factorizes a postorder range of supernodes (a small subtree, or one
//     supernode). Buffers: 0 = the task's token (W: receives the number of eliminated
//     columns), 1.. = tokens of the tasks owning its children (R), in child order.
//     The factor data live in the solver's NumericCtx (host memory; CPU only).
//   cl_ldlt_solve: forward/diagonal/backward solve of X (matrix handle n x nrhs, RW).
#pragma once
#include <cstdint>

#include "sparse/ldlt_internal.hpp"
#include "stardiff/runtime/executor.hpp"

namespace stardiff::codelets {
extern const Codelet cl_ldlt_subtree;
extern const Codelet cl_ldlt_solve;

struct LdltSubtreeArgs {
  const sparse::detail::NumericCtx* ctx;
  int lo, hi;
};
struct LdltSolveArgs {
  const sparse::detail::Symbolic* sym;
  const sparse::detail::NodeFactor* nodes;
};

void insert_ldlt_subtree(Executor& exec, const sparse::detail::NumericCtx* ctx, int lo, int hi, Handle& token,
                         const std::vector<Handle*>& deps, int priority);
void insert_ldlt_solve(Executor& exec, const sparse::detail::Symbolic* sym, const sparse::detail::NodeFactor* nodes,
                       Handle& X);
}  // namespace stardiff::codelets
