// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/unit/test_powerflow_newton.cpp — Ybus/Sbus against hand formulas, the Jacobian set-up
// (make_jacobian_problem), the Newton Jacobian (AD = analytic to 1e-12, = finite differences
// to 1e-6, = the generic forward::SparseJacobian over the templated residual, which keeps to
// its pattern by verify_pattern on case9 and pf6), multi-pass
// AD chunks, and Newton outcomes on the built-in pf6 case: convergence, Q limits, flat
// start, max_iter, divergence, singular Jacobian (returned, never thrown).
#include <gtest/gtest.h>

#include <random>

#include "stardiff/forward/sparse_jacobian.hpp"
#include "stardiff/powerflow.hpp"
#include "unit/test_powerflow_support.hpp"

using namespace stardiff;
using namespace stardiff::powerflow;

namespace {

double rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0, m = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    d = std::max(d, std::fabs(a[k] - b[k]));
    m = std::max(m, std::fabs(b[k]));
  }
  return d / m;
}

// A synthetic meshed network: a ring of n buses with chords, random impedances, taps and
// shifts, a few PV buses; deterministic (seeded).
Case synthetic_case(int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  Case c;
  c.name = c.file = "synthetic";
  c.base_mva = 100;
  for (int i = 0; i < n; ++i) {
    Bus b;
    b.id = 1000 + 7 * i;
    b.type = i == 0 ? REF : (i % 5 == 0 ? PV : PQ);
    b.pd = i == 0 ? 0 : 2 + 6 * u(rng);
    b.qd = 2 * u(rng);
    b.bs = i % 7 == 0 ? 10.0 : 0.0;
    b.vm = 1.0;
    b.va = i == 0 ? 5.0 : 0.0;
    c.buses.push_back(b);
    if (b.type != PQ) {
      Gen g;
      g.bus = i;
      g.pg = i == 0 ? 0 : 20;
      g.qmax = 100;
      g.qmin = -100;
      g.vg = 1.0 + 0.02 * u(rng);
      c.gens.push_back(g);
    }
  }
  c.ref = 0;
  auto add = [&](int f, int t) {
    Branch br;
    br.from = f;
    br.to = t;
    br.r = 0.002 + 0.01 * u(rng);
    br.x = 0.02 + 0.05 * u(rng);
    br.b = 0.02 * u(rng);
    if (u(rng) < 0.2) {
      br.ratio = 0.95 + 0.1 * u(rng);
      br.angle = u(rng) < 0.5 ? 4.0 * (u(rng) - 0.5) : 0.0;
    }
    c.branches.push_back(br);
  };
  for (int i = 0; i < n; ++i) add(i, (i + 1) % n);
  for (int i = 0; i < n; i += 3) add(i, (i + n / 3 + 1) % n);
  return c;
}

}  // namespace

TEST(PowerflowNetwork, YbusMatchesHandFormulas) {
  // Two buses, one transformer branch (r, x, b, tap 1.05, shift 10 deg) plus bus shunts.
  Case c;
  c.file = c.name = "two";
  c.base_mva = 50;
  for (int i = 0; i < 2; ++i) {
    Bus b;
    b.id = 7 + i;
    b.type = i == 0 ? REF : PQ;
    b.gs = i == 1 ? 2.5 : 0;
    b.bs = i == 1 ? -4.0 : 1.0;
    c.buses.push_back(b);
  }
  c.ref = 0;
  Branch br{0, 1, 0.02, 0.2, 0.1, 1.05, 10.0, 1};
  c.branches.push_back(br);
  const Network net = make_network(c);
  ASSERT_EQ(net.nnz(), 4);
  const cplx ys = 1.0 / cplx(0.02, 0.2);
  const cplx t = std::polar(1.05, 10.0 * M_PI / 180.0);
  const cplx yff = (ys + cplx(0, 0.05)) / (1.05 * 1.05) + cplx(0.0, 1.0) / 50.0;
  const cplx yft = -ys / std::conj(t), ytf = -ys / t;
  const cplx ytt = ys + cplx(0, 0.05) + cplx(2.5, -4.0) / 50.0;
  // CSC: column 0 = (0,0), (1,0); column 1 = (0,1), (1,1)
  EXPECT_NEAR(std::abs(net.y[0] - yff), 0, 1e-14);
  EXPECT_NEAR(std::abs(net.y[1] - ytf), 0, 1e-14);
  EXPECT_NEAR(std::abs(net.y[2] - yft), 0, 1e-14);
  EXPECT_NEAR(std::abs(net.y[3] - ytt), 0, 1e-14);
  // CSR holds the same values by rows.
  EXPECT_EQ(net.y_row[1], net.y[2]);
  EXPECT_EQ(net.y_row[2], net.y[1]);
}

TEST(PowerflowNetwork, SbusAndBusTypes) {
  const Case c = read_matpower(pftest::pf6_path());
  const Network net = make_network(c);
  const GenState g = initial_gen_state(c, net);
  const auto s = make_sbus(c, net, g);
  // bus 35 (index 2): generator 10 + j5 at a PQ bus minus load 90 + j30, p.u. on 100 MVA
  EXPECT_DOUBLE_EQ(s[2].real(), -0.8);
  EXPECT_DOUBLE_EQ(s[2].imag(), -0.25);
  // bus 57: its generator is out of service
  EXPECT_DOUBLE_EQ(s[4].real(), -0.6);
  auto types = bus_types(c, net, file_bus_types(c, net), g);
  EXPECT_EQ(types, (std::vector<int>{REF, PV, PQ, PQ, PQ, PV}));
  // A PV bus without an in-service generator is PQ; a reference bus without one hands the
  // role to the first PV bus.
  GenState g2 = g;
  g2.on[0] = 0;  // generator at bus 10 (the reference)
  g2.on[1] = 0;  // generator at bus 20
  types = bus_types(c, net, file_bus_types(c, net), g2);
  EXPECT_EQ(types, (std::vector<int>{PQ, PQ, PQ, PQ, PQ, REF}));
}

// make_jacobian_problem: the same pieces as built one by one above, with a flat start.
TEST(PowerflowNetwork, JacobianProblemSetsUpTheStartingPoint) {
  const Case c = read_matpower(pftest::pf6_path());
  const JacobianProblem jp = make_jacobian_problem(c, /*flat_start=*/true);
  EXPECT_EQ(jp.types, (std::vector<int>{REF, PV, PQ, PQ, PQ, PV}));
  EXPECT_EQ(jp.sbus, make_sbus(c, jp.net, initial_gen_state(c, jp.net)));
  EXPECT_EQ(jp.ix.size(), 2 + 2 * 3);  // 2 PV buses, 3 PQ buses
  EXPECT_EQ(jp.pattern.n, jp.ix.size());
  const double va_ref = c.buses[c.ref].va * M_PI / 180.0;
  for (int i = 0; i < jp.net.n; ++i) {
    EXPECT_NEAR(std::arg(jp.v0[i]), va_ref, 1e-15);
    if (jp.types[i] == PQ) EXPECT_DOUBLE_EQ(std::abs(jp.v0[i]), 1.0);
  }
  Case c2 = c;  // otherwise the case's own voltages (PQ bus 35 at index 2)
  c2.buses[2].vm = 0.97;
  c2.buses[2].va = -3.0;
  const JacobianProblem own = make_jacobian_problem(c2);
  EXPECT_NEAR(std::abs(own.v0[2]), 0.97, 1e-15);
  EXPECT_NEAR(std::arg(own.v0[2]), -3.0 * M_PI / 180.0, 1e-15);
  EXPECT_DOUBLE_EQ(std::abs(make_jacobian_problem(c2, true).v0[2]), 1.0);
}

TEST(PowerflowJacobian, AdEqualsAnalyticAndFiniteDifferences) {
  for (const Case& c : {read_matpower(pftest::pf6_path()), synthetic_case(60, 1), synthetic_case(301, 7)}) {
    JacobianProblem s = make_jacobian_problem(c);
    // at V0 and at a perturbed V (every entry generic)
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> u(-0.05, 0.05);
    std::vector<cplx> V1 = s.v0;
    for (auto& v : V1) v *= std::polar(1.0 + u(rng), u(rng));
    for (const auto* V : {&s.v0, &V1}) {
      for (auto order : {forward::ColorOrder::Natural, forward::ColorOrder::LargestFirst,
                         forward::ColorOrder::SmallestLast, forward::ColorOrder::Best}) {
        const JacobianColoring col = color_jacobian(s.pattern, s.ix, order);
        ASSERT_TRUE(forward::is_valid_coloring(s.pattern.csc(), col.coloring));
        EXPECT_GE(col.coloring.num_colors, s.pattern.max_row_nnz());
        EXPECT_EQ(col.coloring.lower_bound, s.pattern.max_row_nnz());
        std::vector<double> ad, an, fd;
        ad_jacobian(s.net, s.ix, s.pattern, col, s.sbus, *V, ad);
        analytic_jacobian(s.net, s.ix, s.pattern, s.sbus, *V, an);
        EXPECT_LE(rel_diff(ad, an), 1e-12) << c.name;
        ad_jacobian(s.net, s.ix, s.pattern, col, s.sbus, *V, ad, /*dense=*/true);
        EXPECT_LE(rel_diff(ad, an), 1e-12) << c.name;
        fd_jacobian(s.net, s.ix, s.pattern, col, s.sbus, *V, 1e-6, fd);
        EXPECT_LE(rel_diff(fd, an), 1e-6) << c.name;
      }
    }
  }
}

TEST(PowerflowJacobian, MultiPassChunks) {
  // One colour per column (valid, > 128 colours) forces several Dual<128> passes.
  const Case c = synthetic_case(150, 11);
  JacobianProblem s = make_jacobian_problem(c);
  JacobianColoring col = color_jacobian(s.pattern, s.ix, forward::ColorOrder::Best);
  col.coloring.num_colors = s.pattern.n;
  for (int k = 0; k < s.pattern.n; ++k) col.coloring.color[k] = k;
  for (int i = 0; i < s.ix.n; ++i) {
    col.bus_color_va[i] = s.ix.va_var[i];
    col.bus_color_vm[i] = s.ix.vm_var[i];
  }
  for (int k = 0; k < s.pattern.nnz(); ++k) col.entry_color[k] = s.pattern.col_idx[k];
  ASSERT_GT(s.pattern.n, 256);
  std::vector<double> ad, an;
  ad_jacobian(s.net, s.ix, s.pattern, col, s.sbus, s.v0, ad);
  analytic_jacobian(s.net, s.ix, s.pattern, s.sbus, s.v0, an);
  EXPECT_LE(rel_diff(ad, an), 1e-12);
  ad_jacobian(s.net, s.ix, s.pattern, col, s.sbus, s.v0, ad, /*dense=*/true);
  EXPECT_LE(rel_diff(ad, an), 1e-12);
}

TEST(PowerflowJacobian, GenericSparseJacobianOfTemplatedResidual) {
  for (const Case& c : {read_matpower(pftest::pf6_path()), synthetic_case(120, 5)}) {
    JacobianProblem s = make_jacobian_problem(c);
    std::vector<double> va0, vm0;
    const PfResidual res = make_residual(s.net, s.ix, s.sbus, s.v0, va0, vm0);
    const std::vector<double> x = state_from_voltage(s.ix, s.v0);
    // residual on double = the mismatch kernel
    std::vector<double> f(s.ix.size()), F;
    res(forward::RowRange{0, s.ix.size()}, x.data(), f.data());
    mismatch(s.net, s.ix, s.sbus, s.v0, F);
    for (int r = 0; r < s.ix.size(); ++r) EXPECT_NEAR(f[r], F[r], 1e-12) << r;
    forward::SparseJacobian<PfResidual> sj(s.pattern.csc(), res);
    std::vector<double> csc(s.pattern.nnz()), an;
    sj.jacobian(x, csc);
    analytic_jacobian(s.net, s.ix, s.pattern, s.sbus, s.v0, an);
    const auto map = s.pattern.csr_to_csc();
    std::vector<double> an_csc(an.size());
    for (std::size_t k = 0; k < an.size(); ++k) an_csc[map[k]] = an[k];
    EXPECT_LE(rel_diff(csc, an_csc), 1e-12) << c.name;
  }
}

TEST(PowerflowJacobian, ResidualKeepsToItsPatternOnCase9) {
  for (const std::string path : {pftest::source_dir() + "/apps/pf/data/case9.m", pftest::pf6_path()}) {
    const Case c = read_matpower(path);
    JacobianProblem s = make_jacobian_problem(c);
    std::vector<double> va0, vm0;
    const PfResidual res = make_residual(s.net, s.ix, s.sbus, s.v0, va0, vm0);
    std::vector<double> x = state_from_voltage(s.ix, s.v0);
    for (std::size_t k = 0; k < x.size(); ++k) x[k] += 0.01 * double(k % 7);  // no symmetric point
    const forward::SparsityPattern p = s.pattern.csc();
    forward::SparseJacobian<PfResidual> sj(p, res);
    const forward::PatternCheck ok = sj.verify_pattern(x);
    EXPECT_TRUE(ok.ok()) << path << ": " << ok.message();
    // the same residual with column 0's first entry left out of the pattern is caught
    forward::SparsityPattern q = p;
    q.row_idx.erase(q.row_idx.begin());
    for (std::size_t j = 1; j < q.col_ptr.size(); ++j) --q.col_ptr[j];
    forward::SparseJacobian<PfResidual> missing(q, res, {.mode = forward::JacobianMode::RowLocal});
    const forward::PatternCheck bad = missing.verify_pattern(x);
    EXPECT_EQ(bad.violations, 1) << path;
    EXPECT_EQ(bad.row, p.row_idx[0]);
    EXPECT_EQ(bad.col, 0);
  }
}

TEST(PowerflowNewton, ConvergesOnBuiltInCase) {
  const Case c = read_matpower(pftest::pf6_path());
  NewtonResult ad = solve(c);
  ASSERT_TRUE(ad.converged) << to_string(ad.status);
  EXPECT_STREQ(to_string(ad.status), "converged");
  EXPECT_LE(ad.iterations, 5);
  EXPECT_LT(ad.max_mismatch, 1e-8);
  EXPECT_LT(pftest::recomputed_mismatch(c, ad), 1e-8);
  EXPECT_EQ(ad.vm[0], 1.02);  // reference magnitude and angle kept
  EXPECT_EQ(ad.va_deg[0], 0.0);
  EXPECT_NEAR(ad.vm[1], 1.01, 1e-12);  // PV setpoint
  EXPECT_EQ(static_cast<int>(ad.mismatch_history.size()), ad.iterations + 1);
  SolveOptions o;
  o.jacobian = JacobianMethod::Analytic;
  NewtonResult an = solve(c, o);
  ASSERT_TRUE(an.converged);
  EXPECT_EQ(an.iterations, ad.iterations);
  for (std::size_t b = 0; b < c.buses.size(); ++b) {
    EXPECT_NEAR(an.vm[b], ad.vm[b], 1e-12);
    EXPECT_NEAR(an.va_deg[b], ad.va_deg[b], 1e-10);
  }
  o = {};
  o.flat_start = true;
  NewtonResult flat = solve(c, o);
  ASSERT_TRUE(flat.converged);
  for (std::size_t b = 0; b < c.buses.size(); ++b) {
    EXPECT_NEAR(flat.vm[b], ad.vm[b], 1e-8);
    EXPECT_NEAR(flat.va_deg[b], ad.va_deg[b], 1e-6);
  }
  // a synthetic meshed network with phase shifters
  const Case syn = synthetic_case(200, 9);
  NewtonResult rs = solve(syn);
  ASSERT_TRUE(rs.converged) << to_string(rs.status);
  EXPECT_LT(pftest::recomputed_mismatch(syn, rs), 1e-8);
}

TEST(PowerflowNewton, QLimits) {
  const Case c = read_matpower(pftest::pf6_path());
  SolveOptions o;
  o.q_limits = true;
  const NewtonResult r = solve(c, o);
  ASSERT_TRUE(r.converged) << to_string(r.status);
  EXPECT_EQ(r.solves, 2);
  EXPECT_EQ(r.buses_switched, 1);
  EXPECT_EQ(r.bus_type[1], PQ);  // bus 20's generator hits Qmin = -30 MVAr
  EXPECT_EQ(r.bus_type[5], PV);
  // At bus 20 the reactive injection + Qd equals the limit; bus 60's two generators share
  // a Q inside their summed range.
  const Network net = make_network(c);
  auto injection = [&](int i) {
    cplx s = 0;
    for (std::int32_t e = net.row_ptr[i]; e < net.row_ptr[i + 1]; ++e) {
      const int j = net.col_idx[e];
      s += net.y_row[e] * std::polar(r.vm[j], r.va_deg[j] * M_PI / 180);
    }
    return std::polar(r.vm[i], r.va_deg[i] * M_PI / 180) * std::conj(s) * 100.0;
  };
  EXPECT_NEAR(injection(1).imag() + 10.0, -30.0, 1e-5);
  const double q60 = injection(5).imag();
  EXPECT_GT(q60, -55.0);
  EXPECT_LT(q60, 35.0);
  // Without Q limits the generator sits below its Qmin.
  const NewtonResult plain = solve(c);
  const double q20 = [&] {
    cplx s = 0;
    for (std::int32_t e = net.row_ptr[1]; e < net.row_ptr[2]; ++e) {
      const int j = net.col_idx[e];
      s += net.y_row[e] * std::polar(plain.vm[j], plain.va_deg[j] * M_PI / 180);
    }
    return (std::polar(plain.vm[1], plain.va_deg[1] * M_PI / 180) * std::conj(s)).imag() * 100.0 + 10.0;
  }();
  EXPECT_LT(q20, -30.0);
}

TEST(PowerflowNewton, FailuresAreReturned) {
  const Case c = read_matpower(pftest::pf6_path());
  SolveOptions o;
  o.max_iter = 1;
  NewtonResult r = solve(c, o);
  EXPECT_FALSE(r.converged);
  EXPECT_STREQ(to_string(r.status), "max_iter");
  EXPECT_EQ(r.iterations, 1);
  EXPECT_GT(r.max_mismatch, 1e-8);
  EXPECT_EQ(r.mismatch_history.size(), 2u);

  // Loads far beyond what the network can carry: no solution.
  Case heavy = c;
  for (auto& b : heavy.buses) {
    b.pd *= 40;
    b.qd *= 40;
  }
  r = solve(heavy);
  EXPECT_FALSE(r.converged);
  EXPECT_TRUE(r.status == NewtonStatus::MaxIter || r.status == NewtonStatus::Diverged || r.status == NewtonStatus::Singular) << to_string(r.status);

  // A PQ bus starting at V = 0: dS/dVm = V/|V| is undefined, the Jacobian cannot be factored.
  Case zero = c;
  zero.buses[3].vm = 0.0;
  r = solve(zero);
  EXPECT_FALSE(r.converged);
  EXPECT_STREQ(to_string(r.status), "singular");

  // Q limits that no generator at a PV or reference bus can meet, all on the same side:
  // MATPOWER's infeasibility rule.
  Case tight = c;
  for (auto& gk : tight.gens)
    if (tight.buses[gk.bus].type != PQ) gk.qmax = gk.qmin = -200.0;
  o = {};
  o.q_limits = true;
  r = solve(tight, o);
  EXPECT_FALSE(r.converged);
  EXPECT_STREQ(to_string(r.status), "infeasible");

  o = {};
  o.tol = -1;
  EXPECT_THROW(solve(c, o), Error);
}
