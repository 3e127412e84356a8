// SPDX-License-Identifier: LGPL-2.1-or-later
// codelets/cpu/sparse/front_assembly.cpp — see front_assembly.hpp.
#include "cpu/sparse/front_assembly.hpp"

#include <cstring>

namespace stardiff::cpu {

void front_zero_cols_cpu(double* F, int m, int c0, int c1) {
  const std::size_t mm = std::size_t(m);
  for (std::size_t j = std::size_t(c0); j < std::size_t(c1); ++j)
    std::memset(F + j * mm + j, 0, sizeof(double) * (mm - j));
}

void front_assemble_a_cpu(double* F, int m, const std::int64_t* ap, const int* ai, const double* val,
                          const int* pos, int j0, int j1) {
  const std::size_t mm = std::size_t(m);
  for (int j = j0; j < j1; ++j) {
    const std::size_t cj = std::size_t(pos[j]) * mm;
    for (std::int64_t q = ap[j]; q < ap[j + 1]; ++q) F[std::size_t(pos[ai[q]]) + cj] += val[q];
  }
}

void front_extend_add_cpu(double* F, int m, const double* cb, int mc, std::size_t ld, const int* cpos, int b0,
                          int b1) {
  const std::size_t mm = std::size_t(m);
  for (int b = b0; b < b1; ++b) {
    // col[a], a >= b, is entry (a, b)
    const double* col = ld ? cb + std::size_t(b) * ld : cb + packed_column(std::size_t(b), std::size_t(mc)) - b;
    const int pb = cpos[b];
    for (int a = b; a < mc; ++a) {
      const int pa = cpos[a];
      if (pa >= pb) F[std::size_t(pa) + std::size_t(pb) * mm] += col[a];
      else F[std::size_t(pb) + std::size_t(pa) * mm] += col[a];
    }
  }
}

void front_pack_cb_cpu(const double* F, int m, int off, int mc, double* out) {
  const std::size_t mm = std::size_t(m);
  for (int b = 0; b < mc; ++b)
    std::memcpy(out + packed_column(std::size_t(b), std::size_t(mc)), &F[std::size_t(off + b) + std::size_t(off + b) * mm],
                sizeof(double) * std::size_t(mc - b));
}

}  // namespace stardiff::cpu
