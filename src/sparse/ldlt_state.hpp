// SPDX-License-Identifier: LGPL-2.1-or-later
// src/sparse/ldlt_state.hpp — what the Ldlt facade and its parts share (private).
//
// Ldlt::State holds one solver's analysis, factors and reports. The parts: ldlt.cpp
// (facade: analyze, factorize), ldlt_scaling.cpp (Ruiz scaling, scaled values and
// diagonals), ldlt_simplicial.cpp (SuiteSparse LDL path), ldlt_refine.cpp (solves,
// refinement, FGMRES), ldlt_rcond.cpp (condition estimate).
#pragma once
#include <cstdint>
#include <vector>

#include "sparse/ldlt_dist.hpp"
#include "sparse/ldlt_internal.hpp"
#include "stardiff/sparse/ldlt.hpp"

extern "C" {
void openblas_set_num_threads(int) __attribute__((weak));
int openblas_get_num_threads(void) __attribute__((weak));
}

namespace stardiff::sparse {

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
  std::vector<detail::NodeFactor> nodes;  // distributed: factors of this rank's nodes only
  // The last factorization ran distributed over StarPU-MPI ranks (dist: its mapping): each
  // node's factors stay on its owner; solves, rcond and factor_hash are distributed too.
  bool distributed = false;
  detail::LdltDist dist;
  bool hash_ready = false;  // distributed: hash holds factor_hash()
  std::uint64_t hash = 0;
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
  // Set while solve() refactorizes an accepted unpivoted factorization whose backward
  // error stayed above opts.unpivoted_berr: factorize() then runs threshold pivoting only.
  bool force_threshold = false;
};

namespace detail {
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

// ---- ldlt_scaling.cpp ----
// Ruiz symmetric equilibration in the max norm on a lower-stored matrix (at most 20
// sweeps, until every row's largest scaled entry is within 10 % of 1).
std::vector<double> ruiz_scale(const CscMatrix32& A);
// A's diagonal (original numbering; 0 where absent).
std::vector<double> diagonal(const CscMatrix32& A);
// The diagonal of P S A S P^T from A's (ps: the scaling in the permuted numbering).
std::vector<double> scaled_diagonal(const std::vector<double>& adiag, const std::vector<int>& perm,
                                    const std::vector<double>& ps);
// The signs of a diagonal: `nonzero` when every |d_j| > small; which signs occur among
// the entries with |d_j| > small (neither: every entry is zero).
struct DiagonalSigns {
  bool nonzero = true, pos = false, neg = false;
};
DiagonalSigns diagonal_signs(const std::vector<double>& d, double small);
// Entries of P S A S P^T on one of the analysis's permuted structures (column j: rows
// row[ptr[j] ..), taken from A.values[src[...]]); ps is the scaling in the permuted
// numbering. Returns max |entry|. Ptr: int or std::int64_t.
template <class Ptr>
double scaled_values(const CscMatrix32& A, const std::vector<double>& ps, const std::vector<Ptr>& ptr,
                     const std::vector<int>& row, const std::vector<int>& src, std::vector<double>& out);

// ---- ldlt_simplicial.cpp ----
// SuiteSparse LDL on the upper triangle of P S A S P^T (ps: the scaling in the permuted
// numbering). Returns false (and leaves st.simp.ok false) when a pivot is zero or too
// small, or a multiplier exceeds 1/u: then threshold pivoting has work to do (the
// multifrontal path).
bool factor_simplicial(Ldlt::State& st, const CscMatrix32& A, const std::vector<double>& adiag,
                       const std::vector<double>& ps, FactorInfo& fi);
// y := (L D L^T)^-1 y with the simplicial factors, nrhs columns of length n.
void solve_simplicial(const Ldlt::State& st, double* y, int nrhs);

// ---- ldlt_refine.cpp ----
struct Refiner {
  Ldlt::State& st;
  Executor& ex;
  int n;

  // x = A^-1 b through the factorization (nrhs columns).
  void apply(const double* b, double* x, int nrhs);
  // r = b - A x, returns the backward error ||r|| / den; den = ||A|| ||x|| + ||b|| (inf-norms)
  // goes to *den_out when given.
  double residual(const double* b, const double* x, double* r, double* den_out = nullptr);
  // Right-preconditioned FGMRES(m) from x; returns iterations, updates x and berr.
  int fgmres(const double* b, double* x, double& berr, int restart, int maxit);
};
}  // namespace detail

}  // namespace stardiff::sparse
