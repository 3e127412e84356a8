// SPDX-License-Identifier: LGPL-2.1-or-later
// src/runtime/starpu/mpi_layer.hpp — the StarPU-MPI seam of the runtime.
//
// Contract:
//  * libstardiff links no MPI: these functions (src/runtime/starpu/mpi_hooks.cpp) forward to
//    libstardiff_mpi (src/runtime/starpu/mpi_module.cpp, built where StarPU-MPI and MPI are
//    found), which mpi_built() / mpi_start() dlopen from libstardiff's own directory and
//    which hands its functions over as one MpiHooks table (stardiff_mpi_hooks). Without the
//    module mpi_built() is false, mpi_start() throws Error saying why and every other hook
//    is a no-op (mpi_on() stays false).
//  * mpi_start(conf) initialises MPI once per process (MPI_THREAD_SERIALIZED, finalised at
//    exit, so runtimes can be started again) and starts StarPU through starpu_mpi_init_conf;
//    mpi_stop() waits for tasks and communications and shuts StarPU-MPI and StarPU down.
//  * mpi_register(h) gives a freshly registered handle its MPI tag (one counter, so every
//    rank that registers handles in the same order gives them the same tags) and its owner.
//  * mpi_host_read(h) makes h valid on every rank (sent from its owner, StarPU-MPI's cache
//    avoiding resends) before a host read; every rank must call it at the same point.
//  * mpi_cache_flush(h) drops the copies of h held by ranks other than its owner (after
//    the owner wrote it from the host) and the owner's record of them; collective.
//  * mpi_submit(...) submits one task through starpu_mpi_task_build / _post_build: it runs on
//    the owner of the first buffer it writes; StarPU-MPI sends the other buffers there and
//    written buffers of other owners back to them.
//  * mpi_wait_all() waits for every task and communication of every rank; then
//    mpi_lowest_failed(failed_here) returns the lowest rank where a task failed (or -1);
//    both collective.
#pragma once
#include <starpu.h>

#include <cstddef>
#include <cstdint>

namespace stardiff {
struct MpiCommStats;
}
namespace stardiff::detail {
struct HandleImpl;

struct MpiHooks {
  bool (*on)();
  int (*rank)();
  int (*size)();
  int (*start)(starpu_conf*);
  void (*stop)();
  void (*register_handle)(HandleImpl&);
  void (*host_read)(HandleImpl&);
  void (*cache_flush)(HandleImpl&);
  int (*submit)(starpu_codelet*, starpu_data_handle_t*, const starpu_data_access_mode*, int, int, void*,
                std::size_t, int, const char*);
  void (*wait_all)();
  int (*lowest_failed)(bool);
  void (*comm_stats)(MpiCommStats*);
  void (*abort)(int);
};

bool mpi_built();
bool mpi_on();
int mpi_rank_now();
int mpi_size_now();
int mpi_start(starpu_conf* conf);  // starpu_mpi_init_conf's status
void mpi_stop() noexcept;
void mpi_register(HandleImpl& h);
void mpi_host_read(HandleImpl& h);
void mpi_cache_flush(HandleImpl& h);
// 0, or starpu_task_submit's error. cl_arg: the task's argument block (malloc'd or the failure
// sink when cl_arg_size is 0); freed here when another rank runs the task.
int mpi_submit(starpu_codelet* cl, starpu_data_handle_t* handles, const starpu_data_access_mode* modes, int n,
               int exec_rank, void* cl_arg, std::size_t cl_arg_size, int priority, const char* name);
void mpi_wait_all();
int mpi_lowest_failed(bool failed);
// StarPU-MPI's bytes sent from this rank to each rank (STARPU_COMM_STATS=1; else zeros).
void mpi_comm_amounts(std::size_t* per_rank);
// MPI_Abort of the whole job (with MPI on), else _Exit(code).
[[noreturn]] void mpi_abort(int code) noexcept;
}  // namespace stardiff::detail
