// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/powerflow/klu.hpp — KLU (SuiteSparse) on a fixed pattern: analyze once, factor,
// refactor, solve; the sparse LU behind powerflow::solve, for Newton loops of one's own.
//
// Contract: analyze(n, Ap, Ai) takes a CSC pattern (arrays must outlive the solver) and
// runs klu_analyze once. factor(Ax) does klu_factor the first time and klu_refactor after
// (same pattern, pivot order kept); a refactorization whose pivots degrade (rcond below
// 1e-12 or not finite) is redone with a full klu_factor. Returns false if the matrix is
// singular (numerically) — never throws for numerical trouble. solve(b) overwrites b with
// A^{-1} b, or with A^{-T} b when `transpose` (the Newton solver stores J^T in CSC = J in
// CSR and solves with the transpose). Throws Error for misuse (solve before factor).
#pragma once
#include <cstdint>

namespace stardiff::powerflow {

class KluSolver {
 public:
  KluSolver();
  ~KluSolver();
  KluSolver(const KluSolver&) = delete;
  KluSolver& operator=(const KluSolver&) = delete;

  // perm (optional, n entries): a fill-reducing symmetric ordering to use instead of KLU's
  // AMD (klu_analyze_given with P = Q = perm).
  void analyze(std::int32_t n, const std::int32_t* Ap, const std::int32_t* Ai, const std::int32_t* perm = nullptr);
  bool factor(const double* Ax);
  bool solve(double* b, bool transpose) const;
  // Drops the numeric factorization: the next factor() is a full klu_factor (new pivots).
  void reset() { free_numeric(); }
  bool factored() const;  // a numeric factorization is held (solve() may be called)
  int refactors() const { return refactors_; }
  int factors() const { return factors_; }
  double rcond() const { return rcond_; }

 private:
  void free_numeric();
  std::int32_t n_ = 0;
  const std::int32_t* Ap_ = nullptr;
  const std::int32_t* Ai_ = nullptr;
  struct Impl;
  Impl* k_ = nullptr;  // KLU symbolic, numeric and common (klu.h stays private)
  int refactors_ = 0, factors_ = 0;
  double rcond_ = 0;
};

}  // namespace stardiff::powerflow
