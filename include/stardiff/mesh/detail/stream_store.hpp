// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/mesh/detail/stream_store.hpp — non-temporal stores of WRITE output rows.
// Internal to par_loop (used by loop_state.hpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace stardiff::mesh::detail {

// Non-temporal store of n elements (streaming stores avoid the write-allocate read of
// outputs that are never read in the loop; caller fences with stream_fence()).
template <class T>
inline void stream_out(T* dst, const T* src, std::size_t n) {
#if defined(__SSE2__)
  if constexpr (std::is_same_v<T, double>) {
    std::size_t i = 0;
    for (; i < n && (reinterpret_cast<std::uintptr_t>(dst + i) & 15u) != 0; ++i) dst[i] = src[i];
    for (; i + 2 <= n; i += 2) _mm_stream_pd(dst + i, _mm_loadu_pd(src + i));
    for (; i < n; ++i) dst[i] = src[i];
    return;
  }
#endif
  std::memcpy(dst, src, n * sizeof(T));
}
inline void stream_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

}  // namespace stardiff::mesh::detail
