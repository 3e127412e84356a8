// SPDX-License-Identifier: LGPL-2.1-or-later
// src/powerflow/newton_system.cpp — NewtonSystem: set-up steps and the task chain of one
// Newton solve (see newton_internal.hpp).
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/amd_graph.hpp"
#include "powerflow/newton_internal.hpp"
#include "powerflow/pf_view.hpp"

namespace stardiff::powerflow::detail {

NewtonSystem::NewtonSystem(const Network& net, const std::vector<int>& types, const std::vector<cplx>& sbus,
                           const SolveOptions& o, Executor& exec, std::vector<int>& bus_order)
    : net_(net), sbus_(sbus), opts_(o), exec_(exec), bus_order_(bus_order) {
  ix_ = make_index(types);
}

void NewtonSystem::start_coloring() {
  if (ix_.size() > 0) codelets::insert_pf_step(exec_, "pf_coloring", {&NewtonSystem::coloring_step, this}, hcolor_);
}

void NewtonSystem::start_ordering() {
  if (ix_.size() > 0) codelets::insert_pf_step(exec_, "pf_ordering", {&NewtonSystem::ordering_step, this}, hordered_);
}

void NewtonSystem::build() {
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

void NewtonSystem::start() {
  if (ix_.size() > 0) {
    codelets::insert_pf_step(exec_, "pf_klu_analyze", {&NewtonSystem::analyze_step, this}, hklu_, {in(hordered_)});
    codelets::insert_pf_step(exec_, "pf_color_map", {&NewtonSystem::color_map_step, this}, hmap_, {in(hcolor_)});
  }
}

NewtonStatus NewtonSystem::run(std::vector<cplx>& V, int solve_no, NewtonResult& res, clock_type::time_point t_start) {
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
    case kConverged: return NewtonStatus::Converged;
    case kDiverged: return NewtonStatus::Diverged;
    case kSingular: return NewtonStatus::Singular;
    default: return NewtonStatus::MaxIter;
  }
}

bool NewtonSystem::coloring_step(void* ctx) {
  auto* self = static_cast<NewtonSystem*>(ctx);
  auto t0 = clock_type::now();
  self->columns_ = color_jacobian_columns(self->net_, self->ix_, self->opts_.order);
  self->coloring_s = seconds_since(t0);
  return true;
}

bool NewtonSystem::color_map_step(void* ctx) {
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
bool NewtonSystem::ordering_step(void* ctx) {
  auto* self = static_cast<NewtonSystem*>(ctx);
  auto t0 = clock_type::now();
  self->perm_ = klu_ordering(self->net_, self->ix_, self->bus_order_);
  self->analyze_s = seconds_since(t0);
  return true;
}

std::vector<std::int32_t> klu_ordering(const Network& net, const PfIndex& ix, std::vector<int>& bus_order) {
  if (bus_order.empty()) {  // the bus graph: Ybus's pattern without its diagonal
    std::vector<int> gp(net.n + 1, 0), gi;
    gi.reserve(net.row_idx.size());
    for (int j = 0; j < net.n; ++j) {
      for (std::int32_t e = net.col_ptr[j]; e < net.col_ptr[j + 1]; ++e)
        if (net.row_idx[e] != j) gi.push_back(net.row_idx[e]);
      gp[j + 1] = static_cast<int>(gi.size());
    }
    bus_order = stardiff::detail::amd_graph(net.n, gp.data(), gi.data());
  }
  std::vector<std::int32_t> perm;
  perm.reserve(ix.size());
  for (int b : bus_order) {
    if (ix.va_var[b] >= 0) perm.push_back(ix.va_var[b]);
    if (ix.vm_var[b] >= 0) perm.push_back(ix.vm_var[b]);
  }
  return perm;
}

// KLU sees CSR(J) as CSC(J^T); the solve uses the transpose.
bool NewtonSystem::analyze_step(void* ctx) {
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
int NewtonSystem::check_and_step(void* ctx, int k, double* dx) {
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
  switch (newton_decision(norm, self->opts_.tol, k, self->opts_.max_iter)) {
    case NewtonDecision::Diverged: return L.status = kDiverged;
    case NewtonDecision::Converged: return L.status = kConverged;
    case NewtonDecision::MaxIter: return L.status = kMaxIter;
    case NewtonDecision::Step: break;
  }
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

void NewtonSystem::submit_mismatch() {
  for (auto& b : blocks_) codelets::insert_pf_mismatch(exec_, b->args, hV_, b->fp, b->fq, b->norm, hstatus_);
}

// J_k, L_k, U_k, M_k; for k = max_iter + 1 only the final check L_k.
void NewtonSystem::submit_iteration(int k) {
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

}  // namespace stardiff::powerflow::detail
