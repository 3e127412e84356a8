// SPDX-License-Identifier: LGPL-2.1-or-later
// bench/forward_jacobian — forward-mode sparse Jacobian timings on the power-flow residual
// of MATPOWER cases (the powerflow module's PfResidual, Ybus and Sbus, at a fixed state):
//   colour_<order>    color_columns time and colour count
//   residual          F on double (sequential)
//   analytic          powerflow::analytic_jacobian, MATPOWER's dSbus_dV per non-zero (the peer)
//   ad_w<W>           SparseJacobian<F, W> values + F, sequential executor
//   ad_dense          SparseJacobian<F, 96>: one Dual<96> pass over every row (c <= 96)
//   rl_w<W>           SparseJacobian<F, W> in RowLocal mode (each row alone, no colouring)
//   ad_w8_starpu, rl_w8_starpu  the same under the StarPU executor (runtime started
//                     after the sequential runs: idle StarPU workers poll the cores)
// Each figure is the median of --repeats (>= 5) interleaved runs (time_ms wall, cpu_ms
// of the calling thread: the StarPU rows' work runs on worker threads); ratio = wall
// time / analytic wall time.
// Exit 1 when an AD Jacobian differs from the analytic one by more than 1e-12 relative.
// Usage: forward_jacobian [--repeats K] [--only KEY] CASE.m ...  (default: ../shared/data case9241pegase)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "stardiff/powerflow.hpp"
#include "stardiff/stardiff.hpp"

using namespace stardiff;
using namespace stardiff::forward;
using powerflow::PfResidual;

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
double cpu_now() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double rel_err(const std::vector<double>& a, const std::vector<double>& b) {
  double e = 0, s = 0;
  for (std::size_t k = 0; k < a.size(); ++k) e = std::max(e, std::abs(a[k] - b[k])), s = std::max(s, std::abs(b[k]));
  return e / s;
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 7;
  std::string only;  // --only KEY: time one variant (and the analytic peer), for profiling
  std::vector<std::string> cases;
  for (int a = 1; a < argc; ++a) {
    if (!std::strcmp(argv[a], "--help")) {
      std::fprintf(stderr, "usage: forward_jacobian [--repeats K] [--only KEY] CASE.m ...\n");
      return 0;
    }
    if (!std::strcmp(argv[a], "--repeats") && a + 1 < argc) repeats = std::max(5, std::atoi(argv[++a]));
    else if (!std::strcmp(argv[a], "--only") && a + 1 < argc) only = argv[++a];
    else cases.push_back(argv[a]);
  }
  if (cases.empty()) {
    const char* d = std::getenv("STARDIFF_SHARED_DATA");
    cases.push_back(std::string(d ? d : "../shared/data") + "/matpower/case9241pegase.m");
  }
  int status = 0;
  SequentialExecutor seq;
  // StarPU workers poll while idle: the runtime lives only for the StarPU measurements.
  std::unique_ptr<Runtime> rt;
  for (const auto& path : cases) {
    powerflow::JacobianProblem pf;
    try {
      pf = powerflow::make_jacobian_problem(powerflow::read_matpower(path));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "forward_jacobian: %s: %s\n", path.c_str(), e.what());
      return 2;
    }
    const std::string name = path.substr(path.find_last_of('/') + 1);
    const auto p = pf.pattern.csc();
    for (ColorOrder o : {ColorOrder::Natural, ColorOrder::LargestFirst, ColorOrder::SmallestLast,
                         ColorOrder::IncidenceDegree, ColorOrder::Best}) {
      std::vector<double> t, tc;
      Coloring c;
      for (int r = 0; r < (only.empty() ? repeats : 1); ++r) {
        const double t0 = now(), c0 = cpu_now();
        c = color_columns(p, o);
        t.push_back(now() - t0);
        tc.push_back(cpu_now() - c0);
      }
      std::printf("forward_jacobian case=%s op=colour_%s n=%d nnz=%d colors=%d lower_bound=%d time_ms=%.3f cpu_ms=%.3f\n",
                  name.c_str(), to_string(o), p.n_cols, p.nnz(), c.num_colors, c.lower_bound, 1e3 * median(t),
                  1e3 * median(tc));
    }
    std::vector<double> va0, vm0;
    const PfResidual res = powerflow::make_residual(pf.net, pf.ix, pf.sbus, pf.v0, va0, vm0);
    std::vector<double> x(p.n_cols);
    for (std::size_t j = 0; j < x.size(); ++j)
      x[j] = (j < std::size_t(pf.ix.npvpq()) ? 0.01 * std::sin(double(j)) : 1.0 + 0.01 * std::cos(double(j)));
    const auto V = powerflow::voltage_from_state(pf.ix, va0, vm0, x);
    const auto coloring = color_columns(p, ColorOrder::Best);
    const auto to_csc = pf.pattern.csr_to_csc();
    std::vector<double> csr;  // analytic values, CSR layout of pf.pattern
    auto analytic = [&] { powerflow::analytic_jacobian(pf.net, pf.ix, pf.pattern, pf.sbus, V, csr); };
    SparseJacobian<PfResidual, 4> j4(p, coloring, res);
    SparseJacobian<PfResidual, 8> j8(p, coloring, res);
    SparseJacobian<PfResidual, 16> j16(p, coloring, res);
    SparseJacobian<PfResidual, 32> j32(p, coloring, res);
    SparseJacobian<PfResidual, 96> jd(p, coloring, res);
    SparseJacobian<PfResidual, 8> j8s(p, coloring, res);
    const JacobianOptions rl{.mode = JacobianMode::RowLocal};
    SparseJacobian<PfResidual, 4> r4(p, res, rl);
    SparseJacobian<PfResidual, 8> r8(p, res, rl);
    SparseJacobian<PfResidual, 16> r16(p, res, rl);
    SparseJacobian<PfResidual, 8> r8s(p, res, rl);
    std::vector<double> ref(p.nnz()), vals(p.nnz()), f(p.n_rows);
    analytic();
    for (std::size_t k = 0; k < csr.size(); ++k) ref[to_csc[k]] = csr[k];
    std::map<std::string, std::vector<double>> t, tc;
    std::map<std::string, double> err;
    std::map<std::string, std::int64_t> rows_eval;
    auto run = [&](const std::string& key, const std::function<void()>& fn) {
      if (!only.empty() && key != only && key != "analytic") return;
      const double t0 = now(), c0 = cpu_now();
      fn();
      t[key].push_back(now() - t0);
      tc[key].push_back(cpu_now() - c0);
    };
    for (int r = 0; r < repeats; ++r) {
      run("residual", [&] { res(RowRange{0, p.n_rows}, x.data(), f.data()); });
      run("analytic", analytic);
      run("ad_w4", [&] { j4.jacobian(seq, x, vals, f); });
      err["ad_w4"] = rel_err(vals, ref);
      run("ad_w8", [&] { j8.jacobian(seq, x, vals, f); });
      err["ad_w8"] = rel_err(vals, ref);
      run("ad_w16", [&] { j16.jacobian(seq, x, vals, f); });
      err["ad_w16"] = rel_err(vals, ref);
      run("ad_w32", [&] { j32.jacobian(seq, x, vals, f); });
      err["ad_w32"] = rel_err(vals, ref);
      run("rl_w4", [&] { r4.jacobian(seq, x, vals, f); });
      err["rl_w4"] = rel_err(vals, ref);
      run("rl_w8", [&] { r8.jacobian(seq, x, vals, f); });
      err["rl_w8"] = rel_err(vals, ref);
      run("rl_w16", [&] { r16.jacobian(seq, x, vals, f); });
      err["rl_w16"] = rel_err(vals, ref);
      if (coloring.num_colors <= 96) {
        run("ad_dense", [&] { jd.jacobian(seq, x, vals, f); });
        err["ad_dense"] = rel_err(vals, ref);
      }
    }
    if (only.empty() || only.find("starpu") != std::string::npos) rt = std::make_unique<Runtime>();
    if (rt) {
      StarpuExecutor star;
      for (int r = 0; r < repeats; ++r) {
        run("ad_w8_starpu", [&] { j8s.jacobian(star, x, vals, f); });
        err["ad_w8_starpu"] = rel_err(vals, ref);
        run("rl_w8_starpu", [&] { r8s.jacobian(star, x, vals, f); });
        err["rl_w8_starpu"] = rel_err(vals, ref);
      }
    }
    rt.reset();
    rows_eval["ad_w4"] = j4.plan().evaluated_rows;
    rows_eval["ad_w8"] = j8.plan().evaluated_rows;
    rows_eval["ad_w16"] = j16.plan().evaluated_rows;
    rows_eval["ad_w32"] = j32.plan().evaluated_rows;
    rows_eval["ad_dense"] = jd.plan().evaluated_rows;
    rows_eval["ad_w8_starpu"] = j8s.plan().evaluated_rows;
    rows_eval["rl_w4"] = r4.plan().evaluated_rows;
    rows_eval["rl_w8"] = r8.plan().evaluated_rows;
    rows_eval["rl_w16"] = r16.plan().evaluated_rows;
    rows_eval["rl_w8_starpu"] = r8s.plan().evaluated_rows;
    const double ta = median(t["analytic"]);
    for (const char* key : {"residual", "analytic", "ad_w4", "ad_w8", "ad_w16", "ad_w32", "ad_dense", "rl_w4", "rl_w8",
                            "rl_w16", "ad_w8_starpu", "rl_w8_starpu"}) {
      if (!t.count(key)) continue;
      std::printf("forward_jacobian case=%s op=%s colors=%d time_ms=%.3f cpu_ms=%.3f", name.c_str(), key,
                  coloring.num_colors, 1e3 * median(t[key]), 1e3 * median(tc[key]));
      if (rows_eval.count(key)) std::printf(" rows_evaluated=%lld max_rel_err=%.3g", (long long)rows_eval[key], err[key]);
      std::printf(" ratio=%.3f\n", median(t[key]) / ta);
      if (rows_eval.count(key) && !(err[key] <= 1e-12)) {
        std::fprintf(stderr, "forward_jacobian: %s %s differs from the analytic Jacobian (%.3g)\n", name.c_str(), key,
                     err[key]);
        status = 1;
      }
    }
  }
  return status;
}
