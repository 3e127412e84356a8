// stardiff/mesh/detail/loop_state.hpp — task arguments of a loop tile and the per-argument
// state that turns tile buffers into the kernel's accessors, row by row.
// Internal to stardiff/mesh/par_loop.hpp, which includes it after its argument types.
#pragma once
#include <cmath>
#include <cstring>
#include <memory>
#include <tuple>
#include <type_traits>

#include "stardiff/mesh/dat.hpp"
#include "stardiff/mesh/detail/stream_store.hpp"
#include "stardiff/mesh/scalars.hpp"
#include "stardiff/runtime/executor.hpp"

namespace stardiff::mesh::detail {

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

}  // namespace stardiff::mesh::detail
