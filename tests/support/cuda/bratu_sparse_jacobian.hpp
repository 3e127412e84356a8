// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/support/cuda/bratu_sparse_jacobian.hpp — SparseJacobian<BratuCuda, 8> instantiated in a
// translation unit compiled by nvcc (bratu_sparse_jacobian.cu), so its residual, Colored jacobian
// and decompression codelets carry CUDA implementations; callable from host-compiled tests.
// bratu_sparse_jacobian_nvcc(ex, ...) runs residual() into `res`, then jacobian() into `vals`
// and `f`, on `ex` (Colored mode, 4 row blocks).
#pragma once
#include <vector>

#include "stardiff/forward/coloring.hpp"
#include "stardiff/runtime/executor.hpp"
#include "support/forward/bratu_residual.hpp"

namespace stardiff::forward::test_problems {
void bratu_sparse_jacobian_nvcc(Executor& ex, const BratuResidual& r, const SparsityPattern& p,
                                const std::vector<double>& x, std::vector<double>& vals, std::vector<double>& f,
                                std::vector<double>& res);
}  // namespace stardiff::forward::test_problems
