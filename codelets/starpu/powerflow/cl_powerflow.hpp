// SPDX-License-Identifier: LGPL-2.1-or-later
// codelets/starpu/powerflow/cl_powerflow.hpp — power-flow codelets and insertion functions.
//
// One Newton iteration k is the task chain J_k -> L_k -> U_k -> M_k over these codelets,
// and iteration k + 1 may be submitted before k is known to be needed: every task reads
// the solve's status variable (int: 0 running, anything else = stopped) and does nothing
// once it is non-zero, so the graph can run ahead of the submitting thread.
//
// Each block task covers positions [k0, k1) of the bus list [pv; pq] and reads the whole
// voltage vector V (2n doubles, interleaved complex, R). Outputs are two borrowed handles:
// the block's P rows and its Q rows (a 1-element dummy when the block has no PQ bus);
// args.out_p_off / out_q_off give the global index of their first element.
//   cl_pf_mismatch:         V (R), F_P (W), F_Q (W), norm (W variable: max |F| of the
//                           block), status (R)
//   cl_pf_jacobian_ad:      V (R), J_P (W), J_Q (W), status (R), ready (R: the token the
//                           colouring step writes) — CSR values by coloured forward AD, with
//                           the map *args.map_ref when set (filled by that step), else args.map
//   cl_pf_jacobian_analytic: same buffers, per-non-zero dSbus_dV formulas
//                           Both store their run time (s) in *args.elapsed when set.
//   cl_pf_update:           dx (R), va (RW), vm (RW), V (RW), status (R int variable) —
//                           Newton update of all buses, skipped when status != 0
//   cl_pf_linsolve:         dx (W), status (RW), ticket (W), then any number of R handles
//                           (the Jacobian, mismatch and norm blocks it depends on); while
//                           status is 0 it stores args.step(args.ctx, args.k, dx) — the
//                           caller's convergence check, KLU factor + solve — in status. The
//                           ticket lets the submitting thread wait for exactly this task.
//   cl_pf_step:             status (W int variable), then any accesses: runs args.fn(args.ctx)
//                           (a set-up step such as the colouring or KLU's symbolic analysis,
//                           so that independent steps overlap on the workers), status = result.
// The static arrays (Ybus, numbering, maps) travel as pointers in the argument block: the
// codelets are CPU-only (shared memory); a CUDA version would take them as handles.
#pragma once
#include <cstdint>
#include <vector>

#include "cpu/powerflow/pf_kernels.hpp"
#include "stardiff/runtime/executor.hpp"

namespace stardiff::codelets {

struct PfBlockArgs {
  cpu::PfView view;
  cpu::PfJacMap map;
  std::int32_t k0 = 0, k1 = 0;
  std::int32_t out_p_off = 0, out_q_off = 0;
  bool dense = false;  // cl_pf_jacobian_ad: carry all partials (classical dense sweep)
  const cpu::PfJacMap* map_ref = nullptr;  // Jacobian tasks: read the map here at run time
  double* elapsed = nullptr;               // Jacobian tasks: store the task's seconds here
};

extern const Codelet cl_pf_mismatch;
extern const Codelet cl_pf_jacobian_ad;
extern const Codelet cl_pf_jacobian_analytic;
extern const Codelet cl_pf_update;
extern const Codelet cl_pf_linsolve;

struct PfLinsolveArgs {
  int (*step)(void* ctx, int k, double* dx) = nullptr;  // returns the new status
  void* ctx = nullptr;
  int k = 0;
};

void insert_pf_mismatch(Executor& exec, const PfBlockArgs& a, Handle& V, Handle& fp, Handle& fq, Handle& norm,
                        Handle& status);
void insert_pf_jacobian(Executor& exec, bool ad, const PfBlockArgs& a, Handle& V, Handle& jp, Handle& jq,
                        Handle& status, Handle& ready);
struct PfStepArgs {
  bool (*fn)(void* ctx) = nullptr;
  void* ctx = nullptr;
};
extern const Codelet cl_pf_step;
void insert_pf_step(Executor& exec, const char* name, const PfStepArgs& a, Handle& status,
                    const std::vector<DataAccess>& more = {});

void insert_pf_linsolve(Executor& exec, const PfLinsolveArgs& a, Handle& dx, Handle& status, Handle& ticket,
                        const std::vector<Handle*>& reads);
void insert_pf_update(Executor& exec, const cpu::PfView& v, Handle& dx, Handle& va, Handle& vm, Handle& V,
                      Handle& status);

}  // namespace stardiff::codelets
