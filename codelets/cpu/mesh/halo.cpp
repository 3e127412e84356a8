// SPDX-License-Identifier: LGPL-2.1-or-later
// codelets/cpu/mesh/halo.cpp — see halo.hpp.
#include "cpu/mesh/halo.hpp"

#include <cstring>

namespace stardiff::cpu {

void halo_exchange_cpu(unsigned char* lo, std::size_t n_lo, unsigned char* hi, std::size_t row_bytes,
                       int d_m, int d_p) {
  if (d_p > 0) std::memcpy(lo + (d_m + n_lo) * row_bytes, hi + d_m * row_bytes, d_p * row_bytes);
  if (d_m > 0) std::memcpy(hi, lo + n_lo * row_bytes, d_m * row_bytes);
}

template <class T>
void halo_reverse_add_cpu(T* lo, std::size_t n_lo, T* hi, std::size_t row_len, int d_m, int d_p) {
  {
    T* __restrict g = lo + (d_m + n_lo) * row_len;
    T* __restrict o = hi + d_m * row_len;
    const std::size_t n = d_p * row_len;
    for (std::size_t i = 0; i < n; ++i) {
      o[i] += g[i];
      g[i] = T(0);
    }
  }
  {
    T* __restrict g = hi;
    T* __restrict o = lo + n_lo * row_len;
    const std::size_t n = d_m * row_len;
    for (std::size_t i = 0; i < n; ++i) {
      o[i] += g[i];
      g[i] = T(0);
    }
  }
}
template void halo_reverse_add_cpu<double>(double*, std::size_t, double*, std::size_t, int, int);
template void halo_reverse_add_cpu<float>(float*, std::size_t, float*, std::size_t, int, int);

void rows_copy_cpu(const unsigned char* src, unsigned char* dst, std::size_t bytes) {
  std::memcpy(dst, src, bytes);
}

template <class T>
void add_into_cpu(T* __restrict dst, const T* __restrict src, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) dst[i] += src[i];
}
template void add_into_cpu<double>(double*, const double*, std::size_t);
template void add_into_cpu<float>(float*, const float*, std::size_t);

}  // namespace stardiff::cpu
