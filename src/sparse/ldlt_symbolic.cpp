// SPDX-License-Identifier: LGPL-2.1-or-later
// src/sparse/ldlt_symbolic.cpp — analysis for the sparse LDL^T solver.
//
// Contract: analyze_pattern() takes the lower-triangle pattern of a symmetric matrix and
// produces (see ldlt_internal.hpp): a fill-reducing ordering (SuiteSparse AMD, METIS
// nested dissection, auto = the smaller predicted nnz(L) of both, user, natural), the
// elimination tree (Liu) and its postorder, column counts (Gilbert-Ng-Peyton, O(nnz(A))
// time, O(n) memory), fundamental supernodes merged by relaxed amalgamation
// (CHOLMOD-like rules scaled by nemin), supernode row structures, flop counts, the task
// plan (small subtrees grouped into one task) and, for a simplicial candidate, the upper
// triangle and symbolic data SuiteSparse LDL needs (its row structures wait for
// complete_row_structures). AMD runs through core/amd_graph. Deterministic for a given
// input, also with analyses in concurrent threads (METIS calls are serialized; see
// metis_perm).
// Data flow (each pass O(nnz(A)), as few as CHOLMOD's): the full graph for the ordering,
// on which every candidate order weighed against another (auto's METIS, the zero-diagonal
// pairing orders and their base) gets its elimination tree and column counts (no permuted
// matrix per candidate); then, for the order kept only, one permuted upper triangle U (the
// supernode row structures' row-subtree walk, the simplicial upper triangle) and its
// sorted transpose (the assembly map, and the counts of an order not weighed: its tree
// from U, half the entries the graph walk reads).
#include <amd.h>
#include <metis.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <numeric>
#include <string>

#include "core/amd_graph.hpp"
#include "sparse/ldlt_internal.hpp"
#include "stardiff/runtime/error.hpp"

namespace stardiff::sparse::detail {
namespace {

// Full symmetric pattern without diagonal (old numbering), CSC, of a matrix that
// check_matrix has accepted.
void full_pattern(const CscMatrix32& A, std::vector<int>& p, std::vector<int>& idx) {
  const int n = A.n_cols;
  const int* cp = A.col_ptr.data();
  const int* ri = A.row_idx.data();
  p.assign(std::size_t(n) + 1, 0);
  int* cnt = p.data() + 1;
  for (int c = 0; c < n; ++c) {
    int own = 0;  // column c's own count in a register (rows r > c go elsewhere)
    for (int k = cp[c]; k < cp[c + 1]; ++k) {
      const int r = ri[k];
      const int off = r != c;
      own += off;
      cnt[r] += off;
    }
    cnt[c] += own;
  }
  for (int c = 0; c < n; ++c) p[c + 1] += p[c];
  idx.resize(std::size_t(p[n]));
  std::vector<int> w(p.begin(), p.end() - 1);
  int* out = idx.data();
  for (int c = 0; c < n; ++c) {
    int wc = w[c];  // rows r > c write to other columns only
    for (int k = cp[c]; k < cp[c + 1]; ++k) {
      const int r = ri[k];
      if (r != c) {
        out[wc++] = r;
        out[w[r]++] = c;
      }
    }
    w[c] = wc;
  }
}

// A permuted triangle of A with the position of each entry in A.values (assembly map).
struct Pattern {
  std::vector<std::int64_t> p;
  std::vector<int> i;
  std::vector<int> src;
};

// Upper triangle of P A P^T (column k: rows i <= k, diagonal included, unsorted) for the
// numbering iperm[old] = new.
void permuted_upper(const CscMatrix32& A, const std::vector<int>& iperm, Pattern& U) {
  const int n = A.n_cols;
  const int* cp = A.col_ptr.data();
  const int* ri = A.row_idx.data();
  U.p.assign(std::size_t(n) + 1, 0);
  for (int c = 0; c < n; ++c) {
    const int jc = iperm[c];
    std::int64_t own = 0;  // entries staying in column jc, counted in a register
    for (int k = cp[c]; k < cp[c + 1]; ++k) {
      const int i = iperm[ri[k]];
      if (i > jc) U.p[i + 1]++;
      else ++own;
    }
    U.p[jc + 1] += own;
  }
  for (int j = 0; j < n; ++j) U.p[j + 1] += U.p[j];
  U.i.resize(std::size_t(U.p[n]));
  U.src.resize(std::size_t(U.p[n]));
  std::vector<std::int64_t> w(U.p.begin(), U.p.end() - 1);
  for (int c = 0; c < n; ++c) {
    const int jc = iperm[c];
    std::int64_t wj = w[jc];  // column jc's cursor in a register (rows i > jc go elsewhere)
    for (int k = cp[c]; k < cp[c + 1]; ++k) {
      const int i = iperm[ri[k]];
      const std::int64_t q = i > jc ? w[i]++ : wj++;
      U.i[q] = std::min(i, jc);
      U.src[q] = k;
    }
    w[jc] = wj;
  }
}

// Transpose of a triangle `in` (any row order): rows sorted in each column of `out`.
void transpose(int n, const Pattern& in, Pattern& out) {
  out.p.assign(std::size_t(n) + 1, 0);
  for (std::size_t q = 0; q < in.i.size(); ++q) out.p[in.i[q] + 1]++;
  for (int j = 0; j < n; ++j) out.p[j + 1] += out.p[j];
  out.i.resize(in.i.size());
  out.src.resize(in.i.size());
  std::vector<std::int64_t> w(out.p.begin(), out.p.end() - 1);
  for (int k = 0; k < n; ++k)
    for (std::int64_t q = in.p[k]; q < in.p[k + 1]; ++q) {
      const std::int64_t t = w[in.i[q]]++;
      out.i[t] = k;
      out.src[t] = in.src[q];
    }
}

// Postorder of a forest whose parents come after their children (an elimination tree):
// each subtree's columns in one contiguous run ending at its root, children's runs in
// increasing child index, roots likewise (the depth-first order visiting children in
// increasing index gives the same). Subtree sizes bottom-up, then runs handed out top-down
// from the right: a node's last (largest) child gets the run just before it.
std::vector<int> postorder(int n, const std::vector<int>& parent) {
  std::vector<int> size(n, 1), end(n), post(n);
  for (int j = 0; j < n; ++j)
    if (parent[j] != -1) size[parent[j]] += size[j];
  int roots = n;  // the roots' runs, from the right
  for (int j = n - 1; j >= 0; --j) {
    int& cursor = parent[j] == -1 ? roots : end[parent[j]];
    const int at = cursor - 1;  // j's position: the end of its run
    post[at] = j;
    end[j] = at;  // j's children's runs end just before it
    cursor -= size[j];
  }
  return post;
}

// The full graph of A without diagonal (old numbering, CSC): what the ordering reads, and
// what each candidate order is counted on (no permuted triangle is built for a candidate).
struct Graph {
  const std::vector<int>& p;
  const std::vector<int>& idx;
};

// A counted order: the final numbering for a fill-reducing order (that order composed with
// a postorder of the elimination tree of P A P^T), its elimination tree and its column
// counts of L (diagonal included).
struct Counted {
  std::vector<int> perm, iperm, parent;  // perm[new] = old, iperm its inverse, etree
  std::vector<std::int64_t> cnt;
};

thread_local std::int64_t t_evaluations = 0;  // candidate orders counted on this thread
// The kept order's upper triangle: one buffer per thread, reused from analysis to analysis
// so that its pages are not faulted in afresh.
thread_local Pattern t_upper;

template <class Rows>
bool col_counts(int n, const std::vector<int>& parent, Rows&& rows, std::vector<std::int64_t>& delta, double bound);

// The final numbering of o (perm, iperm, parent) of n columns from the fill-reducing order
// perm0 (new -> old), the elimination tree parent0 in its numbering and that tree's
// postorder post (ipost: its inverse).
void postordered_numbering(int n, const std::vector<int>& perm0, const std::vector<int>& parent0,
                           const std::vector<int>& post, const std::vector<int>& ipost, Counted& o) {
  o.perm.resize(n);
  o.parent.resize(n);
  o.iperm.resize(n);
  for (int k = 0; k < n; ++k) {
    const int pk = post[k];
    o.perm[k] = perm0[pk];
    o.parent[k] = parent0[pk] == -1 ? -1 : ipost[parent0[pk]];
  }
  for (int k = 0; k < n; ++k) o.iperm[o.perm[k]] = k;
}

// Counts `perm0` (new -> old) into o, reading only the graph: the elimination tree (Liu,
// with path compression; a column k of P A P^T has rows iperm[r] < k for the neighbours r
// of perm0[k]), its postorder, then col_counts. Bitwise the numbering and counts a
// permuted triangle would give (the tree of a matrix is unique, the postorder is a
// function of the tree). Returns false, o.cnt incomplete, where nnz(L) exceeds `bound`
// (see col_counts).
bool count_order(const Graph& g, const std::vector<int>& perm0, Counted& o,
                 double bound = std::numeric_limits<double>::infinity()) {
  const int n = int(perm0.size());
  ++t_evaluations;
  std::vector<int> ip0(n), parent0(n, -1), anc(n, -1);
  for (int k = 0; k < n; ++k) ip0[perm0[k]] = k;
  const int* gp = g.p.data();
  const int* gi = g.idx.data();
  for (int k = 0; k < n; ++k) {
    const int c = perm0[k];
    for (int q = gp[c]; q < gp[c + 1]; ++q)
      for (int i = ip0[gi[q]]; i != -1 && i < k;) {
        const int next = anc[i];
        anc[i] = k;
        if (next == -1) parent0[i] = k;
        i = next;
      }
  }
  const std::vector<int> post = postorder(n, parent0);
  std::vector<int>& ipost = anc;  // reused
  for (int k = 0; k < n; ++k) ipost[post[k]] = k;
  postordered_numbering(n, perm0, parent0, post, ipost, o);
  const std::vector<int>& fp = o.perm;
  const std::vector<int>& fip = o.iperm;
  return col_counts(
      n, o.parent,
      [&](int j, auto&& f) {
        const int c = fp[j];
        for (int q = gp[c]; q < gp[c + 1]; ++q) f(fip[gi[q]]);
      },
      o.cnt, bound);
}

// Elimination tree (Liu, with path compression) from an upper triangle.
void etree(int n, const Pattern& U, std::vector<int>& parent) {
  parent.assign(n, -1);
  std::vector<int> anc(n, -1);
  for (int k = 0; k < n; ++k)
    for (std::int64_t q = U.p[k]; q < U.p[k + 1]; ++q)
      for (int i = U.i[q]; i != -1 && i < k;) {
        const int next = anc[i];
        anc[i] = k;
        if (next == -1) parent[i] = k;
        i = next;
      }
}

// The upper triangle `in` of a matrix, renumbered by the postorder `post` of its
// elimination tree (ipost: the inverse), transposed: the lower triangle in the postordered
// numbering (ancestors stay later), rows sorted.
void postordered_transpose(int n, const Pattern& in, const int* post, const int* ipost, Pattern& out) {
  out.p.assign(std::size_t(n) + 1, 0);
  for (std::size_t q = 0; q < in.i.size(); ++q) out.p[ipost[in.i[q]] + 1]++;
  for (int j = 0; j < n; ++j) out.p[j + 1] += out.p[j];
  out.i.resize(in.i.size());
  out.src.resize(in.i.size());
  std::vector<std::int64_t> w(out.p.begin(), out.p.end() - 1);
  for (int K = 0; K < n; ++K) {
    const int k = post[K];
    for (std::int64_t q = in.p[k]; q < in.p[k + 1]; ++q) {
      const std::int64_t t = w[ipost[in.i[q]]]++;
      out.i[t] = K;
      out.src[t] = in.src[q];
    }
  }
}

// The only order of an analysis (no candidates weighed), numbered and counted on its
// permuted triangle, which the graph walk of count_order would read twice over: U0, the
// upper triangle of P A P^T in the fill-reducing numbering of perm0 (thread scratch, as in
// numbered_triangles), its elimination tree and postorder (post, ipost: final -> fill
// numbering and back), L in the final numbering (postordered_transpose) and the counts on
// L. The same numbering and counts as count_order.
const Pattern& number_on_triangle(const CscMatrix32& A, const std::vector<int>& perm0, Counted& o, Pattern& L,
                                  std::vector<int>& post, std::vector<int>& ipost) {
  const int n = A.n_cols;
  ++t_evaluations;
  std::vector<int> ip0(n), parent0;
  for (int k = 0; k < n; ++k) ip0[perm0[k]] = k;
  Pattern& t_u0 = t_upper;
  permuted_upper(A, ip0, t_u0);
  etree(n, t_u0, parent0);
  post = postorder(n, parent0);
  ipost.resize(n);
  for (int k = 0; k < n; ++k) ipost[post[k]] = k;
  postordered_numbering(n, perm0, parent0, post, ipost, o);
  postordered_transpose(n, t_u0, post.data(), ipost.data(), L);
  col_counts(
      n, o.parent,
      [&](int j, auto&& f) {
        for (std::int64_t q = L.p[j]; q < L.p[j + 1]; ++q) f(L.i[q]);
      },
      o.cnt, std::numeric_limits<double>::infinity());
  return t_u0;
}

// The triangles of the order kept, in its final numbering: U, the upper triangle of
// P A P^T (column k: rows i <= k, diagonal included, in A's column order; thread scratch,
// reused from analysis to analysis so that its pages are not faulted in afresh: valid
// until the next numbered_triangles on this thread), and L, its transpose (column j: rows
// i >= j, sorted). An entry's column in P A P^T is its larger end in the fill-reducing
// numbering and in the postordered one alike (a nonzero's ends are ancestor and
// descendant in the elimination tree), so these equal the triangles of the fill-reducing
// numbering renumbered.
const Pattern& numbered_triangles(const CscMatrix32& A, const std::vector<int>& iperm, Pattern& L) {
  permuted_upper(A, iperm, t_upper);
  transpose(A.n_cols, t_upper, L);
  return t_upper;
}

// Column counts of L (diagonal included) of P A P^T for a postordered numbering and its
// elimination tree; rows(j, f) calls f(i) for the rows of column j (any order; rows
// i <= j are skipped): Gilbert, Ng and Peyton's skeleton-matrix algorithm (row subtrees counted through
// their leaves and least common ancestors), O(nnz(A) alpha(n)) time instead of one step
// per entry of L. Column j's count is final once column j is done (the updates of a column
// come from it and its descendants, which precede it), so the counts of columns 0..j, one
// for each later column, and cnt[j] - d - 1 more for j's ancestor d levels up (a child's
// structure less its parent is in the parent's) bound nnz(L) from below: the count stops,
// returning false (cnt then incomplete), as soon as that bound exceeds `bound`.
template <class Rows>
bool col_counts(int n, const std::vector<int>& parent, Rows&& rows, std::vector<std::int64_t>& delta, double bound) {
  delta.assign(n, 0);
  std::vector<int> first(n, -1), maxfirst(n, -1), prevleaf(n, -1), ancestor(n);
  for (int k = 0; k < n; ++k) {
    int j = k;
    delta[j] = first[j] == -1 ? 1 : 0;  // a leaf of the tree
    for (; j != -1 && first[j] == -1; j = parent[j]) first[j] = k;
  }
  std::iota(ancestor.begin(), ancestor.end(), 0);
  std::int64_t done = 0;  // the counts of the columns finished
  for (int j = 0; j < n; ++j) {
    if (parent[j] != -1) delta[parent[j]]--;  // j is not a root
    rows(j, [&](int i) {  // the rows i > j of column j of P A P^T
      // is j a leaf of the i-th row subtree?
      if (i <= j || first[j] <= maxfirst[i]) return;
      maxfirst[i] = first[j];
      const int jprev = prevleaf[i];
      prevleaf[i] = j;
      delta[j]++;  // A(i, j) is in the skeleton
      if (jprev == -1) return;  // the first leaf: its subtree root is i itself
      int lca = jprev;
      while (lca != ancestor[lca]) lca = ancestor[lca];
      for (int t = jprev; t != lca;) {  // path compression
        const int up = ancestor[t];
        ancestor[t] = lca;
        t = up;
      }
      delta[lca]--;  // the overlap of the two leaves' paths
    });
    if (parent[j] != -1) {
      ancestor[j] = parent[j];
      delta[parent[j]] += delta[j];  // column j's count is final: its parent's sum gets it
    }
    done += delta[j];
    // every column after j counts at least 1, and j's ancestors, none finished, at least
    // cnt[j] - 1, cnt[j] - 2, ... (a child's structure less its parent is in the parent's)
    const std::int64_t c = delta[j];
    if (double(done + (n - 1 - j) + (c - 1) * (c - 2) / 2) > bound) return false;
  }
  return true;
}

std::vector<int> amd_perm(int n, const std::vector<int>& p, const std::vector<int>& idx, std::int64_t* lnz = nullptr,
                          double* flops = nullptr) {
  std::vector<int> perm(n);
  if (lnz) *lnz = -1;
  if (flops) *flops = 0;
  if (p[n] == 0) {  // no off-diagonal entries: any order is exact
    std::iota(perm.begin(), perm.end(), 0);
    return perm;
  }
  double info[AMD_INFO];
  perm = stardiff::detail::amd_graph(n, p.data(), idx.data(), info);
  if (lnz) *lnz = std::int64_t(info[AMD_LNZ]) + n;  // strictly lower count + diagonal
  if (flops) *flops = info[AMD_NDIV] + 2 * info[AMD_NMULTSUBS_LDL];
  return perm;
}

}  // namespace

std::vector<int> metis_perm(int n, const std::vector<int>& p, const std::vector<int>& idx,
                            const std::vector<int>* vwgt) {
  std::vector<int> perm(n), iperm(n);
  if (p[n] == 0) {  // METIS rejects graphs without edges
    std::iota(perm.begin(), perm.end(), 0);
    return perm;
  }
  idx_t nv = n;
  std::vector<idx_t> xadj(p.begin(), p.end()), adj(idx.begin(), idx.end()), mp(n), mip(n), vw;
  if (vwgt) vw.assign(vwgt->begin(), vwgt->end());
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_NUMBERING] = 0;
  // METIS draws its random numbers from the C library's rand() and reseeds it on every
  // call: two calls at once in one process would interleave one shared sequence, each
  // getting an ordering (and factors) other than its serial one. Calls are therefore
  // serialized, each on a private rand() state that leaves the caller's sequence where it
  // was (glibc's rand() is random(); initstate/setstate switch its state array). 128
  // bytes is glibc's default generator (TYPE_3), so METIS's srand(seed) gives the
  // ordering it gives in any program that calls it directly. A program calling rand() in
  // another thread while METIS runs can still perturb it.
  int st;
  {
    static std::mutex metis_mutex;
    static char rand_state[128];
    const std::lock_guard<std::mutex> lock(metis_mutex);
    char* caller_state = initstate(1, rand_state, sizeof rand_state);  // METIS reseeds it
    st = METIS_NodeND(&nv, xadj.data(), adj.data(), vwgt ? vw.data() : nullptr, options, mp.data(),
                      mip.data());  // C: no throw
    setstate(caller_state);
  }
  if (st != METIS_OK) throw Error("Ldlt::analyze: METIS_NodeND failed (status " + std::to_string(st) + ")");
  for (int k = 0; k < n; ++k) perm[k] = int(mp[k]);
  return perm;
}

namespace {

void check_matrix(const CscMatrix32& A) {
  const std::string who = "Ldlt: matrix" + (A.name.empty() ? std::string() : " '" + A.name + "'");
  require(A.n_rows == A.n_cols, who + " is not square (" + std::to_string(A.n_rows) + " x " + std::to_string(A.n_cols) + ")");
  require(A.symmetric_lower, who + " must be symmetric_lower (lower triangle of a symmetric matrix)");
  require(A.n_cols >= 0 && A.col_ptr.size() == std::size_t(A.n_cols) + 1, who + ": col_ptr has the wrong size");
  require(A.col_ptr[0] == 0, who + ": col_ptr[0] != 0");
  const int n = A.n_cols;
  const int* cp = A.col_ptr.data();
  for (int c = 0; c < n; ++c)
    if (!(cp[c + 1] >= cp[c])) throw Error(who + ": col_ptr decreases at column " + std::to_string(c));
  require(A.row_idx.size() == std::size_t(cp[n]) && A.values.size() == std::size_t(cp[n]),
          who + ": row_idx/values sizes differ from col_ptr");
  // one branch per entry; the message is built only on failure
  const int* ri = A.row_idx.data();
  for (int c = 0; c < n; ++c) {
    int prev = c - 1;  // rows must be > prev: in the lower triangle, sorted, unique
    for (int k = cp[c]; k < cp[c + 1]; prev = ri[k++])
      if (!(ri[k] > prev && ri[k] < n)) {
        const int r = ri[k];
        if (!(r >= c && r < n))
          throw Error(who + ": entry (" + std::to_string(r) + ", " + std::to_string(c) + ") is not in the lower triangle");
        throw Error(who + ": rows of column " + std::to_string(c) + " are not sorted and unique");
      }
  }
}

// Rows below each supernode (S.rows; S.row_ptr already holds the counts), from the row
// subtrees: row i of L is the union of the tree paths from each j < i with A(i, j) != 0
// up to i; walking them in the supernodal tree for i = 0, 1, ... appends i to every
// supernode below it whose columns it meets, so each list comes out sorted (CHOLMOD's
// super_symbolic does the same). Supernodes are contiguous in the tree, so a supernode
// met before i's own ends before i. row_sn(i, visit) calls visit(s) with the supernode s
// of each j <= i with A(i, j) != 0.
template <class RowSupernodes>
void fill_rows(Symbolic& S, const std::vector<int>& col2s, RowSupernodes&& row_sn) {
  const int ns = S.ns, n = S.n;
  S.rows.resize(std::size_t(S.row_ptr[ns]));
  std::vector<std::int64_t> w(S.row_ptr.begin(), S.row_ptr.end() - 1);
  std::vector<int> mark(ns, -1);
  for (int i = 0; i < n; ++i) {
    const int si = col2s[i];
    row_sn(i, [&](int s) {
      for (; s != si; s = S.sn_parent[s]) {
        if (s < 0) throw Error("Ldlt::analyze: internal error: a row subtree leaves the supernodal tree");
        if (mark[s] == i) break;  // the rest of the path is marked too
        if (w[s] == S.row_ptr[s + 1]) throw Error("Ldlt::analyze: internal error: supernode row structure overflow");
        mark[s] = i;
        S.rows[w[s]++] = i;
      }
    });
  }
  for (int s = 0; s < ns; ++s)
    if (w[s] != S.row_ptr[s + 1]) throw Error("Ldlt::analyze: internal error: supernode row count mismatch");
  S.rows_filled = true;
}

void column_supernodes(const Symbolic& S, std::vector<int>& col2s) {
  col2s.resize(S.n);
  for (int s = 0; s < S.ns; ++s)
    for (int j = S.sn_first[s]; j < S.sn_first[s + 1]; ++j) col2s[j] = s;
}

}  // namespace

void complete_row_structures(Symbolic& S) {
  if (S.rows_filled) return;
  std::vector<int> col2s;
  column_supernodes(S, col2s);
  fill_rows(S, col2s, [&](int i, auto&& visit) {
    for (int q = S.up[i]; q < S.up[i + 1]; ++q) visit(col2s[S.ui[q]]);
  });
}

// The final numbering for `perm` (o) and its column counts of L.
std::vector<std::int64_t> ordered_counts(const Graph& g, const std::vector<int>& perm, Counted& o) {
  count_order(g, perm, o);
  return std::move(o.cnt);
}

std::int64_t ordering_evaluations() { return t_evaluations; }

std::int64_t predicted_nnz_l(const CscMatrix32& A, const std::vector<int>& perm) {
  check_matrix(A);
  require(perm.size() == std::size_t(A.n_cols), "predicted_nnz_l: perm has the wrong size");
  std::vector<int> p, idx;
  full_pattern(A, p, idx);
  Counted o;
  const auto cnt = ordered_counts(Graph{p, idx}, perm, o);
  return std::accumulate(cnt.begin(), cnt.end(), std::int64_t(0));
}

// ---- the passes of analyze_pattern ----
namespace {

// The fill-reducing order (new -> old) opts asks for, and S.ordering. Where the order
// kept has already been numbered and counted (a winning METIS order under `auto`, a paired
// order, or a base order weighed against a deferred one), o and cnt are filled and the
// function returns true. Every candidate is numbered at most once.
bool choose_ordering(const CscMatrix32& A, const LdltOptions& opts, const std::vector<int>& p,
                     const std::vector<int>& idx, Symbolic& S, std::vector<int>& perm, Counted& o,
                     std::vector<std::int64_t>& cnt) {
  const int n = A.n_cols;
  const Graph g{p, idx};
  bool numbered = false;
  perm.resize(n);
  std::iota(perm.begin(), perm.end(), 0);
  switch (opts.ordering) {
    case Ordering::Natural:
      S.ordering = Ordering::Natural;
      break;
    case Ordering::User: {
      require(opts.user_perm.size() == std::size_t(n), "Ldlt::analyze: user_perm has " +
                                                           std::to_string(opts.user_perm.size()) + " entries, n = " +
                                                           std::to_string(n));
      std::vector<char> seen(n, 0);
      for (int k = 0; k < n; ++k) {
        const int old = opts.user_perm[k];
        if (!(old >= 0 && old < n && !seen[old]))
          throw Error("Ldlt::analyze: user_perm is not a permutation (entry " + std::to_string(k) + " = " +
                      std::to_string(old) + ")");
        seen[old] = 1;
      }
      perm = opts.user_perm;
      S.ordering = Ordering::User;
      break;
    }
    case Ordering::Amd:
      if (n > 0) perm = amd_perm(n, p, idx);
      S.ordering = Ordering::Amd;
      break;
    case Ordering::Metis:
      if (n > 0) perm = metis_perm(n, p, idx);
      S.ordering = Ordering::Metis;
      break;
    case Ordering::Auto: {
      // CHOLMOD's rule: AMD first; METIS nested dissection only when AMD's ordering is
      // costly (nnz(L) >= 5 nnz(A) and flops/nnz(L) >= 500) on a large enough graph;
      // then the smaller predicted nnz(L) wins.
      S.ordering = Ordering::Amd;
      if (n > 0) {
        std::int64_t lnz_amd = 0;
        double amd_flops = 0;
        perm = amd_perm(n, p, idx, &lnz_amd, &amd_flops);
        const double anz = double(A.nnz());
        if (n >= 2000 && double(lnz_amd) >= 5 * anz && amd_flops >= 500 * double(lnz_amd)) {
          // METIS wins with nnz(L) <= lnz_amd - 1: its count stops above that
          Counted om;
          if (count_order(g, metis_perm(n, p, idx), om, double(lnz_amd - 1))) {
            cnt = std::move(om.cnt);
            o = std::move(om);
            numbered = true;
            S.ordering = Ordering::Metis;
          }
        }
      }
      break;
    }
  }
  if (opts.pairing == ZeroDiagonalPairing::None || n == 0 || opts.ordering == Ordering::Natural ||
      opts.ordering == Ordering::User)
    return numbered;
  // Zero-diagonal pairing (reads the values). Rows are sorted (check_matrix): a column's
  // diagonal entry, if stored, comes first.
  std::vector<char> zero(n, 0);
  bool any_zero = false;
  for (int j = 0; j < n; ++j) {
    const int k = A.col_ptr[j];
    zero[j] = k == A.col_ptr[j + 1] || A.row_idx[k] != j || A.values[k] == 0.0;
    any_zero |= zero[j] != 0;
  }
  if (!any_zero) return numbered;
  const std::vector<int> base = numbered ? o.perm : perm;
  if (opts.pairing == ZeroDiagonalPairing::Defer) {
    // only where the order puts a zero-diagonal column before all its neighbours
    std::vector<int> pos(n);
    for (int k = 0; k < n; ++k) pos[base[k]] = k;
    bool needed = false;
    for (int j = 0; j < n && !needed; ++j) {
      if (!zero[j]) continue;
      bool first = true;
      for (int k = p[j]; k < p[j + 1] && first; ++k) first = pos[idx[k]] > pos[j];
      needed = first && p[j + 1] > p[j];
    }
    if (!needed) return numbered;
  }
  const std::vector<int> mate = zero_diagonal_matching(A);
  for (int j = 0; j < n; ++j) S.matched_pairs += mate[j] > j;
  if (S.matched_pairs == 0) return numbered;
  if (opts.pairing == ZeroDiagonalPairing::Compress) {
    cnt = ordered_counts(g, compressed_order(A, p, idx, mate, S.ordering == Ordering::Metis), o);
    S.paired_order = true;
    return true;
  }
  std::int64_t moved = 0;
  const std::vector<int> dperm = deferred_order(A, p, idx, mate, base, &moved);
  // Each candidate is counted once (from the graph); only the winner's triangles are built
  // (analyze_pattern). A paired order is kept where its nnz(L) is at most
  // pairing_fill_limit times the base order's (0: always); its count stops once over that
  // (col_counts).
  const auto sum = [](const std::vector<std::int64_t>& c) { return std::accumulate(c.begin(), c.end(), std::int64_t(0)); };
  const double limit = opts.pairing_fill_limit;
  if (!numbered && limit > 0) {
    cnt = ordered_counts(g, base, o);
    numbered = true;
  }
  const double bound = limit > 0 ? limit * double(sum(cnt)) : std::numeric_limits<double>::infinity();
  Counted od;
  bool keep = count_order(g, dperm, od, bound);
  if (!keep) {  // partners too far down the order: distinct nearer ones instead
    moved = 0;
    keep = count_order(g, partnered_order(A, p, idx, mate, base, &moved), od, bound);
  }
  if (keep) {
    cnt = std::move(od.cnt);
    o = std::move(od);
    S.deferred = moved;
    S.paired_order = true;
    return true;
  }
  return numbered;  // the base order, numbered and counted above
}

// The final numbering (S.perm, S.iperm), the permuted lower triangle of A (column j:
// rows i >= j, sorted, with source positions: what the counts, the supernode row
// structures and the numeric phase all read) and the exact counts of L.
void take_numbering(Counted& o, Pattern& L, const std::vector<std::int64_t>& cnt, Symbolic& S) {
  const int n = S.n;
  S.ap = std::move(L.p);
  S.ai = std::move(L.i);
  S.asrc = std::move(L.src);
  S.exact_lnz = 0;
  S.exact_flops = 0;
  for (int j = 0; j < n; ++j) S.exact_lnz += cnt[j], S.exact_flops += double(cnt[j]) * double(cnt[j]);
  S.perm = std::move(o.perm);
  S.iperm = std::move(o.iperm);
}

// Supernodes (S.sn_first, S.ns): fundamental ones merged by relaxed amalgamation, in one
// scan. A fundamental supernode is a maximal chain of columns j - 1 -> j where j - 1 is j's
// only child and cnt[j - 1] = cnt[j] + 1. Scanning them in postorder, the run of columns
// merged so far (ending at a - 1) joins the next one when that one is its parent (a - 1's
// parent lies in it: contiguous, as CHOLMOD requires) and the rule below (CHOLMOD-like,
// scaled by nemin) accepts the explicit zeros of the merged front.
void amalgamate(const std::vector<int>& parent, const std::vector<std::int64_t>& cnt, int nemin_opt, Symbolic& S) {
  const int n = S.n;
  std::vector<int> nchild(n, 0);
  for (int j = 0; j < n; ++j)
    if (parent[j] != -1) nchild[parent[j]]++;
  S.sn_first.clear();
  const int nemin = std::max(1, nemin_opt);
  int run_first = 0;
  std::int64_t run_real = 0;  // entries of L in the run's columns
  for (int a = 0; a < n;) {
    int b = a;  // the fundamental supernode [a, b]
    std::int64_t real = cnt[a];
    while (b + 1 < n && parent[b] == b + 1 && nchild[b + 1] == 1 && cnt[b] == cnt[b + 1] + 1) real += cnt[++b];
    bool merge = false;
    if (a > 0 && parent[a - 1] >= a && parent[a - 1] <= b) {
      const std::int64_t nm = (a - run_first) + (b - a + 1);
      const std::int64_t fc = nm + cnt[b] - 1;
      const double dense = double(nm) * double(fc) - double(nm) * double(nm - 1) / 2.0;
      const double zeros = dense - double(run_real + real);
      const double frac = dense > 0 ? zeros / dense : 0;
      merge = nm <= std::max(4, nemin / 8) || (nm <= nemin / 2 && frac < 0.8) ||
              (nm <= 3 * nemin / 2 && frac < 0.1) || frac < 0.05;
    }
    if (merge) {
      run_real += real;
    } else {
      if (a > 0) S.sn_first.push_back(run_first);
      run_first = a;
      run_real = real;
    }
    a = b + 1;
  }
  if (n > 0) S.sn_first.push_back(run_first);
  S.ns = int(S.sn_first.size());
  S.sn_first.push_back(n);
}

// The assembly tree (S.sn_parent, S.child_ptr, S.child_list) and the number of rows below
// each supernode (S.row_ptr); col2s: the supernode of each column.
void supernodal_tree(const std::vector<int>& parent, const std::vector<std::int64_t>& cnt,
                     const std::vector<int>& col2s, Symbolic& S) {
  const int ns = S.ns;
  S.sn_parent.assign(ns, -1);
  for (int s = 0; s < ns; ++s) {
    int last = S.sn_first[s + 1] - 1;
    if (parent[last] != -1) S.sn_parent[s] = col2s[parent[last]];
  }
  S.child_ptr.assign(ns + 1, 0);
  for (int s = 0; s < ns; ++s)
    if (S.sn_parent[s] != -1) S.child_ptr[S.sn_parent[s] + 1]++;
  for (int s = 0; s < ns; ++s) S.child_ptr[s + 1] += S.child_ptr[s];
  S.child_list.resize(S.child_ptr[ns]);
  {
    std::vector<int> w(S.child_ptr.begin(), S.child_ptr.end() - 1);
    for (int s = 0; s < ns; ++s)
      if (S.sn_parent[s] != -1) S.child_list[w[S.sn_parent[s]]++] = s;
  }
  S.row_ptr.assign(ns + 1, 0);
  for (int s = 0; s < ns; ++s) S.row_ptr[s + 1] = S.row_ptr[s] + cnt[S.sn_first[s + 1] - 1] - 1;
}

// Flops per supernode (S.sn_flops), the predicted nnz(L) and flops, the tree's depth.
void supernode_counts(Symbolic& S) {
  const int ns = S.ns;
  S.sn_flops.assign(ns, 0);
  S.nnz_l = 0;
  S.flops = 0;
  for (int s = 0; s < ns; ++s) {
    double nc = S.sn_first[s + 1] - S.sn_first[s];
    double nb = double(S.row_ptr[s + 1] - S.row_ptr[s]);
    S.nnz_l += std::int64_t(nc * (nc + 1) / 2 + nc * nb);
    double fl = 0;
    for (int t = 0; t < int(nc); ++t) {
      double c = nc - t + nb;  // column count including the diagonal
      fl += c * c;
    }
    S.sn_flops[s] = fl;
    S.flops += fl;
  }
  std::vector<int> height(ns, 1);
  S.levels = 0;
  for (int s = ns - 1; s >= 0; --s) {  // depth from the root: parents come later
    height[s] = S.sn_parent[s] == -1 ? 1 : height[S.sn_parent[s]] + 1;
    S.levels = std::max<std::int64_t>(S.levels, height[s]);
  }
}

// Simplicial candidate: the upper triangle of P A P^T in the final numbering (U's column
// post[K] renumbered by ipost; rows unsorted, which LDL accepts) and SuiteSparse LDL's
// symbolic data.
void simplicial_upper(const Pattern& U, const std::vector<int>& post, const std::vector<int>& ipost,
                      const std::vector<int>& parent, const std::vector<std::int64_t>& cnt, Symbolic& S) {
  const int n = S.n;
  S.up.resize(std::size_t(n) + 1);
  S.ui.resize(U.i.size());
  S.usrc.resize(U.i.size());
  S.up[0] = 0;
  for (int K = 0, t = 0; K < n; ++K) {
    const int k = post[K];
    for (std::int64_t q = U.p[k]; q < U.p[k + 1]; ++q, ++t) {
      S.ui[t] = ipost[U.i[q]];
      S.usrc[t] = U.src[q];
    }
    S.up[K + 1] = t;
  }
  // LDL's symbolic factorization is what this analysis already has: the elimination tree
  // of P A P^T and its column counts (less the diagonal).
  S.lp.assign(n + 1, 0);
  S.lparent = parent;
  S.lnz.resize(n);
  for (int j = 0; j < n; ++j) S.lnz[j] = int(cnt[j] - 1), S.lp[j + 1] = S.lp[j] + S.lnz[j];
}

// Rows below each supernode (see fill_rows), from U (row i of the final numbering is
// column post[i] of U).
void supernode_rows(const Pattern& U, const std::vector<int>& post, const std::vector<int>& ipost,
                    const std::vector<int>& col2s, Symbolic& S) {
  const int n = S.n;
  std::vector<int> sn_of(n);  // supernode of each column of U
  for (int k = 0; k < n; ++k) sn_of[k] = col2s[ipost[k]];
  fill_rows(S, col2s, [&](int i, auto&& visit) {
    const int k = post[i];
    for (std::int64_t q = U.p[k]; q < U.p[k + 1]; ++q) visit(sn_of[U.i[q]]);
  });
}
}  // namespace

void analyze_pattern(const CscMatrix32& A, const LdltOptions& opts, Symbolic& S) {
  check_matrix(A);
  const int n = A.n_cols;
  S = Symbolic{};
  S.n = n;
  S.a_colptr = A.col_ptr;
  S.a_rowidx = A.row_idx;
  std::vector<int> p, idx;
  full_pattern(A, p, idx);
  Counted o;
  std::vector<std::int64_t> cnt;
  std::vector<int> perm;
  const bool numbered = choose_ordering(A, opts, p, idx, S, perm, o, cnt);
  std::vector<int>().swap(p);  // the graph is no longer needed
  std::vector<int>().swap(idx);
  Pattern L;
  std::vector<int> post, ipost;  // U's column of each final column, and back
  const Pattern* Up = nullptr;
  if (!numbered) {
    Up = &number_on_triangle(A, perm, o, L, post, ipost);
    cnt = std::move(o.cnt);
  } else {
    Up = &numbered_triangles(A, o.iperm, L);
    post.resize(n);
    std::iota(post.begin(), post.end(), 0);
    ipost = post;
  }
  const Pattern& U = *Up;
  const std::vector<int>& parent = o.parent;
  take_numbering(o, L, cnt, S);
  amalgamate(parent, cnt, opts.nemin, S);
  std::vector<int> col2s;
  column_supernodes(S, col2s);
  supernodal_tree(parent, cnt, col2s, S);
  supernode_counts(S);
  S.single_task = S.flops < opts.small_flops || S.ns <= 1;
  // Simplicial candidate (CHOLMOD's supernodal switch: few flops per entry of L means
  // supernodes too small for dense kernels to pay).
  S.simplicial = S.single_task && n > 0 && opts.simplicial_switch > 0 &&
                 S.exact_flops < opts.simplicial_switch * double(S.exact_lnz);
  // A simplicial candidate needs the row structures only if the multifrontal factorization
  // runs: they are filled then, from the upper triangle (complete_row_structures).
  if (S.simplicial) simplicial_upper(U, post, ipost, parent, cnt, S);
  else supernode_rows(U, post, ipost, col2s, S);
  plan_tasks(opts, S);
}

}  // namespace stardiff::sparse::detail
