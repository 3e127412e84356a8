// SPDX-License-Identifier: LGPL-2.1-or-later
// src/powerflow/q_limits.cpp — MATPOWER's Q-limit rounds (enforce_q_lims = 1, legacy runpf)
// between Newton solves: pfsoln's generator Q, then the violators switched to PQ.
#include <algorithm>
#include <cmath>
#include <limits>

#include "powerflow/newton_internal.hpp"

namespace stardiff::powerflow::detail {

namespace {

// pfsoln: generator Q (and the reference generator's P) from the solved voltages.
void update_generators(const Case& c, const Network& net, const std::vector<int>& types, const std::vector<cplx>& V,
                       GenState& g) {
  const double base = c.base_mva, eps = std::numeric_limits<double>::epsilon();
  std::vector<int> on;
  for (std::size_t k = 0; k < c.gens.size(); ++k)
    if (g.on[k]) on.push_back(static_cast<int>(k));
  auto injection = [&](int i) {
    cplx s = 0;
    for (std::int32_t e = net.row_ptr[i]; e < net.row_ptr[i + 1]; ++e) s += net.y_row[e] * V[net.col_idx[e]];
    return V[i] * std::conj(s);
  };
  std::vector<cplx> sinj(net.n);
  std::vector<char> need(net.n, 0);
  for (int k : on) need[net.net_bus[c.gens[k].bus]] = 1;
  for (int i = 0; i < net.n; ++i)
    if (need[i]) sinj[i] = injection(i);
  for (int k : on) {
    const int i = net.net_bus[c.gens[k].bus];
    g.qg[k] = sinj[i].imag() * base + g.qd[i];
  }
  if (on.size() > 1) {
    std::vector<double> ngg(net.n, 0), mbus(net.n, 0), tot(net.n, 0), qmin_b(net.n, 0), qmax_b(net.n, 0);
    for (int k : on) ngg[net.net_bus[c.gens[k].bus]] += 1;
    for (int k : on) g.qg[k] /= ngg[net.net_bus[c.gens[k].bus]];
    std::vector<double> qmin(c.gens.size()), qmax(c.gens.size());
    for (int k : on) {
      const Gen& gk = c.gens[k];
      double m = std::fabs(g.qg[k]);
      if (!std::isinf(gk.qmax)) m += std::fabs(gk.qmax);
      if (!std::isinf(gk.qmin)) m += std::fabs(gk.qmin);
      mbus[net.net_bus[gk.bus]] += m;
    }
    for (int k : on) {
      const Gen& gk = c.gens[k];
      const int i = net.net_bus[gk.bus];
      qmin[k] = std::isinf(gk.qmin) ? (gk.qmin > 0 ? mbus[i] : -mbus[i]) : gk.qmin;
      qmax[k] = std::isinf(gk.qmax) ? (gk.qmax > 0 ? mbus[i] : -mbus[i]) : gk.qmax;
      tot[i] += g.qg[k];
      qmin_b[i] += qmin[k];
      qmax_b[i] += qmax[k];
    }
    for (int k : on) {
      const int i = net.net_bus[c.gens[k].bus];
      if (std::fabs(qmin_b[i] - qmax_b[i]) < 10 * eps) g.qg[k] = qmin[k] + (tot[i] - qmin_b[i]) / ngg[i];
      else g.qg[k] = qmin[k] + (tot[i] - qmin_b[i]) / (qmax_b[i] - qmin_b[i] + eps) * (qmax[k] - qmin[k]);
    }
  }
  // Reference generator(s): the first takes the bus injection plus load minus the others.
  int ref = -1;
  for (int i = 0; i < net.n; ++i)
    if (types[i] == REF) ref = i;
  int first = -1;
  double others = 0;
  for (int k : on)
    if (net.net_bus[c.gens[k].bus] == ref) {
      if (first < 0) first = k;
      else others += g.pg[k];
    }
  if (first >= 0) g.pg[first] = sinj[ref].real() * base + g.pd[ref] - others;
}

}  // namespace

QLimitRound q_limit_round(const Case& c, const Network& net, const std::vector<cplx>& V, GenState& g,
                          std::vector<int>& requested, std::vector<int>& types) {
  update_generators(c, net, types, V, g);
  const double tolq = 5e-6;
  std::vector<int> mx, mn;
  for (std::size_t k = 0; k < c.gens.size(); ++k) {
    if (!g.on[k]) continue;
    if (g.qg[k] > c.gens[k].qmax + tolq) mx.push_back(static_cast<int>(k));
    else if (g.qg[k] < c.gens[k].qmin - tolq) mn.push_back(static_cast<int>(k));
  }
  if (mx.empty() && mn.empty()) return QLimitRound::NoViolation;
  // Infeasible: every remaining PV/ref generator violates, all on the same side.
  std::vector<int> remaining, infeas(mx);
  infeas.insert(infeas.end(), mn.begin(), mn.end());
  std::sort(infeas.begin(), infeas.end());
  for (std::size_t k = 0; k < c.gens.size(); ++k)
    if (g.on[k] && types[net.net_bus[c.gens[k].bus]] != PQ) remaining.push_back(static_cast<int>(k));
  if (infeas == remaining && (mx.empty() || mn.empty())) return QLimitRound::Infeasible;
  for (int k : mx) g.qg[k] = c.gens[k].qmax;
  for (int k : mn) g.qg[k] = c.gens[k].qmin;
  std::vector<int> lim(mx);
  lim.insert(lim.end(), mn.begin(), mn.end());
  for (int k : lim) {
    const int i = net.net_bus[c.gens[k].bus];
    g.on[k] = 0;
    g.pd[i] -= g.pg[k];
    g.qd[i] -= g.qg[k];
    requested[i] = PQ;
  }
  const int ref_before = static_cast<int>(std::find(types.begin(), types.end(), int(REF)) - types.begin());
  types = bus_types(c, net, requested, g);
  const int ref_now = static_cast<int>(std::find(types.begin(), types.end(), int(REF)) - types.begin());
  if (ref_now != ref_before)
    for (int i = 0; i < net.n; ++i)
      if (types[i] != PQ) requested[i] = types[i];
  return QLimitRound::Switched;
}

}  // namespace stardiff::powerflow::detail
