// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/cuda/test_forward_cuda.cpp — the CUDA instantiation of sparse_jacobian_cuda
// (Bratu residual, Dual<8> chunks) gives the analytic Jacobian to 1e-12 relative and the
// CPU residual to 1e-13; skips when the kernels are not built or no device is present.
#include <gtest/gtest.h>

#include <cmath>

#include "support/forward/bratu_pattern.hpp"
#include "support/forward/gpu_selftest.hpp"
#include "stardiff/forward.hpp"

using namespace stardiff::forward;

TEST(ForwardCuda, BratuJacobianMatchesAnalytic) {
  const test_problems::BratuResidual res{70, 45, 2.0, 1.5};
  const auto p = test_problems::bratu_pattern(res.nx, res.ny);
  const auto c = color_columns(p);
  const std::vector<double> x = test_problems::bratu_state(p.n_cols, 11);
  std::vector<double> vals, f;
  std::string err;
  const int rc = detail::bratu_jacobian_gpu(res, p, c, x, vals, f, &err);
  if (rc == 1 || rc == 2) GTEST_SKIP() << err;
  ASSERT_EQ(rc, 0) << err;
  const auto ref = test_problems::bratu_jacobian(res, p, x.data());
  double e = 0, s = 0;
  for (std::size_t k = 0; k < ref.size(); ++k) e = std::max(e, std::abs(vals[k] - ref[k])), s = std::max(s, std::abs(ref[k]));
  EXPECT_LE(e / s, 1e-12);
  std::vector<double> fc(p.n_rows);
  res(RowRange{0, p.n_rows}, x.data(), fc.data());
  for (std::int32_t i = 0; i < p.n_rows; ++i) EXPECT_NEAR(f[i], fc[i], 1e-13 * std::max(1.0, std::abs(fc[i])));
}
