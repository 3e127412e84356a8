// SPDX-License-Identifier: LGPL-2.1-or-later
// codelets/cuda/mesh/tridiag.cuh — CUDA twins of codelets/cpu/mesh/tridiag.hpp (no StarPU types;
// asynchronous on `stream`): batched Thomas solves along one axis of a strided box and their adjoint.
//
// Box, arrays, line numbering, a[0]/c[n-1], aliasing (x may alias d; xbar may alias dbar only with
// consume_xbar), null adjoint pointers skipped and the adjoint's contract: exactly as the CPU
// kernels. All pointers are device pointers. One thread per line; neighbouring threads take
// neighbouring lines along the other axis with the smaller stride of d (of xbar in the adjoint),
// so a warp reads one row of 32 lines coalesced when the solve axis is not the contiguous one;
// along the contiguous axis each thread walks its own line (reads served by L1/L2 lines).
// Arithmetic uses round-to-nearest intrinsics without FMA contraction, in the CPU kernels' order.
// work: tridiag_*_cuda_work_size(box) doubles of device memory (slot i * lines + line).
// status: device memory; set by the call (stream-ordered): bad_lines, and first_key = line * n_axis
// + row of the lowest bad line's first zero/non-finite pivot (~0ull when none).
#pragma once
#include <cstddef>

#include <cuda_runtime.h>

#include "cpu/mesh/tridiag_box.hpp"

namespace stardiff::cuda {

using cpu::TridiagArray;
using cpu::TridiagBox;
using cpu::TridiagConstArray;
struct TridiagCudaStatus {
  unsigned long long first_key;
  unsigned long long bad_lines;
};

std::size_t tridiag_solve_cuda_work_size(const TridiagBox& box);
std::size_t tridiag_adjoint_cuda_work_size(const TridiagBox& box);

void tridiag_solve_cuda(const TridiagBox& box, TridiagConstArray a, TridiagConstArray b, TridiagConstArray c,
                        TridiagConstArray d, TridiagArray x, double* work, TridiagCudaStatus* status,
                        cudaStream_t stream);
void tridiag_adjoint_cuda(const TridiagBox& box, TridiagConstArray a, TridiagConstArray b, TridiagConstArray c,
                          TridiagConstArray x, TridiagArray xbar, bool consume_xbar, TridiagArray abar,
                          TridiagArray bbar, TridiagArray cbar, TridiagArray dbar, double* work,
                          TridiagCudaStatus* status, cudaStream_t stream);

// The same solves by cuSPARSE gtsv2StridedBatch (cyclic reduction, no pivoting) on packed
// copies of the lines (a[0] and c[n-1] zeroed), the adjoint as a gtsv2 solve of the transposed
// lines then the same accumulation; scratch is stream-ordered (cudaMallocAsync) and one cuSPARSE
// handle is kept per calling thread. Breakdowns are detected on the result: status names the
// lowest line with a non-finite value (first_key = line * n_axis + row of its first one), not
// the first zero pivot as the Thomas kernels do. Lines longer than INT_MAX / lines x n_axis
// beyond INT_MAX elements are refused. Returns nullptr, or what failed (cuSPARSE or CUDA).
const char* tridiag_solve_cusparse(const TridiagBox& box, TridiagConstArray a, TridiagConstArray b,
                                   TridiagConstArray c, TridiagConstArray d, TridiagArray x,
                                   TridiagCudaStatus* status, cudaStream_t stream);
const char* tridiag_adjoint_cusparse(const TridiagBox& box, TridiagConstArray a, TridiagConstArray b,
                                     TridiagConstArray c, TridiagConstArray x, TridiagArray xbar, TridiagArray abar,
                                     TridiagArray bbar, TridiagArray cbar, TridiagArray dbar,
                                     TridiagCudaStatus* status, cudaStream_t stream);

}  // namespace stardiff::cuda
