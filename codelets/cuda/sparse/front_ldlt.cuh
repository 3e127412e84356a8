// codelets/cuda/sparse/front_ldlt.cuh — CUDA twins of the frontal-matrix kernels of
// codelets/cpu/sparse (no StarPU types; asynchronous on `stream`, device pointers).
//
//   front_assemble_cuda: F(pos[ai[q]], colpos[j]) += vals[q] for the entries q of the
//     front's columns j (CSC ap/ai of the permuted lower A; pos maps global rows to front
//     rows; destinations are distinct, so no atomics).
//   extend_add_cuda: F(map[a], map[b]) += C(a, b) for the lower triangle of the child's
//     mc x mc contribution block C (entry stored below the diagonal of F whichever of
//     map[a], map[b] is larger; map is injective, so no atomics).
//   ldlt_diag_block_cuda: unpivoted LDL^T of the nw x nw diagonal block at F (ld ldf),
//     nw <= 1024, in place (L strictly below the diagonal, D on it): the BLAS-3 window
//     path of front_ldlt_cpu (its a-posteriori pivot check then runs on the panel).
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

namespace stardiff::cuda {
void front_assemble_cuda(int ncols, const std::int64_t* ap, const int* ai, const double* vals, const int* pos,
                         const int* colpos, double* F, int ldf, cudaStream_t stream);
void extend_add_cuda(int mc, const double* C, int ldc, const int* map, double* F, int ldf, cudaStream_t stream);
void ldlt_diag_block_cuda(int nw, double* F, int ldf, cudaStream_t stream);
}  // namespace stardiff::cuda
