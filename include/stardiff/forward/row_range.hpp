// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/forward/row_range.hpp — the half-open row range [begin, end) a residual evaluates.
//
// Contract: a residual functor for SparseJacobian has the form
//   template <class S> void operator()(RowRange rows, const S* x, S* f) const;
// It writes f[i] for every i in [rows.begin, rows.end) (global row numbers, f has one
// entry per row of the whole system), may read any entry of x (the whole state), and
// writes nothing else. C++17, STARDIFF_HD: usable from CUDA translation units.
#pragma once
#include <cstdint>

#include "stardiff/forward/dual.hpp"

namespace stardiff::forward {

struct RowRange {
  std::int32_t begin = 0, end = 0;
  STARDIFF_HD std::int32_t size() const { return end - begin; }
};

}  // namespace stardiff::forward
