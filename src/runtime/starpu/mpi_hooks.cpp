// SPDX-License-Identifier: LGPL-2.1-or-later
// src/runtime/starpu/mpi_hooks.cpp — libstardiff's side of the StarPU-MPI seam: forwards to
// libstardiff_mpi, dlopened on first need (contract: src/runtime/starpu/mpi_layer.hpp).
#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include "runtime/handle_impl.hpp"
#include "runtime/starpu/mpi_layer.hpp"
#include "stardiff/runtime/mpi_stats.hpp"

namespace stardiff::detail {
namespace {
const MpiHooks* g_hooks = nullptr;
std::string g_why;  // why the module could not be loaded

const MpiHooks* load() {
  static std::once_flag once;
  std::call_once(once, [] {
#ifndef STARDIFF_MPI_MODULE
    g_why = "this stardiff was built without StarPU-MPI (pkg-config starpumpi-1.3 and an MPI C library not "
            "found at configure time, or STARDIFF_WITH_MPI=OFF)";
#else
    Dl_info info{};
    std::string path = STARDIFF_MPI_MODULE;
    if (dladdr(reinterpret_cast<void*>(&load), &info) != 0 && info.dli_fname) {
      const std::string self = info.dli_fname;
      const auto slash = self.rfind('/');
      if (slash != std::string::npos) path = self.substr(0, slash + 1) + STARDIFF_MPI_MODULE;
    }
    void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* e = dlerror();
      g_why = "cannot load the StarPU-MPI module " + path + ": " + (e ? e : "?");
      return;
    }
    auto entry = reinterpret_cast<const MpiHooks* (*)()>(dlsym(lib, "stardiff_mpi_hooks"));
    if (!entry) {
      g_why = "the StarPU-MPI module " + path + " has no stardiff_mpi_hooks";
      return;
    }
    g_hooks = entry();
#endif
  });
  return g_hooks;
}
}  // namespace

bool mpi_built() { return load() != nullptr; }
bool mpi_on() { return g_hooks && g_hooks->on(); }
int mpi_rank_now() { return g_hooks ? g_hooks->rank() : 0; }
int mpi_size_now() { return g_hooks ? g_hooks->size() : 1; }
int mpi_start(starpu_conf* conf) {
  if (!load()) throw Error("stardiff::Runtime: MPI was requested (RuntimeOptions::mpi or STARDIFF_MPI=1) but " + g_why);
  return g_hooks->start(conf);
}
void mpi_stop() noexcept {
  if (g_hooks) g_hooks->stop();
}
void mpi_register(HandleImpl& h) {
  if (g_hooks) g_hooks->register_handle(h);
}
void mpi_host_read(HandleImpl& h) {
  if (g_hooks) g_hooks->host_read(h);
}
void mpi_cache_flush(HandleImpl& h) {
  if (g_hooks) g_hooks->cache_flush(h);
}
int mpi_submit(starpu_codelet* cl, starpu_data_handle_t* handles, const starpu_data_access_mode* modes, int n,
               int exec_rank, void* cl_arg, std::size_t cl_arg_size, int priority, const char* name) {
  if (!g_hooks) throw Error("StarPU-MPI submission without StarPU-MPI");
  return g_hooks->submit(cl, handles, modes, n, exec_rank, cl_arg, cl_arg_size, priority, name);
}
void mpi_wait_all() {
  if (g_hooks) g_hooks->wait_all();
}
int mpi_lowest_failed(bool failed) {
  if (g_hooks) return g_hooks->lowest_failed(failed);
  return failed ? 0 : -1;
}
void mpi_comm_amounts(std::size_t*) {}
void mpi_abort(int code) noexcept {
  if (g_hooks) g_hooks->abort(code);
  std::_Exit(code);
}
}  // namespace stardiff::detail

namespace stardiff {
MpiCommStats mpi_comm_stats() {
  MpiCommStats s;
  if (detail::g_hooks) detail::g_hooks->comm_stats(&s);
  return s;
}
}  // namespace stardiff
