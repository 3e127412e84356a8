// SPDX-License-Identifier: LGPL-2.1-or-later
// codelets/cpu/sparse/front_assembly.hpp — assembly kernels of a frontal matrix (no library state).
//
// F is m x m column-major (ld = m); only its lower triangle is written. A contribution
// block is an mc x mc lower triangle, either packed by columns (column b holds rows b..
// from packed_column(b, mc) on) or strided (column-major, leading dimension ld). Every
// entry receives its terms in a fixed order (A's entries, then the blocks in the order
// the caller adds them), so assembling column range by column range is bitwise the same
// as assembling the whole front at once.
#pragma once
#include <cstddef>
#include <cstdint>

namespace stardiff::cpu {

// Where column b of a packed mc x mc lower triangle starts (its rows b..mc-1 follow);
// packed_column(mc, mc) is the whole block's size.
inline std::size_t packed_column(std::size_t b, std::size_t mc) { return b * (2 * mc + 1 - b) / 2; }

// Zeroes the lower part (rows >= column) of columns [c0, c1) of F.
void front_zero_cols_cpu(double* F, int m, int c0, int c1);

// Adds the entries of columns [j0, j1) of a CSC lower triangle (ap, ai, val) to F:
// entry (i, j) goes to F(pos[i], pos[j]) (pos[i] >= pos[j]).
void front_assemble_a_cpu(double* F, int m, const std::int64_t* ap, const int* ai, const double* val,
                          const int* pos, int j0, int j1);

// Extend-add of columns [b0, b1) of a contribution block: its entry (a, b), a >= b, goes to
// F(cpos[a], cpos[b]) (or the symmetric position when cpos[a] < cpos[b]). ld = 0: packed.
void front_extend_add_cpu(double* F, int m, const double* cb, int mc, std::size_t ld, const int* cpos, int b0,
                          int b1);

// Copies the trailing mc x mc lower triangle of F (from row and column off on) packed into out.
void front_pack_cb_cpu(const double* F, int m, int off, int mc, double* out);

}  // namespace stardiff::cpu
