// SPDX-License-Identifier: LGPL-2.1-or-later
// src/adjoint/external_tridiag.cpp — tridiag_solve as an external function (see tridiag.hpp):
// the batched Thomas kernels of codelets/cpu/mesh/tridiag on tile views, or (lines across
// tiles) the same arithmetic on the tiles' rows in place.
#include "stardiff/adjoint/tridiag.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <vector>

#include "adjoint/tridiag_device.hpp"
#include "cpu/mesh/tridiag.hpp"
#include "stardiff/adjoint/external.hpp"

#if STARDIFF_STARPU_CUDA
#include <starpu.h>  // STARPU_USE_CUDA where StarPU has CUDA
#endif
#if STARDIFF_STARPU_CUDA && defined(STARPU_USE_CUDA)
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "cuda/mesh/tridiag.cuh"
#define STARDIFF_TRIDIAG_CUDA 1
#else
#define STARDIFF_TRIDIAG_CUDA 0
#endif

namespace stardiff {
namespace {

using cpu::TridiagArray;
using cpu::TridiagBox;
using cpu::TridiagConstArray;
using cpu::TridiagStatus;
using mesh::READ;
using mesh::RW;
using mesh::WRITE;
using D = ExtDat<double>;
using CD = ExtDat<const double>;

// The interior box of the call: block dims, solve axis, base and size per dimension.
struct Geo {
  int dims = 1, axis = 0;
  int base[3] = {0, 0, 0}, size[3] = {1, 1, 1};
  int outer() const { return dims - 1; }
  long long points() const { return 1LL * size[0] * size[1] * size[2]; }
};

// Owned interior rows of tile t along the outer axis.
template <class E>
void rows(const E& e, int t, const Geo& G, int& r0, int& r1) {
  r0 = std::max(e.row_lo(t), G.base[G.outer()]);
  r1 = std::min(e.row_hi(t), G.base[G.outer()] + G.size[G.outer()]);
}

// Element (base, ..., row r0) of tile t and the strides.
template <class E>
TridiagArray tile_array(const E& e, int t, const Geo& G, int r0) {
  if (!e.valid()) return {nullptr, {0, 0, 0}};
  const auto& g = e.geom(t);
  long long idx[3] = {G.base[0], G.base[1], G.base[2]};
  idx[G.outer()] = r0;
  double* p = const_cast<double*>(e.data(t)) + g.origin + idx[0] * g.s[0] + idx[1] * g.s[1] + idx[2] * g.s[2];
  return {p, {g.s[0], g.s[1], g.s[2]}};
}
TridiagConstArray cview(const TridiagArray& a) { return {a.p, {a.s[0], a.s[1], a.s[2]}}; }

TridiagBox box_of(const Geo& G, long long outer_rows) {
  TridiagBox b{{G.size[0], G.size[1], G.size[2]}, G.axis};
  b.n[G.outer()] = outer_rows;
  return b;
}

void check(const TridiagStatus& st, const ExternalContext& ctx) {
  if (!st.ok())
    throw Error("tridiag_solve '" + std::string(ctx.name) + "': zero or non-finite pivot on " +
                std::to_string(st.bad_lines) + " line(s), first line " + std::to_string(st.first_line) +
                " (of tile " + std::to_string(ctx.tile_lo) + "'s part), row " + std::to_string(st.first_row));
}

// Lines along the outer axis cross tiles, unless the task holds the only tile.
bool across(const Geo& G, const ExternalContext& ctx) { return G.axis == G.outer() && ctx.tile_hi - ctx.tile_lo > 1; }

// Work space of the Thomas kernels, kept per thread between calls (large buffers would
// otherwise be mapped and faulted in afresh by every call).
double* work_buffer(std::size_t n) {
  thread_local std::vector<double> buf;
  if (buf.size() < n) buf.resize(n);
  return buf.data();
}

// Lines along the outer axis, solved in place across the task's tiles (no copies): per row r of
// the outer axis a pointer p[r] into the tile that owns it; element (line li + n0 lj, row r) at
// p[r] + li s0 + lj s1. The arithmetic per line is that of the Thomas kernels
// (codelets/cpu/mesh/tridiag.cpp), so results equal those of one tile bitwise.
struct RowTable {
  std::vector<double*> p;
  long long s0 = 0, s1 = 0;
  double* at(long long r, long long li, long long lj) const { return p[r] + li * s0 + lj * s1; }
};
template <class E>
RowTable row_table(const E& e, const Geo& G) {
  RowTable T;
  if (!e.valid()) return T;
  const int o = G.outer();
  T.p.assign(static_cast<std::size_t>(G.size[o]), nullptr);
  for (int t = e.tile_lo(); t < e.tile_hi(); ++t) {
    int r0, r1;
    rows(e, t, G, r0, r1);
    if (r0 >= r1) continue;
    const TridiagArray a = tile_array(e, t, G, r0);
    for (int r = r0; r < r1; ++r) T.p[r - G.base[o]] = a.p + static_cast<long long>(r - r0) * a.s[o];
    T.s0 = a.s[0];
    T.s1 = o == 2 ? a.s[1] : 0;
  }
  return T;
}
inline bool good_pivot(double m) { return m != 0.0 && std::fabs(m) <= DBL_MAX; }
struct LineShape {
  long long n, n0, n1, nl;  // rows, lines along axis 0 and 1, lines
};
LineShape shape(const Geo& G) {
  const int o = G.outer();
  const long long n0 = o >= 1 ? G.size[0] : 1, n1 = o == 2 ? G.size[1] : 1;
  return {G.size[o], n0, n1, n0 * n1};
}
long long* line_rows(long long nl) {
  thread_local std::vector<long long> fr;
  if (static_cast<long long>(fr.size()) < nl) fr.resize(static_cast<std::size_t>(nl));
  return fr.data();
}
TridiagStatus status_of(const long long* fr, long long nl) {
  TridiagStatus st;
  for (long long l = 0; l < nl; ++l)
    if (fr[l] >= 0) {
      if (st.bad_lines++ == 0) st.first_line = l, st.first_row = fr[l];
    }
  return st;
}

void solve_rows(const ExternalContext& ctx, const Geo& G, const RowTable& A, const RowTable& B, const RowTable& C,
                const RowTable& D, const RowTable& X) {
  const LineShape S = shape(G);
  const long long n = S.n, nl = S.nl;
  if (n <= 0 || nl <= 0) return;
  double* cp = work_buffer(static_cast<std::size_t>(n * nl));
  long long* fr = line_rows(nl);
  for (long long r = 0; r < n; ++r) {
    const bool last = r == n - 1;
    for (long long lj = 0; lj < S.n1; ++lj) {
      const double *Ar = A.at(r, 0, lj), *Br = B.at(r, 0, lj), *Cr = C.at(r, 0, lj), *Dr = D.at(r, 0, lj);
      double* Xr = X.at(r, 0, lj);
      const double* Xp = r > 0 ? X.at(r - 1, 0, lj) : nullptr;
      double* cc = cp + r * nl + lj * S.n0;
      const double* cprev = cc - nl;
      long long* f = fr + lj * S.n0;
      if (r == 0) {
        for (long long li = 0; li < S.n0; ++li) {
          const double bb = Br[li * B.s0];
          f[li] = good_pivot(bb) ? -1 : 0;
          cc[li] = n > 1 ? Cr[li * C.s0] / bb : 0.0;
          Xr[li * X.s0] = Dr[li * D.s0] / bb;
        }
        continue;
      }
#pragma GCC ivdep
      for (long long li = 0; li < S.n0; ++li) {
        const double aa = Ar[li * A.s0];
        const double m = Br[li * B.s0] - aa * cprev[li];
        f[li] = (f[li] < 0 && !good_pivot(m)) ? r : f[li];
        cc[li] = last ? 0.0 : Cr[li * C.s0] / m;
        Xr[li * X.s0] = (Dr[li * D.s0] - aa * Xp[li * X.s0]) / m;
      }
    }
  }
  for (long long r = n - 2; r >= 0; --r)
    for (long long lj = 0; lj < S.n1; ++lj) {
      double* Xr = X.at(r, 0, lj);
      const double* Xn = X.at(r + 1, 0, lj);
      const double* cc = cp + r * nl + lj * S.n0;
#pragma GCC ivdep
      for (long long li = 0; li < S.n0; ++li) Xr[li * X.s0] = Xr[li * X.s0] - cc[li] * Xn[li * X.s0];
    }
  check(status_of(fr, nl), ctx);
}

// The adjoint across tiles (xbar consumed; DB may be XB: in place).
void adjoint_rows(const ExternalContext& ctx, const Geo& G, const RowTable& A, const RowTable& B, const RowTable& C,
                  const RowTable& X, const RowTable& XB, const RowTable& AB, const RowTable& BB, const RowTable& CB,
                  const RowTable& DB) {
  const LineShape S = shape(G);
  const long long n = S.n, nl = S.nl;
  if (n <= 0 || nl <= 0) return;
  double* w1 = work_buffer(static_cast<std::size_t>(2 * n * nl));
  double* w2 = w1 + n * nl;
  long long* fr = line_rows(nl);
  // Transposed system: sub-diagonal c_{r-1}, diagonal b_r, super-diagonal a_{r+1}.
  for (long long r = 0; r < n; ++r) {
    const bool last = r == n - 1;
    for (long long lj = 0; lj < S.n1; ++lj) {
      const double* Br = B.at(r, 0, lj);
      const double* An = last ? nullptr : A.at(r + 1, 0, lj);
      double* XBr = XB.at(r, 0, lj);
      double *w1c = w1 + r * nl + lj * S.n0, *w2c = w2 + r * nl + lj * S.n0;
      long long* f = fr + lj * S.n0;
      if (r == 0) {
        for (long long li = 0; li < S.n0; ++li) {
          const double bb = Br[li * B.s0];
          f[li] = good_pivot(bb) ? -1 : 0;
          w1c[li] = n > 1 ? An[li * A.s0] / bb : 0.0;
          const double xb = XBr[li * XB.s0];
          XBr[li * XB.s0] = 0.0;
          w2c[li] = xb / bb;
        }
        continue;
      }
      const double* Cp = C.at(r - 1, 0, lj);
      const double *w1p = w1c - nl, *w2p = w2c - nl;
#pragma GCC ivdep
      for (long long li = 0; li < S.n0; ++li) {
        const double cc = Cp[li * C.s0];
        const double m = Br[li * B.s0] - cc * w1p[li];
        f[li] = (f[li] < 0 && !good_pivot(m)) ? r : f[li];
        w1c[li] = last ? 0.0 : An[li * A.s0] / m;
        const double xb = XBr[li * XB.s0];
        w2c[li] = (xb - cc * w2p[li]) / m;
        XBr[li * XB.s0] = 0.0;
      }
    }
  }
  for (long long r = n - 2; r >= 0; --r) {
    const double *w1c = w1 + r * nl, *w2n = w2 + (r + 1) * nl;
    double* w2c = w2 + r * nl;
    for (long long l = 0; l < nl; ++l) w2c[l] = w2c[l] - w1c[l] * w2n[l];
  }
  for (long long r = 0; r < n; ++r)
    for (long long lj = 0; lj < S.n1; ++lj) {
      const double* g = w2 + r * nl + lj * S.n0;
      const double *Xr = X.at(r, 0, lj), *Xp = r > 0 ? X.at(r - 1, 0, lj) : nullptr,
                   *Xn = r + 1 < n ? X.at(r + 1, 0, lj) : nullptr;
      if (!DB.p.empty()) {
        double* P = DB.at(r, 0, lj);
        for (long long li = 0; li < S.n0; ++li) P[li * DB.s0] += g[li];
      }
      if (!BB.p.empty()) {
        double* P = BB.at(r, 0, lj);
        for (long long li = 0; li < S.n0; ++li) P[li * BB.s0] -= g[li] * Xr[li * X.s0];
      }
      if (!AB.p.empty() && Xp) {
        double* P = AB.at(r, 0, lj);
        for (long long li = 0; li < S.n0; ++li) P[li * AB.s0] -= g[li] * Xp[li * X.s0];
      }
      if (!CB.p.empty() && Xn) {
        double* P = CB.at(r, 0, lj);
        for (long long li = 0; li < S.n0; ++li) P[li * CB.s0] -= g[li] * Xn[li * X.s0];
      }
    }
  check(status_of(fr, nl), ctx);
}

// x = A^{-1} d (x may be d's storage).
void solve(const ExternalContext& ctx, const Geo& G, const CD& a, const CD& b, const CD& c, const CD& d, const D& x) {
  if (across(G, ctx)) {
    solve_rows(ctx, G, row_table(a, G), row_table(b, G), row_table(c, G), row_table(d, G), row_table(x, G));
    return;
  }
  for (int t = ctx.tile_lo; t < ctx.tile_hi; ++t) {
    int r0, r1;
    rows(x, t, G, r0, r1);
    if (r0 >= r1) continue;
    const TridiagBox box = box_of(G, r1 - r0);
    double* work = work_buffer(cpu::tridiag_solve_work_size(box));
    check(cpu::tridiag_solve_cpu(box, cview(tile_array(a, t, G, r0)), cview(tile_array(b, t, G, r0)),
                                 cview(tile_array(c, t, G, r0)), cview(tile_array(d, t, G, r0)),
                                 tile_array(x, t, G, r0), work),
          ctx);
  }
}

// The adjoint: xbar consumed; in place (xbar and dbar the same storage) dbar = g.
void adjoint(const ExternalContext& ctx, const Geo& G, const CD& a, const D& abar, const CD& b, const D& bbar,
             const CD& c, const D& cbar, const CD& x, const D& xbar, const D& dbar, bool inplace) {
  if (across(G, ctx)) {
    const RowTable xb = row_table(xbar, G);
    adjoint_rows(ctx, G, row_table(a, G), row_table(b, G), row_table(c, G), row_table(x, G), xb, row_table(abar, G),
                 row_table(bbar, G), row_table(cbar, G), inplace ? xb : row_table(dbar, G));
    return;
  }
  for (int t = ctx.tile_lo; t < ctx.tile_hi; ++t) {
    int r0, r1;
    rows(x, t, G, r0, r1);
    if (r0 >= r1) continue;
    const TridiagBox box = box_of(G, r1 - r0);
    double* work = work_buffer(cpu::tridiag_adjoint_work_size(box));
    TridiagArray xb = tile_array(xbar, t, G, r0);
    check(cpu::tridiag_adjoint_cpu(box, cview(tile_array(a, t, G, r0)), cview(tile_array(b, t, G, r0)),
                                   cview(tile_array(c, t, G, r0)), cview(tile_array(x, t, G, r0)), xb, true,
                                   tile_array(abar, t, G, r0), tile_array(bbar, t, G, r0),
                                   tile_array(cbar, t, G, r0), inplace ? xb : tile_array(dbar, t, G, r0),
                                   work),
          ctx);
  }
}

#if STARDIFF_TRIDIAG_CUDA
// ---- CUDA workers: the same solves on device buffers (codelets/cuda/mesh/tridiag) ----------
std::atomic<long long> g_cuda_tasks{0};

enum class CudaSolver { Thomas, Cusparse };
CudaSolver cuda_solver() {
  const char* v = std::getenv("STARDIFF_TRIDIAG_CUDA");
  if (!v || !*v || std::strcmp(v, "thomas") == 0) return CudaSolver::Thomas;
  if (std::strcmp(v, "cusparse") == 0) return CudaSolver::Cusparse;
  throw Error(std::string("STARDIFF_TRIDIAG_CUDA='") + v + "': expected thomas or cusparse");
}

void cuda_check(cudaError_t e, const ExternalContext& ctx, const char* what) {
  if (e != cudaSuccess)
    throw Error("tridiag_solve '" + std::string(ctx.name) + "': " + what + ": " + cudaGetErrorString(e));
}

void cusparse_check(const char* failed, const ExternalContext& ctx) {
  if (failed) throw Error("tridiag_solve '" + std::string(ctx.name) + "' (STARDIFF_TRIDIAG_CUDA=cusparse): " + failed);
}

// Stream-ordered device scratch (cudaMallocAsync), freed on the stream when it goes.
struct DeviceScratch {
  void* p = nullptr;
  cudaStream_t st;
  DeviceScratch(std::size_t bytes, cudaStream_t s, const ExternalContext& ctx) : st(s) {
    if (bytes) cuda_check(cudaMallocAsync(&p, bytes, st), ctx, "cudaMallocAsync");
  }
  ~DeviceScratch() {
    if (p) cudaFreeAsync(p, st);
  }
  DeviceScratch(const DeviceScratch&) = delete;
  DeviceScratch& operator=(const DeviceScratch&) = delete;
  double* d() const { return static_cast<double*>(p); }
};

// Lines across tiles: each dat's owned rows gathered into one device buffer with the tiles'
// strides (rows in order, no copies of the ghost rows), solved as one box, written ones
// scattered back. Dats sharing storage (in place) share one buffer.
class Gather {
 public:
  Gather(const Geo& G, cudaStream_t st, const ExternalContext& ctx) : G_(G), st_(st), ctx_(ctx) {}
  template <class E>
  TridiagArray add(const E& e) {
    if (!e.valid()) return {nullptr, {0, 0, 0}};
    const void* key = e.data(e.tile_lo());
    for (auto& b : bufs_)
      if (b.key == key) return b.view;
    const int o = G_.outer();
    const auto& g0 = e.geom(e.tile_lo());
    long long inner = 1;
    for (int k = 0; k < G_.dims; ++k)
      if (k != o) inner += (G_.size[k] - 1) * g0.s[k];
    Buf b;
    b.key = key;
    b.so = g0.s[o];
    b.inner = inner;
    b.mem = std::make_unique<DeviceScratch>(
        static_cast<std::size_t>((G_.size[o] - 1) * b.so + inner) * sizeof(double), st_, ctx_);
    for (int t = e.tile_lo(); t < e.tile_hi(); ++t) {
      int r0, r1;
      rows(e, t, G_, r0, r1);
      if (r0 >= r1) continue;
      const auto& g = e.geom(t);
      require(g.s[0] == g0.s[0] && g.s[1] == g0.s[1] && g.s[2] == g0.s[2],
              "tridiag_solve '" + std::string(ctx_.name) + "': tiles of '" + e.name() + "' differ in strides");
      b.parts.push_back({tile_array(e, t, G_, r0).p, r0 - G_.base[o], r1 - r0});
    }
    for (const Part& q : b.parts)
      cuda_check(cudaMemcpyAsync(b.mem->d() + q.row * b.so, q.p, bytes(b, q), cudaMemcpyDeviceToDevice, st_), ctx_,
                 "gather");
    b.view = {b.mem->d(), {g0.s[0], g0.s[1], g0.s[2]}};
    bufs_.push_back(std::move(b));
    return bufs_.back().view;
  }
  void scatter(const TridiagArray& v) {
    if (!v.p) return;
    for (auto& b : bufs_)
      if (b.view.p == v.p && !b.scattered) {
        b.scattered = true;
        for (const Part& q : b.parts)
          cuda_check(cudaMemcpyAsync(q.p, b.mem->d() + q.row * b.so, bytes(b, q), cudaMemcpyDeviceToDevice, st_),
                     ctx_, "scatter");
      }
  }

 private:
  struct Part {
    double* p;
    long long row, rows;
  };
  struct Buf {
    const void* key = nullptr;
    long long so = 0, inner = 0;
    std::unique_ptr<DeviceScratch> mem;
    std::vector<Part> parts;
    TridiagArray view{nullptr, {0, 0, 0}};
    bool scattered = false;
  };
  static std::size_t bytes(const Buf& b, const Part& q) {
    return static_cast<std::size_t>((q.rows - 1) * b.so + b.inner) * sizeof(double);
  }
  Geo G_;
  cudaStream_t st_;
  const ExternalContext& ctx_;
  std::vector<Buf> bufs_;
};

// Waits for the stream and turns the kernels' status into check()'s Error.
void finish(const ExternalContext& ctx, const TridiagBox& box, const cuda::TridiagCudaStatus* dst, cudaStream_t st) {
  cuda::TridiagCudaStatus hs{};
  cuda_check(cudaMemcpyAsync(&hs, dst, sizeof hs, cudaMemcpyDeviceToHost, st), ctx, "status copy");
  cuda_check(cudaStreamSynchronize(st), ctx, "kernel");
  TridiagStatus s;
  s.bad_lines = static_cast<long long>(hs.bad_lines);
  if (s.bad_lines > 0) {
    const long long n = box.n[box.axis] > 0 ? box.n[box.axis] : 1;
    s.first_line = static_cast<long long>(hs.first_key / static_cast<unsigned long long>(n));
    s.first_row = static_cast<long long>(hs.first_key % static_cast<unsigned long long>(n));
  }
  check(s, ctx);
}

void solve_box_cuda(const ExternalContext& ctx, const TridiagBox& box, TridiagArray a, TridiagArray b, TridiagArray c,
                    TridiagArray d, TridiagArray x, cudaStream_t st) {
  DeviceScratch status(sizeof(cuda::TridiagCudaStatus), st, ctx);
  auto* dst = static_cast<cuda::TridiagCudaStatus*>(status.p);
  if (cuda_solver() == CudaSolver::Cusparse) {
    cusparse_check(cuda::tridiag_solve_cusparse(box, cview(a), cview(b), cview(c), cview(d), x, dst, st), ctx);
    finish(ctx, box, dst, st);
    return;
  }
  DeviceScratch work(cuda::tridiag_solve_cuda_work_size(box) * sizeof(double), st, ctx);
  cuda::tridiag_solve_cuda(box, cview(a), cview(b), cview(c), cview(d), x, work.d(), dst, st);
  cuda_check(cudaGetLastError(), ctx, "kernel launch");
  finish(ctx, box, dst, st);
}

void adjoint_box_cuda(const ExternalContext& ctx, const TridiagBox& box, TridiagArray a, TridiagArray b,
                      TridiagArray c, TridiagArray x, TridiagArray xbar, TridiagArray abar, TridiagArray bbar,
                      TridiagArray cbar, TridiagArray dbar, cudaStream_t st) {
  DeviceScratch status(sizeof(cuda::TridiagCudaStatus), st, ctx);
  auto* dst = static_cast<cuda::TridiagCudaStatus*>(status.p);
  if (cuda_solver() == CudaSolver::Cusparse) {
    cusparse_check(cuda::tridiag_adjoint_cusparse(box, cview(a), cview(b), cview(c), cview(x), xbar, abar, bbar,
                                                  cbar, dbar, dst, st),
                   ctx);
    finish(ctx, box, dst, st);
    return;
  }
  DeviceScratch work(cuda::tridiag_adjoint_cuda_work_size(box) * sizeof(double), st, ctx);
  cuda::tridiag_adjoint_cuda(box, cview(a), cview(b), cview(c), cview(x), xbar, true, abar, bbar, cbar, dbar,
                             work.d(), dst, st);
  cuda_check(cudaGetLastError(), ctx, "kernel launch");
  finish(ctx, box, dst, st);
}

void solve_cuda(const ExternalContext& ctx, const Geo& G, const CD& a, const CD& b, const CD& c, const CD& d,
                const D& x) {
  ++g_cuda_tasks;
  auto st = static_cast<cudaStream_t>(ctx.cuda_stream);
  if (across(G, ctx)) {
    Gather g(G, st, ctx);
    const TridiagArray A = g.add(a), B = g.add(b), C = g.add(c), Dd = g.add(d), X = g.add(x);
    solve_box_cuda(ctx, box_of(G, G.size[G.outer()]), A, B, C, Dd, X, st);
    g.scatter(X);
    cuda_check(cudaStreamSynchronize(st), ctx, "scatter");
    return;
  }
  for (int t = ctx.tile_lo; t < ctx.tile_hi; ++t) {
    int r0, r1;
    rows(x, t, G, r0, r1);
    if (r0 >= r1) continue;
    solve_box_cuda(ctx, box_of(G, r1 - r0), tile_array(a, t, G, r0), tile_array(b, t, G, r0),
                   tile_array(c, t, G, r0), tile_array(d, t, G, r0), tile_array(x, t, G, r0), st);
  }
}

void adjoint_cuda(const ExternalContext& ctx, const Geo& G, const CD& a, const D& abar, const CD& b, const D& bbar,
                  const CD& c, const D& cbar, const CD& x, const D& xbar, const D& dbar, bool inplace) {
  ++g_cuda_tasks;
  auto st = static_cast<cudaStream_t>(ctx.cuda_stream);
  if (across(G, ctx)) {
    Gather g(G, st, ctx);
    const TridiagArray A = g.add(a), B = g.add(b), C = g.add(c), X = g.add(x), XB = g.add(xbar), AB = g.add(abar),
                       BB = g.add(bbar), CB = g.add(cbar), DB = inplace ? XB : g.add(dbar);
    adjoint_box_cuda(ctx, box_of(G, G.size[G.outer()]), A, B, C, X, XB, AB, BB, CB, DB, st);
    for (const TridiagArray& w : {XB, AB, BB, CB, DB}) g.scatter(w);
    cuda_check(cudaStreamSynchronize(st), ctx, "scatter");
    return;
  }
  for (int t = ctx.tile_lo; t < ctx.tile_hi; ++t) {
    int r0, r1;
    rows(x, t, G, r0, r1);
    if (r0 >= r1) continue;
    TridiagArray xb = tile_array(xbar, t, G, r0);
    adjoint_box_cuda(ctx, box_of(G, r1 - r0), tile_array(a, t, G, r0), tile_array(b, t, G, r0),
                     tile_array(c, t, G, r0), tile_array(x, t, G, r0), xb, tile_array(abar, t, G, r0),
                     tile_array(bbar, t, G, r0), tile_array(cbar, t, G, r0), inplace ? xb : tile_array(dbar, t, G, r0),
                     st);
  }
}
#endif  // STARDIFF_TRIDIAG_CUDA

// x = A^{-1} d on the worker that runs the task.
void solve_any(const ExternalContext& ctx, const Geo& G, const CD& a, const CD& b, const CD& c, const CD& d,
               const D& x) {
#if STARDIFF_TRIDIAG_CUDA
  if (ctx.cuda_stream) return solve_cuda(ctx, G, a, b, c, d, x);
#endif
  solve(ctx, G, a, b, c, d, x);
}
void adjoint_any(const ExternalContext& ctx, const Geo& G, const CD& a, const D& abar, const CD& b, const D& bbar,
                 const CD& c, const D& cbar, const CD& x, const D& xbar, const D& dbar, bool inplace) {
#if STARDIFF_TRIDIAG_CUDA
  if (ctx.cuda_stream) return adjoint_cuda(ctx, G, a, abar, b, bbar, c, cbar, x, xbar, dbar, inplace);
#endif
  adjoint(ctx, G, a, abar, b, bbar, c, cbar, x, xbar, dbar, inplace);
}

struct OutPrimal {
  static constexpr bool cuda = STARDIFF_TRIDIAG_CUDA;
  Geo G;
  void operator()(const ExternalContext& ctx, CD a, CD b, CD c, CD d, D x) const { solve_any(ctx, G, a, b, c, d, x); }
};
struct OutAdjoint {
  static constexpr bool cuda = STARDIFF_TRIDIAG_CUDA;
  Geo G;
  void operator()(const ExternalContext& ctx, CD a, D abar, CD b, D bbar, CD c, D cbar, CD, D dbar, CD x,
                  D xbar) const {
    adjoint_any(ctx, G, a, abar, b, bbar, c, cbar, x, xbar, dbar, false);
  }
};
struct InPrimal {
  static constexpr bool cuda = STARDIFF_TRIDIAG_CUDA;
  Geo G;
  void operator()(const ExternalContext& ctx, CD a, CD b, CD c, D d) const {
    solve_any(ctx, G, a, b, c, d, d);
  }
};
struct InAdjoint {
  static constexpr bool cuda = STARDIFF_TRIDIAG_CUDA;
  Geo G;
  void operator()(const ExternalContext& ctx, CD a, D abar, CD b, D bbar, CD c, D cbar, CD x, D xbar) const {
    adjoint_any(ctx, G, a, abar, b, bbar, c, cbar, x, xbar, xbar, true);
  }
};

}  // namespace

long long detail::tridiag_cuda_tasks() {
#if STARDIFF_TRIDIAG_CUDA
  return g_cuda_tasks.load();
#else
  return 0;
#endif
}

void tridiag_solve(const std::string& name, int axis, mesh::Dat<double>& a, mesh::Dat<double>& b,
                   mesh::Dat<double>& c, mesh::Dat<double>& d, mesh::Dat<double>& x, bool recompute) {
  Geo G;
  G.dims = d.dims();
  G.axis = axis;
  require(axis >= 0 && axis < G.dims, "tridiag_solve '" + name + "': axis " + std::to_string(axis) +
                                          " is not an axis of the " + std::to_string(G.dims) + "-D dat '" +
                                          d.name() + "'");
  for (int k = 0; k < G.dims; ++k) {
    G.base[k] = d.base(k);
    G.size[k] = d.size(k);
  }
  for (mesh::DatBase* p : {static_cast<mesh::DatBase*>(&a), static_cast<mesh::DatBase*>(&b),
                           static_cast<mesh::DatBase*>(&c), static_cast<mesh::DatBase*>(&x)}) {
    bool same = p->dims() == G.dims;
    for (int k = 0; same && k < G.dims; ++k) same = p->size(k) == G.size[k] && p->base(k) == G.base[k];
    require(same, "tridiag_solve '" + name + "': dat '" + p->name() + "' differs from '" + d.name() +
                      "' in size or base");
  }
  for (mesh::DatBase* p : {static_cast<mesh::DatBase*>(&a), static_cast<mesh::DatBase*>(&b),
                           static_cast<mesh::DatBase*>(&c), static_cast<mesh::DatBase*>(&d)})
    require(p->dim() == 1, "tridiag_solve '" + name + "': dat '" + p->name() + "' has several components");
  ExternalOptions opts;
  opts.per_tile = axis != G.outer();
  if (&x == &d) {
    if (recompute)
      execute_external_recompute(name, opts, InPrimal{G}, InAdjoint{G}, mesh::arg_dat(a, READ), mesh::arg_dat(b, READ),
                                 mesh::arg_dat(c, READ), mesh::arg_dat(d, RW));
    else
      execute_external(name, opts, InPrimal{G}, InAdjoint{G}, mesh::arg_dat(a, READ), mesh::arg_dat(b, READ),
                       mesh::arg_dat(c, READ), mesh::arg_dat(d, RW));
    return;
  }
  if (recompute)
    execute_external_recompute(name, opts, OutPrimal{G}, OutAdjoint{G}, mesh::arg_dat(a, READ), mesh::arg_dat(b, READ),
                               mesh::arg_dat(c, READ), mesh::arg_dat(d, READ), mesh::arg_dat(x, WRITE));
  else {
    opts.adjoint_reads = 0b00111u;  // a, b, c (and the saved x); never d
    execute_external(name, opts, OutPrimal{G}, OutAdjoint{G}, mesh::arg_dat(a, READ), mesh::arg_dat(b, READ),
                     mesh::arg_dat(c, READ), mesh::arg_dat(d, READ), mesh::arg_dat(x, WRITE));
  }
}

}  // namespace stardiff
