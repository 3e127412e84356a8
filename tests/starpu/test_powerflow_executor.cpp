// tests/starpu/test_powerflow_executor.cpp — Newton power flow under the StarPU executor
// equals the sequential executor bit for bit (rows are computed independently, KLU sees the
// same matrix): built-in pf6 with 1, 2 and 3 bus blocks, with and without Q limits, and
// case1354pegase from the shared data when present (4 blocks). Run under eager, lws, dmda.
#include <gtest/gtest.h>

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
  ASSERT_TRUE(a.converged) << c.name << " " << a.status;
  ASSERT_TRUE(b.converged) << c.name << " " << b.status;
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

TEST(PowerflowStarpu, TaskGraphShape) {
  // One pf_jacobian_ad and one pf_linsolve per iteration and block, pf_mismatch per evaluation.
  const Case c = read_matpower(pftest::pf6_path());
  StarpuExecutor spu;
  RecordingExecutor rec(&spu);
  SolveOptions o;
  o.executor = &rec;
  o.blocks = 2;
  const NewtonResult r = solve(c, o);
  ASSERT_TRUE(r.converged);
  auto counts = rec.counts();
  EXPECT_EQ(counts["pf_jacobian_ad"], static_cast<std::size_t>(2 * r.iterations));
  EXPECT_EQ(counts["pf_linsolve"], static_cast<std::size_t>(r.iterations));
  EXPECT_EQ(counts["pf_update"], static_cast<std::size_t>(r.iterations));
  EXPECT_EQ(counts["pf_mismatch"], static_cast<std::size_t>(2 * (r.iterations + 1)));
  EXPECT_EQ(counts["pf_step"], 4u);  // network, system set-up, colouring, KLU analysis
}
