// SPDX-License-Identifier: LGPL-2.1-or-later
// src/sparse/ldlt_internal.hpp — private data of the sparse LDL^T solver.
//
// Contract:
//  * Symbolic: everything analyze() derives from the pattern. Columns are numbered in the
//    final (ordering o postorder) numbering; perm[new] = old. Supernodes are listed in
//    postorder (children before parents), each owning the contiguous columns
//    [sn_first[s], sn_first[s+1]) and the sorted rows `rows[row_ptr[s] .. row_ptr[s+1])`
//    (all > its last column). The permuted lower triangle of A is kept as a CSC
//    (ap, ai) with asrc = position of each entry in A.values (assembly map).
//  * Plan: tasks are contiguous postorder ranges [task_lo, task_hi] of supernodes:
//    adjacent small subtrees up to a flop threshold, or a supernode above them (with the
//    chain of small supernodes below it), or one large supernode that task_split marks
//    for panel/update tasks. A task depends on the tasks owning the children of its
//    supernodes, listed in child order (fixed assembly order).
//  * NumericCtx: what a factorization task reads (symbolic, scaled values) and writes
//    (the NodeFactor of its supernodes, their contribution blocks, pivot statistics).
//    Distinct tasks write distinct elements; a contribution block is freed by the task
//    that assembles it.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "cpu/sparse/front_assembly.hpp"
#include "stardiff/sparse/ldlt.hpp"

namespace stardiff::sparse::detail {

// Uninitialized double buffer (no zero fill: fronts, factors and contribution blocks are
// written before they are read).
class DBuf {
 public:
  DBuf() = default;
  DBuf(const DBuf&) = delete;
  DBuf& operator=(const DBuf&) = delete;
  DBuf(DBuf&& o) noexcept : p_(o.p_), n_(o.n_), cap_(o.cap_) { o.p_ = nullptr, o.n_ = o.cap_ = 0; }
  DBuf& operator=(DBuf&& o) noexcept {
    if (this != &o) {
      std::free(p_);
      p_ = o.p_, n_ = o.n_, cap_ = o.cap_;
      o.p_ = nullptr, o.n_ = o.cap_ = 0;
    }
    return *this;
  }
  ~DBuf() { std::free(p_); }
  void resize(std::size_t n);  // contents not kept
  void assign(const double* b, const double* e) {
    resize(std::size_t(e - b));
    if (n_) std::memcpy(p_, b, n_ * sizeof(double));
  }
  void release() {
    std::free(p_);
    p_ = nullptr, n_ = cap_ = 0;
  }
  // Gives the physical pages wholly beyond the first `keep` doubles back to the kernel
  // (madvise MADV_DONTNEED: one call, the virtual range stays); their contents become zero.
  void discard_tail(std::size_t keep);
  void set_size(std::size_t n) { n_ = n; }  // n <= capacity
  std::size_t capacity() const { return cap_; }
  double* data() { return p_; }
  const double* data() const { return p_; }
  std::size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }

 private:
  double* p_ = nullptr;
  std::size_t n_ = 0, cap_ = 0;
};

struct Symbolic {
  int n = 0;
  Ordering ordering = Ordering::Natural;
  std::int64_t matched_pairs = 0, deferred = 0;  // LdltOptions::pairing (AnalyzeInfo)
  bool paired_order = false;  // the order kept is a paired one (deferred or compressed)
  std::vector<int> perm, iperm;  // perm[new] = old, iperm[old] = new
  int ns = 0;
  std::vector<int> sn_first;   // ns + 1
  std::vector<int> sn_parent;  // -1 for roots
  std::vector<int> child_ptr, child_list;
  std::vector<std::int64_t> row_ptr;
  std::vector<int> rows;  // filled by analyze, or (simplicial candidates) when first needed
  bool rows_filled = false;
  std::vector<double> sn_flops;  // flops of each supernode's own front
  // permuted lower triangle of A (column j: rows i >= j)
  std::vector<std::int64_t> ap;
  std::vector<int> ai;
  std::vector<int> asrc;
  // the analysed pattern (to check factorize's matrix)
  std::vector<std::int32_t> a_colptr, a_rowidx;
  // task plan
  std::vector<int> task_lo, task_hi;
  std::vector<int> dep_ptr, dep_list;  // tasks each task depends on, in child order
  std::vector<char> task_split;  // 1: a large supernode factorized as panel/update tasks
  std::int64_t nnz_l = 0, levels = 0;
  double flops = 0;
  bool single_task = false;
  // simplicial mode (SuiteSparse LDL, up-looking, no pivoting; see ldlt.cpp): chosen for
  // single-task problems whose exact flops / nnz(L) is below opts.simplicial_switch.
  bool simplicial = false;
  double exact_flops = 0;     // sum of squared column counts
  std::int64_t exact_lnz = 0;  // sum of column counts (diagonal included)
  std::vector<int> up, ui;    // upper triangle of P A P^T, CSC (diagonal included)
  std::vector<int> usrc;  // its source positions in A.values
  std::vector<int> lp, lparent, lnz;  // ldl_symbolic: column pointers of L, etree, counts
};

// METIS_NodeND on the graph (p, idx) (CSC, no diagonal), optionally with vertex weights;
// serialized, on a private rand() state (ldlt_symbolic.cpp). Returns new -> old.
std::vector<int> metis_perm(int n, const std::vector<int>& p, const std::vector<int>& idx,
                            const std::vector<int>* vwgt = nullptr);

// ---- ldlt_matching.cpp (LdltOptions::pairing) ----
// mate[j]: the partner of column j (-1: none); every zero-diagonal column with a neighbour
// is paired (greedy maximum-weight on one-sweep scaled values, nonzero-diagonal partners first).
std::vector<int> zero_diagonal_matching(const CscMatrix32& A);
// The order of the graph (p, idx) (full pattern, no diagonal) compressed by `mate` (pairs as
// one vertex), by AMD or METIS, expanded with each pair's zero-diagonal column second.
std::vector<int> compressed_order(const CscMatrix32& A, const std::vector<int>& p, const std::vector<int>& idx,
                                  const std::vector<int>& mate, bool metis);

// `perm` (a fill-reducing order) with each zero-diagonal column that precedes all its
// neighbours moved to right after its partner; *moved counts them.
std::vector<int> deferred_order(const CscMatrix32& A, const std::vector<int>& p, const std::vector<int>& idx,
                                const std::vector<int>& mate, const std::vector<int>& perm, std::int64_t* moved);
// `perm` with distinct partners: each zero-diagonal column (in the order) owns a
// nonzero-diagonal neighbour, one before it where one is free (no move), else the earliest
// free one after it (one augmenting step where all are owned), and moves right behind that
// one; left over, behind its `mate` as in deferred_order. *moved counts the moves. For a
// column preceding all its neighbours the earliest is its elimination-tree parent (no fill
// beyond its own column).
std::vector<int> partnered_order(const CscMatrix32& A, const std::vector<int>& p, const std::vector<int>& idx,
                                 const std::vector<int>& mate, const std::vector<int>& perm, std::int64_t* moved);

// Builds the whole symbolic analysis. Throws Error for a malformed matrix or options.
void analyze_pattern(const CscMatrix32& A, const LdltOptions& opts, Symbolic& S);

// The task plan (task_lo, task_hi, task_split, dep_ptr, dep_list) of an analysed tree
// (ldlt_plan.cpp); reads S.single_task, the tree and S.sn_flops.
void plan_tasks(const LdltOptions& opts, Symbolic& S);

// Fills S.rows for a simplicial candidate (from its upper triangle) before the
// multifrontal factorization first needs them; no-op once filled.
void complete_row_structures(Symbolic& S);

// Orders, builds the elimination tree and column counts for `perm` (new -> old):
// returns nnz(L) of that ordering (for auto selection); exposed for tests.
std::int64_t predicted_nnz_l(const CscMatrix32& A, const std::vector<int>& perm);

// How many orderings this thread has counted (elimination tree, postorder and column
// counts, on the graph) since it started: each candidate of an analysis once; for tests.
std::int64_t ordering_evaluations();

struct NodeFactor {
  std::vector<int> idx;      // front rows (permuted numbering), eliminated ones first
  int nelim = 0;
  DBuf L;                    // idx.size() x nelim, column-major, unit lower (strictly below the
                             // diagonal; the diagonal and above hold scratch, never read)
  std::vector<double> d, e;  // D: diagonal, and sub-diagonal of 2x2 blocks (e[k] pairs k, k+1)
  std::vector<signed char> piv;  // 1: 1x1, 2: first of 2x2, 3: second of 2x2, 0: static
  std::vector<double> growth;    // unpivoted mode, mixed signs: sum_k L(t,k)^2 |d_k| per row t
};

// A contribution block: the lower triangle of an idx.size()^2 block, either copied into v
// packed by columns (column b holds rows b.. from packed_column(b, mc) on: the block is a
// prefix of its buffer, which the parent may take over for its own block) or, for a front
// factorized in place (a split front, whose buffer became its L), read where it is: view
// (column-major, leading dimension ld) inside owner, whose pages beyond its L (keep
// doubles) release_cb() discards.
struct NodeCb {
  std::vector<int> idx;  // delayed columns first, then rows
  int ndelay = 0;
  DBuf v;
  const double* view = nullptr;
  std::size_t ld = 0;
  DBuf* owner = nullptr;
  std::size_t keep = 0;
};
using cpu::packed_column;
inline void release_cb(NodeCb& cb) {
  if (cb.owner) cb.owner->discard_tail(cb.keep);
  cb = NodeCb{};
}

struct NodeStats {
  std::int64_t pos = 0, neg = 0, zero = 0, two_by_two = 0, delayed = 0, static_pivots = 0;
  double flops = 0;
  std::int64_t nnz_l = 0;  // entries of this node's L (its trapezoid, diagonal counted)
  double min_pivot = 0, max_pivot = 0;  // over |eigenvalues| of this node's D blocks
};

// A large front factorized by several tasks (begin, panel per window, update per
// window and column block, finish). `degraded`: delayed columns arrived or a window
// failed its pivots; finish then re-assembles the front (the children's contribution
// blocks are kept until finish) and factorizes it in one go.
// `pre` (a device front, ldlt_tasks.hpp): the m0 x m0 buffer the tasks' block handles cover,
// allocated at submission; begin takes it as F when the front has no delayed columns (else
// the front is degraded, F is fresh and pre stays unused, owned by the submission).
struct BigFront {
  DBuf F;
  DBuf* pre = nullptr;
  std::vector<int> idx, perm;
  int m = 0, p = 0;
  bool degraded = false;
  std::int64_t pos = 0, neg = 0, two_by_two = 0;
};

// STARDIFF_LDLT_FORK_JOIN: where a split front runs as one fork-join task (big_fork_join)
// rather than as its panel/update tasks. Never ("0"); Auto ("1", unset or empty: where the
// executor's parallel_width() is at least 3); Force ("force": on any executor, even with one
// thread per task). Only in a factorization that is not distributed over StarPU-MPI ranks.
enum class ForkJoinMode { Never, Auto, Force };
ForkJoinMode fork_join_mode();  // reads the environment; Error naming the variable otherwise

struct LdltDist;  // ldlt_dist.hpp
struct NumericCtx {
  const Symbolic* sym = nullptr;
  const double* sval = nullptr;  // scaled values aligned with sym->ai
  NodeFactor* nodes = nullptr;
  NodeCb* cbs = nullptr;
  NodeStats* stats = nullptr;
  double u = 0.01;         // threshold
  double small = 0;        // |pivot| <= small is no pivot
  double static_piv = 0;   // magnitude of a static pivot
  int nb = 64;             // pivoting window / block size
  BigFront* big = nullptr;  // per supernode; used for split ones
  // Unpivoted attempt: no threshold (u = 0); store_front checks that every fully-summed
  // column was eliminated as a 1x1 pivot with the sign of diag (the scaled diagonal,
  // permuted numbering; any sign where |diag| <= small) and otherwise sets *failed, after
  // which every task returns at once.
  // With need_growth it also records each row's sum_k L(t,k)^2 |d_k| (NodeFactor::growth).
  bool unpivoted = false, need_growth = false;
  const double* diag = nullptr;
  bool* failed = nullptr;  // read and written through std::atomic_ref
  // A run over StarPU-MPI ranks (ldlt_dist.hpp; null otherwise). *abort (std::atomic_ref,
  // either mode): the run met sizes beyond the analysis and will be repeated; every task
  // then returns at once, as after *failed.
  const LdltDist* dist = nullptr;
  bool* abort = nullptr;
  ForkJoinMode fork_join = ForkJoinMode::Auto;
};

// Factorizes supernodes lo..hi (postorder), assembling children's contribution blocks.
void factor_nodes(const NumericCtx& ctx, int lo, int hi);

// Tasks of a split supernode s: begin lays out the front, assemble fills its columns
// [c0, c1) (one task per column block), panel factors window [k0, k1) and updates the
// rest of its block (up to block_end); update applies pivots [k0, k1) to columns [c0, c1).
void big_begin(const NumericCtx& ctx, int s);
void big_assemble(const NumericCtx& ctx, int s, int c0, int c1);
void big_panel(const NumericCtx& ctx, int s, int k0, int k1, int block_end);
// The first part of big_panel: factors window [k0, k1); false (nothing more to do) when the
// front is degraded (now or before) or was not begun. big_panel = big_window, then
// big_update(k0, k1, k1, block_end).
bool big_window(const NumericCtx& ctx, int s, int k0, int k1);
void big_update(const NumericCtx& ctx, int s, int k0, int k1, int c0, int c1);
void big_finish(const NumericCtx& ctx, int s);

// The tasks of a split front (order m0, p0 pivot columns, window nb, column blocks of bs)
// in submission order: begin; an assembly of every column
// block (in parallel: zeroing and extend-add were a serial step at the top of the tree);
// per window w a panel (on the block holding it) and an update of every later block that
// holds fully-summed columns; the blocks of the contribution block alone are updated
// once per group of windows (long k: near-peak dgemm; fewer sweeps over it) after the
// last window of the group; finish. f(kind, w, block, k0, k1) with kind 0 begin,
// 1 panel, 2 update, 3 finish, 4 assemble.
template <class F>
void for_each_big_task(int m0, int p0, int nb, int bs, F&& f) {
  const int nblk = (m0 + bs - 1) / bs, nwin = (p0 + nb - 1) / nb;
  const int first_cb = (p0 + bs - 1) / bs;  // blocks from here on hold no fully-summed column
  const int group = std::max(1, 512 / nb);
  f(0, 0, 0, 0, 0);
  for (int jj = 0; jj < nblk; ++jj) f(4, 0, jj, 0, 0);
  for (int w = 0; w < nwin; ++w) {
    const int k0 = w * nb, k1 = std::min(k0 + nb, p0), j = k0 / bs;
    f(1, w, j, k0, k1);
    for (int jj = j + 1; jj < std::min(nblk, first_cb); ++jj) f(2, w, jj, k0, k1);
    if ((w + 1) % group == 0 || w == nwin - 1) {
      const int g0 = (w / group) * group * nb;
      for (int jj = first_cb; jj < nblk; ++jj) f(2, w, jj, g0, k1);
    }
  }
  f(3, 0, 0, 0, 0);
}


// The steps of a split front run as one fork-join task: for_each_big_task's, with each
// column block cut into tiles of nb columns (tile c / nb holds column c): an assembly per
// tile, a panel as its window (kind 5) then the updates of the rest of its block tile by
// tile, an update per tile. f(kind, w, tile, k0, k1, c0, c1): kind 0 begin, 2 update of
// columns [c0, c1) with pivots [k0, k1) (window w's, or its group's), 3 finish, 4 assembly
// of [c0, c1), 5 window w = [k0, k1). Every column receives the same kernel calls, with the
// same pivot ranges, in the same order as in the split front's tasks.
template <class F>
void for_each_fork_join_step(int m0, int p0, int nb, F&& f) {
  const int bs = 4 * nb;
  for_each_big_task(m0, p0, nb, bs, [&](int kind, int w, int jj, int k0, int k1) {
    const int b1 = std::min((jj + 1) * bs, m0);
    auto tiles = [&](int step, int c, int kk0, int kk1) {
      while (c < b1) {
        const int e = std::min(b1, (c / nb + 1) * nb);
        f(step, w, c / nb, kk0, kk1, c, e);
        c = e;
      }
    };
    if (kind == 0 || kind == 3) f(kind, 0, 0, 0, 0, 0, 0);
    else if (kind == 4) tiles(4, jj * bs, 0, 0);
    else if (kind == 2) tiles(2, jj * bs, k0, k1);
    else {
      f(5, w, k0 / nb, k0, k1, k0, k1);
      tiles(2, k1, k0, k1);
    }
  });
}

// A split supernode s as one fork-join task (ldlt_fork_join.cpp): the steps of
// for_each_fork_join_step, those between begin and finish as OpenMP tasks on `threads`
// threads, ordered per tile (in submission order) and per window (its updates after it).
// Each column receives the same kernel calls in the same order as in the split front's tasks.
void big_fork_join(const NumericCtx& ctx, int s, int threads);

// The solve as tasks over the factorization's plan (postorder ranges of supernodes).
// Forward + diagonal, node by node in postorder: the node's front vector is its own
// right-hand side entries plus its children's update vectors (summed in child order); it
// solves with L11 and D, writes its eliminated entries of X, and leaves the update vector
// -L21 x1 (its other rows) for its parent — so sibling subtrees never write the same
// entries. Backward, parents first: a node reads its ancestors' entries of X (final) and
// writes its own. Deterministic: bitwise equal under any schedule.
// Distributed (down non-null; a run over StarPU-MPI ranks without delayed columns, whose
// ranges then eliminate exactly their own columns): backward reads only its range's own
// columns from X, the other rows from the down vectors of its exposed nodes (those whose
// parent lies outside it), and leaves for each child in another range its down vector (X
// at the child's rows idx[nelim..), from the parent's front) — the values one rank reads
// from X, so the solution is bitwise the same.
struct SolveCtx {
  const Symbolic* sym = nullptr;
  const NodeFactor* nodes = nullptr;
  double* X = nullptr;
  int nrhs = 1;
  // per node whose parent lies in another task: its update vector (rows idx[nelim..), nrhs
  // columns); within a task they stay on the task's stack
  std::vector<double>* upd = nullptr;
  // distributed: per node whose parent lies in another task, its down vector (as upd)
  std::vector<double>* down = nullptr;
  const LdltDist* dist = nullptr;  // distributed: the factorization's distribution
};
// FNV-1a of node f's factors (rows, L strictly below the diagonal, D, pivots) folded into h:
// Ldlt::factor_hash() over the nodes in order.
std::uint64_t hash_node(std::uint64_t h, const NodeFactor& f);

void solve_forward(const SolveCtx& c, int lo, int hi);   // nodes lo..hi, increasing
void solve_backward(const SolveCtx& c, int lo, int hi);  // nodes hi..lo, decreasing

}  // namespace stardiff::sparse::detail
