// src/runtime/host_step.cpp — run_on_worker: a host function as one task (see executor.hpp).
#include <exception>
#include <functional>

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
    *a.error = std::current_exception();  // rethrown by run_on_worker, unchanged
  }
}

const Codelet cl_host_step("host_step", host_step_task, nullptr, {{HandleKind::Variable, sizeof(int)}});

}  // namespace

void run_on_worker(Executor& exec, const char* name, const std::function<void()>& fn) {
  std::exception_ptr error;
  VariableHandle<int> token(0, name);
  exec.submit(cl_host_step, HostStepArgs{&fn, &error}, {out(token)}, {.name = name, .priority = 2});
  { auto done = token.acquire(Access::R); }
  if (error) std::rethrow_exception(error);
}

}  // namespace stardiff
