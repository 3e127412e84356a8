// SPDX-License-Identifier: LGPL-2.1-or-later
// apps/pf/main.cpp — stardiff-pf: Newton–Raphson AC power flow on a MATPOWER case.
//
//   stardiff-pf CASE.m [--tol T] [--max-iter K] [--qlim] [--order natural|lf|sl|best]
//               [--jacobian ad|ad-dense|analytic] [--flat-start] [--csv OUT] [--json]
//               [--executor starpu|sequential] [--blocks B]
//               [--batch FILE | --batch-random K [--batch-seed S] [--batch-scale LO,HI]]
//               [--batch-write FILE] [--batch-tasks T]
// Exit codes: 0 converged; 1 not converged / singular (JSON still printed); 2 bad input or
// usage. --json prints exactly one JSON object on stdout: case, buses, branches, converged,
// status, iterations, max_mismatch, colors, color_lower_bound, jacobian_s, linsolve_s,
// total_s (+ a few extra fields); buses counts the case's bus rows, branches the in-service
// branches. Human output (one line per iteration) goes to stderr with
// --json, to stdout otherwise. --csv writes `bus,Vm,Va_deg` per bus in case-file order
// (integer bus ids, %.17g values). total_s excludes parsing and StarPU start-up.
// Batch mode (--batch / --batch-random): powerflow::solve_batch on the scenarios (see
// stardiff/powerflow/batch.hpp); a bad scenario file exits 2 naming its line; the JSON object
// has batch, failed, converged (all converged), iterations (summed), base_*, total_s,
// per_scenario_s and "scenarios" (one object per scenario); exit 1 if any scenario or the
// base case failed. --qlim, --csv and --blocks are refused with a batch.
#include <chrono>
#include <cmath>
#include <vector>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "json.hpp"
#include "stardiff/powerflow.hpp"
#include "stardiff/stardiff.hpp"

using namespace stardiff;

namespace {

const char* kUsage =
    "usage: stardiff-pf CASE.m [options]\n"
    "Newton-Raphson AC power flow (polar, power balance) with coloured forward-mode AD Jacobians and KLU.\n"
    "  --tol T                 convergence tolerance on ||mismatch||_inf in p.u. (default 1e-8)\n"
    "  --max-iter K            Newton iterations per solve (default 10)\n"
    "  --qlim                  enforce generator Q limits (MATPOWER enforce_q_lims = 1)\n"
    "  --order natural|lf|sl|best   column colouring order (default best)\n"
    "  --jacobian ad|ad-dense|analytic  Jacobian by coloured forward AD touching only structurally\n"
    "                          non-zero partials (default), the dense Dual<N> sweep, or analytic formulas\n"
    "  --flat-start            start from Vm = 1, Va = reference angle (generator setpoints kept)\n"
    "  --csv OUT               write bus,Vm,Va_deg (case-file bus order) to OUT\n"
    "  --json                  print one JSON object on stdout (progress to stderr)\n"
    "  --executor starpu|sequential   task executor (default starpu)\n"
    "  --blocks B              bus blocks (tasks) per evaluation (default: by size)\n"
    "  --batch FILE            solve every load scenario of FILE (CSV, header scenario,bus,Pd,Qd; bus '*':\n"
    "                          Pd, Qd scale all loads; else absolute MW/MVAr at that bus), warm-started\n"
    "                          from the base case's solution\n"
    "  --batch-random K        instead: K scenarios, every load scaled by one factor drawn in [LO, HI]\n"
    "  --batch-seed S          seed of --batch-random (default 1)\n"
    "  --batch-scale LO,HI     range of --batch-random (default 0.95,1.05)\n"
    "  --batch-write FILE      also write the scenarios to FILE (the --batch format)\n"
    "  --batch-tasks T         tasks the scenarios are split into (default one per worker)\n"
    "  --help                  this text\n"
    "Exit status: 0 converged, 1 not converged, 2 bad input or usage.\n";

[[noreturn]] void usage_error(const std::string& msg) {
  std::fprintf(stderr, "stardiff-pf: %s\n%s", msg.c_str(), kUsage);
  std::exit(2);
}

double parse_double(const char* opt, const char* s) {
  char* end = nullptr;
  double v = std::strtod(s, &end);
  if (end == s || *end != '\0') usage_error(std::string(opt) + ": not a number: '" + s + "'");
  return v;
}
long parse_int(const char* opt, const char* s) {
  char* end = nullptr;
  long v = std::strtol(s, &end, 10);
  if (end == s || *end != '\0') usage_error(std::string(opt) + ": not an integer: '" + s + "'");
  return v;
}

int run_batch(const powerflow::Case& c, const powerflow::SolveOptions& opts, const std::string& path, long random,
              unsigned long long seed, double lo, double hi, const std::string& write_path, int tasks,
              const std::string& executor_kind, bool json) {
  FILE* human = json ? stderr : stdout;
  std::vector<powerflow::Scenario> sc;
  try {
    sc = random > 0 ? powerflow::random_scenarios(static_cast<int>(random), seed, lo, hi)
                    : powerflow::read_scenarios(path, c);
    if (!write_path.empty()) powerflow::write_scenarios(write_path, c, sc);
  } catch (const Error& e) {
    std::fprintf(stderr, "stardiff-pf: %s\n", e.what());
    return 2;
  }
  powerflow::BatchOptions bo;
  bo.tol = opts.tol;
  bo.max_iter = opts.max_iter;
  bo.flat_start = opts.flat_start;
  bo.order = opts.order;
  bo.jacobian = opts.jacobian;
  bo.executor = opts.executor;
  bo.tasks = tasks;
  powerflow::BatchResult r;
  try {
    r = powerflow::solve_batch(c, sc, bo);
  } catch (const Error& e) {
    std::fprintf(stderr, "stardiff-pf: %s\n", e.what());
    return 2;
  }
  const std::size_t k = r.scenarios.size();
  long long iters = 0;
  for (const auto& s : r.scenarios) iters += s.iterations;
  const double per = k ? r.scenarios_s / static_cast<double>(k) : 0.0;
  std::fprintf(human,
               "%s: base case %s after %d iterations (max mismatch %.3e p.u.); %zu scenarios in %d tasks, %d failed, "
               "%lld iterations; setup %.6f s, base %.6f s, scenarios %.6f s (%.6f s each), total %.6f s\n",
               c.name.c_str(), powerflow::to_string(r.base.status), r.base.iterations, r.base.max_mismatch, k, r.tasks,
               r.failed, iters, r.setup_s, r.base_s, r.scenarios_s, per, r.total_s);
  for (std::size_t s = 0; s < k; ++s)
    if (!r.scenarios[s].converged)
      std::fprintf(human, "scenario %zu: %s after %d iterations, max mismatch %.3e p.u.\n", s,
                   powerflow::to_string(r.scenarios[s].status), r.scenarios[s].iterations, r.scenarios[s].max_mismatch);
  if (json) {
    apps::JsonWriter w;
    w.field("case", c.name)
        .field("buses", static_cast<long long>(c.buses.size()))
        .field("branches", static_cast<long long>(c.branches.size()))
        .field("batch", static_cast<long long>(k))
        .field("converged", r.failed == 0 && r.base.converged)
        .field("failed", r.failed)
        .field("iterations", iters)
        .field("base_converged", r.base.converged)
        .field("base_status", powerflow::to_string(r.base.status))
        .field("base_iterations", r.base.iterations)
        .field("base_max_mismatch", r.base.max_mismatch)
        .field("colors", r.base.colors)
        .field("total_s", r.total_s)
        .field("per_scenario_s", per)
        .field("setup_s", r.setup_s)
        .field("base_s", r.base_s)
        .field("scenarios_s", r.scenarios_s)
        .field("tasks", r.tasks)
        .field("jacobian", powerflow::to_string(opts.jacobian))
        .field("executor", executor_kind);
    w.key("scenarios").begin_array();
    for (std::size_t s = 0; s < k; ++s) {
      const auto& x = r.scenarios[s];
      w.begin_object()
          .field("scenario", static_cast<long long>(s))
          .field("converged", x.converged)
          .field("status", powerflow::to_string(x.status))
          .field("iterations", x.iterations)
          .field("max_mismatch", x.max_mismatch)
          .end_object();
    }
    w.end_array();
    std::printf("%s\n", w.str().c_str());
  }
  return r.failed == 0 && r.base.converged ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string case_path, csv_path, executor_kind = "starpu", batch_path, batch_write;
  bool json = false;
  long batch_random = -1, batch_tasks = 0;
  bool blocks_given = false;
  unsigned long long batch_seed = 1;
  double batch_lo = 0.95, batch_hi = 1.05;
  powerflow::SolveOptions opts;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&](const char* opt) -> const char* {
      if (i + 1 >= argc) usage_error(std::string(opt) + " needs a value");
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--tol") {
      opts.tol = parse_double("--tol", next("--tol"));
      if (!(opts.tol > 0) || !std::isfinite(opts.tol)) usage_error("--tol must be a positive number");
    } else if (a == "--max-iter") {
      long k = parse_int("--max-iter", next("--max-iter"));
      if (k < 0 || k > 1000000) usage_error("--max-iter must be in [0, 1000000]");
      opts.max_iter = static_cast<int>(k);
    } else if (a == "--qlim") {
      opts.q_limits = true;
    } else if (a == "--order") {
      try {
        opts.order = forward::color_order_from_string(next("--order"));
      } catch (const Error& e) {
        usage_error(std::string("--order: ") + e.what());
      }
    } else if (a == "--jacobian") {
      std::string m = next("--jacobian");
      if (m == "ad") opts.jacobian = powerflow::JacobianMethod::AD;
      else if (m == "ad-dense") opts.jacobian = powerflow::JacobianMethod::ADDense;
      else if (m == "analytic") opts.jacobian = powerflow::JacobianMethod::Analytic;
      else usage_error("--jacobian must be ad, ad-dense or analytic, got '" + m + "'");
    } else if (a == "--flat-start") {
      opts.flat_start = true;
    } else if (a == "--csv") {
      csv_path = next("--csv");
    } else if (a == "--json") {
      json = true;
    } else if (a == "--executor") {
      executor_kind = next("--executor");
      if (executor_kind != "starpu" && executor_kind != "sequential")
        usage_error("--executor must be starpu or sequential, got '" + executor_kind + "'");
    } else if (a == "--blocks") {
      long b = parse_int("--blocks", next("--blocks"));
      if (b < 1 || b > 4096) usage_error("--blocks must be in [1, 4096]");
      opts.blocks = static_cast<int>(b);
      blocks_given = true;
    } else if (a == "--batch") {
      batch_path = next("--batch");
    } else if (a == "--batch-random") {
      batch_random = parse_int("--batch-random", next("--batch-random"));
      if (batch_random < 1 || batch_random > 10000000) usage_error("--batch-random must be in [1, 10000000]");
    } else if (a == "--batch-seed") {
      long v = parse_int("--batch-seed", next("--batch-seed"));
      if (v < 0) usage_error("--batch-seed must be >= 0");
      batch_seed = static_cast<unsigned long long>(v);
    } else if (a == "--batch-scale") {
      std::string v = next("--batch-scale");
      auto comma = v.find(',');
      if (comma == std::string::npos) usage_error("--batch-scale needs LO,HI, got '" + v + "'");
      batch_lo = parse_double("--batch-scale", v.substr(0, comma).c_str());
      batch_hi = parse_double("--batch-scale", v.substr(comma + 1).c_str());
      if (!std::isfinite(batch_lo) || !std::isfinite(batch_hi) || batch_lo > batch_hi)
        usage_error("--batch-scale needs finite LO <= HI");
    } else if (a == "--batch-write") {
      batch_write = next("--batch-write");
    } else if (a == "--batch-tasks") {
      batch_tasks = parse_int("--batch-tasks", next("--batch-tasks"));
      if (batch_tasks < 1 || batch_tasks > 1000000) usage_error("--batch-tasks must be in [1, 1000000]");
    } else if (!a.empty() && a[0] == '-') {
      usage_error("unknown option '" + a + "'");
    } else if (case_path.empty()) {
      case_path = a;
    } else {
      usage_error("more than one case file given ('" + case_path + "', '" + a + "')");
    }
  }
  if (case_path.empty()) usage_error("no case file given");
  const bool batch = !batch_path.empty() || batch_random > 0;
  if (!batch_path.empty() && batch_random > 0) usage_error("--batch and --batch-random are exclusive");
  if (batch && opts.q_limits) usage_error("--qlim is not supported with --batch");
  if (batch && !csv_path.empty()) usage_error("--csv is not supported with --batch");
  if (batch && blocks_given)
    usage_error("--blocks is not supported with --batch (each scenario's Newton runs in one task; use --batch-tasks)");
  if (!batch && (!batch_write.empty() || batch_tasks > 0)) usage_error("--batch-write / --batch-tasks need --batch or --batch-random");
  FILE* human = json ? stderr : stdout;

  powerflow::Case c;
  try {
    c = powerflow::read_matpower(case_path);
  } catch (const Error& e) {
    std::fprintf(stderr, "stardiff-pf: %s\n", e.what());
    return 2;
  }

  std::unique_ptr<Runtime> rt;
  std::unique_ptr<Executor> exec;
  try {
    if (executor_kind == "starpu") rt = std::make_unique<Runtime>();
    exec = make_executor(executor_kind);
  } catch (const Error& e) {
    std::fprintf(stderr, "stardiff-pf: %s\n", e.what());
    return 2;
  }
  opts.executor = exec.get();
  if (batch) return run_batch(c, opts, batch_path, batch_random, batch_seed, batch_lo, batch_hi, batch_write,
                              static_cast<int>(batch_tasks), executor_kind, json);
  opts.on_iteration = [&](const powerflow::IterationInfo& it) {
    std::fprintf(human, "solve %d iter %2d  max mismatch %.3e p.u.  t = %.6f s\n", it.solve, it.iteration,
                 it.mismatch, it.elapsed_s);
  };

  powerflow::NewtonResult r;
  try {
    r = powerflow::solve(c, opts);
  } catch (const Error& e) {
    std::fprintf(stderr, "stardiff-pf: %s\n", e.what());
    return 2;
  }

  if (!csv_path.empty()) {
    FILE* f = std::fopen(csv_path.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "stardiff-pf: cannot write '%s'\n", csv_path.c_str());
      return 2;
    }
    std::fprintf(f, "bus,Vm,Va_deg\n");
    for (std::size_t b = 0; b < c.buses.size(); ++b)
      std::fprintf(f, "%lld,%.17g,%.17g\n", static_cast<long long>(c.buses[b].id), r.vm[b], r.va_deg[b]);
    if (std::fclose(f) != 0) {
      std::fprintf(stderr, "stardiff-pf: error writing '%s'\n", csv_path.c_str());
      return 2;
    }
  }

  std::fprintf(human,
               "%s: %zu buses, %zu branches, %s after %d iterations (%d solves), max mismatch %.3e p.u.; "
               "J %d x %d, %d nnz, %d colours (lower bound %d); jacobian %.6f s, linsolve %.6f s, total %.6f s\n",
               c.name.c_str(), c.buses.size(), c.branches.size(), powerflow::to_string(r.status), r.iterations, r.solves,
               r.max_mismatch, r.jacobian_rows, r.jacobian_rows, r.jacobian_nnz, r.colors, r.color_lower_bound,
               r.jacobian_s, r.linsolve_s, r.total_s);
  if (json) {
    apps::JsonWriter w;
    w.field("case", c.name)
        .field("buses", static_cast<long long>(c.buses.size()))
        .field("branches", static_cast<long long>(c.branches.size()))
        .field("converged", r.converged)
        .field("status", powerflow::to_string(r.status))
        .field("iterations", r.iterations)
        .field("max_mismatch", r.max_mismatch)
        .field("colors", r.colors)
        .field("color_lower_bound", r.color_lower_bound)
        .field("jacobian_s", r.jacobian_s)
        .field("linsolve_s", r.linsolve_s)
        .field("total_s", r.total_s)
        .field("setup_s", r.setup_s)
        .field("coloring_s", r.coloring_s)
        .field("klu_analyze_s", r.klu_analyze_s)
        .field("klu_factors", r.klu_factors)
        .field("klu_refactors", r.klu_refactors)
        .field("solves", r.solves)
        .field("jacobian", powerflow::to_string(opts.jacobian))
        .field("order", forward::to_string(opts.order))
        .field("executor", executor_kind)
        .field("qlim", opts.q_limits);
    std::printf("%s\n", w.str().c_str());
  }
  return r.converged ? 0 : 1;
}
