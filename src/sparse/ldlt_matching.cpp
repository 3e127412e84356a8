// SPDX-License-Identifier: LGPL-2.1-or-later
// src/sparse/ldlt_matching.cpp — zero-diagonal pairing and the compressed-graph ordering
// (LdltOptions::match_zero_diagonal; see ldlt_internal.hpp).
//
// Contract: zero_diagonal_matching pairs each column whose diagonal entry is zero (or
// absent) with a neighbour, on the values scaled symmetrically by one max-norm sweep
// (s_i = 1 / sqrt(max_j |a_ij|)): first with partners of nonzero diagonal, a greedy
// maximum-weight matching (edges by decreasing |s_i a_ij s_j|, ties by index) completed
// by augmenting paths (MC21), so that every zero-diagonal column that can have such a
// partner has one; then the rest greedily among themselves (zero-zero pairs, 2x2 pivots).
// The weights make it an approximation of the maximum-product matching MC64 would
// compute on the same edges, not MC64 itself. A zero-diagonal column without any
// neighbour (structurally singular) stays unpaired. deferred_order keeps a fill-reducing order but moves each
// zero-diagonal column that precedes all its neighbours to right after its partner (a
// zero-zero pair: its first column after the other). compressed_order orders the pairs as one vertex (the graph
// whose vertices are the pairs and the unpaired columns, Duff and Pralet's compression)
// with AMD or METIS (METIS with vertex weights 2 for pairs) and expands it: each pair's
// nonzero-diagonal column first, its zero-diagonal partner right after. Deterministic.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include <amd.h>

#include "core/amd_graph.hpp"
#include "sparse/ldlt_internal.hpp"
#include "stardiff/runtime/error.hpp"

namespace stardiff::sparse::detail {

std::vector<int> zero_diagonal_matching(const CscMatrix32& A) {
  const int n = A.n_cols;
  std::vector<int> mate(n, -1);
  std::vector<double> diag(n, 0.0), rmax(n, 0.0);
  const auto& cp = A.col_ptr;
  const auto& ri = A.row_idx;
  const auto& v = A.values;
  for (int j = 0; j < n; ++j)
    for (int k = cp[j]; k < cp[j + 1]; ++k) {
      const int i = ri[k];
      const double a = std::fabs(v[k]);
      if (i == j) diag[j] = v[k];
      rmax[i] = std::max(rmax[i], a);
      rmax[j] = std::max(rmax[j], a);
    }
  std::vector<double> s(n);
  for (int i = 0; i < n; ++i) s[i] = rmax[i] > 0 ? 1.0 / std::sqrt(rmax[i]) : 1.0;
  struct Edge {
    double w;
    int zero, other;  // zero: the zero-diagonal column
    bool partner_nonzero;
  };
  std::vector<Edge> edges;
  for (int j = 0; j < n; ++j)
    for (int k = cp[j]; k < cp[j + 1]; ++k) {
      const int i = ri[k];
      if (i == j || v[k] == 0.0) continue;
      const double w = std::fabs(v[k]) * s[i] * s[j];
      if (diag[j] == 0.0) edges.push_back({w, j, i, diag[i] != 0.0});
      if (diag[i] == 0.0) edges.push_back({w, i, j, diag[j] != 0.0});
    }
  if (edges.empty()) return mate;
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) {
    if (a.partner_nonzero != b.partner_nonzero) return a.partner_nonzero;
    if (a.w != b.w) return a.w > b.w;
    if (a.zero != b.zero) return a.zero < b.zero;
    return a.other < b.other;
  });
  auto greedy = [&](bool partner_nonzero) {
    for (const Edge& e : edges)
      if (e.partner_nonzero == partner_nonzero && mate[e.zero] < 0 && mate[e.other] < 0) {
        mate[e.zero] = e.other;
        mate[e.other] = e.zero;
      }
  };
  greedy(true);
  // Augmenting paths (MC21-style depth-first search, iterative) on the bipartite graph
  // zero-diagonal columns x nonzero-diagonal neighbours: every zero-diagonal column that
  // can be matched there is. Each search visits a nonzero-diagonal column at most once.
  std::vector<int> nbr_ptr(std::size_t(n) + 1, 0), nbr;  // nonzero-diagonal neighbours of zero ones
  for (const Edge& e : edges)
    if (e.partner_nonzero) ++nbr_ptr[e.zero + 1];
  for (int j = 0; j < n; ++j) nbr_ptr[j + 1] += nbr_ptr[j];
  nbr.resize(std::size_t(nbr_ptr[n]));
  {
    std::vector<int> w(nbr_ptr.begin(), nbr_ptr.end() - 1);
    for (const Edge& e : edges)  // in weight order: heavier partners tried first
      if (e.partner_nonzero) nbr[w[e.zero]++] = e.other;
  }
  std::vector<int> stamp(n, -1), stack_col, stack_pos, via(n, -1);
  for (int z = 0; z < n; ++z) {
    if (diag[z] != 0.0 || mate[z] >= 0 || nbr_ptr[z] == nbr_ptr[z + 1]) continue;
    stack_col.assign(1, z);
    stack_pos.assign(1, nbr_ptr[z]);
    int found = -1;
    while (!stack_col.empty() && found < 0) {
      const int c = stack_col.back();
      int& q = stack_pos.back();
      if (q == nbr_ptr[c + 1]) {
        stack_col.pop_back();
        stack_pos.pop_back();
        continue;
      }
      const int h = nbr[q++];
      if (stamp[h] == z) continue;
      stamp[h] = z;
      via[h] = c;
      const int m = mate[h];
      if (m < 0) {
        found = h;
      } else if (diag[m] == 0.0) {  // h's zero-diagonal mate looks for another partner
        stack_col.push_back(m);
        stack_pos.push_back(nbr_ptr[m]);
      }
    }
    for (int h = found; h >= 0;) {  // flip the path: h <- via[h] <- ...
      const int c = via[h];
      const int prev = mate[c];
      mate[c] = h;
      mate[h] = c;
      h = c == z ? -1 : prev;
    }
  }
  greedy(false);  // zero-diagonal columns left: zero-diagonal partners (2x2 pivots)
  return mate;
}

std::vector<int> deferred_order(const CscMatrix32& A, const std::vector<int>& p, const std::vector<int>& idx,
                                const std::vector<int>& mate, const std::vector<int>& perm, std::int64_t* moved) {
  const int n = A.n_cols;
  std::vector<int> pos(n);
  for (int k = 0; k < n; ++k) pos[perm[k]] = k;
  std::vector<char> zero(n, 1);
  for (int j = 0; j < n; ++j)
    for (int k = A.col_ptr[j]; k < A.col_ptr[j + 1]; ++k)
      if (A.row_idx[k] == j && A.values[k] != 0.0) zero[j] = 0;
  // deferred[i]: the zero-diagonal columns to emit right after i
  std::vector<int> head(n, -1), next(n, -1);
  std::vector<char> defer(n, 0);
  for (int j = 0; j < n; ++j) {
    const int m = mate[j];
    if (!zero[j] || m < 0 || (zero[m] && m < j)) continue;  // a zero-zero pair: its first column moves
    bool first = true;  // j precedes every neighbour: its pivot would be zero
    for (int k = p[j]; k < p[j + 1] && first; ++k) first = pos[idx[k]] > pos[j];
    if (!first) continue;
    defer[j] = 1;
    ++*moved;
    next[j] = head[m];
    head[m] = j;
  }
  std::vector<int> out;
  out.reserve(n);
  for (int k = 0; k < n; ++k) {
    const int v = perm[k];
    if (defer[v]) continue;
    out.push_back(v);
    for (int j = head[v]; j >= 0; j = next[j]) out.push_back(j);
  }
  return out;
}

std::vector<int> compressed_order(const CscMatrix32& A, const std::vector<int>& p, const std::vector<int>& idx,
                                  const std::vector<int>& mate, bool metis) {
  const int n = A.n_cols;
  // group numbering: a pair takes the number of its smaller column's first visit
  std::vector<int> group(n, -1), first, second;
  int ng = 0;
  for (int j = 0; j < n; ++j) {
    if (group[j] >= 0) continue;
    group[j] = ng;
    const int m = mate[j];
    if (m >= 0) group[m] = ng;
    first.push_back(j);
    second.push_back(m);
    ++ng;
  }
  // the zero-diagonal member goes second
  std::vector<char> zero(n, 1);
  for (int j = 0; j < n; ++j)
    for (int k = A.col_ptr[j]; k < A.col_ptr[j + 1]; ++k)
      if (A.row_idx[k] == j && A.values[k] != 0.0) zero[j] = 0;
  for (int g = 0; g < ng; ++g)
    if (second[g] >= 0 && zero[first[g]] && !zero[second[g]]) std::swap(first[g], second[g]);
  // compressed graph (no self loops, no duplicates), CSC
  std::vector<int> gp(std::size_t(ng) + 1, 0), gi;
  gi.reserve(idx.size());
  std::vector<int> mark(ng, -1);
  for (int g = 0; g < ng; ++g) {
    for (int mem : {first[g], second[g]}) {
      if (mem < 0) continue;
      for (int k = p[mem]; k < p[mem + 1]; ++k) {
        const int h = group[idx[k]];
        if (h == g || mark[h] == g) continue;
        mark[h] = g;
        gi.push_back(h);
      }
    }
    gp[g + 1] = int(gi.size());
  }
  std::vector<int> gperm(ng);
  if (gp[ng] == 0) {
    std::iota(gperm.begin(), gperm.end(), 0);
  } else if (!metis) {
    double info[AMD_INFO];
    gperm = stardiff::detail::amd_graph(ng, gp.data(), gi.data(), info);
  } else {
    std::vector<int> vw(ng);
    for (int g = 0; g < ng; ++g) vw[g] = second[g] >= 0 ? 2 : 1;
    gperm = metis_perm(ng, gp, gi, &vw);
  }
  std::vector<int> perm;
  perm.reserve(n);
  for (int g : gperm) {
    perm.push_back(first[g]);
    if (second[g] >= 0) perm.push_back(second[g]);
  }
  return perm;
}

}  // namespace stardiff::sparse::detail
