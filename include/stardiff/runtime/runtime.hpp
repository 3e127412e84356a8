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
//  * More CUDA devices asked for (RuntimeOptions::ncuda, else STARPU_NCUDA) than run (fewer
//    present, no driver, a StarPU without CUDA): one line on stderr (once per process and
//    message) naming the request, the reason and the workers started; StarPU starts on what it
//    found. When only CUDA workers were asked for (ncpu 0) and none can start, StarPU is
//    started again on its default CPU workers (the same one line says so).
//  * Failure to start (no worker, bad configuration) throws Error naming starpu_init.
//  * Destruction waits for all tasks, then shuts StarPU down; handles still alive
//    afterwards may not be used (Error), only destroyed.
//  * StarPU-MPI (RuntimeOptions::mpi): -1 (default) follows STARDIFF_MPI (0 off, 1 on) and
//    otherwise turns MPI on when the process was started by mpirun (OMPI_COMM_WORLD_SIZE,
//    PMI_SIZE or PMIX_RANK set). On: MPI is initialised once per process (finalised at
//    exit) and StarPU starts through starpu_mpi_init_conf; rank() / size() are the MPI
//    ones; StarpuExecutor submits through StarPU-MPI (runtime/handle.hpp: owners, tags,
//    collective host access) and every rank must submit the same tasks in the same order.
//    STARDIFF_MPI=1 without mpirun runs as an MPI singleton (size 1). MPI requested from a
//    build without StarPU-MPI, or a bad STARDIFF_MPI value, throws Error. Destruction is
//    collective (every rank waits for the others); a Runtime destroyed while an exception
//    unwinds on a run of more than one rank aborts the whole MPI job (MPI_Abort, exit 2)
//    instead of waiting for ranks that may never arrive. abort_job(code) does so explicitly.
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
  int mpi = -1;              // StarPU-MPI: -1 STARDIFF_MPI or mpirun's environment, 0 off, 1 on
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
  bool mpi() const { return mpi_; }  // started with StarPU-MPI
  int rank() const;                  // MPI rank (0 without MPI)
  int size() const;                  // MPI ranks (1 without MPI)
  // Ends the whole job now: MPI_Abort under MPI, else _Exit(code). For drivers whose ranks
  // may have diverged (an error on one rank): the others would wait for it forever.
  [[noreturn]] void abort_job(int code) const;
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
  bool mpi_ = false;
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
bool stardiff_mpi_built();            // the StarPU-MPI runtime option is available
// Whether RuntimeOptions::mpi = -1 would start StarPU-MPI (STARDIFF_MPI, else mpirun's
// environment); Error for a STARDIFF_MPI other than 0 or 1.
bool mpi_requested_by_environment();

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
  bool distributed() const override;  // StarPU-MPI with more than one rank
  int parallel_width() const override;  // the largest combined worker (peager, pheft), else 1

 private:
  std::size_t count_ = 0;
  std::unique_ptr<TaskFailure> failure_;
};
// Under StarPU-MPI (Runtime::mpi()): StarpuExecutor submits each task with
// starpu_mpi_task_build/post_build; it runs on the owner of the first buffer it writes
// (every rank when that buffer is kEveryRank); StarPU-MPI moves the buffers. wait_all() is
// collective: it waits for every rank's tasks and communications and throws on every rank
// when a task failed on any (the failing rank names the task). Tasks that write no buffer
// run on rank 0.

// "starpu" (needs a live Runtime) or "sequential"; anything else throws Error.
std::unique_ptr<Executor> make_executor(const std::string& kind);

}  // namespace stardiff
