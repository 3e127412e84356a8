// SPDX-License-Identifier: LGPL-2.1-or-later
// codelets/cpu/mesh/halo.hpp — tile halo kernels on plain pointers (no StarPU types).
//
// A tile buffer holds d_m ghost rows, n interior rows, d_p ghost rows (row = row_len
// elements). For the boundary between tile `lo` (n_lo interior rows) and tile `hi`:
//   halo_exchange_cpu:    lo's upper ghosts <- hi's first d_p rows;
//                         hi's lower ghosts <- lo's last d_m rows          (bytes)
//   halo_reverse_add_cpu: hi's first d_p rows += lo's upper ghosts, ghosts = 0; then
//                         lo's last d_m rows += hi's lower ghosts, ghosts = 0  (that order)
//   rows_copy_cpu:        memcpy of `bytes` bytes between two buffers at offsets
//   add_into_cpu:         dst[i] += src[i], i < n
#pragma once
#include <cstddef>

namespace stardiff::cpu {
void halo_exchange_cpu(unsigned char* lo, std::size_t n_lo, unsigned char* hi, std::size_t row_bytes,
                       int d_m, int d_p);
template <class T>
void halo_reverse_add_cpu(T* lo, std::size_t n_lo, T* hi, std::size_t row_len, int d_m, int d_p);
void rows_copy_cpu(const unsigned char* src, unsigned char* dst, std::size_t bytes);
template <class T>
void add_into_cpu(T* dst, const T* src, std::size_t n);
}  // namespace stardiff::cpu
