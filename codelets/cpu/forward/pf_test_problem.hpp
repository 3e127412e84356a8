// codelets/cpu/forward/pf_test_problem.hpp — a power-flow-shaped test problem for the
// forward module's tests and benchmark (the powerflow module owns the real reader/Ybus):
//  * read_pf_pattern: minimal parse of a MATPOWER case's bus/gen/branch matrices (bus id
//    and type, generator bus and status, branch ends and status); MATPOWER bus types
//    (PV/REF buses without an in-service generator count as PQ); the Newton Jacobian
//    pattern with rows [P(pv,pq); Q(pq)] and columns [Va(pv,pq); Vm(pq)], pv then pq in
//    bus order, each block the Ybus pattern (diagonal plus in-service branch ends).
//  * random_network: random G, B on that Ybus pattern, random injections and voltages.
//  * PfResidual: the polar power-balance residual written once on the scalar type.
//  * analytic_jacobian: the per-non-zero dS/dV formulas, CSC layout of the pattern.
// Throws std::runtime_error on files it cannot read.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "stardiff/forward/coloring.hpp"
#include "stardiff/forward/row_range.hpp"

namespace stardiff::forward::test_problems {

struct PfPattern {
  std::int32_t nbus = 0;
  std::vector<std::int32_t> ybus_ptr, ybus_col;  // CSR Ybus structure (sorted, with diagonal)
  std::vector<std::int32_t> pv, pq;              // bus indices
  std::int32_t ref = -1;
  std::size_t npvpq = 0;
  SparsityPattern pattern;
};

inline std::vector<std::vector<double>> read_matpower_matrix(const std::string& text, const std::string& name) {
  const auto at = text.find("mpc." + name + " = [");
  if (at == std::string::npos) throw std::runtime_error("no mpc." + name);
  const auto end = text.find("];", at);
  std::istringstream in(text.substr(text.find('[', at) + 1, end - text.find('[', at) - 1));
  std::vector<std::vector<double>> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (auto c = line.find('%'); c != std::string::npos) line.resize(c);
    std::replace(line.begin(), line.end(), ';', ' ');
    std::istringstream ls(line);
    std::vector<double> r;
    std::string tok;
    while (ls >> tok) {  // strtod: MATPOWER files hold Inf / -Inf limits
      char* stop = nullptr;
      r.push_back(std::strtod(tok.c_str(), &stop));
      if (stop == tok.c_str() || *stop) throw std::runtime_error("mpc." + name + ": bad number '" + tok + "'");
    }
    if (!r.empty()) rows.push_back(std::move(r));
  }
  return rows;
}

inline PfPattern read_pf_pattern(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot open " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string text = ss.str();
  const auto bus = read_matpower_matrix(text, "bus");
  const auto gen = read_matpower_matrix(text, "gen");
  const auto branch = read_matpower_matrix(text, "branch");
  PfPattern pf;
  pf.nbus = static_cast<std::int32_t>(bus.size());
  for (const auto& b : bus)
    if (b.size() < 13) throw std::runtime_error(path + ": short bus row");
  for (const auto& g : gen)
    if (g.size() < 10) throw std::runtime_error(path + ": short gen row");
  for (const auto& b : branch)
    if (b.size() < 11) throw std::runtime_error(path + ": short branch row");
  std::map<long, std::int32_t> index;
  for (std::int32_t i = 0; i < pf.nbus; ++i) index[long(bus[i][0])] = i;
  std::vector<char> has_gen(pf.nbus, 0);
  for (const auto& g : gen)
    if (g[7] > 0) has_gen[index.at(long(g[0]))] = 1;
  for (std::int32_t i = 0; i < pf.nbus; ++i) {
    const int type = int(bus[i][1]);
    if (type == 3 && has_gen[i] && pf.ref < 0) pf.ref = i;
    else if (type == 2 && has_gen[i]) pf.pv.push_back(i);
    else if (type != 4) pf.pq.push_back(i);
  }
  std::vector<std::vector<std::int32_t>> adj(pf.nbus);
  for (std::int32_t i = 0; i < pf.nbus; ++i) adj[i].push_back(i);
  for (const auto& b : branch) {
    if (b[10] <= 0) continue;
    const std::int32_t a = index.at(long(b[0])), c = index.at(long(b[1]));
    adj[a].push_back(c);
    adj[c].push_back(a);
  }
  pf.ybus_ptr.assign(1, 0);
  for (auto& a : adj) {
    std::sort(a.begin(), a.end());
    a.erase(std::unique(a.begin(), a.end()), a.end());
    pf.ybus_col.insert(pf.ybus_col.end(), a.begin(), a.end());
    pf.ybus_ptr.push_back(static_cast<std::int32_t>(pf.ybus_col.size()));
  }
  // variable / equation numbering
  std::vector<std::int32_t> va(pf.nbus, -1), vm(pf.nbus, -1);
  std::int32_t n = 0;
  for (auto i : pf.pv) va[i] = n++;
  for (auto i : pf.pq) va[i] = n++;
  pf.npvpq = static_cast<std::size_t>(n);
  for (auto i : pf.pq) vm[i] = n++;
  // rows: P(i) has index va[i] (same numbering), Q(i) has index vm[i]
  std::vector<std::int32_t> rows, cols;
  for (std::int32_t i = 0; i < pf.nbus; ++i) {
    for (std::int32_t e = pf.ybus_ptr[i]; e < pf.ybus_ptr[i + 1]; ++e) {
      const std::int32_t k = pf.ybus_col[e];
      for (std::int32_t r : {va[i], vm[i]})
        for (std::int32_t c : {va[k], vm[k]})
          if (r >= 0 && c >= 0) rows.push_back(r), cols.push_back(c);
    }
  }
  pf.pattern = pattern_from_coo(n, n, rows, cols);
  return pf;
}

struct PfNetwork {
  std::int32_t nbus = 0;
  std::vector<std::int32_t> ybus_ptr, ybus_col;
  std::vector<double> G, B;             // Ybus values (CSR)
  std::vector<double> vm0, va0;         // fixed voltages (ref / pv Vm)
  std::vector<double> pspec, qspec;
  std::vector<std::int32_t> va_idx, vm_idx;  // bus -> x index, -1 if fixed
  std::vector<std::int32_t> row_bus;         // residual row -> bus
  std::vector<char> row_is_q;
};

inline PfNetwork random_network(const PfPattern& pf, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  PfNetwork net;
  net.nbus = pf.nbus;
  net.ybus_ptr = pf.ybus_ptr;
  net.ybus_col = pf.ybus_col;
  net.G.resize(pf.ybus_col.size());
  net.B.resize(pf.ybus_col.size());
  for (std::size_t e = 0; e < net.G.size(); ++e) net.G[e] = u(rng), net.B[e] = 10 * u(rng);
  net.vm0.resize(pf.nbus);
  net.va0.resize(pf.nbus);
  net.pspec.resize(pf.nbus);
  net.qspec.resize(pf.nbus);
  for (std::int32_t i = 0; i < pf.nbus; ++i)
    net.vm0[i] = 1 + 0.05 * u(rng), net.va0[i] = 0.1 * u(rng), net.pspec[i] = u(rng), net.qspec[i] = u(rng);
  net.va_idx.assign(pf.nbus, -1);
  net.vm_idx.assign(pf.nbus, -1);
  std::int32_t n = 0;
  for (auto i : pf.pv) net.va_idx[i] = n++;
  for (auto i : pf.pq) net.va_idx[i] = n++;
  for (auto i : pf.pq) net.vm_idx[i] = n++;
  net.row_bus.resize(n);
  net.row_is_q.resize(n);
  for (std::int32_t i = 0; i < pf.nbus; ++i) {
    if (net.va_idx[i] >= 0) net.row_bus[net.va_idx[i]] = i, net.row_is_q[net.va_idx[i]] = 0;
    if (net.vm_idx[i] >= 0) net.row_bus[net.vm_idx[i]] = i, net.row_is_q[net.vm_idx[i]] = 1;
  }
  return net;
}

// P_i = sum_k V_i V_k (G cos(t_i - t_k) + B sin(t_i - t_k)) - pspec_i,
// Q_i = sum_k V_i V_k (G sin(t_i - t_k) - B cos(t_i - t_k)) - qspec_i.
struct PfResidual {
  const PfNetwork* net = nullptr;
  template <class S>
  void operator()(RowRange rows, const S* x, S* f) const {
    const PfNetwork& N = *net;
    auto vm = [&](std::int32_t k) { return N.vm_idx[k] >= 0 ? x[N.vm_idx[k]] : S(N.vm0[k]); };
    auto va = [&](std::int32_t k) { return N.va_idx[k] >= 0 ? x[N.va_idx[k]] : S(N.va0[k]); };
    for (std::int32_t r = rows.begin; r < rows.end; ++r) {
      const std::int32_t i = N.row_bus[r];
      const S vi = vm(i), ti = va(i);
      S acc = 0.0;
      for (std::int32_t e = N.ybus_ptr[i]; e < N.ybus_ptr[i + 1]; ++e) {
        const std::int32_t k = N.ybus_col[e];
        const S t = ti - va(k);
        S s, c;
        sin_cos(t, s, c);
        acc += vm(k) * (N.row_is_q[r] ? N.G[e] * s - N.B[e] * c : N.G[e] * c + N.B[e] * s);
      }
      f[r] = vi * acc - (N.row_is_q[r] ? N.qspec[i] : N.pspec[i]);
    }
  }
};

inline std::vector<double> analytic_jacobian(const PfNetwork& N, const SparsityPattern& p, const std::vector<double>& x) {
  auto vm = [&](std::int32_t k) { return N.vm_idx[k] >= 0 ? x[N.vm_idx[k]] : N.vm0[k]; };
  auto va = [&](std::int32_t k) { return N.va_idx[k] >= 0 ? x[N.va_idx[k]] : N.va0[k]; };
  // column j -> (bus, is_vm)
  std::vector<std::int32_t> col_bus(p.n_cols);
  std::vector<char> col_vm(p.n_cols);
  for (std::int32_t k = 0; k < N.nbus; ++k) {
    if (N.va_idx[k] >= 0) col_bus[N.va_idx[k]] = k, col_vm[N.va_idx[k]] = 0;
    if (N.vm_idx[k] >= 0) col_bus[N.vm_idx[k]] = k, col_vm[N.vm_idx[k]] = 1;
  }
  std::vector<double> out(p.nnz());
  for (std::int32_t j = 0; j < p.n_cols; ++j) {
    const std::int32_t k = col_bus[j];
    for (std::int32_t e = p.col_ptr[j]; e < p.col_ptr[j + 1]; ++e) {
      const std::int32_t r = p.row_idx[e], i = N.row_bus[r];
      const bool q = N.row_is_q[r];
      const double vi = vm(i), ti = va(i);
      double v = 0;
      if (k != i) {
        std::int32_t y = N.ybus_ptr[i];
        while (N.ybus_col[y] != k) ++y;
        const double t = ti - va(k), c = std::cos(t), s = std::sin(t), G = N.G[y], B = N.B[y];
        if (!col_vm[j]) v = q ? vi * vm(k) * (-G * c - B * s) : vi * vm(k) * (G * s - B * c);
        else v = q ? vi * (G * s - B * c) : vi * (G * c + B * s);
      } else {
        for (std::int32_t y = N.ybus_ptr[i]; y < N.ybus_ptr[i + 1]; ++y) {
          const std::int32_t m = N.ybus_col[y];
          const double t = ti - va(m), c = std::cos(t), s = std::sin(t), G = N.G[y], B = N.B[y];
          if (!col_vm[j]) {
            if (m != i) v += q ? vi * vm(m) * (G * c + B * s) : vi * vm(m) * (-G * s + B * c);
          } else {
            v += q ? vm(m) * (G * s - B * c) : vm(m) * (G * c + B * s);
            if (m == i) v += q ? -vi * B : vi * G;
          }
        }
      }
      out[e] = v;
    }
  }
  return out;
}

}  // namespace stardiff::forward::test_problems
