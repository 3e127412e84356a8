// SPDX-License-Identifier: LGPL-2.1-or-later
// src/powerflow/network.cpp — Ybus (makeYbus), Sbus (makeSbus), bustypes, Newton indexing.
#include "stardiff/powerflow/network.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "stardiff/runtime/error.hpp"

namespace stardiff::powerflow {

Network make_network(const Case& c) {
  Network net;
  net.base_mva = c.base_mva;
  net.net_bus.assign(c.buses.size(), -1);
  for (std::size_t i = 0; i < c.buses.size(); ++i)
    if (c.buses[i].type != ISOLATED) {
      net.net_bus[i] = static_cast<int>(net.case_bus.size());
      net.case_bus.push_back(static_cast<int>(i));
    }
  const int n = net.n = static_cast<int>(net.case_bus.size());

  // Entries in MATPOWER's triplet order (each bus's shunt, then per branch (f,f), (f,t),
  // (t,f), (t,t)) go straight into their rows: the diagonal accumulates in that order, the
  // off-diagonals of a row are kept in that order, stably sorted by column and summed where
  // they repeat (parallel branches) — the same sums, in the same order, as assembling the
  // triplets.
  std::vector<cplx> diag(n);
  for (int i = 0; i < n; ++i) {
    const Bus& b = c.buses[net.case_bus[i]];
    diag[i] = cplx(b.gs, b.bs) / c.base_mva;
  }
  std::vector<std::int32_t> start(n + 1, 0);
  for (const Branch& br : c.branches) {
    const int f = net.net_bus[br.from], to = net.net_bus[br.to];
    if (f != to) ++start[f + 1], ++start[to + 1];
  }
  for (int i = 0; i < n; ++i) start[i + 1] += start[i];
  struct Off { std::int32_t col; cplx v; };
  std::vector<Off> off(start[n]);
  std::vector<std::int32_t> fill(start.begin(), start.end() - 1);
  auto add = [&](int r, int col, cplx v) {
    if (r == col) diag[r] += v;
    else off[fill[r]++] = {col, v};
  };
  const double deg = M_PI / 180.0;
  for (const Branch& br : c.branches) {
    const int f = net.net_bus[br.from], to = net.net_bus[br.to];
    // MATPOWER: Ys = 1/(r + jx), tap = ratio e^{j angle}, Ytt = Ys + j b/2,
    // Yff = Ytt / |tap|^2, Yft = -Ys / conj(tap), Ytf = -Ys / tap — in real arithmetic
    // (1/conj(tap) = tap/|tap|^2), which avoids libgcc's general complex division.
    const double zz = br.r * br.r + br.x * br.x;
    const cplx ys(br.r / zz, -br.x / zz);
    const double ratio = br.ratio != 0.0 ? br.ratio : 1.0, t2 = ratio * ratio;
    const cplx unit = br.angle != 0.0 ? cplx(std::cos(deg * br.angle), std::sin(deg * br.angle)) : cplx(1.0, 0.0);
    const cplx tap_over_t2 = unit / ratio;  // tap / |tap|^2
    const cplx ytt = ys + cplx(0.0, br.b / 2.0);
    const cplx yff(ytt.real() / t2, ytt.imag() / t2);
    const cplx yft = -(ys * tap_over_t2);
    const cplx ytf = -(ys * std::conj(tap_over_t2));
    add(f, f, yff);
    add(f, to, yft);
    add(to, f, ytf);
    add(to, to, ytt);
  }
  // CSR: per row, sort the off-diagonals by column (stable insertion sort: rows are short),
  // sum repeats, and place the diagonal.
  net.row_ptr.assign(n + 1, 0);
  net.col_idx.reserve(off.size() + n);
  net.y_row.reserve(off.size() + n);
  for (int i = 0; i < n; ++i) {
    Off* rb = off.data() + start[i];
    Off* re = off.data() + start[i + 1];
    for (Off* a = rb + 1; a < re; ++a) {
      const Off key = *a;
      Off* q = a;
      while (q > rb && (q - 1)->col > key.col) *q = *(q - 1), --q;
      *q = key;
    }
    bool diag_done = false;
    for (Off* a = rb; a < re; ++a) {
      if (!diag_done && a->col > i) net.col_idx.push_back(i), net.y_row.push_back(diag[i]), diag_done = true;
      if (a > rb && (a - 1)->col == a->col) {
        net.y_row.back() += a->v;
        continue;
      }
      net.col_idx.push_back(a->col);
      net.y_row.push_back(a->v);
    }
    if (!diag_done) net.col_idx.push_back(i), net.y_row.push_back(diag[i]);
    net.row_ptr[i + 1] = static_cast<std::int32_t>(net.col_idx.size());
  }
  // CSC by transposition (rows come out sorted within each column).
  const std::int32_t nnz = net.row_ptr[n];
  net.col_ptr.assign(n + 1, 0);
  for (std::int32_t k = 0; k < nnz; ++k) ++net.col_ptr[net.col_idx[k] + 1];
  for (int j = 0; j < n; ++j) net.col_ptr[j + 1] += net.col_ptr[j];
  net.row_idx.resize(nnz);
  net.y.resize(nnz);
  std::vector<std::int32_t> next(net.col_ptr.begin(), net.col_ptr.end() - 1);
  for (int i = 0; i < n; ++i)
    for (std::int32_t k = net.row_ptr[i]; k < net.row_ptr[i + 1]; ++k) {
      const std::int32_t p = next[net.col_idx[k]]++;
      net.row_idx[p] = i;
      net.y[p] = net.y_row[k];
    }
  return net;
}

GenState initial_gen_state(const Case& c, const Network& net) {
  GenState g;
  g.pg.resize(c.gens.size());
  g.qg.resize(c.gens.size());
  g.on.assign(c.gens.size(), 1);
  for (std::size_t k = 0; k < c.gens.size(); ++k) {
    g.pg[k] = c.gens[k].pg;
    g.qg[k] = c.gens[k].qg;
  }
  g.pd.resize(net.n);
  g.qd.resize(net.n);
  for (int i = 0; i < net.n; ++i) {
    g.pd[i] = c.buses[net.case_bus[i]].pd;
    g.qd[i] = c.buses[net.case_bus[i]].qd;
  }
  return g;
}

std::vector<cplx> make_sbus(const Case& c, const Network& net, const GenState& g) {
  std::vector<cplx> s(net.n);
  for (std::size_t k = 0; k < c.gens.size(); ++k)
    if (g.on[k]) s[net.net_bus[c.gens[k].bus]] += cplx(g.pg[k], g.qg[k]);
  for (int i = 0; i < net.n; ++i) s[i] = (s[i] - cplx(g.pd[i], g.qd[i])) / c.base_mva;
  return s;
}

std::vector<int> file_bus_types(const Case& c, const Network& net) {
  std::vector<int> t(net.n);
  for (int i = 0; i < net.n; ++i) t[i] = c.buses[net.case_bus[i]].type;
  return t;
}

std::vector<int> bus_types(const Case& c, const Network& net, const std::vector<int>& requested,
                           const GenState& g) {
  std::vector<char> has_gen(net.n, 0);
  for (std::size_t k = 0; k < c.gens.size(); ++k)
    if (g.on[k]) has_gen[net.net_bus[c.gens[k].bus]] = 1;
  std::vector<int> t(net.n, PQ);
  int ref = -1;
  for (int i = 0; i < net.n; ++i) {
    if (requested[i] == REF && has_gen[i] && ref < 0) { t[i] = REF; ref = i; }
    else if ((requested[i] == PV || requested[i] == REF) && has_gen[i]) t[i] = PV;
  }
  if (ref < 0) {
    for (int i = 0; i < net.n; ++i)
      if (t[i] == PV) { t[i] = REF; ref = i; break; }
    if (ref < 0)
      throw Error(c.file + ": no reference bus: the type-3 bus has no in-service generator and there is no PV bus "
                           "with one");
  }
  return t;
}

PfIndex make_index(const std::vector<int>& types) {
  PfIndex ix;
  ix.n = static_cast<int>(types.size());
  for (int i = 0; i < ix.n; ++i) {
    if (types[i] == REF) ix.ref = i;
    else if (types[i] == PV) ix.pv.push_back(i);
    else ix.pq.push_back(i);
  }
  ix.va_var.assign(ix.n, -1);
  ix.vm_var.assign(ix.n, -1);
  ix.p_row.assign(ix.n, -1);
  ix.q_row.assign(ix.n, -1);
  const int npv = ix.npv(), npq = ix.npq();
  ix.row_bus.resize(ix.size());
  for (int k = 0; k < npv + npq; ++k) {
    int b = ix.pvpq(k);
    ix.va_var[b] = k;
    ix.p_row[b] = k;
    ix.row_bus[k] = b;
  }
  for (int k = 0; k < npq; ++k) {
    int b = ix.pq[k];
    ix.vm_var[b] = npv + npq + k;
    ix.q_row[b] = npv + npq + k;
    ix.row_bus[npv + npq + k] = b;
  }
  return ix;
}

std::vector<cplx> start_voltage(const Case& c, const Network& net, const std::vector<int>& types,
                                const GenState& g, bool flat) {
  std::vector<cplx> v(net.n);
  const double deg = M_PI / 180.0;
  const double va_ref = c.buses[c.ref].va;
  for (int i = 0; i < net.n; ++i) {
    const Bus& b = c.buses[net.case_bus[i]];
    v[i] = flat ? std::polar(1.0, deg * va_ref) : b.vm * std::exp(cplx(0.0, deg * b.va));
  }
  for (std::size_t k = 0; k < c.gens.size(); ++k) {
    if (!g.on[k]) continue;
    const int i = net.net_bus[c.gens[k].bus];
    if (types[i] == PQ) continue;
    v[i] = c.gens[k].vg / std::abs(v[i]) * v[i];
  }
  return v;
}

}  // namespace stardiff::powerflow
