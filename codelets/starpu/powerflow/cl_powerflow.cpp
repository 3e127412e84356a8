// SPDX-License-Identifier: LGPL-2.1-or-later
// codelets/starpu/powerflow/cl_powerflow.cpp — unpack buffers, call the cpu:: power-flow kernels.
#include "starpu/powerflow/cl_powerflow.hpp"

#include <chrono>

namespace stardiff::codelets {
namespace {

cpu::PfOut outputs(const TaskContext& t, const PfBlockArgs& a) {
  return cpu::PfOut{t.buffers[1].data<double>(), t.buffers[2].data<double>(), a.out_p_off, a.out_q_off};
}

bool stopped(const TaskContext& t, int status_buffer) { return *t.buffers[status_buffer].data<const int>() != 0; }

void pf_mismatch_task(const TaskContext& t) {
  if (stopped(t, 4)) return;
  const auto& a = t.arg<PfBlockArgs>();
  *t.buffers[3].data<double>() = cpu::pf_mismatch_cpu(a.view, t.buffers[0].data<const double>(), outputs(t, a), a.k0, a.k1);
}

template <bool AD>
void pf_jacobian_task(const TaskContext& t) {
  if (stopped(t, 3)) return;
  const auto& a = t.arg<PfBlockArgs>();
  const auto t0 = std::chrono::steady_clock::now();
  const cpu::PfJacMap& m = a.map_ref ? *a.map_ref : a.map;
  if (AD) cpu::pf_jacobian_ad_cpu(a.view, m, t.buffers[0].data<const double>(), outputs(t, a), a.k0, a.k1, !a.dense);
  else cpu::pf_jacobian_analytic_cpu(a.view, m, t.buffers[0].data<const double>(), outputs(t, a), a.k0, a.k1);
  if (a.elapsed) *a.elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void pf_update_task(const TaskContext& t) {
  if (stopped(t, 4)) return;  // converged, diverged or the linear solve failed: keep V
  const auto& v = t.arg<cpu::PfView>();
  cpu::pf_update_cpu(v, t.buffers[0].data<const double>(), t.buffers[1].data<double>(), t.buffers[2].data<double>(),
                     t.buffers[3].data<double>());
}

void pf_linsolve_task(const TaskContext& t) {
  const auto& a = t.arg<PfLinsolveArgs>();
  int& status = *t.buffers[1].data<int>();
  if (status == 0) status = a.step(a.ctx, a.k, t.buffers[0].data<double>());
}

void pf_step_task(const TaskContext& t) {
  const auto& a = t.arg<PfStepArgs>();
  *t.buffers[0].data<int>() = a.fn(a.ctx) ? 1 : 0;
}

constexpr std::size_t D = sizeof(double);
}  // namespace

const BufferSpec kStatus{HandleKind::Variable, sizeof(int)};
const Codelet cl_pf_mismatch("pf_mismatch", pf_mismatch_task, nullptr,
                             {{HandleKind::Vector, D}, {HandleKind::Vector, D}, {HandleKind::Vector, D},
                              {HandleKind::Variable, D}, kStatus});
const Codelet cl_pf_jacobian_ad("pf_jacobian_ad", pf_jacobian_task<true>, nullptr,
                                {{HandleKind::Vector, D}, {HandleKind::Vector, D}, {HandleKind::Vector, D}, kStatus,
                                 kStatus});
const Codelet cl_pf_jacobian_analytic("pf_jacobian_analytic", pf_jacobian_task<false>, nullptr,
                                      {{HandleKind::Vector, D}, {HandleKind::Vector, D}, {HandleKind::Vector, D},
                                       kStatus, kStatus});
const Codelet cl_pf_update("pf_update", pf_update_task, nullptr,
                           {{HandleKind::Vector, D}, {HandleKind::Vector, D}, {HandleKind::Vector, D},
                            {HandleKind::Vector, D}, kStatus});

const Codelet cl_pf_linsolve("pf_linsolve", pf_linsolve_task);
const Codelet cl_pf_step("pf_step", pf_step_task);

void insert_pf_step(Executor& exec, const char* name, const PfStepArgs& a, Handle& status,
                    const std::vector<DataAccess>& more) {
  std::vector<DataAccess> acc;
  acc.reserve(more.size() + 1);
  acc.push_back(out(status));
  acc.insert(acc.end(), more.begin(), more.end());
  exec.submit(cl_pf_step, acc, &a, sizeof a, {.name = name, .priority = 2});
}

void insert_pf_linsolve(Executor& exec, const PfLinsolveArgs& a, Handle& dx, Handle& status, Handle& ticket,
                        const std::vector<Handle*>& reads) {
  std::vector<DataAccess> acc;
  acc.reserve(reads.size() + 3);
  acc.push_back(out(dx));
  acc.push_back(inout(status));
  acc.push_back(out(ticket));
  for (Handle* h : reads) acc.push_back(in(*h));
  exec.submit(cl_pf_linsolve, acc, &a, sizeof a, {.name = "pf_linsolve", .priority = 1});
}
void insert_pf_mismatch(Executor& exec, const PfBlockArgs& a, Handle& V, Handle& fp, Handle& fq, Handle& norm,
                        Handle& status) {
  exec.submit(cl_pf_mismatch, a, {in(V), out(fp), out(fq), out(norm), in(status)}, {.name = "pf_mismatch"});
}
void insert_pf_jacobian(Executor& exec, bool ad, const PfBlockArgs& a, Handle& V, Handle& jp, Handle& jq,
                        Handle& status, Handle& ready) {
  if (ad)
    exec.submit(cl_pf_jacobian_ad, a, {in(V), out(jp), out(jq), in(status), in(ready)}, {.name = "pf_jacobian_ad"});
  else
    exec.submit(cl_pf_jacobian_analytic, a, {in(V), out(jp), out(jq), in(status), in(ready)},
                {.name = "pf_jacobian_analytic"});
}
void insert_pf_update(Executor& exec, const cpu::PfView& v, Handle& dx, Handle& va, Handle& vm, Handle& V,
                      Handle& status) {
  exec.submit(cl_pf_update, v, {in(dx), inout(va), inout(vm), inout(V), in(status)},
              {.name = "pf_update", .priority = 1});
}

}  // namespace stardiff::codelets
