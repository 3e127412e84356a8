// SPDX-License-Identifier: LGPL-2.1-or-later
// bench/pf_batch/pf_batch.cpp — a batch of load scenarios against one-at-a-time solves.
//
//   pf_batch [--case FILE.m] [--scenarios K] [--repeats R] [--seed S] [--scale LO,HI]
//            [--tasks T] [--no-cold]
// K scale-only scenarios (random_scenarios(K, S, LO, HI); default 200, 1, 0.95, 1.05) of one
// case (default case9241pegase of the shared data), R interleaved repeats (default 3) of:
//   batch_starpu      solve_batch on the StarPU executor (T tasks; default one per worker)
//   batch_sequential  solve_batch on the sequential executor (one thread)
//   loop_warm         what a user does without a batch: per scenario the Case with its loads
//                     replaced and Vm/Va set to the base solution (built before the timer),
//                     then powerflow::solve on the StarPU executor — Ybus, colouring, KLU
//                     analysis and the task graph again for every scenario; the same start
//                     point and the same iterations as the batch
//   loop_cold         the same from the case's own start point (MATPOWER's V0), as a runpf
//                     on the modified case would start (--no-cold skips it)
// Lines: `pf_batch case=C scenarios=K what=W median_s=T min_s= max_s= per_scenario_s= ...`,
// then `what=agreement` (batch vs loop_warm: equal iteration counts, max |dVm|, |dVa| rad,
// failures) and `what=ratio ratio=loop_warm/batch_starpu ratio_cold=loop_cold/batch_starpu
// ratio_sequential=loop_warm/batch_sequential` (medians).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "stardiff/powerflow.hpp"
#include "stardiff/stardiff.hpp"

using namespace stardiff;
using namespace stardiff::powerflow;

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Series {
  std::vector<double> t;
  double median() const {
    std::vector<double> s = t;
    std::sort(s.begin(), s.end());
    const std::size_t n = s.size();
    return n == 0 ? 0 : n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
  }
  double min() const { return t.empty() ? 0 : *std::min_element(t.begin(), t.end()); }
  double max() const { return t.empty() ? 0 : *std::max_element(t.begin(), t.end()); }
};

[[noreturn]] void die(const std::string& m) {
  std::fprintf(stderr, "pf_batch: %s\n", m.c_str());
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  const char* shared = std::getenv("STARDIFF_SHARED_DATA");
  std::string path = std::string(shared ? shared : "../shared/data") + "/matpower/case9241pegase.m";
  int K = 200, R = 3, tasks = 0;
  unsigned long long seed = 1;
  double lo = 0.95, hi = 1.05;
  bool cold = true;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) die(a + " needs a value");
      return argv[++i];
    };
    if (a == "--case") path = next();
    else if (a == "--scenarios") K = std::atoi(next().c_str());
    else if (a == "--repeats") R = std::atoi(next().c_str());
    else if (a == "--seed") seed = std::strtoull(next().c_str(), nullptr, 10);
    else if (a == "--tasks") tasks = std::atoi(next().c_str());
    else if (a == "--no-cold") cold = false;
    else if (a == "--scale") {
      const std::string v = next();
      const auto comma = v.find(',');
      if (comma == std::string::npos) die("--scale needs LO,HI");
      lo = std::atof(v.substr(0, comma).c_str());
      hi = std::atof(v.substr(comma + 1).c_str());
    } else die("unknown argument '" + a + "'");
  }
  if (K < 1 || R < 1 || tasks < 0) die("--scenarios and --repeats must be >= 1, --tasks >= 0");

  Case c;
  try {
    c = read_matpower(path);
  } catch (const Error& e) {
    std::printf("pf_batch case=%s skipped=%s\n", path.c_str(), e.what());
    return 0;
  }
  Runtime rt;
  StarpuExecutor spu;
  SequentialExecutor seq;
  const std::vector<Scenario> sc = random_scenarios(K, seed, lo, hi);

  // The users' cases, built once before any timer.
  BatchOptions bo;
  bo.executor = &spu;
  bo.tasks = tasks;
  bo.keep_voltages = true;
  const BatchResult ref = solve_batch(c, sc, bo);
  std::vector<Case> warm(K), coldc(K);
  for (int s = 0; s < K; ++s) {
    coldc[s] = scenario_case(c, sc[s]);
    warm[s] = coldc[s];
    if (ref.base.converged)
      for (std::size_t b = 0; b < c.buses.size(); ++b) {
        warm[s].buses[b].vm = ref.base.vm[b];
        warm[s].buses[b].va = ref.base.va_deg[b];
      }
  }
  SolveOptions so;
  so.executor = &spu;

  Series bs, bq, lw, lc;
  std::vector<NewtonResult> loop(K);
  int tasks_used = 0, iters = 0;
  for (int r = 0; r < R; ++r) {
    bo.keep_voltages = false;
    bo.executor = &spu;
    double t0 = now_s();
    const BatchResult b = solve_batch(c, sc, bo);
    bs.t.push_back(now_s() - t0);
    tasks_used = b.tasks;

    t0 = now_s();
    for (int s = 0; s < K; ++s) loop[s] = solve(warm[s], so);
    lw.t.push_back(now_s() - t0);

    bo.executor = &seq;
    t0 = now_s();
    const BatchResult q = solve_batch(c, sc, bo);
    bq.t.push_back(now_s() - t0);
    iters = 0;
    for (const auto& x : q.scenarios) iters += x.iterations;

    if (cold) {
      t0 = now_s();
      for (int s = 0; s < K; ++s) (void)solve(coldc[s], so);
      lc.t.push_back(now_s() - t0);
    }
  }

  int cold_iters = 0;
  if (cold)
    for (int s = 0; s < K; ++s) cold_iters += solve(coldc[s], so).iterations;
  bool iters_equal = true;
  double dvm = 0, dva = 0;
  int loop_iters = 0;
  for (int s = 0; s < K; ++s) {
    const ScenarioResult& x = ref.scenarios[s];
    loop_iters += loop[s].iterations;
    iters_equal &= x.iterations == loop[s].iterations && x.converged == loop[s].converged;
    for (std::size_t b = 0; b < x.vm.size(); ++b) {
      dvm = std::max(dvm, std::fabs(x.vm[b] - loop[s].vm[b]));
      dva = std::max(dva, std::fabs(x.va_deg[b] - loop[s].va_deg[b]) * M_PI / 180);
    }
  }
  auto line = [&](const char* what, const Series& t, const char* extra) {
    std::printf("pf_batch case=%s scenarios=%d what=%s median_s=%.6g min_s=%.6g max_s=%.6g repeats=%d "
                "per_scenario_s=%.6g%s\n",
                c.name.c_str(), K, what, t.median(), t.min(), t.max(), R, t.median() / K, extra);
  };
  char extra[160];
  std::snprintf(extra, sizeof extra, " tasks=%d workers=%d iterations=%d", tasks_used, spu.concurrency(), iters);
  line("batch_starpu", bs, extra);
  line("batch_sequential", bq, " tasks=1");
  std::snprintf(extra, sizeof extra, " iterations=%d", loop_iters);
  line("loop_warm", lw, extra);
  if (cold) {
    std::snprintf(extra, sizeof extra, " iterations=%d", cold_iters);
    line("loop_cold", lc, extra);
  }
  std::printf("pf_batch case=%s what=agreement scenarios=%d iterations_equal=%d failed=%d max_dvm=%.3g max_dva_rad=%.3g "
              "base_converged=%d\n",
              c.name.c_str(), K, iters_equal ? 1 : 0, ref.failed, dvm, dva, ref.base.converged ? 1 : 0);
  std::printf("pf_batch case=%s what=ratio ratio=%.3g ratio_cold=%.3g ratio_sequential=%.3g\n", c.name.c_str(),
              lw.median() / bs.median(), cold ? lc.median() / bs.median() : 0.0, lw.median() / bq.median());
  return 0;
}
