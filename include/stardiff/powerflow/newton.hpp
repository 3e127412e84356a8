// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/powerflow/newton.hpp — Newton–Raphson AC power flow (polar, power balance).
//
// Contract:
//  * solve(case, options) runs MATPOWER's newtonpf from MATPOWER's start point (or a flat
//    start): state [Va(pv); Va(pq); Vm(pq)], mismatch [P(pv); P(pq); Q(pq)] = S(V) - Sbus,
//    converged when ||F||_inf < tol (checked before the first iteration too), at most
//    max_iter iterations per solve. Jacobian by coloured forward-mode AD (default), or the
//    analytic per-non-zero formulas. The Jacobian pattern and colouring are computed once per
//    set of bus types, KLU analyzes once and refactors each iteration; no vector or matrix is
//    allocated per iteration. All work is tasks on options.executor (a SequentialExecutor when null;
//    it must execute the tasks): set-up steps (the network; then the colouring, from the
//    bus graph, beside the pattern and workspaces; then the KLU analysis and the colour
//    maps beside the first mismatch), residual and Jacobian rows over blocks of buses, the
//    convergence check with the KLU factor + solve, the update. The calling thread only
//    submits and waits, one iteration ahead of the one it waits for (the queued tasks
//    skip themselves once the solve has stopped).
//  * q_limits: MATPOWER's enforce_q_lims = 1 (legacy runpf): after a converged solve, every
//    in-service generator whose Q (bus injection + Qd, shared between generators at a bus in
//    proportion to their Q ranges, pfsoln) violates a limit by more than 5e-6 MVAr is fixed
//    at it — all violators at once — and its bus becomes PQ (first remaining PV bus becomes
//    the reference if the reference is converted); solve again from the current solution;
//    repeat until none violates. Angles are finally shifted so the original reference bus
//    keeps its angle. All remaining PV/ref generators violating the same limit => failure.
//  * Numerical failures are returned: converged = false with status MaxIter, Diverged
//    (non-finite mismatch) or Singular (KLU could not factor J), Infeasible (Q limits),
//    and the last mismatch norm; to_string gives "max_iter", "diverged", "singular",
//    "infeasible" ("converged"). Bad options throw Error.
//  * The result gives Vm (p.u.) and Va (degrees) per Case bus in file order (isolated buses
//    keep their file values) and the final bus type per Case bus.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "stardiff/forward/coloring.hpp"
#include "stardiff/powerflow/matpower.hpp"
#include "stardiff/runtime/executor.hpp"

namespace stardiff::powerflow {

// AD: coloured forward mode touching only structurally non-zero partials (default);
// ADDense: the classical dense Dual<N> sweep; Analytic: MATPOWER's dSbus_dV per non-zero.
enum class JacobianMethod { AD, ADDense, Analytic };
const char* to_string(JacobianMethod m);

enum class NewtonStatus { Converged, MaxIter, Diverged, Singular, Infeasible };
const char* to_string(NewtonStatus s);  // "converged", "max_iter", "diverged", "singular", "infeasible"

struct IterationInfo {
  int solve = 0;       // Q-limit round (0 without Q limits)
  int iteration = 0;   // 0 = start point
  double mismatch = 0;
  double elapsed_s = 0;  // since solve() started
};

struct SolveOptions {
  double tol = 1e-8;
  int max_iter = 10;
  bool q_limits = false;
  bool flat_start = false;
  forward::ColorOrder order = forward::ColorOrder::Best;
  JacobianMethod jacobian = JacobianMethod::AD;
  Executor* executor = nullptr;  // null: sequential
  int blocks = 0;                // bus blocks (tasks per evaluation); 0 = by size
  std::function<void(const IterationInfo&)> on_iteration;
};

struct NewtonResult {
  bool converged = false;
  NewtonStatus status = NewtonStatus::MaxIter;
  int iterations = 0;  // total over Q-limit rounds
  int solves = 0;      // Newton solves (Q-limit rounds)
  double max_mismatch = 0;  // ||F||_inf at the returned point
  std::vector<double> vm, va_deg;  // per Case bus
  std::vector<int> bus_type;       // per Case bus: final effective type (1, 2, 3; 4 isolated)
  std::vector<double> mismatch_history;
  int colors = 0, color_lower_bound = 0;  // of the (last) Jacobian pattern
  int jacobian_rows = 0, jacobian_nnz = 0;
  int buses_switched = 0;  // PV/ref buses made PQ by Q limits
  // Wall-clock seconds: Jacobian evaluations (per iteration the longest block task,
  // summed), KLU factor/refactor + solve, the set-up step (Sbus, pattern, workspaces,
  // handles; waited for by the caller), the colouring and its maps, the KLU ordering and
  // symbolic analysis (tasks that overlap other set-up work and the first mismatch), and
  // the whole solve (parsed case in memory -> result).
  double jacobian_s = 0, linsolve_s = 0, setup_s = 0, coloring_s = 0, klu_analyze_s = 0, total_s = 0;
  int klu_factors = 0, klu_refactors = 0;
};

NewtonResult solve(const Case& c, const SolveOptions& opts = {});

}  // namespace stardiff::powerflow
