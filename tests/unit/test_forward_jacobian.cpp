// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/unit/test_forward_jacobian.cpp — SparseJacobian on the 2-D Bratu residual (with
// convection) under the sequential executor: CSC values equal the analytic Jacobian to
// 1e-12 relative for chunk widths 1..64 and several block counts, F from the dual sweep
// equals the double residual bitwise, repeated calls with new x, compressed() matches
// decompress(), a chunk skips rows whose partials are all structurally zero, and wrong
// sizes / bad patterns / invalid colourings throw stardiff::Error. RowLocal mode: the
// same values (bitwise equal to Colored), one pass per W non-zeros of a row.
// verify_pattern: a residual reading x outside its pattern (which corrupts the Colored
// entry of the same colour, and is dropped by RowLocal) is named by its first row and
// column; a residual that keeps to its pattern passes.
#include <gtest/gtest.h>

#include <cmath>

#include "support/forward/bratu_pattern.hpp"
#include "support/forward/leaky_residual.hpp"
#include "stardiff/forward.hpp"
#include "stardiff/runtime/error.hpp"

using namespace stardiff;
using namespace stardiff::forward;
using test_problems::BratuResidual;
using test_problems::bratu_jacobian;
using test_problems::bratu_pattern;
using test_problems::bratu_state;
using test_problems::LeakyTridiag;
using test_problems::tridiagonal_jacobian;
using test_problems::tridiagonal_pattern;

namespace {

double max_rel_err(const std::vector<double>& a, const std::vector<double>& b) {
  double err = 0, scale = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    err = std::max(err, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(b[i]));
  }
  return err / scale;
}

template <int W>
void check_width(std::int32_t blocks, JacobianMode mode = JacobianMode::Colored) {
  const BratuResidual res{23, 17, 2.5, 3.0};
  const auto p = bratu_pattern(res.nx, res.ny);
  SparseJacobian<BratuResidual, W> jac(p, res, {.order = ColorOrder::Best, .row_blocks = blocks, .mode = mode});
  EXPECT_EQ(jac.mode(), mode);
  if (mode == JacobianMode::Colored) {
    EXPECT_EQ(jac.num_chunks(), (jac.num_colors() + W - 1) / W);
  } else {
    EXPECT_EQ(jac.num_chunks(), (5 + W - 1) / W);  // passes of the longest row (5 non-zeros)
    std::int64_t passes = 0;
    for (std::int32_t i = 0; i < p.n_rows; ++i) {
      const std::int32_t nz = (i % res.nx > 0) + (i % res.nx + 1 < res.nx) + (i / res.nx > 0) + (i / res.nx + 1 < res.ny) + 1;
      passes += (nz + W - 1) / W;
    }
    EXPECT_EQ(jac.plan().evaluated_rows, passes);
  }
  EXPECT_GE(jac.num_colors(), 5);
  for (unsigned seed : {1u, 2u}) {  // a second x reuses the worker scratch
    const auto x = bratu_state(p.n_cols, seed);
    std::vector<double> vals(p.nnz(), -1.0), f(p.n_rows), f2(p.n_rows);
    jac.jacobian(x, vals, f);
    const auto ref = bratu_jacobian(res, p, x.data());
    EXPECT_LE(max_rel_err(vals, ref), 1e-12) << "W=" << W << " blocks=" << blocks;
    jac.residual(x, f2);
    EXPECT_EQ(f, f2) << "dual values equal the double residual bitwise";
    std::vector<double> f3(p.n_rows);
    res(RowRange{0, p.n_rows}, x.data(), f3.data());
    EXPECT_EQ(f2, f3);
  }
}

struct Arrow {
  template <class S>
  void operator()(RowRange rows, const S* x, S* f) const {
    using std::sin;
    for (std::int32_t i = rows.begin; i < rows.end; ++i) {
      if (i == 0) {
        S s = 0.0;
        for (int j = 0; j < 40; ++j) s += (j + 1.0) * x[j] * x[j];
        f[0] = s;
      } else {
        f[i] = sin(x[i]) * double(i);
      }
    }
  }
};
struct EmptyRows {
  template <class S>
  void operator()(RowRange rows, const S* x, S* f) const {
    for (std::int32_t i = rows.begin; i < rows.end; ++i) f[i] = (i == 0 || i == 3) ? x[i] * x[i] : S(4.0 + i);
  }
};

}  // namespace

TEST(ForwardJacobian, BratuMatchesAnalyticForAllWidths) {
  check_width<1>(1);
  check_width<2>(3);
  check_width<4>(5);
  check_width<8>(0);
  check_width<8>(7);
  check_width<16>(2);
  check_width<64>(4);
}

TEST(ForwardJacobian, RowLocalMatchesAnalyticForAllWidths) {
  check_width<1>(2, JacobianMode::RowLocal);
  check_width<2>(1, JacobianMode::RowLocal);
  check_width<4>(0, JacobianMode::RowLocal);
  check_width<8>(9, JacobianMode::RowLocal);
}

TEST(ForwardJacobian, CompressedMatchesDecompress) {
  const BratuResidual res{9, 8, 1.0, 0.5};
  const auto p = bratu_pattern(res.nx, res.ny);
  SparseJacobian<BratuResidual, 4> jac(p, res);
  const auto x = bratu_state(p.n_cols, 3);
  SequentialExecutor seq;
  std::vector<double> B(std::size_t(p.n_rows) * jac.num_colors());
  jac.compressed(seq, x, B);
  std::vector<double> vals(p.nnz());
  decompress(p, jac.coloring(), B.data(), vals.data());
  EXPECT_LE(max_rel_err(vals, bratu_jacobian(res, p, x.data())), 1e-12);
  // B = J·S: every row of B holds exactly the row's non-zeros
  std::size_t nonzero = 0;
  for (double b : B) nonzero += b != 0.0;
  EXPECT_EQ(nonzero, std::size_t(p.nnz()));
}

TEST(ForwardJacobian, ChunksSkipStructurallyZeroRows) {
  // Arrow pattern: row 0 depends on all 40 columns, rows i > 0 on column i only. With
  // W = 8 there are 5 chunks, but row i > 0 is evaluated only in the chunk of its colour.
  std::vector<std::int32_t> r, c;
  for (int j = 0; j < 40; ++j) {
    r.push_back(0), c.push_back(j);
    if (j > 0) r.push_back(j), c.push_back(j);
  }
  const auto p = pattern_from_coo(40, 40, r, c);
  SparseJacobian<Arrow, 8> jac(p, Arrow{});
  EXPECT_EQ(jac.num_colors(), 40);
  EXPECT_EQ(jac.num_chunks(), 5);
  EXPECT_EQ(jac.plan().evaluated_rows, 5 + 39);  // not 5 * 40
  SparseJacobian<Arrow, 8> local(p, Arrow{}, {.mode = JacobianMode::RowLocal});
  EXPECT_EQ(local.num_chunks(), 5);               // row 0 needs 5 passes
  EXPECT_EQ(local.plan().evaluated_rows, 5 + 39);
  const auto x = bratu_state(40, 9);
  std::vector<double> vals(p.nnz()), vals2(p.nnz());
  jac.jacobian(x, vals);
  local.jacobian(x, vals2);
  EXPECT_EQ(vals, vals2);
  for (std::int32_t j = 0; j < 40; ++j) {
    EXPECT_NEAR(vals[p.col_ptr[j]], 2 * (j + 1.0) * x[j], 1e-14);  // row 0
    if (j > 0) EXPECT_NEAR(vals[p.col_ptr[j] + 1], std::cos(x[j]) * j, 1e-14);
  }
}

TEST(ForwardJacobian, EmptyRowsAndColumnsStillGiveValues) {
  // Rows 1 and 2 have no non-zero (constant residuals), columns 1 and 2 are never read.
  const auto p = pattern_from_coo(4, 4, {0, 3}, {0, 3});
  for (auto mode : {JacobianMode::Colored, JacobianMode::RowLocal}) {
    SparseJacobian<EmptyRows, 2> jac(p, EmptyRows{}, {.mode = mode});
    const std::vector<double> x{1.5, 2, 3, -2};
    std::vector<double> vals(2), f(4);
    jac.jacobian(x, vals, f);
    EXPECT_EQ(f, (std::vector<double>{2.25, 5.0, 6.0, 4.0}));
    EXPECT_EQ(vals, (std::vector<double>{3.0, -4.0}));
  }
}

struct Constant {
  template <class S>
  void operator()(RowRange rows, const S*, S* f) const {
    for (std::int32_t i = rows.begin; i < rows.end; ++i) f[i] = S(1.5 * i);
  }
};

TEST(ForwardJacobian, NoUnknowns) {
  SparsityPattern p;
  p.n_rows = 3;
  p.n_cols = 0;
  p.col_ptr = {0};
  for (auto mode : {JacobianMode::Colored, JacobianMode::RowLocal}) {
    SparseJacobian<Constant, 4> jac(p, Constant{}, {.mode = mode});
    std::vector<double> x, vals, f(3);
    jac.jacobian(x, vals, f);
    EXPECT_EQ(f, (std::vector<double>{0.0, 1.5, 3.0}));
    std::vector<double> f2(3);
    jac.residual(x, f2);
    EXPECT_EQ(f2, f);
  }
}

TEST(ForwardJacobian, BadInputThrows) {
  const BratuResidual res{5, 4, 1.0, 0.0};
  auto p = bratu_pattern(res.nx, res.ny);
  SparseJacobian<BratuResidual> jac(p, res);
  std::vector<double> x(p.n_cols), vals(p.nnz()), f(p.n_rows);
  std::vector<double> short_x(p.n_cols - 1), short_vals(p.nnz() + 1), short_f(p.n_rows - 1);
  EXPECT_THROW(jac.jacobian(short_x, vals, f), Error);
  EXPECT_THROW(jac.jacobian(x, short_vals, f), Error);
  EXPECT_THROW(jac.jacobian(x, vals, short_f), Error);
  EXPECT_THROW(jac.residual(x, short_f), Error);
  EXPECT_THROW(jac.residual(short_x, f), Error);
  try {
    jac.jacobian(short_x, vals, f);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("x has"), std::string::npos) << e.what();
  }
  auto bad = p;
  bad.row_idx[0] = p.n_rows;  // out of range
  EXPECT_THROW((SparseJacobian<BratuResidual>(bad, res)), Error);
  auto col = color_columns(p);
  col.color[0] = col.color[1];  // columns 0 and 1 share row 0
  EXPECT_THROW((SparseJacobian<BratuResidual>(p, col, res)), Error);
  EXPECT_THROW(make_jacobian_plan(p, color_columns(p), 0, 1), Error);
  EXPECT_THROW(make_row_local_plan(p, 0, 1), Error);
  EXPECT_THROW(make_row_local_plan(bad, 4, 1), Error);
  EXPECT_THROW((SparseJacobian<BratuResidual>(bad, res, {.mode = JacobianMode::RowLocal})), Error);
}

TEST(ForwardJacobian, ReadOutsideThePatternCorruptsColoredAndIsNamedByVerify) {
  const std::int32_t n = 16;
  const auto p = tridiagonal_pattern(n);
  LeakyTridiag leaky{n};
  leaky.extra[0] = {5, 9, 3.0};  // row 5 (pattern: columns 4, 5, 6) reads x[9]
  leaky.n_extra = 1;
  const auto x = bratu_state(n, 11);
  const auto exact = tridiagonal_jacobian(p, x);
  SparseJacobian<LeakyTridiag, 8> colored(p, leaky);
  std::vector<double> vals(p.nnz());
  colored.jacobian(x, vals);
  // the contract: Colored adds dF_5/dx_9 to row 5's entry in the column of x[9]'s colour
  const auto& color = colored.coloring().color;
  int corrupted = 0;
  for (std::int32_t j = 0; j < n; ++j)
    for (std::int32_t e = p.col_ptr[j]; e < p.col_ptr[j + 1]; ++e) {
      const bool hit = p.row_idx[e] == 5 && color[j] == color[9];
      EXPECT_NEAR(vals[e], exact[e] + (hit ? 3.0 : 0.0), 1e-15) << "row " << p.row_idx[e] << " col " << j;
      corrupted += hit;
    }
  EXPECT_EQ(corrupted, 1);
  SparseJacobian<LeakyTridiag, 8> local(p, leaky, {.mode = JacobianMode::RowLocal});
  local.jacobian(x, vals);
  for (std::int32_t e = 0; e < p.nnz(); ++e) EXPECT_NEAR(vals[e], exact[e], 1e-15);  // dropped

  for (auto* jac : {&colored, &local}) {
    const PatternCheck c = jac->verify_pattern(x);
    EXPECT_FALSE(c.ok());
    EXPECT_EQ(c.violations, 1);
    EXPECT_EQ(c.row, 5);
    EXPECT_EQ(c.col, 9);
    EXPECT_EQ(c.partial, 3.0);
    EXPECT_NE(c.message().find("row 5 depends on x[9] outside the pattern"), std::string::npos) << c.message();
  }
}

TEST(ForwardJacobian, VerifyPatternNamesTheFirstRowMajorAcrossProbes) {
  const std::int32_t n = 30;
  const auto p = tridiagonal_pattern(n);
  LeakyTridiag leaky{n};
  leaky.extra[0] = {20, 0, 1.0};    // first probe
  leaky.extra[1] = {3, 27, -2.5};   // last probe, but the first row
  leaky.extra[2] = {3, 12, 0.0};    // a zero partial at x: not seen
  leaky.extra[3] = {3, 29, 1e-300};
  leaky.n_extra = 4;
  const auto x = bratu_state(n, 5);
  for (std::int32_t blocks : {1, 4}) {
    SparseJacobian<LeakyTridiag, 4> jac(p, leaky, {.row_blocks = blocks});
    SequentialExecutor seq;
    const PatternCheck c = jac.verify_pattern(seq, x);
    EXPECT_EQ(c.violations, 3);
    EXPECT_EQ(c.row, 3);
    EXPECT_EQ(c.col, 27);
    EXPECT_EQ(c.partial, -2.5);
  }
  SparseJacobian<LeakyTridiag, 4> jac(p, leaky);
  std::vector<double> short_x(n - 1);
  EXPECT_THROW(jac.verify_pattern(short_x), Error);
}

TEST(ForwardJacobian, VerifyPatternPassesResidualsThatKeepToThePattern) {
  const BratuResidual res{23, 17, 2.5, 3.0};
  const auto p = bratu_pattern(res.nx, res.ny);
  for (auto mode : {JacobianMode::Colored, JacobianMode::RowLocal}) {
    SparseJacobian<BratuResidual, 8> jac(p, res, {.mode = mode});
    const PatternCheck c = jac.verify_pattern(bratu_state(p.n_cols, 2));
    EXPECT_TRUE(c.ok()) << c.message();
    EXPECT_EQ(c.row, -1);
    EXPECT_EQ(c.col, -1);
  }
  const auto tp = tridiagonal_pattern(9);
  SparseJacobian<LeakyTridiag, 2> tri(tp, LeakyTridiag{9});
  EXPECT_TRUE(tri.verify_pattern(bratu_state(9, 1)).ok());
  // no unknowns / no rows
  SparsityPattern none;
  none.n_rows = 3;
  none.col_ptr = {0};
  SparseJacobian<Constant, 4> constant(none, Constant{});
  EXPECT_TRUE(constant.verify_pattern(std::vector<double>{}).ok());
}
