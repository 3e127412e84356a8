// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/adjoint/tridiag.hpp — batched tridiagonal solves along one axis of a dat, as an
// external function with its adjoint (Thomas per line, no pivoting).
//
// Contract:
//  * tridiag_solve(name, axis, a, b, c, d, x) solves, for every line along `axis` of the dats'
//    interior, A x = d with sub-diagonal a, diagonal b, super-diagonal c (a at a line's first
//    row and c at its last are not read). All five dats: one block, one component, equal size
//    and base. &x == &d solves in place (d RW); otherwise x is WRITE.
//  * Tasks: axis below the outer (tiled) axis: one task per tile (lines stay in a tile); along
//    the outer axis: one task over all tiles (lines cross tiles; solved in place on the tiles'
//    rows, no copies).
//  * Adjoint (recorded when a tape is active): g = A^{-T} xbar, dbar += g (in place: dbar = g),
//    bbar -= g x, abar_i -= g_i x_{i-1}, cbar_i -= g_i x_{i+1}; xbar consumed. recompute:
//    the adjoint re-solves instead of keeping x (execute_external_recompute).
//  * A zero or non-finite pivot fails the task: Error from wait_all naming the call and line.
//  * Results are bitwise reproducible, independent of the executor and of the tiling.
#pragma once
#include <string>

#include "stardiff/mesh/dat.hpp"

namespace stardiff {

void tridiag_solve(const std::string& name, int axis, mesh::Dat<double>& a, mesh::Dat<double>& b,
                   mesh::Dat<double>& c, mesh::Dat<double>& d, mesh::Dat<double>& x, bool recompute = false);

}  // namespace stardiff
