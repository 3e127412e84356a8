// SPDX-License-Identifier: LGPL-2.1-or-later
// codelets/cuda/mesh/poisson_stencil.cuh — CUDA twins of the Poisson Jacobi loop and its
// adjoint on one tile (no StarPU types; asynchronous on `stream`).
//
// Geometry (elements, one component per point, as mesh::TileGeom): the value at loop
// index (i, j) of a tile buffer is buf[origin + i + j * sy]; the loop covers
// [i0, i1) x [j0, j1). Each dat has its own origin (same sy for dats of one block).
//   poisson_jacobi_cuda:   u2 = ((u(-1,0)+u(1,0)) dy2 + (u(0,-1)+u(0,1)) dx2 - f dx2 dy2) inv
//   poisson_jacobi_adjoint_cuda: c = u2_a1s inv; u_a1s at the four neighbours += c dy2 / c dx2
//       (atomicAdd: neighbouring threads hit the same points), f_a1s -= c dx2 dy2,
//       u2_a1s = 0. Summation order varies run to run (unlike the CPU codelets).
#pragma once
#include <cuda_runtime.h>

namespace stardiff::cuda {

struct StencilTile {
  long long u_origin, f_origin, u2_origin, sy;
  int i0, i1, j0, j1;
  double dx2, dy2, inv;
};

void poisson_jacobi_cuda(const StencilTile& g, const double* u, const double* f, double* u2, cudaStream_t stream);
void poisson_jacobi_adjoint_cuda(const StencilTile& g, double* u_a1s, double* f_a1s, double* u2_a1s,
                                 cudaStream_t stream);

}  // namespace stardiff::cuda
