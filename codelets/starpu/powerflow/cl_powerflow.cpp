// codelets/starpu/powerflow/cl_powerflow.cpp — unpack buffers, call the cpu:: power-flow kernels.
#include "starpu/powerflow/cl_powerflow.hpp"

namespace stardiff::codelets {
namespace {

cpu::PfOut outputs(const TaskContext& t, const PfBlockArgs& a) {
  return cpu::PfOut{t.buffers[1].data<double>(), t.buffers[2].data<double>(), a.out_p_off, a.out_q_off};
}

void pf_mismatch_task(const TaskContext& t) {
  const auto& a = t.arg<PfBlockArgs>();
  *t.buffers[3].data<double>() = cpu::pf_mismatch_cpu(a.view, t.buffers[0].data<const double>(), outputs(t, a), a.k0, a.k1);
}
void pf_jacobian_ad_task(const TaskContext& t) {
  const auto& a = t.arg<PfBlockArgs>();
  cpu::pf_jacobian_ad_cpu(a.view, a.map, t.buffers[0].data<const double>(), outputs(t, a), a.k0, a.k1, !a.dense);
}
void pf_jacobian_analytic_task(const TaskContext& t) {
  const auto& a = t.arg<PfBlockArgs>();
  cpu::pf_jacobian_analytic_cpu(a.view, a.map, t.buffers[0].data<const double>(), outputs(t, a), a.k0, a.k1);
}
void pf_update_task(const TaskContext& t) {
  const auto& v = t.arg<cpu::PfView>();
  if (*t.buffers[4].data<const int>() != 1) return;  // the linear solve failed: keep V
  cpu::pf_update_cpu(v, t.buffers[0].data<const double>(), t.buffers[1].data<double>(), t.buffers[2].data<double>(),
                     t.buffers[3].data<double>());
}

void pf_linsolve_task(const TaskContext& t) {
  const auto& a = t.arg<PfLinsolveArgs>();
  *t.buffers[1].data<int>() = a.solve(a.ctx, t.buffers[0].data<double>()) ? 1 : 0;
}

void pf_step_task(const TaskContext& t) {
  const auto& a = t.arg<PfStepArgs>();
  *t.buffers[0].data<int>() = a.fn(a.ctx) ? 1 : 0;
}

constexpr std::size_t D = sizeof(double);
}  // namespace

const Codelet cl_pf_mismatch("pf_mismatch", pf_mismatch_task, nullptr,
                             {{HandleKind::Vector, D}, {HandleKind::Vector, D}, {HandleKind::Vector, D},
                              {HandleKind::Variable, D}});
const Codelet cl_pf_jacobian_ad("pf_jacobian_ad", pf_jacobian_ad_task, nullptr,
                                {{HandleKind::Vector, D}, {HandleKind::Vector, D}, {HandleKind::Vector, D}});
const Codelet cl_pf_jacobian_analytic("pf_jacobian_analytic", pf_jacobian_analytic_task, nullptr,
                                      {{HandleKind::Vector, D}, {HandleKind::Vector, D}, {HandleKind::Vector, D}});
const Codelet cl_pf_update("pf_update", pf_update_task, nullptr,
                           {{HandleKind::Vector, D}, {HandleKind::Vector, D}, {HandleKind::Vector, D},
                            {HandleKind::Vector, D}, {HandleKind::Variable, sizeof(int)}});

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

void insert_pf_linsolve(Executor& exec, const PfLinsolveArgs& a, Handle& dx, Handle& status,
                        const std::vector<Handle*>& reads) {
  std::vector<DataAccess> acc;
  acc.reserve(reads.size() + 2);
  acc.push_back(out(dx));
  acc.push_back(out(status));
  for (Handle* h : reads) acc.push_back(in(*h));
  exec.submit(cl_pf_linsolve, acc, &a, sizeof a, {.name = "pf_linsolve", .priority = 1});
}
void insert_pf_mismatch(Executor& exec, const PfBlockArgs& a, Handle& V, Handle& fp, Handle& fq, Handle& norm) {
  exec.submit(cl_pf_mismatch, a, {in(V), out(fp), out(fq), out(norm)}, {.name = "pf_mismatch"});
}
void insert_pf_jacobian(Executor& exec, bool ad, const PfBlockArgs& a, Handle& V, Handle& jp, Handle& jq) {
  if (ad) exec.submit(cl_pf_jacobian_ad, a, {in(V), out(jp), out(jq)}, {.name = "pf_jacobian_ad"});
  else exec.submit(cl_pf_jacobian_analytic, a, {in(V), out(jp), out(jq)}, {.name = "pf_jacobian_analytic"});
}
void insert_pf_update(Executor& exec, const cpu::PfView& v, Handle& dx, Handle& va, Handle& vm, Handle& V,
                      Handle& status) {
  exec.submit(cl_pf_update, v, {in(dx), inout(va), inout(vm), inout(V), in(status)},
              {.name = "pf_update", .priority = 1});
}

}  // namespace stardiff::codelets
