// SPDX-License-Identifier: LGPL-2.1-or-later
// apps/pf/main.cpp — stardiff-pf: Newton–Raphson AC power flow on a MATPOWER case.
//
//   stardiff-pf CASE.m [--tol T] [--max-iter K] [--qlim] [--order natural|lf|sl|best]
//               [--jacobian ad|ad-dense|analytic] [--flat-start] [--csv OUT] [--json]
//               [--executor starpu|sequential] [--blocks B]
// Exit codes: 0 converged; 1 not converged / singular (JSON still printed); 2 bad input or
// usage. --json prints exactly one JSON object on stdout: case, buses, branches, converged,
// status, iterations, max_mismatch, colors, color_lower_bound, jacobian_s, linsolve_s,
// total_s (+ a few extra fields); buses counts the case's bus rows, branches the in-service
// branches. Human output (one line per iteration) goes to stderr with
// --json, to stdout otherwise. --csv writes `bus,Vm,Va_deg` per bus in case-file order
// (integer bus ids, %.17g values). total_s excludes parsing and StarPU start-up.
#include <chrono>
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

}  // namespace

int main(int argc, char** argv) {
  std::string case_path, csv_path, executor_kind = "starpu";
  bool json = false;
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
    } else if (!a.empty() && a[0] == '-') {
      usage_error("unknown option '" + a + "'");
    } else if (case_path.empty()) {
      case_path = a;
    } else {
      usage_error("more than one case file given ('" + case_path + "', '" + a + "')");
    }
  }
  if (case_path.empty()) usage_error("no case file given");
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
