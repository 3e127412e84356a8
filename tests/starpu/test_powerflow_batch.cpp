// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/starpu/test_powerflow_batch.cpp — powerflow::solve_batch: every scenario of a
// generated scenario file (scale rows and per-bus overrides, written and read back) equals
// solve() on the case a user would build for it (loads replaced, Vm/Va = the base solution)
// to 1e-10 in Vm and Va with the same iteration count, on case9 (in the tree) and case14 /
// case118 (shared data, when present); the base case equals solve(); a scenario with loads
// x10 is reported as not converged and leaves the others unchanged bit for bit; StarPU (any
// task count) and the sequential executor agree bit for bit. Run under eager, lws, dmda.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "stardiff/powerflow.hpp"
#include "stardiff/stardiff.hpp"
#include "runtime_environment.hpp"
#include "unit/test_powerflow_support.hpp"

using namespace stardiff;
using namespace stardiff::powerflow;

namespace {

std::vector<std::string> case_paths() {
  std::vector<std::string> p{pftest::source_dir() + "/apps/pf/data/case9.m"};
  const std::string dir = pftest::matpower_dir();
  if (!dir.empty())
    for (const char* n : {"case14.m", "case118.m"}) p.push_back(dir + "/" + n);
  return p;
}

// Scale-only scenarios in [0.85, 1.15] and, every third one, three buses with loads of
// their own (absolute values: 1.2 x the case's, plus 5 MW at a bus without load).
std::vector<Scenario> make_scenarios(const Case& c, int k, std::uint64_t seed) {
  std::vector<Scenario> s = random_scenarios(k, seed, 0.85, 1.15);
  for (int i = 0; i < k; i += 3) {
    int added = 0;
    for (std::size_t b = (i * 7) % c.buses.size(); added < 3 && b < c.buses.size(); ++b) {
      const Bus& bus = c.buses[b];
      s[i].loads.push_back({static_cast<int>(b), bus.pd != 0 ? 1.2 * bus.pd : 5.0, 1.2 * bus.qd});
      ++added;
    }
  }
  return s;
}

void expect_same(const ScenarioResult& a, const ScenarioResult& b) {
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.iterations, b.iterations);
  EXPECT_EQ(a.max_mismatch, b.max_mismatch);
  EXPECT_EQ(a.vm, b.vm);
  EXPECT_EQ(a.va_deg, b.va_deg);
}

}  // namespace

TEST(PowerflowBatch, EqualsOneAtATimeSolves) {
  StarpuExecutor spu;
  for (const std::string& path : case_paths()) {
    SCOPED_TRACE(path);
    const Case c = read_matpower(path);
    const std::vector<Scenario> made = make_scenarios(c, 9, 7);
    const std::string file = ::testing::TempDir() + "pf_batch_scenarios.csv";
    write_scenarios(file, c, made);
    const std::vector<Scenario> sc = read_scenarios(file, c);
    ASSERT_EQ(sc.size(), made.size());
    for (std::size_t s = 0; s < sc.size(); ++s) {
      EXPECT_EQ(sc[s].p_scale, made[s].p_scale);
      ASSERT_EQ(sc[s].loads.size(), made[s].loads.size());
      for (std::size_t l = 0; l < sc[s].loads.size(); ++l) {
        EXPECT_EQ(sc[s].loads[l].bus, made[s].loads[l].bus);
        EXPECT_EQ(sc[s].loads[l].pd, made[s].loads[l].pd);
      }
    }
    BatchOptions o;
    o.executor = &spu;
    o.keep_voltages = true;
    const BatchResult r = solve_batch(c, sc, o);
    ASSERT_TRUE(r.base.converged);
    const NewtonResult base = solve(c);
    EXPECT_EQ(r.base.iterations, base.iterations);
    EXPECT_EQ(r.base.vm, base.vm);
    EXPECT_EQ(r.base.va_deg, base.va_deg);
    EXPECT_EQ(r.failed, 0);
    ASSERT_EQ(r.scenarios.size(), sc.size());
    int moved = 0;
    for (std::size_t s = 0; s < sc.size(); ++s) {
      SCOPED_TRACE("scenario " + std::to_string(s));
      Case cs = scenario_case(c, sc[s]);
      for (std::size_t b = 0; b < cs.buses.size(); ++b) {
        cs.buses[b].vm = r.base.vm[b];
        cs.buses[b].va = r.base.va_deg[b];
      }
      const NewtonResult one = solve(cs);
      const ScenarioResult& x = r.scenarios[s];
      ASSERT_TRUE(one.converged);
      ASSERT_TRUE(x.converged);
      EXPECT_EQ(x.iterations, one.iterations);
      EXPECT_GE(x.iterations, 1);
      EXPECT_LT(x.max_mismatch, o.tol);
      ASSERT_EQ(x.vm.size(), one.vm.size());
      for (std::size_t b = 0; b < x.vm.size(); ++b) {
        EXPECT_NEAR(x.vm[b], one.vm[b], 1e-10) << "bus " << b;
        EXPECT_NEAR(x.va_deg[b] * M_PI / 180, one.va_deg[b] * M_PI / 180, 1e-10) << "bus " << b;
        moved += std::fabs(x.vm[b] - r.base.vm[b]) > 1e-6;
      }
    }
    EXPECT_GT(moved, 0);  // the scenarios did change the solution
  }
}

TEST(PowerflowBatch, DivergingScenarioIsReportedAndOthersUnchanged) {
  const Case c = read_matpower(pftest::source_dir() + "/apps/pf/data/case9.m");
  std::vector<Scenario> sc(3);
  sc[0].p_scale = sc[0].q_scale = 0.9;
  sc[1].p_scale = sc[1].q_scale = 10.0;  // far beyond the network's capacity
  sc[2].p_scale = sc[2].q_scale = 1.1;
  StarpuExecutor spu;
  BatchOptions o;
  o.executor = &spu;
  o.keep_voltages = true;
  o.tasks = 1;  // the bad scenario shares a task (and its workspace) with the others
  const BatchResult r = solve_batch(c, sc, o);
  ASSERT_EQ(r.scenarios.size(), 3u);
  EXPECT_EQ(r.failed, 1);
  EXPECT_FALSE(r.scenarios[1].converged);
  EXPECT_NE(r.scenarios[1].status, NewtonStatus::Converged);
  EXPECT_TRUE(r.scenarios[0].converged);
  EXPECT_TRUE(r.scenarios[2].converged);
  const BatchResult good = solve_batch(c, {sc[0], sc[2]}, o);
  EXPECT_EQ(good.failed, 0);
  expect_same(r.scenarios[0], good.scenarios[0]);
  expect_same(r.scenarios[2], good.scenarios[1]);
}

TEST(PowerflowBatch, ExecutorsAndTaskCountsAgreeBitwise) {
  const std::vector<std::string> paths = case_paths();
  const Case c = read_matpower(paths.back());
  const std::vector<Scenario> sc = make_scenarios(c, 12, 3);
  SequentialExecutor seq;
  BatchOptions o;
  o.keep_voltages = true;
  o.executor = &seq;
  o.tasks = 1;
  const BatchResult a = solve_batch(c, sc, o);
  ASSERT_EQ(a.failed, 0);
  for (int tasks : {0, 2, 5, 12}) {
    SCOPED_TRACE("tasks " + std::to_string(tasks));
    StarpuExecutor spu;
    o.executor = &spu;
    o.tasks = tasks;
    const BatchResult b = solve_batch(c, sc, o);
    EXPECT_GT(spu.tasks_submitted(), 0u);
    EXPECT_EQ(b.tasks, tasks == 0 ? std::min<int>(12, spu.concurrency()) : tasks);
    ASSERT_EQ(b.scenarios.size(), a.scenarios.size());
    for (std::size_t s = 0; s < sc.size(); ++s) expect_same(a.scenarios[s], b.scenarios[s]);
  }
}

TEST(PowerflowBatch, BadOptionsThrow) {
  const Case c = read_matpower(pftest::source_dir() + "/apps/pf/data/case9.m");
  BatchOptions o;
  o.tol = 0;
  EXPECT_THROW(solve_batch(c, {Scenario{}}, o), Error);
  o = {};
  Scenario bad;
  bad.loads.push_back({static_cast<int>(c.buses.size()), 1, 1});
  EXPECT_THROW(solve_batch(c, {bad}, o), Error);
  EXPECT_THROW(random_scenarios(3, 1, 1.2, 0.8), Error);
}
