// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/mesh/par_loop.hpp — loops over a block as tasks, with loop-level adjoints.
//
// Contract:
//  * par_loop(name, block, range, kernel, args...) submits one task per tile of the
//    block whose part of `range` is non-empty, plus halo-exchange tasks before it for
//    dats read across tile boundaries whose ghost rows are stale; dependencies come from
//    the tile handles only. Arguments (in the kernel's parameter order):
//      arg_dat(dat, stencil, READ|WRITE|RW|INC)  -> Acc<const T> (READ) or Acc<T>
//      arg_gbl(value)                            -> const T*   (copied at submission)
//      arg_reduce(reduction)                     -> T*         (fold into it: += / min / max)
//      arg_idx()                                 -> const int* (loop index i, j, k)
//      arg_scalar(scalar)                        -> const T*   (an active Scalar)
//    arg_gbl values are constants (no adjoint); a differentiable parameter is an active
//    Scalar passed with arg_scalar (its adjoint sums the kernels' scalar_a1s).
//    A dat lacking an axis (DatOptions::axes) reads the same element at every index and
//    offset along it; it may be written only by a loop whose range is one index there.
//    Acc<T> a at point p: a(di, dj, dk) is the value at p + (di, dj, dk); a.c(c, di, ...)
//    component c. Kernels are trivially copyable functors (copied into each task).
//  * Rejected at submission (stardiff::Error naming loop and argument): a dat of another
//    block, reads beyond a dat's halo, writes with a non-zero stencil, ranges outside a
//    dat, a dat both written and passed again, a write to a dat lacking an axis along
//    which the range is not [0,1), tiled dats of different StarPU-MPI distributions
//    (DatBase::owners(), Block::set_owners).
//  * While a tape records (and the loop is not par_loop_passive) a loop touching an
//    active dat, scalar or reduction is recorded. Its kernel must then have
//      void adjoint(params...) const
//    whose parameters are, per argument in order: dat -> Acc<const T> primal, then
//    Acc<T> <name>_a1s only if the dat is active; gbl -> const T*; reduce -> const T*
//    value, const T* value_a1s; idx -> const int*; scalar -> const T*, T* scalar_a1s.
//    Adjoint semantics (OPS): primal values are those before the loop ran; READ args:
//    increment their _a1s (also at stencil offsets); WRITE args: read their _a1s — the
//    library zeroes it after the call; RW args: update their _a1s in place; INC args:
//    read their _a1s. MIN/MAX reductions: value_a1s is the seed at the arg-extremum
//    (the first point attaining the result, scalars.hpp) and 0 elsewhere. READ args of
//    dats lacking an axis sum their _a1s along it. `static constexpr unsigned
//    adjoint_reads` (bit a = argument a) declares which primal values the adjoint reads
//    (default: all); the tape saves
//    overwritten data only for those (to-be-recorded analysis). SavePolicy::Verify
//    checks the declaration (stardiff/adjoint/tape.hpp). The kernel's operator() and
//    adjoint must be const; an adjoint matching no activity of the dats is a compile error.
//  * Inner loops run over contiguous rows (x), so kernels vectorise when dim == 1. A task
//    writing >= 8 MiB per WRITE output assembles each output row in a cache-resident
//    buffer and stores it with non-temporal stores (no write-allocate traffic; WRITE
//    arguments must not be read by the kernel) when stream stores are on (below).
//    Loops with a dat of dim > 1 use runtime x strides; READ dats lacking x are read
//    (and their adjoints gathered) through rows broadcast along x (detail/loop_state.hpp).
#pragma once
#include <cstddef>
#include <string>
#include <type_traits>

#include "stardiff/mesh/block.hpp"
#include "stardiff/mesh/dat.hpp"
#include "stardiff/mesh/hd.hpp"
#include "stardiff/mesh/recorder.hpp"
#include "stardiff/mesh/scalars.hpp"
#include "stardiff/runtime/executor.hpp"

namespace stardiff::mesh {

template <Mode M>
struct AccessTag {
  static constexpr Mode mode = M;
};
inline constexpr AccessTag<Mode::Read> READ{};
inline constexpr AccessTag<Mode::Write> WRITE{};
inline constexpr AccessTag<Mode::RW> RW{};
inline constexpr AccessTag<Mode::Inc> INC{};

namespace detail {
// Device code only: a non-const accessor element. Reads and assignments go to memory;
// += and -= are atomicAdd when the accessor is atomic (a READ dat's _a1s in an adjoint
// on a CUDA worker: stencil scatters of neighbouring points meet).
template <class T>
struct DevRef;
}  // namespace detail

// Host code: a(...) is a T&. Device code (nvcc, __CUDA_ARCH__): for non-const T it is a
// reference proxy (read, =, +=, -=, *=, /=); bind it to `T v = a(0, 0)`, not to T&.
// `atomic` is set by the library only (adjoint scatters on CUDA workers).
template <class T>
struct Acc {
  T* p;
  std::ptrdiff_t sx, sy, sz;
  bool atomic = false;
#if defined(__CUDA_ARCH__)
  using Ref = std::conditional_t<std::is_const_v<T>, T&, detail::DevRef<T>>;
  __device__ Ref at(std::ptrdiff_t o) const {
    if constexpr (std::is_const_v<T>) return p[o];
    else return Ref{p + o, atomic};
  }
  __device__ Ref operator()(int i) const { return at(i * sx); }
  __device__ Ref operator()(int i, int j) const { return at(i * sx + j * sy); }
  __device__ Ref operator()(int i, int j, int k) const { return at(i * sx + j * sy + k * sz); }
  __device__ Ref c(int comp, int i = 0, int j = 0, int k = 0) const { return at(comp + i * sx + j * sy + k * sz); }
#else
  STARDIFF_HD T& operator()(int i) const { return p[i * sx]; }
  STARDIFF_HD T& operator()(int i, int j) const { return p[i * sx + j * sy]; }
  STARDIFF_HD T& operator()(int i, int j, int k) const { return p[i * sx + j * sy + k * sz]; }
  STARDIFF_HD T& c(int comp, int i = 0, int j = 0, int k = 0) const { return p[comp + i * sx + j * sy + k * sz]; }
#endif
};

#if defined(__CUDA_ARCH__)
namespace detail {
template <class T>
__device__ inline void dev_atomic_add(T* p, T v) {
  if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float> || std::is_same_v<T, int> ||
                std::is_same_v<T, unsigned> || std::is_same_v<T, unsigned long long>)
    atomicAdd(p, v);
  else
    static_assert(sizeof(T) == 0, "par_loop on CUDA: adjoint scatters need atomicAdd for this element type");
}
template <class T>
struct DevRef {
  T* p;
  bool atomic;
  __device__ operator T() const { return *p; }
  __device__ const DevRef& operator=(T v) const { *p = v; return *this; }
  __device__ const DevRef& operator=(const DevRef& o) const { *p = static_cast<T>(o); return *this; }
  __device__ const DevRef& operator+=(T v) const {
    if (atomic) dev_atomic_add(p, v);
    else *p += v;
    return *this;
  }
  __device__ const DevRef& operator-=(T v) const {
    if (atomic) dev_atomic_add(p, T(-v));
    else *p -= v;
    return *this;
  }
  __device__ const DevRef& operator*=(T v) const { *p *= v; return *this; }
  __device__ const DevRef& operator/=(T v) const { *p /= v; return *this; }
};
}  // namespace detail
#endif

template <class T, Mode M>
struct ArgDat {
  Dat<T>* dat;
  Stencil stencil;
};
template <class T>
struct ArgGbl {
  T value;
};
template <class T>
struct ArgReduce {
  Reduction<T>* red;
};
struct ArgIdx {};
template <class T>
struct ArgScalar {
  Scalar<T>* scalar;
};

template <class T, Mode M>
ArgDat<T, M> arg_dat(Dat<T>& d, const Stencil& s, AccessTag<M>) {
  return {&d, s};
}
template <class T, Mode M>
ArgDat<T, M> arg_dat(Dat<T>& d, AccessTag<M>) {
  return {&d, Stencil::zero(d.dims())};
}
template <class T>
ArgGbl<T> arg_gbl(const T& v) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 64, "arg_gbl: trivially copyable, <= 64 bytes");
  return {v};
}
template <class T>
ArgReduce<T> arg_reduce(Reduction<T>& r) {
  return {&r};
}
inline ArgIdx arg_idx() { return {}; }
template <class T>
ArgScalar<T> arg_scalar(Scalar<T>& s) {
  return {&s};
}

// Process-wide tuning switches; results are bitwise the same either way.
//  * Non-temporal stores (see above): off by default, STARDIFF_STREAM_STORES=1 turns
//    them on.
//  * Transparent huge pages for dat tiles of >= 1 MiB (src/mesh/dat.cpp): on by default,
//    STARDIFF_HUGE_PAGES=0 turns them off; applies to dats created afterwards.
void set_stream_stores(bool on);
bool stream_stores();
void set_huge_pages(bool on);
bool huge_pages();

// Loops submitted from a translation unit compiled by nvcc get CUDA implementations
// (stardiff/mesh/par_loop_cuda.cuh; STARDIFF_NO_LOOP_CUDA turns that off). The submission
// templates live in an inline namespace named after that choice, so one kernel type
// submitted from both kinds of translation unit instantiates two distinct codelets, not
// one template with two definitions.
#if defined(__CUDACC__) && !defined(STARDIFF_NO_LOOP_CUDA)
#define STARDIFF_LOOP_CUDA 1
#define STARDIFF_LOOP_ABI loop_cuda
#else
#define STARDIFF_LOOP_CUDA 0
#define STARDIFF_LOOP_ABI loop_host
#endif

namespace detail {
inline namespace STARDIFF_LOOP_ABI {
template <class K, class... A>
void par_loop_impl(bool passive, const std::string& name, Block& block, const Range& range, const K& kernel,
                   const A&... a);
}  // namespace STARDIFF_LOOP_ABI
}  // namespace detail

inline namespace STARDIFF_LOOP_ABI {
template <class K, class... A>
void par_loop(const std::string& name, Block& block, const Range& range, const K& kernel, const A&... args) {
  detail::par_loop_impl(false, name, block, range, kernel, args...);
}
// Never recorded (set-up loops, diagnostics).
template <class K, class... A>
void par_loop_passive(const std::string& name, Block& block, const Range& range, const K& kernel,
                      const A&... args) {
  detail::par_loop_impl(true, name, block, range, kernel, args...);
}
}  // namespace STARDIFF_LOOP_ABI

}  // namespace stardiff::mesh

#include "stardiff/mesh/detail/loop_node.hpp"  // dispatch machinery (templates)
