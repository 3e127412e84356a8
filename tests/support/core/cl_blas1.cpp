// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/support/core/cl_blas1.cpp — unpack buffers, call cpu:: (or cuda::) kernels.
#include "support/core/cl_blas1.hpp"

#include "support/core/blas1.hpp"
#if STARDIFF_STARPU_CUDA
#include "support/cuda/blas1.cuh"
#endif

namespace stardiff::codelets {
namespace {
struct Alpha {
  double alpha;
};
void axpy_cpu_task(const TaskContext& t) {
  const auto& x = t.buffers[0];
  const auto& y = t.buffers[1];
  if (x.nx != y.nx) t.fail("axpy: x has " + std::to_string(x.nx) + " entries, y " + std::to_string(y.nx));
  else cpu::axpy_cpu(x.nx, t.arg<Alpha>().alpha, x.data<double>(), y.data<double>());
}
void scal_cpu_task(const TaskContext& t) {
  cpu::scal_cpu(t.buffers[0].nx, t.arg<Alpha>().alpha, t.buffers[0].data<double>());
}
#if STARDIFF_STARPU_CUDA
void axpy_cuda_task(const TaskContext& t) {
  cuda::axpy_cuda(t.buffers[0].nx, t.arg<Alpha>().alpha, t.buffers[0].data<double>(),
                  t.buffers[1].data<double>(), static_cast<cudaStream_t>(t.cuda_stream));
}
void scal_cuda_task(const TaskContext& t) {
  cuda::scal_cuda(t.buffers[0].nx, t.arg<Alpha>().alpha, t.buffers[0].data<double>(),
                  static_cast<cudaStream_t>(t.cuda_stream));
}
#else
constexpr KernelFn axpy_cuda_task = nullptr;
constexpr KernelFn scal_cuda_task = nullptr;
#endif
void sum_init_task(const TaskContext& t) { *t.buffers[0].data<double>() = 0.0; }
void sum_reduce_task(const TaskContext& t) { *t.buffers[0].data<double>() += *t.buffers[1].data<double>(); }
}  // namespace

const Codelet cl_axpy("axpy", axpy_cpu_task, axpy_cuda_task,
                      {{HandleKind::Vector, sizeof(double)}, {HandleKind::Vector, sizeof(double)}});
const Codelet cl_scal("scal", scal_cpu_task, scal_cuda_task, {{HandleKind::Vector, sizeof(double)}});
const Codelet cl_sum_init("sum_init", sum_init_task);
const Codelet cl_sum_reduce("sum_reduce", sum_reduce_task);

void insert_axpy(Executor& exec, double alpha, Handle& x, Handle& y, int priority) {
  exec.submit(cl_axpy, Alpha{alpha}, {in(x), inout(y)}, {.name = "axpy", .priority = priority});
}
void insert_scal(Executor& exec, double alpha, Handle& x, int priority) {
  exec.submit(cl_scal, Alpha{alpha}, {inout(x)}, {.name = "scal", .priority = priority});
}
}  // namespace stardiff::codelets
