// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/runtime/runtime.hpp — the StarPU runtime (RAII) and the StarPU executor.
//
// Contract:
//  * At most one Runtime is alive per process; a second throws Error.
//  * Construction calls starpu_init; every STARPU_* environment variable keeps its
//    meaning (STARPU_SCHED, STARPU_NCPU, STARPU_NCUDA, STARPU_CALIBRATE, STARPU_LIMIT_*).
//    A second (third, ...) runtime of a process with a model-based scheduler (dmda,
//    dmdas, heft, ...) calibrates every job unless STARPU_CALIBRATE is set: StarPU 1.3.10
//    otherwise can abort in _starpu_driver_update_job_feedback ("measured >= 0").
//    RuntimeOptions fields left at their defaults defer to StarPU (env or its defaults).
//  * STARPU_HOME defaults to $XDG_CACHE_HOME/stardiff (else $HOME/.cache/stardiff)
//    unless the user set it: perf models are kept per project, not in $HOME/.starpu.
//  * BLAS runs single-threaded while the runtime lives (workers are the parallelism).
//  * Before StarPU starts, the STARPU_* numbers it would abort on (or misread), the
//    directories it must create and the scheduler name are checked: a bad one throws
//    Error naming the variable, and the process goes on.
//  * Failure to start (no worker, bad configuration) throws Error naming starpu_init.
//  * Destruction waits for all tasks, then shuts StarPU down; handles still alive
//    afterwards may not be used (Error), only destroyed.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "stardiff/runtime/executor.hpp"

namespace stardiff {

struct RuntimeOptions {
  int ncpu = -1;             // -1: STARPU_NCPU or StarPU's default
  int ncuda = -1;            // -1: STARPU_NCUDA or StarPU's default
  std::string scheduler;     // empty: STARPU_SCHED or StarPU's default
};

// One StarPU memory node (Runtime::memory_nodes). limit / available: bytes, -1 where no
// limit is set (STARPU_LIMIT_*_MEM; a disk node's limit is STARPU_DISK_SWAP_SIZE).
struct MemoryNodeInfo {
  int id = 0;
  std::string kind;  // "cpu", "cuda", "opencl", "disk", ...
  long long limit = -1, available = -1;
  long long used() const { return limit < 0 ? -1 : limit - available; }
};

struct WorkerInfo {
  int id;
  std::string kind;  // "cpu", "cuda", "opencl", ...
  std::string name;
};

class Runtime {
 public:
  Runtime();
  explicit Runtime(const RuntimeOptions& opts);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  static bool active();
  int worker_count() const;
  int cpu_workers() const;
  int cuda_workers() const;
  std::vector<WorkerInfo> workers() const;
  std::string scheduler() const;  // the policy in use
  // StarPU's memory nodes with the bytes it accounts on each (main RAM first). With
  // STARPU_DISK_SWAP the disk node is listed: its used() is what StarPU evicted there.
  std::vector<MemoryNodeInfo> memory_nodes() const;

  // Debian's StarPU polls for work (non-blocking drivers): idle workers spin and slow
  // down host code running beside them. pause() waits for submitted tasks, then stops
  // the workers polling until resume(); tasks submitted meanwhile wait for resume().
  void pause();
  void resume();
  bool paused() const { return paused_; }

 private:
  bool paused_ = false;
};

// RAII: workers paused for the guard's scope (host-only work between task graphs).
class PausedWorkers {
 public:
  explicit PausedWorkers(Runtime& rt) : rt_(rt), was_paused_(rt.paused()) {
    if (!was_paused_) rt_.pause();
  }
  ~PausedWorkers() {
    if (!was_paused_) rt_.resume();
  }
  PausedWorkers(const PausedWorkers&) = delete;
  PausedWorkers& operator=(const PausedWorkers&) = delete;

 private:
  Runtime& rt_;
  bool was_paused_;
};

// StarPU build facts, available without a running runtime.
struct StarpuBuild {
  std::string version;  // "1.3.10"
  bool cuda = false, opencl = false, mpi = false;
  int maxcpus = 0, nmaxbufs = 0, maxcudadevs = 0;
};
StarpuBuild starpu_build();
// Machine topology as hwloc sees it.
struct Topology {
  int packages = 0, numa_nodes = 0, cores = 0, pus = 0;
  std::string cpu_model;
};
Topology machine_topology();

bool stardiff_cuda_kernels_built();  // codelets/cuda compiled into this library
bool stardiff_starpu_cuda();          // StarPU CUDA codelet wrappers compiled

// Inserts one StarPU task per submission. Requires a live Runtime.
class StarpuExecutor final : public Executor {
 public:
  StarpuExecutor();
  ~StarpuExecutor() override;  // waits for this executor's tasks (never throws)
  using Executor::submit;
  void submit(const Codelet& cl, std::span<const DataAccess> data, const void* args,
              std::size_t args_size, const TaskOptions& opts) override;
  void wait_all() override;
  const char* kind() const override { return "starpu"; }
  int concurrency() const override;  // StarPU's CPU and CUDA workers
  std::size_t tasks_submitted() const override { return count_; }

 private:
  std::size_t count_ = 0;
  std::unique_ptr<TaskFailure> failure_;
};

// "starpu" (needs a live Runtime) or "sequential"; anything else throws Error.
std::unique_ptr<Executor> make_executor(const std::string& kind);

}  // namespace stardiff
