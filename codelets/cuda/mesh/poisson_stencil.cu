// SPDX-License-Identifier: LGPL-2.1-or-later
// codelets/cuda/mesh/poisson_stencil.cu — see poisson_stencil.cuh. One thread per point,
// 2-D grid of 32 x 8 blocks (x = contiguous rows).
#include "cuda/mesh/poisson_stencil.cuh"

namespace stardiff::cuda {
namespace {
__global__ void jacobi_kernel(StencilTile g, const double* __restrict__ u, const double* __restrict__ f,
                              double* __restrict__ u2) {
  const int i = g.i0 + static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int j = g.j0 + static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (i >= g.i1 || j >= g.j1) return;
  const long long pu = g.u_origin + i + j * g.sy;
  u2[g.u2_origin + i + j * g.sy] =
      ((u[pu - 1] + u[pu + 1]) * g.dy2 + (u[pu - g.sy] + u[pu + g.sy]) * g.dx2 -
       f[g.f_origin + i + j * g.sy] * g.dx2 * g.dy2) * g.inv;
}

__global__ void jacobi_adjoint_kernel(StencilTile g, double* u_a1s, double* __restrict__ f_a1s,
                                      double* __restrict__ u2_a1s) {
  const int i = g.i0 + static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int j = g.j0 + static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (i >= g.i1 || j >= g.j1) return;
  const long long p2 = g.u2_origin + i + j * g.sy;
  const double c = u2_a1s[p2] * g.inv;
  u2_a1s[p2] = 0.0;
  const long long pu = g.u_origin + i + j * g.sy;
  atomicAdd(&u_a1s[pu - 1], c * g.dy2);
  atomicAdd(&u_a1s[pu + 1], c * g.dy2);
  atomicAdd(&u_a1s[pu - g.sy], c * g.dx2);
  atomicAdd(&u_a1s[pu + g.sy], c * g.dx2);
  f_a1s[g.f_origin + i + j * g.sy] -= c * g.dx2 * g.dy2;
}

dim3 grid_for(const StencilTile& g, dim3 block) {
  const unsigned nx = g.i1 > g.i0 ? static_cast<unsigned>(g.i1 - g.i0) : 0u;
  const unsigned ny = g.j1 > g.j0 ? static_cast<unsigned>(g.j1 - g.j0) : 0u;
  return dim3((nx + block.x - 1) / block.x, (ny + block.y - 1) / block.y);
}
}  // namespace

void poisson_jacobi_cuda(const StencilTile& g, const double* u, const double* f, double* u2, cudaStream_t stream) {
  const dim3 block(32, 8);
  const dim3 grid = grid_for(g, block);
  if (grid.x == 0 || grid.y == 0) return;
  jacobi_kernel<<<grid, block, 0, stream>>>(g, u, f, u2);
}

void poisson_jacobi_adjoint_cuda(const StencilTile& g, double* u_a1s, double* f_a1s, double* u2_a1s,
                                 cudaStream_t stream) {
  const dim3 block(32, 8);
  const dim3 grid = grid_for(g, block);
  if (grid.x == 0 || grid.y == 0) return;
  jacobi_adjoint_kernel<<<grid, block, 0, stream>>>(g, u_a1s, f_a1s, u2_a1s);
}

}  // namespace stardiff::cuda
