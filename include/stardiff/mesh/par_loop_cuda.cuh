// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/mesh/par_loop_cuda.cuh — par_loop with CUDA implementations.
//
// Contract: in a translation unit compiled by nvcc (-std=c++20 --expt-relaxed-constexpr,
// e.g. through stardiff_add_cuda_kernels in our CMake package), every par_loop /
// par_loop_passive it submits gets a codelet with a CPU and a CUDA implementation
// (detail/loop_cuda.cuh), so StarPU (dmda: from perf models) runs each tile task on a CPU
// or CUDA worker; results agree (reductions reproducible run to run, equal to the CPU's up
// to rounding). Kernels are trivially copyable functors whose operator() and adjoint are
// STARDIFF_HD (stardiff/mesh/hd.hpp); in device code a non-const accessor element is a
// proxy (read, =, +=, -=, *=, /=), not a T&. Halo exchanges, reduction combines and the
// tape's copies stay CPU tasks: StarPU moves the tiles between nodes. Including this
// header (or any stardiff header) in an nvcc TU is enough; STARDIFF_NO_LOOP_CUDA keeps
// that TU's loops CPU-only. Under SequentialExecutor or a CPU-only StarPU the CPU
// implementation runs.
#pragma once
#if !defined(__CUDACC__)
#error "stardiff/mesh/par_loop_cuda.cuh is for translation units compiled by nvcc"
#endif
#include "stardiff/mesh/par_loop.hpp"
