// SPDX-License-Identifier: LGPL-2.1-or-later
// src/forward/coloring.cpp — pattern checks, distance-2 column colouring, seed matrix,
// decompression (contracts in include/stardiff/forward/coloring.hpp).
//
// The colouring works on a compressed pattern: classes of columns with equal rows (Va and
// Vm of a PQ bus) and one row group per distinct row (P and Q of a bus) — detected by
// hashing (color_columns) or given (color_compressed). From it one class graph (each
// class's closed neighbourhood, as classes) is built; natural order colours single
// columns by index, the other orders (largest-first, smallest-last, incidence-degree)
// order classes and colour each class's members together, greedily with a stamped
// forbidden-colour array.
#include <algorithm>
#include <numeric>
#include <string>
#include <utility>

#include "stardiff/forward/coloring.hpp"
#include "stardiff/runtime/error.hpp"

namespace stardiff::forward {

void validate_pattern(const SparsityPattern& p, const std::string& what) {
  if (!(p.n_rows >= 0 && p.n_cols >= 0)) throw Error(what + ": negative dimensions " + std::to_string(p.n_rows) + " x " + std::to_string(p.n_cols));
  if (!(p.col_ptr.size() == static_cast<std::size_t>(p.n_cols) + 1)) throw Error(what + ": col_ptr has " + std::to_string(p.col_ptr.size()) + " entries, expected n_cols + 1 = " +
              std::to_string(std::size_t(p.n_cols) + 1));
  if (!(p.col_ptr[0] == 0)) throw Error(what + ": col_ptr[0] = " + std::to_string(p.col_ptr[0]) + ", expected 0");
  for (std::int32_t j = 0; j < p.n_cols; ++j)
    if (!(p.col_ptr[j + 1] >= p.col_ptr[j])) throw Error(what + ": col_ptr decreases at column " + std::to_string(j));
  if (!(p.row_idx.size() == static_cast<std::size_t>(p.col_ptr.back()))) throw Error(what + ": row_idx has " + std::to_string(p.row_idx.size()) + " entries, col_ptr[n_cols] = " +
              std::to_string(p.col_ptr.back()));
  for (std::int32_t j = 0; j < p.n_cols; ++j) {
    for (std::int32_t e = p.col_ptr[j]; e < p.col_ptr[j + 1]; ++e) {
      const std::int32_t i = p.row_idx[e];
      if (!(i >= 0 && i < p.n_rows)) throw Error(what + ": row index " + std::to_string(i) + " in column " +
                                          std::to_string(j) + " is outside [0, " + std::to_string(p.n_rows) + ")");
      if (!(e == p.col_ptr[j] || p.row_idx[e - 1] < i)) throw Error(what + ": rows of column " + std::to_string(j) + " are not strictly increasing (row " +
                  std::to_string(i) + ")");
    }
  }
}

SparsityPattern pattern_from_coo(std::int32_t n_rows, std::int32_t n_cols, const std::vector<std::int32_t>& rows,
                                 const std::vector<std::int32_t>& cols) {
  if (!(n_rows >= 0 && n_cols >= 0)) throw Error("pattern_from_coo: negative dimensions");
  if (!(rows.size() == cols.size())) throw Error("pattern_from_coo: rows has " + std::to_string(rows.size()) +
                                          " entries, cols " + std::to_string(cols.size()));
  SparsityPattern p;
  p.n_rows = n_rows;
  p.n_cols = n_cols;
  p.col_ptr.assign(n_cols + 1, 0);
  for (std::size_t e = 0; e < rows.size(); ++e) {
    if (!(rows[e] >= 0 && rows[e] < n_rows)) throw Error("pattern_from_coo: entry " + std::to_string(e) + " has row " +
                                                  std::to_string(rows[e]) + " outside [0, " + std::to_string(n_rows) + ")");
    if (!(cols[e] >= 0 && cols[e] < n_cols)) throw Error("pattern_from_coo: entry " + std::to_string(e) + " has column " +
                                                  std::to_string(cols[e]) + " outside [0, " + std::to_string(n_cols) + ")");
    ++p.col_ptr[cols[e] + 1];
  }
  for (std::int32_t j = 0; j < n_cols; ++j) p.col_ptr[j + 1] += p.col_ptr[j];
  std::vector<std::int32_t> fill(p.col_ptr.begin(), p.col_ptr.end() - 1), tmp(rows.size());
  for (std::size_t e = 0; e < rows.size(); ++e) tmp[fill[cols[e]]++] = rows[e];
  // sort and deduplicate each column, compacting in place
  std::int32_t w = 0;
  for (std::int32_t j = 0; j < n_cols; ++j) {
    auto b = tmp.begin() + p.col_ptr[j], en = tmp.begin() + p.col_ptr[j + 1];
    std::sort(b, en);
    auto last = std::unique(b, en);
    p.col_ptr[j] = w;
    for (auto it = b; it != last; ++it) tmp[w++] = *it;
  }
  p.col_ptr[n_cols] = w;
  tmp.resize(w);
  p.row_idx = std::move(tmp);
  return p;
}

const char* to_string(ColorOrder o) {
  switch (o) {
    case ColorOrder::Natural: return "natural";
    case ColorOrder::LargestFirst: return "lf";
    case ColorOrder::SmallestLast: return "sl";
    case ColorOrder::IncidenceDegree: return "id";
    case ColorOrder::Best: return "best";
  }
  return "?";
}

ColorOrder color_order_from_string(const std::string& s) {
  if (s == "natural") return ColorOrder::Natural;
  if (s == "lf" || s == "largest-first" || s == "largest_first") return ColorOrder::LargestFirst;
  if (s == "sl" || s == "smallest-last" || s == "smallest_last") return ColorOrder::SmallestLast;
  if (s == "id" || s == "incidence-degree" || s == "incidence_degree") return ColorOrder::IncidenceDegree;
  if (s == "best") return ColorOrder::Best;
  throw Error("colour order '" + s + "' is not one of natural, lf, sl, id, best");
}

namespace {

// Column intersection graph, stored per class of indistinguishable columns (the same rows:
// e.g. Va and Vm of a PQ bus). Members of a class have the same closed neighbourhood —
// a clique plus the same outside neighbours — kept once per class as a list of classes
// (the class itself included; the class of empty columns has no neighbours at all).
struct Graph {
  std::vector<std::int32_t> cls;            // vertex -> class
  std::vector<std::int32_t> mptr, members;  // class -> its vertices (increasing)
  std::vector<std::int32_t> ptr, adj;       // class -> classes of its closed neighbourhood
  std::vector<std::int32_t> closed_size;    // class -> vertices in its closed neighbourhood
  std::int32_t n() const { return static_cast<std::int32_t>(cls.size()); }
  std::int32_t classes() const { return static_cast<std::int32_t>(closed_size.size()); }
  std::int32_t size(std::int32_t c) const { return mptr[c + 1] - mptr[c]; }
  std::int32_t degree(std::int32_t c) const { return std::max(closed_size[c] - 1, 0); }  // of each member
};

// Inverts lists (counting sort): list k (k < nlists) holds targets in [0, m) between
// list(k).first and list(k).second; on return, target t's entries out[ptr[t] .. ptr[t+1])
// are the lists that hold it, increasing.
template <class List>
void invert(std::int32_t nlists, std::int32_t m, List list, std::vector<std::int32_t>& ptr,
            std::vector<std::int32_t>& out) {
  ptr.assign(m + 1, 0);
  for (std::int32_t k = 0; k < nlists; ++k)
    for (auto [b, e] = list(k); b != e; ++b) ++ptr[*b + 1];
  for (std::int32_t t = 0; t < m; ++t) ptr[t + 1] += ptr[t];
  out.resize(ptr[m]);
  std::vector<std::int32_t> fill(ptr.begin(), ptr.end() - 1);
  for (std::int32_t k = 0; k < nlists; ++k)
    for (auto [b, e] = list(k); b != e; ++b) out[fill[*b]++] = k;
}

// Row-wise (CSR) copy of the pattern's structure (columns increasing within a row).
void transpose(const SparsityPattern& p, std::vector<std::int32_t>& rptr, std::vector<std::int32_t>& cidx) {
  const std::int32_t* ri = p.row_idx.data();
  invert(p.n_cols, p.n_rows, [&](std::int32_t j) { return std::pair(ri + p.col_ptr[j], ri + p.col_ptr[j + 1]); },
         rptr, cidx);
}

std::uint64_t hash_list(const std::int32_t* b, const std::int32_t* e) {
  std::uint64_t h = 1469598103934665603ull ^ static_cast<std::uint64_t>(e - b);
  for (; b != e; ++b) h = (h ^ static_cast<std::uint32_t>(*b)) * 1099511628211ull;
  return h ^ (h >> 29);
}

// Classes of equal integer lists (list k = data[ptr[k] .. ptr[k+1])): class per list and
// the first member of each class, classes numbered by first appearance. One open-
// addressing table of class ids keyed by the list's hash: O(total length), no allocation
// per list.
void list_classes(const std::vector<std::int32_t>& ptr, const std::vector<std::int32_t>& data,
                  std::vector<std::int32_t>& cls, std::vector<std::int32_t>& rep) {
  const std::int32_t n = static_cast<std::int32_t>(ptr.size()) - 1;
  cls.assign(n, -1);
  rep.clear();
  std::size_t size = 16;
  while (size < 2 * static_cast<std::size_t>(n)) size *= 2;
  const std::size_t mask = size - 1;
  std::vector<std::int32_t> table(size, -1);
  std::vector<std::uint64_t> class_hash;
  for (std::int32_t k = 0; k < n; ++k) {
    const std::int32_t *b = data.data() + ptr[k], *e = data.data() + ptr[k + 1];
    const std::uint64_t h = hash_list(b, e);
    for (std::size_t slot = h & mask;; slot = (slot + 1) & mask) {
      const std::int32_t c = table[slot];
      if (c < 0) {
        cls[k] = table[slot] = static_cast<std::int32_t>(rep.size());
        rep.push_back(k);
        class_hash.push_back(h);
        break;
      }
      const std::int32_t r = rep[c];
      if (class_hash[c] == h && ptr[r + 1] - ptr[r] == e - b && std::equal(b, e, data.data() + ptr[r])) {
        cls[k] = c;
        break;
      }
    }
  }
}

// The compressed form of a pattern: classes of columns with equal row sets, and one row
// group per set of equal rows (its column classes).
CompressedPattern compress(const SparsityPattern& p) {
  std::vector<std::int32_t> rptr, cidx;
  transpose(p, rptr, cidx);
  std::vector<std::int32_t> rcls, rrep;
  list_classes(rptr, cidx, rcls, rrep);
  const std::int32_t nrc = static_cast<std::int32_t>(rrep.size());
  // per column: its row groups, increasing (the representative rows, inverted)
  std::vector<std::int32_t> kptr, kdat;
  const std::int32_t* ci = cidx.data();
  invert(nrc, p.n_cols, [&](std::int32_t rc) { return std::pair(ci + rptr[rrep[rc]], ci + rptr[rrep[rc] + 1]); },
         kptr, kdat);
  std::vector<std::int32_t> ccls, crep;
  list_classes(kptr, kdat, ccls, crep);
  const std::int32_t ncc = static_cast<std::int32_t>(crep.size());
  CompressedPattern cp;
  cp.n_cols = p.n_cols;
  invert(p.n_cols, ncc, [&](std::int32_t j) { return std::pair(&ccls[j], &ccls[j] + 1); }, cp.class_ptr,
         cp.class_cols);
  std::vector<std::int32_t> mark(ncc, -1);
  cp.group_ptr.assign(nrc + 1, 0);
  cp.group_classes.reserve(p.nnz());
  for (std::int32_t rc = 0; rc < nrc; ++rc) {
    for (std::int32_t f = rptr[rrep[rc]]; f < rptr[rrep[rc] + 1]; ++f) {
      const std::int32_t cc = ccls[cidx[f]];
      if (mark[cc] != rc) mark[cc] = rc, cp.group_classes.push_back(cc);
    }
    cp.group_ptr[rc + 1] = static_cast<std::int32_t>(cp.group_classes.size());
  }
  return cp;
}

void validate_compressed(const CompressedPattern& cp) {
  const std::int32_t n = cp.n_cols;
  if (!(n >= 0)) throw Error("compressed pattern: negative n_cols");
  if (cp.class_ptr.empty() || cp.class_ptr[0] != 0 || cp.class_ptr.back() != n ||
      cp.class_cols.size() != static_cast<std::size_t>(n))
    throw Error("compressed pattern: class_ptr/class_cols do not partition " + std::to_string(n) + " columns");
  const std::int32_t ncc = static_cast<std::int32_t>(cp.class_ptr.size()) - 1;
  std::vector<char> seen(n, 0);
  for (std::int32_t c = 0; c < ncc; ++c) {
    if (!(cp.class_ptr[c + 1] > cp.class_ptr[c])) throw Error("compressed pattern: class " + std::to_string(c) + " is empty");
    for (std::int32_t m = cp.class_ptr[c]; m < cp.class_ptr[c + 1]; ++m) {
      const std::int32_t j = cp.class_cols[m];
      if (!(j >= 0 && j < n) || seen[j])
        throw Error("compressed pattern: column " + std::to_string(j) + " of class " + std::to_string(c) +
                    " is out of range or in two classes");
      if (m > cp.class_ptr[c] && !(cp.class_cols[m - 1] < j))
        throw Error("compressed pattern: columns of class " + std::to_string(c) + " are not increasing");
      seen[j] = 1;
    }
  }
  if (cp.group_ptr.empty() || cp.group_ptr[0] != 0 || cp.group_ptr.back() != static_cast<std::int32_t>(cp.group_classes.size()))
    throw Error("compressed pattern: group_ptr does not match group_classes");
  const std::int32_t ng = static_cast<std::int32_t>(cp.group_ptr.size()) - 1;
  std::vector<std::int32_t> mark(ncc, -1);
  for (std::int32_t g = 0; g < ng; ++g) {
    if (!(cp.group_ptr[g + 1] >= cp.group_ptr[g])) throw Error("compressed pattern: group_ptr decreases at group " + std::to_string(g));
    for (std::int32_t f = cp.group_ptr[g]; f < cp.group_ptr[g + 1]; ++f) {
      const std::int32_t c = cp.group_classes[f];
      if (!(c >= 0 && c < ncc) || mark[c] == g)
        throw Error("compressed pattern: row group " + std::to_string(g) + " lists class " + std::to_string(c) +
                    " out of range or twice");
      mark[c] = g;
    }
  }
}

Graph class_graph(const CompressedPattern& cp) {
  Graph g;
  const std::int32_t n = cp.n_cols, ncc = static_cast<std::int32_t>(cp.class_ptr.size()) - 1;
  const std::int32_t ng = static_cast<std::int32_t>(cp.group_ptr.size()) - 1;
  g.mptr = cp.class_ptr;
  g.members = cp.class_cols;
  g.cls.resize(n);
  for (std::int32_t c = 0; c < ncc; ++c)
    for (std::int32_t m = g.mptr[c]; m < g.mptr[c + 1]; ++m) g.cls[g.members[m]] = c;
  // per class: its row groups
  std::vector<std::int32_t> kptr, kdat;
  const std::int32_t* gc = cp.group_classes.data();
  invert(ng, ncc, [&](std::int32_t q) { return std::pair(gc + cp.group_ptr[q], gc + cp.group_ptr[q + 1]); }, kptr,
         kdat);
  // per class: the classes sharing a row group with it (a class in no row group — an empty
  // column — is alone in its neighbourhood)
  std::vector<std::int32_t> mark(ncc, -1);
  g.ptr.assign(ncc + 1, 0);
  g.closed_size.assign(ncc, 0);
  std::size_t top = 0;
  g.adj.resize(cp.group_classes.size() * 4 + static_cast<std::size_t>(ncc) + 16);
  const std::int32_t* gptr = cp.group_ptr.data();
  const std::int32_t* gcls = cp.group_classes.data();
  const std::int32_t* mptr = g.mptr.data();
  std::int32_t* mk = mark.data();
  for (std::int32_t c = 0; c < ncc; ++c) {
    std::size_t bound = 1;  // room this class may need at most
    for (std::int32_t q = kptr[c]; q < kptr[c + 1]; ++q) bound += gptr[kdat[q] + 1] - gptr[kdat[q]];
    if (top + bound > g.adj.size()) g.adj.resize(std::max(2 * g.adj.size(), top + bound));
    std::int32_t* out = g.adj.data() + top;
    std::int32_t* const first = out;
    std::int32_t size = 0;
    if (kptr[c + 1] > kptr[c]) {  // members share a row: a clique (empty columns do not)
      mk[c] = c;
      *out++ = c;
      size += mptr[c + 1] - mptr[c];
    }
    for (std::int32_t q = kptr[c]; q < kptr[c + 1]; ++q) {
      const std::int32_t* f = gcls + gptr[kdat[q]];
      const std::int32_t* const fe = gcls + gptr[kdat[q] + 1];
      for (; f != fe; ++f) {
        const std::int32_t cc = *f;
        if (mk[cc] == c) continue;
        mk[cc] = c;
        *out++ = cc;
        size += mptr[cc + 1] - mptr[cc];
      }
    }
    top += static_cast<std::size_t>(out - first);
    g.ptr[c + 1] = static_cast<std::int32_t>(top);
    g.closed_size[c] = size;
  }
  g.adj.resize(top);
  return g;
}

// Classes by their first column (the order ties are broken in).
std::vector<std::int32_t> classes_by_first_column(const Graph& g) {
  std::vector<std::int32_t> order;
  order.reserve(g.classes());
  std::vector<char> seen(g.classes(), 0);
  for (std::int32_t j = 0; j < g.n(); ++j)
    if (!seen[g.cls[j]]) seen[g.cls[j]] = 1, order.push_back(g.cls[j]);
  return order;
}

// Largest-first over classes: decreasing degree, ties by first column (stable counting sort).
std::vector<std::int32_t> largest_first_order(const Graph& g) {
  const auto base = classes_by_first_column(g);
  std::int32_t maxd = 0;
  for (std::int32_t c : base) maxd = std::max(maxd, g.degree(c));
  std::vector<std::int32_t> start(maxd + 2, 0), order(base.size());
  for (std::int32_t c : base) ++start[maxd - g.degree(c) + 1];
  for (std::int32_t d = 0; d <= maxd; ++d) start[d + 1] += start[d];
  for (std::int32_t c : base) order[start[maxd - g.degree(c)]++] = c;
  return order;
}

// Bucket lists of classes keyed by a count (doubly linked; push puts a class at the head).
struct Buckets {
  std::vector<std::int32_t> head, next, prev, key;
  Buckets(std::int32_t classes, std::int32_t max_key) : head(max_key + 1, -1), next(classes, -1), prev(classes, -1), key(classes, 0) {}
  void push(std::int32_t c) {
    prev[c] = -1;
    next[c] = head[key[c]];
    if (head[key[c]] >= 0) prev[head[key[c]]] = c;
    head[key[c]] = c;
  }
  void unlink(std::int32_t c) {
    if (prev[c] >= 0) next[prev[c]] = next[c];
    else head[key[c]] = next[c];
    if (next[c] >= 0) prev[next[c]] = prev[c];
  }
};

// Smallest-last over classes: repeatedly remove a class of minimum remaining degree (a
// removed class lowers its neighbours' degrees by its size); colour in reverse removal order.
std::vector<std::int32_t> smallest_last_order(const Graph& g) {
  const std::int32_t nc = g.classes();
  std::vector<std::int32_t> removed;
  removed.reserve(nc);
  if (nc == 0) return removed;
  std::int32_t maxd = 0;
  for (std::int32_t c = 0; c < nc; ++c) maxd = std::max(maxd, g.degree(c));
  Buckets b(nc, maxd);
  std::vector<char> done(nc, 0);
  const auto base = classes_by_first_column(g);
  for (std::int32_t c = 0; c < nc; ++c) b.key[c] = g.degree(c);
  for (auto it = base.rbegin(); it != base.rend(); ++it) b.push(*it);  // heads: lowest first column
  std::int32_t low = 0;
  for (std::int32_t step = 0; step < nc; ++step) {
    while (b.head[low] < 0) ++low;
    const std::int32_t c = b.head[low];
    b.unlink(c);
    done[c] = 1;
    removed.push_back(c);
    for (std::int32_t e = g.ptr[c]; e < g.ptr[c + 1]; ++e) {
      const std::int32_t u = g.adj[e];
      if (done[u]) continue;
      b.unlink(u);
      b.key[u] = std::max(b.key[u] - g.size(c), 0);
      b.push(u);
      low = std::min(low, b.key[u]);
    }
  }
  std::reverse(removed.begin(), removed.end());
  return removed;
}

// Incidence-degree over classes: next the class with most already-ordered neighbour
// vertices (ties: larger degree first through the initial bucket order).
std::vector<std::int32_t> incidence_degree_order(const Graph& g) {
  const std::int32_t nc = g.classes();
  std::vector<std::int32_t> order;
  order.reserve(nc);
  if (nc == 0) return order;
  Buckets b(nc, g.n() + 1);
  std::vector<char> done(nc, 0);
  auto lf = largest_first_order(g);
  for (auto it = lf.rbegin(); it != lf.rend(); ++it) b.push(*it);  // heads: the largest degrees
  std::int32_t top = 0;
  for (std::int32_t step = 0; step < nc; ++step) {
    while (top > 0 && b.head[top] < 0) --top;
    const std::int32_t c = b.head[top];
    b.unlink(c);
    done[c] = 1;
    order.push_back(c);
    for (std::int32_t e = g.ptr[c]; e < g.ptr[c + 1]; ++e) {
      const std::int32_t u = g.adj[e];
      if (done[u]) continue;
      b.unlink(u);
      b.key[u] += g.size(c);
      b.push(u);
      top = std::max(top, b.key[u]);
    }
  }
  return order;
}

// Greedy colouring visiting classes in `order` (each class's members together, increasing)
// or, when `vertex_order` is set, single vertices in that order. Colours are kept per
// member slot shifted by one, so that "uncoloured" lands in forbidden[0] without a branch.
Coloring greedy(const Graph& g, const std::vector<std::int32_t>& order, bool vertex_order, ColorOrder which) {
  const std::int32_t n = g.n();
  Coloring c;
  c.order = which;
  c.color.assign(n, -1);
  std::vector<std::int32_t> slot(n), slot_color(n, 0), forbidden(n + 2, -1);
  for (std::int32_t m = 0; m < n; ++m) slot[g.members[m]] = m;
  const std::int32_t *ptr = g.ptr.data(), *adj = g.adj.data(), *mptr = g.mptr.data();
  std::int32_t *sc = slot_color.data(), *fb = forbidden.data();
  std::int32_t stamp = 0;
  auto forbid_neighbours = [=](std::int32_t cls, std::int32_t st) {
    for (const std::int32_t *e = adj + ptr[cls], *ee = adj + ptr[cls + 1]; e != ee; ++e)
      for (std::int32_t m = mptr[*e], me = mptr[*e + 1]; m < me; ++m) fb[sc[m]] = st;
  };
  std::int32_t num_colors = 0;
  auto assign = [&](std::int32_t m, std::int32_t& k) {
    while (fb[k] == stamp) ++k;
    sc[m] = k;
    fb[k] = stamp;
    c.color[g.members[m]] = k - 1;
    num_colors = std::max(num_colors, k);
  };
  for (std::int32_t x : order) {
    ++stamp;
    std::int32_t k = 1;
    if (vertex_order) {
      forbid_neighbours(g.cls[x], stamp);
      assign(slot[x], k);
    } else {
      forbid_neighbours(x, stamp);
      const bool isolated = ptr[x] == ptr[x + 1];  // empty columns: all take colour 0
      for (std::int32_t m = mptr[x]; m < mptr[x + 1]; ++m) {
        if (isolated) k = 1, ++stamp;
        assign(m, k);
      }
    }
  }
  c.num_colors = num_colors;
  return c;
}

Coloring color_graph(const Graph& g, ColorOrder order, std::int32_t lower_bound) {
  auto run = [&](ColorOrder o) {
    switch (o) {
      case ColorOrder::LargestFirst: return greedy(g, largest_first_order(g), false, o);
      case ColorOrder::SmallestLast: return greedy(g, smallest_last_order(g), false, o);
      case ColorOrder::IncidenceDegree: return greedy(g, incidence_degree_order(g), false, o);
      default: {
        std::vector<std::int32_t> nat(g.n());
        std::iota(nat.begin(), nat.end(), 0);
        return greedy(g, nat, true, ColorOrder::Natural);
      }
    }
  };
  Coloring best;
  if (order != ColorOrder::Best) {
    best = run(order);
  } else {
    bool first = true;
    for (ColorOrder o : {ColorOrder::LargestFirst, ColorOrder::SmallestLast, ColorOrder::IncidenceDegree,
                         ColorOrder::Natural}) {
      Coloring c = run(o);
      if (first || c.num_colors < best.num_colors) best = std::move(c);
      first = false;
      if (best.num_colors <= lower_bound) break;  // optimal: nothing can do better
    }
  }
  best.lower_bound = lower_bound;
  return best;
}

std::int32_t max_row_count(const SparsityPattern& p) {
  std::vector<std::int32_t> cnt(p.n_rows, 0);
  for (std::int32_t e = 0; e < p.nnz(); ++e) ++cnt[p.row_idx[e]];
  std::int32_t m = 0;
  for (auto c : cnt) m = std::max(m, c);
  return m;
}

}  // namespace

Coloring color_columns(const SparsityPattern& p, ColorOrder order) {
  validate_pattern(p, "color_columns pattern");
  return color_graph(class_graph(compress(p)), order, max_row_count(p));
}

Coloring color_compressed(const CompressedPattern& cp, ColorOrder order) {
  validate_compressed(cp);
  std::int32_t lb = 0;
  for (std::size_t q = 0; q + 1 < cp.group_ptr.size(); ++q) {
    std::int32_t cnt = 0;
    for (std::int32_t f = cp.group_ptr[q]; f < cp.group_ptr[q + 1]; ++f)
      cnt += cp.class_ptr[cp.group_classes[f] + 1] - cp.class_ptr[cp.group_classes[f]];
    lb = std::max(lb, cnt);
  }
  return color_graph(class_graph(cp), order, lb);
}

bool is_valid_coloring(const SparsityPattern& p, const Coloring& c) {
  if (c.color.size() != static_cast<std::size_t>(p.n_cols) || c.num_colors < 0) return false;
  for (auto k : c.color)
    if (k < 0 || k >= c.num_colors) return false;
  std::vector<std::int32_t> rptr, cidx;
  transpose(p, rptr, cidx);
  std::vector<std::int32_t> seen(c.num_colors, -1);
  for (std::int32_t i = 0; i < p.n_rows; ++i) {
    for (std::int32_t f = rptr[i]; f < rptr[i + 1]; ++f) {
      const std::int32_t k = c.color[cidx[f]];
      if (seen[k] == i) return false;
      seen[k] = i;
    }
  }
  return true;
}

std::vector<double> seed_matrix(const SparsityPattern& p, const Coloring& c) {
  if (!(c.color.size() == static_cast<std::size_t>(p.n_cols))) throw Error("seed_matrix: colouring has " + std::to_string(c.color.size()) + " columns, the pattern " +
              std::to_string(p.n_cols));
  std::vector<double> s(static_cast<std::size_t>(p.n_cols) * c.num_colors, 0.0);
  for (std::int32_t j = 0; j < p.n_cols; ++j) {
    if (!(c.color[j] >= 0 && c.color[j] < c.num_colors)) throw Error("seed_matrix: colour " + std::to_string(c.color[j]) + " of column " + std::to_string(j) +
                " outside [0, " + std::to_string(c.num_colors) + ")");
    s[static_cast<std::size_t>(j) * c.num_colors + c.color[j]] = 1.0;
  }
  return s;
}

void decompress(const SparsityPattern& p, const Coloring& c, const double* compressed, double* csc_values) {
  if (!(c.color.size() == static_cast<std::size_t>(p.n_cols))) throw Error("decompress: colouring has " + std::to_string(c.color.size()) + " columns, the pattern " +
              std::to_string(p.n_cols));
  if (!(p.col_ptr.size() == static_cast<std::size_t>(p.n_cols) + 1)) throw Error("decompress: malformed pattern (col_ptr size)");
  const std::size_t nc = static_cast<std::size_t>(c.num_colors);
  for (std::int32_t j = 0; j < p.n_cols; ++j) {
    const std::int32_t k = c.color[j];
    if (!(k >= 0 && k < c.num_colors)) throw Error("decompress: colour " + std::to_string(k) + " of column " +
                                            std::to_string(j) + " outside [0, " + std::to_string(c.num_colors) + ")");
    for (std::int32_t e = p.col_ptr[j]; e < p.col_ptr[j + 1]; ++e)
      csc_values[e] = compressed[static_cast<std::size_t>(p.row_idx[e]) * nc + k];
  }
}

}  // namespace stardiff::forward
