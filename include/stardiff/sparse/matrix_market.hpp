// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/sparse/matrix_market.hpp — Matrix Market reader (.mtx and .mtx.gz).
//
// Contract: reads `coordinate real|integer|pattern` with `symmetric` or `general`
// symmetry; returns the symmetric matrix as its lower triangle (symmetric_lower = true).
// A general file must be numerically symmetric (|a_ij - a_ji| <= tol * max|a|) or Error
// names the first offending entry. Duplicates are summed; a symmetric file storing an
// entry in both triangles ((i, j) and (j, i)) is an Error naming both lines; missing
// diagonal entries are zeros (added explicitly to the pattern unless
// ReadOptions::insert_diagonal is false); explicit zeros are kept. Malformed input
// (bad header, wrong counts, indices out of range, NaN/Inf, non-square, truncated) throws
// stardiff::Error with "file:line: what is wrong". Pattern entries get value 1.0.
// Details: gzip is recognised by its magic bytes (either overload), not by the name;
// entries above the diagonal of a `symmetric` file are mirrored into the lower triangle;
// a general file keeps the lower triangle of the union pattern with (a_ij + a_ji) / 2;
// a 0 x 0 matrix is an error. Reading is O(file size) (no iostream per token).
#pragma once
#include <istream>
#include <string>

#include "stardiff/sparse/csc_matrix.hpp"

namespace stardiff::sparse {

struct ReadOptions {
  double symmetry_tol = 1e-12;  // relative to max |a_ij|, for general files
  bool insert_diagonal = true;  // false: the pattern the file stores (absent diagonal entries stay absent)
};

CscMatrix32 read_matrix_market(const std::string& path, const ReadOptions& opts = {});
// The same from a stream; `name` is used in messages.
CscMatrix32 read_matrix_market(std::istream& in, const std::string& name, const ReadOptions& opts = {});

}  // namespace stardiff::sparse
