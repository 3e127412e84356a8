// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/support/cuda/bratu_sparse_jacobian.cu — see bratu_sparse_jacobian.hpp.
#include "support/cuda/bratu_sparse_jacobian.hpp"

#include "stardiff/forward/sparse_jacobian.hpp"

namespace stardiff::forward::test_problems {
namespace {
struct BratuCuda : BratuResidual {
  static constexpr bool cuda = true;  // the codelets get CUDA implementations
};
}  // namespace

void bratu_sparse_jacobian_nvcc(Executor& ex, const BratuResidual& r, const SparsityPattern& p,
                                const std::vector<double>& x, std::vector<double>& vals, std::vector<double>& f,
                                std::vector<double>& res) {
  JacobianOptions o;
  o.row_blocks = 4;
  SparseJacobian<BratuCuda, 8> J(p, BratuCuda{r}, o);
  res.assign(static_cast<std::size_t>(p.n_rows), 0.0);
  vals.assign(static_cast<std::size_t>(p.nnz()), 0.0);
  f.assign(static_cast<std::size_t>(p.n_rows), 0.0);
  J.residual(ex, x, res);
  J.jacobian(ex, x, vals, f);
}
}  // namespace stardiff::forward::test_problems
