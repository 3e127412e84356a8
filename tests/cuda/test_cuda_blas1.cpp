// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/cuda/test_cuda_blas1.cpp — the CUDA level-1 kernels agree with the CPU ones on a
// device; skips cleanly when no CUDA device is usable.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "support/core/blas1.hpp"
#include "support/cuda/blas1.cuh"

namespace {
bool have_device() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}
}  // namespace

TEST(CudaBlas1, AxpyAndScalMatchCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  const std::size_t n = 1 << 20;
  std::vector<double> x(n), y(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = std::sin(double(i));
    y[i] = std::cos(double(i));
  }
  std::vector<double> ref = y;
  stardiff::cpu::axpy_cpu(n, 0.75, x.data(), ref.data());
  stardiff::cpu::scal_cpu(n, -2.0, ref.data());
  double *dx = nullptr, *dy = nullptr;
  ASSERT_EQ(cudaMalloc(&dx, n * sizeof(double)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dy, n * sizeof(double)), cudaSuccess);
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  cudaMemcpy(dx, x.data(), n * sizeof(double), cudaMemcpyHostToDevice);
  cudaMemcpy(dy, y.data(), n * sizeof(double), cudaMemcpyHostToDevice);
  stardiff::cuda::axpy_cuda(n, 0.75, dx, dy, s);
  stardiff::cuda::scal_cuda(n, -2.0, dy, s);
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  std::vector<double> out(n);
  cudaMemcpy(out.data(), dy, n * sizeof(double), cudaMemcpyDeviceToHost);
  for (std::size_t i = 0; i < n; i += 997) EXPECT_EQ(out[i], ref[i]) << i;
  cudaFree(dx);
  cudaFree(dy);
  cudaStreamDestroy(s);
}
