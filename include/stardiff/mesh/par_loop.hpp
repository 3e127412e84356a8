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
//    Acc<T> a at point p: a(di, dj, dk) is the value at p + (di, dj, dk); a.c(c, di, ...)
//    component c. Kernels are trivially copyable functors (copied into each task).
//  * Rejected at submission (stardiff::Error naming loop and argument): a dat of another
//    block, reads beyond a dat's halo, writes with a non-zero stencil, ranges outside a
//    dat, a dat both written and passed again.
//  * While a tape records (and the loop is not par_loop_passive) a loop touching an
//    active dat, scalar or reduction is recorded. Its kernel must then have
//      void adjoint(params...) const
//    whose parameters are, per argument in order: dat -> Acc<const T> primal, then
//    Acc<T> <name>_a1s only if the dat is active; gbl -> const T*; reduce -> const T*
//    value, const T* value_a1s; idx -> const int*; scalar -> const T*, T* scalar_a1s.
//    Adjoint semantics (OPS): primal values are those before the loop ran; READ args:
//    increment their _a1s (also at stencil offsets); WRITE args: read their _a1s — the
//    library zeroes it after the call; RW args: update their _a1s in place; INC args:
//    read their _a1s. `static constexpr unsigned adjoint_reads` (bit a = argument a)
//    declares which primal values the adjoint reads (default: all); the tape saves
//    overwritten data only for those (to-be-recorded analysis).
//  * Inner loops run over contiguous rows (x), so kernels vectorise when dim == 1. A task
//    writing >= 8 MiB per WRITE output assembles each output row in a cache-resident
//    buffer and stores it with non-temporal stores (no write-allocate traffic; WRITE
//    arguments must not be read by the kernel); STARDIFF_STREAM_STORES=0 disables this.
#pragma once
#include <cmath>
#include <cstdint>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <cstring>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "stardiff/mesh/block.hpp"
#include "stardiff/mesh/dat.hpp"
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

template <class T>
struct Acc {
  T* p;
  std::ptrdiff_t sx, sy, sz;
  T& operator()(int i) const { return p[i * sx]; }
  T& operator()(int i, int j) const { return p[i * sx + j * sy]; }
  T& operator()(int i, int j, int k) const { return p[i * sx + j * sy + k * sz]; }
  T& c(int comp, int i = 0, int j = 0, int k = 0) const { return p[comp + i * sx + j * sy + k * sz]; }
};

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

namespace detail {

struct Slot {
  TileGeom g;
  int buf = -1, buf2 = -1;  // buffer indices: primal/value, adjoint/partial
  int op = 0;
  int dim = 1;
  alignas(16) unsigned char gbl[64] = {};
};

template <class K, std::size_t N>
struct LoopArgs {
  K kernel;
  int lo[3], hi[3];
  int dims;
  bool unit;       // every dat has one component: x stride 1
  bool nan_check;
  bool stream;     // WRITE outputs stored with non-temporal stores (large tiles)
  Slot slot[N == 0 ? 1 : N];
};

// ---- per-argument tile state -------------------------------------------------------
template <class A, bool Unit, bool Stream = false>
struct State;

// Non-temporal store of n elements (streaming stores avoid the write-allocate read of
// outputs that are never read in the loop; caller fences with stream_fence()).
template <class T>
inline void stream_out(T* dst, const T* src, std::size_t n) {
#if defined(__SSE2__)
  if constexpr (std::is_same_v<T, double>) {
    std::size_t i = 0;
    for (; i < n && (reinterpret_cast<std::uintptr_t>(dst + i) & 15u) != 0; ++i) dst[i] = src[i];
    for (; i + 2 <= n; i += 2) _mm_stream_pd(dst + i, _mm_loadu_pd(src + i));
    for (; i < n; ++i) dst[i] = src[i];
    return;
  }
#endif
  std::memcpy(dst, src, n * sizeof(T));
}
inline void stream_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

template <class T, Mode M, bool Unit, bool Stream>
struct State<ArgDat<T, M>, Unit, Stream> {
  // Streaming: a WRITE argument's row is assembled in `buf` (cache-resident), then
  // stored with non-temporal stores at the end of the row.
  static constexpr bool kStream = Stream && Unit && M == Mode::Write && std::is_same_v<T, double>;
  std::unique_ptr<T[]> buf;
  T* out = nullptr;
  T* base = nullptr;
  T* abase = nullptr;
  T* row = nullptr;
  T* arow = nullptr;
  long long origin = 0, sx_ = 1, sy = 0, sz = 0;
  int dim = 1;
  long long sx() const {
    if constexpr (Unit) return 1;
    else return sx_;
  }
  void init(const Slot& s, const TaskContext& t) {
    origin = s.g.origin;
    sx_ = s.g.s[0];
    sy = s.g.s[1];
    sz = s.g.s[2];
    dim = s.dim;
    base = t.buffers[s.buf].template data<T>();
    if (s.buf2 >= 0) abase = t.buffers[s.buf2].template data<T>();
  }
  void set_row(int i0, int j, int k) {
    long long off = origin + i0 * sx() + j * sy + k * sz;
    row = base + off;
    if (abase) arow = abase + off;
    if constexpr (kStream) {
      out = row;
      row = buf.get();  // row-local buffer (WRITE args have a zero stencil)
    }
  }
  void prepare(int n) {
    if constexpr (kStream) buf.reset(new T[n > 0 ? n : 1]);
  }
  void end_row(int n) {
    if constexpr (kStream) {
      stream_out(out, buf.get(), static_cast<std::size_t>(n));
      row = out;  // the NaN check reads the stored row
    }
  }
  auto primal(int di) const {
    using P = std::conditional_t<M == Mode::Read, const T, T>;
    return Acc<P>{row + di * sx(), sx(), sy, sz};
  }
  template <bool Active>
  auto adjoint(int di) const {
    if constexpr (Active)
      return std::tuple<Acc<const T>, Acc<T>>{Acc<const T>{row + di * sx(), sx(), sy, sz},
                                              Acc<T>{arow + di * sx(), sx(), sy, sz}};
    else
      return std::tuple<Acc<const T>>{Acc<const T>{row + di * sx(), sx(), sy, sz}};
  }
  void after_adjoint_point(int di) const {
    if constexpr (M == Mode::Write) {
      if (arow) {
        T* q = arow + di * sx();
        if constexpr (Unit) q[0] = T(0);
        else
          for (int c = 0; c < dim; ++c) q[c] = T(0);
      }
    }
  }
  void finish_primal(const Slot&, const TaskContext&) {}
  void finish_adjoint(const Slot&, const TaskContext&) {}
  // First NaN among the points of this row written by the loop (-1: none).
  int nan_in_row(int n) const {
    if constexpr (M != Mode::Read && std::is_floating_point_v<T>) {
      for (int di = 0; di < n; ++di)
        for (int c = 0; c < dim; ++c)
          if (std::isnan(row[di * sx() + c])) return di;
    }
    return -1;
  }
};

template <class T, bool Unit, bool Stream>
struct State<ArgGbl<T>, Unit, Stream> {
  void prepare(int) {}
  void end_row(int) {}
  T value;
  void init(const Slot& s, const TaskContext&) { std::memcpy(&value, s.gbl, sizeof(T)); }
  void set_row(int, int, int) {}
  const T* primal(int) const { return &value; }
  template <bool>
  std::tuple<const T*> adjoint(int) const {
    return {&value};
  }
  void after_adjoint_point(int) const {}
  void finish_primal(const Slot&, const TaskContext&) {}
  void finish_adjoint(const Slot&, const TaskContext&) {}
  int nan_in_row(int) const { return -1; }
};

template <class T, bool Unit, bool Stream>
struct State<ArgReduce<T>, Unit, Stream> {
  void prepare(int) {}
  void end_row(int) {}
  T acc{};
  const T* post = nullptr;
  const T* eff = nullptr;
  void init(const Slot& s, const TaskContext& t) {
    acc = neutral<T>(static_cast<ReduceOp>(s.op));
    post = t.buffers[s.buf].template data<T>();
    if (s.buf2 >= 0) eff = t.buffers[s.buf2].template data<T>();
  }
  void set_row(int, int, int) {}
  T* primal(int) { return &acc; }
  template <bool>
  std::tuple<const T*, const T*> adjoint(int) const {
    return {post, eff};
  }
  void after_adjoint_point(int) const {}
  void finish_primal(const Slot& s, const TaskContext& t) { *t.buffers[s.buf].template data<T>() = acc; }
  void finish_adjoint(const Slot&, const TaskContext&) {}
  int nan_in_row(int) const { return -1; }
};

template <bool Unit, bool Stream>
struct State<ArgIdx, Unit, Stream> {
  void prepare(int) {}
  void end_row(int) {}
  int idx[3] = {0, 0, 0};
  int i0 = 0;
  void init(const Slot&, const TaskContext&) {}
  void set_row(int i, int j, int k) {
    i0 = i;
    idx[1] = j;
    idx[2] = k;
  }
  const int* primal(int di) {
    idx[0] = i0 + di;
    return idx;
  }
  template <bool>
  std::tuple<const int*> adjoint(int di) {
    idx[0] = i0 + di;
    return {idx};
  }
  void after_adjoint_point(int) const {}
  void finish_primal(const Slot&, const TaskContext&) {}
  void finish_adjoint(const Slot&, const TaskContext&) {}
  int nan_in_row(int) const { return -1; }
};

template <class T, bool Unit, bool Stream>
struct State<ArgScalar<T>, Unit, Stream> {
  void prepare(int) {}
  void end_row(int) {}
  T value{};
  T partial{};
  void init(const Slot& s, const TaskContext& t) { value = *t.buffers[s.buf].template data<T>(); }
  void set_row(int, int, int) {}
  const T* primal(int) const { return &value; }
  template <bool>
  std::tuple<const T*, T*> adjoint(int) {
    return {&value, &partial};
  }
  void after_adjoint_point(int) const {}
  void finish_primal(const Slot&, const TaskContext&) {}
  void finish_adjoint(const Slot& s, const TaskContext& t) { *t.buffers[s.buf2].template data<T>() = partial; }
  int nan_in_row(int) const { return -1; }
};

// ---- compile-time facts about argument lists ------------------------------------------
template <class A> struct IsDat : std::false_type {};
template <class T, Mode M> struct IsDat<ArgDat<T, M>> : std::true_type {};

template <class... A>
constexpr std::size_t dat_count() { return (std::size_t{0} + ... + (IsDat<A>::value ? 1 : 0)); }

// Index among the dat arguments of argument I (or 0 for non-dats).
template <std::size_t I, class... A>
constexpr unsigned dat_index() {
  constexpr bool flags[] = {IsDat<A>::value..., false};
  unsigned n = 0;
  for (std::size_t i = 0; i < I; ++i) n += flags[i] ? 1 : 0;
  return n;
}

template <std::size_t I, unsigned Mask, class... A>
constexpr bool active_bit() {
  return ((Mask >> dat_index<I, A...>()) & 1u) != 0;
}

// Parameter tuple of the adjoint under an activity mask.
template <class K, class... A, std::size_t... I, unsigned Mask>
auto adjoint_params_type(std::index_sequence<I...>, std::integral_constant<unsigned, Mask>)
    -> decltype(std::tuple_cat(std::declval<State<A, false>&>().template adjoint<active_bit<I, Mask, A...>()>(0)...));

template <class K, class Tuple>
struct AdjointCallable : std::false_type {};
template <class K, class... P>
struct AdjointCallable<K, std::tuple<P...>>
    : std::bool_constant<requires(const K& k, P... p) { k.adjoint(p...); }> {};

template <class K, unsigned Mask, class... A>
constexpr bool adjoint_ok() {
  using Params = decltype(adjoint_params_type<K, A...>(std::index_sequence_for<A...>{},
                                                       std::integral_constant<unsigned, Mask>{}));
  return AdjointCallable<K, Params>::value;
}

template <class K>
constexpr bool has_adjoint() {
  return requires { &K::adjoint; };
}

template <class K>
constexpr unsigned adjoint_reads_mask() {
  if constexpr (requires { K::adjoint_reads; }) return static_cast<unsigned>(K::adjoint_reads);
  else return ~0u;
}

// Calls f(integral_constant<unsigned, M>) for the runtime mask m (M < 2^ndats).
template <std::size_t NMasks, class F, unsigned... M>
bool dispatch_mask(unsigned m, F&& f, std::integer_sequence<unsigned, M...>) {
  return ((m == M ? (f(std::integral_constant<unsigned, M>{}), true) : false) || ...);
}

template <class K, class... A>
bool adjoint_ok_runtime(unsigned mask) {
  constexpr std::size_t nd = dat_count<A...>();
  static_assert(nd <= 8, "par_loop: at most 8 dat arguments");
  bool ok = false;
  dispatch_mask<(1u << nd)>(mask, [&](auto mc) { ok = adjoint_ok<K, decltype(mc)::value, A...>(); },
                            std::make_integer_sequence<unsigned, (1u << nd)>{});
  return ok;
}

// ---- tile bodies ----------------------------------------------------------------------
template <bool Unit, bool Stream, class K, class... A, std::size_t... I>
void run_primal(const LoopArgs<K, sizeof...(A)>& la, const TaskContext& t, std::index_sequence<I...>) {
  std::tuple<State<A, Unit, Stream>...> st;
  (std::get<I>(st).init(la.slot[I], t), ...);
  const K kernel = la.kernel;
  const int n = la.hi[0] - la.lo[0];
  (std::get<I>(st).prepare(n), ...);
  for (int k = la.lo[2]; k < la.hi[2]; ++k)
    for (int j = la.lo[1]; j < la.hi[1]; ++j) {
      (std::get<I>(st).set_row(la.lo[0], j, k), ...);
      for (int di = 0; di < n; ++di) kernel(std::get<I>(st).primal(di)...);
      (std::get<I>(st).end_row(n), ...);
      if (la.nan_check) {
        int where = -1, arg = -1;
        ((where < 0 ? (where = std::get<I>(st).nan_in_row(n), arg = static_cast<int>(I)) : 0), ...);
        if (where >= 0) {
          t.fail("NaN written to argument " + std::to_string(arg) + " at loop index (" +
                 std::to_string(la.lo[0] + where) + "," + std::to_string(j) + "," + std::to_string(k) + ")");
          return;
        }
      }
    }
  if constexpr (Stream) stream_fence();
  (std::get<I>(st).finish_primal(la.slot[I], t), ...);
}

template <bool Unit, unsigned Mask, class K, class... A, std::size_t... I>
void run_adjoint(const LoopArgs<K, sizeof...(A)>& la, const TaskContext& t, std::index_sequence<I...>) {
  std::tuple<State<A, Unit>...> st;
  (std::get<I>(st).init(la.slot[I], t), ...);
  const K kernel = la.kernel;
  const int n = la.hi[0] - la.lo[0];
  for (int k = la.lo[2]; k < la.hi[2]; ++k)
    for (int j = la.lo[1]; j < la.hi[1]; ++j) {
      (std::get<I>(st).set_row(la.lo[0], j, k), ...);
      for (int di = 0; di < n; ++di) {
        std::apply([&](auto... p) { kernel.adjoint(p...); },
                   std::tuple_cat(std::get<I>(st).template adjoint<active_bit<I, Mask, A...>()>(di)...));
        (std::get<I>(st).after_adjoint_point(di), ...);
      }
    }
  (std::get<I>(st).finish_adjoint(la.slot[I], t), ...);
}

template <class K, class... A>
void loop_tile_cpu(const TaskContext& t) {
  const auto& la = t.arg<LoopArgs<K, sizeof...(A)>>();
  if (la.unit && la.stream) run_primal<true, true, K, A...>(la, t, std::index_sequence_for<A...>{});
  else if (la.unit) run_primal<true, false, K, A...>(la, t, std::index_sequence_for<A...>{});
  else run_primal<false, false, K, A...>(la, t, std::index_sequence_for<A...>{});
}

template <class K, std::size_t N>
struct AdjArgs {
  LoopArgs<K, N> la;
  unsigned mask;
};

template <class K, class... A>
void loop_tile_adjoint_cpu(const TaskContext& t) {
  if constexpr (has_adjoint<K>()) {
    const auto& f = t.arg<AdjArgs<K, sizeof...(A)>>();
    constexpr std::size_t nd = dat_count<A...>();
    bool ran = dispatch_mask<(1u << nd)>(
        f.mask,
        [&](auto mc) {
          constexpr unsigned M = decltype(mc)::value;
          if constexpr (adjoint_ok<K, M, A...>()) {
            if (f.la.unit) run_adjoint<true, M, K, A...>(f.la, t, std::index_sequence_for<A...>{});
            else run_adjoint<false, M, K, A...>(f.la, t, std::index_sequence_for<A...>{});
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

template <class K, class... A>
const Codelet& loop_codelet(const std::string& name) {
  static const Codelet cl("loop_" + name, &loop_tile_cpu<K, A...>);
  return cl;
}
template <class K, class... A>
const Codelet& loop_adjoint_codelet(const std::string& name) {
  static const Codelet cl("loop_" + name + "_adjoint", &loop_tile_adjoint_cpu<K, A...>);
  return cl;
}

// ---- submission helpers (src/mesh/par_loop.cpp) ----------------------------------------
// Validates one dat argument against block and range (throws Error naming loop/arg).
void check_dat_arg(const std::string& loop, int argi, const Block& block, const Range& range,
                   const DatBase& dat, const Stencil& st, Mode mode);
void check_range(const std::string& loop, const Block& block, const Range& range);
// Tile t's part of range (outer dimension clipped to the rows tile t owns); false if empty.
bool tile_range(const Block& block, const Range& range, int t, int lo[3], int hi[3]);
std::string adjoint_signature(const std::vector<LoopArgDesc>& args);

template <class T, Mode M>
LoopArgDesc describe(const ArgDat<T, M>& a, int argi, unsigned reads) {
  LoopArgDesc d;
  d.kind = LoopArgDesc::Kind::Dat;
  d.dat = a.dat;
  d.mode = M;
  d.adjoint_reads = argi < 32 && ((reads >> argi) & 1u);
  for (int k = 0; k < a.stencil.dims(); ++k) {
    d.st_min[k] = a.stencil.min(k);
    d.st_max[k] = a.stencil.max(k);
  }
  return d;
}
template <class T>
LoopArgDesc describe(const ArgGbl<T>&, int, unsigned) {
  return {};
}
template <class T>
LoopArgDesc describe(const ArgReduce<T>& a, int, unsigned) {
  LoopArgDesc d;
  d.kind = LoopArgDesc::Kind::Reduce;
  d.red = a.red;
  return d;
}
inline LoopArgDesc describe(const ArgIdx&, int, unsigned) {
  LoopArgDesc d;
  d.kind = LoopArgDesc::Kind::Idx;
  return d;
}
template <class T>
LoopArgDesc describe(const ArgScalar<T>& a, int, unsigned) {
  LoopArgDesc d;
  d.kind = LoopArgDesc::Kind::Scalar;
  d.scalar = a.scalar;
  return d;
}

// Fills slot and accesses of argument `a` for tile t.
template <class T, Mode M>
void bind_arg(const ArgDat<T, M>& a, const LoopArgDesc&, int t, bool adjoint, Slot& s, std::vector<DataAccess>& acc,
          RecordedLoop*, std::size_t) {
  s.g = a.dat->geom(t);
  s.dim = a.dat->dim();
  s.buf = static_cast<int>(acc.size());
  if (!adjoint) {
    acc.push_back(M == Mode::Read ? in(a.dat->tile(t)) : inout(a.dat->tile(t)));
  } else {
    acc.push_back(in(a.dat->tile(t)));
    if (a.dat->active()) {
      s.buf2 = static_cast<int>(acc.size());
      acc.push_back(inout(a.dat->adjoint_tile(t)));
    }
  }
}
template <class T>
void bind_arg(const ArgGbl<T>& a, const LoopArgDesc&, int, bool, Slot& s, std::vector<DataAccess>&, RecordedLoop*,
          std::size_t) {
  std::memcpy(s.gbl, &a.value, sizeof(T));
}
template <class T>
void bind_arg(const ArgReduce<T>& a, const LoopArgDesc&, int t, bool adjoint, Slot& s, std::vector<DataAccess>& acc,
          RecordedLoop* node, std::size_t argi) {
  s.op = static_cast<int>(a.red->op());
  s.buf = static_cast<int>(acc.size());
  if (!adjoint) {
    acc.push_back(out(a.red->partial(t)));
  } else {
    acc.push_back(in(*node->red_post[argi]));
    s.buf2 = static_cast<int>(acc.size());
    acc.push_back(in(*node->red_eff[argi]));
  }
}
inline void bind_arg(const ArgIdx&, const LoopArgDesc&, int, bool, Slot&, std::vector<DataAccess>&, RecordedLoop*,
                 std::size_t) {}
template <class T>
void bind_arg(const ArgScalar<T>& a, const LoopArgDesc&, int t, bool adjoint, Slot& s, std::vector<DataAccess>& acc,
          RecordedLoop*, std::size_t) {
  s.buf = static_cast<int>(acc.size());
  acc.push_back(in(a.scalar->value_handle()));
  if (adjoint) {
    s.buf2 = static_cast<int>(acc.size());
    acc.push_back(out(a.scalar->partial(t)));
  }
}

unsigned activity_mask(const std::vector<LoopArgDesc>& args);
// True when a task's outputs are far larger than caches (streaming stores pay off).
bool stream_worthwhile(const int lo[3], const int hi[3]);
bool loop_is_active(const std::vector<LoopArgDesc>& args);
bool all_unit(const std::vector<LoopArgDesc>& args);
// Exchanges the halos of dats read across tile boundaries (only_adjoint_reads: only
// those whose primal the adjoint reads).
void exchange_for(const std::vector<LoopArgDesc>& args, bool only_adjoint_reads);

template <class K, class... A>
class LoopNode final : public RecordedLoop {
 public:
  LoopNode(const K& k, std::tuple<A...> a) : kernel_(k), args_(std::move(a)) {}
  void submit_adjoint() override {
    for (std::size_t i = 0; i < args.size(); ++i)
      if (args[i].kind == LoopArgDesc::Kind::Reduce)
        args[i].red->submit_adjoint_prep(*red_pre[i], *red_post[i], *red_eff[i], name);
    exchange_for(args, true);
    const unsigned mask = activity_mask(args);
    Executor& ex = block->executor();
    const Codelet& cl = loop_adjoint_codelet<K, A...>(name);
    std::vector<int> ran;
    for (int t = 0; t < block->tiles(); ++t) {
      AdjArgs<K, sizeof...(A)> f{{kernel_, {}, {}, block->dims(), all_unit(args), false, false, {}}, mask};
      if (!tile_range(*block, range, t, f.la.lo, f.la.hi)) continue;
      std::vector<DataAccess> acc;
      std::apply([&](const auto&... a) {
        std::size_t i = 0;
        ((detail::bind_arg(a, args[i], t, true, f.la.slot[i], acc, this, i), ++i), ...);
      }, args_);
      ex.submit(cl, acc, &f, sizeof f, {.name = name + "_adjoint"});
      ran.push_back(t);
    }
    for (auto& d : args)
      if (d.kind == LoopArgDesc::Kind::Scalar) d.scalar->submit_adjoint_sum(ran, name);
    std::vector<DatBase*> done;
    for (auto& d : args)
      if (d.kind == LoopArgDesc::Kind::Dat && d.mode == Mode::Read && d.dat->active() &&
          (d.st_min[block->outer()] != 0 || d.st_max[block->outer()] != 0)) {
        bool seen = false;
        for (auto* p : done) seen = seen || p == d.dat;
        if (!seen) {
          d.dat->reverse_exchange_adjoint();
          done.push_back(d.dat);
        }
      }
  }

 private:
  K kernel_;
  std::tuple<A...> args_;
};

template <class K, class... A>
void par_loop_impl(bool passive, const std::string& name, Block& block, const Range& range, const K& kernel,
                   const A&... a) {
  static_assert(std::is_trivially_copyable_v<K>, "par_loop: the kernel functor must be trivially copyable "
                                                 "(it is copied into every task)");
  static_assert(std::is_invocable_v<const K&, decltype(std::declval<State<A, false>&>().primal(0))...>,
                "par_loop: the kernel is not callable with its arguments' accessors (READ dats give "
                "Acc<const T>, WRITE/RW/INC dats Acc<T>, gbl const T*, reduce T*, idx const int*, "
                "scalar const T*)");
  check_range(name, block, range);
  constexpr unsigned reads = adjoint_reads_mask<K>();
  std::vector<LoopArgDesc> desc;
  {
    int i = 0;
    ((desc.push_back(describe(a, i, reads)), ++i), ...);
  }
  {
    int i = 0;
    auto check = [&](const auto& arg) {
      using Arg = std::decay_t<decltype(arg)>;
      if constexpr (IsDat<Arg>::value) check_dat_arg(name, i, block, range, *arg.dat, arg.stencil, desc[i].mode);
      if constexpr (requires { arg.red; })
        require(&arg.red->block() == &block, "par_loop '" + name + "': argument " + std::to_string(i) +
                                                  " (reduction '" + arg.red->name() + "') belongs to another block");
      if constexpr (requires { arg.scalar; })
        require(&arg.scalar->block() == &block, "par_loop '" + name + "': argument " + std::to_string(i) +
                                                     " (scalar '" + arg.scalar->name() + "') belongs to another block");
      ++i;
    };
    (check(a), ...);
    for (std::size_t p = 0; p < desc.size(); ++p)
      for (std::size_t q = 0; q < desc.size(); ++q)
        if (p != q && desc[p].writes() && desc[q].kind == LoopArgDesc::Kind::Dat && desc[q].dat == desc[p].dat)
          throw Error("par_loop '" + name + "': dat '" + desc[p].dat->name() + "' is written by argument " +
                      std::to_string(p) + " and also passed as argument " + std::to_string(q));
  }
  Recorder* rec = passive ? nullptr : active_recorder();
  std::unique_ptr<LoopNode<K, A...>> node;
  if (rec && loop_is_active(desc)) {
    if constexpr (!has_adjoint<K>()) {
      throw Error("par_loop '" + name + "': the loop is recorded (it touches active data) but its kernel has no "
                  "adjoint member; use par_loop_passive or give the kernel an adjoint");
    } else {
      if (!adjoint_ok_runtime<K, A...>(activity_mask(desc)))
        throw Error("par_loop '" + name + "': the kernel's adjoint does not match its primal: expected adjoint(" +
                    adjoint_signature(desc) + ")");
    }
    node = std::make_unique<LoopNode<K, A...>>(kernel, std::tuple<A...>(a...));
    node->name = name;
    node->block = &block;
    node->range = range;
    node->args = desc;
    node->red_pre.resize(desc.size());
    node->red_post.resize(desc.size());
    node->red_eff.resize(desc.size());
    rec->before_loop(*node);
  }
  exchange_for(desc, false);
  Executor& ex = block.executor();
  const Codelet& cl = loop_codelet<K, A...>(name);
  const bool unit = all_unit(desc), nan = nan_check();
  std::vector<int> ran;
  for (int t = 0; t < block.tiles(); ++t) {
    LoopArgs<K, sizeof...(A)> la{kernel, {}, {}, block.dims(), unit, nan, false, {}};
    if (!tile_range(block, range, t, la.lo, la.hi)) continue;
    la.stream = unit && stream_worthwhile(la.lo, la.hi);
    std::vector<DataAccess> acc;
    {
      std::size_t i = 0;
      ((detail::bind_arg(a, desc[i], t, false, la.slot[i], acc, nullptr, i), ++i), ...);
    }
    ex.submit(cl, acc, &la, sizeof la, {.name = name});
    ran.push_back(t);
  }
  for (auto& d : desc) {
    if (d.kind == LoopArgDesc::Kind::Reduce) d.red->submit_combine(ran, name);
    if (d.writes()) d.dat->mark_written();
  }
  if (node) rec->after_loop(std::move(node));
}

}  // namespace detail

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

}  // namespace stardiff::mesh
