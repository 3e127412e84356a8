// SPDX-License-Identifier: LGPL-2.1-or-later
// bench/ldlt_vs_peers/report.hpp — interleaved repeats, their medians, and every line the
// benchmark prints: `ldlt_vs_peers key=value ...` on stdout, a readable table on stderr.
#pragma once

#include <string>
#include <vector>

#include "problem.hpp"
#include "solvers.hpp"

namespace ldlt_vs_peers {

double median(std::vector<double> v);  // NAN when empty

// One solver's runs on one matrix: the successful ones, or its first failure.
struct Summary {
  std::vector<RunResult> runs;
  RunResult first_failure;
  bool failed = false;
  double analyze() const;  // median over every analysis timed (R x K samples)
  double factor() const;   // medians of the phases
  double solve() const;
  double relres() const;   // the largest
};

// `repeats` rounds, each running every solver once in order; a solver that fails is not run
// again; a peer whose first run exceeds skip_slow seconds (0 = never) runs once; stardiff
// runs every round. Leaves OpenBLAS single-threaded.
std::vector<Summary> run_interleaved(const Problem& p, const std::vector<Solver>& solvers, int repeats,
                                     double skip_slow);

// The ratios of stardiff's factor time to the fastest successful peer's: all matrices, and
// those whose fastest peer needs >= 2 ms.
struct Ratios {
  std::vector<double> all, ge2ms;
};

void print_config(const std::string& executor, const std::string& scheduler, int cpu_workers,
                  const std::vector<int>& peer_threads, int repeats);
void print_dgemm(int n, int threads, double gflops);
void print_table_header();  // stderr

// One matrix: its solver lines, the ratio line (with analyze_ratio against cholmod_analyze)
// the inertia line (stardiff against MUMPS) and the delayed line (stardiff's delayed columns and
// 2x2 pivots beside MUMPS's INFOG(13)); adds its ratio to `ratios`. Returns
// stardiff's index in solvers, -1 when it is not among them.
int report_matrix(const Problem& p, const std::vector<Solver>& solvers, const std::vector<Summary>& sums,
                  Ratios& ratios);

// stardiff's rate on the Laplacian (first run's flops / median factor time) as a fraction of
// the best dgemm rate measured, at start (dgemm1/2) and right after the Laplacian (again1/2).
void print_laplacian(const Problem& p, const Summary& stardiff, double dgemm1, double dgemm2, double again1,
                     double again2);

void print_geomean(const Ratios& ratios);

}  // namespace ldlt_vs_peers
