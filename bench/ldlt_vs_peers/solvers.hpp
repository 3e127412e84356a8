// SPDX-License-Identifier: LGPL-2.1-or-later
// bench/ldlt_vs_peers/solvers.hpp — the solvers the benchmark times, as plain functions.
// Each run_* does analyze + factorize + solve on p.b, times each phase with a wall clock and
// computes relres itself; ok means no error and relres <= 1e-6, otherwise reason says why.
// The peers run with `threads` OpenBLAS threads and do not refine; stardiff's solve refines.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "problem.hpp"
#include "stardiff/stardiff.hpp"

namespace ldlt_vs_peers {

using Clock = std::chrono::steady_clock;
inline double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct RunResult {
  double analyze_s = 0, factor_s = 0, solve_s = 0, relres = INFINITY;
  std::vector<double> analyze_extra;  // further analyze-only timings of the same pattern
  bool ok = false;
  std::string reason;
  double flops = 0;                                   // factorization flops where the solver reports them
  std::optional<stardiff::sparse::Inertia> inertia;   // stardiff
  std::optional<double> rcond;                        // stardiff: Ldlt::rcond() (untimed)
  bool singular = false;                              // stardiff: Ldlt::numerically_singular()
  std::optional<std::int64_t> negative;               // negative pivots (stardiff, MUMPS INFOG(12))
  // delayed pivots: stardiff FactorInfo::delayed (a column counts once per front it leaves
  // uneliminated), MUMPS INFOG(13) (total delayed pivots, counted the same way); 2x2 pivots:
  // stardiff FactorInfo::two_by_two (MUMPS reports no such count for SYM = 2)
  std::optional<std::int64_t> delayed, two_by_two;
  // MUMPS refactorized with null-pivot detection (ICNTL(24) = 1, untimed): its negative
  // pivots and null pivots (INFOG(28)), for singular matrices
  std::optional<std::int64_t> negative_nulldet, null_pivots;
  std::string detail;                                 // extra key=value pairs
};

// One entry of the benchmark: its printed name and one timed run on a problem.
struct Solver {
  std::string name;
  std::function<RunResult(const Problem&)> run;
};

// stardiff's Ldlt on runtime's CPU workers (resumed only for the run), or sequentially
// when runtime is null; analyze_samples - 1 further analyses on fresh solvers; pairing:
// LdltOptions::pairing by name (empty: its default).
RunResult run_stardiff(const Problem& p, stardiff::Runtime* runtime, stardiff::sparse::Ordering ordering,
                       int analyze_samples, const std::string& pairing = "");

// CHOLMOD: supernodal LL^T or simplicial LDL^T; analyze_samples - 1 further cholmod_analyze
// calls, each with a fresh Common (also where the factorization fails).
RunResult run_cholmod(const Problem& p, bool supernodal, int threads, int analyze_samples = 1);

// UMFPACK (unsymmetric LU, default control) on the full pattern.
RunResult run_umfpack(const Problem& p, int threads);

// MUMPS sequential, SYM = 2; null_detection: also refactorize untimed with null-pivot
// detection at stardiff's zero-pivot threshold (ICNTL(24) = 1, CNTL(3) = 1e-11).
RunResult run_mumps(const Problem& p, int threads, bool null_detection);

// OpenBLAS: its thread count, the kernel it runs, and the dgemm rate (n x n, best of 3, GFlop/s).
void set_blas_threads(int t);
const char* blas_core_name();
double dgemm_gflops(int n, int threads);

}  // namespace ldlt_vs_peers
