// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/data/test_powerflow_coloring_matpower.cpp — colouring counts on real power-flow
// Jacobian patterns of ../shared/data/matpower cases (the powerflow module's reader and
// pattern: rows [P(pv); P(pq); Q(pq)], columns [Va(pv); Va(pq); Vm(pq)], each block the
// Ybus pattern, in CSC). Asserts: every order gives a valid colouring with at least
// lower_bound colours; best reaches the lower bound on case9241pegase (84; natural 85 as
// ExaPF reports); a SparseJacobian of the power-flow residual (the case's Ybus and Sbus,
// perturbed state) equals the analytic Jacobian to 1e-12 relative, in both Colored and
// RowLocal modes (bitwise equal to each other).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <random>

#include "stardiff/forward.hpp"
#include "stardiff/powerflow.hpp"

using namespace stardiff;
using namespace stardiff::forward;
using powerflow::PfResidual;

namespace {

std::string data_dir() {
  const char* d = std::getenv("STARDIFF_SHARED_DATA");
  return d ? std::string(d) + "/matpower" : std::string();
}

}  // namespace

TEST(ForwardColoringMatpower, CountsOnRealPatterns) {
  const std::string dir = data_dir();
  if (dir.empty() || !std::ifstream(dir + "/case9.m")) GTEST_SKIP() << "no ../shared/data/matpower";
  struct Expect {
    const char* name;
    int natural, best;  // -1: not asserted
  };
  const Expect cases[] = {{"case9", -1, -1},          {"case14", -1, -1},           {"case118", -1, -1},
                          {"case1354pegase", -1, -1}, {"case2869pegase", -1, -1},   {"case9241pegase", 85, 84},
                          {"case_ACTIVSg2000", -1, -1}, {"case_ACTIVSg10k", -1, -1}};
  for (const auto& cs : cases) {
    const auto pf = powerflow::make_jacobian_problem(powerflow::read_matpower(dir + "/" + cs.name + ".m"));
    const auto p = pf.pattern.csc();
    for (ColorOrder o : {ColorOrder::Natural, ColorOrder::LargestFirst, ColorOrder::SmallestLast,
                         ColorOrder::IncidenceDegree, ColorOrder::Best}) {
      const auto t0 = std::chrono::steady_clock::now();
      const auto c = color_columns(p, o);
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      ASSERT_TRUE(is_valid_coloring(p, c)) << cs.name << " " << to_string(o);
      EXPECT_GE(c.num_colors, c.lower_bound);
      std::printf("%-18s n=%6d nnz=%7d order=%-7s colors=%3d lower_bound=%3d (by %s) time_ms=%.2f\n", cs.name,
                  p.n_cols, p.nnz(), to_string(o), c.num_colors, c.lower_bound, to_string(c.order), ms);
      if (o == ColorOrder::Natural && cs.natural > 0) EXPECT_EQ(c.num_colors, cs.natural) << cs.name;
      if (o == ColorOrder::Best && cs.best > 0) EXPECT_EQ(c.num_colors, cs.best) << cs.name;
    }
  }
}

TEST(ForwardColoringMatpower, PowerFlowShapedJacobianMatchesAnalytic) {
  const std::string dir = data_dir();
  if (dir.empty() || !std::ifstream(dir + "/case1354pegase.m")) GTEST_SKIP() << "no ../shared/data/matpower";
  for (const char* name : {"case118", "case1354pegase"}) {
    const auto pf = powerflow::make_jacobian_problem(powerflow::read_matpower(dir + "/" + name + ".m"));
    const auto pattern = pf.pattern.csc();
    std::vector<double> va0, vm0;
    const PfResidual res = powerflow::make_residual(pf.net, pf.ix, pf.sbus, pf.v0, va0, vm0);
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> u(-0.2, 0.2);
    std::vector<double> x(pattern.n_cols);
    for (std::size_t j = 0; j < x.size(); ++j) x[j] = (j < std::size_t(pf.ix.npvpq()) ? 0.0 : 1.0) + u(rng);
    SparseJacobian<PfResidual, 8> jac(pattern, res);
    std::vector<double> vals(pattern.nnz()), f(pattern.n_rows);
    jac.jacobian(x, vals, f);
    std::vector<double> csr, ref(vals.size());
    powerflow::analytic_jacobian(pf.net, pf.ix, pf.pattern, pf.sbus, powerflow::voltage_from_state(pf.ix, va0, vm0, x),
                                 csr);
    const auto to_csc = pf.pattern.csr_to_csc();
    for (std::size_t k = 0; k < csr.size(); ++k) ref[to_csc[k]] = csr[k];
    double err = 0, scale = 0;
    for (std::size_t e = 0; e < ref.size(); ++e) {
      err = std::max(err, std::abs(vals[e] - ref[e]));
      scale = std::max(scale, std::abs(ref[e]));
    }
    EXPECT_LE(err / scale, 1e-12) << name;
    std::vector<double> f2(f.size());
    jac.residual(x, f2);
    EXPECT_EQ(f, f2) << name;
    // RowLocal mode: same values bitwise (each entry is one partial of the same expression)
    SparseJacobian<PfResidual, 8> local(pattern, res, {.mode = JacobianMode::RowLocal});
    std::vector<double> vals2(vals.size()), f3(f.size());
    local.jacobian(x, vals2, f3);
    EXPECT_EQ(vals2, vals) << name;
    EXPECT_EQ(f3, f) << name;
  }
}
