// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/runtime/codelet.hpp — a kernel with its CPU (and CUDA) implementations.
//
// Contract (Chameleon's kernel -> codelet -> insert seam):
//  * A kernel is a plain function `void f(const TaskContext&)` that reads its buffers
//    and its copied argument block. It never sees StarPU types.
//  * A Codelet names a kernel ("stardiff_<name>" is its StarPU perf-model symbol) and
//    holds its CPU implementation and, where built, its CUDA one (given the CUDA stream
//    of the worker in TaskContext::cuda_stream).
//  * Kernels must not let exceptions escape into StarPU: the executor's trampoline
//    catches them (and failures reported with TaskContext::fail) and raises them as
//    stardiff::Error from Executor::wait_all(), naming the task.
//  * Codelets are long-lived (usually static); the StarPU-side structure is created
//    lazily per runtime.
//  * A fork-join codelet (Parallelism::ForkJoin, CPU only) may start up to
//    TaskContext::threads threads itself (OpenMP): under StarPU's parallel-task schedulers
//    (peager, pheft) such a task may run on a combined worker of that many CPUs
//    (StarPU's STARPU_FORKJOIN codelets); everywhere else threads is 1.
#pragma once
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "stardiff/runtime/handle.hpp"

namespace stardiff {

struct TaskFailure;

struct TaskContext {
  std::span<const BufferView> buffers;
  const void* args = nullptr;
  std::size_t args_size = 0;
  void* cuda_stream = nullptr;  // cudaStream_t on a CUDA worker
  int worker = -1;              // StarPU worker id, -1 under the sequential executor
  const char* task_name = "";
  TaskFailure* failure = nullptr;
  int threads = 1;              // fork-join codelets: the CPUs this task holds (>= 1)

  template <class A> const A& arg() const {
    if (args_size != sizeof(A)) throw Error(std::string("task '") + task_name + "': argument block size mismatch");
    return *static_cast<const A*>(args);
  }
  // Records a failure (first one wins); the executor raises it after wait_all().
  void fail(const std::string& message) const;
};

using KernelFn = void (*)(const TaskContext&);

// Expected shape of one buffer; elemsize 0 = any.
struct BufferSpec {
  HandleKind kind;
  std::size_t elemsize = 0;
};

namespace detail { struct CodeletImpl; }

enum class Parallelism { Sequential, ForkJoin };

class Codelet {
 public:
  Codelet(std::string name, KernelFn cpu, KernelFn cuda = nullptr,
          std::vector<BufferSpec> signature = {});
  Codelet(std::string name, KernelFn cpu, Parallelism parallelism);  // CPU only, any buffers
  ~Codelet();
  Codelet(const Codelet&) = delete;
  Codelet& operator=(const Codelet&) = delete;

  const std::string& name() const { return name_; }
  KernelFn cpu() const { return cpu_; }
  KernelFn cuda() const { return cuda_; }
  Parallelism parallelism() const { return parallelism_; }
  // Empty signature: any number and shape of buffers.
  const std::vector<BufferSpec>& signature() const { return signature_; }
  // Throws Error naming the task when buffers do not match the signature.
  void check(std::span<const BufferView> buffers, const char* task_name) const;

  detail::CodeletImpl* impl() const { return impl_.get(); }
  using ImplPtr = std::unique_ptr<detail::CodeletImpl, void (*)(detail::CodeletImpl*)>;
  ImplPtr exchange_impl(ImplPtr impl) const;  // installs impl, returns the previous one

 private:
  std::string name_;
  KernelFn cpu_ = nullptr;
  KernelFn cuda_ = nullptr;
  std::vector<BufferSpec> signature_;
  Parallelism parallelism_ = Parallelism::Sequential;
  mutable std::unique_ptr<detail::CodeletImpl, void (*)(detail::CodeletImpl*)> impl_{nullptr, nullptr};
};

}  // namespace stardiff
