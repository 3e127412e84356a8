// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/starpu/test_runtime_lifecycle.cpp — Runtime RAII and misuse: a second live
// runtime, StarPU failing to start, handles outliving their runtime, STARPU_HOME and
// BLAS threading. Each test owns its runtime (no global one in this binary).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "support/core/cl_blas1.hpp"
#include "stardiff/stardiff.hpp"
#include "support/scoped_env.hpp"

extern "C" int openblas_get_num_threads(void) __attribute__((weak));

using namespace stardiff;

namespace {
using stardiff::testing::ScopedEnv;
}  // namespace

TEST(RuntimeLifecycle, SecondLiveRuntimeIsAnError) {
  Runtime rt;
  EXPECT_TRUE(Runtime::active());
  try {
    Runtime second;
    FAIL() << "a second runtime started";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("already alive"), std::string::npos);
  }
  EXPECT_TRUE(Runtime::active());  // the first one is untouched
  EXPECT_EQ(rt.cpu_workers(), 2);
}

TEST(RuntimeLifecycle, NoWorkerIsAClearErrorAndRecoverable) {
  {
    ScopedEnv ncpu("STARPU_NCPU", "0");
    ScopedEnv nocl("STARPU_NOPENCL", "0");
    ScopedEnv ncuda("STARPU_NCUDA", "0");
    try {
      Runtime rt;
      FAIL() << "StarPU started without workers";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("starpu_init failed"), std::string::npos);
    }
    EXPECT_FALSE(Runtime::active());
  }
  Runtime rt;  // a later start works
  EXPECT_GE(rt.worker_count(), 1);
}

TEST(RuntimeLifecycle, HandleUsedAfterRuntimeEndedIsAnError) {
  VectorHandle<double> x(8, "x", 1.0), y(8, "y", 0.0);
  {
    Runtime rt;
    StarpuExecutor ex;
    codelets::insert_axpy(ex, 2.0, x, y);
    ex.wait_all();
    auto g = y.acquire();
    EXPECT_EQ(y.data()[3], 2.0);
  }
  EXPECT_FALSE(Runtime::active());
  SequentialExecutor se;
  try {
    codelets::insert_axpy(se, 1.0, x, y);
    FAIL() << "stale handle accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("runtime that has ended"), std::string::npos);
  }
  Runtime rt2;
  StarpuExecutor ex2;
  EXPECT_THROW(codelets::insert_axpy(ex2, 1.0, x, y), Error);
  EXPECT_THROW((void)y.acquire(), Error);
  // Fresh handles work with the new runtime; the stale ones can still be destroyed.
  VectorHandle<double> a(8, "a", 1.0), b(8, "b", 1.0);
  codelets::insert_axpy(ex2, 1.0, a, b);
  ex2.wait_all();
  auto g = b.acquire();
  EXPECT_EQ(b.data()[0], 2.0);
}

TEST(RuntimeLifecycle, ExecutorNeedsARuntime) {
  EXPECT_FALSE(Runtime::active());
  EXPECT_THROW(StarpuExecutor ex, Error);
  EXPECT_THROW(make_executor("starpu"), Error);
  EXPECT_THROW(make_executor("bogus"), Error);
  EXPECT_STREQ(make_executor("sequential")->kind(), "sequential");
}

TEST(RuntimeLifecycle, StarpuHomeAndBlasThreads) {
  // ctest sets STARPU_HOME to the build tree: it must be kept as the user set it.
  const char* before = std::getenv("STARPU_HOME");
  Runtime rt;
  const char* after = std::getenv("STARPU_HOME");
  ASSERT_NE(after, nullptr);
  if (before) EXPECT_EQ(std::string(before), std::string(after));
  if (openblas_get_num_threads) EXPECT_EQ(openblas_get_num_threads(), 1);
}

TEST(RuntimeLifecycle, SchedulerHonoursEnvironment) {
  Runtime rt;
  const char* s = std::getenv("STARPU_SCHED");
  if (s) EXPECT_EQ(rt.scheduler(), std::string(s));
  auto b = starpu_build();
  EXPECT_GE(b.maxcpus, 1);
  EXPECT_GE(b.nmaxbufs, 1);
}

TEST(RuntimeLifecycle, PauseHoldsTasksUntilResume) {
  Runtime rt;
  VectorHandle<double> x(4, "x", 1.0), y(4, "y", 0.0);
  StarpuExecutor ex;
  codelets::insert_axpy(ex, 1.0, x, y);
  {
    PausedWorkers paused(rt);  // waits for the first task
    EXPECT_TRUE(rt.paused());
    EXPECT_EQ(y.data()[0], 1.0);
    EXPECT_THROW(rt.pause(), Error);
    codelets::insert_axpy(ex, 1.0, x, y);  // queued, runs after resume
  }
  EXPECT_FALSE(rt.paused());
  ex.wait_all();
  auto g = y.acquire();
  EXPECT_EQ(y.data()[0], 2.0);
  EXPECT_THROW(rt.resume(), Error);
}
