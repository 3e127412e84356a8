// SPDX-License-Identifier: LGPL-2.1-or-later
// src/powerflow/newton_internal.hpp — the pieces of powerflow::solve (newton.cpp runs
// MATPOWER's runpf loop over them):
//  * NewtonSystem (newton_system.cpp) owns everything that depends on one set of bus types:
//    numbering, Jacobian pattern and colouring, KLU symbolic analysis, workspaces and the
//    data handles, so that the iterations allocate nothing; run() is one Newton solve.
//  * q_limit_round (q_limits.cpp): pfsoln's generator Q after a converged solve, and one
//    round of enforce_q_lims = 1 on the generator state and bus types.
//  * collect_result (newton_result.cpp): Vm, Va (degrees, reference angle restored) and
//    bus types per Case bus, and the count of switched buses.
#pragma once
#include <chrono>
#include <cmath>
#include <memory>
#include <vector>

#include "cpu/powerflow/pf_kernels.hpp"
#include "starpu/powerflow/cl_powerflow.hpp"
#include "stardiff/powerflow/jacobian.hpp"
#include "stardiff/powerflow/klu.hpp"
#include "stardiff/powerflow/network.hpp"
#include "stardiff/powerflow/newton.hpp"
#include "stardiff/runtime/handle.hpp"

namespace stardiff::powerflow::detail {

// The stopping rule before Newton step k (1-based), given the mismatch norm at the current
// iterate: Diverged when it is not finite, Converged when below tol, MaxIter when
// k > max_iter, else Step. powerflow::solve (NewtonSystem::check_and_step) and
// solve_batch both stop by it.
enum class NewtonDecision { Step, Converged, Diverged, MaxIter };
inline NewtonDecision newton_decision(double norm, double tol, int k, int max_iter) {
  if (!std::isfinite(norm)) return NewtonDecision::Diverged;
  if (norm < tol) return NewtonDecision::Converged;
  if (k > max_iter) return NewtonDecision::MaxIter;
  return NewtonDecision::Step;
}

using clock_type = std::chrono::steady_clock;
inline double seconds_since(clock_type::time_point t) {
  return std::chrono::duration<double>(clock_type::now() - t).count();
}

struct Block {
  codelets::PfBlockArgs args;
  VectorHandle<double> fp, fq, jp, jq;
  VariableHandle<double> norm{0.0, "block_norm"};
};

// Iteration k is the task chain J_k (Jacobian blocks) -> L_k (convergence check of the
// previous mismatch, KLU factor + solve) -> U_k (update) -> M_k (mismatch blocks). The
// submitting thread keeps one iteration queued ahead of the one it waits for, so the
// workers never wait for it: J_{k+1} runs beside M_k, and the colouring flows straight
// into J_1. Once L_k stops the solve (converged, diverged, singular, iteration limit) the
// queued tasks see the status and do nothing.
class NewtonSystem {
 public:
  // Cheap: the numbering only. Then start_coloring() (a task: the colouring needs only the
  // bus graph and the numbering), build() (the pattern, workspaces and handles; run it as
  // a task beside the colouring) and start().
  // bus_order: AMD's order of the bus graph, shared by the systems of one solve (the graph
  // does not change with the bus types); the first ordering step fills it.
  NewtonSystem(const Network& net, const std::vector<int>& types, const std::vector<cplx>& sbus,
               const SolveOptions& o, Executor& exec, std::vector<int>& bus_order);

  void start_coloring();
  // The bus ordering for KLU (a task; submit it after build() so that build goes first).
  void start_ordering();
  void build();
  // After build(): submits the KLU analysis and the colour maps (once the colouring is
  // done); they overlap with the first mismatch evaluation. Call from the submitting thread.
  void start();

  const PfIndex& index() const { return ix_; }
  const JacobianPattern& pattern() const { return pat_; }
  const JacobianColoring& coloring() const { return col_; }

  // Runs Newton from V (in/out). Returns the status; fills iterations and mismatch.
  NewtonStatus run(std::vector<cplx>& V, int solve_no, NewtonResult& res, clock_type::time_point t_start);

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

  static bool coloring_step(void* ctx);
  static bool color_map_step(void* ctx);
  static bool ordering_step(void* ctx);
  static bool analyze_step(void* ctx);
  static int check_and_step(void* ctx, int k, double* dx);
  void submit_mismatch();
  void submit_iteration(int k);

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
  KluSolver klu_;
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

// KLU's fill-reducing ordering of the Jacobian: AMD on the bus graph (computed into
// bus_order when it is empty, reused otherwise), each bus expanded to its Va and Vm
// variables. Empty if AMD failed.
std::vector<std::int32_t> klu_ordering(const Network& net, const PfIndex& ix, std::vector<int>& bus_order);

// After a converged solve at V: generator Q (pfsoln), then every violator of a Q limit
// fixed at it and its bus requested PQ (types recomputed, the new reference kept).
enum class QLimitRound { NoViolation, Infeasible, Switched };
QLimitRound q_limit_round(const Case& c, const Network& net, const std::vector<cplx>& V, GenState& g,
                          std::vector<int>& requested, std::vector<int>& types);

// Fills res.vm, res.va_deg, res.bus_type and res.buses_switched. When Q limits moved the
// reference away from ref0, angles are shifted so that ref0 keeps va_ref0 (radians).
void collect_result(const Case& c, const Network& net, const std::vector<int>& types0, const std::vector<int>& types,
                    const std::vector<cplx>& V, bool any_limited, int ref0, double va_ref0, NewtonResult& res);

}  // namespace stardiff::powerflow::detail
