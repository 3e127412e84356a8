// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/starpu/test_forward_jacobian_starpu.cpp — SparseJacobian under the StarPU executor gives
// bitwise the sequential executor's Jacobian values and residual (Bratu with convection,
// several chunk widths and block counts, repeated calls with changing x, and a
// power-flow-shaped residual on a generated network), with one task per row block plus
// the scatter task; a residual that throws in a task surfaces as stardiff::Error. Both
// modes (Colored, RowLocal). verify_pattern under StarPU gives the sequential report.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "support/forward/bratu_pattern.hpp"
#include "support/forward/leaky_residual.hpp"
#include "stardiff/stardiff.hpp"
#include "runtime_environment.hpp"

using namespace stardiff;
using namespace stardiff::forward;
using test_problems::BratuResidual;
using test_problems::bratu_jacobian;
using test_problems::bratu_pattern;
using test_problems::bratu_state;

namespace {
template <int W>
void compare(std::int32_t nx, std::int32_t ny, std::int32_t blocks, JacobianMode mode = JacobianMode::Colored) {
  const BratuResidual res{nx, ny, 3.0, 2.0};
  const auto p = bratu_pattern(nx, ny);
  SparseJacobian<BratuResidual, W> seq_jac(p, res, {.row_blocks = blocks, .mode = mode});
  SparseJacobian<BratuResidual, W> par_jac(p, res, {.row_blocks = blocks, .mode = mode});
  EXPECT_EQ(par_jac.plan().gather_bounds.size() - 1,
            std::size_t(std::clamp<std::int32_t>(p.nnz() / 32768, 1, std::int32_t(par_jac.num_blocks()))));
  SequentialExecutor seq;
  StarpuExecutor par;
  for (unsigned seed = 1; seed <= 3; ++seed) {
    const auto x = bratu_state(p.n_cols, seed);
    std::vector<double> v1(p.nnz()), v2(p.nnz(), -1), f1(p.n_rows), f2(p.n_rows), r1(p.n_rows), r2(p.n_rows);
    seq_jac.jacobian(seq, x, v1, f1);
    par_jac.jacobian(par, x, v2, f2);
    EXPECT_EQ(v1, v2) << "W=" << W << " blocks=" << blocks << " seed " << seed;
    EXPECT_EQ(f1, f2);
    seq_jac.residual(seq, x, r1);
    par_jac.residual(par, x, r2);
    EXPECT_EQ(r1, r2);
    EXPECT_EQ(r1, f1);
    // and the values are right
    const auto ref = bratu_jacobian(res, p, x.data());
    double err = 0, scale = 0;
    for (std::size_t e = 0; e < ref.size(); ++e)
      err = std::max(err, std::abs(v2[e] - ref[e])), scale = std::max(scale, std::abs(ref[e]));
    EXPECT_LE(err / scale, 1e-12);
  }
}

struct Throwing {
  std::int32_t bad_row = 7;
  template <class S>
  void operator()(RowRange rows, const S* x, S* f) const {
    for (std::int32_t i = rows.begin; i < rows.end; ++i) {
      if (i == bad_row) throw Error("row " + std::to_string(i) + " cannot be evaluated");
      f[i] = x[i] * x[i];
    }
  }
};

}  // namespace

TEST(ForwardJacobianStarpu, BitwiseEqualToSequential) {
  compare<4>(40, 30, 6);
  compare<8>(64, 50, 0);
  compare<16>(33, 21, 3);
  compare<4>(40, 30, 6, JacobianMode::RowLocal);
  compare<8>(64, 50, 0, JacobianMode::RowLocal);
  compare<8>(150, 150, 6, JacobianMode::RowLocal);  // 112k non-zeros: 3 gather tasks
}

TEST(ForwardJacobianStarpu, TaskCountsAndFailures) {
  const BratuResidual res{30, 30, 1.0, 0.0};
  const auto p = bratu_pattern(30, 30);
  SparseJacobian<BratuResidual, 8> jac(p, res, {.row_blocks = 5});
  ASSERT_EQ(jac.num_blocks(), 5u);
  StarpuExecutor par;
  RecordingExecutor rec(&par);
  const auto x = bratu_state(p.n_cols, 4);
  std::vector<double> v(p.nnz());
  jac.jacobian(rec, x, v);
  auto counts = rec.counts();
  std::size_t jac_tasks = 0, scatter_tasks = 0;
  for (const auto& [name, n] : counts) {
    if (name.rfind("forward_jacobian_scatter", 0) == 0) scatter_tasks += n;
    else if (name.rfind("forward_jacobian", 0) == 0) jac_tasks += n;
  }
  EXPECT_EQ(jac_tasks, 5u);
  EXPECT_EQ(scatter_tasks, 1u);

  std::vector<std::int32_t> r, c;
  for (int i = 0; i < 20; ++i) r.push_back(i), c.push_back(i);
  SparseJacobian<Throwing, 2> bad(pattern_from_coo(20, 20, r, c), Throwing{}, {.row_blocks = 4});
  std::vector<double> xx(20, 1.0), vv(20), ff(20);
  EXPECT_THROW(bad.jacobian(par, xx, vv, ff), Error);
  EXPECT_THROW(bad.residual(par, xx, ff), Error);
  SparseJacobian<Throwing, 2> bad_local(pattern_from_coo(20, 20, r, c), Throwing{},
                                        {.row_blocks = 3, .mode = JacobianMode::RowLocal});
  EXPECT_THROW(bad_local.jacobian(par, xx, vv, ff), Error);
  // the objects stay usable after a failed call (seeds left by the failed task are reset)
  for (auto* j : {&bad, &bad_local}) {
    j->function().bad_row = -1;
    for (int i = 0; i < 20; ++i) xx[i] = 0.5 + i;
    j->jacobian(par, xx, vv, ff);
    for (int i = 0; i < 20; ++i) {
      EXPECT_EQ(vv[i], 2 * xx[i]);
      EXPECT_EQ(ff[i], xx[i] * xx[i]);
    }
  }
}

TEST(ForwardJacobianStarpu, VerifyPatternMatchesSequential) {
  const std::int32_t n = 200;
  const auto p = test_problems::tridiagonal_pattern(n);
  test_problems::LeakyTridiag leaky{n};
  leaky.extra[0] = {150, 3, 2.0};
  leaky.extra[1] = {40, 190, -1.0};
  leaky.extra[2] = {40, 120, 0.5};
  leaky.n_extra = 3;
  SparseJacobian<test_problems::LeakyTridiag, 4> jac(p, leaky, {.row_blocks = 3});
  const auto x = bratu_state(n, 8);
  SequentialExecutor seq;
  StarpuExecutor par;
  const PatternCheck a = jac.verify_pattern(seq, x), b = jac.verify_pattern(par, x);
  EXPECT_EQ(a.violations, 3);
  EXPECT_EQ(a.row, 40);
  EXPECT_EQ(a.col, 120);
  EXPECT_EQ(b.violations, a.violations);
  EXPECT_EQ(b.row, a.row);
  EXPECT_EQ(b.col, a.col);
  EXPECT_EQ(b.partial, a.partial);
  const BratuResidual res{30, 20, 1.0, 2.0};
  SparseJacobian<BratuResidual, 8> bratu(bratu_pattern(30, 20), res);
  EXPECT_TRUE(bratu.verify_pattern(par, bratu_state(600, 3)).ok());
}
