// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/unit/test_mesh_lowdim.cpp — low-dimensional dats (DatOptions::axes): celldx(x) and
// celldy(y) read broadcast on a 2-D block give bitwise the full-dat reference; their
// adjoints (summed along the missing axes) against the reference, finite differences and
// a dot-product test; writes over the full block are Errors; a 3-D broadcast read; a dat
// lacking every axis written by one-point loops anywhere, with its adjoint; a dat lacking x
// read at x offsets in a unit-stride loop (its broadcast rows), twice per point.
#include <gtest/gtest.h>

#include <random>

#include "unit/test_mesh_lowdim_cases.hpp"

using namespace stardiff;
using namespace stardiff::mesh;

namespace {
constexpr int NX = 13, NY = 14;
}

TEST(MeshLowdim, ReadsMatchFullReferenceBitwise) {
  SequentialExecutor ex;
  const auto ref = lowdim::run(ex, NX, NY, 1, true, false);
  for (int tiles : {1, 2, 3, 7}) {
    const auto low = lowdim::run(ex, NX, NY, tiles, false, false);
    EXPECT_EQ(low.w.data, ref.w.data) << "tiles=" << tiles;
    EXPECT_EQ(low.J, ref.J) << "tiles=" << tiles;
    const auto low_rec = lowdim::run(ex, NX, NY, tiles, false, true);
    EXPECT_EQ(low_rec.w.data, ref.w.data) << "recorded, tiles=" << tiles;
  }
}

TEST(MeshLowdim, StorageAndViews) {
  SequentialExecutor ex;
  Block b(ex, "g", {6, 8}, 4);
  Dat<double> cx(b, "cx", Halo(1), {.axes = {0}}), cy(b, "cy", Halo(1), {.axes = {1}});
  EXPECT_FALSE(cx.tiled());
  EXPECT_EQ(cx.tiles(), 1);
  EXPECT_TRUE(cy.tiled());
  EXPECT_EQ(cy.tiles(), 4);
  EXPECT_EQ(cx.size(1), 1);
  EXPECT_EQ(cx.d_m(1), 0);  // no halo along a missing axis
  EXPECT_EQ(cy.row_len(), 1);
  EXPECT_EQ(cx.bytes(), 8u * sizeof(double));
  cx.set([](int i, int j, int) { return 10.0 * i + j; });
  cy.set([](int i, int j, int) { return 10.0 * j + i; });
  auto vx = cx.values(), vy = cy.values();
  EXPECT_EQ(vx(-1, 5), -10.0);  // index 0 along y, whatever is asked
  EXPECT_EQ(vx(6, -3), 60.0);
  EXPECT_EQ(vy(4, 8), 80.0);
  EXPECT_EQ(vy(0, -1), -10.0);
}

TEST(MeshLowdim, AdjointMatchesFullReference) {
  SequentialExecutor ex;
  for (int tiles : {1, 3, 7}) {
    const auto low = lowdim::run(ex, NX, NY, tiles, false);
    const auto full = lowdim::run(ex, NX, NY, tiles, true);
    EXPECT_EQ(low.J, full.J);
    EXPECT_EQ(low.du.data, full.du.data) << "tiles=" << tiles;
    for (int i = -1; i <= NX; ++i) {
      double s = 0;
      for (int j = -1; j < NY; ++j) s += full.dcx(i, j);
      EXPECT_NEAR(low.dcx(i), s, 1e-13 * (1 + std::fabs(s))) << "dJ/dcelldx at " << i << ", tiles=" << tiles;
    }
    for (int j = 0; j <= NY; ++j) {
      double s = 0;
      for (int i = 0; i < NX; ++i) s += full.dcy(i, j);
      EXPECT_NEAR(low.dcy(0, j), s, 1e-13 * (1 + std::fabs(s))) << "dJ/dcelldy at " << j << ", tiles=" << tiles;
    }
  }
}

TEST(MeshLowdim, AdjointReproducibleAcrossRunsAndCloseAcrossTiles) {
  SequentialExecutor ex;
  const auto a = lowdim::run(ex, NX, NY, 7, false), b = lowdim::run(ex, NX, NY, 7, false);
  EXPECT_EQ(a.dcx.data, b.dcx.data);
  EXPECT_EQ(a.dcy.data, b.dcy.data);
  const auto c = lowdim::run(ex, NX, NY, 1, false);
  for (std::size_t k = 0; k < a.dcx.data.size(); ++k)
    EXPECT_NEAR(a.dcx.data[k], c.dcx.data[k], 1e-13 * (1 + std::fabs(c.dcx.data[k])));
  for (std::size_t k = 0; k < a.dcy.data.size(); ++k)
    EXPECT_NEAR(a.dcy.data[k], c.dcy.data[k], 1e-13 * (1 + std::fabs(c.dcy.data[k])));
}

TEST(MeshLowdim, FiniteDifferences) {
  SequentialExecutor ex;
  const int tiles = 3;
  const auto g = lowdim::run(ex, NX, NY, tiles, false);
  const double h = 1e-6;
  for (int i0 : {-1, 0, 5, NX - 1, NX}) {
    auto J = [&](double e) {
      return lowdim::run(ex, NX, NY, tiles, false, false, true, [&](int i) { return i == i0 ? e : 0.0; }).J;
    };
    const double fd = (J(h) - J(-h)) / (2 * h);
    EXPECT_NEAR(g.dcx(i0), fd, 1e-6 * (1 + std::fabs(fd))) << "celldx " << i0;
  }
  for (int j0 : {0, 4, 5, NY - 1, NY}) {
    auto J = [&](double e) {
      return lowdim::run(ex, NX, NY, tiles, false, false, true, nullptr, [&](int j) { return j == j0 ? e : 0.0; }).J;
    };
    const double fd = (J(h) - J(-h)) / (2 * h);
    EXPECT_NEAR(g.dcy(0, j0), fd, 1e-6 * (1 + std::fabs(fd))) << "celldy " << j0;
  }
}

TEST(MeshLowdim, DotProductTest) {
  SequentialExecutor ex;
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> U(-1, 1);
  std::vector<double> ddx(NX + 2), ddy(NY + 1), ddu((NX + 2) * (NY + 2));
  for (auto* v : {&ddx, &ddy, &ddu})
    for (auto& e : *v) e = U(rng);
  auto fx = [&](int i) { return ddx[i + 1]; };
  auto fy = [&](int j) { return ddy[j]; };
  auto fu = [&](int i, int j) { return ddu[(i + 1) + (NX + 2) * (j + 1)]; };
  for (int tiles : {1, 7}) {
    const auto g = lowdim::run(ex, NX, NY, tiles, false);
    double dot = 0;
    for (int i = -1; i <= NX; ++i) dot += g.dcx(i) * fx(i);
    for (int j = 0; j <= NY; ++j) dot += g.dcy(0, j) * fy(j);
    for (int j = -1; j <= NY; ++j)
      for (int i = -1; i <= NX; ++i) dot += g.du(i, j) * fu(i, j);
    const double h = 1e-6;
    auto J = [&](double e) {
      return lowdim::run(ex, NX, NY, tiles, false, false, true, [&](int i) { return e * fx(i); },
                         [&](int j) { return e * fy(j); }, [&](int i, int j) { return e * fu(i, j); })
          .J;
    };
    const double fd = (J(h) - J(-h)) / (2 * h);
    EXPECT_NEAR(dot, fd, 1e-7 * std::fabs(fd)) << "tiles=" << tiles;
  }
}

namespace {
struct Fill {
  void operator()(Acc<double> c) const { c(0, 0) = 1.0; }
};
struct Fill3 {
  void operator()(Acc<double> c) const { c(0, 0, 0) = 1.0; }
};
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(MeshLowdim, WritesOverTheFullBlockAreErrors) {
  SequentialExecutor ex;
  Block b(ex, "g", {6, 8}, 2);
  Dat<double> cx(b, "celldx", Halo{}, {.axes = {0}}), cy(b, "celldy", Halo{}, {.axes = {1}});
  const Stencil z = Stencil::zero(2);
  auto msg = error_of([&] { par_loop_passive("fill_dx", b, b.interior(), Fill{}, arg_dat(cx, z, WRITE)); });
  EXPECT_NE(msg.find("fill_dx"), std::string::npos) << msg;
  EXPECT_NE(msg.find("celldx"), std::string::npos) << msg;
  EXPECT_NE(msg.find("lacks dimension 1"), std::string::npos) << msg;
  msg = error_of([&] { par_loop_passive("inc_dy", b, b.interior(), Fill{}, arg_dat(cy, z, INC)); });
  EXPECT_NE(msg.find("inc_dy"), std::string::npos) << msg;
  EXPECT_NE(msg.find("celldy"), std::string::npos) << msg;
  EXPECT_NE(error_of([&] { par_loop_passive("f", b, Range{0, 6, 3, 5}, Fill{}, arg_dat(cx, z, RW)); }), "");
  // Ranges of one index along the missing axis (any index) may write.
  EXPECT_EQ(error_of([&] { par_loop_passive("f", b, Range{0, 6, 0, 1}, Fill{}, arg_dat(cx, z, WRITE)); }), "");
  EXPECT_EQ(error_of([&] { par_loop_passive("f", b, Range{0, 6, 5, 6}, Fill{}, arg_dat(cx, z, RW)); }), "");
  EXPECT_EQ(error_of([&] { par_loop_passive("f", b, Range{0, 1, 0, 8}, Fill{}, arg_dat(cy, z, WRITE)); }), "");
  ex.wait_all();
  EXPECT_EQ(cx.values()(3, 5), 1.0);
  EXPECT_EQ(cy.values()(2, 7), 1.0);
  // Bad options.
  EXPECT_THROW(Dat<double>(b, "bad", Halo{}, {.axes = {2}}), Error);
  EXPECT_THROW(Dat<double>(b, "bad", Halo{}, {.axes = {0, 0}}), Error);
  EXPECT_THROW(Dat<double>(b, "bad", Halo{}, {.size = {6, 8}, .axes = {0}}), Error);
  EXPECT_THROW(Dat<double>(b, "bad", Halo{}, {.axes = {0}, .no_axes = true}), Error);
}

namespace {
// p (no axes) = min(u(i, j) at the one point of the range, 2 p); w = p * u everywhere.
struct PointMin {
  static constexpr unsigned adjoint_reads = 0b11;
  void operator()(Acc<const double> u, Acc<double> p) const { p(0, 0) = std::min(u(0, 0), 2.0 * p(0, 0)); }
  void adjoint(Acc<const double> u, Acc<double> u_a1s, Acc<const double> p, Acc<double> p_a1s) const {
    const double g = p_a1s(0, 0);
    if (u(0, 0) <= 2.0 * p(0, 0)) {
      u_a1s(0, 0) += g;
      p_a1s(0, 0) = 0.0;
    } else {
      p_a1s(0, 0) = 2.0 * g;
    }
  }
};
struct ScaleBy {
  static constexpr unsigned adjoint_reads = 0b11;
  void operator()(Acc<const double> u, Acc<const double> p, Acc<double> w) const { w(0, 0) = p(0, 0) * u(0, 0); }
  void adjoint(Acc<const double> u, Acc<double> u_a1s, Acc<const double> p, Acc<double> p_a1s, Acc<const double>,
               Acc<double> w_a1s) const {
    u_a1s(0, 0) += p(0, 0) * w_a1s(0, 0);
    p_a1s(0, 0) += u(0, 0) * w_a1s(0, 0);
  }
};
struct SumW {
  void operator()(Acc<const double> w, double* s) const { *s += w(0, 0); }
  void adjoint(Acc<const double>, Acc<double> w_a1s, const double*, const double* s_a1s) const {
    w_a1s(0, 0) += *s_a1s;
  }
};
}  // namespace

// A dat lacking every axis, written by one-point loops at points of different tiles (RW:
// the tape saves and restores its one element), read broadcast: the gradient of
// J = sum over two rounds of (p * u) against the hand derivative, for several tilings.
TEST(MeshLowdim, PointDatWrittenAtOnePointAnywhere) {
  SequentialExecutor ex;
  for (int tiles : {1, 2, 4}) {
    Block b(ex, "g", {6, 8}, tiles);
    Dat<double> u(b, "u"), w(b, "w"), p(b, "p", Halo{}, {.no_axes = true});
    EXPECT_EQ(p.tiles(), 1);
    EXPECT_EQ(p.bytes(), sizeof(double));
    Reduction<double> J(b, ReduceOp::SUM, "J");
    u.set([](int i, int j, int) { return 1.0 + 0.1 * i + 0.01 * j; });
    p.set([](int, int, int) { return 0.6; });
    Tape tape("point");
    tape.start();
    J.reset();
    // round 1 at (4, 6): u = 1.46 > 2 p = 1.2 -> p = 1.2; round 2 at (1, 1): u = 1.11 < 2.4 -> p = 1.11
    for (auto [i, j] : {std::pair{4, 6}, std::pair{1, 1}}) {
      par_loop("point_min", b, Range{i, i + 1, j, j + 1}, PointMin{}, arg_dat(u, READ), arg_dat(p, RW));
      par_loop("scale", b, b.interior(), ScaleBy{}, arg_dat(u, READ), arg_dat(p, READ), arg_dat(w, WRITE));
      par_loop("sum", b, b.interior(), SumW{}, arg_dat(w, READ), arg_reduce(J));
    }
    tape.stop();
    EXPECT_EQ(p.values()(3, 2), 1.0 + 0.1 * 1 + 0.01 * 1) << "tiles=" << tiles;
    double su = 0;
    for (int j = 0; j < 8; ++j)
      for (int i = 0; i < 6; ++i) su += 1.0 + 0.1 * i + 0.01 * j;
    EXPECT_NEAR(J.value(), 1.2 * su + 1.11 * su, 1e-12);
    tape.seed(J, 1.0);
    tape.reverse();
    auto g = u.adjoint();
    // dJ/du(i,j) = p1 + p2 (every point), + su at (1,1) (p2 = u(1,1)); p1 = 2 p0 does not depend on u.
    for (int j = 0; j < 8; ++j)
      for (int i = 0; i < 6; ++i)
        EXPECT_NEAR(g(i, j), 1.2 + 1.11 + (i == 1 && j == 1 ? su : 0.0), 1e-12) << i << "," << j << " tiles=" << tiles;
    EXPECT_NEAR(p.adjoint()(0, 0), 2.0 * su, 1e-12) << "tiles=" << tiles;  // dJ/dp0 through p1 = 2 p0
  }
}

namespace {
// 3-D: w = a(0,0,0) + 2 a(0,1,0) a(1,0,-1) with a lacking y (x and z only).
struct Mix3 {
  void operator()(Acc<const double> a, Acc<double> w) const { w(0, 0, 0) = a(0, 0, 0) + 2.0 * a(0, 1, 0) * a(1, 0, -1); }
};
DatView<double> run3(Executor& ex, bool full, int tiles) {
  Block b(ex, "box", {5, 4, 9}, tiles);
  Dat<double> a(b, "a", Halo({0, 0, 1}, {1, 1, 0}), full ? DatOptions{} : DatOptions{.axes = {0, 2}});
  Dat<double> w(b, "w");
  a.set([](int i, int, int k) { return 0.5 + 0.1 * i - 0.07 * k * k; });
  Stencil s(3, {0, 0, 0, 0, 1, 0, 1, 0, -1});
  par_loop_passive("mix3", b, b.interior(), Mix3{}, arg_dat(a, s, READ), arg_dat(w, Stencil::zero(3), WRITE));
  ex.wait_all();
  return w.values();
}
}  // namespace

TEST(MeshLowdim, ThreeDimensionalBroadcastMatchesFull) {
  SequentialExecutor ex;
  const auto ref = run3(ex, true, 1);
  for (int tiles : {1, 3}) EXPECT_EQ(run3(ex, false, tiles).data, ref.data) << "tiles=" << tiles;
  Block b(ex, "box", {5, 4, 9}, 3);
  Dat<double> a(b, "a", Halo{}, {.axes = {0, 1}});
  EXPECT_EQ(a.tiles(), 1);
  EXPECT_EQ(error_of([&] { par_loop_passive("f", b, Range{0, 5, 0, 4, 0, 1}, Fill3{}, arg_dat(a, Stencil::zero(3), WRITE)); }), "");
}

namespace {
// w = u cy(1,0) + u(0,1) cy(-1,1) cy(0,0): a dat lacking x read at x offsets (the same
// element as offset 0) and incremented twice per point in its adjoint.
struct XOffsets {
  static constexpr unsigned adjoint_reads = 0b11;
  void operator()(Acc<const double> u, Acc<const double> cy, Acc<double> w) const {
    w(0, 0) = u(0, 0) * cy(1, 0) + u(0, 1) * cy(-1, 1) * cy(0, 0);
  }
  void adjoint(Acc<const double> u, Acc<double> u_a1s, Acc<const double> cy, Acc<double> cy_a1s,
               Acc<const double>, Acc<double> w_a1s) const {
    const double wb = w_a1s(0, 0);
    u_a1s(0, 0) += cy(1, 0) * wb;
    u_a1s(0, 1) += cy(-1, 1) * cy(0, 0) * wb;
    cy_a1s(1, 0) += u(0, 0) * wb;
    cy_a1s(-1, 1) += u(0, 1) * cy(0, 0) * wb;
    cy_a1s(0, 0) += u(0, 1) * cy(-1, 1) * wb;
  }
};
struct XOffsetsResult {
  DatView<double> w, du, dcy;
};
XOffsetsResult run_xoffsets(int tiles, bool full) {
  SequentialExecutor ex;
  Block b(ex, "grid", {NX, NY}, tiles);
  Dat<double> u(b, "u", Halo{1}), w(b, "w", Halo{0});
  Dat<double> cy(b, "celldy", Halo({1, 0, 0}, {1, 1, 0}), full ? DatOptions{} : DatOptions{.axes = {1}});
  u.set([](int i, int j, int) { return lowdim::u0(i, j); });
  cy.set([](int, int j, int) { return lowdim::dy0(j); });
  Tape tape("xoffsets");
  tape.start();
  par_loop("xoffsets", b, b.interior(), XOffsets{}, arg_dat(u, Stencil(2, {0, 0, 0, 1}, "u_pts"), READ),
           arg_dat(cy, Stencil(2, {1, 0, -1, 1, 0, 0}, "cy_pts"), READ), arg_dat(w, Stencil::zero(2), WRITE));
  tape.stop();
  tape.seed(w, [&](int i, int j, int, int) { return 0.5 + 0.1 * i - 0.05 * j; });
  tape.reverse();
  ex.wait_all();
  return {w.values(), u.adjoint(), cy.adjoint()};
}
}  // namespace

TEST(MeshLowdim, XOffsetsOnMissingAxisInUnitLoop) {
  const auto full = run_xoffsets(1, true);
  for (int tiles : {1, 3}) {
    const auto low = run_xoffsets(tiles, false);
    EXPECT_EQ(low.w.data, full.w.data) << "tiles=" << tiles;
    EXPECT_EQ(low.du.data, full.du.data) << "tiles=" << tiles;
    for (int j = 0; j <= NY; ++j) {
      double s = 0;
      for (int i = -1; i <= NX; ++i) s += full.dcy(i, j);
      EXPECT_NEAR(low.dcy(0, j), s, 1e-13 * (1 + std::fabs(s))) << "dJ/dcelldy at " << j << ", tiles=" << tiles;
      EXPECT_NE(s, 0.0);
    }
  }
}
