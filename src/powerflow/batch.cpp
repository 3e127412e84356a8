// SPDX-License-Identifier: LGPL-2.1-or-later
// src/powerflow/batch.cpp — powerflow::solve_batch (see stardiff/powerflow/batch.hpp): the
// load-independent set-up once, the base case, then chunks of scenarios as tasks, each a
// plain Newton loop over the CPU kernels with its own workspace and KLU numeric factors.
#include "stardiff/powerflow/batch.hpp"

#include <algorithm>
#include <cmath>
#include <memory>

#include "powerflow/newton_internal.hpp"
#include "powerflow/pf_view.hpp"
#include "stardiff/runtime/error.hpp"

namespace stardiff::powerflow {
namespace {

using detail::clock_type;
using detail::seconds_since;
using detail::newton_decision;
using detail::NewtonDecision;

// What does not depend on the loads.
struct Shared {
  const Case* c = nullptr;
  Network net;
  GenState g;
  std::vector<int> types;
  PfIndex ix;
  JacobianPattern pat;
  JacobianColoring col;
  std::vector<std::int32_t> perm;
  cpu::PfView view;  // sbus left null: each solve sets its own
  cpu::PfJacMap map;
  const BatchOptions* o = nullptr;
  // KLU's analysis of the Jacobian pattern, in the shared ordering where there is one.
  void analyze(KluSolver& k) const {
    const bool ordered = perm.size() == static_cast<std::size_t>(ix.size());
    k.analyze(ix.size(), pat.row_ptr.data(), pat.col_idx.data(), ordered ? perm.data() : nullptr);
  }
};

// One task's workspace: analysed once, reused for every scenario of the task. Every
// scenario starts from the same V0 (the base solution), so its first Jacobian J0 = J(V0)
// (no load enters J) and its first klu_factor are the same for all: `first` holds that
// factorization (one per task, only solved with), `klu` the refactorizations of later
// iterations, starting each scenario from J0's pivot order — exactly what a fresh
// klu_factor of J0 followed by klu_refactor would compute, bit for bit.
struct Work {
  std::vector<double> F, dx, J, J0, V, va, vm;
  GenState g;
  KluSolver klu, first;
  bool first_ok = false;
  explicit Work(const Shared& sh) : g(sh.g) {
    const std::int32_t n = sh.ix.size();
    F.assign(std::max(n, 1), 0.0);
    dx.assign(std::max(n, 1), 0.0);
    J.assign(std::max(sh.pat.nnz(), 1), 0.0);
    V.assign(2 * sh.net.n, 0.0);
    va.assign(sh.net.n, 0.0);
    vm.assign(sh.net.n, 0.0);
    if (n > 0) sh.analyze(klu);
  }
  // The shared first step from V0 (a task calls it once before its scenarios).
  void prepare_first(const Shared& sh, const std::vector<cplx>& V0, const std::vector<cplx>& sbus);
  // Puts klu back on J0's pivots when the last scenario left it elsewhere.
  void restore(int factors_before) {
    if (!first_ok || (klu.factored() && klu.factors() == factors_before)) return;
    klu.reset();
    klu.factor(J0.data());
  }
};

void jacobian(const Shared& sh, const cpu::PfView& view, const double* V, double* J) {
  const cpu::PfOut out{J, J, 0, 0};
  if (sh.o->jacobian == JacobianMethod::Analytic)
    cpu::pf_jacobian_analytic_cpu(view, sh.map, V, out, 0, sh.ix.npvpq());
  else
    cpu::pf_jacobian_ad_cpu(view, sh.map, V, out, 0, sh.ix.npvpq(), sh.o->jacobian == JacobianMethod::AD);
}

void Work::prepare_first(const Shared& sh, const std::vector<cplx>& V0, const std::vector<cplx>& sbus) {
  if (sh.ix.size() == 0) return;
  cpu::PfView view = sh.view;
  view.sbus = reinterpret_cast<const double*>(sbus.data());  // J does not depend on it
  for (int i = 0; i < sh.net.n; ++i) {
    V[2 * i] = V0[i].real();
    V[2 * i + 1] = V0[i].imag();
  }
  J0.assign(J.size(), 0.0);
  jacobian(sh, view, V.data(), J0.data());
  sh.analyze(first);
  first_ok = first.factor(J0.data());
  if (first_ok) klu.factor(J0.data());
}

// powerflow::solve's iteration on one thread: mismatch at V, stop by newton_decision (as
// NewtonSystem::check_and_step does), else J, KLU, update.
NewtonStatus newton(const Shared& sh, Work& w, const std::vector<cplx>& sbus, std::vector<cplx>& V, int& iterations,
                    double& mismatch, bool shared_first) {
  const BatchOptions& o = *sh.o;
  cpu::PfView view = sh.view;
  view.sbus = reinterpret_cast<const double*>(sbus.data());
  for (int i = 0; i < sh.net.n; ++i) {
    w.V[2 * i] = V[i].real();
    w.V[2 * i + 1] = V[i].imag();
    w.va[i] = std::arg(V[i]);
    w.vm[i] = std::abs(V[i]);
  }
  // shared_first: the scenario starts at the V0 of w.prepare_first (its J0 factors);
  // otherwise pivots of this scenario's own first Jacobian, whatever ran before.
  if (!shared_first) w.klu.reset();
  const std::int32_t npvpq = sh.ix.npvpq(), n = sh.ix.size();
  const cpu::PfOut F{w.F.data(), w.F.data(), 0, 0};
  iterations = 0;
  NewtonStatus status = NewtonStatus::MaxIter;
  for (int k = 1; k <= o.max_iter + 1; ++k) {
    const double norm = cpu::pf_mismatch_cpu(view, w.V.data(), F, 0, npvpq);
    mismatch = norm;
    const NewtonDecision d = newton_decision(norm, o.tol, k, o.max_iter);
    if (d == NewtonDecision::Diverged) status = NewtonStatus::Diverged;
    if (d == NewtonDecision::Converged) status = NewtonStatus::Converged;
    if (d != NewtonDecision::Step) break;  // MaxIter keeps the status it starts with
    bool ok;
    std::copy(w.F.begin(), w.F.begin() + n, w.dx.begin());
    if (shared_first && k == 1) {
      ok = w.first_ok && w.first.solve(w.dx.data(), /*transpose=*/true);
    } else {
      jacobian(sh, view, w.V.data(), w.J.data());
      ok = w.klu.factor(w.J.data()) && w.klu.solve(w.dx.data(), /*transpose=*/true);
    }
    if (!ok) {
      status = NewtonStatus::Singular;
      break;
    }
    ++iterations;
    cpu::pf_update_cpu(view, w.dx.data(), w.va.data(), w.vm.data(), w.V.data());
  }
  for (int i = 0; i < sh.net.n; ++i) V[i] = cplx(w.V[2 * i], w.V[2 * i + 1]);
  return status;
}

void apply_loads(const Shared& sh, const Scenario& s, GenState& g) {
  const Case& c = *sh.c;
  for (int i = 0; i < sh.net.n; ++i) {
    const Bus& b = c.buses[sh.net.case_bus[i]];
    g.pd[i] = s.p_scale * b.pd;
    g.qd[i] = s.q_scale * b.qd;
  }
  for (const Scenario::Load& l : s.loads) {
    const int i = sh.net.net_bus[l.bus];
    if (i < 0) continue;  // an isolated bus carries no load into the network
    g.pd[i] = l.pd;
    g.qd[i] = l.qd;
  }
}

void fill_voltages(const Shared& sh, const std::vector<cplx>& V, std::vector<double>& vm, std::vector<double>& va) {
  NewtonResult r;
  const int ref = sh.ix.ref;
  detail::collect_result(*sh.c, sh.net, sh.types, sh.types, V, false, ref, 0.0, r);
  vm = std::move(r.vm);
  va = std::move(r.va_deg);
}

}  // namespace

Case scenario_case(const Case& c, const Scenario& s) {
  Case r = c;
  for (Bus& b : r.buses) {
    b.pd = s.p_scale * b.pd;
    b.qd = s.q_scale * b.qd;
  }
  for (const Scenario::Load& l : s.loads) {
    require(l.bus >= 0 && l.bus < static_cast<int>(c.buses.size()), "scenario_case: bus index out of range");
    r.buses[l.bus].pd = l.pd;
    r.buses[l.bus].qd = l.qd;
  }
  return r;
}

BatchResult solve_batch(const Case& c, const std::vector<Scenario>& scenarios, const BatchOptions& o) {
  require(o.tol > 0 && std::isfinite(o.tol), "powerflow::solve_batch: tol must be positive and finite");
  require(o.max_iter >= 0, "powerflow::solve_batch: max_iter must be >= 0");
  require(o.tasks >= 0, "powerflow::solve_batch: tasks must be >= 0");
  for (const Scenario& s : scenarios) {
    require(std::isfinite(s.p_scale) && std::isfinite(s.q_scale), "powerflow::solve_batch: non-finite load scale");
    for (const Scenario::Load& l : s.loads)
      require(l.bus >= 0 && l.bus < static_cast<int>(c.buses.size()) && std::isfinite(l.pd) && std::isfinite(l.qd),
              "powerflow::solve_batch: bad load override");
  }
  const auto t_start = clock_type::now();
  SequentialExecutor seq;
  Executor& exec = o.executor ? *o.executor : seq;
  BatchResult res;
  Shared sh;
  sh.c = &c;
  sh.o = &o;
  std::vector<cplx> V0;
  // The set-up (a task, as in solve(): workers poll while idle).
  run_on_worker(exec, "pf_batch_setup", [&] {
    sh.net = make_network(c);
    sh.g = initial_gen_state(c, sh.net);
    sh.types = bus_types(c, sh.net, file_bus_types(c, sh.net), sh.g);
    V0 = start_voltage(c, sh.net, sh.types, sh.g, o.flat_start);
    sh.ix = make_index(sh.types);
    sh.pat = make_jacobian_pattern(sh.net, sh.ix);
    if (o.jacobian != JacobianMethod::Analytic && sh.ix.size() > 0)
      sh.col = jacobian_coloring_maps(sh.pat, sh.ix, color_jacobian_columns(sh.net, sh.ix, o.order));
    std::vector<int> bus_order;
    if (sh.ix.size() > 0) sh.perm = detail::klu_ordering(sh.net, sh.ix, bus_order);
    const std::vector<cplx> no_sbus;
    sh.view = detail::make_view(sh.net, sh.ix, no_sbus);
    sh.view.sbus = nullptr;
    sh.map = detail::make_map(sh.pat, o.jacobian != JacobianMethod::Analytic ? &sh.col : nullptr);
  });
  res.setup_s = seconds_since(t_start);

  // The base case from its start point.
  const auto t_base = clock_type::now();
  std::vector<cplx> Vbase = V0;
  const std::vector<cplx> base_sbus = make_sbus(c, sh.net, sh.g);
  run_on_worker(exec, "pf_batch_base", [&] {
    Work w(sh);
    NewtonResult& b = res.base;
    b.status = newton(sh, w, base_sbus, Vbase, b.iterations, b.max_mismatch, false);
    b.converged = b.status == NewtonStatus::Converged;
    b.solves = 1;
    b.colors = sh.col.coloring.num_colors;
    b.color_lower_bound = sh.col.coloring.lower_bound;
    b.jacobian_rows = sh.ix.size();
    b.jacobian_nnz = sh.pat.nnz();
    detail::collect_result(c, sh.net, sh.types, sh.types, Vbase, false, sh.ix.ref, 0.0, b);
  });
  if (!res.base.converged) Vbase = V0;
  res.base_s = seconds_since(t_base);

  // The scenarios: contiguous chunks, one task each.
  const int K = static_cast<int>(scenarios.size());
  res.scenarios.resize(K);
  int T = o.tasks > 0 ? o.tasks : std::max(1, exec.concurrency());
  T = std::max(1, std::min(T, K));
  res.tasks = K > 0 ? T : 0;
  const auto t_sc = clock_type::now();
  {
    std::vector<std::unique_ptr<WorkerStep>> steps;
    for (int t = 0; t < T && K > 0; ++t) {
      const int s0 = static_cast<int>(std::int64_t(K) * t / T), s1 = static_cast<int>(std::int64_t(K) * (t + 1) / T);
      steps.push_back(std::make_unique<WorkerStep>(exec, "pf_batch_scenarios", [&, s0, s1] {
        Work w(sh);
        w.prepare_first(sh, Vbase, base_sbus);
        std::vector<cplx> V;
        for (int s = s0; s < s1; ++s) {
          const int factors_before = w.klu.factors();
          apply_loads(sh, scenarios[s], w.g);
          const std::vector<cplx> sbus = make_sbus(c, sh.net, w.g);
          V = Vbase;
          ScenarioResult& r = res.scenarios[s];
          r.status = newton(sh, w, sbus, V, r.iterations, r.max_mismatch, true);
          r.converged = r.status == NewtonStatus::Converged;
          w.restore(factors_before);
          if (o.keep_voltages) fill_voltages(sh, V, r.vm, r.va_deg);
        }
      }));
    }
    for (auto& s : steps) s->wait();  // rethrows a task's exception (misuse only)
  }
  res.scenarios_s = seconds_since(t_sc);
  for (const ScenarioResult& r : res.scenarios) res.failed += !r.converged;
  res.total_s = seconds_since(t_start);
  return res;
}

}  // namespace stardiff::powerflow
