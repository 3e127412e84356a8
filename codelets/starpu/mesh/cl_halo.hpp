// SPDX-License-Identifier: LGPL-2.1-or-later
// codelets/starpu/mesh/cl_halo.hpp — codelets and insertion functions for tile halos
// and checkpoint copies (buffers are the tiles' vector handles).
//
//   insert_halo_exchange(exec, lo, hi, n_lo, row_bytes, d_m, d_p)     lo, hi: RW
//   insert_halo_reverse(exec, lo, hi, n_lo, row_len, elemsize, d_m, d_p)  lo, hi: RW
//       (elemsize 8: double, 4: float)
//   insert_rows_copy(exec, src, src_off, dst, dst_off, bytes, dst_whole)  src: R,
//       dst: W when dst_whole (the copy covers dst entirely) else RW
//   insert_runs_copy(exec, tile, packed, runs, to_packed)   column runs of a tile buffer:
//       to_packed: packed (W, whole) <- the runs of tile (R), in order; else the runs of
//       tile (RW) <- packed (R). runs: first byte offset in the tile, run bytes, counts and
//       byte strides of two nested repeat axes (n1 fastest); packed holds n1*n2 runs back to back
//   insert_rows_take(exec, src, off, strip, bytes)   src: RW (its bytes at off moved
//       into strip: W, then zeroed in src)
//   insert_rows_add(exec, dst, off, strip, bytes, elemsize)  dst: RW (its elements at off
//       += strip's: R; 8 or 4)
//   insert_fill_zero(exec, h)                                          h: W, all bytes 0
//   insert_add_into(exec, dst, src, elemsize)   dst: RW += src: R (same length; 8 or 4)
#pragma once
#include <cstddef>
#include <string>

#include "stardiff/runtime/executor.hpp"

namespace stardiff::codelets {
extern const Codelet cl_halo_exchange;
extern const Codelet cl_halo_reverse;
extern const Codelet cl_rows_copy;
extern const Codelet cl_runs_copy;
extern const Codelet cl_rows_take;
extern const Codelet cl_rows_add;
extern const Codelet cl_fill_zero;
// Byte runs of a tile buffer: run `a + b` starts at off + a*stride1 + b*stride2 (a < n1, b < n2).
struct Runs {
  std::size_t off = 0, run = 0, n1 = 1, stride1 = 0, n2 = 1, stride2 = 0;
  std::size_t bytes() const { return run * n1 * n2; }
};
extern const Codelet cl_add_into;
void insert_halo_exchange(Executor& exec, Handle& lo, Handle& hi, std::size_t n_lo, std::size_t row_bytes,
                          int d_m, int d_p, const std::string& name);
void insert_halo_reverse(Executor& exec, Handle& lo, Handle& hi, std::size_t n_lo, std::size_t row_len,
                         std::size_t elemsize, int d_m, int d_p, const std::string& name);
void insert_rows_copy(Executor& exec, Handle& src, std::size_t src_off, Handle& dst, std::size_t dst_off,
                      std::size_t bytes, bool dst_whole, const std::string& name);
void insert_runs_copy(Executor& exec, Handle& tile, Handle& packed, const Runs& runs, bool to_packed,
                      const std::string& name);
void insert_rows_take(Executor& exec, Handle& src, std::size_t off, Handle& strip, std::size_t bytes,
                      const std::string& name);
void insert_rows_add(Executor& exec, Handle& dst, std::size_t off, Handle& strip, std::size_t bytes,
                     std::size_t elemsize, const std::string& name);
void insert_fill_zero(Executor& exec, Handle& h, const std::string& name);
void insert_add_into(Executor& exec, Handle& dst, Handle& src, std::size_t elemsize, const std::string& name);
}  // namespace stardiff::codelets
