// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/mesh/detail/loop_dispatch.hpp — compile-time facts about argument lists, the
// activity-mask dispatch of adjoints, the tile bodies and their codelets.
// Internal to stardiff/mesh/par_loop.hpp, which includes it after its argument types.
#pragma once
#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "stardiff/mesh/detail/loop_state.hpp"
#include "stardiff/runtime/codelet.hpp"
#include "stardiff/runtime/executor.hpp"

namespace stardiff::mesh::detail {

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

template <class F> struct MemFnConst : std::false_type {};
template <class R, class C, class... P> struct MemFnConst<R (C::*)(P...) const> : std::true_type {};
template <class R, class C, class... P> struct MemFnConst<R (C::*)(P...) const noexcept> : std::true_type {};
// False when K has a single, non-const adjoint member function.
template <class K>
constexpr bool adjoint_is_const() {
  if constexpr (has_adjoint<K>()) return MemFnConst<decltype(&K::adjoint)>::value;
  else return true;
}

// True when the adjoint matches the arguments under at least one activity mask.
template <class K, class... A, unsigned... M>
constexpr bool adjoint_ok_any(std::integer_sequence<unsigned, M...>) {
  return (adjoint_ok<K, M, A...>() || ...);
}
template <class K, class... A>
constexpr bool adjoint_ok_some_mask() {
  constexpr std::size_t nd = dat_count<A...>();
  if constexpr (nd > 8) return true;  // rejected by the dat count check
  else return adjoint_ok_any<K, A...>(std::make_integer_sequence<unsigned, (1u << nd)>{});
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
  (std::get<I>(st).prepare(n), ...);
  for (int k = la.lo[2]; k < la.hi[2]; ++k)
    for (int j = la.lo[1]; j < la.hi[1]; ++j) {
      (std::get<I>(st).set_row(la.lo[0], j, k), ...);
      for (int di = 0; di < n; ++di) {
        std::apply([&](auto... p) { kernel.adjoint(p...); },
                   std::tuple_cat(std::get<I>(st).template adjoint<active_bit<I, Mask, A...>()>(di)...));
        (std::get<I>(st).after_adjoint_point(di), ...);
      }
      (std::get<I>(st).end_row_adjoint(), ...);
    }
  (std::get<I>(st).finish_adjoint(la.slot[I], t), ...);
  if ((la.slot[I].poison || ...)) {
    int found = -1;
    ((found < 0 ? (found = std::get<I>(st).poison_found(la.slot[I], t)) : 0), ...);
    if (found >= 0 && found < static_cast<int>(sizeof...(A)))
      t.fail("the adjoint read the primal value of argument " + std::to_string(found) + " (dat '" +
             (la.slot[found].label ? la.slot[found].label : "?") +
             "'), which the kernel's adjoint_reads mask does not declare (the tape may not save it)");
  }
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

}  // namespace stardiff::mesh::detail

#if STARDIFF_LOOP_CUDA
#include "stardiff/mesh/detail/loop_cuda.cuh"  // loop_tile_cuda, loop_tile_adjoint_cuda
#endif

namespace stardiff::mesh::detail {
inline namespace STARDIFF_LOOP_ABI {
// One codelet per (kernel, arguments) and translation-unit kind: CPU only, or CPU and
// CUDA where the loop is submitted from an nvcc translation unit (StarPU picks per task).
template <class K, class... A>
const Codelet& loop_codelet(const std::string& name) {
#if STARDIFF_LOOP_CUDA
  static const Codelet cl("loop_" + name, &loop_tile_cpu<K, A...>, &loop_tile_cuda<K, A...>);
#else
  static const Codelet cl("loop_" + name, &loop_tile_cpu<K, A...>);
#endif
  return cl;
}
template <class K, class... A>
const Codelet& loop_adjoint_codelet(const std::string& name) {
#if STARDIFF_LOOP_CUDA
  static const Codelet cl("loop_" + name + "_adjoint", &loop_tile_adjoint_cpu<K, A...>,
                          &loop_tile_adjoint_cuda<K, A...>);
#else
  static const Codelet cl("loop_" + name + "_adjoint", &loop_tile_adjoint_cpu<K, A...>);
#endif
  return cl;
}
}  // namespace STARDIFF_LOOP_ABI

}  // namespace stardiff::mesh::detail
