// SPDX-License-Identifier: LGPL-2.1-or-later
// src/sparse/ldlt.cpp — the Ldlt facade: options, analysis, factorization as tasks.
//
// Contract: see stardiff/sparse/ldlt.hpp. factorize() first runs one preparation task
// (pattern and finiteness checks, Ruiz scaling, the scaled permuted values; in simplicial
// mode also SuiteSparse LDL and its acceptance test; on the caller for a tiny pattern in
// simplicial mode, see kInlineNnz), then, unless simplicial mode succeeded, the plan's
// task graph (ldlt_tasks.hpp; in single-task mode the preparation and the plan's one entry
// share one task, the entry run inside it by a SequentialExecutor; that task runs on the
// caller with StarPU's workers paused where nothing else is in flight: run_on_caller),
// waits, and aggregates
// pivot statistics (inertia from D;
// static pivots count as zero eigenvalues). For a nonzero diagonal that graph first runs
// unpivoted and runs again with threshold pivoting only if that result is rejected.
// analyze() and factorize() first refuse what would not fit the available memory
// (memory_guard.hpp). Solves: ldlt_refine.cpp; rcond: ldlt_rcond.cpp.
#include "stardiff/sparse/ldlt.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "runtime/run_on_caller.hpp"
#include "sparse/ldlt_dist.hpp"
#include "sparse/ldlt_state.hpp"
#include "sparse/ldlt_tasks.hpp"
#include "sparse/memory_guard.hpp"
#include "stardiff/runtime/error.hpp"
#include "stardiff/runtime/runtime.hpp"

namespace stardiff::sparse {

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

const char* to_string(ZeroDiagonalPairing z) {
  switch (z) {
    case ZeroDiagonalPairing::None: return "none";
    case ZeroDiagonalPairing::Defer: return "defer";
    case ZeroDiagonalPairing::Compress: return "compress";
  }
  return "?";
}

ZeroDiagonalPairing pairing_from_string(const std::string& s) {
  if (s == "none") return ZeroDiagonalPairing::None;
  if (s == "defer") return ZeroDiagonalPairing::Defer;
  if (s == "compress") return ZeroDiagonalPairing::Compress;
  throw Error("unknown zero-diagonal pairing '" + s + "' (expected none, defer or compress)");
}

const char* to_string(FactorMode m) {
  switch (m) {
    case FactorMode::Simplicial: return "simplicial";
    case FactorMode::SingleTask: return "single-task";
    case FactorMode::Tree: return "tree";
  }
  return "?";
}

const char* to_string(Pivoting p) {
  switch (p) {
    case Pivoting::None: return "none";
    case Pivoting::Threshold: return "threshold";
  }
  return "?";
}

Ldlt::Ldlt(LdltOptions opts) : s_(std::make_unique<State>()) {
  require(opts.pivot_threshold >= 0 && opts.pivot_threshold <= 0.5,
          "LdltOptions: pivot_threshold must be in [0, 0.5], got " + std::to_string(opts.pivot_threshold));
  require(opts.max_refine >= 0, "LdltOptions: max_refine must be >= 0");
  require(opts.block_size >= 2, "LdltOptions: block_size must be >= 2");
  require(opts.zero_pivot >= 0, "LdltOptions: zero_pivot must be >= 0");
  require(opts.simplicial_switch >= 0, "LdltOptions: simplicial_switch must be >= 0");
  require(opts.growth_limit > 0, "LdltOptions: growth_limit must be > 0");
  require(opts.unpivoted_berr >= 0, "LdltOptions: unpivoted_berr must be >= 0");
  require(opts.pairing_fill_limit >= 0, "LdltOptions: pairing_fill_limit must be >= 0");
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
  if (s_->distributed) {  // each owner folds its nodes in, in node order (collective)
    if (!s_->hash_ready) {
      StarpuExecutor ex;
      s_->hash = detail::distributed_factor_hash(ex, s_->sym, s_->nodes.data(), s_->dist, h);
      s_->hash_ready = true;
    }
    return s_->hash;
  }
  for (const auto& f : s_->nodes) h = detail::hash_node(h, f);
  return h;
}


// A task round trip costs more than analysing a tiny pattern, or factoring and solving
// it in simplicial mode, on the caller: those run there.
constexpr std::int64_t kInlineNnz = 4000;

const AnalyzeInfo& Ldlt::analyze(const CscMatrix64& A, Executor* exec) { return analyze(to_csc32(A), exec); }
FactorInfo Ldlt::factorize(const CscMatrix64& A, Executor* exec) { return factorize(to_csc32(A), exec); }

const AnalyzeInfo& Ldlt::analyze(const CscMatrix32& A, Executor* exec) {
  State& st = *s_;
  detail::require_memory(detail::analysis_bytes(double(A.n_cols), double(A.nnz())), [&] {
    return "Ldlt::analyze: n = " + std::to_string(A.n_cols) + " with " + std::to_string(A.nnz()) + " stored entries";
  });
  st.analyzed = st.factored = false;
  st.nodes.clear();
  st.a = CscMatrix32{};
  st.tiny = A.nnz() < kInlineNnz;
  if (exec && !st.tiny)
    stardiff::detail::run_on_caller(*exec, "ldlt_analyze", [&] { detail::analyze_pattern(A, st.opts, st.sym); });
  else
    detail::analyze_pattern(A, st.opts, st.sym);
  const auto& S = st.sym;
  st.ainfo = AnalyzeInfo{};
  st.ainfo.n = S.n;
  st.ainfo.nnz_a = A.nnz();
  st.ainfo.nnz_l = S.nnz_l;
  st.ainfo.flops = S.flops;
  st.ainfo.ordering = S.ordering;
  st.ainfo.matched_pairs = S.matched_pairs;
  st.ainfo.deferred = S.deferred;
  st.ainfo.supernodes = S.ns;
  st.ainfo.levels = S.levels;
  st.ainfo.tasks = 1;  // the preparation (checks, scaling; the whole simplicial factorization)
  if (!S.single_task) st.ainfo.tasks += detail::count_factor_tasks(S, st.opts.block_size);  // else all in it
  st.ainfo.mode = S.simplicial ? FactorMode::Simplicial : S.single_task ? FactorMode::SingleTask : FactorMode::Tree;
  st.perm32.assign(S.perm.begin(), S.perm.end());
  st.analyzed = true;
  return st.ainfo;
}

FactorInfo Ldlt::factorize(const CscMatrix32& A, Executor* exec) {
  State& st = *s_;
  require(st.analyzed, "Ldlt::factorize called before analyze");
  const auto& S = st.sym;
  const std::string who = "the matrix" + (A.name.empty() ? std::string() : " '" + A.name + "'");
  require(A.n_cols == S.n && A.n_rows == S.n && A.col_ptr.size() == S.a_colptr.size() &&
              A.row_idx.size() == S.a_rowidx.size(),
          "Ldlt::factorize: " + who + " does not have the analysed pattern (n = " + std::to_string(S.n) + ")");
  require(A.values.size() == S.a_rowidx.size(), "Ldlt::factorize: values has the wrong size");
  detail::require_memory(detail::factor_bytes(double(S.n), double(A.nnz()), double(S.nnz_l), double(S.ns)), [&] {
    return "Ldlt::factorize: n = " + std::to_string(S.n) + ", nnz(L) = " + std::to_string(S.nnz_l) + ", " +
           std::to_string(S.ns) + " supernodes";
  });
  const detail::ForkJoinMode fork_join = detail::fork_join_mode();  // a bad value: before any change
  st.factored = false;
  st.rcond = -1;
  st.distributed = st.hash_ready = false;
  detail::SingleThreadedBlas blas1;
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
    const std::vector<double> adiag = detail::diagonal(A);
    std::vector<double> ps(S.n, 1.0);  // the scaling in the permuted numbering
    const detail::DiagonalSigns asigns = detail::diagonal_signs(adiag, 0.0);
    const bool simplicial = S.simplicial && !st.force_threshold;
    if (simplicial && asigns.nonzero && !(asigns.pos && asigns.neg)) {
      // A definite candidate: its unpivoted factorization is stable unscaled (CHOLMOD does
      // not scale either), so simplicial mode tries it before paying for Ruiz's sweeps.
      st.scale.assign(S.n, 1.0);
      st.ruiz = false;
      if (detail::factor_simplicial(st, A, adiag, ps, simplicial_info)) {
        done = true;
        return;
      }
    }
    st.scale = st.opts.scale ? detail::ruiz_scale(A) : std::vector<double>(S.n, 1.0);
    st.ruiz = st.opts.scale;
    for (int k = 0; k < S.n; ++k) ps[k] = st.scale[S.perm[k]];
    if (simplicial && detail::factor_simplicial(st, A, adiag, ps, simplicial_info)) {
      done = true;
      return;
    }
    detail::complete_row_structures(st.sym);  // a simplicial candidate's, the first time
    amax = detail::scaled_values(A, ps, S.ap, S.ai, S.asrc, sval);
    diag = detail::scaled_diagonal(adiag, S.perm, ps);
  };
  // The numeric factorization proper (after prepare), its task graphs on gx.
  detail::NumericCtx ctx;
  double norm = 1.0;
  bool eligible = false, unpivoted = false, failed = false;
  double growth = 0;
  std::int64_t ntasks = 0;
  auto numeric = [&](Executor& gx) {
    norm = amax > 0 ? amax : 1.0;
    ctx.sym = &S;
    ctx.sval = sval.data();
    st.nodes.resize(S.ns);  // keeps buffers of a previous factorization
    ctx.nodes = st.nodes.data();
    ctx.u = st.opts.pivot_threshold;
    ctx.small = std::max(st.opts.zero_pivot * norm, std::numeric_limits<double>::min());
    ctx.static_piv = std::sqrt(std::numeric_limits<double>::epsilon()) * norm;
    ctx.nb = st.opts.block_size;
    ctx.fork_join = fork_join;
    // The unpivoted attempt needs some diagonal entry nonzero (zero ones take a pivot of
    // either sign from the fill); growth is measured for a diagonal of mixed signs or with
    // zeros (with one sign and no zeros, sign-consistent pivots mean a definite matrix).
    // (A simplicial factorization that got here failed the same rules on the same pivots.)
    const detail::DiagonalSigns signs = detail::diagonal_signs(diag, ctx.small);
    const bool zero_ok = signs.nonzero || st.opts.zero_diagonal_attempt == ZeroDiagonalAttempt::Always ||
                         (st.opts.zero_diagonal_attempt == ZeroDiagonalAttempt::Paired && S.paired_order);
    eligible = st.opts.try_unpivoted && !st.force_threshold && !S.simplicial && (signs.pos || signs.neg) && zero_ok;
    ctx.diag = diag.data();
    ctx.need_growth = (signs.pos && signs.neg) || !signs.nonzero;
    ctx.failed = &failed;
    // One run of the task graph: every plan entry a task (or the panel/update tasks of a
    // split front), dependencies through one token per plan entry. Under StarPU-MPI with
    // several ranks: on a StarPU executor distributed over the ranks (ldlt_dist.hpp; each
    // node's factors then stay on its owner, st.distributed), and replicated (every rank
    // runs every task and holds the whole factorization) where that run aborts (delayed
    // columns) or the executor is another one.
    const int nranks = mpi_size();
    const bool distribute = nranks > 1 && std::strcmp(gx.kind(), "starpu") == 0;
    detail::LdltDist& dist = st.dist;
    dist = detail::LdltDist{};
    if (distribute) detail::plan_distribution(S, nranks, dist);
    bool aborted = false;
    ctx.abort = &aborted;
    auto run_graph = [&](bool unpiv) {
      auto once = [&](detail::GraphRanks ranks) {
        ctx.unpivoted = unpiv;
        failed = false;
        aborted = false;
        st.cbs.clear();
        st.cbs.resize(S.ns);
        st.stats.assign(S.ns, {});
        ctx.cbs = st.cbs.data();
        ctx.stats = st.stats.data();
        std::vector<detail::BigFront> big(S.ns);
        ctx.big = big.data();
        dist.growth = unpiv && ctx.need_growth;
        ctx.dist = ranks == detail::GraphRanks::Distributed ? &dist : nullptr;
        ntasks += detail::insert_ldlt_factorization(gx, &ctx, ranks);
        ctx.dist = nullptr;
        st.distributed = ranks == detail::GraphRanks::Distributed && !aborted;
        st.cbs.clear();
      };
      if (distribute) {
        once(detail::GraphRanks::Distributed);
        if (aborted) once(detail::GraphRanks::Replicated);
      } else {
        once(nranks > 1 ? detail::GraphRanks::Replicated : detail::GraphRanks::Rank0);
      }
    };
    unpivoted = eligible;
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
  };
  // Single-task mode (SingleTask, and a simplicial candidate not run on the caller): the
  // preparation and every attempt in one task, the plan's one entry run inside it by a
  // SequentialExecutor (the same kernels in the same order as a task of its own: bitwise
  // the same factors), one round trip in all.
  const bool fused = S.single_task && !on_caller;
  bool no_task = on_caller;  // ran on the caller, with StarPU's workers paused where fused
  if (on_caller) {
    prepare();
  } else if (fused) {
    no_task = stardiff::detail::run_on_caller(ex, S.simplicial ? "ldlt_simplicial" : "ldlt_factor", [&] {
      prepare();
      if (done) return;
      SequentialExecutor inner;
      numeric(inner);
    });
  } else {
    run_on_worker(ex, "ldlt_prepare", prepare);
  }
  if (done) {
    FactorInfo& fi = simplicial_info;
    if (no_task) fi.tasks = 0;
    fi.factor_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    fi.gflops = fi.factor_s > 0 ? fi.flops / fi.factor_s * 1e-9 : 0;
    st.finfo = fi;
    st.factored = true;
    return fi;
  }
  if (!fused) numeric(ex);
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
  fi.tasks = fused ? (no_task ? 0 : 1) : ntasks + (on_caller ? 0 : 1);  // and the preparation
  fi.mode = S.single_task ? FactorMode::SingleTask : FactorMode::Tree;
  fi.pivoting = unpivoted ? Pivoting::None : Pivoting::Threshold;
  fi.attempts = eligible && !unpivoted ? 2 : 1;
  fi.growth = unpivoted ? growth : 0.0;
  fi.factor_s = secs;
  fi.gflops = secs > 0 ? fi.flops / secs * 1e-9 : 0;
  st.finfo = fi;
  st.factored = true;
  return fi;
}

}  // namespace stardiff::sparse
