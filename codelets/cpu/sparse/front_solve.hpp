// SPDX-License-Identifier: LGPL-2.1-or-later
// codelets/cpu/sparse/front_solve.hpp — triangular solves with one factorized front (no library state).
//
// A front's factor: L, m x ne column-major (ld = m), unit lower in its first ne rows
// (entries on and above the diagonal are not read); D of ne entries given as d (diagonal),
// e (e[k]: off-diagonal of a 2x2 block at k, k+1) and piv (1: 1x1, 2/3: first/second of
// a 2x2). G is the front's m x nrhs right-hand side block (column-major, ld = m). One
// column uses level-2 kernels (no BLAS work buffers), several use dtrsm/dgemm.
#pragma once

namespace stardiff::cpu {

// G1 := D^-1 L11^-1 G1, then G2 -= L21 (L11^-1 G1) (G1: rows [0, ne), G2: rows [ne, m)).
void front_solve_forward_cpu(const double* L, int m, int ne, const double* d, const double* e,
                             const signed char* piv, double* G, int nrhs);

// G1 := L11^-T (G1 - L21^T G2).
void front_solve_backward_cpu(const double* L, int m, int ne, double* G, int nrhs);

}  // namespace stardiff::cpu
