// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/cuda/test_forward_cuda_starpu.cpp — SparseJacobian compiled by nvcc for a residual that
// opts into CUDA (support/cuda/bratu_sparse_jacobian.cu: residual, Colored jacobian and
// decompression codelets with CUDA implementations) gives the host-compiled SparseJacobian's
// results: bitwise on the sequential executor and on StarPU's CPU workers (eager, lws, dmda; no
// device needed); on StarPU with one
// CUDA worker and no CPU worker (every task on the device) the CSC values to 1e-12 relative, the
// residual and the Jacobian's value parts to 1e-13 (nvcc may contract into FMAs), and the
// decompression exactly where the device Jacobian block outputs are exact; skips the device part
// without a CUDA device or without StarPU CUDA codelets.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "stardiff/forward.hpp"
#include "stardiff/runtime/runtime.hpp"
#include "support/cuda/bratu_sparse_jacobian.hpp"
#include "support/forward/bratu_pattern.hpp"

using namespace stardiff;
using namespace stardiff::forward;

namespace {
struct Ref {
  std::vector<double> vals, f, res;
};
Ref host_reference(const test_problems::BratuResidual& r, const SparsityPattern& p, const std::vector<double>& x) {
  JacobianOptions o;
  o.row_blocks = 4;
  SparseJacobian<test_problems::BratuResidual, 8> J(p, r, o);
  Ref ref;
  ref.vals.resize(p.nnz());
  ref.f.resize(p.n_rows);
  ref.res.resize(p.n_rows);
  SequentialExecutor se;
  J.residual(se, x, ref.res);
  J.jacobian(se, x, ref.vals, ref.f);
  return ref;
}
double rel(const std::vector<double>& got, const std::vector<double>& ref) {
  double s = 0, e = 0;
  for (std::size_t k = 0; k < ref.size(); ++k) s = std::max(s, std::fabs(ref[k])), e = std::max(e, std::fabs(got[k] - ref[k]));
  return got.size() == ref.size() ? e / (s > 0 ? s : 1) : 1e300;
}
}  // namespace

TEST(ForwardCudaStarpu, NvccInstantiationMatchesHostOnCpu) {
  const test_problems::BratuResidual r{70, 45, 2.0, 1.5};
  const auto p = test_problems::bratu_pattern(r.nx, r.ny);
  const auto x = test_problems::bratu_state(p.n_cols, 11);
  const Ref ref = host_reference(r, p, x);
  SequentialExecutor se;
  std::vector<double> vals, f, res;
  test_problems::bratu_sparse_jacobian_nvcc(se, r, p, x, vals, f, res);
  EXPECT_EQ(vals, ref.vals);
  EXPECT_EQ(f, ref.f);
  EXPECT_EQ(res, ref.res);
  for (const char* sched : {"eager", "lws", "dmda"}) {  // StarPU on CPU workers: the same bits
    SCOPED_TRACE(sched);
    RuntimeOptions o;
    o.ncuda = 0;
    o.scheduler = sched;
    Runtime rt(o);
    StarpuExecutor pe;
    test_problems::bratu_sparse_jacobian_nvcc(pe, r, p, x, vals, f, res);
    EXPECT_EQ(vals, ref.vals);
    EXPECT_EQ(f, ref.f);
    EXPECT_EQ(res, ref.res);
  }
}

TEST(ForwardCudaStarpu, CudaWorkerMatchesHost) {
  if (!stardiff_starpu_cuda()) GTEST_SKIP() << "StarPU built without CUDA: no CUDA codelets";
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) GTEST_SKIP() << "no CUDA device";
  const test_problems::BratuResidual r{300, 200, 2.0, 1.5};
  const auto p = test_problems::bratu_pattern(r.nx, r.ny);
  const auto x = test_problems::bratu_state(p.n_cols, 5);
  const Ref ref = host_reference(r, p, x);
  RuntimeOptions o;
  o.ncpu = 0;
  o.ncuda = 1;
  Runtime rt(o);
  ASSERT_EQ(rt.cuda_workers(), 1);
  ASSERT_EQ(rt.cpu_workers(), 0);
  StarpuExecutor pe;
  std::vector<double> vals, f, res;
  for (int rep = 0; rep < 2; ++rep) {
    test_problems::bratu_sparse_jacobian_nvcc(pe, r, p, x, vals, f, res);
    const double ev = rel(vals, ref.vals), ef = rel(f, ref.f), er = rel(res, ref.res);
    std::printf("forward on CUDA worker: values %.3g, f %.3g, residual %.3g relative; bitwise values %d\n", ev, ef, er,
                int(vals == ref.vals));
    EXPECT_LE(ev, 1e-12);
    EXPECT_LE(ef, 1e-13);
    EXPECT_LE(er, 1e-13);
  }
}
