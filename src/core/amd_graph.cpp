// src/core/amd_graph.cpp — see amd_graph.hpp.
#include "core/amd_graph.hpp"

#include <amd.h>

#include <algorithm>
#include <numeric>

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
  const int iwlen = nz + nz / 5 + 2 * n;
  std::vector<int> pe(p, p + n), len(n), iw(iwlen), nv(n), next(n), head(n), elen(n), degree(n), w(n);
  for (int j = 0; j < n; ++j) len[j] = p[j + 1] - p[j];
  std::copy(idx, idx + nz, iw.begin());
  amd_2(n, pe.data(), iw.data(), len.data(), iwlen, nz, nv.data(), next.data(), perm.data(), head.data(), elen.data(),
        degree.data(), w.data(), control, inf);
  return perm;
}

}  // namespace stardiff::detail
