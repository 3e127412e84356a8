// SPDX-License-Identifier: LGPL-2.1-or-later
// bench/ldlt_vs_peers/problem.hpp — one benchmark matrix as every solver receives it.
// A matrix is its lower triangle A as stardiff gets it (the reader's explicit zeros where
// the file has no diagonal entry), the file's own pattern for the peers (peer_matrix(),
// and its full pattern for UMFPACK: a peer decides from the structure how to treat a zero
// diagonal), b = A * 1 and ||A||_inf;
// relres_of(p, x) = ||b - A x||_inf / (||A||_inf ||x||_inf + ||b||_inf), computed here for all.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stardiff/stardiff.hpp"

namespace ldlt_vs_peers {

struct Problem {
  std::string name;
  stardiff::sparse::CscMatrix32 A;      // lower triangle (symmetric_lower), what stardiff solves
  stardiff::sparse::CscMatrix32 A_file;  // the file's pattern where A has inserted diagonal zeros, else empty
  std::int64_t inserted_diagonal = 0;   // diagonal entries A has and the file does not
  std::vector<std::int32_t> fp, fi;     // full pattern CSC of peer_matrix() (UMFPACK)
  std::vector<double> fx;
  std::vector<double> b;                // A * 1
  double anorm = 0;
  bool laplacian = false;
  // The lower triangle the peers get: the file's own pattern (same values as A).
  const stardiff::sparse::CscMatrix32& peer_matrix() const { return inserted_diagonal ? A_file : A; }
};

// A Matrix Market file (.mtx or .mtx.gz), named by its file name without the extensions.
Problem matrix_problem(const std::string& path);

// The 7-point 3-D Laplacian on an N^3 grid (6 on the diagonal), named laplace3d_N.
Problem laplacian3d(int N);

// INFINITY where x has the wrong size or a non-finite entry.
double relres_of(const Problem& p, const std::vector<double>& x);

}  // namespace ldlt_vs_peers
