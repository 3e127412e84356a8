// bench/ldlt_vs_peers/problem.hpp — one benchmark matrix as every solver receives it.
// A matrix is its lower triangle A, the full pattern (UMFPACK), b = A * 1 and ||A||_inf;
// relres_of(p, x) = ||b - A x||_inf / (||A||_inf ||x||_inf + ||b||_inf), computed here for all.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stardiff/stardiff.hpp"

namespace ldlt_vs_peers {

struct Problem {
  std::string name;
  stardiff::sparse::CscMatrix32 A;      // lower triangle (symmetric_lower)
  std::vector<std::int32_t> fp, fi;     // full pattern CSC (UMFPACK)
  std::vector<double> fx;
  std::vector<double> b;                // A * 1
  double anorm = 0;
  bool laplacian = false;
};

// A Matrix Market file (.mtx or .mtx.gz), named by its file name without the extensions.
Problem matrix_problem(const std::string& path);

// The 7-point 3-D Laplacian on an N^3 grid (6 on the diagonal), named laplace3d_N.
Problem laplacian3d(int N);

// INFINITY where x has the wrong size or a non-finite entry.
double relres_of(const Problem& p, const std::vector<double>& x);

}  // namespace ldlt_vs_peers
