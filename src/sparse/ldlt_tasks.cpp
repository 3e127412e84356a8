// SPDX-License-Identifier: LGPL-2.1-or-later
// src/sparse/ldlt_tasks.cpp — see ldlt_tasks.hpp.
#include "sparse/ldlt_tasks.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "cpu/sparse/front_ldlt.hpp"
#include "runtime/cuda_workers.hpp"
#include "sparse/ldlt_dist.hpp"

#include <cblas.h>
#if STARDIFF_STARPU_CUDA
#include <starpu.h>  // STARPU_USE_CUDA where StarPU has CUDA
#endif
#if STARDIFF_STARPU_CUDA && defined(STARPU_USE_CUDA)
#include <cublas_v2.h>
#include <starpu_cublas_v2.h>
#define STARDIFF_LDLT_CUDA 1
#else
#define STARDIFF_LDLT_CUDA 0
#endif

namespace stardiff::sparse::detail {
namespace {
// t: the plan task; base: (distributed runs, ldlt_dist.hpp) the first buffer after the
// tokens: the gather vector, the xfers sent, the xfers received (big begin: received only).
struct LdltSubtreeArgs {
  const NumericCtx* ctx;
  int lo, hi, t, base;
};
struct LdltBigArgs {
  const NumericCtx* ctx;
  int s, k0, k1, c0, c1;  // pivots [k0, k1), columns [c0, c1)
  int t, base;
};

void receive_blocks(const TaskContext& t, const NumericCtx& ctx, int task, int first) {
  for (int c : ctx.dist->recvs[task]) recv_block(ctx, c, t.buffers[first++].data<double>());
}
void gather_and_send(const TaskContext& t, const NumericCtx& ctx, int task, int base) {
  pack_gather(ctx, task, t.buffers[base].data<double>());
  for (int s : ctx.dist->sends[task]) send_block(ctx, s, t.buffers[++base].data<double>());
}
// t: the plan task; base: (distributed solves) the first buffer after the tokens: the
// vectors it sends, then those it receives.
struct LdltSolveArgs {
  const SolveCtx* ctx;
  int lo, hi, t, base;
};
struct LdltSolveGatherArgs {
  const SolveCtx* ctx;
  int rank;
};
struct LdltHashArgs {
  const Symbolic* sym;
  const NodeFactor* nodes;
  int lo, hi;
  std::uint64_t h0;  // the FNV state before the first task's nodes
};

void ldlt_subtree_cpu(const TaskContext& t) {
  const auto& a = t.arg<LdltSubtreeArgs>();
  const bool dist = a.ctx->dist != nullptr;
  if (dist) receive_blocks(t, *a.ctx, a.t, a.base + 1 + int(a.ctx->dist->sends[a.t].size()));
  factor_nodes(*a.ctx, a.lo, a.hi);
  *t.buffers[0].data<std::int64_t>() = a.ctx->nodes[a.hi].nelim;
  if (dist) gather_and_send(t, *a.ctx, a.t, a.base);
}
void big_fork_join_cpu(const TaskContext& t) {
  const auto& a = t.arg<LdltBigArgs>();
  big_fork_join(*a.ctx, a.s, t.threads);
  *t.buffers[0].data<std::int64_t>() = a.ctx->nodes[a.s].nelim;
}
void big_begin_cpu(const TaskContext& t) {
  const auto& a = t.arg<LdltBigArgs>();
  if (a.ctx->dist) receive_blocks(t, *a.ctx, a.t, a.base);
  big_begin(*a.ctx, a.s);
}
void big_assemble_cpu(const TaskContext& t) {
  const auto& a = t.arg<LdltBigArgs>();
  big_assemble(*a.ctx, a.s, a.c0, a.c1);
}
void big_panel_cpu(const TaskContext& t) {
  const auto& a = t.arg<LdltBigArgs>();
  big_panel(*a.ctx, a.s, a.k0, a.k1, a.c1);
}
void big_update_cpu(const TaskContext& t) {
  const auto& a = t.arg<LdltBigArgs>();
  big_update(*a.ctx, a.s, a.k0, a.k1, a.c0, a.c1);
}
void big_finish_cpu(const TaskContext& t) {
  const auto& a = t.arg<LdltBigArgs>();
  big_finish(*a.ctx, a.s);
  *t.buffers[0].data<std::int64_t>() = a.ctx->nodes[a.s].nelim;
  if (a.ctx->dist) gather_and_send(t, *a.ctx, a.t, a.base);
}
// ---- device fronts (ldlt_tasks.hpp): the panel writes its window's copy, the update reads it.
// A window copy of the pivots K = [k0, k1) of a front of order m0 (2 m0 nb doubles) holds,
// column-major with ld r = m0 - k1: L(k1:m0, K), then W = L(k1:m0, K) D (front_times_d_cpu).
struct LdltDevArgs {
  const NumericCtx* ctx;
  int s, k0, k1, c0, c1;  // pivots [k0, k1), columns [c0, c1)
  int m0, nb;             // the front's order (== BigFront::m when not degraded), window width
};
bool dev_skip(const LdltDevArgs& a) {
  BigFront& b = a.ctx->big[a.s];
  return b.idx.empty() || std::atomic_ref<bool>(b.degraded).load(std::memory_order_relaxed);
}
// Panel of a device front. Buffers: 0 = RW its column block, 1 = W its window copy. What
// big_panel does, then the copy (only where the window took all its pivots: otherwise the
// front is degraded and every update returns at once).
void big_panel_dev_cpu(const TaskContext& t) {
  const auto& a = t.arg<LdltDevArgs>();
  if (!big_window(*a.ctx, a.s, a.k0, a.k1)) return;
  big_update(*a.ctx, a.s, a.k0, a.k1, a.k1, a.c1);
  const BigFront& b = a.ctx->big[a.s];
  const NodeFactor& nf = a.ctx->nodes[a.s];
  const int r = b.m - a.k1, nw = a.k1 - a.k0;
  double* w = t.buffers[1].data<double>();
  for (int j = 0; j < nw; ++j) {
    const double* col = b.F.data() + std::size_t(a.k0 + j) * std::size_t(b.m);
    std::copy(col + a.k1, col + b.m, w + std::size_t(j) * r);
  }
  cpu::front_times_d_cpu(b.F.data(), b.m, a.k0, nw, nf.d.data(), nf.e.data(), nf.piv.data(), a.k1, b.m,
                         w + std::size_t(r) * nw);
}
// Update of a device front's column block [c0, c1) with the pivots [k0, k1) (one window, or
// the windows of a group). Buffers: 0 = RW the block (m0 rows, ld >= m0, column 0 = front
// column c0), 1.. = R the window copies of [k0, k1) in window order. Per window K = [wk0,
// wk1) (ld r = m0 - wk1): F(c0:m0, c0:c1) -= L(c0:m0, K) W(c0:c1, K)^T, one dgemm — the
// product front_update_cols_cpu forms (its recursive lower-triangular sweep also writes the
// upper triangle of small diagonal blocks; here the whole upper triangle of the block's
// diagonal part receives scratch, which is never read). CPU and CUDA twins, the same call.
template <class Gemm>
void dev_update(const TaskContext& t, const LdltDevArgs& a, Gemm&& gemm) {
  const int c1 = std::min(a.c1, a.m0), M = a.m0 - a.c0, N = c1 - a.c0;
  const BufferView& blk = t.buffers[0];
  double* C = blk.data<double>() + a.c0;  // row c0 of front column c0
  const int ldc = int(blk.ld);
  int q = 1;
  for (int wk0 = a.k0; wk0 < a.k1; wk0 += a.nb, ++q) {
    const int wk1 = std::min(wk0 + a.nb, a.k1), r = a.m0 - wk1, K = wk1 - wk0;
    const double* L = t.buffers[q].data<double>() + (a.c0 - wk1);  // row c0 of L(:, K)
    const double* W = L + std::size_t(r) * K;                        // row c0 of W(:, K)
    gemm(M, N, K, L, r, W, r, C, ldc);
  }
}
void big_update_dev_cpu(const TaskContext& t) {
  const auto& a = t.arg<LdltDevArgs>();
  if (dev_skip(a)) return;
  dev_update(t, a, [](int M, int N, int K, const double* L, int ldl, const double* W, int ldw, double* C, int ldc) {
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, M, N, K, -1.0, L, ldl, W, ldw, 1.0, C, ldc);
  });
}
#if STARDIFF_LDLT_CUDA
std::atomic<std::int64_t> g_cuda_updates{0};
void big_update_dev_cuda(const TaskContext& t) {
  const auto& a = t.arg<LdltDevArgs>();
  if (dev_skip(a)) return;
  cublasHandle_t h = starpu_cublas_get_local_handle();
  cublasSetStream(h, static_cast<cudaStream_t>(t.cuda_stream));
  dev_update(t, a, [&](int M, int N, int K, const double* L, int ldl, const double* W, int ldw, double* C, int ldc) {
    const double minus_one = -1.0, one = 1.0;
    const cublasStatus_t st =
        cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, M, N, K, &minus_one, L, ldl, W, ldw, &one, C, ldc);
    if (st != CUBLAS_STATUS_SUCCESS) throw Error("ldlt_big_update_dev: cublasDgemm failed (status " + std::to_string(int(st)) + ")");
  });
  g_cuda_updates.fetch_add(1, std::memory_order_relaxed);
}
#endif
std::size_t solve_rows(const SolveCtx& c, int s) {
  return (c.nodes[s].idx.size() - std::size_t(c.nodes[s].nelim)) * std::size_t(c.nrhs);
}
// Distributed: a vector received into v (local memory), or v sent and freed.
void take_vector(const SolveCtx& c, int s, const BufferView& b, std::vector<double>& v) {
  const double* x = b.data<double>();
  v.assign(x, x + solve_rows(c, s));
}
void give_vector(const SolveCtx& c, int s, const BufferView& b, std::vector<double>& v) {
  std::copy(v.begin(), v.begin() + std::ptrdiff_t(solve_rows(c, s)), b.data<double>());
  std::vector<double>().swap(v);
}
void ldlt_solve_forward_cpu(const TaskContext& t) {
  const auto& a = t.arg<LdltSolveArgs>();
  const SolveCtx& c = *a.ctx;
  if (c.dist) {
    int q = a.base + int(c.dist->sends[a.t].size());
    for (int ch : c.dist->recvs[a.t]) take_vector(c, ch, t.buffers[q++], c.upd[ch]);
  }
  solve_forward(c, a.lo, a.hi);
  if (c.dist) {
    int q = a.base;
    for (int s : c.dist->sends[a.t]) give_vector(c, s, t.buffers[q++], c.upd[s]);
  }
}
void ldlt_solve_backward_cpu(const TaskContext& t) {
  const auto& a = t.arg<LdltSolveArgs>();
  const SolveCtx& c = *a.ctx;
  if (c.dist) {
    int q = a.base + int(c.dist->recvs[a.t].size());
    for (int s : c.dist->sends[a.t]) take_vector(c, s, t.buffers[q++], c.down[s]);
  }
  solve_backward(c, a.lo, a.hi);
  if (c.dist) {
    int q = a.base;
    for (int ch : c.dist->recvs[a.t]) give_vector(c, ch, t.buffers[q++], c.down[ch]);
  }
}
// The solution entries of rank a.rank's plan tasks (their columns, task order), nrhs columns.
void ldlt_solve_gather_cpu(const TaskContext& t) {
  const auto& a = t.arg<LdltSolveGatherArgs>();
  const SolveCtx& c = *a.ctx;
  const Symbolic& S = *c.sym;
  double* w = t.buffers[0].data<double>();
  for (int r = 0; r < c.nrhs; ++r)
    for (std::size_t q = 0; q < c.dist->owner.size(); ++q) {
      if (c.dist->owner[q] != a.rank) continue;
      const double* x = c.X + std::size_t(r) * S.n;
      w = std::copy(x + S.sn_first[S.task_lo[q]], x + S.sn_first[S.task_hi[q] + 1], w);
    }
}
void ldlt_hash_cpu(const TaskContext& t) {
  const auto& a = t.arg<LdltHashArgs>();
  std::uint64_t h = t.buffers.size() > 1 ? *t.buffers[1].data<std::uint64_t>() : a.h0;
  for (int s = a.lo; s <= a.hi; ++s) h = hash_node(h, a.nodes[s]);
  *t.buffers[0].data<std::uint64_t>() = h;
}
}  // namespace

const Codelet cl_ldlt_subtree("ldlt_subtree", ldlt_subtree_cpu);
const Codelet cl_ldlt_big_begin("ldlt_big_begin", big_begin_cpu);
const Codelet cl_ldlt_big_assemble("ldlt_big_assemble", big_assemble_cpu);
const Codelet cl_ldlt_big_panel("ldlt_big_panel", big_panel_cpu);
const Codelet cl_ldlt_big_update("ldlt_big_update", big_update_cpu);
const Codelet cl_ldlt_big_finish("ldlt_big_finish", big_finish_cpu);
const Codelet cl_ldlt_big_panel_dev("ldlt_big_panel_dev", big_panel_dev_cpu);
#if STARDIFF_LDLT_CUDA
const Codelet cl_ldlt_big_update_dev("ldlt_big_update_dev", big_update_dev_cpu, big_update_dev_cuda);
std::int64_t ldlt_cuda_update_count() { return g_cuda_updates.load(); }
#else
const Codelet cl_ldlt_big_update_dev("ldlt_big_update_dev", big_update_dev_cpu);
std::int64_t ldlt_cuda_update_count() { return 0; }
#endif
const Codelet cl_ldlt_big_fork_join("ldlt_big_fork_join", big_fork_join_cpu, Parallelism::ForkJoin);
const Codelet cl_ldlt_solve_forward("ldlt_solve_forward", ldlt_solve_forward_cpu);
const Codelet cl_ldlt_solve_backward("ldlt_solve_backward", ldlt_solve_backward_cpu);
const Codelet cl_ldlt_solve_gather("ldlt_solve_gather", ldlt_solve_gather_cpu);
const Codelet cl_ldlt_hash("ldlt_hash", ldlt_hash_cpu);

namespace {
// Work model of the tasks (TaskOptions::cost, for RecordingExecutor::critical_path), in
// flops: pivot t of a front of order m costs m - t on its own column and 2 (m - j) on each
// later column j (over the front: sum (m - t)^2, Symbolic::sn_flops); assembling a column
// j costs its m - j entries.
double pivot_work(int m, int k0, int k1, int c0, int c1) {
  c1 = std::min(c1, m);
  double w = 0;
  for (int t = k0; t < k1; ++t) {
    if (t >= c0 && t < c1) w += m - t;
    const int a = std::max(c0, t + 1);
    if (a < c1) w += double(c1 - a) * (2.0 * m - a - c1 + 1);  // sum over j in [a, c1) of 2 (m - j)
  }
  return w;
}
double assembly_work(int m, int c0, int c1) {
  c1 = std::min(c1, m);
  return c1 > c0 ? 0.5 * double(c1 - c0) * (2.0 * m - c0 - c1 + 1) : 0.0;
}
double front_work(const Symbolic& S, int s) {
  const int m = S.sn_first[s + 1] - S.sn_first[s] + int(S.row_ptr[s + 1] - S.row_ptr[s]);
  return S.sn_flops[s] + assembly_work(m, 0, m);
}
// The work of one step of for_each_big_task (kind, window's pivots [k0, k1), block jj).
double big_step_work(int m0, int bs, int kind, int jj, int k0, int k1) {
  switch (kind) {
    case 1: return pivot_work(m0, k0, k1, k0, (jj + 1) * bs);
    case 2: return pivot_work(m0, k0, k1, jj * bs, (jj + 1) * bs);
    case 4: return assembly_work(m0, jj * bs, (jj + 1) * bs);
    default: return 0;
  }
}

// The longest chain of the fork-join steps under the work model (the fork-join task's
// TaskOptions::span): a tile's steps in order, an update after its window.
double fork_join_span(int m0, int p0, int nb) {
  std::vector<double> tile((m0 + nb - 1) / nb, 0.0), win((p0 + nb - 1) / nb, 0.0);
  for_each_fork_join_step(m0, p0, nb, [&](int kind, int w, int t, int k0, int k1, int c0, int c1) {
    if (kind == 0 || kind == 3) return;
    double& b = tile[t];
    if (kind == 2) b = std::max(b, win[w]);
    b += kind == 4 ? assembly_work(m0, c0, c1) : pivot_work(m0, k0, k1, c0, c1);
    if (kind == 5) win[w] = b;
  });
  return tile.empty() ? 0.0 : *std::max_element(tile.begin(), tile.end());
}

// The buffers a plan task adds in a distributed run (ldlt_dist.hpp): its gather vector, the
// xfers it sends, those it receives; none otherwise.
struct DistBuffers {
  Handle* gather = nullptr;
  std::vector<Handle*> sends, recvs;
};

void insert_ldlt_subtree(Executor& exec, const NumericCtx* ctx, int t, int lo, int hi, Handle& token,
                         const std::vector<Handle*>& deps, const DistBuffers& db, int priority) {
  std::vector<DataAccess> acc;
  acc.reserve(deps.size() + 1);
  acc.push_back(out(token));
  for (Handle* h : deps) acc.push_back(in(*h));
  const int base = int(acc.size());
  if (db.gather) acc.push_back(out(*db.gather));
  for (Handle* h : db.sends) acc.push_back(out(*h));
  for (Handle* h : db.recvs) acc.push_back(in(*h));
  LdltSubtreeArgs args{ctx, lo, hi, t, base};
  double work = 0;
  for (int s = lo; s <= hi; ++s) work += front_work(*ctx->sym, s);
  exec.submit(cl_ldlt_subtree, std::span<const DataAccess>(acc.data(), acc.size()), &args, sizeof(args),
              {.name = lo == hi ? "ldlt_front" : "ldlt_subtree", .priority = priority, .cost = work});
}

int count_ldlt_big_tasks(int m0, int p0, int nb, int bs) {
  int n = 0;
  for_each_big_task(m0, p0, nb, bs, [&](int, int, int, int, int) { ++n; });
  return n;
}

// What a device front's tasks need beyond the tokens, kept until the graph has run: the
// front buffers the block handles cover, then the handles (destroyed first: unregistered).
struct DevStore {
  std::vector<std::unique_ptr<DBuf>> fronts;
  std::vector<std::unique_ptr<Handle>> blocks;
};

// dev (a device front): the blocks are matrix handles over a front buffer allocated here
// (BigFront::pre), the windows the panels' copies (managed vectors: StarPU allocates each
// where its panel runs and frees it once its last update has run), and the panels and
// updates cl_ldlt_big_panel_dev / cl_ldlt_big_update_dev; otherwise both are tokens.
int insert_ldlt_big(Executor& exec, const NumericCtx* ctx, int t, int s, int m0, int p0, int nb, int bs,
                    Handle& token, const std::vector<Handle*>& deps, const DistBuffers& db,
                    std::vector<VariableHandle<std::int64_t>>& keep, bool dev, DevStore& store) {
  const int nblk = (m0 + bs - 1) / bs, nwin = (p0 + nb - 1) / nb;
  std::vector<VariableHandle<std::int64_t>> blk, win;
  std::vector<Handle*> bh;  // the blocks' handles
  std::vector<Handle> wcopy;  // dev: the window copies
  if (dev) {
    store.fronts.push_back(std::make_unique<DBuf>());
    DBuf& F = *store.fronts.back();
    F.resize(std::size_t(m0) * std::size_t(m0));
    ctx->big[s].pre = &F;
    for (int j = 0; j < nblk; ++j) {
      const int ncol = std::min(bs, m0 - j * bs);
      store.blocks.push_back(std::make_unique<Handle>(Handle::matrix(
          F.data() + std::size_t(j) * bs * std::size_t(m0), std::size_t(m0), std::size_t(ncol), std::size_t(m0),
          sizeof(double), "ldlt_front_block")));
      bh.push_back(store.blocks.back().get());
    }
    wcopy.reserve(nwin);
    // One length for every window of the front (the largest need, 2 (m0 - k1) nw <= 2 m0 nb):
    // the update tasks of a front then share their perf-model footprints (block sizes and
    // the number of windows), so dmda calibrates them within a factorization.
    const std::size_t len = 2 * std::size_t(m0) * std::size_t(nb);
    for (int w = 0; w < nwin; ++w) wcopy.push_back(Handle::managed_vector(len, sizeof(double), "ldlt_window_copy"));
  } else {
    ctx->big[s].pre = nullptr;  // no buffer of an earlier graph's device front
    blk.reserve(nblk);
    win.reserve(nwin);
    for (int j = 0; j < nblk; ++j) blk.emplace_back(std::int64_t(0), "ldlt_block").set_owner(token.owner());
    for (int w = 0; w < nwin; ++w) win.emplace_back(std::int64_t(0), "ldlt_window").set_owner(token.owner());
    for (auto& h : blk) bh.push_back(&h);
  }
  int ntask = 0;
  std::vector<DataAccess> acc;
  for_each_big_task(m0, p0, nb, bs, [&](int kind, int w, int jj, int k0, int k1) {
    ++ntask;
    LdltBigArgs args{ctx, s, k0, k1, jj * bs, (jj + 1) * bs, t, 0};
    const double work = big_step_work(m0, bs, kind, jj, k0, k1);
    if (dev && (kind == 1 || kind == 2)) {
      LdltDevArgs da{ctx, s, k0, k1, jj * bs, (jj + 1) * bs, m0, nb};
      if (kind == 1) {
        exec.submit(cl_ldlt_big_panel_dev, da, {inout(*bh[jj]), out(wcopy[w])},
                    {.name = "ldlt_big_panel", .priority = 3, .cost = work});
      } else {
        acc.assign({inout(*bh[jj])});
        for (int q = k0 / nb; q * nb < k1; ++q) acc.push_back(in(wcopy[q]));
        const bool next_panel = jj == ((w + 1) * nb) / bs;
        exec.submit(cl_ldlt_big_update_dev, std::span<const DataAccess>(acc.data(), acc.size()), &da, sizeof(da),
                    {.name = "ldlt_big_update", .priority = next_panel ? 2 : 0, .cost = work});
      }
      return;
    }
    if (kind == 0 || kind == 3) {
      acc.clear();
      if (kind == 0) {
        for (Handle* h : bh) acc.push_back(out(*h));
        for (Handle* h : deps) acc.push_back(in(*h));
        args.base = int(acc.size());
        for (Handle* h : db.recvs) acc.push_back(in(*h));
      } else {
        acc.push_back(out(token));
        for (Handle* h : bh) acc.push_back(dev ? inout(*h) : in(*h));  // dev: degraded finish writes F
        args.base = int(acc.size());
        if (db.gather) acc.push_back(out(*db.gather));
        for (Handle* h : db.sends) acc.push_back(out(*h));
      }
      exec.submit(kind == 0 ? cl_ldlt_big_begin : cl_ldlt_big_finish,
                  std::span<const DataAccess>(acc.data(), acc.size()), &args, sizeof(args),
                  {.name = kind == 0 ? "ldlt_big_begin" : "ldlt_big_finish", .priority = 3, .cost = work});
    } else if (kind == 4) {
      exec.submit(cl_ldlt_big_assemble, args, {inout(*bh[jj])}, {.name = "ldlt_big_assemble", .priority = 3, .cost = work});
    } else if (kind == 1) {
      exec.submit(cl_ldlt_big_panel, args, {inout(blk[jj]), out(win[w])}, {.name = "ldlt_big_panel", .priority = 3, .cost = work});
    } else {
      const bool next_panel = jj == ((w + 1) * nb) / bs;  // holds the next window: on the critical path
      exec.submit(cl_ldlt_big_update, args, {in(win[w]), inout(blk[jj])},
                  {.name = "ldlt_big_update", .priority = next_panel ? 2 : 0, .cost = work});
    }
  });
  for (auto& h : blk) keep.push_back(std::move(h));
  for (auto& h : win) keep.push_back(std::move(h));
  return ntask;  // wcopy's handles go: StarPU frees each copy after its tasks
}

// The split supernode s as one fork-join task (not distributed): W(the task's token), R(children).
void insert_ldlt_fork_join(Executor& exec, const NumericCtx* ctx, int s, int m0, int p0, Handle& token,
                           const std::vector<Handle*>& deps) {
  std::vector<DataAccess> acc;
  acc.push_back(out(token));
  for (Handle* h : deps) acc.push_back(in(*h));
  LdltBigArgs args{ctx, s, 0, 0, 0, 0, 0, 0};
  exec.submit(cl_ldlt_big_fork_join, std::span<const DataAccess>(acc.data(), acc.size()), &args, sizeof(args),
              {.name = "ldlt_big_fork_join", .priority = 3, .cost = front_work(*ctx->sym, s),
               .span = fork_join_span(m0, p0, ctx->nb)});
}

// Front order m0 and pivot columns p0 of the split supernode s.
void big_front_size(const Symbolic& S, int s, int& m0, int& p0) {
  p0 = S.sn_first[s + 1] - S.sn_first[s];
  m0 = p0 + int(S.row_ptr[s + 1] - S.row_ptr[s]);
}
}  // namespace

ForkJoinMode fork_join_mode() {
  const char* v = std::getenv("STARDIFF_LDLT_FORK_JOIN");
  if (v == nullptr || *v == 0 || std::strcmp(v, "1") == 0) return ForkJoinMode::Auto;
  if (std::strcmp(v, "0") == 0) return ForkJoinMode::Never;
  if (std::strcmp(v, "force") == 0) return ForkJoinMode::Force;
  throw Error(std::string("STARDIFF_LDLT_FORK_JOIN must be 0, 1 or force, got '") + v + "'");
}

namespace {
std::atomic<bool> g_dev_without_cuda{false};
}
void set_device_fronts_without_cuda(bool on) { g_dev_without_cuda.store(on); }

int ldlt_cuda_min() {
  const char* v = std::getenv("STARDIFF_LDLT_CUDA_MIN");
  if (v == nullptr || *v == 0) return 2048;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (end == v || *end != 0 || x < 0 || x > 1000000000)
    throw Error(std::string("STARDIFF_LDLT_CUDA_MIN must be a non-negative integer (a front order), got '") + v + "'");
  return int(x);
}

bool use_fork_join(ForkJoinMode mode, const Executor& exec) {
  return mode == ForkJoinMode::Force || (mode == ForkJoinMode::Auto && exec.parallel_width() >= 3);
}

std::int64_t count_factor_tasks(const Symbolic& S, int block_size, bool fork_join) {
  std::int64_t n = 0;
  for (std::size_t t = 0; t < S.task_lo.size(); ++t) {
    if (!S.task_split[t] || fork_join) {
      n += 1;
      continue;
    }
    int m0 = 0, p0 = 0;
    big_front_size(S, S.task_lo[t], m0, p0);
    n += count_ldlt_big_tasks(m0, p0, block_size, 4 * block_size);
  }
  return n;
}

std::int64_t insert_ldlt_factorization(Executor& ex, const NumericCtx* ctx, GraphRanks ranks) {
  const Symbolic& S = *ctx->sym;
  const int nt = int(S.task_lo.size());
  const LdltDist* dist = ranks == GraphRanks::Distributed ? ctx->dist : nullptr;
  const bool fork_join = !dist && use_fork_join(ctx->fork_join, ex);
  // Device fronts: split fronts of order >= STARDIFF_LDLT_CUDA_MIN where CUDA workers may run
  // the tasks (not distributed, not fork-join).
  const bool gpus = stardiff::detail::cuda_workers(ex) > 0 || g_dev_without_cuda.load();
  const int cuda_min = !dist && !fork_join && gpus ? ldlt_cuda_min() : -1;
  std::int64_t ntasks = 0;
  DevStore dev_store;  // before the tokens: outlives the graph's handles, destroyed after them
  std::vector<VariableHandle<std::int64_t>> tokens, keep;
  tokens.reserve(nt);
  for (int t = 0; t < nt; ++t) {
    tokens.emplace_back(std::int64_t(0), "ldlt_token");
    if (dist) tokens.back().set_owner(dist->owner[t]);
    else if (ranks == GraphRanks::Replicated) tokens.back().set_owner(kEveryRank);
  }
  // Distributed: per plan task its gather vector, per cross-rank child its xfer (owned by
  // the sender's rank).
  std::vector<std::unique_ptr<VectorHandle<double>>> gather, xfers;
  if (dist) {
    for (int t = 0; t < nt; ++t) {
      gather.push_back(std::make_unique<VectorHandle<double>>(gather_size(S, t, dist->growth), "ldlt_gather"));
      gather.back()->set_owner(dist->owner[t]);
      for (int s : dist->sends[t]) {
        if (int(xfers.size()) <= dist->xfer[s]) xfers.resize(dist->xfer[s] + 1);
        xfers[dist->xfer[s]] = std::make_unique<VectorHandle<double>>(xfer_size(S, s), "ldlt_xfer");
        xfers[dist->xfer[s]]->set_owner(dist->owner[t]);
      }
    }
  }
  std::vector<Handle*> deps;
  DistBuffers db;
  for (int t = 0; t < nt; ++t) {
    deps.clear();
    for (int q = S.dep_ptr[t]; q < S.dep_ptr[t + 1]; ++q) deps.push_back(&tokens[S.dep_list[q]]);
    if (dist) {
      db.gather = gather[t].get();
      db.sends.clear();
      db.recvs.clear();
      for (int s : dist->sends[t]) db.sends.push_back(xfers[dist->xfer[s]].get());
      for (int c : dist->recvs[t]) db.recvs.push_back(xfers[dist->xfer[c]].get());
    }
    if (S.task_split[t] && fork_join) {
      int m0 = 0, p0 = 0;
      big_front_size(S, S.task_lo[t], m0, p0);
      insert_ldlt_fork_join(ex, ctx, S.task_lo[t], m0, p0, tokens[t], deps);
      ++ntasks;
    } else if (S.task_split[t]) {
      int m0 = 0, p0 = 0;
      big_front_size(S, S.task_lo[t], m0, p0);
      const bool dev = cuda_min >= 0 && m0 >= cuda_min;
      ntasks += insert_ldlt_big(ex, ctx, t, S.task_lo[t], m0, p0, ctx->nb, 4 * ctx->nb, tokens[t], deps, db, keep,
                                dev, dev_store);
    } else {
      insert_ldlt_subtree(ex, ctx, t, S.task_lo[t], S.task_hi[t], tokens[t], deps, db, 0);
      ++ntasks;
    }
  }
  ex.wait_all();  // the tokens go out of scope here
  for (int t = 0; t < nt; ++t)  // a device front whose begin did not run (failed attempt) keeps none
    if (S.task_split[t]) ctx->big[S.task_lo[t]].pre = nullptr;
  if (dist) {  // every rank reads every gather vector (collective, in task order)
    const int me = mpi_rank();
    int worst = 0;
    for (int t = 0; t < nt; ++t) {
      auto h = gather[t]->acquire(Access::R);
      const int status = unpack_gather(*ctx, t, static_cast<const double*>(h.data()), dist->owner[t] == me);
      if (status == 1) worst = 1;
      else if (status != 0 && worst == 0) worst = 2;
    }
    if (worst == 1) *ctx->failed = true;
    if (worst == 2) *ctx->abort = true;
  }
  return ntasks;
}

int insert_ldlt_solve(Executor& exec, const SolveCtx* ctx, GraphRanks ranks) {
  const auto& S = *ctx->sym;
  const int nt = int(S.task_lo.size());
  const LdltDist* dist = ranks == GraphRanks::Distributed ? ctx->dist : nullptr;
  // Per task, the tasks holding the parents of its nodes outside it (a task may group
  // cousin subtrees, whose parents differ): the plan's dependency lists (the tasks holding
  // each task's outside children), inverted. Its backward sweep waits for all of them.
  std::vector<std::vector<int>> up(nt);
  for (int t = 0; t < nt; ++t)
    for (int q = S.dep_ptr[t]; q < S.dep_ptr[t + 1]; ++q) {
      std::vector<int>& u = up[S.dep_list[q]];
      if (u.empty() || u.back() != t) u.push_back(t);  // a task's children may share a task
    }
  std::vector<VariableHandle<int>> fwd, bwd;
  fwd.reserve(nt);
  bwd.reserve(nt);
  for (int t = 0; t < nt; ++t) {
    fwd.emplace_back(0, "solve_forward_token"), bwd.emplace_back(0, "solve_backward_token");
    const int owner = dist ? dist->owner[t] : ranks == GraphRanks::Rank0 ? 0 : kEveryRank;
    if (ranks != GraphRanks::Rank0) fwd.back().set_owner(owner), bwd.back().set_owner(owner);
  }
  // Distributed: per cross-rank edge (a node whose parent's task has another rank) its
  // update vector (owned by the child's rank) and down vector (the parent's); a dependency
  // on a task of another rank is carried by them (each such task sends one), not by tokens.
  std::vector<std::unique_ptr<VectorHandle<double>>> upv, downv;
  if (dist) {
    for (int t = 0; t < nt; ++t)
      for (int s : dist->sends[t]) {
        const int x = dist->xfer[s];
        if (int(upv.size()) <= x) upv.resize(x + 1), downv.resize(x + 1);
        const std::size_t len = std::max<std::size_t>(1, solve_rows(*ctx, s));
        upv[x] = std::make_unique<VectorHandle<double>>(len, "ldlt_solve_up");
        downv[x] = std::make_unique<VectorHandle<double>>(len, "ldlt_solve_down");
      }
    for (int t = 0; t < nt; ++t) {
      for (int s : dist->sends[t]) upv[dist->xfer[s]]->set_owner(dist->owner[t]);
      for (int c : dist->recvs[t]) downv[dist->xfer[c]]->set_owner(dist->owner[t]);
    }
  }
  auto local = [&](int t, int T) { return !dist || dist->owner[t] == dist->owner[T]; };
  std::vector<DataAccess> acc;
  for (int t = 0; t < nt; ++t) {
    acc.assign({out(fwd[t])});
    for (int q = S.dep_ptr[t]; q < S.dep_ptr[t + 1]; ++q)
      if (local(t, S.dep_list[q])) acc.push_back(in(fwd[S.dep_list[q]]));
    LdltSolveArgs args{ctx, S.task_lo[t], S.task_hi[t], t, int(acc.size())};
    if (dist) {
      for (int s : dist->sends[t]) acc.push_back(out(*upv[dist->xfer[s]]));
      for (int c : dist->recvs[t]) acc.push_back(in(*upv[dist->xfer[c]]));
    }
    exec.submit(cl_ldlt_solve_forward, std::span<const DataAccess>(acc.data(), acc.size()), &args, sizeof args,
                {.name = "ldlt_solve_forward"});
  }
  for (int t = nt - 1; t >= 0; --t) {
    acc.assign({out(bwd[t])});
    for (int T : up[t])
      if (local(t, T)) acc.push_back(in(bwd[T]));
    if (up[t].empty()) acc.push_back(in(fwd[t]));  // only roots: after its own forward
    LdltSolveArgs args{ctx, S.task_lo[t], S.task_hi[t], t, int(acc.size())};
    if (dist) {
      for (int c : dist->recvs[t]) acc.push_back(out(*downv[dist->xfer[c]]));
      for (int s : dist->sends[t]) acc.push_back(in(*downv[dist->xfer[s]]));
    }
    exec.submit(cl_ldlt_solve_backward, std::span<const DataAccess>(acc.data(), acc.size()), &args, sizeof args,
                {.name = "ldlt_solve_backward"});
  }
  int ntasks = 2 * nt;
  if (dist) {
    // Per rank with tasks, one vector of its tasks' solution entries, which every rank reads.
    const int nranks = 1 + *std::max_element(dist->owner.begin(), dist->owner.end());
    std::vector<std::size_t> len(nranks, 0);
    for (int t = 0; t < nt; ++t)
      len[dist->owner[t]] += std::size_t(S.sn_first[S.task_hi[t] + 1] - S.sn_first[S.task_lo[t]]) * ctx->nrhs;
    std::vector<std::unique_ptr<VectorHandle<double>>> xg(nranks);
    for (int r = 0; r < nranks; ++r) {
      if (len[r] == 0) continue;
      xg[r] = std::make_unique<VectorHandle<double>>(len[r], "ldlt_solve_x");
      xg[r]->set_owner(r);
      acc.assign({out(*xg[r])});
      for (int t = 0; t < nt; ++t)
        if (dist->owner[t] == r) acc.push_back(in(bwd[t]));
      LdltSolveGatherArgs args{ctx, r};
      exec.submit(cl_ldlt_solve_gather, std::span<const DataAccess>(acc.data(), acc.size()), &args, sizeof args,
                  {.name = "ldlt_solve_gather"});
      ++ntasks;
    }
    exec.wait_all();
    const int me = mpi_rank();
    for (int r = 0; r < nranks; ++r) {  // collective, in rank order
      if (!xg[r]) continue;
      auto h = xg[r]->acquire(Access::R);
      if (r == me) continue;
      const double* g = static_cast<const double*>(h.data());
      for (int q = 0; q < ctx->nrhs; ++q)
        for (int t = 0; t < nt; ++t) {
          if (dist->owner[t] != r) continue;
          const int c0 = S.sn_first[S.task_lo[t]], c1 = S.sn_first[S.task_hi[t] + 1];
          std::copy(g, g + (c1 - c0), ctx->X + std::size_t(q) * S.n + c0);
          g += c1 - c0;
        }
    }
  }
  exec.wait_all();  // the tokens go out of scope here
  return ntasks;
}

std::uint64_t distributed_factor_hash(Executor& exec, const Symbolic& S, const NodeFactor* nodes,
                                      const LdltDist& dist, std::uint64_t h0) {
  const int nt = int(S.task_lo.size());
  std::vector<int> order(nt);  // the tasks in node order
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return S.task_lo[a] < S.task_lo[b]; });
  std::vector<VariableHandle<std::uint64_t>> h;
  h.reserve(nt);
  for (int i = 0; i < nt; ++i) {
    h.emplace_back(std::uint64_t(0), "ldlt_hash");
    h.back().set_owner(dist.owner[order[i]]);
  }
  for (int i = 0; i < nt; ++i) {
    const int t = order[i];
    LdltHashArgs args{&S, nodes, S.task_lo[t], S.task_hi[t], h0};
    if (i == 0) exec.submit(cl_ldlt_hash, args, {out(h[i])}, {.name = "ldlt_hash"});
    else exec.submit(cl_ldlt_hash, args, {out(h[i]), in(h[i - 1])}, {.name = "ldlt_hash"});
  }
  exec.wait_all();
  if (nt == 0) return h0;
  auto g = h.back().acquire(Access::R);
  return *static_cast<const std::uint64_t*>(g.data());
}
}  // namespace stardiff::sparse::detail
