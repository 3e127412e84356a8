// src/powerflow/newton.cpp — Newton–Raphson power flow with Q-limit enforcement.
//
// NewtonSystem owns everything that depends on one set of bus types: numbering, Jacobian
// pattern and colouring, KLU symbolic analysis, workspaces and the data handles, so that
// the iterations allocate nothing. solve() runs MATPOWER's runpf loop around it.
#include "stardiff/powerflow/newton.hpp"

#include <amd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>

#include "powerflow/klu_solver.hpp"
#include "powerflow/pf_view.hpp"
#include "starpu/powerflow/cl_powerflow.hpp"
#include "stardiff/powerflow/jacobian.hpp"
#include "stardiff/powerflow/network.hpp"
#include "stardiff/runtime/error.hpp"

namespace stardiff::powerflow {

const char* to_string(JacobianMethod m) {
  return m == JacobianMethod::AD ? "ad" : m == JacobianMethod::ADDense ? "ad-dense" : "analytic";
}

namespace {

using clock_type = std::chrono::steady_clock;
double seconds_since(clock_type::time_point t) {
  return std::chrono::duration<double>(clock_type::now() - t).count();
}

struct Block {
  codelets::PfBlockArgs args;
  VectorHandle<double> fp, fq, jp, jq;
  VariableHandle<double> norm{0.0, "block_norm"};
};

class NewtonSystem {
 public:
  NewtonSystem(const Network& net, const std::vector<int>& types, const std::vector<cplx>& sbus,
               const SolveOptions& o, Executor& exec)
      : net_(net), sbus_(sbus), opts_(o), exec_(exec) {
    ix_ = make_index(types);
    pat_ = make_jacobian_pattern(net, ix_);
    const std::int32_t n = ix_.size();
    view_ = detail::make_view(net, ix_, sbus_);
    map_ = detail::make_map(pat_, &col_);
    F_.assign(std::max(n, 1), 0.0);
    dx_.assign(std::max(n, 1), 0.0);
    J_.assign(std::max(pat_.nnz(), 1), 0.0);
    V_.assign(2 * net.n, 0.0);
    va_.assign(net.n, 0.0);
    vm_.assign(net.n, 0.0);

    const std::int32_t npvpq = ix_.npvpq(), npv = ix_.npv();
    int nb = o.blocks;
    if (nb <= 0) nb = std::string(exec.kind()) == "sequential" ? 1 : npvpq >= 4096 ? 4 : npvpq >= 1024 ? 2 : 1;
    nb = std::max(1, std::min<int>(nb, std::max(npvpq, 1)));
    for (int b = 0; b < nb && npvpq > 0; ++b) {
      auto blk = std::make_unique<Block>();
      const std::int32_t k0 = static_cast<std::int32_t>(std::int64_t(npvpq) * b / nb);
      const std::int32_t k1 = static_cast<std::int32_t>(std::int64_t(npvpq) * (b + 1) / nb);
      const std::int32_t q0 = npvpq + std::max(k0, npv) - npv, q1 = npvpq + std::max(k1, npv) - npv;
      blk->args.view = view_;
      blk->args.map = map_;
      blk->args.k0 = k0;
      blk->args.k1 = k1;
      blk->args.out_p_off = k0;
      blk->args.out_q_off = q0;
      blk->fp = VectorHandle<double>(F_.data() + k0, k1 - k0, "F_P");
      blk->fq = q1 > q0 ? VectorHandle<double>(F_.data() + q0, q1 - q0, "F_Q") : VectorHandle<double>(1, "F_Q_none");
      const std::int32_t jp0 = pat_.row_ptr[k0], jp1 = pat_.row_ptr[k1];
      const std::int32_t jq0 = pat_.row_ptr[q0], jq1 = pat_.row_ptr[q1];
      blk->jp = VectorHandle<double>(J_.data() + jp0, jp1 - jp0, "J_P");
      blk->jq = jq1 > jq0 ? VectorHandle<double>(J_.data() + jq0, jq1 - jq0, "J_Q") : VectorHandle<double>(1, "J_Q_none");
      blocks_.push_back(std::move(blk));
      // J offsets differ from F offsets: keep them in a second args copy.
      jac_args_.push_back(blocks_.back()->args);
      jac_args_.back().out_p_off = jp0;
      jac_args_.back().out_q_off = jq0;
    }
    hV_ = VectorHandle<double>(V_.data(), V_.size(), "V");
    hva_ = VectorHandle<double>(va_.data(), va_.size(), "va");
    hvm_ = VectorHandle<double>(vm_.data(), vm_.size(), "vm");
    hdx_ = VectorHandle<double>(dx_.data(), dx_.size(), "dx");
    for (auto& b : blocks_)
      for (Handle* h : {&b->jp, &b->jq, &b->fp, &b->fq}) linsolve_reads_.push_back(h);
    linsolve_reads_.push_back(&hklu_);
  }

  // Submits the independent set-up steps (colouring, KLU analysis): they overlap with each
  // other and with the first mismatch evaluation. Call from the submitting thread.
  void start() {
    if (ix_.size() > 0) {
      codelets::insert_pf_step(exec_, "pf_coloring", {&NewtonSystem::coloring_step, this}, hcolor_);
      codelets::insert_pf_step(exec_, "pf_klu_analyze", {&NewtonSystem::analyze_step, this}, hklu_);
    }
  }

  const PfIndex& index() const { return ix_; }
  const JacobianPattern& pattern() const { return pat_; }
  const JacobianColoring& coloring() const { return col_; }

  // Runs Newton from V (in/out). Returns the status string; fills iterations and mismatch.
  std::string run(std::vector<cplx>& V, int solve_no, NewtonResult& res, clock_type::time_point t_start) {
    {
      auto g1 = hV_.acquire(Access::W), g2 = hva_.acquire(Access::W), g3 = hvm_.acquire(Access::W);
      for (int i = 0; i < net_.n; ++i) {
        V_[2 * i] = V[i].real();
        V_[2 * i + 1] = V[i].imag();
        va_[i] = std::arg(V[i]);
        vm_[i] = std::abs(V[i]);
      }
    }
    std::string status = "max_iter";
    double norm = evaluate_mismatch();
    report(res, solve_no, 0, norm, t_start);
    int it = 0;
    if (norm < opts_.tol) status = "converged";
    else if (!std::isfinite(norm)) status = "diverged";
    while (status == "max_iter" && it < opts_.max_iter) {
      ++it;
      // One iteration = one task graph and one wait: Jacobian blocks -> KLU factor + solve ->
      // update (skipped when KLU failed) -> mismatch blocks. jacobian_s runs from the
      // submission to the start of the KLU task, linsolve_s over the KLU task.
      const auto t0 = clock_type::now();
      for (std::size_t b = 0; b < blocks_.size(); ++b) {
        jac_args_[b].map = detail::make_map(pat_, &col_);  // colouring done (waited for)
        jac_args_[b].dense = opts_.jacobian == JacobianMethod::ADDense;
        codelets::insert_pf_jacobian(exec_, opts_.jacobian != JacobianMethod::Analytic, jac_args_[b], hV_,
                                     blocks_[b]->jp, blocks_[b]->jq);
      }
      codelets::insert_pf_linsolve(exec_, {&NewtonSystem::linsolve, this}, hdx_, hstatus_, linsolve_reads_);
      codelets::insert_pf_update(exec_, view_, hdx_, hva_, hvm_, hV_, hstatus_);
      const double before = norm;
      norm = evaluate_mismatch();
      res.jacobian_s += std::chrono::duration<double>(lin_t0_ - t0).count();
      res.linsolve_s += std::chrono::duration<double>(lin_t1_ - lin_t0_).count();
      bool ok;
      {
        auto g = hstatus_.acquire(Access::R);
        ok = hstatus_.value() == 1;
      }
      if (!ok) {
        status = "singular";
        norm = before;
        break;
      }
      report(res, solve_no, it, norm, t_start);
      if (!std::isfinite(norm)) status = "diverged";
      else if (norm < opts_.tol) status = "converged";
    }
    res.iterations += it;
    res.max_mismatch = norm;
    res.klu_factors += klu_.factors();
    res.klu_refactors += klu_.refactors();
    {
      auto g = hV_.acquire(Access::R);
      for (int i = 0; i < net_.n; ++i) V[i] = cplx(V_[2 * i], V_[2 * i + 1]);
    }
    return status;
  }

 double coloring_s = 0, analyze_s = 0;

 private:
  static bool coloring_step(void* ctx) {
    auto* self = static_cast<NewtonSystem*>(ctx);
    auto t0 = clock_type::now();
    self->col_ = color_jacobian(self->pat_, self->ix_, self->opts_.order);
    self->coloring_s = seconds_since(t0);
    return true;
  }
  static bool analyze_step(void* ctx) {
    auto* self = static_cast<NewtonSystem*>(ctx);
    auto t0 = clock_type::now();
    // KLU sees CSR(J) as CSC(J^T); the solve uses the transpose. Ordering: AMD on the bus
    // graph (Ybus pattern, n buses instead of npv + 2 npq variables), each bus expanded to
    // its Va and Vm variables — the 2x2 block structure of the power-flow Jacobian.
    const Network& net = self->net_;
    std::vector<std::int32_t> bus_perm(net.n), perm;
    perm.reserve(self->ix_.size());
    double control[AMD_CONTROL], info[AMD_INFO];
    amd_defaults(control);
    const bool ok = amd_order(net.n, net.col_ptr.data(), net.row_idx.data(), bus_perm.data(), control, info) == AMD_OK;
    if (ok)
      for (std::int32_t b : bus_perm) {
        if (self->ix_.va_var[b] >= 0) perm.push_back(self->ix_.va_var[b]);
        if (self->ix_.vm_var[b] >= 0) perm.push_back(self->ix_.vm_var[b]);
      }
    self->klu_.analyze(self->ix_.size(), self->pat_.row_ptr.data(), self->pat_.col_idx.data(),
                       ok ? perm.data() : nullptr);
    self->analyze_s = seconds_since(t0);
    return true;
  }
  // Runs inside the pf_linsolve task: the Jacobian and mismatch blocks are complete and
  // live in the contiguous arrays J_ and F_ (CPU workers share host memory).
  static bool linsolve(void* ctx, double* dx) {
    auto* self = static_cast<NewtonSystem*>(ctx);
    self->lin_t0_ = clock_type::now();
    bool ok = self->klu_.factor(self->J_.data());
    if (ok) {
      std::copy(self->F_.begin(), self->F_.begin() + self->ix_.size(), dx);
      ok = self->klu_.solve(dx, /*transpose=*/true);
    }
    self->lin_t1_ = clock_type::now();
    return ok;
  }

  double evaluate_mismatch() {
    for (auto& b : blocks_) codelets::insert_pf_mismatch(exec_, b->args, hV_, b->fp, b->fq, b->norm);
    exec_.wait_all();
    double norm = 0.0;
    for (auto& b : blocks_) {
      auto g = b->norm.acquire(Access::R);
      const double v = b->norm.value();
      if (std::isnan(v)) return v;
      norm = std::max(norm, v);
    }
    return norm;
  }
  void report(NewtonResult& res, int solve_no, int it, double norm, clock_type::time_point t_start) {
    res.mismatch_history.push_back(norm);
    if (opts_.on_iteration) opts_.on_iteration({solve_no, it, norm, seconds_since(t_start)});
  }

  const Network& net_;
  const std::vector<cplx>& sbus_;
  const SolveOptions& opts_;
  Executor& exec_;
  PfIndex ix_;
  JacobianPattern pat_;
  JacobianColoring col_;
  cpu::PfView view_;
  cpu::PfJacMap map_;
  std::vector<double> F_, dx_, J_, V_, va_, vm_;
  detail::KluSolver klu_;
  std::vector<std::unique_ptr<Block>> blocks_;
  std::vector<codelets::PfBlockArgs> jac_args_;
  VectorHandle<double> hV_, hva_, hvm_, hdx_;
  VariableHandle<int> hstatus_{0, "linsolve_status"};
  VariableHandle<int> hcolor_{0, "coloring_done"}, hklu_{0, "klu_analyzed"};
  std::vector<Handle*> linsolve_reads_;
  clock_type::time_point lin_t0_, lin_t1_;  // start and end of the last KLU task
};

// pfsoln: generator Q (and the reference generator's P) from the solved voltages.
void update_generators(const Case& c, const Network& net, const std::vector<int>& types, const std::vector<cplx>& V,
                       GenState& g) {
  const double base = c.base_mva, eps = std::numeric_limits<double>::epsilon();
  std::vector<int> on;
  for (std::size_t k = 0; k < c.gens.size(); ++k)
    if (g.on[k]) on.push_back(static_cast<int>(k));
  auto injection = [&](int i) {
    cplx s = 0;
    for (std::int32_t e = net.row_ptr[i]; e < net.row_ptr[i + 1]; ++e) s += net.y_row[e] * V[net.col_idx[e]];
    return V[i] * std::conj(s);
  };
  std::vector<cplx> sinj(net.n);
  std::vector<char> need(net.n, 0);
  for (int k : on) need[net.net_bus[c.gens[k].bus]] = 1;
  for (int i = 0; i < net.n; ++i)
    if (need[i]) sinj[i] = injection(i);
  for (int k : on) {
    const int i = net.net_bus[c.gens[k].bus];
    g.qg[k] = sinj[i].imag() * base + g.qd[i];
  }
  if (on.size() > 1) {
    std::vector<double> ngg(net.n, 0), mbus(net.n, 0), tot(net.n, 0), qmin_b(net.n, 0), qmax_b(net.n, 0);
    for (int k : on) ngg[net.net_bus[c.gens[k].bus]] += 1;
    for (int k : on) g.qg[k] /= ngg[net.net_bus[c.gens[k].bus]];
    std::vector<double> qmin(c.gens.size()), qmax(c.gens.size());
    for (int k : on) {
      const Gen& gk = c.gens[k];
      double m = std::fabs(g.qg[k]);
      if (!std::isinf(gk.qmax)) m += std::fabs(gk.qmax);
      if (!std::isinf(gk.qmin)) m += std::fabs(gk.qmin);
      mbus[net.net_bus[gk.bus]] += m;
    }
    for (int k : on) {
      const Gen& gk = c.gens[k];
      const int i = net.net_bus[gk.bus];
      qmin[k] = std::isinf(gk.qmin) ? (gk.qmin > 0 ? mbus[i] : -mbus[i]) : gk.qmin;
      qmax[k] = std::isinf(gk.qmax) ? (gk.qmax > 0 ? mbus[i] : -mbus[i]) : gk.qmax;
      tot[i] += g.qg[k];
      qmin_b[i] += qmin[k];
      qmax_b[i] += qmax[k];
    }
    for (int k : on) {
      const int i = net.net_bus[c.gens[k].bus];
      if (std::fabs(qmin_b[i] - qmax_b[i]) < 10 * eps) g.qg[k] = qmin[k] + (tot[i] - qmin_b[i]) / ngg[i];
      else g.qg[k] = qmin[k] + (tot[i] - qmin_b[i]) / (qmax_b[i] - qmin_b[i] + eps) * (qmax[k] - qmin[k]);
    }
  }
  // Reference generator(s): the first takes the bus injection plus load minus the others.
  int ref = -1;
  for (int i = 0; i < net.n; ++i)
    if (types[i] == REF) ref = i;
  int first = -1;
  double others = 0;
  for (int k : on)
    if (net.net_bus[c.gens[k].bus] == ref) {
      if (first < 0) first = k;
      else others += g.pg[k];
    }
  if (first >= 0) g.pg[first] = sinj[ref].real() * base + g.pd[ref] - others;
}

// Runs fn() as one task and waits: host-side set-up work runs on a worker while the
// submitting thread sleeps (idle StarPU workers poll, so work on the submitting thread
// would compete with them for the cores).
template <class Fn>
void run_step(Executor& exec, const char* name, Fn& fn) {
  VariableHandle<int> token(0, name);
  codelets::insert_pf_step(exec, name,
                           {+[](void* ctx) {
                              (*static_cast<Fn*>(ctx))();
                              return true;
                            },
                            &fn},
                           token);
  exec.wait_all();
}

}  // namespace

NewtonResult solve(const Case& c, const SolveOptions& o) {
  require(o.tol > 0 && std::isfinite(o.tol), "powerflow::solve: tol must be positive and finite");
  require(o.max_iter >= 0, "powerflow::solve: max_iter must be >= 0");
  auto t_start = clock_type::now();
  SequentialExecutor seq;
  Executor& exec = o.executor ? *o.executor : seq;
  NewtonResult res;

  Network net;
  GenState g;
  std::vector<int> requested, types;
  std::vector<cplx> V;
  auto build = [&] {
    net = make_network(c);
    g = initial_gen_state(c, net);
    requested = file_bus_types(c, net);
    types = bus_types(c, net, requested, g);
    V = start_voltage(c, net, types, g, o.flat_start);
  };
  run_step(exec, "pf_network", build);
  const std::vector<int> types0 = types;
  const int ref0 = static_cast<int>(std::find(types.begin(), types.end(), int(REF)) - types.begin());
  const double va_ref0 = c.buses[net.case_bus[ref0]].va * M_PI / 180.0;
  bool any_limited = false;
  std::string status;
  for (;;) {
    auto t_setup = clock_type::now();
    std::vector<cplx> sbus;
    std::unique_ptr<NewtonSystem> psys;
    auto make_system = [&] {
      sbus = make_sbus(c, net, g);
      psys = std::make_unique<NewtonSystem>(net, types, sbus, o, exec);
    };
    run_step(exec, "pf_system", make_system);
    NewtonSystem& sys = *psys;
    res.setup_s += seconds_since(t_setup);
    sys.start();
    status = sys.run(V, res.solves, res, t_start);
    if (res.solves == 0) {
      res.colors = sys.coloring().coloring.num_colors;
      res.color_lower_bound = sys.coloring().coloring.lower_bound;
      res.jacobian_rows = sys.index().size();
      res.jacobian_nnz = sys.pattern().nnz();
    }
    res.coloring_s += sys.coloring_s;
    res.klu_analyze_s += sys.analyze_s;
    ++res.solves;
    if (status != "converged" || !o.q_limits) break;

    update_generators(c, net, types, V, g);
    const double tolq = 5e-6;
    std::vector<int> mx, mn;
    for (std::size_t k = 0; k < c.gens.size(); ++k) {
      if (!g.on[k]) continue;
      if (g.qg[k] > c.gens[k].qmax + tolq) mx.push_back(static_cast<int>(k));
      else if (g.qg[k] < c.gens[k].qmin - tolq) mn.push_back(static_cast<int>(k));
    }
    if (mx.empty() && mn.empty()) break;
    // Infeasible: every remaining PV/ref generator violates, all on the same side.
    std::vector<int> remaining, infeas(mx);
    infeas.insert(infeas.end(), mn.begin(), mn.end());
    std::sort(infeas.begin(), infeas.end());
    for (std::size_t k = 0; k < c.gens.size(); ++k)
      if (g.on[k] && types[net.net_bus[c.gens[k].bus]] != PQ) remaining.push_back(static_cast<int>(k));
    if (infeas == remaining && (mx.empty() || mn.empty())) {
      status = "infeasible";
      break;
    }
    for (int k : mx) g.qg[k] = c.gens[k].qmax;
    for (int k : mn) g.qg[k] = c.gens[k].qmin;
    std::vector<int> lim(mx);
    lim.insert(lim.end(), mn.begin(), mn.end());
    for (int k : lim) {
      const int i = net.net_bus[c.gens[k].bus];
      g.on[k] = 0;
      g.pd[i] -= g.pg[k];
      g.qd[i] -= g.qg[k];
      requested[i] = PQ;
    }
    any_limited = true;
    const int ref_before = static_cast<int>(std::find(types.begin(), types.end(), int(REF)) - types.begin());
    types = bus_types(c, net, requested, g);
    const int ref_now = static_cast<int>(std::find(types.begin(), types.end(), int(REF)) - types.begin());
    if (ref_now != ref_before)
      for (int i = 0; i < net.n; ++i)
        if (types[i] != PQ) requested[i] = types[i];
  }
  res.converged = status == "converged";
  res.status = status;

  // Results per Case bus.
  const std::size_t nb = c.buses.size();
  res.vm.resize(nb);
  res.va_deg.resize(nb);
  res.bus_type.assign(nb, ISOLATED);
  double shift = 0.0;
  if (any_limited && types[ref0] != REF) shift = va_ref0 - std::arg(V[ref0]);
  for (std::size_t b = 0; b < nb; ++b) {
    const int i = net.net_bus[b];
    if (i < 0) {
      res.vm[b] = c.buses[b].vm;
      res.va_deg[b] = c.buses[b].va;
      continue;
    }
    res.vm[b] = std::abs(V[i]);
    res.va_deg[b] = (std::arg(V[i]) + shift) * 180.0 / M_PI;
    res.bus_type[b] = types[i];
  }
  for (int i = 0; i < net.n; ++i)
    if (types0[i] != PQ && types[i] == PQ) ++res.buses_switched;
  res.total_s = seconds_since(t_start);
  return res;
}

}  // namespace stardiff::powerflow
