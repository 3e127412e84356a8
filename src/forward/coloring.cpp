// src/forward/coloring.cpp — pattern checks, distance-2 column colouring, seed matrix,
// decompression (contracts in include/stardiff/forward/coloring.hpp).
//
// The colouring builds the column intersection graph (columns adjacent when they share
// a row) once, compressed by classes of identical rows and of indistinguishable columns
// (a power-flow Jacobian has both: P/Q rows and Va/Vm columns of a PQ bus), orders its
// vertices (natural, largest-first by degree, smallest-last by exact minimum remaining
// degree, incidence-degree) and colours greedily with a stamped forbidden-colour array.
#include <algorithm>
#include <numeric>
#include <unordered_map>
#include <string>

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

// Column intersection graph, stored per class of indistinguishable columns: columns whose
// rows have the same column sets (e.g. Va and Vm of a PQ bus) have the same closed
// neighbourhood U (the class members included). Neighbours of v: adj[begin(v) .. end(v))
// minus v itself (every loop below skips v: it is done or uncoloured when visited).
struct Graph {
  std::vector<std::int32_t> cls;      // vertex -> class
  std::vector<std::int32_t> ptr, adj; // class -> closed neighbourhood
  std::int32_t n() const { return static_cast<std::int32_t>(cls.size()); }
  std::int32_t begin(std::int32_t v) const { return ptr[cls[v]]; }
  std::int32_t end(std::int32_t v) const { return ptr[cls[v] + 1]; }
  std::int32_t degree(std::int32_t v) const {
    const std::int32_t s = end(v) - begin(v);
    return s > 0 ? s - 1 : 0;
  }
};

// Row-wise (CSR) copy of the pattern's structure (columns increasing within a row).
void transpose(const SparsityPattern& p, std::vector<std::int32_t>& rptr, std::vector<std::int32_t>& cidx) {
  rptr.assign(p.n_rows + 1, 0);
  for (std::int32_t e = 0; e < p.nnz(); ++e) ++rptr[p.row_idx[e] + 1];
  for (std::int32_t i = 0; i < p.n_rows; ++i) rptr[i + 1] += rptr[i];
  cidx.resize(p.nnz());
  std::vector<std::int32_t> fill(rptr.begin(), rptr.end() - 1);
  for (std::int32_t j = 0; j < p.n_cols; ++j)
    for (std::int32_t e = p.col_ptr[j]; e < p.col_ptr[j + 1]; ++e) cidx[fill[p.row_idx[e]]++] = j;
}

std::uint64_t hash_list(const std::int32_t* b, const std::int32_t* e) {
  std::uint64_t h = 1469598103934665603ull ^ static_cast<std::uint64_t>(e - b);
  for (; b != e; ++b) h = (h ^ static_cast<std::uint32_t>(*b)) * 1099511628211ull;
  return h;
}

// Classes of equal integer lists (list k = data[ptr[k] .. ptr[k+1])): class per list and
// the first member of each class.
void list_classes(const std::vector<std::int32_t>& ptr, const std::vector<std::int32_t>& data,
                  std::vector<std::int32_t>& cls, std::vector<std::int32_t>& rep) {
  const std::int32_t n = static_cast<std::int32_t>(ptr.size()) - 1;
  cls.assign(n, -1);
  rep.clear();
  std::unordered_map<std::uint64_t, std::vector<std::int32_t>> buckets;
  buckets.reserve(static_cast<std::size_t>(n) * 2);
  for (std::int32_t k = 0; k < n; ++k) {
    const std::int32_t *b = data.data() + ptr[k], *e = data.data() + ptr[k + 1];
    auto& bucket = buckets[hash_list(b, e)];
    for (std::int32_t c : bucket) {
      const std::int32_t r = rep[c];
      if (ptr[r + 1] - ptr[r] == e - b && std::equal(b, e, data.data() + ptr[r])) {
        cls[k] = c;
        break;
      }
    }
    if (cls[k] < 0) {
      cls[k] = static_cast<std::int32_t>(rep.size());
      bucket.push_back(cls[k]);
      rep.push_back(k);
    }
  }
}

Graph column_intersection_graph(const SparsityPattern& p) {
  std::vector<std::int32_t> rptr, cidx;
  transpose(p, rptr, cidx);
  // rows with equal column sets contribute the same neighbours: keep one per class
  std::vector<std::int32_t> rcls, rrep;
  list_classes(rptr, cidx, rcls, rrep);
  // per column: its distinct row classes, sorted
  std::vector<std::int32_t> kptr(p.n_cols + 1, 0), kdat;
  kdat.reserve(p.nnz());
  std::vector<std::int32_t> mark(std::max<std::size_t>(rrep.size(), static_cast<std::size_t>(p.n_cols)), -1);
  for (std::int32_t j = 0; j < p.n_cols; ++j) {
    const std::size_t start = kdat.size();
    for (std::int32_t e = p.col_ptr[j]; e < p.col_ptr[j + 1]; ++e) {
      const std::int32_t rc = rcls[p.row_idx[e]];
      if (mark[rc] != j) mark[rc] = j, kdat.push_back(rc);
    }
    std::sort(kdat.begin() + start, kdat.end());
    kptr[j + 1] = static_cast<std::int32_t>(kdat.size());
  }
  Graph g;
  std::vector<std::int32_t> crep;
  list_classes(kptr, kdat, g.cls, crep);
  g.ptr.assign(crep.size() + 1, 0);
  g.adj.reserve(static_cast<std::size_t>(p.nnz()) * 2);
  std::fill(mark.begin(), mark.end(), -1);
  for (std::size_t c = 0; c < crep.size(); ++c) {
    const std::int32_t j = crep[c];
    for (std::int32_t q = kptr[j]; q < kptr[j + 1]; ++q) {
      const std::int32_t r = rrep[kdat[q]];
      for (std::int32_t f = rptr[r]; f < rptr[r + 1]; ++f) {
        const std::int32_t k = cidx[f];
        if (mark[k] != static_cast<std::int32_t>(c)) mark[k] = static_cast<std::int32_t>(c), g.adj.push_back(k);
      }
    }
    g.ptr[c + 1] = static_cast<std::int32_t>(g.adj.size());
  }
  return g;
}

std::vector<std::int32_t> largest_first_order(const Graph& g) {
  std::vector<std::int32_t> order(g.n());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::int32_t a, std::int32_t b) { return g.degree(a) > g.degree(b); });
  return order;
}

// Smallest-last order: repeatedly remove a vertex of minimum remaining degree (bucket
// lists keyed by the exact remaining degree); colour in reverse removal order.
std::vector<std::int32_t> smallest_last_order(const Graph& g) {
  const std::int32_t n = g.n();
  std::vector<std::int32_t> removed_order;
  removed_order.reserve(n);
  if (n == 0) return removed_order;
  std::int32_t maxd = 0;
  std::vector<std::int32_t> deg(n);
  for (std::int32_t v = 0; v < n; ++v) maxd = std::max(maxd, deg[v] = g.degree(v));
  std::vector<std::int32_t> head(maxd + 1, -1), next(n, -1), prev(n, -1);
  std::vector<char> done(n, 0);
  auto push = [&](std::int32_t v) {
    const std::int32_t b = deg[v];
    prev[v] = -1;
    next[v] = head[b];
    if (head[b] >= 0) prev[head[b]] = v;
    head[b] = v;
  };
  auto unlink = [&](std::int32_t v) {
    const std::int32_t b = deg[v];
    if (prev[v] >= 0) next[prev[v]] = next[v];
    else head[b] = next[v];
    if (next[v] >= 0) prev[next[v]] = prev[v];
  };
  for (std::int32_t v = n - 1; v >= 0; --v) push(v);  // heads: lowest index first
  std::int32_t low = 0;
  for (std::int32_t it = 0; it < n; ++it) {
    while (head[low] < 0) ++low;
    const std::int32_t v = head[low];
    unlink(v);
    done[v] = 1;
    removed_order.push_back(v);
    for (std::int32_t e = g.begin(v); e < g.end(v); ++e) {
      const std::int32_t u = g.adj[e];
      if (done[u]) continue;
      unlink(u);
      --deg[u];
      push(u);
      low = std::min(low, deg[u]);
    }
  }
  std::reverse(removed_order.begin(), removed_order.end());
  return removed_order;
}

// Incidence-degree order: next the vertex with most already-ordered neighbours (ties:
// larger degree first through the initial bucket order), starting at a max-degree vertex.
std::vector<std::int32_t> incidence_degree_order(const Graph& g) {
  const std::int32_t n = g.n();
  std::vector<std::int32_t> order;
  order.reserve(n);
  if (n == 0) return order;
  std::int32_t maxd = 0;
  for (std::int32_t v = 0; v < n; ++v) maxd = std::max(maxd, g.degree(v));
  // doubly linked bucket lists keyed by incidence count
  std::vector<std::int32_t> head(maxd + 2, -1), next(n, -1), prev(n, -1), inc(n, 0);
  std::vector<char> done(n, 0);
  auto push = [&](std::int32_t v) {
    const std::int32_t b = inc[v];
    prev[v] = -1;
    next[v] = head[b];
    if (head[b] >= 0) prev[head[b]] = v;
    head[b] = v;
  };
  auto unlink = [&](std::int32_t v) {
    const std::int32_t b = inc[v];
    if (prev[v] >= 0) next[prev[v]] = next[v];
    else head[b] = next[v];
    if (next[v] >= 0) prev[next[v]] = prev[v];
  };
  // push in increasing degree so that heads hold the largest degrees
  for (std::int32_t v : [&] {
         auto o = largest_first_order(g);
         std::reverse(o.begin(), o.end());
         return o;
       }())
    push(v);
  std::int32_t top = 0;
  for (std::int32_t it = 0; it < n; ++it) {
    while (top > 0 && head[top] < 0) --top;
    const std::int32_t v = head[top];
    unlink(v);
    done[v] = 1;
    order.push_back(v);
    for (std::int32_t e = g.begin(v); e < g.end(v); ++e) {
      const std::int32_t u = g.adj[e];
      if (done[u]) continue;
      unlink(u);
      ++inc[u];
      push(u);
      top = std::max(top, inc[u]);
    }
  }
  return order;
}

Coloring greedy(const Graph& g, const std::vector<std::int32_t>& order, ColorOrder which) {
  const std::int32_t n = g.n();
  Coloring c;
  c.order = which;
  c.color.assign(n, -1);
  std::vector<std::int32_t> forbidden(n + 1, -1);
  for (std::int32_t v : order) {
    for (std::int32_t e = g.begin(v); e < g.end(v); ++e) {
      const std::int32_t k = c.color[g.adj[e]];
      if (k >= 0) forbidden[k] = v;
    }
    std::int32_t k = 0;
    while (forbidden[k] == v) ++k;
    c.color[v] = k;
    c.num_colors = std::max(c.num_colors, k + 1);
  }
  return c;
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
  const Graph g = column_intersection_graph(p);
  auto run = [&](ColorOrder o) {
    switch (o) {
      case ColorOrder::LargestFirst: return greedy(g, largest_first_order(g), o);
      case ColorOrder::SmallestLast: return greedy(g, smallest_last_order(g), o);
      case ColorOrder::IncidenceDegree: return greedy(g, incidence_degree_order(g), o);
      default: {
        std::vector<std::int32_t> nat(g.n());
        std::iota(nat.begin(), nat.end(), 0);
        return greedy(g, nat, ColorOrder::Natural);
      }
    }
  };
  Coloring best;
  const std::int32_t lb = max_row_count(p);
  if (order != ColorOrder::Best) {
    best = run(order);
  } else {
    bool first = true;
    for (ColorOrder o : {ColorOrder::Natural, ColorOrder::LargestFirst, ColorOrder::SmallestLast,
                         ColorOrder::IncidenceDegree}) {
      Coloring c = run(o);
      if (first || c.num_colors < best.num_colors) best = std::move(c);
      first = false;
      if (best.num_colors == lb) break;  // optimal: nothing can do better
    }
  }
  best.lower_bound = lb;
  return best;
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
