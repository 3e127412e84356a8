// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/mesh/detail/loop_cuda.cuh — CUDA implementations of a loop's tile tasks.
// Internal to stardiff/mesh/detail/loop_dispatch.hpp, which includes it in nvcc
// translation units (STARDIFF_LOOP_CUDA).
//
// Contract:
//  * loop_tile_cuda<K, A...> / loop_tile_adjoint_cuda<K, A...> are the CUDA twins of
//    loop_tile_cpu / loop_tile_adjoint_cpu: same argument block (LoopArgs / AdjArgs), same
//    buffers (device pointers on the worker's node), work queued on TaskContext::cuda_stream
//    (the codelet is STARPU_CUDA_ASYNC). One thread per point, x fastest (coalesced rows):
//    blocks of 32 x 8 (2-D) / 32 x 4 x 2 (3-D) / 256 (1-D).
//  * Dat accessors use the tile's strides as given (dim > 1: x stride dim; a dat lacking x:
//    stride 0, every point reads the same element). The kernel's operator() and adjoint
//    must be __host__ __device__ (STARDIFF_HD).
//  * Reductions (primal arg_reduce) and scalar adjoints (adjoint arg_scalar): each thread
//    folds its point into the neutral element; in 2-D/3-D a block of 256 threads on one x
//    row tree-reduces in shared memory (fixed shape), and a second kernel folds a row's
//    block partials in block order into the row partial the CPU task would write (1-D:
//    the per-point partial directly). Run to run the result is bitwise the same; it equals
//    the CPU's sequential row fold up to rounding. MIN/MAX keep the first point (k, j, i
//    order) attaining the extremum, as the CPU does.
//  * Adjoints: per point the kernel's adjoint; a READ dat's _a1s accessor is atomic (+=
//    and -= are atomicAdd), so stencil scatters of neighbouring points (and all points of
//    a dat lacking an axis) add safely; WRITE args' _a1s are zeroed after the point; an
//    untiled dat's per-tile partial is zeroed first (cudaMemsetAsync).
//  * Not on CUDA workers (reported through TaskContext::fail): the NaN check
//    (STARDIFF_NAN_CHECK) and SavePolicy::Verify's poisoned primals.
#pragma once
#include <cuda_runtime.h>

#include <cuda/std/tuple>
#include <cstddef>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>

#include "stardiff/mesh/detail/loop_state.hpp"

namespace stardiff::mesh::detail {

inline constexpr int kCudaReduceThreads = 256;

template <std::size_t N>
struct DevBufs {
  void* p[N == 0 ? 1 : N] = {};        // primal / value buffer of each argument
  void* q[N == 0 ? 1 : N] = {};        // adjoint / partial buffer
  void* scratch[N == 0 ? 1 : N] = {};  // block partials of reducing arguments
};

// A reducing argument's record in shared memory and the block partials (SUM uses value).
template <class T>
__device__ inline ArgRec<T> rec_combine(const ArgRec<T>& a, const ArgRec<T>& b, int op) {
  if (op == static_cast<int>(ReduceOp::SUM)) return ArgRec<T>{a.value + b.value, {a.idx[0], a.idx[1], a.idx[2]}};
  const bool less = op == static_cast<int>(ReduceOp::MIN);
  if (less ? a.value < b.value : b.value < a.value) return a;
  if (less ? b.value < a.value : a.value < b.value) return b;
  if (b.idx[0] == kNoArg) return a;  // equal values: the first point in (k, j, i) order
  if (a.idx[0] == kNoArg) return b;
  for (int d = 2; d >= 0; --d)
    if (a.idx[d] != b.idx[d]) return a.idx[d] < b.idx[d] ? a : b;
  return a;
}

// Folds row r's `per` block partials in block order into the tile's row partial.
template <class T>
__global__ void loop_fold_rows(const ArgRec<T>* __restrict__ blocks, void* part, int nrows, int per, int op,
                               bool track) {
  const int r = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (r >= nrows) return;
  ArgRec<T> acc = blocks[static_cast<long long>(r) * per];
  for (int b = 1; b < per; ++b) acc = rec_combine(acc, blocks[static_cast<long long>(r) * per + b], op);
  if (track) static_cast<ArgRec<T>*>(part)[r] = acc;
  else static_cast<T*>(part)[r] = acc.value;
}

// ---- per-argument device state -------------------------------------------------------
template <class A>
struct Dev;

template <class T, Mode M>
struct Dev<ArgDat<T, M>> {
  static constexpr bool kReduces = false;
  using Rec = int;
  T* base = nullptr;
  T* abase = nullptr;
  long long origin = 0, sx = 0, sy = 0, sz = 0;
  int dim = 1;
  __device__ void init(const Slot& s, void* p, void* q) {
    base = static_cast<T*>(p);
    abase = static_cast<T*>(q);
    origin = s.g.origin;
    sx = s.g.s[0];
    sy = s.g.s[1];
    sz = s.g.s[2];
    dim = s.dim;
  }
  __device__ long long off(int i, int j, int k) const { return origin + i * sx + j * sy + k * sz; }
  __device__ auto primal(int i, int j, int k) {
    using P = std::conditional_t<M == Mode::Read, const T, T>;
    return Acc<P>{static_cast<P*>(base) + off(i, j, k), sx, sy, sz};
  }
  template <bool Active>
  __device__ auto adjoint(int i, int j, int k) {
    const long long o = off(i, j, k);
    if constexpr (Active)
      return cuda::std::tuple<Acc<const T>, Acc<T>>{Acc<const T>{base + o, sx, sy, sz},
                                                    Acc<T>{abase + o, sx, sy, sz, M == Mode::Read}};
    else
      return cuda::std::tuple<Acc<const T>>{Acc<const T>{base + o, sx, sy, sz}};
  }
  __device__ void after_adjoint(int i, int j, int k) {
    if constexpr (M == Mode::Write) {
      if (abase) {
        T* a = abase + off(i, j, k);
        for (int c = 0; c < dim; ++c) a[c] = T(0);
      }
    }
  }
};

template <class T>
struct Dev<ArgGbl<T>> {
  static constexpr bool kReduces = false;
  using Rec = int;
  T value;
  __device__ void init(const Slot& s, void*, void*) { memcpy(static_cast<void*>(&value), s.gbl, sizeof(T)); }
  __device__ const T* primal(int, int, int) { return &value; }
  template <bool>
  __device__ cuda::std::tuple<const T*> adjoint(int, int, int) { return {&value}; }
  __device__ void after_adjoint(int, int, int) {}
};

template <>
struct Dev<ArgIdx> {
  static constexpr bool kReduces = false;
  using Rec = int;
  int idx[3] = {0, 0, 0};
  __device__ void init(const Slot&, void*, void*) {}
  __device__ const int* primal(int i, int j, int k) {
    idx[0] = i;
    idx[1] = j;
    idx[2] = k;
    return idx;
  }
  template <bool>
  __device__ cuda::std::tuple<const int*> adjoint(int i, int j, int k) { return {primal(i, j, k)}; }
  __device__ void after_adjoint(int, int, int) {}
};

// Primal: the thread's point folded into the neutral element (reduces). Adjoint: the
// value and the seed (MIN/MAX: the seed at the recorded arg-extremum only).
template <class T>
struct Dev<ArgReduce<T>> {
  static constexpr bool kReduces = true;  // in primal tasks
  using Rec = ArgRec<T>;
  T acc{}, zero{};
  const T* post = nullptr;
  const T* eff = nullptr;
  const int* win = nullptr;
  int op = 0;
  bool track = false, primal_task = false;
  __device__ void init(const Slot& s, void* p, void* q) {
    op = s.op;
    track = op != static_cast<int>(ReduceOp::SUM);
    primal_task = s.buf2 < 0;
    acc = neutral<T>(static_cast<ReduceOp>(op));
    if (primal_task) return;
    if (track) {
      post = &static_cast<const ArgRec<T>*>(p)->value;
      const auto* e = static_cast<const ArgRec<T>*>(q);
      eff = &e->value;
      if (e->idx[0] != kNoArg) win = e->idx;
    } else {
      post = static_cast<const T*>(p);
      eff = static_cast<const T*>(q);
    }
  }
  __device__ T* primal(int, int, int) { return &acc; }
  template <bool>
  __device__ cuda::std::tuple<const T*, const T*> adjoint(int i, int j, int k) {
    if (win && (i != win[0] || j != win[1] || k != win[2])) return {post, &zero};
    return {post, eff};
  }
  __device__ void after_adjoint(int, int, int) {}
  // The thread's record (valid: the thread has a point of the range).
  __device__ Rec record(bool valid, int dims, int i, int j, int k) const {
    const T n = neutral<T>(static_cast<ReduceOp>(op));
    if (!valid) return Rec{n, {kNoArg, kNoArg, kNoArg}};
    if (dims == 1) return Rec{acc, {i, 0, 0}};  // as the CPU's per-point partials
    if (track && acc == n) return Rec{acc, {kNoArg, kNoArg, kNoArg}};
    return Rec{acc, {i, j, dims == 3 ? k : 0}};
  }
};

// Primal: the value. Adjoint: the value and this thread's share of the scalar's adjoint
// (summed like a SUM reduction into the per-row partial).
template <class T>
struct Dev<ArgScalar<T>> {
  static constexpr bool kReduces = true;  // in adjoint tasks
  using Rec = ArgRec<T>;
  T value{}, sa{};
  int op = static_cast<int>(ReduceOp::SUM);
  bool track = false;
  __device__ void init(const Slot&, void* p, void*) { value = *static_cast<const T*>(p); }
  __device__ const T* primal(int, int, int) { return &value; }
  template <bool>
  __device__ cuda::std::tuple<const T*, T*> adjoint(int, int, int) { return {&value, &sa}; }
  __device__ void after_adjoint(int, int, int) {}
  __device__ Rec record(bool valid, int, int i, int, int) const {
    return Rec{valid ? sa : T(0), {i, 0, 0}};
  }
};

template <class A, bool Adjoint>
constexpr bool reduces_in() {
  if constexpr (IsDat<A>::value || std::is_same_v<A, ArgIdx>) return false;
  else if constexpr (requires(A a) { a.red; }) return !Adjoint;
  else if constexpr (requires(A a) { a.scalar; }) return Adjoint;
  else return false;
}
template <class A>
constexpr std::size_t rec_bytes() {
  if constexpr (Dev<A>::kReduces) return (sizeof(typename Dev<A>::Rec) * kCudaReduceThreads + 15) / 16 * 16;
  else return 0;
}
// Shared-memory offset of argument I's block (reducing arguments before it).
template <bool Adjoint, std::size_t I, class... A>
constexpr std::size_t smem_offset() {
  constexpr bool red[] = {reduces_in<A, Adjoint>()..., false};
  constexpr std::size_t bytes[] = {rec_bytes<A>()..., 0};
  std::size_t o = 0;
  for (std::size_t a = 0; a < I; ++a) o += red[a] ? bytes[a] : 0;
  return o;
}
template <bool Adjoint, class... A>
constexpr std::size_t smem_bytes() {
  return smem_offset<Adjoint, sizeof...(A), A...>();
}
template <bool Adjoint, class... A>
constexpr bool any_reduces() {
  return (false || ... || reduces_in<A, Adjoint>());
}

// The thread's point and whether it lies in the tile's part of the range.
struct DevPoint {
  int i, j, k;
  bool valid;
};
template <class LA>
__device__ inline DevPoint dev_point(const LA& la) {
  DevPoint p;
  p.i = la.lo[0] + static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  p.j = la.lo[1] + static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  p.k = la.lo[2] + static_cast<int>(blockIdx.z * blockDim.z + threadIdx.z);
  p.valid = p.i < la.hi[0] && p.j < la.hi[1] && p.k < la.hi[2];
  return p;
}

extern __shared__ __align__(16) unsigned char stardiff_loop_smem[];

// Argument I's contribution after the point: 1-D writes the per-point partial; 2-D/3-D
// tree-reduce the block (all threads take part) and thread 0 writes the block partial.
template <bool Adjoint, std::size_t I, class... A, class D, class LA>
__device__ inline void dev_reduce_arg(D& st, const LA& la, const DevBufs<sizeof...(A)>& b, const DevPoint& p) {
  using Arg = std::tuple_element_t<I, std::tuple<A...>>;
  if constexpr (reduces_in<Arg, Adjoint>()) {
    auto& s = cuda::std::get<I>(st);
    using Rec = typename Dev<Arg>::Rec;
    const Rec r = s.record(p.valid, la.dims, p.i, p.j, p.k);
    const Slot& sl = la.slot[I];
    void* part = Adjoint ? b.q[I] : b.p[I];
    if (la.dims == 1) {
      if (!p.valid) return;
      const int row = p.i - sl.row0;
      if (s.track) static_cast<Rec*>(part)[row] = r;
      else static_cast<decltype(r.value)*>(part)[row] = r.value;
      return;
    }
    Rec* sh = reinterpret_cast<Rec*>(stardiff_loop_smem + smem_offset<Adjoint, I, A...>());
    const int tid = static_cast<int>(threadIdx.x);
    sh[tid] = r;
    __syncthreads();
    for (int w = kCudaReduceThreads / 2; w > 0; w >>= 1) {
      if (tid < w) sh[tid] = rec_combine(sh[tid], sh[tid + w], s.op);
      __syncthreads();
    }
    if (tid == 0) {
      const long long blk = (static_cast<long long>(blockIdx.z) * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
      static_cast<Rec*>(b.scratch[I])[blk] = sh[0];
    }
  }
}

template <class K, class... A, std::size_t... I>
__device__ inline void dev_primal(const LoopArgs<K, sizeof...(A)>& la, const DevBufs<sizeof...(A)>& b,
                                  std::index_sequence<I...>) {
  cuda::std::tuple<Dev<A>...> st;
  (cuda::std::get<I>(st).init(la.slot[I], b.p[I], b.q[I]), ...);
  const DevPoint p = dev_point(la);
  if (p.valid) la.kernel(cuda::std::get<I>(st).primal(p.i, p.j, p.k)...);
  if constexpr (any_reduces<false, A...>()) {
    (dev_reduce_arg<false, I, A...>(st, la, b, p), ...);
  }
}

template <class K, class... A>
__global__ void loop_primal_kernel(LoopArgs<K, sizeof...(A)> la, DevBufs<sizeof...(A)> b) {
  dev_primal<K, A...>(la, b, std::index_sequence_for<A...>{});
}

template <unsigned Mask, class K, class... A, std::size_t... I>
__device__ inline void dev_adjoint(const LoopArgs<K, sizeof...(A)>& la, const DevBufs<sizeof...(A)>& b,
                                   std::index_sequence<I...>) {
  cuda::std::tuple<Dev<A>...> st;
  (cuda::std::get<I>(st).init(la.slot[I], b.p[I], b.q[I]), ...);
  const DevPoint p = dev_point(la);
  if (p.valid) {
    cuda::std::apply([&](auto... a) { la.kernel.adjoint(a...); },
                     cuda::std::tuple_cat(
                         cuda::std::get<I>(st).template adjoint<active_bit<I, Mask, A...>()>(p.i, p.j, p.k)...));
    (cuda::std::get<I>(st).after_adjoint(p.i, p.j, p.k), ...);
  }
  if constexpr (any_reduces<true, A...>()) {
    (dev_reduce_arg<true, I, A...>(st, la, b, p), ...);
  }
}

template <unsigned Mask, class K, class... A>
__global__ void loop_adjoint_kernel(LoopArgs<K, sizeof...(A)> la, DevBufs<sizeof...(A)> b) {
  dev_adjoint<Mask, K, A...>(la, b, std::index_sequence_for<A...>{});
}

// ---- host side of the CUDA tasks -------------------------------------------------------
struct CudaLaunch {
  dim3 grid, block;
  int per = 1;  // block partials per outer row (reducing loops, dims > 1)
  long long blocks = 0;
  bool empty = false;
};
inline CudaLaunch cuda_launch_shape(const int lo[3], const int hi[3], int dims, bool reduces) {
  CudaLaunch c;
  const unsigned n[3] = {static_cast<unsigned>(hi[0] - lo[0]), static_cast<unsigned>(hi[1] - lo[1]),
                         static_cast<unsigned>(hi[2] - lo[2])};
  c.empty = n[0] == 0 || n[1] == 0 || n[2] == 0;
  if (dims == 1 || reduces) c.block = dim3(kCudaReduceThreads, 1, 1);
  else if (dims == 2) c.block = dim3(32, 8, 1);
  else c.block = dim3(32, 4, 2);
  c.grid = dim3((n[0] + c.block.x - 1) / c.block.x, (n[1] + c.block.y - 1) / c.block.y,
                (n[2] + c.block.z - 1) / c.block.z);
  c.blocks = static_cast<long long>(c.grid.x) * c.grid.y * c.grid.z;
  const long long rows = dims == 1 ? n[0] : dims == 2 ? n[1] : n[2];
  c.per = rows > 0 ? static_cast<int>(c.blocks / rows) : 1;
  return c;
}

inline bool cuda_ok(const TaskContext& t, cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  t.fail(std::string("CUDA ") + what + ": " + cudaGetErrorString(e));
  return false;
}

// Block-partial buffers for the reducing arguments (dims > 1), then the launch, then the
// row folds; the buffers are freed in stream order.
template <bool Adjoint, class... A, class LA, class Launch>
void cuda_run_tile(const TaskContext& t, const LA& la, DevBufs<sizeof...(A)>& b, Launch&& launch) {
  constexpr bool reduces = any_reduces<Adjoint, A...>();
  const CudaLaunch c = cuda_launch_shape(la.lo, la.hi, la.dims, reduces);
  if (c.empty) return;
  auto stream = static_cast<cudaStream_t>(t.cuda_stream);
  constexpr std::size_t N = sizeof...(A);
  constexpr bool red[] = {reduces_in<A, Adjoint>()..., false};
  constexpr std::size_t recsz[] = {(Dev<A>::kReduces ? sizeof(typename Dev<A>::Rec) : 0)..., 0};
  const bool blocks = reduces && la.dims > 1;
  for (std::size_t i = 0; i < N; ++i)
    if (red[i] && blocks &&
        !cuda_ok(t, cudaMallocAsync(&b.scratch[i], static_cast<std::size_t>(c.blocks) * recsz[i], stream),
                 "cudaMallocAsync (block partials)"))
      return;
  launch(c.grid, c.block, smem_bytes<Adjoint, A...>(), stream);
  if (!cuda_ok(t, cudaGetLastError(), "loop kernel launch")) return;
  if (blocks) {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      auto fold = [&](auto ic) {
        constexpr std::size_t J = decltype(ic)::value;
        using Arg = std::tuple_element_t<J, std::tuple<A...>>;
        if constexpr (reduces_in<Arg, Adjoint>()) {
          using Rec = typename Dev<Arg>::Rec;
          using T = decltype(Rec{}.value);
          const Slot& s = la.slot[J];
          const int op = Adjoint ? static_cast<int>(ReduceOp::SUM) : s.op;
          const bool track = op != static_cast<int>(ReduceOp::SUM);
          const int nrows = s.nrows;
          loop_fold_rows<T><<<(nrows + 127) / 128, 128, 0, stream>>>(static_cast<const Rec*>(b.scratch[J]),
                                                                     Adjoint ? b.q[J] : b.p[J], nrows, c.per, op,
                                                                     track);
          cuda_ok(t, cudaGetLastError(), "row fold launch");
          cuda_ok(t, cudaFreeAsync(b.scratch[J], stream), "cudaFreeAsync");
        }
      };
      (fold(std::integral_constant<std::size_t, I>{}), ...);
    }(std::index_sequence_for<A...>{});
  }
}

template <std::size_t N>
DevBufs<N> dev_bufs(const TaskContext& t, const Slot (&slot)[N == 0 ? 1 : N]) {
  DevBufs<N> b;
  for (std::size_t i = 0; i < N; ++i) {
    if (slot[i].buf >= 0) b.p[i] = t.buffers[slot[i].buf].ptr;
    if (slot[i].buf2 >= 0) b.q[i] = t.buffers[slot[i].buf2].ptr;
  }
  return b;
}

template <class K, class... A>
void loop_tile_cuda(const TaskContext& t) {
  const auto& la = t.arg<LoopArgs<K, sizeof...(A)>>();
  if (la.nan_check) {
    t.fail("the NaN check (STARDIFF_NAN_CHECK) runs on CPU workers only");
    return;
  }
  DevBufs<sizeof...(A)> b = dev_bufs<sizeof...(A)>(t, la.slot);
  cuda_run_tile<false, A...>(t, la, b, [&](dim3 g, dim3 bl, std::size_t sm, cudaStream_t s) {
    loop_primal_kernel<K, A...><<<g, bl, sm, s>>>(la, b);
  });
}

template <class K, class... A>
void loop_tile_adjoint_cuda(const TaskContext& t) {
  if constexpr (has_adjoint<K>()) {
    const auto& f = t.arg<AdjArgs<K, sizeof...(A)>>();
    constexpr std::size_t N = sizeof...(A);
    for (std::size_t i = 0; i < N; ++i)
      if (f.la.slot[i].poison) {
        t.fail("SavePolicy::Verify's poisoned primals run on CPU workers only");
        return;
      }
    DevBufs<N> b = dev_bufs<N>(t, f.la.slot);
    auto stream = static_cast<cudaStream_t>(t.cuda_stream);
    for (std::size_t i = 0; i < N; ++i)
      if (f.la.slot[i].clear && b.q[i] &&
          !cuda_ok(t,
                   cudaMemsetAsync(b.q[i], 0,
                                   t.buffers[f.la.slot[i].buf2].count() * t.buffers[f.la.slot[i].buf2].elemsize,
                                   stream),
                   "cudaMemsetAsync (adjoint partial)"))
        return;
    constexpr std::size_t nd = dat_count<A...>();
    bool ran = dispatch_mask<(1u << nd)>(
        f.mask,
        [&](auto mc) {
          constexpr unsigned M = decltype(mc)::value;
          if constexpr (adjoint_ok<K, M, A...>()) {
            cuda_run_tile<true, A...>(t, f.la, b, [&](dim3 g, dim3 bl, std::size_t sm, cudaStream_t s) {
              loop_adjoint_kernel<M, K, A...><<<g, bl, sm, s>>>(f.la, b);
            });
          } else {
            t.fail("adjoint signature does not match the loop's arguments");
          }
        },
        std::make_integer_sequence<unsigned, (1u << nd)>{});
    if (!ran) t.fail("adjoint activity mask out of range");
  } else {
    t.fail("kernel has no adjoint");
  }
}

}  // namespace stardiff::mesh::detail
