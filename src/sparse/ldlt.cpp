// src/sparse/ldlt.cpp — the Ldlt solver: analysis, factorization as tasks, refined solve.
//
// Contract: see stardiff/sparse/ldlt.hpp. factorize() first runs one preparation task
// (pattern and finiteness checks, Ruiz max-norm scaling to 10 %, the scaled permuted
// values; in simplicial mode also SuiteSparse LDL and its acceptance test, unscaled first
// for a one-signed diagonal; on the caller for a tiny pattern in simplicial mode, see
// kInlineNnz), then — unless simplicial mode succeeded — submits one task per plan entry (ldlt_subtree / ldlt_front,
// or the panel/update tasks of a split front) with dependencies through one token handle
// per task, waits, and aggregates pivot statistics (inertia from D; static pivots count
// as zero eigenvalues). For a nonzero diagonal that graph first runs unpivoted and is run
// again with threshold pivoting only if that result is rejected (see ldlt.hpp).
// solve() runs the triangular solves as tasks (one forward and one backward task per
// plan entry; simplicial: one task, on the caller when tiny), then refines (x += A^-1 r) while
// the backward error falls by at least half, then FGMRES preconditioned by the
// factorization if the backward error is still above 10 eps (a cycle ends where its
// residual estimate means an eps backward error). rcond() drives LAPACK's
// dlacn2 (Hager-Higham) with unrefined solves. All run OpenBLAS single-threaded for
// their duration (tasks are the parallelism).
#include "stardiff/sparse/ldlt.hpp"

#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <new>
#include <numeric>

extern "C" {
#include <ldl.h>  // SuiteSparse LDL has no C++ guards
}

#include "sparse/ldlt_internal.hpp"
#include "starpu/sparse/cl_ldlt.hpp"
#include "stardiff/runtime/error.hpp"

extern "C" {
void openblas_set_num_threads(int) __attribute__((weak));
int openblas_get_num_threads(void) __attribute__((weak));
}

namespace stardiff::sparse {
namespace {
// Dense kernels inside tasks run single-threaded BLAS (parallelism comes from tasks);
// restores the caller's setting on exit. No-op where the BLAS is not OpenBLAS.
class SingleThreadedBlas {
 public:
  SingleThreadedBlas() {
    if (openblas_set_num_threads && openblas_get_num_threads) {
      saved_ = openblas_get_num_threads();
      if (saved_ != 1) openblas_set_num_threads(1);
    }
  }
  ~SingleThreadedBlas() {
    if (saved_ > 1) openblas_set_num_threads(saved_);
  }
  SingleThreadedBlas(const SingleThreadedBlas&) = delete;
  SingleThreadedBlas& operator=(const SingleThreadedBlas&) = delete;

 private:
  int saved_ = 0;
};
}  // namespace

const char* to_string(Ordering o) {
  switch (o) {
    case Ordering::Auto: return "auto";
    case Ordering::Amd: return "amd";
    case Ordering::Metis: return "metis";
    case Ordering::User: return "user";
    case Ordering::Natural: return "natural";
  }
  return "?";
}

Ordering ordering_from_string(const std::string& s) {
  if (s == "auto") return Ordering::Auto;
  if (s == "amd") return Ordering::Amd;
  if (s == "metis") return Ordering::Metis;
  if (s == "natural") return Ordering::Natural;
  throw Error("unknown ordering '" + s + "' (expected auto, amd, metis or natural)");
}

struct Ldlt::State {
  LdltOptions opts;
  detail::Symbolic sym;
  AnalyzeInfo ainfo;
  bool analyzed = false, factored = false;
  bool tiny = false;  // fewer than kInlineNnz stored entries: see kInlineNnz
  CscMatrix32 a;  // values of the factorized matrix (for refinement)
  double anorm = -1;  // ||A||_inf of the factorized values, computed by the first solve (-1: not yet)
  double rcond = -1;  // Ldlt::rcond()'s estimate for the current factorization (-1: none yet)
  std::vector<double> scale;  // per original index
  bool ruiz = false;          // scale holds Ruiz's equilibration (not ones)
  std::vector<detail::NodeFactor> nodes;
  std::vector<detail::NodeCb> cbs;
  struct Simplicial {  // SuiteSparse LDL's factors of P S A S P^T (simplicial mode)
    std::vector<int> li;
    std::vector<double> lx, d;
    bool ok = false;  // the last factorization is this one
  } simp;
  std::vector<detail::NodeStats> stats;
  FactorInfo finfo;
  SolveInfo sinfo;
  std::vector<std::int32_t> perm32;
};

Ldlt::Ldlt(LdltOptions opts) : s_(std::make_unique<State>()) {
  require(opts.pivot_threshold >= 0 && opts.pivot_threshold <= 0.5,
          "LdltOptions: pivot_threshold must be in [0, 0.5], got " + std::to_string(opts.pivot_threshold));
  require(opts.max_refine >= 0, "LdltOptions: max_refine must be >= 0");
  require(opts.block_size >= 2, "LdltOptions: block_size must be >= 2");
  require(opts.zero_pivot >= 0, "LdltOptions: zero_pivot must be >= 0");
  require(opts.simplicial_switch >= 0, "LdltOptions: simplicial_switch must be >= 0");
  require(opts.growth_limit > 0, "LdltOptions: growth_limit must be > 0");
  s_->opts = std::move(opts);
}
Ldlt::~Ldlt() = default;
Ldlt::Ldlt(Ldlt&&) noexcept = default;
Ldlt& Ldlt::operator=(Ldlt&&) noexcept = default;

const AnalyzeInfo& Ldlt::analyze_info() const { return s_->ainfo; }
const FactorInfo& Ldlt::factor_info() const { return s_->finfo; }
const SolveInfo& Ldlt::solve_info() const { return s_->sinfo; }
const LdltOptions& Ldlt::options() const { return s_->opts; }
const std::vector<std::int32_t>& Ldlt::permutation() const { return s_->perm32; }

std::uint64_t Ldlt::factor_hash() const {
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&h](const void* p, std::size_t bytes) {
    const auto* c = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < bytes; ++i) h = (h ^ c[i]) * 1099511628211ull;
  };
  if (s_->simp.ok) {
    mix(s_->simp.li.data(), s_->simp.li.size() * sizeof(int));
    mix(s_->simp.lx.data(), s_->simp.lx.size() * sizeof(double));
    mix(s_->simp.d.data(), s_->simp.d.size() * sizeof(double));
    return h;
  }
  for (const auto& f : s_->nodes) {
    mix(f.idx.data(), f.idx.size() * sizeof(int));
    const std::size_t m = f.idx.size();
    for (std::size_t j = 0; j < std::size_t(f.nelim); ++j)  // strictly below the diagonal: L itself
      mix(f.L.data() + j * m + j + 1, (m - j - 1) * sizeof(double));
    mix(f.d.data(), f.d.size() * sizeof(double));
    mix(f.e.data(), f.e.size() * sizeof(double));
    mix(f.piv.data(), f.piv.size());
  }
  return h;
}

// A task round trip (~30 us here) costs more than analysing a tiny pattern, or factoring
// and solving it in simplicial mode (~10 us), on the caller: those run there.
constexpr std::int64_t kInlineNnz = 4000;

const AnalyzeInfo& Ldlt::analyze(const CscMatrix64& A, Executor* exec) { return analyze(to_csc32(A), exec); }
FactorInfo Ldlt::factorize(const CscMatrix64& A, Executor* exec) { return factorize(to_csc32(A), exec); }

const AnalyzeInfo& Ldlt::analyze(const CscMatrix32& A, Executor* exec) {
  State& st = *s_;
  st.analyzed = st.factored = false;
  st.nodes.clear();
  st.a = CscMatrix32{};
  st.tiny = A.nnz() < kInlineNnz;
  if (exec && !st.tiny)
    run_on_worker(*exec, "ldlt_analyze", [&] { detail::analyze_pattern(A, st.opts, st.sym); });
  else
    detail::analyze_pattern(A, st.opts, st.sym);
  const auto& S = st.sym;
  st.ainfo = AnalyzeInfo{};
  st.ainfo.n = S.n;
  st.ainfo.nnz_a = A.nnz();
  st.ainfo.nnz_l = S.nnz_l;
  st.ainfo.flops = S.flops;
  st.ainfo.ordering = S.ordering;
  st.ainfo.supernodes = S.ns;
  st.ainfo.levels = S.levels;
  st.ainfo.tasks = 1;  // the preparation (checks, scaling; the whole simplicial factorization)
  for (std::size_t t = 0; t < S.task_lo.size(); ++t) {
    if (!S.task_split[t]) {
      st.ainfo.tasks += 1;
      continue;
    }
    const int s = S.task_lo[t], ncol = S.sn_first[s + 1] - S.sn_first[s];
    const int m0 = ncol + int(S.row_ptr[s + 1] - S.row_ptr[s]);
    st.ainfo.tasks += codelets::count_ldlt_big_tasks(m0, ncol, st.opts.block_size, 4 * st.opts.block_size);
  }
  st.ainfo.mode = S.simplicial ? "simplicial" : S.single_task ? "single-task" : "tree";
  st.perm32.assign(S.perm.begin(), S.perm.end());
  st.analyzed = true;
  return st.ainfo;
}

namespace {
// Ruiz symmetric equilibration in the max norm on a lower-stored matrix (at most 20
// sweeps, until every row's largest scaled entry is within 10 % of 1).
std::vector<double> ruiz_scale(const CscMatrix32& A) {
  const int n = A.n_cols;
  std::vector<double> s(n, 1.0), r(n), a(A.values.size());
  for (std::size_t k = 0; k < a.size(); ++k) a[k] = std::fabs(A.values[k]);
  const std::int32_t* cp = A.col_ptr.data();
  const std::int32_t* ri = A.row_idx.data();
  const double* av = a.data();
  double* sp = s.data();
  double* rp = r.data();
  for (int it = 0; it < 20; ++it) {
    std::fill(r.begin(), r.end(), 0.0);
    for (int c = 0; c < n; ++c) {
      const double sc = sp[c];
      double rc = rp[c];
      for (std::int32_t k = cp[c]; k < cp[c + 1]; ++k) {
        const std::int32_t i = ri[k];
        const double v = av[k] * sp[i] * sc;
        rp[i] = std::max(rp[i], v);
        rc = std::max(rc, v);
      }
      rp[c] = std::max(rp[c], rc);  // later columns hold rows > c only: r[c] is final here
    }
    for (int i = 0; i < n; ++i) {  // vectorized: an empty row keeps its scale
      const double ri = rp[i] > 0 ? rp[i] : 1.0;
      sp[i] /= std::sqrt(ri);
      rp[i] = ri - 1.0;
    }
    const double dev = n > 0 ? std::fabs(rp[cblas_idamax(n, rp, 1)]) : 0.0;  // max |1 - r_i|
    if (dev < 1e-1) break;
  }
  return s;
}

// A's diagonal (original numbering; 0 where absent).
std::vector<double> diagonal(const CscMatrix32& A) {
  std::vector<double> d(A.n_cols, 0.0);
  for (std::int32_t j = 0; j < A.n_cols; ++j)
    for (std::int32_t k = A.col_ptr[j]; k < A.col_ptr[j + 1]; ++k)
      if (A.row_idx[k] == j) d[j] += A.values[k];
  return d;
}

// The diagonal of P S A S P^T from A's (ps: the scaling in the permuted numbering).
std::vector<double> scaled_diagonal(const std::vector<double>& adiag, const std::vector<int>& perm,
                                    const std::vector<double>& ps) {
  std::vector<double> d(perm.size());
  for (std::size_t j = 0; j < perm.size(); ++j) d[j] = adiag[perm[j]] * ps[j] * ps[j];
  return d;
}

// The signs of a diagonal: `nonzero` when every |d_j| > small; which signs occur.
struct DiagonalSigns {
  bool nonzero = true, pos = false, neg = false;
};
DiagonalSigns diagonal_signs(const std::vector<double>& d, double small) {
  DiagonalSigns s;
  for (double x : d) {
    s.nonzero = s.nonzero && std::fabs(x) > small;
    (x > 0 ? s.pos : s.neg) = true;
  }
  return s;
}

// Entries of P S A S P^T on one of the analysis's permuted structures (column j: rows
// row[ptr[j] ..), taken from A.values[src[...]]); ps is the scaling in the permuted
// numbering. Returns max |entry|.
template <class Ptr>
double scaled_values(const CscMatrix32& A, const std::vector<double>& ps, const std::vector<Ptr>& ptr,
                     const std::vector<int>& row, const std::vector<int>& src, std::vector<double>& out) {
  out.resize(row.size());
  double* o = out.data();
  for (std::size_t j = 0; j + 1 < ptr.size(); ++j) {
    const double sj = ps[j];
    for (Ptr q = ptr[j]; q < ptr[j + 1]; ++q) o[q] = A.values[src[q]] * ps[row[q]] * sj;
  }
  return out.empty() ? 0.0 : std::fabs(o[cblas_idamax(int(out.size()), o, 1)]);  // vectorized
}

// Simplicial mode: SuiteSparse LDL on the upper triangle of P S A S P^T (ps: the scaling in
// the permuted numbering). Returns false (and leaves st.simp.ok false) when a pivot is zero
// or too small, or a multiplier exceeds 1/u: then threshold pivoting has work to do (the
// multifrontal path).
bool factor_simplicial(Ldlt::State& st, const CscMatrix32& A, const std::vector<double>& adiag,
                       const std::vector<double>& ps, FactorInfo& fi) {
  const auto& S = st.sym;
  const int n = S.n;
  // Work arrays live as long as the thread: a fresh solver would otherwise take fresh
  // pages from the kernel for them on every factorization (LDL needs no initial values).
  thread_local std::vector<double> ux, y;
  thread_local std::vector<int> pattern, flag, lnz;
  const double amax = scaled_values(A, ps, S.up, S.ui, S.usrc, ux);
  const double small = std::max(st.opts.zero_pivot * (amax > 0 ? amax : 1.0), std::numeric_limits<double>::min());
  auto& f = st.simp;
  f.li.resize(S.lp[n]);
  f.lx.resize(S.lp[n]);
  f.d.resize(n);
  y.resize(n);
  pattern.resize(n);
  flag.resize(n);
  lnz.resize(n);
  const int done = ldl_numeric(n, const_cast<int*>(S.up.data()), const_cast<int*>(S.ui.data()), ux.data(),
                               const_cast<int*>(S.lp.data()), const_cast<int*>(S.lparent.data()), lnz.data(),
                               f.li.data(), f.lx.data(), f.d.data(), y.data(), pattern.data(), flag.data(), nullptr,
                               nullptr);
  if (done != n) return false;
  fi = FactorInfo{};
  {  // locals: through fi's fields every iteration waited for the previous one's store
    std::int64_t pos = 0;
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    bool ok = true;
    for (int k = 0; k < n; ++k) {
      const double a = std::fabs(f.d[k]);
      ok &= a > small && a <= std::numeric_limits<double>::max();  // false for NaN too
      pos += f.d[k] > 0;
      lo = std::min(lo, a);
      hi = std::max(hi, a);
    }
    if (!ok) return false;
    fi.inertia.pos = pos;
    fi.inertia.neg = n - pos;
    fi.min_pivot = lo;
    fi.max_pivot = hi;
  }
  // Kept if threshold pivoting would take these diagonal pivots (|l| <= 1/u), or under
  // the unpivoted rule (see ldlt.hpp): pivot signs = diagonal signs, bounded growth.
  // ldl_numeric completed every column, so L's columns fill lx[0, lp[n]) exactly.
  const double u = st.opts.pivot_threshold;
  bool threshold_ok = true;
  if (u > 0) {
    const double bound = 1.0 / u;
    const double* lx = f.lx.data();
    const std::size_t nl = std::size_t(S.lp[n]);
    for (std::size_t q0 = 0; q0 < nl && threshold_ok; q0 += 4096) {  // branch-free blocks
      bool bad = false;
      for (std::size_t q = q0; q < std::min(nl, q0 + 4096); ++q) bad |= !(std::fabs(lx[q]) <= bound);
      threshold_ok = !bad;
    }
  }
  fi.pivoting = "threshold";
  if (!threshold_ok) {
    if (!st.opts.try_unpivoted) return false;
    const std::vector<double> diag = scaled_diagonal(adiag, S.perm, ps);
    const DiagonalSigns signs = diagonal_signs(diag, small);
    if (!signs.nonzero) return false;
    for (int j = 0; j < n; ++j)
      if ((diag[j] > 0) != (f.d[j] > 0)) return false;
    if (signs.pos && signs.neg) {
      std::vector<double> acc(n);
      for (int k = 0; k < n; ++k) acc[k] += std::fabs(f.d[k]);
      for (int k = 0; k < n; ++k)
        for (int q = S.lp[k]; q < S.lp[k] + lnz[k]; ++q) acc[f.li[q]] += f.lx[q] * f.lx[q] * std::fabs(f.d[k]);
      const double norm = amax > 0 ? amax : 1.0;
      for (double g : acc) fi.growth = std::max(fi.growth, g / norm);
      if (!(fi.growth <= st.opts.growth_limit)) return false;
    }
    fi.pivoting = "none";
  }
  fi.flops = S.exact_flops;
  fi.nnz_l = S.exact_lnz;
  fi.tasks = 1;
  fi.mode = "simplicial";
  f.ok = true;
  return true;
}
}  // namespace

FactorInfo Ldlt::factorize(const CscMatrix32& A, Executor* exec) {
  State& st = *s_;
  require(st.analyzed, "Ldlt::factorize called before analyze");
  const auto& S = st.sym;
  const std::string who = "the matrix" + (A.name.empty() ? std::string() : " '" + A.name + "'");
  require(A.n_cols == S.n && A.n_rows == S.n && A.col_ptr.size() == S.a_colptr.size() &&
              A.row_idx.size() == S.a_rowidx.size(),
          "Ldlt::factorize: " + who + " does not have the analysed pattern (n = " + std::to_string(S.n) + ")");
  require(A.values.size() == S.a_rowidx.size(), "Ldlt::factorize: values has the wrong size");
  st.factored = false;
  st.rcond = -1;
  SingleThreadedBlas blas1;
  SequentialExecutor seq;
  Executor& ex = exec ? *exec : seq;
  const auto t0 = std::chrono::steady_clock::now();

  // The O(nnz) checks, copies and scaling run in one task (not on the caller beside polling
  // workers): with the whole factorization in simplicial mode, as a preparation otherwise.
  bool done = false;
  FactorInfo simplicial_info;
  std::vector<double> sval, diag;  // scaled entries and diagonal of P S A S P^T
  double amax = 0;
  const bool on_caller = S.simplicial && st.tiny;
  auto prepare = [&] {
    if (A.col_ptr != S.a_colptr || A.row_idx != S.a_rowidx)
      throw Error("Ldlt::factorize: " + who + " does not have the analysed pattern (n = " + std::to_string(S.n) + ")");
    if (st.a.col_ptr.size() != A.col_ptr.size()) {  // pattern copied once per analysis
      st.a.col_ptr = A.col_ptr;
      st.a.row_idx = A.row_idx;
      st.a.n_rows = A.n_rows;
      st.a.n_cols = A.n_cols;
      st.a.symmetric_lower = true;
    }
    st.a.values.resize(A.values.size());
    bool finite = true;  // copied and checked in one pass
    for (std::size_t k = 0; k < A.values.size(); ++k) {
      const double v = A.values[k];
      st.a.values[k] = v;
      finite &= std::isfinite(v);
    }
    if (!finite)
      for (std::size_t k = 0; k < A.values.size(); ++k)
        if (!std::isfinite(A.values[k]))
          throw Error("Ldlt::factorize: entry " + std::to_string(k) + " of " + who + " is not finite");
    st.simp.ok = false;
    st.anorm = -1;
    const std::vector<double> adiag = diagonal(A);
    std::vector<double> ps(S.n, 1.0);  // the scaling in the permuted numbering
    const DiagonalSigns asigns = diagonal_signs(adiag, 0.0);
    if (S.simplicial && asigns.nonzero && !(asigns.pos && asigns.neg)) {
      // A definite candidate: its unpivoted factorization is stable unscaled (CHOLMOD does
      // not scale either), so simplicial mode tries it before paying for Ruiz's sweeps.
      st.scale.assign(S.n, 1.0);
      st.ruiz = false;
      if (factor_simplicial(st, A, adiag, ps, simplicial_info)) {
        done = true;
        return;
      }
    }
    st.scale = st.opts.scale ? ruiz_scale(A) : std::vector<double>(S.n, 1.0);
    st.ruiz = st.opts.scale;
    for (int k = 0; k < S.n; ++k) ps[k] = st.scale[S.perm[k]];
    if (S.simplicial && factor_simplicial(st, A, adiag, ps, simplicial_info)) {
      done = true;
      return;
    }
    detail::complete_row_structures(st.sym);  // a simplicial candidate's, the first time
    amax = scaled_values(A, ps, S.ap, S.ai, S.asrc, sval);
    diag = scaled_diagonal(adiag, S.perm, ps);
  };
  if (on_caller) prepare();
  else run_on_worker(ex, S.simplicial ? "ldlt_simplicial" : "ldlt_prepare", prepare);
  if (done) {
    FactorInfo& fi = simplicial_info;
    if (on_caller) fi.tasks = 0;
    fi.factor_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    fi.gflops = fi.factor_s > 0 ? fi.flops / fi.factor_s * 1e-9 : 0;
    st.finfo = fi;
    st.factored = true;
    return fi;
  }
  const double norm = amax > 0 ? amax : 1.0;
  detail::NumericCtx ctx;
  ctx.sym = &S;
  ctx.sval = sval.data();
  st.nodes.resize(S.ns);  // keeps buffers of a previous factorization
  ctx.nodes = st.nodes.data();
  ctx.u = st.opts.pivot_threshold;
  ctx.small = std::max(st.opts.zero_pivot * norm, std::numeric_limits<double>::min());
  ctx.static_piv = std::sqrt(std::numeric_limits<double>::epsilon()) * norm;
  ctx.nb = st.opts.block_size;
  // The unpivoted attempt needs every diagonal entry nonzero; growth is measured for a
  // diagonal of mixed signs (with one sign, sign-consistent pivots mean a definite matrix).
  // (A simplicial factorization that got here failed the same rules on the same pivots.)
  const DiagonalSigns signs = diagonal_signs(diag, ctx.small);
  const bool eligible = st.opts.try_unpivoted && !S.simplicial && signs.nonzero;
  ctx.diag = diag.data();
  ctx.need_growth = signs.pos && signs.neg;
  bool failed = false;
  ctx.failed = &failed;

  const int nt = int(S.task_lo.size());
  std::int64_t ntasks = 0;
  // One run of the task graph: every plan entry a task (or the panel/update tasks of a
  // split front), dependencies through one token per plan entry.
  auto run_graph = [&](bool unpivoted) {
    ctx.unpivoted = unpivoted;
    failed = false;
    st.cbs.clear();
    st.cbs.resize(S.ns);
    st.stats.assign(S.ns, {});
    ctx.cbs = st.cbs.data();
    ctx.stats = st.stats.data();
    std::vector<detail::BigFront> big(S.ns);
    ctx.big = big.data();
    std::vector<VariableHandle<std::int64_t>> tokens, keep;
    tokens.reserve(nt);
    for (int t = 0; t < nt; ++t) tokens.emplace_back(std::int64_t(0), "ldlt_token");
    std::vector<Handle*> deps;
    for (int t = 0; t < nt; ++t) {
      deps.clear();
      for (int q = S.dep_ptr[t]; q < S.dep_ptr[t + 1]; ++q) deps.push_back(&tokens[S.dep_list[q]]);
      if (S.task_split[t]) {
        const int s = S.task_lo[t], ncol = S.sn_first[s + 1] - S.sn_first[s];
        const int m0 = ncol + int(S.row_ptr[s + 1] - S.row_ptr[s]);
        ntasks += codelets::insert_ldlt_big(ex, &ctx, s, m0, ncol, ctx.nb, 4 * ctx.nb, tokens[t], deps, keep);
      } else {
        codelets::insert_ldlt_subtree(ex, &ctx, S.task_lo[t], S.task_hi[t], tokens[t], deps, 0);
        ++ntasks;
      }
    }
    ex.wait_all();
    st.cbs.clear();
  };
  bool unpivoted = eligible;
  double growth = 0;
  if (unpivoted) {
    run_graph(true);
    unpivoted = !failed;
    if (unpivoted && ctx.need_growth) {  // max_j (|L||D||L^T|)_jj, each front's rows summed
      std::vector<double> acc(S.n, 0.0);
      for (const auto& nf : st.nodes)
        for (std::size_t t = 0; t < nf.growth.size(); ++t) acc[nf.idx[t]] += nf.growth[t];
      for (double g : acc) growth = std::max(growth, g / norm);
      unpivoted = growth <= st.opts.growth_limit;
    }
  }
  if (!unpivoted) run_graph(false);
  for (auto& nf : st.nodes) std::vector<double>().swap(nf.growth);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  FactorInfo fi;
  fi.min_pivot = std::numeric_limits<double>::infinity();
  for (const auto& x : st.stats) {
    fi.min_pivot = std::min(fi.min_pivot, x.min_pivot);
    fi.max_pivot = std::max(fi.max_pivot, x.max_pivot);
    fi.inertia.pos += x.pos;
    fi.inertia.neg += x.neg;
    fi.inertia.zero += x.zero;
    fi.two_by_two += x.two_by_two;
    fi.delayed += x.delayed;
    fi.static_pivots += x.static_pivots;
    fi.flops += x.flops;
    fi.nnz_l += x.nnz_l;
  }
  if (!std::isfinite(fi.min_pivot)) fi.min_pivot = 0;
  fi.singular = fi.static_pivots > 0;
  fi.tasks = ntasks + (on_caller ? 0 : 1);  // and the preparation
  fi.mode = S.single_task ? "single-task" : "tree";
  fi.pivoting = unpivoted ? "none" : "threshold";
  fi.attempts = eligible && !unpivoted ? 2 : 1;
  fi.growth = unpivoted ? growth : 0.0;
  fi.factor_s = secs;
  fi.gflops = secs > 0 ? fi.flops / secs * 1e-9 : 0;
  st.finfo = fi;
  st.factored = true;
  return fi;
}

namespace {
struct Refiner {
  Ldlt::State& st;
  Executor& ex;
  int n;

  // x = A^-1 b through the factorization (nrhs columns).
  void apply(const double* b, double* x, int nrhs) {
    const auto& S = st.sym;
    std::vector<double> y(std::size_t(n) * nrhs);
    for (int r = 0; r < nrhs; ++r)
      for (int i = 0; i < n; ++i) {
        const int o = S.perm[i];
        y[i + std::size_t(r) * n] = st.scale[o] * b[o + std::size_t(r) * n];
      }
    if (st.simp.ok) {
      auto solve_simplicial = [&] {
        auto& f = st.simp;
        for (int r = 0; r < nrhs; ++r) {
          double* yr = y.data() + std::size_t(r) * n;
          ldl_lsolve(n, yr, const_cast<int*>(S.lp.data()), f.li.data(), f.lx.data());
          ldl_dsolve(n, yr, f.d.data());
          ldl_ltsolve(n, yr, const_cast<int*>(S.lp.data()), f.li.data(), f.lx.data());
        }
      };
      if (st.tiny) solve_simplicial();
      else run_on_worker(ex, "ldlt_solve_simplicial", solve_simplicial);
    } else {
      std::vector<std::vector<double>> upd(S.ns);
      detail::SolveCtx sc{&S, st.nodes.data(), y.data(), nrhs, upd.data()};
      codelets::insert_ldlt_solve(ex, &sc);
    }
    for (int r = 0; r < nrhs; ++r)
      for (int i = 0; i < n; ++i) {
        const int o = S.perm[i];
        x[o + std::size_t(r) * n] = st.scale[o] * y[i + std::size_t(r) * n];
      }
  }
  // r = b - A x, returns the backward error ||r|| / den; den = ||A|| ||x|| + ||b|| (inf-norms)
  // goes to *den_out when given.
  double residual(const double* b, const double* x, double* r, double* den_out = nullptr) {
    multiply(st.a, x, r);
    double rn = 0, xn = 0, bn = 0;
    for (int i = 0; i < n; ++i) {
      r[i] = b[i] - r[i];
      rn = std::max(rn, std::fabs(r[i]));
      xn = std::max(xn, std::fabs(x[i]));
      bn = std::max(bn, std::fabs(b[i]));
    }
    if (st.anorm < 0) st.anorm = n > 0 ? norm_inf(st.a) : 0.0;
    const double den = st.anorm * xn + bn;
    if (den_out) *den_out = den;
    if (!std::isfinite(rn)) return std::numeric_limits<double>::infinity();
    return den > 0 ? rn / den : (rn > 0 ? std::numeric_limits<double>::infinity() : 0.0);
  }

  // Right-preconditioned FGMRES(m) from x; returns iterations, updates x and berr.
  int fgmres(const double* b, double* x, double& berr, int restart, int maxit) {
    const double eps = std::numeric_limits<double>::epsilon();
    int its = 0;
    std::vector<double> r(n), w(n), best(n);
    std::copy(x, x + n, best.begin());
    double best_berr = berr;
    while (its < maxit && best_berr > 10 * eps) {
      const int m = std::max(1, std::min(restart, maxit - its));
      // The cycle stops once its residual estimate |g[k+1]| (the 2-norm, which bounds the
      // infinity norm) means a backward error of eps for this cycle's x: further
      // iterations would only chase rounding noise.
      double den = 0;
      residual(b, x, r.data(), &den);
      const double target = eps * den;
      double beta = std::sqrt(std::inner_product(r.begin(), r.end(), r.begin(), 0.0));
      if (!(beta > 0)) break;
      std::vector<std::vector<double>> V(m + 1, std::vector<double>(n)), Z(m, std::vector<double>(n));
      std::vector<double> H((m + 1) * m, 0.0), cs(m), sn(m), g(m + 1, 0.0);
      for (int i = 0; i < n; ++i) V[0][i] = r[i] / beta;
      g[0] = beta;
      int k = 0;
      for (; k < m; ++k) {
        apply(V[k].data(), Z[k].data(), 1);
        multiply(st.a, Z[k].data(), w.data());
        for (int j = 0; j <= k; ++j) {
          double h = std::inner_product(w.begin(), w.end(), V[j].begin(), 0.0);
          H[j + k * (m + 1)] = h;
          for (int i = 0; i < n; ++i) w[i] -= h * V[j][i];
        }
        double hn = std::sqrt(std::inner_product(w.begin(), w.end(), w.begin(), 0.0));
        H[k + 1 + k * (m + 1)] = hn;
        if (hn > 0)
          for (int i = 0; i < n; ++i) V[k + 1][i] = w[i] / hn;
        for (int j = 0; j < k; ++j) {
          double a = H[j + k * (m + 1)], c = H[j + 1 + k * (m + 1)];
          H[j + k * (m + 1)] = cs[j] * a + sn[j] * c;
          H[j + 1 + k * (m + 1)] = -sn[j] * a + cs[j] * c;
        }
        double a = H[k + k * (m + 1)], c = H[k + 1 + k * (m + 1)];
        double rr = std::hypot(a, c);
        cs[k] = rr > 0 ? a / rr : 1.0;
        sn[k] = rr > 0 ? c / rr : 0.0;
        H[k + k * (m + 1)] = rr;
        H[k + 1 + k * (m + 1)] = 0;
        g[k + 1] = -sn[k] * g[k];
        g[k] = cs[k] * g[k];
        ++its;
        if (std::fabs(g[k + 1]) <= std::max(eps * beta, target) || hn == 0) {
          ++k;
          break;
        }
      }
      for (int j = k - 1; j >= 0; --j) {  // back substitution, y stored in g[0..k)
        double sum = g[j];
        for (int l = j + 1; l < k; ++l) sum -= H[j + l * (m + 1)] * g[l];
        g[j] = H[j + j * (m + 1)] != 0 ? sum / H[j + j * (m + 1)] : 0.0;
      }
      for (int j = 0; j < k; ++j)
        for (int i = 0; i < n; ++i) x[i] += g[j] * Z[j][i];
      const double be = residual(b, x, r.data());
      if (be < best_berr) {
        const bool progress = be < 0.5 * best_berr;
        best_berr = be;
        std::copy(x, x + n, best.begin());
        if (!progress) break;
      } else {
        break;
      }
    }
    std::copy(best.begin(), best.end(), x);
    berr = best_berr;
    return its;
  }
};
}  // namespace

std::vector<double> Ldlt::solve(const std::vector<double>& b, int nrhs, Executor* exec) {
  State& st = *s_;
  require(st.factored, "Ldlt::solve called before a successful factorize");
  require(nrhs >= 1, "Ldlt::solve: nrhs must be >= 1, got " + std::to_string(nrhs));
  const int n = st.sym.n;
  require(b.size() == std::size_t(n) * std::size_t(nrhs),
          "Ldlt::solve: b has " + std::to_string(b.size()) + " entries, expected n * nrhs = " +
              std::to_string(std::size_t(n) * std::size_t(nrhs)));
  for (std::size_t i = 0; i < b.size(); ++i)
    if (!std::isfinite(b[i])) throw Error("Ldlt::solve: b[" + std::to_string(i) + "] is not finite");
  SingleThreadedBlas blas1;
  SequentialExecutor seq;
  Executor& ex = exec ? *exec : seq;
  Refiner R{st, ex, n};
  std::vector<double> x(b.size());
  st.sinfo = SolveInfo{};
  if (n == 0) return x;
  R.apply(b.data(), x.data(), nrhs);
  const double eps = std::numeric_limits<double>::epsilon();
  std::vector<double> r(std::size_t(n) * nrhs), dx(std::size_t(n) * nrhs), xold;
  std::vector<double> berr(nrhs);
  auto all_residuals = [&] {
    double mx = 0;
    for (int k = 0; k < nrhs; ++k) {
      berr[k] = R.residual(b.data() + std::size_t(k) * n, x.data() + std::size_t(k) * n, r.data() + std::size_t(k) * n);
      mx = std::max(mx, berr[k]);
    }
    return mx;
  };
  double be = all_residuals();
  int it = 0;
  while (it < st.opts.max_refine && be > 2 * eps) {
    R.apply(r.data(), dx.data(), nrhs);
    xold = x;
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += dx[i];
    ++it;
    const double nb = all_residuals();
    if (!(nb < be)) {  // worse: undo and stop
      x = xold;
      be = all_residuals();
      break;
    }
    const bool progress = nb < 0.5 * be;
    be = nb;
    if (!progress) break;
  }
  st.sinfo.refine_iters = it;
  if (be > 10 * eps && st.opts.max_fgmres > 0) {
    int fits = 0;
    for (int k = 0; k < nrhs; ++k) {
      if (berr[k] <= 10 * eps) continue;
      fits += R.fgmres(b.data() + std::size_t(k) * n, x.data() + std::size_t(k) * n, berr[k],
                       st.opts.fgmres_restart, st.opts.max_fgmres);
    }
    st.sinfo.fgmres_iters = fits;
    be = *std::max_element(berr.begin(), berr.end());
  }
  st.sinfo.backward_error = be;
  return x;
}

double Ldlt::rcond(Executor* exec) {
  State& st = *s_;
  require(st.factored, "Ldlt::rcond called before a successful factorize");
  if (st.rcond >= 0) return st.rcond;
  const int n = st.sym.n;
  if (n == 0) return st.rcond = 1.0;  // LAPACK's convention for an empty matrix
  if (st.finfo.static_pivots > 0) return st.rcond = 0.0;
  // M = S A S with Ruiz's S (computed here when a definite matrix was factorized unscaled:
  // its conditioning, not its scaling, decides singularity); ||M||_1 = ||M||_inf.
  const CscMatrix32& A = st.a;
  const std::vector<double> s = st.opts.scale && !st.ruiz ? ruiz_scale(A) : st.scale;
  const double mnorm = norm_inf(A, s);
  if (!(mnorm > 0)) return st.rcond = 0.0;
  SingleThreadedBlas blas1;
  SequentialExecutor seq;
  Executor& ex = exec ? *exec : seq;
  Refiner R{st, ex, n};
  // Reverse communication: dlacn2 asks for M^-1 x or M^-T x; M is symmetric, so both are
  // M^-1 x = S^-1 A^-1 S^-1 x, one solve with the factors (unrefined: an estimate needs
  // no more).
  // v and x 64-byte aligned: OpenBLAS's dasum inside dlacn2 rounds differently at other
  // alignments, and the estimate must not depend on where the heap put them.
  const std::size_t stride = (std::size_t(n) + 7) / 8 * 8;
  std::unique_ptr<double, decltype(&std::free)> vx(
      static_cast<double*>(std::aligned_alloc(64, 2 * stride * sizeof(double))), &std::free);
  if (!vx) throw std::bad_alloc();
  double* v = vx.get();
  double* x = vx.get() + stride;
  std::vector<double> y(n);
  std::vector<lapack_int> isgn(n);
  lapack_int kase = 0, isave[3] = {0, 0, 0};
  double est = 0;
  for (int calls = 0; calls < 20; ++calls) {  // dlacn2 stops after at most 5 iterations
    LAPACKE_dlacn2_work(n, v, x, isgn.data(), &est, &kase, isave);
    if (kase == 0) break;
    for (int i = 0; i < n; ++i) x[i] /= s[i];
    R.apply(x, y.data(), 1);
    for (int i = 0; i < n; ++i) x[i] = y[i] / s[i];
  }
  // A non-finite or overflowing estimate of ||M^-1||_1: singular to working precision.
  const double r = std::isfinite(est) && est > 0 ? 1.0 / (mnorm * est) : 0.0;
  st.rcond = std::isfinite(r) ? r : 0.0;
  return st.rcond;
}

bool Ldlt::numerically_singular(Executor* exec) {
  return factor_info().singular || rcond(exec) < std::numeric_limits<double>::epsilon();
}

}  // namespace stardiff::sparse
