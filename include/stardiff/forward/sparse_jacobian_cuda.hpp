// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/forward/sparse_jacobian_cuda.hpp — SparseJacobian's CUDA task bodies, compiled only
// in a translation unit built by nvcc (sparse_jacobian.hpp includes this under __CUDACC__).
//
// Contract:
//  * Used when the residual type F declares `static constexpr bool cuda = true` and its
//    `template <class S> STARDIFF_HD operator()` is callable on the device: SparseJacobian's
//    residual, Colored-mode jacobian and decompression (scatter) codelets then also have CUDA
//    implementations, which StarPU (a CUDA-enabled one, stardiff built with StarPU CUDA
//    codelets) may pick per task; elsewhere the CPU ones run.
//  * Same plan, same arithmetic order per row as the CPU path (one thread per row, F on
//    RowRange{i, i + 1}); whether results are bitwise equal depends on F and on nvcc's FMA
//    contraction (--fmad) in the user's translation unit. The scatter copies values: bitwise.
//  * Buffers are device pointers; plan arrays are uploaded per task into stream-ordered
//    scratch (cudaMallocAsync), freed on the stream; everything is queued on `stream`.
//  * Returns the first CUDA error (cudaSuccess otherwise).
#pragma once
#if defined(__CUDACC__)
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "stardiff/forward/dual.hpp"
#include "stardiff/forward/row_range.hpp"

namespace stardiff::forward::cuda_detail {

constexpr int kThreads = 128;
inline unsigned blocks(std::int64_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

template <class F>
__global__ void residual_rows_kernel(F f, std::int32_t r0, std::int32_t r1, const double* x, double* fblock) {
  const std::int32_t i = r0 + static_cast<std::int32_t>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= r1) return;
  f(RowRange{i, i + 1}, x, fblock - r0);  // F writes f[i], global row numbering
}
template <int W>
__global__ void init_x_kernel(std::int32_t n, const double* x, Dual<W>* xd) {
  const std::int32_t j = static_cast<std::int32_t>(blockIdx.x * blockDim.x + threadIdx.x);
  if (j < n) xd[j] = Dual<W>(x[j]);
}
template <int W>
__global__ void seed_kernel(std::int32_t n, const std::int32_t* col, const std::int32_t* p, double v, Dual<W>* xd) {
  const std::int32_t q = static_cast<std::int32_t>(blockIdx.x * blockDim.x + threadIdx.x);
  if (q < n) xd[col[q]].d[p[q]] = v;
}
template <class F, int W>
__global__ void eval_rows_kernel(F f, std::int32_t n, const std::int32_t* rows, const Dual<W>* xd, Dual<W>* fd) {
  const std::int32_t t = static_cast<std::int32_t>(blockIdx.x * blockDim.x + threadIdx.x);
  if (t >= n) return;
  const std::int32_t i = rows[t];
  f(RowRange{i, i + 1}, xd, fd);
}
template <int W>
__global__ void extract_kernel(std::int32_t n, const std::int32_t* ext_row, const std::int32_t* ext_ptr,
                               const std::int32_t* ext_p, const Dual<W>* fd, double* out) {
  const std::int32_t r = static_cast<std::int32_t>(blockIdx.x * blockDim.x + threadIdx.x);
  if (r >= n) return;
  const Dual<W>& fi = fd[ext_row[r]];
  for (std::int32_t e = ext_ptr[r]; e < ext_ptr[r + 1]; ++e) out[e] = fi.d[ext_p[e]];
}
template <int W>
__global__ void values_kernel(std::int32_t r0, std::int32_t r1, const Dual<W>* fd, double* fblock) {
  const std::int32_t i = r0 + static_cast<std::int32_t>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < r1) fblock[i - r0] = fd[i].v;
}
template <class = void>
__global__ void gather_kernel(std::int32_t n, const double* const* outs, const std::int32_t* sb,
                                     const std::int32_t* si, double* vals) {
  const std::int32_t e = static_cast<std::int32_t>(blockIdx.x * blockDim.x + threadIdx.x);
  if (e < n) vals[e] = outs[sb[e]][si[e]];
}

// Stream-ordered scratch: allocations freed on the stream when it goes out of scope.
class Scratch {
 public:
  explicit Scratch(cudaStream_t s) : st_(s) {}
  ~Scratch() {
    for (void* p : mem_) cudaFreeAsync(p, st_);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  template <class T>
  T* alloc(std::size_t n) {
    void* p = nullptr;
    if (n == 0) n = 1;
    note(cudaMallocAsync(&p, n * sizeof(T), st_));
    if (p) mem_.push_back(p);
    return static_cast<T*>(p);
  }
  template <class T>
  T* upload(const T* host, std::size_t n) {
    T* d = alloc<T>(n);
    if (d && n) note(cudaMemcpyAsync(d, host, n * sizeof(T), cudaMemcpyHostToDevice, st_));
    return d;
  }
  cudaError_t error() const { return err_; }
  void note(cudaError_t e) {
    if (err_ == cudaSuccess) err_ = e;
  }

 private:
  cudaStream_t st_;
  std::vector<void*> mem_;
  cudaError_t err_ = cudaSuccess;
};

template <class F>
cudaError_t residual_block(const F& f, std::int32_t r0, std::int32_t r1, const double* x, double* fblock,
                           cudaStream_t st) {
  if (r1 > r0) residual_rows_kernel<F><<<blocks(r1 - r0), kThreads, 0, st>>>(f, r0, r1, x, fblock);
  return cudaGetLastError();
}

// One Colored-mode block (JacobianPlan::Block B) of chunks [0, num_chunks).
template <class F, int W, class Block>
cudaError_t jacobian_block(const F& f, const Block& B, std::int32_t num_chunks, std::int32_t n_rows,
                           std::int32_t n_cols, const double* x, double* out, double* fblock, cudaStream_t st) {
  Scratch s(st);
  auto* xd = s.alloc<Dual<W>>(static_cast<std::size_t>(n_cols));
  auto* fd = s.alloc<Dual<W>>(static_cast<std::size_t>(n_rows));
  // Rows evaluated per chunk, flattened from the plan's row runs.
  std::vector<std::int32_t> row_ptr(static_cast<std::size_t>(num_chunks) + 1, 0), rows;
  for (std::int32_t k = 0; k < num_chunks; ++k) {
    for (std::int32_t r = B.run_ptr[k]; r < B.run_ptr[k + 1]; ++r)
      for (std::int32_t i = B.runs[r].begin; i < B.runs[r].end; ++i) rows.push_back(i);
    row_ptr[k + 1] = static_cast<std::int32_t>(rows.size());
  }
  const std::int32_t* d_rows = s.upload(rows.data(), rows.size());
  const std::int32_t* d_seed_col = s.upload(B.seed_col.data(), B.seed_col.size());
  const std::int32_t* d_seed_p = s.upload(B.seed_p.data(), B.seed_p.size());
  const std::int32_t* d_ext_row = s.upload(B.ext_row.data(), B.ext_row.size());
  const std::int32_t* d_ext_ptr = s.upload(B.ext_ptr.data(), B.ext_ptr.size());
  const std::int32_t* d_ext_p = s.upload(B.ext_p.data(), B.ext_p.size());
  if (s.error() != cudaSuccess || !xd || !fd) return s.error() != cudaSuccess ? s.error() : cudaErrorMemoryAllocation;
  s.note(cudaMemsetAsync(fd, 0, sizeof(Dual<W>) * static_cast<std::size_t>(n_rows), st));
  if (n_cols > 0) init_x_kernel<W><<<blocks(n_cols), kThreads, 0, st>>>(n_cols, x, xd);
  for (std::int32_t k = 0; k < num_chunks; ++k) {
    const std::int32_t q0 = B.seed_ptr[k], nq = B.seed_ptr[k + 1] - q0;
    const std::int32_t nr = row_ptr[k + 1] - row_ptr[k];
    const std::int32_t x0 = B.ext_row_ptr[k], nx = B.ext_row_ptr[k + 1] - x0;
    if (nq > 0) seed_kernel<W><<<blocks(nq), kThreads, 0, st>>>(nq, d_seed_col + q0, d_seed_p + q0, 1.0, xd);
    if (nr > 0) eval_rows_kernel<F, W><<<blocks(nr), kThreads, 0, st>>>(f, nr, d_rows + row_ptr[k], xd, fd);
    if (nx > 0) extract_kernel<W><<<blocks(nx), kThreads, 0, st>>>(nx, d_ext_row + x0, d_ext_ptr + x0, d_ext_p, fd, out);
    if (nq > 0) seed_kernel<W><<<blocks(nq), kThreads, 0, st>>>(nq, d_seed_col + q0, d_seed_p + q0, 0.0, xd);
    s.note(cudaGetLastError());
  }
  if (B.row_end > B.row_begin)
    values_kernel<W><<<blocks(B.row_end - B.row_begin), kThreads, 0, st>>>(B.row_begin, B.row_end, fd, fblock);
  s.note(cudaGetLastError());
  return s.error();
}

// CSC values [e0, e1): vals[e - e0] = outs[src_block[e]][src_index[e]] (outs: device pointers).
inline cudaError_t scatter_values(const std::vector<const double*>& outs, const std::int32_t* src_block,
                                  const std::int32_t* src_index, std::int32_t e0, std::int32_t e1, double* vals,
                                  cudaStream_t st) {
  if (e1 <= e0) return cudaSuccess;
  Scratch s(st);
  const double* const* d_outs = s.upload(outs.data(), outs.size());
  const std::int32_t* d_sb = s.upload(src_block + e0, static_cast<std::size_t>(e1 - e0));
  const std::int32_t* d_si = s.upload(src_index + e0, static_cast<std::size_t>(e1 - e0));
  if (s.error() != cudaSuccess) return s.error();
  gather_kernel<><<<blocks(e1 - e0), kThreads, 0, st>>>(e1 - e0, d_outs, d_sb, d_si, vals);
  s.note(cudaGetLastError());
  return s.error();
}

}  // namespace stardiff::forward::cuda_detail
#endif  // __CUDACC__
