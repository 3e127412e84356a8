// SPDX-License-Identifier: LGPL-2.1-or-later
// src/powerflow/jacobian.cpp — Jacobian problem set-up, pattern, colouring maps, sequential
// evaluations.
#include "stardiff/powerflow/jacobian.hpp"

#include <algorithm>
#include <cmath>

#include "powerflow/pf_view.hpp"
#include "stardiff/runtime/error.hpp"

namespace stardiff::powerflow {
namespace {

// Calls f(col, e, is_vm) for the Jacobian columns of bus i's rows — the Va and (with_vm)
// Vm variables of its Ybus neighbours, e being the Ybus CSR entry — in the column order
// [Va(pv); Va(pq); Vm(pq)]: pv and pq lists are in increasing bus order and Ybus rows list
// their buses in increasing order, so three passes over row i emit sorted columns.
template <class F>
void row_columns(const Network& net, const PfIndex& ix, int i, bool with_vm, F&& f) {
  const std::int32_t npv = ix.npv();
  for (int pass = 0; pass < (with_vm ? 3 : 2); ++pass)
    for (std::int32_t e = net.row_ptr[i]; e < net.row_ptr[i + 1]; ++e) {
      const int j = net.col_idx[e];
      const std::int32_t col = pass == 2 ? ix.vm_var[j] : ix.va_var[j];
      if (col < 0 || (pass < 2 && (col < npv) != (pass == 0))) continue;
      f(col, e, pass == 2);
    }
}

}  // namespace

JacobianProblem make_jacobian_problem(const Case& c, bool flat_start) {
  JacobianProblem p;
  p.net = make_network(c);
  p.gen = initial_gen_state(c, p.net);
  p.types = bus_types(c, p.net, file_bus_types(c, p.net), p.gen);
  p.ix = make_index(p.types);
  p.sbus = make_sbus(c, p.net, p.gen);
  p.v0 = start_voltage(c, p.net, p.types, p.gen, flat_start);
  p.pattern = make_jacobian_pattern(p.net, p.ix);
  return p;
}

JacobianPattern make_jacobian_pattern(const Network& net, const PfIndex& ix) {
  JacobianPattern p;
  const std::int32_t n = p.n = ix.size(), npvpq = ix.npvpq();
  const std::int32_t nnzy = net.nnz();
  p.p_va.assign(nnzy, -1);
  p.p_vm.assign(nnzy, -1);
  p.q_va.assign(nnzy, -1);
  p.q_vm.assign(nnzy, -1);
  p.row_ptr.assign(n + 1, 0);
  // Row lengths: P_i and Q_i both have the Va/Vm variables of the neighbours of i.
  for (std::int32_t k = 0; k < npvpq; ++k) {
    const int i = ix.pvpq(k);
    std::int32_t c = 0;
    for (std::int32_t e = net.row_ptr[i]; e < net.row_ptr[i + 1]; ++e) {
      const int j = net.col_idx[e];
      c += (ix.va_var[j] >= 0) + (ix.vm_var[j] >= 0);
    }
    p.row_ptr[k + 1] = c;
    if (ix.q_row[i] >= 0) p.row_ptr[ix.q_row[i] + 1] = c;
  }
  for (std::int32_t r = 0; r < n; ++r) p.row_ptr[r + 1] += p.row_ptr[r];
  p.col_idx.resize(p.row_ptr[n]);
  // Each row's columns come out sorted from row_columns (a row that does not — an index
  // built otherwise — is sorted). The Q row of a PQ bus is a copy of its P row.
  struct Ent { std::int32_t col, e; bool vm; };
  std::vector<Ent> ents;
  for (std::int32_t k = 0; k < npvpq; ++k) {
    const int i = ix.pvpq(k);
    ents.clear();
    row_columns(net, ix, i, true, [&](std::int32_t col, std::int32_t e, bool vm) { ents.push_back({col, e, vm}); });
    if (!std::is_sorted(ents.begin(), ents.end(), [](const Ent& a, const Ent& b) { return a.col < b.col; }))
      std::sort(ents.begin(), ents.end(), [](const Ent& a, const Ent& b) { return a.col < b.col; });
    for (int q = 0; q < 2; ++q) {
      const std::int32_t r = q == 0 ? k : ix.q_row[i];
      if (r < 0) break;
      std::int32_t* va_slot = q == 0 ? p.p_va.data() : p.q_va.data();
      std::int32_t* vm_slot = q == 0 ? p.p_vm.data() : p.q_vm.data();
      std::int32_t pos = p.row_ptr[r];
      for (const Ent& t : ents) {
        p.col_idx[pos] = t.col;
        (t.vm ? vm_slot : va_slot)[t.e] = pos;
        ++pos;
      }
    }
  }
  return p;
}

std::int32_t JacobianPattern::max_row_nnz() const {
  std::int32_t m = 0;
  for (std::int32_t r = 0; r < n; ++r) m = std::max(m, row_ptr[r + 1] - row_ptr[r]);
  return m;
}

std::vector<std::int32_t> JacobianPattern::csr_to_csc() const {
  std::vector<std::int32_t> cp(n + 1, 0), map(nnz());
  for (std::int32_t k = 0; k < nnz(); ++k) ++cp[col_idx[k] + 1];
  for (std::int32_t j = 0; j < n; ++j) cp[j + 1] += cp[j];
  for (std::int32_t r = 0; r < n; ++r)
    for (std::int32_t k = row_ptr[r]; k < row_ptr[r + 1]; ++k) map[k] = cp[col_idx[k]]++;
  return map;
}

forward::SparsityPattern JacobianPattern::csc() const {
  forward::SparsityPattern s;
  s.n_rows = s.n_cols = n;
  s.col_ptr.assign(n + 1, 0);
  for (std::int32_t k = 0; k < nnz(); ++k) ++s.col_ptr[col_idx[k] + 1];
  for (std::int32_t j = 0; j < n; ++j) s.col_ptr[j + 1] += s.col_ptr[j];
  s.row_idx.resize(nnz());
  std::vector<std::int32_t> next(s.col_ptr.begin(), s.col_ptr.end() - 1);
  for (std::int32_t r = 0; r < n; ++r)  // rows visited in order: sorted within columns
    for (std::int32_t k = row_ptr[r]; k < row_ptr[r + 1]; ++k) s.row_idx[next[col_idx[k]]++] = r;
  return s;
}

JacobianColoring jacobian_coloring_maps(const JacobianPattern& p, const PfIndex& ix, forward::Coloring coloring) {
  if (static_cast<std::int32_t>(coloring.color.size()) != p.n)
    throw Error("jacobian_coloring_maps: colouring has " + std::to_string(coloring.color.size()) + " columns, expected " +
                std::to_string(p.n));
  JacobianColoring c;
  c.coloring = std::move(coloring);
  c.bus_color_va.assign(ix.n, -1);
  c.bus_color_vm.assign(ix.n, -1);
  for (int i = 0; i < ix.n; ++i) {
    if (ix.va_var[i] >= 0) c.bus_color_va[i] = c.coloring.color[ix.va_var[i]];
    if (ix.vm_var[i] >= 0) c.bus_color_vm[i] = c.coloring.color[ix.vm_var[i]];
  }
  c.entry_color.resize(p.nnz());
  for (std::int32_t k = 0; k < p.nnz(); ++k) c.entry_color[k] = c.coloring.color[p.col_idx[k]];
  return c;
}

JacobianColoring color_jacobian(const JacobianPattern& p, const PfIndex& ix, forward::ColorOrder order) {
  return jacobian_coloring_maps(p, ix, forward::color_columns(p.csc(), order));
}

forward::Coloring color_jacobian_columns(const Network& net, const PfIndex& ix, forward::ColorOrder order) {
  // Class k = the variables of bus pvpq(k): Va (column k) and, at a PQ bus, Vm. Row group
  // k = the rows of that bus (P and Q have the same columns): the classes of its non-
  // reference neighbours, in column order (PV neighbours, then PQ, each by bus index).
  const std::int32_t npvpq = ix.npvpq();
  forward::CompressedPattern cp;
  cp.n_cols = ix.size();
  cp.class_ptr.resize(npvpq + 1);
  cp.class_cols.reserve(cp.n_cols);
  cp.group_ptr.resize(npvpq + 1);
  cp.group_classes.reserve(static_cast<std::size_t>(net.nnz()));
  cp.class_ptr[0] = cp.group_ptr[0] = 0;
  for (std::int32_t k = 0; k < npvpq; ++k) {
    const int b = ix.pvpq(k);
    cp.class_cols.push_back(ix.va_var[b]);
    if (ix.vm_var[b] >= 0) cp.class_cols.push_back(ix.vm_var[b]);
    cp.class_ptr[k + 1] = static_cast<std::int32_t>(cp.class_cols.size());
    row_columns(net, ix, b, false, [&](std::int32_t c, std::int32_t, bool) { cp.group_classes.push_back(c); });
    cp.group_ptr[k + 1] = static_cast<std::int32_t>(cp.group_classes.size());
  }
  return forward::color_compressed(cp, order);
}

void analytic_jacobian(const Network& net, const PfIndex& ix, const JacobianPattern& p, const std::vector<cplx>& sbus,
                       const std::vector<cplx>& V, std::vector<double>& values) {
  values.assign(p.nnz(), 0.0);
  auto v = detail::make_view(net, ix, sbus);
  auto m = detail::make_map(p, nullptr);
  cpu::pf_jacobian_analytic_cpu(v, m, reinterpret_cast<const double*>(V.data()), cpu::PfOut{values.data(), values.data()}, 0,
                                ix.npvpq());
}

void ad_jacobian(const Network& net, const PfIndex& ix, const JacobianPattern& p, const JacobianColoring& c,
                 const std::vector<cplx>& sbus, const std::vector<cplx>& V, std::vector<double>& values, bool dense) {
  values.assign(p.nnz(), 0.0);
  auto v = detail::make_view(net, ix, sbus);
  auto m = detail::make_map(p, &c);
  cpu::pf_jacobian_ad_cpu(v, m, reinterpret_cast<const double*>(V.data()), cpu::PfOut{values.data(), values.data()}, 0,
                          ix.npvpq(), !dense);
}

double mismatch(const Network& net, const PfIndex& ix, const std::vector<cplx>& sbus, const std::vector<cplx>& V,
                std::vector<double>& F) {
  F.assign(ix.size(), 0.0);
  auto v = detail::make_view(net, ix, sbus);
  return cpu::pf_mismatch_cpu(v, reinterpret_cast<const double*>(V.data()), cpu::PfOut{F.data(), F.data()}, 0, ix.npvpq());
}

void fd_jacobian(const Network& net, const PfIndex& ix, const JacobianPattern& p, const JacobianColoring& c,
                 const std::vector<cplx>& sbus, const std::vector<cplx>& V, double h, std::vector<double>& values) {
  values.assign(p.nnz(), 0.0);
  const int n = net.n;
  std::vector<double> va(n), vm(n);
  for (int i = 0; i < n; ++i) {
    va[i] = std::arg(V[i]);
    vm[i] = std::abs(V[i]);
  }
  std::vector<cplx> Vp(n), Vm(n);
  std::vector<double> Fp, Fm;
  for (std::int32_t col = 0; col < c.coloring.num_colors; ++col) {
    for (int i = 0; i < n; ++i) {
      const double da = c.bus_color_va[i] == col ? h : 0.0, dm = c.bus_color_vm[i] == col ? h : 0.0;
      Vp[i] = std::polar(vm[i] + dm, va[i] + da);
      Vm[i] = std::polar(vm[i] - dm, va[i] - da);
    }
    mismatch(net, ix, sbus, Vp, Fp);
    mismatch(net, ix, sbus, Vm, Fm);
    for (std::int32_t r = 0; r < p.n; ++r)
      for (std::int32_t k = p.row_ptr[r]; k < p.row_ptr[r + 1]; ++k)
        if (c.entry_color[k] == col) values[k] = (Fp[r] - Fm[r]) / (2.0 * h);
  }
}

}  // namespace stardiff::powerflow
