// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/unit/test_runtime_handles.cpp — handles, partitions, the sequential and
// recording executors without any StarPU runtime.
#include <gtest/gtest.h>

#include <set>

#include "support/core/cl_blas1.hpp"
#include "stardiff/stardiff.hpp"

using namespace stardiff;
using namespace stardiff::codelets;

TEST(Handles, ShapesAndNames) {
  MatrixHandle<double> m(4, 3, "m");
  EXPECT_EQ(m.kind(), HandleKind::Matrix);
  EXPECT_EQ(m.nx(), 4u);
  EXPECT_EQ(m.ny(), 3u);
  EXPECT_EQ(m.ld(), 4u);
  EXPECT_EQ(m.name(), "m");
  m(1, 2) = 5.0;
  EXPECT_EQ(m.data()[1 + 2 * 4], 5.0);
  VariableHandle<int> v(7, "v");
  EXPECT_EQ(v.value(), 7);
  EXPECT_EQ(v.elemsize(), sizeof(int));
  BlockHandle<float> b(2, 3, 4, "b");
  EXPECT_EQ(b.host_view().ldz, 6u);
}

TEST(Handles, MisuseIsAnError) {
  double d[4];
  EXPECT_THROW(Handle::matrix(d, 4, 1, 2, sizeof(double)), Error);  // ld < nx
  EXPECT_THROW(Handle::vector(nullptr, 3, sizeof(double)), Error);
  EXPECT_THROW(Handle::vector(d, 3, 0), Error);
  Handle empty;
  EXPECT_THROW((void)empty.kind(), Error);
  VectorHandle<double> x(5, "x");
  EXPECT_THROW(x.partition(6), Error);
  EXPECT_THROW(x.partition(0), Error);
  VariableHandle<double> s(0.0, "s");
  EXPECT_THROW(s.partition(1), Error);
  SequentialExecutor se;
  EXPECT_THROW(insert_axpy(se, 1.0, x, empty), Error);
  VectorHandle<double> moved = std::move(x);
  EXPECT_FALSE(x.valid());
  EXPECT_TRUE(moved.valid());
  EXPECT_THROW(insert_scal(se, 1.0, x), Error);
  EXPECT_THROW(Codelet("nameless_cpu", nullptr), Error);
}

TEST(Handles, PartitionSplitsLikeStarpuBlockFilters) {
  VectorHandle<double> x(10, "x");
  auto p = x.partition(4);
  ASSERT_EQ(p.size(), 4u);
  std::size_t sizes[4] = {3, 3, 2, 2};
  const double* expect = x.data();
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(p[i].host_view().nx, sizes[i]);
    EXPECT_EQ(p[i].host_view().ptr, expect);
    expect += sizes[i];
  }
  MatrixHandle<double> m(5, 7, "m");
  auto pm = m.partition(3);
  EXPECT_EQ(pm[0].host_view().ny, 3u);
  EXPECT_EQ(pm[2].host_view().ny, 2u);
  EXPECT_EQ(pm[1].host_view().ptr, m.data() + 3 * 5);
}

TEST(SequentialExecutor, RunsAtSubmissionAndReportsFailures) {
  VectorHandle<double> x(3, "x", 2.0), y(3, "y", 1.0);
  SequentialExecutor se;
  insert_axpy(se, 3.0, x, y);
  EXPECT_EQ(y.data()[2], 7.0);  // ran already
  static const Codelet cl_fail("fail", [](const TaskContext& t) { t.fail("bad value 42"); });
  se.submit(cl_fail, {inout(y)}, {.name = "checker"});
  try {
    se.wait_all();
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "task 'checker' failed: bad value 42");
  }
  EXPECT_EQ(se.tasks_submitted(), 2u);
}

TEST(RecordingExecutor, CommuteGroupsAndDot) {
  VectorHandle<double> a(2, "a", 1.0), acc(2, "acc", 0.0);
  SequentialExecutor se;
  RecordingExecutor rec(&se);
  insert_scal(rec, 2.0, a);                                       // 0: W a
  static const Codelet cl_acc("acc", [](const TaskContext& t) {
    t.buffers[1].data<double>()[0] += t.buffers[0].data<double>()[0];
  });
  rec.submit(cl_acc, {in(a), commute(acc)});                      // 1
  rec.submit(cl_acc, {in(a), commute(acc)});                      // 2
  insert_scal(rec, 0.5, acc);                                     // 3
  rec.wait_all();
  EXPECT_EQ(acc.data()[0], 2.0);
  auto e = rec.edges();
  std::set<std::pair<std::size_t, std::size_t>> es(e.begin(), e.end());
  EXPECT_TRUE(es.count({0, 1}));
  EXPECT_TRUE(es.count({0, 2}));
  EXPECT_FALSE(es.count({1, 2}));  // commuting: no order between them
  EXPECT_TRUE(es.count({1, 3}));
  EXPECT_TRUE(es.count({2, 3}));
  EXPECT_EQ(rec.counts().at("acc"), 2u);
  RecordingExecutor only;  // record without running
  insert_scal(only, 2.0, a);
  EXPECT_EQ(a.data()[0], 2.0);
  EXPECT_EQ(only.tasks_submitted(), 1u);
}
