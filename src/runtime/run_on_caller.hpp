// SPDX-License-Identifier: LGPL-2.1-or-later
// src/runtime/run_on_caller.hpp — a short host step on the calling thread (private).
//
// Contract: run_on_caller(exec, name, fn) runs fn() on the calling thread with StarPU's
// workers paused meanwhile (no polling beside it) where exec is a StarpuExecutor, no task
// is in flight, the caller is not a worker and there is one MPI rank; tasks submitted
// meanwhile start after fn. Otherwise it is run_on_worker(exec, name, fn). Returns true
// where fn ran on the caller (no task). fn must not wait for tasks. For one short step
// whose task round trip (a wake-up of a worker, then of the caller) costs as much as it.
#pragma once
#include <functional>

#include "stardiff/runtime/executor.hpp"

namespace stardiff::detail {
bool run_on_caller(Executor& exec, const char* name, const std::function<void()>& fn);
}  // namespace stardiff::detail
