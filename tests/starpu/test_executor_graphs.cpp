// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/starpu/test_executor_graphs.cpp — StarPU runs of small graphs equal the
// sequential executor's results: a diamond, a long RW chain, a partitioned vector,
// COMMUTE accumulation and a REDUX reduction; the recorded graph's cost-weighted critical
// path on a known graph; fork-join codelets. Run under eager, lws and dmda (ctest), the
// ForkJoin tests also under peager and pheft with 4 CPU workers (combined workers).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <set>
#include <thread>

#include "support/core/blas1.hpp"
#include "support/core/cl_blas1.hpp"
#include "stardiff/stardiff.hpp"
#include "runtime_environment.hpp"

using namespace stardiff;
using namespace stardiff::codelets;

namespace {
// diamond: a feeds b and c, both feed d
void diamond(Executor& ex, std::vector<double>& out) {
  VectorHandle<double> a(100, "a", 1.0), b(100, "b", 0.0), c(100, "c", 0.0), d(100, "d", 0.0);
  for (std::size_t i = 0; i < 100; ++i) a.data()[i] = double(i);
  insert_axpy(ex, 2.0, a, b);  // b = 2a
  insert_axpy(ex, 3.0, a, c);  // c = 3a
  insert_axpy(ex, 1.0, b, d);  // d = 2a
  insert_axpy(ex, -1.0, c, d); // d = -a
  insert_scal(ex, 4.0, d);     // d = -4a
  ex.wait_all();
  auto g = d.acquire(Access::R);
  out.assign(d.data(), d.data() + 100);
}

void chain(Executor& ex, std::vector<double>& out) {
  VectorHandle<double> x(50, "x", 1.0), y(50, "y", 0.0);
  for (int k = 0; k < 200; ++k) {
    insert_axpy(ex, 1.0 / (k + 1), x, y);
    insert_scal(ex, 0.99, y);
  }
  ex.wait_all();
  auto g = y.acquire();
  out.assign(y.data(), y.data() + 50);
}

void partitioned(Executor& ex, std::vector<double>& out) {
  VectorHandle<double> x(1003, "x"), y(1003, "y");
  for (std::size_t i = 0; i < 1003; ++i) {
    x.data()[i] = std::sin(double(i));
    y.data()[i] = 1.0;
  }
  {
    auto px = x.partition(7);
    auto py = y.partition(7);
    for (std::size_t p = 0; p < 7; ++p) {
      insert_axpy(ex, double(p + 1), px[p], py[p]);
      insert_scal(ex, 0.5, py[p]);
    }
  }
  insert_scal(ex, 2.0, y);  // whole vector again after the gather
  ex.wait_all();
  auto g = y.acquire();
  out.assign(y.data(), y.data() + 1003);
}

const Codelet cl_add_const("add_const", [](const TaskContext& t) {
  auto v = t.buffers[0];
  double c = t.arg<double>();
  for (std::size_t i = 0; i < v.nx; ++i) v.data<double>()[i] += c;
});

void commuting(Executor& ex, std::vector<double>& out) {
  VectorHandle<double> acc(10, "acc", 0.0);
  for (int k = 1; k <= 64; ++k) ex.submit(cl_add_const, double(k), {commute(acc)});
  insert_scal(ex, 0.5, acc);
  ex.wait_all();
  auto g = acc.acquire();
  out.assign(acc.data(), acc.data() + 10);
}

const Codelet cl_sum_into("sum_into", [](const TaskContext& t) {
  const auto& x = t.buffers[0];
  *t.buffers[1].data<double>() += cpu::sum_cpu(x.nx, x.data<double>());
});

// Sum of integers-valued parts: exact in any order, so REDUX must equal sequential bitwise.
void reduction(Executor& ex, double& out) {
  VectorHandle<double> x(4000, "x");
  for (std::size_t i = 0; i < 4000; ++i) x.data()[i] = double(i % 17);
  VariableHandle<double> s(5.0, "s");
  s.set_reduction(cl_sum_init, cl_sum_reduce);
  {
    auto px = x.partition(16);
    for (std::size_t p = 0; p < 16; ++p) ex.submit(cl_sum_into, {in(px[p]), redux(s)});
  }
  ex.wait_all();
  auto g = s.acquire();
  out = s.value();
}
}  // namespace

TEST(ExecutorGraphs, DiamondMatchesSequential) {
  std::vector<double> seq, par;
  SequentialExecutor se;
  diamond(se, seq);
  StarpuExecutor pe;
  diamond(pe, par);
  for (std::size_t i = 0; i < 100; ++i) EXPECT_EQ(seq[i], -4.0 * double(i));
  EXPECT_EQ(seq, par);
  EXPECT_EQ(pe.tasks_submitted(), 5u);
}

TEST(ExecutorGraphs, LongChainMatchesSequential) {
  std::vector<double> seq, par;
  SequentialExecutor se;
  chain(se, seq);
  StarpuExecutor pe;
  chain(pe, par);
  double y = 0;
  for (int k = 0; k < 200; ++k) y = (y + 1.0 / (k + 1)) * 0.99;
  EXPECT_EQ(seq[0], y);
  EXPECT_EQ(seq, par);
}

TEST(ExecutorGraphs, PartitionedVectorMatchesSequential) {
  std::vector<double> seq, par;
  SequentialExecutor se;
  partitioned(se, seq);
  StarpuExecutor pe;
  partitioned(pe, par);
  // part p covers 1003/7 = 143 (+1 for the first 2 parts) entries
  std::size_t off = 0;
  for (std::size_t p = 0; p < 7; ++p) {
    std::size_t len = 143 + (p < 2 ? 1 : 0);
    for (std::size_t i = off; i < off + len; ++i)
      EXPECT_EQ(seq[i], 2.0 * (0.5 * (1.0 + double(p + 1) * std::sin(double(i)))));
    off += len;
  }
  EXPECT_EQ(seq, par);
}

TEST(ExecutorGraphs, CommuteAccumulation) {
  std::vector<double> seq, par;
  SequentialExecutor se;
  commuting(se, seq);
  StarpuExecutor pe;
  commuting(pe, par);
  for (double v : seq) EXPECT_EQ(v, 0.5 * 64 * 65 / 2);
  EXPECT_EQ(seq, par);
}

TEST(ExecutorGraphs, ReduxReduction) {
  double seq = 0, par = 0;
  SequentialExecutor se;
  reduction(se, seq);
  StarpuExecutor pe;
  reduction(pe, par);
  double expect = 5.0;
  for (int i = 0; i < 4000; ++i) expect += double(i % 17);
  EXPECT_EQ(seq, expect);
  EXPECT_EQ(par, expect);
}

TEST(ExecutorGraphs, RecordingExecutorCountsAndEdges) {
  SequentialExecutor se;
  RecordingExecutor rec(&se);
  std::vector<double> out;
  diamond(rec, out);
  EXPECT_EQ(out[3], -12.0);
  auto counts = rec.counts();
  EXPECT_EQ(counts["axpy"], 4u);
  EXPECT_EQ(counts["scal"], 1u);
  auto e = rec.edges();
  // b,c independent of each other; d waits on b and c (through d's RW chain)
  std::set<std::pair<std::size_t, std::size_t>> es(e.begin(), e.end());
  EXPECT_TRUE(es.count({0, 2}));
  EXPECT_TRUE(es.count({1, 3}));
  EXPECT_TRUE(es.count({2, 3}));
  EXPECT_TRUE(es.count({3, 4}));
  EXPECT_FALSE(es.count({0, 1}));
  EXPECT_NE(rec.to_dot().find("t0 -> t2"), std::string::npos);
}

TEST(ExecutorGraphs, CriticalPathOfKnownGraph) {
  // a(2) -> b(5), a -> c(1); b, c -> d (fork-join, cost 12, span 2); c -> e(3). Recorded
  // only. Longest chain a b d: 2 + 5 + max(12 / width, 2); a c e is 6; work 23.
  static const Codelet cl_seq("cp_seq", [](const TaskContext&) {});
  static const Codelet cl_fj("cp_fork_join", [](const TaskContext&) {}, Parallelism::ForkJoin);
  VariableHandle<int> x(0, "x"), y(0, "y"), z(0, "z"), w(0, "w"), v(0, "v");
  RecordingExecutor rec;
  rec.submit(cl_seq, {out(x)}, {.name = "a", .cost = 2});
  rec.submit(cl_seq, {in(x), out(y)}, {.name = "b", .cost = 5});
  rec.submit(cl_seq, {in(x), out(z)}, {.name = "c", .cost = 1});
  rec.submit(cl_fj, {in(y), in(z), out(w)}, {.name = "d", .cost = 12, .span = 2});
  rec.submit(cl_seq, {in(z), out(v)}, {.name = "e", .cost = 3});
  EXPECT_TRUE(rec.tasks()[3].fork_join);
  EXPECT_FALSE(rec.tasks()[0].fork_join);
  const auto p1 = rec.critical_path();
  EXPECT_EQ(p1.work, 23.0);
  EXPECT_EQ(p1.length, 19.0);
  EXPECT_EQ(p1.path, (std::vector<std::size_t>{0, 1, 3}));
  EXPECT_EQ(rec.critical_path(4).length, 10.0);   // d weighs 3
  EXPECT_EQ(rec.critical_path(16).length, 9.0);   // d weighs its span, 2
  // a heavier e makes a c e the critical chain once d is shared
  rec.submit(cl_seq, {inout(v)}, {.name = "f", .cost = 7});
  EXPECT_EQ(rec.critical_path(1).length, 19.0);
  const auto p16 = rec.critical_path(16);
  EXPECT_EQ(p16.length, 13.0);
  EXPECT_EQ(p16.path, (std::vector<std::size_t>{0, 2, 4, 5}));
  EXPECT_THROW(rec.critical_path(0), Error);
}

TEST(ExecutorGraphs, ForkJoinCodeletGetsItsCombinedWorker) {
  // A fork-join task sees threads >= 1 and at most the executor's parallel_width(); its
  // result does not depend on it. Under peager/pheft with 4 CPUs the width is at least 3.
  static const Codelet cl_fj(
      "fork_join_fill",
      [](const TaskContext& t) {
        auto* d = t.buffers[0].data<double>();
        for (std::size_t i = 0; i < t.buffers[0].nx; ++i) d[i] = double(i) * 0.5;
        *t.buffers[1].data<int>() = t.threads;
      },
      Parallelism::ForkJoin);
  StarpuExecutor pe;
  const int width = pe.parallel_width();
  ASSERT_GE(width, 1);
  const char* sched = std::getenv("STARPU_SCHED");
  if (sched && (!std::strcmp(sched, "peager") || !std::strcmp(sched, "pheft")) && pe.concurrency() >= 4)
    EXPECT_GE(width, 3);
  if (sched && (!std::strcmp(sched, "eager") || !std::strcmp(sched, "lws") || !std::strcmp(sched, "dmda")))
    EXPECT_EQ(width, 1);
  std::vector<VectorHandle<double>> vs;
  std::vector<VariableHandle<int>> ts;
  for (int k = 0; k < 8; ++k) vs.emplace_back(1000, "v"), ts.emplace_back(0, "threads");
  for (int k = 0; k < 8; ++k) pe.submit(cl_fj, {out(vs[k]), out(ts[k])});
  pe.wait_all();
  int most = 0;
  for (int k = 0; k < 8; ++k) {
    auto g = vs[k].acquire(Access::R);
    EXPECT_EQ(vs[k].data()[999], 499.5);
    auto h = ts[k].acquire(Access::R);
    const int threads = *static_cast<const int*>(h.data());
    EXPECT_GE(threads, 1);
    EXPECT_LE(threads, width);
    most = std::max(most, threads);
  }
  std::printf("fork-join tasks: parallel_width %d, most threads given %d\n", width, most);
}

TEST(ExecutorGraphs, KernelFailureRaisedAfterWaitWithTaskName) {
  static const Codelet cl_bad("bad", [](const TaskContext& t) { throw std::runtime_error("boom"); });
  VectorHandle<double> v(4, "v");
  StarpuExecutor pe;
  pe.submit(cl_bad, {inout(v)}, {.name = "bad_task_7"});
  try {
    pe.wait_all();
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad_task_7"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("boom"), std::string::npos);
  }
  pe.wait_all();  // cleared: no second throw
}

TEST(ExecutorGraphs, WrongHandleTypeOrSizeRejected) {
  VectorHandle<double> x(10, "x");
  VectorHandle<float> yf(10, "yf");
  MatrixHandle<double> m(3, 3, "m");
  StarpuExecutor pe;
  EXPECT_THROW(insert_axpy(pe, 1.0, x, yf), Error);  // float vector
  EXPECT_THROW(insert_axpy(pe, 1.0, x, m), Error);   // matrix
  VectorHandle<double> y5(5, "y5");
  insert_axpy(pe, 1.0, x, y5);  // size mismatch detected by the kernel
  EXPECT_THROW(pe.wait_all(), Error);
  SequentialExecutor se;
  EXPECT_THROW(insert_axpy(se, 1.0, x, m), Error);
  VariableHandle<double> s(0.0, "s");
  EXPECT_THROW(pe.submit(cl_add_const, 1.0, {redux(s)}), Error);  // no reduction methods
}

TEST(ExecutorGraphs, ManyBuffersBeyondNmaxbufs) {
  static const Codelet cl_sum_all("sum_all", [](const TaskContext& t) {
    double s = 0;
    for (std::size_t i = 1; i < t.buffers.size(); ++i) s += t.buffers[i].data<double>()[0];
    *t.buffers[0].data<double>() = s;
  });
  std::vector<VectorHandle<double>> xs;
  for (int i = 0; i < 20; ++i) xs.emplace_back(1, "x" + std::to_string(i), double(i));
  VectorHandle<double> out(1, "out");
  std::vector<DataAccess> acc{{&out, Access::W}};
  for (auto& x : xs) acc.push_back(in(x));
  StarpuExecutor pe;
  pe.submit(cl_sum_all, acc, nullptr, 0, {});
  pe.wait_all();
  auto g = out.acquire();
  EXPECT_EQ(out.data()[0], 190.0);
}

TEST(ExecutorGraphs, RunOnWorkerRunsOneTaskAndRethrows) {
  // StarPU: fn runs on a worker thread, the caller waits for it alone (a long task
  // submitted before keeps running); its exception comes back unchanged. Sequential:
  // fn runs on the caller.
  const auto caller = std::this_thread::get_id();
  StarpuExecutor spu;
  SequentialExecutor seq;
  for (Executor* ex : {static_cast<Executor*>(&spu), static_cast<Executor*>(&seq)}) {
    std::thread::id ran_on;
    int value = 0;
    run_on_worker(*ex, "probe", [&] {
      ran_on = std::this_thread::get_id();
      value = 42;
    });
    EXPECT_EQ(value, 42);
    if (ex == &seq) EXPECT_EQ(ran_on, caller);
    else EXPECT_NE(ran_on, caller);
    try {
      run_on_worker(*ex, "thrower", [] { throw Error("bad matrix at line 7"); });
      FAIL() << "no exception";
    } catch (const Error& e) {
      EXPECT_STREQ(e.what(), "bad matrix at line 7");
    }
    EXPECT_NO_THROW(ex->wait_all());  // nothing was recorded as a kernel failure
  }
}
