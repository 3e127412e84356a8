// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/cuda/test_starpu_cuda_blas1.cpp — the blas1 codelets' CUDA implementations, run as
// StarPU tasks on a CUDA worker with no CPU worker (every task on the device, StarPU moving
// the vectors there and back), give their CPU twins' results on the same inputs (1e-15
// relative: nvcc contracts alpha*x + y into an FMA, the host code may not); skips when StarPU
// has no CUDA codelets or no CUDA device is present.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "stardiff/stardiff.hpp"
#include "support/core/blas1.hpp"
#include "support/core/cl_blas1.hpp"

using namespace stardiff;

namespace {
bool have_device() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}
}  // namespace

TEST(StarpuCudaBlas1, ChainOnCudaWorkerMatchesCpu) {
  if (!stardiff_starpu_cuda()) GTEST_SKIP() << "StarPU built without CUDA: no CUDA codelets";
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  RuntimeOptions o;
  o.ncpu = 0;
  o.ncuda = 1;
  Runtime rt(o);
  ASSERT_EQ(rt.cuda_workers(), 1);
  ASSERT_EQ(rt.cpu_workers(), 0);
  auto ex = make_executor("starpu");

  const std::size_t n = (1 << 20) + 7;  // not a multiple of a block
  VectorHandle<double> x(n, "x"), y(n, "y");
  std::vector<double> rx(n), ry(n);
  for (std::size_t i = 0; i < n; ++i) {
    rx[i] = x.data()[i] = std::sin(0.001 * double(i));
    ry[i] = y.data()[i] = std::cos(0.002 * double(i)) + 1.0;
  }
  // y += 0.75 x; y *= -0.5; x += 1.25 y, three times: the device reads what it wrote.
  for (int k = 0; k < 3; ++k) {
    codelets::insert_axpy(*ex, 0.75, x, y);
    codelets::insert_scal(*ex, -0.5, y);
    codelets::insert_axpy(*ex, 1.25, y, x);
    cpu::axpy_cpu(n, 0.75, rx.data(), ry.data());
    cpu::scal_cpu(n, -0.5, ry.data());
    cpu::axpy_cpu(n, 1.25, ry.data(), rx.data());
  }
  ex->wait_all();
  auto gx = x.acquire(Access::R);
  auto gy = y.acquire(Access::R);
  double ex_max = 0, ey_max = 0, sx = 0, sy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    ex_max = std::max(ex_max, std::fabs(static_cast<const double*>(gx.data())[i] - rx[i]));
    ey_max = std::max(ey_max, std::fabs(static_cast<const double*>(gy.data())[i] - ry[i]));
    sx = std::max(sx, std::fabs(rx[i]));
    sy = std::max(sy, std::fabs(ry[i]));
  }
  EXPECT_GT(sx, 0.1);
  EXPECT_GT(sy, 0.1);
  EXPECT_LE(ex_max, 1e-15 * sx);
  EXPECT_LE(ey_max, 1e-15 * sy);
}
