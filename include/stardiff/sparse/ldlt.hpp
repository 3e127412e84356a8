// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/sparse/ldlt.hpp — sparse symmetric LDL^T: analysis, factorization, solve.
//
// Contract:
//  * analyze(A) uses only A's pattern (symmetric_lower CSC; with LdltOptions::pairing also
//    its values, for the pairing): ordering, elimination tree,
//    supernodes, task plan. Any number of factorize() calls with matrices of that pattern
//    may follow. Concurrent analyses give the orderings they give alone.
//  * factorize(A) computes P S A S P^T = L D L^T (S: symmetric scaling, D: 1x1 and 2x2
//    blocks) as tasks on the executor. It never throws for numerical reasons: FactorInfo
//    says singular, inertia and pivot counts. Results are bitwise identical for the same
//    input, plan and executor kind or scheduler.
//  * solve(b) returns x with A x = b (refined); solve_info() reports the refinement and
//    whether the factorization was singular (then x is not to be trusted).
//  * rcond() estimates the reciprocal condition number of S A S.
//  * Misuse (factorize before analyze, pattern or size mismatch, non-finite values,
//    b of the wrong length) throws stardiff::Error.
//  * analyze() and factorize() throw Error, before allocating, when their estimated
//    memory exceeds what the machine has available (MemAvailable).
//  * Under StarPU-MPI with several ranks every rank calls the same methods, at the same
//    points, with the same matrix and right-hand sides (they are collective). On a StarPU
//    executor the factorization's tasks are distributed over the ranks by subtree-to-rank
//    mapping and each front's L and D stay on the rank that computed them; only pivot
//    statistics (FactorInfo, inertia) reach every rank. solve() and rcond() then need a
//    StarPU executor (Error otherwise): each application of the factors runs its forward,
//    diagonal and backward tasks on the fronts' ranks, moving update and solution vectors
//    along the tree's cross-rank edges, and then every rank receives the whole solution;
//    the residual b - A x (A is on every rank), the refinement and FGMRES steps and
//    rcond's dlacn2 run replicated on that x, so solve() returns the whole x on every rank.
//    factor_hash() folds the nodes in on their owners (a chain of tasks). A factorization
//    whose fronts take delayed columns is repeated replicated (every rank computes and
//    holds all of it, and its solves and rcond run replicated), as is one on another
//    executor or in single-task or simplicial mode. Factors, inertia, solutions,
//    refinement steps, backward errors and rcond are bitwise those of one rank.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "stardiff/runtime/executor.hpp"
#include "stardiff/sparse/csc_matrix.hpp"

namespace stardiff::sparse {

enum class Ordering { Auto, Amd, Metis, User, Natural };
const char* to_string(Ordering o);
Ordering ordering_from_string(const std::string& s);  // "auto|amd|metis|natural"; Error otherwise

// How analyze() orders zero-diagonal pairs (LdltOptions::pairing). Defer: the fill-reducing order, each
// zero-diagonal column preceding all its neighbours (zero pivot) moved right after its partner (a zero-zero
// pair: one front, a 2x2 pivot); over pairing_fill_limit, each zero-diagonal column owns a nonzero-diagonal
// neighbour instead, one before it if free, else the nearest free one after it, moved right behind it.
// Compress: each pair one vertex of the graph AMD / METIS order (Duff and Pralet's compressed graph;
// METIS weighs a pair 2), its zero-diagonal column right after its partner.
enum class ZeroDiagonalPairing { None, Defer, Compress };
const char* to_string(ZeroDiagonalPairing z);  // "none", "defer", "compress"
ZeroDiagonalPairing pairing_from_string(const std::string& s);  // Error otherwise

// When the unpivoted first attempt runs on a matrix with zero diagonal entries
// (LdltOptions::zero_diagonal_attempt).
enum class ZeroDiagonalAttempt { Never, Paired, Always };

// Which factorization runs (see LdltOptions).
enum class FactorMode { Simplicial, SingleTask, Tree };
const char* to_string(FactorMode m);  // "simplicial", "single-task", "tree"
// Whether the factorization kept was pivoted (see LdltOptions::try_unpivoted).
enum class Pivoting { None, Threshold };
const char* to_string(Pivoting p);  // "none", "threshold"

// Multifrontal: one dense front per supernode; small subtrees form one task; fronts above
// split_flops become panel/update tasks (or one fork-join task each on a StarPU combined
// worker, OpenMP inside: STARDIFF_LDLT_FORK_JOIN); below small_flops one task does all (SingleTask:
// the preparation, every attempt and the fronts in postorder in one task, each refined
// solve in one more; bitwise the factors and solutions of one task per front).
// Pivots: threshold u within a supernode's fully-summed columns; columns without an
// acceptable pivot (or with |pivot| <= zero_pivot * max|SAS|) are delayed to the parent;
// at a root, a static pivot sqrt(eps) * max|SAS| (sign kept) is the last resort and
// counts as a zero eigenvalue (singular = static_pivots > 0).
struct LdltOptions {
  Ordering ordering = Ordering::Auto;
  std::vector<std::int32_t> user_perm;  // with Ordering::User: new -> old
  double pivot_threshold = 0.01;         // u in threshold partial pivoting
  bool scale = true;                     // symmetric (Ruiz) equilibration
  int max_refine = 10;                   // iterative refinement steps
  int nemin = 32;                        // relaxed amalgamation parameter
  double small_flops = 3e7;              // below this, one task factors everything
  // Simplicial: a single-task problem with fewer flops per entry of L than this (tiny
  // supernodes) is first factored by SuiteSparse LDL (up-looking, diagonal pivots), kept
  // only if every |d| > zero_pivot * max|SAS| and every |l| <= 1/u (what threshold
  // pivoting would accept with diagonal pivots), else the multifrontal one runs. A
  // one-signed diagonal is tried unscaled (S = I) first. 0: never.
  double simplicial_switch = 60;
  double subtree_flops = 0;              // subtrees below this are one task (0: auto)
  int block_size = 128;                  // pivoting window / dense block size in fronts
  double split_flops = 5e8;              // larger fronts become panel/update tasks (0: never)
  double zero_pivot = 1e-11;             // |pivot| <= zero_pivot * max|S A S| is no pivot
  // Unpivoted first: when some diagonal entry of S A S is nonzero, the factorization
  // first runs without pivoting (1x1 pivots in the fill-reducing order, no delays) and is
  // kept only if every pivot is 1x1 with |d| > zero_pivot * max|SAS|, with the sign of its
  // diagonal entry where that is nonzero (a quasi-definite matrix: SPD, or [H B^T; B -G]
  // with H, G definite; a zero diagonal entry, as in a KKT matrix [H B^T; B 0], takes
  // the sign its fill gives it) and, for mixed signs or zero diagonal entries, the growth
  // max_j (|L||D||L^T|)_jj / max|SAS| is at most growth_limit; otherwise threshold
  // pivoting runs. Applies to simplicial too. The inertia is that of the kept factors.
  bool try_unpivoted = true;
  // Where S A S has zero diagonal entries, the unpivoted attempt runs only if this allows:
  // Paired (default): only where analyze() kept a paired order (Defer that moved columns,
  // AnalyzeInfo::deferred > 0, or Compress); Always; Never (threshold pivoting at once).
  ZeroDiagonalAttempt zero_diagonal_attempt = ZeroDiagonalAttempt::Paired;
  // Zero-diagonal pairing (see ZeroDiagonalPairing): analyze() also reads A's values and
  // pairs each column whose diagonal entry is zero with a neighbour (greedy maximum-weight
  // matching on symmetrically scaled values, nonzero-diagonal partners first). No effect on
  // a matrix without zero diagonal entries, nor with Ordering::Natural or User.
  ZeroDiagonalPairing pairing = ZeroDiagonalPairing::Defer;
  // Defer is kept only where its predicted nnz(L) is at most this times the unpaired
  // order's (0: always; over it, the own-partner order, same limit). It runs only where the order puts some
  // zero-diagonal column before all its neighbours.
  double pairing_fill_limit = 1.5;
  double growth_limit = 67108864;        // its bound on max (|L||D||L^T|)_jj / max|SAS|: 2^26 =
                                         // 1/sqrt(eps), half the digits kept (refinement restores them)
  // A solve with a kept unpivoted factorization (FactorInfo::pivoting none) whose backward
  // error stays above this after refinement and FGMRES refactorizes with threshold
  // pivoting (the values of the last factorize) and solves again: FactorInfo then describes
  // the pivoted factors (attempts + 1) and SolveInfo::refactorized is set. 0: never.
  double unpivoted_berr = 1e-12;
  int fgmres_restart = 30;               // FGMRES(m) when refinement stalls
  int max_fgmres = 100;                  // total FGMRES iterations per right-hand side
};

struct AnalyzeInfo {
  std::int64_t n = 0, nnz_a = 0;
  std::int64_t nnz_l = 0;  // predicted for the supernodal factorization (diagonal counted)
  double flops = 0;  // predicted factorization flops
  Ordering ordering = Ordering::Auto;  // the one used
  std::int64_t supernodes = 0, levels = 0;
  std::int64_t tasks = 0;  // one factorization: the preparation and the graph with split fronts as
                           // panel/update tasks (as fork-join tasks, one each: FactorInfo::tasks)
  FactorMode mode = FactorMode::Tree;  // Simplicial: tried first
  std::int64_t matched_pairs = 0;      // zero-diagonal pairs found (LdltOptions::pairing)
  std::int64_t deferred = 0;           // Defer: zero-diagonal columns moved after their partner
                                       // (0 where no deferred / own-partner order was kept)
};

struct Inertia {
  std::int64_t pos = 0, neg = 0, zero = 0;
};

struct FactorInfo {
  Inertia inertia;
  std::int64_t two_by_two = 0, delayed = 0, static_pivots = 0;
  bool singular = false;
  double gflops = 0;
  std::int64_t tasks = 0;
  double flops = 0;        // flops actually performed (with delayed columns)
  std::int64_t nnz_l = 0;  // entries of L (diagonal counted) the factorization that ran holds:
                           // simplicial: exact, as CHOLMOD counts; multifrontal: the supernodal
                           // trapezoids (amalgamation zeros and delayed columns included)
  double factor_s = 0;     // wall-clock seconds of the numeric factorization
  double min_pivot = 0, max_pivot = 0;  // smallest / largest |eigenvalue| of D (scaled matrix)
  FactorMode mode = FactorMode::Tree;           // the factorization that ran
  Pivoting pivoting = Pivoting::Threshold;      // None: unpivoted, sign-consistent
  int attempts = 1;        // 2: the unpivoted attempt was rejected and threshold pivoting ran
                           // (tasks counts both); one more when a solve refactorized
                           // (see LdltOptions::unpivoted_berr)
  double growth = 0;       // max_j (|L||D||L^T|)_jj / max|SAS| where measured (pivoting "none",
                           // diagonal of mixed signs), else 0
};

struct SolveInfo {
  int refine_iters = 0;
  int fgmres_iters = 0;
  double backward_error = 0;  // ||Ax-b||_inf / (||A||_inf ||x||_inf + ||b||_inf)
  // The factorization solved with was singular (FactorInfo::singular): x may be huge and
  // meaningless however small backward_error is. numerically_singular() also checks rcond.
  bool singular = false;
  // The unpivoted factorization's backward error stayed above LdltOptions::unpivoted_berr:
  // this solve refactorized with threshold pivoting and solved again (factor_info() changed).
  bool refactorized = false;
};

class Ldlt {
 public:
  explicit Ldlt(LdltOptions opts = {});
  ~Ldlt();
  Ldlt(Ldlt&&) noexcept;
  Ldlt& operator=(Ldlt&&) noexcept;

  // Uses a SequentialExecutor when none is given. analyze() runs as one task there
  // (run_on_worker), except for tiny patterns (< 4000 stored entries), which run on the
  // caller, as do their factorization and solves in simplicial mode.
  const AnalyzeInfo& analyze(const CscMatrix32& A, Executor* exec = nullptr);
  FactorInfo factorize(const CscMatrix32& A, Executor* exec = nullptr);
  // int64-indexed input: converted by to_csc32 (an O(nnz) copy; Error when it does not
  // fit in 32-bit indices), then as above.
  const AnalyzeInfo& analyze(const CscMatrix64& A, Executor* exec = nullptr);
  FactorInfo factorize(const CscMatrix64& A, Executor* exec = nullptr);
  // nrhs right-hand sides stored column by column (b.size() == n * nrhs).
  std::vector<double> solve(const std::vector<double>& b, int nrhs = 1, Executor* exec = nullptr);
  // 1 / (||M||_1 ||M^-1||_1) of the equilibrated M = S A S (Ruiz's S, also where a definite
  // matrix was factorized unscaled; S = I with scale = false), as LAPACK's dgesvx reports
  // it: dlacn2 (Hager-Higham) with unrefined solves, cached until the next factorize; 0
  // when the factorization took static pivots. rcond() < eps means singular to working
  // precision even where no pivot was small (FactorInfo::singular sees only the pivots).
  double rcond(Executor* exec = nullptr);
  // Singular to working precision: static pivots were needed (FactorInfo::singular) or
  // rcond(exec) < eps (LAPACK dgesvx's rule).
  bool numerically_singular(Executor* exec = nullptr);
  const AnalyzeInfo& analyze_info() const;
  const FactorInfo& factor_info() const;
  const SolveInfo& solve_info() const;
  const LdltOptions& options() const;
  // FNV-1a hash of the factors' bits (L, D, pivot order): equal hashes across runs and
  // executors show bitwise-reproducible factorizations. After a distributed factorization
  // (StarPU-MPI, see above) collective: every rank calls it while the Runtime is alive.
  std::uint64_t factor_hash() const;
  // The elimination order analyze() chose (new -> old, postordered).
  const std::vector<std::int32_t>& permutation() const;

  struct State;

 private:
  std::unique_ptr<State> s_;
};

}  // namespace stardiff::sparse
