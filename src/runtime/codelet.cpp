// SPDX-License-Identifier: LGPL-2.1-or-later
// src/runtime/codelet.cpp — Codelet bookkeeping, signature checks, task failures.
#include "stardiff/runtime/codelet.hpp"

#include "runtime/handle_impl.hpp"
#include "stardiff/runtime/executor.hpp"

namespace stardiff {

Codelet::Codelet(std::string name, KernelFn cpu, KernelFn cuda, std::vector<BufferSpec> signature)
    : name_(std::move(name)), cpu_(cpu), cuda_(cuda), signature_(std::move(signature)) {
  require(!name_.empty(), "stardiff::Codelet: a codelet needs a name");
  require(cpu_ != nullptr, "stardiff::Codelet '" + name_ + "': a CPU implementation is required");
}

Codelet::Codelet(std::string name, KernelFn cpu, Parallelism parallelism) : Codelet(std::move(name), cpu) {
  parallelism_ = parallelism;
}

Codelet::~Codelet() = default;

Codelet::ImplPtr Codelet::exchange_impl(ImplPtr impl) const {
  ImplPtr old = std::move(impl_);
  impl_ = std::move(impl);
  return old;
}

void Codelet::check(std::span<const BufferView> buffers, const char* task_name) const {
  if (signature_.empty()) return;
  std::string who = std::string("task '") + task_name + "' (codelet " + name_ + ")";
  if (buffers.size() != signature_.size())
    throw Error(who + ": expects " + std::to_string(signature_.size()) + " buffers, got " +
                std::to_string(buffers.size()));
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].kind != signature_[i].kind)
      throw Error(who + ": buffer " + std::to_string(i) + " must be a " + to_string(signature_[i].kind) +
                  ", got a " + to_string(buffers[i].kind));
    if (signature_[i].elemsize != 0 && buffers[i].elemsize != signature_[i].elemsize)
      throw Error(who + ": buffer " + std::to_string(i) + " must have " +
                  std::to_string(signature_[i].elemsize) + "-byte elements, got " +
                  std::to_string(buffers[i].elemsize));
  }
}

void TaskContext::fail(const std::string& message) const {
  if (failure) failure->record(task_name, message);
}

void TaskFailure::record(const std::string& task_name, const std::string& msg) {
  std::lock_guard<std::mutex> lock(mutex);
  if (failed) return;
  failed = true;
  task = task_name;
  message = msg;
}

void TaskFailure::raise_and_clear() {
  std::lock_guard<std::mutex> lock(mutex);
  if (!failed) return;
  failed = false;
  throw Error("task '" + task + "' failed: " + message);
}

}  // namespace stardiff
