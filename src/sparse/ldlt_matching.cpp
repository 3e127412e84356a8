// SPDX-License-Identifier: LGPL-2.1-or-later
// src/sparse/ldlt_matching.cpp — zero-diagonal pairing and the compressed-graph ordering
// (LdltOptions::match_zero_diagonal; see ldlt_internal.hpp).
//
// Contract: zero_diagonal_matching pairs each column whose diagonal entry is zero (or
// absent) with a neighbour, on the values scaled symmetrically by one max-norm sweep
// (s_i = 1 / sqrt(max_j |a_ij|)): first with partners of nonzero diagonal, greedily
// (zero-diagonal columns in index order, each taking its heaviest free partner by
// |s_i a_ij s_j|, ties by index) and completed by augmenting paths (MC21 with lookahead),
// so that every zero-diagonal column that can have such a partner has one; then the rest
// greedily among themselves (zero-zero pairs, 2x2 pivots).
// The weights make it an approximation of the maximum-product matching MC64 would
// compute on the same edges, not MC64 itself. A zero-diagonal column without any
// neighbour (structurally singular) stays unpaired. deferred_order keeps a fill-reducing order but moves each
// zero-diagonal column that precedes all its neighbours to right after its partner (a
// zero-zero pair: its first column after the other). partnered_order (where that order's
// partners lie too far down it) gives each zero-diagonal column, in the order, its own
// nonzero-diagonal neighbour: one before it if one is free, else the nearest free one after
// it, which it moves right behind (two columns filled by one pivot alone would leave the
// second a zero pivot); the rest as deferred_order. compressed_order orders the pairs as one vertex (the graph
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
  for (int j = 0; j < n; ++j) {
    double mj = rmax[j];  // column j's maximum in a register (rows i > j are other columns')
    for (int k = cp[j]; k < cp[j + 1]; ++k) {
      const int i = ri[k];
      const double a = std::fabs(v[k]);
      if (i == j) diag[j] = v[k];
      else rmax[i] = std::max(rmax[i], a);
      mj = std::max(mj, a);
    }
    rmax[j] = mj;
  }
  std::vector<double> s(n);
  for (int i = 0; i < n; ++i) s[i] = rmax[i] > 0 ? 1.0 / std::sqrt(rmax[i]) : 1.0;
  // candidate partners of each zero-diagonal column: nonzero-diagonal ones (by decreasing
  // weight |s_i a_ij s_j|, ties by index), then zero-diagonal ones (likewise)
  struct Cand {
    double w;
    int col;
  };
  std::vector<int> cptr(std::size_t(n) + 1, 0), nzcount(n, 0);
  std::vector<Cand> cand;
  for (int j = 0; j < n; ++j)
    for (int k = cp[j]; k < cp[j + 1]; ++k) {
      const int i = ri[k];
      if (i == j || v[k] == 0.0) continue;
      if (diag[j] == 0.0) ++cptr[j + 1];
      if (diag[i] == 0.0) ++cptr[i + 1];
    }
  for (int j = 0; j < n; ++j) cptr[j + 1] += cptr[j];
  if (cptr[n] == 0) return mate;
  cand.resize(std::size_t(cptr[n]));
  {
    std::vector<int> w(cptr.begin(), cptr.end() - 1);
    for (int j = 0; j < n; ++j)
      for (int k = cp[j]; k < cp[j + 1]; ++k) {
        const int i = ri[k];
        if (i == j || v[k] == 0.0) continue;
        const double wt = std::fabs(v[k]) * s[i] * s[j];
        if (diag[j] == 0.0) cand[w[j]++] = {wt, i};
        if (diag[i] == 0.0) cand[w[i]++] = {wt, j};
      }
  }
  for (int j = 0; j < n; ++j) {
    if (cptr[j] == cptr[j + 1]) continue;
    auto* b0 = cand.data() + cptr[j];
    auto* e0 = cand.data() + cptr[j + 1];
    std::sort(b0, e0, [&](const Cand& x, const Cand& y) {
      const bool xn = diag[x.col] != 0.0, yn = diag[y.col] != 0.0;
      if (xn != yn) return xn;
      if (x.w != y.w) return x.w > y.w;
      return x.col < y.col;
    });
    for (auto* c = b0; c != e0 && diag[c->col] != 0.0; ++c) ++nzcount[j];
  }
  // greedy, zero-diagonal columns in index order: the heaviest free nonzero-diagonal partner
  for (int j = 0; j < n; ++j)
    for (int q = cptr[j]; q < cptr[j] + nzcount[j] && mate[j] < 0; ++q)
      if (mate[cand[q].col] < 0) {
        mate[j] = cand[q].col;
        mate[cand[q].col] = j;
      }
  // Augmenting paths (MC21-style depth-first search with lookahead, iterative) on the
  // bipartite graph zero-diagonal columns x nonzero-diagonal neighbours: every
  // zero-diagonal column that can be matched there is. Each search visits a column once.
  std::vector<int> nbr_ptr(std::size_t(n) + 1), nbr(std::size_t(cptr[n]));
  for (int j = 0; j <= n; ++j) nbr_ptr[j] = cptr[j];
  for (std::size_t q = 0; q < cand.size(); ++q) nbr[q] = cand[q].col;
  std::vector<int> nbr_end(n);
  for (int j = 0; j < n; ++j) nbr_end[j] = cptr[j] + nzcount[j];
  std::vector<int> stamp(n, -1), stack_col, stack_pos, via(n, -1), look_pos(nbr_ptr.begin(), nbr_ptr.end() - 1);
  for (int z = 0; z < n; ++z) {
    if (diag[z] != 0.0 || mate[z] >= 0 || nzcount[z] == 0) continue;
    stack_col.assign(1, z);
    stack_pos.assign(1, nbr_ptr[z]);
    int found = -1;
    // lookahead (MC21's cheap assignment): a free neighbour of a column on the path ends
    // the search at once; look_pos keeps each column's scan position across the search
    auto look = [&](int c) {
      for (int& q = look_pos[c]; q < nbr_end[c]; ++q)
        if (mate[nbr[q]] < 0) {
          via[nbr[q]] = c;
          return nbr[q];
        }
      return -1;
    };
    found = look(z);
    while (!stack_col.empty() && found < 0) {
      const int c = stack_col.back();
      int& q = stack_pos.back();
      if (q == nbr_end[c]) {
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
        found = look(m);
        if (found < 0) {
          stack_col.push_back(m);
          stack_pos.push_back(nbr_ptr[m]);
        }
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
  // zero-diagonal columns left: the heaviest free zero-diagonal partner (2x2 pivots)
  for (int j = 0; j < n; ++j)
    for (int q = cptr[j] + nzcount[j]; q < cptr[j + 1] && mate[j] < 0; ++q)
      if (mate[cand[q].col] < 0 && cand[q].col != j) {
        mate[j] = cand[q].col;
        mate[cand[q].col] = j;
      }
  return mate;
}

namespace {
// zero[j]: column j has no nonzero diagonal entry stored. Rows are sorted and unique
// (check_matrix): a column's diagonal entry, if stored, comes first.
void zero_diagonal(const CscMatrix32& A, std::vector<char>& zero) {
  const int n = A.n_cols;
  zero.assign(n, 1);
  for (int j = 0; j < n; ++j) {
    const int k = A.col_ptr[j];
    zero[j] = !(k < A.col_ptr[j + 1] && A.row_idx[k] == j && A.values[k] != 0.0);
  }
}

// pos: the position of each column in the order perm (new -> old); zero[j]: column j has
// no nonzero diagonal entry stored.
void positions_and_zero_diagonal(const CscMatrix32& A, const std::vector<int>& perm, std::vector<int>& pos,
                                 std::vector<char>& zero) {
  const int n = A.n_cols;
  pos.assign(n, 0);
  for (int k = 0; k < n; ++k) pos[perm[k]] = k;
  zero_diagonal(A, zero);
}

// Column j of pattern (p, idx) comes strictly before every entry of its column in the order
// (pos): a zero-diagonal j there would be a zero pivot.
bool precedes_neighbours(const std::vector<int>& p, const std::vector<int>& idx, const std::vector<int>& pos, int j) {
  for (int k = p[j]; k < p[j + 1]; ++k)
    if (pos[idx[k]] <= pos[j]) return false;
  return true;
}

// The order perm (new -> old) with each column j of target[j] >= 0 moved right behind
// column target[j] (which stays; the columns moved behind one target in increasing j);
// *moved counts the moves.
std::vector<int> moved_behind(const std::vector<int>& perm, const std::vector<int>& target, std::int64_t* moved) {
  const int n = static_cast<int>(perm.size());
  std::vector<int> head(n, -1), next(n, -1);
  for (int j = n - 1; j >= 0; --j)
    if (target[j] >= 0) {
      ++*moved;
      next[j] = head[target[j]];
      head[target[j]] = j;
    }
  std::vector<int> out;
  out.reserve(n);
  for (int k = 0; k < n; ++k) {
    const int v = perm[k];
    if (target[v] >= 0) continue;
    out.push_back(v);
    for (int j = head[v]; j >= 0; j = next[j]) out.push_back(j);
  }
  return out;
}
}  // namespace

std::vector<int> deferred_order(const CscMatrix32& A, const std::vector<int>& p, const std::vector<int>& idx,
                                const std::vector<int>& mate, const std::vector<int>& perm, std::int64_t* moved) {
  const int n = A.n_cols;
  std::vector<int> pos;
  std::vector<char> zero;
  positions_and_zero_diagonal(A, perm, pos, zero);
  // target[j]: the column j is emitted right after (its partner; at most one column each)
  std::vector<int> target(n, -1);
  for (int j = 0; j < n; ++j) {
    const int m = mate[j];
    if (!zero[j] || m < 0 || (zero[m] && m < j)) continue;  // a zero-zero pair: its first column moves
    if (precedes_neighbours(p, idx, pos, j)) target[j] = m;
  }
  return moved_behind(perm, target, moved);
}

std::vector<int> partnered_order(const CscMatrix32& A, const std::vector<int>& p, const std::vector<int>& idx,
                                 const std::vector<int>& mate, const std::vector<int>& perm, std::int64_t* moved) {
  const int n = A.n_cols;
  std::vector<int> pos;
  std::vector<char> zero;
  positions_and_zero_diagonal(A, perm, pos, zero);
  // the columns to move: zero-diagonal ones that precede every neighbour
  std::vector<char> first(n, 0);
  for (int j = 0; j < n; ++j) first[j] = zero[j] && p[j] < p[j + 1] && precedes_neighbours(p, idx, pos, j);
  // candidate partners of each zero-diagonal column: neighbours of nonzero diagonal
  // through a nonzero entry, sorted by position in the order
  std::vector<int> cptr(std::size_t(n) + 1, 0);
  for (int c = 0; c < n; ++c)
    for (int k = A.col_ptr[c]; k < A.col_ptr[c + 1]; ++k) {
      const int i = A.row_idx[k];
      if (A.values[k] == 0.0 || zero[i] == zero[c]) continue;
      ++cptr[(zero[c] ? c : i) + 1];
    }
  for (int j = 0; j < n; ++j) cptr[j + 1] += cptr[j];
  std::vector<int> cand(std::size_t(cptr[n]));
  {
    std::vector<int> w(cptr.begin(), cptr.end() - 1);
    for (int c = 0; c < n; ++c)
      for (int k = A.col_ptr[c]; k < A.col_ptr[c + 1]; ++k) {
        const int i = A.row_idx[k];
        if (A.values[k] == 0.0 || zero[i] == zero[c]) continue;
        if (zero[c]) cand[w[c]++] = i;
        else cand[w[i]++] = c;
      }
  }
  for (int j = 0; j < n; ++j)
    std::sort(cand.begin() + cptr[j], cand.begin() + cptr[j + 1], [&](int a, int b) { return pos[a] < pos[b]; });
  // Zero-diagonal columns in the order, each owning a distinct partner: one that
  // precedes it where a free one does (its elimination fills the diagonal entry; no
  // move), else (it precedes every neighbour, or the partners before it are all owned:
  // its pivot would be zero) the earliest free one after it, which it moves right behind,
  // or one whose owner can take another free partner (one step of an augmenting path).
  // For a column preceding every neighbour that partner is its elimination-tree parent:
  // the move adds no fill beyond its own column. Distinct partners: two zero-diagonal
  // columns filled by one pivot alone would leave the second a zero pivot.
  std::vector<int> target(n, -1), owner(n, -1);
  auto free_after = [&](int j, int from) {  // from: the position j sits at
    for (int q = cptr[j]; q < cptr[j + 1]; ++q)
      if (pos[cand[q]] > from && owner[cand[q]] < 0) return cand[q];
    return -1;
  };
  std::vector<char> later(n, 0);
  for (int k = 0; k < n; ++k) {
    const int j = perm[k];
    if (!zero[j] || cptr[j] == cptr[j + 1]) continue;
    int t = -1;
    bool before = false;
    for (int q = cptr[j]; q < cptr[j + 1] && pos[cand[q]] < k; ++q) {
      before = true;
      if (owner[cand[q]] < 0) {
        t = cand[q];
        break;
      }
    }
    if (t >= 0) {  // filled in place
      owner[t] = j;
      continue;
    }
    if (!first[j] && !before) continue;  // filled by zero-diagonal neighbours only: left alone
    t = free_after(j, k);
    for (int q = cptr[j]; q < cptr[j + 1] && t < 0; ++q) {
      if (pos[cand[q]] < k) continue;
      const int o = owner[cand[q]];
      const int t2 = free_after(o, pos[o]);  // o moves (again) behind another free partner
      if (t2 < 0) continue;
      owner[t2] = o;
      target[o] = t2;
      t = cand[q];
    }
    if (t >= 0) {
      owner[t] = j;
      target[j] = t;
    } else if (first[j]) {
      later[j] = 1;
    }
  }
  // Left (every candidate taken, or only zero-diagonal neighbours): behind the partner
  // of the matching where that is free or zero-diagonal (a zero-zero pair: its first
  // column behind the other, which stays in place, for a 2x2 pivot).
  for (int j = 0; j < n; ++j) {
    const int m = mate[j];
    if (!later[j] || m < 0 || target[m] >= 0 || (zero[m] && m < j && later[m])) continue;
    if (!zero[m] && owner[m] >= 0) continue;
    if (!zero[m]) owner[m] = j;
    target[j] = m;
  }
  return moved_behind(perm, target, moved);
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
  std::vector<char> zero;
  zero_diagonal(A, zero);
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
