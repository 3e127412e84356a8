// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/starpu/test_runtime_cuda_fallback.cpp — more CUDA devices asked for than present
// (STARPU_NCUDA=4, here or on a StarPU without CUDA): the runtime starts, prints one line naming
// the request and the shortfall, runs on its CPU workers, and a tridiagonal external function with
// its adjoint gives the sequential executor's results; STARPU_NCUDA=4 with STARPU_NCPU=0 and no
// device falls back to CPU workers instead of failing. Skipped where 4 or more devices exist.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "stardiff/stardiff.hpp"
#include "support/scoped_env.hpp"
#include "unit/test_adjoint_external_cases.hpp"

using namespace stardiff;
using namespace stardiff::ext_cases;
using stardiff::testing::ScopedEnv;

namespace {
void expect_same(const TriResult& a, const TriResult& b) {
  EXPECT_EQ(a.J, b.J);
  EXPECT_EQ(a.x.data, b.x.data);
  EXPECT_EQ(a.da.data, b.da.data);
  EXPECT_EQ(a.db.data, b.db.data);
  EXPECT_EQ(a.dc.data, b.dc.data);
  EXPECT_EQ(a.dd.data, b.dd.data);
}
int count_lines(const std::string& text, const std::string& prefix) {
  int n = 0;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = text.find('\n', at);
    n += text.compare(at, prefix.size(), prefix) == 0;
    at = end == std::string::npos ? text.size() : end + 1;
  }
  return n;
}
}  // namespace

TEST(RuntimeCudaFallback, TooManyCudaDevicesRunsOnCpuWorkers) {
  SequentialExecutor se;
  const TriResult ref = run_tridiag(se, {33, 20}, 4, 1, false, false);
  ScopedEnv ncuda("STARPU_NCUDA", "4");
  ::testing::internal::CaptureStderr();
  std::string err;
  {
    Runtime rt;
    err = ::testing::internal::GetCapturedStderr();
    if (rt.cuda_workers() >= 4) GTEST_SKIP() << "4 or more CUDA devices present: nothing to fall back from";
    EXPECT_GE(rt.cpu_workers(), 1);
    StarpuExecutor pe;
    TriResult got = run_tridiag(pe, {33, 20}, 4, 1, false, false);
    if (rt.cuda_workers() == 0) expect_same(ref, got);  // CPU workers only: bitwise
    else EXPECT_LE(std::fabs(got.J - ref.J), 1e-12 * std::fabs(ref.J));
  }
  std::printf("stderr: %s", err.c_str());
  EXPECT_NE(err.find("stardiff::Runtime: STARPU_NCUDA=4 asks for 4 CUDA device(s), but "), std::string::npos) << err;
  EXPECT_NE(err.find("CPU worker(s)"), std::string::npos) << err;
  EXPECT_EQ(count_lines(err, "stardiff::Runtime:"), 1) << err;
}

TEST(RuntimeCudaFallback, OnlyCudaWorkersAskedForWithoutDeviceFallsBackToCpu) {
  ScopedEnv ncpu("STARPU_NCPU", "0");
  ScopedEnv ncuda("STARPU_NCUDA", "4");
  ::testing::internal::CaptureStderr();
  std::string err;
  {
    Runtime rt;
    err = ::testing::internal::GetCapturedStderr();
    if (rt.cuda_workers() > 0) GTEST_SKIP() << "a CUDA device is present: the CUDA workers run";
    EXPECT_GE(rt.cpu_workers(), 1);
    SequentialExecutor se;
    StarpuExecutor pe;
    expect_same(run_tridiag(se, {9, 8, 12}, 4, 2, true, false), run_tridiag(pe, {9, 8, 12}, 4, 2, true, false));
  }
  std::printf("stderr: %s", err.c_str());
  EXPECT_NE(err.find("STARPU_NCUDA=4 with no CPU worker, but "), std::string::npos) << err;
  EXPECT_NE(err.find("falling back to StarPU's default CPU workers"), std::string::npos) << err;
  EXPECT_EQ(count_lines(err, "stardiff::Runtime:"), 1) << err;
}
