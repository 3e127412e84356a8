// SPDX-License-Identifier: LGPL-2.1-or-later
// bench/pf_vs_peers/pf_vs_peers.cpp — power flow: stardiff's pieces side by side with peers.
//
//   pf_vs_peers [--data DIR] [--repeats R] [--cases a,b,...] [--files x.m,y.m]
//               [--executor starpu|sequential|both]
// For each case (default: all *.m of the shared MATPOWER data that are present) and R >= 5
// interleaved repeats, times (median, seconds):
//   residual       mismatch F(V) on double (all rows)
//   ad_jacobian    coloured forward-mode AD on Dual<N> touching only structurally non-zero
//                  partials (this module's Newton path)
//   ad_dense_jacobian  the same sweep carrying all N partials (classical compressed Jacobian)
//   generic_ad     forward::SparseJacobian over the templated PfResidual (Dual<8> chunks)
//   analytic       per-non-zero MATPOWER dSbus_dV assembly (the peer formulas)
//   fd_jacobian    coloured central finite differences (2 residuals per colour)
//   klu_factor / klu_refactor / klu_solve  on the Jacobian at the start point (klu_factor =
//                  klu_analyze with KLU's default AMD + klu_factor; Newton itself orders by
//                  AMD on the bus graph, see newton_system.cpp)
//   newton         full solve() from the case in memory (Ybus, colouring, iterations)
// Each line: `pf_vs_peers case=C what=W median_s=T ... ratio=X`, ratio = time / analytic
// time; newton on case9241pegase also prints the published ExaPF and MATPOWER times
// (exapf_s, matpower_s) and their ratios to ours. Max |AD - analytic| / max |analytic| and the FD
// agreement are printed too. Host-only timers run with the StarPU workers paused.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "stardiff/forward/sparse_jacobian.hpp"
#include "stardiff/powerflow.hpp"
#include "stardiff/stardiff.hpp"

using namespace stardiff;
using namespace stardiff::powerflow;
using clk = std::chrono::steady_clock;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

template <class Fn>
double time_once(Fn&& f) {
  auto t0 = clk::now();
  f();
  return std::chrono::duration<double>(clk::now() - t0).count();
}

struct Timer {
  std::string name;
  std::function<void()> fn;
  std::vector<double> t;
  bool on_workers = false;  // runs tasks on the StarPU workers (else host code only)
};

}  // namespace

int main(int argc, char** argv) {
  std::string data = std::getenv("STARDIFF_SHARED_DATA") ? std::getenv("STARDIFF_SHARED_DATA") : "../shared/data";
  int repeats = 7;
  std::string only, files, exec_mode = "both";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--data" && i + 1 < argc) data = argv[++i];
    else if (a == "--repeats" && i + 1 < argc) repeats = std::max(5, std::atoi(argv[++i]));
    else if (a == "--cases" && i + 1 < argc) only = argv[++i];
    else if (a == "--files" && i + 1 < argc) files = argv[++i];
    else if (a == "--executor" && i + 1 < argc) exec_mode = argv[++i];
    else if (a == "--help") {
      std::puts("usage: pf_vs_peers [--data DIR] [--repeats R>=5] [--cases a,b] [--files x.m,y.m] "
                "[--executor starpu|sequential|both]");
      return 0;
    } else {
      std::fprintf(stderr, "pf_vs_peers: unknown argument '%s'\n", a.c_str());
      return 2;
    }
  }
  std::vector<std::string> cases;  // names under DIR/matpower, or paths ending in .m
  if (!files.empty()) {
    std::stringstream ss(files);
    for (std::string c; std::getline(ss, c, ',');) cases.push_back(c);
  } else if (!only.empty()) {
    std::stringstream ss(only);
    for (std::string c; std::getline(ss, c, ',');) cases.push_back(c);
  } else {
    for (const char* c : {"case9", "case14", "case30", "case57", "case118", "case300", "case1354pegase",
                          "case_ACTIVSg2000", "case2869pegase", "case9241pegase", "case_ACTIVSg10k"})
      cases.push_back(c);
  }
  std::unique_ptr<Runtime> rt;
  std::unique_ptr<Executor> starpu_exec;
  if (exec_mode != "sequential") {
    rt = std::make_unique<Runtime>();
    starpu_exec = make_executor("starpu");
  }
  SequentialExecutor seq;

  for (const std::string& name : cases) {
    const bool is_path = name.size() > 2 && name.compare(name.size() - 2, 2, ".m") == 0;
    const std::string path = is_path ? name : data + "/matpower/" + name + ".m";
    if (!std::filesystem::exists(path)) {
      std::printf("pf_vs_peers case=%s skipped=missing_file\n", name.c_str());
      continue;
    }
    Case c;
    const double parse_s = time_once([&] { c = read_matpower(path); });
    const auto& [net, g, types, ix, sbus, V0, pat] = make_jacobian_problem(c);
    JacobianColoring col;
    const double color_s = time_once([&] { col = color_jacobian(pat, ix, forward::ColorOrder::Best); });
    const auto natural = color_jacobian(pat, ix, forward::ColorOrder::Natural);

    std::vector<double> F, Jad, Jan, Jfd, Jgen(pat.nnz()), dx(ix.size());
    std::vector<double> va0, vm0;
    const PfResidual res = make_residual(net, ix, sbus, V0, va0, vm0);
    const std::vector<double> x0 = state_from_voltage(ix, V0);
    auto pcsc = pat.csc();
    forward::SparseJacobian<PfResidual> generic(pcsc, col.coloring, res);
    const auto to_csc = pat.csr_to_csc();

    KluSolver klu;
    klu.analyze(pat.n, pat.row_ptr.data(), pat.col_idx.data());
    ad_jacobian(net, ix, pat, col, sbus, V0, Jad);
    analytic_jacobian(net, ix, pat, sbus, V0, Jan);
    fd_jacobian(net, ix, pat, col, sbus, V0, 1e-6, Jfd);
    generic.jacobian(seq, x0, Jgen);
    double amax = 0, dad = 0, dfd = 0, dgen = 0;
    for (std::int32_t k = 0; k < pat.nnz(); ++k) {
      amax = std::max(amax, std::fabs(Jan[k]));
      dad = std::max(dad, std::fabs(Jad[k] - Jan[k]));
      dfd = std::max(dfd, std::fabs(Jfd[k] - Jan[k]));
      dgen = std::max(dgen, std::fabs(Jgen[to_csc[k]] - Jan[k]));
    }
    klu.factor(Jan.data());

    SolveOptions so_seq;
    so_seq.executor = &seq;
    SolveOptions so_spu = so_seq;
    so_spu.executor = starpu_exec.get();
    NewtonResult last_seq, last_spu;
    std::vector<Timer> timers;
    timers.push_back({"residual", [&] { mismatch(net, ix, sbus, V0, F); }, {}});
    timers.push_back({"ad_jacobian", [&] { ad_jacobian(net, ix, pat, col, sbus, V0, Jad); }, {}});
    timers.push_back({"ad_dense_jacobian", [&] { ad_jacobian(net, ix, pat, col, sbus, V0, Jad, true); }, {}});
    timers.push_back({"generic_ad_jacobian", [&] { generic.jacobian(seq, x0, Jgen); }, {}});
    timers.push_back({"analytic_jacobian", [&] { analytic_jacobian(net, ix, pat, sbus, V0, Jan); }, {}});
    timers.push_back({"fd_jacobian", [&] { fd_jacobian(net, ix, pat, col, sbus, V0, 1e-6, Jfd); }, {}});
    timers.push_back({"klu_factor", [&] {
                        KluSolver k2;
                        k2.analyze(pat.n, pat.row_ptr.data(), pat.col_idx.data());
                        k2.factor(Jan.data());
                      }, {}});
    timers.push_back({"klu_refactor", [&] { klu.factor(Jan.data()); }, {}});
    timers.push_back({"klu_solve", [&] {
                        std::copy(F.begin(), F.end(), dx.begin());
                        klu.solve(dx.data(), true);
                      }, {}});
    if (exec_mode != "starpu") timers.push_back({"newton_sequential", [&] { last_seq = solve(c, so_seq); }, {}});
    if (starpu_exec) timers.push_back({"newton_starpu", [&] { last_spu = solve(c, so_spu); }, {}, true});
    mismatch(net, ix, sbus, V0, F);
    // Host-only timers run with the StarPU workers paused (Debian's StarPU workers poll
    // when idle and would take the cores from them); the runtime's own runs see it live.
    for (int r = 0; r < repeats; ++r)
      for (auto& t : timers) {
        std::unique_ptr<PausedWorkers> quiet;
        if (rt && !t.on_workers) quiet = std::make_unique<PausedWorkers>(*rt);
        t.t.push_back(time_once(t.fn));
      }

    auto med = [&](const std::string& n) {
      for (auto& t : timers)
        if (t.name == n) return median(t.t);
      return std::nan("");
    };
    const double an = med("analytic_jacobian");
    std::printf("pf_vs_peers case=%s buses=%zu jac_n=%d jac_nnz=%d colors=%d colors_natural=%d lower_bound=%d "
                "parse_s=%.6g color_s=%.6g\n",
                c.name.c_str(), c.buses.size(), pat.n, pat.nnz(), col.coloring.num_colors, natural.coloring.num_colors,
                col.coloring.lower_bound, parse_s, color_s);
    std::printf("pf_vs_peers case=%s what=agreement ad_vs_analytic_rel=%.3g generic_vs_analytic_rel=%.3g "
                "fd_vs_analytic_rel=%.3g ratio=%.3g\n",
                c.name.c_str(), dad / amax, dgen / amax, dfd / amax, dad / amax);
    for (auto& t : timers) {
      const double m = median(t.t);
      double ratio = m / an;  // relative to the analytic assembly
      std::printf("pf_vs_peers case=%s what=%s median_s=%.6g min_s=%.6g repeats=%d ratio=%.3g", c.name.c_str(),
                  t.name.c_str(), m, *std::min_element(t.t.begin(), t.t.end()), repeats, ratio);
      if (t.name.rfind("newton", 0) == 0) {
        const NewtonResult& r = t.name == "newton_starpu" ? last_spu : last_seq;
        std::printf(" iterations=%d converged=%d last_total_s=%.6g jacobian_s=%.6g linsolve_s=%.6g setup_s=%.6g "
                    "coloring_s=%.6g klu_analyze_s=%.6g",
                    r.iterations, int(r.converged), r.total_s, r.jacobian_s, r.linsolve_s, r.setup_s, r.coloring_s,
                    r.klu_analyze_s);
        if (c.name == "case9241pegase")
          std::printf(" exapf_s=0.3145 speedup_vs_exapf=%.3g matpower_s=0.511 speedup_vs_matpower=%.3g", 0.3145 / m,
                      0.511 / m);
      }
      std::printf("\n");
    }
    std::fflush(stdout);
  }
  return 0;
}
