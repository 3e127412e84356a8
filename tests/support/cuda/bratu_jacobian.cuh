// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/support/cuda/bratu_jacobian.cuh — the concrete CUDA instantiation of
// sparse_jacobian_cuda for the Bratu test residual (chunk width 8). CUDA code only;
// host C++ uses bratu_jacobian_host.hpp.
#pragma once
#include <cuda_runtime.h>

#include "support/forward/bratu_residual.hpp"
#include "support/cuda/bratu_jacobian_host.hpp"
#include "cuda/forward/sparse_jacobian.cuh"

namespace stardiff::cuda {
cudaError_t bratu_jacobian_cuda(const forward::test_problems::BratuResidual& f, const SparseJacobianCudaArgs& a,
                                cudaStream_t stream);
}  // namespace stardiff::cuda
