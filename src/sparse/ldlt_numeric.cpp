// SPDX-License-Identifier: LGPL-2.1-or-later
// src/sparse/ldlt_numeric.cpp — multifrontal assembly, supernode factorization, solves.
//
// Contract (see ldlt_internal.hpp):
//  * factor_nodes(ctx, lo, hi) processes supernodes lo..hi in postorder. A front's rows
//    are [own columns, children's delayed columns (child order), the supernode's rows];
//    it assembles the scaled entries of A, then extend-adds the children's contribution
//    blocks in child order (fixed order: bitwise reproducible), frees them, factorizes the
//    front (front_ldlt_cpu; roots force every column) and stores L, D and the new
//    contribution block (whose first rows are the columns delayed to the parent), copied
//    out of the thread's reusable front.
//  * big_*: the same for one large front split into tasks: begin lays the front out,
//    one assemble per column block fills it (bitwise as one assembly would; the
//    children's blocks are kept), each panel factorizes a window of nb columns and
//    updates the rest of its column block, each update applies a window to a later
//    column block, finish stores in place: the front's buffer becomes the node's L and
//    the parent reads the contribution block where it lies, then discards its pages (no
//    copy into a fresh buffer, which would be faulted in page by page).
//    A window that cannot take all its pivots (or delayed columns from the children)
//    marks the front degraded: finish re-assembles it and runs front_ldlt_cpu as a
//    whole — the outcome depends only on the values, never on timing.
//  * solve_forward / solve_backward: the solve over a postorder range of supernodes
//    (forward with L and D, passing update vectors to the parent; backward with L^T,
//    reading the ancestors' solution): gather, front_solve_*_cpu per supernode, scatter.
// The dense and assembly arithmetic is in codelets/cpu/sparse (front_ldlt, front_assembly,
// front_solve); this file walks the tree over NumericCtx / SolveCtx.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <numeric>
#include <string>

#include "cpu/sparse/front_assembly.hpp"
#include "cpu/sparse/front_ldlt.hpp"
#include "cpu/sparse/front_solve.hpp"
#include "sparse/ldlt_internal.hpp"
#include "stardiff/runtime/error.hpp"

namespace stardiff::sparse::detail {

void DBuf::resize(std::size_t n) {
  if (n > cap_) {
    std::free(p_);
    p_ = nullptr;
    n_ = cap_ = 0;
    const std::size_t bytes = n * sizeof(double);
    void* q = std::malloc(bytes);
    if (!q) throw std::bad_alloc();
    p_ = static_cast<double*>(q);
    cap_ = n;
  }
  n_ = n;
}

void DBuf::discard_tail(std::size_t keep) {
  if (keep >= cap_) return;
  const std::uintptr_t page = std::uintptr_t(sysconf(_SC_PAGESIZE));
  const std::uintptr_t lo = (std::uintptr_t(p_ + keep) + page - 1) / page * page;
  const std::uintptr_t hi = std::uintptr_t(p_ + cap_) / page * page;
  if (hi > lo) madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED);  // advisory: failure is harmless
}

namespace {
thread_local std::vector<int> t_pos;
// The largest packed contribution block a front has just assembled: its buffer (pages
// already mapped) becomes the front's own block when large enough, instead of fresh
// memory that the kernel must fault in and zero page by page.
thread_local DBuf t_spare;
constexpr std::size_t kSpareKeep = std::size_t(1) << 23;  // doubles kept between fronts (64 MB)
thread_local DBuf t_front;  // reused frontal matrix storage

// Front rows of s: own columns, children's delayed columns (child order), rows.
std::vector<int> front_rows(const NumericCtx& ctx, int s, int& p) {
  const Symbolic& S = *ctx.sym;
  const int first = S.sn_first[s], last = S.sn_first[s + 1];
  int nd = 0;
  for (int k = S.child_ptr[s]; k < S.child_ptr[s + 1]; ++k) nd += ctx.cbs[S.child_list[k]].ndelay;
  const int below = int(S.row_ptr[s + 1] - S.row_ptr[s]);
  p = last - first + nd;
  std::vector<int> idx(p + below);
  int w = 0;
  for (int j = first; j < last; ++j) idx[w++] = j;
  for (int k = S.child_ptr[s]; k < S.child_ptr[s + 1]; ++k) {
    const NodeCb& cb = ctx.cbs[S.child_list[k]];
    for (int q = 0; q < cb.ndelay; ++q) idx[w++] = cb.idx[q];
  }
  for (std::int64_t q = S.row_ptr[s]; q < S.row_ptr[s + 1]; ++q) idx[w++] = S.rows[q];
  return idx;
}

// Columns [c0, c1) of F (m x m, lower triangle): zeroes them, assembles A's entries and
// the children's contribution blocks (in child order) that land there, and with free_cbs
// (only for the whole front) frees those blocks. Each entry receives its terms in the same
// order whatever the column range, so a front assembled block by block is bitwise the one
// assembled at once. A range other than the whole front needs every child's rows to keep
// their order in F (no delayed columns: then a child's column b lands in F's column
// cpos[b], increasing in b).
void assemble_columns(const NumericCtx& ctx, int s, const std::vector<int>& idx, double* F, int c0, int c1,
                      bool free_cbs) {
  const Symbolic& S = *ctx.sym;
  const int m = int(idx.size());
  const bool whole = c0 == 0 && c1 == m;
  if (int(t_pos.size()) < S.n) t_pos.assign(S.n, -1);
  int* pos = t_pos.data();
  for (int t = 0; t < m; ++t) pos[idx[t]] = t;
  cpu::front_zero_cols_cpu(F, m, c0, c1);
  // own columns come first in idx: column j of A lands in F's column j - first
  const int first = S.sn_first[s];
  cpu::front_assemble_a_cpu(F, m, S.ap.data(), S.ai.data(), ctx.sval, pos, first + c0,
                            std::min(S.sn_first[s + 1], first + c1));
  for (int k = S.child_ptr[s]; k < S.child_ptr[s + 1]; ++k) {
    NodeCb& cb = ctx.cbs[S.child_list[k]];
    const int mc = int(cb.idx.size());
    thread_local std::vector<int> cpos;
    cpos.resize(mc);
    for (int a = 0; a < mc; ++a) {
      cpos[a] = pos[cb.idx[a]];
      if (cpos[a] < 0) throw Error("Ldlt::factorize: internal error: contribution row outside the parent front");
    }
    int b0 = 0, b1 = mc;
    if (!whole) {
      if (!std::is_sorted(cpos.begin(), cpos.end()))
        throw Error("Ldlt::factorize: internal error: a contribution block's rows are out of order in a split front");
      b0 = int(std::lower_bound(cpos.begin(), cpos.end(), c0) - cpos.begin());
      b1 = int(std::lower_bound(cpos.begin(), cpos.end(), c1) - cpos.begin());
    }
    if (cb.view) cpu::front_extend_add_cpu(F, m, cb.view, mc, cb.ld, cpos.data(), b0, b1);
    else cpu::front_extend_add_cpu(F, m, cb.v.data(), mc, 0, cpos.data(), b0, b1);
    if (free_cbs && whole) {
      if (!cb.view && cb.v.capacity() > t_spare.capacity()) std::swap(t_spare, cb.v);
      release_cb(cb);
    }
  }
  for (int t = 0; t < m; ++t) pos[idx[t]] = -1;
}

void assemble_front(const NumericCtx& ctx, int s, const std::vector<int>& idx, double* F, bool free_cbs) {
  assemble_columns(ctx, s, idx, F, 0, int(idx.size()), free_cbs);
}

// The unpivoted attempt has already failed somewhere, or a distributed run aborted: the
// remaining tasks do nothing.
bool attempt_failed(const NumericCtx& ctx) {
  if (ctx.abort && std::atomic_ref<bool>(*ctx.abort).load(std::memory_order_relaxed)) return true;
  return ctx.unpivoted && std::atomic_ref<bool>(*ctx.failed).load(std::memory_order_relaxed);
}

cpu::FrontOptions front_options(const NumericCtx& ctx, bool root) {
  cpu::FrontOptions fo;
  fo.u = ctx.u;
  fo.unpivoted = ctx.unpivoted;
  fo.small = ctx.small;
  fo.static_piv = ctx.static_piv;
  fo.force = root;
  fo.nb = ctx.nb;
  return fo;
}

void prepare_pivots(NodeFactor& nf, int p) {
  nf.d.assign(std::max(p, 1), 0.0);
  nf.e.assign(std::max(p, 1), 0.0);
  nf.piv.assign(std::max(p, 1), 1);
}

// Stores L, D and the contribution block of a factorized front; fills the statistics.
// With `in_place` (the buffer holding F, m x m), L stays where it is (the buffer becomes
// the node's L) and the contribution block is read there by the parent; otherwise both
// are copied out of F.
void store_front(const NumericCtx& ctx, int s, double* F, int p, const std::vector<int>& idx,
                 const std::vector<int>& lperm, int nelim, const cpu::FrontCounts& fc, DBuf* in_place = nullptr) {
  const Symbolic& S = *ctx.sym;
  const int m = int(idx.size());
  const std::size_t mm = std::size_t(m);
  const bool root = S.sn_parent[s] == -1;
  NodeFactor& nf = ctx.nodes[s];
  if (ctx.unpivoted) {  // every column a 1x1 pivot with its diagonal's sign (any sign where the
                       // diagonal entry is zero), or the attempt failed
    bool ok = nelim == p;
    for (int t = 0; ok && t < nelim; ++t) {
      const double dj = ctx.diag[idx[lperm[t]]];
      ok = nf.piv[t] == 1 && (std::fabs(dj) <= ctx.small || (nf.d[t] > 0) == (dj > 0));
    }
    if (!ok) {
      std::atomic_ref<bool>(*ctx.failed).store(true, std::memory_order_relaxed);
      return;
    }
    if (ctx.need_growth) {
      nf.growth.assign(m, 0.0);
      double* g = nf.growth.data();
      for (int k = 0; k < nelim; ++k) {
        const double dk = std::fabs(nf.d[k]);
        const double* lk = F + std::size_t(k) * mm;
        g[k] += dk;
        for (int t = k + 1; t < m; ++t) g[t] += lk[t] * lk[t] * dk;
      }
    }
  }
  if (root && nelim != p) throw Error("Ldlt::factorize: internal error: root front left columns uneliminated");
  nf.d.resize(nelim);
  nf.e.resize(nelim);
  nf.piv.resize(nelim);
  nf.nelim = nelim;
  nf.idx.resize(m);
  for (int t = 0; t < m; ++t) nf.idx[t] = idx[lperm[t]];
  if (in_place) {
    nf.L = std::move(*in_place);
    nf.L.set_size(mm * std::size_t(nelim));
  } else {
    nf.L.assign(F, F + mm * std::size_t(nelim));
  }
  NodeStats& st = ctx.stats[s];
  st.pos = fc.pos;
  st.neg = fc.neg;
  st.zero = fc.zero;
  st.two_by_two = fc.two_by_two;
  st.static_pivots = fc.static_pivots;
  st.delayed = root ? 0 : p - nelim;
  {
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    for (int t = 0; t < nelim; ++t) {
      if (nf.piv[t] == 2) {
        const double a = nf.d[t], b = nf.e[t], c = nf.d[t + 1];
        const double mid = 0.5 * (a + c), rad = std::hypot(0.5 * (a - c), b);
        const double l1 = std::fabs(mid + rad), l2 = std::fabs(mid - rad);
        lo = std::min({lo, l1, l2});
        hi = std::max({hi, l1, l2});
        ++t;
      } else if (nf.piv[t] == 1) {
        lo = std::min(lo, std::fabs(nf.d[t]));
        hi = std::max(hi, std::fabs(nf.d[t]));
      }
    }
    st.min_pivot = lo;
    st.max_pivot = hi;
  }
  {
    double fl = 0;
    for (int t = 0; t < nelim; ++t) {
      double c = m - t;
      fl += c * c;
    }
    st.flops = fl;
    st.nnz_l = std::int64_t(nelim) * m - std::int64_t(nelim) * (nelim - 1) / 2;
  }
  if (!root) {
    NodeCb& cb = ctx.cbs[s];
    const int mc = m - nelim;
    cb.ndelay = p - nelim;
    cb.idx.assign(nf.idx.begin() + nelim, nf.idx.end());
    if (in_place) {
      cb.view = nf.L.data() + std::size_t(nelim) * mm + std::size_t(nelim);
      cb.ld = mm;
      cb.owner = &nf.L;
      cb.keep = mm * std::size_t(nelim);
    } else {
      const std::size_t packed = packed_column(std::size_t(mc), std::size_t(mc));
      if (t_spare.capacity() >= packed) cb.v = std::move(t_spare);  // a child's block: mapped pages
      cb.v.resize(packed);
      cpu::front_pack_cb_cpu(F, m, nelim, mc, cb.v.data());
    }
  }
}

void factor_node(const NumericCtx& ctx, int s) {
  if (attempt_failed(ctx)) return;
  int p = 0;
  std::vector<int> idx = front_rows(ctx, s, p);
  const int m = int(idx.size());
  const std::size_t mm = std::size_t(m);
  t_front.resize(mm * mm);
  double* F = t_front.data();
  assemble_front(ctx, s, idx, F, true);
  const bool root = ctx.sym->sn_parent[s] == -1;
  thread_local std::vector<int> lperm;
  lperm.resize(m);
  NodeFactor& nf = ctx.nodes[s];
  prepare_pivots(nf, p);
  cpu::FrontCounts fc;
  const int nelim =
      cpu::front_ldlt_cpu(F, m, p, front_options(ctx, root), lperm.data(), nf.d.data(), nf.e.data(), nf.piv.data(), fc);
  store_front(ctx, s, F, p, idx, lperm, nelim, fc);
  if (mm * mm > (std::size_t(1) << 24)) t_front.release();  // keep at most 128 MB per thread
  if (t_spare.capacity() > kSpareKeep) t_spare.release();
}
}  // namespace

void factor_nodes(const NumericCtx& ctx, int lo, int hi) {
  for (int s = lo; s <= hi; ++s) factor_node(ctx, s);
}

void big_begin(const NumericCtx& ctx, int s) {
  if (attempt_failed(ctx)) return;
  const Symbolic& S = *ctx.sym;
  BigFront& b = ctx.big[s];
  DBuf* const pre = b.pre;
  b = BigFront{};
  b.idx = front_rows(ctx, s, b.p);
  b.m = int(b.idx.size());
  const std::size_t mm = std::size_t(b.m);
  NodeFactor& nf = ctx.nodes[s];
  if (pre && pre->size() == mm * mm) b.F = std::move(*pre);  // the buffer the block handles cover
  else if (nf.L.capacity() >= mm * mm) b.F = std::move(nf.L);  // a previous factorization's front: reuse it
  b.F.resize(mm * mm);  // assembled by big_assemble, column block by column block
  b.degraded = b.p != S.sn_first[s + 1] - S.sn_first[s];  // delayed columns: plan does not fit
  b.perm.resize(b.m);
  std::iota(b.perm.begin(), b.perm.end(), 0);
  prepare_pivots(ctx.nodes[s], b.p);
}

// `degraded` is set by a panel while updates of the previous window may still run: they
// read it through atomic_ref (finishing their now useless update is harmless).
static bool is_degraded(BigFront& b) { return std::atomic_ref<bool>(b.degraded).load(std::memory_order_relaxed); }

// big_begin did not run (the unpivoted attempt had failed): nothing to do.
static bool not_begun(const BigFront& b) { return b.idx.empty(); }

// Degraded (delayed columns arrived, or a panel failed): finish assembles the front whole.
void big_assemble(const NumericCtx& ctx, int s, int c0, int c1) {
  BigFront& b = ctx.big[s];
  if (not_begun(b) || is_degraded(b)) return;
  assemble_columns(ctx, s, b.idx, b.F.data(), c0, std::min(c1, b.m), false);
}

bool big_window(const NumericCtx& ctx, int s, int k0, int k1) {
  BigFront& b = ctx.big[s];
  if (not_begun(b) || is_degraded(b)) return false;
  NodeFactor& nf = ctx.nodes[s];
  cpu::FrontCounts fc;
  const int nacc = cpu::front_window_cpu(b.F.data(), b.m, k0, k1, front_options(ctx, false), b.perm.data(),
                                         nf.d.data(), nf.e.data(), nf.piv.data(), fc);
  if (nacc < k1 - k0) {
    std::atomic_ref<bool>(b.degraded).store(true, std::memory_order_relaxed);
    return false;
  }
  b.pos += fc.pos;
  b.neg += fc.neg;
  b.two_by_two += fc.two_by_two;
  return true;
}

void big_panel(const NumericCtx& ctx, int s, int k0, int k1, int block_end) {
  if (big_window(ctx, s, k0, k1)) big_update(ctx, s, k0, k1, k1, block_end);
}

void big_update(const NumericCtx& ctx, int s, int k0, int k1, int c0, int c1) {
  BigFront& b = ctx.big[s];
  if (not_begun(b) || is_degraded(b)) return;
  const NodeFactor& nf = ctx.nodes[s];
  cpu::front_update_cols_cpu(b.F.data(), b.m, k0, k1 - k0, nf.d.data(), nf.e.data(), nf.piv.data(), c0,
                             std::min(c1, b.m));
}

void big_finish(const NumericCtx& ctx, int s) {
  BigFront& b = ctx.big[s];
  if (not_begun(b)) return;
  const bool root = ctx.sym->sn_parent[s] == -1;
  NodeFactor& nf = ctx.nodes[s];
  cpu::FrontCounts fc;
  int nelim = b.p;
  const Symbolic& S = *ctx.sym;
  if (b.degraded && ctx.unpivoted) {  // a pivot failed: so does the attempt
    std::atomic_ref<bool>(*ctx.failed).store(true, std::memory_order_relaxed);
    b = BigFront{};
    return;
  }
  if (b.degraded) {
    assemble_front(ctx, s, b.idx, b.F.data(), false);
    std::iota(b.perm.begin(), b.perm.end(), 0);
    prepare_pivots(nf, b.p);
    nelim = cpu::front_ldlt_cpu(b.F.data(), b.m, b.p, front_options(ctx, root), b.perm.data(), nf.d.data(),
                                nf.e.data(), nf.piv.data(), fc);
  } else {
    fc.pos = b.pos;
    fc.neg = b.neg;
    fc.two_by_two = b.two_by_two;
  }
  for (int k = S.child_ptr[s]; k < S.child_ptr[s + 1]; ++k) release_cb(ctx.cbs[S.child_list[k]]);
  store_front(ctx, s, b.F.data(), b.p, b.idx, b.perm, nelim, fc, &b.F);
  b = BigFront{};
}

void solve_forward(const SolveCtx& c, int lo, int hi) {
  const Symbolic& S = *c.sym;
  const int n = S.n, nrhs = c.nrhs;
  thread_local std::vector<int> pos;  // row -> position in the current front
  if (pos.size() < std::size_t(n)) pos.assign(n, -1);
  // Update vectors of nodes whose parent is in this range, stacked in postorder: when a
  // node comes, its in-range children's vectors are the top of the stack, in child
  // order. Only a range's exposed nodes leave theirs in c.upd, for another task.
  thread_local std::vector<double> stack;
  std::size_t top = 0;
  auto rows_of = [&](int s) { return std::size_t(c.nodes[s].idx.size() - c.nodes[s].nelim) * std::size_t(nrhs); };
  std::vector<double> G;
  for (int s = lo; s <= hi; ++s) {
    const NodeFactor& f = c.nodes[s];
    const int m = int(f.idx.size()), ne = f.nelim;
    G.assign(std::size_t(m) * nrhs, 0.0);
    for (int r = 0; r < nrhs; ++r)
      for (int t = 0; t < ne; ++t) G[t + std::size_t(r) * m] = c.X[f.idx[t] + std::size_t(r) * n];
    if (S.child_ptr[s + 1] > S.child_ptr[s]) {
      std::size_t seg = top;  // start of the in-range children's vectors
      for (int k = S.child_ptr[s]; k < S.child_ptr[s + 1]; ++k)
        if (S.child_list[k] >= lo) seg -= rows_of(S.child_list[k]);
      for (int t = 0; t < m; ++t) pos[f.idx[t]] = t;
      std::size_t at = seg;
      for (int k = S.child_ptr[s]; k < S.child_ptr[s + 1]; ++k) {
        const int ch = S.child_list[k];
        const NodeFactor& cf = c.nodes[ch];
        const int cm = int(cf.idx.size()), cne = cf.nelim, rows = cm - cne;
        const bool stacked = ch >= lo;
        const double* u = stacked ? stack.data() + at : c.upd[ch].data();
        for (int r = 0; r < nrhs; ++r)
          for (int t = 0; t < rows; ++t) G[pos[cf.idx[cne + t]] + std::size_t(r) * m] += u[t + std::size_t(r) * rows];
        if (stacked) at += rows_of(ch);
        else std::vector<double>().swap(c.upd[ch]);
      }
      top = seg;
      for (int t = 0; t < m; ++t) pos[f.idx[t]] = -1;
    }
    if (ne > 0) {
      cpu::front_solve_forward_cpu(f.L.data(), m, ne, f.d.data(), f.e.data(), f.piv.data(), G.data(), nrhs);
      for (int r = 0; r < nrhs; ++r)
        for (int t = 0; t < ne; ++t) c.X[f.idx[t] + std::size_t(r) * n] = G[t + std::size_t(r) * m];
    }
    const int rows = m - ne;
    double* u;
    if (S.sn_parent[s] != -1 && S.sn_parent[s] <= hi) {  // for the parent, in this range
      if (stack.size() < top + rows_of(s)) stack.resize(top + rows_of(s));
      u = stack.data() + top;
      top += rows_of(s);
    } else {
      c.upd[s].resize(rows_of(s));
      u = c.upd[s].data();
    }
    for (int r = 0; r < nrhs; ++r)
      for (int t = 0; t < rows; ++t) u[t + std::size_t(r) * rows] = G[ne + t + std::size_t(r) * m];
  }
}

void solve_backward(const SolveCtx& c, int lo, int hi) {
  const Symbolic& S = *c.sym;
  const int n = S.n, nrhs = c.nrhs;
  std::vector<double> G;
  // Distributed: the rows outside [first, last) (this range's columns) from `ext`, filled
  // from the exposed nodes' down vectors (every such row lies in one: see SolveCtx).
  const bool dist = c.down != nullptr;
  const int first = S.sn_first[lo], last = S.sn_first[hi + 1];
  thread_local std::vector<double> ext;
  thread_local std::vector<int> pos;
  if (dist) {
    if (ext.size() < std::size_t(n) * nrhs) ext.resize(std::size_t(n) * nrhs);
    if (pos.size() < std::size_t(n)) pos.assign(n, -1);
    for (int s = lo; s <= hi; ++s) {
      if (S.sn_parent[s] == -1 || S.sn_parent[s] <= hi) continue;
      const NodeFactor& f = c.nodes[s];
      const int ne = f.nelim, rows = int(f.idx.size()) - ne;
      const std::vector<double>& d = c.down[s];
      for (int r = 0; r < nrhs; ++r)
        for (int t = 0; t < rows; ++t) ext[f.idx[ne + t] + std::size_t(r) * n] = d[t + std::size_t(r) * rows];
      std::vector<double>().swap(c.down[s]);
    }
  }
  for (int s = hi; s >= lo; --s) {
    const NodeFactor& f = c.nodes[s];
    const int m = int(f.idx.size()), ne = f.nelim;
    if (ne == 0) continue;
    G.resize(std::size_t(m) * nrhs);
    for (int r = 0; r < nrhs; ++r)
      for (int t = 0; t < m; ++t) {
        const int j = f.idx[t];
        G[t + std::size_t(r) * m] = !dist || (j >= first && j < last) ? c.X[j + std::size_t(r) * n]
                                                                      : ext[j + std::size_t(r) * n];
      }
    cpu::front_solve_backward_cpu(f.L.data(), m, ne, G.data(), nrhs);
    for (int r = 0; r < nrhs; ++r)
      for (int t = 0; t < ne; ++t) c.X[f.idx[t] + std::size_t(r) * n] = G[t + std::size_t(r) * m];
    if (!dist) continue;
    bool outside = false;  // children in other ranges (below lo): their down vectors
    for (int k = S.child_ptr[s]; k < S.child_ptr[s + 1]; ++k) outside |= S.child_list[k] < lo;
    if (!outside) continue;
    for (int t = 0; t < m; ++t) pos[f.idx[t]] = t;
    for (int k = S.child_ptr[s]; k < S.child_ptr[s + 1]; ++k) {
      const int ch = S.child_list[k];
      if (ch >= lo) continue;
      const NodeFactor& cf = c.nodes[ch];
      const int cne = cf.nelim, rows = int(cf.idx.size()) - cne;
      std::vector<double>& d = c.down[ch];
      d.resize(std::size_t(rows) * nrhs);
      for (int r = 0; r < nrhs; ++r)
        for (int t = 0; t < rows; ++t) d[t + std::size_t(r) * rows] = G[pos[cf.idx[cne + t]] + std::size_t(r) * m];
    }
    for (int t = 0; t < m; ++t) pos[f.idx[t]] = -1;
  }
}

std::uint64_t hash_node(std::uint64_t h, const NodeFactor& f) {
  auto mix = [&h](const void* p, std::size_t bytes) {
    const auto* c = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < bytes; ++i) h = (h ^ c[i]) * 1099511628211ull;
  };
  mix(f.idx.data(), f.idx.size() * sizeof(int));
  const std::size_t m = f.idx.size();
  for (std::size_t j = 0; j < std::size_t(f.nelim); ++j)  // strictly below the diagonal: L itself
    mix(f.L.data() + j * m + j + 1, (m - j - 1) * sizeof(double));
  mix(f.d.data(), f.d.size() * sizeof(double));
  mix(f.e.data(), f.e.size() * sizeof(double));
  mix(f.piv.data(), f.piv.size());
  return h;
}

}  // namespace stardiff::sparse::detail
