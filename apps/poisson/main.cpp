// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff-poisson — the OPS adjoint Poisson problem on the stardiff mesh DSL.
//
// Usage: stardiff-poisson [--nx N] [--ny N] [--iters K] [--tiles T] [--adjoint]
//          [--mode full|rev-acc] [--tol T] [--max-adjoint-iters N]
//          [--probe I,J]... [--perturb f|u,I,J,H] [--json] [--vtk FILE]
//          [--executor starpu|sequential]
// Runs the primal (timed: primal_s) and prints E = sum (u - ref)^2 (20 x 20, 10 iterations:
// 16.5173570176708). --adjoint also records the iterations and error loop on a tape
// (forward_s), seeds dE = 1, reverses (adjoint_s) and reports dE/df and dE/du0 at each
// probe (0-based interior indices). --perturb adds H to f or to the start iterate u at
// (I, J) before the run (finite-difference checks). --json: one object on stdout with
// total_error, primal_s, forward_s, adjoint_s, adjoint_factor, tasks, tape_bytes, probes.
// --mode full (the default; --adjoint) tapes every iteration. --mode rev-acc (implies
// --adjoint; needs K >= 1) runs K - 1 iterations untaped in a FixedPointAdjoint section,
// records the K-th on the nested tape and reverses it until the adjoint's relative change
// is <= --tol (default 1e-12; at most --max-adjoint-iters passes, default 100000; not
// converged: exit 1); it also runs the full tape and adds full_tape_bytes,
// full_adjoint_factor, adjoint_iterations, adjoint_change, adjoint_status and
// gradient_rel_diff (max |rev-acc - full| over dE/df and dE/du, over max |full|) before
// probes. tape_bytes is then the fixed point's memory (FixedPointReport::bytes) plus the
// outer tape's checkpoints.
// Exit: 0 ok, 1 E not finite (JSON still printed), 2 bad arguments.
// Under mpirun (StarPU-MPI, stardiff/runtime/runtime.hpp) every rank runs the same task graph
// over its share of the tiles and only rank 0 prints (one JSON object with --json); errors
// are printed by the ranks that meet them, and an error on a run of several ranks ends the
// whole job (exit 2) rather than leave the other ranks waiting.
#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "cli.hpp"
#include "json.hpp"
#include "poisson_problem.hpp"

using namespace stardiff;

namespace {
using apps::parse_int;
// The launcher's rank before any runtime exists (mpirun sets it), for messages only.
int launcher_rank() {
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"})
    if (const char* e = std::getenv(v); e && *e) return std::atoi(e);
  return 0;
}
using apps::seconds_since;
void usage(FILE* f) {
  std::fprintf(f,
               "usage: stardiff-poisson [--nx N] [--ny N] [--iters K] [--tiles T] [--adjoint]\n"
               "         [--mode full|rev-acc] [--tol T] [--max-adjoint-iters N]\n"
               "         [--probe I,J]... [--perturb f|u,I,J,H] [--json] [--vtk FILE]\n"
               "         [--executor starpu|sequential]\n"
               "Jacobi iterations of the OPS Poisson problem (defaults 20 x 20, 10 iterations) and\n"
               "E = sum over the interior of (u - ref)^2. --adjoint records the iterations on a tape,\n"
               "reverses it and reports dE/df and dE/du0 at every --probe (0-based interior point).\n"
               "--mode rev-acc: reverse accumulation (one iteration on a nested tape, its adjoint run\n"
               "until the relative change is <= --tol, default 1e-12), compared with the full tape.\n"
               "--tiles: tiles per dat (default: 2 x workers). --vtk: u (and adjoints) as legacy VTK.\n"
               "--json: one JSON object on stdout. Exit 0 ok, 1 non-finite E, 2 bad arguments.\n");
}



struct Perturb {
  bool on = false;
  char what = 'f';
  int i = 0, j = 0;
  double h = 0;
};

void write_vtk(const std::string& path, int nx, int ny, const std::vector<std::pair<std::string, mesh::DatView<double>>>& fields) {
  std::ofstream out(path);
  if (!out) throw Error("--vtk: cannot write '" + path + "'");
  out << "# vtk DataFile Version 3.0\nstardiff-poisson\nASCII\nDATASET STRUCTURED_POINTS\n";
  out << "DIMENSIONS " << nx << " " << ny << " 1\nORIGIN 0 0 0\nSPACING 0.01 0.01 1\nPOINT_DATA " << nx * ny << "\n";
  char buf[64];
  for (auto& [name, v] : fields) {
    out << "SCALARS " << name << " double 1\nLOOKUP_TABLE default\n";
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) {
        std::snprintf(buf, sizeof buf, "%.17g\n", v(i, j));
        out << buf;
      }
  }
}
}  // namespace

int main(int argc, char** argv) {
  int nx = 20, ny = 20, iters = 10, tiles = 0;
  bool adjoint = false, json = false, rev_acc = false;
  FixedPointOptions fpo;
  fpo.tolerance = 1e-12;
  fpo.max_iterations = 100000;
  std::string vtk, executor = "starpu";
  std::vector<std::pair<int, int>> probes;
  Perturb pert;
  const bool quiet_launch = launcher_rank() != 0;  // another rank prints the usage
  auto bad = [&](const std::string& msg) {
    if (quiet_launch) return 2;
    std::fprintf(stderr, "stardiff-poisson: %s\n", msg.c_str());
    usage(stderr);
    return 2;
  };
  for (int a = 1; a < argc; ++a) {
    std::string arg = argv[a];
    auto value = [&]() -> const char* { return a + 1 < argc ? argv[++a] : nullptr; };
    if (arg == "--help" || arg == "-h") {
      if (!quiet_launch) usage(stdout);
      return 0;
    } else if (arg == "--adjoint") {
      adjoint = true;
    } else if (arg == "--mode") {
      const char* v = value();
      if (!v || (std::strcmp(v, "full") != 0 && std::strcmp(v, "rev-acc") != 0))
        return bad("--mode needs full or rev-acc");
      adjoint = true;
      rev_acc = std::strcmp(v, "rev-acc") == 0;
    } else if (arg == "--tol") {
      const char* v = value();
      if (!v || !apps::parse_pos_double(v, fpo.tolerance)) return bad("--tol needs a positive number");
    } else if (arg == "--max-adjoint-iters") {
      const char* v = value();
      if (!v || !parse_int(v, 1, 1L << 30, fpo.max_iterations)) return bad("--max-adjoint-iters needs an integer >= 1");
    } else if (arg == "--json") {
      json = true;
    } else if (arg == "--nx" || arg == "--ny" || arg == "--iters" || arg == "--tiles") {
      const char* v = value();
      int* dst = arg == "--nx" ? &nx : arg == "--ny" ? &ny : arg == "--iters" ? &iters : &tiles;
      long lo = arg == "--iters" || arg == "--tiles" ? 0 : 1;
      if (!v || !parse_int(v, lo, 1L << 20, *dst)) return bad(arg + " needs an integer >= " + std::to_string(lo));
    } else if (arg == "--probe") {
      const char* v = value();
      int i = 0, j = 0;
      if (!v || !apps::parse_index_pair(v, i, j))
        return bad("--probe needs I,J (0-based interior indices)");
      probes.emplace_back(i, j);
    } else if (arg == "--perturb") {
      const char* v = value();
      char w = 0;
      int n = 0;
      if (!v || std::sscanf(v, "%c,%d,%d,%lf%n", &w, &pert.i, &pert.j, &pert.h, &n) != 4 || v[n] != '\0' ||
          (w != 'f' && w != 'u'))
        return bad("--perturb needs f|u,I,J,H");
      pert.on = true;
      pert.what = w;
    } else if (arg == "--vtk") {
      const char* v = value();
      if (!v) return bad("--vtk needs a file name");
      vtk = v;
    } else if (arg == "--executor") {
      const char* v = value();
      if (!v || (std::strcmp(v, "starpu") != 0 && std::strcmp(v, "sequential") != 0))
        return bad("--executor needs starpu or sequential");
      executor = v;
    } else {
      return bad("unknown argument '" + arg + "'");
    }
  }
  for (auto& [i, j] : probes)
    if (i < 0 || i >= nx || j < 0 || j >= ny)
      return bad("--probe " + std::to_string(i) + "," + std::to_string(j) + " is outside the interior " +
                 std::to_string(nx) + " x " + std::to_string(ny));
  if (pert.on && (pert.i < -1 || pert.i > nx || pert.j < -1 || pert.j > ny))
    return bad("--perturb point outside the grid (halo included)");
  if (!probes.empty() && !adjoint) return bad("--probe needs --adjoint");
  if (rev_acc && iters < 1) return bad("--mode rev-acc needs --iters >= 1");

  std::unique_ptr<Runtime> rt;  // outside the try: an error on several ranks aborts the job first
  bool quiet = quiet_launch;
  try {
    if (executor == "starpu") {
      rt = std::make_unique<Runtime>();
      quiet = rt->rank() != 0;
    }
    auto ex = make_executor(executor);
    const double nan = std::nan("");
    double E = nan, primal_s = nan, forward_s = nan, adjoint_s = nan;
    std::size_t tape_bytes = 0;
    std::vector<std::array<double, 2>> probe_values;
    std::vector<std::pair<std::string, mesh::DatView<double>>> fields;
    auto prepare = [&](poisson::Problem& p) {
      p.setup();
      if (pert.on) poisson::perturb(pert.what == 'f' ? p.f : p.u, pert.i, pert.j, pert.h);
      ex->wait_all();
    };
    {
      poisson::Problem p(*ex, nx, ny, tiles);
      prepare(p);
      auto t0 = std::chrono::steady_clock::now();
      p.iterate(iters);
      p.submit_error();
      ex->wait_all();
      primal_s = seconds_since(t0);
      E = p.err.value();
      if (!vtk.empty()) fields.emplace_back("u", p.u.values());
      if (!json && !quiet)
        std::fprintf(stderr, "stardiff-poisson: %d x %d, %d iterations, %d tiles, executor %s%s\n", nx, ny, iters,
                     p.block.tiles(), ex->kind(),
                     rt && rt->size() > 1 ? (", " + std::to_string(rt->size()) + " MPI ranks").c_str() : "");
    }
    // Full tape: every iteration recorded. Reverse accumulation: K - 1 iterations in a
    // fixed-point section, the K-th on its nested tape.
    struct AdjointRun {
      double forward_s = 0, adjoint_s = 0;
      std::size_t bytes = 0;
      mesh::DatView<double> df, du;
      FixedPointReport fp;
    };
    auto run_adjoint = [&](bool rev) {
      poisson::Problem p(*ex, nx, ny, tiles);
      prepare(p);
      AdjointRun r;
      Tape tape("poisson");
      auto t0 = std::chrono::steady_clock::now();
      const std::unique_ptr<FixedPointAdjoint> fp = poisson::record_iterations(tape, p, iters, rev ? &fpo : nullptr);
      ex->wait_all();
      r.forward_s = seconds_since(t0);
      tape.seed(p.err, 1.0);
      t0 = std::chrono::steady_clock::now();
      tape.reverse();  // rev-acc: throw_on_failure is off, a failure is in the report (exit 1)
      ex->wait_all();
      r.adjoint_s = seconds_since(t0);
      r.bytes = tape.bytes() + (fp ? fp->bytes() : 0);
      if (fp) r.fp = fp->report();
      r.df = p.f.adjoint();
      r.du = p.u.adjoint();
      return r;
    };
    AdjointRun main_run, full_run;
    double rel_diff = nan;
    if (rev_acc) fpo.throw_on_failure = false;
    if (adjoint) {
      main_run = run_adjoint(rev_acc);
      forward_s = main_run.forward_s;
      adjoint_s = main_run.adjoint_s;
      tape_bytes = main_run.bytes;
      if (rev_acc) {
        full_run = run_adjoint(false);
        double dmax = 0, gmax = 0;
        const std::pair<const mesh::DatView<double>*, const mesh::DatView<double>*> pairs[2] = {
            {&main_run.df, &full_run.df}, {&main_run.du, &full_run.du}};
        for (auto& [a, b] : pairs)
          for (std::size_t k = 0; k < b->data.size(); ++k) {
            dmax = std::max(dmax, std::fabs(a->data[k] - b->data[k]));
            gmax = std::max(gmax, std::fabs(b->data[k]));
          }
        rel_diff = gmax > 0 ? dmax / gmax : dmax;
      }
      for (auto& [i, j] : probes) probe_values.push_back({main_run.df(i, j), main_run.du(i, j)});
      if (!vtk.empty()) {
        fields.emplace_back("dE_df", main_run.df);
        fields.emplace_back("dE_du", main_run.du);
      }
    }
    if (!vtk.empty() && !quiet) write_vtk(vtk, nx, ny, fields);
    const double factor = adjoint ? (forward_s + adjoint_s) / primal_s : nan;
    if (quiet) {
      // rank > 0: rank 0 prints
    } else if (json) {
      apps::JsonWriter j;
      j.field("nx", nx).field("ny", ny).field("iters", iters).field("executor", std::string(ex->kind()));
      j.field("total_error", E).field("primal_s", primal_s).field("forward_s", forward_s);
      j.field("adjoint_s", adjoint_s).field("adjoint_factor", factor);
      j.field("tasks", static_cast<long long>(ex->tasks_submitted()));
      j.field("tape_bytes", static_cast<long long>(tape_bytes));
      if (rev_acc) {
        j.field("full_tape_bytes", static_cast<long long>(full_run.bytes));
        j.field("full_adjoint_factor", (full_run.forward_s + full_run.adjoint_s) / primal_s);
        j.field("adjoint_iterations", main_run.fp.iterations).field("adjoint_change", main_run.fp.change);
        j.field("adjoint_status", std::string(to_string(main_run.fp.status)));
        j.field("gradient_rel_diff", rel_diff);
      }
      j.key("probes").begin_array();
      for (std::size_t k = 0; k < probes.size(); ++k)
        j.begin_object()
            .field("i", probes[k].first)
            .field("j", probes[k].second)
            .field("dE_df", probe_values[k][0])
            .field("dE_du", probe_values[k][1])
            .end_object();
      j.end_array();
      std::printf("%s\n", j.str().c_str());
    } else {
      std::printf("E = %.15g\n", E);
      std::printf("primal_s = %.6g\n", primal_s);
      if (adjoint) {
        std::printf("forward_s = %.6g  adjoint_s = %.6g  adjoint_factor = %.3f  tape_bytes = %zu\n", forward_s,
                    adjoint_s, factor, tape_bytes);
        if (rev_acc)
          std::printf("rev-acc: %s after %d adjoint iterations (change %.3g)  full tape: tape_bytes = %zu  "
                      "adjoint_factor = %.3f  gradient_rel_diff = %.3g\n",
                      to_string(main_run.fp.status), main_run.fp.iterations, main_run.fp.change, full_run.bytes,
                      (full_run.forward_s + full_run.adjoint_s) / primal_s, rel_diff);
        for (std::size_t k = 0; k < probes.size(); ++k)
          std::printf("probe %d,%d: dE_df = %.17g  dE_du = %.17g\n", probes[k].first, probes[k].second,
                      probe_values[k][0], probe_values[k][1]);
      }
      std::printf("tasks = %zu\n", ex->tasks_submitted());
    }
    if (rev_acc && main_run.fp.status != FixedPointStatus::Converged) {
      if (!quiet) std::fprintf(stderr, "stardiff-poisson: the rev-acc adjoint is %s after %d iterations (change %.3g > --tol %.3g)\n",
                   to_string(main_run.fp.status), main_run.fp.iterations, main_run.fp.change, fpo.tolerance);
      return 1;
    }
    return std::isfinite(E) ? 0 : 1;
  } catch (const Error& e) {
    if (rt && rt->size() > 1) {
      std::fprintf(stderr, "stardiff-poisson: rank %d: %s\n", rt->rank(), e.what());
      rt->abort_job(2);
    }
    std::fprintf(stderr, "stardiff-poisson: %s\n", e.what());
    return 2;
  }
}
