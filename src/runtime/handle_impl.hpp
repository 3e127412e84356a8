// SPDX-License-Identifier: LGPL-2.1-or-later
// src/runtime/handle_impl.hpp — internal state of handles and codelets, and the
// seam to the StarPU layer (src/runtime/starpu/*.cpp implements the starpu_* hooks).
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "stardiff/runtime/codelet.hpp"
#include "stardiff/runtime/executor.hpp"
#include "stardiff/runtime/handle.hpp"

namespace stardiff::detail {

struct HandleImpl {
  BufferView view;
  std::string name;
  void* starpu = nullptr;        // starpu_data_handle_t once registered
  std::uint64_t generation = 0;  // runtime generation that registered it
  bool child = false;            // partition child: its parent's plan owns it
  const Codelet* redux_init = nullptr;
  const Codelet* redux_reduce = nullptr;
  bool redux_installed = false;
  bool managed = false;                    // Handle::managed_vector: no user memory
  std::unique_ptr<unsigned char[]> owned;  // a managed handle's host memory, when it has some
  int owner = 0;                           // StarPU-MPI owner rank (kEveryRank: replicated)
  std::int64_t tag = -1;                   // StarPU-MPI tag, once registered under MPI
};

// A managed handle not registered with StarPU gets zeroed host memory (view.ptr) at its
// first host-side use; Error if StarPU already allocates it (home node -1).
void managed_host_memory(HandleImpl& h, const std::string& user);

// Runtime liveness (src/runtime/starpu/runtime.cpp).
bool runtime_alive();
std::uint64_t runtime_generation();

// StarPU data hooks (src/runtime/starpu/starpu_data.cpp).
void* starpu_ensure_registered(HandleImpl& h);  // throws Error on misuse
void starpu_unregister(HandleImpl& h) noexcept;
void starpu_acquire(HandleImpl& h, Access mode);
void* starpu_local_ptr(HandleImpl& h);  // main-RAM pointer of an acquired handle
void starpu_release(HandleImpl& h) noexcept;
void starpu_drop_remote_copies(HandleImpl& h);  // Handle::drop_remote_copies
// Plans and submits a partition of `parent` into children (already holding host views).
void starpu_partition(HandleImpl& parent, HandleImpl** children, std::size_t n);
void starpu_unpartition(HandleImpl& parent, HandleImpl** children, std::size_t n) noexcept;

std::string describe(const HandleImpl& h);  // "'name' (vector of 10 x 8 B)"

// The handle behind buffer i of task `task`; throws Error for an empty handle or a REDUX
// access to a handle without reduction methods (checks every executor makes).
HandleImpl& access_impl(const DataAccess& d, std::size_t i, const std::string& task);

}  // namespace stardiff::detail
