// SPDX-License-Identifier: LGPL-2.1-or-later
// src/runtime/cuda_workers.hpp — whether tasks submitted through an executor may run on GPUs.
//
// cuda_workers(exec): the number of StarPU CUDA workers a task submitted through exec may
// run on: starpu_cuda_worker_get_count() for a StarpuExecutor of a live runtime in a build
// with StarPU CUDA codelets (STARDIFF_STARPU_CUDA and STARPU_USE_CUDA), not under StarPU-MPI
// with more than one rank; 0 otherwise (another executor, a CPU-only StarPU, no device).
// Such a runtime has initialised cuBLAS on its CUDA workers (starpu_cublas_init).
#pragma once

namespace stardiff {
class Executor;
namespace detail {
int cuda_workers(const Executor& exec);
}
}  // namespace stardiff
