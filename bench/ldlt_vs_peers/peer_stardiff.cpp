// SPDX-License-Identifier: LGPL-2.1-or-later
// bench/ldlt_vs_peers/peer_stardiff.cpp — stardiff's sparse LDL^T as the benchmark runs it.
// StarPU's CPU workers poll while idle, which would starve the peers' BLAS threads: one
// Runtime serves the whole benchmark and is paused except while stardiff runs (a second
// starpu_init in one process trips StarPU 1.3.10's "measured >= 0" assertion under dmda).
#include <cstdio>
#include <memory>

#include "solvers.hpp"

using namespace stardiff;
using namespace stardiff::sparse;

namespace ldlt_vs_peers {

RunResult run_stardiff(const Problem& p, Runtime* runtime, Ordering ordering, int analyze_samples, const std::string& pairing) {
  RunResult r;
  try {
    struct Resumed {  // workers run only inside this scope
      Runtime* rt;
      explicit Resumed(Runtime* r) : rt(r) {
        if (rt) rt->resume();
      }
      ~Resumed() {
        if (rt) rt->pause();
      }
    } resumed(runtime);
    std::unique_ptr<Executor> ex;
    if (runtime)
      ex = std::make_unique<StarpuExecutor>();
    else
      ex = std::make_unique<SequentialExecutor>();
    Executor& exec = *ex;
    set_blas_threads(1);  // StarPU workers are the parallelism
    run_on_worker(exec, "warm_up", [] {});  // wakes the workers (untimed)
    LdltOptions o;
    o.ordering = ordering;
    if (!pairing.empty()) o.pairing = pairing_from_string(pairing);
    Ldlt ldlt(o);
    auto t0 = Clock::now();
    const AnalyzeInfo& ai = ldlt.analyze(p.A, &exec);
    r.analyze_s = since(t0);
    t0 = Clock::now();
    FactorInfo fi = ldlt.factorize(p.A, &exec);
    r.factor_s = since(t0);
    t0 = Clock::now();
    std::vector<double> x = ldlt.solve(p.b, 1, &exec);
    r.solve_s = since(t0);
    r.relres = relres_of(p, x);
    for (int k = 1; k < analyze_samples; ++k) {  // the analysis alone, on fresh solvers
      Ldlt again(o);
      t0 = Clock::now();
      again.analyze(p.A, &exec);
      r.analyze_extra.push_back(since(t0));
    }
    r.flops = fi.flops;  // what ran (simplicial: exact counts, as CHOLMOD reports them)
    r.inertia = fi.inertia;
    r.negative = fi.inertia.neg;
    r.delayed = fi.delayed;
    r.two_by_two = fi.two_by_two;
    r.rcond = ldlt.rcond(&exec);  // untimed, after the timed phases
    r.singular = ldlt.numerically_singular(&exec);
    char d[320];
    std::snprintf(d, sizeof d, "mode=%s pivoting=%s attempts=%d ordering=%s pairing=%s matched_pairs=%lld deferred=%lld nnz_l=%lld tasks=%lld two_by_two=%lld delayed=%lld static_pivots=%lld singular=%d refine_iters=%d refactorized=%d",
                  to_string(fi.mode), to_string(fi.pivoting), fi.attempts, to_string(ai.ordering),
                  to_string(o.pairing), static_cast<long long>(ai.matched_pairs),
                  static_cast<long long>(ai.deferred), static_cast<long long>(fi.nnz_l),
                  static_cast<long long>(fi.tasks), static_cast<long long>(fi.two_by_two),
                  static_cast<long long>(fi.delayed), static_cast<long long>(fi.static_pivots), int(fi.singular),
                  ldlt.solve_info().refine_iters, int(ldlt.solve_info().refactorized));
    r.detail = d;
    r.ok = r.relres <= 1e-6;
    if (!r.ok) r.reason = fi.singular ? "singular" : "inaccurate";
  } catch (const std::exception& e) {
    r.ok = false;
    r.reason = std::string("error: ") + e.what();
  }
  return r;
}

}  // namespace ldlt_vs_peers
