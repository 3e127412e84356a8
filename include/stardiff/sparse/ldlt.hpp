// stardiff/sparse/ldlt.hpp — sparse symmetric LDL^T: analysis, factorization, solve.
//
// Contract:
//  * analyze(A) uses only A's pattern (symmetric_lower CSC; int32 indices, or int64 ones
//    narrowed by to_csc32): ordering, elimination
//    tree, column counts, supernodes, assembly-tree levels, task plan. It may be
//    followed by any number of factorize() calls with matrices of the same pattern.
//    With an executor it runs as one task there (run_on_worker), not on the caller —
//    except for tiny patterns (< 4000 stored entries), where the round trip costs more;
//    in simplicial mode their factorization and solves run on the caller too.
//    Analyses in concurrent threads give the orderings they give alone: METIS draws from
//    the C library's rand(), so its calls are serialized and run on a private rand()
//    state (the caller's sequence is left where it was; another thread calling rand()
//    while METIS runs can still perturb it).
//  * factorize(A) computes P S A S P^T = L D L^T (S: symmetric scaling, D: 1x1 and 2x2
//    blocks) as tasks on the executor. It never throws for numerical reasons: FactorInfo
//    says singular, inertia and pivot counts. Results are bitwise identical for the same
//    input, plan and executor kind or scheduler.
//    Pivots: threshold u within a supernode's fully-summed columns; columns without an
//    acceptable pivot (or with |pivot| <= zero_pivot * max|SAS|) are delayed to the
//    parent; at a root, a static pivot sqrt(eps) * max|SAS| (sign kept) is the last
//    resort and counts as a zero eigenvalue (singular = static_pivots > 0).
//    Multifrontal: one dense front per supernode; small subtrees form one task; fronts
//    above split_flops become panel/update tasks; below small_flops one task ("single-task").
//    Simplicial: a single-task problem with fewer than simplicial_switch flops per entry
//    of L (tiny supernodes) is first factored in one task by SuiteSparse LDL (up-looking,
//    diagonal pivots). It is kept only if every pivot is nonzero (|d| > zero_pivot * max|SAS|)
//    and every multiplier satisfies |l| <= 1/u — exactly the factorization threshold
//    pivoting would accept with diagonal pivots; otherwise the multifrontal one runs.
//    With a one-signed diagonal (a definite candidate, stable without scaling) it is tried
//    on the unscaled matrix first (S = I), then on the scaled one.
//    FactorInfo::mode says which ran ("simplicial", "single-task", "tree").
//    Unpivoted first (try_unpivoted): when every diagonal entry of S A S is nonzero, the
//    factorization first runs without threshold pivoting and is kept only if every pivot
//    is 1x1 with the sign of its diagonal entry (the signature of a quasi-definite matrix:
//    SPD, or [H B^T; B -G] with H, G positive definite, whose LDL^T exists in any order)
//    and, for a diagonal of mixed signs, the growth max_j (|L||D||L^T|)_jj / max|SAS|
//    (which bounds the backward error of LDL^T) is at most growth_limit; otherwise the
//    threshold-pivoting factorization runs. FactorInfo::pivoting says which was kept
//    ("none" or "threshold"); a simplicial factorization is kept under the same rule too.
//  * solve(b) returns x with A x = b (refined); solve_info() reports the refinement.
//  * rcond() estimates 1 / (||M||_1 ||M^-1||_1) of the equilibrated matrix M = S A S
//    (Ruiz's S, also where a definite matrix was factorized unscaled; S = I with
//    scale = false), as LAPACK's dgesvx reports it for its equilibrated matrix: LAPACK's dlacn2 (Hager-Higham), typically 4-5 unrefined
//    solves, on demand, cached until the next factorize; 0 when the factorization took
//    static pivots. rcond() < eps means singular to working precision, even where no
//    pivot was small (FactorInfo::singular sees only the pivots).
//  * Misuse (factorize before analyze, pattern or size mismatch, non-finite values,
//    b of the wrong length) throws stardiff::Error.
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

struct LdltOptions {
  Ordering ordering = Ordering::Auto;
  std::vector<std::int32_t> user_perm;  // with Ordering::User: new -> old
  double pivot_threshold = 0.01;         // u in threshold partial pivoting
  bool scale = true;                     // symmetric (Ruiz) equilibration
  int max_refine = 10;                   // iterative refinement steps
  int nemin = 32;                        // relaxed amalgamation parameter
  double small_flops = 3e7;              // below this, one task factors everything
  double simplicial_switch = 60;         // flops / nnz(L) below this: simplicial (0: never)
  double subtree_flops = 0;              // subtrees below this are one task (0: auto)
  int block_size = 128;                  // pivoting window / dense block size in fronts
  double split_flops = 5e8;              // larger fronts become panel/update tasks (0: never)
  double zero_pivot = 1e-11;             // |pivot| <= zero_pivot * max|S A S| is no pivot
  bool try_unpivoted = true;             // quasi-definite attempt first (see above)
  double growth_limit = 67108864;        // its bound on max (|L||D||L^T|)_jj / max|SAS|: 2^26 =
                                         // 1/sqrt(eps), half the digits kept (refinement restores them)
  int fgmres_restart = 30;               // FGMRES(m) when refinement stalls
  int max_fgmres = 100;                  // total FGMRES iterations per right-hand side
};

struct AnalyzeInfo {
  std::int64_t n = 0, nnz_a = 0;
  std::int64_t nnz_l = 0;  // predicted for the supernodal factorization (diagonal counted)
  double flops = 0;  // predicted factorization flops
  Ordering ordering = Ordering::Auto;  // the one used
  std::int64_t supernodes = 0, levels = 0, tasks = 0;
  std::string mode;  // "simplicial" (tried first), "single-task" or "tree"
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
  std::string mode;        // the factorization that ran: "simplicial", "single-task" or "tree"
  std::string pivoting;    // "none" (unpivoted, sign-consistent) or "threshold"
  int attempts = 1;        // 2: the unpivoted attempt was rejected and threshold pivoting ran
                           // (tasks counts both)
  double growth = 0;       // max_j (|L||D||L^T|)_jj / max|SAS| where measured (pivoting "none",
                           // diagonal of mixed signs), else 0
};

struct SolveInfo {
  int refine_iters = 0;
  int fgmres_iters = 0;
  double backward_error = 0;  // ||Ax-b||_inf / (||A||_inf ||x||_inf + ||b||_inf)
};

class Ldlt {
 public:
  explicit Ldlt(LdltOptions opts = {});
  ~Ldlt();
  Ldlt(Ldlt&&) noexcept;
  Ldlt& operator=(Ldlt&&) noexcept;

  // Uses a SequentialExecutor when none is given.
  const AnalyzeInfo& analyze(const CscMatrix32& A, Executor* exec = nullptr);
  FactorInfo factorize(const CscMatrix32& A, Executor* exec = nullptr);
  // int64-indexed input: converted by to_csc32 (an O(nnz) copy; Error when it does not
  // fit in 32-bit indices), then as above.
  const AnalyzeInfo& analyze(const CscMatrix64& A, Executor* exec = nullptr);
  FactorInfo factorize(const CscMatrix64& A, Executor* exec = nullptr);
  // nrhs right-hand sides stored column by column (b.size() == n * nrhs).
  std::vector<double> solve(const std::vector<double>& b, int nrhs = 1, Executor* exec = nullptr);
  // Estimated reciprocal 1-norm condition number of S A S (see above).
  double rcond(Executor* exec = nullptr);
  // Singular to working precision: static pivots were needed (FactorInfo::singular) or
  // rcond(exec) < eps (LAPACK dgesvx's rule).
  bool numerically_singular(Executor* exec = nullptr);
  const AnalyzeInfo& analyze_info() const;
  const FactorInfo& factor_info() const;
  const SolveInfo& solve_info() const;
  const LdltOptions& options() const;
  // FNV-1a hash of the factors' bits (L, D, pivot order): equal hashes across runs and
  // executors show bitwise-reproducible factorizations.
  std::uint64_t factor_hash() const;
  // The elimination order analyze() chose (new -> old, postordered).
  const std::vector<std::int32_t>& permutation() const;

  struct State;

 private:
  std::unique_ptr<State> s_;
};

}  // namespace stardiff::sparse
