// SPDX-License-Identifier: LGPL-2.1-or-later
// apps/ldlt/main.cpp — stardiff-ldlt: solve A x = b for a symmetric Matrix Market matrix
// with the sparse LDL^T solver and report what happened.
//
// Contract (DESIGN.md driver conventions):
//  * stardiff-ldlt MATRIX.mtx[.gz] [--ordering auto|amd|metis|natural] [--pivoting auto|threshold]
//    [--pairing none|defer|compress] [--rhs FILE] [--nrhs K] [--refine N] [--tol T] [--json] [--dot FILE] [--executor starpu|sequential]
//    [--quiet]; --help prints the usage.
//  * Default right-hand side: b = A*1 (column 0) and b_k = A*x_k with known x_k for k > 0,
//    so the error against the exact solution is reported too. --rhs reads n*K numbers
//    (plain whitespace-separated text, '%'/'#' comments, column by column, or a Matrix
//    Market `array real general` file).
//  * relres = max_k ||A x_k - b_k||_inf / (||A||_inf ||x_k||_inf + ||b_k||_inf), computed
//    here from the matrix as read (independent of the solver's own estimate).
//  * Times: analyze_s (symbolic analysis), factor_s (numeric factorization only), solve_s
//    (solve with refinement), total_s = their sum; file parsing and StarPU start-up are
//    reported apart (read_s) or not at all. A StarPU Runtime is started only for
//    --executor starpu (the default). --dot records the factorization's task graph.
//  * singular: static pivots were needed (FactorInfo::singular), or Ldlt::rcond() — the
//    estimated reciprocal 1-norm condition number of the equilibrated matrix, reported as
//    rcond (its time as rcond_s, outside total_s) — is below eps: singular to working
//    precision (LAPACK dgesvx's rule).
//  * Exit 0: solved with relres <= tol (default 1e-10); 1: singular, relres > tol, or the
//    default b = A*x overflows (status "overflow", no solve, "reason" says where; the
//    JSON/summary is still printed); 2: bad usage or input, or a matrix whose reading or
//    analysis would not fit the available memory (message on stderr).
//  * --json: exactly one JSON object on stdout, numbers as %.17g; progress and messages
//    go to stderr. Without --json the summary goes to stdout.
//  * Under mpirun (StarPU-MPI, --executor starpu): the factorization's and the solve's task
//    graphs are distributed over the ranks (subtree-to-rank mapping, src/sparse/ldlt_dist.hpp;
//    each front's factors stay on its rank), Ldlt::solve gathers the solution (on every
//    rank: its refinement runs replicated), and only rank 0 prints; an error on a run of
//    several ranks ends the whole job (exit 2) rather than leave the other ranks waiting.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "json.hpp"
#include "stardiff/stardiff.hpp"

using namespace stardiff;
using namespace stardiff::sparse;

namespace {

const char* kUsage =
    "usage: stardiff-ldlt MATRIX.mtx[.gz] [options]\n"
    "Solve A x = b with stardiff's sparse LDL^T (StarPU task graph) and report inertia,\n"
    "pivoting, times and the residual.\n"
    "\n"
    "  --ordering auto|amd|metis|natural  fill-reducing ordering (default auto)\n"
    "  --pivoting auto|threshold  auto (default): try the unpivoted factorization first\n"
    "                    (kept for quasi-definite behaviour: pivot signs = diagonal signs,\n"
    "                    bounded growth); threshold: threshold pivoting only\n"
    "  --pairing none|defer|compress  zero-diagonal pairing (LdltOptions::pairing;\n"
    "                    default defer)\n"
    "  --rhs FILE        right-hand sides: n*K numbers column by column (plain text or a\n"
    "                    Matrix Market 'array real general' file); default b = A*1\n"
    "  --nrhs K          number of right-hand sides (default 1, or from --rhs)\n"
    "  --refine N        at most N iterative refinement steps (default 10)\n"
    "  --tol T           relres above T is a failure, exit 1 (default 1e-10)\n"
    "  --json            print one JSON object on stdout (messages on stderr)\n"
    "  --dot FILE        write the factorization's task graph (Graphviz DOT)\n"
    "  --executor starpu|sequential   where tasks run (default starpu; StarPU reads\n"
    "                    STARPU_SCHED, STARPU_NCPU, ... from the environment)\n"
    "  --quiet           no progress messages\n"
    "  -h, --help        this text\n"
    "Exit status: 0 solved, 1 singular or inaccurate (report still printed), 2 bad input.\n";

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Args {
  std::string matrix, rhs, dot, executor = "starpu";
  Ordering ordering = Ordering::Auto;
  std::optional<ZeroDiagonalPairing> pairing;  // unset: the library's default
  std::string ordering_name = "auto";
  bool try_unpivoted = true;
  int nrhs = 0;  // 0: not given
  int refine = -1;
  double tol = 1e-10;
  bool json = false, quiet = false;
};

long parse_long(const std::string& opt, const std::string& v, long lo, long hi) {
  char* end = nullptr;
  errno = 0;
  long x = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno != 0 || x < lo || x > hi)
    throw UsageError(opt + ": expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                     "], got '" + v + "'");
  return x;
}

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw UsageError(s + " needs a value");
      return argv[++i];
    };
    if (s == "-h" || s == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (s == "--ordering") {
      a.ordering_name = value();
      try {
        a.ordering = ordering_from_string(a.ordering_name);
      } catch (const Error& e) {
        throw UsageError("--ordering: " + std::string(e.what()));
      }
      if (a.ordering == Ordering::User) throw UsageError("--ordering: 'user' needs a permutation (library API only)");
    } else if (s == "--pivoting") {
      const std::string v = value();
      if (v != "auto" && v != "threshold") throw UsageError("--pivoting: expected auto or threshold, got '" + v + "'");
      a.try_unpivoted = v == "auto";
    } else if (s == "--pairing") {
      try {
        a.pairing = pairing_from_string(value());
      } catch (const Error& e) {
        throw UsageError("--pairing: " + std::string(e.what()));
      }
    } else if (s == "--rhs") {
      a.rhs = value();
    } else if (s == "--nrhs") {
      a.nrhs = int(parse_long(s, value(), 1, 1 << 16));
    } else if (s == "--refine") {
      a.refine = int(parse_long(s, value(), 0, 1000));
    } else if (s == "--tol") {
      std::string v = value();
      char* end = nullptr;
      a.tol = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || !(a.tol > 0) || !std::isfinite(a.tol))
        throw UsageError("--tol: expected a positive number, got '" + v + "'");
    } else if (s == "--json") {
      a.json = true;
    } else if (s == "--dot") {
      a.dot = value();
    } else if (s == "--executor") {
      a.executor = value();
      if (a.executor != "starpu" && a.executor != "sequential")
        throw UsageError("--executor: expected starpu or sequential, got '" + a.executor + "'");
    } else if (s == "--quiet") {
      a.quiet = true;
    } else if (s.size() > 1 && s[0] == '-') {
      throw UsageError("unknown option '" + s + "'");
    } else if (a.matrix.empty()) {
      a.matrix = s;
    } else {
      throw UsageError("more than one matrix given ('" + a.matrix + "', '" + s + "')");
    }
  }
  if (a.matrix.empty()) throw UsageError("no matrix file given");
  return a;
}

// Reads n*K right-hand-side values; sets nrhs when it was not given.
std::vector<double> read_rhs(const std::string& path, std::int64_t n, int& nrhs) {
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot open: " + std::strerror(errno));
  std::vector<double> v;
  std::string line;
  std::int64_t lineno = 0;
  bool mm = false;
  std::int64_t mm_rows = -1, mm_cols = -1;
  while (std::getline(in, line)) {
    ++lineno;
    if (lineno == 1 && line.rfind("%%MatrixMarket", 0) == 0) {
      std::istringstream h(line);
      std::string banner, object, format, field, sym;
      h >> banner >> object >> format >> field >> sym;
      for (auto* s : {&object, &format, &field, &sym})
        std::transform(s->begin(), s->end(), s->begin(), [](unsigned char c) { return char(std::tolower(c)); });
      if (object != "matrix" || format != "array" || (field != "real" && field != "integer") || sym != "general")
        throw Error(path + ":1: a right-hand-side file must be 'matrix array real general'");
      mm = true;
      continue;
    }
    std::size_t c = line.find_first_of("%#");
    if (c != std::string::npos) line.resize(c);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (mm && mm_rows < 0) {  // the size line "rows cols"
      std::istringstream sz(line);
      std::string extra;
      if (!(sz >> mm_rows >> mm_cols) || (sz >> extra) || mm_rows < 1 || mm_cols < 1)
        throw Error(path + ":" + std::to_string(lineno) + ": bad size line '" + line + "' (expected 'rows cols')");
      continue;
    }
    const char* p = line.c_str();
    for (;;) {
      while (*p == ' ' || *p == '\t' || *p == '\r') ++p;
      if (!*p) break;
      char* end = nullptr;
      double x = std::strtod(p, &end);
      if (end == p || (*end && *end != ' ' && *end != '\t' && *end != '\r'))
        throw Error(path + ":" + std::to_string(lineno) + ": bad number '" + std::string(p, std::strcspn(p, " \t\r")) + "'");
      if (!std::isfinite(x)) throw Error(path + ":" + std::to_string(lineno) + ": non-finite value");
      v.push_back(x);
      p = end;
    }
  }
  if (mm) {
    if (mm_rows < 0) throw Error(path + ":" + std::to_string(lineno) + ": missing size line");
    if (mm_rows != n)
      throw Error(path + ": has " + std::to_string(mm_rows) + " rows, the matrix has " + std::to_string(n));
    if (std::int64_t(v.size()) != mm_rows * mm_cols)
      throw Error(path + ":" + std::to_string(lineno) + ": expected " + std::to_string(mm_rows * mm_cols) +
                  " values, found " + std::to_string(v.size()));
    if (nrhs != 0 && nrhs != mm_cols)
      throw Error(path + ": holds " + std::to_string(mm_cols) + " right-hand sides but --nrhs is " +
                  std::to_string(nrhs));
    nrhs = int(mm_cols);
  } else {
    if (v.empty() || v.size() % std::size_t(n) != 0)
      throw Error(path + ":" + std::to_string(lineno) + ": " + std::to_string(v.size()) +
                  " values are not a multiple of n = " + std::to_string(n));
    int k = int(v.size() / std::size_t(n));
    if (nrhs != 0 && nrhs != k)
      throw Error(path + ": holds " + std::to_string(k) + " right-hand sides of length " + std::to_string(n) +
                  " but --nrhs is " + std::to_string(nrhs));
    nrhs = k;
  }
  if (nrhs < 1) throw Error(path + ": no right-hand side");
  return v;
}

// Forwards to another executor and counts submissions (read by the progress thread).
class CountingExecutor final : public Executor {
 public:
  explicit CountingExecutor(Executor& inner) : inner_(inner) {}
  using Executor::submit;
  void submit(const Codelet& cl, std::span<const DataAccess> data, const void* args, std::size_t args_size,
              const TaskOptions& opts) override {
    inner_.submit(cl, data, args, args_size, opts);
    count_.fetch_add(1, std::memory_order_relaxed);
  }
  void wait_all() override { inner_.wait_all(); }
  const char* kind() const override { return inner_.kind(); }
  int concurrency() const override { return inner_.concurrency(); }
  std::size_t tasks_submitted() const override { return count_.load(std::memory_order_relaxed); }

 private:
  Executor& inner_;
  std::atomic<std::size_t> count_{0};
};

// Prints "factorizing ... N s" to stderr every 2 s while a long phase runs.
class Progress {
 public:
  Progress(bool enabled, std::string what, const CountingExecutor* counter, std::int64_t planned)
      : what_(std::move(what)) {
    if (!enabled) return;
    th_ = std::thread([this, counter, planned] {
      auto t0 = std::chrono::steady_clock::now();
      std::unique_lock<std::mutex> lk(m_);
      while (!cv_.wait_for(lk, std::chrono::seconds(2), [this] { return done_; })) {
        double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::fprintf(stderr, "stardiff-ldlt: %s ... %.0f s, %zu of ~%lld tasks submitted\n", what_.c_str(), s,
                     counter ? counter->tasks_submitted() : std::size_t(0), static_cast<long long>(planned));
      }
    });
  }
  ~Progress() {
    if (th_.joinable()) {
      {
        std::lock_guard<std::mutex> lk(m_);
        done_ = true;
      }
      cv_.notify_all();
      th_.join();
    }
  }

 private:
  std::string what_;
  std::thread th_;
  std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Known solution column k of the default right-hand sides.
double exact_x(std::int64_t i, int k) { return k == 0 ? 1.0 : 1.0 + 0.5 * std::sin(double(i + 1) * (k + 1)); }

int solve_and_report(const Args& args, const CscMatrix32& A, const std::vector<double>& b,
                     const std::vector<double>& xtrue, int nrhs, const std::string& failure, double read_s,
                     const std::optional<Runtime>& rt, Executor& inner_exec);

int run(const Args& args) {
  auto t_read = std::chrono::steady_clock::now();
  CscMatrix32 A = read_matrix_market(args.matrix);
  const double read_s = seconds_since(t_read);
  const std::int64_t n = A.n_cols;

  int nrhs = args.nrhs;
  std::vector<double> b;
  std::vector<double> xtrue;
  std::string failure;  // a numerical failure found before the solve: reported, exit 1
  if (!args.rhs.empty()) {
    b = read_rhs(args.rhs, n, nrhs);
  } else {
    if (nrhs == 0) nrhs = 1;
    xtrue.resize(std::size_t(n) * nrhs);
    b.resize(xtrue.size());
    for (int k = 0; k < nrhs; ++k) {
      for (std::int64_t i = 0; i < n; ++i) xtrue[std::size_t(k) * n + i] = exact_x(i, k);
      multiply(A, xtrue.data() + std::size_t(k) * n, b.data() + std::size_t(k) * n);
    }
    for (std::size_t i = 0; i < b.size() && failure.empty(); ++i)
      if (!std::isfinite(b[i]))
        failure = "the default right-hand side b = A*x overflows in row " + std::to_string(i % std::size_t(n) + 1) +
                  (nrhs > 1 ? " of column " + std::to_string(i / std::size_t(n) + 1) : std::string()) +
                  " (entries too large to sum in double precision); give b with --rhs";
  }

  std::optional<Runtime> rt;
  std::unique_ptr<Executor> inner;
  if (args.executor == "starpu") {
    rt.emplace();
    inner = std::make_unique<StarpuExecutor>();
  } else {
    inner = std::make_unique<SequentialExecutor>();
  }
  try {
    return solve_and_report(args, A, b, xtrue, nrhs, failure, read_s, rt, *inner);
  } catch (const Error& e) {
    if (rt && rt->size() > 1) {
      std::fprintf(stderr, "stardiff-ldlt: rank %d: error: %s\n", rt->rank(), e.what());
      rt->abort_job(2);
    }
    throw;
  } catch (const std::bad_alloc&) {
    if (rt && rt->size() > 1) {
      std::fprintf(stderr, "stardiff-ldlt: rank %d: error: out of memory\n", rt->rank());
      rt->abort_job(2);
    }
    throw;
  }
}

int solve_and_report(const Args& args, const CscMatrix32& A, const std::vector<double>& b,
                     const std::vector<double>& xtrue, int nrhs, const std::string& failure, double read_s,
                     const std::optional<Runtime>& rt, Executor& inner_exec) {
  const std::int64_t n = A.n_cols;
  Executor* inner = &inner_exec;
  const bool quiet = args.quiet || (rt && rt->rank() != 0);  // rank 0 prints
  const bool silent = rt && rt->rank() != 0;

  LdltOptions opts;
  opts.ordering = args.ordering;
  if (args.pairing) opts.pairing = *args.pairing;
  opts.try_unpivoted = args.try_unpivoted;
  if (args.refine >= 0) opts.max_refine = args.refine;
  Ldlt ldlt(opts);

  auto t0 = std::chrono::steady_clock::now();
  const AnalyzeInfo ai = ldlt.analyze(A, inner);  // one task: not beside polling workers
  const double analyze_s = seconds_since(t0);
  if (!quiet)
    std::fprintf(stderr, "stardiff-ldlt: %s: n=%lld nnz(L)=%lld %.3g GFlop predicted, %s ordering, mode %s%s\n",
                 args.matrix.c_str(), static_cast<long long>(ai.n), static_cast<long long>(ai.nnz_l), ai.flops * 1e-9,
                 to_string(ai.ordering), to_string(ai.mode),
                 rt && rt->size() > 1 ? (", " + std::to_string(rt->size()) + " MPI ranks").c_str() : "");

  CountingExecutor counter(*inner);
  std::optional<RecordingExecutor> rec;
  Executor* fexec = &counter;
  if (!args.dot.empty()) {
    rec.emplace(&counter);
    fexec = &*rec;
  }
  FactorInfo fi;
  t0 = std::chrono::steady_clock::now();
  {
    Progress progress(!quiet, "factorizing", &counter, ai.tasks);
    fi = ldlt.factorize(A, fexec);
  }
  // the library's own measurement: the progress reporter's thread is not part of it
  const double factor_s = fi.factor_s > 0 ? fi.factor_s : seconds_since(t0);
  const std::size_t factor_tasks = counter.tasks_submitted();
  if (rec && !silent) rec->write_dot(args.dot);

  t0 = std::chrono::steady_clock::now();
  std::vector<double> x;
  if (failure.empty()) {
    Progress progress(!quiet, "solving", nullptr, 0);
    x = ldlt.solve(b, nrhs, inner);
  }
  const double solve_s = seconds_since(t0);
  SolveInfo si = ldlt.solve_info();
  if (!failure.empty()) si.backward_error = NAN;  // no solve ran
  // Singular to working precision even where no pivot was small (bloweybq): the
  // Hager-Higham estimate of the equilibrated matrix's reciprocal condition number.
  t0 = std::chrono::steady_clock::now();
  const double rcond = ldlt.rcond(inner);
  const double rcond_s = seconds_since(t0);
  const bool singular = ldlt.numerically_singular(inner);  // the estimate is cached
  require(!failure.empty() || x.size() == b.size(), "solve returned " + std::to_string(x.size()) +
                                                        " values, expected " + std::to_string(b.size()));

  // Residual and error from the matrix as read.
  const double anorm = norm_inf(A);
  double relres = failure.empty() ? 0 : NAN, err = failure.empty() ? 0 : NAN;
  std::vector<double> ax(static_cast<std::size_t>(n));
  for (int k = 0; k < nrhs && failure.empty(); ++k) {
    const double* xk = x.data() + std::size_t(k) * n;
    const double* bk = b.data() + std::size_t(k) * n;
    multiply(A, xk, ax.data());
    double rn = 0, xn = 0, bn = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      rn = std::max(rn, std::abs(bk[i] - ax[i]));
      xn = std::max(xn, std::abs(xk[i]));
      bn = std::max(bn, std::abs(bk[i]));
      if (std::isnan(xk[i])) rn = NAN;
    }
    double denom = anorm * xn + bn;
    double rr = denom > 0 ? rn / denom : (rn == 0 ? 0.0 : INFINITY);
    relres = (std::isnan(rr) || std::isnan(relres)) ? NAN : std::max(relres, rr);
    if (!xtrue.empty()) {
      double en = 0, tn = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        en = std::max(en, std::abs(xk[i] - xtrue[std::size_t(k) * n + i]));
        tn = std::max(tn, std::abs(xtrue[std::size_t(k) * n + i]));
      }
      err = std::isnan(en) ? NAN : std::max(err, en / tn);
    }
  }
  const bool accurate = relres <= args.tol;
  const char* status = singular ? "singular" : !failure.empty() ? "overflow" : (accurate ? "solved" : "inaccurate");
  // L and flops of the factorization that ran (simplicial mode: exact, below the analysis's
  // supernodal prediction); the prediction when none ran
  const double flops = fi.flops > 0 ? fi.flops : ai.flops;
  const long long nnz_l = static_cast<long long>(fi.nnz_l > 0 ? fi.nnz_l : ai.nnz_l);
  const double gflops = factor_s > 0 ? flops / factor_s * 1e-9 : 0.0;

  if (silent) {
    // rank > 0: rank 0 prints
  } else if (args.json) {
    apps::JsonWriter j;
    j.field("matrix", args.matrix).field("n", ai.n).field("nnz_a", ai.nnz_a);
    j.field("nnz_lower", static_cast<long long>(A.nnz())).field("nnz_l", nnz_l).field("flops", flops);
    j.field("nnz_l_predicted", ai.nnz_l).field("flops_predicted", ai.flops);
    j.field("ordering", to_string(ai.ordering)).field("mode", to_string(fi.mode));
    j.field("supernodes", ai.supernodes).field("levels", ai.levels);
    j.field("tasks", static_cast<long long>(factor_tasks)).field("planned_tasks", ai.tasks);
    j.field("executor", args.executor).field("scheduler", rt ? rt->scheduler() : std::string("none"));
    j.field("workers", rt ? rt->worker_count() : 1);
    j.field("read_s", read_s).field("analyze_s", analyze_s).field("factor_s", factor_s);
    j.field("solve_s", solve_s).field("total_s", analyze_s + factor_s + solve_s).field("gflops", gflops);
    j.field("nrhs", nrhs).field("relres", relres).field("backward_error", si.backward_error);
    if (!xtrue.empty()) j.field("error_vs_exact", err);
    j.field("refine_iters", si.refine_iters).field("fgmres_iters", si.fgmres_iters);
    j.key("inertia").begin_object();
    j.field("pos", fi.inertia.pos).field("neg", fi.inertia.neg).field("zero", fi.inertia.zero).end_object();
    j.field("two_by_two", fi.two_by_two).field("delayed", fi.delayed).field("static_pivots", fi.static_pivots);
    j.field("pivoting", to_string(fi.pivoting)).field("growth", fi.growth).field("attempts", fi.attempts);
    j.field("rcond", rcond).field("rcond_s", rcond_s);
    j.field("singular", singular).field("status", status);
    if (!failure.empty()) j.field("reason", failure);
    std::printf("%s\n", j.str().c_str());
  } else {
    std::printf("matrix        %s\n", args.matrix.c_str());
    std::printf("n             %lld   nnz(A) %lld   nnz(L) %lld   %.4g GFlop\n", static_cast<long long>(ai.n),
                static_cast<long long>(ai.nnz_a), nnz_l, flops * 1e-9);
    std::printf("analysis      %s ordering, %lld supernodes, %lld levels, mode %s\n", to_string(ai.ordering),
                static_cast<long long>(ai.supernodes), static_cast<long long>(ai.levels),
                to_string(fi.mode));
    std::printf("times         read %.4f s, analyze %.4f s, factor %.4f s (%.3g GFlop/s), solve %.4f s\n", read_s,
                analyze_s, factor_s, gflops, solve_s);
    std::printf("executor      %s%s%s, %zu factorization tasks\n", args.executor.c_str(), rt ? " / " : "",
                rt ? rt->scheduler().c_str() : "", factor_tasks);
    std::printf("inertia       %lld positive, %lld negative, %lld zero\n", static_cast<long long>(fi.inertia.pos),
                static_cast<long long>(fi.inertia.neg), static_cast<long long>(fi.inertia.zero));
    std::printf("pivots        %s pivoting (%d attempt%s), %lld 2x2, %lld delayed, %lld static", to_string(fi.pivoting),
                fi.attempts, fi.attempts == 1 ? "" : "s", static_cast<long long>(fi.two_by_two),
                static_cast<long long>(fi.delayed), static_cast<long long>(fi.static_pivots));
    if (fi.growth > 0) std::printf(", growth %.3g", fi.growth);
    std::printf("\n");
    std::printf("solve         %d rhs, relres %.3e, %d refinement steps, %d FGMRES iterations", nrhs, relres,
                si.refine_iters, si.fgmres_iters);
    if (!xtrue.empty()) std::printf(", error vs exact %.3e", err);
    std::printf("\ncondition     rcond %.3e (equilibrated, 1-norm estimate)%s\n", rcond,
                singular ? ": singular to working precision" : "");
    std::printf("status        %s\n", status);
    if (!failure.empty()) std::printf("reason        %s\n", failure.c_str());
  }
  return singular || !accurate ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  try {
    args = parse_args(argc, argv);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "stardiff-ldlt: %s\n%s", e.what(), kUsage);
    return 2;
  }
  try {
    return run(args);
  } catch (const Error& e) {
    std::fprintf(stderr, "stardiff-ldlt: error: %s\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "stardiff-ldlt: error: out of memory\n");
    return 2;
  }
}
