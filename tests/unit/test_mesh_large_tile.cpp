// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/unit/test_mesh_large_tile.cpp — a tile large enough for streaming stores
// (>= 8 MiB per output, see stream_worthwhile; the stores are switched on for the test)
// gives the values of a direct host evaluation of the same Jacobi sweep (to 1e-15,
// allowing FMA contraction), halo rows untouched, and bitwise the values of the same loop
// with plain stores.
#include <gtest/gtest.h>

#include <cmath>

#include "poisson_problem.hpp"

using namespace stardiff;

TEST(MeshLargeTile, StreamedWritesMatchHostSweep) {
  const int nx = 1030, ny = 1031;  // odd sizes: unaligned row starts and tails
  int lo[3] = {0, 0, 0}, hi[3] = {nx, ny, 1};
  const bool stream0 = mesh::stream_stores();
  mesh::set_stream_stores(true);
  ASSERT_TRUE(mesh::detail::stream_worthwhile(lo, hi));
  SequentialExecutor ex;
  poisson::Problem p(ex, nx, ny, 1);
  p.setup();
  p.u.set([](int i, int j, int) { return std::sin(0.01 * i) + std::cos(0.02 * j); });
  auto u = p.u.values(), f = p.f.values(), before = p.u2.values();
  const double dx2 = 1e-4, dy2 = 1e-4, inv = 1.0 / (2 * (dx2 + dy2));
  mesh::par_loop_passive("jacobi", p.block, p.block.interior(), poisson::JacobiKernel{dx2, dy2, inv},
                         mesh::arg_dat(p.u, p.five, mesh::READ), mesh::arg_dat(p.f, p.zero, mesh::READ),
                         mesh::arg_dat(p.u2, p.zero, mesh::WRITE));
  ex.wait_all();
  auto u2 = p.u2.values();
  mesh::set_stream_stores(false);
  EXPECT_FALSE(mesh::detail::stream_worthwhile(lo, hi));
  p.u2.set([](int, int, int) { return -1.0; });
  mesh::par_loop_passive("jacobi", p.block, p.block.interior(), poisson::JacobiKernel{dx2, dy2, inv},
                         mesh::arg_dat(p.u, p.five, mesh::READ), mesh::arg_dat(p.f, p.zero, mesh::READ),
                         mesh::arg_dat(p.u2, p.zero, mesh::WRITE));
  ex.wait_all();
  mesh::set_stream_stores(stream0);
  auto plain = p.u2.values();
  std::size_t differ = 0;
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) differ += plain(i, j) != u2(i, j);
  EXPECT_EQ(differ, 0u);
  std::size_t bad = 0;
  for (int j = -1; j <= ny; ++j)
    for (int i = -1; i <= nx; ++i) {
      const bool in = i >= 0 && i < nx && j >= 0 && j < ny;
      const double want = in ? ((u(i - 1, j) + u(i + 1, j)) * dy2 + (u(i, j - 1) + u(i, j + 1)) * dx2 -
                                f(i, j) * dx2 * dy2) * inv
                             : before(i, j);
      bad += in ? std::fabs(u2(i, j) - want) > 1e-15 * std::fabs(want) : u2(i, j) != want;
    }
  EXPECT_EQ(bad, 0u);
}
