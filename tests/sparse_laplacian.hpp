// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/sparse_laplacian.hpp — the 7-point Laplacian on a k^3 grid (lower triangle, CSC):
// Dirichlet (diagonal 6, SPD) or Neumann (diagonal = degree, one zero eigenvalue).
#pragma once
#include <vector>

#include "stardiff/sparse/csc_matrix.hpp"

namespace stardiff::testing {
inline sparse::CscMatrix32 laplacian3d(int k, bool neumann = false) {
  const int n = k * k * k;
  std::vector<int> r, c;
  std::vector<double> v, deg(n, 0.0);
  for (int z = 0; z < k; ++z)
    for (int y = 0; y < k; ++y)
      for (int x = 0; x < k; ++x) {
        const int i = x + k * (y + k * z);
        for (int s : {1, k, k * k}) {
          const bool ok = (s == 1 && x + 1 < k) || (s == k && y + 1 < k) || (s == k * k && z + 1 < k);
          if (!ok) continue;
          r.push_back(i + s), c.push_back(i), v.push_back(-1.0);
          deg[i] += 1, deg[i + s] += 1;
        }
      }
  for (int i = 0; i < n; ++i) r.push_back(i), c.push_back(i), v.push_back(neumann ? deg[i] : 6.0);
  return sparse::from_triplets(n, n, r, c, v, true);
}
}  // namespace stardiff::testing
