// SPDX-License-Identifier: LGPL-2.1-or-later
// src/powerflow/newton_result.cpp — the solved network state per Case bus (see newton_internal.hpp).
#include <cmath>

#include "powerflow/newton_internal.hpp"

namespace stardiff::powerflow::detail {

void collect_result(const Case& c, const Network& net, const std::vector<int>& types0, const std::vector<int>& types,
                    const std::vector<cplx>& V, bool any_limited, int ref0, double va_ref0, NewtonResult& res) {
  const std::size_t nb = c.buses.size();
  res.vm.resize(nb);
  res.va_deg.resize(nb);
  res.bus_type.assign(nb, ISOLATED);
  double shift = 0.0;
  if (any_limited && types[ref0] != REF) shift = va_ref0 - std::arg(V[ref0]);
  for (std::size_t b = 0; b < nb; ++b) {
    const int i = net.net_bus[b];
    if (i < 0) {
      res.vm[b] = c.buses[b].vm;
      res.va_deg[b] = c.buses[b].va;
      continue;
    }
    res.vm[b] = std::abs(V[i]);
    res.va_deg[b] = (std::arg(V[i]) + shift) * 180.0 / M_PI;
    res.bus_type[b] = types[i];
  }
  for (int i = 0; i < net.n; ++i)
    if (types0[i] != PQ && types[i] == PQ) ++res.buses_switched;
}

}  // namespace stardiff::powerflow::detail
