// SPDX-License-Identifier: LGPL-2.1-or-later
// codelets/cuda/forward/sparse_jacobian.cuh — the coloured dual Jacobian of a generic
// residual on a CUDA device, as templates a user's .cu instantiates for its functor.
//
// Contract:
//  * F is trivially copyable (passed by value to kernels) and its
//    `template <class S> STARDIFF_HD void operator()(RowRange, const S* x, S* f) const`
//    is callable on the device (it must not dereference host pointers there).
//  * sparse_jacobian_cuda<F, W>(f, a, stream) evaluates, for each chunk k of W colours,
//    x seeded on Dual<W> (partial color[j] - k·W), the residual one row per thread, the
//    compressed Jacobian B (n_rows x num_colors, row-major) and finally the CSC values
//    (pattern layout) and, when a.f is set, F(x) (the value parts). All pointers in `a`
//    are device pointers; xd/fd are scratch of n_cols / n_rows Dual<W>. Asynchronous on
//    `stream`; returns the first launch error (cudaSuccess otherwise).
//  * Unlike the CPU path every row is evaluated in every chunk (no row lists): simple
//    and coalesced; the CPU path skips structurally zero chunks.
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

#include "stardiff/forward/dual.hpp"
#include "stardiff/forward/row_range.hpp"

namespace stardiff::cuda {

struct SparseJacobianCudaArgs {
  std::int32_t n_rows = 0, n_cols = 0, num_colors = 0;
  const double* x = nullptr;              // n_cols
  const std::int32_t* color = nullptr;    // n_cols
  const std::int32_t* col_ptr = nullptr;  // n_cols + 1
  const std::int32_t* row_idx = nullptr;  // nnz
  void* xd = nullptr;                     // n_cols Dual<W> scratch
  void* fd = nullptr;                     // n_rows Dual<W> scratch
  double* compressed = nullptr;           // n_rows * num_colors
  double* values = nullptr;               // nnz (CSC layout)
  double* f = nullptr;                    // n_rows, optional
};

namespace detail {
template <int W>
__global__ void seed_chunk_kernel(std::int32_t n, const double* x, const std::int32_t* color, std::int32_t k,
                                  forward::Dual<W>* xd) {
  const std::int32_t j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < n) xd[j] = forward::Dual<W>(x[j], color[j] - k * W);
}
template <class F, int W>
__global__ void eval_chunk_kernel(F f, std::int32_t n_rows, const forward::Dual<W>* xd, forward::Dual<W>* fd) {
  const std::int32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n_rows) f(forward::RowRange{i, i + 1}, xd, fd);
}
template <int W>
__global__ void extract_chunk_kernel(std::int32_t n_rows, std::int32_t nc, std::int32_t k, const forward::Dual<W>* fd,
                                     double* B, double* fv) {
  const std::int32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n_rows) return;
  const forward::Dual<W>& r = fd[i];
  for (int p = 0; p < W; ++p) {
    const std::int32_t c = k * W + p;
    if (c < nc) B[static_cast<std::size_t>(i) * nc + c] = r.d[p];
  }
  if (k == 0 && fv) fv[i] = r.v;
}
inline __global__ void decompress_kernel(std::int32_t n_cols, const std::int32_t* col_ptr, const std::int32_t* row_idx,
                                         const std::int32_t* color, std::int32_t nc, const double* B, double* vals) {
  const std::int32_t j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= n_cols) return;
  for (std::int32_t e = col_ptr[j]; e < col_ptr[j + 1]; ++e)
    vals[e] = B[static_cast<std::size_t>(row_idx[e]) * nc + color[j]];
}
}  // namespace detail

template <int W>
inline std::size_t sparse_jacobian_cuda_scratch_bytes(std::int32_t n_rows, std::int32_t n_cols) {
  return sizeof(forward::Dual<W>) * (static_cast<std::size_t>(n_rows) + static_cast<std::size_t>(n_cols));
}

template <class F, int W>
cudaError_t sparse_jacobian_cuda(const F& f, const SparseJacobianCudaArgs& a, cudaStream_t stream) {
  constexpr int T = 128;
  auto* xd = static_cast<forward::Dual<W>*>(a.xd);
  auto* fd = static_cast<forward::Dual<W>*>(a.fd);
  const std::int32_t chunks = a.num_colors > 0 ? (a.num_colors + W - 1) / W : 1;
  const unsigned gc = static_cast<unsigned>((a.n_cols + T - 1) / T), gr = static_cast<unsigned>((a.n_rows + T - 1) / T);
  for (std::int32_t k = 0; k < chunks; ++k) {
    if (gc) detail::seed_chunk_kernel<W><<<gc, T, 0, stream>>>(a.n_cols, a.x, a.color, k, xd);
    if (gr) detail::eval_chunk_kernel<F, W><<<gr, T, 0, stream>>>(f, a.n_rows, xd, fd);
    if (gr) detail::extract_chunk_kernel<W><<<gr, T, 0, stream>>>(a.n_rows, a.num_colors, k, fd, a.compressed, a.f);
    if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  }
  if (gc && a.num_colors > 0)
    detail::decompress_kernel<<<gc, T, 0, stream>>>(a.n_cols, a.col_ptr, a.row_idx, a.color, a.num_colors,
                                                    a.compressed, a.values);
  return cudaGetLastError();
}

}  // namespace stardiff::cuda
