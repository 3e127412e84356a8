// SPDX-License-Identifier: LGPL-2.1-or-later
// bench/ldlt_vs_peers/report.cpp — interleaved repeats, medians and the printed lines
// (names, keys, order and formats are what scripts and tests parse).
#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ldlt_vs_peers {

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

namespace {

// Every analysis a run timed: the one before its factorization and the extra samples.
void add_analyses(const RunResult& r, std::vector<double>& v) {
  v.push_back(r.analyze_s);
  v.insert(v.end(), r.analyze_extra.begin(), r.analyze_extra.end());
}

}  // namespace

double Summary::analyze() const {
  std::vector<double> v;
  for (auto& r : runs) add_analyses(r, v);
  return median(v);
}

double Summary::factor() const {
  std::vector<double> v;
  for (auto& r : runs) v.push_back(r.factor_s);
  return median(v);
}

double Summary::solve() const {
  std::vector<double> v;
  for (auto& r : runs) v.push_back(r.solve_s);
  return median(v);
}

double Summary::relres() const {
  double m = 0;
  for (auto& r : runs) m = std::max(m, r.relres);
  return m;
}

std::vector<Summary> run_interleaved(const Problem& p, const std::vector<Solver>& solvers, int repeats,
                                     double skip_slow) {
  std::vector<Summary> sums(solvers.size());
  std::vector<int> reps(solvers.size(), repeats);
  for (int rep = 0; rep < repeats; ++rep) {
    for (std::size_t s = 0; s < solvers.size(); ++s) {
      if (sums[s].failed || rep >= reps[s]) continue;
      RunResult r = solvers[s].run(p);
      if (!r.ok) {
        sums[s].failed = true;
        sums[s].first_failure = r;
        continue;
      }
      sums[s].runs.push_back(r);
      if (rep == 0 && skip_slow > 0 && solvers[s].name != "stardiff" &&
          r.analyze_s + r.factor_s + r.solve_s > skip_slow)
        reps[s] = 1;  // a slow peer runs once; stardiff always gets every repeat
    }
  }
  set_blas_threads(1);
  return sums;
}

void print_config(const std::string& executor, const std::string& scheduler, int cpu_workers,
                  const std::vector<int>& peer_threads, int repeats) {
  std::string tl;
  for (int t : peer_threads) tl.append(tl.empty() ? "" : ",").append(std::to_string(t));
  std::printf("ldlt_vs_peers config executor=%s scheduler=%s cpu_workers=%d peer_threads=%s repeats=%d\n",
              executor.c_str(), scheduler.c_str(), cpu_workers, tl.c_str(), repeats);
}

void print_dgemm(int n, int threads, double gflops) {
  // the fraction of dgemm depends on the kernel OpenBLAS runs (OPENBLAS_CORETYPE)
  std::printf("ldlt_vs_peers dgemm n=%d threads=%d gflops=%.4g core=%s\n", n, threads, gflops, blas_core_name());
}

void print_table_header() {
  std::fprintf(stderr, "%-28s %-13s %10s %10s %10s %10s  %s\n", "matrix", "solver", "analyze_s", "factor_s",
               "solve_s", "relres", "status");
}

int report_matrix(const Problem& p, const std::vector<Solver>& solvers, const std::vector<Summary>& sums,
                  Ratios& ratios) {
  int best = -1, sd = -1, cholmod_llt = -1, mumps = -1;
  for (std::size_t s = 0; s < solvers.size(); ++s) {
    const Summary& S = sums[s];
    const std::string& nm = solvers[s].name;
    if (nm == "stardiff") sd = int(s);
    if (nm.rfind("cholmod_llt", 0) == 0 && cholmod_llt < 0) cholmod_llt = int(s);
    if (nm.rfind("mumps", 0) == 0 && mumps < 0) mumps = int(s);
    if (S.failed) {
      const RunResult& f = S.first_failure;
      std::printf("ldlt_vs_peers solver matrix=%s solver=%s status=failed reason=\"%s\" relres=%.3g %s\n",
                  p.name.c_str(), nm.c_str(), f.reason.c_str(), f.relres, f.detail.c_str());
      std::fprintf(stderr, "%-28s %-13s %10.4g %10.4g %10s %10.3g  failed: %s\n", p.name.c_str(), nm.c_str(),
                   f.analyze_s, f.factor_s, "-", f.relres, f.reason.c_str());
      continue;
    }
    const RunResult& r0 = S.runs.front();
    double gf = S.factor() > 0 && r0.flops > 0 ? r0.flops / S.factor() * 1e-9 : 0;
    std::printf("ldlt_vs_peers solver matrix=%s n=%d solver=%s analyze_s=%.6g factor_s=%.6g solve_s=%.6g "
                "relres=%.3g flops=%.6g gflops=%.4g repeats=%zu status=ok %s\n",
                p.name.c_str(), p.A.n_cols, nm.c_str(), S.analyze(), S.factor(), S.solve(), S.relres(), r0.flops,
                gf, S.runs.size(), r0.detail.c_str());
    std::fprintf(stderr, "%-28s %-13s %10.4g %10.4g %10.4g %10.3g  ok (%.3g GFlop/s)\n", p.name.c_str(),
                 nm.c_str(), S.analyze(), S.factor(), S.solve(), S.relres(), gf);
    if (nm != "stardiff" && (best < 0 || S.factor() < sums[best].factor())) best = int(s);
  }
  if (sd >= 0 && !sums[sd].failed && best >= 0) {
    const double f = sums[sd].factor(), bf = sums[best].factor();
    const double ratio = f / bf;
    ratios.all.push_back(ratio);
    if (bf >= 2e-3) ratios.ge2ms.push_back(ratio);
    std::printf("ldlt_vs_peers matrix=%s n=%d factor_s=%.6g best_peer=%s best_peer_factor_s=%.6g ratio=%.4g",
                p.name.c_str(), p.A.n_cols, f, solvers[best].name.c_str(), bf, ratio);
    if (cholmod_llt >= 0) {  // cholmod_analyze also runs where the LL^T factorization fails
      const Summary& C = sums[cholmod_llt];
      double ca = C.analyze();
      if (C.runs.empty()) {  // LL^T failed (indefinite): its analyses still count
        std::vector<double> v;
        add_analyses(C.first_failure, v);
        ca = median(v);
      }
      if (ca > 0)
        std::printf(" analyze_s=%.6g cholmod_analyze_s=%.6g analyze_ratio=%.4g", sums[sd].analyze(), ca,
                    sums[sd].analyze() / ca);
    }
    std::printf("\n");
  } else if (sd >= 0) {
    std::printf("ldlt_vs_peers matrix=%s n=%d factor_s=%s best_peer=%s ratio=nan\n", p.name.c_str(), p.A.n_cols,
                sums[sd].failed ? "failed" : "ok", best >= 0 ? solvers[best].name.c_str() : "none");
  }
  if (sd >= 0 && mumps >= 0) {
    const RunResult& a = sums[sd].runs.empty() ? sums[sd].first_failure : sums[sd].runs.front();
    const RunResult& m = sums[mumps].runs.empty() ? sums[mumps].first_failure : sums[mumps].runs.front();
    if (a.inertia) {
      std::printf("ldlt_vs_peers inertia matrix=%s stardiff_pos=%lld stardiff_neg=%lld stardiff_zero=%lld", p.name.c_str(),
                  static_cast<long long>(a.inertia->pos), static_cast<long long>(a.inertia->neg),
                  static_cast<long long>(a.inertia->zero));
      if (m.negative)
        std::printf(" mumps_neg=%lld agree=%s", static_cast<long long>(*m.negative),
                    *m.negative == a.inertia->neg ? "yes" : "no");
      else
        std::printf(" mumps_neg=none agree=unknown");
      if (m.negative_nulldet && m.null_pivots)  // MUMPS with null-pivot detection
        std::printf(" mumps_nulldet_neg=%lld mumps_nulldet_zero=%lld agree_nulldet=%s",
                    static_cast<long long>(*m.negative_nulldet), static_cast<long long>(*m.null_pivots),
                    *m.negative_nulldet == a.inertia->neg && *m.null_pivots == a.inertia->zero ? "yes" : "no");
      if (a.rcond) {  // singular: static pivots or rcond < eps (Ldlt::numerically_singular)
        std::printf(" stardiff_rcond=%.3g stardiff_singular=%s", *a.rcond, a.singular ? "yes" : "no");
        if (m.null_pivots)
          std::printf(" mumps_singular=%s singular_agree=%s", *m.null_pivots > 0 ? "yes" : "no",
                      (*m.null_pivots > 0) == a.singular ? "yes" : "no");
      }
      std::printf("\n");
    }
    // delayed columns side by side (first run of each; the same in every run)
    std::printf("ldlt_vs_peers delayed matrix=%s stardiff_delayed=", p.name.c_str());
    if (a.delayed) std::printf("%lld", static_cast<long long>(*a.delayed));
    else std::printf("none");
    std::printf(" stardiff_two_by_two=");
    if (a.two_by_two) std::printf("%lld", static_cast<long long>(*a.two_by_two));
    else std::printf("none");
    std::printf(" mumps_delayed=");
    if (m.delayed) std::printf("%lld", static_cast<long long>(*m.delayed));
    else std::printf("none");
    if (a.delayed && m.delayed) std::printf(" at_most_mumps=%s", *a.delayed <= *m.delayed ? "yes" : "no");
    std::printf("\n");
  }
  return sd;
}

void print_laplacian(const Problem& p, const Summary& stardiff, double dgemm1, double dgemm2, double again1,
                     double again2) {
  const double ref = std::max({dgemm1, dgemm2, again1, again2});
  const double gf = stardiff.runs.front().flops / stardiff.factor() * 1e-9;
  std::printf("ldlt_vs_peers laplacian matrix=%s stardiff_gflops=%.4g dgemm_gflops_1t=%.4g dgemm_gflops_2t=%.4g "
              "dgemm_gflops_best=%.4g fraction_of_dgemm=%.3f\n",
              p.name.c_str(), gf, std::max(dgemm1, again1), std::max(dgemm2, again2), ref, gf / ref);
}

void print_geomean(const Ratios& ratios) {
  auto geo = [](const std::vector<double>& v) -> double {
    if (v.empty()) return NAN;
    double s = 0;
    for (double x : v) s += std::log(x);
    return std::exp(s / double(v.size()));
  };
  std::printf("ldlt_vs_peers geomean matrices=%zu ratio=%.4g matrices_ge2ms=%zu ratio_ge2ms=%.4g max_ratio=%.4g\n",
              ratios.all.size(), geo(ratios.all), ratios.ge2ms.size(), geo(ratios.ge2ms),
              ratios.all.empty() ? NAN : *std::max_element(ratios.all.begin(), ratios.all.end()));
}

}  // namespace ldlt_vs_peers
