// SPDX-License-Identifier: LGPL-2.1-or-later
// src/runtime/starpu/starpu_data.cpp — registration, acquire, partitioning of handles.
#include <starpu.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "runtime/handle_impl.hpp"
#include "runtime/starpu/starpu_codelet.hpp"
#include "runtime/starpu/mpi_layer.hpp"

namespace stardiff::detail {

static void check_live(const HandleImpl& h) {
  if (!runtime_alive() || h.generation != runtime_generation())
    throw Error("handle " + describe(h) + " was registered with a StarPU runtime that has ended");
}

static std::uint32_t u32(std::size_t v, const HandleImpl& h) {
  if (v > std::numeric_limits<std::uint32_t>::max())
    throw Error("handle " + describe(h) + ": dimension too large for StarPU (> 2^32-1)");
  return static_cast<std::uint32_t>(v);
}

void* starpu_ensure_registered(HandleImpl& h) {
  if (h.starpu != nullptr) {
    check_live(h);
  } else {
    if (h.child)
      throw Error("handle " + describe(h) +
                  " is a partition child made before the StarPU runtime started; partition again");
    if (!runtime_alive())
      throw Error("handle " + describe(h) + ": no live stardiff::Runtime to register it with");
    starpu_data_handle_t sh = nullptr;
    const BufferView& v = h.view;
    auto ptr = reinterpret_cast<uintptr_t>(v.ptr);
    switch (v.kind) {
      case HandleKind::Vector:
        if (h.managed && v.ptr == nullptr)  // no home node: StarPU allocates, may evict to disk
          starpu_vector_data_register(&sh, -1, 0, u32(v.nx, h), v.elemsize);
        else
          starpu_vector_data_register(&sh, STARPU_MAIN_RAM, ptr, u32(v.nx, h), v.elemsize);
        break;
      case HandleKind::Matrix:
        starpu_matrix_data_register(&sh, STARPU_MAIN_RAM, ptr, u32(v.ld, h), u32(v.nx, h), u32(v.ny, h),
                                    v.elemsize);
        break;
      case HandleKind::Block:
        starpu_block_data_register(&sh, STARPU_MAIN_RAM, ptr, u32(v.ld, h), u32(v.ldz, h), u32(v.nx, h),
                                   u32(v.ny, h), u32(v.nz, h), v.elemsize);
        break;
      case HandleKind::Variable:
        starpu_variable_data_register(&sh, STARPU_MAIN_RAM, ptr, v.elemsize);
        break;
    }
    if (sh == nullptr) throw Error("starpu_*_data_register failed for handle " + describe(h));
    starpu_data_set_name(sh, h.name.c_str());
    h.starpu = sh;
    h.generation = runtime_generation();
    mpi_register(h);
  }
  if (h.redux_init != nullptr && !h.redux_installed) {
    starpu_data_set_reduction_methods(static_cast<starpu_data_handle_t>(h.starpu),
                                      reduction_codelet(*h.redux_reduce), init_codelet(*h.redux_init));
    h.redux_installed = true;
  }
  return h.starpu;
}

void starpu_unregister(HandleImpl& h) noexcept {
  if (h.starpu == nullptr) return;
  if (runtime_alive() && h.generation == runtime_generation()) {
    auto sh = static_cast<starpu_data_handle_t>(h.starpu);
    if (h.managed && h.view.ptr == nullptr) starpu_data_unregister_submit(sh);  // StarPU's memory: no wait
    else starpu_data_unregister(sh);
  }
  h.starpu = nullptr;
  h.redux_installed = false;
}

void starpu_acquire(HandleImpl& h, Access mode) {
  check_live(h);
  if (mode != Access::R && mode != Access::W && mode != Access::RW)
    throw Error("acquire of handle " + describe(h) + ": only R, W or RW host access");
  if (reads(mode)) mpi_host_read(h);  // MPI: the owner's data on every rank first
  int ret = starpu_data_acquire(static_cast<starpu_data_handle_t>(h.starpu), starpu_mode(mode));
  if (ret != 0) throw Error("starpu_data_acquire failed on handle " + describe(h));
}

void* starpu_local_ptr(HandleImpl& h) {
  return starpu_data_get_local_ptr(static_cast<starpu_data_handle_t>(h.starpu));
}

void starpu_release(HandleImpl& h) noexcept {
  if (h.starpu && runtime_alive() && h.generation == runtime_generation())
    starpu_data_release(static_cast<starpu_data_handle_t>(h.starpu));
}

void starpu_drop_remote_copies(HandleImpl& h) {
  if (h.starpu == nullptr || !runtime_alive() || h.generation != runtime_generation()) return;
  mpi_cache_flush(h);
}

void starpu_partition(HandleImpl& parent, HandleImpl** children, std::size_t n) {
  auto ph = static_cast<starpu_data_handle_t>(starpu_ensure_registered(parent));
  starpu_data_filter f{};
  f.nchildren = static_cast<unsigned>(n);
  f.filter_func = parent.view.kind == HandleKind::Vector ? starpu_vector_filter_block
                                                          : starpu_matrix_filter_vertical_block;
  std::vector<starpu_data_handle_t> ch(n);
  starpu_data_partition_plan(ph, &f, ch.data());
  for (std::size_t i = 0; i < n; ++i) {
    children[i]->starpu = ch[i];
    children[i]->generation = runtime_generation();
    starpu_data_set_name(ch[i], children[i]->name.c_str());
    mpi_register(*children[i]);
  }
  starpu_data_partition_submit(ph, static_cast<unsigned>(n), ch.data());
}

void starpu_unpartition(HandleImpl& parent, HandleImpl** children, std::size_t n) noexcept {
  if (!parent.starpu || !runtime_alive() || parent.generation != runtime_generation()) return;
  std::vector<starpu_data_handle_t> ch(n);
  for (std::size_t i = 0; i < n; ++i) ch[i] = static_cast<starpu_data_handle_t>(children[i]->starpu);
  auto ph = static_cast<starpu_data_handle_t>(parent.starpu);
  starpu_data_unpartition_submit(ph, static_cast<unsigned>(n), ch.data(), STARPU_MAIN_RAM);
  starpu_data_partition_clean(ph, static_cast<unsigned>(n), ch.data());
  for (std::size_t i = 0; i < n; ++i) children[i]->starpu = nullptr;
}

}  // namespace stardiff::detail
