// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/powerflow/batch.hpp — many load scenarios of one network, solved as a batch.
//
// Contract:
//  * A Scenario changes the loads of the base Case only: bus b's load is its override
//    (absolute MW / MVAr) when given, else (p_scale * Pd_b, q_scale * Qd_b) of the case.
//    Generation, voltages set-points, bus types and branches stay those of the case.
//  * read_scenarios(path, case) reads the scenario CSV (header `scenario,bus,Pd,Qd`; one
//    row per override; bus = a case bus id, or `*` for a scale row whose Pd, Qd are the
//    factors p_scale, q_scale; scenario ids 0, 1, 2, ... in non-decreasing order without
//    gaps; at most one `*` row and one row per bus in a scenario; blank lines and lines
//    starting with '#' skipped). Any bad row throws Error naming the file and line number.
//  * random_scenarios(k, seed, lo, hi): k scale-only scenarios, p_scale = q_scale = a factor
//    drawn uniformly in [lo, hi] from a 64-bit mt19937 seeded with seed (same on every
//    platform). write_scenarios writes scenarios in the file format.
//  * scenario_case(case, s) is the Case a user would build for scenario s by hand (the
//    loads replaced); solve_batch must give what solve(scenario_case(case, s)) gives from
//    the same start point.
//  * solve_batch(case, scenarios, options) solves the base case from its start point
//    (MATPOWER's V0, or flat) and then every scenario by Newton (as solve(): same
//    iteration, tolerance, status rules; no Q limits) warm-started from the base solution
//    (from V0 when the base case does not converge). What does not depend on the loads is
//    built once: Ybus, numbering, Jacobian pattern and colouring, the KLU ordering; each
//    task analyses KLU once and factors J(V0) once — the first Jacobian of every scenario,
//    as no load enters J — solving every first step with it and refactoring later steps
//    from its pivot order, i.e. what a fresh factorization per scenario computes, so a
//    scenario's result does not depend on which task solved it or in which order: results
//    are bitwise the same for any executor and task count.
//    Scenarios are split into `tasks` contiguous chunks (0: one per worker, at most the
//    scenario count), one task each on options.executor. A scenario that does not converge
//    is reported in its ScenarioResult, never thrown. Bad options throw Error.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "stardiff/powerflow/newton.hpp"

namespace stardiff::powerflow {

struct Scenario {
  double p_scale = 1, q_scale = 1;
  struct Load {
    int bus = 0;  // index into Case::buses
    double pd = 0, qd = 0;  // MW, MVAr
  };
  std::vector<Load> loads;  // overrides
};

std::vector<Scenario> read_scenarios(const std::string& path, const Case& c);
std::vector<Scenario> random_scenarios(int k, std::uint64_t seed, double lo, double hi);
void write_scenarios(const std::string& path, const Case& c, const std::vector<Scenario>& s);
Case scenario_case(const Case& c, const Scenario& s);

struct BatchOptions {
  double tol = 1e-8;
  int max_iter = 10;
  bool flat_start = false;  // the base case's start point
  forward::ColorOrder order = forward::ColorOrder::Best;
  JacobianMethod jacobian = JacobianMethod::AD;
  Executor* executor = nullptr;  // null: sequential
  int tasks = 0;                 // 0: by concurrency
  bool keep_voltages = false;    // fill ScenarioResult::vm / va_deg
};

struct ScenarioResult {
  NewtonStatus status = NewtonStatus::MaxIter;
  bool converged = false;
  int iterations = 0;
  double max_mismatch = 0;
  std::vector<double> vm, va_deg;  // per Case bus (keep_voltages only)
};

struct BatchResult {
  NewtonResult base;  // the base case (vm, va_deg filled)
  std::vector<ScenarioResult> scenarios;
  int failed = 0;
  int tasks = 0;
  // Wall-clock seconds: the whole call (case in memory -> results), the shared set-up, the
  // base solve, and the scenarios (total_s - setup_s - base_s).
  double total_s = 0, setup_s = 0, base_s = 0, scenarios_s = 0;
};

BatchResult solve_batch(const Case& c, const std::vector<Scenario>& scenarios, const BatchOptions& opts = {});

}  // namespace stardiff::powerflow
