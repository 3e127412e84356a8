// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff-cde — European call under Heston with an optional leverage function L(t, s), by
// Hundsdorfer-Verwer ADI on the structured-mesh DSL (model: cde_solver.hpp), with the
// semi-analytic little-trap price (heston_analytic.hpp) when L = 1.
//
// Usage: stardiff-cde [--s0 X] [--K X] [--T X] [--v0 X] [--kappa X] [--theta X] [--sigma X]
//          [--rho X] [--rd X] [--rf X] [--ns N] [--nv N] [--steps N] [--damping N]
//          [--leverage FILE] [--tiles N] [--adjoint [--checkpoints N|all] [--stage-memory MIB]]
//          [--json] [--executor starpu|sequential]
// Defaults: in 't Hout-Foulon case A (S0 = K = 100, T = 1, v0 = theta = 0.04, kappa = 1.5,
// sigma = 0.3, rho = -0.9, r_d = 0.025, r_f = 0), 200 x 100 nodes, 100 HV steps, no damping.
// Prints price, analytic_price and their difference (when L = 1), solution_hash (FNV-1a of the
// bytes of u(T) at every node), setup_s and solve_s (the time-stepping, payoff to price), or
// one JSON object with --json. --adjoint: also the Greeks of one reverse sweep (cde_solver.hpp:
// d price / d s0 (delta), d2 price / d s0^2 (gamma), d price / d (v0, kappa, theta, sigma, rho,
// r_d), vega = d price / d sqrt(v0), and with --leverage d price / d L at every node), the tape
// report (recomputed steps, peak bytes) and adjoint_factor = (taped run + reverse sweep) / the
// primal run's time (the primal is run first, untaped). --checkpoints N: Revolve with N
// snapshots; all (the default): save-all. --stage-memory MIB (save-all only; default 2048, 0:
// none): the forward keeps the steps' stages for the reverse sweep, which then does not
// recompute them, for the first steps that fit in MIB (CdeConfig::stage_bytes; the same Greeks
// bit for bit); kept_steps and kept_bytes report them, kept_used the steps whose adjoint took them.
// Exit: 0 ok, 1 a non-finite price, 2 bad arguments or input.
#include <chrono>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include <unistd.h>

#include "cde_solver.hpp"
#include "cli.hpp"
#include "heston_analytic.hpp"
#include "json.hpp"
#include "leverage_csv.hpp"
#include "stardiff/adjoint/tape.hpp"
#include "stardiff/runtime/runtime.hpp"

using namespace stardiff;

namespace {

void usage(FILE* f) {
  std::fprintf(f,
               "usage: stardiff-cde [--s0 X] [--K X] [--T X] [--v0 X] [--kappa X] [--theta X] [--sigma X]\n"
               "         [--rho X] [--rd X] [--rf X] [--ns N] [--nv N] [--steps N] [--damping N]\n"
               "         [--leverage FILE] [--tiles N] [--adjoint [--checkpoints N|all] [--stage-memory MIB]]\n"
               "         [--json] [--executor starpu|sequential]\n"
               "European call under Heston (stochastic local volatility with --leverage: a CSV grid\n"
               "'label,s_1..s_M' then rows 't,L(t,s_1)..L(t,s_M)') by Hundsdorfer-Verwer ADI on ns x nv\n"
               "in 't Hout-Foulon nodes; prints the price at (s0, v0), the semi-analytic price when L = 1\n"
               "and their difference, and times. Defaults: in 't Hout-Foulon case A, 200 x 100, 100 steps.\n"
               "--adjoint: Greeks (delta, gamma, d/d v0, kappa, theta, sigma, rho, rd, vega, leverage) by one\n"
               "reverse sweep; --checkpoints N: Revolve with N snapshots, all (default): save-all;\n"
               "--stage-memory MIB: save-all keeps the steps' stages for the reverse sweep in up to MIB\n"
               "(default 2048; 0: recompute them; the same Greeks either way).\n"
               "Exit 0 ok, 1 non-finite price, 2 bad arguments or input.\n");
}

bool parse_double(const char* s, double& out) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s, &end);
  if (errno || end == s || *end != '\0' || !std::isfinite(v)) return false;
  out = v;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  cde::CdeConfig cfg;
  bool json = false, adjoint = false;
  int checkpoints = 0;  // 0: save-all
  bool ckpt_given = false, stage_given = false;
  std::string executor = "starpu", lev_file;
  auto bad = [&](const std::string& msg) {
    std::fprintf(stderr, "stardiff-cde: %s\n", msg.c_str());
    usage(stderr);
    return 2;
  };
  struct DoubleOpt {
    const char* name;
    double* dst;
  } dopts[] = {{"--s0", &cfg.p.s0},       {"--K", &cfg.p.K},         {"--T", &cfg.p.T},
               {"--v0", &cfg.p.v0},       {"--kappa", &cfg.p.kappa}, {"--theta", &cfg.p.theta},
               {"--sigma", &cfg.p.sigma}, {"--rho", &cfg.p.rho},     {"--rd", &cfg.p.rd},
               {"--rf", &cfg.p.rf}};
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    auto value = [&]() -> const char* { return a + 1 < argc ? argv[++a] : nullptr; };
    bool done = false;
    for (auto& o : dopts)
      if (arg == o.name) {
        const char* v = value();
        if (!v || !parse_double(v, *o.dst)) return bad(arg + " needs a finite number");
        done = true;
      }
    if (done) continue;
    if (arg == "--help" || arg == "-h") {
      usage(stdout);
      return 0;
    } else if (arg == "--json") {
      json = true;
    } else if (arg == "--adjoint") {
      adjoint = true;
    } else if (arg == "--checkpoints") {
      const char* v = value();
      ckpt_given = true;
      if (v && std::strcmp(v, "all") == 0) checkpoints = 0;
      else if (!v || !apps::parse_int(v, 1, 1L << 20, checkpoints))
        return bad("--checkpoints needs a snapshot count >= 1 or 'all'");
    } else if (arg == "--stage-memory") {
      const char* v = value();
      int mib = 0;
      if (!v || !apps::parse_int(v, 0, 1L << 24, mib)) return bad("--stage-memory needs a size in MiB >= 0");
      cfg.stage_bytes = static_cast<std::size_t>(mib) << 20;
      stage_given = true;
    } else if (arg == "--ns" || arg == "--nv" || arg == "--steps" || arg == "--damping" || arg == "--tiles") {
      const char* v = value();
      int* dst = arg == "--ns"      ? &cfg.ns
                 : arg == "--nv"    ? &cfg.nv
                 : arg == "--steps" ? &cfg.steps
                 : arg == "--tiles" ? &cfg.tiles
                                    : &cfg.damping;
      const long lo = arg == "--damping" || arg == "--tiles" ? 0 : arg == "--steps" ? 1 : 5;
      if (!v || !apps::parse_int(v, lo, 1L << 16, *dst))
        return bad(arg + " needs an integer >= " + std::to_string(lo) +
                   (lo == 5 ? " (grids below 5 points are refused)" : ""));
    } else if (arg == "--leverage") {
      const char* v = value();
      if (!v) return bad("--leverage needs a file");
      lev_file = v;
    } else if (arg == "--executor") {
      const char* v = value();
      if (!v || (std::strcmp(v, "starpu") != 0 && std::strcmp(v, "sequential") != 0))
        return bad("--executor needs starpu or sequential");
      executor = v;
    } else {
      return bad("unknown argument '" + arg + "'");
    }
  }
  if (ckpt_given && !adjoint) return bad("--checkpoints needs --adjoint");
  if (stage_given && !adjoint) return bad("--stage-memory needs --adjoint");
  {
    // Twelve full-grid dats (state, stages, right-hand sides, six matrix diagonals) and slack.
    // --adjoint: a second solver with the adjoints of its dats (and the damping matrices), and
    // the save-all tape (about nine saved arrays per step).
    double need = 12.5 * 8.0 * cfg.ns * static_cast<double>(cfg.nv);
    if (adjoint) need *= 3.2 + (checkpoints == 0 ? 0.75 * (cfg.steps + cfg.damping) : checkpoints * 0.1);
    if (adjoint && checkpoints == 0)  // the kept stages (three arrays an HV step, at most stage_bytes)
      need += std::min(static_cast<double>(cfg.stage_bytes),
                       3.0 * 8.0 * (cfg.ns + 2.0) * (cfg.nv + 3.0) * (cfg.steps + cfg.damping));
    const double have = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
    if (have > 0 && need > 0.8 * have)
      return bad("--ns " + std::to_string(cfg.ns) + " x --nv " + std::to_string(cfg.nv) + " needs about " +
                 std::to_string(static_cast<long long>(need / (1 << 20))) + " MiB; this machine has " +
                 std::to_string(static_cast<long long>(have / (1 << 20))) + " MiB");
  }
  bool unit_leverage = true;
  try {
    if (!lev_file.empty()) {
      auto lev = std::make_shared<cde::Leverage>(cde::read_leverage_csv(lev_file));
      cde::check_leverage(*lev);
      for (double x : lev->L) unit_leverage = unit_leverage && x == 1.0;
      cfg.leverage = lev;
    }
  } catch (const Error& e) {
    return bad(e.what());
  }
  std::unique_ptr<cde::CdeSolver> solver;
  std::unique_ptr<Runtime> rt;
  std::unique_ptr<Executor> ex;
  try {
    if (executor == "starpu") rt = std::make_unique<Runtime>();
    ex = make_executor(executor);
    auto t0 = std::chrono::steady_clock::now();
    solver = std::make_unique<cde::CdeSolver>(*ex, cfg);
    ex->wait_all();
    const double setup_s = apps::seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    solver->run();
    const double price = solver->price();
    const double solve_s = apps::seconds_since(t0);
    // FNV-1a over the bytes of u(T) at every node: equal hashes mean bitwise equal solutions.
    unsigned long long hash = 1469598103934665603ULL;
    for (double x : solver->solution()) {
      unsigned char b[sizeof(double)];
      std::memcpy(b, &x, sizeof b);
      for (unsigned char c : b) hash = (hash ^ c) * 1099511628211ULL;
    }
    char hash_hex[17];
    std::snprintf(hash_hex, sizeof hash_hex, "%016llx", hash);
    double analytic = NAN;
    double analytic_s = 0;
    if (unit_leverage) {
      t0 = std::chrono::steady_clock::now();
      analytic = cde::heston_call(cfg.p);
      analytic_s = apps::seconds_since(t0);
    }
    const double diff = price - analytic;
    // --adjoint: a second solver with active dats, taped once and reversed once.
    cde::Greeks gr;
    std::string ck_desc;
    double factor = NAN;
    if (adjoint) {
      cde::CdeConfig ca = cfg;
      ca.adjoint = true;
      const int total = cfg.steps + cfg.damping;
      const Checkpointing ck = checkpoints == 0 ? Checkpointing::save_all()
                                                : Checkpointing::revolve(total, std::min(checkpoints, total + 1));
      ck_desc = ck.describe();
      cde::CdeSolver as(*ex, ca);
      ex->wait_all();
      gr = as.greeks(ck);
      factor = (gr.forward_s + gr.reverse_s) / solve_s;
    }
    double lev_sum = 0, lev_max = 0;
    for (double g : gr.leverage) lev_sum += g, lev_max = std::max(lev_max, std::abs(g));
    if (json) {
      apps::JsonWriter j;
      j.field("ns", cfg.ns).field("nv", cfg.nv).field("steps", cfg.steps).field("damping", cfg.damping);
      j.field("executor", std::string(ex->kind())).field("tiles", solver->tiles());
      j.field("leverage", lev_file.empty() ? std::string("none") : lev_file);
      j.field("price", price).field("analytic_price", analytic).field("difference", diff);
      j.field("relative_difference", diff / analytic);
      j.field("solution_hash", std::string(hash_hex));
      j.field("setup_s", setup_s).field("solve_s", solve_s).field("analytic_s", analytic_s);
      if (adjoint) {
        j.field("adjoint_price", gr.price);
        j.key("greeks").begin_object();
        j.field("delta", gr.delta).field("gamma", gr.gamma).field("v0", gr.v0).field("kappa", gr.kappa);
        j.field("theta", gr.theta).field("sigma", gr.sigma).field("rho", gr.rho).field("rd", gr.rd);
        j.field("vega", gr.vega);
        if (!gr.leverage.empty()) {
          j.key("leverage").begin_object();
          j.field("nodes", static_cast<long long>(gr.leverage.size())).field("sum", lev_sum).field("max_abs", lev_max);
          j.key("values").begin_array();
          for (double g : gr.leverage) j.value(g);
          j.end_array().end_object();
        }
        j.end_object();
        j.field("checkpointing", ck_desc).field("tape_steps", static_cast<long long>(gr.steps));
        j.field("recomputed_steps", static_cast<long long>(gr.recomputed_steps));
        j.field("peak_bytes", static_cast<long long>(gr.peak_bytes));
        j.field("kept_steps", static_cast<long long>(gr.kept_steps)).field("kept_bytes", static_cast<long long>(gr.kept_bytes));
        j.field("kept_used", static_cast<long long>(gr.kept_used));
        j.field("forward_tape_s", gr.forward_s).field("reverse_s", gr.reverse_s).field("adjoint_factor", factor);
      }
      std::printf("%s\n", j.str().c_str());
    } else {
      std::fprintf(stderr, "stardiff-cde: %d x %d nodes, %d HV steps + %d damping, %d tiles, executor %s\n", cfg.ns,
                   cfg.nv, cfg.steps, cfg.damping, solver->tiles(), ex->kind());
      std::printf("price = %.17g\n", price);
      if (unit_leverage) {
        std::printf("analytic_price = %.15g\n", analytic);
        std::printf("difference = %.6g (relative %.3g)\n", diff, diff / analytic);
      } else {
        std::printf("analytic_price = n/a (leverage is not 1)\n");
      }
      std::printf("solution_hash = %s\n", hash_hex);
      std::printf("setup_s = %.6g  solve_s = %.6g  analytic_s = %.6g\n", setup_s, solve_s, analytic_s);
      if (adjoint) {
        std::printf("adjoint_price = %.17g\n", gr.price);
        std::printf("greeks: delta = %.17g  gamma = %.17g  v0 = %.17g  vega = %.17g\n", gr.delta, gr.gamma, gr.v0,
                    gr.vega);
        std::printf("greeks: kappa = %.17g  theta = %.17g  sigma = %.17g  rho = %.17g  rd = %.17g\n", gr.kappa,
                    gr.theta, gr.sigma, gr.rho, gr.rd);
        if (!gr.leverage.empty())
          std::printf("greeks: leverage: %zu nodes, sum = %.17g, max |d price / d L| = %.17g\n", gr.leverage.size(),
                      lev_sum, lev_max);
        std::printf("checkpointing = %s  recomputed_steps = %lld  peak_bytes = %zu  kept_steps = %lld  kept_bytes = %zu  "
                    "kept_used = %lld\n",
                    ck_desc.c_str(), static_cast<long long>(gr.recomputed_steps), gr.peak_bytes,
                    static_cast<long long>(gr.kept_steps), gr.kept_bytes, static_cast<long long>(gr.kept_used));
        std::printf("forward_tape_s = %.6g  reverse_s = %.6g  adjoint_factor = %.3g\n", gr.forward_s, gr.reverse_s,
                    factor);
      }
    }
    solver.reset();
    return std::isfinite(price) ? 0 : 1;
  } catch (const Error& e) {
    std::fprintf(stderr, "stardiff-cde: %s\n", e.what());
    return 2;
  }
}
