// SPDX-License-Identifier: LGPL-2.1-or-later
// src/runtime/starpu/mpi_module.cpp — libstardiff_mpi, the StarPU-MPI layer (contract:
// src/runtime/starpu/mpi_layer.hpp): MPI start/stop, handle tags and owners, task submission
// across ranks. A separate module that libstardiff dlopens only when a Runtime starts with
// MPI, so libstardiff itself links neither MPI nor StarPU-MPI (binaries that link MUMPS's
// fake libmpiseq stay MPI-free). Built only where StarPU-MPI and MPI were found.
#include <atomic>
#include <climits>
#include <cstdlib>
#include <string>
#include <vector>

#define OMPI_SKIP_MPICXX 1  // the C API only: no libmpi_cxx
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#include <starpu_mpi.h>

#include "runtime/handle_impl.hpp"
#include "runtime/starpu/mpi_layer.hpp"
#include "stardiff/runtime/mpi_stats.hpp"

namespace stardiff::detail::mpi_impl {
namespace {
bool g_on = false;
int g_rank = 0, g_size = 1;
bool g_multiple = false;           // MPI_THREAD_MULTIPLE: the submitting thread may call MPI
std::int64_t g_next_tag = 1;       // registration order: the same on every rank
std::atomic<std::size_t> g_tasks_run{0};
std::atomic<std::size_t> g_messages{0};  // data sends this rank posts (StarPU-MPI's cache consulted)

// A send of h from this rank to `dest` that StarPU-MPI will post (not cached there yet).
void count_send(starpu_data_handle_t h, int dest) {
  if (dest == g_rank || dest < 0) return;
  if (!starpu_mpi_cache_is_enabled() || !starpu_mpi_cached_send(h, dest)) ++g_messages;
}

void finalize_at_exit() {
  int fin = 0;
  MPI_Finalized(&fin);
  if (!fin) MPI_Finalize();
}
}  // namespace

bool mpi_on() { return g_on; }
int mpi_rank_now() { return g_on ? g_rank : 0; }
int mpi_size_now() { return g_on ? g_size : 1; }

int mpi_start(starpu_conf* conf) {
  int inited = 0;
  MPI_Initialized(&inited);
  if (!inited) {
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
      throw Error("stardiff::Runtime: MPI_Init_thread failed");
    std::atexit(finalize_at_exit);
  }
  int provided = 0;
  MPI_Query_thread(&provided);
  if (provided < MPI_THREAD_SERIALIZED)
    throw Error("stardiff::Runtime: the MPI library gives thread level " + std::to_string(provided) +
                "; StarPU-MPI needs at least MPI_THREAD_SERIALIZED");
  g_multiple = provided >= MPI_THREAD_MULTIPLE;
  const int ret = starpu_mpi_init_conf(nullptr, nullptr, 0, MPI_COMM_WORLD, conf);
  if (ret != 0) return ret;
  starpu_mpi_comm_rank(MPI_COMM_WORLD, &g_rank);
  starpu_mpi_comm_size(MPI_COMM_WORLD, &g_size);
  g_next_tag = 1;
  g_tasks_run = 0;
  g_messages = 0;
  g_on = true;
  return 0;
}

void mpi_stop() noexcept {
  if (!g_on) return;
  starpu_mpi_shutdown();  // waits for tasks and communications, then starpu_shutdown()
  g_on = false;
}

void mpi_register(HandleImpl& h) {
  if (!g_on || h.starpu == nullptr) return;
  const int owner = h.owner == kEveryRank ? STARPU_MPI_PER_NODE : h.owner;
  if (owner != STARPU_MPI_PER_NODE && (owner < 0 || owner >= g_size))
    throw Error("handle " + describe(h) + ": owner rank " + std::to_string(h.owner) + " is not a rank of this " +
                std::to_string(g_size) + "-rank run");
  h.tag = g_next_tag++;
  starpu_mpi_data_register(static_cast<starpu_data_handle_t>(h.starpu), h.tag, owner);
}

void mpi_host_read(HandleImpl& h) {
  if (!g_on || g_size == 1 || h.starpu == nullptr || h.owner == kEveryRank) return;
  auto sh = static_cast<starpu_data_handle_t>(h.starpu);
  if (h.owner == g_rank)
    for (int r = 0; r < g_size; ++r) count_send(sh, r);
  starpu_mpi_get_data_on_all_nodes_detached(MPI_COMM_WORLD, sh);
}

void mpi_cache_flush(HandleImpl& h) {
  if (!g_on || g_size == 1 || h.starpu == nullptr || h.owner == kEveryRank) return;
  starpu_mpi_cache_flush(MPI_COMM_WORLD, static_cast<starpu_data_handle_t>(h.starpu));
}

int mpi_submit(starpu_codelet* cl, starpu_data_handle_t* handles, const starpu_data_access_mode* modes, int n,
               int exec_rank, void* cl_arg, std::size_t cl_arg_size, int priority, const char* name) {
  std::vector<starpu_data_descr> d(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    d[i].handle = handles[i];
    d[i].mode = modes[i];
  }
  const bool every = exec_rank == kEveryRank;
  if (!every && g_size > 1)
    for (int i = 0; i < n; ++i) {
      const int owner = starpu_mpi_data_get_rank(handles[i]);
      if ((modes[i] & STARPU_R) && owner == g_rank) count_send(handles[i], exec_rank);  // input to the runner
      if ((modes[i] & STARPU_W) && exec_rank == g_rank && owner != g_rank) ++g_messages;  // result to its owner
    }
  starpu_task* t = every ? starpu_mpi_task_build(MPI_COMM_WORLD, cl, STARPU_DATA_MODE_ARRAY, d.data(), n,
                                                 STARPU_PRIORITY, priority, 0)
                         : starpu_mpi_task_build(MPI_COMM_WORLD, cl, STARPU_DATA_MODE_ARRAY, d.data(), n,
                                                 STARPU_EXECUTE_ON_NODE, exec_rank, STARPU_PRIORITY, priority, 0);
  int ret = 0;
  if (t != nullptr) {
    ++g_tasks_run;
    t->cl_arg = cl_arg;
    t->cl_arg_size = cl_arg_size;
    t->cl_arg_free = cl_arg_size != 0;
    t->name = name;
    ret = starpu_task_submit(t);
    if (ret != 0) {
      t->destroy = 0;
      starpu_task_destroy(t);
    }
  } else if (cl_arg_size != 0) {
    std::free(cl_arg);  // another rank runs it with its own copy
  }
  if (every)
    starpu_mpi_task_post_build(MPI_COMM_WORLD, cl, STARPU_DATA_MODE_ARRAY, d.data(), n, STARPU_PRIORITY, priority, 0);
  else
    starpu_mpi_task_post_build(MPI_COMM_WORLD, cl, STARPU_DATA_MODE_ARRAY, d.data(), n, STARPU_EXECUTE_ON_NODE,
                               exec_rank, STARPU_PRIORITY, priority, 0);
  return ret;
}

void mpi_wait_all() { starpu_mpi_wait_for_all(MPI_COMM_WORLD); }

int mpi_lowest_failed(bool failed) {
  if (g_size == 1 || !g_multiple) return failed ? g_rank : -1;
  int mine = failed ? g_rank : INT_MAX, lowest = INT_MAX;
  MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return lowest == INT_MAX ? -1 : lowest;
}

void mpi_comm_amounts(std::size_t* per_rank) {
  if (!g_on) return;
  starpu_mpi_comm_amounts_retrieve(per_rank);
}

void comm_stats(MpiCommStats* s) {
  if (!g_on) return;
  s->rank = g_rank;
  s->bytes_to.assign(static_cast<std::size_t>(g_size), 0);
  mpi_comm_amounts(s->bytes_to.data());
  s->messages = g_messages;
  s->tasks_run = g_tasks_run;
}
void mpi_abort(int code) noexcept {
  if (g_on) MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}
}  // namespace stardiff::detail::mpi_impl

extern "C" __attribute__((visibility("default"))) const stardiff::detail::MpiHooks* stardiff_mpi_hooks() {
  using namespace stardiff::detail::mpi_impl;
  static const stardiff::detail::MpiHooks hooks{
      &mpi_on, &mpi_rank_now, &mpi_size_now, &mpi_start, &mpi_stop, &mpi_register, &mpi_host_read,
      &mpi_cache_flush, &mpi_submit, &mpi_wait_all, &mpi_lowest_failed, &comm_stats, &mpi_abort};
  return &hooks;
}
