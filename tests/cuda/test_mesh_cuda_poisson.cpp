// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/cuda/test_mesh_cuda_poisson.cpp — the CUDA Poisson Jacobi loop and its adjoint
// (atomic scatter) agree with the CPU mesh loops on one tile (1e-14 relative); skips
// without a CUDA device.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "poisson_problem.hpp"
#include "cuda/mesh/poisson_stencil.cuh"

using namespace stardiff;

namespace {
bool have_device() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}
double* to_device(const std::vector<double>& v) {
  double* d = nullptr;
  cudaMalloc(&d, v.size() * sizeof(double));
  cudaMemcpy(d, v.data(), v.size() * sizeof(double), cudaMemcpyHostToDevice);
  return d;
}
std::vector<double> to_host(const double* d, std::size_t n) {
  std::vector<double> v(n);
  cudaMemcpy(v.data(), d, n * sizeof(double), cudaMemcpyDeviceToHost);
  return v;
}
}  // namespace

TEST(MeshCudaPoisson, JacobiAndAdjointMatchCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  const int nx = 300, ny = 200;
  SequentialExecutor ex;
  poisson::Problem p(ex, nx, ny, 1);
  p.setup();
  const auto u = p.u.values(), f = p.f.values();
  // CPU: one recorded Jacobi sweep, then its adjoint seeded with a random u2 adjoint.
  std::mt19937 gen(5);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<double> seed(u.data.size());
  for (auto& s : seed) s = dist(gen);
  Tape tape;
  tape.start();
  const double dx2 = 1e-4, dy2 = 1e-4, inv = 1.0 / (2 * (dx2 + dy2));
  mesh::par_loop("jacobi", p.block, p.block.interior(), poisson::JacobiKernel{dx2, dy2, inv},
                 mesh::arg_dat(p.u, p.five, mesh::READ), mesh::arg_dat(p.f, p.zero, mesh::READ),
                 mesh::arg_dat(p.u2, p.zero, mesh::WRITE));
  tape.stop();
  ex.wait_all();
  const auto u2_cpu = p.u2.values();
  tape.seed<double>(p.u2, [&](int i, int j, int, int) { return seed[u.index(i, j)]; });
  tape.reverse();
  ex.wait_all();
  const auto ua = p.u.adjoint(), fa = p.f.adjoint(), u2a = p.u2.adjoint();

  // GPU on the same padded layout: loop index (i, j) at (i + 1) + (j + 1) (nx + 2).
  cuda::StencilTile g{nx + 3, nx + 3, nx + 3, nx + 2, 0, nx, 0, ny, dx2, dy2, inv};
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  double *du = to_device(u.data), *df = to_device(f.data), *du2 = to_device(std::vector<double>(u.data.size(), 0.0));
  cuda::poisson_jacobi_cuda(g, du, df, du2, s);
  double *dua = to_device(std::vector<double>(u.data.size(), 0.0)), *dfa = to_device(std::vector<double>(u.data.size(), 0.0));
  double* du2a = to_device(seed);
  cuda::poisson_jacobi_adjoint_cuda(g, dua, dfa, du2a, s);
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  auto u2_gpu = to_host(du2, u.data.size()), ua_gpu = to_host(dua, u.data.size()), fa_gpu = to_host(dfa, u.data.size()),
       u2a_gpu = to_host(du2a, u.data.size());
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) {
      std::size_t k = u.index(i, j);
      EXPECT_NEAR(u2_gpu[k], u2_cpu.data[k], 1e-14 * (1 + std::fabs(u2_cpu.data[k])));
      EXPECT_NEAR(fa_gpu[k], fa.data[k], 1e-14 * (1e-8 + std::fabs(fa.data[k])));
      EXPECT_EQ(u2a_gpu[k], 0.0);
    }
  for (std::size_t k = 0; k < ua.data.size(); ++k) EXPECT_NEAR(ua_gpu[k], ua.data[k], 1e-13 * (1 + std::fabs(ua.data[k])));
  cudaFree(du); cudaFree(df); cudaFree(du2); cudaFree(dua); cudaFree(dfa); cudaFree(du2a);
  cudaStreamDestroy(s);
}
