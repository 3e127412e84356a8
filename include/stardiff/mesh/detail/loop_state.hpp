// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/mesh/detail/loop_state.hpp — task arguments of a loop tile and the per-argument
// state that turns tile buffers into the kernel's accessors, row by row.
// Internal to stardiff/mesh/par_loop.hpp, which includes it after its argument types.
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

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
  int dims = 1, row0 = 0, nrows = 0;  // block dimensions; the tile's first outer row, row count
  int arg = 0;                        // argument index
  bool poison = false;                // verify mode: the adjoint reads NaN for this primal
  bool clear = false;                 // adjoint buffer is a partial the task zeroes first
  bool xless = false;                 // a READ dat lacking x in a unit-stride loop: broadcast rows
  int st_lo[3] = {0, 0, 0}, st_hi[3] = {0, 0, 0};  // its stencil's extents
  const char* label = nullptr;        // verify mode: the dat's name
  alignas(16) unsigned char gbl[64] = {};
};

// Adjoint buffer of dat argument (mode) in tile t's adjoint task; clear: a per-tile
// partial of an untiled dat, zeroed by the task, summed by sum_adjoint_partials.
DataAccess adjoint_access(DatBase& dat, Mode mode, int t, bool& clear);
// After a loop's adjoint tasks (tiles `ran`): adds untiled READ dats' partials in tile order.
void sum_adjoint_partials(const std::vector<LoopArgDesc>& args, const std::vector<int>& ran,
                          const std::string& loop);

// Verify mode: quiet NaNs whose payload names argument `arg` (kept through arithmetic).
template <class T>
T poison_value(int arg) {
  static_assert(std::is_floating_point_v<T>);
  if constexpr (sizeof(T) == 8) return std::bit_cast<T>(0x7FF85D1F00000000ULL | static_cast<unsigned>(arg & 0xFF));
  else return std::bit_cast<T>(static_cast<std::uint32_t>(0x7FC5D100u | static_cast<unsigned>(arg & 0xFF)));
}
// The argument named by a poison value, or -1.
template <class T>
int poison_arg(T v) {
  if constexpr (!std::is_floating_point_v<T> || (sizeof(T) != 8 && sizeof(T) != 4)) {
    return -1;
  } else if constexpr (sizeof(T) == 8) {
    const auto b = std::bit_cast<std::uint64_t>(v);
    return (b & 0x7FFFFFFFFFFFFF00ULL) == 0x7FF85D1F00000000ULL ? static_cast<int>(b & 0xFF) : -1;
  } else {
    const auto b = std::bit_cast<std::uint32_t>(v);
    return (b & 0x7FFFFF00u) == 0x7FC5D100u ? static_cast<int>(b & 0xFF) : -1;
  }
}
template <class T>
int poison_in(const T* p, std::size_t n) {
  if constexpr (std::is_floating_point_v<T>)
    for (std::size_t i = 0; i < n; ++i)
      if (std::isnan(p[i])) {
        const int a = poison_arg(p[i]);
        if (a >= 0) return a;
      }
  return -1;
}

// One partial per outer row (per point in 1-D), folded from the neutral element; the
// combine task folds them in row order, so the result does not depend on the tiling.
template <class T>
struct RowPartials {
  T acc{};
  T* part = nullptr;
  T neutral_value{};
  int dims = 1, row0 = 0, row = -1, i0 = 0;
  void init(T* p, int nrows, const Slot& s, T neutral_v) {
    part = p;
    dims = s.dims;
    row0 = s.row0;
    neutral_value = neutral_v;
    acc = neutral_v;
    if (dims == 1)
      for (int r = 0; r < nrows; ++r) part[r] = neutral_v;
  }
  void set_row(int i, int j, int k) {
    if (dims == 1) {
      i0 = i - row0;
      return;
    }
    const int r = (dims == 2 ? j : k) - row0;
    if (r != row) {
      if (row >= 0) part[row] = acc;
      acc = neutral_value;
      row = r;
    }
  }
  T* at(int di) { return dims == 1 ? part + i0 + di : &acc; }
  void finish() {
    if (dims != 1 && row >= 0) part[row] = acc;
  }
};

// MIN/MAX: row partials that also keep the loop index of the point that gave each value
// (the first point whose kernel call changed the row's accumulator to its final value).
template <class T>
struct ArgRowPartials {
  ArgRec<T>* part = nullptr;
  T acc{}, last{}, neutral_value{};
  int win[3] = {kNoArg, kNoArg, kNoArg};
  int dims = 1, row0 = 0, row = -1, i0 = 0, j = 0, k = 0, prev = 0;
  void init(ArgRec<T>* p, int nrows, const Slot& s, T neutral_v) {
    part = p;
    dims = s.dims;
    row0 = s.row0;
    neutral_value = acc = last = neutral_v;
    if (dims == 1)
      for (int r = 0; r < nrows; ++r) part[r] = ArgRec<T>{neutral_v, {row0 + r, 0, 0}};
  }
  void check() {
    if (!(acc == last)) {
      last = acc;
      win[0] = i0 + prev;
      win[1] = j;
      win[2] = k;
    }
  }
  void store() { part[row] = ArgRec<T>{acc, {win[0], win[1], win[2]}}; }
  void set_row(int i, int jj, int kk) {
    if (dims == 1) {
      i0 = i - row0;
      return;
    }
    if (row >= 0) check();
    const int r = (dims == 2 ? jj : kk) - row0;
    if (r != row) {
      if (row >= 0) store();
      acc = last = neutral_value;
      win[0] = win[1] = win[2] = kNoArg;
      row = r;
    }
    i0 = i;
    j = jj;
    k = kk;
    prev = 0;
  }
  T* at(int di) {
    if (dims == 1) return &part[i0 + di].value;
    check();
    prev = di;
    return &acc;
  }
  void finish() {
    if (dims != 1 && row >= 0) {
      check();
      store();
    }
  }
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
  // Unit loops, READ dats lacking x (Slot::xless): the elements a row's points read are
  // broadcast along x into `bx` (stencil rows of n + 2 hx points), so the kernel sees x
  // stride 1; their adjoint increments go to `bxa` (zeroed per row) and are added to the
  // dat at the end of the row in x order (the order of the points when the kernel
  // increments an element once per point, so the sums are those of the strided loop).
  static constexpr bool kBcast = Unit && M == Mode::Read;
  std::unique_ptr<T[]> buf;
  std::unique_ptr<T[]> poisoned;  // verify mode: what an undeclared primal read sees
  std::unique_ptr<T[]> bx, bxa;
  T* out = nullptr;
  T* base = nullptr;
  T* abase = nullptr;
  T* row = nullptr;
  T* arow = nullptr;
  T* src = nullptr;   // xless: the dat's element read at offset 0 (and its adjoint)
  T* asrc = nullptr;
  long long origin = 0, sx_ = 1, sy = 0, sz = 0;
  long long ay = 0, az = 0;  // strides the accessors see (the buffer's when xless)
  int dim = 1;
  bool xless = false;
  int lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0}, bl = 0, bn = 0;
  long long sx() const {
    if constexpr (Unit) return 1;
    else return sx_;
  }
  void init(const Slot& s, const TaskContext& t) {
    origin = s.g.origin;
    sx_ = s.g.s[0];
    ay = sy = s.g.s[1];
    az = sz = s.g.s[2];
    dim = s.dim;
    if constexpr (kBcast) {
      xless = s.xless;
      for (int d = 0; d < 3; ++d) {
        lo[d] = s.st_lo[d];
        hi[d] = s.st_hi[d];
      }
    }
    base = t.buffers[s.buf].template data<T>();
    if (s.buf2 >= 0) abase = t.buffers[s.buf2].template data<T>();
    if (s.clear && abase) std::memset(static_cast<void*>(abase), 0, t.buffers[s.buf2].count() * sizeof(T));
    if constexpr (std::is_floating_point_v<T>) {
      if (s.poison) {
        const std::size_t n = t.buffers[s.buf].count();
        poisoned.reset(new T[n]);
        for (std::size_t i = 0; i < n; ++i) poisoned[i] = poison_value<T>(s.arg);
        base = poisoned.get();
      }
    }
  }
  // Verify mode: the argument whose poison reached this argument's adjoint, or -1.
  int poison_found(const Slot& s, const TaskContext& t) const {
    return abase ? poison_in(abase, t.buffers[s.buf2].count()) : -1;
  }
  void set_row(int i0, int j, int k) {
    if constexpr (kBcast) {
      if (xless) {
        bcast_row(j, k);
        return;
      }
    }
    // A dat lacking x has x stride 0 (in a unit loop only READ ones may span x points).
    long long off = origin + (Unit && sx_ == 0 ? 0 : i0 * sx()) + j * sy + k * sz;
    row = base + off;
    if (abase) arow = abase + off;
    if constexpr (kStream) {
      out = row;
      row = buf.get();  // row-local buffer (WRITE args have a zero stencil)
    }
  }
  void bcast_row(int j, int k) {
    const int ny = hi[1] - lo[1] + 1, nz = hi[2] - lo[2] + 1;
    src = base + origin + j * sy + k * sz;
    for (int z = 0; z < nz; ++z)
      for (int y = 0; y < ny; ++y) {
        const T v = src[(lo[1] + y) * sy + (lo[2] + z) * sz];
        T* b = bx.get() + static_cast<long long>(z * ny + y) * bl;
        for (int x = 0; x < bl; ++x) b[x] = v;
      }
    const long long o = static_cast<long long>(-lo[2] * ny - lo[1]) * bl - lo[0];
    row = bx.get() + o;
    ay = bl;
    az = static_cast<long long>(bl) * ny;
    if (abase) {
      asrc = abase + origin + j * sy + k * sz;
      std::memset(static_cast<void*>(bxa.get()), 0, static_cast<std::size_t>(bn) * sizeof(T));
      arow = bxa.get() + o;
    }
  }
  void prepare(int n) {
    if constexpr (kStream) buf.reset(new T[n > 0 ? n : 1]);
    if constexpr (kBcast) {
      if (xless) {
        bl = (n > 0 ? n : 1) + hi[0] - lo[0];
        bn = bl * (hi[1] - lo[1] + 1) * (hi[2] - lo[2] + 1);
        bx.reset(new T[bn]);
        if (abase) bxa.reset(new T[bn]);
      }
    }
  }
  void end_row(int n) {
    if constexpr (kStream) {
      stream_out(out, buf.get(), static_cast<std::size_t>(n));
      row = out;  // the NaN check reads the stored row
    }
  }
  // After an adjoint row: xless READ dats add the row's increments to their elements.
  void end_row_adjoint() {
    if constexpr (kBcast) {
      if (xless && abase) {
        const int ny = hi[1] - lo[1] + 1, nz = hi[2] - lo[2] + 1;
        for (int z = 0; z < nz; ++z)
          for (int y = 0; y < ny; ++y) {
            T& a = asrc[(lo[1] + y) * sy + (lo[2] + z) * sz];
            const T* b = bxa.get() + static_cast<long long>(z * ny + y) * bl;
            T acc = a;
            for (int x = 0; x < bl; ++x) acc += b[x];
            a = acc;
          }
      }
    }
  }
  auto primal(int di) const {
    using P = std::conditional_t<M == Mode::Read, const T, T>;
    return Acc<P>{row + di * sx(), sx(), ay, az};
  }
  template <bool Active>
  auto adjoint(int di) const {
    if constexpr (Active)
      return std::tuple<Acc<const T>, Acc<T>>{Acc<const T>{row + di * sx(), sx(), ay, az},
                                              Acc<T>{arow + di * sx(), sx(), ay, az}};
    else
      return std::tuple<Acc<const T>>{Acc<const T>{row + di * sx(), sx(), ay, az}};
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
  void end_row_adjoint() {}
  void finish_primal(const Slot&, const TaskContext&) {}
  void finish_adjoint(const Slot&, const TaskContext&) {}
  int nan_in_row(int) const { return -1; }
  int poison_found(const Slot&, const TaskContext&) const { return -1; }
};

template <class T, bool Unit, bool Stream>
struct State<ArgReduce<T>, Unit, Stream> {
  void prepare(int) {}
  void end_row(int) {}
  RowPartials<T> rows;
  ArgRowPartials<T> arows;  // MIN/MAX
  const T* post = nullptr;
  const T* eff = nullptr;
  const int* win = nullptr;  // MIN/MAX adjoint: the point that receives eff
  T zero{};
  int i0 = 0, j = 0, k = 0;
  bool primal_task = false, track = false;
  void init(const Slot& s, const TaskContext& t) {
    const auto op = static_cast<ReduceOp>(s.op);
    track = op != ReduceOp::SUM;
    primal_task = s.buf2 < 0;
    if (track) {
      post = &t.buffers[s.buf].template data<ArgRec<T>>()->value;
      if (!primal_task) {
        const ArgRec<T>* e = t.buffers[s.buf2].template data<ArgRec<T>>();
        eff = &e->value;
        if (e->idx[0] != kNoArg) win = e->idx;
      }
      if (primal_task) arows.init(t.buffers[s.buf].template data<ArgRec<T>>(), s.nrows, s, neutral<T>(op));
      return;
    }
    post = t.buffers[s.buf].template data<T>();
    if (s.buf2 >= 0) eff = t.buffers[s.buf2].template data<T>();
    if (primal_task) rows.init(t.buffers[s.buf].template data<T>(), s.nrows, s, neutral<T>(op));
  }
  void set_row(int i, int jj, int kk) {
    if (primal_task) {
      if (track) arows.set_row(i, jj, kk);
      else rows.set_row(i, jj, kk);
    } else {
      i0 = i;
      j = jj;
      k = kk;
    }
  }
  T* primal(int di) { return track ? arows.at(di) : rows.at(di); }
  template <bool>
  std::tuple<const T*, const T*> adjoint(int di) const {
    if (win && (i0 + di != win[0] || j != win[1] || k != win[2])) return {post, &zero};
    return {post, eff};
  }
  void after_adjoint_point(int) const {}
  void end_row_adjoint() {}
  void finish_primal(const Slot&, const TaskContext&) {
    if (track) arows.finish();
    else rows.finish();
  }
  void finish_adjoint(const Slot&, const TaskContext&) {}
  int nan_in_row(int) const { return -1; }
  int poison_found(const Slot&, const TaskContext&) const { return -1; }
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
  void end_row_adjoint() {}
  void finish_primal(const Slot&, const TaskContext&) {}
  void finish_adjoint(const Slot&, const TaskContext&) {}
  int nan_in_row(int) const { return -1; }
  int poison_found(const Slot&, const TaskContext&) const { return -1; }
};

template <class T, bool Unit, bool Stream>
struct State<ArgScalar<T>, Unit, Stream> {
  void prepare(int) {}
  void end_row(int) {}
  T value{};
  RowPartials<T> rows;  // adjoint tasks: the scalar's adjoint, per row
  bool adjoint_task = false;
  void init(const Slot& s, const TaskContext& t) {
    value = *t.buffers[s.buf].template data<T>();
    adjoint_task = s.buf2 >= 0;
    if (adjoint_task) rows.init(t.buffers[s.buf2].template data<T>(), s.nrows, s, T(0));
  }
  void set_row(int i, int j, int k) {
    if (adjoint_task) rows.set_row(i, j, k);
  }
  const T* primal(int) const { return &value; }
  template <bool>
  std::tuple<const T*, T*> adjoint(int di) {
    return {&value, rows.at(di)};
  }
  void after_adjoint_point(int) const {}
  void end_row_adjoint() {}
  void finish_primal(const Slot&, const TaskContext&) {}
  void finish_adjoint(const Slot&, const TaskContext&) { rows.finish(); }
  int nan_in_row(int) const { return -1; }
  int poison_found(const Slot& s, const TaskContext&) const {
    return adjoint_task ? poison_in(rows.part, static_cast<std::size_t>(s.nrows)) : -1;
  }
};

}  // namespace stardiff::mesh::detail
