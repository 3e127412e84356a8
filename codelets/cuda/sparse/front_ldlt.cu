// codelets/cuda/sparse/front_ldlt.cu — see front_ldlt.cuh.
#include "cuda/sparse/front_ldlt.cuh"

namespace stardiff::cuda {
namespace {
__global__ void assemble_kernel(int ncols, const std::int64_t* __restrict__ ap, const int* __restrict__ ai,
                                const double* __restrict__ vals, const int* __restrict__ pos,
                                const int* __restrict__ colpos, double* F, int ldf) {
  for (int j = blockIdx.x; j < ncols; j += gridDim.x) {
    const std::size_t cj = std::size_t(colpos[j]) * ldf;
    for (std::int64_t q = ap[j] + threadIdx.x; q < ap[j + 1]; q += blockDim.x) F[std::size_t(pos[ai[q]]) + cj] += vals[q];
  }
}

__global__ void extend_add_kernel(int mc, const double* __restrict__ C, int ldc, const int* __restrict__ map,
                                  double* F, int ldf) {
  // one block row of threads per column b, grid-stride over columns
  for (int b = blockIdx.x; b < mc; b += gridDim.x) {
    const int pb = map[b];
    const double* col = C + std::size_t(b) * ldc;
    for (int a = b + threadIdx.x; a < mc; a += blockDim.x) {
      const int pa = map[a];
      const std::size_t dst = pa >= pb ? std::size_t(pa) + std::size_t(pb) * ldf : std::size_t(pb) + std::size_t(pa) * ldf;
      F[dst] += col[a];
    }
  }
}

__global__ void ldlt_diag_block_kernel(int nw, double* F, int ldf) {
  // single block: column j pivots, then the trailing lower triangle is updated in parallel
  for (int j = 0; j < nw; ++j) {
    const double dj = F[j + std::size_t(j) * ldf];
    __syncthreads();
    const int rest = nw - j - 1;
    // trailing update: (i, jj) with j < jj <= i < nw
    for (int t = threadIdx.x; t < rest * rest; t += blockDim.x) {
      const int jj = j + 1 + t / rest, i = j + 1 + t % rest;
      if (i >= jj) {
        const double lij = F[i + std::size_t(j) * ldf], ljj = F[jj + std::size_t(j) * ldf];
        F[i + std::size_t(jj) * ldf] -= lij * ljj / dj;
      }
    }
    __syncthreads();
    for (int i = j + 1 + threadIdx.x; i < nw; i += blockDim.x) F[i + std::size_t(j) * ldf] /= dj;
    __syncthreads();
  }
}

unsigned grid_for(int n) { return static_cast<unsigned>(n < 1 ? 1 : (n < 65535 ? n : 65535)); }
}  // namespace

void front_assemble_cuda(int ncols, const std::int64_t* ap, const int* ai, const double* vals, const int* pos,
                         const int* colpos, double* F, int ldf, cudaStream_t stream) {
  if (ncols <= 0) return;
  assemble_kernel<<<grid_for(ncols), 128, 0, stream>>>(ncols, ap, ai, vals, pos, colpos, F, ldf);
}

void extend_add_cuda(int mc, const double* C, int ldc, const int* map, double* F, int ldf, cudaStream_t stream) {
  if (mc <= 0) return;
  extend_add_kernel<<<grid_for(mc), 128, 0, stream>>>(mc, C, ldc, map, F, ldf);
}

void ldlt_diag_block_cuda(int nw, double* F, int ldf, cudaStream_t stream) {
  if (nw <= 0) return;
  ldlt_diag_block_kernel<<<1, 256, 0, stream>>>(nw, F, ldf);
}
}  // namespace stardiff::cuda
