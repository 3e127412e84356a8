// SPDX-License-Identifier: LGPL-2.1-or-later
// src/adjoint/tridiag_device.hpp — white-box facts about tridiag_solve's CUDA implementation.
//
// tridiag_cuda_tasks(): the number of tridiag_solve tasks (primal and adjoint) that have run
// on a CUDA worker in this process; 0 in a build without StarPU CUDA codelets.
// On a CUDA worker, STARDIFF_TRIDIAG_CUDA selects the device solver: "thomas" (default, the
// Thomas kernel per line of codelets/cuda/mesh/tridiag) or "cusparse" (cuSPARSE
// gtsv2StridedBatch on packed copies of the lines); another value fails the task (Error).
#pragma once

namespace stardiff::detail {
long long tridiag_cuda_tasks();
}  // namespace stardiff::detail
