// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/cuda/test_mesh_cuda_tridiag.cpp — the CUDA batched tridiagonal solve and its adjoint agree
// with the CPU kernels on the same strided boxes along each axis (1e-12 relative; the kernels use
// the same operation order without contraction) and report the same bad pivot; skips without a
// CUDA device.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "cpu/mesh/tridiag.hpp"
#include "cuda/mesh/tridiag.cuh"

namespace {

bool have_device() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

// Host array over box extents n with `halo` ghost layers, `comp` interleaved components and
// storage order `order` (fastest axis first), mirrored on the device.
struct Buf {
  std::vector<double> mem;
  long long off = 0, s[3] = {0, 0, 0};
  double* dev = nullptr;
  Buf(const long long* n, int halo, int comp, const int* order, std::mt19937& gen, double shift) {
    long long N[3];
    for (int k = 0; k < 3; ++k) N[k] = n[k] + 2 * halo;
    s[order[0]] = comp;
    s[order[1]] = comp * N[order[0]];
    s[order[2]] = comp * N[order[0]] * N[order[1]];
    off = halo * (s[0] + s[1] + s[2]);
    std::uniform_real_distribution<double> u(-1, 1);
    mem.resize(static_cast<std::size_t>(comp * N[0] * N[1] * N[2]));
    for (double& v : mem) v = shift + u(gen);
    cudaMalloc(&dev, mem.size() * sizeof(double));
    cudaMemcpy(dev, mem.data(), mem.size() * sizeof(double), cudaMemcpyHostToDevice);
  }
  Buf(const Buf&) = delete;
  ~Buf() { cudaFree(dev); }
  std::vector<double> fetch() const {
    std::vector<double> v(mem.size());
    cudaMemcpy(v.data(), dev, v.size() * sizeof(double), cudaMemcpyDeviceToHost);
    return v;
  }
  stardiff::cpu::TridiagArray h() { return {mem.data() + off, {s[0], s[1], s[2]}}; }
  stardiff::cpu::TridiagConstArray hc() const { return {mem.data() + off, {s[0], s[1], s[2]}}; }
  stardiff::cuda::TridiagArray d() { return {dev + off, {s[0], s[1], s[2]}}; }
  stardiff::cuda::TridiagConstArray dc() const { return {dev + off, {s[0], s[1], s[2]}}; }
};

const int kOrders[6][3] = {{0, 1, 2}, {2, 1, 0}, {1, 0, 2}, {0, 2, 1}, {2, 0, 1}, {1, 2, 0}};

double max_rel_diff(const std::vector<double>& gpu, const std::vector<double>& cpu) {
  double scale = 0, diff = 0;
  for (std::size_t k = 0; k < cpu.size(); ++k) {
    scale = std::max(scale, std::fabs(cpu[k]));
    diff = std::max(diff, std::fabs(gpu[k] - cpu[k]));
  }
  return diff / (scale > 0 ? scale : 1);
}

}  // namespace

TEST(MeshCudaTridiag, SolveAndAdjointMatchCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  struct Case {
    long long n[3];
    int axis;
  };
  const Case cases[] = {{{64, 48, 1}, 0}, {{64, 48, 1}, 1}, {{40, 33, 20}, 0}, {{40, 33, 20}, 1}, {{40, 33, 20}, 2}};
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  stardiff::cuda::TridiagCudaStatus* dst = nullptr;
  ASSERT_EQ(cudaMalloc(&dst, sizeof(*dst)), cudaSuccess);
  unsigned seed = 1;
  for (const Case& cs : cases) {
    SCOPED_TRACE(testing::Message() << cs.n[0] << "x" << cs.n[1] << "x" << cs.n[2] << " axis " << cs.axis);
    std::mt19937 gen(seed++);
    Buf a(cs.n, 1, 1, kOrders[0], gen, 0), b(cs.n, 2, 2, kOrders[1], gen, 3), c(cs.n, 1, 3, kOrders[2], gen, 0),
        d(cs.n, 1, 1, kOrders[3], gen, 0), x(cs.n, 2, 1, kOrders[4], gen, 0), xbar(cs.n, 1, 2, kOrders[5], gen, 0),
        abar(cs.n, 0, 1, kOrders[1], gen, 0), bbar(cs.n, 1, 1, kOrders[0], gen, 0),
        cbar(cs.n, 2, 1, kOrders[3], gen, 0), dbar(cs.n, 1, 2, kOrders[2], gen, 0);
    const stardiff::cpu::TridiagBox hbox{{cs.n[0], cs.n[1], cs.n[2]}, cs.axis};
    const stardiff::cuda::TridiagBox dbox{{cs.n[0], cs.n[1], cs.n[2]}, cs.axis};
    // CPU.
    std::vector<double> hw(stardiff::cpu::tridiag_adjoint_work_size(hbox));
    ASSERT_TRUE(stardiff::cpu::tridiag_solve_cpu(hbox, a.hc(), b.hc(), c.hc(), d.hc(), x.h(), hw.data()).ok());
    ASSERT_TRUE(stardiff::cpu::tridiag_adjoint_cpu(hbox, a.hc(), b.hc(), c.hc(), x.hc(), xbar.h(), false, abar.h(),
                                                   bbar.h(), cbar.h(), dbar.h(), hw.data())
                    .ok());
    // GPU on the same inputs (device copies taken before the CPU run).
    double* dw = nullptr;
    ASSERT_EQ(cudaMalloc(&dw, stardiff::cuda::tridiag_adjoint_cuda_work_size(dbox) * sizeof(double)), cudaSuccess);
    stardiff::cuda::tridiag_solve_cuda(dbox, a.dc(), b.dc(), c.dc(), d.dc(), x.d(), dw, dst, stream);
    stardiff::cuda::TridiagCudaStatus st{};
    cudaMemcpyAsync(&st, dst, sizeof(st), cudaMemcpyDeviceToHost, stream);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    EXPECT_EQ(st.bad_lines, 0u);
    EXPECT_EQ(st.first_key, ~0ull);
    stardiff::cuda::tridiag_adjoint_cuda(dbox, a.dc(), b.dc(), c.dc(), x.dc(), xbar.d(), false, abar.d(), bbar.d(),
                                         cbar.d(), dbar.d(), dw, dst, stream);
    cudaMemcpyAsync(&st, dst, sizeof(st), cudaMemcpyDeviceToHost, stream);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    EXPECT_EQ(st.bad_lines, 0u);
    int exact = 0;
    for (const Buf* p : {&x, &xbar, &abar, &bbar, &cbar, &dbar}) {
      const auto g = p->fetch();
      EXPECT_LE(max_rel_diff(g, p->mem), 1e-12);
      exact += g == p->mem;
    }
    std::printf("tridiag cuda n=%lldx%lldx%lld axis=%d arrays_bitwise_equal=%d/6\n", cs.n[0], cs.n[1], cs.n[2],
                cs.axis, exact);
    // A zero pivot: same line and row as the CPU.
    b.mem[b.off + 3 * b.s[0] + 2 * b.s[1] + (cs.n[2] - 1) * b.s[2]] = 0.0;
    cudaMemcpy(b.dev, b.mem.data(), b.mem.size() * sizeof(double), cudaMemcpyHostToDevice);
    const auto hst = stardiff::cpu::tridiag_solve_cpu(hbox, a.hc(), b.hc(), c.hc(), d.hc(), x.h(), hw.data());
    stardiff::cuda::tridiag_solve_cuda(dbox, a.dc(), b.dc(), c.dc(), d.dc(), x.d(), dw, dst, stream);
    cudaMemcpyAsync(&st, dst, sizeof(st), cudaMemcpyDeviceToHost, stream);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    ASSERT_FALSE(hst.ok());
    EXPECT_EQ(st.bad_lines, static_cast<unsigned long long>(hst.bad_lines));
    EXPECT_EQ(st.first_key, static_cast<unsigned long long>(hst.first_line * cs.n[cs.axis] + hst.first_row));
    cudaFree(dw);
  }
  cudaFree(dst);
  cudaStreamDestroy(stream);
}
