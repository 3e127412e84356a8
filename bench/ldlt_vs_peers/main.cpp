// bench/ldlt_vs_peers/main.cpp — ldlt_vs_peers: stardiff's sparse LDL^T beside CHOLMOD
// (supernodal LL^T, simplicial LDL^T), UMFPACK and MUMPS (sequential, symmetric mode),
// all in one process on the same matrices.
//
// Usage: ldlt_vs_peers [MATRIX.mtx[.gz] ...] [--laplacian N | --no-laplacian] [--repeats R] [--analyze-samples K]
//        [--solvers LIST] [--executor starpu|sequential] [--peer-threads T]
//        [--skip-slow S] [--dgemm-n N | --no-dgemm] [--ordering auto|amd|metis]
// Contract:
//  * Besides the matrices given, a 7-point 3-D Laplacian on an N^3 grid (default N = 50)
//    is generated. Every solver does analyze + factorize + solve on b = A*1; each phase is
//    timed with a wall clock, R (default 5) repeats interleave the solvers, and the median
//    of each phase is reported. relres = ||b - A x||_inf / (||A||_inf ||x||_inf + ||b||_inf)
//    is computed here for every solver (stardiff's solve includes its refinement; the
//    peers' do not refine).
//  * A solver "succeeds" when it reports no error and relres <= 1e-6; a failure (CHOLMOD
//    LL^T on an indefinite matrix, MUMPS out of memory, ...) is reported with its reason
//    and the solver is not retried on that matrix. A peer whose first run takes longer
//    than --skip-slow seconds (default 30; 0 = never skip) is run once only (repeats=1
//    in its line); stardiff always runs every repeat.
//  * Threads: stardiff runs as StarPU tasks on the runtime's CPU workers (STARPU_NCPU) with
//    single-threaded BLAS inside tasks; one runtime serves the whole run and its workers
//    are paused (blocked, not polling) while the peers run with --peer-threads OpenBLAS threads
//    (default: the number of StarPU CPU workers, so both sides use the same cores); with
//    a list (e.g. 1,2) each peer runs at each count as its own entry, so small matrices
//    are not judged on a threaded BLAS's wake-up cost.
//  * Output (stdout, one `ldlt_vs_peers key=value ...` line per result):
//      solver lines: matrix= solver= analyze_s= factor_s= solve_s= relres= status= [reason=]
//      ldlt_vs_peers matrix=NAME factor_s=... best_peer=NAME best_peer_factor_s=... ratio=...
//        (ratio = stardiff factor time / fastest successful peer's) and analyze_ratio
//        (stardiff analyze / CHOLMOD's cholmod_analyze; each run of both times K analyses
//        of fresh solvers, --analyze-samples, so these medians cover R x K samples: the
//        analysis is cheap and its timings noisy);
//      inertia lines: stardiff (pos, neg, zero) vs MUMPS's negative pivots INFOG(12), and
//        vs MUMPS refactorized with null-pivot detection at stardiff's zero-pivot
//        threshold (ICNTL(24) = 1, CNTL(3) = 1e-11; untimed, first run of a matrix):
//        mumps_nulldet_neg, mumps_nulldet_zero (INFOG(28)), agree_nulldet; and whether
//        each calls the matrix singular: stardiff_rcond (Ldlt::rcond, untimed),
//        stardiff_singular (static pivots or rcond < eps), mumps_singular (null pivots),
//        singular_agree;
//      dgemm lines: cblas_dgemm rate (N x N, 1 and 2 threads, best of 3; core = the
//        kernel OpenBLAS runs, which sets the yardstick) and, for the Laplacian,
//        stardiff's GFlop/s (predicted flops / median factor time) as a fraction
//        of the best dgemm rate measured (at start and again right after the Laplacian);
//      ldlt_vs_peers geomean ...: geometric mean of the ratios (all matrices, and those
//        whose fastest peer needs >= 2 ms).
//    A readable table goes to stderr.
#include <cblas.h>
#include <cholmod.h>
#include <dmumps_c.h>
#include <umfpack.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "stardiff/stardiff.hpp"


using namespace stardiff;
using namespace stardiff::sparse;

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
    "  --peer-threads T[,T2...]  OpenBLAS threads for the peers (default: the StarPU CPU\n"
    "                    workers); with a list every peer runs once per count (name_Tt)\n"
    "  --skip-slow S     a peer whose first run exceeds S seconds runs once (default 30, 0 = off)\n"
    "  --dgemm-n N       size of the dgemm rate measurement (default 2000)\n"
    "  --no-dgemm        skip the dgemm measurement\n"
    "  -h, --help        this text\n"
    "Example: ldlt_vs_peers ../shared/data/matrices/*.mtx.gz --laplacian 50 --repeats 5\n";

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// ---------------------------------------------------------------- problems
struct Problem {
  std::string name;
  CscMatrix32 A;                        // lower triangle (symmetric_lower)
  std::vector<std::int32_t> fp, fi;     // full pattern CSC (UMFPACK)
  std::vector<double> fx;
  std::vector<double> b;                // A * 1
  double anorm = 0;
  bool laplacian = false;
};

void finish_problem(Problem& p) {
  const CscMatrix32& A = p.A;
  const std::int32_t n = A.n_cols;
  std::vector<double> ones(std::size_t(n), 1.0);
  p.b.resize(std::size_t(n));
  multiply(A, ones.data(), p.b.data());
  p.anorm = norm_inf(A);
  // Full CSC: column j holds the upper part (row j of the lower triangle) then the lower part.
  std::vector<std::int32_t> rows, cols;
  std::vector<double> vals;
  rows.reserve(2 * std::size_t(A.nnz()));
  cols.reserve(rows.capacity());
  vals.reserve(rows.capacity());
  for (std::int32_t j = 0; j < n; ++j)
    for (std::int32_t q = A.col_ptr[j]; q < A.col_ptr[j + 1]; ++q) {
      std::int32_t i = A.row_idx[q];
      rows.push_back(i);
      cols.push_back(j);
      vals.push_back(A.values[q]);
      if (i != j) {
        rows.push_back(j);
        cols.push_back(i);
        vals.push_back(A.values[q]);
      }
    }
  CscMatrix32 F = from_triplets(n, n, rows, cols, vals, false);
  p.fp = std::move(F.col_ptr);
  p.fi = std::move(F.row_idx);
  p.fx = std::move(F.values);
}

Problem laplacian3d(int N) {
  Problem p;
  p.name = "laplace3d_" + std::to_string(N);
  p.laplacian = true;
  const std::int64_t n64 = std::int64_t(N) * N * N;
  require(N >= 2 && n64 < (std::int64_t(1) << 30), "--laplacian: N must be in [2, 1000]");
  const std::int32_t n = std::int32_t(n64);
  std::vector<std::int32_t> r, c;
  std::vector<double> v;
  r.reserve(std::size_t(n) * 4);
  c.reserve(r.capacity());
  v.reserve(r.capacity());
  auto id = [N](int x, int y, int z) { return std::int32_t((std::int64_t(z) * N + y) * N + x); };
  for (int z = 0; z < N; ++z)
    for (int y = 0; y < N; ++y)
      for (int x = 0; x < N; ++x) {
        std::int32_t k = id(x, y, z);
        r.push_back(k), c.push_back(k), v.push_back(6.0);
        if (x + 1 < N) r.push_back(id(x + 1, y, z)), c.push_back(k), v.push_back(-1.0);
        if (y + 1 < N) r.push_back(id(x, y + 1, z)), c.push_back(k), v.push_back(-1.0);
        if (z + 1 < N) r.push_back(id(x, y, z + 1)), c.push_back(k), v.push_back(-1.0);
      }
  p.A = from_triplets(n, n, r, c, v, true);
  p.A.name = p.name;
  finish_problem(p);
  return p;
}

double relres_of(const Problem& p, const std::vector<double>& x) {
  const std::size_t n = p.b.size();
  if (x.size() != n) return INFINITY;
  std::vector<double> ax(n);
  multiply(p.A, x.data(), ax.data());
  double rn = 0, xn = 0, bn = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i])) return INFINITY;
    rn = std::max(rn, std::abs(p.b[i] - ax[i]));
    xn = std::max(xn, std::abs(x[i]));
    bn = std::max(bn, std::abs(p.b[i]));
  }
  double d = p.anorm * xn + bn;
  return d > 0 ? rn / d : 0.0;
}

// ---------------------------------------------------------------- solvers
struct RunResult {
  double analyze_s = 0, factor_s = 0, solve_s = 0, relres = INFINITY;
  std::vector<double> analyze_extra;  // further analyze-only timings of the same pattern
  bool ok = false;
  std::string reason;
  double flops = 0;                        // factorization flops where the solver reports them
  std::optional<Inertia> inertia;          // stardiff
  std::optional<double> rcond;             // stardiff: Ldlt::rcond() (untimed)
  bool singular = false;                   // stardiff: Ldlt::numerically_singular()
  std::optional<std::int64_t> negative;    // negative pivots (stardiff, MUMPS INFOG(12))
  // MUMPS refactorized with null-pivot detection (ICNTL(24) = 1, untimed): its negative
  // pivots and null pivots (INFOG(28)), for singular matrices
  std::optional<std::int64_t> negative_nulldet, null_pivots;
  std::string detail;                      // extra key=value pairs
};

struct Solver {
  std::string name;
  std::function<RunResult(const Problem&)> run;
};

void set_blas_threads(int t) { openblas_set_num_threads(t); }

// stardiff ------------------------------------------------------------------
// StarPU's CPU workers poll while idle, which would starve the peers' BLAS threads: one
// Runtime serves the whole benchmark and is paused (workers blocked) except while
// stardiff runs. (Starting a runtime per run also cost start-up time, and under dmda/dmdas
// a second starpu_init in one process trips StarPU 1.3.10's "measured >= 0" assertion.)
RunResult run_stardiff(const Problem& p, Runtime* runtime, Ordering ordering, int analyze_samples) {
  RunResult r;
  try {
    struct Resumed {  // workers run only inside this scope
      Runtime* rt;
      explicit Resumed(Runtime* r) : rt(r) {
        if (rt) rt->resume();
      }
      ~Resumed() {
        if (rt) rt->pause();
      }
    } resumed(runtime);
    std::unique_ptr<Executor> ex;
    if (runtime)
      ex = std::make_unique<StarpuExecutor>();
    else
      ex = std::make_unique<SequentialExecutor>();
    Executor& exec = *ex;
    set_blas_threads(1);  // StarPU workers are the parallelism
    run_on_worker(exec, "warm_up", [] {});  // wakes the workers (untimed)
    LdltOptions o;
    o.ordering = ordering;
    Ldlt ldlt(o);
    auto t0 = Clock::now();
    const AnalyzeInfo& ai = ldlt.analyze(p.A, &exec);
    r.analyze_s = since(t0);
    t0 = Clock::now();
    FactorInfo fi = ldlt.factorize(p.A, &exec);
    r.factor_s = since(t0);
    t0 = Clock::now();
    std::vector<double> x = ldlt.solve(p.b, 1, &exec);
    r.solve_s = since(t0);
    r.relres = relres_of(p, x);
    for (int k = 1; k < analyze_samples; ++k) {  // the analysis alone, on fresh solvers
      Ldlt again(o);
      t0 = Clock::now();
      again.analyze(p.A, &exec);
      r.analyze_extra.push_back(since(t0));
    }
    r.flops = fi.flops;  // what ran (simplicial: exact counts, as CHOLMOD reports them)
    r.inertia = fi.inertia;
    r.negative = fi.inertia.neg;
    r.rcond = ldlt.rcond(&exec);  // untimed, after the timed phases
    r.singular = ldlt.numerically_singular(&exec);
    char d[256];
    std::snprintf(d, sizeof d, "mode=%s pivoting=%s ordering=%s nnz_l=%lld tasks=%lld two_by_two=%lld delayed=%lld static_pivots=%lld singular=%d refine_iters=%d",
                  to_string(fi.mode), to_string(fi.pivoting), to_string(ai.ordering), static_cast<long long>(fi.nnz_l),
                  static_cast<long long>(fi.tasks), static_cast<long long>(fi.two_by_two),
                  static_cast<long long>(fi.delayed), static_cast<long long>(fi.static_pivots), int(fi.singular),
                  ldlt.solve_info().refine_iters);
    r.detail = d;
    r.ok = r.relres <= 1e-6;
    if (!r.ok) r.reason = fi.singular ? "singular" : "inaccurate";
  } catch (const std::exception& e) {
    r.ok = false;
    r.reason = std::string("error: ") + e.what();
  }
  return r;
}

// CHOLMOD -------------------------------------------------------------------
// A started Common, silent, for supernodal LL^T or simplicial LDL^T.
void start_cholmod(cholmod_common& c, bool supernodal) {
  cholmod_start(&c);
  c.print = 0;
  c.error_handler = nullptr;
  c.supernodal = supernodal ? CHOLMOD_SUPERNODAL : CHOLMOD_SIMPLICIAL;
  c.final_ll = supernodal ? 1 : 0;  // simplicial: keep LDL^T
}

RunResult run_cholmod(const Problem& p, bool supernodal, int threads, int analyze_samples = 1) {
  RunResult r;
  set_blas_threads(threads);
  cholmod_common c;
  start_cholmod(c, supernodal);
  const std::int32_t n = p.A.n_cols;
  cholmod_sparse* A = cholmod_allocate_sparse(n, n, std::size_t(p.A.nnz()), 1, 1, -1, CHOLMOD_REAL, &c);
  std::memcpy(A->p, p.A.col_ptr.data(), sizeof(std::int32_t) * (std::size_t(n) + 1));
  std::memcpy(A->i, p.A.row_idx.data(), sizeof(std::int32_t) * std::size_t(p.A.nnz()));
  std::memcpy(A->x, p.A.values.data(), sizeof(double) * std::size_t(p.A.nnz()));
  cholmod_dense* B = cholmod_allocate_dense(n, 1, n, CHOLMOD_REAL, &c);
  std::memcpy(B->x, p.b.data(), sizeof(double) * std::size_t(n));
  auto t0 = Clock::now();
  cholmod_factor* L = cholmod_analyze(A, &c);
  r.analyze_s = since(t0);
  if (!L || c.status < CHOLMOD_OK) {
    r.reason = "cholmod_analyze failed (status " + std::to_string(c.status) + ")";
  } else {
    r.flops = c.fl;
    t0 = Clock::now();
    int ok = cholmod_factorize(A, L, &c);
    r.factor_s = since(t0);
    if (!ok || c.status == CHOLMOD_NOT_POSDEF || c.status < CHOLMOD_OK) {
      r.reason = c.status == CHOLMOD_NOT_POSDEF
                     ? "not positive definite (breakdown at column " + std::to_string(L->minor) + ")"
                     : "cholmod_factorize failed (status " + std::to_string(c.status) + ")";
    } else {
      t0 = Clock::now();
      cholmod_dense* X = cholmod_solve(CHOLMOD_A, L, B, &c);
      r.solve_s = since(t0);
      if (X) {
        std::vector<double> x(static_cast<double*>(X->x), static_cast<double*>(X->x) + n);
        r.relres = relres_of(p, x);
        r.ok = r.relres <= 1e-6;
        if (!r.ok) r.reason = "inaccurate (no pivoting)";
        cholmod_free_dense(&X, &c);
      } else {
        r.reason = "cholmod_solve failed";
      }
    }
    cholmod_free_factor(&L, &c);
  }
  for (int k = 1; k < analyze_samples; ++k) {  // the analysis alone, each with a fresh Common
    cholmod_common c2;
    start_cholmod(c2, supernodal);
    t0 = Clock::now();
    cholmod_factor* L2 = cholmod_analyze(A, &c2);
    r.analyze_extra.push_back(since(t0));
    cholmod_free_factor(&L2, &c2);
    cholmod_finish(&c2);
  }
  cholmod_free_dense(&B, &c);
  cholmod_free_sparse(&A, &c);
  cholmod_finish(&c);
  return r;
}

// UMFPACK -------------------------------------------------------------------
RunResult run_umfpack(const Problem& p, int threads) {
  RunResult r;
  set_blas_threads(threads);
  const std::int32_t n = p.A.n_cols;
  double control[UMFPACK_CONTROL], info[UMFPACK_INFO];
  umfpack_di_defaults(control);
  void* sym = nullptr;
  void* num = nullptr;
  auto t0 = Clock::now();
  int st = umfpack_di_symbolic(n, n, p.fp.data(), p.fi.data(), p.fx.data(), &sym, control, info);
  r.analyze_s = since(t0);
  if (st != UMFPACK_OK) {
    r.reason = "umfpack_di_symbolic status " + std::to_string(st);
  } else {
    t0 = Clock::now();
    st = umfpack_di_numeric(p.fp.data(), p.fi.data(), p.fx.data(), sym, &num, control, info);
    r.factor_s = since(t0);
    r.flops = info[UMFPACK_FLOPS];
    if (st != UMFPACK_OK) {
      r.reason = st == UMFPACK_WARNING_singular_matrix ? "singular matrix"
                                                        : "umfpack_di_numeric status " + std::to_string(st);
    } else {
      std::vector<double> x(static_cast<std::size_t>(n));
      t0 = Clock::now();
      st = umfpack_di_solve(UMFPACK_A, p.fp.data(), p.fi.data(), p.fx.data(), x.data(), p.b.data(), num, control,
                            info);
      r.solve_s = since(t0);
      r.relres = relres_of(p, x);
      r.ok = st == UMFPACK_OK && r.relres <= 1e-6;
      if (!r.ok) r.reason = st != UMFPACK_OK ? "umfpack_di_solve status " + std::to_string(st) : "inaccurate";
    }
  }
  if (num) umfpack_di_free_numeric(&num);
  if (sym) umfpack_di_free_symbolic(&sym);
  return r;
}

// MUMPS (sequential, SYM = 2: general symmetric) ---------------------------
RunResult run_mumps(const Problem& p, int threads, bool null_detection) {
  RunResult r;
  set_blas_threads(threads);
  const std::int32_t n = p.A.n_cols;
  std::vector<MUMPS_INT> irn, jcn;
  std::vector<double> a(p.A.values.begin(), p.A.values.end());
  irn.reserve(a.size());
  jcn.reserve(a.size());
  for (std::int32_t j = 0; j < n; ++j)
    for (std::int32_t q = p.A.col_ptr[j]; q < p.A.col_ptr[j + 1]; ++q) {
      irn.push_back(p.A.row_idx[q] + 1);
      jcn.push_back(j + 1);
    }
  std::vector<double> rhs(p.b);
  DMUMPS_STRUC_C id;
  std::memset(&id, 0, sizeof id);
  id.comm_fortran = -987654;  // USE_COMM_WORLD
  id.par = 1;
  id.sym = 2;
  id.job = -1;
  dmumps_c(&id);
  auto infog = [&](int k) { return id.infog[k - 1]; };
  if (infog(1) < 0) {
    r.reason = "MUMPS init INFOG(1)=" + std::to_string(infog(1));
    return r;
  }
  id.icntl[0] = -1;  // no error/diagnostic/global output
  id.icntl[1] = -1;
  id.icntl[2] = -1;
  id.icntl[3] = 0;
  id.n = n;
  id.nnz = static_cast<MUMPS_INT8>(a.size());
  id.irn = irn.data();
  id.jcn = jcn.data();
  id.a = a.data();
  id.rhs = rhs.data();
  auto step = [&](int job, double& t) {
    id.job = job;
    auto t0 = Clock::now();
    dmumps_c(&id);
    t = since(t0);
    if (infog(1) < 0) {
      r.reason = "MUMPS job " + std::to_string(job) + " INFOG(1)=" + std::to_string(infog(1)) +
                 " INFOG(2)=" + std::to_string(infog(2));
      return false;
    }
    return true;
  };
  // INFOG(1) = -8/-9: the workspace estimate was too small; as a MUMPS user would, raise
  // ICNTL(14) (memory relaxation, %) and factorize again (only the last attempt is timed).
  auto factor = [&]() {
    for (int attempt = 0;; ++attempt) {
      if (step(2, r.factor_s)) return true;
      if ((infog(1) != -8 && infog(1) != -9) || attempt == 4) return false;
      id.icntl[13] = std::max(2 * id.icntl[13], 40);
      r.reason.clear();
    }
  };
  if (step(1, r.analyze_s) && factor()) {
    r.negative = infog(12);
    r.flops = id.rinfog[2];  // RINFOG(3): flops of the elimination
    char d[128];
    std::snprintf(d, sizeof d, "mumps_neg=%d mumps_null_pivots=%d mumps_ordering=%d mumps_icntl14=%d", infog(12),
                  infog(28), infog(7), id.icntl[13]);
    r.detail = d;
    if (step(3, r.solve_s)) {
      r.relres = relres_of(p, rhs);
      r.ok = r.relres <= 1e-6;
      if (!r.ok) r.reason = "inaccurate";
    }
    // The inertia again with null-pivot detection (after the timed solve; untimed; once
    // per matrix): by default MUMPS gives a singular matrix's null pivots a sign. A pivot
    // is null below 1e-11 times the norm of MUMPS's preprocessed matrix: stardiff's
    // zero_pivot rule.
    if (null_detection) {
      id.icntl[23] = 1;
      id.cntl[2] = 1e-11;
      double untimed = 0;
      const std::string keep = r.reason;
      if (step(2, untimed)) {
        r.negative_nulldet = infog(12);
        r.null_pivots = infog(28);
      }
      r.reason = keep;
    }
  }
  id.job = -2;
  dmumps_c(&id);
  return r;
}

// ---------------------------------------------------------------- dgemm rate
double dgemm_gflops(int n, int threads) {
  set_blas_threads(threads);
  std::vector<double> A(std::size_t(n) * n), B(A.size()), C(A.size(), 0.0);
  for (std::size_t i = 0; i < A.size(); ++i) {
    A[i] = std::sin(double(i));
    B[i] = std::cos(double(i));
  }
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    auto t0 = Clock::now();
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, A.data(), n, B.data(), n, 0.0, C.data(), n);
    double s = since(t0);
    best = std::max(best, 2.0 * n * double(n) * n / s * 1e-9);
  }
  return best;
}

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

std::string basename_no_ext(const std::string& path) {
  std::string s = path.substr(path.find_last_of('/') + 1);
  for (const char* ext : {".gz", ".mtx"})
    if (s.size() > std::strlen(ext) && s.compare(s.size() - std::strlen(ext), std::strlen(ext), ext) == 0)
      s.resize(s.size() - std::strlen(ext));
  return s;
}

// Every analysis a run timed: the one before its factorization and the extra samples.
void add_analyses(const RunResult& r, std::vector<double>& v) {
  v.push_back(r.analyze_s);
  v.insert(v.end(), r.analyze_extra.begin(), r.analyze_extra.end());
}

struct Summary {
  std::vector<RunResult> runs;
  RunResult first_failure;
  bool failed = false;
  double analyze() const {
    std::vector<double> v;
    for (auto& r : runs) add_analyses(r, v);
    return median(v);
  }
  double factor() const {
    std::vector<double> v;
    for (auto& r : runs) v.push_back(r.factor_s);
    return median(v);
  }
  double solve() const {
    std::vector<double> v;
    for (auto& r : runs) v.push_back(r.solve_s);
    return median(v);
  }
  double relres() const {
    double m = 0;
    for (auto& r : runs) m = std::max(m, r.relres);
    return m;
  }
};

struct Options {
  std::vector<std::string> matrices;
  int laplacian = 50;
  int repeats = 5;
  std::set<std::string> solvers = {"stardiff", "cholmod_llt", "cholmod_ldlt", "umfpack", "mumps"};
  std::string executor = "starpu";
  Ordering ordering = Ordering::Auto;
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
  std::string tl;
  for (int t : threads) tl += (tl.empty() ? "" : ",") + std::to_string(t);
  std::printf("ldlt_vs_peers config executor=%s scheduler=%s cpu_workers=%d peer_threads=%s repeats=%d\n",
              o.executor.c_str(), sched.c_str(), workers, tl.c_str(), o.repeats);

  double dgemm1 = 0, dgemm2 = 0;
  if (o.dgemm_n > 0) {
    dgemm1 = dgemm_gflops(o.dgemm_n, 1);
    dgemm2 = dgemm_gflops(o.dgemm_n, 2);
    // the fraction of dgemm depends on the kernel OpenBLAS runs (OPENBLAS_CORETYPE)
    std::printf("ldlt_vs_peers dgemm n=%d threads=1 gflops=%.4g core=%s\n", o.dgemm_n, dgemm1, openblas_get_corename());
    std::printf("ldlt_vs_peers dgemm n=%d threads=2 gflops=%.4g core=%s\n", o.dgemm_n, dgemm2, openblas_get_corename());
    std::fflush(stdout);
  }

  std::vector<Solver> solvers;
  if (o.solvers.count("stardiff"))
    solvers.push_back({"stardiff", [rt, &o](const Problem& p) { return run_stardiff(p, rt, o.ordering, o.analyze_samples); }});
  for (int t : threads) {
    const std::string sfx = threads.size() > 1 ? "_" + std::to_string(t) + "t" : "";
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
  std::vector<double> ratios, ratios_2ms;

  std::fprintf(stderr, "%-28s %-13s %10s %10s %10s %10s  %s\n", "matrix", "solver", "analyze_s", "factor_s",
               "solve_s", "relres", "status");
  for (const std::string& src : sources) {
    Problem p;
    if (src.empty()) {
      p = laplacian3d(o.laplacian);
    } else {
      p.A = read_matrix_market(src);
      p.name = basename_no_ext(src);
      finish_problem(p);
    }
    std::vector<Summary> sums(solvers.size());
    std::vector<int> reps(solvers.size(), o.repeats);
    for (int rep = 0; rep < o.repeats; ++rep) {
      for (std::size_t s = 0; s < solvers.size(); ++s) {
        if (sums[s].failed || rep >= reps[s]) continue;
        RunResult r = solvers[s].run(p);
        if (!r.ok) {
          sums[s].failed = true;
          sums[s].first_failure = r;
          continue;
        }
        sums[s].runs.push_back(r);
        if (rep == 0 && o.skip_slow > 0 && solvers[s].name != "stardiff" &&
            r.analyze_s + r.factor_s + r.solve_s > o.skip_slow)
          reps[s] = 1;  // a slow peer runs once; stardiff always gets every repeat
      }
    }
    set_blas_threads(1);
    // Report.
    int best = -1, sd = -1, cholmod_llt = -1, mumps = -1;
    for (std::size_t s = 0; s < solvers.size(); ++s) {
      const Summary& S = sums[s];
      const std::string& nm = solvers[s].name;
      if (nm == "stardiff") sd = int(s);
      if (nm.rfind("cholmod_llt", 0) == 0 && cholmod_llt < 0) cholmod_llt = int(s);
      if (nm.rfind("mumps", 0) == 0 && mumps < 0) mumps = int(s);
      if (S.failed) {
        const RunResult& f = S.first_failure;
        std::printf("ldlt_vs_peers solver matrix=%s solver=%s status=failed reason=\"%s\" relres=%.3g %s\n",
                    p.name.c_str(), nm.c_str(), f.reason.c_str(), f.relres, f.detail.c_str());
        std::fprintf(stderr, "%-28s %-13s %10.4g %10.4g %10s %10.3g  failed: %s\n", p.name.c_str(), nm.c_str(),
                     f.analyze_s, f.factor_s, "-", f.relres, f.reason.c_str());
        continue;
      }
      const RunResult& r0 = S.runs.front();
      double gf = S.factor() > 0 && r0.flops > 0 ? r0.flops / S.factor() * 1e-9 : 0;
      std::printf("ldlt_vs_peers solver matrix=%s n=%d solver=%s analyze_s=%.6g factor_s=%.6g solve_s=%.6g "
                  "relres=%.3g flops=%.6g gflops=%.4g repeats=%zu status=ok %s\n",
                  p.name.c_str(), p.A.n_cols, nm.c_str(), S.analyze(), S.factor(), S.solve(), S.relres(), r0.flops,
                  gf, S.runs.size(), r0.detail.c_str());
      std::fprintf(stderr, "%-28s %-13s %10.4g %10.4g %10.4g %10.3g  ok (%.3g GFlop/s)\n", p.name.c_str(),
                   nm.c_str(), S.analyze(), S.factor(), S.solve(), S.relres(), gf);
      if (nm != "stardiff" && (best < 0 || S.factor() < sums[best].factor())) best = int(s);
    }
    if (sd >= 0 && !sums[sd].failed && best >= 0) {
      const double f = sums[sd].factor(), bf = sums[best].factor();
      const double ratio = f / bf;
      ratios.push_back(ratio);
      if (bf >= 2e-3) ratios_2ms.push_back(ratio);
      std::printf("ldlt_vs_peers matrix=%s n=%d factor_s=%.6g best_peer=%s best_peer_factor_s=%.6g ratio=%.4g",
                  p.name.c_str(), p.A.n_cols, f, solvers[best].name.c_str(), bf, ratio);
      if (cholmod_llt >= 0) {  // cholmod_analyze also runs where the LL^T factorization fails
        const Summary& C = sums[cholmod_llt];
        double ca = C.analyze();
        if (C.runs.empty()) {  // LL^T failed (indefinite): its analyses still count
          std::vector<double> v;
          add_analyses(C.first_failure, v);
          ca = median(v);
        }
        if (ca > 0)
          std::printf(" analyze_s=%.6g cholmod_analyze_s=%.6g analyze_ratio=%.4g", sums[sd].analyze(), ca,
                      sums[sd].analyze() / ca);
      }
      std::printf("\n");
    } else if (sd >= 0) {
      std::printf("ldlt_vs_peers matrix=%s n=%d factor_s=%s best_peer=%s ratio=nan\n", p.name.c_str(), p.A.n_cols,
                  sums[sd].failed ? "failed" : "ok", best >= 0 ? solvers[best].name.c_str() : "none");
    }
    if (sd >= 0 && mumps >= 0) {
      const RunResult& a = sums[sd].runs.empty() ? sums[sd].first_failure : sums[sd].runs.front();
      const RunResult& m = sums[mumps].runs.empty() ? sums[mumps].first_failure : sums[mumps].runs.front();
      if (a.inertia) {
        std::printf("ldlt_vs_peers inertia matrix=%s stardiff_pos=%lld stardiff_neg=%lld stardiff_zero=%lld", p.name.c_str(),
                    static_cast<long long>(a.inertia->pos), static_cast<long long>(a.inertia->neg),
                    static_cast<long long>(a.inertia->zero));
        if (m.negative)
          std::printf(" mumps_neg=%lld agree=%s", static_cast<long long>(*m.negative),
                      *m.negative == a.inertia->neg ? "yes" : "no");
        else
          std::printf(" mumps_neg=none agree=unknown");
        if (m.negative_nulldet && m.null_pivots)  // MUMPS with null-pivot detection
          std::printf(" mumps_nulldet_neg=%lld mumps_nulldet_zero=%lld agree_nulldet=%s",
                      static_cast<long long>(*m.negative_nulldet), static_cast<long long>(*m.null_pivots),
                      *m.negative_nulldet == a.inertia->neg && *m.null_pivots == a.inertia->zero ? "yes" : "no");
        if (a.rcond) {  // singular: static pivots or rcond < eps (Ldlt::numerically_singular)
          std::printf(" stardiff_rcond=%.3g stardiff_singular=%s", *a.rcond, a.singular ? "yes" : "no");
          if (m.null_pivots)
            std::printf(" mumps_singular=%s singular_agree=%s", *m.null_pivots > 0 ? "yes" : "no",
                        (*m.null_pivots > 0) == a.singular ? "yes" : "no");
        }
        std::printf("\n");
      }
    }
    if (p.laplacian && sd >= 0 && !sums[sd].runs.empty() && dgemm2 > 0) {
      // Measured again next to the Laplacian run; the best rate seen is the reference, so
      // a busy machine cannot flatter the fraction.
      const double again1 = dgemm_gflops(o.dgemm_n, 1), again2 = dgemm_gflops(o.dgemm_n, 2);
      set_blas_threads(1);
      const double ref = std::max({dgemm1, dgemm2, again1, again2});
      const double gf = sums[sd].runs.front().flops / sums[sd].factor() * 1e-9;
      std::printf("ldlt_vs_peers laplacian matrix=%s stardiff_gflops=%.4g dgemm_gflops_1t=%.4g dgemm_gflops_2t=%.4g "
                  "dgemm_gflops_best=%.4g fraction_of_dgemm=%.3f\n",
                  p.name.c_str(), gf, std::max(dgemm1, again1), std::max(dgemm2, again2), ref, gf / ref);
    }
    std::fflush(stdout);
  }
  auto geo = [](const std::vector<double>& v) -> double {
    if (v.empty()) return NAN;
    double s = 0;
    for (double x : v) s += std::log(x);
    return std::exp(s / double(v.size()));
  };
  std::printf("ldlt_vs_peers geomean matrices=%zu ratio=%.4g matrices_ge2ms=%zu ratio_ge2ms=%.4g max_ratio=%.4g\n",
              ratios.size(), geo(ratios), ratios_2ms.size(), geo(ratios_2ms),
              ratios.empty() ? NAN : *std::max_element(ratios.begin(), ratios.end()));
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
