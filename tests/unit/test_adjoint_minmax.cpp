// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/unit/test_adjoint_minmax.cpp — MIN/MAX reduction adjoints go to the arg-extremum
// (the lowest point in (k, j, i) order on ties, the earlier loop across loops), bitwise
// equal across tile counts 1/2/3/7, in 1-, 2- and 3-D; finite differences and a
// dot-product test through tied extrema (one-sided, in directions that keep the winner).
#include <gtest/gtest.h>

#include <random>

#include "unit/test_mesh_lowdim_cases.hpp"

using namespace stardiff;
using namespace stardiff::mesh;

namespace {
struct Case {
  std::vector<int> size;
  std::vector<int> lo_pts, hi_pts;
};
// Points are numbered i + nx (j + ny k); the lowest number is the first in (k, j, i) order.
std::array<int, 3> coords(const std::vector<int>& size, int p) {
  const int nx = size[0], ny = size.size() > 1 ? size[1] : 1;
  return {p % nx, (p / nx) % ny, p / (nx * ny)};
}
const Case k2d{{9, 14}, {9 * 9 + 3, 9 * 2 + 7, 9 * 2 + 1, 9 * 13 + 8}, {9 * 4 + 5, 9 * 11 + 2, 9 * 4 + 8}};
const Case k1d{{40}, {31, 7, 19}, {12, 13, 39}};
const Case k3d{{4, 5, 14}, {20 * 9 + 4 * 2 + 3, 20 * 9 + 4 * 1 + 2, 20 * 12}, {20 * 3 + 7, 20 * 3 + 6, 20 * 10 + 1}};

void expect_gradient(const Case& c, const lowdim::MinMaxResult& r, const std::string& what) {
  const int wlo = *std::min_element(c.lo_pts.begin(), c.lo_pts.end());
  const int whi = *std::min_element(c.hi_pts.begin(), c.hi_pts.end());
  EXPECT_EQ(r.lo, 0.25) << what;
  EXPECT_EQ(r.hi, 9.0) << what;
  EXPECT_EQ(r.arg_lo, coords(c.size, wlo)) << what;
  EXPECT_EQ(r.arg_hi, coords(c.size, whi)) << what;
  int n = 1;
  for (int s : c.size) n *= s;
  for (int p = 0; p < n; ++p) {
    const auto x = coords(c.size, p);
    const double u = lowdim::tie_value(n, c.lo_pts, c.hi_pts, p);
    const double g = p == wlo ? 2.0 * u * 1.0 : p == whi ? 2.0 * u * 2.0 : 0.0;
    EXPECT_EQ(r.du(x[0], x[1], x[2]), g) << what << ", point " << p;
  }
}
}  // namespace

TEST(AdjointMinMax, SeedGoesToLowestTiedPointAcrossTiles) {
  SequentialExecutor ex;
  for (const Case* c : {&k1d, &k2d, &k3d}) {
    const auto ref = lowdim::run_minmax(ex, c->size, 1, c->lo_pts, c->hi_pts);
    for (int tiles : {1, 2, 3, 7}) {
      const std::string what = std::to_string(c->size.size()) + "-D, tiles=" + std::to_string(tiles);
      const auto r = lowdim::run_minmax(ex, c->size, tiles, c->lo_pts, c->hi_pts);
      expect_gradient(*c, r, what);
      EXPECT_EQ(r.du.data, ref.du.data) << what;
    }
  }
}

TEST(AdjointMinMax, TieAcrossLoopsGoesToTheEarlierLoop) {
  SequentialExecutor ex;
  for (const Case* c : {&k1d, &k2d, &k3d})
    for (int tiles : {1, 2, 3, 7}) {
      // The minimum is folded by two loops (lower then upper outer half); ties in both.
      const auto r = lowdim::run_minmax(ex, c->size, tiles, c->lo_pts, c->hi_pts, true);
      expect_gradient(*c, r, std::to_string(c->size.size()) + "-D split, tiles=" + std::to_string(tiles));
    }
  // Only the upper half attains the minimum: the second loop gets the seed.
  const auto r = lowdim::run_minmax(ex, k2d.size, 3, {9 * 13 + 8, 9 * 9 + 3}, k2d.hi_pts, true);
  EXPECT_EQ(r.arg_lo, (std::array<int, 3>{3, 9, 0}));
  EXPECT_EQ(r.du(3, 9), 2.0 * lowdim::tie_value(9 * 14, {9 * 13 + 8, 9 * 9 + 3}, k2d.hi_pts, 9 * 9 + 3));
  EXPECT_EQ(r.du(8, 13), 0.0);
}

TEST(AdjointMinMax, FiniteDifferencesAndDotProductThroughTies) {
  SequentialExecutor ex;
  for (const Case* c : {&k1d, &k2d, &k3d}) {
    int n = 1;
    for (int s : c->size) n *= s;
    const int wlo = *std::min_element(c->lo_pts.begin(), c->lo_pts.end());
    const int whi = *std::min_element(c->hi_pts.begin(), c->hi_pts.end());
    auto uval = [&](int p) { return lowdim::tie_value(n, c->lo_pts, c->hi_pts, p); };
    auto J = [&](const std::function<double(int)>& pu, int tiles) {
      const auto r = lowdim::run_minmax(ex, c->size, tiles, c->lo_pts, c->hi_pts, false, pu);
      return r.lo + 2.0 * r.hi;
    };
    // Direction: random, with the winners' moves dominating the other tied points' (so the
    // one-sided derivative is the winner's: MIN falls fastest there, MAX rises fastest).
    std::mt19937 rng(11);
    std::uniform_real_distribution<double> U(-1, 1);
    std::vector<double> d(n);
    for (auto& e : d) e = U(rng);
    d[wlo] = -4.0 / (2.0 * uval(wlo));   // d(u^2) = -4 at the MIN winner (others in [-1, 1])
    d[whi] = 10.0 / (2.0 * uval(whi));   // d(u^2) = +10 at the MAX winner (others in [-6, 6])
    const double h = 1e-7;
    for (int tiles : {1, 2, 3, 7}) {
      const auto g = lowdim::run_minmax(ex, c->size, tiles, c->lo_pts, c->hi_pts);
      double dot = 0;
      for (int p = 0; p < n; ++p) {
        const auto x = coords(c->size, p);
        dot += g.du(x[0], x[1], x[2]) * d[p];
      }
      const double J0 = J(nullptr, tiles);
      const double fd = (J([&](int p) { return h * d[p]; }, tiles) - J0) / h;
      EXPECT_NEAR(dot, fd, 1e-5 * std::fabs(fd)) << c->size.size() << "-D dot-product, tiles=" << tiles;
      // One point at a time: the MIN winner moved towards 0, a tied loser moved away from 0.
      const int loser = c->lo_pts[0] == wlo ? c->lo_pts[1] : c->lo_pts[0];
      const double s_w = uval(wlo) > 0 ? -1.0 : 1.0, s_l = -(uval(loser) > 0 ? -1.0 : 1.0);
      const double fdw = (J([&](int p) { return p == wlo ? h * s_w : 0.0; }, tiles) - J0) / h;
      const double fdl = (J([&](int p) { return p == loser ? h * s_l : 0.0; }, tiles) - J0) / h;
      const auto xw = coords(c->size, wlo), xl = coords(c->size, loser);
      EXPECT_NEAR(g.du(xw[0], xw[1], xw[2]) * s_w, fdw, 1e-5) << "FD at the MIN winner, tiles=" << tiles;
      EXPECT_EQ(g.du(xl[0], xl[1], xl[2]), 0.0);
      EXPECT_NEAR(fdl, 0.0, 1e-12) << "FD at a tied MIN loser, tiles=" << tiles;
    }
  }
}
