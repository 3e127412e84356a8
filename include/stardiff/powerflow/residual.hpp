// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/powerflow/residual.hpp — the power-balance residual, written once on the scalar type.
//
// Contract: PfResidual is a residual functor in the form forward::SparseJacobian expects:
//   template <class S> void operator()(RowRange rows, const S* x, S* f) const
// with x = [Va(pv); Va(pq); Vm(pq)] (radians, p.u.) and rows [P(pv); P(pq); Q(pq)]:
//   f[P_i] = Re(V_i conj((Ybus V)_i)) - Re(Sbus_i),  f[Q_i] = Im(...) - Im(Sbus_i),
// V_i = Vm_i e^{j Va_i}, with Va/Vm taken from x for variables and from va0/vm0 (per bus)
// otherwise. It writes f[r] for r in rows only and reads any x. Works for S = double and
// S = forward::Dual<N> (and nested duals). All pointers borrow the arrays of a Network,
// PfIndex and Sbus that must outlive the functor (make_residual builds one).
#pragma once
#include <cmath>
#include <complex>
#include <cstdint>
#include <vector>

#include "stardiff/forward/row_range.hpp"
#include "stardiff/powerflow/network.hpp"

namespace stardiff::powerflow {

struct PfResidual {
  std::int32_t n = 0, npvpq = 0;
  const std::int32_t* row_ptr = nullptr;
  const std::int32_t* col_idx = nullptr;
  const cplx* y = nullptr;
  const std::int32_t* row_bus = nullptr;
  const std::int32_t* va_var = nullptr;
  const std::int32_t* vm_var = nullptr;
  const cplx* sbus = nullptr;
  const double* va0 = nullptr;  // per bus, radians
  const double* vm0 = nullptr;

  template <class S>
  void voltage(std::int32_t j, const S* x, S& re, S& im) const {
    using std::cos;
    using std::sin;
    const S va = va_var[j] >= 0 ? x[va_var[j]] : S(va0[j]);
    const S vm = vm_var[j] >= 0 ? x[vm_var[j]] : S(vm0[j]);
    re = vm * cos(va);
    im = vm * sin(va);
  }

  template <class S>
  void operator()(forward::RowRange rows, const S* x, S* f) const {
    for (std::int32_t r = rows.begin; r < rows.end; ++r) {
      const std::int32_t i = row_bus[r];
      S ir(0.0), ii(0.0);
      for (std::int32_t e = row_ptr[i]; e < row_ptr[i + 1]; ++e) {
        S wr, wi;
        voltage(col_idx[e], x, wr, wi);
        const double yr = y[e].real(), yi = y[e].imag();
        ir += yr * wr - yi * wi;
        ii += yr * wi + yi * wr;
      }
      S vr, vi;
      voltage(i, x, vr, vi);
      if (r < npvpq) f[r] = vr * ir + vi * ii - sbus[i].real();
      else f[r] = vi * ir - vr * ii - sbus[i].imag();
    }
  }
};

// A residual over `net` with numbering `ix`, injections `sbus` and fixed values from `v0`
// (va0/vm0 receive angle and magnitude of v0 and must outlive the functor).
inline PfResidual make_residual(const Network& net, const PfIndex& ix, const std::vector<cplx>& sbus,
                                const std::vector<cplx>& v0, std::vector<double>& va0, std::vector<double>& vm0) {
  va0.resize(net.n);
  vm0.resize(net.n);
  for (int i = 0; i < net.n; ++i) {
    va0[i] = std::arg(v0[i]);
    vm0[i] = std::abs(v0[i]);
  }
  PfResidual r;
  r.n = net.n;
  r.npvpq = ix.npvpq();
  r.row_ptr = net.row_ptr.data();
  r.col_idx = net.col_idx.data();
  r.y = net.y_row.data();
  r.row_bus = ix.row_bus.data();
  r.va_var = ix.va_var.data();
  r.vm_var = ix.vm_var.data();
  r.sbus = sbus.data();
  r.va0 = va0.data();
  r.vm0 = vm0.data();
  return r;
}

// x = [Va(pv); Va(pq); Vm(pq)] read from a voltage vector.
inline std::vector<double> state_from_voltage(const PfIndex& ix, const std::vector<cplx>& v) {
  std::vector<double> x(ix.size());
  for (int k = 0; k < ix.npvpq(); ++k) x[k] = std::arg(v[ix.pvpq(k)]);
  for (int k = 0; k < ix.npq(); ++k) x[ix.npvpq() + k] = std::abs(v[ix.pq[k]]);
  return x;
}

// The voltages PfResidual evaluates at: Va/Vm from x = [Va(pv); Va(pq); Vm(pq)] for
// variables, from va0/vm0 (per bus, as make_residual fills them) otherwise.
inline std::vector<cplx> voltage_from_state(const PfIndex& ix, const std::vector<double>& va0,
                                            const std::vector<double>& vm0, const std::vector<double>& x) {
  std::vector<cplx> v(ix.n);
  for (int i = 0; i < ix.n; ++i) {
    const double va = ix.va_var[i] >= 0 ? x[ix.va_var[i]] : va0[i];
    const double vm = ix.vm_var[i] >= 0 ? x[ix.vm_var[i]] : vm0[i];
    v[i] = cplx(vm * std::cos(va), vm * std::sin(va));
  }
  return v;
}

}  // namespace stardiff::powerflow
