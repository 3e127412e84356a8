// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/cuda/test_adjoint_cuda_tridiag.cpp — tridiag_solve (the batched tridiagonal external
// function) and its adjoint submitted to StarPU with one CPU and one CUDA worker give the
// sequential executor's value, solution and input adjoints to 1e-12 relative, for every axis of
// 2-D and 3-D dats (per-tile tasks and the all-tiles task whose lines cross tiles, stored outputs,
// recomputation, in place), under dmda (a fresh perf-model directory: dmda calibrates by sending
// tasks to the CUDA worker), eager and lws; some tasks must have run on the device. The device
// solver is STARDIFF_TRIDIAG_CUDA's (Thomas by default; the test runs both). Skips without a
// CUDA device or without StarPU CUDA codelets.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

#include "adjoint/tridiag_device.hpp"
#include "stardiff/runtime/runtime.hpp"
#include "unit/test_adjoint_external_cases.hpp"

using namespace stardiff;
using namespace stardiff::ext_cases;

namespace {
bool have_device() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}
double rel(const std::vector<double>& got, const std::vector<double>& ref) {
  if (got.size() != ref.size()) return 1e300;
  double scale = 0, diff = 0;
  for (std::size_t k = 0; k < ref.size(); ++k) {
    scale = std::max(scale, std::fabs(ref[k]));
    diff = std::max(diff, std::fabs(got[k] - ref[k]));
  }
  return diff / (scale > 0 ? scale : 1);
}
}  // namespace

TEST(AdjointCudaTridiag, StarpuWithCudaWorkerMatchesSequential) {
  if (!stardiff_starpu_cuda()) GTEST_SKIP() << "StarPU built without CUDA: no CUDA codelets";
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  const std::string home = (std::filesystem::temp_directory_path() / ("stardiff_tridiag_cuda_" +
                                                                       std::to_string(::getpid())))
                               .string();
  std::filesystem::remove_all(home);
  ::setenv("STARPU_HOME", home.c_str(), 1);  // uncalibrated models: dmda sends tasks to every arch
  struct Shape {
    std::vector<int> size;
    int axis;
  };
  const std::vector<Shape> shapes{{{130, 70}, 0}, {{130, 70}, 1}, {{24, 20, 28}, 0}, {{24, 20, 28}, 1},
                                  {{24, 20, 28}, 2}};
  SequentialExecutor se;
  std::vector<TriResult> ref;
  for (const Shape& s : shapes)
    for (int variant = 0; variant < 3; ++variant)
      ref.push_back(run_tridiag(se, s.size, 4, s.axis, variant == 2, variant == 1));
  for (const char* solver : {"thomas", "cusparse"})
    for (const char* sched : {"dmda", "eager", "lws"}) {
      ::setenv("STARDIFF_TRIDIAG_CUDA", solver, 1);
      RuntimeOptions o;
      o.ncpu = 1;
      o.ncuda = 1;
      o.scheduler = sched;
      Runtime rt(o);
      ASSERT_EQ(rt.cuda_workers(), 1);
      StarpuExecutor pe;
      const long long before = detail::tridiag_cuda_tasks();
      double worst = 0;
      std::size_t r = 0;
      for (int rep = 0; rep < 2; ++rep)
        for (const Shape& s : shapes)
          for (int variant = 0; variant < 3; ++variant) {
            SCOPED_TRACE(::testing::Message() << solver << " " << sched << " dims " << s.size.size() << " axis "
                                              << s.axis << " variant " << variant);
            const TriResult& a = ref[r++ % ref.size()];
            TriResult b = run_tridiag(pe, s.size, 4, s.axis, variant == 2, variant == 1);
            EXPECT_LE(std::fabs(a.J - b.J), 1e-12 * std::fabs(a.J));
            for (const auto& [x, y] : {std::pair{&a.x, &b.x}, {&a.da, &b.da}, {&a.db, &b.db}, {&a.dc, &b.dc},
                                       {&a.dd, &b.dd}}) {
              const double e = rel(y->data, x->data);
              EXPECT_LE(e, 1e-12);
              worst = std::max(worst, e);
            }
          }
      const long long on_device = detail::tridiag_cuda_tasks() - before;
      std::printf("tridiag external %s %s: %lld tasks on the CUDA worker, worst relative difference %.3g\n", solver,
                  sched, on_device, worst);
      if (std::string(sched) == "dmda") EXPECT_GT(on_device, 0) << "dmda never calibrated the CUDA implementation";
    }
  ::unsetenv("STARDIFF_TRIDIAG_CUDA");
  std::filesystem::remove_all(home);
}
