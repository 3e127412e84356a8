// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/mesh/detail/loop_node.hpp — argument checks and binding (src/mesh/par_loop.cpp),
// the primal submission (submit_loop_tasks), the recorded loop (LoopNode) and par_loop_impl.
// Internal to stardiff/mesh/par_loop.hpp, which includes it after its argument types.
#pragma once
#include <cstring>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "stardiff/mesh/block.hpp"
#include "stardiff/mesh/detail/loop_dispatch.hpp"
#include "stardiff/mesh/recorder.hpp"
#include "stardiff/runtime/executor.hpp"

namespace stardiff::mesh::detail {

// ---- submission helpers (src/mesh/par_loop.cpp) ----------------------------------------
// Validates one dat argument against block and range (throws Error naming loop/arg).
void check_dat_arg(const std::string& loop, int argi, const Block& block, const Range& range,
                   const DatBase& dat, const Stencil& st, Mode mode);
void check_range(const std::string& loop, const Block& block, const Range& range);
// Tile t's part of range (outer dimension clipped to the rows tile t owns); false if empty.
bool tile_range(const Block& block, const Range& range, int t, int lo[3], int hi[3]);
std::string adjoint_signature(const std::vector<LoopArgDesc>& args);
// StarPU-MPI: Error unless every tiled dat of the loop has the same tile owners.
void check_distribution(const std::string& loop, const std::vector<LoopArgDesc>& args);

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
void bind_arg(const ArgDat<T, M>& a, const LoopArgDesc& d, int t, bool adjoint, Slot& s, std::vector<DataAccess>& acc,
          RecordedLoop*, std::size_t) {
  s.g = a.dat->geom(t);
  s.dim = a.dat->dim();
  s.xless = M == Mode::Read && !a.dat->has_axis(0);
  for (int k = 0; k < 3; ++k) {
    s.st_lo[k] = d.st_min[k];
    s.st_hi[k] = d.st_max[k];
  }
  s.poison = adjoint && d.poison && std::is_floating_point_v<T>;
  s.label = a.dat->name().c_str();
  s.buf = static_cast<int>(acc.size());
  if (!adjoint) {
    acc.push_back(M == Mode::Read ? in(a.dat->tile(t)) : inout(a.dat->tile(t)));
  } else {
    acc.push_back(in(a.dat->tile(t)));
    if (a.dat->active()) {
      s.buf2 = static_cast<int>(acc.size());
      acc.push_back(adjoint_access(*a.dat, M, t, s.clear));
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
    acc.push_back(out(a.red->partial(t, static_cast<std::size_t>(s.nrows))));
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
    acc.push_back(out(a.scalar->partial(t, static_cast<std::size_t>(s.nrows))));
  }
}

unsigned activity_mask(const std::vector<LoopArgDesc>& args);
// Sets the row fields of every slot for tile part [lo, hi) (before bind_arg).
template <std::size_t N>
void set_rows(Slot (&slot)[N], std::size_t n, int dims, const int lo[3], const int hi[3]) {
  const int o = dims - 1;
  for (std::size_t i = 0; i < n; ++i) {
    slot[i].arg = static_cast<int>(i);
    slot[i].dims = dims;
    slot[i].row0 = lo[o];
    slot[i].nrows = hi[o] - lo[o];
  }
}
// True when a task's outputs are far larger than caches (streaming stores pay off).
bool stream_worthwhile(const int lo[3], const int hi[3]);
bool loop_is_active(const std::vector<LoopArgDesc>& args);
bool all_unit(const std::vector<LoopArgDesc>& args);
// Exchanges the halos of dats read across tile boundaries (only_adjoint_reads: only
// those whose primal the adjoint reads).
void exchange_for(const std::vector<LoopArgDesc>& args, bool only_adjoint_reads);

inline namespace STARDIFF_LOOP_ABI {
// Submits a loop's primal: halo exchanges, one task per tile, reduction combines; marks
// written dats (par_loop and LoopNode::submit_primal share it).
template <class K, class... A>
void submit_loop_tasks(const std::string& name, Block& block, const Range& range, const K& kernel,
                       const std::vector<LoopArgDesc>& desc, RecordedLoop* node, const A&... a) {
  exchange_for(desc, false);
  Executor& ex = block.executor();
  const Codelet& cl = loop_codelet<K, A...>(name);
  const bool unit = all_unit(desc), nan = nan_check();
  std::vector<int> ran, rows;
  for (int t = 0; t < block.tiles(); ++t) {
    LoopArgs<K, sizeof...(A)> la{kernel, {}, {}, block.dims(), unit, nan, false, {}};
    if (!tile_range(block, range, t, la.lo, la.hi)) continue;
    set_rows(la.slot, sizeof...(A), block.dims(), la.lo, la.hi);
    la.stream = unit && stream_worthwhile(la.lo, la.hi);
    std::vector<DataAccess> acc;
    {
      std::size_t i = 0;
      ((detail::bind_arg(a, desc[i], t, false, la.slot[i], acc, nullptr, i), ++i), ...);
    }
    ex.submit(cl, acc, &la, sizeof la, {.name = name});
    ran.push_back(t);
    rows.push_back(la.hi[block.outer()] - la.lo[block.outer()]);
  }
  for (std::size_t i = 0; i < desc.size(); ++i) {
    auto& d = desc[i];
    if (d.kind == LoopArgDesc::Kind::Reduce)
      d.red->submit_combine(ran, rows, name, node ? node->red_eff[i].get() : nullptr);
    if (d.writes()) d.dat->mark_written();
  }
}

template <class K, class... A>
class LoopNode final : public RecordedLoop {
 public:
  LoopNode(const K& k, std::tuple<A...> a) : kernel_(k), args_(std::move(a)) {}
  bool exact_extents() const override { return true; }
  void submit_primal() override {
    std::apply([&](const auto&... a) { submit_loop_tasks(name, *block, range, kernel_, args, this, a...); }, args_);
  }
  void submit_adjoint() override {
    for (std::size_t i = 0; i < args.size(); ++i)
      if (args[i].kind == LoopArgDesc::Kind::Reduce)
        args[i].red->submit_adjoint_prep(*red_pre[i], *red_post[i], *red_eff[i], name);
    exchange_for(args, true);
    const unsigned mask = activity_mask(args);
    Executor& ex = block->executor();
    const Codelet& cl = loop_adjoint_codelet<K, A...>(name);
    std::vector<int> ran, rows;
    for (int t = 0; t < block->tiles(); ++t) {
      AdjArgs<K, sizeof...(A)> f{{kernel_, {}, {}, block->dims(), all_unit(args), false, false, {}}, mask};
      if (!tile_range(*block, range, t, f.la.lo, f.la.hi)) continue;
      set_rows(f.la.slot, sizeof...(A), block->dims(), f.la.lo, f.la.hi);
      std::vector<DataAccess> acc;
      std::apply([&](const auto&... a) {
        std::size_t i = 0;
        ((detail::bind_arg(a, args[i], t, true, f.la.slot[i], acc, this, i), ++i), ...);
      }, args_);
      ex.submit(cl, acc, &f, sizeof f, {.name = name + "_adjoint"});
      ran.push_back(t);
      rows.push_back(f.la.hi[block->outer()] - f.la.lo[block->outer()]);
    }
    for (auto& d : args)
      if (d.kind == LoopArgDesc::Kind::Scalar) d.scalar->submit_adjoint_sum(ran, rows, name);
    sum_adjoint_partials(args, ran, name);
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
  static_assert(std::is_invocable_v<const K&, decltype(std::declval<State<A, false>&>().primal(0))...> ||
                    !std::is_invocable_v<K&, decltype(std::declval<State<A, false>&>().primal(0))...>,
                "par_loop: the kernel's operator() must be const (void operator()(...) const)");
  static_assert(adjoint_is_const<K>(), "par_loop: the kernel's adjoint must be const (void adjoint(...) const)");
  static_assert(!has_adjoint<K>() || adjoint_ok_some_mask<K, A...>(),
                "par_loop: the kernel's adjoint does not match its arguments for any activity of the dats: "
                "expected adjoint(per argument in order: dat -> Acc<const T> primal[, Acc<T> dat_a1s if active]; "
                "gbl -> const T*; reduce -> const T* value, const T* value_a1s; idx -> const int*; "
                "scalar -> const T*, T* scalar_a1s)");
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
    check_distribution(name, desc);
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
  submit_loop_tasks(name, block, range, kernel, desc, node.get(), a...);
  if (node) rec->after_loop(std::move(node));
}

}  // namespace STARDIFF_LOOP_ABI
}  // namespace stardiff::mesh::detail
