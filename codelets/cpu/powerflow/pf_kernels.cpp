// SPDX-License-Identifier: LGPL-2.1-or-later
// codelets/cpu/powerflow/pf_kernels.cpp — see pf_kernels.hpp.
#include "cpu/powerflow/pf_kernels.hpp"

#include <cmath>

#include "stardiff/forward/dual.hpp"

namespace stardiff::cpu {
namespace {

// I_i = sum_j Y_ij V_j (row i of Ybus times V).
inline void row_current(const PfView& v, const double* V, std::int32_t i, double& ir, double& ii) {
  double sr = 0.0, si = 0.0;
  for (std::int32_t e = v.row_ptr[i]; e < v.row_ptr[i + 1]; ++e) {
    const double yr = v.y[2 * e], yi = v.y[2 * e + 1];
    const std::int32_t j = v.col_idx[e];
    const double vr = V[2 * j], vi = V[2 * j + 1];
    sr += yr * vr - yi * vi;
    si += yr * vi + yi * vr;
  }
  ir = sr;
  ii = si;
}

}  // namespace

double pf_mismatch_cpu(const PfView& v, const double* V, PfOut F, std::int32_t k0, std::int32_t k1) {
  const std::int32_t npvpq = v.npvpq();
  double mx = 0.0;
  bool nan = false;
  for (std::int32_t k = k0; k < k1; ++k) {
    const std::int32_t i = v.pvpq(k);
    double ir, ii;
    row_current(v, V, i, ir, ii);
    const double vr = V[2 * i], vi = V[2 * i + 1];
    // S = V conj(I)
    const double p = vr * ir + vi * ii - v.sbus[2 * i];
    const double q = vi * ir - vr * ii - v.sbus[2 * i + 1];
    F.p[k - F.p_off] = p;
    nan |= std::isnan(p);
    mx = std::fmax(mx, std::fabs(p));
    if (k >= v.npv) {
      F.q[npvpq + k - v.npv - F.q_off] = q;
      nan |= std::isnan(q);
      mx = std::fmax(mx, std::fabs(q));
    }
  }
  return nan ? std::nan("") : mx;
}

void pf_jacobian_analytic_cpu(const PfView& v, const PfJacMap& m, const double* V, PfOut J,
                              std::int32_t k0, std::int32_t k1) {
  for (std::int32_t k = k0; k < k1; ++k) {
    const std::int32_t i = v.pvpq(k);
    double ir, ii;
    row_current(v, V, i, ir, ii);
    const double vr = V[2 * i], vi = V[2 * i + 1];
    // s = V_i conj(I_i)
    const double sr = vr * ir + vi * ii, si = vi * ir - vr * ii;
    for (std::int32_t e = v.row_ptr[i]; e < v.row_ptr[i + 1]; ++e) {
      const std::int32_t j = v.col_idx[e];
      const double yr = v.y[2 * e], yi = v.y[2 * e + 1];
      const double wr = V[2 * j], wi = V[2 * j + 1];
      // t = Y_ij V_j, a = V_i conj(t)
      const double tr = yr * wr - yi * wi, ti = yr * wi + yi * wr;
      double ar = vr * tr + vi * ti, ai = vi * tr - vr * ti;
      const double vmj = std::sqrt(wr * wr + wi * wi);
      // dS/dVa_j = -j a (+ j s on the diagonal); dS/dVm_j = a / |V_j| (+ s / |V_i|)
      double pva = ai, qva = -ar, pvm = ar / vmj, qvm = ai / vmj;
      if (j == i) {
        pva -= si;
        qva += sr;
        pvm += sr / vmj;
        qvm += si / vmj;
      }
      if (m.p_va[e] >= 0) J.p[m.p_va[e] - J.p_off] = pva;
      if (m.p_vm[e] >= 0) J.p[m.p_vm[e] - J.p_off] = pvm;
      if (m.q_va[e] >= 0) J.q[m.q_va[e] - J.q_off] = qva;
      if (m.q_vm[e] >= 0) J.q[m.q_vm[e] - J.q_off] = qvm;
    }
  }
}

namespace {

// Dense: every partial of I_i and S_i is carried (the classical compressed-Jacobian sweep on
// Dual<N>). Sparse: the tangents live in the same Dual<N> slots but only the structurally
// non-zero ones are touched — those of the colours of row i's columns — and reset after
// the row, so the cost per bus is O(degree) instead of O(N).
template <int N, bool Sparse>
void ad_rows(const PfView& v, const PfJacMap& m, const double* V, PfOut J, std::int32_t k0, std::int32_t k1,
             std::int32_t c0) {
  using D = forward::Dual<N>;
  const std::int32_t npvpq = v.npvpq();
  auto slot = [c0](std::int32_t c) { return static_cast<unsigned>(c - c0) < unsigned(N) ? c - c0 : -1; };
  D ir, ii;  // I_i = sum_j Y_ij V_j on duals (all partials zero between rows)
  for (std::int32_t k = k0; k < k1; ++k) {
    const std::int32_t i = v.pvpq(k);
    // The seeded V_j carries only two partials (its Va and Vm colours), so Y_ij V_j
    // contributes to those two slots alone.
    ir.v = 0.0;
    ii.v = 0.0;
    for (std::int32_t e = v.row_ptr[i]; e < v.row_ptr[i + 1]; ++e) {
      const std::int32_t j = v.col_idx[e];
      const double yr = v.y[2 * e], yi = v.y[2 * e + 1];
      const double wr = V[2 * j], wi = V[2 * j + 1];
      const double tr = yr * wr - yi * wi, ti = yr * wi + yi * wr;
      ir.v += tr;
      ii.v += ti;
      const std::int32_t sa = m.bus_color_va[j] >= 0 ? slot(m.bus_color_va[j]) : -1;
      if (sa >= 0) {  // d(V_j)/d(Va_j) = j V_j
        ir.d[sa] -= ti;
        ii.d[sa] += tr;
      }
      const std::int32_t sm = m.bus_color_vm[j] >= 0 ? slot(m.bus_color_vm[j]) : -1;
      if (sm >= 0) {  // d(V_j)/d(Vm_j) = V_j / |V_j|
        const double inv = 1.0 / std::sqrt(wr * wr + wi * wi);
        ir.d[sm] += tr * inv;
        ii.d[sm] += ti * inv;
      }
    }
    // S_i = V_i conj(I_i) with the seeded V_i, whose tangent is non-zero only at its own two
    // colours: p = Re(S) = vr*ir + vi*ii, q = Im(S) = vi*ir - vr*ii. The product rule splits
    // into V_i's value times I's partials and the two slots of dV_i times I's value.
    const double wr = V[2 * i], wi = V[2 * i + 1];
    double dpa = 0, dqa = 0, dpm = 0, dqm = 0;  // dV_i contributions
    const std::int32_t sa = m.bus_color_va[i] >= 0 ? slot(m.bus_color_va[i]) : -1;
    const std::int32_t sm = m.bus_color_vm[i] >= 0 ? slot(m.bus_color_vm[i]) : -1;
    if (sa >= 0) {  // dV_i/dVa_i = j V_i: (dvr, dvi) = (-wi, wr)
      dpa = -wi * ir.v + wr * ii.v;
      dqa = wr * ir.v + wi * ii.v;
    }
    if (sm >= 0) {  // dV_i/dVm_i = V_i / |V_i|
      const double inv = 1.0 / std::sqrt(wr * wr + wi * wi);
      dpm = (wr * ir.v + wi * ii.v) * inv;
      dqm = (wi * ir.v - wr * ii.v) * inv;
    }
    const bool has_q = k >= v.npv;
    const std::int32_t rq = npvpq + k - v.npv;
    if constexpr (!Sparse) {
      D p = wr * ir + wi * ii;
      D q = wi * ir - wr * ii;
      if (sa >= 0) {
        p.d[sa] += dpa;
        q.d[sa] += dqa;
      }
      if (sm >= 0) {
        p.d[sm] += dpm;
        q.d[sm] += dqm;
      }
      // Decompress rows P_i (and Q_i): entry (row, col) = d(row)/d(colour of col).
      for (std::int32_t e = m.row_ptr[k]; e < m.row_ptr[k + 1]; ++e)
        if (std::int32_t s = slot(m.entry_color[e]); s >= 0) J.p[e - J.p_off] = p.d[s];
      if (has_q)
        for (std::int32_t e = m.row_ptr[rq]; e < m.row_ptr[rq + 1]; ++e)
          if (std::int32_t s = slot(m.entry_color[e]); s >= 0) J.q[e - J.q_off] = q.d[s];
      ir = D();
      ii = D();
    } else {
      // Only the row's colours carry partials: evaluate p, q there, decompress, reset.
      const std::int32_t q0 = has_q ? m.row_ptr[rq] : 0;
      for (std::int32_t e = m.row_ptr[k], eq = q0; e < m.row_ptr[k + 1]; ++e, ++eq) {
        const std::int32_t s = slot(m.entry_color[e]);
        if (s < 0) continue;
        double pd = wr * ir.d[s] + wi * ii.d[s];
        double qd = wi * ir.d[s] - wr * ii.d[s];
        if (s == sa) {
          pd += dpa;
          qd += dqa;
        }
        if (s == sm) {
          pd += dpm;
          qd += dqm;
        }
        J.p[e - J.p_off] = pd;
        if (has_q) J.q[eq - J.q_off] = qd;  // Q_i has the same columns as P_i
      }
      for (std::int32_t e = m.row_ptr[k]; e < m.row_ptr[k + 1]; ++e)
        if (std::int32_t s = slot(m.entry_color[e]); s >= 0) ir.d[s] = ii.d[s] = 0.0;
    }
  }
}

template <int N>
void ad_all(const PfView& v, const PfJacMap& m, const double* V, PfOut J, std::int32_t k0, std::int32_t k1,
            bool sparse) {
  for (std::int32_t c0 = 0; c0 < m.num_colors; c0 += N) {
    if (sparse) ad_rows<N, true>(v, m, V, J, k0, k1, c0);
    else ad_rows<N, false>(v, m, V, J, k0, k1, c0);
  }
}

}  // namespace

int pf_ad_chunk(std::int32_t nc) {
  if (nc <= 8) return 8;
  if (nc <= 16) return 16;
  if (nc <= 24) return 24;
  if (nc <= 32) return 32;
  if (nc <= 48) return 48;
  if (nc <= 64) return 64;
  if (nc <= 88) return 88;
  return 128;
}

void pf_jacobian_ad_cpu(const PfView& v, const PfJacMap& m, const double* V, PfOut J, std::int32_t k0,
                        std::int32_t k1, bool sparse) {
  switch (pf_ad_chunk(m.num_colors)) {
    case 8: return ad_all<8>(v, m, V, J, k0, k1, sparse);
    case 16: return ad_all<16>(v, m, V, J, k0, k1, sparse);
    case 24: return ad_all<24>(v, m, V, J, k0, k1, sparse);
    case 32: return ad_all<32>(v, m, V, J, k0, k1, sparse);
    case 48: return ad_all<48>(v, m, V, J, k0, k1, sparse);
    case 64: return ad_all<64>(v, m, V, J, k0, k1, sparse);
    case 88: return ad_all<88>(v, m, V, J, k0, k1, sparse);
    default: return ad_all<128>(v, m, V, J, k0, k1, sparse);
  }
}

void pf_voltage_cpu(std::int32_t n, const double* va, const double* vm, double* V) {
  for (std::int32_t i = 0; i < n; ++i) {
    V[2 * i] = vm[i] * std::cos(va[i]);
    V[2 * i + 1] = vm[i] * std::sin(va[i]);
  }
}

void pf_update_cpu(const PfView& v, const double* dx, double* va, double* vm, double* V) {
  const std::int32_t npvpq = v.npvpq();
  auto set = [&](std::int32_t i) {
    // MATPOWER then takes Vm = |V|, Va = angle(V): the same numbers up to rounding, except
    // that angle() folds Va into (-pi, pi] and a negative Vm into (|Vm|, Va + pi). Do just
    // that, without the atan2 and sqrt per bus.
    if (vm[i] < 0) vm[i] = -vm[i], va[i] += M_PI;
    if (va[i] > M_PI || va[i] <= -M_PI) va[i] = std::remainder(va[i], 2 * M_PI);
    if (va[i] == -M_PI) va[i] = M_PI;
    V[2 * i] = vm[i] * std::cos(va[i]);
    V[2 * i + 1] = vm[i] * std::sin(va[i]);
  };
  for (std::int32_t k = 0; k < npvpq; ++k) va[v.pvpq(k)] -= dx[k];
  for (std::int32_t k = 0; k < v.npq; ++k) vm[v.pq[k]] -= dx[npvpq + k];
  for (std::int32_t k = 0; k < npvpq; ++k) set(v.pvpq(k));  // the reference bus keeps its V
}

}  // namespace stardiff::cpu
