// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/support/forward/gpu_selftest.cpp — see gpu_selftest.hpp.
#include "support/forward/gpu_selftest.hpp"

#if STARDIFF_CUDA_KERNELS
#include "support/cuda/bratu_jacobian_host.hpp"
#endif

namespace stardiff::forward::detail {
int bratu_jacobian_gpu(const test_problems::BratuResidual& f, const SparsityPattern& p, const Coloring& c,
                       const std::vector<double>& x, std::vector<double>& values, std::vector<double>& fvals,
                       std::string* err) {
#if STARDIFF_CUDA_KERNELS
  values.assign(p.nnz(), 0.0);
  fvals.assign(p.n_rows, 0.0);
  char buf[256] = {0};
  const int rc = stardiff::cuda::bratu_jacobian_cuda_host(f, p.n_rows, p.n_cols, c.num_colors, c.color.data(),
                                                          p.col_ptr.data(), p.row_idx.data(), x.data(),
                                                          values.data(), fvals.data(), buf);
  if (err) *err = buf;
  return rc;
#else
  (void)f, (void)p, (void)c, (void)x, (void)values, (void)fvals;
  if (err) *err = "CUDA kernels not compiled";
  return 1;
#endif
}
}  // namespace stardiff::forward::detail
