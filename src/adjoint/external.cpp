// SPDX-License-Identifier: LGPL-2.1-or-later
// src/adjoint/external.cpp — the non-template parts of external functions (see external.hpp).
#include "stardiff/adjoint/external.hpp"

#include "starpu/mesh/cl_halo.hpp"

namespace stardiff::detail_ext {

void throw_not_held(const mesh::DatBase& d, int row, int tile_lo, int tile_hi) {
  throw Error("external function: dat '" + d.name() + "' row " + std::to_string(row) +
              " (outer axis) is not held by tiles [" + std::to_string(tile_lo) + ", " + std::to_string(tile_hi) +
              ") of this task");
}

void fill_tile_info(const mesh::DatBase& d, int t, void* p, TileInfo& out) {
  const int o = d.dims() - 1, nt = d.tiles();
  out.p = p;
  out.g = d.geom(t);
  out.held_lo = d.tile_first_row(t);
  out.held_hi = out.held_lo + static_cast<int>(d.tile_rows(t));
  out.own_lo = t == 0 ? out.held_lo : out.held_lo + d.d_m(o);
  out.own_hi = t == nt - 1 ? out.held_hi : out.held_hi - d.d_p(o);
}

void submit_copy(Executor& ex, Handle& src, Handle& dst, std::size_t bytes, const std::string& name) {
  codelets::insert_rows_copy(ex, src, 0, dst, 0, bytes, true, name);
}

RunningGuard::RunningGuard(const char* name) : prev_(mesh::running_external()) { mesh::set_running_external(name); }
RunningGuard::~RunningGuard() { mesh::set_running_external(prev_); }

void check_args(const std::string& name, const std::vector<LoopArgDesc>& desc, const mesh::Block& block) {
  for (std::size_t i = 0; i < desc.size(); ++i) {
    const LoopArgDesc& d = desc[i];
    const std::string arg = "execute_external '" + name + "': argument " + std::to_string(i);
    if (d.kind == LoopArgDesc::Kind::Dat)
      require(&d.dat->block() == &block, arg + " (dat '" + d.dat->name() + "') belongs to another block than '" +
                                             block.name() + "'");
    if (d.kind == LoopArgDesc::Kind::Reduce)
      require(&d.red->block() == &block, arg + " (reduction '" + d.red->name() + "') belongs to another block");
    if (d.kind == LoopArgDesc::Kind::Scalar)
      require(&d.scalar->block() == &block, arg + " (scalar '" + d.scalar->name() + "') belongs to another block");
  }
  for (std::size_t p = 0; p < desc.size(); ++p)
    for (std::size_t q = 0; q < desc.size(); ++q)
      if (p != q && desc[p].writes() && desc[q].kind == LoopArgDesc::Kind::Dat && desc[q].dat == desc[p].dat)
        throw Error("execute_external '" + name + "': dat '" + desc[p].dat->name() + "' is written by argument " +
                    std::to_string(p) + " and also passed as argument " + std::to_string(q));
}

bool is_active(const std::vector<LoopArgDesc>& desc) {
  for (const auto& d : desc) {
    if (d.kind == LoopArgDesc::Kind::Dat && d.dat->active()) return true;
    if (d.kind == LoopArgDesc::Kind::Reduce || d.kind == LoopArgDesc::Kind::Scalar) return true;
  }
  return false;
}

}  // namespace stardiff::detail_ext
