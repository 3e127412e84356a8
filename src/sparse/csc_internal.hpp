// SPDX-License-Identifier: LGPL-2.1-or-later
// src/sparse/csc_internal.hpp — from_triplets with the caller's report of an entry given in
// both triangles (the Matrix Market reader names file lines instead of triplet positions).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "stardiff/sparse/csc_matrix.hpp"

namespace stardiff::sparse::detail {

// Called with the triplet positions (first, second) of one off-diagonal entry given in both
// triangles, first in input order among that entry's triplets; expected to throw.
using BothTriangles = std::function<void(std::size_t first, std::size_t second)>;

// from_triplets (csc_matrix.hpp), with both_triangles in place of its own error.
CscMatrix32 triplets_to_csc(std::int32_t n_rows, std::int32_t n_cols, const std::vector<std::int32_t>& rows,
                            const std::vector<std::int32_t>& cols, const std::vector<double>& vals,
                            bool symmetric_lower, const BothTriangles& both_triangles);

}  // namespace stardiff::sparse::detail
