// stardiff/mesh/scalars.hpp — global reductions and active scalars of structured loops.
//
// Contract:
//  * Reduction<T> (OPS ops_reduction): a value handle folded by loops that take it via
//    arg_reduce. Each tile task folds into its own partial (initialised to the neutral
//    element: 0, +max, lowest); a combine task then folds the partials into the value in
//    tile order, so results never depend on the scheduler. value() waits and returns it;
//    reset() sets the neutral element. adjoint()/set_adjoint(): its adjoint.
//  * Scalar<T>: an active scalar read by loops (arg_scalar). In adjoint loops each tile
//    accumulates its contribution to the scalar's adjoint into a per-tile partial; the
//    partials are added to the adjoint in tile order.
//  * All handles are vectors of length 1 (so checkpoint copies use the tile codelets).
#pragma once
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "stardiff/mesh/block.hpp"
#include "stardiff/runtime/executor.hpp"
#include "stardiff/runtime/handle.hpp"

namespace stardiff::mesh {

enum class ReduceOp : int { SUM = 0, MIN = 1, MAX = 2 };

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
// buffer 0 (RW) = fold(buffer 0, buffer 1, ..., buffer n) in order.
template <class T>
void combine_cpu(const TaskContext& t) {
  const auto& a = t.arg<CombineArgs>();
  T acc = *t.buffers[0].data<T>();
  for (int i = 1; i <= a.n; ++i) acc = fold(static_cast<ReduceOp>(a.op), acc, *t.buffers[i].data<T>());
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
}  // namespace detail

class ReductionBase {
 public:
  virtual ~ReductionBase() = default;
  virtual Handle& value_handle() = 0;
  virtual Handle& adjoint_handle() = 0;
  virtual Handle& partial(int t) = 0;
  virtual std::size_t elemsize() const = 0;
  virtual const std::string& name() const = 0;
  virtual ReduceOp op() const = 0;
  virtual Block& block() const = 0;
  virtual void zero_adjoint() = 0;
  // Submits: value = fold(value, partial[t] for t in tiles) (tile order).
  virtual void submit_combine(const std::vector<int>& tiles, const std::string& loop) = 0;
  // Allocates a handle like the value (for checkpoints).
  virtual std::shared_ptr<Handle> make_like(const std::string& name) const = 0;
  virtual void submit_adjoint_prep(Handle& pre, Handle& post, Handle& eff, const std::string& loop) = 0;
};

template <class T>
class Reduction final : public ReductionBase {
 public:
  Reduction(Block& block, ReduceOp op, std::string name)
      : block_(&block), op_(op), name_(std::move(name)), value_(1, name_, neutral<T>(op)),
        adj_(1, name_ + "_a1s", T(0)) {
    for (int t = 0; t < block.tiles(); ++t)
      partial_.emplace_back(1, name_ + "_part[" + std::to_string(t) + "]", neutral<T>(op));
  }
  T value() {
    auto g = value_.acquire(Access::R);
    return value_.data()[0];
  }
  void reset() { set(neutral<T>(op_)); }
  void set(T v) { detail::host_set(value_, &v, sizeof(T)); }
  T adjoint() {
    auto g = adj_.acquire(Access::R);
    return adj_.data()[0];
  }
  void set_adjoint(T v) { detail::host_set(adj_, &v, sizeof(T)); }

  Handle& value_handle() override { return value_; }
  Handle& adjoint_handle() override { return adj_; }
  Handle& partial(int t) override { return partial_.at(t); }
  std::size_t elemsize() const override { return sizeof(T); }
  const std::string& name() const override { return name_; }
  ReduceOp op() const override { return op_; }
  Block& block() const override { return *block_; }
  void zero_adjoint() override { set_adjoint(T(0)); }
  void submit_combine(const std::vector<int>& tiles, const std::string& loop) override {
    std::vector<DataAccess> acc{inout(value_)};
    for (int t : tiles) acc.push_back(in(partial_[t]));
    detail::CombineArgs a{static_cast<int>(op_), static_cast<int>(tiles.size())};
    block_->executor().submit(detail::cl_combine<T>(), acc, &a, sizeof a, {.name = loop + ":combine_" + name_});
  }
  std::shared_ptr<Handle> make_like(const std::string& name) const override {
    return std::make_shared<VectorHandle<T>>(1, name, T(0));
  }
  void submit_adjoint_prep(Handle& pre, Handle& post, Handle& eff, const std::string& loop) override {
    detail::CombineArgs a{static_cast<int>(op_), 0};
    block_->executor().submit(detail::cl_reduce_adjoint_prep<T>(), a, {in(pre), in(post), inout(adj_), out(eff)},
                              {.name = loop + ":adjoint_prep_" + name_});
  }

 private:
  Block* block_;
  ReduceOp op_;
  std::string name_;
  VectorHandle<T> value_, adj_;
  std::vector<VectorHandle<T>> partial_;
};

class ScalarBase {
 public:
  virtual ~ScalarBase() = default;
  virtual Handle& value_handle() = 0;
  virtual Handle& adjoint_handle() = 0;
  virtual Handle& partial(int t) = 0;
  virtual const std::string& name() const = 0;
  virtual Block& block() const = 0;
  virtual void zero_adjoint() = 0;
  // Submits: adjoint += sum of partial[t] for t in tiles (tile order).
  virtual void submit_adjoint_sum(const std::vector<int>& tiles, const std::string& loop) = 0;
};

template <class T>
class Scalar final : public ScalarBase {
 public:
  Scalar(Block& block, std::string name, T value)
      : block_(&block), name_(std::move(name)), value_(1, name_, value), adj_(1, name_ + "_a1s", T(0)) {
    for (int t = 0; t < block.tiles(); ++t)
      partial_.emplace_back(1, name_ + "_a1s_part[" + std::to_string(t) + "]", T(0));
  }
  T value() {
    auto g = value_.acquire(Access::R);
    return value_.data()[0];
  }
  void set(T v) { detail::host_set(value_, &v, sizeof(T)); }
  T adjoint() {
    auto g = adj_.acquire(Access::R);
    return adj_.data()[0];
  }
  void set_adjoint(T v) { detail::host_set(adj_, &v, sizeof(T)); }

  Handle& value_handle() override { return value_; }
  Handle& adjoint_handle() override { return adj_; }
  Handle& partial(int t) override { return partial_.at(t); }
  const std::string& name() const override { return name_; }
  Block& block() const override { return *block_; }
  void zero_adjoint() override { set_adjoint(T(0)); }
  void submit_adjoint_sum(const std::vector<int>& tiles, const std::string& loop) override {
    std::vector<DataAccess> acc{inout(adj_)};
    for (int t : tiles) acc.push_back(in(partial_[t]));
    detail::CombineArgs a{static_cast<int>(ReduceOp::SUM), static_cast<int>(tiles.size())};
    block_->executor().submit(detail::cl_combine<T>(), acc, &a, sizeof a, {.name = loop + ":sum_" + name_ + "_a1s"});
  }

 private:
  Block* block_;
  std::string name_;
  VectorHandle<T> value_, adj_;
  std::vector<VectorHandle<T>> partial_;
};

}  // namespace stardiff::mesh
