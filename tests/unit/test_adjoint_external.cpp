// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/unit/test_adjoint_external.cpp — external functions (stardiff/adjoint/external.hpp) on the
// sequential executor: tridiag_solve along every axis of 2-D/3-D dats solves each line (residual),
// is independent of the tiling (bitwise), passes a dot-product test and central finite differences
// for a, b, c, d, in place and with recomputation (bitwise equal to stored outputs); SparseSolve
// solves, factorizes once over many steps, passes finite differences on its values and b;
// gbl/reduce/scalar arguments reach both callables; adjoint_gets_inputs shows the adjoint the
// restored inputs; undeclared access raises an Error naming both.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "unit/test_adjoint_external_cases.hpp"

using namespace stardiff;
using namespace stardiff::ext_cases;

namespace {

struct Shape {
  std::vector<int> size;
  int axis;
};
const std::vector<Shape> kShapes = {{{9, 7}, 0}, {{9, 7}, 1}, {{6, 5, 7}, 0}, {{6, 5, 7}, 1}, {{6, 5, 7}, 2}};

double coef(char w, int i, int j, int k) {
  switch (w) {
    case 'a': return 0.4 * std::sin(i + 2.0 * j + 3.0 * k);
    case 'b': return 3.0 + std::cos(0.5 * i - j + k);
    case 'c': return -0.5 * std::cos(i * j + 0.3 * k);
    default: return std::sin(0.3 * i) + 0.2 * j - 0.1 * k;
  }
}

}  // namespace

TEST(AdjointExternal, TridiagSolvesEveryLine) {
  for (const Shape& s : kShapes) {
    SCOPED_TRACE(::testing::Message() << "dims " << s.size.size() << " axis " << s.axis);
    SequentialExecutor ex;
    TriResult r = run_tridiag(ex, s.size, 3, s.axis, false, false, {}, false);
    const int nk = s.size.size() > 2 ? s.size[2] : 1;
    const int n = s.size[s.axis];
    double worst = 0;
    for (int k = 0; k < nk; ++k)
      for (int j = 0; j < s.size[1]; ++j)
        for (int i = 0; i < s.size[0]; ++i) {
          int ix[3] = {i, j, k};
          const int row = ix[s.axis];
          auto at = [&](int off) {
            int q[3] = {i, j, k};
            q[s.axis] += off;
            return r.x(q[0], q[1], q[2]);
          };
          double lhs = coef('b', i, j, k) * at(0);
          if (row > 0) lhs += coef('a', i, j, k) * at(-1);
          if (row < n - 1) lhs += coef('c', i, j, k) * at(1);
          worst = std::max(worst, std::fabs(lhs - coef('d', i, j, k)));
        }
    EXPECT_LT(worst, 1e-13);
  }
}

TEST(AdjointExternal, TridiagBitwiseAcrossTilingsInPlaceAndRecompute) {
  for (const Shape& s : kShapes) {
    SCOPED_TRACE(::testing::Message() << "dims " << s.size.size() << " axis " << s.axis);
    SequentialExecutor ex;
    TriResult one = run_tridiag(ex, s.size, 1, s.axis, false, false);
    TriResult three = run_tridiag(ex, s.size, 3, s.axis, false, false);
    TriResult rec = run_tridiag(ex, s.size, 3, s.axis, false, true);
    TriResult inpl = run_tridiag(ex, s.size, 2, s.axis, true, false);
    TriResult inrec = run_tridiag(ex, s.size, 2, s.axis, true, true);
    for (const TriResult* o : {&three, &rec, &inpl, &inrec}) {
      EXPECT_EQ(one.J, o->J);
      EXPECT_EQ(one.da.data, o->da.data);
      EXPECT_EQ(one.db.data, o->db.data);
      EXPECT_EQ(one.dc.data, o->dc.data);
    }
    for (const TriResult* o : {&three, &rec}) EXPECT_EQ(one.dd.data, o->dd.data);
    // In place: d's adjoint is the same g (interior), written instead of added.
    const int nk = s.size.size() > 2 ? s.size[2] : 1;
    for (int k = 0; k < nk; ++k)
      for (int j = 0; j < s.size[1]; ++j)
        for (int i = 0; i < s.size[0]; ++i) EXPECT_EQ(one.dd(i, j, k), inpl.dd(i, j, k));
  }
}

TEST(AdjointExternal, TridiagFiniteDifferences) {
  for (const Shape& s : kShapes) {
    SCOPED_TRACE(::testing::Message() << "dims " << s.size.size() << " axis " << s.axis);
    SequentialExecutor ex;
    TriResult r = run_tridiag(ex, s.size, 2, s.axis, false, false);
    const int nk = s.size.size() > 2 ? s.size[2] : 1;
    const int pts[3][3] = {{0, 0, 0}, {2, 3, nk - 1}, {s.size[0] - 1, s.size[1] - 1, nk / 2}};
    for (const auto& p : pts)
      for (char w : {'a', 'b', 'c', 'd'}) {
        const double h = 1e-6;
        const double jp = run_tridiag(ex, s.size, 2, s.axis, false, false, {w, p[0], p[1], p[2], h}, false).J;
        const double jm = run_tridiag(ex, s.size, 2, s.axis, false, false, {w, p[0], p[1], p[2], -h}, false).J;
        const DatView<double>& g = w == 'a' ? r.da : w == 'b' ? r.db : w == 'c' ? r.dc : r.dd;
        const double fd = (jp - jm) / (2 * h), ad = g(p[0], p[1], p[2]);
        EXPECT_NEAR(ad, fd, 1e-7 * (1 + std::fabs(fd))) << w << " at " << p[0] << "," << p[1] << "," << p[2];
      }
  }
}

TEST(AdjointExternal, TridiagDotProductTest) {
  for (const Shape& s : kShapes) {
    SCOPED_TRACE(::testing::Message() << "dims " << s.size.size() << " axis " << s.axis);
    SequentialExecutor ex;
    mesh::Block block(ex, "tri", s.size, 3);
    Dat<double> a(block, "a"), b(block, "b"), c(block, "c"), d(block, "d"), x(block, "x");
    a.set([](int i, int j, int k) { return coef('a', i, j, k); });
    b.set([](int i, int j, int k) { return coef('b', i, j, k); });
    c.set([](int i, int j, int k) { return coef('c', i, j, k); });
    const int nx = s.size[0], ny = s.size[1], nk = s.size.size() > 2 ? s.size[2] : 1;
    const std::size_t n = static_cast<std::size_t>(nx) * ny * nk;
    auto idx = [&](int i, int j, int k) { return static_cast<std::size_t>(i + nx * (j + ny * k)); };
    auto Jv = [&](const std::vector<double>& v) {
      d.set([&](int i, int j, int k) { return v[idx(i, j, k)]; });
      tridiag_solve("dot", s.axis, a, b, c, d, x);
      auto xv = x.values();
      std::vector<double> y(n);
      for (int k = 0; k < nk; ++k)
        for (int j = 0; j < ny; ++j)
          for (int i = 0; i < nx; ++i) y[idx(i, j, k)] = xv(i, j, k);
      return y;
    };
    auto JTw = [&](const std::vector<double>& w) {
      Tape tape("dot");
      tape.start();
      tridiag_solve("dot", s.axis, a, b, c, d, x);
      tape.stop();
      tape.seed(x, [&](int i, int j, int k, int) { return w[idx(i, j, k)]; });
      tape.reverse();
      auto dv = d.adjoint();
      std::vector<double> y(n);
      for (int k = 0; k < nk; ++k)
        for (int j = 0; j < ny; ++j)
          for (int i = 0; i < nx; ++i) y[idx(i, j, k)] = dv(i, j, k);
      return y;
    };
    DotProductTest t = dot_product_test(Jv, JTw, n, n, 7);
    EXPECT_LT(t.rel_diff, 1e-13);
  }
}

TEST(AdjointExternal, TridiagBadPivotAndBadAxis) {
  SequentialExecutor ex;
  mesh::Block block(ex, "tri", {5, 4}, 2);
  Dat<double> a(block, "a"), b(block, "b"), c(block, "c"), d(block, "d"), x(block, "x");
  for (auto* p : {&a, &b, &c, &d}) p->set([](int, int, int) { return 0.0; });
  EXPECT_THROW(tridiag_solve("bad", 2, a, b, c, d, x), Error);
  tridiag_solve("zero_pivot", 0, a, b, c, d, x);
  try {
    ex.wait_all();
    ADD_FAILURE() << "no error for a zero pivot";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("zero_pivot"), std::string::npos) << e.what();
  }
}

TEST(AdjointExternal, SparseSolveFactorsOnceAndMatchesFiniteDifferences) {
  SequentialExecutor ex;
  const int n = 7, steps = 3;
  for (bool inplace : {false, true}) {
    SCOPED_TRACE(inplace ? "in place" : "out of place");
    SparseResult r = run_sparse(ex, n, 3, steps, inplace, false);
    EXPECT_EQ(r.factorizations, 1);  // analysis and factors reused across steps and by the adjoint
    SparseResult rc = run_sparse(ex, n, 2, steps, inplace, true);
    EXPECT_EQ(r.J, rc.J);
    EXPECT_EQ(r.dvals.data, rc.dvals.data);
    EXPECT_EQ(r.db.data, rc.db.data);
    const int probes[4][3] = {{0, 0, 0}, {3, 4, 1}, {2, 5, 2}, {6, 6, 0}};
    for (const auto& p : probes) {
      const double h = 1e-6;
      const double jp = run_sparse(ex, n, 3, steps, inplace, false, h, p[0], p[1], p[2]).J;
      const double jm = run_sparse(ex, n, 3, steps, inplace, false, -h, p[0], p[1], p[2]).J;
      const double fd = (jp - jm) / (2 * h);
      EXPECT_NEAR(r.dvals.data[r.dvals.index(p[0], p[1], 0, p[2])], fd, 1e-7 * (1 + std::fabs(fd)))
          << p[0] << "," << p[1] << " c" << p[2];
    }
  }
}

TEST(AdjointExternal, SparseSolveResidual) {
  SequentialExecutor ex;
  const int n = 6;
  SparseResult r = run_sparse(ex, n, 2, 1, false, false);
  double worst = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const double dg = 4.5 + 0.1 * std::sin(i + j);
      auto west = [&](int ii, int jj) { return ii > 0 ? -1.0 - 0.05 * jj : 0.0; };
      auto south = [&](int ii, int jj) { return jj > 0 ? -1.0 + 0.03 * ii : 0.0; };
      double y = dg * r.x(i, j);
      if (i > 0) y += west(i, j) * r.x(i - 1, j);
      if (i + 1 < n) y += west(i + 1, j) * r.x(i + 1, j);
      if (j > 0) y += south(i, j) * r.x(i, j - 1);
      if (j + 1 < n) y += south(i, j + 1) * r.x(i, j + 1);
      worst = std::max(worst, std::fabs(y - (std::sin(0.4 * i + 0.9 * j) + 0.5)));
    }
  EXPECT_LT(worst, 1e-13);
}


TEST(AdjointExternal, GblReduceScalarArguments) {
  SequentialExecutor ex;
  mesh::Block block(ex, "blk", {5, 6}, 3);
  Dat<double> u(block, "u"), v(block, "v");
  mesh::Reduction<double> r(block, mesh::ReduceOp::SUM, "r");
  mesh::Scalar<double> s(block, "s", 1.5);
  u.set([](int i, int j, int) { return 0.1 * i - 0.2 * j + 1; });
  v.set([](int, int, int) { return 0.0; });
  auto primal = [](const ExternalContext& ctx, ExtDat<const double> u, ExtDat<double> v, const double* g, double* r,
                   const double* s) {
    double acc = 0;
    u.for_interior([&](const double& e, long long) { acc += e * e; });
    *r += *s * *g * acc;
    for (int t = ctx.tile_lo; t < ctx.tile_hi; ++t)
      for (int j = v.row_lo(t); j < v.row_hi(t); ++j)
        for (int i = 0; i < 5; ++i) v(i, j) = 2.0 * u(i, j);
  };
  auto adjoint = [](const ExternalContext& ctx, ExtDat<const double> u, ExtDat<double> ua, ExtDat<const double>,
                    ExtDat<double> va, const double* g, const double*, const double* ra, const double* s,
                    double* sa) {
    double acc = 0;
    u.for_interior([&](const double& e, long long) { acc += e * e; });
    *sa += *ra * *g * acc;
    for (int t = ctx.tile_lo; t < ctx.tile_hi; ++t)
      for (int j = u.row_lo(t); j < u.row_hi(t); ++j)
        for (int i = 0; i < 5; ++i) {
          ua(i, j) += *ra * *s * *g * 2.0 * u(i, j) + 2.0 * va(i, j);
          va(i, j) = 0.0;
        }
  };
  Tape tape("ext");
  tape.start();
  execute_external("sumsq", primal, adjoint, mesh::arg_dat(u, mesh::READ), mesh::arg_dat(v, mesh::WRITE),
                   mesh::arg_gbl(2.0), mesh::arg_reduce(r), mesh::arg_scalar(s));
  tape.stop();
  double sum = 0;
  for (int j = 0; j < 6; ++j)
    for (int i = 0; i < 5; ++i) sum += std::pow(0.1 * i - 0.2 * j + 1, 2);
  EXPECT_NEAR(r.value(), 1.5 * 2.0 * sum, 1e-12);
  EXPECT_DOUBLE_EQ(v.values()(4, 5), 2.0 * (0.4 - 1.0 + 1));
  tape.seed(r, 1.0);
  tape.seed(v, [](int i, int j, int, int) { return i == 1 && j == 2 ? 1.0 : 0.0; });
  tape.reverse();
  EXPECT_NEAR(s.adjoint(), 2.0 * sum, 1e-12);
  auto du = u.adjoint();
  EXPECT_NEAR(du(1, 2), 1.5 * 2.0 * 2.0 * (0.1 - 0.4 + 1) + 2.0, 1e-12);
  EXPECT_NEAR(du(3, 0), 1.5 * 2.0 * 2.0 * (0.3 + 1), 1e-12);
  EXPECT_EQ(v.adjoint()(1, 2), 0.0);
}

// ExternalOptions::adjoint_gets_inputs: the adjoint of a recomputing external sees its RW dat as it
// was before the call (restored by the tape; no re-run of the primal) — two calls u <- u^2, so
// d u(2) / d u(0) = 4 u0^3 only if each adjoint reads its own input (the output would give
// other values).
TEST(AdjointExternal, AdjointGetsInputs) {
  SequentialExecutor ex;
  mesh::Block block(ex, "blk", {5, 6}, 3);
  Dat<double> u(block, "u");
  auto u0 = [](int i, int j) { return 1.0 + 0.1 * i - 0.05 * j; };
  u.set([&](int i, int j, int) { return u0(i, j); });
  auto primal = [](const ExternalContext& ctx, ExtDat<double> u) {
    for (int t = ctx.tile_lo; t < ctx.tile_hi; ++t)
      for (int j = std::max(u.row_lo(t), 0); j < std::min(u.row_hi(t), 6); ++j)
        for (int i = 0; i < 5; ++i) u(i, j) = u(i, j) * u(i, j);
  };
  auto adjoint = [](const ExternalContext& ctx, ExtDat<const double> u, ExtDat<double> ua) {
    for (int t = ctx.tile_lo; t < ctx.tile_hi; ++t)
      for (int j = std::max(u.row_lo(t), 0); j < std::min(u.row_hi(t), 6); ++j)
        for (int i = 0; i < 5; ++i) ua(i, j) = 2.0 * u(i, j) * ua(i, j);
  };
  ExternalOptions o;
  o.adjoint_gets_inputs = true;
  Tape tape("ext");
  tape.start();
  for (int n = 0; n < 2; ++n) execute_external_recompute("square", o, primal, adjoint, mesh::arg_dat(u, mesh::RW));
  tape.stop();
  EXPECT_NEAR(u.values()(4, 5), std::pow(u0(4, 5), 4), 1e-12);
  tape.seed(u, [](int, int, int, int) { return 1.0; });
  tape.reverse();
  auto du = u.adjoint();
  for (int j = 0; j < 6; ++j)
    for (int i = 0; i < 5; ++i) EXPECT_NEAR(du(i, j), 4.0 * std::pow(u0(i, j), 3), 1e-12) << i << " " << j;
}

TEST(AdjointExternal, UndeclaredAccessNamesBoth) {
  SequentialExecutor ex;
  mesh::Block block(ex, "blk", {4, 4}, 2);
  Dat<double> u(block, "u"), hidden(block, "hidden");
  u.set([](int, int, int) { return 1.0; });
  hidden.set([](int, int, int) { return 2.0; });
  struct Sneaky {
    Dat<double>* h;
    void operator()(const ExternalContext&, ExtDat<double>) const { (void)h->values(); }
  };
  struct NoAdjoint {
    void operator()(const ExternalContext&, ExtDat<const double>, ExtDat<double>) const {}
  };
  execute_external("sneaky", Sneaky{&hidden}, NoAdjoint{}, mesh::arg_dat(u, mesh::RW));
  try {
    ex.wait_all();
    ADD_FAILURE() << "undeclared access not detected";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("sneaky"), std::string::npos) << m;
    EXPECT_NE(m.find("hidden"), std::string::npos) << m;
  }
  struct Looper {
    Dat<double>* h;
    void operator()(const ExternalContext&, ExtDat<double>) const {
      mesh::par_loop_passive("inner", h->block(), h->block().interior(), Zero{}, mesh::arg_dat(*h, mesh::WRITE));
    }
    struct Zero {
      void operator()(mesh::Acc<double> a) const { a(0, 0) = 0; }
    };
  };
  execute_external("looper", Looper{&hidden}, NoAdjoint{}, mesh::arg_dat(u, mesh::RW));
  try {
    ex.wait_all();
    ADD_FAILURE() << "par_loop inside an external function not detected";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("looper"), std::string::npos) << m;
    EXPECT_NE(m.find("inner"), std::string::npos) << m;
  }
  // Out of the task again: host access works.
  EXPECT_EQ(hidden.values()(1, 1), 2.0);
}

TEST(AdjointExternal, RejectsBadArguments) {
  SequentialExecutor ex;
  mesh::Block b1(ex, "b1", {4, 4}, 1), b2(ex, "b2", {4, 4}, 1);
  Dat<double> u(b1, "u"), w(b2, "w");
  auto p = [](const ExternalContext&, ExtDat<const double>, ExtDat<double>) {};
  auto q = [](const ExternalContext&, ExtDat<const double>, ExtDat<double>, ExtDat<const double>, ExtDat<double>) {};
  EXPECT_THROW(execute_external("two_blocks", p, q, mesh::arg_dat(u, mesh::READ), mesh::arg_dat(w, mesh::WRITE)),
               Error);
  EXPECT_THROW(execute_external("aliased", p, q, mesh::arg_dat(u, mesh::READ), mesh::arg_dat(u, mesh::WRITE)), Error);
}

namespace {
// Holds recorded nodes without a tape (to call submit_primal / submit_adjoint by hand).
struct Capture final : mesh::Recorder {
  std::vector<std::unique_ptr<mesh::RecordedLoop>> nodes;
  std::string nm = "capture";
  void before_loop(mesh::RecordedLoop&) override {}
  void after_loop(std::unique_ptr<mesh::RecordedLoop> l) override { nodes.push_back(std::move(l)); }
  const std::string& name() const override { return nm; }
  bool awaiting_reverse() const override { return false; }
  void forget(const void*, const std::string&) override {}
};
}  // namespace

TEST(AdjointExternal, SubmitPrimalRecomputesTheCall) {
  for (bool recompute : {false, true}) {
    SequentialExecutor ex;
    mesh::Block block(ex, "tri", {8, 6}, 2);
    Dat<double> a(block, "a"), b(block, "b"), c(block, "c"), d(block, "d"), x(block, "x");
    a.set([](int i, int j, int k) { return coef('a', i, j, k); });
    b.set([](int i, int j, int k) { return coef('b', i, j, k); });
    c.set([](int i, int j, int k) { return coef('c', i, j, k); });
    d.set([](int i, int j, int k) { return coef('d', i, j, k); });
    Capture cap;
    mesh::set_active_recorder(&cap);
    tridiag_solve("tri", 1, a, b, c, d, x, recompute);
    mesh::set_active_recorder(nullptr);
    ASSERT_EQ(cap.nodes.size(), 1u);
    EXPECT_EQ(cap.nodes[0]->name, "tri");
    EXPECT_EQ(cap.nodes[0]->args.size(), 5u);
    const auto first = x.values();
    x.set([](int, int, int) { return 0.0; });
    cap.nodes[0]->submit_primal();
    EXPECT_EQ(x.values().data, first.data);
  }
}
