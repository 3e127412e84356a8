// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/support/cuda/bratu_jacobian.cu — see bratu_jacobian.cuh.
#include <cstdio>
#include <vector>

#include "support/cuda/bratu_jacobian.cuh"

namespace stardiff::cuda {

cudaError_t bratu_jacobian_cuda(const forward::test_problems::BratuResidual& f, const SparseJacobianCudaArgs& a,
                                cudaStream_t stream) {
  return sparse_jacobian_cuda<forward::test_problems::BratuResidual, 8>(f, a, stream);
}

int bratu_jacobian_cuda_host(const forward::test_problems::BratuResidual& f, std::int32_t n_rows, std::int32_t n_cols,
                             std::int32_t num_colors, const std::int32_t* color, const std::int32_t* col_ptr,
                             const std::int32_t* row_idx, const double* x, double* values, double* fvals, char* err) {
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    cudaGetLastError();
    std::snprintf(err, 256, "no CUDA device");
    return 2;
  }
  const std::size_t nnz = static_cast<std::size_t>(col_ptr[n_cols]);
  SparseJacobianCudaArgs a;
  a.n_rows = n_rows;
  a.n_cols = n_cols;
  a.num_colors = num_colors;
  double *dx = nullptr, *dB = nullptr, *dv = nullptr, *df = nullptr;
  std::int32_t *dc = nullptr, *dp = nullptr, *dr = nullptr;
  void* scratch = nullptr;
  cudaError_t e = cudaSuccess;
  auto chk = [&](cudaError_t r) {
    if (e == cudaSuccess) e = r;
  };
  chk(cudaMalloc(&dx, sizeof(double) * n_cols));
  chk(cudaMalloc(&dB, sizeof(double) * std::size_t(n_rows) * (num_colors > 0 ? num_colors : 1)));
  chk(cudaMalloc(&dv, sizeof(double) * (nnz > 0 ? nnz : 1)));
  chk(cudaMalloc(&df, sizeof(double) * n_rows));
  chk(cudaMalloc(&dc, sizeof(std::int32_t) * n_cols));
  chk(cudaMalloc(&dp, sizeof(std::int32_t) * (n_cols + 1)));
  chk(cudaMalloc(&dr, sizeof(std::int32_t) * (nnz > 0 ? nnz : 1)));
  chk(cudaMalloc(&scratch, sparse_jacobian_cuda_scratch_bytes<8>(n_rows, n_cols)));
  if (e == cudaSuccess) {
    chk(cudaMemcpy(dx, x, sizeof(double) * n_cols, cudaMemcpyHostToDevice));
    chk(cudaMemcpy(dc, color, sizeof(std::int32_t) * n_cols, cudaMemcpyHostToDevice));
    chk(cudaMemcpy(dp, col_ptr, sizeof(std::int32_t) * (n_cols + 1), cudaMemcpyHostToDevice));
    chk(cudaMemcpy(dr, row_idx, sizeof(std::int32_t) * nnz, cudaMemcpyHostToDevice));
    a.x = dx;
    a.color = dc;
    a.col_ptr = dp;
    a.row_idx = dr;
    a.xd = scratch;
    a.fd = static_cast<char*>(scratch) + sizeof(forward::Dual<8>) * std::size_t(n_cols);
    a.compressed = dB;
    a.values = dv;
    a.f = df;
    chk(bratu_jacobian_cuda(f, a, nullptr));
    chk(cudaStreamSynchronize(nullptr));
    chk(cudaMemcpy(values, dv, sizeof(double) * nnz, cudaMemcpyDeviceToHost));
    chk(cudaMemcpy(fvals, df, sizeof(double) * n_rows, cudaMemcpyDeviceToHost));
  }
  cudaFree(dx);
  cudaFree(dB);
  cudaFree(dv);
  cudaFree(df);
  cudaFree(dc);
  cudaFree(dp);
  cudaFree(dr);
  cudaFree(scratch);
  if (e != cudaSuccess) {
    std::snprintf(err, 256, "%s", cudaGetErrorString(e));
    return 3;
  }
  return 0;
}

}  // namespace stardiff::cuda
