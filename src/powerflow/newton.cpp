// src/powerflow/newton.cpp — Newton–Raphson power flow with Q-limit enforcement.
//
// NewtonSystem owns everything that depends on one set of bus types: numbering, Jacobian
// pattern and colouring, KLU symbolic analysis, workspaces and the data handles, so that
// the iterations allocate nothing. solve() runs MATPOWER's runpf loop around it.
//
// Iteration k is the task chain J_k (Jacobian blocks) -> L_k (convergence check of the
// previous mismatch, KLU factor + solve) -> U_k (update) -> M_k (mismatch blocks). The
// submitting thread keeps one iteration queued ahead of the one it waits for, so the
// workers never wait for it: J_{k+1} runs beside M_k, and the colouring flows straight
// into J_1. Once L_k stops the solve (converged, diverged, singular, iteration limit) the
// queued tasks see the status and do nothing.
#include "stardiff/powerflow/newton.hpp"


#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>

#include "core/amd_graph.hpp"
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
  // Cheap: the numbering only. Then start_coloring() (a task: the colouring needs only the
  // bus graph and the numbering), build() (the pattern, workspaces and handles; run it as
  // a task beside the colouring) and start().
  // bus_order: AMD's order of the bus graph, shared by the systems of one solve (the graph
  // does not change with the bus types); the first ordering step fills it.
  NewtonSystem(const Network& net, const std::vector<int>& types, const std::vector<cplx>& sbus,
               const SolveOptions& o, Executor& exec, std::vector<int>& bus_order)
      : net_(net), sbus_(sbus), opts_(o), exec_(exec), bus_order_(bus_order) {
    ix_ = make_index(types);
  }

  void start_coloring() {
    if (ix_.size() > 0) codelets::insert_pf_step(exec_, "pf_coloring", {&NewtonSystem::coloring_step, this}, hcolor_);
  }
  // The bus ordering for KLU (a task; submit it after build() so that build goes first).
  void start_ordering() {
    if (ix_.size() > 0) codelets::insert_pf_step(exec_, "pf_ordering", {&NewtonSystem::ordering_step, this}, hordered_);
  }

  void build() {
    const Network& net = net_;
    const SolveOptions& o = opts_;
    Executor& exec = exec_;
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
    if (nb <= 0) nb = exec.concurrency() <= 1 ? 1 : npvpq >= 4096 ? 4 : npvpq >= 1024 ? 2 : 1;
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
    jac_seconds_.assign(blocks_.size(), 0.0);
    for (std::size_t b = 0; b < blocks_.size(); ++b) {
      jac_args_[b].map_ref = &live_map_;
      jac_args_[b].elapsed = &jac_seconds_[b];
      jac_args_[b].dense = o.jacobian == JacobianMethod::ADDense;
    }
    // Rings of kRing: L_k writes slot k % kRing, which the caller reads before it submits
    // iteration k + 2 — so L_{k+kRing} (submitted later still) never overwrites it early.
    log_.resize(kRing);
    for (int k = 0; k < kRing; ++k) tickets_.push_back(std::make_unique<VariableHandle<int>>(0, "step_ticket"));
    hV_ = VectorHandle<double>(V_.data(), V_.size(), "V");
    hva_ = VectorHandle<double>(va_.data(), va_.size(), "va");
    hvm_ = VectorHandle<double>(vm_.data(), vm_.size(), "vm");
    hdx_ = VectorHandle<double>(dx_.data(), dx_.size(), "dx");
    for (auto& b : blocks_)
      for (Handle* h : std::initializer_list<Handle*>{&b->jp, &b->jq, &b->fp, &b->fq, &b->norm}) linsolve_reads_.push_back(h);
    linsolve_reads_.push_back(&hklu_);
  }

  // After build(): submits the KLU analysis and the colour maps (once the colouring is
  // done); they overlap with the first mismatch evaluation. Call from the submitting thread.
  void start() {
    if (ix_.size() > 0) {
      codelets::insert_pf_step(exec_, "pf_klu_analyze", {&NewtonSystem::analyze_step, this}, hklu_, {in(hordered_)});
      codelets::insert_pf_step(exec_, "pf_color_map", {&NewtonSystem::color_map_step, this}, hmap_, {in(hcolor_)});
    }
  }

  const PfIndex& index() const { return ix_; }
  const JacobianPattern& pattern() const { return pat_; }
  const JacobianColoring& coloring() const { return col_; }

  // Runs Newton from V (in/out). Returns the status string; fills iterations and mismatch.
  std::string run(std::vector<cplx>& V, int solve_no, NewtonResult& res, clock_type::time_point t_start) {
    t_start_ = t_start;
    {
      auto g1 = hV_.acquire(Access::W), g2 = hva_.acquire(Access::W), g3 = hvm_.acquire(Access::W);
      auto g4 = hstatus_.acquire(Access::W);
      hstatus_.value() = kRunning;
      for (int i = 0; i < net_.n; ++i) {
        V_[2 * i] = V[i].real();
        V_[2 * i + 1] = V[i].imag();
        va_[i] = std::arg(V[i]);
        vm_[i] = std::abs(V[i]);
      }
    }
    submit_mismatch();  // M_0
    const int last = opts_.max_iter + 1;  // L_last only checks the final mismatch
    submit_iteration(1);
    int status = kRunning;
    for (int k = 1; k <= last && status == kRunning; ++k) {
      if (k < last) submit_iteration(k + 1);
      { auto g = tickets_[k % kRing]->acquire(Access::R); }  // L_k has run
      const StepLog& L = log_[k % kRing];
      res.mismatch_history.push_back(L.norm);
      if (opts_.on_iteration) opts_.on_iteration({solve_no, k - 1, L.norm, L.norm_known_s});
      res.iterations += L.stepped;
      res.jacobian_s += L.jacobian_s;
      res.linsolve_s += L.linsolve_s;
      res.max_mismatch = L.norm;
      status = L.status;
    }
    exec_.wait_all();  // the queued iteration's tasks (all skipped) end here
    res.klu_factors += klu_.factors();
    res.klu_refactors += klu_.refactors();
    {
      auto g = hV_.acquire(Access::R);
      for (int i = 0; i < net_.n; ++i) V[i] = cplx(V_[2 * i], V_[2 * i + 1]);
    }
    switch (status) {
      case kConverged: return "converged";
      case kDiverged: return "diverged";
      case kSingular: return "singular";
      default: return "max_iter";
    }
  }

 double coloring_s = 0, analyze_s = 0;

 private:
  static constexpr int kRunning = 0, kConverged = 1, kDiverged = 2, kSingular = 3, kMaxIter = 4;
  // What L_k saw and did: the mismatch norm of iteration k - 1 (and when it was known), the
  // status it left, whether it took a Newton step, and its Jacobian and KLU times.
  struct StepLog {
    double norm = 0, norm_known_s = 0, jacobian_s = 0, linsolve_s = 0;
    int status = kRunning;
    bool stepped = false;
  };

  static bool coloring_step(void* ctx) {
    auto* self = static_cast<NewtonSystem*>(ctx);
    auto t0 = clock_type::now();
    self->columns_ = color_jacobian_columns(self->net_, self->ix_, self->opts_.order);
    self->coloring_s = seconds_since(t0);
    return true;
  }
  static bool color_map_step(void* ctx) {
    auto* self = static_cast<NewtonSystem*>(ctx);
    auto t0 = clock_type::now();
    self->col_ = jacobian_coloring_maps(self->pat_, self->ix_, std::move(self->columns_));
    self->live_map_ = detail::make_map(self->pat_, &self->col_);
    self->coloring_s += seconds_since(t0);
    return true;
  }
  // KLU's fill-reducing ordering: AMD on the bus graph (Ybus pattern, n buses instead of
  // npv + 2 npq variables), each bus expanded to its Va and Vm variables — the 2x2 block
  // structure of the power-flow Jacobian. Needs only the network and the numbering.
  static bool ordering_step(void* ctx) {
    auto* self = static_cast<NewtonSystem*>(ctx);
    auto t0 = clock_type::now();
    const Network& net = self->net_;
    if (self->bus_order_.empty()) {  // the bus graph: Ybus's pattern without its diagonal
      std::vector<int> gp(net.n + 1, 0), gi;
      gi.reserve(net.row_idx.size());
      for (int j = 0; j < net.n; ++j) {
        for (std::int32_t e = net.col_ptr[j]; e < net.col_ptr[j + 1]; ++e)
          if (net.row_idx[e] != j) gi.push_back(net.row_idx[e]);
        gp[j + 1] = static_cast<int>(gi.size());
      }
      self->bus_order_ = stardiff::detail::amd_graph(net.n, gp.data(), gi.data());
    }
    self->perm_.clear();
    self->perm_.reserve(self->ix_.size());
    for (int b : self->bus_order_) {
      if (self->ix_.va_var[b] >= 0) self->perm_.push_back(self->ix_.va_var[b]);
      if (self->ix_.vm_var[b] >= 0) self->perm_.push_back(self->ix_.vm_var[b]);
    }
    self->analyze_s = seconds_since(t0);
    return true;
  }
  // KLU sees CSR(J) as CSC(J^T); the solve uses the transpose.
  static bool analyze_step(void* ctx) {
    auto* self = static_cast<NewtonSystem*>(ctx);
    auto t0 = clock_type::now();
    const bool ordered = self->perm_.size() == static_cast<std::size_t>(self->ix_.size());
    self->klu_.analyze(self->ix_.size(), self->pat_.row_ptr.data(), self->pat_.col_idx.data(),
                       ordered ? self->perm_.data() : nullptr);
    self->analyze_s += seconds_since(t0);
    return true;
  }
  // L_k, inside the pf_linsolve task (the Jacobian, mismatch and norm blocks are complete
  // and live in J_, F_ and the block norms: CPU workers share host memory).
  static int check_and_step(void* ctx, int k, double* dx) {
    auto* self = static_cast<NewtonSystem*>(ctx);
    StepLog& L = self->log_[k % kRing];
    L = StepLog{};
    double norm = 0.0;
    for (auto& b : self->blocks_) {
      const double v = b->norm.value();
      if (std::isnan(v) || std::isnan(norm)) norm = std::numeric_limits<double>::quiet_NaN();
      else norm = std::max(norm, v);
    }
    L.norm = norm;
    L.norm_known_s = seconds_since(self->t_start_);
    if (!std::isfinite(norm)) return L.status = kDiverged;
    if (norm < self->opts_.tol) return L.status = kConverged;
    if (k > self->opts_.max_iter) return L.status = kMaxIter;
    L.stepped = true;
    for (double s : self->jac_seconds_) L.jacobian_s = std::max(L.jacobian_s, s);
    const auto t0 = clock_type::now();
    bool ok = self->klu_.factor(self->J_.data());
    if (ok) {
      std::copy(self->F_.begin(), self->F_.begin() + self->ix_.size(), dx);
      ok = self->klu_.solve(dx, /*transpose=*/true);
    }
    L.linsolve_s = seconds_since(t0);
    return L.status = ok ? kRunning : kSingular;
  }

  void submit_mismatch() {
    for (auto& b : blocks_) codelets::insert_pf_mismatch(exec_, b->args, hV_, b->fp, b->fq, b->norm, hstatus_);
  }
  // J_k, L_k, U_k, M_k; for k = max_iter + 1 only the final check L_k.
  void submit_iteration(int k) {
    const bool step = k <= opts_.max_iter;
    if (step)
      for (std::size_t b = 0; b < blocks_.size(); ++b)
        codelets::insert_pf_jacobian(exec_, opts_.jacobian != JacobianMethod::Analytic, jac_args_[b], hV_,
                                     blocks_[b]->jp, blocks_[b]->jq, hstatus_, hmap_);
    codelets::insert_pf_linsolve(exec_, {&NewtonSystem::check_and_step, this, k}, hdx_, hstatus_, *tickets_[k % kRing],
                                 linsolve_reads_);
    if (step) {
      codelets::insert_pf_update(exec_, view_, hdx_, hva_, hvm_, hV_, hstatus_);
      submit_mismatch();
    }
  }

  const Network& net_;
  const std::vector<cplx>& sbus_;
  const SolveOptions& opts_;
  Executor& exec_;
  std::vector<int>& bus_order_;
  PfIndex ix_;
  JacobianPattern pat_;
  JacobianColoring col_;
  cpu::PfView view_;
  cpu::PfJacMap map_;
  std::vector<double> F_, dx_, J_, V_, va_, vm_;
  detail::KluSolver klu_;
  std::vector<std::unique_ptr<Block>> blocks_;
  std::vector<codelets::PfBlockArgs> jac_args_;
  cpu::PfJacMap live_map_;            // Jacobian map, filled by the colouring step
  std::vector<double> jac_seconds_;   // per block: run time of its last Jacobian task
  static constexpr int kRing = 3;
  std::vector<StepLog> log_;          // slot k % kRing: what L_k saw and did
  std::vector<std::unique_ptr<VariableHandle<int>>> tickets_;  // slot k % kRing: written by L_k
  clock_type::time_point t_start_;
  VectorHandle<double> hV_, hva_, hvm_, hdx_;
  VariableHandle<int> hstatus_{0, "linsolve_status"};
  forward::Coloring columns_;  // the colouring step's result, until the map step takes it
  std::vector<std::int32_t> perm_;  // the ordering step's result (empty if AMD failed)
  VariableHandle<int> hcolor_{0, "coloring_done"}, hmap_{0, "color_map_done"}, hordered_{0, "ordering_done"},
      hklu_{0, "klu_analyzed"};
  std::vector<Handle*> linsolve_reads_;
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
  // Host-side set-up runs as tasks (polling workers would slow it on this thread); its
  // errors (e.g. no usable reference bus) come back here unchanged.
  run_on_worker(exec, "pf_network", build);
  const std::vector<int> types0 = types;
  const int ref0 = static_cast<int>(std::find(types.begin(), types.end(), int(REF)) - types.begin());
  const double va_ref0 = c.buses[net.case_bus[ref0]].va * M_PI / 180.0;
  bool any_limited = false;
  std::vector<int> bus_order;  // AMD on the bus graph, computed by the first round
  std::string status;
  for (;;) {
    auto t_setup = clock_type::now();
    std::vector<cplx> sbus;
    NewtonSystem sys(net, types, sbus, o, exec, bus_order);
    sys.start_coloring();  // runs beside the rest of the set-up
    auto make_system = [&] {
      sbus = make_sbus(c, net, g);
      sys.build();
    };
    {
      WorkerStep built(exec, "pf_system", make_system);
      sys.start_ordering();  // after the set-up step: a worker takes it once free
      built.wait();
    }
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
