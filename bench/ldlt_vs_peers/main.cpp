// SPDX-License-Identifier: LGPL-2.1-or-later
// bench/ldlt_vs_peers/main.cpp — ldlt_vs_peers: stardiff's sparse LDL^T beside CHOLMOD
// (supernodal LL^T, simplicial LDL^T), UMFPACK and MUMPS (sequential, symmetric mode),
// all in one process on the same matrices (options: --help).
// Contract:
//  * The matrices given, and a 7-point 3-D Laplacian on an N^3 grid (default N = 50). Every
//    solver does analyze + factorize + solve on b = A*1, each phase wall-clocked; R repeats
//    (default 5) interleave the solvers and the median of each phase is reported. relres =
//    ||b - A x||_inf / (||A||_inf ||x||_inf + ||b||_inf) for every solver (stardiff refines,
//    the peers do not). Success: no error and relres <= 1e-6; a failing solver is reported
//    with its reason and not retried on that matrix; a peer whose first run exceeds
//    --skip-slow seconds runs once; stardiff runs every repeat.
//  * Threads: stardiff runs as StarPU tasks on the CPU workers (single-threaded BLAS inside);
//    one runtime serves the whole run, paused while the peers run with --peer-threads
//    OpenBLAS threads (default: the StarPU CPU workers; a list makes one entry per count).
//  * stdout, one `ldlt_vs_peers KIND key=value ...` line per result, in this order:
//      config; dgemm (1 and 2 threads, core = OpenBLAS's kernel); per matrix: solver lines
//      (analyze_s factor_s solve_s relres flops gflops repeats status [reason] details),
//      the ratio line (stardiff factor time / fastest successful peer's, and analyze_ratio
//      against cholmod_analyze, both over R x --analyze-samples fresh analyses), the inertia
//      line (stardiff's against MUMPS's INFOG(12), and against MUMPS with null-pivot
//      detection at stardiff's threshold; singular verdicts of both), for the Laplacian
//      stardiff's GFlop/s as a fraction of the best dgemm rate; last, the geomean of the
//      ratios (all matrices, and those whose fastest peer needs >= 2 ms).
//    A readable table goes to stderr.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "problem.hpp"
#include "report.hpp"
#include "solvers.hpp"
#include "stardiff/stardiff.hpp"

using namespace stardiff;
using namespace stardiff::sparse;
using namespace ldlt_vs_peers;

namespace {

const char* kUsage =
    "usage: ldlt_vs_peers [MATRIX.mtx[.gz] ...] [options]\n"
    "Times stardiff's sparse LDL^T against CHOLMOD (supernodal LL^T, simplicial LDL^T),\n"
    "UMFPACK and MUMPS (sequential, symmetric) in one process; prints `ldlt_vs_peers\n"
    "key=value ...` lines on stdout and a table on stderr.\n"
    "\n"
    "  --laplacian N     also run the 7-point 3-D Laplacian on an N^3 grid (default 50)\n"
    "  --no-laplacian    only the matrices given\n"
    "  --repeats R       interleaved repeats, medians reported (default 5, at least 1)\n"
    "  --analyze-samples K  analyses timed per run of stardiff and cholmod_llt, each on a\n"
    "                    fresh solver (default 5; analyze_s is the median of all)\n"
    "  --solvers LIST    comma-separated subset of stardiff,cholmod_llt,cholmod_ldlt,umfpack,mumps\n"
    "  --executor starpu|sequential   stardiff's executor (default starpu)\n"
    "  --ordering auto|amd|metis      stardiff's ordering (default auto)\n"
    "  --pairing none|defer|compress  stardiff's LdltOptions::pairing (default: the library's)\n"
    "  --peer-threads T[,T2...]  OpenBLAS threads for the peers (default: the StarPU CPU\n"
    "                    workers); with a list every peer runs once per count (name_Tt)\n"
    "  --skip-slow S     a peer whose first run exceeds S seconds runs once (default 30, 0 = off)\n"
    "  --dgemm-n N       size of the dgemm rate measurement (default 2000)\n"
    "  --no-dgemm        skip the dgemm measurement\n"
    "  -h, --help        this text\n"
    "Example: ldlt_vs_peers ../shared/data/matrices/*.mtx.gz --laplacian 50 --repeats 5\n";

struct Options {
  std::vector<std::string> matrices;
  int laplacian = 50;
  int repeats = 5;
  std::set<std::string> solvers = {"stardiff", "cholmod_llt", "cholmod_ldlt", "umfpack", "mumps"};
  std::string executor = "starpu";
  Ordering ordering = Ordering::Auto;
  std::string pairing;  // empty: the library's default
  std::vector<int> peer_threads;  // empty: the StarPU CPU workers
  double skip_slow = 30;
  int dgemm_n = 2000;
  int analyze_samples = 5;  // analyses timed per run of stardiff and cholmod_llt
};

long to_long(const std::string& opt, const std::string& v, long lo, long hi) {
  char* e = nullptr;
  long x = std::strtol(v.c_str(), &e, 10);
  if (v.empty() || *e || x < lo || x > hi)
    throw Error(opt + ": expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got '" + v + "'");
  return x;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) throw Error(s + " needs a value");
      return argv[++i];
    };
    if (s == "-h" || s == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (s == "--laplacian") {
      o.laplacian = int(to_long(s, val(), 2, 1000));
    } else if (s == "--no-laplacian") {
      o.laplacian = 0;
    } else if (s == "--repeats") {
      o.repeats = int(to_long(s, val(), 1, 1000));
    } else if (s == "--analyze-samples") {
      o.analyze_samples = int(to_long(s, val(), 1, 1000));
    } else if (s == "--solvers") {
      std::string v = val();
      std::set<std::string> all = o.solvers;
      o.solvers.clear();
      std::size_t b = 0;
      while (b <= v.size()) {
        std::size_t e = v.find(',', b);
        if (e == std::string::npos) e = v.size();
        std::string t = v.substr(b, e - b);
        if (!all.count(t)) throw Error("--solvers: unknown solver '" + t + "'");
        o.solvers.insert(t);
        b = e + 1;
      }
    } else if (s == "--executor") {
      o.executor = val();
      if (o.executor != "starpu" && o.executor != "sequential") throw Error("--executor: starpu or sequential");
    } else if (s == "--ordering") {
      o.ordering = ordering_from_string(val());
    } else if (s == "--pairing") {
      o.pairing = val();
      pairing_from_string(o.pairing);  // Error for anything else
    } else if (s == "--peer-threads") {
      std::string v = val();
      std::size_t b = 0;
      while (b <= v.size()) {
        std::size_t e = v.find(',', b);
        if (e == std::string::npos) e = v.size();
        o.peer_threads.push_back(int(to_long(s, v.substr(b, e - b), 1, 256)));
        b = e + 1;
      }
    } else if (s == "--skip-slow") {
      std::string v = val();
      char* e = nullptr;
      o.skip_slow = std::strtod(v.c_str(), &e);
      if (v.empty() || *e || !(o.skip_slow >= 0)) throw Error("--skip-slow: expected seconds >= 0");
    } else if (s == "--dgemm-n") {
      o.dgemm_n = int(to_long(s, val(), 16, 20000));
    } else if (s == "--no-dgemm") {
      o.dgemm_n = 0;
    } else if (s.size() > 1 && s[0] == '-') {
      throw Error("unknown option '" + s + "'");
    } else {
      o.matrices.push_back(s);
    }
  }
  if (o.matrices.empty() && o.laplacian == 0) throw Error("nothing to run: no matrix and --no-laplacian");
  return o;
}

int run_bench(const Options& o) {
  const bool starpu = o.executor == "starpu";
  int workers = 1;
  std::string sched = "none";
  std::optional<Runtime> runtime;  // for stardiff; paused while the peers run
  if (starpu) {
    runtime.emplace();
    workers = std::max(1, runtime->cpu_workers());
    sched = runtime->scheduler();
    runtime->pause();
  }
  Runtime* rt = runtime ? &*runtime : nullptr;
  std::vector<int> threads = o.peer_threads.empty() ? std::vector<int>{workers} : o.peer_threads;
  print_config(o.executor, sched, workers, threads, o.repeats);

  double dgemm1 = 0, dgemm2 = 0;
  if (o.dgemm_n > 0) {
    dgemm1 = dgemm_gflops(o.dgemm_n, 1);
    dgemm2 = dgemm_gflops(o.dgemm_n, 2);
    print_dgemm(o.dgemm_n, 1, dgemm1);
    print_dgemm(o.dgemm_n, 2, dgemm2);
    std::fflush(stdout);
  }

  std::vector<Solver> solvers;
  if (o.solvers.count("stardiff"))
    solvers.push_back({"stardiff", [rt, &o](const Problem& p) { return run_stardiff(p, rt, o.ordering, o.analyze_samples, o.pairing); }});
  for (int t : threads) {
    const std::string sfx = threads.size() > 1 ? std::string("_").append(std::to_string(t)).append("t") : "";
    if (o.solvers.count("cholmod_llt"))
      solvers.push_back({"cholmod_llt" + sfx, [t, &o](const Problem& p) { return run_cholmod(p, true, t, o.analyze_samples); }});
    if (o.solvers.count("cholmod_ldlt"))
      solvers.push_back({"cholmod_ldlt" + sfx, [t](const Problem& p) { return run_cholmod(p, false, t); }});
    if (o.solvers.count("umfpack"))
      solvers.push_back({"umfpack" + sfx, [t](const Problem& p) { return run_umfpack(p, t); }});
    if (o.solvers.count("mumps"))
      solvers.push_back({"mumps" + sfx, [t, seen = std::set<std::string>()](const Problem& p) mutable {
                           return run_mumps(p, t, seen.insert(p.name).second);  // first run of a matrix
                         }});
  }

  std::vector<std::string> sources = o.matrices;
  if (o.laplacian > 0) sources.push_back("");  // the generated Laplacian
  Ratios ratios;

  print_table_header();
  for (const std::string& src : sources) {
    const Problem p = src.empty() ? laplacian3d(o.laplacian) : matrix_problem(src);
    const std::vector<Summary> sums = run_interleaved(p, solvers, o.repeats, o.skip_slow);
    const int sd = report_matrix(p, solvers, sums, ratios);
    if (p.laplacian && sd >= 0 && !sums[sd].runs.empty() && dgemm2 > 0) {
      // Measured again next to the Laplacian run; the best rate seen is the reference, so
      // a busy machine cannot flatter the fraction.
      const double again1 = dgemm_gflops(o.dgemm_n, 1), again2 = dgemm_gflops(o.dgemm_n, 2);
      set_blas_threads(1);
      print_laplacian(p, sums[sd], dgemm1, dgemm2, again1, again2);
    }
    std::fflush(stdout);
  }
  print_geomean(ratios);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Options o = parse(argc, argv);
    return run_bench(o);
  } catch (const Error& e) {
    std::fprintf(stderr, "ldlt_vs_peers: error: %s\n", e.what());
    return 2;
  }
}
