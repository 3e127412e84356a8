// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/adjoint/external.hpp — external functions: user code with a user adjoint, run as
// tasks on declared dats and recorded on the active tape (OPS ops_execute_external_function).
//
// Contract:
//  * execute_external(name, primal, adjoint, args...) / execute_external_recompute(...) take
//    par_loop's argument descriptors (arg_dat with READ|WRITE|RW|INC, arg_gbl, arg_reduce,
//    arg_scalar; not arg_idx); every dat, reduction and scalar belongs to one block.
//    primal(ctx, p...) gets, per argument: dat -> ExtDat<const T> (READ) or ExtDat<T>;
//    gbl -> const T*; reduce -> T* (the value: fold into it); scalar -> const T*.
//    adjoint(ctx, q...) gets: dat -> ExtDat<const T> primal, ExtDat<T> adjoint (empty for a
//    passive dat); gbl -> const T*; reduce -> const T* value, const T* value_a1s;
//    scalar -> const T* value, T* value_a1s (add into it). A callable of another arity or
//    signature is a compile-time error (static_assert naming execute_external's primal or
//    adjoint). Both callables are trivially copyable (copied into every task).
//  * Granularity: one task holding every tile of every declared dat (ExternalOptions{}),
//    or one task per tile (per_tile = true; tiles in order; reductions and scalar adjoints
//    are then folded tile after tile). ctx.tile_lo / tile_hi name the tiles a task holds.
//    Per tile, the function may read ghost rows (exchanged before) and writes owned rows only.
//  * The adjoint sees READ dats as they were at the call, written dats (WRITE/RW/INC) as the
//    primal left them. execute_external saves those outputs after the primal (one buffer
//    per tile, a Handle::managed_vector StarPU may evict; a checkpointed tape drops them
//    while the call's step is untaped); execute_external_recompute saves nothing itself: the tape
//    keeps the inputs and the adjoint first re-runs the primal on copies of the written dats.
//    On return the adjoint leaves each written dat's adjoint as the adjoint of its value
//    before the call (WRITE: zero where the primal wrote; RW: updated; INC: unchanged).
//  * Recorded (as a RecordedLoop; submit_primal() re-runs it) when a tape is active and an
//    argument is active; otherwise only the primal runs.
//  * Undeclared access: host access to a dat (set, values, adjoint...) or a par_loop from
//    inside the user's code is an Error naming the external function and the dat or loop.
//  * SavePolicy::Verify has no adjoint_reads mask to check here (tape.hpp): what the adjoint
//    may read follows from the declared modes, and all of it is saved or recomputed.
//  * CUDA: when both callables' types declare `static constexpr bool cuda = true` (and the
//    library has StarPU CUDA codelets), the call's codelet also has a CUDA implementation: on a
//    CUDA worker the same callables run with ctx.cuda_stream set (the worker's stream) and every
//    ExtDat's data(t) a device pointer (geometry as on the host; operator() and for_interior are
//    then unusable). Work may be queued on the stream; it is waited for after return.
//  * options.serialize (a handle; may be null): every task of the call also takes it RW, so
//    calls sharing it run in submission order (state shared between calls, e.g. factors).
//  * options.adjoint_reads (bit a = argument a; default all): READ dats whose primal the
//    adjoint reads. A cleared bit lets the tape skip saving that input when a later loop
//    overwrites it (the adjoint then sees unspecified values there). Ignored by
//    execute_external_recompute, whose re-run of the primal reads every input.
//  * options.adjoint_gets_inputs (execute_external_recompute only): the primal is not re-run
//    before the adjoint, which sees every argument, written ones included, as it was before the
//    call (the tape restored it) and recomputes what it needs itself (e.g. a time step whose
//    adjoint needs the step's intermediates, not only its outputs).
#pragma once
#include <array>
#include <cstring>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "stardiff/mesh/par_loop.hpp"

namespace stardiff {

struct ExternalContext {
  const char* name = "";
  const mesh::Block* block = nullptr;
  int tile_lo = 0, tile_hi = 0;  // tiles this task holds: [tile_lo, tile_hi)
  bool adjoint = false;          // false: primal (also the recomputation in the adjoint)
  void* cuda_stream = nullptr;   // cudaStream_t on a CUDA worker (see `cuda` above), else null
};

struct ExternalOptions {
  bool per_tile = false;
  Handle* serialize = nullptr;
  unsigned adjoint_reads = ~0u;  // bit a = argument a (below)
  bool adjoint_gets_inputs = false;
};

namespace detail_ext {
struct TileInfo {
  void* p = nullptr;
  mesh::TileGeom g;
  int own_lo = 0, own_hi = 0;    // owned loop rows along the outer axis
  int held_lo = 0, held_hi = 0;  // rows the buffer holds (ghosts included)
};
[[noreturn]] void throw_not_held(const mesh::DatBase& d, int row, int tile_lo, int tile_hi);
}  // namespace detail_ext

// One declared dat as a task of an external function sees it (tiles [tile_lo, tile_hi)).
template <class T>
class ExtDat {
 public:
  ExtDat() = default;
  ExtDat(const mesh::DatBase* d, const detail_ext::TileInfo* info, int lo, int hi)
      : dat_(d), info_(info), lo_(lo), hi_(hi), last_(lo) {}
  bool valid() const { return info_ != nullptr; }  // false: a passive dat's adjoint
  operator ExtDat<const T>() const
    requires(!std::is_const_v<T>)
  {
    return ExtDat<const T>(dat_, info_, lo_, hi_);
  }
  const mesh::DatBase& dat() const { return *dat_; }
  const std::string& name() const { return dat_->name(); }
  int tile_lo() const { return lo_; }
  int tile_hi() const { return hi_; }
  T* data(int t) const { return static_cast<T*>(at_tile(t).p); }
  const mesh::TileGeom& geom(int t) const { return at_tile(t).g; }
  int row_lo(int t) const { return at_tile(t).own_lo; }  // owned outer rows of tile t
  int row_hi(int t) const { return at_tile(t).own_hi; }
  // Element at loop index (i, j, k), component c: the owning tile's copy when held.
  T& operator()(int i, int j = 0, int k = 0, int c = 0) const {
    const int o = dat_->dims() - 1;
    const int r = o == 0 ? i : o == 1 ? j : k;
    const detail_ext::TileInfo& f = find(r);
    return static_cast<T*>(f.p)[f.g.origin + c + i * f.g.s[0] + j * f.g.s[1] + k * f.g.s[2]];
  }

  // f(element, p) for every interior point of the tiles this task owns (component 0);
  // p: the point's index in natural order (x fastest), counted over the dat's interior.
  template <class F>
  void for_interior(F&& f) const {
    const int dims = dat_->dims(), o = dims - 1;
    int base[3] = {0, 0, 0}, size[3] = {1, 1, 1};
    for (int q = 0; q < dims; ++q) {
      base[q] = dat_->base(q);
      size[q] = dat_->size(q);
    }
    for (int t = lo_; t < hi_; ++t) {
      const detail_ext::TileInfo& ti = at_tile(t);
      int lo[3] = {base[0], base[1], base[2]}, hi[3] = {base[0] + size[0], base[1] + size[1], base[2] + size[2]};
      lo[o] = ti.own_lo > lo[o] ? ti.own_lo : lo[o];
      hi[o] = ti.own_hi < hi[o] ? ti.own_hi : hi[o];
      T* p = static_cast<T*>(ti.p) + ti.g.origin;
      for (int k = lo[2]; k < hi[2]; ++k)
        for (int j = lo[1]; j < hi[1]; ++j) {
          const long long row = static_cast<long long>(size[0]) * ((j - base[1]) + 1LL * size[1] * (k - base[2]));
          T* r = p + j * ti.g.s[1] + k * ti.g.s[2];
          for (int i = lo[0]; i < hi[0]; ++i) f(r[i * ti.g.s[0]], row + (i - base[0]));
        }
    }
  }

 private:
  const detail_ext::TileInfo& at_tile(int t) const { return info_[t - lo_]; }
  const detail_ext::TileInfo& find(int r) const {
    const auto& l = at_tile(last_);
    if (r >= l.own_lo && r < l.own_hi) return l;
    for (int t = lo_; t < hi_; ++t)
      if (r >= at_tile(t).own_lo && r < at_tile(t).own_hi) return at_tile(last_ = t);
    for (int t = lo_; t < hi_; ++t)
      if (r >= at_tile(t).held_lo && r < at_tile(t).held_hi) return at_tile(t);
    detail_ext::throw_not_held(*dat_, r, lo_, hi_);
  }
  const mesh::DatBase* dat_ = nullptr;
  const detail_ext::TileInfo* info_ = nullptr;
  int lo_ = 0, hi_ = 0;
  mutable int last_ = 0;
};

namespace detail_ext {
using mesh::ArgDat;
using mesh::ArgGbl;
using mesh::ArgIdx;
using mesh::ArgReduce;
using mesh::ArgScalar;
using mesh::LoopArgDesc;
using mesh::Mode;

// ---- non-template helpers (src/adjoint/external.cpp) --------------------------------
void fill_tile_info(const mesh::DatBase& d, int t, void* p, TileInfo& out);
// Submits a copy of `bytes` bytes from src to dst (whole buffers).
void submit_copy(Executor& ex, Handle& src, Handle& dst, std::size_t bytes, const std::string& name);
// Marks the calling thread as running external function `name` (nullptr: none) for its scope.
class RunningGuard {
 public:
  explicit RunningGuard(const char* name);
  ~RunningGuard();
  RunningGuard(const RunningGuard&) = delete;
  RunningGuard& operator=(const RunningGuard&) = delete;

 private:
  const char* prev_;
};
void check_args(const std::string& name, const std::vector<LoopArgDesc>& desc, const mesh::Block& block);
bool is_active(const std::vector<LoopArgDesc>& desc);

// ---- per-argument traits ------------------------------------------------------------
template <class A>
struct Traits {
  static constexpr bool supported = false;
};
template <class T, Mode M>
struct Traits<ArgDat<T, M>> {
  static constexpr bool supported = true;
  using Primal = std::tuple<ExtDat<std::conditional_t<M == Mode::Read, const T, T>>>;
  using Adjoint = std::tuple<ExtDat<const T>, ExtDat<T>>;
};
template <class T>
struct Traits<ArgGbl<T>> {
  static constexpr bool supported = true;
  using Primal = std::tuple<const T*>;
  using Adjoint = std::tuple<const T*>;
};
template <class T>
struct Traits<ArgReduce<T>> {
  static constexpr bool supported = true;
  using Primal = std::tuple<T*>;
  using Adjoint = std::tuple<const T*, const T*>;
};
template <class T>
struct Traits<ArgScalar<T>> {
  static constexpr bool supported = true;
  using Primal = std::tuple<const T*>;
  using Adjoint = std::tuple<const T*, T*>;
};

template <class F, class Tuple>
struct CallableWith : std::false_type {};
template <class F, class... P>
struct CallableWith<F, std::tuple<P...>> : std::bool_constant<std::is_invocable_v<const F&, const ExternalContext&, P...>> {};

template <class F>
struct Arity {
  static constexpr int value = -1;  // unknown (generic or overloaded)
};
template <class F>
  requires requires { &F::operator(); }
struct Arity<F> {
  template <class R, class C, class... P>
  static constexpr int count(R (C::*)(P...) const) { return static_cast<int>(sizeof...(P)); }
  template <class R, class C, class... P>
  static constexpr int count(R (C::*)(P...)) { return static_cast<int>(sizeof...(P)); }
  static constexpr int value = count(&F::operator());
};

template <class... A>
using PrimalParams = decltype(std::tuple_cat(std::declval<typename Traits<A>::Primal>()...));
template <class... A>
using AdjointParams = decltype(std::tuple_cat(std::declval<typename Traits<A>::Adjoint>()...));

struct Slot {
  const mesh::DatBase* dat = nullptr;
  int buf = -1, buf2 = -1;  // first buffer of the primal / adjoint run (dats: one per tile)
  alignas(16) unsigned char gbl[64] = {};
};

template <class P, class Q, std::size_t N>
struct TaskArgs {
  P primal;
  Q adjoint;
  const mesh::Block* block;
  char name[64];
  int tile_lo, tile_hi;
  bool adjoint_pass;
  Slot slot[N == 0 ? 1 : N];
};

// Per-task state of one argument: builds the callable's parameters from the buffers.
template <class A>
struct Bind;
template <class T, Mode M>
struct Bind<ArgDat<T, M>> {
  std::vector<TileInfo> prim, adj;
  void init(const Slot& s, const TaskContext& t, int lo, int hi) {
    for (int tile = lo; tile < hi; ++tile) {
      prim.emplace_back();
      fill_tile_info(*s.dat, tile, t.buffers[s.buf + tile - lo].ptr, prim.back());
      if (s.buf2 >= 0) {
        adj.emplace_back();
        fill_tile_info(*s.dat, tile, t.buffers[s.buf2 + tile - lo].ptr, adj.back());
      }
    }
  }
  auto primal(const Slot& s, int lo, int hi) {
    using P = std::conditional_t<M == Mode::Read, const T, T>;
    return std::tuple<ExtDat<P>>{ExtDat<P>(s.dat, prim.data(), lo, hi)};
  }
  auto adjoint(const Slot& s, int lo, int hi) {
    return std::tuple<ExtDat<const T>, ExtDat<T>>{ExtDat<const T>(s.dat, prim.data(), lo, hi),
                                                  adj.empty() ? ExtDat<T>(s.dat, nullptr, lo, hi)
                                                              : ExtDat<T>(s.dat, adj.data(), lo, hi)};
  }
};
template <class T>
struct Bind<ArgGbl<T>> {
  T v;
  void init(const Slot& s, const TaskContext&, int, int) { std::memcpy(&v, s.gbl, sizeof(T)); }
  std::tuple<const T*> primal(const Slot&, int, int) { return {&v}; }
  std::tuple<const T*> adjoint(const Slot&, int, int) { return {&v}; }
};
template <class T>
struct Bind<ArgReduce<T>> {
  T* a = nullptr;
  T* b = nullptr;
  void init(const Slot& s, const TaskContext& t, int, int) {
    a = t.buffers[s.buf].template data<T>();
    if (s.buf2 >= 0) b = t.buffers[s.buf2].template data<T>();
  }
  std::tuple<T*> primal(const Slot&, int, int) { return {a}; }
  std::tuple<const T*, const T*> adjoint(const Slot&, int, int) { return {a, b}; }
};
template <class T>
struct Bind<ArgScalar<T>> {
  T* a = nullptr;
  T* b = nullptr;
  void init(const Slot& s, const TaskContext& t, int, int) {
    a = t.buffers[s.buf].template data<T>();
    if (s.buf2 >= 0) b = t.buffers[s.buf2].template data<T>();
  }
  std::tuple<const T*> primal(const Slot&, int, int) { return {a}; }
  std::tuple<const T*, T*> adjoint(const Slot&, int, int) { return {a, b}; }
};

template <class P, class Q, class... A, std::size_t... I>
void run_task(const TaskContext& t, std::index_sequence<I...>) {
  const auto& ta = t.arg<TaskArgs<P, Q, sizeof...(A)>>();
  std::tuple<Bind<A>...> b;
  (std::get<I>(b).init(ta.slot[I], t, ta.tile_lo, ta.tile_hi), ...);
  ExternalContext ctx{ta.name, ta.block, ta.tile_lo, ta.tile_hi, ta.adjoint_pass, t.cuda_stream};
  RunningGuard guard(ta.name);
  if (ta.adjoint_pass) {
    const Q q = ta.adjoint;
    std::apply([&](auto... p) { q(ctx, p...); },
               std::tuple_cat(std::get<I>(b).adjoint(ta.slot[I], ta.tile_lo, ta.tile_hi)...));
  } else {
    const P p0 = ta.primal;
    std::apply([&](auto... p) { p0(ctx, p...); },
               std::tuple_cat(std::get<I>(b).primal(ta.slot[I], ta.tile_lo, ta.tile_hi)...));
  }
}
template <class P, class Q, class... A>
void ext_task_cpu(const TaskContext& t) {
  run_task<P, Q, A...>(t, std::index_sequence_for<A...>{});
}
template <class F>
constexpr bool declares_cuda() {
  if constexpr (requires { F::cuda; }) return static_cast<bool>(F::cuda);
  else return false;
}
template <class P, class Q, class... A>
const Codelet& ext_codelet(const std::string& name) {
  constexpr bool cuda = declares_cuda<P>() && declares_cuda<Q>();
  static const Codelet cl("external_" + name, &ext_task_cpu<P, Q, A...>, cuda ? &ext_task_cpu<P, Q, A...> : nullptr);
  return cl;
}

template <class T, Mode M>
LoopArgDesc describe(const ArgDat<T, M>& a, bool recompute) {
  LoopArgDesc d;
  d.kind = LoopArgDesc::Kind::Dat;
  d.dat = a.dat;
  d.mode = M;
  // The adjoint reads READ inputs; written inputs only to recompute (RW/INC).
  d.adjoint_reads = M == Mode::Read || (recompute && M != Mode::Write);
  return d;
}
template <class T>
LoopArgDesc describe(const ArgGbl<T>&, bool) {
  return {};
}
template <class T>
LoopArgDesc describe(const ArgReduce<T>& a, bool) {
  LoopArgDesc d;
  d.kind = LoopArgDesc::Kind::Reduce;
  d.red = a.red;
  return d;
}
template <class T>
LoopArgDesc describe(const ArgScalar<T>& a, bool) {
  LoopArgDesc d;
  d.kind = LoopArgDesc::Kind::Scalar;
  d.scalar = a.scalar;
  return d;
}
template <class A>
const mesh::Block* block_of(const A& a) {
  if constexpr (requires { a.dat; }) return &a.dat->block();
  else if constexpr (requires { a.red; }) return &a.red->block();
  else if constexpr (requires { a.scalar; }) return &a.scalar->block();
  else return nullptr;
}

// Written dats' outputs as the adjoint sees them: per argument, one buffer per tile.
using OutputBuffers = std::vector<std::vector<std::unique_ptr<Handle>>>;

template <class P, class Q, class... A>
class Call {
 public:
  Call(const std::string& name, P p, Q q, std::tuple<A...> args, ExternalOptions opts, bool recompute)
      : name_(name), p_(p), q_(q), args_(std::move(args)), opts_(opts), recompute_(recompute) {
    std::apply([&](const auto&... a) {
      ((desc_.push_back(describe(a, recompute_))), ...);
      const mesh::Block* bs[] = {block_of(a)...};
      for (auto* b : bs)
        if (!block_ && b) block_ = const_cast<mesh::Block*>(b);
    }, args_);
    require(block_ != nullptr, "execute_external '" + name_ + "': no dat, reduction or scalar argument");
    if (!recompute_)
      for (std::size_t i = 0; i < desc_.size(); ++i)
        if (desc_[i].kind == LoopArgDesc::Kind::Dat && desc_[i].mode == Mode::Read &&
            i < 32 && !((opts_.adjoint_reads >> i) & 1u))
          desc_[i].adjoint_reads = false;
    check_args(name_, desc_, *block_);
  }
  mesh::Block& block() const { return *block_; }
  const std::vector<LoopArgDesc>& desc() const { return desc_; }

  // Submits the primal; `outs` (non-null): the written dats' tiles are replaced by these buffers.
  void submit_primal(OutputBuffers* outs) {
    if (opts_.per_tile)
      for (auto& d : desc_)
        if (d.kind == LoopArgDesc::Kind::Dat && d.mode != Mode::Write) d.dat->exchange_halos();
    for_tasks([&](int lo, int hi) { submit(false, lo, hi, outs, nullptr); });
    if (!outs)
      for (auto& d : desc_)
        if (d.writes()) d.dat->mark_written();
  }
  void submit_adjoint(OutputBuffers& outs, mesh::RecordedLoop& node) {
    for (std::size_t i = 0; i < desc_.size(); ++i)
      if (desc_[i].kind == LoopArgDesc::Kind::Reduce)
        desc_[i].red->submit_adjoint_prep(*node.red_pre[i], *node.red_post[i], *node.red_eff[i], name_);
    if (opts_.per_tile)
      for (auto& d : desc_)
        if (d.kind == LoopArgDesc::Kind::Dat && d.mode == Mode::Read) d.dat->exchange_halos();
    for_tasks([&](int lo, int hi) { submit(true, lo, hi, &outs, &node); });
  }
  // One buffer per tile of every written dat (contents: copies of the tiles when `copy`).
  OutputBuffers make_outputs(bool copy) {
    OutputBuffers outs(desc_.size());
    Executor& ex = block_->executor();
    for (std::size_t i = 0; i < desc_.size(); ++i) {
      if (!desc_[i].writes()) continue;
      mesh::DatBase* d = desc_[i].dat;
      for (int t = 0; t < d->tiles(); ++t) {
        const std::size_t bytes = d->tile_rows(t) * static_cast<std::size_t>(d->row_len()) * d->elemsize();
        auto h = std::make_unique<Handle>(
            Handle::managed_vector(bytes, 1, name_ + ":out_" + d->name() + "[" + std::to_string(t) + "]"));
        h->set_owner(d->tile(t).owner());  // StarPU-MPI: kept on the tile's rank
        if (copy) submit_copy(ex, d->tile(t), *h, bytes, name_ + ":save_out_" + d->name());
        outs[i].push_back(std::move(h));
      }
    }
    return outs;
  }
  void copy_outputs(OutputBuffers& outs) {
    Executor& ex = block_->executor();
    for (std::size_t i = 0; i < desc_.size(); ++i)
      for (std::size_t t = 0; t < outs[i].size(); ++t) {
        mesh::DatBase* d = desc_[i].dat;
        submit_copy(ex, d->tile(static_cast<int>(t)), *outs[i][t], outs[i][t]->host_view().nx,
                    name_ + ":save_out_" + d->name());
      }
  }
  bool recompute() const { return recompute_; }
  bool rerun_before_adjoint() const { return recompute_ && !opts_.adjoint_gets_inputs; }

 private:
  template <class F>
  void for_tasks(F f) {
    if (opts_.per_tile)
      for (int t = 0; t < block_->tiles(); ++t) f(t, t + 1);
    else
      f(0, block_->tiles());
  }
  void submit(bool adjoint, int lo, int hi, OutputBuffers* outs, mesh::RecordedLoop* node) {
    TaskArgs<P, Q, sizeof...(A)> ta{p_, q_, block_, {}, lo, hi, adjoint, {}};
    std::strncpy(ta.name, name_.c_str(), sizeof ta.name - 1);
    std::vector<DataAccess> acc;
    std::size_t i = 0;
    std::apply([&](const auto&... a) { ((bind(a, i, adjoint, lo, hi, outs, node, ta.slot[i], acc), ++i), ...); },
               args_);
    if (opts_.serialize) acc.push_back(inout(*opts_.serialize));
    block_->executor().submit(ext_codelet<P, Q, A...>(name_), acc, &ta, sizeof ta,
                              {.name = name_ + (adjoint ? "_adjoint" : "")});
  }
  template <class T, Mode M>
  void bind(const ArgDat<T, M>& a, std::size_t i, bool adjoint, int lo, int hi, OutputBuffers* outs,
            mesh::RecordedLoop*, Slot& s, std::vector<DataAccess>& acc) {
    s.dat = a.dat;
    s.buf = static_cast<int>(acc.size());
    const bool redirect = outs && !outs->empty() && M != Mode::Read;  // the written dat lives in outs
    for (int t = lo; t < hi; ++t) {
      Handle& h = redirect ? *(*outs)[i][t] : a.dat->tile(t);
      if (adjoint) acc.push_back(in(h));
      else acc.push_back(M == Mode::Read ? in(h) : inout(h));
    }
    if (adjoint && a.dat->active()) {
      s.buf2 = static_cast<int>(acc.size());
      for (int t = lo; t < hi; ++t) acc.push_back(inout(a.dat->adjoint_tile(t)));
    }
  }
  template <class T>
  void bind(const ArgGbl<T>& a, std::size_t, bool, int, int, OutputBuffers*, mesh::RecordedLoop*, Slot& s,
            std::vector<DataAccess>&) {
    std::memcpy(s.gbl, &a.value, sizeof(T));
  }
  template <class T>
  void bind(const ArgReduce<T>& a, std::size_t i, bool adjoint, int, int, OutputBuffers*, mesh::RecordedLoop* node,
            Slot& s, std::vector<DataAccess>& acc) {
    s.buf = static_cast<int>(acc.size());
    if (!adjoint) {
      acc.push_back(inout(a.red->value_handle()));
    } else {
      acc.push_back(in(*node->red_post[i]));
      s.buf2 = static_cast<int>(acc.size());
      acc.push_back(in(*node->red_eff[i]));
    }
  }
  template <class T>
  void bind(const ArgScalar<T>& a, std::size_t, bool adjoint, int, int, OutputBuffers*, mesh::RecordedLoop*, Slot& s,
            std::vector<DataAccess>& acc) {
    s.buf = static_cast<int>(acc.size());
    acc.push_back(in(a.scalar->value_handle()));
    if (adjoint) {
      s.buf2 = static_cast<int>(acc.size());
      acc.push_back(inout(a.scalar->adjoint_handle()));
    }
  }

  std::string name_;
  P p_;
  Q q_;
  std::tuple<A...> args_;
  ExternalOptions opts_;
  bool recompute_;
  mesh::Block* block_ = nullptr;
  std::vector<LoopArgDesc> desc_;
};

template <class P, class Q, class... A>
class Node final : public mesh::RecordedLoop {
 public:
  explicit Node(std::unique_ptr<Call<P, Q, A...>> c) : call_(std::move(c)) {}
  Call<P, Q, A...>& call() { return *call_; }
  OutputBuffers& outputs() { return outs_; }
  void submit_adjoint() override {
    if (call_->rerun_before_adjoint()) {
      outs_ = call_->make_outputs(true);  // inputs as the tape restored them
      call_->submit_primal(&outs_);
    }
    call_->submit_adjoint(outs_, *this);  // outs_ empty (adjoint_gets_inputs): the dats themselves
    if (call_->recompute()) outs_.clear();  // unregistered after their tasks
  }
  void submit_primal() override {
    call_->submit_primal(nullptr);
    if (call_->recompute()) return;
    if (outs_.empty()) outs_ = call_->make_outputs(true);
    else call_->copy_outputs(outs_);
  }
  void submit_primal_untaped() override {
    call_->submit_primal(nullptr);
    outs_.clear();
  }
  std::size_t kept_bytes() const override {
    std::size_t n = 0;
    for (auto& v : outs_)
      for (auto& h : v) n += h->host_view().nx;
    return n;
  }
  void release_kept() override { outs_.clear(); }

 private:
  std::unique_ptr<Call<P, Q, A...>> call_;
  OutputBuffers outs_;
};

template <class P, class Q, class... A>
void execute(bool recompute, const std::string& name, const P& primal, const Q& adjoint, ExternalOptions opts,
             const A&... a) {
  static_assert((Traits<A>::supported && ...),
                "execute_external: arguments are arg_dat, arg_gbl, arg_reduce or arg_scalar (no arg_idx)");
  static_assert(std::is_trivially_copyable_v<P> && std::is_trivially_copyable_v<Q>,
                "execute_external: the primal and adjoint callables must be trivially copyable");
  static_assert(Arity<P>::value < 0 || Arity<P>::value == 1 + std::tuple_size_v<PrimalParams<A...>>,
                "execute_external: the primal function has the wrong number of parameters: expected "
                "(const ExternalContext&, one per gbl/reduce/scalar/dat argument)");
  static_assert(Arity<Q>::value < 0 || Arity<Q>::value == 1 + std::tuple_size_v<AdjointParams<A...>>,
                "execute_external: the adjoint function has the wrong number of parameters: expected "
                "(const ExternalContext&, per argument: dat -> 2, gbl -> 1, reduce -> 2, scalar -> 2)");
  static_assert(CallableWith<P, PrimalParams<A...>>::value,
                "execute_external: the primal function is not callable as primal(const ExternalContext&, per "
                "argument: dat -> ExtDat<const T> (READ) or ExtDat<T>; gbl -> const T*; reduce -> T*; "
                "scalar -> const T*)");
  static_assert(CallableWith<Q, AdjointParams<A...>>::value,
                "execute_external: the adjoint function is not callable as adjoint(const ExternalContext&, per "
                "argument: dat -> ExtDat<const T>, ExtDat<T>; gbl -> const T*; reduce -> const T* value, "
                "const T* value_a1s; scalar -> const T* value, T* value_a1s)");
  auto call = std::make_unique<Call<P, Q, A...>>(name, primal, adjoint, std::tuple<A...>(a...), opts, recompute);
  mesh::Recorder* rec = mesh::active_recorder();
  if (!rec || !is_active(call->desc())) {
    call->submit_primal(nullptr);
    return;
  }
  Call<P, Q, A...>& c = *call;
  auto node = std::make_unique<Node<P, Q, A...>>(std::move(call));
  node->name = name;
  node->block = &c.block();
  node->range = c.block().interior();
  node->args = c.desc();
  node->red_pre.resize(node->args.size());
  node->red_post.resize(node->args.size());
  node->red_eff.resize(node->args.size());
  rec->before_loop(*node);
  c.submit_primal(nullptr);
  if (!recompute) node->outputs() = c.make_outputs(true);
  rec->after_loop(std::move(node));
}
}  // namespace detail_ext

template <class P, class Q, class... A>
void execute_external(const std::string& name, const P& primal, const Q& adjoint, const A&... args) {
  detail_ext::execute(false, name, primal, adjoint, ExternalOptions{}, args...);
}
template <class P, class Q, class... A>
void execute_external(const std::string& name, ExternalOptions opts, const P& primal, const Q& adjoint,
                      const A&... args) {
  detail_ext::execute(false, name, primal, adjoint, opts, args...);
}
template <class P, class Q, class... A>
void execute_external_recompute(const std::string& name, const P& primal, const Q& adjoint, const A&... args) {
  detail_ext::execute(true, name, primal, adjoint, ExternalOptions{}, args...);
}
template <class P, class Q, class... A>
void execute_external_recompute(const std::string& name, ExternalOptions opts, const P& primal, const Q& adjoint,
                                const A&... args) {
  detail_ext::execute(true, name, primal, adjoint, opts, args...);
}

}  // namespace stardiff
