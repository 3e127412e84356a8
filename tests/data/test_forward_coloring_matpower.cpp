// tests/data/test_forward_coloring_matpower.cpp — colouring counts on real power-flow
// Jacobian patterns built from ../shared/data/matpower cases (a minimal reader of the
// bus/gen/branch sections; the powerflow module owns the real reader). Pattern: rows
// [P(pv,pq); Q(pq)], columns [Va(pv,pq); Vm(pq)] (MATPOWER order: pv then pq, bus order),
// each block the Ybus pattern. Asserts: every order gives a valid colouring with at least
// lower_bound colours; best reaches the lower bound on case9241pegase (84; natural 85 as
// ExaPF reports); a SparseJacobian of a power-flow-shaped residual (random admittances
// on that pattern) equals a per-non-zero analytic Jacobian to 1e-12 relative, in both
// Colored and RowLocal modes (bitwise equal to each other).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "stardiff/forward.hpp"
#include "cpu/forward/pf_test_problem.hpp"

using namespace stardiff;
using namespace stardiff::forward;

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
    const auto pf = test_problems::read_pf_pattern(dir + "/" + cs.name + ".m");
    const auto& p = pf.pattern;
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
    const auto pf = test_problems::read_pf_pattern(dir + "/" + name + ".m");
    const auto net = test_problems::random_network(pf, 7);
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> u(-0.2, 0.2);
    std::vector<double> x(pf.pattern.n_cols);
    for (std::size_t j = 0; j < x.size(); ++j) x[j] = (j < pf.npvpq ? 0.0 : 1.0) + u(rng);
    SparseJacobian<test_problems::PfResidual, 8> jac(pf.pattern, test_problems::PfResidual{&net});
    std::vector<double> vals(pf.pattern.nnz()), f(pf.pattern.n_rows);
    jac.jacobian(x, vals, f);
    const auto ref = test_problems::analytic_jacobian(net, pf.pattern, x);
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
    SparseJacobian<test_problems::PfResidual, 8> local(pf.pattern, test_problems::PfResidual{&net},
                                                      {.mode = JacobianMode::RowLocal});
    std::vector<double> vals2(vals.size()), f3(f.size());
    local.jacobian(x, vals2, f3);
    EXPECT_EQ(vals2, vals) << name;
    EXPECT_EQ(f3, f) << name;
  }
}
