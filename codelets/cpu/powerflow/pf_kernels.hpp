// SPDX-License-Identifier: LGPL-2.1-or-later
// codelets/cpu/powerflow/pf_kernels.hpp — power-flow kernels on plain arrays (no StarPU types).
//
// All kernels work on a block [k0, k1) of positions in the bus list [pv; pq] (PfView::pvpq).
// For position k with bus i: residual/Jacobian row P_i is k, row Q_i (PQ buses only) is
// npvpq + (k - npv). Complex arrays are interleaved (re, im) doubles.
//   pf_mismatch_cpu:  F[P_i] = Re(V_i conj((Ybus V)_i)) - Re(Sbus_i), F[Q_i] likewise Im;
//                     returns max |F| over the rows written (NaN if any is NaN).
//   pf_jacobian_analytic_cpu: the Newton Jacobian rows of the block, per non-zero, from
//                     MATPOWER's dSbus_dV formulas (CSR values, pattern of PfJacMap).
//   pf_jacobian_ad_cpu: the same rows by forward-mode AD: the residual of each bus evaluated
//                     on Dual<N> numbers seeded with the column colouring (one partial per
//                     colour), skipping partials that are structurally zero in the seeded
//                     voltages, then decompressed into the CSR values (colours c0..c0+N-1
//                     per pass; several passes when there are more colours than N).
//                     sparse = true touches only the structurally non-zero partials (the
//                     colours of the row's columns: O(degree) per row); false carries all N
//                     partials through every dual operation (the classical dense sweep).
//   pf_update_cpu:    Va(pv,pq) -= dx(...), Vm(pq) -= dx(...), then V = Vm e^{jVa} at the
//                     PV and PQ buses (MATPOWER newtonpf's update; its Vm = |V|, Va =
//                     angle(V) is done as the sign and angle folding it amounts to).
#pragma once
#include <cstdint>

namespace stardiff::cpu {

struct PfView {
  std::int32_t n = 0, npv = 0, npq = 0;
  const std::int32_t* row_ptr = nullptr;  // Ybus CSR
  const std::int32_t* col_idx = nullptr;
  const double* y = nullptr;              // interleaved complex
  const std::int32_t* pv = nullptr;
  const std::int32_t* pq = nullptr;
  const std::int32_t* va_var = nullptr;   // per bus, -1 if fixed
  const std::int32_t* vm_var = nullptr;
  const double* sbus = nullptr;           // interleaved complex
  std::int32_t npvpq() const { return npv + npq; }
  std::int32_t pvpq(std::int32_t k) const { return k < npv ? pv[k] : pq[k - npv]; }
};

// The Jacobian in CSR (rows [P(pv); P(pq); Q(pq)], columns [Va(pv); Va(pq); Vm(pq)]) and,
// per Ybus CSR entry e = (i, j), the positions of dP_i/dVa_j, dP_i/dVm_j, dQ_i/dVa_j,
// dQ_i/dVm_j in the CSR value array (-1 where the entry does not exist).
struct PfJacMap {
  const std::int32_t* row_ptr = nullptr;
  const std::int32_t* col_idx = nullptr;
  const std::int32_t* p_va = nullptr;
  const std::int32_t* p_vm = nullptr;
  const std::int32_t* q_va = nullptr;
  const std::int32_t* q_vm = nullptr;
  // colouring (AD only)
  const std::int32_t* bus_color_va = nullptr;  // per bus: colour of column Va_i, -1 if fixed
  const std::int32_t* bus_color_vm = nullptr;
  const std::int32_t* entry_color = nullptr;   // per CSR entry: colour of its column
  std::int32_t num_colors = 0;
};

// Where a block's outputs go: an entry of global index g (row of F, or CSR position of J)
// belonging to a P row is written to p[g - p_off], to a Q row to q[g - q_off]. Whole-array
// callers pass p = q = base and zero offsets.
struct PfOut {
  double* p = nullptr;
  double* q = nullptr;
  std::int32_t p_off = 0, q_off = 0;
};

double pf_mismatch_cpu(const PfView& v, const double* V, PfOut F, std::int32_t k0, std::int32_t k1);
void pf_jacobian_analytic_cpu(const PfView& v, const PfJacMap& m, const double* V, PfOut J,
                              std::int32_t k0, std::int32_t k1);
void pf_jacobian_ad_cpu(const PfView& v, const PfJacMap& m, const double* V, PfOut J,
                        std::int32_t k0, std::int32_t k1, bool sparse = true);
// Partials per pass of pf_jacobian_ad_cpu for a given number of colours.
int pf_ad_chunk(std::int32_t num_colors);
void pf_update_cpu(const PfView& v, const double* dx, double* va, double* vm, double* V);
void pf_voltage_cpu(std::int32_t n, const double* va, const double* vm, double* V);

}  // namespace stardiff::cpu
