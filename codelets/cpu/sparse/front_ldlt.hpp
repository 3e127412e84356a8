// SPDX-License-Identifier: LGPL-2.1-or-later
// codelets/cpu/sparse/front_ldlt.hpp — dense LDL^T of a frontal matrix (no StarPU types).
//
// front_ldlt_cpu(F, m, p, opts, perm, d, e, piv, counts):
//   F: m x m column-major (ld = m), lower triangle holds a symmetric front whose first p
//   rows/columns are fully summed. Eliminates as many of the p fully-summed columns as
//   threshold pivoting allows (1x1 pivot: |a_jj| > small and |a_jj| >= u max_i |a_ij|;
//   2x2 pivot passing the MA57 test), with symmetric interchanges confined to the
//   fully-summed columns. Returns nelim; on exit
//     F[:, 0:nelim]   = L (unit lower; L(k+1,k) = 0 for a 2x2 pivot at k),
//     F[nelim:, nelim:] (lower) = Schur complement (contribution block; its first
//                       p - nelim rows/columns are the delayed fully-summed columns),
//     perm[t]         = original local index now at position t (size m, input ignored),
//     d, e, piv (size >= p): D's diagonal, 2x2 off-diagonals (e[k] for pair k,k+1),
//                       pivot kind (1: 1x1, 2/3: first/second of 2x2, 0: static).
//   With force = true (a root front) every column is eliminated: columns failing the
//   threshold take the best remaining 1x1/2x2 pivot, and where none has |pivot| > small
//   a static pivot sign(a_jj) * static_piv (counted in counts.static_pivots and zero).
//   Blocked (window nb): a no-pivoting window with a posteriori check |L| <= 1/u runs as
//   BLAS-3; a failing window is redone in inner windows of 32 columns with
//   column-by-column pivoting; the contribution block is updated once, at the end.
//   Deterministic: the same input gives bitwise the same output.
#pragma once
#include <cstdint>

namespace stardiff::cpu {

struct FrontOptions {
  double u = 0.01;
  double small = 1e-20;
  double static_piv = 1e-8;
  bool force = false;
  int nb = 64;
  // No pivoting at all (u and force ignored): windows run unpivoted (BLAS-3, no backup
  // copies); at the first pivot with |d| <= small (or not finite) the front stops and
  // returns how many columns it eliminated (< p; the rest of the front is garbage).
  bool unpivoted = false;
};

struct FrontCounts {
  std::int64_t pos = 0, neg = 0, zero = 0, two_by_two = 0, static_pivots = 0;
};

int front_ldlt_cpu(double* F, int m, int p, const FrontOptions& opts, int* perm, double* d, double* e,
                   signed char* piv, FrontCounts& counts);

// One window [k, wend) of front_ldlt_cpu without moving failed columns out: returns the
// number of accepted pivots (accepted first, failed ones after them, all current). The
// window columns must be current on entry; only window columns are updated.
int front_window_cpu(double* F, int m, int k, int wend, const FrontOptions& opts, int* perm, double* d, double* e,
                     signed char* piv, FrontCounts& counts);

// Updates columns [c0, c1) (rows >= column, up to m) with the pivots [k, k + nacc):
// F(i, j) -= L(i, K) D L(j, K)^T.
void front_update_cols_cpu(double* F, int m, int k, int nacc, const double* d, const double* e,
                           const signed char* piv, int c0, int c1);

// W = L(r0:r1, K) D for the pivots K = [k, k + nacc) (2x2 blocks included; a 2x2 pivot
// must not straddle K's ends): W is (r1 - r0) x nacc, column-major, ld r1 - r0. The
// product front_update_cols_cpu forms for its rows.
void front_times_d_cpu(const double* F, int m, int k, int nacc, const double* d, const double* e,
                       const signed char* piv, int r0, int r1, double* W);

}  // namespace stardiff::cpu
