// SPDX-License-Identifier: LGPL-2.1-or-later
// src/runtime/host_step.cpp — WorkerStep / run_on_worker: a host function as one task
// (see executor.hpp).
#include <exception>
#include <functional>
#include <utility>

#include "stardiff/runtime/executor.hpp"
#include "stardiff/runtime/handle.hpp"

namespace stardiff {
namespace {

struct HostStepArgs {
  const std::function<void()>* fn;
  std::exception_ptr* error;
};

void host_step_task(const TaskContext& t) {
  const auto& a = t.arg<HostStepArgs>();
  try {
    (*a.fn)();
  } catch (...) {
    *a.error = std::current_exception();  // rethrown by WorkerStep::wait, unchanged
  }
}

const Codelet cl_host_step("host_step", host_step_task, nullptr, {{HandleKind::Variable, sizeof(int)}});

}  // namespace

WorkerStep::WorkerStep(Executor& exec, const char* name, std::function<void()> fn)
    : fn_(std::move(fn)), token_(0, name) {
  token_.set_owner(kEveryRank);  // StarPU-MPI: a host step runs on every rank (each its own fn)
  exec.submit(cl_host_step, HostStepArgs{&fn_, &error_}, {out(token_)}, {.name = name, .priority = 2});
}

void WorkerStep::wait() {
  if (!waited_) {
    auto done = token_.acquire(Access::R);
    waited_ = true;
  }
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

WorkerStep::~WorkerStep() {
  if (!waited_) {  // never leave the task holding our members; its error is dropped
    auto done = token_.acquire(Access::R);
  }
}

void run_on_worker(Executor& exec, const char* name, const std::function<void()>& fn) {
  WorkerStep step(exec, name, fn);
  step.wait();
}

}  // namespace stardiff
