// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/support/cuda/blas1.cu — see blas1.cuh. Grid-stride loops, one launch per call.
#include "support/cuda/blas1.cuh"

namespace stardiff::cuda {
namespace {
__global__ void axpy_kernel(std::size_t n, double alpha, const double* __restrict__ x, double* __restrict__ y) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += std::size_t(blockDim.x) * gridDim.x)
    y[i] += alpha * x[i];
}
__global__ void scal_kernel(std::size_t n, double alpha, double* __restrict__ x) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += std::size_t(blockDim.x) * gridDim.x)
    x[i] *= alpha;
}
unsigned blocks_for(std::size_t n) {
  std::size_t b = (n + 255) / 256;
  return static_cast<unsigned>(b < 65535 ? (b ? b : 1) : 65535);
}
}  // namespace

void axpy_cuda(std::size_t n, double alpha, const double* x, double* y, cudaStream_t stream) {
  axpy_kernel<<<blocks_for(n), 256, 0, stream>>>(n, alpha, x, y);
}
void scal_cuda(std::size_t n, double alpha, double* x, cudaStream_t stream) {
  scal_kernel<<<blocks_for(n), 256, 0, stream>>>(n, alpha, x);
}
}  // namespace stardiff::cuda
