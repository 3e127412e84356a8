// SPDX-License-Identifier: LGPL-2.1-or-later
// src/powerflow/pf_view.hpp — builds the kernel views (cpu::PfView, cpu::PfJacMap) over
// a Network, PfIndex, Sbus, JacobianPattern and JacobianColoring (borrowed pointers).
#pragma once
#include "cpu/powerflow/pf_kernels.hpp"
#include "stardiff/powerflow/jacobian.hpp"

namespace stardiff::powerflow::detail {

inline cpu::PfView make_view(const Network& net, const PfIndex& ix, const std::vector<cplx>& sbus) {
  cpu::PfView v;
  v.n = net.n;
  v.npv = ix.npv();
  v.npq = ix.npq();
  v.row_ptr = net.row_ptr.data();
  v.col_idx = net.col_idx.data();
  v.y = reinterpret_cast<const double*>(net.y_row.data());
  v.pv = ix.pv.data();
  v.pq = ix.pq.data();
  v.va_var = ix.va_var.data();
  v.vm_var = ix.vm_var.data();
  v.sbus = reinterpret_cast<const double*>(sbus.data());
  return v;
}

inline cpu::PfJacMap make_map(const JacobianPattern& p, const JacobianColoring* c) {
  cpu::PfJacMap m;
  m.row_ptr = p.row_ptr.data();
  m.col_idx = p.col_idx.data();
  m.p_va = p.p_va.data();
  m.p_vm = p.p_vm.data();
  m.q_va = p.q_va.data();
  m.q_vm = p.q_vm.data();
  if (c) {
    m.bus_color_va = c->bus_color_va.data();
    m.bus_color_vm = c->bus_color_vm.data();
    m.entry_color = c->entry_color.data();
    m.num_colors = c->coloring.num_colors;
  }
  return m;
}

}  // namespace stardiff::powerflow::detail
