// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/support/forward/gpu_selftest.hpp — test hook: the Bratu Jacobian computed by the
// CUDA instantiation of sparse_jacobian_cuda, callable from code built without CUDA.
// Returns 0 on success, 1 when the CUDA kernels are not compiled in, 2 without a usable
// device, 3 on a CUDA error (message in *err).
#pragma once
#include <string>
#include <vector>

#include "support/forward/bratu_residual.hpp"
#include "stardiff/forward/coloring.hpp"

namespace stardiff::forward::detail {
int bratu_jacobian_gpu(const test_problems::BratuResidual& f, const SparsityPattern& p, const Coloring& c,
                       const std::vector<double>& x, std::vector<double>& values, std::vector<double>& fvals,
                       std::string* err);
}  // namespace stardiff::forward::detail
