// SPDX-License-Identifier: LGPL-2.1-or-later
// src/runtime/starpu/starpu_executor.cpp — StarpuExecutor and the codelet trampoline.
#include <starpu.h>
#ifdef STARPU_USE_CUDA
#include <starpu_cuda.h>
#endif

#include <algorithm>
#include <array>
#include <climits>
#include <cstdlib>
#include <utility>
#include <cstring>
#include <exception>
#include <functional>
#include <mutex>
#include <vector>

#include "runtime/cuda_workers.hpp"
#include "runtime/handle_impl.hpp"
#include "runtime/starpu/starpu_codelet.hpp"
#include "runtime/run_on_caller.hpp"
#include "runtime/starpu/mpi_layer.hpp"
#include "stardiff/runtime/runtime.hpp"

namespace stardiff {
namespace detail {

TaskFailure& internal_failures() {
  static TaskFailure f;
  return f;
}

namespace {
std::mutex g_pause_mutex;
}

void pause_workers() {
  std::lock_guard<std::mutex> lock(g_pause_mutex);
  starpu_pause();
}

void resume_workers() {
  std::lock_guard<std::mutex> lock(g_pause_mutex);
  starpu_resume();
}

static BufferView unpack(void* iface) {
  BufferView v;
  switch (*static_cast<starpu_data_interface_id*>(iface)) {
    case STARPU_VECTOR_INTERFACE_ID: {
      auto* i = static_cast<starpu_vector_interface*>(iface);
      v = {reinterpret_cast<void*>(i->ptr), HandleKind::Vector, i->elemsize, i->nx, 1, 1, i->nx, i->nx};
      break;
    }
    case STARPU_MATRIX_INTERFACE_ID: {
      auto* i = static_cast<starpu_matrix_interface*>(iface);
      v = {reinterpret_cast<void*>(i->ptr), HandleKind::Matrix, i->elemsize, i->nx, i->ny, 1, i->ld,
           static_cast<std::size_t>(i->ld) * i->ny};
      break;
    }
    case STARPU_BLOCK_INTERFACE_ID: {
      auto* i = static_cast<starpu_block_interface*>(iface);
      v = {reinterpret_cast<void*>(i->ptr), HandleKind::Block, i->elemsize, i->nx, i->ny, i->nz, i->ldy, i->ldz};
      break;
    }
    case STARPU_VARIABLE_INTERFACE_ID: {
      auto* i = static_cast<starpu_variable_interface*>(iface);
      v = {reinterpret_cast<void*>(i->ptr), HandleKind::Variable, i->elemsize, 1, 1, 1, 1, 1};
      break;
    }
    default:
      break;
  }
  return v;
}

template <bool Cuda>
static void run_kernel(const Codelet& cl, void* buffers[], unsigned n, void* cl_arg, std::size_t cl_arg_size) {
  BufferView local[16];
  std::vector<BufferView> heap;
  BufferView* views = local;
  if (n > 16) {
    heap.resize(n);
    views = heap.data();
  }
  for (unsigned i = 0; i < n; ++i) views[i] = unpack(buffers[i]);
  TaskContext ctx;
  ctx.buffers = std::span<const BufferView>(views, n);
  ctx.worker = starpu_worker_get_id();
  if (cl.parallelism() == Parallelism::ForkJoin) ctx.threads = std::max(1, starpu_combined_worker_get_size());
  if (cl_arg != nullptr && cl_arg_size == 0) {  // bare failure sink
    ctx.failure = static_cast<TaskFailure*>(cl_arg);
    ctx.task_name = cl.name().c_str();
  } else if (cl_arg != nullptr) {
    auto* hdr = static_cast<ArgHeader*>(cl_arg);
    ctx.failure = hdr->failure;
    ctx.args = hdr->args_size ? static_cast<char*>(cl_arg) + sizeof(ArgHeader) : nullptr;
    ctx.args_size = hdr->args_size;
    ctx.task_name = static_cast<char*>(cl_arg) + hdr->name_offset;
  } else {
    ctx.failure = &internal_failures();
    ctx.task_name = cl.name().c_str();
  }
  try {
    if constexpr (Cuda) {
#ifdef STARPU_USE_CUDA
      ctx.cuda_stream = starpu_cuda_get_local_stream();
#endif
      cl.cuda()(ctx);
    } else {
      cl.cpu()(ctx);
    }
  } catch (const std::exception& e) {
    ctx.failure->record(ctx.task_name, e.what());
  } catch (...) {
    ctx.failure->record(ctx.task_name, "unknown exception");
  }
}

template <bool Cuda>
static void trampoline(void* buffers[], void* cl_arg) {
  starpu_task* task = starpu_task_get_current();
  auto* variant = reinterpret_cast<ClVariant*>(task->cl);
  run_kernel<Cuda>(*variant->owner, buffers, STARPU_TASK_GET_NBUFFERS(task), cl_arg, task->cl_arg_size);
}

// REDUX init functions are called by StarPU outside any task of theirs, so they
// cannot find their codelet through task->cl: each reduction codelet gets a slot
// and a trampoline instantiated for that slot.
constexpr int kReduxSlots = 64;
const Codelet* g_redux_slots[kReduxSlots] = {};
int g_redux_used = 0;
template <int S, unsigned N>
static void slot_trampoline(void* buffers[], void*) {
  run_kernel<false>(*g_redux_slots[S], buffers, N, nullptr, 0);
}
template <unsigned N, int... S>
static constexpr auto make_slot_table(std::integer_sequence<int, S...>) {
  return std::array<void (*)(void**, void*), sizeof...(S)>{slot_trampoline<S, N>...};
}
static constexpr auto kInitTable = make_slot_table<1>(std::make_integer_sequence<int, kReduxSlots>{});
static constexpr auto kReduceTable = make_slot_table<2>(std::make_integer_sequence<int, kReduxSlots>{});
static int redux_slot(const Codelet& c) {
  for (int i = 0; i < g_redux_used; ++i)
    if (g_redux_slots[i] == &c) return i;
  if (g_redux_used == kReduxSlots) throw Error("too many distinct REDUX codelets (max 64)");
  g_redux_slots[g_redux_used] = &c;
  return g_redux_used++;
}

static void fill_variant(ClVariant& v, const Codelet& c, CodeletImpl& impl) {
  starpu_codelet_init(&v.cl);
  v.owner = &c;
  v.cl.where = STARPU_CPU;
  v.cl.cpu_funcs[0] = trampoline<false>;
  if (c.parallelism() == Parallelism::ForkJoin) {  // the kernel starts TaskContext::threads threads
    v.cl.type = STARPU_FORKJOIN;
    v.cl.max_parallelism = INT_MAX;
  }
#if STARDIFF_STARPU_CUDA && defined(STARPU_USE_CUDA)
  if (c.cuda()) {
    v.cl.where |= STARPU_CUDA;
    v.cl.cuda_funcs[0] = trampoline<true>;
    v.cl.cuda_flags[0] = STARPU_CUDA_ASYNC;
  }
#endif
  v.cl.name = c.name().c_str();
  v.cl.model = &impl.model;
}

static void impl_delete(CodeletImpl* p) { delete p; }

CodeletImpl& codelet_impl(const Codelet& c) {
  CodeletImpl* impl = c.impl();
  std::uint64_t gen = runtime_generation();
  if (impl != nullptr && impl->generation == gen) return *impl;
  // (Re)build for this runtime. A stale one from an ended runtime is kept for the
  // process lifetime: StarPU may still refer to its perf model until exit.
  Codelet::ImplPtr fresh(new CodeletImpl(), impl_delete);
  fresh->generation = gen;
  fresh->symbol = "stardiff_" + c.name();
  std::memset(static_cast<void*>(&fresh->model), 0, sizeof fresh->model);
  fresh->model.type = STARPU_HISTORY_BASED;
  fresh->model.symbol = fresh->symbol.c_str();
  fill_variant(fresh->task, c, *fresh);
  fresh->task.cl.nbuffers = STARPU_VARIABLE_NBUFFERS;
  CodeletImpl* raw = fresh.get();
  Codelet::ImplPtr old = c.exchange_impl(std::move(fresh));
  if (old) {
    static std::vector<Codelet::ImplPtr> graveyard;
    graveyard.push_back(std::move(old));
  }
  return *raw;
}

starpu_codelet* reduction_codelet(const Codelet& c) {
  CodeletImpl& impl = codelet_impl(c);
  if (!impl.reduce_ready) {
    fill_variant(impl.reduce, c, impl);
    impl.reduce.cl.model = nullptr;
    impl.reduce.cl.nbuffers = 2;
#if STARPU_MAJOR_VERSION == 1 && STARPU_MINOR_VERSION < 4
    impl.reduce.cl.modes[0] = STARPU_RW;  // 1.3 insists on exactly RW here
#else
    impl.reduce.cl.modes[0] = static_cast<starpu_data_access_mode>(STARPU_RW | STARPU_COMMUTE);
#endif
    impl.reduce.cl.modes[1] = STARPU_R;
    impl.reduce.cl.cpu_funcs[0] = kReduceTable[redux_slot(c)];
    impl.reduce_ready = true;
  }
  return &impl.reduce.cl;
}

starpu_codelet* init_codelet(const Codelet& c) {
  CodeletImpl& impl = codelet_impl(c);
  if (!impl.init_ready) {
    fill_variant(impl.init, c, impl);
    impl.init.cl.model = nullptr;
    impl.init.cl.nbuffers = 1;
    impl.init.cl.modes[0] = STARPU_W;
    impl.init.cl.cpu_funcs[0] = kInitTable[redux_slot(c)];
    impl.init_ready = true;
  }
  return &impl.init.cl;
}

}  // namespace detail

StarpuExecutor::StarpuExecutor() : failure_(std::make_unique<TaskFailure>()) {
  if (!Runtime::active()) throw Error("stardiff::StarpuExecutor: no live stardiff::Runtime");
}

StarpuExecutor::~StarpuExecutor() {
  if (count_ > 0 && detail::runtime_alive()) starpu_task_wait_for_all();
}

void StarpuExecutor::submit(const Codelet& cl, std::span<const DataAccess> data, const void* args,
                            std::size_t args_size, const TaskOptions& opts) {
  const std::string& name = opts.name.empty() ? cl.name() : opts.name;
  if (!detail::runtime_alive()) throw Error("task '" + name + "': the StarPU runtime has ended");
  const std::size_t n = data.size();
  starpu_data_handle_t hs_local[16];
  BufferView vs_local[16];
  std::vector<starpu_data_handle_t> hs_heap;
  std::vector<BufferView> vs_heap;
  starpu_data_handle_t* hs = hs_local;
  BufferView* vs = vs_local;
  if (n > 16) {
    hs_heap.resize(n);
    vs_heap.resize(n);
    hs = hs_heap.data();
    vs = vs_heap.data();
  }
  std::size_t managed_bytes = 0;
  const detail::HandleImpl* largest = nullptr;
  for (std::size_t i = 0; i < n; ++i) {
    auto* h = &detail::access_impl(data[i], i, name);
    if (detail::starpu_mode(data[i].mode) == STARPU_NONE)
      throw Error("task '" + name + "': invalid access mode for handle " + detail::describe(*h));
    try {
      hs[i] = static_cast<starpu_data_handle_t>(detail::starpu_ensure_registered(*h));
    } catch (const Error& e) {
      throw Error("task '" + name + "': " + e.what());
    }
    vs[i] = h->view;
    if (h->managed && h->view.ptr == nullptr) {
      const std::size_t b = h->view.count() * h->view.elemsize;
      managed_bytes += b;
      if (!largest || b > largest->view.count() * largest->view.elemsize) largest = h;
    }
  }
  // StarPU allocates managed handles in main memory for the task: beyond STARPU_LIMIT_CPU_MEM
  // it can never place them (StarPU 1.3 then waits forever, purging).
  if (managed_bytes > 0) {
    const starpu_ssize_t limit = starpu_memory_get_total(STARPU_MAIN_RAM);
    if (limit >= 0 && managed_bytes > static_cast<std::size_t>(limit))
      throw Error("task '" + name + "': its StarPU-allocated (managed) buffers, " + std::to_string(managed_bytes) +
                  " B in all (the largest: handle " + detail::describe(*largest) + "), exceed STARPU_LIMIT_CPU_MEM (" +
                  std::to_string(limit) + " B): StarPU could never place them in main memory. Raise the limit or "
                  "use more tiles");
  }
  cl.check(std::span<const BufferView>(vs, n), name.c_str());
  detail::CodeletImpl& impl = detail::codelet_impl(cl);

  // Tasks without arguments and with the codelet's name carry only the failure sink
  // (cl_arg_size 0, nothing allocated). Others: one allocation holding the header,
  // the argument bytes (16-byte aligned) and the task name.
  void* cl_arg = failure_.get();
  std::size_t cl_arg_size = 0;
  const char* task_name = cl.name().c_str();
  if (args_size != 0 || !opts.name.empty()) {
    std::size_t args_bytes = (args_size + 15) & ~std::size_t{15};
    std::size_t total = sizeof(detail::ArgHeader) + args_bytes + name.size() + 1;
    auto* block = static_cast<char*>(std::malloc(total));
    if (!block) throw Error("task '" + name + "': out of memory");
    auto* hdr = reinterpret_cast<detail::ArgHeader*>(block);
    hdr->failure = failure_.get();
    hdr->args_size = static_cast<std::uint32_t>(args_size);
    hdr->name_offset = static_cast<std::uint32_t>(sizeof(detail::ArgHeader) + args_bytes);
    if (args_size) std::memcpy(block + sizeof(detail::ArgHeader), args, args_size);
    std::memcpy(block + hdr->name_offset, name.c_str(), name.size() + 1);
    cl_arg = block;
    cl_arg_size = total;
    task_name = block + hdr->name_offset;
  }

  if (detail::mpi_on()) {
    // StarPU-MPI: runs on the owner of the first buffer written (rank 0 if none is written).
    int exec = -1;
    for (std::size_t i = 0; i < n && exec == -1; ++i)
      if (writes(data[i].mode)) exec = data[i].handle->impl()->owner;
    if (exec == -1) exec = 0;
    if (exec == kEveryRank && detail::mpi_size_now() > 1)
      for (std::size_t i = 0; i < n; ++i)
        if (data[i].handle->impl()->owner != kEveryRank) {
          if (cl_arg_size != 0) std::free(cl_arg);
          throw Error("task '" + name + "': writes a replicated (kEveryRank) handle but also accesses handle " +
                      detail::describe(*data[i].handle->impl()) + " owned by rank " +
                      std::to_string(data[i].handle->impl()->owner) +
                      " (a task on replicated data runs on every rank and may touch replicated data only)");
        }
    std::vector<starpu_data_access_mode> modes(n);
    for (std::size_t i = 0; i < n; ++i) modes[i] = detail::starpu_mode(data[i].mode);
    int ret = detail::mpi_submit(&impl.task.cl, hs, modes.data(), static_cast<int>(n), exec, cl_arg, cl_arg_size,
                                 opts.priority, task_name);
    if (ret == -ENODEV) throw Error("task '" + name + "': no StarPU worker can run codelet " + cl.name());
    if (ret != 0) throw Error("task '" + name + "': starpu_task_submit failed (" + std::strerror(-ret) + ")");
    ++count_;
    return;
  }

  starpu_task* t = starpu_task_create();
  t->cl = &impl.task.cl;
  t->nbuffers = static_cast<int>(n);
  if (n <= STARPU_NMAXBUFS) {
    for (std::size_t i = 0; i < n; ++i) {
      t->handles[i] = hs[i];
      t->modes[i] = detail::starpu_mode(data[i].mode);
    }
  } else {
    t->dyn_handles = static_cast<starpu_data_handle_t*>(std::malloc(n * sizeof(starpu_data_handle_t)));
    t->dyn_modes = static_cast<starpu_data_access_mode*>(std::malloc(n * sizeof(starpu_data_access_mode)));
    for (std::size_t i = 0; i < n; ++i) {
      t->dyn_handles[i] = hs[i];
      t->dyn_modes[i] = detail::starpu_mode(data[i].mode);
    }
  }
  t->cl_arg = cl_arg;
  t->cl_arg_size = cl_arg_size;
  t->cl_arg_free = cl_arg_size != 0;
  t->priority = opts.priority;
  t->name = task_name;
  int ret = starpu_task_submit(t);
  if (ret != 0) {
    t->destroy = 0;
    starpu_task_destroy(t);
    if (ret == -ENODEV)
      throw Error("task '" + name + "': no StarPU worker can run codelet " + cl.name());
    throw Error("task '" + name + "': starpu_task_submit failed (" + std::strerror(-ret) + ")");
  }
  ++count_;
}

bool StarpuExecutor::distributed() const { return detail::mpi_on() && detail::mpi_size_now() > 1; }

int StarpuExecutor::concurrency() const {
  if (!detail::runtime_alive()) throw Error("StarpuExecutor::concurrency: the StarPU runtime has ended");
  return std::max(1, static_cast<int>(starpu_cpu_worker_get_count() + starpu_cuda_worker_get_count()));
}

int StarpuExecutor::parallel_width() const {
  if (!detail::runtime_alive()) throw Error("StarpuExecutor::parallel_width: the StarPU runtime has ended");
  int width = 1;
  const int first = static_cast<int>(starpu_worker_get_count());
  for (unsigned c = 0; c < starpu_combined_worker_get_count(); ++c) {
    int size = 0;
    int* ids = nullptr;
    if (starpu_combined_worker_get_description(first + static_cast<int>(c), &size, &ids) == 0)
      width = std::max(width, size);
  }
  return width;
}

void StarpuExecutor::wait_all() {
  if (!detail::runtime_alive()) throw Error("StarpuExecutor::wait_all: the StarPU runtime has ended");
  if (detail::mpi_on()) {
    detail::mpi_wait_all();
    bool mine;
    {
      std::lock_guard<std::mutex> l1(failure_->mutex);
      std::lock_guard<std::mutex> l2(detail::internal_failures().mutex);
      mine = failure_->failed || detail::internal_failures().failed;
    }
    const int bad = detail::mpi_lowest_failed(mine);
    if (bad >= 0 && !mine)
      throw Error("StarpuExecutor::wait_all: a task failed on MPI rank " + std::to_string(bad) +
                  " (that rank reports which)");
  } else {
    starpu_task_wait_for_all();
  }
  failure_->raise_and_clear();
  detail::internal_failures().raise_and_clear();
}

int detail::cuda_workers(const Executor& exec) {
#if STARDIFF_STARPU_CUDA && defined(STARPU_USE_CUDA)
  if (!dynamic_cast<const StarpuExecutor*>(&exec) || !detail::runtime_alive() || detail::mpi_size_now() > 1) return 0;
  return static_cast<int>(starpu_cuda_worker_get_count());
#else
  (void)exec;
  return 0;
#endif
}

bool detail::run_on_caller(Executor& exec, const char* name, const std::function<void()>& fn) {
  // Only a StarpuExecutor's own workers are paused (a RecordingExecutor records a task);
  // with tasks in flight, pausing would hold them back for fn's duration; under StarPU-MPI
  // with several ranks every rank takes the same (task) path whatever its own queue holds.
  if (!dynamic_cast<StarpuExecutor*>(&exec) || detail::mpi_size_now() > 1 || starpu_worker_get_id() >= 0 ||
      starpu_task_nsubmitted() > 0) {
    run_on_worker(exec, name, fn);
    return false;
  }
  struct Paused {
    Paused() { detail::pause_workers(); }
    ~Paused() { detail::resume_workers(); }
  } paused;
  fn();
  return true;
}

}  // namespace stardiff
