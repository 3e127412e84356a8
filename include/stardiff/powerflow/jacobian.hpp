// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/powerflow/jacobian.hpp — the Newton Jacobian: pattern, colouring, values.
//
// Contract:
//  * JacobianPattern is the structural pattern of J = dF/dx (rows [P(pv); P(pq); Q(pq)],
//    columns [Va(pv); Va(pq); Vm(pq)]) derived from the Ybus structure, in CSR (columns
//    sorted within a row), plus per Ybus CSR entry e = (i, j) the CSR positions of
//    dP_i/dVa_j, dP_i/dVm_j, dQ_i/dVa_j, dQ_i/dVm_j (-1 where absent).
//  * JacobianColoring holds a column colouring of that pattern and the per-bus / per-entry
//    colour maps the AD kernel reads. color_jacobian colours the pattern's CSC form with
//    forward::color_columns (generic: it detects the classes itself); color_jacobian_columns
//    colours the same column intersection graph straight from the bus graph (Ybus
//    structure: the columns of a bus form one class, the rows of a bus one row group) with
//    forward::color_compressed, without the pattern — so it can run while the pattern is
//    built; jacobian_coloring_maps then adds the maps.
//  * analytic_jacobian: values per non-zero from MATPOWER's dSbus_dV (the oracle and peer).
//    ad_jacobian: values by coloured forward-mode AD of the residual (Dual<N>, one partial
//    per colour; only the structurally non-zero partials touched, or all with dense). fd_jacobian: coloured central differences of the residual (step h).
//    All write CSR values (size nnz) at bus voltages V.
//  * to_csc converts CSR values to the CSC layout of the same matrix (pattern returned too).
//  * make_jacobian_problem builds what a Jacobian of a case at its starting point needs, in
//    MATPOWER's order: Ybus, generator state, bus types from the file (no Q-limit
//    adjustment), index, Sbus, V0 (case or flat start) and the pattern.
#pragma once
#include <cstdint>
#include <vector>

#include "stardiff/forward/coloring.hpp"
#include "stardiff/powerflow/network.hpp"

namespace stardiff::powerflow {

struct JacobianPattern {
  std::int32_t n = 0;
  std::vector<std::int32_t> row_ptr, col_idx;
  std::vector<std::int32_t> p_va, p_vm, q_va, q_vm;  // per Ybus CSR entry
  std::int32_t nnz() const { return row_ptr.empty() ? 0 : row_ptr.back(); }
  std::int32_t max_row_nnz() const;
  forward::SparsityPattern csc() const;
  // CSR position -> CSC position (to_csc permutation)
  std::vector<std::int32_t> csr_to_csc() const;
};
JacobianPattern make_jacobian_pattern(const Network& net, const PfIndex& ix);

struct JacobianProblem {
  Network net;
  GenState gen;
  std::vector<int> types;  // per network bus
  PfIndex ix;
  std::vector<cplx> sbus, v0;
  JacobianPattern pattern;
};
JacobianProblem make_jacobian_problem(const Case& c, bool flat_start = false);

struct JacobianColoring {
  forward::Coloring coloring;
  std::vector<std::int32_t> bus_color_va, bus_color_vm;  // per bus, -1 if fixed
  std::vector<std::int32_t> entry_color;                 // per CSR entry
};
JacobianColoring color_jacobian(const JacobianPattern& p, const PfIndex& ix, forward::ColorOrder order);
forward::Coloring color_jacobian_columns(const Network& net, const PfIndex& ix, forward::ColorOrder order);
JacobianColoring jacobian_coloring_maps(const JacobianPattern& p, const PfIndex& ix, forward::Coloring coloring);

void analytic_jacobian(const Network& net, const PfIndex& ix, const JacobianPattern& p, const std::vector<cplx>& sbus,
                       const std::vector<cplx>& V, std::vector<double>& values);
void ad_jacobian(const Network& net, const PfIndex& ix, const JacobianPattern& p, const JacobianColoring& c,
                 const std::vector<cplx>& sbus, const std::vector<cplx>& V, std::vector<double>& values,
                 bool dense = false);
void fd_jacobian(const Network& net, const PfIndex& ix, const JacobianPattern& p, const JacobianColoring& c,
                 const std::vector<cplx>& sbus, const std::vector<cplx>& V, double h, std::vector<double>& values);
// F(V) = [P(pv); P(pq); Q(pq)] mismatch; returns its infinity norm.
double mismatch(const Network& net, const PfIndex& ix, const std::vector<cplx>& sbus, const std::vector<cplx>& V,
                std::vector<double>& F);

}  // namespace stardiff::powerflow
