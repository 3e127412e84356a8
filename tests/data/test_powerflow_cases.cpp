// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/data/test_powerflow_cases.cpp — every MATPOWER case of ../shared/data/matpower:
// Newton converges and matches solutions/<case>.pf.csv (|dVm| <= 1e-6 p.u., |dVa| <= 1e-5 deg,
// same iteration count as MATPOWER), with Q limits matches solutions_qlim/ (voltages and final
// bus types), the Jacobian (AD and analytic) equals MATPOWER's reference matrices in
// jacobians/ at the start point and at the solution, F0 equals the reference mismatch, AD =
// analytic to 1e-12 on every case, and colouring counts on the real patterns match the table
// of solutions/README.md. Skips when the data are absent.
#include <gtest/gtest.h>

#include <map>

#include "stardiff/powerflow.hpp"
#include "unit/test_powerflow_support.hpp"

using namespace stardiff;
using namespace stardiff::powerflow;

namespace {

struct CaseInfo {
  const char* name;
  int iterations;      // MATPOWER NR iterations (solutions/README.md)
  int qlim_iterations; // total with Q limits (solutions_qlim/README.md)
  int jac_n, jac_nnz, max_row, natural;  // Jacobian size, nnz, max row count, natural-order colours
};
const CaseInfo kCases[] = {
    {"case9", 4, 4, 14, 82, 7, 7},
    {"case14", 2, 5, 22, 146, 10, 11},
    {"case30", 3, 3, 53, 361, 15, 15},
    {"case57", 3, 3, 106, 718, 12, 13},
    {"case118", 3, 6, 181, 1051, 15, 15},
    {"case300", 5, 11, 530, 3736, 24, 24},
    {"case1354pegase", 4, 9, 2447, 15803, 25, 25},
    {"case_ACTIVSg2000", 3, 11, 3607, 26345, 21, 21},
    {"case2869pegase", 6, 14, 5227, 36591, 31, 34},
    {"case9241pegase", 6, 14, 17036, 129412, 84, 85},
    {"case_ACTIVSg10k", 4, 16, 18544, 125174, 28, 28},
};

std::map<std::string, Case>& case_cache() {
  static std::map<std::string, Case> m;
  return m;
}
const Case& load(const std::string& dir, const std::string& name) {
  auto& m = case_cache();
  auto it = m.find(name);
  if (it == m.end()) it = m.emplace(name, read_matpower(dir + "/" + name + ".m")).first;
  return it->second;
}

void expect_matches(const Case& c, const NewtonResult& r, const std::vector<pftest::CsvRow>& ref, bool types) {
  ASSERT_EQ(ref.size(), c.buses.size()) << c.name;
  double dvm = 0, dva = 0;
  int type_mismatch = 0;
  for (std::size_t b = 0; b < ref.size(); ++b) {
    ASSERT_EQ(ref[b].bus, c.buses[b].id) << c.name << " row " << b;
    dvm = std::max(dvm, std::fabs(r.vm[b] - ref[b].vm));
    dva = std::max(dva, std::fabs(r.va_deg[b] - ref[b].va));
    if (types && ref[b].type != r.bus_type[b]) ++type_mismatch;
  }
  EXPECT_LE(dvm, 1e-6) << c.name;
  EXPECT_LE(dva, 1e-5) << c.name;
  EXPECT_EQ(type_mismatch, 0) << c.name;
  std::printf("%-18s iterations=%2d solves=%d max|dVm|=%.2e max|dVa|=%.2e deg\n", c.name.c_str(), r.iterations,
              r.solves, dvm, dva);
}

}  // namespace

TEST(PowerflowCases, MatchMatpowerSolutions) {
  const std::string dir = pftest::matpower_dir();
  if (dir.empty()) GTEST_SKIP() << "no ../shared/data/matpower";
  for (const auto& ci : kCases) {
    const Case& c = load(dir, ci.name);
    const NewtonResult r = solve(c);
    ASSERT_TRUE(r.converged) << ci.name << " " << to_string(r.status);
    EXPECT_EQ(r.iterations, ci.iterations) << ci.name;
    EXPECT_LT(r.max_mismatch, 1e-8);
    EXPECT_LT(pftest::recomputed_mismatch(c, r), 1e-8) << ci.name;
    expect_matches(c, r, pftest::read_solution(dir + "/solutions/" + ci.name + ".pf.csv"), false);
  }
}

TEST(PowerflowCases, QLimitsMatchMatpower) {
  const std::string dir = pftest::matpower_dir();
  if (dir.empty()) GTEST_SKIP() << "no ../shared/data/matpower";
  SolveOptions o;
  o.q_limits = true;
  for (const auto& ci : kCases) {
    const std::string ref = dir + "/solutions_qlim/" + ci.name + ".pf_qlim.csv";
    if (!std::ifstream(ref)) continue;
    const Case& c = load(dir, ci.name);
    const NewtonResult r = solve(c, o);
    ASSERT_TRUE(r.converged) << ci.name << " " << to_string(r.status);
    EXPECT_EQ(r.iterations, ci.qlim_iterations) << ci.name;
    expect_matches(c, r, pftest::read_solution(ref), true);
  }
}

TEST(PowerflowCases, JacobiansMatchReferenceMatrices) {
  const std::string dir = pftest::matpower_dir();
  if (dir.empty()) GTEST_SKIP() << "no ../shared/data/matpower";
  for (const char* name : {"case9", "case14", "case118", "case1354pegase"}) {
    const Case& c = load(dir, name);
    const auto& [net, g, types, ix, sbus, V0, pat] = make_jacobian_problem(c);
    const JacobianColoring col = color_jacobian(pat, ix, forward::ColorOrder::Best);
    // the solution voltages from solutions/<case>.pf.csv
    const auto sol = pftest::read_solution(dir + "/solutions/" + name + ".pf.csv");
    std::vector<cplx> Vs(net.n);
    for (int i = 0; i < net.n; ++i) {
      const auto& row = sol[net.case_bus[i]];
      Vs[i] = std::polar(row.vm, row.va * M_PI / 180.0);
    }
    using Item = std::pair<std::string, const std::vector<cplx>*>;
    for (const auto& [file, V] : {Item{".jac0.mtx", &V0}, Item{".jac.mtx", &Vs}}) {
      const auto ref = pftest::read_mtx(dir + "/jacobians/" + name + file);
      ASSERT_EQ(ref.nrows, ix.size()) << name;
      std::vector<double> ad, an;
      ad_jacobian(net, ix, pat, col, sbus, *V, ad);
      analytic_jacobian(net, ix, pat, sbus, *V, an);
      // dense lookup of our CSR values; entries missing from the reference are zeros there
      std::map<std::pair<int, int>, double> refmap;
      double jmax = 0;
      for (std::size_t k = 0; k < ref.v.size(); ++k) {
        refmap[std::make_pair(ref.r[k], ref.c[k])] = ref.v[k];
        jmax = std::max(jmax, std::fabs(ref.v[k]));
      }
      double dad = 0, dan = 0;
      std::size_t found = 0;
      for (int r = 0; r < pat.n; ++r)
        for (int k = pat.row_ptr[r]; k < pat.row_ptr[r + 1]; ++k) {
          auto it = refmap.find(std::make_pair(r, int(pat.col_idx[k])));
          const double rv = it == refmap.end() ? 0.0 : it->second;
          found += it != refmap.end();
          dad = std::max(dad, std::fabs(ad[k] - rv));
          dan = std::max(dan, std::fabs(an[k] - rv));
        }
      EXPECT_EQ(found, ref.v.size()) << name << file << ": reference entries outside our pattern";
      EXPECT_LE(dad / jmax, 1e-12) << name << file;
      EXPECT_LE(dan / jmax, 1e-12) << name << file;
      std::printf("%-16s %-9s n=%d nnz(ref)=%zu max|AD-ref|/max|J|=%.2e max|analytic-ref|/max|J|=%.2e\n", name,
                  file.c_str(), pat.n, ref.v.size(), dad / jmax, dan / jmax);
    }
    // F0
    std::vector<double> F;
    mismatch(net, ix, sbus, V0, F);
    std::ifstream f0(dir + "/jacobians/" + name + ".F0.csv");
    double d = 0;
    for (int r = 0; r < ix.size(); ++r) {
      double v;
      ASSERT_TRUE(f0 >> v) << name;
      d = std::max(d, std::fabs(F[r] - v));
    }
    EXPECT_LE(d, 1e-10) << name;  // |F0| up to 13 p.u. from Ybus entries up to ~1e4: rounding ~1e-12
  }
}

TEST(PowerflowCases, ColoringOnRealPatterns) {
  const std::string dir = pftest::matpower_dir();
  if (dir.empty()) GTEST_SKIP() << "no ../shared/data/matpower";
  for (const auto& ci : kCases) {
    const Case& c = load(dir, ci.name);
    const auto& [net, g, types, ix, sbus, V0, pat] = make_jacobian_problem(c);
    EXPECT_EQ(pat.n, ci.jac_n) << ci.name;
    EXPECT_EQ(pat.nnz(), ci.jac_nnz) << ci.name;
    EXPECT_EQ(pat.max_row_nnz(), ci.max_row) << ci.name;
    const auto nat = color_jacobian(pat, ix, forward::ColorOrder::Natural);
    const auto best = color_jacobian(pat, ix, forward::ColorOrder::Best);
    EXPECT_TRUE(forward::is_valid_coloring(pat.csc(), nat.coloring));
    EXPECT_TRUE(forward::is_valid_coloring(pat.csc(), best.coloring));
    EXPECT_EQ(nat.coloring.num_colors, ci.natural) << ci.name;
    EXPECT_EQ(best.coloring.lower_bound, ci.max_row) << ci.name;
    EXPECT_GE(best.coloring.num_colors, ci.max_row);
    EXPECT_LE(best.coloring.num_colors, nat.coloring.num_colors);
    if (std::string(ci.name) == "case9241pegase") EXPECT_EQ(best.coloring.num_colors, 84);
    // The bus-level colouring (no pattern, one class per bus) colours the same graph: valid,
    // the same lower bound, the same colours in natural order (single columns: the classes
    // do not matter), and the same count in every order. (Where two buses have the same
    // neighbours the generic detection merges them into one class, so the other orders
    // may pick different, equally many, colours.)
    for (auto o : {forward::ColorOrder::Natural, forward::ColorOrder::LargestFirst, forward::ColorOrder::SmallestLast,
                   forward::ColorOrder::IncidenceDegree, forward::ColorOrder::Best}) {
      const forward::Coloring bus = color_jacobian_columns(net, ix, o);
      const forward::Coloring gen = color_jacobian(pat, ix, o).coloring;
      EXPECT_TRUE(forward::is_valid_coloring(pat.csc(), bus)) << ci.name;
      EXPECT_EQ(bus.lower_bound, ci.max_row) << ci.name;
      EXPECT_EQ(bus.num_colors, gen.num_colors) << ci.name << " " << forward::to_string(o);
      if (o == forward::ColorOrder::Natural) EXPECT_EQ(bus.color, gen.color) << ci.name;
    }
    // AD = analytic on every case at the start point
    std::vector<double> ad, an;
    ad_jacobian(net, ix, pat, best, sbus, V0, ad);
    analytic_jacobian(net, ix, pat, sbus, V0, an);
    double d = 0, m = 0;
    for (std::size_t k = 0; k < ad.size(); ++k) {
      d = std::max(d, std::fabs(ad[k] - an[k]));
      m = std::max(m, std::fabs(an[k]));
    }
    EXPECT_LE(d / m, 1e-12) << ci.name;
    std::vector<double> dense;
    ad_jacobian(net, ix, pat, best, sbus, V0, dense, /*dense=*/true);
    EXPECT_EQ(dense, ad) << ci.name;  // same operations on the non-zero partials
    std::printf("%-18s n=%5d nnz=%6d lower_bound=%2d natural=%2d best=%2d (%s) AD-analytic=%.1e\n", ci.name, pat.n,
                pat.nnz(), best.coloring.lower_bound, nat.coloring.num_colors, best.coloring.num_colors,
                forward::to_string(best.coloring.order), d / m);
  }
}
