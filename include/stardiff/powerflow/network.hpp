// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/powerflow/network.hpp — Ybus, Sbus and the Newton variable/row numbering.
//
// Contract:
//  * Network numbers the non-isolated buses of a Case in file order (0..n-1). Its Ybus
//    follows MATPOWER's makeYbus: series admittance ys = 1/(r + jx), line charging b/2 at
//    both ends, tap t = ratio (0 -> 1) * exp(j*shift), Yff = (ys + jb/2)/|t|^2,
//    Yft = -ys/conj(t), Ytf = -ys/t, Ytt = ys + jb/2, plus bus shunts (gs + jbs)/baseMVA on
//    the diagonal. Stored in CSC (rows sorted, parallel branches summed, every diagonal
//    entry present) and, for row access, in CSR (same structure: the pattern is symmetric).
//  * make_sbus: Sbus = (sum of in-service generation at the bus - load) / baseMVA (p.u.).
//  * BusTypes follow MATPOWER's bustypes: a bus of type 2/3 without an in-service generator
//    is PQ; if the reference bus has none, the first PV bus becomes the reference.
//    Throws Error when no bus can be the reference.
//  * PfIndex: state x = [Va(pv); Va(pq); Vm(pq)], residual rows [P(pv); P(pq); Q(pq)];
//    pv and pq in increasing bus index (MATPOWER's and ExaPF's order). Row k and column k
//    belong to the same bus.
#pragma once
#include <complex>
#include <cstdint>
#include <vector>

#include "stardiff/powerflow/matpower.hpp"

namespace stardiff::powerflow {

using cplx = std::complex<double>;

struct Network {
  int n = 0;
  double base_mva = 100;
  std::vector<int> case_bus;  // network bus -> Case::buses index
  std::vector<int> net_bus;   // Case::buses index -> network bus, -1 if isolated
  // Ybus, CSC
  std::vector<std::int32_t> col_ptr, row_idx;
  std::vector<cplx> y;
  // Ybus, CSR (row i: entries (i, col_idx[k]) = y_row[k])
  std::vector<std::int32_t> row_ptr, col_idx;
  std::vector<cplx> y_row;
  std::int32_t nnz() const { return static_cast<std::int32_t>(row_idx.size()); }
};

Network make_network(const Case& c);

// Generator state used by Sbus and the Q-limit loop (one entry per Case::gens).
struct GenState {
  std::vector<double> pg, qg;     // MW, MVAr
  std::vector<char> on;           // in service (Q-limited generators are switched off)
  std::vector<double> pd, qd;     // per network bus load, MW / MVAr (Q limits move limited gens here)
};
GenState initial_gen_state(const Case& c, const Network& net);
std::vector<cplx> make_sbus(const Case& c, const Network& net, const GenState& g);

// Bus type per network bus (PQ, PV or REF), MATPOWER bustypes semantics.
std::vector<int> bus_types(const Case& c, const Network& net, const std::vector<int>& requested,
                           const GenState& g);
std::vector<int> file_bus_types(const Case& c, const Network& net);  // requested = file types

struct PfIndex {
  int n = 0;  // buses
  int ref = -1;
  std::vector<std::int32_t> pv, pq;          // increasing bus index
  std::vector<std::int32_t> va_var, vm_var;  // per bus: state index or -1
  std::vector<std::int32_t> p_row, q_row;    // per bus: residual row or -1
  std::vector<std::int32_t> row_bus;         // per row: bus
  int npv() const { return static_cast<int>(pv.size()); }
  int npq() const { return static_cast<int>(pq.size()); }
  int size() const { return npv() + 2 * npq(); }
  int npvpq() const { return npv() + npq(); }
  // k-th bus of [pv; pq]
  int pvpq(int k) const { return k < npv() ? pv[k] : pq[k - npv()]; }
};
PfIndex make_index(const std::vector<int>& types);

// V0 as MATPOWER builds it: case Vm/Va, and at PV/ref buses with an in-service generator the
// magnitude replaced by the generator's Vg (the last such generator in file order wins).
std::vector<cplx> start_voltage(const Case& c, const Network& net, const std::vector<int>& types,
                                const GenState& g, bool flat = false);

}  // namespace stardiff::powerflow
