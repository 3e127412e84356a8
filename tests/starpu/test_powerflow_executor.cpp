// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/starpu/test_powerflow_executor.cpp — Newton power flow under the StarPU executor
// equals the sequential executor bit for bit (rows are computed independently, KLU sees the
// same matrix): built-in pf6 with 1, 2 and 3 bus blocks, with and without Q limits, and
// case1354pegase from the shared data when present (4 blocks). Run under eager, lws, dmda.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <map>
#include <utility>

#include "stardiff/powerflow.hpp"
#include "stardiff/stardiff.hpp"
#include "unit/test_powerflow_support.hpp"
#include "runtime_environment.hpp"

using namespace stardiff;
using namespace stardiff::powerflow;

namespace {
void expect_identical(const Case& c, SolveOptions o) {
  SequentialExecutor seq;
  StarpuExecutor spu;
  o.executor = &seq;
  const NewtonResult a = solve(c, o);
  o.executor = &spu;
  const NewtonResult b = solve(c, o);
  ASSERT_TRUE(a.converged) << c.name << " " << to_string(a.status);
  ASSERT_TRUE(b.converged) << c.name << " " << to_string(b.status);
  EXPECT_EQ(a.iterations, b.iterations);
  EXPECT_EQ(a.solves, b.solves);
  EXPECT_EQ(a.mismatch_history, b.mismatch_history);
  EXPECT_EQ(a.vm, b.vm);
  EXPECT_EQ(a.va_deg, b.va_deg);
  EXPECT_EQ(a.bus_type, b.bus_type);
  EXPECT_EQ(a.colors, b.colors);
  EXPECT_GT(spu.tasks_submitted(), 0u);
}
}  // namespace

TEST(PowerflowStarpu, BuiltInCaseMatchesSequential) {
  const Case c = read_matpower(pftest::pf6_path());
  for (int blocks : {1, 2, 3})
    for (bool qlim : {false, true})
      for (auto jac : {JacobianMethod::AD, JacobianMethod::ADDense, JacobianMethod::Analytic}) {
        SolveOptions o;
        o.blocks = blocks;
        o.q_limits = qlim;
        o.jacobian = jac;
        expect_identical(c, o);
      }
}

TEST(PowerflowStarpu, PegaseCaseMatchesSequential) {
  const std::string dir = pftest::matpower_dir();
  if (dir.empty()) GTEST_SKIP() << "no ../shared/data/matpower";
  const Case c = read_matpower(dir + "/case1354pegase.m");
  SolveOptions o;
  o.blocks = 4;
  expect_identical(c, o);
  o.q_limits = true;
  expect_identical(c, o);
}

// solve() on StarPU through a RecordingExecutor: the result and the tasks per codelet.
std::pair<NewtonResult, std::map<std::string, std::size_t>> recorded_solve(const Case& c, SolveOptions o) {
  StarpuExecutor spu;
  RecordingExecutor rec(&spu);
  o.executor = &rec;
  NewtonResult r = solve(c, o);
  return {std::move(r), rec.counts()};
}

TEST(PowerflowStarpu, TaskGraphShape) {
  // Iteration k = J_k (one pf_jacobian_ad per block) -> L_k (pf_linsolve) -> U_k (pf_update)
  // -> M_k (one pf_mismatch per block). Steps 1..iterations move V, L_{iterations+1} sees
  // convergence, and iteration iterations + 2 was already queued ahead (its tasks skip).
  const Case c = read_matpower(pftest::pf6_path());
  SolveOptions o;
  o.blocks = 2;
  auto [r, counts] = recorded_solve(c, o);
  ASSERT_TRUE(r.converged);
  ASSERT_LE(r.iterations + 2, o.max_iter);
  const std::size_t submitted = r.iterations + 2;
  EXPECT_EQ(counts["pf_jacobian_ad"], 2 * submitted);
  EXPECT_EQ(counts["pf_linsolve"], submitted);
  EXPECT_EQ(counts["pf_update"], submitted);
  EXPECT_EQ(counts["pf_mismatch"], 2 * (submitted + 1));
  EXPECT_EQ(counts["host_step"], 2u);  // network, system set-up (run_on_worker / WorkerStep)
  EXPECT_EQ(counts["pf_step"], 4u);    // colouring, ordering, KLU analysis, colour maps
  EXPECT_EQ(r.mismatch_history.size(), static_cast<std::size_t>(r.iterations + 1));
  EXPECT_EQ(r.klu_factors + r.klu_refactors, r.iterations);  // the skipped iteration factors nothing
}

TEST(PowerflowStarpu, IterationLimitStopsTheQueuedIterations) {
  // max_iter = 2 on a case that needs more: two steps, then the final check L_3 reports
  // max_iter; nothing is queued past it, and the result equals the sequential executor's.
  const Case c = read_matpower(pftest::pf6_path());
  SolveOptions o;
  o.blocks = 2;
  o.max_iter = 2;
  o.tol = 1e-14;
  auto [r, counts] = recorded_solve(c, o);
  EXPECT_FALSE(r.converged);
  EXPECT_STREQ(to_string(r.status), "max_iter");
  EXPECT_EQ(r.iterations, 2);
  EXPECT_EQ(counts["pf_linsolve"], 3u);
  EXPECT_EQ(counts["pf_jacobian_ad"], 4u);
  SolveOptions so = o;
  so.executor = nullptr;
  const NewtonResult s = solve(c, so);
  EXPECT_STREQ(to_string(s.status), "max_iter");
  ASSERT_EQ(s.vm.size(), r.vm.size());
  for (std::size_t b = 0; b < s.vm.size(); ++b) {
    EXPECT_EQ(s.vm[b], r.vm[b]);
    EXPECT_EQ(s.va_deg[b], r.va_deg[b]);
  }
  EXPECT_EQ(s.max_mismatch, r.max_mismatch);
}

TEST(PowerflowStarpu, SetUpErrorsComeBackFromTheTasks) {
  // The file parses, but once the reference bus's only generator is out of service and no
  // PV bus is left, bus_types has no reference: the set-up task's Error reaches the caller
  // unchanged under both executors (not a later crash on a half-built network).
  std::ifstream in(pftest::pf6_path());
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (auto [from, to] : {std::pair<std::string, std::string>{"\t10\t0\t0\t300\t-300\t1.02\t100\t1\t", "\t10\t0\t0\t300\t-300\t1.02\t100\t0\t"},
                          {"\t20\t2\t20", "\t20\t1\t20"},
                          {"\t60\t2\t0", "\t60\t1\t0"}}) {
    const auto at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  }
  const Case c = parse_matpower(text, "noref.m");
  StarpuExecutor spu;
  SequentialExecutor seq;
  for (Executor* ex : {static_cast<Executor*>(&spu), static_cast<Executor*>(&seq)}) {
    SolveOptions o;
    o.executor = ex;
    try {
      solve(c, o);
      FAIL() << "no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("no reference bus"), std::string::npos) << e.what();
    }
  }
}
