// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/mesh/scalars.hpp — global reductions and active scalars of structured loops.
//
// Contract:
//  * Reduction<T> (OPS ops_reduction): a value handle folded by loops that take it via
//    arg_reduce. Each tile task folds every outer row of its part of the range into its
//    own partial (from the neutral element: 0, +max, lowest; in 1-D every point is a
//    row); a combine task then folds the row partials into the value in row order, so
//    the result depends neither on the scheduler nor on the number of tiles.
//    value() waits and returns it; reset() sets the neutral element.
//    adjoint()/set_adjoint(): its adjoint.
//  * MIN/MAX also keep the arg-extremum: arg() is the loop index (i, j, k) of the point
//    that gave value(), the first in fixed order (loops in order; within a loop k, j, i
//    ascending) on ties; {kNoArg x3} if none did (set(), reset()). In a recorded loop's
//    adjoint, value_a1s is the seed at that point only (where this loop gave the final
//    value) and 0 at every other point, so adjoints may add it without comparing.
//  * Scalar<T>: an active scalar read by loops (arg_scalar). In adjoint loops each outer
//    row's contribution to the scalar's adjoint goes to a row partial; the partials are
//    added to the adjoint in row order (independent of the tiling). adjoint() throws
//    Error while a tape holding the scalar has recorded but not reversed.
//  * All handles are vectors (so checkpoint copies use the tile codelets).
//  * StarPU-MPI: tile t's partials are owned by the block's owner(t) (at construction);
//    values and adjoints by rank 0, where the combine tasks fold every rank's partials in
//    row order: results are bitwise those of one rank. value() / adjoint() are collective.
#pragma once
#include <array>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "stardiff/mesh/block.hpp"
#include "stardiff/mesh/recorder.hpp"
#include "stardiff/runtime/executor.hpp"
#include "stardiff/runtime/handle.hpp"

namespace stardiff::mesh {

enum class ReduceOp : int { SUM = 0, MIN = 1, MAX = 2 };

inline constexpr int kNoArg = std::numeric_limits<int>::min();
// A MIN/MAX value with the loop index of the point that gave it (value first).
template <class T>
struct ArgRec {
  T value;
  int idx[3];
};

template <class T>
constexpr T neutral(ReduceOp op) {
  return op == ReduceOp::SUM ? T(0)
         : op == ReduceOp::MIN ? std::numeric_limits<T>::max()
                               : std::numeric_limits<T>::lowest();
}
template <class T>
constexpr T fold(ReduceOp op, T a, T b) {
  return op == ReduceOp::SUM ? a + b : op == ReduceOp::MIN ? (b < a ? b : a) : (b > a ? b : a);
}

namespace detail {
struct CombineArgs {
  int op;
  int n;
};
// Arguments {op, n, rows_1, ..., rows_n}: buffer 0 (RW) = fold(buffer 0, the first
// rows_i entries of buffer i for i = 1..n) in order.
template <class T>
void combine_cpu(const TaskContext& t) {
  const int* a = static_cast<const int*>(t.args);
  if (t.args_size < 2 * sizeof(int) || t.args_size != (2 + static_cast<std::size_t>(a[1])) * sizeof(int))
    throw Error(std::string("task '") + t.task_name + "': argument block size mismatch");
  const ReduceOp op = static_cast<ReduceOp>(a[0]);
  T acc = *t.buffers[0].data<T>();
  for (int i = 1; i <= a[1]; ++i) {
    const T* p = t.buffers[i].data<T>();
    for (int r = 0; r < a[1 + i]; ++r) acc = fold(op, acc, p[r]);
  }
  *t.buffers[0].data<T>() = acc;
}

// Adjoint of a fold into a value with initial value pre (buffer 0) and final post (1):
// buffer 2 (RW) the value's adjoint, buffer 3 (W) the adjoint the loop's tiles read.
// SUM: eff = adj (adj unchanged). MIN/MAX: if the final value is the initial one, the
// loop gets 0 and adj stays with the initial value; otherwise eff = adj and adj = 0.
template <class T>
void reduce_adjoint_prep_cpu(const TaskContext& t) {
  const auto& a = t.arg<CombineArgs>();
  T pre = *t.buffers[0].data<T>(), post = *t.buffers[1].data<T>();
  T& adj = *t.buffers[2].data<T>();
  T& eff = *t.buffers[3].data<T>();
  if (static_cast<ReduceOp>(a.op) == ReduceOp::SUM) {
    eff = adj;
  } else if (pre == post) {
    eff = T(0);
  } else {
    eff = adj;
    adj = T(0);
  }
}
// MIN/MAX: arguments {op, n, has_eff, rows_1, ..., rows_n}: buffer 0 (RW, ArgRec) folded
// with the first rows_i records of buffer i, in order (a record replaces the value only
// when strictly better: ties keep the earlier point); buffer n+1 (RW, has_eff) gets the
// result's index (the recorded loop's adjoint reads it).
template <class T>
void combine_arg_cpu(const TaskContext& t) {
  const int* a = static_cast<const int*>(t.args);
  if (t.args_size < 3 * sizeof(int) || t.args_size != (3 + static_cast<std::size_t>(a[1])) * sizeof(int))
    throw Error(std::string("task '") + t.task_name + "': argument block size mismatch");
  const bool is_min = static_cast<ReduceOp>(a[0]) == ReduceOp::MIN;
  ArgRec<T> acc = *t.buffers[0].data<ArgRec<T>>();
  for (int i = 1; i <= a[1]; ++i) {
    const ArgRec<T>* p = t.buffers[i].data<ArgRec<T>>();
    for (int r = 0; r < a[2 + i]; ++r)
      if (is_min ? p[r].value < acc.value : p[r].value > acc.value) acc = p[r];
  }
  *t.buffers[0].data<ArgRec<T>>() = acc;
  if (a[2] != 0) std::memcpy(t.buffers[a[1] + 1].data<ArgRec<T>>()->idx, acc.idx, sizeof acc.idx);
}
// MIN/MAX adjoint prep on records (see reduce_adjoint_prep_cpu); buffer 3 is RW: it
// keeps the arg-extremum index the combine wrote.
template <class T>
void reduce_adjoint_prep_arg_cpu(const TaskContext& t) {
  const T pre = t.buffers[0].data<ArgRec<T>>()->value, post = t.buffers[1].data<ArgRec<T>>()->value;
  T& adj = *t.buffers[2].data<T>();
  T& eff = t.buffers[3].data<ArgRec<T>>()->value;
  if (pre == post) {
    eff = T(0);
  } else {
    eff = adj;
    adj = T(0);
  }
}
template <class T>
const Codelet& cl_combine_arg() {
  static const Codelet cl("reduce_combine_arg", &combine_arg_cpu<T>);
  return cl;
}
template <class T>
const Codelet& cl_reduce_adjoint_prep_arg() {
  static const Codelet cl("reduce_adjoint_prep_arg", &reduce_adjoint_prep_arg_cpu<T>);
  return cl;
}
template <class T>
const Codelet& cl_combine() {
  static const Codelet cl("reduce_combine", &combine_cpu<T>);
  return cl;
}
template <class T>
const Codelet& cl_reduce_adjoint_prep() {
  static const Codelet cl("reduce_adjoint_prep", &reduce_adjoint_prep_cpu<T>);
  return cl;
}
inline void host_set(Handle& h, const void* v, std::size_t n) {
  auto g = h.acquire(Access::RW);
  std::memcpy(h.host_view().ptr, v, n);
}
// Submits `value` (RW) = fold of value and the first rows[i] entries of parts[tiles[i]], in order.
template <class T>
void submit_row_fold(Executor& ex, ReduceOp op, Handle& value, std::vector<VectorHandle<T>>& parts,
                     const std::vector<int>& tiles, const std::vector<int>& rows, const std::string& name) {
  std::vector<DataAccess> acc{inout(value)};
  std::vector<int> a{static_cast<int>(op), static_cast<int>(tiles.size())};
  for (std::size_t i = 0; i < tiles.size(); ++i) {
    acc.push_back(in(parts[tiles[i]]));
    a.push_back(rows[i]);
  }
  ex.submit(cl_combine<T>(), acc, a.data(), a.size() * sizeof(int), {.name = name});
}
// Submits the MIN/MAX fold of record partials (and the index into *eff when given).
template <class T>
void submit_arg_fold(Executor& ex, ReduceOp op, Handle& value, std::vector<VectorHandle<ArgRec<T>>>& parts,
                     const std::vector<int>& tiles, const std::vector<int>& rows, Handle* eff,
                     const std::string& name) {
  std::vector<DataAccess> acc{inout(value)};
  std::vector<int> a{static_cast<int>(op), static_cast<int>(tiles.size()), eff ? 1 : 0};
  for (std::size_t i = 0; i < tiles.size(); ++i) {
    acc.push_back(in(parts[tiles[i]]));
    a.push_back(rows[i]);
  }
  if (eff) acc.push_back(inout(*eff));
  ex.submit(cl_combine_arg<T>(), acc, a.data(), a.size() * sizeof(int), {.name = name});
}
// Partial t with room for `rows` entries (a larger one replaces it: waits for its tasks).
template <class U>
Handle& sized_partial(std::vector<VectorHandle<U>>& parts, int t, std::size_t rows, const std::string& name,
                      U init) {
  VectorHandle<U>& h = parts.at(t);
  if (h.size() < rows) {
    const int owner = h.owner();
    h = VectorHandle<U>(rows, name + "[" + std::to_string(t) + "]", init);
    h.set_owner(owner);
  }
  return h;
}
}  // namespace detail

class ReductionBase : public Tracked {
 public:
  virtual Handle& value_handle() = 0;
  virtual Handle& adjoint_handle() = 0;
  // Tile t's row partials, with room for `rows` rows.
  virtual Handle& partial(int t, std::size_t rows) = 0;
  virtual std::size_t elemsize() const = 0;  // bytes of the value (the leading bytes of a record)
  // Bytes of the value handle's record (MIN/MAX: value and arg-extremum; what checkpoints copy).
  virtual std::size_t record_bytes() const { return elemsize(); }
  virtual const std::string& name() const = 0;
  virtual ReduceOp op() const = 0;
  virtual Block& block() const = 0;
  virtual void zero_adjoint() = 0;
  // Submits: value = fold(value, the first rows[i] row partials of tiles[i], in order);
  // MIN/MAX: eff (a make_like handle of the recorded loop, or null) gets the arg-extremum.
  virtual void submit_combine(const std::vector<int>& tiles, const std::vector<int>& rows,
                              const std::string& loop, Handle* eff = nullptr) = 0;
  // Allocates a handle like the value (for checkpoints; record_bytes() bytes, the value first).
  virtual std::shared_ptr<Handle> make_like(const std::string& name) const = 0;
  virtual void submit_adjoint_prep(Handle& pre, Handle& post, Handle& eff, const std::string& loop) = 0;
};

template <class T>
class Reduction final : public ReductionBase {
 public:
  Reduction(Block& block, ReduceOp op, std::string name) : block_(&block), op_(op), name_(std::move(name)) {
    adj_ = VectorHandle<T>(1, name_ + "_a1s", T(0));
    for (int t = 0; t < block.tiles(); ++t) {
      const std::size_t rows = block.bound(t + 1) - block.bound(t) + 2;
      const std::string pn = name_ + "_part[" + std::to_string(t) + "]";
      if (tracks_arg()) arg_partial_.emplace_back(rows, pn, none(neutral<T>(op))).set_owner(block.owner(t));
      else partial_.emplace_back(rows, pn, neutral<T>(op)).set_owner(block.owner(t));
    }
    if (tracks_arg()) rec_ = VectorHandle<ArgRec<T>>(1, name_, none(neutral<T>(op)));
    else value_ = VectorHandle<T>(1, name_, neutral<T>(op));
  }
  ~Reduction() override { notify_destroyed("reduction '" + name_ + "'"); }
  T value() {
    if (tracks_arg()) {
      auto g = rec_.acquire(Access::R);
      return rec_.data()[0].value;
    }
    auto g = value_.acquire(Access::R);
    return value_.data()[0];
  }
  // MIN/MAX: loop index of the point that gave value() (see the contract).
  std::array<int, 3> arg() {
    require(tracks_arg(), "stardiff::mesh::Reduction '" + name_ + "': arg() needs a MIN or MAX reduction");
    auto g = rec_.acquire(Access::R);
    const ArgRec<T>& r = rec_.data()[0];
    return {r.idx[0], r.idx[1], r.idx[2]};
  }
  void reset() { set(neutral<T>(op_)); }
  void set(T v) {
    if (tracks_arg()) {
      const ArgRec<T> r = none(v);
      detail::host_set(rec_, &r, sizeof r);
    } else {
      detail::host_set(value_, &v, sizeof(T));
    }
  }
  T adjoint() {
    auto g = adj_.acquire(Access::R);
    return adj_.data()[0];
  }
  void set_adjoint(T v) {
    adj_dirty_ = true;
    detail::host_set(adj_, &v, sizeof(T));
  }

  Handle& value_handle() override {
    if (tracks_arg()) return rec_;
    return value_;
  }
  Handle& adjoint_handle() override {
    adj_dirty_ = true;
    return adj_;
  }
  Handle& partial(int t, std::size_t rows) override {
    if (tracks_arg()) return detail::sized_partial(arg_partial_, t, rows, name_ + "_part", none(neutral<T>(op_)));
    return detail::sized_partial(partial_, t, rows, name_ + "_part", neutral<T>(op_));
  }
  std::size_t elemsize() const override { return sizeof(T); }
  std::size_t record_bytes() const override { return tracks_arg() ? sizeof(ArgRec<T>) : sizeof(T); }
  const std::string& name() const override { return name_; }
  ReduceOp op() const override { return op_; }
  Block& block() const override { return *block_; }
  void zero_adjoint() override {
    set_adjoint(T(0));
    adj_dirty_ = false;
  }
  void submit_combine(const std::vector<int>& tiles, const std::vector<int>& rows, const std::string& loop,
                      Handle* eff = nullptr) override {
    if (tracks_arg())
      detail::submit_arg_fold<T>(block_->executor(), op_, rec_, arg_partial_, tiles, rows, eff,
                                 loop + ":combine_" + name_);
    else
      detail::submit_row_fold(block_->executor(), op_, value_, partial_, tiles, rows, loop + ":combine_" + name_);
  }
  std::shared_ptr<Handle> make_like(const std::string& name) const override {
    if (tracks_arg()) return std::make_shared<VectorHandle<ArgRec<T>>>(1, name, none(T(0)));
    return std::make_shared<VectorHandle<T>>(1, name, T(0));
  }
  void submit_adjoint_prep(Handle& pre, Handle& post, Handle& eff, const std::string& loop) override {
    adj_dirty_ = true;
    detail::CombineArgs a{static_cast<int>(op_), 0};
    if (tracks_arg())
      block_->executor().submit(detail::cl_reduce_adjoint_prep_arg<T>(), a,
                                {in(pre), in(post), inout(adj_), inout(eff)},
                                {.name = loop + ":adjoint_prep_" + name_});
    else
      block_->executor().submit(detail::cl_reduce_adjoint_prep<T>(), a, {in(pre), in(post), inout(adj_), out(eff)},
                                {.name = loop + ":adjoint_prep_" + name_});
  }

 private:
  bool tracks_arg() const { return op_ != ReduceOp::SUM; }
  static ArgRec<T> none(T v) { return ArgRec<T>{v, {kNoArg, kNoArg, kNoArg}}; }
  Block* block_;
  ReduceOp op_;
  std::string name_;
  VectorHandle<T> value_, adj_;  // value_: SUM only
  VectorHandle<ArgRec<T>> rec_;  // MIN/MAX: value and arg-extremum
  std::vector<VectorHandle<T>> partial_;
  std::vector<VectorHandle<ArgRec<T>>> arg_partial_;
};

class ScalarBase : public Tracked {
 public:
  virtual Handle& value_handle() = 0;
  virtual Handle& adjoint_handle() = 0;
  // Tile t's row partials of the adjoint, with room for `rows` rows.
  virtual Handle& partial(int t, std::size_t rows) = 0;
  virtual const std::string& name() const = 0;
  virtual Block& block() const = 0;
  virtual void zero_adjoint() = 0;
  // Submits: adjoint += the first rows[i] row partials of tiles[i], in order.
  virtual void submit_adjoint_sum(const std::vector<int>& tiles, const std::vector<int>& rows,
                                  const std::string& loop) = 0;
};

template <class T>
class Scalar final : public ScalarBase {
 public:
  Scalar(Block& block, std::string name, T value)
      : block_(&block), name_(std::move(name)), value_(1, name_, value), adj_(1, name_ + "_a1s", T(0)) {
    for (int t = 0; t < block.tiles(); ++t)
      partial_.emplace_back(block.bound(t + 1) - block.bound(t) + 2,
                            name_ + "_a1s_part[" + std::to_string(t) + "]", T(0))
          .set_owner(block.owner(t));
  }
  ~Scalar() override { notify_destroyed("scalar '" + name_ + "'"); }
  T value() {
    auto g = value_.acquire(Access::R);
    return value_.data()[0];
  }
  void set(T v) { detail::host_set(value_, &v, sizeof(T)); }
  T adjoint() {
    require_adjoint_ready("stardiff::mesh::Scalar '" + name_ + "'");
    auto g = adj_.acquire(Access::R);
    return adj_.data()[0];
  }
  void set_adjoint(T v) {
    adj_dirty_ = true;
    detail::host_set(adj_, &v, sizeof(T));
  }

  Handle& value_handle() override { return value_; }
  Handle& adjoint_handle() override {
    adj_dirty_ = true;
    return adj_;
  }
  Handle& partial(int t, std::size_t rows) override {
    return detail::sized_partial(partial_, t, rows, name_ + "_a1s_part", T(0));
  }
  const std::string& name() const override { return name_; }
  Block& block() const override { return *block_; }
  void zero_adjoint() override {
    set_adjoint(T(0));
    adj_dirty_ = false;
  }
  void submit_adjoint_sum(const std::vector<int>& tiles, const std::vector<int>& rows,
                          const std::string& loop) override {
    adj_dirty_ = true;
    detail::submit_row_fold(block_->executor(), ReduceOp::SUM, adj_, partial_, tiles, rows,
                            loop + ":sum_" + name_ + "_a1s");
  }

 private:
  Block* block_;
  std::string name_;
  VectorHandle<T> value_, adj_;
  std::vector<VectorHandle<T>> partial_;
};

}  // namespace stardiff::mesh
