// SPDX-License-Identifier: LGPL-2.1-or-later
// codelets/cpu/mesh/tridiag.hpp — batched tridiagonal solves (Thomas, no pivoting) along one
// axis of a 2-D/3-D strided box, and their adjoint, on plain pointers (no StarPU types).
//
// Box: extents n[3] (a 2-D box has n[2] = 1), solve axis `axis` in {0,1,2}. Each array has its
// own base pointer p (element (0,0,0), halo offsets already applied) and element strides s[3]:
// element (i0,i1,i2) is p[i0 s[0] + i1 s[1] + i2 s[2]] (strides may differ between arrays).
// A line is one index combination (k_lo, k_hi) of the two other axes lo < hi; its number is
// k_lo + n[lo] k_hi. Along a line, row i: a = sub-diagonal, b = diagonal, c = super-diagonal,
// d = right-hand side; a[0] and c[n-1] are never read.
//
// tridiag_solve_cpu: x = A^{-1} d per line. x may alias d exactly (same p and strides); no other
//   aliasing. work: tridiag_solve_work_size(box) doubles, caller-owned, contents ignored.
// tridiag_adjoint_cpu: given the primal solution x and its adjoint xbar, per line
//   g = A^{-T} xbar (Thomas on the transposed coefficients), then
//   dbar_i += g_i, bbar_i -= g_i x_i, abar_i -= g_i x_{i-1} (i >= 1), cbar_i -= g_i x_{i+1} (i <= n-2).
//   abar/bbar/cbar/dbar with p == nullptr are skipped. consume_xbar: xbar is set to 0 after it
//   is read, before any dbar write, so xbar may alias dbar exactly (in-place solve: dbar = g);
//   without it xbar is only read and must not alias anything written. work:
//   tridiag_adjoint_work_size(box) doubles.
// Pivots: a pivot that is zero or not finite marks its line bad; every line is still processed
// (bad lines' outputs are unspecified). The status counts bad lines and names the lowest bad line
// and its first bad row. Results are bitwise reproducible (fixed operation order per line).
#pragma once
#include <cstddef>

#include "cpu/mesh/tridiag_box.hpp"

namespace stardiff::cpu {

struct TridiagStatus {
  long long bad_lines = 0;
  long long first_line = -1;  // lowest bad line number, -1 when none
  long long first_row = -1;   // its first bad pivot row
  bool ok() const { return bad_lines == 0; }
};

inline constexpr int kTridiagGroup = 8;  // lines solved together (one workspace slice each)
std::size_t tridiag_solve_work_size(const TridiagBox& box);
std::size_t tridiag_adjoint_work_size(const TridiagBox& box);

TridiagStatus tridiag_solve_cpu(const TridiagBox& box, TridiagConstArray a, TridiagConstArray b,
                                TridiagConstArray c, TridiagConstArray d, TridiagArray x, double* work);
TridiagStatus tridiag_adjoint_cpu(const TridiagBox& box, TridiagConstArray a, TridiagConstArray b,
                                  TridiagConstArray c, TridiagConstArray x, TridiagArray xbar,
                                  bool consume_xbar, TridiagArray abar, TridiagArray bbar, TridiagArray cbar,
                                  TridiagArray dbar, double* work);

}  // namespace stardiff::cpu
