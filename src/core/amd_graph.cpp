// SPDX-License-Identifier: LGPL-2.1-or-later
// src/core/amd_graph.cpp — see amd_graph.hpp.
#include "core/amd_graph.hpp"

#include <amd.h>

#include <algorithm>
#include <numeric>
#include <vector>

namespace stardiff::detail {

std::vector<int> amd_graph(int n, const int* p, const int* idx, double* info) {
  std::vector<int> perm(n);
  double local[AMD_INFO];
  double* inf = info ? info : local;
  std::fill(inf, inf + AMD_INFO, 0.0);
  if (n == 0) return perm;
  const int nz = p[n];
  if (nz == 0) {  // no edges: any order is exact
    std::iota(perm.begin(), perm.end(), 0);
    return perm;
  }
  double control[AMD_CONTROL];
  amd_defaults(control);
  // One block for the copy and amd_2's eight n-vectors (AMD writes before it reads),
  // kept by the thread from call to call so that its pages are not faulted in afresh.
  const std::size_t iwlen = std::size_t(nz) + std::size_t(nz) / 5 + 2 * std::size_t(n);
  thread_local std::vector<int> block;
  if (block.size() < iwlen + 8 * std::size_t(n)) block.resize(iwlen + 8 * std::size_t(n));
  int* iw = block.data();
  int* v = iw + iwlen;
  int *pe = v, *len = v + n, *nv = v + 2 * n, *next = v + 3 * n, *head = v + 4 * n, *elen = v + 5 * n,
      *degree = v + 6 * n, *w = v + 7 * n;
  for (int j = 0; j < n; ++j) pe[j] = p[j], len[j] = p[j + 1] - p[j];
  std::copy(idx, idx + nz, iw);
  amd_2(n, pe, iw, len, int(iwlen), nz, nv, next, perm.data(), head, elen, degree, w, control, inf);
  return perm;
}

}  // namespace stardiff::detail
