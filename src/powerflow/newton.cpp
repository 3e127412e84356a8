// SPDX-License-Identifier: LGPL-2.1-or-later
// src/powerflow/newton.cpp — powerflow::solve: MATPOWER's runpf loop (network set-up, a
// NewtonSystem per set of bus types, Q-limit rounds, the result); see newton_internal.hpp.
#include "stardiff/powerflow/newton.hpp"

#include <algorithm>
#include <cmath>

#include "powerflow/newton_internal.hpp"
#include "stardiff/runtime/error.hpp"

namespace stardiff::powerflow {

const char* to_string(JacobianMethod m) {
  return m == JacobianMethod::AD ? "ad" : m == JacobianMethod::ADDense ? "ad-dense" : "analytic";
}

const char* to_string(NewtonStatus s) {
  switch (s) {
    case NewtonStatus::Converged: return "converged";
    case NewtonStatus::MaxIter: return "max_iter";
    case NewtonStatus::Diverged: return "diverged";
    case NewtonStatus::Singular: return "singular";
    case NewtonStatus::Infeasible: return "infeasible";
  }
  return "unknown";
}

NewtonResult solve(const Case& c, const SolveOptions& o) {
  using detail::clock_type;
  using detail::seconds_since;
  require(o.tol > 0 && std::isfinite(o.tol), "powerflow::solve: tol must be positive and finite");
  require(o.max_iter >= 0, "powerflow::solve: max_iter must be >= 0");
  auto t_start = clock_type::now();
  SequentialExecutor seq;
  Executor& exec = o.executor ? *o.executor : seq;
  NewtonResult res;

  Network net;
  GenState g;
  std::vector<int> requested, types;
  std::vector<cplx> V;
  auto build = [&] {
    net = make_network(c);
    g = initial_gen_state(c, net);
    requested = file_bus_types(c, net);
    types = bus_types(c, net, requested, g);
    V = start_voltage(c, net, types, g, o.flat_start);
  };
  // Host-side set-up runs as tasks (polling workers would slow it on this thread); its
  // errors (e.g. no usable reference bus) come back here unchanged.
  run_on_worker(exec, "pf_network", build);
  const std::vector<int> types0 = types;
  const int ref0 = static_cast<int>(std::find(types.begin(), types.end(), int(REF)) - types.begin());
  const double va_ref0 = c.buses[net.case_bus[ref0]].va * M_PI / 180.0;
  bool any_limited = false;
  std::vector<int> bus_order;  // AMD on the bus graph, computed by the first round
  NewtonStatus status;
  for (;;) {
    auto t_setup = clock_type::now();
    std::vector<cplx> sbus;
    detail::NewtonSystem sys(net, types, sbus, o, exec, bus_order);
    sys.start_coloring();  // runs beside the rest of the set-up
    auto make_system = [&] {
      sbus = make_sbus(c, net, g);
      sys.build();
    };
    {
      WorkerStep built(exec, "pf_system", make_system);
      sys.start_ordering();  // after the set-up step: a worker takes it once free
      built.wait();
    }
    res.setup_s += seconds_since(t_setup);
    sys.start();
    status = sys.run(V, res.solves, res, t_start);
    if (res.solves == 0) {
      res.colors = sys.coloring().coloring.num_colors;
      res.color_lower_bound = sys.coloring().coloring.lower_bound;
      res.jacobian_rows = sys.index().size();
      res.jacobian_nnz = sys.pattern().nnz();
    }
    res.coloring_s += sys.coloring_s;
    res.klu_analyze_s += sys.analyze_s;
    ++res.solves;
    if (status != NewtonStatus::Converged || !o.q_limits) break;

    const detail::QLimitRound round = detail::q_limit_round(c, net, V, g, requested, types);
    if (round == detail::QLimitRound::NoViolation) break;
    if (round == detail::QLimitRound::Infeasible) {
      status = NewtonStatus::Infeasible;
      break;
    }
    any_limited = true;
  }
  res.converged = status == NewtonStatus::Converged;
  res.status = status;
  detail::collect_result(c, net, types0, types, V, any_limited, ref0, va_ref0, res);
  res.total_s = seconds_since(t_start);
  return res;
}

}  // namespace stardiff::powerflow
