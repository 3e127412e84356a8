// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/consumer/consumer.cpp — uses the installed stardiff: runs a two-task graph on
// StarPU and on the sequential executor and checks the answer. Exit 0 on success.
#include <cstdio>

#include <stardiff/stardiff.hpp>

using namespace stardiff;

static void scale_add(const TaskContext& t) {
  double a = t.arg<double>();
  auto x = t.buffers[0].span<double>();
  for (auto& v : x) v = a * v + 1.0;
}
static const Codelet cl_scale_add("consumer_scale_add", scale_add);

static double run(Executor& ex) {
  VectorHandle<double> x(100, "x", 1.0);
  ex.submit(cl_scale_add, 2.0, {inout(x)});
  ex.submit(cl_scale_add, 3.0, {inout(x)});
  ex.wait_all();
  auto g = x.acquire();
  return x.data()[99];
}

int main() {
  SequentialExecutor se;
  double a = run(se);
  Runtime rt;
  StarpuExecutor pe;
  double b = run(pe);
  std::printf("consumer: stardiff %s, sequential %g, starpu %g\n", STARDIFF_VERSION, a, b);
  return (a == 10.0 && b == 10.0) ? 0 : 1;
}
