// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/support/cuda/blas1.cuh — CUDA twins of support/core/blas1.hpp, asynchronous on `stream`.
#pragma once
#include <cstddef>

#include <cuda_runtime.h>

namespace stardiff::cuda {
void axpy_cuda(std::size_t n, double alpha, const double* x, double* y, cudaStream_t stream);
void scal_cuda(std::size_t n, double alpha, double* x, cudaStream_t stream);
}  // namespace stardiff::cuda
