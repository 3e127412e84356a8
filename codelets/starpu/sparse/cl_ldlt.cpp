// codelets/starpu/sparse/cl_ldlt.cpp — unpack arguments, call the sparse LDL^T kernels.
#include "starpu/sparse/cl_ldlt.hpp"

#include <string>
#include <vector>

namespace stardiff::codelets {
namespace {
void ldlt_subtree_cpu(const TaskContext& t) {
  const auto& a = t.arg<LdltSubtreeArgs>();
  sparse::detail::factor_nodes(*a.ctx, a.lo, a.hi);
  *t.buffers[0].data<std::int64_t>() = a.ctx->nodes[a.hi].nelim;
}
void ldlt_solve_cpu(const TaskContext& t) {
  const auto& a = t.arg<LdltSolveArgs>();
  const auto& X = t.buffers[0];
  if (X.nx != std::size_t(a.sym->n) || X.ld != X.nx) {
    t.fail("ldlt_solve: X has " + std::to_string(X.nx) + " rows (ld " + std::to_string(X.ld) + "), n = " +
           std::to_string(a.sym->n));
    return;
  }
  sparse::detail::solve_factor(*a.sym, a.nodes, X.data<double>(), int(X.ny));
}
}  // namespace

const Codelet cl_ldlt_subtree("ldlt_subtree", ldlt_subtree_cpu);
const Codelet cl_ldlt_solve("ldlt_solve", ldlt_solve_cpu, nullptr, {{HandleKind::Matrix, sizeof(double)}});

void insert_ldlt_subtree(Executor& exec, const sparse::detail::NumericCtx* ctx, int lo, int hi, Handle& token,
                         const std::vector<Handle*>& deps, int priority) {
  std::vector<DataAccess> acc;
  acc.reserve(deps.size() + 1);
  acc.push_back(out(token));
  for (Handle* h : deps) acc.push_back(in(*h));
  LdltSubtreeArgs args{ctx, lo, hi};
  exec.submit(cl_ldlt_subtree, std::span<const DataAccess>(acc.data(), acc.size()), &args, sizeof(args),
              {.name = lo == hi ? "ldlt_front" : "ldlt_subtree", .priority = priority});
}

void insert_ldlt_solve(Executor& exec, const sparse::detail::Symbolic* sym, const sparse::detail::NodeFactor* nodes,
                       Handle& X) {
  LdltSolveArgs args{sym, nodes};
  exec.submit(cl_ldlt_solve, args, {inout(X)}, {.name = "ldlt_solve"});
}
}  // namespace stardiff::codelets
