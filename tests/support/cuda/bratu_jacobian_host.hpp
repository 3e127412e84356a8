// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/support/cuda/bratu_jacobian_host.hpp — host-to-host entry of the Bratu CUDA
// Jacobian (plain C++, no CUDA types): copies the pattern, colouring and x to the device,
// runs bratu_jacobian_cuda, copies the CSC values and f back. Returns 0, 2 when no
// device is usable, 3 on a CUDA error (message in err, at least 256 bytes).
#pragma once
#include <cstdint>

#include "support/forward/bratu_residual.hpp"

namespace stardiff::cuda {
int bratu_jacobian_cuda_host(const forward::test_problems::BratuResidual& f, std::int32_t n_rows, std::int32_t n_cols,
                             std::int32_t num_colors, const std::int32_t* color, const std::int32_t* col_ptr,
                             const std::int32_t* row_idx, const double* x, double* values, double* fvals, char* err);
}  // namespace stardiff::cuda
