// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/starpu/test_runtime_environment.cpp — STARPU_* variables that StarPU would abort
// on (or silently misread) are refused by Runtime with an Error naming the variable,
// before StarPU starts; the process keeps going and a later Runtime starts normally.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "stardiff/stardiff.hpp"
#include "support/scoped_env.hpp"

using namespace stardiff;

namespace {
using stardiff::testing::ScopedEnv;

// The message Runtime throws under name=value, or "" if the runtime started.
std::string start_error(const char* name, const char* value) {
  ScopedEnv env(name, value);
  try {
    Runtime rt;
    return "";
  } catch (const Error& e) {
    EXPECT_FALSE(Runtime::active()) << "a refused runtime must not count as alive";
    return e.what();
  }
}

void expect_refused(const char* name, const char* value, const char* why) {
  const std::string msg = start_error(name, value);
  EXPECT_NE(msg.find(name), std::string::npos) << name << "=" << value << ": " << msg;
  EXPECT_NE(msg.find(why), std::string::npos) << name << "=" << value << ": " << msg;
}
}  // namespace

TEST(RuntimeEnvironment, MalformedCountsAreRefusedByName) {
  expect_refused("STARPU_NCPU", "-1", "non-negative integer");
  expect_refused("STARPU_NCPU", "abc", "non-negative integer");
  expect_refused("STARPU_NCPU", "2x", "non-negative integer");
  expect_refused("STARPU_NCPU", "", "non-negative integer");
  expect_refused("STARPU_NCUDA", "0x1", "non-negative integer");
  expect_refused("STARPU_CALIBRATE", "yes", "non-negative integer");
  expect_refused("STARPU_LIMIT_CPU_MEM", "-5", "non-negative integer");
  expect_refused("STARPU_SCHED_ALPHA", "abc", "finite number");
}

TEST(RuntimeEnvironment, UnknownSchedulerIsRefusedWithTheKnownOnes) {
  const std::string msg = start_error("STARPU_SCHED", "nosuch");
  EXPECT_NE(msg.find("STARPU_SCHED"), std::string::npos) << msg;
  EXPECT_NE(msg.find("eager"), std::string::npos) << msg;
  EXPECT_NE(msg.find("dmda"), std::string::npos) << msg;
  RuntimeOptions o;
  o.scheduler = "nosuch";
  EXPECT_THROW({ Runtime rt(o); }, Error);
  EXPECT_FALSE(Runtime::active());
}

TEST(RuntimeEnvironment, DirectoriesThatCannotBeCreatedAreRefused) {
  expect_refused("STARPU_HOME", "/proc/stardiff-cannot-exist", "cannot be created");
  expect_refused("STARPU_PERF_MODEL_DIR", "/proc/stardiff-cannot-exist", "cannot be created");
}

TEST(RuntimeEnvironment, DiskSwapBackendAndSizeAreChecked) {
  expect_refused("STARPU_DISK_SWAP_BACKEND", "unistdd", "no StarPU disk backend");
  {
    const std::string dir = ::testing::TempDir() + "stardiff_swap_check";
    ScopedEnv swap("STARPU_DISK_SWAP", dir.c_str());
    expect_refused("STARPU_DISK_SWAP_SIZE", "15", "minimum disk size (16 MB)");
    // The disk node the checkpointing tests use starts, and StarPU lists it.
    ScopedEnv backend("STARPU_DISK_SWAP_BACKEND", "unistd");
    ScopedEnv size("STARPU_DISK_SWAP_SIZE", "64");
    ScopedEnv limit("STARPU_LIMIT_CPU_MEM", "64");
    Runtime rt;
    bool disk = false, cpu_limited = false;
    for (const MemoryNodeInfo& m : rt.memory_nodes()) {
      if (m.kind == "disk") {
        disk = true;
        EXPECT_EQ(m.limit, 64LL << 20);
        EXPECT_EQ(m.used(), 0);
      }
      if (m.kind == "cpu" && m.limit == 64LL << 20) cpu_limited = true;
    }
    EXPECT_TRUE(disk);
    EXPECT_TRUE(cpu_limited);
  }
}

TEST(RuntimeEnvironment, WellFormedValuesStillStart) {
  EXPECT_EQ(start_error("STARPU_NCPU", "+2"), "");
  EXPECT_EQ(start_error("STARPU_CALIBRATE", "0"), "");
  EXPECT_EQ(start_error("STARPU_SCHED_ALPHA", "1.5"), "");
  // After refusals, a runtime with the test's own environment starts and runs tasks.
  Runtime rt;
  EXPECT_GE(rt.worker_count(), 1);
}

// StarPU-MPI switch: a bad STARDIFF_MPI is refused by name; STARDIFF_MPI=0 (and no mpirun
// here) starts plain StarPU on one rank, where handle owners have no effect.
TEST(RuntimeEnvironment, MpiSwitchIsChecked) {
  expect_refused("STARDIFF_MPI", "yes", "neither 0 nor 1");
  expect_refused("STARDIFF_MPI", "2", "neither 0 nor 1");
  ScopedEnv off("STARDIFF_MPI", "0");
  EXPECT_FALSE(mpi_requested_by_environment());
  Runtime rt;
  EXPECT_FALSE(rt.mpi());
  EXPECT_EQ(rt.rank(), 0);
  EXPECT_EQ(rt.size(), 1);
  EXPECT_EQ(mpi_size(), 1);
  VectorHandle<double> v(4, "v");
  EXPECT_THROW(v.set_owner(-7), Error);
  v.set_owner(3);  // no MPI: recorded, no effect on where tasks run
  EXPECT_EQ(v.owner(), 3);
  StarpuExecutor ex;
  struct Fill {
    static void cpu(const TaskContext& t) { t.buffers[0].data<double>()[0] = 5.0; }
  };
  static const Codelet cl("env_fill", &Fill::cpu);
  ex.submit(cl, {out(v)});
  ex.wait_all();
  EXPECT_EQ(v.data()[0], 5.0);
  EXPECT_THROW(v.set_owner(0), Error);  // registered: the owner is fixed
}

// MPI requested from a build without StarPU-MPI is an Error saying so.
TEST(RuntimeEnvironment, MpiWithoutStarpuMpiIsRefused) {
  if (stardiff_mpi_built()) GTEST_SKIP() << "this build has StarPU-MPI";
  RuntimeOptions o;
  o.mpi = 1;
  try {
    Runtime rt(o);
    FAIL() << "started";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("built without StarPU-MPI"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(Runtime::active());
}
