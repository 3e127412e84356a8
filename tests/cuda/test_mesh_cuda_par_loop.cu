// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/cuda/test_mesh_cuda_par_loop.cu — par_loop from an nvcc translation unit: every
// loop's codelet has CPU and CUDA implementations (stardiff/mesh/par_loop_cuda.cuh).
// Cases: the Poisson problem (set-up with arg_idx, Jacobi and copy loops, the SUM error
// loop) and its adjoint (stencil scatters by atomicAdd); MIN and MAX loops with many ties
// (the arg-extremum is the first point, as on the CPU); a loop reading a 2-component dat
// (x stride 2), a dat lacking x (stride 0), an arg_gbl and an active Scalar into a SUM,
// and its adjoint (all x points scatter into one element; the scalar's adjoint is a block
// reduction).
//  * HostPath: StarPU with no CUDA worker (STARPU_NCUDA=0 or no device) runs the nvcc
//    TU's CPU implementations: bitwise the SequentialExecutor's results.
//  * Device: one CPU and one CUDA worker (dmda unless STARPU_SCHED says otherwise; loop
//    tiles on either): values, reductions and adjoints within 1e-12 relative of the
//    SequentialExecutor's (nvcc contracts to FMA; CUDA's sin is not glibc's), and a
//    second run agrees with the first within the same bound. Skips with one line when no
//    CUDA device is present or StarPU has no CUDA.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "stardiff/mesh/par_loop_cuda.cuh"
#include "poisson_problem.hpp"

using namespace stardiff;
using mesh::Acc;

namespace {

struct Probe {  // writes 1 where the tile ran on a CUDA worker, 0 on a CPU one
  STARDIFF_HD void operator()(Acc<double> w) const {
#if defined(__CUDA_ARCH__)
    w(0, 0) = 1.0;
#else
    w(0, 0) = 0.0;
#endif
  }
};

struct MinMaxKernel {  // quantised values: many ties
  STARDIFF_HD void operator()(Acc<const double> u, double* mn, double* mx) const {
    const double v = floor(u(0, 0) * 4.0) / 4.0;
    if (v < *mn) *mn = v;
    if (v > *mx) *mx = v;
  }
};

struct LowDimKernel {  // sum += (a_0 s + a_1 c) k
  STARDIFF_HD void operator()(Acc<const double> a, Acc<const double> s, const double* c, const double* k,
                              double* sum) const {
    *sum += (a.c(0) * s(0, 0) + a.c(1) * *c) * *k;
  }
  STARDIFF_HD void adjoint(Acc<const double> a, Acc<double> a_a1s, Acc<const double> s, Acc<double> s_a1s,
                           const double* c, const double* k, double* k_a1s, const double*,
                           const double* sum_a1s) const {
    const double g = *sum_a1s;
    a_a1s.c(0) += s(0, 0) * *k * g;
    a_a1s.c(1) += *c * *k * g;
    s_a1s(0, 0) += a.c(0) * *k * g;
    *k_a1s += (a.c(0) * s(0, 0) + a.c(1) * *c) * g;
  }
};

struct Result {
  double E = 0, mn = 0, mx = 0, sum = 0, dk = 0;
  std::array<int, 3> amn{}, amx{};
  std::vector<double> u, dE_df, dE_du, da, ds;
  double gpu_fraction = 0;  // of the probe's tiles
};

Result run_cases(Executor& ex, int tiles) {
  Result r;
  const int nx = 300, ny = 200;
  {
    poisson::Problem p(ex, nx, ny, tiles);
    p.setup();
    const poisson::Gradient g = poisson::record_and_reverse(p, 6);
    r.E = g.E;
    r.dE_df = g.dE_df.data;
    r.dE_du = g.dE_du.data;
    r.u = p.u.values().data;
    mesh::Reduction<double> mn(p.block, mesh::ReduceOp::MIN, "mn"), mx(p.block, mesh::ReduceOp::MAX, "mx");
    mesh::par_loop_passive("minmax", p.block, p.block.interior(), MinMaxKernel{},
                           mesh::arg_dat(p.u2, p.zero, mesh::READ), mesh::arg_reduce(mn), mesh::arg_reduce(mx));
    r.mn = mn.value();
    r.mx = mx.value();
    r.amn = mn.arg();
    r.amx = mx.arg();
    mesh::Dat<double> w(p.block, "probe");
    mesh::par_loop_passive("probe", p.block, p.block.interior(), Probe{}, mesh::arg_dat(w, p.zero, mesh::WRITE));
    const auto wv = w.values();
    double on = 0, all = 0;
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) {
        on += wv(i, j);
        all += 1;
      }
    r.gpu_fraction = on / all;
  }
  {
    mesh::Block b(ex, "lowdim", {nx, ny}, tiles);
    const mesh::Stencil zero = mesh::Stencil::zero(2);
    mesh::Dat<double> a(b, "a", mesh::Halo{}, {.dim = 2});
    mesh::Dat<double> s(b, "s", mesh::Halo{}, {.axes = {1}});
    a.set_components([](int i, int j, int, int c) { return std::sin(0.01 * i + 0.02 * j + c); });
    s.set([](int, int j, int) { return 1.0 + 0.001 * j; });
    mesh::Scalar<double> k(b, "k", 0.75);
    mesh::Reduction<double> sum(b, mesh::ReduceOp::SUM, "sum");
    Tape tape("lowdim");
    tape.start();
    mesh::par_loop("lowdim", b, b.interior(), LowDimKernel{}, mesh::arg_dat(a, zero, mesh::READ),
                   mesh::arg_dat(s, zero, mesh::READ), mesh::arg_gbl(1.5), mesh::arg_scalar(k),
                   mesh::arg_reduce(sum));
    tape.stop();
    tape.seed(sum, 1.0);
    tape.reverse();
    ex.wait_all();
    r.sum = sum.value();
    r.dk = k.adjoint();
    r.da = a.adjoint().data;
    r.ds = s.adjoint().data;
  }
  return r;
}

bool have_device() {
  int n = 0;
  const bool ok = cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
  cudaGetLastError();
  return ok;
}

// Largest |a - b| / max(|b|, scale) with scale the largest |b| times 1e-3 (entries near
// zero are compared relative to the field's size).
double rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return INFINITY;
  double big = 0, worst = 0;
  for (double v : b) big = std::max(big, std::fabs(v));
  for (std::size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, std::fabs(a[i] - b[i]) / std::max(std::fabs(b[i]), 1e-3 * big + 1e-300));
  return worst;
}
double rel(double a, double b) { return std::fabs(a - b) / std::max(std::fabs(b), 1e-300); }

void expect_close(const Result& g, const Result& c, double tol) {
  EXPECT_LE(rel(g.E, c.E), tol);
  EXPECT_LE(rel_diff(g.u, c.u), tol);
  EXPECT_LE(rel_diff(g.dE_df, c.dE_df), tol);
  EXPECT_LE(rel_diff(g.dE_du, c.dE_du), tol);
  EXPECT_EQ(g.mn, c.mn);  // quantised: exact
  EXPECT_EQ(g.mx, c.mx);
  EXPECT_EQ(g.amn, c.amn);
  EXPECT_EQ(g.amx, c.amx);
  EXPECT_LE(rel(g.sum, c.sum), tol);
  EXPECT_LE(rel(g.dk, c.dk), tol);
  EXPECT_LE(rel_diff(g.da, c.da), tol);
  EXPECT_LE(rel_diff(g.ds, c.ds), tol);
}

}  // namespace

TEST(MeshCudaParLoop, HostPathBitwiseEqualsSequential) {
  SequentialExecutor se;
  const Result ref = run_cases(se, 4);
  EXPECT_GT(ref.E, 0.0);
  EXPECT_LT(ref.mn, ref.mx);
  EXPECT_NE(ref.amn[0], mesh::kNoArg);
  EXPECT_EQ(ref.gpu_fraction, 0.0);
  RuntimeOptions o;
  o.ncuda = 0;
  Runtime rt(o);
  ASSERT_EQ(rt.cuda_workers(), 0);
  auto ex = make_executor("starpu");
  const Result r = run_cases(*ex, 4);
  EXPECT_EQ(r.E, ref.E);
  EXPECT_EQ(r.u, ref.u);
  EXPECT_EQ(r.dE_df, ref.dE_df);
  EXPECT_EQ(r.dE_du, ref.dE_du);
  EXPECT_EQ(r.mn, ref.mn);
  EXPECT_EQ(r.mx, ref.mx);
  EXPECT_EQ(r.amn, ref.amn);
  EXPECT_EQ(r.amx, ref.amx);
  EXPECT_EQ(r.sum, ref.sum);
  EXPECT_EQ(r.dk, ref.dk);
  EXPECT_EQ(r.da, ref.da);
  EXPECT_EQ(r.ds, ref.ds);
  EXPECT_EQ(r.gpu_fraction, 0.0);
}

TEST(MeshCudaParLoop, DeviceMatchesSequential) {
  if (!stardiff_starpu_cuda()) GTEST_SKIP() << "StarPU built without CUDA: no CUDA codelets";
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  SequentialExecutor se;
  const Result ref = run_cases(se, 4);
  RuntimeOptions o;
  o.ncpu = 1;
  o.ncuda = 1;
  Runtime rt(o);
  ASSERT_EQ(rt.cuda_workers(), 1);
  auto ex = make_executor("starpu");
  const Result a = run_cases(*ex, 4);
  const Result b = run_cases(*ex, 4);
  std::printf("probe tiles on the GPU: %.0f%% (first run), %.0f%% (second)\n", 100 * a.gpu_fraction,
              100 * b.gpu_fraction);
  expect_close(a, ref, 1e-12);
  expect_close(b, ref, 1e-12);
  expect_close(b, a, 1e-12);
  EXPECT_GT(a.gpu_fraction + b.gpu_fraction, 0.0) << "no loop tile ran on the CUDA worker";
}
