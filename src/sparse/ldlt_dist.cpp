// SPDX-License-Identifier: LGPL-2.1-or-later
// src/sparse/ldlt_dist.cpp — see ldlt_dist.hpp.
#include "sparse/ldlt_dist.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

namespace stardiff::sparse::detail {
namespace {
int pivots_of(const Symbolic& S, int s) { return S.sn_first[s + 1] - S.sn_first[s]; }
int below_of(const Symbolic& S, int s) { return int(S.row_ptr[s + 1] - S.row_ptr[s]); }
constexpr std::size_t kStats = 10;

void set_flag(bool* f) {
  if (f) std::atomic_ref<bool>(*f).store(true, std::memory_order_relaxed);
}
bool flag(const bool* f) { return f && std::atomic_ref<const bool>(*f).load(std::memory_order_relaxed); }

// 1: the unpivoted attempt failed; 2: aborted; 0: neither (so far) on this rank.
double run_status(const NumericCtx& ctx) {
  if (ctx.unpivoted && flag(ctx.failed)) return 1;
  return flag(ctx.abort) ? 2 : 0;
}
void take_status(const NumericCtx& ctx, double status) {
  if (status == 1) set_flag(ctx.failed);
  else if (status != 0) set_flag(ctx.abort);
}
}  // namespace

std::vector<int> map_tasks_to_ranks(const Symbolic& S, int nranks) {
  const int ns = S.ns, nt = int(S.task_lo.size());
  std::vector<int> task_rank(nt, 0);
  if (nranks <= 1 || ns == 0) return task_rank;
  std::vector<double> sub(S.sn_flops.begin(), S.sn_flops.end());
  for (int s = 0; s < ns; ++s)
    if (S.sn_parent[s] != -1) sub[S.sn_parent[s]] += sub[s];
  std::vector<int> lo(ns, 0), hi(ns, 1);
  // Splits [a, b) over `kids` (heaviest first; ties: lower index).
  auto split = [&](std::vector<int> kids, int a, int b) {
    std::sort(kids.begin(), kids.end(), [&](int x, int y) { return sub[x] != sub[y] ? sub[x] > sub[y] : x < y; });
    const int P = b - a;
    double W = 0;
    for (int c : kids) W += sub[c];
    double C = 0;
    for (int c : kids) {
      int l = a, h = a + 1;
      if (P > 1 && W > 0) {  // the child's share [P C / W, P (C + w) / W), rounded to ranks
        l = a + int(std::floor(P * (C / W) + 0.5));
        C += sub[c];
        h = a + int(std::floor(P * (C / W) + 0.5));
      }
      l = std::min(l, b - 1);
      h = std::min(std::max(h, l + 1), b);
      lo[c] = l;
      hi[c] = h;
    }
  };
  std::vector<int> kids;
  for (int s = 0; s < ns; ++s)
    if (S.sn_parent[s] == -1) kids.push_back(s);
  split(kids, 0, nranks);
  for (int s = ns - 1; s >= 0; --s) {  // parents before children
    kids.assign(S.child_list.begin() + S.child_ptr[s], S.child_list.begin() + S.child_ptr[s + 1]);
    if (!kids.empty()) split(kids, lo[s], hi[s]);
  }
  for (int t = 0; t < nt; ++t) task_rank[t] = lo[S.task_hi[t]];
  return task_rank;
}

void plan_distribution(const Symbolic& S, int nranks, LdltDist& d) {
  const int nt = int(S.task_lo.size());
  d.owner = map_tasks_to_ranks(S, nranks);
  d.sends.assign(nt, {});
  d.recvs.assign(nt, {});
  d.xfer.assign(S.ns, -1);
  std::vector<int> node_task(S.ns, -1);
  for (int t = 0; t < nt; ++t)
    for (int s = S.task_lo[t]; s <= S.task_hi[t]; ++s) node_task[s] = t;
  int nx = 0;
  for (int t = 0; t < nt; ++t)
    for (int s = S.task_lo[t]; s <= S.task_hi[t]; ++s)
      for (int k = S.child_ptr[s]; k < S.child_ptr[s + 1]; ++k) {  // child order: the assembly order
        const int c = S.child_list[k], ct = node_task[c];
        if (ct == t || d.owner[ct] == d.owner[t]) continue;
        d.xfer[c] = nx++;
        d.sends[ct].push_back(c);
        d.recvs[t].push_back(c);
      }
  for (auto& v : d.sends) std::sort(v.begin(), v.end());
}

std::size_t xfer_size(const Symbolic& S, int s) {
  const std::size_t mc = std::size_t(below_of(S, s));
  return 2 + mc + packed_column(mc, mc);
}

std::size_t gather_size(const Symbolic& S, int t, bool growth) {
  std::size_t n = 1 + kStats;  // status, the task's statistics
  for (int s = S.task_lo[t]; s <= S.task_hi[t]; ++s) {
    const std::size_t m = std::size_t(pivots_of(S, s)) + std::size_t(below_of(S, s));
    n += 1 + (growth ? 2 * m : 0);  // each node's flops (summed in node order), growth
  }
  return n;
}

void recv_block(const NumericCtx& ctx, int s, const double* x) {
  if (x[0] != 0) {
    take_status(ctx, x[0]);
    return;
  }
  const std::size_t mc = std::size_t(below_of(*ctx.sym, s));
  NodeCb& cb = ctx.cbs[s];
  cb = NodeCb{};
  cb.ndelay = int(x[1]);
  cb.idx.resize(mc);
  for (std::size_t a = 0; a < mc; ++a) cb.idx[a] = int(x[2 + a]);
  cb.v.assign(x + 2 + mc, x + 2 + mc + packed_column(mc, mc));
}

void send_block(const NumericCtx& ctx, int s, double* x) {
  NodeCb& cb = ctx.cbs[s];
  const std::size_t mc = std::size_t(below_of(*ctx.sym, s));
  x[0] = run_status(ctx);
  if (x[0] == 0 && (cb.ndelay != 0 || cb.idx.size() != mc)) {  // beyond the analysis's sizes
    set_flag(ctx.abort);
    x[0] = 2;
  }
  if (x[0] == 0) {
    x[1] = cb.ndelay;
    for (std::size_t a = 0; a < mc; ++a) x[2 + a] = cb.idx[a];
    double* out = x + 2 + mc;
    if (cb.view) {
      for (std::size_t b = 0; b < mc; ++b)
        std::memcpy(out + packed_column(b, mc), cb.view + b * cb.ld + b, (mc - b) * sizeof(double));
    } else {
      std::memcpy(out, cb.v.data(), packed_column(mc, mc) * sizeof(double));
    }
  }
  release_cb(cb);
}

void check_sizes(const NumericCtx& ctx, int lo, int hi) {
  const Symbolic& S = *ctx.sym;
  for (int s = lo; s <= hi; ++s) {
    const NodeFactor& nf = ctx.nodes[s];
    const int p = pivots_of(S, s);
    if (run_status(ctx) == 0 && (nf.nelim != p || int(nf.idx.size()) != p + below_of(S, s))) set_flag(ctx.abort);
  }
}

void pack_gather(const NumericCtx& ctx, int t, double* g) {
  const Symbolic& S = *ctx.sym;
  check_sizes(ctx, S.task_lo[t], S.task_hi[t]);
  g[0] = run_status(ctx);
  if (g[0] != 0) return;
  // The task's counts (exact in doubles), smallest and largest pivot, then per node its flops.
  NodeStats sum;
  sum.min_pivot = std::numeric_limits<double>::infinity();
  for (int s = S.task_lo[t]; s <= S.task_hi[t]; ++s) {
    const NodeStats& st = ctx.stats[s];
    sum.pos += st.pos, sum.neg += st.neg, sum.zero += st.zero, sum.two_by_two += st.two_by_two;
    sum.delayed += st.delayed, sum.static_pivots += st.static_pivots, sum.nnz_l += st.nnz_l;
    sum.min_pivot = std::min(sum.min_pivot, st.min_pivot);
    sum.max_pivot = std::max(sum.max_pivot, st.max_pivot);
  }
  const double stats[kStats] = {double(sum.pos), double(sum.neg), double(sum.zero), double(sum.two_by_two),
                                double(sum.delayed), double(sum.static_pivots), 0.0, double(sum.nnz_l),
                                sum.min_pivot, sum.max_pivot};
  double* w = std::copy(stats, stats + kStats, g + 1);
  for (int s = S.task_lo[t]; s <= S.task_hi[t]; ++s) {
    *w++ = ctx.stats[s].flops;
    if (ctx.dist->growth) {
      const NodeFactor& nf = ctx.nodes[s];
      const std::size_t m = std::size_t(pivots_of(S, s)) + std::size_t(below_of(S, s));
      for (std::size_t i = 0; i < m; ++i) *w++ = nf.idx[i];
      for (std::size_t i = 0; i < m; ++i) *w++ = i < nf.growth.size() ? nf.growth[i] : 0.0;
    }
  }
}

int unpack_gather(const NumericCtx& ctx, int t, const double* g, bool local) {
  const int status = int(g[0]);
  if (status != 0 || local) return status;
  const Symbolic& S = *ctx.sym;
  const double* r = g + 1 + kStats;
  for (int s = S.task_lo[t]; s <= S.task_hi[t]; ++s) {
    NodeStats& st = ctx.stats[s];
    st = NodeStats{};
    if (s == S.task_lo[t]) {  // the task's totals on its first node
      const double* a = g + 1;
      st.pos = std::int64_t(a[0]);
      st.neg = std::int64_t(a[1]);
      st.zero = std::int64_t(a[2]);
      st.two_by_two = std::int64_t(a[3]);
      st.delayed = std::int64_t(a[4]);
      st.static_pivots = std::int64_t(a[5]);
      st.nnz_l = std::int64_t(a[7]);
      st.min_pivot = a[8];
      st.max_pivot = a[9];
    } else {
      st.min_pivot = std::numeric_limits<double>::infinity();
    }
    st.flops = *r++;
    // The node's factors stay on its owner: here only its structure (what a parent's solve
    // task reads of a child on another rank).
    NodeFactor& nf = ctx.nodes[s];
    const int p = pivots_of(S, s);
    const std::size_t m = std::size_t(p) + std::size_t(below_of(S, s));
    nf.nelim = p;
    nf.L.release();
    std::vector<double>().swap(nf.d);
    std::vector<double>().swap(nf.e);
    std::vector<signed char>().swap(nf.piv);
    nf.idx.resize(m);
    if (ctx.dist->growth) {
      for (std::size_t i = 0; i < m; ++i) nf.idx[i] = int(r[i]);
      nf.growth.assign(r + m, r + 2 * m);
      r += 2 * m;
    } else {  // no delayed columns: the columns (in some order), then the rows as analysed
      std::iota(nf.idx.begin(), nf.idx.begin() + p, S.sn_first[s]);
      std::copy(S.rows.begin() + S.row_ptr[s], S.rows.begin() + S.row_ptr[s + 1], nf.idx.begin() + p);
      nf.growth.clear();
    }
  }
  return 0;
}

}  // namespace stardiff::sparse::detail
