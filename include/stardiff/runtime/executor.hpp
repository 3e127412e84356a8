// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/runtime/executor.hpp — how algorithms submit work.
//
// Contract:
//  * submit(codelet, accesses, args) hands one task to the executor; dependencies
//    follow from the handles and access modes alone (sequential consistency in
//    submission order, as StarPU's implicit dependencies).
//  * The argument block is copied at submission (trivially copyable types only).
//  * wait_all() returns when every submitted task has finished and throws Error
//    for the first task that failed (kernel exception or TaskContext::fail).
//  * SequentialExecutor runs each task at submission: a reference for every
//    StarPU run. StarpuExecutor (runtime/starpu_executor.hpp) inserts StarPU tasks.
//    RecordingExecutor records the graph (DOT, counts, cost-weighted critical path) and
//    forwards to another.
//  * WorkerStep(exec, name, fn) submits fn() as one task ("host_step"); wait() waits for
//    that task only (others in flight keep running) and rethrows fn's exception unchanged
//    (the destructor waits too, dropping it). run_on_worker(exec, name, fn) is both at
//    once. For host-side steps (an analysis, a set-up) that would otherwise run on the
//    submitting thread beside StarPU workers that poll while idle.
#pragma once
#include <functional>
#include <cstddef>
#include <exception>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "stardiff/runtime/codelet.hpp"
#include "stardiff/runtime/handle.hpp"

namespace stardiff {

struct DataAccess {
  Handle* handle;
  Access mode;
};
inline DataAccess in(Handle& h) { return {&h, Access::R}; }
inline DataAccess out(Handle& h) { return {&h, Access::W}; }
inline DataAccess inout(Handle& h) { return {&h, Access::RW}; }
inline DataAccess commute(Handle& h) { return {&h, Access::RW | Access::COMMUTE}; }
inline DataAccess redux(Handle& h) { return {&h, Access::REDUX}; }

struct TaskOptions {
  std::string name;  // defaults to the codelet's name
  int priority = 0;  // higher runs earlier where the scheduler honours priorities
  // Estimated work of the task (e.g. flops) and, for a fork-join task, the longest chain
  // of that work which its threads cannot share: read by RecordingExecutor::critical_path
  // only; executors ignore both.
  double cost = 0, span = 0;
};

// First failure recorded by the kernels of one executor (thread-safe).
struct TaskFailure {
  std::mutex mutex;
  bool failed = false;
  std::string task;
  std::string message;
  void record(const std::string& task_name, const std::string& msg);
  void raise_and_clear();  // throws Error if a failure was recorded
};

class Executor {
 public:
  virtual ~Executor() = default;
  virtual void submit(const Codelet& cl, std::span<const DataAccess> data, const void* args,
                      std::size_t args_size, const TaskOptions& opts) = 0;
  virtual void wait_all() = 0;
  virtual const char* kind() const = 0;  // for reports only: algorithms ask concurrency()
  // How many tasks can run at once (1: tasks run one after another, in submission order).
  // Algorithms size their task grain from this, never from the kind or the environment.
  virtual int concurrency() const = 0;
  virtual std::size_t tasks_submitted() const = 0;
  // True when tasks run on the rank owning the data they write and a rank holds only the
  // data it owns plus what StarPU-MPI brings it (StarpuExecutor under StarPU-MPI with more
  // than one rank); every other executor runs everything on every rank.
  virtual bool distributed() const { return false; }
  // The most CPUs one fork-join task (Parallelism::ForkJoin) can hold: the largest StarPU
  // combined worker under a parallel-task scheduler (peager, pheft), else 1.
  virtual int parallel_width() const { return 1; }

  template <class A>
  void submit(const Codelet& cl, const A& args, std::initializer_list<DataAccess> data,
              const TaskOptions& opts = {}) {
    static_assert(std::is_trivially_copyable_v<A>, "task arguments are copied bytewise");
    submit(cl, std::span<const DataAccess>(data.begin(), data.size()), &args, sizeof(A), opts);
  }
  void submit(const Codelet& cl, std::initializer_list<DataAccess> data, const TaskOptions& opts = {}) {
    submit(cl, std::span<const DataAccess>(data.begin(), data.size()), nullptr, 0, opts);
  }
};

// Runs every task at submission, in submission order, on the calling thread.
class SequentialExecutor final : public Executor {
 public:
  using Executor::submit;
  void submit(const Codelet& cl, std::span<const DataAccess> data, const void* args,
              std::size_t args_size, const TaskOptions& opts) override;
  void wait_all() override;
  const char* kind() const override { return "sequential"; }
  int concurrency() const override { return 1; }
  std::size_t tasks_submitted() const override { return count_; }

 private:
  std::size_t count_ = 0;
  TaskFailure failure_;
};

// Records every submitted task (name, codelet, accesses) and forwards it to `inner`
// (may be null: record only). Edges are the implicit dependencies StarPU would add.
class RecordingExecutor final : public Executor {
 public:
  explicit RecordingExecutor(Executor* inner = nullptr) : inner_(inner) {}
  using Executor::submit;
  void submit(const Codelet& cl, std::span<const DataAccess> data, const void* args,
              std::size_t args_size, const TaskOptions& opts) override;
  void wait_all() override;
  const char* kind() const override { return "recording"; }
  int concurrency() const override { return inner_ ? inner_->concurrency() : 1; }
  std::size_t tasks_submitted() const override { return tasks_.size(); }
  int parallel_width() const override { return inner_ ? inner_->parallel_width() : 1; }

  struct Task {
    std::string name, codelet;
    std::vector<std::pair<const void*, Access>> accesses;  // handle identity + mode
    double cost = 0, span = 0;  // TaskOptions
    bool fork_join = false;     // its codelet is Parallelism::ForkJoin
  };
  const std::vector<Task>& tasks() const { return tasks_; }
  std::map<std::string, std::size_t> counts() const;  // tasks per codelet
  // Dependency edges (i -> j, i < j) implied by the accesses, transitively reduced per handle.
  std::vector<std::pair<std::size_t, std::size_t>> edges() const;
  // The longest cost-weighted chain of the recorded graph, for `width` CPUs per fork-join
  // task: a task weighs its cost, a fork-join task max(cost / width, span). work: the sum
  // of the costs; path: its tasks, first to last (ties: the earliest-submitted predecessor;
  // a chain's leading tasks of zero weight are not listed).
  struct CriticalPath {
    double work = 0, length = 0;
    std::vector<std::size_t> path;
  };
  CriticalPath critical_path(int width = 1) const;
  std::string to_dot() const;
  void write_dot(const std::string& path) const;

 private:
  Executor* inner_;
  std::vector<Task> tasks_;
};

class WorkerStep {
 public:
  WorkerStep(Executor& exec, const char* name, std::function<void()> fn);
  ~WorkerStep();
  WorkerStep(const WorkerStep&) = delete;  // the task holds the addresses of fn and error
  WorkerStep& operator=(const WorkerStep&) = delete;
  void wait();

 private:
  std::function<void()> fn_;
  std::exception_ptr error_;
  VariableHandle<int> token_;
  bool waited_ = false;
};

void run_on_worker(Executor& exec, const char* name, const std::function<void()>& fn);

}  // namespace stardiff
