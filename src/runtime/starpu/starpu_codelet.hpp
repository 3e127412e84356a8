// SPDX-License-Identifier: LGPL-2.1-or-later
// src/runtime/starpu/starpu_codelet.hpp — the StarPU side of a stardiff Codelet.
//
// One starpu_codelet per (Codelet, runtime generation) for ordinary tasks
// (STARPU_VARIABLE_NBUFFERS, modes per task), plus fixed-arity variants used as a
// handle's REDUX init (W) and reduction (RW[,COMMUTE], R) methods. All variants run
// the same trampoline, which unpacks StarPU interfaces into BufferViews and calls
// the stardiff kernel, catching whatever it throws.
#pragma once
#include <starpu.h>

#include <string>

#include "stardiff/runtime/codelet.hpp"
#include "stardiff/runtime/executor.hpp"

namespace stardiff::detail {

struct ClVariant {
  starpu_codelet cl;  // first member: the trampoline finds the variant from task->cl
  const Codelet* owner = nullptr;
};

struct CodeletImpl {
  std::uint64_t generation = 0;
  std::string symbol;  // "stardiff_<name>"
  starpu_perfmodel model;
  ClVariant task, reduce, init;
  bool reduce_ready = false, init_ready = false;
};

// Argument block header placed before the copied arguments (cl_arg).
struct ArgHeader {
  TaskFailure* failure;
  std::uint32_t args_size;
  std::uint32_t name_offset;  // task name (NUL-terminated) at this byte offset
};
static_assert(sizeof(ArgHeader) == 16);

// StarPU's mode for an access; STARPU_NONE for combinations StarPU does not take.
inline starpu_data_access_mode starpu_mode(Access a) {
  switch (static_cast<unsigned>(a)) {
    case 1: return STARPU_R;
    case 2: return STARPU_W;
    case 3: return STARPU_RW;
    case 7: return static_cast<starpu_data_access_mode>(STARPU_RW | STARPU_COMMUTE);
    case 8: return STARPU_REDUX;
    default: return STARPU_NONE;
  }
}

CodeletImpl& codelet_impl(const Codelet& c);  // created for the current runtime on demand
starpu_codelet* reduction_codelet(const Codelet& c);
starpu_codelet* init_codelet(const Codelet& c);
TaskFailure& internal_failures();  // failures of StarPU-internal (REDUX) tasks
// starpu_pause / starpu_resume, serialised: StarPU 1.3 raises its pause depth without a
// lock, and Runtime::pause and run_on_caller may pause from different threads.
void pause_workers();
void resume_workers();

}  // namespace stardiff::detail
