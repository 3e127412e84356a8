// SPDX-License-Identifier: LGPL-2.1-or-later
// codelets/cuda/mesh/tridiag.cu — see tridiag.cuh. One thread per line, blocks of 128 threads.
#include "cuda/mesh/tridiag.cuh"

#include <cfloat>
#include <climits>

#include <cusparse.h>

namespace stardiff::cuda {
namespace {

struct Lines {
  int ax, p, q;                   // solve axis, thread-neighbour axis, outer axis
  long long n, np, nq, lines;     // extents and number of lines
  long long nlo;                  // extent of the lower-numbered other axis (line numbering)
};

Lines lines_of(const TridiagBox& box, const long long* ds) {
  Lines L{};
  L.ax = box.axis;
  const int o1 = box.axis == 0 ? 1 : 0, o2 = box.axis == 2 ? 1 : 2;
  const long long s1 = ds[o1] < 0 ? -ds[o1] : ds[o1], s2 = ds[o2] < 0 ? -ds[o2] : ds[o2];
  const bool swap = s2 < s1;
  L.p = swap ? o2 : o1;
  L.q = swap ? o1 : o2;
  L.n = box.n[L.ax];
  L.np = box.n[L.p];
  L.nq = box.n[L.q];
  L.lines = L.np * L.nq;
  L.nlo = box.n[o1];
  return L;
}

bool empty(const TridiagBox& box) { return box.n[0] <= 0 || box.n[1] <= 0 || box.n[2] <= 0; }

__device__ __forceinline__ bool good_pivot(double m) { return m != 0.0 && fabs(m) <= DBL_MAX; }

__device__ __forceinline__ long long offset(const long long* s, const Lines& L, long long kp, long long kq) {
  return kp * s[L.p] + kq * s[L.q];
}

__device__ __forceinline__ void note_bad(TridiagCudaStatus* st, const Lines& L, long long kp, long long kq,
                                         long long row) {
  const long long line = L.p < L.q ? kp + L.nlo * kq : kq + L.nlo * kp;
  atomicMin(&st->first_key, static_cast<unsigned long long>(line * L.n + row));
  atomicAdd(&st->bad_lines, 1ull);
}

__global__ void solve_kernel(Lines L, TridiagConstArray a, TridiagConstArray b, TridiagConstArray c,
                             TridiagConstArray d, TridiagArray x, double* work, TridiagCudaStatus* st) {
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= L.lines) return;
  const long long kp = t % L.np, kq = t / L.np, n = L.n, W = L.lines;
  const double* A = a.p + offset(a.s, L, kp, kq);
  const double* B = b.p + offset(b.s, L, kp, kq);
  const double* C = c.p + offset(c.s, L, kp, kq);
  const double* D = d.p + offset(d.s, L, kp, kq);
  double* X = x.p + offset(x.s, L, kp, kq);
  const long long sa = a.s[L.ax], sb = b.s[L.ax], sc = c.s[L.ax], sd = d.s[L.ax], sx = x.s[L.ax];
  double* cp = work + t;  // cp[i W]
  const double bb = B[0];
  long long fr = good_pivot(bb) ? -1 : 0;
  double cprev = n > 1 ? __ddiv_rn(C[0], bb) : 0.0;
  cp[0] = cprev;
  double xprev = __ddiv_rn(D[0], bb);
  X[0] = xprev;
  for (long long i = 1; i < n; ++i) {
    const double aa = A[i * sa];
    const double m = __dsub_rn(B[i * sb], __dmul_rn(aa, cprev));
    if (fr < 0 && !good_pivot(m)) fr = i;
    if (i < n - 1) {
      cprev = __ddiv_rn(C[i * sc], m);
      cp[i * W] = cprev;
    }
    xprev = __ddiv_rn(__dsub_rn(D[i * sd], __dmul_rn(aa, xprev)), m);
    X[i * sx] = xprev;
  }
  double xnext = xprev;
  for (long long i = n - 2; i >= 0; --i) {
    xnext = __dsub_rn(X[i * sx], __dmul_rn(cp[i * W], xnext));
    X[i * sx] = xnext;
  }
  if (fr >= 0) note_bad(st, L, kp, kq, fr);
}

__global__ void adjoint_kernel(Lines L, TridiagConstArray a, TridiagConstArray b, TridiagConstArray c,
                               TridiagConstArray x, TridiagArray xbar, bool consume, TridiagArray abar,
                               TridiagArray bbar, TridiagArray cbar, TridiagArray dbar, double* work,
                               TridiagCudaStatus* st) {
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= L.lines) return;
  const long long kp = t % L.np, kq = t / L.np, n = L.n, W = L.lines;
  const double* A = a.p + offset(a.s, L, kp, kq);
  const double* B = b.p + offset(b.s, L, kp, kq);
  const double* C = c.p + offset(c.s, L, kp, kq);
  const double* X = x.p + offset(x.s, L, kp, kq);
  double* XB = xbar.p + offset(xbar.s, L, kp, kq);
  const long long sa = a.s[L.ax], sb = b.s[L.ax], sc = c.s[L.ax], sx = x.s[L.ax], sxb = xbar.s[L.ax];
  double* w1 = work + t;          // w1[i W]: modified super-diagonal of A^T
  double* w2 = work + n * W + t;  // w2[i W]: forward sweep, then g = A^{-T} xbar
  // Transposed system: sub-diagonal c_{i-1}, diagonal b_i, super-diagonal a_{i+1}.
  const double bb = B[0];
  long long fr = good_pivot(bb) ? -1 : 0;
  double w1p = n > 1 ? __ddiv_rn(A[sa], bb) : 0.0;
  w1[0] = w1p;
  double xb = XB[0];
  if (consume) XB[0] = 0.0;
  double w2p = __ddiv_rn(xb, bb);
  w2[0] = w2p;
  for (long long i = 1; i < n; ++i) {
    const double cc = C[(i - 1) * sc];
    const double m = __dsub_rn(B[i * sb], __dmul_rn(cc, w1p));
    if (fr < 0 && !good_pivot(m)) fr = i;
    if (i < n - 1) {
      w1p = __ddiv_rn(A[(i + 1) * sa], m);
      w1[i * W] = w1p;
    }
    xb = XB[i * sxb];
    if (consume) XB[i * sxb] = 0.0;
    w2p = __ddiv_rn(__dsub_rn(xb, __dmul_rn(cc, w2p)), m);
    w2[i * W] = w2p;
  }
  double* Dbar = dbar.p ? dbar.p + offset(dbar.s, L, kp, kq) : nullptr;
  double* Bbar = bbar.p ? bbar.p + offset(bbar.s, L, kp, kq) : nullptr;
  double* Abar = abar.p ? abar.p + offset(abar.s, L, kp, kq) : nullptr;
  double* Cbar = cbar.p ? cbar.p + offset(cbar.s, L, kp, kq) : nullptr;
  // Back substitution, accumulating each row's adjoints as soon as its g is final.
  double g = w2p;
  for (long long i = n - 1; i >= 0; --i) {
    if (i < n - 1) g = __dsub_rn(w2[i * W], __dmul_rn(w1[i * W], g));
    if (Dbar) Dbar[i * dbar.s[L.ax]] = __dadd_rn(Dbar[i * dbar.s[L.ax]], g);
    if (Bbar) Bbar[i * bbar.s[L.ax]] = __dsub_rn(Bbar[i * bbar.s[L.ax]], __dmul_rn(g, X[i * sx]));
    if (Abar && i >= 1) Abar[i * abar.s[L.ax]] = __dsub_rn(Abar[i * abar.s[L.ax]], __dmul_rn(g, X[(i - 1) * sx]));
    if (Cbar && i < n - 1) Cbar[i * cbar.s[L.ax]] = __dsub_rn(Cbar[i * cbar.s[L.ax]], __dmul_rn(g, X[(i + 1) * sx]));
  }
  if (fr >= 0) note_bad(st, L, kp, kq, fr);
}

void reset_status(TridiagCudaStatus* status, cudaStream_t stream) {
  cudaMemsetAsync(&status->first_key, 0xFF, sizeof(status->first_key), stream);
  cudaMemsetAsync(&status->bad_lines, 0, sizeof(status->bad_lines), stream);
}

unsigned blocks_for(long long lines) { return static_cast<unsigned>((lines + 127) / 128); }

// ---- cuSPARSE variant: element-wise pack / unpack around gtsv2StridedBatch ----------------
// Element e = line * n + row, line = kp + np * kq (the Thomas kernels' thread numbering).
struct Elem {
  long long kp, kq, row, line;
};
__device__ __forceinline__ bool elem_of(const Lines& L, Elem& E) {
  const long long e = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= L.lines * L.n) return false;
  const long long t = e / L.n;
  E.row = e % L.n;
  E.kp = t % L.np;
  E.kq = t / L.np;
  E.line = t;
  return true;
}
__device__ __forceinline__ const double& at(const TridiagConstArray& v, const Lines& L, const Elem& E, long long r) {
  return v.p[offset(v.s, L, E.kp, E.kq) + r * v.s[L.ax]];
}
__device__ __forceinline__ double& at(const TridiagArray& v, const Lines& L, const Elem& E, long long r) {
  return v.p[offset(v.s, L, E.kp, E.kq) + r * v.s[L.ax]];
}
__device__ __forceinline__ bool finite(double v) { return fabs(v) <= DBL_MAX; }

__global__ void pack_kernel(Lines L, TridiagConstArray a, TridiagConstArray b, TridiagConstArray c,
                            TridiagConstArray d, double* dl, double* dd, double* du, double* rhs) {
  Elem E;
  if (!elem_of(L, E)) return;
  const long long e = E.line * L.n + E.row;
  dl[e] = E.row == 0 ? 0.0 : at(a, L, E, E.row);
  dd[e] = at(b, L, E, E.row);
  du[e] = E.row == L.n - 1 ? 0.0 : at(c, L, E, E.row);
  rhs[e] = at(d, L, E, E.row);
}
// Transposed lines: sub-diagonal c_{i-1}, diagonal b_i, super-diagonal a_{i+1}; xbar consumed.
__global__ void pack_t_kernel(Lines L, TridiagConstArray a, TridiagConstArray b, TridiagConstArray c,
                              TridiagArray xbar, double* dl, double* dd, double* du, double* rhs) {
  Elem E;
  if (!elem_of(L, E)) return;
  const long long e = E.line * L.n + E.row;
  dl[e] = E.row == 0 ? 0.0 : at(c, L, E, E.row - 1);
  dd[e] = at(b, L, E, E.row);
  du[e] = E.row == L.n - 1 ? 0.0 : at(a, L, E, E.row + 1);
  double& xb = at(xbar, L, E, E.row);
  rhs[e] = xb;
  xb = 0.0;
}
__device__ __forceinline__ void note_nonfinite(TridiagCudaStatus* st, const Lines& L, const Elem& E) {
  const long long line = L.p < L.q ? E.kp + L.nlo * E.kq : E.kq + L.nlo * E.kp;
  atomicMin(&st->first_key, static_cast<unsigned long long>(line * L.n + E.row));  // bad_lines: count_bad_kernel
}
__global__ void unpack_kernel(Lines L, const double* rhs, TridiagArray x, TridiagCudaStatus* st) {
  Elem E;
  if (!elem_of(L, E)) return;
  const double v = rhs[E.line * L.n + E.row];
  at(x, L, E, E.row) = v;
  if (!finite(v)) note_nonfinite(st, L, E);
}
__global__ void accumulate_kernel(Lines L, const double* g, TridiagConstArray x, TridiagArray abar, TridiagArray bbar,
                                  TridiagArray cbar, TridiagArray dbar, TridiagCudaStatus* st) {
  Elem E;
  if (!elem_of(L, E)) return;
  const long long i = E.row;
  const double gi = g[E.line * L.n + i];
  if (!finite(gi)) note_nonfinite(st, L, E);
  if (dbar.p) at(dbar, L, E, i) = __dadd_rn(at(dbar, L, E, i), gi);
  if (bbar.p) at(bbar, L, E, i) = __dsub_rn(at(bbar, L, E, i), __dmul_rn(gi, at(x, L, E, i)));
  if (abar.p && i >= 1) at(abar, L, E, i) = __dsub_rn(at(abar, L, E, i), __dmul_rn(gi, at(x, L, E, i - 1)));
  if (cbar.p && i < L.n - 1) at(cbar, L, E, i) = __dsub_rn(at(cbar, L, E, i), __dmul_rn(gi, at(x, L, E, i + 1)));
}
// bad_lines: lines holding a non-finite value (one thread per line scans the packed result).
__global__ void count_bad_kernel(Lines L, const double* v, TridiagCudaStatus* st) {
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= L.lines) return;
  for (long long i = 0; i < L.n; ++i)
    if (!finite(v[t * L.n + i])) {
      atomicAdd(&st->bad_lines, 1ull);
      return;
    }
}

cusparseHandle_t cusparse_handle(cudaStream_t stream) {
  thread_local cusparseHandle_t h = nullptr;
  if (!h && cusparseCreate(&h) != CUSPARSE_STATUS_SUCCESS) h = nullptr;
  if (h) cusparseSetStream(h, stream);
  return h;
}

// Packed scratch: dl, dd, du, rhs (lines x n each) and gtsv2's buffer.
struct Packed {
  double *dl = nullptr, *dd = nullptr, *du = nullptr, *rhs = nullptr;
  void* buf = nullptr;
  void* mem = nullptr;
  cudaStream_t st;
  explicit Packed(cudaStream_t s) : st(s) {}
  ~Packed() {
    if (mem) cudaFreeAsync(mem, st);
    if (buf) cudaFreeAsync(buf, st);
  }
  const char* alloc(long long elems) {
    if (cudaMallocAsync(&mem, 4 * static_cast<std::size_t>(elems) * sizeof(double), st) != cudaSuccess)
      return "cudaMallocAsync (packed lines)";
    dl = static_cast<double*>(mem);
    dd = dl + elems;
    du = dd + elems;
    rhs = du + elems;
    return nullptr;
  }
};

const char* gtsv2(const Lines& L, Packed& P, cudaStream_t stream) {
  if (L.n > INT_MAX || L.lines > INT_MAX || L.n * L.lines > INT_MAX) return "box too large for gtsv2StridedBatch";
  cusparseHandle_t h = cusparse_handle(stream);
  if (!h) return "cusparseCreate";
  const int m = static_cast<int>(L.n), count = static_cast<int>(L.lines);
  std::size_t bytes = 0;
  if (cusparseDgtsv2StridedBatch_bufferSizeExt(h, m, P.dl, P.dd, P.du, P.rhs, count, m, &bytes) !=
      CUSPARSE_STATUS_SUCCESS)
    return "cusparseDgtsv2StridedBatch_bufferSizeExt";
  if (bytes && cudaMallocAsync(&P.buf, bytes, stream) != cudaSuccess) return "cudaMallocAsync (gtsv2 buffer)";
  if (cusparseDgtsv2StridedBatch(h, m, P.dl, P.dd, P.du, P.rhs, count, m, P.buf) != CUSPARSE_STATUS_SUCCESS)
    return "cusparseDgtsv2StridedBatch";
  return nullptr;
}

unsigned blocks_for_elems(const Lines& L) { return static_cast<unsigned>((L.lines * L.n + 255) / 256); }

}  // namespace

const char* tridiag_solve_cusparse(const TridiagBox& box, TridiagConstArray a, TridiagConstArray b,
                                   TridiagConstArray c, TridiagConstArray d, TridiagArray x,
                                   TridiagCudaStatus* status, cudaStream_t stream) {
  reset_status(status, stream);
  if (empty(box)) return nullptr;
  const Lines L = lines_of(box, d.s);
  Packed P(stream);
  if (const char* e = P.alloc(L.lines * L.n)) return e;
  pack_kernel<<<blocks_for_elems(L), 256, 0, stream>>>(L, a, b, c, d, P.dl, P.dd, P.du, P.rhs);
  if (const char* e = gtsv2(L, P, stream)) return e;
  count_bad_kernel<<<blocks_for(L.lines), 128, 0, stream>>>(L, P.rhs, status);
  unpack_kernel<<<blocks_for_elems(L), 256, 0, stream>>>(L, P.rhs, x, status);
  return cudaGetLastError() == cudaSuccess ? nullptr : "kernel launch";
}

const char* tridiag_adjoint_cusparse(const TridiagBox& box, TridiagConstArray a, TridiagConstArray b,
                                     TridiagConstArray c, TridiagConstArray x, TridiagArray xbar, TridiagArray abar,
                                     TridiagArray bbar, TridiagArray cbar, TridiagArray dbar,
                                     TridiagCudaStatus* status, cudaStream_t stream) {
  reset_status(status, stream);
  if (empty(box)) return nullptr;
  const Lines L = lines_of(box, xbar.s);
  Packed P(stream);
  if (const char* e = P.alloc(L.lines * L.n)) return e;
  pack_t_kernel<<<blocks_for_elems(L), 256, 0, stream>>>(L, a, b, c, xbar, P.dl, P.dd, P.du, P.rhs);
  if (const char* e = gtsv2(L, P, stream)) return e;
  count_bad_kernel<<<blocks_for(L.lines), 128, 0, stream>>>(L, P.rhs, status);
  accumulate_kernel<<<blocks_for_elems(L), 256, 0, stream>>>(L, P.rhs, x, abar, bbar, cbar, dbar, status);
  return cudaGetLastError() == cudaSuccess ? nullptr : "kernel launch";
}

std::size_t tridiag_solve_cuda_work_size(const TridiagBox& box) {
  if (empty(box)) return 0;
  return static_cast<std::size_t>(box.n[0]) * static_cast<std::size_t>(box.n[1]) * static_cast<std::size_t>(box.n[2]);
}
std::size_t tridiag_adjoint_cuda_work_size(const TridiagBox& box) { return 2 * tridiag_solve_cuda_work_size(box); }

void tridiag_solve_cuda(const TridiagBox& box, TridiagConstArray a, TridiagConstArray b, TridiagConstArray c,
                        TridiagConstArray d, TridiagArray x, double* work, TridiagCudaStatus* status,
                        cudaStream_t stream) {
  reset_status(status, stream);
  if (empty(box)) return;
  const Lines L = lines_of(box, d.s);
  solve_kernel<<<blocks_for(L.lines), 128, 0, stream>>>(L, a, b, c, d, x, work, status);
}

void tridiag_adjoint_cuda(const TridiagBox& box, TridiagConstArray a, TridiagConstArray b, TridiagConstArray c,
                          TridiagConstArray x, TridiagArray xbar, bool consume_xbar, TridiagArray abar,
                          TridiagArray bbar, TridiagArray cbar, TridiagArray dbar, double* work,
                          TridiagCudaStatus* status, cudaStream_t stream) {
  reset_status(status, stream);
  if (empty(box)) return;
  const Lines L = lines_of(box, xbar.s);
  adjoint_kernel<<<blocks_for(L.lines), 128, 0, stream>>>(L, a, b, c, x, xbar, consume_xbar, abar, bbar, cbar,
                                                          dbar, work, status);
}

}  // namespace stardiff::cuda
