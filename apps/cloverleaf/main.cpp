// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff-cloverleaf — CloverLeaf 1.3 (2-D Lagrangian-Eulerian hydro) on the stardiff mesh DSL.
//
// Usage: stardiff-cloverleaf DECK [--json] [--end-step N] [--vtk FILE]
//          [--executor starpu|sequential] [--tiles T]
// Reads a clover.in deck, runs the hydro cycle and prints what CloverLeaf's clover.out
// holds: the step lines (dt, the limit that set the smallest cell dt and its cell: the
// real arg-min, where the Fortran reference always prints "sound" at 1,1), the field summary
// table at step 0, every summary_frequency steps and at the end, and for test_problem
// 1-5 CloverLeaf's check |100 KE/KE_ref - 100| < 0.001 with PASSED / FAILED.
// Tiling (row tiles along y, each of >= 2 rows): --tiles T; else the deck's tiles_per_chunk
// when > 1, per rank as CloverLeaf's chunks (tiles_per_chunk x ranks); else, in one process,
// one tile per worker (the executor's concurrency: CloverLeaf's many short, uniform loops make
// the task count, not load balance, the cost), and under StarPU-MPI the mesh's default (2 per
// worker per rank).
// --end-step N: stop after N steps (the check is then skipped unless N is the deck's).
// --json: one JSON object on stdout instead (steps, time, wall_s, dt_history,
// dt_control, summary {volume, mass, density, pressure, ie, ke, te}, test_problem,
// test_passed, qa_diff; tiles, executor). --vtk FILE: density, energy, pressure (cells)
// and velocity (nodes) at the end, legacy VTK. A progress line goes to stderr every few
// seconds of a long run (every 5 s). wall_s is the hydro loop (after set-up), as CloverLeaf's wall clock.
// --adjoint [--objective ke|ie|pressure|mass-weighted-energy] [--checkpoints N|all]
// [--passive-dt] [--adjoint-vtk FILE] [--taylor] [--fd-check H] [--dot-test]: after the run, records it
// again (same step count) and reverses it: the gradient of the final summary's objective
// (default ke; pressure = press / volume, mass-weighted-energy = (ie + ke) / mass) with
// respect to the initial density0, energy0, xvel0, yvel0 (apps/cloverleaf/adjoint.hpp),
// through calc_dt (--passive-dt: dt held at the run's values, as OPS). --checkpoints N:
// Revolve with N snapshots (default: steps / 3, at least 1), all: save-all. Printed (or in
// the JSON: "adjoint" {objective, J, dt, checkpointing, recomputed_steps, snapshots,
// peak_bytes, peak_snapshot_bytes, primal_s, forward_s, adjoint_s, adjoint_factor =
// (forward_s + adjoint_s) / primal_s, recorded_matches_primal, gradient_hash},
// "dobj_dstate" [{state, density, energy, xvel, yvel}], with --fd-check H "fd_dstate"
// (central differences, relative step H, of each state's density and energy), with
// --taylor "taylor" {passed, min_rate, rates, steps, r2}, with --dot-test "dot_test" {jv_w,
// v_jtw, rel_diff, passed}: the map initial -> final fields, adjoint.hpp). --adjoint-vtk FILE: the gradient
// fields. Exit 1 also when --taylor or --dot-test (rel_diff >= 1e-6) fails or the recording
// differs from the run.
// Exit: 0 ok, 1 the test problem's check failed or the time step collapsed, 2 bad
// arguments or deck.
// Under mpirun (StarPU-MPI, stardiff/runtime/runtime.hpp) every rank runs the same task graph
// over its share of the row tiles (block distribution along y) and only rank 0 prints: the
// same stdout as one rank (one JSON object with --json), the deck's warnings, notes and
// progress once; stderr also gets a line with the ranks and their tiles (and a warning when
// y_cells leaves a rank without rows). An error on a run of several ranks ends the whole
// job (exit 2) rather than leave the other ranks waiting.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <stardiff/stardiff.hpp>

#include "adjoint.hpp"
#include "cli.hpp"
#include "clover.hpp"
#include "deck.hpp"
#include "json.hpp"
#include "vtk.hpp"

using namespace stardiff;

namespace {

// The launcher's rank before any runtime exists (mpirun sets it), for messages only.
int launcher_rank() {
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"})
    if (const char* e = std::getenv(v); e && *e) return std::atoi(e);
  return 0;
}

void usage(FILE* f) {
  std::fprintf(f,
               "usage: stardiff-cloverleaf DECK [--json] [--end-step N] [--vtk FILE]\n"
               "         [--executor starpu|sequential] [--tiles T]\n"
               "CloverLeaf 1.3's 2-D hydro cycle on a clover.in deck. Prints the step lines, the field\n"
               "summary table and, for test_problem 1-5, CloverLeaf's PASSED/FAILED check.\n"
               "--json: one JSON object on stdout. --end-step N: stop after N steps. --vtk FILE: final\n"
               "fields as legacy VTK. --tiles: row tiles (default: the deck's tiles_per_chunk per MPI\n"
               "rank when > 1, else one per worker; under mpirun 2 per worker per rank; at most\n"
               "y_cells / 2). Under mpirun only rank 0 prints. Exit 0 ok, 1 check failed or small\n"
               "timestep, 2 bad arguments or deck.\n"
               "--adjoint [--objective ke|ie|pressure|mass-weighted-energy] [--checkpoints N|all]\n"
               "  [--passive-dt] [--adjoint-vtk FILE] [--taylor] [--fd-check H] [--dot-test]: the gradient of the final\n"
               "  objective in the initial fields and per deck state (Revolve with N snapshots, default\n"
               "  steps/3; all: save-all; --passive-dt: dt held fixed).\n");
}

// Fortran's Ew.d edit descriptor: 0.dddd E+xx, right-justified in w columns.
std::string fortran_e(double v, int w, int d) {
  char buf[64];
  std::string s;
  if (v == 0.0) {
    s = "0." + std::string(d, '0') + "E+00";
  } else {
    std::snprintf(buf, sizeof buf, "%.*E", d - 1, std::fabs(v));  // m.mmmE+xx, d digits
    std::string t(buf);
    const auto e = t.find('E');
    std::string digits = t.substr(0, 1) + t.substr(2, e - 2);
    const int ex = std::atoi(t.c_str() + e + 1) + 1;
    std::snprintf(buf, sizeof buf, "%c%02d", ex < 0 ? '-' : '+', std::abs(ex));
    s = std::string(v < 0 ? "-" : "") + "0." + digits + "E" + buf;
  }
  if (static_cast<int>(s.size()) < w) s = std::string(w - s.size(), ' ') + s;
  return s;
}

void print_summary_header(double time) {
  std::printf("\n Time %25.16f\n", time);
  std::printf("%13s%16s%16s%16s%16s%16s%16s%16s\n", "", "Volume", "Mass", "Density", "Pressure", "Internal Energy",
              "Kinetic Energy", "Total Energy");
}
void print_summary_row(int step, const cloverleaf::Summary& s) {
  std::string line = " step:";
  char buf[16];
  std::snprintf(buf, sizeof buf, "%7d", step);
  line += buf;
  for (double v : {s.vol, s.mass, s.density(), s.pressure(), s.ie, s.ke, s.te()}) line += fortran_e(v, 16, 4);
  std::printf("%s\n\n", line.c_str());
}

double ke_reference(int tp) {
  switch (tp) {
    case 1: return 1.82280367310258;
    case 2: return 1.19316898756307;
    case 3: return 2.58984003503994;
    case 4: return 0.307475452287895;
    case 5: return 4.85350315783719;
    default: return 0;
  }
}

// Collective (the reads gather every tile on every rank); only `writer` writes the file.
void write_vtk(const std::string& path, cloverleaf::Clover& c, const cloverleaf::Deck& d, bool writer) {
  const int nx = c.nx(), ny = c.ny();
  auto rho = c.density0().values(), e = c.energy0().values(), p = c.pressure().values();
  auto u = c.xvel0().values(), v = c.yvel0().values();
  if (!writer) return;
  std::ofstream out(path);
  if (!out) throw Error("--vtk: cannot write '" + path + "'");
  char buf[96];
  write_vtk_grid(out, d, "stardiff-cloverleaf");
  for (auto [name, f] : {std::pair<const char*, mesh::DatView<double>*>{"density", &rho}, {"energy", &e},
                         {"pressure", &p}}) {
    out << "SCALARS " << name << " double 1\nLOOKUP_TABLE default\n";
    for (int k = 0; k < ny; ++k)
      for (int j = 0; j < nx; ++j) {
        std::snprintf(buf, sizeof buf, "%.17g\n", (*f)(j, k));
        out << buf;
      }
  }
  out << "POINT_DATA " << static_cast<long long>(nx + 1) * (ny + 1) << "\nVECTORS velocity double\n";
  for (int k = 0; k <= ny; ++k)
    for (int j = 0; j <= nx; ++j) {
      std::snprintf(buf, sizeof buf, "%.17g %.17g 0\n", u(j, k), v(j, k));
      out << buf;
    }
  if (!out) throw Error("--vtk: write error on '" + path + "'");
}

}  // namespace

int main(int argc, char** argv) {
  std::string deck_path, vtk, executor = "starpu";
  bool json = false, adjoint = false, passive_dt = false, taylor = false, dot_test = false;
  std::string objective = "ke", adjoint_vtk;
  int snapshots = -1;  // -1: default, 0: save-all
  double fd_step = 0;
  std::vector<std::string> adjoint_only;  // options that need --adjoint
  int end_step = 0, tiles = 0;
  const bool quiet_launch = launcher_rank() != 0;  // another rank prints the usage and the deck's messages
  auto bad = [&](const std::string& msg) {
    if (quiet_launch) return 2;
    std::fprintf(stderr, "stardiff-cloverleaf: %s\n", msg.c_str());
    usage(stderr);
    return 2;
  };
  for (int a = 1; a < argc; ++a) {
    std::string arg = argv[a];
    auto value = [&]() -> const char* { return a + 1 < argc ? argv[++a] : nullptr; };
    if (arg == "--help" || arg == "-h") {
      if (!quiet_launch) usage(stdout);
      return 0;
    } else if (arg == "--json") {
      json = true;
    } else if (arg == "--end-step") {
      const char* v = value();
      if (!v || !apps::parse_int(v, 1, 1L << 30, end_step)) return bad("--end-step needs an integer >= 1");
    } else if (arg == "--tiles") {
      const char* v = value();
      if (!v || !apps::parse_int(v, 1, 1 << 16, tiles)) return bad("--tiles needs an integer >= 1");
    } else if (arg == "--vtk") {
      const char* v = value();
      if (!v) return bad("--vtk needs a file name");
      vtk = v;
    } else if (arg == "--adjoint") {
      adjoint = true;
    } else if (arg == "--passive-dt") {
      passive_dt = true;
      adjoint_only.push_back(arg);
    } else if (arg == "--taylor") {
      taylor = true;
      adjoint_only.push_back(arg);
    } else if (arg == "--dot-test") {
      dot_test = true;
      adjoint_only.push_back(arg);
    } else if (arg == "--objective") {
      const char* v = value();
      if (!v || !cloverleaf::Clover::known_objective(v))
        return bad("--objective needs ke, ie, pressure or mass-weighted-energy" +
                   std::string(v ? " (got '" + std::string(v) + "')" : ""));
      objective = v;
      adjoint_only.push_back(arg);
    } else if (arg == "--checkpoints") {
      const char* v = value();
      if (v && std::strcmp(v, "all") == 0) snapshots = 0;
      else if (!v || !apps::parse_int(v, 1, 1 << 20, snapshots))
        return bad("--checkpoints needs a snapshot count >= 1 or 'all'" +
                   std::string(v ? " (got '" + std::string(v) + "')" : ""));
      adjoint_only.push_back(arg);
    } else if (arg == "--adjoint-vtk") {
      const char* v = value();
      if (!v) return bad("--adjoint-vtk needs a file name");
      adjoint_vtk = v;
      adjoint_only.push_back(arg);
    } else if (arg == "--fd-check") {
      const char* v = value();
      if (!v || !apps::parse_pos_double(v, fd_step) || fd_step >= 0.5)
        return bad("--fd-check needs a relative step in (0, 0.5)");
      adjoint_only.push_back(arg);
    } else if (arg == "--executor") {
      const char* v = value();
      if (!v || (std::strcmp(v, "starpu") != 0 && std::strcmp(v, "sequential") != 0))
        return bad("--executor needs starpu or sequential");
      executor = v;
    } else if (!arg.empty() && arg[0] == '-') {
      return bad("unknown argument '" + arg + "'");
    } else if (deck_path.empty()) {
      deck_path = arg;
    } else {
      return bad("more than one deck given ('" + deck_path + "', '" + arg + "')");
    }
  }
  if (deck_path.empty()) return bad("no deck given");
  if (!adjoint && !adjoint_only.empty()) return bad(adjoint_only.front() + " needs --adjoint");

  cloverleaf::Deck deck;
  try {
    deck = cloverleaf::read_deck(deck_path);
  } catch (const cloverleaf::DeckError& e) {
    if (!quiet_launch) std::fprintf(stderr, "stardiff-cloverleaf: %s\n", e.what());
    return 2;
  }
  if (!quiet_launch)
    for (const auto& w : deck.warnings) std::fprintf(stderr, "stardiff-cloverleaf: warning: %s\n", w.c_str());
  if (deck.visit_frequency > 0 && !quiet_launch)
    std::fprintf(stderr, "stardiff-cloverleaf: note: visit_frequency %d: no VisIt files are written (--vtk FILE "
                 "writes the final fields)\n", deck.visit_frequency);
  if (deck.y_cells < 2) {
    if (!quiet_launch)
      std::fprintf(stderr, "stardiff-cloverleaf: %s: y_cells = %d: at least 2 rows of cells are needed (a tile holds "
                 "rows for the halo depth 2)\n", deck_path.c_str(), deck.y_cells);
    return 2;
  }
  const bool step_override = end_step > 0 && end_step != deck.end_step;
  if (end_step > 0) deck.end_step = end_step;

  std::unique_ptr<Runtime> rt;  // outside the try: an error on several ranks aborts the job first
  bool quiet = quiet_launch;
  try {
    if (executor == "starpu") {
      rt = std::make_unique<Runtime>();
      quiet = rt->rank() != 0;
    }
    auto ex = make_executor(executor);
    const int ranks = rt ? rt->size() : 1;
    if (tiles == 0 && deck.tiles_per_chunk > 1) tiles = deck.tiles_per_chunk * ranks;
    if (tiles == 0 && ranks == 1) tiles = std::max(1, ex->concurrency());  // one tile per worker
    cloverleaf::Clover clover(*ex, deck, tiles);  // 0: the mesh's default; at most y_cells / 2
    if (ranks > 1 && !quiet) {
      std::vector<int> per_rank(ranks, 0);
      for (int t = 0; t < clover.tiles(); ++t) ++per_rank[clover.owner(t)];
      std::string layout;
      int idle = 0;
      for (int r = 0; r < ranks; ++r) {
        layout += (r ? ", " : "") + std::to_string(per_rank[r]);
        idle += per_rank[r] == 0;
      }
      std::fprintf(stderr, "stardiff-cloverleaf: %d MPI ranks, %d tiles (per rank: %s)\n", ranks, clover.tiles(),
                   layout.c_str());
      if (idle)
        std::fprintf(stderr, "stardiff-cloverleaf: warning: %d of %d MPI ranks hold no tiles (y_cells = %d allows at "
                     "most %d tiles of >= 2 rows)\n", idle, ranks, deck.y_cells, std::max(1, deck.y_cells / 2));
    }
    if (!json && !quiet) {
      std::printf("\nstardiff-cloverleaf (CloverLeaf 1.3 hydro cycle on the stardiff mesh DSL)\n");
      std::printf(" deck %s: %d x %d cells, executor %s, %d tiles\n", deck_path.c_str(), deck.x_cells, deck.y_cells,
                  ex->kind(), clover.tiles());
    }
    clover.initialise();
    cloverleaf::Summary s = clover.summary();
    if (!json && !quiet) {
      print_summary_header(clover.time());
      print_summary_row(0, s);
      std::printf(" Starting the calculation\n");
    }
    std::vector<double> dts;
    std::vector<std::string> controls;
    int step = 0;
    int rc = 0;
    const auto t0 = std::chrono::steady_clock::now();
    auto last_progress = t0;
    for (;;) {
      ++step;
      const double time_before = clover.time();
      cloverleaf::StepInfo info;
      try {
        info = clover.step();
      } catch (const Error& e) {
        if (std::string(e.what()).find("small timestep") == std::string::npos) throw;
        if (!quiet) std::fprintf(stderr, "stardiff-cloverleaf: step %d: %s\n", step, e.what());
        rc = 1;
        break;
      }
      dts.push_back(info.dt);
      controls.push_back(info.control);
      if (!json && !quiet)
        std::printf(" Step %7d time %11.7f control %3s%-8s timestep  %9.2E%8d,%8d x %9.2E y %9.2E\n", step,
                    time_before, "", info.control.c_str(), info.dt, info.j, info.k, info.x, info.y);
      if (deck.summary_frequency != 0 && step % deck.summary_frequency == 0) {
        s = clover.summary();
        if (!json && !quiet) {
          print_summary_header(clover.time());
          print_summary_row(step, s);
        }
      }
      const auto now = std::chrono::steady_clock::now();
      if (!quiet && std::chrono::duration<double>(now - last_progress).count() > 5.0) {
        last_progress = now;
        std::fprintf(stderr, "stardiff-cloverleaf: step %d, time %.6g of %.6g, dt %.3e, %.1f s\n", step,
                     clover.time(), deck.end_time, info.dt, apps::seconds_since(t0));
      }
      if (clover.time() + static_cast<double>(1.0e-16f) > deck.end_time || step >= deck.end_step) break;
    }
    s = clover.summary();
    const double wall = apps::seconds_since(t0);
    if (!json && !quiet) {
      print_summary_header(clover.time());
      print_summary_row(step, s);
      std::printf(" Calculation complete\n Wall clock %.6f\n", wall);
    }
    const double ke_ref = ke_reference(deck.test_problem);
    const bool checked = ke_ref > 0 && !step_override && rc == 0;
    double qa_diff = std::nan("");
    bool passed = false;
    if (checked) {
      qa_diff = std::fabs((100.0 * (s.ke / ke_ref)) - 100.0);
      passed = qa_diff < 0.001;
      if (!passed) rc = 1;
      if (!json && !quiet) {
        std::printf("Test problem %4d is within %s%% of the expected solution\n", deck.test_problem,
                    fortran_e(qa_diff, 16, 7).c_str());
        std::printf(" This test is considered %s\n", passed ? "PASSED" : "NOT PASSED (FAILED)");
      }
    } else if (ke_ref > 0 && !json && !quiet) {
      std::printf(" Test problem %d check skipped (--end-step changed the run)\n", deck.test_problem);
    }
    if (!vtk.empty()) write_vtk(vtk, clover, deck, !quiet);
    cloverleaf::AdjointResult ad;
    double factor = 0;
    if (adjoint && rc != 1) {
      cloverleaf::AdjointOptions o;
      o.objective = objective;
      o.snapshots = snapshots < 0 ? std::max(1, step / 3) : snapshots;
      o.passive_dt = passive_dt;
      o.fd_step = fd_step;
      o.taylor = taylor;
      o.dot_test = dot_test;
      ad = cloverleaf::run_adjoint(*ex, deck, clover.tiles(), step, dts, o);
      factor = (ad.forward_s + ad.adjoint_s) / wall;
      if (!ad.recorded_matches_primal) {
        if (!quiet) std::fprintf(stderr, "stardiff-cloverleaf: the recorded run differs from the run (dt history)\n");
        rc = 1;
      }
      if (taylor && !ad.taylor.passed) rc = 1;
      if (dot_test && !(ad.dot_rel_diff < 1e-6)) rc = 1;
      if (!adjoint_vtk.empty() && !quiet) cloverleaf::write_gradient_vtk(adjoint_vtk, deck, ad);
      if (!json && !quiet) {
        std::printf("\n Adjoint: d %s / d initial fields (dt %s), %s\n", objective.c_str(),
                    passive_dt ? "held fixed" : "active", ad.checkpointing.c_str());
        std::printf(" objective %.17g\n", ad.J);
        for (std::size_t q = 0; q < ad.dstate.size(); ++q) {
          std::printf(" state %zu: d/ddensity %.10e d/denergy %.10e d/dxvel %.10e d/dyvel %.10e\n", q + 1,
                      ad.dstate[q].density, ad.dstate[q].energy, ad.dstate[q].xvel, ad.dstate[q].yvel);
          if (!ad.fd.empty())
            std::printf("   central differences:  d/ddensity %.10e d/denergy %.10e\n", ad.fd[q].density,
                        ad.fd[q].energy);
        }
        std::printf(" recomputed steps %lld, peak tape bytes %zu (snapshots %zu), forward %.3f s, reverse %.3f s, "
                    "adjoint factor %.2f\n",
                    static_cast<long long>(ad.recomputed_steps), ad.peak_bytes, ad.peak_snapshot_bytes,
                    ad.forward_s, ad.adjoint_s, factor);
        if (taylor) std::printf(" Taylor test: %s\n", ad.taylor.report().c_str());
        if (dot_test)
          std::printf(" dot-product test: <J v, w> %.15e <v, J^T w> %.15e rel_diff %.3e (%s)\n", ad.dot_jv_w,
                      ad.dot_v_jtw, ad.dot_rel_diff, ad.dot_rel_diff < 1e-6 ? "passed" : "FAILED");
      }
    }
    if (json && !quiet) {
      apps::JsonWriter j;
      j.field("deck", deck_path).field("x_cells", deck.x_cells).field("y_cells", deck.y_cells);
      j.field("executor", std::string(ex->kind())).field("tiles", clover.tiles());
      j.field("steps", step).field("time", clover.time()).field("wall_s", wall);
      j.key("dt_history").begin_array();
      for (double d : dts) j.value(d);
      j.end_array();
      j.key("dt_control").begin_array();
      for (const auto& c : controls) j.value(c);
      j.end_array();
      j.key("summary").begin_object();
      j.field("volume", s.vol).field("mass", s.mass).field("density", s.density()).field("pressure", s.pressure());
      j.field("ie", s.ie).field("ke", s.ke).field("te", s.te());
      j.end_object();
      j.field("test_problem", deck.test_problem);
      if (checked) j.field("test_passed", passed).field("qa_diff", qa_diff).field("ke_ref", ke_ref);
      else if (ke_ref > 0) j.key("test_passed").value(std::nan(""));  // null: --end-step changed the run
      if (adjoint && rc != 1) {
        j.key("adjoint").begin_object();
        j.field("objective", objective).field("J", ad.J).field("dt", std::string(passive_dt ? "passive" : "active"));
        j.field("checkpointing", ad.checkpointing).field("recomputed_steps", static_cast<long long>(ad.recomputed_steps));
        j.field("snapshots", ad.snapshots).field("peak_bytes", static_cast<long long>(ad.peak_bytes));
        j.field("peak_snapshot_bytes", static_cast<long long>(ad.peak_snapshot_bytes));
        j.field("primal_s", wall).field("forward_s", ad.forward_s).field("adjoint_s", ad.adjoint_s);
        j.field("adjoint_factor", factor).field("recorded_matches_primal", ad.recorded_matches_primal);
        j.field("gradient_hash", ad.gradient_hash);
        j.end_object();
        auto states = [&](const char* key, const std::vector<cloverleaf::StateGradient>& v, bool vel) {
          j.key(key).begin_array();
          for (std::size_t q = 0; q < v.size(); ++q) {
            j.begin_object().field("state", static_cast<int>(q + 1)).field("density", v[q].density);
            j.field("energy", v[q].energy);
            if (vel) j.field("xvel", v[q].xvel).field("yvel", v[q].yvel);
            j.end_object();
          }
          j.end_array();
        };
        states("dobj_dstate", ad.dstate, true);
        if (!ad.fd.empty()) states("fd_dstate", ad.fd, false);
        if (ad.has_dot)
          j.key("dot_test").begin_object().field("jv_w", ad.dot_jv_w).field("v_jtw", ad.dot_v_jtw)
              .field("rel_diff", ad.dot_rel_diff).field("passed", ad.dot_rel_diff < 1e-6).end_object();
        if (ad.has_taylor) {
          j.key("taylor").begin_object().field("passed", ad.taylor.passed).field("min_rate", ad.taylor.min_rate);
          j.field("roundoff_only", ad.taylor.roundoff_only).field("dJ", ad.taylor.dJ);
          for (auto [k, v] : {std::pair<const char*, const std::vector<double>*>{"steps", &ad.taylor.steps},
                              {"r2", &ad.taylor.r2}, {"rates", &ad.taylor.rates}, {"central", &ad.taylor.central}}) {
            j.key(k).begin_array();
            for (double x : *v) j.value(x);
            j.end_array();
          }
          j.end_object();
        }
      }
      std::printf("%s\n", j.str().c_str());
    }
    return rc;
  } catch (const Error& e) {
    if (rt && rt->size() > 1) {
      std::fprintf(stderr, "stardiff-cloverleaf: rank %d: %s\n", rt->rank(), e.what());
      rt->abort_job(2);
    }
    std::fprintf(stderr, "stardiff-cloverleaf: %s\n", e.what());
    return 2;
  }
}
