// SPDX-License-Identifier: LGPL-2.1-or-later
// src/runtime/sequential_executor.cpp — runs each task at submission.
#include <exception>
#include <vector>

#include "runtime/handle_impl.hpp"
#include "stardiff/runtime/executor.hpp"

namespace stardiff {

void SequentialExecutor::submit(const Codelet& cl, std::span<const DataAccess> data, const void* args,
                                std::size_t args_size, const TaskOptions& opts) {
  const std::string& name = opts.name.empty() ? cl.name() : opts.name;
  BufferView local[16];
  std::vector<BufferView> heap;
  BufferView* views = local;
  if (data.size() > 16) {
    heap.resize(data.size());
    views = heap.data();
  }
  for (std::size_t i = 0; i < data.size(); ++i) {
    auto* h = &detail::access_impl(data[i], i, name);
    if (h->starpu != nullptr && (!detail::runtime_alive() || h->generation != detail::runtime_generation()))
      throw Error("task '" + name + "': handle " + detail::describe(*h) +
                  " was registered with a StarPU runtime that has ended");
    if (h->managed && h->view.ptr == nullptr) detail::managed_host_memory(*h, "task '" + name + "'");
    views[i] = h->view;
  }
  std::span<const BufferView> bufs(views, data.size());
  cl.check(bufs, name.c_str());
  ++count_;
  TaskContext ctx{bufs, args, args_size, nullptr, -1, name.c_str(), &failure_};
  try {
    cl.cpu()(ctx);
  } catch (const std::exception& e) {
    failure_.record(name, e.what());
  } catch (...) {
    failure_.record(name, "unknown exception");
  }
}

void SequentialExecutor::wait_all() { failure_.raise_and_clear(); }

}  // namespace stardiff
