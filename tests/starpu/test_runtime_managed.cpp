// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/starpu/test_runtime_managed.cpp — Handle::managed_vector: StarPU-allocated (no host
// pointer) when a StarPU executor uses it first, readable through acquire(); host memory when
// a SequentialExecutor (or acquire without StarPU) uses it first; a SequentialExecutor task on
// a StarPU-allocated one and partitioning are Errors; destruction does not wait for tasks.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "runtime_environment.hpp"
#include "stardiff/stardiff.hpp"
#include "support/error_text.hpp"

using namespace stardiff;

namespace {
// buffer 0 (W) = i + offset
void fill_cpu(const TaskContext& t) {
  const double off = *static_cast<const double*>(t.args);
  auto v = t.buffers[0].span<double>();
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i) + off;
}
// buffer 1 (W) = 2 * buffer 0 (R)
void twice_cpu(const TaskContext& t) {
  auto a = t.buffers[0].span<double>();
  auto b = t.buffers[1].span<double>();
  for (std::size_t i = 0; i < a.size(); ++i) b[i] = 2.0 * a[i];
}
// Waits (at most 20 s) until the test releases it, then writes buffer 0 (W) = 1; g_seen: 1 if
// it was released, 0 if it gave up.
std::atomic<bool> g_release{false};
std::atomic<int> g_seen{-1};
void slow_cpu(const TaskContext& t) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!g_release.load() && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  g_seen = g_release.load() ? 1 : 0;
  for (double& x : t.buffers[0].span<double>()) x = 1.0;
}
const Codelet& fill() {
  static const Codelet c("managed_fill", &fill_cpu);
  return c;
}
const Codelet& twice() {
  static const Codelet c("managed_twice", &twice_cpu);
  return c;
}
const Codelet& slow() {
  static const Codelet c("managed_slow", &slow_cpu);
  return c;
}
}  // namespace

TEST(RuntimeManaged, StarpuAllocatesItAndAcquireReadsIt) {
  StarpuExecutor pe;
  Handle m = Handle::managed_vector(1000, sizeof(double), "m");
  EXPECT_TRUE(m.managed());
  VectorHandle<double> out(1000, "out");
  const double off = 3.0;
  pe.submit(fill(), off, {stardiff::out(m)});
  pe.submit(twice(), {in(m), stardiff::out(out)});
  pe.wait_all();
  EXPECT_EQ(m.host_view().ptr, nullptr) << "StarPU allocates it: no host pointer of ours";
  {
    auto g = m.acquire(Access::R);
    ASSERT_NE(g.data(), nullptr);
    const double* p = static_cast<const double*>(g.data());
    EXPECT_EQ(p[0], 3.0);
    EXPECT_EQ(p[999], 1002.0);
  }
  {
    auto g = out.acquire(Access::R);
    EXPECT_EQ(out.data()[10], 26.0);
  }
  SequentialExecutor se;
  EXPECT_ERROR_HAS(se.submit(fill(), off, {stardiff::out(m)}), "managed handle", "'m'");
  EXPECT_ERROR_HAS(m.partition(2), "cannot be partitioned");
}

TEST(RuntimeManaged, SequentialFirstGivesHostMemory) {
  SequentialExecutor se;
  Handle m = Handle::managed_vector(10, sizeof(double), "m_seq");
  EXPECT_EQ(m.host_view().ptr, nullptr);
  const double off = 0.5;
  se.submit(fill(), off, {stardiff::out(m)});
  ASSERT_NE(m.host_view().ptr, nullptr);
  EXPECT_EQ(m.host_view().data<double>()[9], 9.5);
  // Later StarPU tasks use that memory (registered as ordinary main-RAM data).
  StarpuExecutor pe;
  VectorHandle<double> out(10, "out_seq");
  pe.submit(twice(), {in(m), stardiff::out(out)});
  pe.wait_all();
  auto g = out.acquire(Access::R);
  EXPECT_EQ(out.data()[9], 19.0);
}

TEST(RuntimeManaged, AcquireBeforeAnyTaskGivesZeroedHostMemory) {
  Handle m = Handle::managed_vector(4, sizeof(double), "m_acq");
  auto g = m.acquire(Access::RW);
  ASSERT_NE(g.data(), nullptr);
  EXPECT_EQ(static_cast<double*>(g.data())[3], 0.0);
}

TEST(RuntimeManaged, DestructionDoesNotWaitForItsTasks) {
  StarpuExecutor pe;
  {
    Handle m = Handle::managed_vector(8, sizeof(double), "m_slow");
    pe.submit(slow(), {stardiff::out(m)});
  }  // returns while the task still waits for g_release; StarPU frees m after it
  g_release = true;
  pe.wait_all();
  EXPECT_EQ(g_seen.load(), 1) << "the destructor waited for the task (which gave up after 20 s)";
}
