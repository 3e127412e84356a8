// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/mesh/hd.hpp — STARDIFF_HD marks a function for host and device.
//
// Contract: STARDIFF_HD is `__host__ __device__` in a translation unit compiled by nvcc
// (__CUDACC__) and empty otherwise, so a kernel functor written once
//   struct K { STARDIFF_HD void operator()(Acc<const double> u, Acc<double> v) const; };
// compiles unchanged in a CPU-only build and runs on CUDA workers where its loop is
// submitted from an nvcc translation unit (stardiff/mesh/par_loop_cuda.cuh).
#pragma once

#if defined(__CUDACC__)
#define STARDIFF_HD __host__ __device__
#else
#define STARDIFF_HD
#endif
